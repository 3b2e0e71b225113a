// Temporary tables in the session's memory; see temporary_tables.h.
#include "sql-frontend/executor/temporary_tables.h"

#include <algorithm>
#include <tuple>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/expression.h"
#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/executor/sql_value.h"

namespace duo::sql::executor {

TemporaryTable* TemporaryTables::find(const std::string& db, const std::string& name) {
  auto it = tables_.find(key(db, name));
  return it == tables_.end() ? nullptr : &it->second;
}

bool TemporaryTables::create(catalog::SqlTable table, bool if_not_exists) {
  const std::string k = key(table.db, table.name);
  if (tables_.count(k) != 0) {
    if (if_not_exists) return false;
    throw SqlException(1050, "42S01", "Table '" + table.name + "' already exists");
  }
  TemporaryTable created;
  created.sql = std::move(table);
  tables_.emplace(k, std::move(created));
  return true;
}

bool TemporaryTables::drop(const std::string& db, const std::string& name) {
  return tables_.erase(key(db, name)) != 0;
}

size_t TemporaryTables::bytes() const {
  size_t total = 0;
  for (const auto& [k, table] : tables_) total += table.bytes;
  return total;
}

namespace {

TemporaryTables& session_tables(StatementContext& context) {
  if (context.temporary_tables == nullptr) throw_not_supported("temporary tables here");
  return *context.temporary_tables;
}

// What a row holds, for the session's bound: its values' text sizes plus a small
// per-value overhead.
size_t row_bytes(const Row& row) {
  size_t bytes = 0;
  for (const SqlValue& value : row) bytes += 8 + (value.is_null() ? 0 : value.to_text().size());
  return bytes;
}

// The stored form of `value` for `column` (converted as the cluster table would store
// it; NULL checked).
SqlValue stored_value(const catalog::SqlColumn& column, const SqlValue& value,
                      uint64_t row_number) {
  if (value.is_null()) {
    if (!column.nullable) {
      throw SqlException(1048, "23000", "Column '" + column.name + "' cannot be null");
    }
    return value;
  }
  return from_storage(column, to_storage(column, value, row_number));
}

bool same_key(const catalog::SqlIndex& index, const Row& a, const Row& b) {
  for (uint16_t c : index.columns) {
    if (a[c].is_null() || b[c].is_null()) return false;  // NULLs never collide
    if (compare(a[c], b[c]) != 0) return false;
  }
  return true;
}

// The first row other than `skip` that `row` collides with on the PRIMARY KEY or a
// UNIQUE index (with that index), or -1.
std::pair<int64_t, const catalog::SqlIndex*> collision(const TemporaryTable& table,
                                                       const Row& row, int64_t skip) {
  for (const catalog::SqlIndex& index : table.sql.indexes) {
    if (index.kind == catalog::SqlIndexKind::kKey) continue;
    for (size_t r = 0; r < table.rows.size(); ++r) {
      if (static_cast<int64_t>(r) == skip) continue;
      if (same_key(index, row, table.rows[r])) return {static_cast<int64_t>(r), &index};
    }
  }
  return {-1, nullptr};
}

[[noreturn]] void throw_duplicate(const TemporaryTable& table, const catalog::SqlIndex& index,
                                  const Row& row) {
  std::string key_text;
  for (size_t i = 0; i < index.columns.size(); ++i) {
    if (i > 0) key_text += '-';
    key_text += row[index.columns[i]].to_text();
  }
  throw SqlException(1062, "23000", "Duplicate entry '" + key_text + "' for key '" +
                                        table.sql.name + "." + index.name + "'");
}

void check_bound(StatementContext& context, const TemporaryTable& table, size_t more) {
  if (session_tables(context).bytes() + more > kTemporaryBytesMax) {
    throw SqlException(1114, "HY000", "The table '" + table.sql.name + "' is full");
  }
}

server::StatementResult insert_rows(StatementContext& context, TemporaryTable& table,
                                    const InsertStatement& insert) {
  if (insert.select != nullptr || !insert.on_duplicate.empty()) {
    throw_not_supported("INSERT ... SELECT / ON DUPLICATE KEY UPDATE into a temporary table");
  }
  const catalog::SqlTable& sql = table.sql;
  // (column, value) pairs of each row.
  std::vector<std::vector<std::pair<int, const Expr*>>> rows;
  if (!insert.set.empty()) {
    std::vector<std::pair<int, const Expr*>> row;
    for (const Assignment& a : insert.set) {
      row.emplace_back(resolve_column(*a.column, sql, "field list"), a.value.get());
    }
    rows.push_back(std::move(row));
  } else {
    std::vector<int> columns;
    for (const Identifier& c : insert.columns) {
      const int at = sql.find_column(c.name);
      if (at < 0) throw_unknown_column(c.name, "field list");
      columns.push_back(at);
    }
    if (columns.empty()) {
      for (size_t c = 0; c < sql.columns.size(); ++c) columns.push_back(static_cast<int>(c));
    }
    for (const std::vector<ExprPtr>& values : insert.rows) {
      if (values.size() != columns.size()) {
        throw SqlException(1136, "21S01", "Column count doesn't match value count at row " +
                                              std::to_string(rows.size() + 1));
      }
      std::vector<std::pair<int, const Expr*>> row;
      for (size_t i = 0; i < values.size(); ++i) row.emplace_back(columns[i], values[i].get());
      rows.push_back(std::move(row));
    }
  }
  // Every row is made and checked before any is added: the statement is all or nothing.
  std::vector<Row> made;
  uint64_t affected = 0, first_generated = 0;
  uint64_t auto_increment = table.auto_increment;
  const int auto_column = sql.auto_increment_column();
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::optional<SqlValue>> values(sql.columns.size());
    for (const auto& [column, expr] : rows[r]) {
      if (expr->kind == ExprKind::kDefault) continue;
      values[column] = evaluate_for_column(*expr, context.eval(), sql.columns[column]);
    }
    Row row(sql.columns.size());
    for (size_t c = 0; c < sql.columns.size(); ++c) {
      const catalog::SqlColumn& column = sql.columns[c];
      std::optional<SqlValue>& value = values[c];
      if (static_cast<int>(c) == auto_column &&
          (!value || value->is_null() || value->to_text() == "0")) {
        value = SqlValue::of_uint(++auto_increment);
        if (first_generated == 0) first_generated = auto_increment;
      }
      if (!value) {
        if (column.has_default) {
          value = column.default_value ? SqlValue::of_string(*column.default_value)
                                       : SqlValue::null();
        } else if (column.nullable) {
          value = SqlValue::null();
        } else {
          throw SqlException(1364, "HY000",
                             "Field '" + column.name + "' doesn't have a default value");
        }
      }
      row[c] = stored_value(column, *value, r + 1);
    }
    if (auto_column >= 0 && !row[auto_column].is_null()) {
      auto_increment = std::max<uint64_t>(auto_increment, row[auto_column].to_text().empty()
                                                              ? 0
                                                              : std::stoull(row[auto_column].to_text()));
    }
    made.push_back(std::move(row));
  }
  // The rows are appended as they pass; a failure takes the statement's rows out again
  // (REPLACE's removals stay: MySQL's non-transactional tables keep them too).
  const size_t rows_before = table.rows.size();
  const size_t bytes_before = table.bytes;
  try {
    for (Row& row : made) {
      auto [at, index] = collision(table, row, -1);
      if (at >= 0) {
        if (insert.replace) {
          // REPLACE: the colliding rows go (each counts), then the row goes in.
          while (at >= 0) {
            table.bytes -= row_bytes(table.rows[at]);
            table.rows.erase(table.rows.begin() + at);
            ++affected;
            std::tie(at, index) = collision(table, row, -1);
          }
        } else if (insert.ignore) {
          std::string key_text;
          for (size_t i = 0; i < index->columns.size(); ++i) {
            if (i > 0) key_text += '-';
            key_text += row[index->columns[i]].to_text();
          }
          context.add_warning(1062, "Duplicate entry '" + key_text + "' for key '" +
                                        table.sql.name + "." + index->name + "'");
          continue;
        } else {
          throw_duplicate(table, *index, row);
        }
      }
      const size_t bytes = row_bytes(row);
      check_bound(context, table, bytes);
      table.bytes += bytes;
      table.rows.push_back(std::move(row));
      ++affected;
    }
  } catch (...) {
    if (!insert.replace) {
      table.rows.resize(rows_before);
      table.bytes = bytes_before;
    }
    throw;
  }
  table.auto_increment = auto_increment;
  if (first_generated != 0) context.last_insert_id = first_generated;
  server::OkResult ok;
  ok.affected_rows = affected;
  ok.last_insert_id = first_generated;
  return ok;
}

uint64_t row_limit(StatementContext& context, const std::optional<Limit>& limit) {
  if (!limit) return UINT64_MAX;
  const SqlValue count = evaluate(*limit->count, context.eval());
  return count.is_null() ? 0 : std::stoull(count.to_text());
}

server::StatementResult update_rows(StatementContext& context, TemporaryTable& table,
                                    const UpdateStatement& update) {
  if (!update.order_by.empty()) throw_not_supported("UPDATE ... ORDER BY of a temporary table");
  const catalog::SqlTable& sql = table.sql;
  std::vector<int> targets;
  for (const Assignment& a : update.set) targets.push_back(resolve_column(*a.column, sql, "field list"));
  TemporaryTable& staged = table;
  // The rows changed so far with their old values: a failure puts them back.
  std::vector<std::pair<size_t, Row>> originals;
  uint64_t matched = 0, changed = 0;
  const uint64_t limit = row_limit(context, update.limit);
  try {
  for (size_t r = 0; r < staged.rows.size() && matched < limit; ++r) {
    if (!passes(update.where.get(), context.eval(&sql, &staged.rows[r]))) continue;
    ++matched;
    Row row = staged.rows[r];
    // MySQL assigns left to right: a later SET sees an earlier one's value.
    for (size_t i = 0; i < update.set.size(); ++i) {
      const catalog::SqlColumn& column = sql.columns[targets[i]];
      const SqlValue value = evaluate_for_column(*update.set[i].value, context.eval(&sql, &row), column);
      row[targets[i]] = stored_value(column, value, r + 1);
    }
    bool differs = false;
    for (size_t c = 0; c < row.size(); ++c) {
      differs = differs || row[c].is_null() != staged.rows[r][c].is_null() ||
                (!row[c].is_null() && compare(row[c], staged.rows[r][c]) != 0);
    }
    if (!differs) continue;
    auto [at, index] = collision(staged, row, static_cast<int64_t>(r));
    if (at >= 0) throw_duplicate(staged, *index, row);
    const size_t before = row_bytes(staged.rows[r]);
    const size_t after = row_bytes(row);
    if (after > before) check_bound(context, table, after - before);
    staged.bytes = staged.bytes - before + after;
    originals.emplace_back(r, std::move(staged.rows[r]));
    staged.rows[r] = std::move(row);
    ++changed;
  }
  } catch (...) {
    for (auto& [r, old] : originals) {
      staged.bytes = staged.bytes - row_bytes(staged.rows[r]) + row_bytes(old);
      staged.rows[r] = std::move(old);
    }
    throw;
  }
  server::OkResult ok;
  ok.affected_rows = changed;
  ok.info = "Rows matched: " + std::to_string(matched) + "  Changed: " + std::to_string(changed) +
            "  Warnings: 0";
  return ok;
}

server::StatementResult delete_rows(StatementContext& context, TemporaryTable& table,
                                    const DeleteStatement& del) {
  if (!del.order_by.empty()) throw_not_supported("DELETE ... ORDER BY of a temporary table");
  const uint64_t limit = row_limit(context, del.limit);
  std::vector<Row> kept;
  uint64_t deleted = 0;
  size_t bytes = 0;
  for (Row& row : table.rows) {
    if (deleted < limit && passes(del.where.get(), context.eval(&table.sql, &row))) {
      ++deleted;
      continue;
    }
    bytes += row_bytes(row);
    kept.push_back(std::move(row));
  }
  table.rows = std::move(kept);
  table.bytes = bytes;
  server::OkResult ok;
  ok.affected_rows = deleted;
  return ok;
}

}  // namespace

server::StatementResult create_temporary_table(StatementContext& context,
                                               const CreateTableStatement& statement) {
  TemporaryTables& tables = session_tables(context);
  const std::string db = context.database_of(statement.table);
  if (!context.catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
  catalog::SqlTable table;
  if (statement.like) {
    const std::string from_db = context.database_of(*statement.like);
    if (TemporaryTable* source = tables.find(from_db, statement.like->name.name)) {
      table = source->sql;
    } else {
      table = context.catalog.get_table(from_db, statement.like->name.name).sql;
    }
  } else {
    table = catalog::table_from_create(statement, db);
  }
  table.db = db;
  table.name = statement.table.name.name;
  if (!tables.create(std::move(table), statement.if_not_exists)) {
    context.add_warning(1050, "Table '" + statement.table.name.name + "' already exists", "Note");
  }
  return server::OkResult{};
}

std::vector<ObjectName> drop_temporary_tables(StatementContext& context,
                                              const DropTableStatement& statement) {
  std::vector<ObjectName> left;
  std::string missing;
  for (const ObjectName& name : statement.tables) {
    const std::string db = context.database_of(name);
    if (context.temporary_tables != nullptr &&
        context.temporary_tables->drop(db, name.name.name)) {
      continue;
    }
    if (!statement.temporary) {
      left.push_back(name);
      continue;
    }
    if (statement.if_exists) {
      context.add_warning(1051, "Unknown table '" + db + "." + name.name.name + "'", "Note");
      continue;
    }
    if (!missing.empty()) missing += ",";
    missing += db + "." + name.name.name;
  }
  if (!missing.empty()) throw SqlException(1051, "42S02", "Unknown table '" + missing + "'");
  return left;
}

std::optional<server::StatementResult> write_temporary_table(StatementContext& context,
                                                             const Statement& statement) {
  if (context.temporary_tables == nullptr || context.temporary_tables->empty()) {
    return std::nullopt;
  }
  const ObjectName* target = nullptr;
  if (statement.kind == StatementKind::kInsert) {
    target = &statement.as<InsertStatement>().table;
  } else if (statement.kind == StatementKind::kUpdate) {
    const auto& update = statement.as<UpdateStatement>();
    if (update.join || update.tables.size() != 1 ||
        update.tables.front()->kind != TableRefKind::kTable) {
      return std::nullopt;
    }
    target = &update.tables.front()->table;
  } else if (statement.kind == StatementKind::kDelete) {
    if (statement.as<DeleteStatement>().join) return std::nullopt;
    target = &statement.as<DeleteStatement>().table;
  } else {
    return std::nullopt;
  }
  TemporaryTable* table =
      context.temporary_tables->find(context.database_of(*target), target->name.name);
  if (table == nullptr) return std::nullopt;
  switch (statement.kind) {
    case StatementKind::kInsert:
      return insert_rows(context, *table, statement.as<InsertStatement>());
    case StatementKind::kUpdate:
      return update_rows(context, *table, statement.as<UpdateStatement>());
    default:
      return delete_rows(context, *table, statement.as<DeleteStatement>());
  }
}

}  // namespace duo::sql::executor
