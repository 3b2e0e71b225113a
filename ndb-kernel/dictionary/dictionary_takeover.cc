// DictionaryBlock: the master takeover (NDB's DICT master takeover). When the master
// dies in the middle of a schema transaction, the participants may hold it prepared
// (the commit never came), committing, or committed — with several data nodes, some of
// each. Left alone, the nodes' schemas would differ. So the new master (the lowest live
// node), before it runs anything else:
//   DICT_TAKEOVERREQ{dead}  -> every live dictionary (itself too)
//   DICT_TAKEOVERCONF       <- the last transaction committed there from the dead master,
//                              the one held prepared from it, and whether its commit
//                              already arrived
// and once every live node answered (a node that dies meanwhile is not waited for):
// if any node committed the prepared transaction (or is committing it), the dead master
// had decided to commit, so SCHEMA_COMMITREQ (commit) goes to every node that still
// holds it only prepared; otherwise nobody committed, and it is aborted where prepared.
// The commits are applied as the master's own would be (schema file, then the local
// blocks) and confirmed to the new master. Schema transaction ids carry their master's
// node id (top 8 bits), so the dead master's ids never meet the new master's.
//
// The client of the dead master's transaction got a temporary error when its link to the
// master went (its outcome is what the takeover decides). Not covered: an ALTER whose
// index build failed on some node (its undo was the dead master's to run).
//
// Thread-safety: a Block; single-threaded by the runtime's contract.
#include "ndb-kernel/dictionary/dictionary_block.h"

#include <algorithm>

#include "ndb-kernel/protocol/block_numbers.h"

namespace duo::dictionary {

using kernel::Signal;
using protocol::DictMsg;

namespace {
constexpr uint32_t kCommit = 0;  // SCHEMA_COMMITREQ a (dictionary_block.cc)
constexpr uint32_t kAbort = 1;
}  // namespace

void DictionaryBlock::start_takeover(uint16_t dead_master) {
  takeover_ = std::make_unique<MasterTakeover>();
  takeover_->dead = dead_master;
  DUO_BLOCK_LOG(INFO) << "master takeover: node " << dead_master
                      << " died; finishing its schema transaction";
  takeover_->awaiting = send_to_every_dictionary(Signal(protocol::kDictTakeoverReq, {dead_master}));
  if (takeover_->awaiting.empty()) resolve_takeover();
}

void DictionaryBlock::on_dict_takeover_req(Signal& signal) {
  const uint16_t dead = static_cast<uint16_t>(signal.word(0));
  const auto last = last_committed_from_.find(dead);
  uint32_t prepared_tx = 0;
  bool committing = false;
  for (const auto& [schema_tx, prepared] : prepared_) {
    if (schema_tx >> 24 != dead) continue;  // another master's
    prepared_tx = schema_tx;
    committing = prepared.committing;
  }
  Signal conf(protocol::kDictTakeoverConf,
              {dead, last == last_committed_from_.end() ? 0u : last->second, prepared_tx,
               committing ? 1u : 0u});
  conf.set_receiver(signal.sender());
  if (Status sent = send(signal.sender(), std::move(conf)); !sent.ok()) {
    DUO_BLOCK_LOG(WARNING) << "cannot answer the master takeover of " << signal.sender().to_string()
                           << ": " << sent.message();
  }
}

void DictionaryBlock::on_dict_takeover_conf(Signal& signal) {
  const uint16_t from = signal.sender().node_id;
  if (!takeover_ || signal.word(0) != takeover_->dead || takeover_->awaiting.erase(from) == 0) {
    return;
  }
  const uint32_t last_committed = signal.word(1);
  const uint32_t prepared_tx = signal.word(2);
  const bool committing = signal.word(3) != 0;
  if (prepared_tx != 0) {
    takeover_->in_flight = std::max(takeover_->in_flight, prepared_tx);
    if (committing) {
      takeover_->commit = true;
    } else {
      takeover_->prepared_at.insert(from);
    }
  }
  // A node that finished the commit no longer holds it; its last commit tells.
  if (last_committed != 0) takeover_->last_committed.insert(last_committed);
  if (takeover_->awaiting.empty()) resolve_takeover();
}

void DictionaryBlock::resolve_takeover() {
  MasterTakeover& takeover = *takeover_;
  if (takeover.in_flight == 0) {
    DUO_BLOCK_LOG(INFO) << "master takeover: no schema transaction of node " << takeover.dead
                        << " was in flight";
    return finish_takeover();
  }
  if (takeover.last_committed.count(takeover.in_flight) != 0) takeover.commit = true;
  DUO_BLOCK_LOG(INFO) << "master takeover: schema transaction " << takeover.in_flight << " of node "
                      << takeover.dead << " is " << (takeover.commit ? "committed" : "aborted")
                      << " on " << takeover.prepared_at.size()
                      << " node(s) still holding it prepared";
  const DictMsg decision{takeover.in_flight, takeover.commit ? kCommit : kAbort, 0, 0, ""};
  for (uint16_t node : takeover.prepared_at) {
    if (dead_nodes_.count(node) != 0) continue;
    const kernel::BlockAddress target{node, protocol::kDictionaryBlock, 0};
    Signal request = decision.to_signal(protocol::kSchemaCommitReq);
    request.set_receiver(target);
    if (send(target, std::move(request)).ok()) takeover.resolving.insert(node);
  }
  if (takeover.resolving.empty()) finish_takeover();
}

bool DictionaryBlock::on_takeover_commit_conf(const DictMsg& conf, uint16_t from) {
  if (!takeover_ || takeover_->in_flight == 0 || conf.request_id != takeover_->in_flight) {
    return false;
  }
  if (conf.c != 0) {
    DUO_BLOCK_LOG(ERROR) << "master takeover: node " << from << " could not apply schema "
                         << "transaction " << conf.request_id << ": " << conf.text;
  }
  if (takeover_->resolving.erase(from) != 0 && takeover_->resolving.empty()) finish_takeover();
  return true;
}

void DictionaryBlock::takeover_node_failed(uint16_t node) {
  if (!takeover_) return;
  const bool answered = takeover_->awaiting.empty();
  takeover_->awaiting.erase(node);
  takeover_->prepared_at.erase(node);
  if (!answered && takeover_->awaiting.empty()) return resolve_takeover();
  if (answered && takeover_->resolving.erase(node) != 0 && takeover_->resolving.empty()) {
    finish_takeover();
  }
}

void DictionaryBlock::finish_takeover() {
  takeover_.reset();
  ++takeovers_done_;
  start_next();
  confirm_lock_if_idle();
}

}  // namespace duo::dictionary
