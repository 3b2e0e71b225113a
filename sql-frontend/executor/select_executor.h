// The SELECT pipeline's entry points beyond the statement executors of
// statement_context.h: the rows of any query expression (joins, GROUP BY, aggregates,
// DISTINCT, subqueries, UNION, derived tables), for statements that consume a query's
// rows (INSERT ... SELECT) or evaluate subqueries (UPDATE/DELETE).
//
// Thread-safety: one session thread (the StatementContext's).
#pragma once

#include <memory>
#include <vector>

#include "sql-frontend/executor/row_source.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

// The rows `query` produces, in its ORDER BY order, read in `context`'s transaction
// (which it does not commit). Throws SqlException as SELECT does.
std::vector<Row> query_rows(StatementContext& context, const QueryExpr& query);

// A SubqueryRunner over `context` for other statements' expressions (UPDATE/DELETE
// WHERE ... IN (SELECT ...)): set it as EvalContext::subqueries. Uncorrelated results
// are kept until it is destroyed; it must not outlive `context`.
std::unique_ptr<SubqueryRunner> make_subquery_runner(StatementContext& context);

}  // namespace duo::sql::executor
