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
// Every dead node is taken over, not only the master that just died: a new master that
// dies during its own takeover leaves its predecessor's transaction half resolved (its
// SCHEMA_COMMITREQs reached some nodes), so the next master takes over each dead node
// in turn (ascending; the ids' top 8 bits tell whose a transaction is) — again after
// every master death, however many follow each other. A takeover of a node that left
// nothing costs one DICT_TAKEOVERREQ round.
//
// An ALTER whose index build failed on some node is undone by its master (the reverse
// alter, kSchemaAlterBack) before anything else; if the master died before that undo
// committed, every node whose build failed and that holds the failed definition still
// says so (DICT_TAKEOVERCONF w4, w5), as does a commit the takeover itself sends that
// fails; then, once the transaction in flight is settled (an undo already committed
// somewhere is committed everywhere, which ends it), the new master runs the undo to the
// definition the ALTER replaced (each node remembers it with its last committed ALTER
// from each master) before any other request. Every live node ends on the old
// definition.
//
// The client of the dead master's transaction got a temporary error when its link to the
// master went (its outcome is what the takeover decides; for a failed ALTER, the old
// definition).
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

void DictionaryBlock::start_takeovers() {
  for (uint16_t dead : dead_nodes_) {
    if (takeover_ && takeover_->dead == dead) continue;
    if (std::find(takeover_queue_.begin(), takeover_queue_.end(), dead) != takeover_queue_.end()) {
      continue;
    }
    takeover_queue_.push_back(dead);
  }
  std::sort(takeover_queue_.begin(), takeover_queue_.end());
  if (takeover_ || takeover_queue_.empty()) return;
  const uint16_t next = takeover_queue_.front();
  takeover_queue_.erase(takeover_queue_.begin());
  start_takeover(next);
}

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
  // A failed ALTER of the dead master still in place here: its undo is the takeover's.
  uint32_t failed_alter = 0;
  uint32_t failed_table = 0;
  if (auto alter = last_alter_from_.find(dead);
      alter != last_alter_from_.end() && alter->second.failed_here) {
    failed_alter = alter->second.schema_tx;
    failed_table = alter->second.table_id;
  }
  Signal conf(protocol::kDictTakeoverConf,
              {dead, last == last_committed_from_.end() ? 0u : last->second, prepared_tx,
               committing ? 1u : 0u, failed_alter, failed_table});
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
  if (const uint32_t failed_alter = signal.word(4); failed_alter > takeover_->failed_alter) {
    takeover_->failed_alter = failed_alter;
    takeover_->failed_table = signal.word(5);
  }
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
    DUO_BLOCK_LOG(WARNING) << "master takeover: node " << from << " could not apply schema "
                           << "transaction " << conf.request_id << ": " << conf.text;
    // If it was an ALTER, its build failed there: undone below (a failed CREATE, DROP
    // or undo has no undo).
    if (takeover_->commit) takeover_->commit_failed = true;
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
  undo_failed_alter_if_needed();
  takeover_.reset();
  ++takeovers_done_;
  if (!takeover_queue_.empty()) {
    const uint16_t next = takeover_queue_.front();
    takeover_queue_.erase(takeover_queue_.begin());
    return start_takeover(next);
  }
  start_next();
  confirm_lock_if_idle();
}

void DictionaryBlock::undo_failed_alter_if_needed() {
  const MasterTakeover& takeover = *takeover_;
  auto alter = last_alter_from_.find(takeover.dead);
  const bool in_flight_was_alter =
      alter != last_alter_from_.end() && alter->second.schema_tx == takeover.in_flight;
  const uint32_t failed = takeover.commit_failed && in_flight_was_alter
                              ? std::max(takeover.in_flight, takeover.failed_alter)
                              : takeover.failed_alter;
  if (failed == 0) return;
  // The master runs a failed ALTER's undo before anything else, so a later transaction
  // of its that is now committed everywhere is that undo: nothing left to do.
  if (takeover.commit && takeover.in_flight > failed) return;
  if (alter == last_alter_from_.end() || alter->second.schema_tx != failed) {
    DUO_BLOCK_LOG(ERROR) << "master takeover: schema transaction " << failed << " of node "
                         << takeover.dead << " (an ALTER of table " << takeover.failed_table
                         << ") failed on some node, but this node does not know the "
                         << "definition it replaced: not undone";
    return;
  }
  const CommittedAlter& committed = alter->second;
  auto table = tables_.find(committed.table_id);
  if (table == tables_.end()) return;  // dropped since: nothing to go back to
  Request undo;
  undo.kind = protocol::kSchemaAlterBack;
  undo.table = committed.previous;
  // check_alter wants the version installed now (the undo is one more version).
  undo.table.version = table->second.version;
  DUO_BLOCK_LOG(INFO) << "master takeover: the ALTER of table '" << table->second.schema.name
                      << "' (schema transaction " << failed << " of node " << takeover.dead
                      << ") failed on some node and was not undone: going back to its "
                      << "previous definition first";
  queue_.push_front(std::move(undo));
}

void DictionaryBlock::note_committed_alter(uint32_t schema_tx, uint32_t kind, uint32_t table_id) {
  // Any later committed change of the table replaces a failed definition (the undo
  // itself, above all).
  for (auto& [master, alter] : last_alter_from_) {
    if (alter.table_id == table_id && alter.schema_tx != schema_tx) alter.failed_here = false;
  }
  if (kind != protocol::kSchemaAlter) return;
  auto table = tables_.find(table_id);
  if (table == tables_.end()) return;
  CommittedAlter& alter = last_alter_from_[static_cast<uint16_t>(schema_tx >> 24)];
  alter.schema_tx = schema_tx;
  alter.table_id = table_id;
  alter.previous = table->second;
  alter.failed_here = false;
}

void DictionaryBlock::note_local_outcome(uint32_t schema_tx, uint32_t kind, uint32_t local_error) {
  if (kind != protocol::kSchemaAlter || local_error == 0) return;
  auto alter = last_alter_from_.find(static_cast<uint16_t>(schema_tx >> 24));
  if (alter != last_alter_from_.end() && alter->second.schema_tx == schema_tx) {
    alter->second.failed_here = true;
  }
}

}  // namespace duo::dictionary
