// LocalQueryBlock: online ALTER of a table held here (CREATE/DROP INDEX, RENAME) — the
// dictionary's TABLE_ADDREQ of a known table with a higher version. The rows stay as
// they are (the dictionary refuses a change of columns or primary key); the new
// definition replaces the old one in place, and every fragment's ordered indexes are
// rebuilt from its committed rows (storage::Fragment::rebuild_ordered_indexes).
//
// A definition with the same ordered indexes (RENAME, an SQL-definition change, the
// undo on a node that kept its indexes) is installed at once. A rebuild needs a quiet
// table: no storage transaction on any of its fragments, and no open scan (whose
// cursors point into the old trees). So the alter first waits for the table's
// transactions to end, refusing new ones meanwhile with kTemporary (the client retries,
// as after any temporary error), then closes the table's scans (their coordinators
// learn at the next SCAN_FRAGNEXTREQ) and builds everything in one event of the
// block's thread: operations see either the old indexes or the new ones. The wait is
// bounded by LocalQueryOptions::alter_wait_ms when the dictionary allows giving up
// (not for its undo): an idle open transaction then fails the ALTER (kTemporary)
// instead of keeping the table unavailable. A build that fails (a UNIQUE index meeting
// a duplicate key, memory) puts the previous definition back, rebuilds it, and reports
// the error in TABLE_ADDCONF; the dictionary then undoes the alter on every node.
// The table's unique-index hidden tables follow its definition (local_query_unique.cc).
//
// Thread-safety: the block's thread only (runtime/block.h).
#include "ndb-kernel/local_query/local_query_block.h"

namespace duo::local_query {

using kernel::BlockAddress;

namespace {

void set_error(const Status& status, protocol::DictMsg* reply) {
  if (status.ok()) return;
  reply->c = static_cast<uint32_t>(status.code());
  reply->text = status.message();
}

// Whether two definitions' ordered indexes are the same (no rebuild needed).
bool same_indexes(const std::vector<storage::IndexDef>& a,
                  const std::vector<storage::IndexDef>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].columns != b[i].columns || a[i].unique != b[i].unique) {
      return false;
    }
  }
  return true;
}

}  // namespace

void LocalQueryBlock::alter_table(const BlockAddress& requester, uint32_t request_id,
                                  protocol::TableDef def, bool may_give_up) {
  const uint32_t table_id = def.schema.table_id;
  if (auto pending = pending_alters_.find(table_id); pending != pending_alters_.end()) {
    // The dictionary runs one schema transaction at a time, so this is a repeat or a
    // later change: the earlier one still gets its single answer.
    protocol::DictMsg superseded;
    superseded.request_id = pending->second.request_id;
    superseded.a = table_id;
    superseded.c = static_cast<uint32_t>(ErrorCode::kTemporary);
    superseded.text = "superseded by a later definition of the table";
    send_or_log(pending->second.requester, superseded.to_signal(protocol::kTableAddConf));
    pending_alters_.erase(pending);
  }
  Table* known = find_table(table_id);
  const bool rebuild = known != nullptr &&
                       !same_indexes(known->def.schema.ordered_indexes, def.schema.ordered_indexes);
  // Taking the copy lock also waits for the table's transactions: a write they made
  // must be committed (or gone) before the copy reads the rows.
  const bool locking = known != nullptr && (def.flags & protocol::kTableCopyLocked) != 0 &&
                       (known->def.flags & protocol::kTableCopyLocked) == 0;
  if ((rebuild || locking) && table_has_transactions(table_id)) {
    DUO_BLOCK_LOG(INFO) << "table " << table_id << ": version " << def.version
                        << " waits for the table's transactions to end";
    const uint32_t generation = ++alter_generation_;
    if (may_give_up) {
      Status armed = send_delayed(
          address(), kernel::Signal(protocol::kLqhContinue, {kContinueAlter, generation}),
          options_.alter_wait_ms);
      if (!armed.ok()) {
        DUO_BLOCK_LOG(WARNING) << "no timer for the ALTER of table " << table_id
                               << "; it waits without one: " << armed.message();
      }
    }
    pending_alters_[table_id] =
        PendingAlter{requester, request_id, std::move(def), may_give_up, generation};
    return;
  }
  protocol::DictMsg reply;
  reply.request_id = request_id;
  reply.a = table_id;
  Status applied = Status::OK();
  if (known == nullptr) {
    applied = Status(ErrorCode::kNoSuchTable, "table was dropped");
  } else if (!rebuild) {
    applied = def.schema.validate();
    if (applied.ok()) {
      known->def = std::move(def);  // in place: the fragments point at known->def.schema
      applied = sync_unique_index_tables(known);
      DUO_BLOCK_LOG(INFO) << "table " << table_id << " '" << known->def.schema.name << "' version "
                          << known->def.version << " (same indexes)";
    }
  } else {
    applied = apply_alter(known, std::move(def));
  }
  set_error(applied, &reply);
  send_or_log(requester, reply.to_signal(protocol::kTableAddConf));
}

void LocalQueryBlock::on_alter_wait_over(uint32_t generation) {
  for (auto it = pending_alters_.begin(); it != pending_alters_.end(); ++it) {
    if (it->second.generation != generation) continue;
    protocol::DictMsg reply;
    reply.request_id = it->second.request_id;
    reply.a = it->first;
    reply.c = static_cast<uint32_t>(ErrorCode::kTemporary);
    reply.text = "table is busy: its transactions did not end within " +
                 std::to_string(options_.alter_wait_ms) + " ms of the ALTER";
    DUO_BLOCK_LOG(WARNING) << "table " << it->first << ": version " << it->second.def.version
                           << " not installed: " << reply.text;
    send_or_log(it->second.requester, reply.to_signal(protocol::kTableAddConf));
    pending_alters_.erase(it);
    return;
  }
}

void LocalQueryBlock::run_pending_alters() {
  for (auto it = pending_alters_.begin(); it != pending_alters_.end();) {
    if (table_has_transactions(it->first)) {
      ++it;
      continue;
    }
    PendingAlter pending = std::move(it->second);
    it = pending_alters_.erase(it);
    alter_table(pending.requester, pending.request_id, std::move(pending.def), pending.may_give_up);
  }
}

bool LocalQueryBlock::table_has_transactions(uint32_t table_id) const {
  // A node restart's copy transaction counts (no ALTER runs then: the schema is locked).
  if (copy_ != nullptr && copy_->tx != storage::kNullId && copy_->table_id == table_id) {
    return true;
  }
  for (const auto& [transid, transaction] : transactions_) {
    for (const FragmentTx& ftx : transaction.fragments) {
      if (ftx.table_id == table_id) return true;
    }
  }
  return false;
}

Status LocalQueryBlock::apply_alter(Table* table, protocol::TableDef def) {
  const uint32_t table_id = table->def.schema.table_id;
  DUO_RETURN_IF_ERROR(def.schema.validate());
  DUO_RETURN_IF_ERROR(check_new_unique_indexes(*table, def));
  // As close_scans() (local_query_block.cc) does for a dropped table.
  std::erase_if(scans_, [&](const auto& entry) { return entry.second->table_id == table_id; });
  protocol::TableDef previous = table->def;
  // Assigned in place: the fragments keep pointing at table->def.schema.
  table->def = std::move(def);
  Status built = Status::OK();
  size_t rows = 0;
  for (auto& [fragment_id, fragment] : table->fragments) {
    built = fragment->rebuild_ordered_indexes();
    if (!built.ok()) break;
    rows += fragment->row_count();
  }
  if (built.ok()) built = sync_unique_index_tables(table);
  if (built.ok()) {
    DUO_BLOCK_LOG(INFO) << "table " << table_id << " '" << table->def.schema.name << "' version "
                        << table->def.version << ": " << table->def.schema.ordered_indexes.size()
                        << " ordered indexes rebuilt over " << rows << " rows";
    return Status::OK();
  }
  DUO_BLOCK_LOG(WARNING) << "table " << table_id << " version " << table->def.version
                         << " not installed: " << built.to_string();
  table->def = std::move(previous);
  for (auto& [fragment_id, fragment] : table->fragments) {
    // The previous indexes held every row before, so only memory could fail them.
    Status again = fragment->rebuild_ordered_indexes();
    if (!again.ok()) {
      DUO_BLOCK_LOG(ERROR) << "cannot rebuild the previous indexes of table " << table_id
                           << " fragment " << fragment_id << ": " << again.to_string();
    }
  }
  return built;
}

}  // namespace duo::local_query
