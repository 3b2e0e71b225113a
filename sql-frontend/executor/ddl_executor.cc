// DDL on existing tables: CREATE/DROP INDEX, ALTER TABLE, RENAME TABLE, TRUNCATE TABLE,
// and SHOW CREATE TABLE. What changes is decided by catalog/table_alter.h; this file
// runs it against the cluster.
//
// Two kinds of ALTER, as in NDB:
//   - In place (indexes, names, column defaults): one schema transaction
//     (ALTER_TABLEREQ); every data node rebuilds the table's ordered indexes from its
//     rows before the statement returns; concurrent statements on the table from any
//     sqld see the old indexes or the new ones (briefly getting a temporary error, 1297,
//     while the build waits for their transactions to end).
//   - Copying (ADD/DROP/MODIFY/CHANGE COLUMN, and a new UNIQUE index on a table with
//     rows, whose hidden unique-index table only writes fill): a new table under a
//     temporary name gets the new definition; the rows are copied (a redefined column's
//     values converted as strict mode does) in batched transactions of kCopyBatchRows
//     (each committed on its own, so memory stays bounded whatever the table's size); then
//     the old table is renamed away, the new one renamed in, and the old one dropped.
//     As NDB's global schema lock does, the copy lock (protocol::kTableCopyLocked)
//     keeps every writer out of the source for the whole copy: taking it waits for the
//     table's open transactions, then every data node refuses writes to it with a
//     temporary error (autocommit statements retry it) until the old table is dropped
//     or the ALTER fails; if this sqld dies, the data nodes lift it.
//
// Thread-safety: one session thread (the StatementContext's).
#include <algorithm>
#include <set>

#include "ndb-kernel/common/logging.h"
#include "sql-frontend/catalog/auto_increment.h"
#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/catalog/table_alter.h"
#include "sql-frontend/executor/admin_statements.h"
#include "sql-frontend/executor/engine_substitution.h"
#include "sql-frontend/executor/sql_value.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

namespace {

// Rows per transaction of a copying ALTER: large enough to amortise the round trips,
// small enough for TransactionMemory (NDB's copying ALTER commits every 1000 rows too,
// with ndb_autoincrement_prefetch and batch sizes of that order).
constexpr size_t kCopyBatchRows = 1000;
// A copying ALTER logs its progress every this many rows (sqld's log, as NDB's mysqld
// reports "Copied N rows" for long copies).
constexpr uint64_t kCopyProgressRows = 100'000;

// The system tables of `mysql` are the catalog itself: no DDL on them.
void check_writable_database(const std::string& db) {
  if (catalog::is_builtin_database(db)) {
    throw SqlException(1044, "42000", "Access denied to database '" + db + "'");
  }
}

catalog::BoundTable bind(StatementContext& context, const ObjectName& name) {
  const std::string db = context.database_of(name);
  if (!context.catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
  return context.catalog.get_table(db, name.name.name);
}

// bind() for a statement that changes the table.
catalog::BoundTable bind_for_change(StatementContext& context, const ObjectName& name) {
  check_writable_database(context.database_of(name));
  return bind(context, name);
}

bool table_exists(StatementContext& context, const std::string& db, const std::string& table) {
  const std::vector<std::string> tables = context.catalog.list_tables(db);
  return std::find(tables.begin(), tables.end(), table) != tables.end();
}

// The value a new column gets in the rows already there: its DEFAULT, NULL, or for a
// NOT NULL column without one MySQL's implicit default (0, '', zero date).
void add_default(const catalog::SqlColumn& column, uint16_t id, storage::AttrValues* row) {
  if (column.has_default && column.default_value) {
    row->add(id, to_storage(column, SqlValue::of_string(*column.default_value), 0));
    return;
  }
  if (column.nullable) {
    row->add_null(id);
    return;
  }
  row->add(id, to_storage(column, implicit_default(column), 0));
}

// Copies every row of `from` into `to` (origin: catalog::TableChange::origin). Returns
// the rows copied.
uint64_t copy_rows(StatementContext& context, const catalog::BoundTable& from,
                   const catalog::BoundTable& to, const std::vector<int>& origin) {
  api::Session& session = context.api_session;
  auto reader = check(session.begin(from.table_def.get()));
  std::unique_ptr<api::ScanCursor> cursor = check(reader->scan(*from.table_def, api::ScanSpec{}));
  std::vector<storage::AttrValues> batch;
  uint64_t copied = 0;
  const auto flush = [&] {
    if (batch.empty()) return;
    auto writer = check(session.begin(to.table_def.get(), &batch.front()));
    for (storage::AttrValues& row : batch) check(writer->insert(*to.table_def, std::move(row)));
    check(writer->execute(api::ExecType::kCommit));
    if ((copied + batch.size()) / kCopyProgressRows != copied / kCopyProgressRows) {
      DUO_LOG(INFO, "sqld") << "ALTER TABLE " << from.sql.db << "." << from.sql.name << ": "
                            << copied + batch.size() << " rows copied";
    }
    copied += batch.size();
    batch.clear();
  };
  storage::AttrValues old_row;
  while (check(cursor->next(&old_row))) {
    storage::AttrValues row;
    for (size_t i = 0; i < origin.size(); ++i) {
      const uint16_t id = static_cast<uint16_t>(i);
      if (origin[i] < 0) {
        add_default(to.sql.columns[i], id, &row);
        continue;
      }
      const int at = old_row.find(static_cast<uint16_t>(origin[i]));
      const catalog::SqlColumn& old_column = from.sql.columns[static_cast<size_t>(origin[i])];
      const catalog::SqlColumn& new_column = to.sql.columns[i];
      if (at < 0 || old_row.entry(at).is_null) {
        // MODIFY ... NOT NULL over a NULL: strict mode refuses it.
        if (!new_column.nullable) throw SqlException(1138, "22004", "Invalid use of NULL value");
        row.add_null(id);
      } else if (old_column.declared_type == new_column.declared_type) {
        row.add(id, old_row.value(at));
      } else {
        // MODIFY/CHANGE to another type: MySQL's conversion as for an INSERT of the
        // value, strict (1264/1265/1366/1406 abort the ALTER; the copy is dropped).
        const uint64_t row_number = copied + batch.size() + 1;
        row.add(id,
                to_storage(new_column, from_storage(old_column, old_row.value(at)), row_number));
      }
    }
    batch.push_back(std::move(row));
    if (batch.size() >= kCopyBatchRows) flush();
  }
  flush();
  return copied;
}

// The data nodes keep a UNIQUE index unique within each fragment only; across the
// table the SQL layer checks (as for INSERT). So before an index is declared UNIQUE,
// every row's key is checked here: 1062 on the first duplicate. Rows written by others
// between this check and the index's build are not covered.
// `shown_name` is the table's name in the message (the copy's is temporary).
void check_unique(StatementContext& context, const catalog::BoundTable& table,
                  const catalog::SqlIndex& index, const std::string& shown_name) {
  api::ScanSpec spec;
  spec.columns = index.columns;
  auto reader = check(context.api_session.begin(table.table_def.get()));
  std::unique_ptr<api::ScanCursor> cursor = check(reader->scan(*table.table_def, spec));
  std::set<std::string> seen;
  storage::AttrValues row;
  while (check(cursor->next(&row))) {
    std::string key;
    bool has_null = false;
    for (uint16_t column : index.columns) {
      const int at = row.find(column);
      if (at < 0 || row.entry(at).is_null) {
        has_null = true;  // NULLs never conflict
        break;
      }
      const std::string_view value = row.value(at);
      key += std::to_string(value.size()) + ":";
      key.append(value);
    }
    if (has_null || seen.insert(key).second) continue;
    if (seen.size() > kStatementRowsMax) throw_too_many_rows();
    std::string text;
    for (uint16_t column : index.columns) {
      if (!text.empty()) text += "-";
      text += from_storage(table.sql.columns[column], row.value(row.find(column))).to_text();
    }
    throw SqlException(
        1062, "23000",
        "Duplicate entry '" + text + "' for key '" + shown_name + "." + index.name + "'");
  }
}

// The UNIQUE indexes of `altered` that `old` does not have with the same columns.
std::vector<catalog::SqlIndex> new_unique_indexes(const catalog::SqlTable& old,
                                                  const catalog::SqlTable& altered) {
  std::vector<catalog::SqlIndex> added;
  for (const catalog::SqlIndex& index : altered.indexes) {
    if (index.kind != catalog::SqlIndexKind::kUnique) continue;
    bool existed = false;
    for (const catalog::SqlIndex& before : old.indexes) {
      existed |= before.kind == catalog::SqlIndexKind::kUnique && before.name == index.name;
    }
    if (!existed) added.push_back(index);
  }
  return added;
}

// Whether `table` holds at least one row.
bool has_rows(StatementContext& context, const catalog::BoundTable& table) {
  api::ScanSpec spec;
  spec.columns = {table.sql.primary_key().columns.front()};
  auto reader = check(context.api_session.begin(table.table_def.get()));
  std::unique_ptr<api::ScanCursor> cursor = check(reader->scan(*table.table_def, spec));
  storage::AttrValues row;
  return check(cursor->next(&row));
}

server::StatementResult alter_info(uint64_t rows) {
  return server::OkResult{rows, 0, 0,
                          "Records: " + std::to_string(rows) + "  Duplicates: 0  Warnings: 0"};
}

// NDB's column placement after a change (catalog::apply_disk_storage): the tablespace
// resolved to its id, and a copy of the rows when a column moves between memory and
// disk or the tablespace changes (the row layout has the disk reference or not).
catalog::TableChange place_columns(StatementContext& context, const catalog::BoundTable& bound,
                                   catalog::TableChange change) {
  catalog::apply_disk_storage(&change.table);
  catalog::check_disk_storage(change.table);
  if (change.table.tablespace != bound.sql.tablespace || change.table.tablespace_id == 0) {
    change.table.tablespace_id = 0;
    if (!change.table.tablespace.empty()) {
      for (const ::duo::protocol::FilegroupDef& filegroup :
           check(context.catalog.cluster().list_filegroups())) {
        if (filegroup.is_tablespace() && filegroup.name == change.table.tablespace) {
          change.table.tablespace_id = filegroup.id;
        }
      }
      if (change.table.tablespace_id == 0) {
        throw SqlException(3510, "HY000",
                           "Tablespace " + change.table.tablespace + " doesn't exist.");
      }
    }
  }
  if (change.table.tablespace_id != bound.table_def->tablespace_id) change.copy_rows = true;
  const auto& old_columns = bound.table_def->schema.columns;
  for (size_t i = 0; i < change.table.columns.size() && i < change.origin.size(); ++i) {
    const int from = change.origin[i];
    if (from < 0 || static_cast<size_t>(from) >= old_columns.size()) continue;
    if (old_columns[from].storage_disk != change.table.columns[i].storage.storage_disk) {
      change.copy_rows = true;
    }
  }
  return change;
}

// Applies `change` to `bound`: in place, or by copying the rows.
server::StatementResult apply_change(StatementContext& context, const catalog::BoundTable& bound,
                                     const catalog::TableChange& requested) {
  const catalog::TableChange change = place_columns(context, bound, requested);
  catalog::Catalog& catalog = context.catalog;
  const std::vector<catalog::SqlIndex> unique = new_unique_indexes(bound.sql, change.table);
  if (!change.copy_rows) {
    for (const catalog::SqlIndex& index : unique) {
      check_unique(context, bound, index, bound.sql.name);
    }
    // A new UNIQUE index is also a hidden table on the data nodes that only writes fill
    // (docs/formats/kernel-protocol.md "Unique indexes"): over existing rows it is built
    // by copying them into a table that has it, as a column change is.
    if (unique.empty() || !has_rows(context, bound)) {
      catalog.alter_table(bound, change.table);
      return alter_info(0);
    }
  }
  const std::string& db = bound.sql.db;
  const std::string& name = bound.sql.name;
  // MySQL's temporary names start with "#sql"; they never show in SHOW TABLES. The API
  // node id and connection id keep two sqlds' copies apart.
  const std::string suffix = "-" + std::to_string(catalog.cluster().node_id()) + "_" +
                             std::to_string(context.session.connection_id) + "-" + name;
  const std::string copy_name = "#sql" + suffix;
  const std::string old_name = "#sql2" + suffix;
  catalog::SqlTable copy = change.table;
  copy.name = copy_name;
  catalog.create_table(copy, /*if_not_exists=*/false);
  // The source takes no writes until it is dropped (or the ALTER fails): what the copy
  // read is all there is. Taking the lock waits for the open transactions on it.
  catalog::BoundTable source = bound;
  try {
    source.table_def = catalog.set_copy_lock(bound, true);
  } catch (const SqlException&) {
    catalog.drop_table(context.api_session, db, copy_name);
    throw;
  }
  uint64_t rows = 0;
  try {
    const catalog::BoundTable target = catalog.get_table(db, copy_name);
    rows = copy_rows(context, source, target, change.origin);
    for (const catalog::SqlIndex& index : unique) check_unique(context, target, index, name);
    catalog.rename_table(context.api_session, source, db, old_name);
    try {
      catalog.rename_table(context.api_session, target, db, name);
    } catch (const SqlException&) {
      // Put the original back under its name (which lifts its lock) before reporting.
      catalog.rename_table(context.api_session, catalog.get_table(db, old_name), db, name);
      throw;
    }
  } catch (const SqlException&) {
    catalog.drop_table(context.api_session, db, copy_name);
    const catalog::BoundTable current = catalog.get_table(db, name);
    if ((current.table_def->flags & ::duo::protocol::kTableCopyLocked) != 0) {
      catalog.set_copy_lock(current, false);
    }
    throw;
  }
  // The AUTO_INCREMENT counter went along with the old table: it belongs to the name.
  catalog::rename_auto_increment(catalog.cluster(), context.api_session,
                                 catalog::cluster_table_name(db, old_name),
                                 catalog::cluster_table_name(db, name));
  catalog.drop_table(context.api_session, db, old_name);
  return alter_info(rows);
}

// Checks RENAME TABLE's (from, to) pairs all first, with the renames before each
// applied, so that a bad pair in the middle changes nothing (MySQL renames atomically).
void check_renames(StatementContext& context,
                   const std::vector<std::pair<ObjectName, ObjectName>>& renames) {
  std::vector<std::pair<std::string, std::string>> gone, added;  // (db, name)
  const auto in = [](const auto& list, const std::string& db, const std::string& t) {
    return std::find(list.begin(), list.end(), std::make_pair(db, t)) != list.end();
  };
  for (const auto& [from, to] : renames) {
    const std::string from_db = context.database_of(from);
    const std::string to_db = context.database_of(to);
    check_writable_database(from_db);
    check_writable_database(to_db);
    if (!context.catalog.database_exists(context.api_session, to_db)) {
      throw_unknown_database(to_db);
    }
    const bool from_exists = in(added, from_db, from.name.name) ||
                             (!in(gone, from_db, from.name.name) &&
                              context.catalog.database_exists(context.api_session, from_db) &&
                              table_exists(context, from_db, from.name.name));
    if (!from_exists) throw_unknown_table(from_db, from.name.name);
    const bool to_exists =
        in(added, to_db, to.name.name) ||
        (!in(gone, to_db, to.name.name) && table_exists(context, to_db, to.name.name));
    if (to_exists) throw SqlException(1050, "42S01", "Table '" + to.name.name + "' already exists");
    std::erase(added, std::make_pair(from_db, from.name.name));
    gone.emplace_back(from_db, from.name.name);
    std::erase(gone, std::make_pair(to_db, to.name.name));
    added.emplace_back(to_db, to.name.name);
  }
}

server::StatementResult rename_tables(StatementContext& context,
                                      const RenameTableStatement& statement) {
  check_renames(context, statement.renames);
  for (const auto& [from, to] : statement.renames) {
    const std::string from_db = context.database_of(from);
    const catalog::BoundTable bound = context.catalog.get_table(from_db, from.name.name);
    context.catalog.rename_table(context.api_session, bound, context.database_of(to), to.name.name);
  }
  return server::OkResult{};
}

}  // namespace

server::StatementResult execute_ddl(StatementContext& context, const Statement& statement) {
  switch (statement.kind) {
    case StatementKind::kCreateIndex: {
      const auto& create = statement.as<CreateIndexStatement>();
      const catalog::BoundTable bound = bind_for_change(context, create.table);
      catalog::TableChange change(bound.sql);
      catalog::add_index(&change, create.index);
      return apply_change(context, bound, change);
    }
    case StatementKind::kDropIndex: {
      const auto& drop = statement.as<DropIndexStatement>();
      const catalog::BoundTable bound = bind_for_change(context, drop.table);
      catalog::TableChange change(bound.sql);
      catalog::drop_index(&change, drop.name.name);
      return apply_change(context, bound, change);
    }
    case StatementKind::kAlterTable: {
      const auto& alter = statement.as<AlterTableStatement>();
      const catalog::BoundTable bound = bind_for_change(context, alter.table);
      for (const AlterAction& action : alter.actions) {
        if (action.kind == AlterActionKind::kTableOptions && action.options.engine) {
          check_table_engine(context, *action.options.engine, bound.sql.name);
        }
      }
      const catalog::TableChange change = catalog::plan_alter(bound.sql, alter);
      if (change.copy_rows && alter.algorithm && *alter.algorithm == "INPLACE") {
        throw SqlException(1846, "0A000",
                           "ALGORITHM=INPLACE is not supported. Reason: adding or dropping a "
                           "column needs a copy of the rows. Try ALGORITHM=COPY.");
      }
      const bool renamed =
          change.new_name && (context.database_of(*change.new_name) != bound.sql.db ||
                              change.new_name->name.name != bound.sql.name);
      if (!renamed) return apply_change(context, bound, change);
      // RENAME [TO]: checked before anything changes, applied last (as MySQL does).
      check_renames(context, {{alter.table, *change.new_name}});
      const bool rename_only = std::all_of(
          alter.actions.begin(), alter.actions.end(),
          [](const AlterAction& action) { return action.kind == AlterActionKind::kRenameTable; });
      server::StatementResult result = rename_only ? server::StatementResult{server::OkResult{}}
                                                   : apply_change(context, bound, change);
      const catalog::BoundTable changed = context.catalog.get_table(bound.sql.db, bound.sql.name);
      context.catalog.rename_table(context.api_session, changed,
                                   context.database_of(*change.new_name),
                                   change.new_name->name.name);
      return result;
    }
    case StatementKind::kRenameTable:
      return rename_tables(context, statement.as<RenameTableStatement>());
    case StatementKind::kTruncateTable: {
      const auto& truncate = statement.as<TruncateTableStatement>();
      const std::string db = context.database_of(truncate.table);
      check_writable_database(db);
      if (!context.catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
      context.catalog.truncate_table(context.api_session, db, truncate.table.name.name);
      return server::OkResult{};
    }
    default:
      throw_not_supported("this statement");
  }
}

server::StatementResult show_create_table(StatementContext& context, const ShowStatement& show) {
  ObjectName name = *show.table;
  if (show.db) name.db = show.db;
  const catalog::BoundTable bound = bind(context, name);
  const std::optional<uint64_t> next =
      catalog::peek_auto_increment(context.catalog.cluster(), context.api_session,
                                   catalog::cluster_table_name(bound.sql.db, bound.sql.name));
  return text_result({"Table", "Create Table"},
                     {{bound.sql.name, catalog::show_create_table_text(bound.sql, next)}});
}

}  // namespace duo::sql::executor
