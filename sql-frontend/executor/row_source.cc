// Row sources over access plans; see row_source.h.
#include "sql-frontend/executor/row_source.h"

#include <algorithm>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/access_plan.h"

namespace duo::sql::executor {

// A row of `table` from the values a read or scan returned.
Row to_row(const catalog::SqlTable& table, const storage::AttrValues& values) {
  Row row(table.columns.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const storage::AttrValues::Entry& entry = values.entry(i);
    if (entry.column >= row.size() || entry.is_null) continue;
    row[entry.column] = from_storage(table.columns[entry.column], values.value(i));
  }
  return row;
}

storage::AttrValues key_of(const catalog::SqlTable& table, const Row& row) {
  storage::AttrValues key;
  for (uint16_t column : table.primary_key().columns) {
    key.add(column, to_storage(table.columns[column], row[column], 1));
  }
  return key;
}

namespace {

// Keys read with a lock per round trip: bounds the operations in flight of one batch.
constexpr size_t kLockedReadBatch = 256;

// Reads `keys` (with `lock`) in batches and calls `visit(row)` for the rows found that
// pass `matches`, until `visit` returns false. Returns false when stopped early.
template <typename Matches, typename Visit>
bool read_keys(StatementContext& context, const catalog::BoundTable& bound,
               const std::vector<storage::AttrValues>& keys, storage::LockMode lock,
               Matches matches, Visit visit) {
  for (size_t begin = 0; begin < keys.size(); begin += kLockedReadBatch) {
    const size_t end = std::min(keys.size(), begin + kLockedReadBatch);
    api::Transaction& tx = context.transaction(bound.table_def.get(), &keys[begin]);
    std::vector<uint32_t> ops;
    for (size_t k = begin; k < end; ++k) {
      ops.push_back(check(
          tx.read(*bound.table_def, keys[k], {}, lock, api::OpOptions{.ignore_error = true})));
    }
    context.execute(false);
    for (uint32_t op : ops) {
      api::OpResult result = check(tx.result(op));
      if (result.status.is(ErrorCode::kNotFound)) continue;  // deleted meanwhile
      check(result.status);
      Row row = to_row(bound.sql, result.values);
      if (matches(row) && !visit(row)) return false;
    }
  }
  return true;
}

}  // namespace

void for_each_row(StatementContext& context, const catalog::BoundTable& bound, const Expr* where,
                  storage::LockMode lock, const std::function<bool(Row&)>& visit) {
  const catalog::SqlTable& table = bound.sql;
  const EvalContext constants = context.eval(&table);
  const AccessPlan plan = plan_access(table, where, constants);
  auto passes_residual = [&](const Row& row) {
    EvalContext eval = context.eval(&table, &row);
    eval.clause = "where clause";
    for (const Expr* conjunct : plan.residual) {
      if (!passes(conjunct, eval)) return false;
    }
    return true;
  };
  if (plan.kind == AccessPlan::Kind::kKeyLookup) {
    read_keys(context, bound, plan.keys, lock, passes_residual, visit);
    return;
  }
  api::Transaction& tx = context.transaction();
  api::ScanSpec spec;
  spec.filter = plan.filter;
  auto cursor = check(tx.scan(*bound.table_def, spec));
  storage::AttrValues values;
  std::vector<storage::AttrValues> keys;  // locked reads: the candidates
  while (check(cursor->next(&values))) {
    if (context.session.killed != nullptr && context.session.killed->load()) {
      throw SqlException(1317, "70100", "Query execution was interrupted");
    }
    Row row = to_row(table, values);
    if (!passes_residual(row)) continue;
    if (lock == storage::LockMode::kCommittedRead) {
      if (!visit(row)) return;
      continue;
    }
    if (keys.size() >= kStatementRowsMax) {
      throw_too_many_rows();
    }
    keys.push_back(key_of(table, row));
  }
  cursor.reset();
  if (keys.empty()) return;
  auto passes_where = [&](const Row& row) {
    EvalContext eval = context.eval(&table, &row);
    eval.clause = "where clause";
    return passes(where, eval);
  };
  read_keys(context, bound, keys, lock, passes_where, visit);
}
void for_each_row_batched(StatementContext& context, const catalog::BoundTable& bound,
                          const Expr* where, storage::LockMode lock,
                          const std::vector<FixedColumns>& sets,
                          const std::function<bool(size_t set, Row&)>& visit) {
  // First version: one row source per set, the fixed columns checked in sqld.
  for (size_t set = 0; set < sets.size(); ++set) {
    bool stopped = false;
    for_each_row(context, bound, where, lock, [&](Row& row) {
      for (const auto& [column, value] : sets[set]) {
        if (row[column].is_null() || value.is_null() || compare(row[column], value) != 0) {
          return true;
        }
      }
      if (!visit(set, row)) {
        stopped = true;
        return false;
      }
      return true;
    });
    if (stopped) return;
  }
}
}  // namespace duo::sql::executor
