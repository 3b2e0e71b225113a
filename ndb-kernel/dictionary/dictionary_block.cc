#include "ndb-kernel/dictionary/dictionary_block.h"

#include <algorithm>
#include <utility>

#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/unique_index.h"

namespace duo::dictionary {

using kernel::BlockAddress;
using kernel::Signal;
using protocol::DictMsg;
using protocol::TableMsg;

namespace {
constexpr uint32_t kCommit = 0;
constexpr uint32_t kAbort = 1;
// TABLE_ADDREQ request id of the tables re-created at a system restart.
constexpr uint32_t kRestoreRequest = 0xFFFFFFFF;
constexpr uint16_t kSchemaFileTag = 1;
constexpr const char* kSchemaFilePath = "dict/schema";
}  // namespace

DictionaryBlock::DictionaryBlock(protocol::ClusterTopology topology)
    : Block("dictionary", protocol::kDictionaryBlock),
      topology_(std::move(topology)),
      data_nodes_(topology_.data_nodes()),
      master_(data_nodes_.empty() ? 0 : data_nodes_.front()) {
  protocol::register_protocol_signal_names();
  on(protocol::kCreateTableReq, &DictionaryBlock::on_create_table_req);
  on(protocol::kDropTableReq, &DictionaryBlock::on_drop_table_req);
  on(protocol::kAlterTableReq, &DictionaryBlock::on_alter_table_req);
  on(protocol::kGetTableReq, &DictionaryBlock::on_get_table_req);
  on(protocol::kListTablesReq, &DictionaryBlock::on_list_tables_req);
  on(protocol::kSubscribeSchemaReq, &DictionaryBlock::on_subscribe_schema_req);
  on(protocol::kNodeFailRep, &DictionaryBlock::on_node_fail_rep);
  on(protocol::kApiFailReq, &DictionaryBlock::on_api_fail_req);
  on(protocol::kSchemaPrepareReq, &DictionaryBlock::on_schema_prepare_req);
  on(protocol::kSchemaPrepareConf, &DictionaryBlock::on_schema_prepare_conf);
  on(protocol::kSchemaPrepareRef, &DictionaryBlock::on_schema_prepare_ref);
  on(protocol::kSchemaCommitReq, &DictionaryBlock::on_schema_commit_req);
  on(protocol::kSchemaCommitConf, &DictionaryBlock::on_schema_commit_conf);
  on(protocol::kDictTakeoverReq, &DictionaryBlock::on_dict_takeover_req);
  on(protocol::kDictTakeoverConf, &DictionaryBlock::on_dict_takeover_conf);
  on(protocol::kTableAddConf, &DictionaryBlock::on_table_add_conf);
  on(protocol::kTableDropConf, &DictionaryBlock::on_table_drop_conf);
  on(protocol::kDictRestoreReq, &DictionaryBlock::on_dict_restore_req);
  on(protocol::kDictLockReq, &DictionaryBlock::on_dict_lock_req);
  on(protocol::kDictUnlockReq, &DictionaryBlock::on_dict_unlock_req);
  on(protocol::kDictCopyReq, &DictionaryBlock::on_dict_copy_req);
  on(protocol::kDictSchemaReq, &DictionaryBlock::on_dict_schema_req);
  on(protocol::kDictSchemaData, &DictionaryBlock::on_dict_schema_data);
  on(protocol::kNodeStartingRep, &DictionaryBlock::on_node_starting_rep);
  on(protocol::kNodeStartedRep, &DictionaryBlock::on_node_started_rep);
  on(protocol::kFilegroupReq, &DictionaryBlock::on_filegroup_req);
  on(protocol::kClusterStartedRep, &DictionaryBlock::on_cluster_started_rep);
  on(protocol::kListFilegroupsReq, &DictionaryBlock::on_list_filegroups_req);
  on(protocol::kFilegroupPrepareReq, &DictionaryBlock::on_filegroup_prepare_req);
  on(protocol::kFilegroupPrepareConf, &DictionaryBlock::on_filegroup_prepare_answer);
  on(protocol::kFilegroupPrepareRef, &DictionaryBlock::on_filegroup_prepare_answer);
  on(protocol::kFilegroupCommitReq, &DictionaryBlock::on_filegroup_commit_req);
  on(protocol::kFilegroupCommitConf, &DictionaryBlock::on_filegroup_commit_conf);
  for (kernel::SignalId id : {protocol::kFsOpenConf, protocol::kFsRef, protocol::kFsWriteConf,
                              protocol::kFsReadConf, protocol::kFsCloseConf,
                              protocol::kFsAllocConf, protocol::kFsRemoveConf}) {
    on(id, &DictionaryBlock::on_fs_answer);
  }
}

DictionaryBlock::~DictionaryBlock() = default;

void DictionaryBlock::on_start() {
  schema_file_ = std::make_unique<fs_client::DualCopyFile>(
      kSchemaFilePath, kSchemaFileTag, node_id(),
      [this](Signal signal) { return send(signal.receiver(), std::move(signal)); });
}

std::vector<BlockAddress> DictionaryBlock::local_blocks() const {
  std::vector<BlockAddress> locals{BlockAddress{node_id(), protocol::kCoordinatorBlock, 0}};
  for (uint16_t part = 0; part < topology_.log_parts; ++part) {
    locals.push_back(BlockAddress{node_id(), protocol::kLocalQueryBlock, part});
  }
  return locals;
}

void DictionaryBlock::answer(const BlockAddress& to, kernel::SignalId id, DictMsg msg) {
  if (to.node_id == 0) return;  // an internal request (no client)
  Signal out = msg.to_signal(id);
  out.set_receiver(to);
  if (Status sent = send(to, std::move(out)); !sent.ok()) {
    DUO_BLOCK_LOG(WARNING) << "cannot answer " << to.to_string() << ": " << sent.message();
  }
}

const protocol::TableDef* DictionaryBlock::find_by_name(const std::string& name) const {
  for (const auto& [id, table] : tables_) {
    if (table.schema.name == name) return &table;
  }
  return nullptr;
}

std::set<uint16_t> DictionaryBlock::send_to_every_dictionary(Signal signal) {
  std::set<uint16_t> sent_to;
  for (uint16_t node : data_nodes_) {
    if (dead_nodes_.count(node) != 0) continue;
    const BlockAddress target{node, protocol::kDictionaryBlock, 0};
    Signal copy = signal.clone();
    copy.set_receiver(target);
    if (Status sent = send(target, std::move(copy)); !sent.ok()) {
      // A data node that cannot be reached is not waited for: it is dead or about to be
      // declared dead (NODE_FAILREP), and the change goes on without it.
      DUO_BLOCK_LOG(WARNING) << "cannot reach the dictionary of node " << node << ": "
                             << sent.message();
      continue;
    }
    sent_to.insert(node);
  }
  return sent_to;
}

// ---------------------------------------------------------------------------------------
// Client requests

void DictionaryBlock::on_create_table_req(Signal& signal) {
  queue_table_request(signal, protocol::kSchemaCreate, protocol::kCreateTableRef);
}

void DictionaryBlock::on_alter_table_req(Signal& signal) {
  queue_table_request(signal, protocol::kSchemaAlter, protocol::kAlterTableRef);
}

// CREATE and ALTER carry a whole table definition; only the master runs them.
void DictionaryBlock::queue_table_request(Signal& signal, uint32_t kind,
                                          kernel::SignalId refuse) {
  Result<TableMsg> msg = TableMsg::from_signal(signal);
  if (!msg.ok()) {
    answer(signal.sender(), refuse,
           DictMsg{signal.word(0), static_cast<uint32_t>(ErrorCode::kInvalidArgument), 0, 0,
                   msg.status().message()});
    return;
  }
  if (!is_master()) {
    answer(signal.sender(), refuse,
           DictMsg{msg->request_id, static_cast<uint32_t>(ErrorCode::kTemporary), master_, 0,
                   "not the master dictionary; send schema changes to data node " +
                       std::to_string(master_)});
    return;
  }
  if (refuse_if_locked(signal.sender(), msg->request_id, refuse)) return;
  Request request;
  request.client = signal.sender();
  request.request_id = msg->request_id;
  request.kind = kind;
  request.table = std::move(msg->table);
  queue_.push_back(std::move(request));
  start_next();
}

void DictionaryBlock::on_drop_table_req(Signal& signal) {
  DictMsg msg = DictMsg::from_signal(signal);
  if (!is_master()) {
    answer(signal.sender(), protocol::kDropTableRef,
           DictMsg{msg.request_id, static_cast<uint32_t>(ErrorCode::kTemporary), master_, 0,
                   "not the master dictionary; send schema changes to data node " +
                       std::to_string(master_)});
    return;
  }
  if (refuse_if_locked(signal.sender(), msg.request_id, protocol::kDropTableRef)) return;
  Request request;
  request.client = signal.sender();
  request.request_id = msg.request_id;
  request.kind = protocol::kSchemaDrop;
  request.table.schema.table_id = msg.a;
  request.table.schema.name = msg.text;
  queue_.push_back(std::move(request));
  start_next();
}


void DictionaryBlock::on_get_table_req(Signal& signal) {
  DictMsg msg = DictMsg::from_signal(signal);
  const protocol::TableDef* table = nullptr;
  if (msg.a != 0) {
    auto it = tables_.find(msg.a);
    if (it != tables_.end()) table = &it->second;
  } else {
    table = find_by_name(msg.text);
  }
  if (table == nullptr) {
    answer(
        signal.sender(), protocol::kGetTableRef,
        DictMsg{msg.request_id, static_cast<uint32_t>(ErrorCode::kNoSuchTable), 0, 0,
                "table '" + (msg.a != 0 ? std::to_string(msg.a) : msg.text) + "' does not exist"});
    return;
  }
  Result<Signal> out = TableMsg{msg.request_id, 0, *table}.to_signal(protocol::kGetTableConf);
  if (!out.ok()) {
    answer(signal.sender(), protocol::kGetTableRef,
           DictMsg{msg.request_id, static_cast<uint32_t>(out.status().code()), 0, 0,
                   out.status().message()});
    return;
  }
  out->set_receiver(signal.sender());
  send(signal.sender(), std::move(out).value()).ignore_error();
}

void DictionaryBlock::on_list_tables_req(Signal& signal) {
  std::vector<protocol::TableListEntry> list;
  for (const auto& [id, table] : tables_) {
    list.push_back(protocol::TableListEntry{id, table.version, table.schema.name});
  }
  Result<Signal> out = protocol::list_tables_conf(signal.word(0), list);
  if (!out.ok()) {
    DUO_BLOCK_LOG(WARNING) << "cannot list tables: " << out.status().message();
    return;
  }
  out->set_receiver(signal.sender());
  send(signal.sender(), std::move(out).value()).ignore_error();
}

void DictionaryBlock::on_subscribe_schema_req(Signal& signal) {
  subscribers_.insert(signal.sender().node_id);
}

void DictionaryBlock::on_node_fail_rep(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (std::binary_search(data_nodes_.begin(), data_nodes_.end(), node)) {
    // A data node: its answers are no longer awaited; the lowest live node is master.
    if (node == node_id()) return;
    // Also for a node still dead here: a starting node dies before it stops being dead.
    node_restart_on_node_failed(node);
    starting_nodes_.erase(node);
    if (!dead_nodes_.insert(node).second) return;
    const uint16_t old_master = master_;
    master_ = choose_master();
    takeover_node_failed(node);
    filegroup_node_failed(node);
    if (old_master == node && is_master()) start_takeovers();
    if (running_ && running_->awaiting.erase(node) != 0 && running_->awaiting.empty()) {
      if (running_->committing || running_->aborting) {
        finish_running();
      } else {
        prepare_phase_done();
      }
    }
    return;
  }
  on_api_node_failed(node);
}

void DictionaryBlock::on_api_node_failed(uint16_t node) {
  subscribers_.erase(node);
  filegroup_api_failed(node);
  std::erase_if(queue_, [node](const Request& r) { return r.client.node_id == node; });
  // Before start_next below: a running request of that node finishes unanswered (and
  // still counts as the node's until it has: its answer must not reach a new process
  // of the same node id).
  if (running_ && running_->request.client.node_id == node) {
    running_->request.client.node_id = 0;  // finishes, but nobody is told
    running_->request.failed_api_node = node;
  }
  if (running_ && running_->request.failed_client.node_id == node) {
    running_->request.failed_client.node_id = 0;
    running_->request.failed_api_node = node;
  }
  for (Request& request : queue_) {
    if (request.failed_client.node_id != node) continue;
    request.failed_client.node_id = 0;
    request.failed_api_node = node;
  }
  // A copying ALTER of that API node will not finish: its tables take writes again.
  if (is_master()) {
    for (const auto& [table_id, table] : tables_) {
      if (protocol::copy_lock_owner(table.flags) != node) continue;
      DUO_BLOCK_LOG(INFO) << "API node " << node << " failed: lifting its copy lock on table '"
                          << table.schema.name << "'";
      Request unlock;
      unlock.kind = protocol::kSchemaAlter;
      unlock.table = table;
      unlock.table.flags = protocol::with_copy_lock(table.flags, 0);
      unlock.failed_api_node = node;
      queue_.push_back(std::move(unlock));
    }
    start_next();
  }
}

void DictionaryBlock::on_api_fail_req(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (node == 0 || std::binary_search(data_nodes_.begin(), data_nodes_.end(), node)) return;
  on_api_node_failed(node);
  api_failures_.emplace_back(node, signal.sender());
  answer_api_failures_if_done();
}

void DictionaryBlock::answer_api_failures_if_done() {
  const auto belongs_to = [](const Request& request, uint16_t node) {
    return request.failed_api_node == node || request.client.node_id == node;
  };
  std::erase_if(api_failures_, [&](const std::pair<uint16_t, BlockAddress>& failure) {
    const uint16_t node = failure.first;
    if (running_ && belongs_to(running_->request, node)) return false;
    for (const Request& request : queue_) {
      if (belongs_to(request, node)) return false;
    }
    Signal conf(protocol::kApiFailConf, {node});
    conf.set_receiver(failure.second);
    Status sent = send(failure.second, conf.clone());
    // A full queue: try again shortly; a lost answer would hold the API node back forever.
    if (sent.code() == ErrorCode::kTemporary) {
      sent = send_delayed(failure.second, std::move(conf), 1);
    }
    if (!sent.ok()) {
      DUO_BLOCK_LOG(ERROR) << "cannot confirm the failure handling of API node " << node << ": "
                           << sent.message();
    }
    return true;
  });
}

uint16_t DictionaryBlock::choose_master() const {
  // A starting node is not master before it has the whole schema and has started.
  for (uint16_t n : data_nodes_) {
    if (dead_nodes_.count(n) == 0 && starting_nodes_.count(n) == 0) return n;
  }
  return master_;
}

// ---------------------------------------------------------------------------------------
// Master: one schema transaction at a time

void DictionaryBlock::start_next() {
  // A dead master's transaction is finished first (dictionary_takeover.cc).
  while (!running_ && !takeover_ && !filegroup_running_ && !queue_.empty()) {
    Request request = std::move(queue_.front());
    queue_.pop_front();
    const auto refuse = [&](ErrorCode error, std::string message) {
      answer(request.client,
             request.kind == protocol::kSchemaCreate ? protocol::kCreateTableRef
             : request.kind == protocol::kSchemaDrop ? protocol::kDropTableRef
                                                     : protocol::kAlterTableRef,
             DictMsg{request.request_id, static_cast<uint32_t>(error), 0, 0, std::move(message)});
    };
    // Queued before a node restart locked the schema: refused as if it came now. The
    // master's own repairs (no client) still run, so the lock finds a consistent schema.
    if (schema_locked() && request.client.node_id != 0) {
      refuse(ErrorCode::kTemporary, kNodeRestartBusyMessage);
      continue;
    }
    if (request.kind == protocol::kSchemaAlter || request.kind == protocol::kSchemaAlterBack) {
      if (Status valid = check_alter(&request); !valid.ok()) {
        refuse(valid.code(), valid.message());
        continue;
      }
    } else if (request.kind == protocol::kSchemaCreate) {
      protocol::TableDef& table = request.table;
      if (find_by_name(table.schema.name) != nullptr) {
        refuse(ErrorCode::kTableExists, "Table '" + table.schema.name + "' already exists");
        continue;
      }
      if (Status valid = table.schema.validate(); !valid.ok()) {
        refuse(valid.code(), valid.message());
        continue;
      }
      if (table.tablespace_id != 0) {
        auto tablespace = filegroups_.find(table.tablespace_id);
        if (tablespace == filegroups_.end() || !tablespace->second.is_tablespace()) {
          refuse(ErrorCode::kInvalidArgument, "Invalid tablespace");  // NDB 755
          continue;
        }
      }
      if (next_table_id_ > protocol::kMaxBaseTableId) {
        refuse(ErrorCode::kTableFull, "no table id left (at most " +
                                          std::to_string(protocol::kMaxBaseTableId) + " tables)");
        continue;
      }
      table.schema.table_id = next_table_id_++;
      table.version = 1;
      if (table.fragment_count == 0) table.fragment_count = topology_.default_fragment_count();
      if (table.fragment_count > protocol::kFragmentCountMax) {
        --next_table_id_;
        refuse(ErrorCode::kInvalidArgument,
               "Too many partitions (" + std::to_string(table.fragment_count) + ", at most " +
                   std::to_string(protocol::kFragmentCountMax) + ")");
        continue;
      }
      // Unique indexes become hidden tables (protocol/unique_index.h): their names must
      // not collide there.
      if (Status valid = protocol::unique_index_tables(table).status(); !valid.ok()) {
        --next_table_id_;
        refuse(valid.code(), valid.message());
        continue;
      }
    } else {
      const protocol::TableDef* existing = nullptr;
      if (request.table.schema.table_id != 0) {
        auto it = tables_.find(request.table.schema.table_id);
        if (it != tables_.end()) existing = &it->second;
      } else {
        existing = find_by_name(request.table.schema.name);
      }
      if (existing == nullptr) {
        refuse(ErrorCode::kNoSuchTable, "Table '" +
                                            (request.table.schema.name.empty()
                                                 ? std::to_string(request.table.schema.table_id)
                                                 : request.table.schema.name) +
                                            "' does not exist");
        continue;
      }
      request.table = *existing;
    }
    running_ = std::make_unique<Running>();
    running_->request = std::move(request);
    running_->schema_tx = (uint32_t{node_id()} << 24) | (next_schema_tx_++ & 0xFFFFFF);
    Result<Signal> prepare =
        TableMsg{running_->schema_tx, running_->request.kind, running_->request.table}.to_signal(
            protocol::kSchemaPrepareReq);
    if (!prepare.ok()) {
      refuse(prepare.status().code(), prepare.status().message());
      running_.reset();
      continue;
    }
    running_->awaiting = send_to_every_dictionary(std::move(prepare).value());
  }
  start_next_filegroup();
  confirm_lock_if_idle();
  if (!api_failures_.empty()) answer_api_failures_if_done();
}

Status DictionaryBlock::check_alter(Request* request) const {
  protocol::TableDef& table = request->table;
  auto it = tables_.find(table.schema.table_id);
  if (it == tables_.end()) {
    return Status(ErrorCode::kNoSuchTable,
                  "table " + std::to_string(table.schema.table_id) + " does not exist");
  }
  const protocol::TableDef& existing = it->second;
  if (table.version != existing.version) {
    return Status(ErrorCode::kSchemaVersion, "table definition has changed, please retry");
  }
  if (const protocol::TableDef* named = find_by_name(table.schema.name);
      named != nullptr && named->schema.table_id != table.schema.table_id) {
    return Status(ErrorCode::kTableExists, "Table '" + table.schema.name + "' already exists");
  }
  // The rows stay where they are: only what can be derived from them may change.
  bool same_rows = table.schema.columns.size() == existing.schema.columns.size() &&
                   table.schema.primary_key == existing.schema.primary_key;
  for (size_t i = 0; same_rows && i < table.schema.columns.size(); ++i) {
    const storage::ColumnDef& a = table.schema.columns[i];
    const storage::ColumnDef& b = existing.schema.columns[i];
    same_rows = a.name == b.name && a.type == b.type && a.nullable == b.nullable &&
                a.length == b.length && a.storage_disk == b.storage_disk &&
                a.precision == b.precision && a.scale == b.scale &&
                a.is_unsigned == b.is_unsigned && a.collation == b.collation;
  }
  if (!same_rows) {
    return Status(ErrorCode::kInvalidArgument,
                  "ALTER_TABLEREQ may not change the columns or the primary key of '" +
                      existing.schema.name + "'");
  }
  DUO_RETURN_IF_ERROR(table.schema.validate());
  DUO_RETURN_IF_ERROR(protocol::unique_index_tables(table).status());
  request->previous = existing;
  table.version = existing.version + 1;
  table.fragment_count = existing.fragment_count;
  // Options an ALTER may change in place: READ_BACKUP (routing only; rows untouched)
  // and the copy lock with its owner.
  const uint32_t in_place = protocol::kTableReadBackup | protocol::kTableCopyLocked | 0xFFFF0000u;
  table.flags = (existing.flags & ~in_place) | (table.flags & in_place);
  return Status::OK();
}

void DictionaryBlock::on_schema_prepare_conf(Signal& signal) {
  if (!running_ || running_->committing || running_->aborting ||
      signal.word(0) != running_->schema_tx ||
      running_->awaiting.erase(signal.sender().node_id) == 0) {
    return;
  }
  if (running_->awaiting.empty()) prepare_phase_done();
}

void DictionaryBlock::prepare_phase_done() {
  const bool abort = running_->error != ErrorCode::kOk;
  (abort ? running_->aborting : running_->committing) = true;
  running_->awaiting = send_to_every_dictionary(
      DictMsg{running_->schema_tx, abort ? kAbort : kCommit, 0, 0, ""}.to_signal(
          protocol::kSchemaCommitReq));
  if (running_->awaiting.empty()) finish_running();
}

void DictionaryBlock::on_schema_prepare_ref(Signal& signal) {
  DictMsg ref = DictMsg::from_signal(signal);
  if (!running_ || ref.request_id != running_->schema_tx) return;
  if (running_->error == ErrorCode::kOk) {
    running_->error = ref.a <= static_cast<uint32_t>(ErrorCode::kInternal)
                          ? static_cast<ErrorCode>(ref.a)
                          : ErrorCode::kInternal;
    running_->message = ref.text;
  }
  on_schema_prepare_conf(signal);  // counts as an answer
}

void DictionaryBlock::on_schema_commit_conf(Signal& signal) {
  DictMsg conf = DictMsg::from_signal(signal);
  if (on_takeover_commit_conf(conf, signal.sender().node_id)) return;
  if (!running_ || conf.request_id != running_->schema_tx ||
      !(running_->committing || running_->aborting) ||
      running_->awaiting.erase(signal.sender().node_id) == 0) {
    return;
  }
  if (conf.c != 0 && running_->error == ErrorCode::kOk) {
    running_->error = conf.c <= static_cast<uint32_t>(ErrorCode::kInternal)
                          ? static_cast<ErrorCode>(conf.c)
                          : ErrorCode::kInternal;
    running_->message = conf.text;
  }
  if (running_->awaiting.empty()) finish_running();
}

void DictionaryBlock::finish_running() {
  std::unique_ptr<Running> done = std::move(running_);
  const Request& request = done->request;
  const bool create = request.kind == protocol::kSchemaCreate;
  if (request.kind == protocol::kSchemaAlterBack && request.failed_error != ErrorCode::kOk) {
    if (done->error != ErrorCode::kOk) {
      DUO_BLOCK_LOG(ERROR) << "table '" << request.table.schema.name
                           << "': going back to its previous definition failed: " << done->message;
    }
    answer(request.failed_client, protocol::kAlterTableRef,
           DictMsg{request.failed_request_id, static_cast<uint32_t>(request.failed_error), 0, 0,
                   request.failed_message});
    return start_next();
  }
  if (request.kind == protocol::kSchemaAlter || request.kind == protocol::kSchemaAlterBack) {
    if (done->error == ErrorCode::kOk) {
      DUO_BLOCK_LOG(INFO) << "altered table '" << request.table.schema.name << "' (id "
                          << request.table.schema.table_id << ", version " << request.table.version
                          << ", " << request.table.schema.ordered_indexes.size()
                          << " ordered indexes)";
      answer(
          request.client, protocol::kAlterTableConf,
          DictMsg{request.request_id, request.table.schema.table_id, request.table.version, 0, ""});
    } else if (request.kind == protocol::kSchemaAlter && done->committing) {
      // Installed, but some local_query could not build its indexes (and kept the
      // previous ones): go back to the previous definition everywhere, first; the
      // client hears of the error when that is done.
      Request undo;
      undo.kind = protocol::kSchemaAlterBack;
      undo.table = request.previous;
      undo.table.version = request.table.version;
      undo.failed_client = request.client;
      undo.failed_request_id = request.request_id;
      undo.failed_error = done->error;
      undo.failed_message = done->message;
      undo.failed_api_node = request.failed_api_node;
      queue_.push_front(std::move(undo));
    } else {
      answer(request.client, protocol::kAlterTableRef,
             DictMsg{request.request_id, static_cast<uint32_t>(done->error), 0, 0, done->message});
      if (request.kind == protocol::kSchemaAlterBack) {
        DUO_BLOCK_LOG(ERROR) << "table '" << request.table.schema.name
                             << "': going back to its previous definition failed: "
                             << done->message;
      }
    }
    return start_next();
  }
  if (done->error == ErrorCode::kOk) {
    DUO_BLOCK_LOG(INFO) << (create ? "created" : "dropped") << " table '"
                        << request.table.schema.name << "' (id " << request.table.schema.table_id
                        << ", version " << request.table.version << ", "
                        << request.table.fragment_count << " fragments)";
    answer(
        request.client, create ? protocol::kCreateTableConf : protocol::kDropTableConf,
        DictMsg{request.request_id, request.table.schema.table_id, request.table.version, 0, ""});
  } else {
    answer(request.client, create ? protocol::kCreateTableRef : protocol::kDropTableRef,
           DictMsg{request.request_id, static_cast<uint32_t>(done->error), 0, 0, done->message});
    if (create && done->committing) {
      // Installed in the dictionaries but some node could not create its fragments:
      // take it away again before anything else runs.
      Request drop;
      drop.kind = protocol::kSchemaDrop;
      drop.table = request.table;
      queue_.push_front(std::move(drop));
    }
  }
  start_next();
}

// ---------------------------------------------------------------------------------------
// Every dictionary: prepare and commit

void DictionaryBlock::on_schema_prepare_req(Signal& signal) {
  Result<TableMsg> msg = TableMsg::from_signal(signal);
  const uint32_t schema_tx = signal.word(0);
  ErrorCode error = ErrorCode::kOk;
  std::string message;
  if (!msg.ok()) {
    error = msg.status().code();
    message = msg.status().message();
  } else if (msg->kind == protocol::kSchemaCreate) {
    if (tables_.count(msg->table.schema.table_id) != 0 ||
        find_by_name(msg->table.schema.name) != nullptr) {
      error = ErrorCode::kTableExists;
      message = "Table '" + msg->table.schema.name + "' already exists on node " +
                std::to_string(node_id());
    }
  } else if (msg->kind == protocol::kSchemaAlter || msg->kind == protocol::kSchemaAlterBack) {
    const protocol::TableDef* named = find_by_name(msg->table.schema.name);
    if (tables_.count(msg->table.schema.table_id) == 0) {
      error = ErrorCode::kNoSuchTable;
      message = "table " + std::to_string(msg->table.schema.table_id) + " does not exist on node " +
                std::to_string(node_id());
    } else if (named != nullptr && named->schema.table_id != msg->table.schema.table_id) {
      error = ErrorCode::kTableExists;
      message = "Table '" + msg->table.schema.name + "' already exists on node " +
                std::to_string(node_id());
    }
  } else if (msg->kind == protocol::kSchemaDrop) {
    if (tables_.count(msg->table.schema.table_id) == 0) {
      error = ErrorCode::kNoSuchTable;
      message = "table " + std::to_string(msg->table.schema.table_id) + " does not exist on node " +
                std::to_string(node_id());
    }
  } else {
    error = ErrorCode::kInvalidArgument;
    message = "unknown schema change kind " + std::to_string(msg->kind);
  }
  if (error != ErrorCode::kOk) {
    answer(signal.sender(), protocol::kSchemaPrepareRef,
           DictMsg{schema_tx, static_cast<uint32_t>(error), 0, 0, std::move(message)});
    return;
  }
  Prepared prepared;
  prepared.kind = msg->kind;
  prepared.table = std::move(msg->table);
  prepared.master = signal.sender();
  prepared_[schema_tx] = std::move(prepared);
  answer(signal.sender(), protocol::kSchemaPrepareConf, DictMsg{schema_tx, 0, 0, 0, ""});
}

void DictionaryBlock::on_schema_commit_req(Signal& signal) {
  DictMsg msg = DictMsg::from_signal(signal);
  auto it = prepared_.find(msg.request_id);
  if (it == prepared_.end() || msg.a == kAbort) {
    if (it != prepared_.end()) prepared_.erase(it);
    answer(signal.sender(), protocol::kSchemaCommitConf, DictMsg{msg.request_id, 0, 0, 0, ""});
    return;
  }
  Prepared& prepared = it->second;
  if (prepared.committing) {
    // A repeat (from a master that took over): the commit under way answers it.
    prepared.master = signal.sender();
    return;
  }
  prepared.committing = true;
  // By the master that started it (the id's top 8 bits): a takeover asks by that node.
  last_committed_from_[static_cast<uint16_t>(msg.request_id >> 24)] = msg.request_id;
  prepared.master = signal.sender();
  const uint32_t table_id = prepared.table.schema.table_id;
  note_committed_alter(msg.request_id, prepared.kind, table_id);
  if (prepared.kind != protocol::kSchemaDrop) {
    tables_[table_id] = prepared.table;
  } else {
    tables_.erase(table_id);
  }
  next_table_id_ = std::max(next_table_id_, table_id + 1);
  // The change is confirmed only once it is on disk here.
  Result<fs_client::Bytes> schema = encode_schema();
  if (!schema.ok()) return apply_committed(msg.request_id, schema.status());
  const uint32_t schema_tx = msg.request_id;
  schema_file_->write(std::move(schema).value(),
                      [this, schema_tx](Status written) { apply_committed(schema_tx, written); });
}

void DictionaryBlock::apply_committed(uint32_t schema_tx, Status persisted) {
  auto it = prepared_.find(schema_tx);
  if (it == prepared_.end()) return;
  Prepared& prepared = it->second;
  if (!persisted.ok()) {
    DUO_BLOCK_LOG(ERROR) << "cannot write the schema file: " << persisted.message();
    prepared.local_error = static_cast<uint32_t>(ErrorCode::kIoError);
    prepared.local_message = "schema file not written: " + persisted.message();
  }
  Signal change;
  if (prepared.kind != protocol::kSchemaDrop) {
    const uint32_t give_up =
        prepared.kind == protocol::kSchemaAlter ? protocol::kTableAddMayGiveUp : 0;
    Result<Signal> add =
        TableMsg{schema_tx, give_up, prepared.table}.to_signal(protocol::kTableAddReq);
    if (!add.ok()) {
      prepared.local_error = static_cast<uint32_t>(add.status().code());
      prepared.local_message = add.status().message();
      return local_done(schema_tx);
    }
    change = std::move(add).value();
  } else {
    change = DictMsg{schema_tx, prepared.table.schema.table_id, 0, 0, ""}.to_signal(
        protocol::kTableDropReq);
  }
  prepared.awaiting_local = 0;
  for (const BlockAddress& local : local_blocks()) {
    Signal copy = change.clone();
    copy.set_receiver(local);
    if (send(local, std::move(copy)).ok()) ++prepared.awaiting_local;
  }
  if (prepared.awaiting_local == 0) local_done(schema_tx);
}

void DictionaryBlock::on_table_add_conf(Signal& signal) {
  DictMsg conf = DictMsg::from_signal(signal);
  if (conf.request_id == kRestoreRequest) {
    if (conf.c != 0) {
      DUO_BLOCK_LOG(ERROR) << "restart: table " << conf.a << " could not be re-created by "
                           << signal.sender().to_string() << ": " << conf.text;
    }
    restore_table_added();
    return;
  }
  if (conf.request_id == kCopyRequest) return copy_local_done(conf, true);
  auto it = prepared_.find(conf.request_id);
  if (it == prepared_.end() || it->second.awaiting_local == 0) return;
  if (conf.c != 0) {
    DUO_BLOCK_LOG(WARNING) << "table " << conf.a << " could not be created or altered by "
                           << signal.sender().to_string() << ": " << conf.text;
    // Reported to the master with the commit answer; the master drops the table again.
    it->second.local_error = conf.c;
    it->second.local_message = conf.text;
  }
  if (--it->second.awaiting_local == 0) local_done(conf.request_id);
}

void DictionaryBlock::on_table_drop_conf(Signal& signal) {
  DictMsg conf = DictMsg::from_signal(signal);
  if (conf.request_id == kCopyRequest) return copy_local_done(conf, false);
  auto it = prepared_.find(conf.request_id);
  if (it == prepared_.end() || it->second.awaiting_local == 0) return;
  if (--it->second.awaiting_local == 0) local_done(conf.request_id);
}

void DictionaryBlock::local_done(uint32_t schema_tx) {
  auto it = prepared_.find(schema_tx);
  if (it == prepared_.end()) return;
  Prepared prepared = std::move(it->second);
  prepared_.erase(it);
  note_local_outcome(schema_tx, prepared.kind, prepared.local_error);
  answer(
      prepared.master, protocol::kSchemaCommitConf,
      DictMsg{schema_tx, 0, 0, prepared.local_error,
              prepared.local_error != 0
                  ? (prepared.kind != protocol::kSchemaCreate
                         ? prepared.local_message
                         : "node " + std::to_string(node_id()) +
                               " could not create the table's fragments: " + prepared.local_message)
                  : ""});
  // Tell this node's subscribed clients (each dictionary tells its own).
  for (uint16_t subscriber : subscribers_) {
    answer(BlockAddress{subscriber, protocol::kApiBlock, 0}, protocol::kSchemaEvent,
           DictMsg{0, prepared.table.schema.table_id, prepared.table.version, prepared.kind,
                   prepared.table.schema.name});
  }
}

// ---------------------------------------------------------------------------------------
// Persistence and system restart

// Schema file payload: u32 next table id, u32 table count, then per table u32 length +
// the encoded TableDef (protocol/wire_codec.h).
Result<fs_client::Bytes> DictionaryBlock::encode_schema() const {
  fs_client::Bytes out;
  protocol::put_u32(&out, next_table_id_);
  protocol::put_u32(&out, static_cast<uint32_t>(tables_.size()));
  for (const auto& [id, table] : tables_) {
    fs_client::Bytes def;
    DUO_RETURN_IF_ERROR(protocol::encode_table_def(table, &def));
    protocol::put_u32(&out, static_cast<uint32_t>(def.size()));
    out.insert(out.end(), def.begin(), def.end());
  }
  encode_filegroups(&out);
  return out;
}

Status DictionaryBlock::decode_schema(const fs_client::Bytes& bytes) {
  protocol::ByteReader in(protocol::as_view(bytes));
  uint32_t next_id = 0, count = 0;
  if (!in.u32(&next_id) || !in.u32(&count)) {
    return Status(ErrorCode::kCorruption, "schema file: truncated header");
  }
  std::map<uint32_t, protocol::TableDef> tables;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t size = 0;
    std::string_view def;
    if (!in.u32(&size) || !in.take(size, &def)) {
      return Status(ErrorCode::kCorruption, "schema file: truncated table " + std::to_string(i));
    }
    Result<protocol::TableDef> table = protocol::decode_table_def(def);
    if (!table.ok()) {
      // Written before tables named a tablespace: the definition ends without its id.
      std::string with_tablespace(def);
      with_tablespace.append(4, '\0');
      table = protocol::decode_table_def(with_tablespace);
    }
    if (!table.ok()) {
      return Status(ErrorCode::kCorruption,
                    "schema file: table " + std::to_string(i) + ": " + table.status().message());
    }
    const uint32_t id = table->schema.table_id;
    tables[id] = std::move(table).value();
  }
  // Disk-data objects follow the tables (a schema file written before they existed
  // ends here).
  if (in.done()) {
    filegroups_.clear();
  } else {
    DUO_RETURN_IF_ERROR(decode_filegroups(&in));
  }
  tables_ = std::move(tables);
  next_table_id_ = next_id;
  return Status::OK();
}

void DictionaryBlock::on_fs_answer(Signal& signal) {
  if (on_filegroup_fs_answer(signal)) return;
  if (schema_file_ && schema_file_->owns(signal)) schema_file_->on_fs_answer(signal);
}

void DictionaryBlock::on_dict_restore_req(Signal& signal) {
  restore_requester_ = signal.sender();
  schema_file_->read([this](Result<fs_client::Bytes> bytes) {
    const auto finish = [this](uint32_t tables, ErrorCode error) {
      Signal conf(protocol::kDictRestoreConf, {tables, static_cast<uint32_t>(error)});
      conf.set_receiver(restore_requester_);
      send(restore_requester_, std::move(conf)).ignore_error();
    };
    if (!bytes.ok() && bytes.status().is(ErrorCode::kNotFound)) {
      DUO_BLOCK_LOG(INFO) << "no schema file: starting with an empty schema";
      restored_empty_ = true;
      return finish(0, ErrorCode::kOk);
    }
    Status decoded = bytes.ok() ? decode_schema(*bytes) : bytes.status();
    if (!decoded.ok()) {
      DUO_BLOCK_LOG(ERROR) << "cannot restore the schema: " << decoded.message();
      return finish(0, decoded.code());
    }
    DUO_BLOCK_LOG(INFO) << "restored the schema: " << tables_.size() << " table(s)";
    restore_awaiting_ = 0;
    for (const auto& [id, table] : tables_) {
      Result<Signal> add = TableMsg{kRestoreRequest, 0, table}.to_signal(protocol::kTableAddReq);
      if (!add.ok()) continue;
      for (const BlockAddress& local : local_blocks()) {
        Signal copy = add->clone();
        copy.set_receiver(local);
        if (send(local, std::move(copy)).ok()) ++restore_awaiting_;
      }
    }
    if (restore_awaiting_ == 0) finish(static_cast<uint32_t>(tables_.size()), ErrorCode::kOk);
  });
}

void DictionaryBlock::restore_table_added() {
  if (restore_awaiting_ == 0 || --restore_awaiting_ > 0) return;
  Signal conf(protocol::kDictRestoreConf, {static_cast<uint32_t>(tables_.size()), 0});
  conf.set_receiver(restore_requester_);
  send(restore_requester_, std::move(conf)).ignore_error();
}

}  // namespace duo::dictionary
