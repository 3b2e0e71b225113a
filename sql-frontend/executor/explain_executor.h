// EXPLAIN [ANALYZE] [FORMAT=TRADITIONAL|TREE|JSON] SELECT ... (issue 17 item 5), and
// ANALYZE / OPTIMIZE / CHECK TABLE.
//
// EXPLAIN binds the SELECT as execution does (bind_select_block) and asks the planner
// execution uses (row_source's plan_access with the table's ordered indexes, the join's
// equalities as fixed columns for an inner level) which access each table gets, in the
// join order (the FROM order: tables are joined as batched nested loops in that order):
// const (one primary-key or unique lookup by constants), eq_ref (a lookup per outer row),
// range (several keys, or an ordered-index range), ref (an ordered index's equality
// prefix), ALL (a full scan), with NDB's "Using pushed condition (...)" for the
// conjuncts sent to the data nodes and "Using where" for those evaluated in sqld. A
// derived table, view, system view or temporary table is read in sqld (type ALL). rows
// is the table's row count (ANALYZE TABLE's, else counted by a scan once per table
// version) for scans, the number of keys for lookups. Only the top SELECT block is shown
// (subqueries, UNION branches and derived tables' own plans are not). EXPLAIN ANALYZE
// (FORMAT=TREE) runs the SELECT and shows its real row count and time on the top line
// (per-node counts are not kept). A single-table UPDATE/DELETE is explained in the
// traditional format (select_type UPDATE / DELETE); INSERT and multi-table writes are 1235.
//
// ANALYZE TABLE counts each table's rows and each index's distinct keys (a scan) and
// keeps them in this sqld for EXPLAIN; the planner does not use them (it chooses by the
// rules of access_plan.h). OPTIMIZE TABLE is NDB's: status OK, nothing is rebuilt (rows
// live in the data nodes' memory, there is nothing to defragment). CHECK TABLE reads every
// row by a scan and reads it again by its primary key, and every UNIQUE index's entry of
// it: status OK, or Msg_type error naming what disagrees. All three return MySQL's
// Table / Op / Msg_type / Msg_text rows.
//
// Thread-safety: per statement (row counts: a process-wide map under a mutex).
#pragma once

#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

server::StatementResult execute_explain(StatementContext& context,
                                        const ExplainStatement& statement);
server::StatementResult execute_table_maintenance(StatementContext& context,
                                                  const TableMaintenanceStatement& statement);

}  // namespace duo::sql::executor
