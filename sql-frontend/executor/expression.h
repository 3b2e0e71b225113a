// Expression evaluation in duo_sqld: what is not pushed to the data nodes — WHERE
// conditions the filter cannot express, select-list expressions, SET values, VALUES
// rows, constants of SELECT without FROM (the system variables and functions
// connectors ask for on connect).
//
// Semantics follow MySQL: three-valued logic (NULL is unknown), numeric comparison
// when either side is a number, string comparison case-insensitive (sql_value.h).
// Supported: literals, columns of the one table in scope, ? parameters, @@system
// variables, arithmetic (+ - * / DIV MOD, unary -), comparisons (= <=> <> < <= > >=),
// AND/OR/XOR/NOT, IS [NOT] NULL/TRUE/FALSE, [NOT] BETWEEN, [NOT] IN (list), [NOT] LIKE,
// and the functions DATABASE/SCHEMA, VERSION, USER/CURRENT_USER/SESSION_USER/
// SYSTEM_USER, CONNECTION_ID, LAST_INSERT_ID, CONCAT, IFNULL/COALESCE, IF, LOWER/UPPER,
// LENGTH/CHAR_LENGTH, ABS. Anything else throws 1235 (not supported yet).
//
// Errors are thrown as SqlException (1054 unknown column, 1193 unknown variable ...).
//
// Thread-safety: pure functions over caller-owned inputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sql-frontend/catalog/sql_table.h"
#include "sql-frontend/executor/sql_value.h"
#include "sql-frontend/parser/ast.h"
#include "sql-frontend/server/query_handler.h"

namespace duo::sql::executor {

// What an expression sees while it is evaluated.
struct EvalContext {
  const catalog::SqlTable* table = nullptr;       // the table in scope, or null
  const std::vector<SqlValue>* row = nullptr;     // its current row, by column id
  const std::vector<SqlValue>* params = nullptr;  // ? values of a prepared statement
  const server::SessionState* session = nullptr;
  uint64_t last_insert_id = 0;
  const char* clause = "field list";  // for 1054's "in '...'"
};

SqlValue evaluate(const Expr& expr, const EvalContext& context);
// NULL -> nullopt; else whether the value is true (non-zero).
std::optional<bool> truth(const SqlValue& value);
// True when the condition is TRUE for the context's row (FALSE and NULL reject).
bool passes(const Expr* condition, const EvalContext& context);

// The column `column` names in `table`, or throws 1054.
uint16_t resolve_column(const ColumnExpr& column, const catalog::SqlTable& table,
                        const char* clause);
// True when `expr` reads no column (its value is fixed for the statement).
bool is_constant(const Expr& expr);
// The top-level AND terms of `condition` (none for null).
void split_conjuncts(const Expr* condition, std::vector<const Expr*>* out);

// @@name as the session sees it; throws 1193 for an unknown variable.
SqlValue system_variable(const std::string& name, const server::SessionState* session);
// MySQL's LIKE under the case-insensitive collation ('%', '_', escape).
bool like_match(std::string_view text, std::string_view pattern, char escape);

// The version string the server reports (also in the handshake).
std::string server_version();

}  // namespace duo::sql::executor
