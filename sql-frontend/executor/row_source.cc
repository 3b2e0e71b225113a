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

// Reads `keys` (with `lock`) in batches and calls `visit(k, row)` for the rows found that
// pass `matches(k, row)`, where k indexes `keys`, until `visit` returns false. Returns
// false when stopped early.
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
    for (size_t i = 0; i < ops.size(); ++i) {
      api::OpResult result = check(tx.result(ops[i]));
      if (result.status.is(ErrorCode::kNotFound)) continue;  // deleted meanwhile
      check(result.status);
      Row row = to_row(bound.sql, result.values);
      if (matches(begin + i, row) && !visit(begin + i, row)) return false;
    }
  }
  return true;
}

// True when `row` holds every fixed value (NULL never equals anything).
bool matches_fixed(const Row& row, const FixedColumns& fixed) {
  for (const auto& [column, value] : fixed) {
    if (column >= row.size() || row[column].is_null() || value.is_null() ||
        compare(row[column], value) != 0) {
      return false;
    }
  }
  return true;
}

void check_killed(const StatementContext& context) {
  if (context.session.interrupted()) {
    throw SqlException(1317, "70100", "Query execution was interrupted");
  }
}

// Runs one scan of `plan` (a range of its index, or the whole table) and calls
// `candidate(row)` for every row that passes the residual, until it returns false.
// Returns false when stopped early.
template <typename Candidate>
bool scan_rows(StatementContext& context, const catalog::BoundTable& bound, const AccessPlan& plan,
               const IndexRange* range, Candidate candidate) {
  api::Transaction& tx = context.transaction();
  api::ScanSpec spec;
  spec.filter = plan.filter;
  if (range != nullptr) {
    spec.index = plan.index;
    spec.low = range->low;
    spec.high = range->high;
    spec.low_inclusive = range->low_inclusive;
    spec.high_inclusive = range->high_inclusive;
    // A unique lookup returns at most one row: no need for a large first batch.
    if (plan.unique_lookup) spec.batch_rows = 1;
  }
  auto cursor = check(tx.scan(*bound.table_def, spec));
  storage::AttrValues values;
  while (check(cursor->next(&values))) {
    check_killed(context);
    Row row = to_row(bound.sql, values);
    if (!candidate(row)) return false;
  }
  return true;
}

// The rows of `plan` that pass its residual and `fixed`, visited until `visit` returns
// false; with a lock, re-read by key under the lock and judged by the whole WHERE.
// Returns false when stopped early.
bool run_plan(StatementContext& context, const catalog::BoundTable& bound, const Expr* where,
              const AccessPlan& plan, const FixedColumns& fixed, storage::LockMode lock,
              const std::function<bool(Row&)>& visit) {
  const catalog::SqlTable& table = bound.sql;
  auto passes_residual = [&](const Row& row) {
    if (!matches_fixed(row, fixed)) return false;
    EvalContext eval = context.eval(&table, &row);
    eval.clause = "where clause";
    for (const Expr* conjunct : plan.residual) {
      if (!passes(conjunct, eval)) return false;
    }
    return true;
  };
  if (plan.kind == AccessPlan::Kind::kKeyLookup) {
    return read_keys(
        context, bound, plan.keys, lock,
        [&](size_t, const Row& row) { return passes_residual(row); },
        [&](size_t, Row& row) { return visit(row); });
  }
  std::vector<storage::AttrValues> keys;  // locked reads: the candidates
  auto candidate = [&](Row& row) {
    if (!passes_residual(row)) return true;
    if (lock == storage::LockMode::kCommittedRead) return visit(row);
    if (keys.size() >= kStatementRowsMax) throw_too_many_rows();
    keys.push_back(key_of(table, row));
    return true;
  };
  if (plan.kind == AccessPlan::Kind::kIndexScan) {
    for (const IndexRange& range : plan.ranges) {
      if (!scan_rows(context, bound, plan, &range, candidate)) return false;
    }
  } else if (!scan_rows(context, bound, plan, nullptr, candidate)) {
    return false;
  }
  if (keys.empty()) return true;
  auto passes_where = [&](size_t, const Row& row) {
    if (!matches_fixed(row, fixed)) return false;
    EvalContext eval = context.eval(&table, &row);
    eval.clause = "where clause";
    return passes(where, eval);
  };
  return read_keys(context, bound, keys, lock, passes_where,
                   [&](size_t, Row& row) { return visit(row); });
}

AccessPlan plan_for(StatementContext& context, const catalog::BoundTable& bound, const Expr* where,
                    const FixedColumns& fixed) {
  return plan_access(bound.sql, where, context.eval(&bound.sql),
                     bound.table_def->schema.ordered_indexes, fixed);
}

}  // namespace

void for_each_row(StatementContext& context, const catalog::BoundTable& bound, const Expr* where,
                  storage::LockMode lock, const std::function<bool(Row&)>& visit) {
  const AccessPlan plan = plan_for(context, bound, where, {});
  run_plan(context, bound, where, plan, {}, lock, visit);
}

void for_each_row_batched(StatementContext& context, const catalog::BoundTable& bound,
                          const Expr* where, storage::LockMode lock,
                          const std::vector<FixedColumns>& sets,
                          const std::function<bool(size_t set, Row&)>& visit) {
  const catalog::SqlTable& table = bound.sql;
  size_t set = 0;
  while (set < sets.size()) {
    AccessPlan plan = plan_for(context, bound, where, sets[set]);
    if (plan.kind != AccessPlan::Kind::kKeyLookup) {
      const bool go_on = run_plan(context, bound, where, plan, sets[set], lock,
                                  [&](Row& row) { return visit(set, row); });
      if (!go_on) return;
      ++set;
      continue;
    }
    // Consecutive sets answered by key lookups: one batch of reads for all of them (up
    // to kLockedReadBatch keys, so the rows held here stay bounded), visited in order.
    struct Lookup {
      size_t set;
      AccessPlan plan;
    };
    std::vector<Lookup> lookups;
    std::vector<storage::AttrValues> keys;
    std::vector<size_t> key_lookup;  // keys[k] belongs to lookups[key_lookup[k]]
    while (true) {
      for (storage::AttrValues& key : plan.keys) {
        keys.push_back(std::move(key));
        key_lookup.push_back(lookups.size());
      }
      plan.keys.clear();
      lookups.push_back(Lookup{set, std::move(plan)});
      ++set;
      if (set == sets.size() || keys.size() >= kLockedReadBatch) break;
      plan = plan_for(context, bound, where, sets[set]);
      if (plan.kind != AccessPlan::Kind::kKeyLookup ||
          keys.size() + plan.keys.size() > kLockedReadBatch) {
        break;  // this set starts the next round
      }
    }
    std::vector<std::vector<Row>> rows(lookups.size());
    read_keys(
        context, bound, keys, lock,
        [&](size_t k, const Row& row) {
          const Lookup& lookup = lookups[key_lookup[k]];
          if (!matches_fixed(row, sets[lookup.set])) return false;
          EvalContext eval = context.eval(&table, &row);
          eval.clause = "where clause";
          for (const Expr* conjunct : lookup.plan.residual) {
            if (!passes(conjunct, eval)) return false;
          }
          return true;
        },
        [&](size_t k, Row& row) {
          rows[key_lookup[k]].push_back(std::move(row));
          return true;
        });
    for (size_t l = 0; l < lookups.size(); ++l) {
      for (Row& row : rows[l]) {
        if (!visit(lookups[l].set, row)) return;
      }
    }
  }
}

}  // namespace duo::sql::executor
