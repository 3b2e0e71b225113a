// LocalQueryBlock: tables, key operations, the replication chain, local transactions
// and lock waits. Scans are in local_query_scan.cc; the redo log, checkpoints and
// restore in local_query_redo.cc, local_query_checkpoint.cc and restore.cc.
#include "ndb-kernel/local_query/local_query_block.h"

#include <algorithm>
#include <utility>

#include <sanitizer/asan_interface.h>

#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "storage/scan/interpreted_update.h"

namespace duo::local_query {

using kernel::BlockAddress;
using kernel::Signal;
using protocol::LqhKeyReq;
using storage::AttrValues;
using storage::Fragment;
using storage::OpResult;
using storage::OpType;
using storage::TxId;

namespace {

constexpr std::string_view kLockWaitTimeoutMessage =
    "Lock wait timeout exceeded; try restarting transaction";

OpResult failed(Status status) {
  OpResult result;
  result.status = std::move(status);
  return result;
}

}  // namespace

LocalQueryBlock::LocalQueryBlock(uint16_t log_part, storage::GlobalMemory* memory,
                                 protocol::ClusterTopology topology, LocalQueryOptions options)
    : Block("local_query", protocol::kLocalQueryBlock, log_part),
      memory_(memory),
      topology_(std::move(topology)),
      options_(options),
      redo_(RedoLogOptions{options.redo_buffer_bytes, options.redo_file_bytes,
                           options.redo_file_count},
            1) {
  protocol::register_protocol_signal_names();
  on(protocol::kTableAddReq, &LocalQueryBlock::on_table_add);
  on(protocol::kTableDropReq, &LocalQueryBlock::on_table_drop);
  on(protocol::kPackedSignals, &LocalQueryBlock::on_packed_signals);
  on(protocol::kLqhKeyReq, &LocalQueryBlock::on_key_request);
  on(protocol::kDbinfoScanReq, &LocalQueryBlock::on_dbinfo_scan);
  on(protocol::kLqhCommitReq, &LocalQueryBlock::on_commit_request);
  on(protocol::kLqhAbortReq, &LocalQueryBlock::on_abort_request);
  on(protocol::kLqhLockTimeout, &LocalQueryBlock::on_lock_timeout);
  on(protocol::kScanFragReq, &LocalQueryBlock::on_scan_request);
  on(protocol::kScanFragNextReq, &LocalQueryBlock::on_scan_next);
  on(protocol::kGcpSaveReq, &LocalQueryBlock::on_gcp_save);
  on(protocol::kLcpStartReq, &LocalQueryBlock::on_lcp_start);
  on(protocol::kLqhRestoreReq, &LocalQueryBlock::on_restore_request);
  on(protocol::kLqhContinue, &LocalQueryBlock::on_continue);
  on(protocol::kNodeFailRep, &LocalQueryBlock::on_node_fail_rep);
  on(protocol::kLqhTransReq, &LocalQueryBlock::on_trans_req);
  on(protocol::kNodeRestartInitReq, &LocalQueryBlock::on_node_restart_init);
  on(protocol::kNodeStartingRep, &LocalQueryBlock::on_node_starting);
  on(protocol::kNodeStartedRep, &LocalQueryBlock::on_node_started);
  on(protocol::kCopyNodeReq, &LocalQueryBlock::on_copy_node);
  on(protocol::kCopyRowsReq, &LocalQueryBlock::on_copy_rows);
  on(protocol::kCopyRowsConf, &LocalQueryBlock::on_copy_rows_conf);
  on(protocol::kCopyRowsRef, &LocalQueryBlock::on_copy_rows_ref);
  for (kernel::SignalId id : {protocol::kFsOpenConf, protocol::kFsRef, protocol::kFsWriteConf,
                              protocol::kFsReadConf, protocol::kFsSyncConf, protocol::kFsCloseConf,
                              protocol::kFsRemoveConf, protocol::kFsListConf}) {
    on(id, &LocalQueryBlock::on_fs_answer);
  }
}

LocalQueryBlock::~LocalQueryBlock() {
  for (TransactionMap::node_type& spare : spare_transactions_) {
    ASAN_UNPOISON_MEMORY_REGION(&spare.mapped(), sizeof(Transaction));
  }
  // Scans (the checkpoint's and the copy's too) point into fragments: they go first.
  scans_.clear();
  lcp_.reset();
  copy_.reset();
}

// ---------------------------------------------------------------------------------------
// Observers.

const Fragment* LocalQueryBlock::fragment(uint32_t table_id, uint32_t fragment_id) const {
  auto table = tables_.find(table_id);
  if (table == tables_.end()) return nullptr;
  auto it = table->second->fragments.find(fragment_id);
  return it == table->second->fragments.end() ? nullptr : it->second.get();
}

std::vector<uint32_t> LocalQueryBlock::fragment_ids(uint32_t table_id) const {
  std::vector<uint32_t> ids;
  auto table = tables_.find(table_id);
  if (table == tables_.end()) return ids;
  for (const auto& [id, fragment] : table->second->fragments) ids.push_back(id);
  return ids;
}

storage::FragmentStats LocalQueryBlock::fragment_stats() const {
  storage::FragmentStats total;
  for (const auto& [table_id, table] : tables_) {
    for (const auto& [fragment_id, fragment] : table->fragments) {
      const storage::FragmentStats s = fragment->stats();
      total.rows += s.rows;
      total.fixed_pages += s.fixed_pages;
      total.var_pages += s.var_pages;
      total.hash_index_bytes += s.hash_index_bytes;
      total.ordered_index_bytes += s.ordered_index_bytes;
      total.transaction_bytes += s.transaction_bytes;
      total.image_bytes += s.image_bytes;
    }
  }
  return total;
}

// ---------------------------------------------------------------------------------------
// Helpers.

LocalQueryBlock::Table* LocalQueryBlock::find_table(uint32_t table_id) {
  auto it = tables_.find(table_id);
  return it == tables_.end() ? nullptr : it->second.get();
}

Fragment* LocalQueryBlock::find_fragment(uint32_t table_id, uint32_t fragment_id) {
  Table* table = find_table(table_id);
  if (table == nullptr) return nullptr;
  auto it = table->fragments.find(fragment_id);
  return it == table->fragments.end() ? nullptr : it->second.get();
}

void LocalQueryBlock::log_malformed(const Signal& signal, const Status& status) {
  ++malformed_signal_count_;
  DUO_BLOCK_LOG(WARNING) << "dropped " << signal.describe() << ": " << status.to_string();
}

Status LocalQueryBlock::send_data(const BlockAddress& to, Signal signal) {
  if (packer_.active() &&
      (to.block == protocol::kCoordinatorBlock || to.block == protocol::kLocalQueryBlock)) {
    packer_.add(to, std::move(signal));
    return Status::OK();
  }
  return send(to, std::move(signal));
}

void LocalQueryBlock::send_or_log(const BlockAddress& to, Signal signal) {
  // Described only on failure: building the text for every answer costs more than the
  // answer itself on the key-operation path.
  const kernel::SignalId id = signal.id();
  Status sent = send_data(to, std::move(signal));
  // A lost answer is the sender's timeout to handle (as a lost network message is);
  // it must not take the block down.
  if (!sent.ok()) {
    DUO_BLOCK_LOG(WARNING) << "could not send " << kernel::signal_name(id) << " to "
                           << to.to_string() << ": " << sent.to_string();
  }
}

void LocalQueryBlock::on_packed_signals(Signal& signal) {
  auto inner = protocol::unpack_signals(signal);
  if (!inner.ok()) return log_malformed(signal, inner.status());
  packer_.begin();
  for (Signal& one : *inner) deliver(one);
  packer_.flush([this](const BlockAddress& to, Signal out) { return send(to, std::move(out)); },
                [this](const Signal& header, const Status& why) { on_unsent(header, why); });
}

void LocalQueryBlock::on_unsent(const Signal& header, const Status& why) {
  if (header.id() != protocol::kLqhKeyReq) {
    // An answer: lost like a lost network message; the coordinator's timeout handles it.
    DUO_BLOCK_LOG(WARNING) << "could not send " << kernel::signal_name(header.id()) << " to "
                           << header.receiver().to_string() << ": " << why.to_string();
    return;
  }
  // A forwarded write: the chain is broken here, so the coordinator must hear of it (see
  // forward()). The header's words hold everything the refusal needs.
  protocol::LqhKeyRef ref;
  ref.transid = protocol::transaction_of(header);
  ref.tc_op = header.word(2);
  ref.error = ErrorCode::kTemporary;
  ref.message = "could not forward to the next replica: " + why.message();
  const BlockAddress coordinator{static_cast<uint16_t>(header.word(8)),
                                 static_cast<uint16_t>(header.word(9)),
                                 static_cast<uint16_t>(header.word(8) >> 16)};
  send_or_log(coordinator, std::move(ref).to_signal());
}

// ---------------------------------------------------------------------------------------
// Dictionary.

void LocalQueryBlock::on_table_add(Signal& signal) {
  auto msg = protocol::TableMsg::from_signal(signal);
  if (!msg.ok()) return log_malformed(signal, msg.status());
  // A known table with a higher version is an ALTER (local_query_alter.cc).
  if (const Table* known = find_table(msg->table.schema.table_id);
      known != nullptr && known->def.version < msg->table.version) {
    return alter_table(signal.sender(), msg->request_id, std::move(msg->table),
                       msg->kind == protocol::kTableAddMayGiveUp);
  }
  protocol::DictMsg reply;
  reply.request_id = msg->request_id;
  reply.a = msg->table.schema.table_id;
  Status added = add_table(std::move(msg->table));
  if (!added.ok()) {
    reply.c = static_cast<uint32_t>(added.code());
    reply.text = added.message();
    DUO_BLOCK_LOG(WARNING) << "table " << reply.a << " not added: " << added.to_string();
  }
  send_or_log(signal.sender(), reply.to_signal(protocol::kTableAddConf));
}

Status LocalQueryBlock::add_table(protocol::TableDef def) {
  const uint32_t table_id = def.schema.table_id;
  if (const Table* existing = find_table(table_id)) {
    // The dictionary may repeat itself (a retried schema transaction): same version is OK.
    if (existing->def.version == def.version) return Status::OK();
    return Status(ErrorCode::kTableExists, "table " + std::to_string(table_id) +
                                               " exists with version " +
                                               std::to_string(existing->def.version));
  }
  if (def.fragment_count == 0 || def.fragment_count > protocol::kFragmentCountMax) {
    return Status(ErrorCode::kInvalidArgument,
                  "bad fragment count " + std::to_string(def.fragment_count));
  }
  if (topology_.node_groups.empty() || topology_.log_parts == 0) {
    return Status(ErrorCode::kConfigError, "cluster topology has no node groups or log parts");
  }
  for (const std::vector<uint16_t>& group : topology_.node_groups) {
    if (group.empty()) return Status(ErrorCode::kConfigError, "empty node group");
  }
  // Validated even when no fragment lands here, so every node answers alike.
  DUO_RETURN_IF_ERROR(def.schema.validate());
  DUO_RETURN_IF_ERROR(protocol::unique_index_tables(def).status());
  auto table = std::make_unique<Table>();
  table->def = std::move(def);
  for (uint32_t f = 0; f < table->def.fragment_count; ++f) {
    const protocol::FragmentPlacement placement =
        protocol::place_fragment(topology_, f, table->def.fragment_count);
    if (placement.log_part != address().instance) continue;
    if (std::find(placement.replicas.begin(), placement.replicas.end(), node_id()) ==
        placement.replicas.end()) {
      continue;
    }
    DUO_ASSIGN_OR_RETURN(std::unique_ptr<Fragment> fragment,
                         Fragment::create(&table->def.schema, memory_));
    // A copying fragment holds rows of different moments until the copy is done
    // (NODE_STARTEDREP turns enforcement on again).
    if (copying_) fragment->set_enforce_unique(false);
    fragment->set_delete_log_max_bytes(options_.delete_log_bytes);
    table->fragments.emplace(f, std::move(fragment));
  }
  DUO_BLOCK_LOG(INFO) << "table " << table_id << " '" << table->def.schema.name << "' version "
                      << table->def.version << ": " << table->fragments.size() << " of "
                      << table->def.fragment_count << " fragments here";
  Table* added = table.get();
  tables_.emplace(table_id, std::move(table));
  return add_unique_index_tables(added);
}

void LocalQueryBlock::on_table_drop(Signal& signal) {
  const protocol::DictMsg msg = protocol::DictMsg::from_signal(signal);
  // Dropping an unknown table is a no-op: the dictionary may repeat a drop.
  if (find_table(msg.a) != nullptr) drop_table(msg.a);
  protocol::DictMsg reply;
  reply.request_id = msg.request_id;
  reply.a = msg.a;
  send_or_log(signal.sender(), reply.to_signal(protocol::kTableDropConf));
}

void LocalQueryBlock::drop_table(uint32_t table_id) {
  Table* table = find_table(table_id);
  if (table == nullptr) return;
  drop_unique_index_tables(*table);
  // Nothing may point into the fragments once they are freed: waits are refused, scans
  // closed, and every transaction's storage transactions on the table aborted and
  // forgotten, so a later COMMITREQ of those transactions touches only other tables.
  refuse_lock_waits([&](const LockWait& wait) { return wait.request.table_id == table_id; },
                    ErrorCode::kNoSuchTable, "table " + std::to_string(table_id) + " was dropped");
  close_scans([&](const ScanKey&, const ScanRecord& scan) { return scan.table_id == table_id; });
  // A checkpoint writing one of its fragments drops that file at its next slice.
  if (lcp_ != nullptr && lcp_->scan != nullptr && lcp_->current.table_id == table_id) {
    lcp_->scan.reset();
    lcp_->current_dropped = true;
  }
  copy_table_dropped(table_id);
  for (auto it = transactions_.begin(); it != transactions_.end();) {
    std::vector<FragmentTx>& held = it->second.fragments;
    for (const FragmentTx& ftx : held) {
      if (ftx.table_id != table_id) continue;
      Fragment* fragment = table->fragments.at(ftx.fragment_id).get();
      Status aborted = fragment->abort(ftx.tx);
      if (!aborted.ok()) {
        DUO_BLOCK_LOG(ERROR) << "abort of transaction " << it->first << " on dropped table "
                             << table_id << " failed: " << aborted.to_string();
      }
    }
    std::erase_if(held, [&](const FragmentTx& ftx) { return ftx.table_id == table_id; });
    if (held.empty()) {
      it = transactions_.erase(it);
    } else {
      ++it;
    }
  }
  DUO_BLOCK_LOG(INFO) << "table " << table_id << " dropped";
  tables_.erase(table_id);
}

// ---------------------------------------------------------------------------------------
// Key operations.

void LocalQueryBlock::on_key_request(Signal& signal) {
  auto request = LqhKeyReq::from_signal(signal);
  if (!request.ok()) return log_malformed(signal, request.status());
  if (!dead_nodes_.empty() &&
      (is_dead(request->coordinator.node_id) || is_dead(signal.sender().node_id))) {
    // From a dead node (late) or for a dead coordinator: nobody can use the answer, and
    // the takeover (or the live coordinator's abort) ends the transaction.
    DUO_BLOCK_LOG(INFO) << "dropped an operation of transaction " << request->transid
                        << ": its coordinator or sender died";
    return;
  }
  execute(std::move(request).value());
}

void LocalQueryBlock::execute(LqhKeyReq request) {
  if (request.log_part != address().instance || request.chain[request.position] != node_id()) {
    return refuse(request, ErrorCode::kInvalidArgument,
                  "operation routed to the wrong replica " + address().to_string());
  }
  Table* table = find_table(request.table_id);
  if (table == nullptr) {
    return refuse(request, ErrorCode::kNoSuchTable, "no table " + std::to_string(request.table_id));
  }
  if (table->def.version != request.table_version) {
    return refuse(request, ErrorCode::kSchemaVersion,
                  "table " + std::to_string(request.table_id) + " is at version " +
                      std::to_string(table->def.version));
  }
  auto fragment_it = table->fragments.find(request.fragment);
  if (fragment_it == table->fragments.end()) {
    return refuse(request, ErrorCode::kNoSuchTable,
                  "fragment " + std::to_string(request.fragment) + " of table " +
                      std::to_string(request.table_id) + " is not held here");
  }
  Fragment* fragment = fragment_it->second.get();
  // Decoded into the block's buffers (nothing below keeps a reference past this call).
  if (Status decoded =
          protocol::OpBody::decode_into(protocol::as_view(request.body), &body_scratch_);
      !decoded.ok()) {
    return refuse(request, decoded.code(), decoded.message());
  }
  const protocol::OpBody& body = body_scratch_;

  // NDB error 1221: the redo log cannot keep up. Refusing new writes (never commits)
  // keeps room in the buffer for the commits of the writes already executed.
  if (request.type != OpType::kRead && !redo_.accepting_writes()) {
    return refuse(request, ErrorCode::kTemporary, "REDO buffers overloaded");
  }
  // NDB error 410: the redo files hold too much redo no checkpoint has made useless yet.
  // Same reserve: the commits of the writes already executed still fit in the files.
  if (request.type != OpType::kRead && !redo_space_accepts_writes()) {
    return refuse(request, ErrorCode::kTemporary, kRedoFilesOverloadedMessage);
  }
  // Committed reads need no transaction; they see the transaction's own writes when it
  // already has some on this fragment.
  const bool committed_read =
      request.type == OpType::kRead && request.lock == storage::LockMode::kCommittedRead;
  TxId tx = find_fragment_tx(request.transid, request.table_id, request.fragment);
  if (tx == storage::kNullId && !committed_read) {
    auto begun = begin_fragment_tx(request.transid, request.table_id, request.fragment, fragment);
    if (!begun.ok()) return refuse(request, begun.status().code(), begun.status().message());
    tx = *begun;
    transactions_[request.transid].api_node = request.api_node;
  }

  // Unique indexes: the row's index values before the write (an insert that succeeds
  // had no row), and after it below.
  const bool indexed = maintains_unique_indexes(*table, request);
  std::optional<AttrValues> before;
  if (indexed && request.type != OpType::kInsert) {
    before = unique_image(*table, fragment, tx, body.key_or_row);
  }
  AttrValues& values = read_scratch_;
  values.clear();
  OpResult result;
  switch (request.type) {
    case OpType::kInsert:
      result = fragment->insert(tx, body.key_or_row);
      break;
    case OpType::kUpdate:
      result = fragment->update(tx, body.key_or_row, body.values);
      break;
    case OpType::kWrite:
      result = fragment->write(tx, body.key_or_row);
      break;
    case OpType::kDelete:
      result = fragment->remove(tx, body.key_or_row);
      break;
    case OpType::kInterpretedUpdate: {
      auto program = storage::InterpretedUpdate::decode(body.program);
      if (!program.ok()) {
        result = failed(program.take_status());
        break;
      }
      Status bound = program->bind(fragment->schema());
      if (!bound.ok()) {
        result = failed(std::move(bound));
        break;
      }
      result = fragment->interpreted_update(tx, body.key_or_row, *program);
      break;
    }
    case OpType::kRead:
      result = fragment->read(tx, body.key_or_row, request.lock, body.columns, &values);
      break;
  }
  if (indexed) note_index_changes(*table, fragment, tx, body.key_or_row, before, &result, &request);
  conclude(std::move(request), result, values);
}

void LocalQueryBlock::conclude(LqhKeyReq request, const OpResult& result,
                               const AttrValues& values) {
  if (result.waiting) return park(std::move(request), result.op);
  if (!result.status.ok()) {
    if (copying_ && request.type != OpType::kRead) {
      if (std::optional<OpResult> lenient = copying_outcome(request, result)) {
        return conclude(std::move(request), *lenient, values);
      }
    }
    return refuse(request, result.status.code(), result.status.message());
  }
  if (request.type == OpType::kRead) {
    return confirm(std::move(request), 0, &values);
  }
  // Dead replicas are skipped: the chain may have been built before their failure was
  // known here.
  uint32_t next = request.position + 1;
  while (next < request.chain.size() && is_dead(request.chain[next])) ++next;
  if (next < request.chain.size()) {
    if (result.filtered) request.flags |= protocol::kOpFilteredUpstream;
    return forward(std::move(request), next);
  }
  const bool filtered = result.filtered || (request.flags & protocol::kOpFilteredUpstream) != 0;
  confirm(std::move(request), filtered ? protocol::kConfFiltered : 0, nullptr);
}

void LocalQueryBlock::forward(LqhKeyReq request, uint32_t next_position) {
  request.position = next_position;
  const BlockAddress next{request.chain[request.position], protocol::kLocalQueryBlock,
                          request.log_part};
  const uint64_t transid = request.transid;
  const uint32_t tc_op = request.tc_op;
  const BlockAddress coordinator = request.coordinator;
  Status sent = send_data(next, std::move(request).to_signal());
  if (!sent.ok()) {
    // The chain is broken here: the coordinator must hear of it, or the operation would
    // never be answered. It aborts the transaction, which undoes this replica too.
    protocol::LqhKeyRef ref;
    ref.transid = transid;
    ref.tc_op = tc_op;
    ref.error = ErrorCode::kTemporary;
    ref.message = "could not forward to the next replica: " + sent.message();
    send_or_log(coordinator, std::move(ref).to_signal());
  }
}

void LocalQueryBlock::confirm(LqhKeyReq request, uint8_t flags, const AttrValues* values) {
  protocol::LqhKeyConf conf;
  conf.transid = request.transid;
  conf.tc_op = request.tc_op;
  conf.flags = flags;
  conf.index_changes = std::move(request.index_changes);
  if (values != nullptr) {
    Status encoded = protocol::encode_attr_values(*values, &conf.values);
    if (!encoded.ok()) return refuse(request, encoded.code(), encoded.message());
  }
  send_or_log(request.coordinator, std::move(conf).to_signal());
}

void LocalQueryBlock::refuse(const LqhKeyReq& request, ErrorCode error, std::string message) {
  protocol::LqhKeyRef ref;
  ref.transid = request.transid;
  ref.tc_op = request.tc_op;
  ref.error = error;
  ref.message = std::move(message);
  send_or_log(request.coordinator, std::move(ref).to_signal());
}

// ---------------------------------------------------------------------------------------
// Transactions.

TxId LocalQueryBlock::find_fragment_tx(uint64_t transid, uint32_t table_id,
                                       uint32_t fragment_id) const {
  auto it = transactions_.find(transid);
  if (it == transactions_.end()) return storage::kNullId;
  for (const FragmentTx& ftx : it->second.fragments) {
    if (ftx.table_id == table_id && ftx.fragment_id == fragment_id) return ftx.tx;
  }
  return storage::kNullId;
}

Result<TxId> LocalQueryBlock::begin_fragment_tx(uint64_t transid, uint32_t table_id,
                                                uint32_t fragment_id, Fragment* fragment) {
  // An index build waits for the table's transactions to end: no new ones meanwhile.
  if (pending_alters_.contains(table_id)) {
    return Status(ErrorCode::kTemporary,
                  "table " + std::to_string(table_id) + " is being altered; retry the transaction");
  }
  auto it = transactions_.find(transid);
  if (it == transactions_.end()) {
    if (transactions_.size() >= options_.transactions_max) {
      return Status(ErrorCode::kTemporary,
                    "too many concurrent transactions on " + address().to_string());
    }
    DUO_ASSIGN_OR_RETURN(TxId tx, fragment->begin());
    Transaction* created = nullptr;
    if (spare_transactions_.empty()) {
      created = &transactions_[transid];
    } else {
      // An ended transaction's entry, emptied by end_transaction.
      TransactionMap::node_type spare = std::move(spare_transactions_.back());
      spare_transactions_.pop_back();
      ASAN_UNPOISON_MEMORY_REGION(&spare.mapped(), sizeof(Transaction));
      spare.key() = transid;
      created = &transactions_.insert(std::move(spare)).position->second;
    }
    created->fragments.push_back(FragmentTx{table_id, fragment_id, tx});
    return tx;
  }
  DUO_ASSIGN_OR_RETURN(TxId tx, fragment->begin());
  it->second.fragments.push_back(FragmentTx{table_id, fragment_id, tx});
  return tx;
}

void LocalQueryBlock::on_commit_request(Signal& signal) {
  const uint64_t transid = protocol::transaction_of(signal);
  if (is_dead(signal.sender().node_id)) {
    // A coordinator declared dead that still runs (it was frozen): its transactions are
    // the takeover's now, which may have aborted this one. Confirming would let it tell
    // its client "committed" for a transaction that is not.
    DUO_BLOCK_LOG(WARNING) << "dropped the commit of transaction " << transid << " from data node "
                           << signal.sender().node_id << ", declared dead";
    return;
  }
  // Word 2: the GCI the coordinator committed the transaction in (0 from a sender that
  // predates GCIs).
  end_transaction(transid, true, signal.word(2));
  send_or_log(signal.sender(), protocol::transaction_signal(protocol::kLqhCommitConf, transid));
}

void LocalQueryBlock::on_abort_request(Signal& signal) {
  const uint64_t transid = protocol::transaction_of(signal);
  if (is_dead(signal.sender().node_id)) return;  // the takeover decides (see above)
  end_transaction(transid, false, 0);
  send_or_log(signal.sender(), protocol::transaction_signal(protocol::kLqhAbortConf, transid));
}

void LocalQueryBlock::end_transaction(uint64_t transid, bool commit, uint32_t gci) {
  auto it = transactions_.find(transid);
  if (it == transactions_.end()) return;  // nothing here (or already ended): idempotent
  // A storage transaction cannot end with an operation parked; each parked one still
  // owes the coordinator its single answer.
  refuse_lock_waits([&](const LockWait& wait) { return wait.request.transid == transid; },
                    ErrorCode::kTransactionState,
                    commit ? "transaction committed while the operation waited for a lock"
                           : "transaction aborted while the operation waited for a lock");
  // A scan that sees this transaction's writes names its storage transaction, whose id
  // is reused once it ends.
  close_scans([&](const ScanKey& key, const ScanRecord& scan) {
    return key.transid == transid && scan.in_transaction;
  });
  // Out of the map (so nothing below finds it), its entry kept for a later transaction.
  TransactionMap::node_type ended = transactions_.extract(it);
  const std::vector<FragmentTx>& held = ended.mapped().fragments;
  for (const FragmentTx& ftx : held) {
    Fragment* fragment = find_fragment(ftx.table_id, ftx.fragment_id);
    if (fragment == nullptr) continue;  // table dropped: already aborted there
    Status ended = commit ? commit_fragment(fragment, ftx, gci) : fragment->abort(ftx.tx);
    if (ended.ok()) continue;
    DUO_BLOCK_LOG(ERROR) << (commit ? "commit" : "abort") << " of transaction " << transid
                         << " on table " << ftx.table_id << " fragment " << ftx.fragment_id
                         << " failed: " << ended.to_string();
    // Free what the storage transaction holds rather than leak it and its locks.
    if (commit) fragment->abort(ftx.tx).ignore_error();
  }
  if (commit) {
    remember_commit(transid, gci);
    pump_redo();
    maybe_start_lcp();
  }
  for (const FragmentTx& ftx : held) resume_ready(ftx.table_id, ftx.fragment_id);
  if (spare_transactions_.size() < kSpareTransactionsMax) {
    ended.mapped().fragments.clear();
    ended.mapped().api_node = 0;
    ASAN_POISON_MEMORY_REGION(&ended.mapped(), sizeof(Transaction));
    spare_transactions_.push_back(std::move(ended));
  }
  if (!pending_alters_.empty()) run_pending_alters();
}

// ---------------------------------------------------------------------------------------
// Lock waits.

void LocalQueryBlock::park(LqhKeyReq request, storage::OpId op) {
  Fragment* fragment = find_fragment(request.table_id, request.fragment);
  if (lock_wait_count_ >= options_.lock_waits_max) {
    fragment->cancel_wait(op).ignore_error();
    return refuse(request, ErrorCode::kTemporary,
                  "too many lock waits on " + address().to_string());
  }
  uint32_t slot;
  if (!free_wait_slots_.empty()) {
    slot = free_wait_slots_.back();
    free_wait_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(lock_waits_.size());
    lock_waits_.emplace_back();
  }
  LockWait& wait = lock_waits_[slot];
  Status armed = send_delayed(address(), Signal(protocol::kLqhLockTimeout, {slot, wait.generation}),
                              options_.lock_wait_timeout_ms);
  if (!armed.ok()) {
    // Without its timer the wait could last forever: refuse it now instead.
    free_wait_slots_.push_back(slot);
    fragment->cancel_wait(op).ignore_error();
    return refuse(request, ErrorCode::kTemporary, "no timer for a lock wait: " + armed.message());
  }
  wait.in_use = true;
  wait.op = op;
  waits_by_op_[{request.table_id, request.fragment, op}] = slot;
  wait.request = std::move(request);
  ++lock_wait_count_;
}

void LocalQueryBlock::release_wait(uint32_t slot) {
  LockWait& wait = lock_waits_[slot];
  waits_by_op_.erase({wait.request.table_id, wait.request.fragment, wait.op});
  wait.in_use = false;
  ++wait.generation;  // the slot's armed timer is stale from now on
  wait.op = storage::kNullId;
  wait.request = LqhKeyReq{};
  free_wait_slots_.push_back(slot);
  --lock_wait_count_;
}

void LocalQueryBlock::resume_ready(uint32_t table_id, uint32_t fragment_id) {
  Fragment* fragment = find_fragment(table_id, fragment_id);
  if (fragment == nullptr) return;
  // A resumed operation keeps whatever lock it gets until its transaction ends, so
  // resuming wakes nobody; the loop still re-checks in case it does.
  for (std::vector<storage::OpId> ready = fragment->take_ready(); !ready.empty();
       ready = fragment->take_ready()) {
    for (storage::OpId op : ready) {
      auto it = waits_by_op_.find({table_id, fragment_id, op});
      if (it == waits_by_op_.end()) {
        DUO_BLOCK_LOG(ERROR) << "ready operation " << op << " of table " << table_id << " fragment "
                             << fragment_id << " has no wait record";
        fragment->cancel_wait(op).ignore_error();
        continue;
      }
      const uint32_t slot = it->second;
      // A write maintaining unique indexes reads its "before" again: the lock holder
      // it waited for may have changed the row.
      const Table* table = find_table(table_id);
      const LqhKeyReq& waiting = lock_waits_[slot].request;
      const bool indexed = maintains_unique_indexes(*table, waiting);
      AttrValues key;
      TxId tx = storage::kNullId;
      std::optional<AttrValues> before;
      if (indexed) {
        auto body = protocol::OpBody::decode(protocol::as_view(waiting.body));
        if (body.ok()) key = std::move(body->key_or_row);
        tx = find_fragment_tx(waiting.transid, table_id, fragment_id);
        if (waiting.type != OpType::kInsert) before = unique_image(*table, fragment, tx, key);
      }
      AttrValues values;
      OpResult result = fragment->resume(op, &values);
      if (result.waiting) continue;  // parked again: the same record and timer go on
      LqhKeyReq request = std::move(lock_waits_[slot].request);
      release_wait(slot);
      if (indexed) note_index_changes(*table, fragment, tx, key, before, &result, &request);
      conclude(std::move(request), result, values);
    }
  }
}

void LocalQueryBlock::on_lock_timeout(Signal& signal) {
  const uint32_t slot = signal.word(0);
  const uint32_t generation = signal.word(1);
  // Only this block's own timers may end a wait.
  if (signal.sender() != address() || slot >= lock_waits_.size()) {
    return log_malformed(signal, Status(ErrorCode::kInvalidArgument, "not a lock wait timer"));
  }
  LockWait& wait = lock_waits_[slot];
  if (!wait.in_use || wait.generation != generation) return;  // the wait ended earlier
  const uint32_t table_id = wait.request.table_id;
  const uint32_t fragment_id = wait.request.fragment;
  // Waits end (and their slots go stale) before their table is dropped, so the fragment
  // is still here.
  if (Fragment* fragment = find_fragment(table_id, fragment_id)) {
    Status cancelled = fragment->cancel_wait(wait.op);
    if (!cancelled.is(ErrorCode::kLockWaitTimeout)) {
      DUO_BLOCK_LOG(ERROR) << "lock wait of operation " << wait.op
                           << " was not waiting: " << cancelled.to_string();
    }
  }
  const LqhKeyReq request = std::move(wait.request);
  release_wait(slot);
  refuse(request, ErrorCode::kLockWaitTimeout, std::string(kLockWaitTimeoutMessage));
  // Leaving a wait queue can let the waiters behind it go.
  resume_ready(table_id, fragment_id);
}

template <typename Predicate>
void LocalQueryBlock::close_scans(Predicate matches) {
  std::erase_if(scans_, [&](const auto& entry) { return matches(entry.first, *entry.second); });
}

template <typename Predicate>
void LocalQueryBlock::refuse_lock_waits(Predicate matches, ErrorCode error,
                                        std::string_view message) {
  for (uint32_t slot = 0; slot < lock_waits_.size(); ++slot) {
    LockWait& wait = lock_waits_[slot];
    if (!wait.in_use || !matches(wait)) continue;
    if (Fragment* fragment = find_fragment(wait.request.table_id, wait.request.fragment)) {
      fragment->cancel_wait(wait.op).ignore_error();
    }
    const LqhKeyReq request = std::move(wait.request);
    release_wait(slot);
    refuse(request, error, std::string(message));
  }
}

}  // namespace duo::local_query
