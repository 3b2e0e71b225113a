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
#include "sql-frontend/executor/select_binding.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

// The rows `query` produces, in its ORDER BY order, read in `context`'s transaction
// (which it does not commit). Throws SqlException as SELECT does.
std::vector<Row> query_rows(StatementContext& context, const QueryExpr& query);
// A derived table's names and metadata, bound without reading its rows (EXPLAIN).
DerivedRows describe_derived(StatementContext& context, const QueryExpr& query);

// A SubqueryRunner over `context` for other statements' expressions (UPDATE/DELETE
// WHERE ... IN (SELECT ...)): set it as EvalContext::subqueries. Uncorrelated results
// are kept until it is destroyed; it must not outlive `context`.
std::unique_ptr<SubqueryRunner> make_subquery_runner(StatementContext& context);

// A bound SELECT block's outputs as its result set describes them.
struct BoundOutputs {
  std::vector<std::string> labels;
  // A table column's metadata, nullopt for a computed column (typed by its values).
  std::vector<std::optional<server::ColumnDefinition41>> table_columns;
  // When every output is a table column: that metadata, encoded once.
  std::shared_ptr<const server::EncodedColumns> encoded;
};
BoundOutputs describe_bound_select(const BoundSelect& select);

// The lock a SELECT block's rows are read with (FOR UPDATE, LOCK IN SHARE MODE, none).
storage::LockMode select_lock_mode(const SelectBlock& block);

// execute_select() for a statement of one SELECT block bound already (a prepared
// statement's plan, prepared_plan.h); `outputs` is describe_bound_select(select). The
// block is run as bound: its rows are read again, nothing of the binding is redone.
server::StatementResult execute_bound_select(StatementContext& context, BoundSelect& select,
                                             const BoundOutputs& outputs);

}  // namespace duo::sql::executor
