// MySQL's canonical text of a view's query (what SHOW CREATE VIEW and
// information_schema.VIEWS.VIEW_DEFINITION show): lower-case keywords, every name
// backquoted, columns qualified by their table, every output named with AS, binary
// operations parenthesised, string literals with the client character set's
// introducer, COUNT(*) as count(0). Covered: one SELECT block over tables joined by
// commas or [INNER|CROSS|LEFT] JOIN ... ON, with WHERE/GROUP BY/HAVING/ORDER BY/LIMIT,
// and expressions built of columns, literals, comparisons, arithmetic, AND/OR,
// IS [NOT] NULL, [NOT] BETWEEN, [NOT] IN (list), [NOT] LIKE and function calls. A query
// with anything else (UNION, subqueries, CASE ...) is kept as written.
//
// Thread-safety: per statement.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sql-frontend/parser/ast.h"
#include "sql-frontend/protocol/packets.h"

namespace duo::sql::executor {

struct ViewTextInput {
  const QueryExpr* query = nullptr;
  std::string written;  // the query as written (the fallback)
  // The query's outputs (describe_select) and the view's column names.
  std::vector<protocol::ColumnDefinition41> columns;
  std::vector<std::string> names;
  std::string view_db;
  // Column names of each FROM table, by the name it is referred to by (its alias or
  // name), in FROM order: unqualified columns are qualified with the table holding them.
  std::vector<std::pair<std::string, std::vector<std::string>>> tables;
  std::string character_set_client = "utf8mb4";
  // Qualify columns with this database too ("`db`.`t`.`c`", as NDB's pushed conditions
  // print); strings without an introducer then.
  std::string column_db;
};

// nullopt when the query holds something not covered (then: keep it as written).
std::optional<std::string> canonical_view_text(const ViewTextInput& input);
// One condition in the same form (EXPLAIN's pushed and attached conditions), its
// unqualified columns qualified with `input.tables`' first; nullopt when not covered.
std::optional<std::string> canonical_condition(const Expr& condition, const ViewTextInput& input);

}  // namespace duo::sql::executor
