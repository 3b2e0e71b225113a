// Temporary tables in the session's memory; see temporary_tables.h.
#include "sql-frontend/executor/temporary_tables.h"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/expression.h"
#include "sql-frontend/executor/select_executor.h"
#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/executor/sql_value.h"

namespace duo::sql::executor {

TemporaryTable* TemporaryTables::find(const std::string& db, const std::string& name) {
  auto it = tables_.find(key(db, name));
  return it == tables_.end() ? nullptr : &it->second;
}

bool TemporaryTables::create(catalog::SqlTable table, bool if_not_exists, std::string engine) {
  const std::string k = key(table.db, table.name);
  if (tables_.count(k) != 0) {
    if (if_not_exists) return false;
    throw SqlException(1050, "42S01", "Table '" + table.name + "' already exists");
  }
  TemporaryTable created;
  created.sql = std::move(table);
  created.engine = std::move(engine);
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

// The rows to add, each a list of (column, value); nullopt: the column's DEFAULT.
using NewValues = std::vector<std::vector<std::pair<int, std::optional<SqlValue>>>>;

server::StatementResult add_rows(StatementContext& context, TemporaryTable& table,
                                 const NewValues& rows, bool replace, bool ignore);

// The columns an INSERT names (all, in order, when it names none).
std::vector<int> insert_columns(const catalog::SqlTable& sql,
                                const std::vector<Identifier>& names) {
  std::vector<int> columns;
  for (const Identifier& c : names) {
    const int at = sql.find_column(c.name);
    if (at < 0) throw_unknown_column(c.name, "field list");
    columns.push_back(at);
  }
  if (columns.empty()) {
    for (size_t c = 0; c < sql.columns.size(); ++c) columns.push_back(static_cast<int>(c));
  }
  return columns;
}

// `rows` (a query's) into `columns`: 1136 when the widths differ.
NewValues values_of(const std::vector<int>& columns, std::vector<Row> rows) {
  NewValues out;
  for (Row& row : rows) {
    if (row.size() != columns.size()) {
      throw SqlException(1136, "21S01", "Column count doesn't match value count at row " +
                                            std::to_string(out.size() + 1));
    }
    std::vector<std::pair<int, std::optional<SqlValue>>> values;
    for (size_t i = 0; i < row.size(); ++i) values.emplace_back(columns[i], std::move(row[i]));
    out.push_back(std::move(values));
  }
  return out;
}

server::StatementResult insert_rows(StatementContext& context, TemporaryTable& table,
                                    const InsertStatement& insert) {
  if (!insert.on_duplicate.empty()) {
    throw_not_supported("INSERT ... ON DUPLICATE KEY UPDATE into a temporary table");
  }
  const catalog::SqlTable& sql = table.sql;
  if (insert.select != nullptr) {
    // INSERT ... SELECT: the query's rows, read before any is added (it may read this
    // very table).
    const std::vector<int> columns = insert_columns(sql, insert.columns);
    return add_rows(context, table, values_of(columns, query_rows(context, *insert.select)),
                    insert.replace, insert.ignore);
  }
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
  NewValues evaluated;
  for (const auto& row : rows) {
    std::vector<std::pair<int, std::optional<SqlValue>>> values;
    for (const auto& [column, expr] : row) {
      if (expr->kind == ExprKind::kDefault) {
        values.emplace_back(column, std::nullopt);
      } else {
        values.emplace_back(column, evaluate_for_column(*expr, context.eval(), sql.columns[column]));
      }
    }
    evaluated.push_back(std::move(values));
  }
  return add_rows(context, table, evaluated, insert.replace, insert.ignore);
}

server::StatementResult add_rows(StatementContext& context, TemporaryTable& table,
                                 const NewValues& rows, bool replace, bool ignore) {
  const catalog::SqlTable& sql = table.sql;
  // Every row is made and checked before any is added: the statement is all or nothing.
  std::vector<Row> made;
  uint64_t affected = 0, first_generated = 0;
  uint64_t auto_increment = table.auto_increment;
  const int auto_column = sql.auto_increment_column();
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::optional<SqlValue>> values(sql.columns.size());
    for (const auto& [column, value] : rows[r]) values[column] = value;
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
        if (replace) {
          // REPLACE: the colliding rows go (each counts), then the row goes in.
          while (at >= 0) {
            table.bytes -= row_bytes(table.rows[at]);
            table.rows.erase(table.rows.begin() + at);
            ++affected;
            std::tie(at, index) = collision(table, row, -1);
          }
        } else if (ignore) {
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
    if (!replace) {
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

// The table column a query output is, when it is one of a cluster table.
std::optional<catalog::SqlColumn> source_column(
    StatementContext& context, const std::optional<server::ColumnDefinition41>& meta) {
  if (!meta || meta->org_table.empty() || meta->org_name.empty() || meta->schema.empty() ||
      !context.catalog.table_exists(meta->schema, meta->org_table)) {
    return std::nullopt;
  }
  const catalog::SqlTable source = context.catalog.get_table(meta->schema, meta->org_table).sql;
  const int at = source.find_column(meta->org_name);
  if (at < 0) return std::nullopt;
  return source.columns[at];
}

// The declared type of a CREATE ... SELECT column: the source column's when the output
// is one, else one that holds the values the query gave (MySQL types it by the
// expression; here by what came out).
std::string declared_type_of(StatementContext& context,
                             const std::optional<server::ColumnDefinition41>& meta,
                             const std::vector<Row>& rows, size_t column) {
  if (meta && !meta->org_table.empty() && !meta->org_name.empty() && !meta->schema.empty()) {
    try {
      const catalog::SqlTable source = context.catalog.get_table(meta->schema, meta->org_table).sql;
      const int at = source.find_column(meta->org_name);
      if (at >= 0) return source.columns[at].declared_type;
    } catch (const SqlException&) {
      // A temporary or system table's column: typed by the values below.
    }
  }
  SqlValue::Kind kind = SqlValue::Kind::kNull;
  SqlValue::TemporalType temporal = SqlValue::TemporalType::kNone;
  size_t longest = 1;
  size_t integer_digits = 1, scale = 0;  // DECIMAL: the widest value's
  for (const Row& row : rows) {
    const SqlValue& value = row[column];
    if (value.is_null()) continue;
    if (value.kind == SqlValue::Kind::kDecimal) {
      std::string digits = value.to_text();
      if (!digits.empty() && digits.front() == '-') digits.erase(0, 1);
      const size_t point = digits.find('.');
      integer_digits = std::max(integer_digits, point == std::string::npos ? digits.size() : point);
      if (point != std::string::npos) scale = std::max(scale, digits.size() - point - 1);
    }
    if (kind == SqlValue::Kind::kNull || kind == value.kind) {
      kind = value.kind;
      temporal = value.temporal_type;
    } else {
      kind = SqlValue::Kind::kString;  // mixed: text holds them all
      temporal = SqlValue::TemporalType::kNone;
    }
    longest = std::max(longest, value.to_text().size());
  }
  switch (kind) {
    case SqlValue::Kind::kInt:
      return "bigint";
    case SqlValue::Kind::kUInt:
      return "bigint unsigned";
    case SqlValue::Kind::kDouble:
      return "double";
    case SqlValue::Kind::kDecimal:
      return "decimal(" + std::to_string(std::min<size_t>(integer_digits + scale, 65)) + "," +
             std::to_string(std::min<size_t>(scale, 30)) + ")";
    default:
      break;
  }
  if (temporal == SqlValue::TemporalType::kDate) return "date";
  if (temporal == SqlValue::TemporalType::kDatetime) return "datetime(6)";
  if (temporal == SqlValue::TemporalType::kTime) return "time(6)";
  return "varchar(" + std::to_string(std::min<size_t>(std::max<size_t>(longest, 1), 16383)) + ")";
}

}  // namespace

server::StatementResult create_temporary_table(StatementContext& context,
                                               const CreateTableStatement& statement) {
  TemporaryTables& tables = session_tables(context);
  // MySQL's spelling of the ENGINE given (the table is in sqld whatever it says).
  std::string engine = "InnoDB";
  if (statement.options.engine) {
    std::string lower;
    for (char c : *statement.options.engine) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    engine = lower == "memory" || lower == "heap" ? "MEMORY"
             : lower == "myisam"                  ? "MyISAM"
             : lower == "ndb" || lower == "ndbcluster" ? "ndbcluster"
             : lower == "innodb"                  ? "InnoDB"
                                                  : *statement.options.engine;
  }
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
  } else if (statement.select && statement.columns.empty()) {
    // CREATE TEMPORARY TABLE t AS SELECT: the query's columns (no keys), then its rows.
    const DerivedRows described = describe_derived(context, *statement.select);
    std::vector<Row> rows = query_rows(context, *statement.select);
    table.db = db;
    table.name = statement.table.name.name;
    for (size_t c = 0; c < described.names.size(); ++c) {
      if (table.find_column(described.names[c]) >= 0) {
        throw SqlException(1060, "42S21", "Duplicate column name '" + described.names[c] + "'");
      }
      catalog::SqlColumn column;
      if (std::optional<catalog::SqlColumn> source = source_column(
              context, c < described.columns.size() ? described.columns[c] : std::nullopt)) {
        column = *source;  // its type, NULL-ability and default, as MySQL copies them
        column.auto_increment = false;
      } else {
        column.declared_type = declared_type_of(context, std::nullopt, rows, c);
        catalog::derive_storage(&column);
      }
      column.name = described.names[c];
      table.columns.push_back(std::move(column));
    }
    if (!tables.create(table, statement.if_not_exists, engine)) {
      context.add_warning(1050, "Table '" + table.name + "' already exists", "Note");
      return server::OkResult{};
    }
    std::vector<int> columns;
    for (size_t c = 0; c < table.columns.size(); ++c) columns.push_back(static_cast<int>(c));
    TemporaryTable* created = tables.find(db, table.name);
    try {
      return add_rows(context, *created, values_of(columns, std::move(rows)), false, false);
    } catch (...) {
      tables.drop(db, table.name);  // MySQL: a failed CREATE ... SELECT leaves no table
      throw;
    }
  } else {
    table = catalog::table_from_create(statement, db);
  }
  table.db = db;
  table.name = statement.table.name.name;
  if (!tables.create(std::move(table), statement.if_not_exists, engine)) {
    context.add_warning(1050, "Table '" + statement.table.name.name + "' already exists", "Note");
    return server::OkResult{};
  }
  if (statement.select) {
    // CREATE TEMPORARY TABLE t (defs) AS SELECT: the query's outputs fill the columns of
    // their names (MySQL adds outputs that name no column; here they are 1054).
    TemporaryTable* created = tables.find(db, statement.table.name.name);
    const DerivedRows described = describe_derived(context, *statement.select);
    std::vector<int> columns;
    for (const std::string& name : described.names) {
      const int at = created->sql.find_column(name);
      if (at < 0) throw_unknown_column(name, "field list");
      columns.push_back(at);
    }
    try {
      return add_rows(context, *created, values_of(columns, query_rows(context, *statement.select)),
                      false, false);
    } catch (...) {
      tables.drop(db, statement.table.name.name);
      throw;
    }
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
