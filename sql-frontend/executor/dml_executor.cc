// INSERT, UPDATE and DELETE over the cluster; see statement_context.h.
//
// Every statement touches one table. Rows are found by the table's row source
// (row_source.h); writes are key operations in the statement's transaction: UPDATE/DELETE
// collect the matching keys first and then update or delete them in the same
// transaction, so the statement commits (or fails) as a whole.
#include <algorithm>
#include <map>

#include "sql-frontend/catalog/auto_increment.h"
#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/access_plan.h"
#include "sql-frontend/executor/row_source.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

namespace {

// The first AUTO_INCREMENT value of a table whose counter does not exist yet: MAX(column)
// + 1, by a scan in a transaction of its own (rows inserted with explicit values count).
uint64_t auto_increment_seed(StatementContext& context, const catalog::BoundTable& bound,
                             uint16_t column) {
  uint64_t max_value = 0;
  auto tx = check(context.api_session.begin());
  api::ScanSpec spec;
  spec.columns = {column};
  auto cursor = check(tx->scan(*bound.table_def, spec));
  storage::AttrValues values;
  while (check(cursor->next(&values))) {
    if (values.size() == 0 || values.entry(0).is_null) continue;
    SqlValue v = from_storage(bound.sql.columns[column], values.value(0));
    const uint64_t u =
        v.kind == SqlValue::Kind::kUInt ? v.u : static_cast<uint64_t>(std::max<int64_t>(0, v.i));
    max_value = std::max(max_value, u);
  }
  cursor.reset();
  check(tx->execute(api::ExecType::kCommit));
  return max_value + 1;
}

bool needs_generated_value(const std::optional<SqlValue>& value) {
  return !value || value->is_null() || (value->kind == SqlValue::Kind::kInt && value->i == 0) ||
         (value->kind == SqlValue::Kind::kUInt && value->u == 0);
}

}  // namespace

server::StatementResult execute_insert(StatementContext& context,
                                       const InsertStatement& statement) {
  if (statement.select) throw_not_supported("INSERT ... SELECT");
  if (!statement.on_duplicate.empty()) throw_not_supported("ON DUPLICATE KEY UPDATE");
  if (statement.ignore) throw_not_supported("INSERT IGNORE");
  const std::string db = context.database_of(statement.table);
  if (!context.catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
  const catalog::BoundTable bound = context.catalog.get_table(db, statement.table.name.name);
  const catalog::SqlTable& table = bound.sql;

  // Target columns, and the value expressions of each row.
  std::vector<uint16_t> targets;
  std::vector<std::vector<const Expr*>> rows;
  if (!statement.set.empty()) {
    rows.emplace_back();
    for (const Assignment& a : statement.set) {
      targets.push_back(resolve_column(*a.column, table, "field list"));
      rows.back().push_back(a.value.get());
    }
  } else {
    if (statement.columns.empty()) {
      for (size_t c = 0; c < table.columns.size(); ++c) targets.push_back(static_cast<uint16_t>(c));
    } else {
      for (const Identifier& id : statement.columns) {
        const int c = table.find_column(id.name);
        if (c < 0) throw_unknown_column(id.name, "field list");
        targets.push_back(static_cast<uint16_t>(c));
      }
    }
    for (size_t r = 0; r < statement.rows.size(); ++r) {
      if (statement.rows[r].size() != targets.size()) {
        throw SqlException(
            1136, "21S01",
            "Column count doesn't match value count at row " + std::to_string(r + 1));
      }
      std::vector<const Expr*> exprs;
      for (const ExprPtr& e : statement.rows[r]) exprs.push_back(e.get());
      rows.push_back(std::move(exprs));
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    for (size_t j = i + 1; j < targets.size(); ++j) {
      if (targets[i] == targets[j]) {
        throw SqlException(1110, "42000",
                           "Column '" + table.columns[targets[i]].name + "' specified twice");
      }
    }
  }

  // Evaluate every row first: the AUTO_INCREMENT values are then reserved in one go.
  const EvalContext eval = context.eval();
  std::vector<std::vector<std::optional<SqlValue>>> row_values;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::optional<SqlValue>> values(table.columns.size());
    for (size_t i = 0; i < targets.size(); ++i) {
      const Expr* e = rows[r][i];
      if (e->kind == ExprKind::kDefault) continue;
      values[targets[i]] = evaluate(*e, eval);
    }
    row_values.push_back(std::move(values));
  }
  const int auto_column = table.auto_increment_column();
  uint64_t first_generated = 0;
  uint64_t explicit_max = 0;
  bool any_explicit = false;
  if (auto_column >= 0) {
    uint64_t needed = 0;
    for (const auto& values : row_values) needed += needs_generated_value(values[auto_column]);
    const std::string counter = catalog::cluster_table_name(table.db, table.name);
    if (needed > 0) {
      first_generated = catalog::reserve_auto_increment(
          context.catalog.cluster(), context.api_session, counter, needed, [&]() {
            return auto_increment_seed(context, bound, static_cast<uint16_t>(auto_column));
          });
    }
    uint64_t next = first_generated;
    for (auto& values : row_values) {
      std::optional<SqlValue>& value = values[auto_column];
      if (needs_generated_value(value)) {
        value = SqlValue::of_uint(next++);
      } else if (value->to_double() > 0) {
        any_explicit = true;
        explicit_max =
            std::max<uint64_t>(explicit_max, value->kind == SqlValue::Kind::kUInt
                                                 ? value->u
                                                 : static_cast<uint64_t>(value->to_int()));
      }
    }
  }
  std::vector<storage::AttrValues> encoded_rows;
  for (size_t r = 0; r < row_values.size(); ++r) {
    storage::AttrValues row;
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const catalog::SqlColumn& column = table.columns[c];
      std::optional<SqlValue>& value = row_values[r][c];
      if (!value) {
        if (column.has_default) {
          value =
              column.default_value ? SqlValue::of_string(*column.default_value) : SqlValue::null();
        } else if (column.nullable) {
          value = SqlValue::null();
        } else {
          throw SqlException(1364, "HY000",
                             "Field '" + column.name + "' doesn't have a default value");
        }
      }
      if (value->is_null()) {
        if (!column.nullable) {
          throw SqlException(1048, "23000", "Column '" + column.name + "' cannot be null");
        }
        row.add_null(static_cast<uint16_t>(c));
      } else {
        row.add(static_cast<uint16_t>(c), to_storage(column, *value, r + 1));
      }
    }
    encoded_rows.push_back(std::move(row));
  }
  if (encoded_rows.empty()) return server::OkResult{};
  storage::AttrValues hint_key;
  for (uint16_t c : table.primary_key().columns) {
    const int i = encoded_rows.front().find(c);
    hint_key.add(c, encoded_rows.front().value(i));
  }
  api::Transaction& tx = context.transaction(bound.table_def.get(), &hint_key);
  for (storage::AttrValues& row : encoded_rows) check(tx.insert(*bound.table_def, std::move(row)));
  context.execute(true);
  context.finish();
  if (any_explicit) {
    // Later generated values must not collide with the explicit ones.
    catalog::raise_auto_increment(context.catalog.cluster(), context.api_session,
                                  catalog::cluster_table_name(table.db, table.name), explicit_max);
  }
  server::OkResult ok;
  ok.affected_rows = encoded_rows.size();
  if (first_generated != 0) {
    ok.last_insert_id = first_generated;
    context.last_insert_id = first_generated;
  }
  if (rows.size() > 1) {
    ok.info = "Records: " + std::to_string(rows.size()) + "  Duplicates: 0  Warnings: 0";
  }
  return ok;
}

namespace {

// `SET k = k + n` / `k = k - n` / `k = n + k` on an integer non-key column: the delta.
std::optional<int64_t> increment_of(const Assignment& a, uint16_t column,
                                    const catalog::SqlTable& table, const EvalContext& eval) {
  if (!storage::is_integer(table.columns[column].storage.type) || table.is_key_column(column)) {
    return std::nullopt;
  }
  if (a.value->kind != ExprKind::kBinary) return std::nullopt;
  const auto& binary = a.value->as<BinaryExpr>();
  if (binary.op != BinaryOp::kAdd && binary.op != BinaryOp::kSub) return std::nullopt;
  const Expr* self = binary.left.get();
  const Expr* delta = binary.right.get();
  if (binary.op == BinaryOp::kAdd && self->kind != ExprKind::kColumn) std::swap(self, delta);
  if (self->kind != ExprKind::kColumn || !is_constant(*delta)) return std::nullopt;
  if (resolve_column(self->as<ColumnExpr>(), table, "field list") != column) return std::nullopt;
  SqlValue v = evaluate(*delta, eval);
  if (v.kind != SqlValue::Kind::kInt) return std::nullopt;
  if (binary.op == BinaryOp::kSub) {
    if (v.i == INT64_MIN) return std::nullopt;
    return -v.i;
  }
  return v.i;
}

}  // namespace

server::StatementResult execute_update(StatementContext& context,
                                       const UpdateStatement& statement) {
  if (statement.tables.size() != 1 || statement.tables[0]->kind != TableRefKind::kTable) {
    throw_not_supported("multi-table UPDATE");
  }
  if (!statement.order_by.empty() || statement.limit)
    throw_not_supported("UPDATE ... ORDER BY/LIMIT");
  const ObjectName& name = statement.tables[0]->table;
  const std::string db = context.database_of(name);
  if (!context.catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
  const catalog::BoundTable bound = context.catalog.get_table(db, name.name.name);
  const catalog::SqlTable& table = bound.sql;
  std::vector<uint16_t> targets;
  for (const Assignment& a : statement.set) {
    const uint16_t c = resolve_column(*a.column, table, "field list");
    if (table.is_key_column(c)) throw_not_supported("UPDATE of a primary key column");
    if (std::find(targets.begin(), targets.end(), c) != targets.end()) {
      throw_not_supported("assigning one column twice in UPDATE");
    }
    targets.push_back(c);
  }

  // `UPDATE t SET k = k + 1 WHERE <primary key> = ?`: one interpreted update per key,
  // applied on the data node without reading the row first.
  const EvalContext constants = context.eval(&table);
  const AccessPlan plan = plan_access(table, statement.where.get(), constants);
  if (plan.kind == AccessPlan::Kind::kKeyLookup && plan.residual.empty()) {
    storage::InterpretedUpdate program;
    bool interpretable = true;
    for (size_t i = 0; i < targets.size() && interpretable; ++i) {
      std::optional<int64_t> delta = increment_of(statement.set[i], targets[i], table, constants);
      if (!delta)
        interpretable = false;
      else
        program.add(targets[i], *delta);
    }
    if (interpretable) {
      if (plan.keys.empty()) {
        context.finish();
        return server::OkResult{0, 0, 0, "Rows matched: 0  Changed: 0  Warnings: 0"};
      }
      api::Transaction& tx = context.transaction(bound.table_def.get(), &plan.keys.front());
      std::vector<uint32_t> ops;
      for (const storage::AttrValues& key : plan.keys) {
        ops.push_back(check(tx.interpreted_update(*bound.table_def, key, program,
                                                  api::OpOptions{.ignore_error = true})));
      }
      context.execute(false);
      uint64_t changed = 0;
      for (uint32_t op : ops) {
        api::OpResult result = check(tx.result(op));
        if (result.status.is(ErrorCode::kNotFound)) continue;
        check(result.status);
        if (!result.filtered) ++changed;
      }
      context.finish();
      const std::string n = std::to_string(changed);
      return server::OkResult{changed, 0, 0,
                              "Rows matched: " + n + "  Changed: " + n + "  Warnings: 0"};
    }
  }

  // General case: read the matching rows, compute the new values here, update by key.
  struct Change {
    storage::AttrValues key;
    storage::AttrValues values;
  };
  std::vector<Change> changes;
  uint64_t matched = 0;
  for_each_row(context, bound, statement.where.get(), storage::LockMode::kExclusive, [&](Row& row) {
    ++matched;
    if (changes.size() >= kStatementRowsMax) throw_too_many_rows();
    EvalContext eval = context.eval(&table, &row);
    Change change;
    bool differs = false;
    for (size_t i = 0; i < targets.size(); ++i) {
      const catalog::SqlColumn& column = table.columns[targets[i]];
      SqlValue v;
      if (statement.set[i].value->kind == ExprKind::kDefault) {
        v = column.has_default && column.default_value ? SqlValue::of_string(*column.default_value)
                                                       : SqlValue::null();
      } else {
        v = evaluate(*statement.set[i].value, eval);
      }
      if (v.is_null()) {
        if (!column.nullable) {
          throw SqlException(1048, "23000", "Column '" + column.name + "' cannot be null");
        }
        differs |= !row[targets[i]].is_null();
        change.values.add_null(targets[i]);
      } else {
        std::string bytes = to_storage(column, v, matched);
        differs |= row[targets[i]].is_null() ||
                   storage::compare_values(column.storage, bytes,
                                           to_storage(column, row[targets[i]], matched)) != 0 ||
                   from_storage(column, bytes).to_text() != row[targets[i]].to_text();
        change.values.add(targets[i], bytes);
      }
    }
    if (differs) {
      change.key = key_of(table, row);
      changes.push_back(std::move(change));
    }
    return true;
  });
  if (!changes.empty()) {
    api::Transaction& tx = context.transaction();
    for (Change& change : changes) {
      check(tx.update(*bound.table_def, std::move(change.key), std::move(change.values)));
    }
    context.execute(true);
  }
  context.finish();
  return server::OkResult{changes.size(), 0, 0,
                          "Rows matched: " + std::to_string(matched) +
                              "  Changed: " + std::to_string(changes.size()) + "  Warnings: 0"};
}

server::StatementResult execute_delete(StatementContext& context,
                                       const DeleteStatement& statement) {
  if (!statement.order_by.empty() || statement.limit)
    throw_not_supported("DELETE ... ORDER BY/LIMIT");
  const std::string db = context.database_of(statement.table);
  if (!context.catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
  const catalog::BoundTable bound = context.catalog.get_table(db, statement.table.name.name);
  const catalog::SqlTable& table = bound.sql;

  const AccessPlan plan = plan_access(table, statement.where.get(), context.eval(&table));
  if (plan.kind == AccessPlan::Kind::kKeyLookup && plan.residual.empty()) {
    // By key: delete directly; a missing row is not an error, just not counted.
    if (plan.keys.empty()) {
      context.finish();
      return server::OkResult{};
    }
    api::Transaction& tx = context.transaction(bound.table_def.get(), &plan.keys.front());
    std::vector<uint32_t> ops;
    for (const storage::AttrValues& key : plan.keys) {
      ops.push_back(check(tx.remove(*bound.table_def, key, api::OpOptions{.ignore_error = true})));
    }
    context.execute(false);
    uint64_t deleted = 0;
    for (uint32_t op : ops) {
      api::OpResult result = check(tx.result(op));
      if (result.status.is(ErrorCode::kNotFound)) continue;
      check(result.status);
      ++deleted;
    }
    context.finish();
    return server::OkResult{deleted, 0, 0, ""};
  }
  std::vector<storage::AttrValues> keys;
  for_each_row(context, bound, statement.where.get(), storage::LockMode::kExclusive, [&](Row& row) {
    if (keys.size() >= kStatementRowsMax) throw_too_many_rows();
    keys.push_back(key_of(table, row));
    return true;
  });
  if (!keys.empty()) {
    api::Transaction& tx = context.transaction();
    for (storage::AttrValues& key : keys) check(tx.remove(*bound.table_def, std::move(key)));
    context.execute(true);
  }
  context.finish();
  return server::OkResult{keys.size(), 0, 0, ""};
}

}  // namespace duo::sql::executor
