// CoordinatorBlock: node failure handling of a data node (NDB's DBTC node failure
// handling and TC takeover). See coordinator_block.h for the rules; the signals are in
// docs/formats/kernel-protocol.md "Node failure: takeover".
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/coordinator/coordinator_records.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/wire_codec.h"

namespace duo::coordinator {

using kernel::BlockAddress;
using kernel::Signal;

namespace {
BlockAddress lqh_address(uint16_t node, uint16_t log_part) {
  return BlockAddress{node, protocol::kLocalQueryBlock, log_part};
}

std::string node_failure_message(uint16_t node) {
  // NDB error 4010, surfaced by the SQL layer as MySQL 1297 (kTemporary): retry.
  return "Node failure caused abort of transaction (data node " + std::to_string(node) + " failed)";
}
}  // namespace

bool CoordinatorBlock::is_data_node(uint16_t node) const {
  return std::binary_search(data_nodes_.begin(), data_nodes_.end(), node);
}

bool CoordinatorBlock::is_dead(uint16_t node) const {
  return !dead_nodes_.empty() && std::binary_search(dead_nodes_.begin(), dead_nodes_.end(), node);
}

bool CoordinatorBlock::is_takeover_node() const {
  // A starting node coordinates nothing, so neither does it take over.
  for (uint16_t node : data_nodes_) {
    if (!is_dead(node) && !is_starting(node)) return node == node_id();
  }
  return false;
}

void CoordinatorBlock::on_data_node_failed(uint16_t node) {
  if (node == node_id()) return;
  // A starting node that dies is dead again (its failure below ends its part in every
  // transaction, as for any replica).
  std::erase(starting_nodes_, node);
  if (is_dead(node)) return;
  if (starting_here_) {
    // This node coordinated nothing the dead one could have taken part in before it
    // started, and the takeover of the dead node's transactions belongs to the lowest
    // live node that is not starting: nothing left for this node to take over later.
    takeovers_done_.push_back(node);
  }
  dead_nodes_.insert(std::upper_bound(dead_nodes_.begin(), dead_nodes_.end(), node), node);
  const std::string why = node_failure_message(node);

  // Transactions: collected first, since finishing one may release it.
  std::vector<uint64_t> transids;
  transids.reserve(by_transid_.size());
  for (const auto& [transid, tx] : by_transid_) transids.push_back(transid);
  size_t aborted = 0;
  for (uint64_t transid : transids) {
    Transaction* tx = by_transid(transid);
    if (tx == nullptr) continue;
    if (tx->state == Transaction::State::kActive) {
      bool touched = false;
      for (Operation& op : tx->ops) {
        if (op.done || std::find(op.chain.begin(), op.chain.end(), node) == op.chain.end()) {
          continue;
        }
        // Sent to a chain through the dead node: its answer may never come.
        op.done = true;
        --tx->outstanding;
        --operation_count_;
        fail_operation(*tx, op, ErrorCode::kTemporary, why, true);
        touched = true;
      }
      const size_t before = tx->participants.size();
      std::erase_if(tx->participants, [node](const auto& p) { return p.first == node; });
      touched = touched || tx->participants.size() != before;
      if (!touched) continue;
      // Its writes on the dead replica are gone: the transaction cannot commit as the
      // client asked. The survivors undo it (LQH_ABORTREQ) once nothing is outstanding.
      if (tx->error == ErrorCode::kOk) {
        tx->error = ErrorCode::kTemporary;
        tx->error_message = why;
      }
      ++aborted;
      ++stats_.node_failure_aborts;
      maybe_finish_batch(*tx);
      continue;
    }
    // Committing or aborting: the dead replica will not answer; the survivors'
    // answers decide (a commit is acknowledged: every live replica holds it).
    if (tx->answered.empty()) {
      // A commit still held back by the GCP: it goes to the live participants only.
      std::erase_if(tx->participants, [node](const auto& p) { return p.first == node; });
      continue;
    }
    bool counted = false;
    for (size_t i = 0; i < tx->participants.size(); ++i) {
      if (tx->participants[i].first == node && !tx->answered[i]) {
        tx->answered[i] = true;
        --tx->awaiting;
        counted = true;
      }
    }
    if (counted && tx->awaiting == 0) on_participant_done(transid);
  }

  // Scans with a fragment on the dead node fail; the others go on.
  std::vector<uint32_t> scan_ptrs;
  for (const auto& [ptr, scan] : scans_) scan_ptrs.push_back(ptr);
  size_t failed_scans = 0;
  for (uint32_t ptr : scan_ptrs) {
    auto it = scans_.find(ptr);
    if (it == scans_.end()) continue;
    Scan& scan = *it->second;
    bool hit = false;
    for (Scan::Fragment& fragment : scan.fragments) {
      if (fragment.node != node || fragment.done) continue;
      fragment.done = true;
      fragment.in_flight = false;
      hit = true;
    }
    if (!hit) continue;
    ++failed_scans;
    fail_scan(scan, ErrorCode::kTemporary,
              "Node failure caused abort of scan (data node " + std::to_string(node) + " failed)");
    release_scan_if_idle(scan);
  }
  DUO_BLOCK_LOG(INFO) << "data node " << node << " failed: " << aborted
                      << " transaction(s) aborted, " << failed_scans << " scan(s) failed";

  // The takeover: run by the lowest live data node, for every dead node whose takeover
  // this node has not run (its predecessor in the role may have died with it unfinished;
  // a takeover run twice finds nothing left to do).
  if (!is_takeover_node()) return;
  if (takeover_ != nullptr && is_dead(takeover_->dead)) {
    // Instances of the newly dead node will not answer or confirm.
    std::erase_if(takeover_->unanswered, [node](const auto& p) { return p.first == node; });
    for (auto& [transid, taken] : takeover_->transactions) {
      std::erase_if(taken.awaiting, [node](const auto& p) { return p.first == node; });
      std::erase_if(taken.prepared, [node](const auto& p) { return p.first == node; });
    }
  }
  for (uint16_t dead : dead_nodes_) {
    if (std::find(takeovers_done_.begin(), takeovers_done_.end(), dead) != takeovers_done_.end()) {
      continue;
    }
    if (takeover_ != nullptr && takeover_->dead == dead) continue;
    if (std::find(takeover_queue_.begin(), takeover_queue_.end(), dead) != takeover_queue_.end()) {
      continue;
    }
    takeover_queue_.push_back(dead);
  }
  if (takeover_ == nullptr) {
    start_next_takeover();
  } else {
    if (!takeover_->resolving && takeover_->unanswered.empty()) resolve_takeover();
    finish_takeover_if_done();
  }
}

void CoordinatorBlock::start_next_takeover() {
  while (takeover_ == nullptr && !takeover_queue_.empty()) {
    takeover_ = std::make_unique<Takeover>();
    takeover_->dead = takeover_queue_.front();
    takeover_queue_.erase(takeover_queue_.begin());
    DUO_BLOCK_LOG(INFO) << "taking over the transactions of data node " << takeover_->dead;
    for (uint16_t node : data_nodes_) {
      if (is_dead(node)) continue;
      for (uint16_t part = 0; part < topology_.log_parts; ++part) {
        const BlockAddress target = lqh_address(node, part);
        Signal request(protocol::kLqhTransReq, {takeover_->dead});
        request.set_receiver(target);
        if (send(target, std::move(request)).ok()) takeover_->unanswered.emplace(node, part);
      }
    }
    if (takeover_->unanswered.empty()) resolve_takeover();
    finish_takeover_if_done();
  }
}

void CoordinatorBlock::on_lqh_trans_conf(Signal& signal) {
  const std::pair<uint16_t, uint16_t> from{signal.sender().node_id, signal.sender().instance};
  if (takeover_ == nullptr || takeover_->resolving || signal.word(0) != takeover_->dead ||
      takeover_->unanswered.count(from) == 0) {
    ++stats_.malformed_signals;
    return;
  }
  protocol::ByteReader in(protocol::as_view(signal.section()));
  for (uint32_t i = 0; i < signal.word(2); ++i) {
    uint64_t transid = 0;
    uint32_t gci = 0;
    if (!in.u64(&transid) || !in.u32(&gci)) {
      ++stats_.malformed_signals;
      DUO_BLOCK_LOG(WARNING) << "truncated LQH_TRANSCONF from " << signal.sender().to_string();
      break;
    }
    Takeover::Taken& taken = takeover_->transactions[transid];
    if (gci != 0) {
      taken.commit_gci = gci;
    } else {
      taken.prepared.insert(from);
    }
  }
  if (signal.word(1) == 0) return;  // more to come from this instance
  takeover_->unanswered.erase(from);
  if (takeover_->unanswered.empty()) resolve_takeover();
  finish_takeover_if_done();
}

void CoordinatorBlock::resolve_takeover() {
  takeover_->resolving = true;
  for (auto& [transid, taken] : takeover_->transactions) {
    // Committed by any participant: the dead coordinator had decided to commit, and that
    // participant may have told nobody yet — every other one commits it too, in the
    // same GCI. Otherwise nobody committed and the client was never told: abort.
    const bool commit = taken.commit_gci != 0;
    if (commit) {
      ++stats_.takeover_commits;
    } else {
      ++stats_.takeover_aborts;
    }
    for (const auto& [node, part] : taken.prepared) {
      if (is_dead(node)) continue;
      const BlockAddress target = lqh_address(node, part);
      Signal out = protocol::transaction_signal(
          commit ? protocol::kLqhCommitReq : protocol::kLqhAbortReq, transid);
      if (commit) out.set_word(2, taken.commit_gci);
      out.set_receiver(target);
      if (send(target, std::move(out)).ok()) taken.awaiting.emplace(node, part);
    }
  }
  DUO_BLOCK_LOG(INFO) << "takeover of data node " << takeover_->dead << ": "
                      << takeover_->transactions.size() << " transaction(s) found";
  std::erase_if(takeover_->transactions,
                [](const auto& entry) { return entry.second.awaiting.empty(); });
}

bool CoordinatorBlock::on_takeover_answer(uint64_t transid, const BlockAddress& sender) {
  if (takeover_ == nullptr || !takeover_->resolving) return false;
  auto it = takeover_->transactions.find(transid);
  if (it == takeover_->transactions.end()) return false;
  it->second.awaiting.erase({sender.node_id, sender.instance});
  if (it->second.awaiting.empty()) takeover_->transactions.erase(it);
  finish_takeover_if_done();
  return true;
}

void CoordinatorBlock::finish_takeover_if_done() {
  if (takeover_ == nullptr || !takeover_->resolving) return;
  std::erase_if(takeover_->transactions,
                [](const auto& entry) { return entry.second.awaiting.empty(); });
  if (!takeover_->transactions.empty()) return;
  const uint16_t dead = takeover_->dead;
  DUO_BLOCK_LOG(INFO) << "takeover of data node " << dead << " done";
  takeovers_done_.push_back(dead);
  takeover_.reset();
  // The GCP may complete again: the distribution block holds its commit phase until
  // the takeover is done.
  const BlockAddress distribution = local_address(protocol::kDistributionBlock);
  Signal done(protocol::kTakeoverDoneRep, {dead});
  done.set_receiver(distribution);
  send(distribution, std::move(done)).ignore_error();
  start_next_takeover();
  report_no_more_trans_if_done();
}

}  // namespace duo::coordinator
