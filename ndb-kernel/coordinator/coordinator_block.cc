#include "ndb-kernel/coordinator/coordinator_block.h"

#include <algorithm>
#include <span>
#include <string_view>
#include <utility>

#include <sanitizer/asan_interface.h>

#include "ndb-kernel/coordinator/coordinator_records.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/unique_index.h"

namespace duo::coordinator {

using kernel::BlockAddress;
using kernel::Signal;
using protocol::OpResultMsg;

namespace {
// A TC_KEYCONF section stays below the 64 KiB signal limit with room for the header.
constexpr size_t kReplyBytesMax = 60 * 1024;

bool is_write(storage::OpType type) { return type != storage::OpType::kRead; }

BlockAddress lqh_address(uint16_t node, uint16_t log_part) {
  return BlockAddress{node, protocol::kLocalQueryBlock, log_part};
}
}  // namespace

CoordinatorBlock::CoordinatorBlock(protocol::ClusterTopology topology, CoordinatorOptions options)
    : Block("coordinator", protocol::kCoordinatorBlock),
      topology_(std::move(topology)),
      options_(options),
      data_nodes_(topology_.data_nodes()),
      current_gci_(options.first_gci) {
  protocol::register_protocol_signal_names();
  on(protocol::kPackedSignals, &CoordinatorBlock::on_packed_signals);
  on(protocol::kTcKeyReq, &CoordinatorBlock::on_tc_key_req);
  on(protocol::kTcCommitReq, &CoordinatorBlock::on_tc_commit_req);
  on(protocol::kTcRollbackReq, &CoordinatorBlock::on_tc_rollback_req);
  on(protocol::kLqhKeyConf, &CoordinatorBlock::on_lqh_key_conf);
  on(protocol::kLqhKeyRef, &CoordinatorBlock::on_lqh_key_ref);
  on(protocol::kLqhCommitConf, &CoordinatorBlock::on_lqh_commit_conf);
  on(protocol::kLqhAbortConf, &CoordinatorBlock::on_lqh_abort_conf);
  on(protocol::kScanTabReq, &CoordinatorBlock::on_scan_tab_req);
  on(protocol::kScanTabNextReq, &CoordinatorBlock::on_scan_tab_next_req);
  on(protocol::kScanFragConf, &CoordinatorBlock::on_scan_frag_conf);
  on(protocol::kScanFragRef, &CoordinatorBlock::on_scan_frag_ref);
  on(protocol::kTableAddReq, &CoordinatorBlock::on_table_add_req);
  on(protocol::kTableDropReq, &CoordinatorBlock::on_table_drop_req);
  on(protocol::kNodeFailRep, &CoordinatorBlock::on_node_fail_rep);
  on(protocol::kApiFailReq, &CoordinatorBlock::on_api_fail_req);
  on(protocol::kGcpBlockReq, &CoordinatorBlock::on_gcp_block_req);
  on(protocol::kGcpSwitchReq, &CoordinatorBlock::on_gcp_switch_req);
  on(protocol::kLqhTransConf, &CoordinatorBlock::on_lqh_trans_conf);
  on(protocol::kNodeStartingRep, &CoordinatorBlock::on_node_starting_rep);
  on(protocol::kNodeStartedRep, &CoordinatorBlock::on_node_started_rep);
}

CoordinatorBlock::~CoordinatorBlock() {
  for (SpareTransaction& spare : spare_transactions_) {
    ASAN_UNPOISON_MEMORY_REGION(spare.record.mapped().get(), sizeof(Transaction));
  }
}

// ---------------------------------------------------------------------------------------
// Packed signals

void CoordinatorBlock::on_packed_signals(Signal& signal) {
  Result<std::vector<Signal>> inner = protocol::unpack_signals(signal);
  if (!inner.ok()) {
    ++stats_.malformed_signals;
    DUO_BLOCK_LOG(WARNING) << inner.status().message();
    return;
  }
  ++stats_.packs_received;
  packer_.begin();
  for (Signal& one : *inner) deliver(one);
  packer_.flush([this](const BlockAddress& to, Signal out) { return send(to, std::move(out)); },
                [this](const Signal& header, const Status& why) { on_unsent(header, why); });
  stats_.packs_sent = packer_.packs_sent();
}

Status CoordinatorBlock::send_to_replica(const BlockAddress& receiver, Signal signal) {
  if (!packer_.active()) return send(receiver, std::move(signal));
  packer_.add(receiver, std::move(signal));
  return Status::OK();
}

void CoordinatorBlock::on_unsent(const Signal& header, const Status& why) {
  Transaction* tx = by_transid(protocol::transaction_of(header));
  DUO_BLOCK_LOG(WARNING) << "cannot send " << header.describe() << ": " << why.message();
  if (tx == nullptr) return;
  if (header.id() == protocol::kLqhKeyReq) {
    // As a refused single send in on_tc_key_req: the operation fails with kTemporary.
    ++stats_.refused_overload;
    const uint32_t tc_op = header.word(2);
    if (tc_op >= tx->ops.size() || tx->ops[tc_op].done) return;
    Operation& op = tx->ops[tc_op];
    op.done = true;
    --tx->outstanding;
    --operation_count_;
    fail_operation(*tx, op, ErrorCode::kTemporary,
                   "cannot reach data node " + std::to_string(header.receiver().node_id) + ": " +
                       why.message(),
                   (op.flags & protocol::kOpIgnoreError) == 0);
    maybe_finish_batch(*tx);
    return;
  }
  if (header.id() == protocol::kLqhCommitReq || header.id() == protocol::kLqhAbortReq) {
    // As send_to_participants does for a replica it cannot reach: not waited for (a node
    // failure, handled by membership).
    if (!mark_answered(*tx, header.receiver())) return;
    if (tx->awaiting == 0) on_participant_done(tx->transid);
  }
}

// ---------------------------------------------------------------------------------------
// Transactions

uint64_t CoordinatorBlock::next_transid() {
  // Unique cluster-wide: the node id in the top 16 bits (docs/formats/kernel-protocol.md).
  return (uint64_t{node_id()} << 48) | (++transid_counter_ & 0xFFFFFFFFFFFFull);
}

CoordinatorBlock::Transaction* CoordinatorBlock::find_or_create(const ApiKey& key,
                                                                ErrorCode* refusal) {
  auto it = transactions_.find(key);
  if (it != transactions_.end()) return it->second.get();
  if (transactions_.size() >= options_.max_transactions) {
    *refusal = ErrorCode::kTemporary;
    return nullptr;
  }
  const uint64_t transid = next_transid();
  if (spare_transactions_.empty()) {
    auto tx = std::make_unique<Transaction>();
    tx->key = key;
    tx->transid = transid;
    Transaction* raw = tx.get();
    by_transid_[transid] = raw;
    transactions_.emplace(key, std::move(tx));
    return raw;
  }
  // A released record and its map entries, reused (release()).
  SpareTransaction spare = std::move(spare_transactions_.back());
  spare_transactions_.pop_back();
  Transaction* raw = spare.record.mapped().get();
  ASAN_UNPOISON_MEMORY_REGION(raw, sizeof(Transaction));
  raw->reset_for_reuse();
  raw->key = key;
  raw->transid = transid;
  spare.record.key() = key;
  spare.by_transid.key() = transid;
  spare.by_transid.mapped() = raw;
  transactions_.insert(std::move(spare.record));
  by_transid_.insert(std::move(spare.by_transid));
  return raw;
}

CoordinatorBlock::Transaction* CoordinatorBlock::by_transid(uint64_t transid) {
  auto it = by_transid_.find(transid);
  return it == by_transid_.end() ? nullptr : it->second;
}

void CoordinatorBlock::send_tc_error(const BlockAddress& client, uint64_t api_tx, ErrorCode error,
                                     std::string message) {
  protocol::TcKeyConf conf;
  conf.api_tx = api_tx;
  conf.flags = protocol::kTcBatchDone | protocol::kTcAborted;
  conf.tx_error = error;
  conf.tx_message = std::move(message);
  Signal signal = std::move(conf).to_signal();
  signal.set_receiver(client);
  send(client, std::move(signal)).ignore_error();
}

void CoordinatorBlock::on_tc_key_req(Signal& signal) {
  Result<protocol::TcKeyReq> parsed = protocol::TcKeyReq::from_signal(signal);
  if (!parsed.ok()) {
    ++stats_.malformed_signals;
    DUO_BLOCK_LOG(WARNING) << parsed.status().message();
    return;
  }
  protocol::TcKeyReq& req = *parsed;
  if (starting_here_) {
    ++stats_.refused_starting;
    return send_tc_error(signal.sender(), req.api_tx, ErrorCode::kTemporary, kNodeStartingMessage);
  }
  const ApiKey key{signal.sender().node_id, req.api_tx};
  ErrorCode refusal = ErrorCode::kOk;
  Transaction* tx = find_or_create(key, &refusal);
  if (tx == nullptr) {
    ++stats_.refused_overload;
    send_tc_error(signal.sender(), req.api_tx, refusal,
                  "Out of transaction records in transaction coordinator "
                  "(increase MaxNoOfConcurrentTransactions)");
    return;
  }
  tx->client = signal.sender();
  Operation op;
  op.op_index = req.op_index;
  op.flags = req.flags;
  tx->ops.push_back(op);
  Operation& added = tx->ops.back();
  const uint32_t tc_op = static_cast<uint32_t>(tx->ops.size() - 1);
  if ((req.flags & protocol::kOpExecute) != 0) {
    tx->executing = true;
    if ((req.flags & protocol::kOpCommit) != 0) tx->commit_requested = true;
  }

  auto refuse_op = [&](ErrorCode error, std::string message) {
    added.done = true;
    fail_operation(*tx, added, error, std::move(message),
                   (req.flags & protocol::kOpIgnoreError) == 0);
    maybe_finish_batch(*tx);
  };
  if (tx->state != Transaction::State::kActive) {
    return refuse_op(ErrorCode::kTransactionState, "transaction is already committing or aborting");
  }
  if (tx->error != ErrorCode::kOk) {
    return refuse_op(tx->error, "transaction already failed: " + tx->error_message);
  }
  if (operation_count_ >= options_.max_operations) {
    ++stats_.refused_overload;
    return refuse_op(ErrorCode::kTemporary,
                     "Out of operation records in transaction coordinator "
                     "(increase MaxNoOfConcurrentOperations)");
  }
  auto table = tables_.find(req.table_id);
  if (table == tables_.end()) {
    return refuse_op(ErrorCode::kNoSuchTable,
                     "table " + std::to_string(req.table_id) + " does not exist");
  }
  const protocol::TableDef& def = table->second.def;
  if (req.table_version != def.version) {
    return refuse_op(ErrorCode::kSchemaVersion, "table definition has changed, please retry");
  }
  if (is_write(req.type) && protocol::is_unique_index_table(req.table_id)) {
    return refuse_op(ErrorCode::kInvalidArgument,
                     "a unique index table is written only by its base table's writes");
  }
  if (is_write(req.type) && (def.flags & protocol::kTableCopyLocked) != 0) {
    return refuse_op(ErrorCode::kTemporary, "Table '" + def.schema.name +
                                                "' is being copied by ALTER TABLE; retry");
  }
  Status sent = send_operation(*tx, tc_op, def, req.type, req.lock, req.flags, std::move(req.body));
  if (!sent.ok()) return refuse_op(sent.code(), sent.message());
}

Status CoordinatorBlock::send_operation(Transaction& tx, uint32_t tc_op,
                                        const protocol::TableDef& def, storage::OpType type,
                                        storage::LockMode lock, uint8_t flags,
                                        protocol::Bytes body) {
  // Only the key is needed here; the rest of the body travels on untouched.
  protocol::ByteReader reader(protocol::as_view(body));
  key_scratch_.clear();
  if (!protocol::decode_attr_values(&reader, &key_scratch_)) {
    return Status(ErrorCode::kInvalidArgument, "malformed operation body");
  }
  DUO_ASSIGN_OR_RETURN(uint32_t hash, protocol::distribution_hash(def.schema, key_scratch_));
  const uint32_t fragment = hash % def.fragment_count;
  protocol::FragmentPlacement placement = live_placement(def, fragment);
  if (placement.replicas.empty()) {
    // The distribution block stops the node when a node group dies; until it has, say so.
    return Status(ErrorCode::kTemporary, "no live replica of fragment " +
                                             std::to_string(fragment) + " (node group " +
                                             std::to_string(placement.node_group) + " is down)");
  }

  // Writes start at the primary and go down the chain; reads run on one replica only:
  // the primary, or for a committed read of a read-backup table possibly a backup.
  Operation& op = tx.ops[tc_op];
  const bool committed_read = !is_write(type) && lock == storage::LockMode::kCommittedRead;
  const uint32_t position = committed_read ? read_position(def, placement, &tx) : 0;
  op.first = placement.replicas[position];
  if (is_write(type)) {
    op.chain = placement.replicas;
  } else {
    op.chain = {op.first};
  }
  if (is_write(type)) {
    for (uint16_t node : placement.replicas) {
      tx.participants.emplace_back(node, placement.log_part);
    }
  } else if (!committed_read) {
    tx.participants.emplace_back(op.first, placement.log_part);
  }
  protocol::LqhKeyReq lqh;
  lqh.transid = tx.transid;
  lqh.tc_op = tc_op;
  lqh.table_id = def.schema.table_id;
  lqh.table_version = def.version;
  lqh.fragment = fragment;
  lqh.log_part = placement.log_part;
  lqh.type = type;
  lqh.lock = lock;
  lqh.flags = flags;
  lqh.coordinator = address();
  lqh.api_node = tx.key.node;
  // A read at a backup keeps the whole chain (local_query checks chain[position] is
  // itself; a read is never forwarded).
  lqh.chain = placement.replicas;
  lqh.position = position;
  lqh.body = std::move(body);
  const BlockAddress first = lqh_address(op.first, lqh.log_part);
  Signal out = std::move(lqh).to_signal();
  out.set_receiver(first);
  if (Status sent = send_to_replica(first, std::move(out)); !sent.ok()) {
    ++stats_.refused_overload;
    return Status(ErrorCode::kTemporary, "cannot reach data node " +
                                             std::to_string(first.node_id) + ": " + sent.message());
  }
  ++tx.outstanding;
  ++operation_count_;
  ++stats_.operations;
  if (position != 0) ++stats_.backup_reads;
  return Status::OK();
}

uint32_t CoordinatorBlock::read_position(const protocol::TableDef& def,
                                         const protocol::FragmentPlacement& placement,
                                         const Transaction* tx) const {
  if ((def.flags & protocol::kTableReadBackup) == 0) return 0;
  // A transaction that wrote (or locked) rows reads at the primary: its own writes
  // reach a backup only through the primary, so a read sent straight to the backup in
  // the same batch could overtake them.
  if (tx != nullptr && !tx->participants.empty()) return 0;
  // Locality, as NDB's TC: this node's replica saves a network hop. A starting replica
  // is still copying its rows (and sits last in the chain): never read there.
  for (uint32_t i = 0; i < placement.replicas.size(); ++i) {
    const uint16_t node = placement.replicas[i];
    if (node == node_id() && !is_starting(node) && !is_dead(node)) return i;
  }
  return 0;
}

void CoordinatorBlock::fail_operation(Transaction& tx, Operation& op, ErrorCode error,
                                      std::string message, bool fatal) {
  OpResultMsg result;
  result.op_index = op.op_index;
  result.error = error;
  result.data.assign(message.begin(), message.end());
  tx.results.push_back(std::move(result));
  if (fatal && tx.error == ErrorCode::kOk) {
    tx.error = error;
    tx.error_message = std::move(message);
  }
}

void CoordinatorBlock::on_tc_commit_req(Signal& signal) {
  const ApiKey key{signal.sender().node_id, protocol::transaction_of(signal)};
  auto it = transactions_.find(key);
  if (it == transactions_.end()) {
    // Nothing was executed (or it already ended): committing nothing succeeds.
    protocol::TcKeyConf conf;
    conf.api_tx = key.api_tx;
    conf.flags = protocol::kTcBatchDone | protocol::kTcCommitted;
    Signal out = std::move(conf).to_signal();
    out.set_receiver(signal.sender());
    send(signal.sender(), std::move(out)).ignore_error();
    return;
  }
  Transaction& tx = *it->second;
  tx.client = signal.sender();
  tx.executing = true;
  tx.commit_requested = true;
  maybe_finish_batch(tx);
}

void CoordinatorBlock::on_tc_rollback_req(Signal& signal) {
  const ApiKey key{signal.sender().node_id, protocol::transaction_of(signal)};
  auto it = transactions_.find(key);
  if (it == transactions_.end()) {
    protocol::TcKeyConf conf;
    conf.api_tx = key.api_tx;
    conf.flags = protocol::kTcBatchDone | protocol::kTcAborted;
    Signal out = std::move(conf).to_signal();
    out.set_receiver(signal.sender());
    send(signal.sender(), std::move(out)).ignore_error();
    return;
  }
  Transaction& tx = *it->second;
  tx.client = signal.sender();
  tx.executing = true;
  tx.rollback_requested = true;
  maybe_finish_batch(tx);
}

void CoordinatorBlock::on_lqh_key_conf(Signal& signal) {
  Result<protocol::LqhKeyConf> conf = protocol::LqhKeyConf::from_signal(signal);
  Transaction* tx = conf.ok() ? by_transid(conf->transid) : nullptr;
  if (tx == nullptr || conf->tc_op >= tx->ops.size() || tx->ops[conf->tc_op].done) {
    ++stats_.malformed_signals;
    DUO_BLOCK_LOG(WARNING) << "stray LQH_KEYCONF " << signal.describe();
    return;
  }
  Operation& op = tx->ops[conf->tc_op];
  op.done = true;
  --tx->outstanding;
  --operation_count_;
  if (op.parent != Operation::kNoParent) {
    child_done(*tx, op, ErrorCode::kOk, {});
    return maybe_finish_batch(*tx);
  }
  OpResultMsg result;
  result.op_index = op.op_index;
  result.flags = conf->flags;
  result.data = std::move(conf->values);
  if (!conf->index_changes.empty()) {
    op.held = std::move(result);
    if (start_index_changes(*tx, conf->tc_op, conf->index_changes)) return maybe_finish_batch(*tx);
    result = std::move(tx->ops[conf->tc_op].held);
  }
  tx->results.push_back(std::move(result));
  maybe_finish_batch(*tx);
}

void CoordinatorBlock::on_lqh_key_ref(Signal& signal) {
  Result<protocol::LqhKeyRef> ref = protocol::LqhKeyRef::from_signal(signal);
  Transaction* tx = ref.ok() ? by_transid(ref->transid) : nullptr;
  if (tx == nullptr || ref->tc_op >= tx->ops.size() || tx->ops[ref->tc_op].done) {
    ++stats_.malformed_signals;
    DUO_BLOCK_LOG(WARNING) << "stray LQH_KEYREF " << signal.describe();
    return;
  }
  Operation& op = tx->ops[ref->tc_op];
  op.done = true;
  --tx->outstanding;
  --operation_count_;
  if (op.parent != Operation::kNoParent) {
    child_done(*tx, op, ref->error, std::move(ref->message));
    return maybe_finish_batch(*tx);
  }
  // Ignorable only when the first replica refused (nothing was applied anywhere: the
  // primary of a write, or the one replica a read ran on) and the error is not a lock
  // wait timeout, which always aborts as in NDB.
  const bool from_first = signal.sender().node_id == op.first;
  const bool fatal = (op.flags & protocol::kOpIgnoreError) == 0 || !from_first ||
                     ref->error == ErrorCode::kLockWaitTimeout;
  fail_operation(*tx, op, ref->error, std::move(ref->message), fatal);
  maybe_finish_batch(*tx);
}

void CoordinatorBlock::maybe_finish_batch(Transaction& tx) {
  if (tx.outstanding != 0 || !tx.executing || tx.state != Transaction::State::kActive) return;
  if (tx.error != ErrorCode::kOk || tx.rollback_requested) {
    start_abort(tx);
  } else if (tx.commit_requested) {
    start_commit(tx);
  } else {
    tx.executing = false;
    reply(tx, protocol::kTcBatchDone);
  }
}

void CoordinatorBlock::send_to_participants(Transaction& tx, kernel::SignalId id) {
  // LQH_COMMITREQ carries the GCI the replicas record the commit under (word 2).
  std::sort(tx.participants.begin(), tx.participants.end());
  tx.participants.erase(std::unique(tx.participants.begin(), tx.participants.end()),
                        tx.participants.end());
  tx.awaiting = 0;
  tx.answered.assign(tx.participants.size(), true);
  for (size_t i = 0; i < tx.participants.size(); ++i) {
    const auto [node, log_part] = tx.participants[i];
    if (is_dead(node)) continue;  // its failure already ended its part
    const BlockAddress target = lqh_address(node, log_part);
    Signal out = protocol::transaction_signal(id, tx.transid);
    if (id == protocol::kLqhCommitReq) out.set_word(2, tx.gci);
    out.set_receiver(target);
    if (Status sent = send_to_replica(target, std::move(out)); !sent.ok()) {
      // A replica we cannot reach is a node failure: handled by membership (takeover).
      DUO_BLOCK_LOG(WARNING) << "cannot send " << kernel::signal_name(id) << " to "
                             << target.to_string() << ": " << sent.message();
      continue;
    }
    tx.answered[i] = false;
    ++tx.awaiting;
  }
}

void CoordinatorBlock::start_commit(Transaction& tx) {
  tx.state = Transaction::State::kCommitting;
  if (commits_blocked_) {
    blocked_commits_.push_back(tx.transid);
    return;
  }
  send_commit(tx);
}

void CoordinatorBlock::send_commit(Transaction& tx) {
  tx.gci = current_gci_;
  auto gci = std::lower_bound(committing_in_gci_.begin(), committing_in_gci_.end(),
                              std::pair<uint32_t, uint32_t>{tx.gci, 0});
  if (gci != committing_in_gci_.end() && gci->first == tx.gci) {
    ++gci->second;
  } else {
    committing_in_gci_.insert(gci, {tx.gci, 1});
  }
  send_to_participants(tx, protocol::kLqhCommitReq);
  if (tx.awaiting == 0) on_participant_done(tx.transid);
}

void CoordinatorBlock::start_abort(Transaction& tx) {
  tx.state = Transaction::State::kAborting;
  send_to_participants(tx, protocol::kLqhAbortReq);
  if (tx.awaiting == 0) on_participant_done(tx.transid);
}

bool CoordinatorBlock::mark_answered(Transaction& tx, const BlockAddress& sender) {
  for (size_t i = 0; i < tx.participants.size() && i < tx.answered.size(); ++i) {
    if (tx.answered[i] || tx.participants[i].first != sender.node_id ||
        tx.participants[i].second != sender.instance) {
      continue;
    }
    tx.answered[i] = true;
    --tx.awaiting;
    return true;
  }
  return false;
}

void CoordinatorBlock::on_lqh_commit_conf(Signal& signal) {
  const uint64_t transid = protocol::transaction_of(signal);
  Transaction* tx = by_transid(transid);
  if (tx == nullptr && on_takeover_answer(transid, signal.sender())) return;
  if (tx == nullptr || tx->state != Transaction::State::kCommitting ||
      !mark_answered(*tx, signal.sender())) {
    ++stats_.malformed_signals;
    return;
  }
  if (tx->awaiting == 0) on_participant_done(tx->transid);
}

void CoordinatorBlock::on_lqh_abort_conf(Signal& signal) {
  const uint64_t transid = protocol::transaction_of(signal);
  Transaction* tx = by_transid(transid);
  if (tx == nullptr && on_takeover_answer(transid, signal.sender())) return;
  if (tx == nullptr || tx->state != Transaction::State::kAborting ||
      !mark_answered(*tx, signal.sender())) {
    ++stats_.malformed_signals;
    return;
  }
  if (tx->awaiting == 0) on_participant_done(tx->transid);
}

void CoordinatorBlock::on_participant_done(uint64_t transid) {
  Transaction* tx = by_transid(transid);
  if (tx == nullptr) return;
  if (tx->state == Transaction::State::kCommitting) {
    ++stats_.committed;
    reply(*tx, protocol::kTcBatchDone | protocol::kTcCommitted);
    auto it = std::lower_bound(committing_in_gci_.begin(), committing_in_gci_.end(),
                               std::pair<uint32_t, uint32_t>{tx->gci, 0});
    if (it != committing_in_gci_.end() && it->first == tx->gci && --it->second == 0) {
      committing_in_gci_.erase(it);
    }
    release(*tx);
    report_no_more_trans_if_done();
    return;
  }
  ++stats_.aborted;
  reply(*tx, protocol::kTcBatchDone | protocol::kTcAborted);
  release(*tx);
}

void CoordinatorBlock::reply(Transaction& tx, uint32_t flags) {
  if (tx.client.node_id == 0) return;  // the client is gone (NODE_FAILREP)
  // Encoded straight from tx.results, split so that each section stays within the limit.
  const std::span<const OpResultMsg> results(tx.results);
  size_t next = 0;
  do {
    const size_t first = next;
    size_t bytes = 0;
    while (next < results.size() &&
           (next == first ||
            bytes + protocol::TcKeyConf::encoded_size(results[next]) <= kReplyBytesMax)) {
      bytes += protocol::TcKeyConf::encoded_size(results[next]);
      ++next;
    }
    const bool last = next == results.size();
    const bool aborted = last && (flags & protocol::kTcAborted) != 0;
    Signal out = protocol::TcKeyConf::encode(
        tx.key.api_tx, last ? flags : 0, aborted ? tx.error : ErrorCode::kOk,
        last && (flags & protocol::kTcCommitted) != 0 ? tx.gci : 0,
        aborted ? std::string_view(tx.error_message) : std::string_view(),
        results.subspan(first, next - first));
    out.set_receiver(tx.client);
    if (Status sent = send(tx.client, std::move(out)); !sent.ok()) {
      DUO_BLOCK_LOG(WARNING) << "cannot answer client node " << tx.client.node_id << ": "
                             << sent.message();
    }
  } while (next < results.size());
  tx.results.clear();
}

void CoordinatorBlock::release(Transaction& tx) {
  operation_count_ -= tx.outstanding;
  // The record is gone for every caller from here on: nothing may touch `tx` after.
  SpareTransaction spare{transactions_.extract(tx.key), by_transid_.extract(tx.transid)};
  if (spare_transactions_.size() < kSpareTransactionsMax && !spare.record.empty() &&
      !spare.by_transid.empty()) {
    // Kept for the next transaction; poisoned until then, so that under AddressSanitizer
    // a stale pointer to it is still reported as a use after free.
    ASAN_POISON_MEMORY_REGION(spare.record.mapped().get(), sizeof(Transaction));
    spare_transactions_.push_back(std::move(spare));
  }
  if (!api_failures_.empty()) answer_api_failures_if_done();
}

// ---------------------------------------------------------------------------------------
// Global checkpoints

void CoordinatorBlock::on_gcp_block_req(Signal& signal) {
  commits_blocked_ = true;
  Signal conf(protocol::kGcpBlockConf, {signal.word(0)});
  conf.set_receiver(signal.sender());
  send(signal.sender(), std::move(conf)).ignore_error();
}

void CoordinatorBlock::on_gcp_switch_req(Signal& signal) {
  if (signal.word(0) == current_gci_ && current_gci_ > 0) {
    // Repeated by a new GCP master (the old one died in the commit phase): report the
    // previous GCI again once its commits are done.
    closing_gci_ = current_gci_ - 1;
  } else {
    closing_gci_ = current_gci_;
    current_gci_ = signal.word(0);
  }
  gcp_requester_ = signal.sender();
  commits_blocked_ = false;
  // Swapped with an empty list that keeps its buffer: nothing is blocked while they are
  // sent, and neither list is freed.
  releasing_commits_.swap(blocked_commits_);
  for (uint64_t transid : releasing_commits_) {
    if (Transaction* tx = by_transid(transid)) send_commit(*tx);
  }
  releasing_commits_.clear();
  report_no_more_trans_if_done();
}

void CoordinatorBlock::report_no_more_trans_if_done() {
  if (closing_gci_ == 0) return;
  // A takeover may still commit a dead coordinator's transactions in this GCI.
  if (takeover_pending()) return;
  if (!committing_in_gci_.empty() && committing_in_gci_.begin()->first <= closing_gci_) return;
  Signal report(protocol::kGcpNoMoreTrans, {closing_gci_});
  report.set_receiver(gcp_requester_);
  send(gcp_requester_, std::move(report)).ignore_error();
  closing_gci_ = 0;
}

// ---------------------------------------------------------------------------------------
// Scans

CoordinatorBlock::Scan* CoordinatorBlock::find_scan(uint16_t api_node, uint64_t api_tx,
                                                    uint32_t scan_id) {
  for (auto& [ptr, scan] : scans_) {
    if (scan->client.node_id == api_node && scan->api_tx == api_tx && scan->scan_id == scan_id) {
      return scan.get();
    }
  }
  return nullptr;
}

void CoordinatorBlock::on_scan_tab_req(Signal& signal) {
  Result<protocol::ScanTabReq> parsed = protocol::ScanTabReq::from_signal(signal);
  if (!parsed.ok()) {
    ++stats_.malformed_signals;
    return;
  }
  protocol::ScanTabReq& req = *parsed;
  auto refuse = [&](ErrorCode error, std::string message) {
    protocol::ScanRef ref;
    ref.tx = req.api_tx;
    ref.id = req.scan_id;
    ref.error = error;
    ref.message = std::move(message);
    Signal out = std::move(ref).to_signal(protocol::kScanTabRef);
    out.set_receiver(signal.sender());
    send(signal.sender(), std::move(out)).ignore_error();
  };
  if (starting_here_) {
    ++stats_.refused_starting;
    return refuse(ErrorCode::kTemporary, kNodeStartingMessage);
  }
  if (scans_.size() >= options_.max_scans) {
    ++stats_.refused_overload;
    return refuse(ErrorCode::kTemporary,
                  "Out of scan records in transaction coordinator (increase "
                  "MaxNoOfConcurrentScans)");
  }
  auto table = tables_.find(req.table_id);
  if (table == tables_.end()) {
    return refuse(ErrorCode::kNoSuchTable, "table " + std::to_string(req.table_id) +
                                               " does not exist");
  }
  if (table->second.def.version != req.table_version) {
    return refuse(ErrorCode::kSchemaVersion, "table definition has changed, please retry");
  }
  auto scan = std::make_unique<Scan>();
  scan->ptr = next_scan_ptr_++;
  scan->client = signal.sender();
  scan->api_tx = req.api_tx;
  scan->scan_id = req.scan_id;
  // Inside a transaction the scan sees that transaction's own writes.
  auto tx = transactions_.find(ApiKey{signal.sender().node_id, req.api_tx});
  scan->transid = tx != transactions_.end() ? tx->second->transid : next_transid();
  const Transaction* in_tx = tx != transactions_.end() ? tx->second.get() : nullptr;
  uint32_t at_backup = 0;
  const uint32_t fragment_count = table->second.def.fragment_count;
  for (uint32_t f = 0; f < fragment_count; ++f) {
    const protocol::FragmentPlacement placement = live_placement(table->second.def, f);
    if (placement.replicas.empty()) {
      return refuse(ErrorCode::kTemporary, "no live replica of fragment " + std::to_string(f) +
                                               " (node group " +
                                               std::to_string(placement.node_group) + " is down)");
    }
    // Scans read committed rows: a read-backup table's fragment may be scanned at this
    // node's replica.
    const uint32_t position = read_position(table->second.def, placement, in_tx);
    Scan::Fragment fragment;
    fragment.fragment = f;
    fragment.node = placement.replicas[position];
    fragment.log_part = placement.log_part;
    scan->fragments.push_back(fragment);
    if (position != 0) ++at_backup;
  }
  ++stats_.scans;
  stats_.backup_scan_fragments += at_backup;
  scan->batch_rows = req.batch_rows != 0 ? req.batch_rows : options_.scan_batch_rows_default;
  // One round (every fragment's batch) within the round budget; local_query raises a
  // share too small to be useful and always sends at least one row.
  const uint32_t batch_bytes =
      std::max<uint32_t>(options_.scan_round_bytes_max / std::max<uint32_t>(fragment_count, 1), 1);
  scan->pending.api_tx = req.api_tx;
  scan->pending.scan_id = req.scan_id;
  Scan& s = *scan;
  scans_.emplace(s.ptr, std::move(scan));
  for (Scan::Fragment& fragment : s.fragments) {
    protocol::ScanFragReq frag;
    frag.transid = s.transid;
    frag.scan_ptr = s.ptr;
    frag.table_id = req.table_id;
    frag.table_version = req.table_version;
    frag.fragment = fragment.fragment;
    frag.log_part = fragment.log_part;
    frag.index = req.index;
    frag.flags = req.flags;
    frag.batch_rows = s.batch_rows;
    frag.batch_bytes = batch_bytes;
    frag.body = req.body;  // each fragment gets its own copy of the (small) scan body
    const BlockAddress target = lqh_address(fragment.node, fragment.log_part);
    Signal out = std::move(frag).to_signal();
    out.set_receiver(target);
    if (Status sent = send(target, std::move(out)); !sent.ok()) {
      fragment.done = true;
      fail_scan(s, ErrorCode::kTemporary, "cannot reach data node " +
                                              std::to_string(fragment.node) + ": " +
                                              sent.message());
      break;  // fail_scan closed (or marked done) every fragment not yet asked
    }
    fragment.in_flight = true;
  }
  release_scan_if_idle(s);
}

void CoordinatorBlock::on_scan_tab_next_req(Signal& signal) {
  Result<protocol::ScanNextReq> req = protocol::ScanNextReq::from_signal(signal);
  Scan* scan = req.ok() ? find_scan(signal.sender().node_id, req->tx, req->id) : nullptr;
  if (scan == nullptr) {
    ++stats_.malformed_signals;
    return;
  }
  if ((req->flags & protocol::kScanClose) != 0) {
    scan->closing = true;
    scan->pending = {};
    close_scan_fragments(*scan);
    release_scan_if_idle(*scan);
    return;
  }
  if (scan->closing) return;
  // The next round: every fragment with more rows, all at once. A client asks only
  // after its round ended (kScanRoundDone), when no fragment is in flight.
  for (const Scan::Fragment& fragment : scan->fragments) {
    if (fragment.in_flight) {
      ++stats_.malformed_signals;
      return;
    }
  }
  for (Scan::Fragment& fragment : scan->fragments) {
    if (fragment.done) continue;
    protocol::ScanNextReq next{scan->transid, scan->ptr, fragment.fragment, 0};
    const BlockAddress target = lqh_address(fragment.node, fragment.log_part);
    Signal out = next.to_signal(protocol::kScanFragNextReq);
    out.set_receiver(target);
    if (Status sent = send(target, std::move(out)); !sent.ok()) {
      fragment.done = true;
      fail_scan(*scan, ErrorCode::kTemporary, "cannot reach data node " +
                                                  std::to_string(fragment.node));
      release_scan_if_idle(*scan);
      return;
    }
    fragment.in_flight = true;
  }
}

void CoordinatorBlock::close_scan_fragments(Scan& scan) {
  for (Scan::Fragment& fragment : scan.fragments) {
    if (fragment.done || fragment.in_flight) continue;
    protocol::ScanNextReq close{scan.transid, scan.ptr, fragment.fragment, protocol::kScanClose};
    const BlockAddress target = lqh_address(fragment.node, fragment.log_part);
    Signal out = close.to_signal(protocol::kScanFragNextReq);
    out.set_receiver(target);
    if (send(target, std::move(out)).ok()) {
      fragment.in_flight = true;
    } else {
      fragment.done = true;  // unreachable: its scan dies with the node
    }
  }
}

void CoordinatorBlock::on_scan_frag_conf(Signal& signal) {
  Result<protocol::ScanBatch> batch = protocol::ScanBatch::from_signal(signal);
  auto it = batch.ok() ? scans_.find(batch->id) : scans_.end();
  if (it == scans_.end()) {
    ++stats_.malformed_signals;
    return;
  }
  Scan& scan = *it->second;
  Scan::Fragment* fragment = nullptr;
  for (Scan::Fragment& f : scan.fragments) {
    if (f.fragment == batch->fragment) fragment = &f;
  }
  if (fragment == nullptr || !fragment->in_flight) {
    ++stats_.malformed_signals;
    return;
  }
  fragment->in_flight = false;
  if ((batch->flags & protocol::kScanFragmentDone) != 0) fragment->done = true;
  if (scan.closing) {
    close_scan_fragments(scan);  // a fragment answered its last NEXTREQ before the close
    release_scan_if_idle(scan);
    return;
  }
  // local_query keeps a batch within kScanBatchBytesLimit, so one entry always fits a
  // section; a batch that would overfill the collected ones sends those first.
  const size_t entry_bytes = protocol::ScanTabConf::kEntryHeaderBytes + batch->batch.size();
  if (entry_bytes > kernel::kSectionBytesMax) {
    fail_scan(scan, ErrorCode::kInternal,
              "scan batch of fragment " + std::to_string(batch->fragment) + " too large");
    release_scan_if_idle(scan);
    return;
  }
  if (scan.pending.section.size() + entry_bytes > kernel::kSectionBytesMax) {
    send_scan_batches(scan, 0);
  }
  if (batch->rows != 0) {  // the client needs rows only: done-ness is tracked here
    scan.pending.add(batch->fragment, fragment->done ? protocol::kScanFragmentDone : 0,
                     protocol::as_view(batch->batch));
  }
  const bool round_done = std::none_of(scan.fragments.begin(), scan.fragments.end(),
                                       [](const Scan::Fragment& f) { return f.in_flight; });
  if (!round_done) return;
  const bool all_done = std::all_of(scan.fragments.begin(), scan.fragments.end(),
                                    [](const Scan::Fragment& f) { return f.done; });
  send_scan_batches(scan, protocol::kScanRoundDone | (all_done ? protocol::kScanAllDone : 0));
  if (all_done) {
    scan.client_done = true;
    release_scan_if_idle(scan);
  }
}

void CoordinatorBlock::send_scan_batches(Scan& scan, uint32_t flags) {
  protocol::ScanTabConf conf = std::move(scan.pending);
  scan.pending = {};
  scan.pending.api_tx = conf.api_tx;
  scan.pending.scan_id = conf.scan_id;
  conf.flags = flags;
  Signal out = std::move(conf).to_signal();
  out.set_receiver(scan.client);
  send(scan.client, std::move(out)).ignore_error();
}

void CoordinatorBlock::on_scan_frag_ref(Signal& signal) {
  Result<protocol::ScanRef> ref = protocol::ScanRef::from_signal(signal);
  auto it = ref.ok() ? scans_.find(ref->id) : scans_.end();
  if (it == scans_.end()) {
    ++stats_.malformed_signals;
    return;
  }
  Scan& scan = *it->second;
  for (Scan::Fragment& f : scan.fragments) {
    if (f.fragment == ref->fragment) {
      f.in_flight = false;
      f.done = true;  // local_query frees a scan it refuses
    }
  }
  fail_scan(scan, ref->error, std::move(ref->message));
  release_scan_if_idle(scan);
}

void CoordinatorBlock::fail_scan(Scan& scan, ErrorCode error, std::string message) {
  if (!scan.client_done && scan.client.node_id != 0) {
    protocol::ScanRef ref;
    ref.tx = scan.api_tx;
    ref.id = scan.scan_id;
    ref.error = error;
    ref.message = std::move(message);
    Signal out = std::move(ref).to_signal(protocol::kScanTabRef);
    out.set_receiver(scan.client);
    send(scan.client, std::move(out)).ignore_error();
  }
  scan.client_done = true;
  scan.closing = true;
  scan.pending = {};
  close_scan_fragments(scan);
}

void CoordinatorBlock::release_scan_if_idle(Scan& scan) {
  for (const Scan::Fragment& f : scan.fragments) {
    if (f.in_flight) return;
    if (!f.done && !scan.closing) return;
  }
  if (!scan.client_done && scan.client.node_id != 0) {
    // Closed by the client: its final answer.
    protocol::ScanTabConf done;
    done.api_tx = scan.api_tx;
    done.scan_id = scan.scan_id;
    done.flags = protocol::kScanRoundDone | protocol::kScanAllDone;
    Signal out = std::move(done).to_signal();
    out.set_receiver(scan.client);
    send(scan.client, std::move(out)).ignore_error();
  }
  scans_.erase(scan.ptr);  // destroys scan
  if (!api_failures_.empty()) answer_api_failures_if_done();
}

// ---------------------------------------------------------------------------------------
// Schema and membership

void CoordinatorBlock::on_table_add_req(Signal& signal) {
  Result<protocol::TableMsg> msg = protocol::TableMsg::from_signal(signal);
  protocol::DictMsg conf;
  if (!msg.ok()) {
    ++stats_.malformed_signals;
    conf.c = static_cast<uint32_t>(msg.status().code());
    conf.text = msg.status().message();
  } else {
    conf.request_id = msg->request_id;
    conf.a = msg->table.schema.table_id;
    add_table(std::move(msg->table));
  }
  Signal out = conf.to_signal(protocol::kTableAddConf);
  out.set_receiver(signal.sender());
  send(signal.sender(), std::move(out)).ignore_error();
}

void CoordinatorBlock::on_table_drop_req(Signal& signal) {
  protocol::DictMsg msg = protocol::DictMsg::from_signal(signal);
  drop_table(msg.a);
  protocol::DictMsg conf;
  conf.request_id = msg.request_id;
  conf.a = msg.a;
  Signal out = conf.to_signal(protocol::kTableDropConf);
  out.set_receiver(signal.sender());
  send(signal.sender(), std::move(out)).ignore_error();
}

void CoordinatorBlock::on_node_fail_rep(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (is_data_node(node)) return on_data_node_failed(node);
  on_api_node_failed(node);
}

void CoordinatorBlock::on_api_node_failed(uint16_t node) {
  // A client that disconnected: its transactions abort (those already committing
  // complete, since replicas may have committed), its scans close. Nobody is answered.
  std::vector<Transaction*> orphans;
  for (auto& [key, tx] : transactions_) {
    if (key.node == node) orphans.push_back(tx.get());
  }
  for (Transaction* tx : orphans) {
    tx->client.node_id = 0;
    if (tx->state != Transaction::State::kActive) continue;
    tx->rollback_requested = true;
    tx->executing = true;
    maybe_finish_batch(*tx);  // aborts now, or when its outstanding operations return
  }
  std::vector<Scan*> scans;
  for (auto& [ptr, scan] : scans_) {
    if (scan->client.node_id == node) scans.push_back(scan.get());
  }
  for (Scan* scan : scans) {
    scan->client.node_id = 0;
    scan->client_done = true;
    scan->closing = true;
    close_scan_fragments(*scan);
    release_scan_if_idle(*scan);
  }
  if (!orphans.empty() || !scans.empty()) {
    DUO_BLOCK_LOG(INFO) << "node " << node << " failed: aborting " << orphans.size()
                        << " transaction(s), closing " << scans.size() << " scan(s)";
  }
}

}  // namespace duo::coordinator
