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

}  // namespace duo::sql::executor
