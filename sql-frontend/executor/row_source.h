// Row sources of one table for the statement executors: the rows a WHERE selects, found
// by the table's AccessPlan (batched key reads, ordered-index scans of the plan's ranges
// one after the other, or one full scan; each scan with the pushable part of the WHERE
// sent to the data nodes), with the residual WHERE evaluated in sqld. Rows come in no
// particular order (an index scan is ordered per fragment only, see access_plan.h).
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

#include "sql-frontend/executor/access_plan.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

using Row = std::vector<SqlValue>;

// Keys read per round trip: bounds the operations in flight of one batch.
inline constexpr size_t kLockedReadBatch = 256;

// A row of `table` (by column id) from the values a read or scan returned.
Row to_row(const catalog::SqlTable& table, const storage::AttrValues& values);
// The primary key of `row`.
storage::AttrValues key_of(const catalog::SqlTable& table, const Row& row);

// Calls `visit(row)` for every row of `bound` that `where` selects, until it returns
// false.
void for_each_row(StatementContext& context, const catalog::BoundTable& bound, const Expr* where,
                  storage::LockMode lock, const std::function<bool(Row&)>& visit);

// For each set of fixed columns, the rows of `bound` that `where` selects and whose
// columns equal the set's values: `visit(set_index, row)` until it returns false.
// Sets whose fixed columns (with the WHERE) cover the primary key share batched key
// reads (kLockedReadBatch keys per round trip); the others get one index scan (the fixed
// columns as bounds) or one full scan (the fixed columns pushed in the filter) each, one
// after the other. Rows are visited in set order.
void for_each_row_batched(StatementContext& context, const catalog::BoundTable& bound,
                          const Expr* where, storage::LockMode lock,
                          const std::vector<FixedColumns>& sets,
                          const std::function<bool(size_t set, Row&)>& visit);

}  // namespace duo::sql::executor
