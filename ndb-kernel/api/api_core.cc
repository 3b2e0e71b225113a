#include "ndb-kernel/api/api_core.h"

#include <algorithm>
#include <utility>

#include <sanitizer/asan_interface.h>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/packed_signals.h"
#include "storage/scan/byte_codec.h"

namespace duo::api {

using kernel::Signal;
using protocol::Bytes;

namespace {

constexpr const char* kLog = "api";

// An ErrorCode received from a peer: anything out of range is the peer's bug.
ErrorCode error_code_from_wire(uint32_t code) {
  if (code == 0 || code > static_cast<uint32_t>(ErrorCode::kInternal)) return ErrorCode::kInternal;
  return static_cast<ErrorCode>(code);
}

// A Status kept in a record for the caller to look at later (an operation's result, why
// a transaction aborted). Results nobody inspects are normal for a client, so they must
// not trip the debug build's unchecked-error abort.
Status stored(Status status) {
  status.ignore_error();
  return status;
}

Status unknown_transaction(uint64_t api_tx) {
  return Status(ErrorCode::kInvalidArgument, "unknown transaction " + std::to_string(api_tx));
}

}  // namespace

const char* tx_state_name(TxState state) {
  switch (state) {
    case TxState::kOpen:
      return "open";
    case TxState::kExecuting:
      return "executing";
    case TxState::kCommitted:
      return "committed";
    case TxState::kAborted:
      return "aborted";
  }
  return "?";
}

std::string node_failure_message(uint16_t node) {
  // NDB's 4010 "Node failure caused abort of transaction": the client retries.
  return "node failure caused abort of transaction (data node " + std::to_string(node) +
         " disconnected)";
}

std::string commit_outcome_unknown_message(uint16_t node) {
  // NDB 4012-style: the commit was asked for and its coordinator died before
  // answering. The surviving nodes' takeover committed it everywhere or nowhere, and
  // which one cannot be known here: read back before retrying a non-idempotent change.
  return "transaction outcome unknown: data node " + std::to_string(node) +
         " (its coordinator) disconnected during commit; the cluster committed it everywhere "
         "or nowhere (NDB 4012-style)";
}

// ---- Records ----

struct ApiCore::Operation {
  uint32_t table_id = 0;
  uint32_t table_version = 0;
  OpType type = OpType::kRead;
  LockMode lock = LockMode::kCommittedRead;
  uint8_t flags = 0;  // kOpIgnoreError; kOpExecute/kOpCommit are added at execute
  Bytes body;         // encoded OpBody, moved into the TC_KEYREQ when sent
  OpResult result;
};

struct ApiCore::Transaction {
  uint64_t api_tx = 0;
  uint16_t coordinator = 0;
  TxState state = TxState::kOpen;
  Status error;  // why it aborted
  uint32_t commit_gci = 0;  // once committed: the GCI it is durable with
  std::vector<Operation> ops;
  // ops[batch_begin, batch_end) is the batch in flight; ops from batch_end on are
  // defined and not yet sent.
  size_t batch_begin = 0;
  size_t batch_end = 0;
  // The coordinator may hold state for this transaction (an operation or scan was sent):
  // closing it then needs a TC_ROLLBACKREQ.
  bool coordinator_knows = false;
  ExecType executing = ExecType::kNoCommit;
  ExecuteCallback done;
  std::vector<uint32_t> scans;

  // Makes a closed record new again for the next transaction (ApiCore keeps a few,
  // begin()): every field as a new record has it; its operations' read values go to
  // `spare_values` (up to `spare_max`) and the operation list keeps its buffer unless it
  // grew past kKeptCapacity.
  static constexpr size_t kKeptCapacity = 64;
  void reset_for_reuse(std::vector<storage::AttrValues>* spare_values, size_t spare_max) {
    for (Operation& op : ops) {
      if (spare_values->size() >= spare_max) break;
      if (!op.result.values.empty()) spare_values->push_back(std::move(op.result.values));
    }
    std::vector<Operation> kept_ops = std::move(ops);
    std::vector<uint32_t> kept_scans = std::move(scans);
    *this = Transaction{};
    kept_ops.clear();
    kept_scans.clear();
    if (kept_ops.capacity() <= kKeptCapacity) ops = std::move(kept_ops);
    if (kept_scans.capacity() <= kKeptCapacity) scans = std::move(kept_scans);
  }
};

struct ApiCore::Scan {
  uint32_t scan_id = 0;
  uint64_t api_tx = 0;
  uint16_t coordinator = 0;
  ScanCallback ready;
  std::deque<storage::RowBatch> batches;  // of the current round, in arrival order
  size_t next_row = 0;                    // in batches.front()
  bool round_done = false;  // the round's last SCAN_TABCONF came: the next may be asked
  bool all_done = false;
  bool failed = false;
  Status error;
};

struct ApiCore::DictRequest {
  enum class Kind : uint8_t { kCreate, kDrop, kGet, kList, kAlter, kFilegroup, kFilegroupList };
  Kind kind = Kind::kGet;
  uint16_t node = 0;
  TableDef created;           // kCreate / kAlter: completed with id and version from the CONF
  std::string previous_name;  // kAlter: the name the table had (its cache entry goes)
  uint32_t table_id = 0;
  TableCallback table_done;
  StatusCallback status_done;
  TableListCallback list_done;
  FilegroupCallback filegroup_done;
  FilegroupListCallback filegroup_list_done;

  // Completes the request with an error, whatever its kind.
  void fail(const Status& why) {
    why.ignore_error();
    switch (kind) {
      case Kind::kCreate:
      case Kind::kGet:
      case Kind::kAlter:
        table_done(why);
        break;
      case Kind::kDrop:
        status_done(why);
        break;
      case Kind::kList:
        list_done(why);
        break;
      case Kind::kFilegroup:
        filegroup_done(FilegroupOutcome{why, 0, 0, 0, 0});
        break;
      case Kind::kFilegroupList:
        filegroup_list_done(why);
        break;
    }
  }
};

// ---- Construction and links ----

ApiCore::ApiCore(ApiCoreOptions options, protocol::ClusterTopology topology, SignalSink* sink)
    : options_(std::move(options)),
      topology_(std::move(topology)),
      data_nodes_(topology_.data_nodes()),
      sink_(sink) {
  protocol::register_protocol_signal_names();
}

ApiCore::~ApiCore() {
  for (TransactionMap::node_type& spare : spare_transactions_) {
    ASAN_UNPOISON_MEMORY_REGION(spare.mapped().get(), sizeof(Transaction));
  }
}

Status ApiCore::send_to(uint16_t node, uint16_t block, Signal signal) {
  signal.set_sender(address());
  signal.set_receiver(kernel::BlockAddress{node, block, 0});
  return sink_->send(std::move(signal));
}

uint16_t ApiCore::next_node_round_robin() {
  if (connected_.empty()) return 0;
  for (size_t i = 0; i < data_nodes_.size(); ++i) {
    const uint16_t node = data_nodes_[round_robin_++ % data_nodes_.size()];
    if (connected_.count(node) != 0) return node;
  }
  return 0;
}

uint16_t ApiCore::lowest_connected_node() const {
  return connected_.empty() ? 0 : *connected_.begin();
}

void ApiCore::set_node_connected(uint16_t node, bool connected) {
  if (!std::binary_search(data_nodes_.begin(), data_nodes_.end(), node)) return;
  if (connected) {
    if (!connected_.insert(node).second) return;
    if (subscribed_node_ == 0 && options_.schema_events) subscribe_schema_events();
    return;
  }
  if (connected_.erase(node) == 0) return;
  const std::string message = node_failure_message(node);
  std::erase_if(released_, [node](const auto& entry) { return entry.second == node; });

  // Collect first: callbacks may close or begin transactions and scans.
  std::vector<uint64_t> failed_txs;
  for (auto& [id, tx] : transactions_) {
    if (tx->coordinator != node) continue;
    if (tx->state == TxState::kOpen && !tx->coordinator_knows) {
      // Nothing reached the dead node yet: the transaction just moves.
      tx->coordinator = next_node_round_robin();
      continue;
    }
    if (tx->state == TxState::kOpen || tx->state == TxState::kExecuting) failed_txs.push_back(id);
  }
  std::vector<uint32_t> failed_scans;
  for (auto& [id, scan] : scans_) {
    if (scan->coordinator == node && !scan->failed && !scan->all_done) failed_scans.push_back(id);
  }
  std::vector<uint32_t> failed_requests;
  for (auto& [id, request] : dict_requests_) {
    if (request->node == node) failed_requests.push_back(id);
  }

  for (uint64_t id : failed_txs) {
    auto it = transactions_.find(id);
    if (it == transactions_.end()) continue;
    Transaction& tx = *it->second;
    // The coordinator died with the transaction: nothing to roll back at it.
    tx.coordinator_knows = false;
    if (tx.state == TxState::kExecuting && tx.executing == ExecType::kCommit) {
      finish_execute(tx, Status(ErrorCode::kTemporary, commit_outcome_unknown_message(node)),
                     false);
    } else if (tx.state == TxState::kExecuting) {
      finish_execute(tx, Status(ErrorCode::kTemporary, message), false);
    } else {
      abort_transaction(tx, Status(ErrorCode::kTemporary, message));
    }
  }
  for (uint32_t id : failed_scans) {
    auto it = scans_.find(id);
    if (it == scans_.end()) continue;
    fail_scan(*it->second, Status(ErrorCode::kTemporary, message));
    ScanCallback ready = it->second->ready;
    if (ready) ready(id);
  }
  for (auto& [id, request] : dbinfo_requests_) {
    std::erase_if(request.awaiting, [node](const auto& part) { return part.first == node; });
  }
  finish_dbinfo_requests();
  for (uint32_t id : failed_requests) {
    auto it = dict_requests_.find(id);
    if (it == dict_requests_.end()) continue;
    std::unique_ptr<DictRequest> request = std::move(it->second);
    dict_requests_.erase(it);
    request->fail(Status(ErrorCode::kTemporary, message));
  }
  if (subscribed_node_ == node) {
    subscribed_node_ = 0;
    if (options_.schema_events) subscribe_schema_events();
  }
}

// ---- Signals ----

bool ApiCore::on_signal(Signal& signal) {
  switch (signal.id()) {
    case protocol::kTcKeyConf:
      return on_tc_key_conf(signal);
    case protocol::kScanTabConf:
      return on_scan_tab_conf(signal);
    case protocol::kScanTabRef:
      on_scan_tab_ref(signal);
      return true;
    case protocol::kCreateTableConf:
    case protocol::kCreateTableRef:
    case protocol::kDropTableConf:
    case protocol::kDropTableRef:
    case protocol::kGetTableConf:
    case protocol::kGetTableRef:
    case protocol::kListTablesConf:
    case protocol::kFilegroupConf:
    case protocol::kFilegroupRef:
    case protocol::kListFilegroupsConf:
    case protocol::kAlterTableConf:
    case protocol::kAlterTableRef:
      on_dict_answer(signal);
      return true;
    case protocol::kSchemaEvent:
      on_schema_event(signal);
      return true;
    case protocol::kDbinfoScanConf:
      on_dbinfo_scan_conf(signal);
      return true;
    case protocol::kNodeFailRep:
      // A data node told us the cluster declared a data node dead: its link may still
      // be up (a frozen process), but it coordinates nothing any more. It is used
      // again only after its link went down and came back (a restart).
      set_node_connected(static_cast<uint16_t>(signal.word(0)), false);
      return true;
    case protocol::kPackedSignals: {
      Result<std::vector<Signal>> inner = protocol::unpack_signals(signal);
      if (!inner.ok()) {
        ++stats_.malformed_signals;
        DUO_LOG(WARNING, kLog) << "API node " << options_.node_id << ": "
                               << inner.status().message();
        return false;
      }
      bool progressed = false;
      for (Signal& one : *inner) progressed |= on_signal(one);
      return progressed;
    }
    default:
      ++stats_.malformed_signals;
      DUO_LOG(WARNING, kLog) << "API node " << options_.node_id << ": unexpected signal "
                             << signal.describe();
      return false;
  }
}

// ---- Dictionary ----

Status ApiCore::start_dict_request(uint16_t node, Signal signal, DictRequest request) {
  if (node == 0) return Status(ErrorCode::kTemporary, "no data node connected");
  if (dict_requests_.size() >= options_.dictionary_requests_max) {
    return Status(ErrorCode::kTemporary, "too many dictionary requests in flight (max " +
                                             std::to_string(options_.dictionary_requests_max) +
                                             ")");
  }
  const uint32_t request_id = next_request_id_++;
  signal.set_word(0, request_id);
  request.node = node;
  DUO_RETURN_IF_ERROR(send_to(node, protocol::kDictionaryBlock, std::move(signal)));
  dict_requests_[request_id] = std::make_unique<DictRequest>(std::move(request));
  return Status::OK();
}

Status ApiCore::create_table(TableDef table, TableCallback done) {
  if (table.fragment_count == 0) table.fragment_count = topology_.default_fragment_count();
  DUO_RETURN_IF_ERROR(table.schema.validate());
  protocol::TableMsg message;
  message.table = table;
  DUO_ASSIGN_OR_RETURN(Signal signal, message.to_signal(protocol::kCreateTableReq));
  DictRequest request;
  request.kind = DictRequest::Kind::kCreate;
  request.created = std::move(table);
  request.table_done = std::move(done);
  return start_dict_request(lowest_connected_node(), std::move(signal), std::move(request));
}

Status ApiCore::drop_table(uint32_t table_id, StatusCallback done) {
  protocol::DictMsg message;
  message.a = table_id;
  DictRequest request;
  request.kind = DictRequest::Kind::kDrop;
  request.table_id = table_id;
  request.status_done = std::move(done);
  return start_dict_request(lowest_connected_node(), message.to_signal(protocol::kDropTableReq),
                            std::move(request));
}

Status ApiCore::alter_table(TableDef table, TableCallback done) {
  DUO_RETURN_IF_ERROR(table.schema.validate());
  protocol::TableMsg message;
  message.table = table;
  DUO_ASSIGN_OR_RETURN(Signal signal, message.to_signal(protocol::kAlterTableReq));
  DictRequest request;
  request.kind = DictRequest::Kind::kAlter;
  request.table_id = table.schema.table_id;
  for (const auto& [name, cached] : table_cache_) {
    if (cached->schema.table_id == table.schema.table_id) request.previous_name = name;
  }
  request.created = std::move(table);
  request.table_done = std::move(done);
  return start_dict_request(lowest_connected_node(), std::move(signal), std::move(request));
}

Status ApiCore::get_table(const std::string& name, TableCallback done) {
  if (TablePtr cached = cached_table(name)) {
    ++stats_.cache_hits;
    done(std::move(cached));
    return Status::OK();
  }
  ++stats_.cache_misses;
  protocol::DictMsg message;
  message.text = name;
  DictRequest request;
  request.kind = DictRequest::Kind::kGet;
  request.table_done = std::move(done);
  return start_dict_request(next_node_round_robin(), message.to_signal(protocol::kGetTableReq),
                            std::move(request));
}

TablePtr ApiCore::cached_table(const std::string& name) const {
  auto it = table_cache_.find(name);
  return it == table_cache_.end() ? nullptr : it->second;
}

Status ApiCore::list_tables(TableListCallback done) {
  DictRequest request;
  request.kind = DictRequest::Kind::kList;
  request.list_done = std::move(done);
  return start_dict_request(next_node_round_robin(),
                            protocol::DictMsg{}.to_signal(protocol::kListTablesReq),
                            std::move(request));
}

Status ApiCore::change_filegroup(protocol::FilegroupChange change, FilegroupCallback done) {
  DUO_ASSIGN_OR_RETURN(Signal signal, change.to_signal(protocol::kFilegroupReq, 0));
  DictRequest request;
  request.kind = DictRequest::Kind::kFilegroup;
  request.filegroup_done = std::move(done);
  return start_dict_request(lowest_connected_node(), std::move(signal), std::move(request));
}

Status ApiCore::list_filegroups(FilegroupListCallback done) {
  DictRequest request;
  request.kind = DictRequest::Kind::kFilegroupList;
  request.filegroup_list_done = std::move(done);
  return start_dict_request(next_node_round_robin(), Signal(protocol::kListFilegroupsReq, {0}),
                            std::move(request));
}

Status ApiCore::dbinfo_operations(DbinfoOperationsCallback done) {
  if (connected_.empty()) return Status(ErrorCode::kTemporary, "no data node connected");
  const uint32_t id = next_request_id_++;
  DbinfoRequest& request = dbinfo_requests_[id];
  request.done = std::move(done);
  for (uint16_t node : connected_) {
    for (uint16_t part = 0; part < topology_.log_parts; ++part) {
      Signal signal(protocol::kDbinfoScanReq, {id, protocol::kDbinfoOperations});
      signal.set_sender(address());
      signal.set_receiver(kernel::BlockAddress{node, protocol::kLocalQueryBlock, part});
      // An instance that cannot be asked is simply not in the answer.
      if (sink_->send(std::move(signal)).ok()) request.awaiting.emplace(node, part);
    }
  }
  finish_dbinfo_requests();
  return Status::OK();
}

void ApiCore::on_dbinfo_scan_conf(const Signal& signal) {
  auto it = dbinfo_requests_.find(signal.word(0));
  const std::pair<uint16_t, uint16_t> from{signal.sender().node_id, signal.sender().instance};
  if (it == dbinfo_requests_.end() || it->second.awaiting.erase(from) == 0) {
    ++stats_.stray_signals;
    return;
  }
  std::vector<protocol::DbinfoOperation> rows;
  if (!protocol::decode_dbinfo_operations(protocol::as_view(signal.section()), &rows)) {
    ++stats_.malformed_signals;
  }
  for (protocol::DbinfoOperation& row : rows) {
    row.node_id = from.first;
    row.block_instance = from.second;
    it->second.rows.push_back(row);
  }
  finish_dbinfo_requests();
}

void ApiCore::finish_dbinfo_requests() {
  for (auto it = dbinfo_requests_.begin(); it != dbinfo_requests_.end();) {
    if (!it->second.awaiting.empty()) {
      ++it;
      continue;
    }
    DbinfoRequest request = std::move(it->second);
    it = dbinfo_requests_.erase(it);
    request.done(std::move(request.rows));
  }
}

void ApiCore::on_dict_answer(Signal& signal) {
  auto it = dict_requests_.find(signal.word(0));
  if (it == dict_requests_.end()) {
    ++stats_.stray_signals;
    return;
  }
  using Kind = DictRequest::Kind;
  const Kind kind = it->second->kind;
  const bool matches =
      ((signal.id() == protocol::kCreateTableConf || signal.id() == protocol::kCreateTableRef) &&
       kind == Kind::kCreate) ||
      ((signal.id() == protocol::kDropTableConf || signal.id() == protocol::kDropTableRef) &&
       kind == Kind::kDrop) ||
      ((signal.id() == protocol::kGetTableConf || signal.id() == protocol::kGetTableRef) &&
       kind == Kind::kGet) ||
      ((signal.id() == protocol::kAlterTableConf || signal.id() == protocol::kAlterTableRef) &&
       kind == Kind::kAlter) ||
      (signal.id() == protocol::kListTablesConf && kind == Kind::kList) ||
      ((signal.id() == protocol::kFilegroupConf || signal.id() == protocol::kFilegroupRef) &&
       kind == Kind::kFilegroup) ||
      (signal.id() == protocol::kListFilegroupsConf && kind == Kind::kFilegroupList);
  if (!matches) {
    ++stats_.malformed_signals;
    DUO_LOG(WARNING, kLog) << "API node " << options_.node_id << ": dictionary answer "
                           << signal.describe() << " does not match its request";
    return;
  }
  // Unlink before the callback: it may start new requests.
  std::unique_ptr<DictRequest> request = std::move(it->second);
  dict_requests_.erase(it);

  switch (signal.id()) {
    case protocol::kCreateTableRef:
    case protocol::kDropTableRef:
    case protocol::kGetTableRef:
    case protocol::kAlterTableRef: {
      const protocol::DictMsg ref = protocol::DictMsg::from_signal(signal);
      request->fail(Status(error_code_from_wire(ref.a), ref.text));
      return;
    }
    case protocol::kCreateTableConf: {
      const protocol::DictMsg conf = protocol::DictMsg::from_signal(signal);
      request->created.schema.table_id = conf.a;
      request->created.version = conf.b;
      request->table_done(std::make_shared<const TableDef>(std::move(request->created)));
      return;
    }
    case protocol::kAlterTableConf: {
      // The schema event may come later than this answer: forget the old definition
      // now, so this client's next statement sees its own change.
      const protocol::DictMsg conf = protocol::DictMsg::from_signal(signal);
      forget_table(request->table_id, request->previous_name);
      request->created.version = conf.b;
      request->table_done(std::make_shared<const TableDef>(std::move(request->created)));
      return;
    }
    case protocol::kDropTableConf:
      forget_table(request->table_id, "");
      request->status_done(Status::OK());
      return;
    case protocol::kGetTableConf: {
      Result<protocol::TableMsg> message = protocol::TableMsg::from_signal(signal);
      if (!message.ok()) {
        ++stats_.malformed_signals;
        request->fail(message.status());
        return;
      }
      auto table = std::make_shared<const TableDef>(std::move(message->table));
      // Only a subscribed API node learns of changes, so only then may it cache.
      if (subscribed_node_ != 0) table_cache_[table->schema.name] = table;
      request->table_done(std::move(table));
      return;
    }
    case protocol::kFilegroupConf:
    case protocol::kFilegroupRef: {
      const protocol::DictMsg msg = protocol::DictMsg::from_signal(signal);
      FilegroupOutcome outcome;
      if (signal.id() == protocol::kFilegroupConf) {
        outcome.filegroup_id = msg.a;
        outcome.version = msg.b;
      } else {
        outcome.status = Status(error_code_from_wire(msg.a), msg.text);
        outcome.ndb_error = msg.b;
        outcome.detail = msg.c;
      }
      request->filegroup_done(std::move(outcome));
      return;
    }
    case protocol::kListFilegroupsConf: {
      Result<std::vector<protocol::FilegroupDef>> list =
          protocol::decode_filegroup_list(protocol::as_view(signal.section()));
      if (!list.ok()) ++stats_.malformed_signals;
      request->filegroup_list_done(std::move(list));
      return;
    }
    case protocol::kListTablesConf: {
      Result<std::vector<protocol::TableListEntry>> tables = protocol::decode_table_list(signal);
      if (!tables.ok()) ++stats_.malformed_signals;
      request->list_done(std::move(tables));
      return;
    }
    default:
      return;
  }
}

void ApiCore::subscribe_schema_events() {
  const uint16_t node = lowest_connected_node();
  if (node == 0) return;
  // Events sent while nobody listened are lost: start from an empty cache.
  table_cache_.clear();
  protocol::DictMsg message;
  message.a = options_.node_id;
  Status sent =
      send_to(node, protocol::kDictionaryBlock, message.to_signal(protocol::kSubscribeSchemaReq));
  if (!sent.ok()) {
    DUO_LOG(WARNING, kLog) << "API node " << options_.node_id
                           << ": cannot subscribe to schema events at data node " << node << ": "
                           << sent.message();
    return;
  }
  subscribed_node_ = node;
}

void ApiCore::on_schema_event(const Signal& signal) {
  // a = table id, b = new version, c = kSchemaCreate / kSchemaDrop, text = table name.
  const protocol::DictMsg event = protocol::DictMsg::from_signal(signal);
  forget_table(event.a, event.text);
}

void ApiCore::forget_table(uint32_t table_id, const std::string& name) {
  for (auto it = table_cache_.begin(); it != table_cache_.end();) {
    if (it->first == name || it->second->schema.table_id == table_id) {
      it = table_cache_.erase(it);
    } else {
      ++it;
    }
  }
}

// ---- Transactions ----

Result<uint64_t> ApiCore::begin(const TableDef* hint_table, const storage::AttrValues* hint_key) {
  if (transactions_.size() >= options_.transactions_open_max) {
    return Status(ErrorCode::kTemporary, "too many open transactions (max " +
                                             std::to_string(options_.transactions_open_max) + ")");
  }
  uint16_t coordinator = 0;
  if (hint_table != nullptr && hint_key != nullptr && hint_table->fragment_count != 0) {
    DUO_ASSIGN_OR_RETURN(uint32_t hash, protocol::distribution_hash(hint_table->schema, *hint_key));
    // The fragment's primary among the connected nodes (a dead primary's backup took
    // over; a node not connected cannot coordinate anyway).
    std::vector<uint16_t> unreachable;
    for (uint16_t node : data_nodes_) {
      if (!node_connected(node)) unreachable.push_back(node);
    }
    const protocol::FragmentPlacement placement = protocol::place_fragment_live(
        topology_, hash % hint_table->fragment_count, hint_table->fragment_count, unreachable);
    if (!placement.replicas.empty()) {
      // A read-backup table is read at the coordinator's own replica, so any replica
      // will do: the key's hash picks one (spreading reads over the node group, the same
      // key always at the same node). Writes go to the primary from any coordinator.
      const bool any_replica = (hint_table->flags & protocol::kTableReadBackup) != 0;
      const size_t pick =
          any_replica ? (hash / hint_table->fragment_count) % placement.replicas.size() : 0;
      coordinator = placement.replicas[pick];
    }
  }
  if (coordinator == 0) coordinator = next_node_round_robin();
  if (coordinator == 0) return Status(ErrorCode::kTemporary, "no data node connected");
  std::atomic<uint64_t>& counter =
      options_.api_tx_counter != nullptr ? *options_.api_tx_counter : own_api_tx_counter_;
  const uint64_t sequence = counter.fetch_add(1, std::memory_order_relaxed) + 1;
  const uint64_t id = (uint64_t{options_.node_id} << 48) | (sequence & 0xFFFFFFFFFFFFull);
  Transaction* tx = nullptr;
  if (spare_transactions_.empty()) {
    auto created = std::make_unique<Transaction>();
    tx = created.get();
    transactions_[id] = std::move(created);
  } else {
    // A closed transaction's record and map entry, reused (close()).
    TransactionMap::node_type spare = std::move(spare_transactions_.back());
    spare_transactions_.pop_back();
    tx = spare.mapped().get();
    ASAN_UNPOISON_MEMORY_REGION(tx, sizeof(Transaction));
    spare.key() = id;
    transactions_.insert(std::move(spare));
  }
  tx->api_tx = id;
  tx->coordinator = coordinator;
  ++stats_.transactions_begun;
  return id;
}

Result<uint16_t> ApiCore::coordinator_of(uint64_t api_tx) const {
  auto it = transactions_.find(api_tx);
  if (it == transactions_.end()) return unknown_transaction(api_tx);
  return it->second->coordinator;
}

Result<uint32_t> ApiCore::define(uint64_t api_tx, const TableDef& table, OpType type, LockMode lock,
                                 protocol::OpBody body, OpOptions options) {
  auto it = transactions_.find(api_tx);
  if (it == transactions_.end()) return unknown_transaction(api_tx);
  Transaction& tx = *it->second;
  if (tx.state != TxState::kOpen) {
    return Status(
        ErrorCode::kTransactionState,
        std::string("cannot define an operation: transaction is ") + tx_state_name(tx.state));
  }
  if (tx.ops.size() >= options_.operations_per_transaction_max) {
    return Status(ErrorCode::kTemporary,
                  "too many operations in one transaction (max " +
                      std::to_string(options_.operations_per_transaction_max) + ")");
  }
  Operation op;
  op.table_id = table.schema.table_id;
  op.table_version = table.version;
  op.type = type;
  op.lock = lock;
  op.flags = options.ignore_error ? protocol::kOpIgnoreError : 0;
  DUO_RETURN_IF_ERROR(body.encode(&op.body));
  tx.ops.push_back(std::move(op));
  return static_cast<uint32_t>(tx.ops.size() - 1);
}

Result<uint32_t> ApiCore::read(uint64_t api_tx, const TableDef& table, storage::AttrValues key,
                               std::vector<uint16_t> columns, LockMode lock, OpOptions options) {
  protocol::OpBody body;
  body.key_or_row = std::move(key);
  body.columns = std::move(columns);
  return define(api_tx, table, OpType::kRead, lock, std::move(body), options);
}

Result<uint32_t> ApiCore::insert(uint64_t api_tx, const TableDef& table, storage::AttrValues row,
                                 OpOptions options) {
  protocol::OpBody body;
  body.key_or_row = std::move(row);
  return define(api_tx, table, OpType::kInsert, LockMode::kExclusive, std::move(body), options);
}

Result<uint32_t> ApiCore::update(uint64_t api_tx, const TableDef& table, storage::AttrValues key,
                                 storage::AttrValues values, OpOptions options) {
  protocol::OpBody body;
  body.key_or_row = std::move(key);
  body.values = std::move(values);
  return define(api_tx, table, OpType::kUpdate, LockMode::kExclusive, std::move(body), options);
}

Result<uint32_t> ApiCore::write(uint64_t api_tx, const TableDef& table, storage::AttrValues row,
                                OpOptions options) {
  protocol::OpBody body;
  body.key_or_row = std::move(row);
  return define(api_tx, table, OpType::kWrite, LockMode::kExclusive, std::move(body), options);
}

Result<uint32_t> ApiCore::remove(uint64_t api_tx, const TableDef& table, storage::AttrValues key,
                                 OpOptions options) {
  protocol::OpBody body;
  body.key_or_row = std::move(key);
  return define(api_tx, table, OpType::kDelete, LockMode::kExclusive, std::move(body), options);
}

Result<uint32_t> ApiCore::interpreted_update(uint64_t api_tx, const TableDef& table,
                                             storage::AttrValues key,
                                             const storage::InterpretedUpdate& program,
                                             OpOptions options) {
  DUO_RETURN_IF_ERROR(program.validate(table.schema));
  protocol::OpBody body;
  body.key_or_row = std::move(key);
  body.program = program.encode();
  return define(api_tx, table, OpType::kInterpretedUpdate, LockMode::kExclusive, std::move(body),
                options);
}

Status ApiCore::execute(uint64_t api_tx, ExecType type, ExecuteCallback done) {
  auto it = transactions_.find(api_tx);
  if (it == transactions_.end()) return unknown_transaction(api_tx);
  Transaction& tx = *it->second;
  if (tx.state != TxState::kOpen) {
    return Status(ErrorCode::kTransactionState,
                  std::string("cannot execute: transaction is ") + tx_state_name(tx.state));
  }
  if (!tx.coordinator_knows && !node_connected(tx.coordinator)) {
    // Nothing reached the chosen coordinator yet: any connected node will do.
    tx.coordinator = next_node_round_robin();
  }
  const size_t first = tx.batch_end;
  const size_t end = tx.ops.size();
  if (tx.coordinator == 0 && first != end) {
    return Status(ErrorCode::kTemporary, "no data node connected");
  }

  if (type == ExecType::kRollback) {
    for (size_t i = first; i < end; ++i) {
      tx.ops[i].result.status =
          stored(Status(ErrorCode::kTransactionState, "operation dropped by rollback"));
    }
    tx.batch_begin = tx.batch_end = end;
    if (!tx.coordinator_knows) {
      tx.state = TxState::kAborted;
      ++stats_.transactions_aborted;
      done(api_tx, Status::OK());
      return Status::OK();
    }
    Status sent = send_to(tx.coordinator, protocol::kCoordinatorBlock,
                          protocol::api_transaction_signal(protocol::kTcRollbackReq, api_tx));
    if (!sent.ok()) {
      abort_transaction(tx, sent);
      return sent;
    }
    tx.state = TxState::kExecuting;
    tx.executing = type;
    tx.done = std::move(done);
    return Status::OK();
  }

  if (first == end) {
    // Nothing new to run.
    const bool only_committed_reads =
        std::all_of(tx.ops.begin(), tx.ops.end(), [](const Operation& op) {
          return op.type == OpType::kRead && op.lock == LockMode::kCommittedRead;
        });
    if (type == ExecType::kCommit && tx.coordinator_knows && only_committed_reads) {
      // Committed reads took no locks and wrote nothing: the commit cannot fail and
      // changes nothing, so the client need not wait for it (one round trip less for an
      // autocommit read). The coordinator still gets the TC_COMMITREQ, which releases
      // its record of the transaction; its answer is dropped.
      Status sent = send_to(tx.coordinator, protocol::kCoordinatorBlock,
                            protocol::api_transaction_signal(protocol::kTcCommitReq, api_tx));
      if (sent.ok()) {
        note_released(api_tx, tx.coordinator);
        tx.coordinator_knows = false;
        tx.state = TxState::kCommitted;
        ++stats_.transactions_committed;
        done(api_tx, Status::OK());
        return Status::OK();
      }
      // Not sent: the wait below reports the same failure.
    }
    if (type == ExecType::kNoCommit || !tx.coordinator_knows) {
      if (type == ExecType::kCommit) {
        tx.state = TxState::kCommitted;
        ++stats_.transactions_committed;
      }
      done(api_tx, Status::OK());
      return Status::OK();
    }
    Status sent = send_to(tx.coordinator, protocol::kCoordinatorBlock,
                          protocol::api_transaction_signal(protocol::kTcCommitReq, api_tx));
    if (!sent.ok()) {
      abort_transaction(tx, sent);
      return sent;
    }
    tx.state = TxState::kExecuting;
    tx.executing = type;
    tx.done = std::move(done);
    return Status::OK();
  }

  // The batch travels as PACKED_SIGNALS of TC_KEYREQs (each pack within the section
  // limit; a pack of one goes as the plain TC_KEYREQ): one frame and one delivery at the
  // coordinator per pack instead of per operation. A batch of one (most of them) needs
  // no list.
  std::vector<Signal> pack;
  if (end - first > 1) pack.reserve(end - first);
  size_t pack_bytes = 0;
  auto send_pack = [&]() -> Status {
    Signal out = pack.size() == 1 ? std::move(pack.front()) : protocol::pack_signals(pack);
    const size_t operations = pack.size();
    pack.clear();
    pack_bytes = 0;
    DUO_RETURN_IF_ERROR(send_to(tx.coordinator, protocol::kCoordinatorBlock, std::move(out)));
    tx.coordinator_knows = true;
    stats_.operations_sent += operations;
    return Status::OK();
  };
  for (size_t i = first; i < end; ++i) {
    Operation& op = tx.ops[i];
    protocol::TcKeyReq req;
    req.api_tx = api_tx;
    req.op_index = static_cast<uint32_t>(i);
    req.table_id = op.table_id;
    req.table_version = op.table_version;
    req.type = op.type;
    req.lock = op.lock;
    req.flags = op.flags;
    if (i + 1 == end) {
      req.flags |= protocol::kOpExecute;
      if (type == ExecType::kCommit) req.flags |= protocol::kOpCommit;
    }
    req.body = std::move(op.body);
    Signal signal = std::move(req).to_signal();
    Status sent = Status::OK();
    if (end - first == 1) {
      sent = send_to(tx.coordinator, protocol::kCoordinatorBlock, std::move(signal));
      if (sent.ok()) {
        tx.coordinator_knows = true;
        ++stats_.operations_sent;
      }
    } else {
      if (!pack.empty() && pack_bytes + protocol::packed_size(signal) > kernel::kSectionBytesMax) {
        sent = send_pack();
      }
      if (sent.ok()) {
        pack_bytes += protocol::packed_size(signal);
        pack.push_back(std::move(signal));
        if (i + 1 == end) sent = send_pack();
      }
    }
    if (!sent.ok()) {
      // The coordinator may hold a partial batch it will never execute: tell it to drop it.
      tx.batch_begin = first;
      tx.batch_end = end;
      abort_transaction(tx, sent);
      return sent;
    }
  }
  tx.batch_begin = first;
  tx.batch_end = end;
  tx.state = TxState::kExecuting;
  tx.executing = type;
  tx.done = std::move(done);
  ++stats_.batches_executed;
  return Status::OK();
}

void ApiCore::abort_transaction(Transaction& tx, Status why) {
  why.ignore_error();
  if (tx.coordinator_knows) {
    // Best effort: if this fails too, the coordinator's own timeout aborts it.
    Status sent = send_to(tx.coordinator, protocol::kCoordinatorBlock,
                          protocol::api_transaction_signal(protocol::kTcRollbackReq, tx.api_tx));
    sent.ignore_error();
    tx.coordinator_knows = false;
  }
  for (size_t i = tx.batch_begin; i < tx.ops.size(); ++i) {
    if (!tx.ops[i].result.executed) tx.ops[i].result.status = why;
  }
  tx.state = TxState::kAborted;
  tx.error = std::move(why);
  tx.done = nullptr;
  ++stats_.transactions_aborted;
}

bool ApiCore::on_tc_key_conf(Signal& signal) {
  if (Status decoded = protocol::TcKeyConfView::parse_into(signal, &conf_view_); !decoded.ok()) {
    ++stats_.malformed_signals;
    DUO_LOG(WARNING, kLog) << "API node " << options_.node_id << ": " << decoded.message();
    return false;
  }
  // Read only before finish_execute(): its callback may get here again.
  const protocol::TcKeyConfView& conf = conf_view_;
  if (take_released(conf.api_tx)) return false;  // a released read-only transaction
  auto it = transactions_.find(conf.api_tx);
  if (it == transactions_.end() || it->second->state != TxState::kExecuting) {
    ++stats_.stray_signals;
    return false;
  }
  Transaction& tx = *it->second;
  for (const protocol::TcKeyConfView::OpResult& result : conf.results) {
    if (result.op_index < tx.batch_begin || result.op_index >= tx.batch_end) {
      ++stats_.malformed_signals;
      DUO_LOG(WARNING, kLog) << "API node " << options_.node_id << ": result for operation "
                             << result.op_index << " outside the batch of transaction "
                             << conf.api_tx;
      continue;
    }
    OpResult& out = tx.ops[result.op_index].result;
    out.executed = true;
    out.filtered = (result.flags & protocol::kConfFiltered) != 0;
    if (result.error != ErrorCode::kOk) {
      out.status = stored(Status(result.error, result.data));
      continue;
    }
    out.status = Status::OK();
    if (!result.data.empty()) {
      storage::scan_codec::ByteReader in(result.data);
      if (!spare_values_.empty()) {
        // Buffers of a closed transaction's read values, grown already.
        out.values = std::move(spare_values_.back());
        spare_values_.pop_back();
      }
      out.values.clear();
      if (!protocol::decode_attr_values(&in, &out.values) || !in.done()) {
        ++stats_.malformed_signals;
        out.status =
            stored(Status(ErrorCode::kInternal, "malformed row values from the coordinator"));
      }
    }
  }
  if ((conf.flags & protocol::kTcBatchDone) == 0) return false;  // the rest of the batch follows

  if ((conf.flags & protocol::kTcAborted) != 0) {
    Status why;
    if (conf.tx_error != ErrorCode::kOk) {
      why = Status(conf.tx_error, conf.tx_message);
    } else if (tx.executing != ExecType::kRollback) {
      why = Status(ErrorCode::kInternal, "transaction aborted by the coordinator without a reason");
    }
    finish_execute(tx, std::move(why), false);
    return true;
  }
  if (tx.executing == ExecType::kCommit && (conf.flags & protocol::kTcCommitted) == 0) {
    finish_execute(
        tx, Status(ErrorCode::kInternal, "coordinator ended a commit without committing"), false);
    return true;
  }
  if ((conf.flags & protocol::kTcCommitted) != 0) tx.commit_gci = conf.gci;
  finish_execute(tx, Status::OK(), (conf.flags & protocol::kTcCommitted) != 0);
  return true;
}

void ApiCore::finish_execute(Transaction& tx, Status status, bool committed) {
  const bool aborted = !status.ok() || tx.executing == ExecType::kRollback;
  for (size_t i = tx.batch_begin; i < tx.batch_end; ++i) {
    OpResult& result = tx.ops[i].result;
    if (result.executed) continue;
    if (!aborted) {
      result.status = stored(Status(ErrorCode::kInternal, "coordinator sent no result"));
    } else if (status.ok()) {
      result.status = stored(Status(ErrorCode::kTransactionState, "operation dropped by rollback"));
    } else {
      result.status = stored(status);
    }
  }
  if (aborted) {
    tx.state = TxState::kAborted;
    tx.error = status;
    tx.coordinator_knows = false;
    ++stats_.transactions_aborted;
  } else if (committed) {
    tx.state = TxState::kCommitted;
    tx.coordinator_knows = false;
    ++stats_.transactions_committed;
  } else {
    tx.state = TxState::kOpen;
  }
  ExecuteCallback done = std::move(tx.done);
  tx.done = nullptr;
  // Last: the callback may close the transaction.
  if (done) done(tx.api_tx, status);
}

Result<TxState> ApiCore::state(uint64_t api_tx) const {
  auto it = transactions_.find(api_tx);
  if (it == transactions_.end()) return unknown_transaction(api_tx);
  return it->second->state;
}

Result<uint32_t> ApiCore::commit_gci(uint64_t api_tx) const {
  auto it = transactions_.find(api_tx);
  if (it == transactions_.end()) return unknown_transaction(api_tx);
  return it->second->commit_gci;
}

Status ApiCore::error(uint64_t api_tx) const {
  auto it = transactions_.find(api_tx);
  if (it == transactions_.end()) return unknown_transaction(api_tx);
  return it->second->error;
}

Result<const OpResult*> ApiCore::op_result(uint64_t api_tx, uint32_t op_index) const {
  auto it = transactions_.find(api_tx);
  if (it == transactions_.end()) return unknown_transaction(api_tx);
  if (op_index >= it->second->ops.size()) {
    return Status(ErrorCode::kInvalidArgument, "no operation " + std::to_string(op_index));
  }
  return &it->second->ops[op_index].result;
}

size_t ApiCore::operation_count(uint64_t api_tx) const {
  auto it = transactions_.find(api_tx);
  return it == transactions_.end() ? 0 : it->second->ops.size();
}

void ApiCore::close(uint64_t api_tx) {
  auto it = transactions_.find(api_tx);
  if (it == transactions_.end()) return;
  // Out of the map first (close_scan and send_to must not find it); the record is kept
  // for a later begin() once done with, or freed with the entry.
  TransactionMap::node_type closed = transactions_.extract(it);
  Transaction* tx = closed.mapped().get();
  for (uint32_t scan_id : tx->scans) close_scan(scan_id);
  if (tx->coordinator_knows && (tx->state == TxState::kOpen || tx->state == TxState::kExecuting)) {
    Status sent = send_to(tx->coordinator, protocol::kCoordinatorBlock,
                          protocol::api_transaction_signal(protocol::kTcRollbackReq, api_tx));
    // Best effort: a coordinator that does not hear it times the transaction out.
    sent.ignore_error();
  }
  if (spare_transactions_.size() < kSpareRecordsMax) {
    tx->reset_for_reuse(&spare_values_, kSpareRecordsMax);
    // Poisoned while kept, so that under AddressSanitizer a stale OpResult pointer of the
    // closed transaction is still reported as a use after free.
    ASAN_POISON_MEMORY_REGION(tx, sizeof(Transaction));
    spare_transactions_.push_back(std::move(closed));
  }
}

void ApiCore::note_released(uint64_t api_tx, uint16_t coordinator) {
  if (spare_released_.empty()) {
    released_[api_tx] = coordinator;
    return;
  }
  ReleasedMap::node_type entry = std::move(spare_released_.back());
  spare_released_.pop_back();
  entry.key() = api_tx;
  entry.mapped() = coordinator;
  released_.insert(std::move(entry));
}

bool ApiCore::take_released(uint64_t api_tx) {
  ReleasedMap::node_type entry = released_.extract(api_tx);
  if (entry.empty()) return false;
  if (spare_released_.size() < kSpareRecordsMax) spare_released_.push_back(std::move(entry));
  return true;
}

// ---- Scans ----

Result<uint32_t> ApiCore::scan(uint64_t api_tx, const TableDef& table, const ScanSpec& spec,
                               ScanCallback ready) {
  auto it = transactions_.find(api_tx);
  if (it == transactions_.end()) return unknown_transaction(api_tx);
  Transaction& tx = *it->second;
  if (tx.state != TxState::kOpen) {
    return Status(ErrorCode::kTransactionState,
                  std::string("cannot scan: transaction is ") + tx_state_name(tx.state));
  }
  if (scans_.size() >= options_.scans_open_max) {
    return Status(ErrorCode::kTemporary,
                  "too many open scans (max " + std::to_string(options_.scans_open_max) + ")");
  }
  protocol::ScanBody body;
  body.filter = spec.filter;
  body.columns = spec.columns;
  body.low = spec.low;
  body.high = spec.high;
  protocol::ScanTabReq req;
  req.api_tx = api_tx;
  req.scan_id = next_scan_id_++;
  req.table_id = table.schema.table_id;
  req.table_version = table.version;
  req.index = spec.index;
  req.flags = (spec.descending ? protocol::kScanDescending : 0) |
              (spec.low_inclusive ? protocol::kScanLowInclusive : 0) |
              (spec.high_inclusive ? protocol::kScanHighInclusive : 0);
  req.batch_rows = spec.batch_rows;
  DUO_RETURN_IF_ERROR(body.encode(&req.body));
  const uint32_t scan_id = req.scan_id;
  DUO_RETURN_IF_ERROR(
      send_to(tx.coordinator, protocol::kCoordinatorBlock, std::move(req).to_signal()));
  tx.coordinator_knows = true;
  tx.scans.push_back(scan_id);
  auto scan = std::make_unique<Scan>();
  scan->scan_id = scan_id;
  scan->api_tx = api_tx;
  scan->coordinator = tx.coordinator;
  scan->ready = std::move(ready);
  scans_[scan_id] = std::move(scan);
  ++stats_.scans_started;
  return scan_id;
}

bool ApiCore::on_scan_tab_conf(Signal& signal) {
  Result<protocol::ScanTabConf> decoded = protocol::ScanTabConf::from_signal(signal);
  if (!decoded.ok()) {
    ++stats_.malformed_signals;
    return false;
  }
  auto it = scans_.find(decoded->scan_id);
  if (it == scans_.end() || it->second->api_tx != decoded->api_tx || it->second->failed) {
    ++stats_.stray_signals;
    return false;
  }
  Scan& scan = *it->second;
  ++stats_.scan_batches_received;
  std::vector<protocol::ScanTabConf::Entry> entries;
  Status parsed = decoded->entries(&entries);
  for (size_t i = 0; parsed.ok() && i < entries.size(); ++i) {
    storage::RowBatch rows;
    parsed = protocol::decode_row_batch(entries[i].batch, &rows);
    if (parsed.ok() && rows.rows() != 0) scan.batches.push_back(std::move(rows));
  }
  if (!parsed.ok()) {
    ++stats_.malformed_signals;
    fail_scan(scan, Status(ErrorCode::kInternal, "malformed scan batch: " + parsed.message()));
  } else {
    if ((decoded->flags & protocol::kScanAllDone) != 0) scan.all_done = true;
    if ((decoded->flags & protocol::kScanRoundDone) != 0) scan.round_done = true;
    // Wake the reader once per round, not per signal: a round's rows are all here.
    if (!scan.round_done && !scan.all_done) return false;
  }
  ScanCallback ready = scan.ready;
  if (ready) ready(scan.scan_id);
  return true;
}

void ApiCore::on_scan_tab_ref(Signal& signal) {
  Result<protocol::ScanRef> ref = protocol::ScanRef::from_signal(signal);
  if (!ref.ok()) {
    ++stats_.malformed_signals;
    return;
  }
  auto it = scans_.find(ref->id);
  if (it == scans_.end() || it->second->api_tx != ref->tx || it->second->failed) {
    ++stats_.stray_signals;
    return;
  }
  fail_scan(*it->second,
            Status(ref->error == ErrorCode::kOk ? ErrorCode::kInternal : ref->error, ref->message));
  ScanCallback ready = it->second->ready;
  if (ready) ready(ref->id);
}

void ApiCore::fail_scan(Scan& scan, Status why) {
  why.ignore_error();
  scan.failed = true;
  scan.error = std::move(why);
  scan.batches.clear();
  scan.next_row = 0;
}

Result<ScanFetch> ApiCore::next_row(uint32_t scan_id, std::optional<storage::RowBatch::Row>* row) {
  auto it = scans_.find(scan_id);
  if (it == scans_.end()) {
    return Status(ErrorCode::kInvalidArgument, "unknown scan " + std::to_string(scan_id));
  }
  Scan& scan = *it->second;
  while (!scan.failed && !scan.batches.empty()) {
    const storage::RowBatch& front = scan.batches.front();
    if (scan.next_row < front.rows()) {
      *row = front.row(scan.next_row++);
      return ScanFetch::kRow;
    }
    scan.batches.pop_front();
    scan.next_row = 0;
  }
  // The caller is past the round's last row: only now may the fragments send more, all
  // of them in one request.
  if (!scan.failed && scan.round_done && !scan.all_done) {
    scan.round_done = false;
    protocol::ScanNextReq next;
    next.tx = scan.api_tx;
    next.id = scan.scan_id;
    Status sent = send_to(scan.coordinator, protocol::kCoordinatorBlock,
                          next.to_signal(protocol::kScanTabNextReq));
    if (sent.ok()) {
      ++stats_.scan_next_requests;
    } else {
      fail_scan(scan, sent);
    }
  }
  if (scan.failed) return scan.error;
  return scan.all_done ? ScanFetch::kDone : ScanFetch::kWaiting;
}

void ApiCore::close_scan(uint32_t scan_id) {
  auto it = scans_.find(scan_id);
  if (it == scans_.end()) return;
  std::unique_ptr<Scan> scan = std::move(it->second);
  scans_.erase(it);
  auto tx = transactions_.find(scan->api_tx);
  if (tx != transactions_.end()) std::erase(tx->second->scans, scan_id);
  if (!scan->failed && !scan->all_done) {
    protocol::ScanNextReq close;
    close.tx = scan->api_tx;
    close.id = scan_id;
    close.flags = protocol::kScanClose;  // fragment is not looked at: the whole scan closes
    Status sent = send_to(scan->coordinator, protocol::kCoordinatorBlock,
                          close.to_signal(protocol::kScanTabNextReq));
    sent.ignore_error();  // a lost link closes the scan at the coordinator anyway
  }
}

}  // namespace duo::api
