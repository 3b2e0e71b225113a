// Row sources of one table for the statement executors: the rows a WHERE selects, found
// by the table's AccessPlan (batched key reads; unique-index lookups: batched reads of
// the index's hidden table giving primary keys, then batched key reads; ordered-index
// scans of the plan's ranges one after the other; or one full scan; each scan with the
// pushable part of the WHERE sent to the data nodes), with the residual WHERE evaluated
// in sqld. Rows come in no particular order (an index scan is ordered per fragment only,
// see access_plan.h).
//
// Locking: with a lock (UPDATE, DELETE, SELECT ... FOR UPDATE / LOCK IN SHARE MODE) key
// reads take it directly; a unique-index lookup reads the hidden-table entry with it and
// then the base row with it (as NDB does), so the value cannot move to another row
// before the transaction ends. For a scan every candidate row is read again by key with
// that lock in the statement's transaction and the whole WHERE is evaluated on the
// locked row: a scan reads committed rows without locks, so a row changed after the scan
// saw it must be judged by its current version (what NDB does with its scan lock
// takeover). A unique-index lookup re-checks the index columns on the base row it read:
// without locks the row may have changed between the two reads; a row that no longer
// holds the value is dropped, never returned.
//
// Thread-safety: one session thread (the StatementContext's).
#pragma once

#include <functional>
#include <vector>

#include "ndb-kernel/protocol/unique_index.h"
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

// True when `row` of `table` holds `value` in every column of `index` (a unique index's
// hidden table; `value` its key: hidden column k = the index's column k), compared as the
// index compares (the column's collation); false when a column is NULL. A unique lookup
// keeps only the base rows that do: the entry and the row are two reads, and without
// locks the row may have changed its value, or been deleted and its key reused, between
// them.
bool holds_unique_value(const catalog::SqlTable& table,
                        const ::duo::protocol::UniqueIndexTable& index, const Row& row,
                        const storage::AttrValues& value);

// Calls `visit(row)` for every row of `bound` that `where` selects, until it returns
// false. `columns` (empty: all) are the columns read; the others are NULL in the rows, so
// they must hold every column `where` and the caller look at, and the primary key.
void for_each_row(StatementContext& context, const catalog::BoundTable& bound, const Expr* where,
                  storage::LockMode lock, const std::function<bool(Row&)>& visit,
                  const std::vector<uint16_t>& columns = {});

// For each set of fixed columns, the rows of `bound` that `where` selects and whose
// columns equal the set's values: `visit(set_index, row)` until it returns false.
// Sets whose fixed columns (with the WHERE) cover the primary key or a unique index
// share batched reads (kLockedReadBatch keys or values per round trip; the unique
// values' hidden-table entries first, in one more round trip); the others get one index
// scan (the fixed columns as bounds) or one full scan (the fixed columns pushed in the
// filter) each, one after the other. Rows are visited in set order.
// `columns` as for for_each_row(), with the unique indexes' columns too.
void for_each_row_batched(StatementContext& context, const catalog::BoundTable& bound,
                          const Expr* where, storage::LockMode lock,
                          const std::vector<FixedColumns>& sets,
                          const std::function<bool(size_t set, Row&)>& visit,
                          const std::vector<uint16_t>& columns = {});

}  // namespace duo::sql::executor
