// DistributionBlock: node failure handling (NDB's DBDIH node failure handling and
// master takeover). See distribution_block.h for the rules and
// docs/formats/kernel-protocol.md "Node failure: takeover" for the signals.
#include <algorithm>
#include <limits>
#include <utility>

#include "ndb-kernel/distribution/distribution_block.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::distribution {

using kernel::BlockAddress;
using kernel::Signal;

uint16_t DistributionBlock::lowest_live_node() const {
  for (uint16_t node : data_nodes_) {
    if (!is_dead(node)) return node;
  }
  return 0;
}

void DistributionBlock::on_node_fail_rep(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (std::find(data_nodes_.begin(), data_nodes_.end(), node) == data_nodes_.end()) return;
  if (start_state_.load() == NodeStartState::kCopying && node != node_id()) {
    // This node is in a node restart and lost a node the restart depends on (the
    // master, the replica it copies from): it cannot finish; start it again.
    return fail_start("node restart: data node " + std::to_string(node) +
                      " failed meanwhile; start this node again to retry");
  }
  // Before the cluster runs, a peer's link going down is a peer (re)starting: the
  // restart reports are repeated until everyone is there.
  if (start_state_.load() != NodeStartState::kStarted) return;
  if (node == node_id()) return;
  if (node_restart_ && node_restart_->node == node) {
    abort_node_restart("the starting node failed");
  }
  if (is_dead(node)) return;  // already recorded (a starting node failing again)
  const bool clean = stopping_nodes_.count(node) != 0;
  unrecovered_.erase(node);
  dead_since_[node] = current_gci_.load();
  awaiting_.erase(node);
  if (node_restart_) {
    if (node_restart_->step == NodeRestart::Step::kStarted) {
      // Handing over (or about to): the dead node's answer is no longer awaited.
      node_restart_->awaiting.erase(node);
      if (node_restart_->started_sent && node_restart_->awaiting.empty()) finish_node_restart();
    } else {
      abort_node_restart("data node " + std::to_string(node) + " failed meanwhile");
    }
  }

  // A node group without a live node: its rows are gone, the cluster cannot go on.
  for (size_t group = 0; group < topology_.node_groups.size(); ++group) {
    const std::vector<uint16_t>& nodes = topology_.node_groups[group];
    if (!std::all_of(nodes.begin(), nodes.end(), [&](uint16_t n) { return is_dead(n); })) {
      continue;
    }
    failure_is_clean_.store(clean);
    return fail_start("data node " + std::to_string(node) + (clean ? " stopped" : " failed") +
                      " and node group " + std::to_string(group) +
                      " has no live node left: the cluster cannot go on without its rows, so "
                      "this node stops too; restart the cluster and it recovers to the last "
                      "complete global checkpoint (GCI " +
                      std::to_string(last_complete_gci_.load()) + ")");
  }

  const uint16_t old_master = master_;
  master_ = lowest_live_node();
  DUO_BLOCK_LOG(INFO) << "data node " << node << (clean ? " stopped" : " failed") << " in GCI "
                      << current_gci_.load() << "; going on without it"
                      << (old_master != master_
                              ? "; node " + std::to_string(master_) + " is the new GCP master"
                              : std::string());
  // Recorded now, not only with the next complete GCI: a system restart must not wait
  // for the dead node even if no GCP completes before it.
  if (recorded_gci_ != 0) write_sysfile(recorded_gci_);

  if (!is_master()) return;
  // This node's coordinator takes over every dead node's transactions it has not yet
  // (the lowest live node does; a new master's coordinator redoes its predecessor's).
  for (const auto& [dead, since] : dead_since_) {
    if (takeovers_done_.count(dead) == 0) takeover_pending_.insert(dead);
  }
  if (old_master == master_) {
    // A node whose MASTER_GCPCONF was awaited may be the one that died.
    if (master_takeover_ && awaiting_.empty()) return resume_gcp_after_master_takeover();
    advance_round_if_answered();
    return;
  }
  // Master takeover: finish the dead master's round from the furthest phase any live
  // node reached.
  master_takeover_ = true;
  master_gcp_states_.clear();
  phase_ = Phase::kIdle;
  awaiting_.clear();
  for (uint16_t peer : data_nodes_) {
    if (is_dead(peer)) continue;
    const BlockAddress target{peer, protocol::kDistributionBlock, 0};
    Signal request(protocol::kMasterGcpReq);
    request.set_receiver(target);
    if (send(target, std::move(request)).ok()) awaiting_.insert(peer);
  }
}

void DistributionBlock::on_takeover_done_rep(Signal& signal) {
  const uint16_t dead = static_cast<uint16_t>(signal.word(0));
  takeovers_done_.insert(dead);
  takeover_pending_.erase(dead);
  DUO_BLOCK_LOG(INFO) << "the transactions of data node " << dead << " are taken over";
  advance_round_if_answered();
}

void DistributionBlock::on_master_gcp_req(Signal& signal) {
  // The new master announces itself with this request: answers go to it from now on,
  // even if this node has not yet processed the old master's failure.
  master_ = signal.sender().node_id;
  Signal conf(protocol::kMasterGcpConf,
              {current_gci_.load(), prepared_gci_, last_complete_gci_.load()});
  conf.set_receiver(signal.sender());
  send(signal.sender(), std::move(conf)).ignore_error();
}

void DistributionBlock::on_master_gcp_conf(Signal& signal) {
  const uint16_t node = signal.sender().node_id;
  if (!master_takeover_ || awaiting_.count(node) == 0) return;
  awaiting_.erase(node);
  master_gcp_states_[node] = NodeGcpState{signal.word(0), signal.word(1), signal.word(2)};
  if (awaiting_.empty()) resume_gcp_after_master_takeover();
}

void DistributionBlock::resume_gcp_after_master_takeover() {
  master_takeover_ = false;
  uint32_t current_min = std::numeric_limits<uint32_t>::max();
  uint32_t current_max = 0;
  uint32_t prepared = 0;
  uint32_t complete_min = std::numeric_limits<uint32_t>::max();
  for (const auto& [peer, state] : master_gcp_states_) {
    if (is_dead(peer)) continue;
    current_min = std::min(current_min, state.current_gci);
    current_max = std::max(current_max, state.current_gci);
    prepared = std::max(prepared, state.prepared_gci);
    complete_min = std::min(complete_min, state.complete_gci);
  }
  std::string resumed;
  if (prepared != 0) {
    // Some node holds its commits for GCI `prepared`: the commit phase switches all.
    round_gci_ = prepared - 1;
    phase_ = Phase::kCommitting;
    send_to_every_node(protocol::kGcpCommitReq, prepared);
    resumed = "commit phase of GCI " + std::to_string(round_gci_);
  } else if (current_min < current_max) {
    // Some nodes switched to the new GCI, others not yet.
    round_gci_ = current_max - 1;
    phase_ = Phase::kCommitting;
    send_to_every_node(protocol::kGcpCommitReq, current_max);
    resumed = "commit phase of GCI " + std::to_string(round_gci_);
  } else if (current_max > 1 && complete_min < current_max - 1) {
    // Everyone switched; not everyone recorded the closed GCI complete: save it again
    // (saves and completes are idempotent) so that it is on every live node's disk.
    round_gci_ = current_max - 1;
    phase_ = Phase::kSaving;
    send_to_every_node(protocol::kGcpSaveReq, round_gci_);
    resumed = "save phase of GCI " + std::to_string(round_gci_);
  } else {
    phase_ = Phase::kIdle;
    send_delayed(address(), Signal(protocol::kGcpTimer), options_.gcp_interval_ms).ignore_error();
    resumed = "no round in progress";
  }
  DUO_BLOCK_LOG(INFO) << "GCP master takeover: " << resumed;
  advance_round_if_answered();
}

void DistributionBlock::announce_dead_nodes_locally() {
  // The coordinator, dictionary and local_query instances go on without the dead nodes
  // exactly as after a NODE_FAILREP while running (the coordinator's takeover finds
  // nothing to do).
  for (const auto& [dead, since] : dead_since_) {
    std::vector<BlockAddress> targets{local_address(protocol::kCoordinatorBlock),
                                      local_address(protocol::kDictionaryBlock)};
    for (uint16_t part = 0; part < topology_.log_parts; ++part) {
      targets.push_back(local_address(protocol::kLocalQueryBlock, part));
    }
    for (const BlockAddress& target : targets) {
      Signal report(protocol::kNodeFailRep, {dead});
      report.set_receiver(target);
      send(target, std::move(report)).ignore_error();
    }
  }
}

}  // namespace duo::distribution
