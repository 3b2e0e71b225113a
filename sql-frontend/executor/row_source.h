// Row sources of one table for the statement executors: the rows a WHERE selects, found
// by the table's AccessPlan (batched key reads, or one scan with the pushable part of the
// WHERE sent to the data nodes), with the residual WHERE evaluated in sqld.
//
// Locking: with a lock (UPDATE, DELETE, SELECT ... FOR UPDATE / LOCK IN SHARE MODE)
// every candidate row is read again by key with that lock in the statement's transaction
// and the whole WHERE is evaluated on the locked row: a scan reads committed rows
// without locks, so a row changed after the scan saw it must be judged by its current
// version (what NDB does with its scan lock takeover).
//
// Thread-safety: one session thread (the StatementContext's).
#pragma once

#include <functional>
#include <vector>

#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

using Row = std::vector<SqlValue>;

// A row of `table` (by column id) from the values a read or scan returned.
Row to_row(const catalog::SqlTable& table, const storage::AttrValues& values);
// The primary key of `row`.
storage::AttrValues key_of(const catalog::SqlTable& table, const Row& row);

// Calls `visit(row)` for every row of `bound` that `where` selects, until it returns
// false.
void for_each_row(StatementContext& context, const catalog::BoundTable& bound, const Expr* where,
                  storage::LockMode lock, const std::function<bool(Row&)>& visit);

// Equalities known from outside the WHERE (a join's outer row): column = value.
using FixedColumns = std::vector<std::pair<uint16_t, SqlValue>>;

// For each set of fixed columns, the rows of `bound` that `where` selects and whose
// columns equal the set's values: `visit(set_index, row)` until it returns false.
// Lookups for many sets share round trips (a join's batch of outer rows).
void for_each_row_batched(StatementContext& context, const catalog::BoundTable& bound,
                          const Expr* where, storage::LockMode lock,
                          const std::vector<FixedColumns>& sets,
                          const std::function<bool(size_t set, Row&)>& visit);

}  // namespace duo::sql::executor
