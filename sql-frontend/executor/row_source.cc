// Row sources over access plans; see row_source.h.
#include "sql-frontend/executor/row_source.h"

#include <algorithm>
#include <cstdint>

#include "ndb-kernel/protocol/unique_index.h"
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

bool holds_unique_value(const catalog::SqlTable& table,
                        const ::duo::protocol::UniqueIndexTable& index, const Row& row,
                        const storage::AttrValues& value) {
  for (uint32_t k = 0; k < index.key_columns; ++k) {
    const uint16_t column = index.base_columns[k];
    if (column >= row.size() || row[column].is_null()) return false;
    const int at = value.find(static_cast<uint16_t>(k));
    if (at < 0 || value.entry(at).is_null) return false;
    std::string stored;
    try {
      stored = to_storage(table.columns[column], row[column], 1);
    } catch (const SqlException&) {
      return false;  // cannot be the value of an index entry
    }
    // Compared as the index compares: 'a' holds the value 'A' under a _ci collation.
    if (storage::compare_values(table.columns[column].storage, stored, value.value(at)) != 0) {
      return false;
    }
  }
  return true;
}

namespace {

// Reads `keys` of `table` (with `lock`) in batches of kLockedReadBatch, one round trip
// each, and calls `found(k, values)` for the keys that exist, where k indexes `keys`,
// until it returns false. Returns false when stopped early.
template <typename Found>
bool read_batches(StatementContext& context, const ::duo::protocol::TableDef& table,
                  const std::vector<storage::AttrValues>& keys, storage::LockMode lock,
                  const std::vector<uint16_t>& columns, Found found) {
  for (size_t begin = 0; begin < keys.size(); begin += kLockedReadBatch) {
    const size_t end = std::min(keys.size(), begin + kLockedReadBatch);
    api::Transaction& tx = context.read_transaction(lock, &table, &keys[begin]);
    std::vector<uint32_t> ops;
    ops.reserve(end - begin);
    for (size_t k = begin; k < end; ++k) {
      ops.push_back(
          check(tx.read(table, keys[k], columns, lock, api::OpOptions{.ignore_error = true})));
    }
    context.execute_reads();
    // Taken before `found` runs: it may start the next batch, which replaces a
    // transaction this batch committed (StatementContext::read_transaction).
    std::vector<api::OpResult> results;
    results.reserve(ops.size());
    for (uint32_t op : ops) results.push_back(check(tx.result(op)));
    for (size_t i = 0; i < results.size(); ++i) {
      const api::OpResult& result = results[i];
      if (result.status.is(ErrorCode::kNotFound)) continue;  // deleted meanwhile
      check(result.status);
      if (!found(begin + i, result.values)) return false;
    }
  }
  return true;
}

// Reads `keys` (with `lock`) in batches and calls `visit(k, row)` for the rows found that
// pass `matches(k, row)`, where k indexes `keys`, until `visit` returns false. Returns
// false when stopped early.
template <typename Matches, typename Visit>
bool read_keys(StatementContext& context, const catalog::BoundTable& bound,
               const std::vector<storage::AttrValues>& keys, storage::LockMode lock,
               const std::vector<uint16_t>& columns, Matches matches, Visit visit) {
  return read_batches(context, *bound.table_def, keys, lock, columns,
                      [&](size_t k, const storage::AttrValues& values) {
                        Row row = to_row(bound.sql, values);
                        return !matches(k, row) || visit(k, row);
                      });
}

// The hidden tables of a table's unique indexes (protocol/unique_index.h), derived once
// from its definition when a plan first needs one, as every block derives them.
class UniqueIndexes {
 public:
  explicit UniqueIndexes(const catalog::BoundTable& bound) : bound_(bound) {}

  // The hidden table of ordered index number `index` (a UNIQUE one).
  const ::duo::protocol::UniqueIndexTable& of(int32_t index) {
    if (!derived_) {
      tables_ = check(::duo::protocol::unique_index_tables(*bound_.table_def));
      derived_ = true;
    }
    for (const ::duo::protocol::UniqueIndexTable& table : tables_) {
      if (static_cast<int32_t>(table.ordinal) == index) return table;
    }
    throw SqlException(1105, "HY000",
                       "unique index " + std::to_string(index) + " of table '" + bound_.sql.name +
                           "' has no hidden table");
  }

 private:
  const catalog::BoundTable& bound_;
  bool derived_ = false;
  std::vector<::duo::protocol::UniqueIndexTable> tables_;
};

// One value asked of a unique index, and the base row's key its entry named.
struct UniqueProbe {
  const ::duo::protocol::UniqueIndexTable* index = nullptr;
  const storage::AttrValues* value = nullptr;  // the hidden table's key
  size_t owner = 0;                            // the caller's number for it
};

// The first round trip of unique lookups: reads the hidden-table entry of every probe
// (with `lock`: a locked entry keeps its value from moving to another row until the
// transaction ends) and appends the base primary key each names to `keys`, with the probe
// it came from to `key_probe`. A value without an entry adds nothing.
void read_unique_entries(StatementContext& context, const std::vector<UniqueProbe>& probes,
                         storage::LockMode lock, std::vector<storage::AttrValues>* keys,
                         std::vector<size_t>* key_probe) {
  // One batch per round trip, whatever the indexes: reads of several tables mix freely.
  for (size_t begin = 0; begin < probes.size(); begin += kLockedReadBatch) {
    const size_t end = std::min(probes.size(), begin + kLockedReadBatch);
    api::Transaction& tx =
        context.read_transaction(lock, &probes[begin].index->def, probes[begin].value);
    std::vector<uint32_t> ops;
    for (size_t p = begin; p < end; ++p) {
      ops.push_back(check(tx.read(probes[p].index->def, *probes[p].value, {}, lock,
                                  api::OpOptions{.ignore_error = true})));
    }
    context.execute_reads();
    for (size_t i = 0; i < ops.size(); ++i) {
      api::OpResult result = check(tx.result(ops[i]));
      if (result.status.is(ErrorCode::kNotFound)) continue;  // no row holds the value
      check(result.status);
      const ::duo::protocol::UniqueIndexTable& index = *probes[begin + i].index;
      // Hidden columns key_columns.. hold the base primary key, in its column order.
      storage::AttrValues key;
      for (size_t c = index.key_columns; c < index.base_columns.size(); ++c) {
        const int at = result.values.find(static_cast<uint16_t>(c));
        if (at < 0 || result.values.entry(at).is_null) {
          throw SqlException(1105, "HY000",
                             "unique index '" + index.index_name + "' entry lacks its key");
        }
        key.add(index.base_columns[c], result.values.value(at));
      }
      keys->push_back(std::move(key));
      key_probe->push_back(begin + i);
    }
  }
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
               const IndexRange* range, const std::vector<uint16_t>& columns, Candidate candidate) {
  api::Transaction& tx = context.transaction();
  api::ScanSpec spec;
  spec.filter = plan.filter;
  spec.columns = columns;
  if (range != nullptr) {
    spec.index = plan.index;
    spec.low = range->low;
    spec.high = range->high;
    spec.low_inclusive = range->low_inclusive;
    spec.high_inclusive = range->high_inclusive;
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
              const std::vector<uint16_t>& columns, UniqueIndexes& unique_indexes,
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
        context, bound, plan.keys, lock, columns,
        [&](size_t, const Row& row) { return passes_residual(row); },
        [&](size_t, Row& row) { return visit(row); });
  }
  if (plan.kind == AccessPlan::Kind::kUniqueLookup) {
    // The entries with the statement's lock, then the rows they name with it (NDB reads
    // through a unique hash index the same way); each row judged on what was read.
    std::vector<UniqueProbe> probes;
    for (const storage::AttrValues& value : plan.keys) {
      probes.push_back(UniqueProbe{&unique_indexes.of(plan.index), &value, 0});
    }
    std::vector<storage::AttrValues> keys;
    std::vector<size_t> key_probe;
    read_unique_entries(context, probes, lock, &keys, &key_probe);
    return read_keys(
        context, bound, keys, lock, columns,
        [&](size_t k, const Row& row) {
          return holds_unique_value(table, *probes[key_probe[k]].index, row,
                                    *probes[key_probe[k]].value) &&
                 passes_residual(row);
        },
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
      if (!scan_rows(context, bound, plan, &range, columns, candidate)) return false;
    }
  } else if (!scan_rows(context, bound, plan, nullptr, columns, candidate)) {
    return false;
  }
  if (keys.empty()) return true;
  auto passes_where = [&](size_t, const Row& row) {
    if (!matches_fixed(row, fixed)) return false;
    EvalContext eval = context.eval(&table, &row);
    eval.clause = "where clause";
    return passes(where, eval);
  };
  return read_keys(context, bound, keys, lock, columns, passes_where,
                   [&](size_t, Row& row) { return visit(row); });
}

AccessPlan plan_for(StatementContext& context, const catalog::BoundTable& bound, const Expr* where,
                    const FixedColumns& fixed) {
  return plan_access(bound.sql, where, context.eval(&bound.sql),
                     bound.table_def->schema.ordered_indexes, fixed);
}

}  // namespace

void for_each_row(StatementContext& context, const catalog::BoundTable& bound, const Expr* where,
                  storage::LockMode lock, const std::function<bool(Row&)>& visit,
                  const std::vector<uint16_t>& columns) {
  const AccessPlan plan = plan_for(context, bound, where, {});
  UniqueIndexes unique_indexes(bound);
  run_plan(context, bound, where, plan, {}, lock, columns, unique_indexes, visit);
}

void for_each_row_batched(StatementContext& context, const catalog::BoundTable& bound,
                          const Expr* where, storage::LockMode lock,
                          const std::vector<FixedColumns>& sets,
                          const std::function<bool(size_t set, Row&)>& visit,
                          const std::vector<uint16_t>& columns) {
  const catalog::SqlTable& table = bound.sql;
  UniqueIndexes unique_indexes(bound);
  auto is_lookup = [](const AccessPlan& plan) {
    return plan.kind == AccessPlan::Kind::kKeyLookup ||
           plan.kind == AccessPlan::Kind::kUniqueLookup;
  };
  size_t set = 0;
  while (set < sets.size()) {
    AccessPlan plan = plan_for(context, bound, where, sets[set]);
    if (!is_lookup(plan)) {
      const bool go_on = run_plan(context, bound, where, plan, sets[set], lock, columns,
                                  unique_indexes, [&](Row& row) { return visit(set, row); });
      if (!go_on) return;
      ++set;
      continue;
    }
    // Consecutive sets answered by lookups (primary keys or unique-index values): one
    // batch of reads for all of them (up to kLockedReadBatch keys or values, so the rows
    // held here stay bounded), after one batch of hidden-table reads for the values;
    // visited in order.
    struct Lookup {
      size_t set;
      AccessPlan plan;
    };
    std::vector<Lookup> lookups;
    size_t planned = 0;
    while (true) {
      planned += plan.keys.size();
      lookups.push_back(Lookup{set, std::move(plan)});
      ++set;
      if (set == sets.size() || planned >= kLockedReadBatch) break;
      plan = plan_for(context, bound, where, sets[set]);
      if (!is_lookup(plan) || planned + plan.keys.size() > kLockedReadBatch) {
        break;  // this set starts the next round
      }
    }
    constexpr size_t kNoProbe = SIZE_MAX;
    std::vector<storage::AttrValues> keys;
    std::vector<size_t> key_lookup;  // keys[k] belongs to lookups[key_lookup[k]]
    std::vector<size_t> key_probe;   // and came from probes[key_probe[k]], or kNoProbe
    std::vector<UniqueProbe> probes;
    for (size_t l = 0; l < lookups.size(); ++l) {
      AccessPlan& lookup_plan = lookups[l].plan;
      for (storage::AttrValues& key : lookup_plan.keys) {
        if (lookup_plan.kind == AccessPlan::Kind::kUniqueLookup) {
          probes.push_back(UniqueProbe{&unique_indexes.of(lookup_plan.index), &key, l});
          continue;
        }
        keys.push_back(std::move(key));
        key_lookup.push_back(l);
        key_probe.push_back(kNoProbe);
      }
    }
    if (!probes.empty()) {
      std::vector<storage::AttrValues> found;
      std::vector<size_t> found_probe;
      read_unique_entries(context, probes, lock, &found, &found_probe);
      for (size_t f = 0; f < found.size(); ++f) {
        keys.push_back(std::move(found[f]));
        key_lookup.push_back(probes[found_probe[f]].owner);
        key_probe.push_back(found_probe[f]);
      }
    }
    std::vector<std::vector<Row>> rows(lookups.size());
    read_keys(
        context, bound, keys, lock, columns,
        [&](size_t k, const Row& row) {
          const Lookup& lookup = lookups[key_lookup[k]];
          if (!matches_fixed(row, sets[lookup.set])) return false;
          if (key_probe[k] != kNoProbe && !holds_unique_value(table, *probes[key_probe[k]].index,
                                                              row, *probes[key_probe[k]].value)) {
            return false;
          }
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
