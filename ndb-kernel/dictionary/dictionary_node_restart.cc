// DictionaryBlock: its part of a node restart (NDB's DBDICT in a node restart) — the
// schema lock held by the master while a node starts, the copy of the whole schema to
// the starting node, and the starting node leaving the dead set. See
// dictionary_block.h for the rules; layouts in docs/formats/kernel-protocol.md "Node
// restart".
//
// Thread-safety: a Block; single-threaded by the runtime's contract.
#include <algorithm>
#include <utility>

#include "ndb-kernel/dictionary/dictionary_block.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/wire_codec.h"

namespace duo::dictionary {

using kernel::BlockAddress;
using kernel::Signal;
using protocol::DictMsg;
using protocol::TableMsg;

namespace {
// DICT_SCHEMADATA word 1.
constexpr uint32_t kSchemaDataTable = 1;  // the section is one table definition
constexpr uint32_t kSchemaDataLast = 2;   // no table left; the section is the dead set

ErrorCode to_error_code(uint32_t code) {
  return code <= static_cast<uint32_t>(ErrorCode::kInternal) ? static_cast<ErrorCode>(code)
                                                             : ErrorCode::kInternal;
}
}  // namespace

// ---------------------------------------------------------------------------------------
// The schema lock (master)

void DictionaryBlock::on_dict_lock_req(Signal& signal) {
  const uint16_t starting = static_cast<uint16_t>(signal.word(0));
  if (!is_master()) {
    // Harmless (only the master runs schema transactions), but the restart's master
    // and this block disagree about who is master: worth a line in the log.
    DUO_BLOCK_LOG(WARNING) << "schema lock for the restart of node " << starting
                           << " asked of a non-master dictionary (master is node " << master_
                           << ")";
  }
  if (lock_holders_.insert(starting).second) {
    DUO_BLOCK_LOG(INFO) << "schema locked for the restart of node " << starting
                        << (running_ ? " (waiting for the running schema transaction)" : "");
  }
  lock_waiters_.emplace_back(signal.sender(), starting);
  // Refuses what is queued and confirms the lock at once when nothing runs.
  start_next();
}

void DictionaryBlock::on_dict_unlock_req(Signal& signal) {
  const uint16_t starting = static_cast<uint16_t>(signal.word(0));
  std::erase_if(lock_waiters_, [starting](const auto& w) { return w.second == starting; });
  if (lock_holders_.erase(starting) != 0) {
    DUO_BLOCK_LOG(INFO) << "schema unlocked: the restart of node " << starting << " ended";
  }
}

void DictionaryBlock::confirm_lock_if_idle() {
  if (running_ || takeover_ || filegroup_running_ || lock_waiters_.empty()) return;
  std::vector<std::pair<BlockAddress, uint16_t>> waiters = std::move(lock_waiters_);
  lock_waiters_.clear();
  for (const auto& [requester, starting] : waiters) {
    if (lock_holders_.count(starting) == 0) continue;  // unlocked meanwhile
    Signal conf(protocol::kDictLockConf, {starting});
    conf.set_receiver(requester);
    if (Status sent = send(requester, std::move(conf)); !sent.ok()) {
      DUO_BLOCK_LOG(WARNING) << "cannot confirm the schema lock to " << requester.to_string()
                             << ": " << sent.message();
    }
  }
}

bool DictionaryBlock::refuse_if_locked(const BlockAddress& client, uint32_t request_id,
                                       kernel::SignalId refuse) {
  if (!schema_locked()) return false;
  answer(client, refuse,
         DictMsg{request_id, static_cast<uint32_t>(ErrorCode::kTemporary), 0, 0,
                 kNodeRestartBusyMessage});
  return true;
}

void DictionaryBlock::node_restart_on_node_failed(uint16_t node) {
  // The starting node died: its restart is over, and with it its lock.
  std::erase_if(lock_waiters_, [node](const auto& w) { return w.second == node; });
  if (lock_holders_.erase(node) != 0) {
    DUO_BLOCK_LOG(INFO) << "schema unlocked: starting node " << node << " failed";
  }
  if (copy_ && !copy_->installing && copy_->source == node) {
    finish_copy(ErrorCode::kTemporary,
                "node " + std::to_string(node) + " failed while its schema was being copied");
  }
}

// ---------------------------------------------------------------------------------------
// The copy: the source's side

void DictionaryBlock::on_dict_schema_req(Signal& signal) {
  const uint32_t copy_id = signal.word(0);
  const uint32_t after_table_id = signal.word(1);
  const BlockAddress requester = signal.sender();
  Signal data(protocol::kDictSchemaData,
              {copy_id, 0, next_table_id_, 0, master_, static_cast<uint32_t>(tables_.size())});
  if (running_ || !prepared_.empty() || filegroup_running_ || !filegroup_prepared_.empty()) {
    // A copy taken across a schema transaction could miss it: the restart locks first.
    data.set_word(3, static_cast<uint32_t>(ErrorCode::kTemporary));
    const std::string why = "node " + std::to_string(node_id()) +
                            " is running a schema transaction; lock the schema first";
    data.set_section(fs_client::Bytes(why.begin(), why.end()));
  } else if (auto it = tables_.upper_bound(after_table_id); it != tables_.end()) {
    fs_client::Bytes def;
    if (Status encoded = protocol::encode_table_def(it->second, &def); !encoded.ok()) {
      data.set_word(3, static_cast<uint32_t>(encoded.code()));
      def.assign(encoded.message().begin(), encoded.message().end());
    } else {
      data.set_word(1, kSchemaDataTable);
    }
    data.set_section(std::move(def));
  } else {
    // The end: the dead data nodes the starting node must know of (itself excluded).
    fs_client::Bytes dead;
    std::vector<uint16_t> others;
    for (uint16_t node : dead_nodes_) {
      if (node != requester.node_id) others.push_back(node);
    }
    protocol::put_u16(&dead, static_cast<uint16_t>(others.size()));
    for (uint16_t node : others) protocol::put_u16(&dead, node);
    encode_filegroups(&dead);
    data.set_word(1, kSchemaDataLast);
    data.set_section(std::move(dead));
  }
  data.set_receiver(requester);
  if (Status sent = send(requester, std::move(data)); !sent.ok()) {
    DUO_BLOCK_LOG(WARNING) << "cannot send the schema to " << requester.to_string() << ": "
                           << sent.message();
  }
}

// ---------------------------------------------------------------------------------------
// The copy: the starting node's side

void DictionaryBlock::on_dict_copy_req(Signal& signal) {
  const uint16_t source = static_cast<uint16_t>(signal.word(0));
  const auto refuse = [&](ErrorCode error, const std::string& message) {
    Signal ref(protocol::kDictCopyRef, {static_cast<uint32_t>(error)});
    ref.set_section(fs_client::Bytes(message.begin(), message.end()));
    ref.set_receiver(signal.sender());
    send(signal.sender(), std::move(ref)).ignore_error();
  };
  if (copy_) {
    return refuse(ErrorCode::kTemporary, "a schema copy from node " +
                                             std::to_string(copy_->source) + " is already running");
  }
  if (source == node_id() || !std::binary_search(data_nodes_.begin(), data_nodes_.end(), source)) {
    return refuse(ErrorCode::kInvalidArgument,
                  "cannot copy the schema from node " + std::to_string(source));
  }
  copy_ = std::make_unique<SchemaCopy>();
  copy_->requester = signal.sender();
  copy_->source = source;
  copy_->copy_id = next_copy_id_++;
  DUO_BLOCK_LOG(INFO) << "copying the schema from node " << source;
  request_schema_table(0);
}

void DictionaryBlock::request_schema_table(uint32_t after_table_id) {
  const BlockAddress source{copy_->source, protocol::kDictionaryBlock, 0};
  Signal request(protocol::kDictSchemaReq, {copy_->copy_id, after_table_id});
  request.set_receiver(source);
  if (Status sent = send(source, std::move(request)); !sent.ok()) {
    finish_copy(ErrorCode::kTemporary, "cannot reach the dictionary of node " +
                                           std::to_string(copy_->source) + ": " + sent.message());
  }
}

void DictionaryBlock::on_dict_schema_data(Signal& signal) {
  if (!copy_ || copy_->installing || signal.word(0) != copy_->copy_id ||
      signal.sender().node_id != copy_->source) {
    DUO_BLOCK_LOG(WARNING) << "stray DICT_SCHEMADATA " << signal.describe();
    return;
  }
  if (signal.word(3) != 0) {
    return finish_copy(to_error_code(signal.word(3)),
                       "node " + std::to_string(copy_->source) +
                           " refused the schema copy: " + DictMsg::from_signal(signal).text);
  }
  copy_->next_table_id = signal.word(2);
  copy_->master = static_cast<uint16_t>(signal.word(4));
  const fs_client::Bytes& section = signal.section();
  if (signal.word(1) == kSchemaDataTable) {
    Result<protocol::TableDef> table = protocol::decode_table_def(protocol::as_view(section));
    if (!table.ok()) {
      return finish_copy(ErrorCode::kCorruption,
                         "malformed table in the schema copy: " + table.status().message());
    }
    const uint32_t table_id = table->schema.table_id;
    if (!copy_->tables.empty() && table_id <= copy_->tables.rbegin()->first) {
      return finish_copy(ErrorCode::kInternal,
                         "schema copy out of order at table " + std::to_string(table_id));
    }
    copy_->tables.emplace(table_id, std::move(table).value());
    return request_schema_table(table_id);
  }
  protocol::ByteReader in(protocol::as_view(section));
  uint16_t count = 0;
  bool valid = signal.word(1) == kSchemaDataLast && in.u16(&count);
  for (uint16_t i = 0; valid && i < count; ++i) {
    uint16_t node = 0;
    valid = in.u16(&node);
    if (valid && node != node_id()) copy_->dead_nodes.insert(node);
  }
  if (valid && !in.done()) {
    std::string_view rest;
    valid = in.take(in.remaining(), &rest);
    copy_->filegroups.assign(rest.begin(), rest.end());
  }
  if (!valid || copy_->tables.size() != signal.word(5)) {
    return finish_copy(ErrorCode::kCorruption, "malformed end of the schema copy from node " +
                                                   std::to_string(copy_->source));
  }
  install_copy();
}

void DictionaryBlock::install_copy() {
  SchemaCopy& copy = *copy_;
  copy.installing = true;
  copy.replaced = std::exchange(tables_, copy.tables);
  next_table_id_ = std::max(copy.next_table_id, 1u);
  if (!copy.filegroups.empty()) {
    protocol::ByteReader filegroups(protocol::as_view(copy.filegroups));
    if (Status decoded = decode_filegroups(&filegroups); !decoded.ok()) {
      DUO_BLOCK_LOG(ERROR) << "schema copy: filegroups not installed: " << decoded.message();
    }
    // The node's own disk-data files may be gone (an initial restart): made again.
    ensure_filegroup_files();
  }
  // The master stays where the cluster has it (the lowest live node when it was chosen):
  // this node does not become master by having the lowest id. Failures this node heard
  // of since it started are kept with those the source knew.
  dead_nodes_.insert(copy.dead_nodes.begin(), copy.dead_nodes.end());
  master_ = copy.master != 0 ? copy.master : choose_master();
  DUO_BLOCK_LOG(INFO) << "schema copied from node " << copy.source << ": " << tables_.size()
                      << " table(s), master node " << master_;
  Result<fs_client::Bytes> schema = encode_schema();
  if (!schema.ok()) return on_copy_written(schema.status());
  const uint32_t copy_id = copy.copy_id;
  schema_file_->write(std::move(schema).value(), [this, copy_id](Status written) {
    if (copy_ && copy_->copy_id == copy_id) on_copy_written(std::move(written));
  });
}

void DictionaryBlock::on_copy_written(Status written) {
  if (!written.ok()) {
    return finish_copy(ErrorCode::kIoError, "schema file not written: " + written.message());
  }
  // The old life's tables that the cluster no longer has (or has in another version)
  // go first, so each copied table is added as new, never as an ALTER of a stale one.
  copy_->awaiting_local = 0;
  for (const auto& [id, old] : copy_->replaced) {
    auto now = tables_.find(id);
    if (now != tables_.end() && now->second.version == old.version) continue;
    const Signal drop = DictMsg{kCopyRequest, id, 0, 0, ""}.to_signal(protocol::kTableDropReq);
    for (const BlockAddress& local : local_blocks()) {
      Signal copy = drop.clone();
      copy.set_receiver(local);
      if (send(local, std::move(copy)).ok()) ++copy_->awaiting_local;
    }
  }
  if (copy_->awaiting_local == 0) copy_add_tables();
}

void DictionaryBlock::copy_add_tables() {
  copy_->adding = true;
  copy_->awaiting_local = 0;
  for (const auto& [id, table] : tables_) {
    Result<Signal> add = TableMsg{kCopyRequest, 0, table}.to_signal(protocol::kTableAddReq);
    if (!add.ok()) {
      if (copy_->error == ErrorCode::kOk) {
        copy_->error = add.status().code();
        copy_->message = add.status().message();
      }
      continue;
    }
    for (const BlockAddress& local : local_blocks()) {
      Signal copy = add->clone();
      copy.set_receiver(local);
      if (send(local, std::move(copy)).ok()) ++copy_->awaiting_local;
    }
  }
  if (copy_->awaiting_local == 0) finish_copy(copy_->error, copy_->message);
}

void DictionaryBlock::copy_local_done(const DictMsg& conf, bool add) {
  if (!copy_ || !copy_->installing || copy_->awaiting_local == 0 || copy_->adding != add) return;
  if (conf.c != 0 && copy_->error == ErrorCode::kOk) {
    copy_->error = to_error_code(conf.c);
    copy_->message = "table " + std::to_string(conf.a) + " could not be created: " + conf.text;
  }
  if (--copy_->awaiting_local > 0) return;
  if (!copy_->adding) return copy_add_tables();
  finish_copy(copy_->error, copy_->message);
}

void DictionaryBlock::finish_copy(ErrorCode error, std::string message) {
  std::unique_ptr<SchemaCopy> done = std::move(copy_);
  Signal answer_signal(error == ErrorCode::kOk ? protocol::kDictCopyConf : protocol::kDictCopyRef,
                       {error == ErrorCode::kOk ? static_cast<uint32_t>(tables_.size())
                                                : static_cast<uint32_t>(error)});
  if (error == ErrorCode::kOk) {
    DUO_BLOCK_LOG(INFO) << "schema copy installed: " << tables_.size() << " table(s)";
  } else {
    DUO_BLOCK_LOG(ERROR) << "schema copy from node " << done->source << " failed: " << message;
    answer_signal.set_section(fs_client::Bytes(message.begin(), message.end()));
  }
  answer_signal.set_receiver(done->requester);
  if (Status sent = send(done->requester, std::move(answer_signal)); !sent.ok()) {
    DUO_BLOCK_LOG(WARNING) << "cannot answer the schema copy to " << done->requester.to_string()
                           << ": " << sent.message();
  }
}

// ---------------------------------------------------------------------------------------
// The starting node joins

void DictionaryBlock::on_node_starting_rep(Signal& signal) {
  const uint16_t starting = static_cast<uint16_t>(signal.word(0));
  // From now on schema transactions wait for its answers too (they are locked until the
  // restart ends, so none starts before it has the whole schema).
  if (dead_nodes_.erase(starting) != 0) {
    DUO_BLOCK_LOG(INFO) << "node " << starting << " is starting: no longer dead";
  }
  starting_nodes_.insert(starting);
  Signal conf(protocol::kNodeStartingConf, {starting});
  conf.set_receiver(signal.sender());
  send(signal.sender(), std::move(conf)).ignore_error();
}

void DictionaryBlock::on_node_started_rep(Signal& signal) {
  const uint16_t started = static_cast<uint16_t>(signal.word(0));
  // Schema transactions are locked until the restart's end, so none runs at the master
  // this may move from.
  if (starting_nodes_.erase(started) != 0) {
    dead_nodes_.erase(started);
    const uint16_t previous = master_;
    master_ = choose_master();
    DUO_BLOCK_LOG(INFO) << "node " << started << " started"
                        << (master_ != previous ? "; master is now node " + std::to_string(master_)
                                                : std::string());
  }
  Signal conf(protocol::kNodeStartedConf, {started});
  conf.set_receiver(signal.sender());
  send(signal.sender(), std::move(conf)).ignore_error();
}

}  // namespace duo::dictionary
