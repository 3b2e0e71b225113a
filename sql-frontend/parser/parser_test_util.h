// Test helpers shared by the parser tests: parse, print canonically, and check that the
// printed form parses back to the same tree (print is a fixpoint).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "sql-frontend/parser/ast_printer.h"
#include "sql-frontend/parser/parser.h"

namespace duo::sql::testing {

// The canonical form of the single statement `sql`, or "ERROR <errno>: <message>".
// Also checks parse(print(ast)) == ast through a second print.
inline std::string canon(std::string_view sql) {
  ParsedStatement parsed = parse_statement(sql);
  if (!parsed.ok()) {
    return "ERROR " + std::to_string(parsed.error->mysql_errno) + ": " + parsed.error->message;
  }
  std::string printed = to_sql(*parsed.statement);
  ParsedStatement again = parse_statement(printed);
  EXPECT_TRUE(again.ok()) << "printed form does not parse: " << printed << "\n  "
                          << (again.error ? again.error->message : "");
  if (again.ok()) {
    EXPECT_EQ(to_sql(*again.statement), printed) << "from: " << sql;
    EXPECT_EQ(again.statement->placeholder_count, parsed.statement->placeholder_count);
  }
  return printed;
}

// The 1064 "near" message of `sql`, or "OK" if it parses.
inline std::string error_of(std::string_view sql) {
  ParsedStatement parsed = parse_statement(sql);
  if (parsed.ok()) return "OK";
  return parsed.error->message;
}

// The canonical form of the expression in "SELECT <expr>".
inline std::string expr(std::string_view e) {
  std::string sql = "SELECT " + std::string(e);
  std::string out = canon(sql);
  if (out.rfind("SELECT ", 0) == 0) return out.substr(7);
  return out;
}

inline std::string near(std::string_view rest, int line = 1) {
  return "You have an error in your SQL syntax; check the manual that corresponds to your MySQL "
         "server version for the right syntax to use near '" +
         std::string(rest) + "' at line " + std::to_string(line);
}

}  // namespace duo::sql::testing
