// Multi-table UPDATE and DELETE (MySQL's `UPDATE t1 JOIN t2 ON ... SET t1.a = t2.b WHERE
// ...`, `DELETE t1, t2 FROM t1 JOIN t2 ... WHERE ...`, `DELETE FROM t1 USING t1 JOIN t2
// ...`).
//
// The parser hands the tables and the WHERE over as a SELECT block; it is bound and
// joined as a SELECT's FROM is (select_binding.h, join_executor.h), every table read
// under an exclusive lock, so the rows cannot change between the join and the writes.
// For each joined row the values of the assignments (UPDATE) are computed from that row,
// or the target tables' rows are noted (DELETE); a target row met again by a later
// joined row is written once, by its first match, as in MySQL. The writes then go into
// the statement's transaction, which commits (or fails) as a whole.
//
// Not supported (1235): ORDER BY/LIMIT (MySQL refuses them too: 1221), assigning a
// primary-key column, subqueries in the WHERE, writing a derived table or system view.
//
// Thread-safety: one session thread (the StatementContext's).
#include <map>
#include <set>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/join_executor.h"
#include "sql-frontend/executor/row_source.h"
#include "sql-frontend/executor/select_binding.h"
#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/parser/ascii_case.h"

namespace duo::sql::executor {

namespace {

// The joined tables of `block`, bound for writing: derived tables cannot be read here.
BoundSelect bind_join(StatementContext& context, const SelectBlock& block) {
  const RunDerived no_derived = [](const QueryExpr&) -> DerivedRows {
    throw_not_supported("a derived table in a multi-table UPDATE or DELETE");
  };
  return bind_select_block(context, block, nullptr, no_derived);
}

// Runs the join under exclusive locks, calling `on_row()` for each joined row.
void for_each_joined_row(StatementContext& context, BoundSelect& select,
                         const std::function<void(const EvalContext&)>& on_row) {
  EvalContext base = context.eval();
  base.scopes = &select.scopes;
  base.clause = "where clause";
  for (const Expr* condition : select.constant_conditions) {
    if (!passes(condition, base)) return;
  }
  JoinExecutor join(context, select, base, storage::LockMode::kExclusive);
  join.run([&] {
    on_row(base);
    return true;
  });
}

const catalog::BoundTable& writable(const BoundSelect& select, size_t scope) {
  const JoinLevel& level = select.levels[scope];
  if (!level.bound) throw_not_supported("writing a derived table or system view");
  return *level.bound;
}

// The target table's rows, each once: encoded primary key -> what to write.
template <typename T>
using RowsByKey = std::map<std::string, std::pair<storage::AttrValues, T>>;

}  // namespace

server::StatementResult execute_multi_table_update(StatementContext& context,
                                                   const UpdateStatement& statement) {
  context.warnings_are_errors = !statement.ignore;
  BoundSelect select = bind_join(context, *statement.join);
  EvalContext resolver = context.eval();
  resolver.scopes = &select.scopes;
  resolver.clause = "field list";
  // Each assignment's (scope, column); its scope must be a cluster table.
  std::vector<ColumnRef> targets;
  for (const Assignment& a : statement.set) {
    const ColumnRef ref = resolve(*a.column, resolver);
    const catalog::BoundTable& bound = writable(select, ref.scope);
    if (bound.sql.is_key_column(ref.column)) {
      throw_not_supported("assigning a primary-key column in a multi-table UPDATE");
    }
    for (const ColumnRef& other : targets) {
      if (other.scope == ref.scope && other.column == ref.column) {
        throw_not_supported("assigning one column twice in UPDATE");
      }
    }
    targets.push_back(ref);
  }
  // The assignments of each target table, by scope.
  std::map<size_t, std::vector<size_t>> assignments_of;
  for (size_t i = 0; i < targets.size(); ++i) assignments_of[targets[i].scope].push_back(i);
  std::vector<RowsByKey<storage::AttrValues>> changes(select.scopes.size());
  uint64_t row_number = 0;
  uint64_t rows_matched = 0;
  for_each_joined_row(context, select, [&](const EvalContext& eval) {
    ++row_number;
    for (const auto& [scope, assignments] : assignments_of) {
      const Row* row = select.scopes[scope].row;
      if (row == nullptr || row->empty()) continue;  // NULL-extended by a LEFT JOIN
      const catalog::SqlTable& table = select.levels[scope].table();
      storage::AttrValues key = key_of(table, *row);
      const std::string key_bytes = key.data();
      // The first joined row that matches a target row decides its values.
      auto [it, first_match] = changes[scope].try_emplace(key_bytes);
      if (!first_match) continue;
      if (++rows_matched > kStatementRowsMax) throw_too_many_rows();
      it->second.first = std::move(key);
      for (size_t i : assignments) {
        const uint16_t c = targets[i].column;
        const catalog::SqlColumn& column = table.columns[c];
        const SqlValue v = statement.set[i].value->kind == ExprKind::kDefault
                               ? (column.has_default && column.default_value
                                      ? SqlValue::of_string(*column.default_value)
                                      : SqlValue::null())
                               : evaluate_for_column(*statement.set[i].value, eval, column);
        const SqlValue& old = (*row)[c];
        if (v.is_null()) {
          if (!column.nullable) {
            throw SqlException(1048, "23000", "Column '" + column.name + "' cannot be null");
          }
          if (!old.is_null()) it->second.second.add_null(c);
          continue;
        }
        const std::string bytes = to_storage(column, v, row_number);
        // Changed as MySQL decides it: on the stored bytes.
        if (old.is_null() || to_storage(column, old, row_number) != bytes) {
          it->second.second.add(c, bytes);
        }
      }
    }
  });
  uint64_t rows_changed = 0;
  api::Transaction* tx = nullptr;
  for (size_t scope = 0; scope < changes.size(); ++scope) {
    for (auto& [key_bytes, change] : changes[scope]) {
      if (change.second.empty()) continue;
      if (tx == nullptr) tx = &context.transaction();
      check(tx->update(*writable(select, scope).table_def, change.first, std::move(change.second)));
      ++rows_changed;
    }
  }
  if (tx != nullptr) context.execute(true);
  context.finish();
  return server::OkResult{rows_changed, 0, 0,
                          "Rows matched: " + std::to_string(rows_matched) +
                              "  Changed: " + std::to_string(rows_changed) + "  Warnings: 0"};
}

server::StatementResult execute_multi_table_delete(StatementContext& context,
                                                   const DeleteStatement& statement) {
  BoundSelect select = bind_join(context, *statement.join);
  // Each target names one table of the join, by its alias (or name when it has none).
  std::vector<size_t> target_scopes;
  for (const ObjectName& target : statement.targets) {
    std::optional<size_t> found;
    for (size_t scope = 0; scope < select.scopes.size(); ++scope) {
      const Scope& s = select.scopes[scope];
      if (!ascii_iequals(s.name, target.name.name)) continue;
      if (target.db && !ascii_iequals(s.db, target.db->name)) continue;
      found = scope;
    }
    if (!found) {
      throw SqlException(1109, "42S02",
                         "Unknown table '" + target.name.name + "' in MULTI DELETE");
    }
    writable(select, *found);
    target_scopes.push_back(*found);
  }
  std::vector<RowsByKey<bool>> rows(select.scopes.size());
  uint64_t rows_seen = 0;
  for_each_joined_row(context, select, [&](const EvalContext&) {
    for (size_t scope : target_scopes) {
      const Row* row = select.scopes[scope].row;
      if (row == nullptr || row->empty()) continue;  // NULL-extended by a LEFT JOIN
      storage::AttrValues key = key_of(select.levels[scope].table(), *row);
      const std::string key_bytes = key.data();
      if (rows[scope].try_emplace(key_bytes, std::move(key), true).second &&
          ++rows_seen > kStatementRowsMax) {
        throw_too_many_rows();
      }
    }
  });
  uint64_t deleted = 0;
  api::Transaction* tx = nullptr;
  for (size_t scope = 0; scope < rows.size(); ++scope) {
    for (auto& [key_bytes, row] : rows[scope]) {
      if (tx == nullptr) tx = &context.transaction();
      check(tx->remove(*writable(select, scope).table_def, std::move(row.first)));
      ++deleted;
    }
  }
  if (tx != nullptr) context.execute(true);
  context.finish();
  return server::OkResult{deleted, 0, 0, ""};
}

}  // namespace duo::sql::executor
