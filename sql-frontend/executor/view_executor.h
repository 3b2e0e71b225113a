// Views (issue 17 item 1): CREATE [OR REPLACE] / ALTER / DROP VIEW, SHOW CREATE VIEW, and
// reading a view where a table is named in a query.
//
// A view is kept in the cluster's dictionary (catalog/sql_view.h) with the text of its
// query, which is parsed again at every use and run as a derived table: a view is
// materialized in sqld (MySQL's ALGORITHM=TEMPTABLE), whatever ALGORITHM says; the
// clause is kept and shown. Its query runs with the view's database as the current
// database (unqualified names are the view's database's, as in MySQL). SQL SECURITY
// INVOKER checks the invoker's privileges on the view's tables when the view is read;
// DEFINER needs only the privilege on the view itself (the definer's own privileges
// are not checked again at use). A query that no longer binds (a table dropped, a
// column gone) is MySQL's 1356; a view reached again through itself is 1462.
//
// Thread-safety: per statement (StatementContext's session thread).
#pragma once

#include <optional>
#include <string>

#include "sql-frontend/catalog/sql_view.h"
#include "sql-frontend/executor/select_binding.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

server::StatementResult execute_view(StatementContext& context, const ViewStatement& statement);
// SHOW CREATE VIEW (and SHOW CREATE TABLE of a view): MySQL's four columns.
server::StatementResult show_create_view(StatementContext& context, const ShowStatement& show);

// The view `db`.`name` when that name is a view (not a table), else nullopt.
std::optional<catalog::SqlView> find_view(StatementContext& context, const std::string& db,
                                          const std::string& name);
// The view's rows, named by its column list or its query's, read through `run_derived`
// (which may only describe them: then no rows).
DerivedRows read_view(StatementContext& context, const catalog::SqlView& view,
                      const RunDerived& run_derived);
// The view's columns as a table definition (DESCRIBE, SHOW COLUMNS): a column of a
// table keeps that column's type, NULL-ability and default; a computed one is shown as
// varchar(255) (its type is known only from its values). No keys.
catalog::SqlTable view_columns_table(StatementContext& context, const catalog::SqlView& view);
// MySQL's updatable simple view: one table, no DISTINCT/GROUP BY/HAVING/aggregates/
// UNION/LIMIT/subqueries in the outputs (its computed outputs are not updatable).
bool view_is_updatable(StatementContext& context, const catalog::SqlView& view);

}  // namespace duo::sql::executor
