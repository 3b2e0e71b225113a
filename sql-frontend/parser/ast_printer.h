// Prints an AST back as SQL in one canonical form: upper-case keywords, every binary
// and predicate expression fully parenthesised "(a + b)", strings single-quoted with
// backslash escapes, identifiers backquoted when they need it (not a plain word, or a
// keyword). Parsing the output gives the same tree (positions aside), which the tests
// use to check the parser: print(parse(print(parse(s)))) == print(parse(s)), and it
// makes expected trees readable in tests. Also handy in logs and EXPLAIN output.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "sql-frontend/parser/ast.h"

namespace duo::sql {

std::string to_sql(const Statement& statement);
std::string to_sql(const Expr& expr);
std::string to_sql(const QueryExpr& query);
std::string to_sql(const DataType& type);

}  // namespace duo::sql
