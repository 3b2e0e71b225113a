// The source rows of INSERT ... SELECT, read here with the single-table row source
// (row_source.h) rather than through the SELECT executor: one SELECT block over one
// table, with WHERE, ORDER BY and LIMIT; items are expressions of that table's columns
// or `*`. Anything else (joins, GROUP BY, aggregates, DISTINCT, UNION, derived tables)
// throws 1235 until the SELECT executor exposes its rows as a function.
//
// The rows are read with committed reads (as NDB reads the source of INSERT ... SELECT)
// and held in sqld up to kStatementRowsMax before any is inserted, so a statement that
// inserts into the table it reads sees only the rows that were there before.
//
// Thread-safety: one session thread (the StatementContext's).
#pragma once

#include <vector>

#include "sql-frontend/executor/row_source.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

// The values of the select list for every source row, in ORDER BY order when given.
std::vector<Row> insert_select_rows(StatementContext& context, const QueryExpr& query);

}  // namespace duo::sql::executor
