// CoordinatorBlock: unique indexes as hidden tables (protocol/unique_index.h; NDB's
// unique hash indexes, maintained by TC from the triggers TUP fires).
//
// A base table's TABLE_ADDREQ brings its hidden tables along (derived from its
// definition, as every block derives them). A write on a base table with unique indexes
// comes back from its chain with the IndexChanges its primary computed; the coordinator
// runs each as an operation of the same transaction on the hidden table — delete the
// old value's entry, insert the new one's, exclusive locks, routed by the value's hash —
// and reports the base operation done only when all of them are answered. Two writers of
// one value meet at the value's entry: the second waits for the first transaction's
// outcome and then inserts or finds the duplicate.
//
// Any failure of an index operation fails the base operation and the whole transaction
// (fatal even with kOpIgnoreError: the base write is applied at its replicas, and only
// the abort undoes it), as NDB aborts a transaction whose unique-index trigger fails
// (error 893). A duplicate is kDuplicateKey "Duplicate entry '<value>' for key '<index>'"
// (MySQL 1062). Clients cannot write hidden tables themselves.
//
// Thread-safety: a Block; single-threaded by the runtime's contract.
#include <string>
#include <utility>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/coordinator/coordinator_records.h"
#include "ndb-kernel/protocol/unique_index.h"

namespace duo::coordinator {

void CoordinatorBlock::add_table(protocol::TableDef def) {
  const uint32_t table_id = def.schema.table_id;
  drop_table(table_id);  // an ALTER: its hidden tables may have changed
  Table base{std::move(def), {}, {}};
  Result<std::vector<protocol::UniqueIndexTable>> hidden = protocol::unique_index_tables(base.def);
  if (!hidden.ok()) {
    // local_query refuses such a table too, so the dictionary never commits it.
    DUO_BLOCK_LOG(WARNING) << "table " << table_id << ": " << hidden.status().message();
  } else {
    for (protocol::UniqueIndexTable& index : *hidden) {
      const uint32_t index_table = index.def.schema.table_id;
      base.unique_index_tables.push_back(index_table);
      tables_[index_table] = Table{std::move(index.def), {}, std::move(index.index_name)};
    }
  }
  tables_[table_id] = std::move(base);
}

void CoordinatorBlock::drop_table(uint32_t table_id) {
  auto it = tables_.find(table_id);
  if (it == tables_.end()) return;
  const std::vector<uint32_t> hidden = std::move(it->second.unique_index_tables);
  tables_.erase(it);
  for (uint32_t index_table : hidden) tables_.erase(index_table);
}

bool CoordinatorBlock::start_index_changes(Transaction& tx, uint32_t tc_op,
                                           const protocol::Bytes& changes) {
  std::vector<protocol::IndexChange> decoded;
  if (!protocol::decode_index_changes(protocol::as_view(changes), &decoded)) {
    ++stats_.malformed_signals;
    tx.ops[tc_op].failed = true;
    fail_operation(tx, tx.ops[tc_op], ErrorCode::kInvalidArgument, "malformed unique index changes",
                   true);
    return true;
  }
  if (decoded.empty()) return false;
  for (protocol::IndexChange& change : decoded) {
    Operation child;
    child.op_index = tx.ops[tc_op].op_index;
    child.parent = tc_op;
    child.index_table = change.index_table;
    tx.ops.push_back(std::move(child));  // invalidates references into tx.ops
    const uint32_t child_op = static_cast<uint32_t>(tx.ops.size() - 1);
    ++tx.ops[tc_op].children;
    Status sent;
    auto table = tables_.find(change.index_table);
    if (table == tables_.end()) {
      sent = Status(ErrorCode::kSchemaVersion,
                    "unique index table " + std::to_string(change.index_table) +
                        " is not known here; the table definition has changed, please retry");
    } else {
      protocol::OpBody body;
      body.key_or_row = std::move(change.values);
      protocol::Bytes encoded;
      sent = body.encode(&encoded);
      if (sent.ok()) {
        sent = send_operation(tx, child_op, table->second.def,
                              change.insert ? storage::OpType::kInsert : storage::OpType::kDelete,
                              storage::LockMode::kExclusive, 0, std::move(encoded));
      }
    }
    if (!sent.ok()) {
      tx.ops[child_op].done = true;
      child_done(tx, tx.ops[child_op], sent.code(), sent.message());
    }
  }
  return true;
}

void CoordinatorBlock::child_done(Transaction& tx, Operation& child, ErrorCode error,
                                  std::string message) {
  Operation& parent = tx.ops[child.parent];
  if (error != ErrorCode::kOk && !parent.failed) {
    parent.failed = true;
    const auto table = tables_.find(child.index_table);
    const std::string index = table == tables_.end() ? "?" : table->second.index_name;
    if (error == ErrorCode::kDuplicateKey) {
      // The hidden table's key is the index value: name the index, as MySQL does.
      const std::string primary = "for key 'PRIMARY'";
      if (const size_t at = message.rfind(primary); at != std::string::npos) {
        message.replace(at, primary.size(), "for key '" + index + "'");
      }
    } else if (error == ErrorCode::kNotFound) {
      error = ErrorCode::kInternal;
      message = "unique index '" + index + "' has no entry for the row's value";
    }
    fail_operation(tx, parent, error, std::move(message), true);
  }
  if (--parent.children == 0 && !parent.failed) tx.results.push_back(std::move(parent.held));
}

}  // namespace duo::coordinator
