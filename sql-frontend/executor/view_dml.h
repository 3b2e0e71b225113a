// INSERT, UPDATE and DELETE through an updatable view (MySQL's rules for a simple view:
// one table, no DISTINCT/GROUP BY/HAVING/aggregates/UNION/LIMIT). The statement is
// rewritten onto the view's table: view columns become the table's columns (a computed
// view column may be read, not assigned: 1348), and the view's WHERE is ANDed to the
// statement's, so UPDATE and DELETE reach only rows the view shows. WITH CHECK OPTION
// (MySQL 1369 "CHECK OPTION failed"): an INSERT's VALUES/SET rows are checked against
// the view's WHERE before they are written; an UPDATE first looks, in the statement's
// transaction, for a row it would move out of the view (the view's WHERE with the SET
// values substituted). A view over an updatable view is rewritten level by level, each
// level's CHECK OPTION checked (LOCAL and CASCADED alike). Not updatable: 1288 (UPDATE,
// DELETE) or 1471 (INSERT). Not supported (1235): CHECK OPTION with INSERT ... SELECT or
// with placeholders in an UPDATE.
//
// Thread-safety: per statement.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <optional>
#include <vector>

#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/parser/parser.h"

namespace duo::sql::executor {

// The statement to run instead, with the parses that own it.
struct ViewDml {
  std::deque<std::string> texts;        // what each parse read (its source positions')
  std::vector<ParsedStatement> parses;  // the last one's statement is the one to run
  const Statement& statement() const { return *parses.back().statement; }
  std::string_view text() const { return texts.back(); }
};

// nullopt when `statement` (INSERT/REPLACE, single-table UPDATE or DELETE) does not
// write through a view. Runs the CHECK OPTION checks.
std::optional<ViewDml> rewrite_view_dml(StatementContext& context, const Statement& statement);

}  // namespace duo::sql::executor
