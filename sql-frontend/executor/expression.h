// Expression evaluation in duo_sqld: what is not pushed to the data nodes — WHERE
// conditions the filter cannot express, select-list expressions, SET values, VALUES
// rows, constants of SELECT without FROM (the system variables and functions
// connectors ask for on connect).
//
// Semantics follow MySQL: three-valued logic (NULL is unknown), numeric comparison
// when either side is a number, string comparison case-insensitive (sql_value.h).
// Supported: literals, columns of the tables in scope (one table, or a join's scopes,
// plus an enclosing query's row for correlated subqueries), ? parameters, @@system
// variables, @user variables and their assignment @x := v (per evaluation, in the
// connection's variables; MySQL's order: left to right, once per row), arithmetic
// (+ - * / DIV MOD, unary -), comparisons (= <=> <> < <= > >=; a constant compared with
// a YEAR column is read as a YEAR, 69 as 2069), AND/OR/XOR/NOT, IS [NOT]
// NULL/TRUE/FALSE, [NOT] BETWEEN, [NOT] IN (list), [NOT] LIKE, the built-in functions
// and special forms of functions.h; [NOT] IN (SELECT ...), EXISTS and scalar subqueries
// through the context's SubqueryRunner; aggregates only as values of the context's
// group. Anything else throws 1235 (not supported yet).
//
// Errors are thrown as SqlException (1054 unknown column, 1052 ambiguous column, 1242
// subquery with several rows, 1111 misplaced aggregate, 1193 unknown variable ...).
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

struct EvalContext;
struct StatementContext;

// One table of a SELECT's FROM as expressions see it: its columns, the name that
// qualifies them (the alias, else the table's name) and the current row (null while
// the row is NULL-extended by a LEFT JOIN: every column reads NULL).
struct Scope {
  const catalog::SqlTable* table = nullptr;
  std::string name;  // qualifier: alias or table name
  std::string db;    // for `db.t.c`; empty for a derived table
  const std::vector<SqlValue>* row = nullptr;
  // Columns of a join's USING/NATURAL that an unqualified name does not find here (the
  // left table's copy is the one `a` means), lower case.
  std::vector<std::string> using_hidden;
};

// An aggregate's value for the group being output (ORDER BY/HAVING/select list of a
// grouped SELECT): evaluate() returns it instead of calling the aggregate.
struct AggregateValue {
  const Expr* call = nullptr;
  SqlValue value;
};

// How evaluate() runs subqueries (the SELECT executor implements it): the rows of
// `query` with `outer` as the scope of its correlated column references.
class SubqueryRunner {
 public:
  virtual ~SubqueryRunner() = default;
  // At most `rows_max` rows are needed (EXISTS needs one; a scalar subquery two, to
  // detect 1242); the result stays valid until the runner is destroyed.
  virtual const std::vector<std::vector<SqlValue>>& rows(const QueryExpr& query,
                                                         const EvalContext& outer,
                                                         size_t rows_max) = 0;
};

// What an expression sees while it is evaluated.
struct EvalContext {
  // One table in scope (DML, single-table row sources); ignored when `scopes` is set.
  const catalog::SqlTable* table = nullptr;    // the table in scope, or null
  const std::vector<SqlValue>* row = nullptr;  // its current row, by column id
  // Several tables in scope (a SELECT's FROM, joins): column names resolve here.
  const std::vector<Scope>* scopes = nullptr;
  // The enclosing query's row, for a correlated subquery's outer references.
  const EvalContext* outer = nullptr;
  // Set to true when a column resolved in `outer` (the subquery is correlated).
  bool* outer_referenced = nullptr;
  SubqueryRunner* subqueries = nullptr;                     // null: subqueries throw 1235
  const std::vector<AggregateValue>* aggregates = nullptr;  // a group's aggregate values
  const std::vector<SqlValue>* params = nullptr;            // ? values of a prepared statement
  const server::SessionState* session = nullptr;
  // The statement being run: its diagnostics area (functions' warnings), its start
  // time (NOW()) and RAND(N)'s sequences. Null outside a statement (unit tests, SET
  // autocommit): warnings are dropped, NOW() reads the clock.
  StatementContext* statement = nullptr;
  uint64_t last_insert_id = 0;
  const char* clause = "field list";  // for 1054's "in '...'"
};

// Where a column reference points: scope `scope` (in the context's scopes; 0 for the
// single-table form) and column id; `depth` counts outer contexts climbed (0: own).
struct ColumnRef {
  size_t scope = 0;
  uint16_t column = 0;
  size_t depth = 0;
};

// Resolves `column` in `context` (its scopes, then its outer contexts); throws 1054
// (unknown, with the context's clause) or 1052 (ambiguous).
ColumnRef resolve(const ColumnExpr& column, const EvalContext& context);
// Resolves `column` among `scopes` only; nullopt when no scope has it; 1052 when
// several do.
std::optional<ColumnRef> find_in_scopes(const ColumnExpr& column, const std::vector<Scope>& scopes,
                                        const char* clause);
// True for COUNT, SUM, AVG, MIN, MAX, GROUP_CONCAT calls.
bool is_aggregate_call(const Expr& expr);

SqlValue evaluate(const Expr& expr, const EvalContext& context);
// X'0A', 0x0A, b'1010' are binary strings, but numbers where a number is wanted
// (arithmetic, a comparison with a number, CAST to a number): X'0A' + 0 is 10, as in
// MySQL. nullopt when `expr` is not such a literal or is longer than 8 bytes.
std::optional<SqlValue> hex_literal_number(const Expr& expr);
// evaluate() for a value stored into or compared with `column`: a hex literal is a
// number for a numeric column (INSERT INTO t (int_col) VALUES (0x03)), bytes otherwise.
SqlValue evaluate_for_column(const Expr& expr, const EvalContext& context,
                             const catalog::SqlColumn& column);
// NULL -> nullopt; else whether the value is true (non-zero).
std::optional<bool> truth(const SqlValue& value);
// True when the condition is TRUE for the context's row (FALSE and NULL reject).
bool passes(const Expr* condition, const EvalContext& context);

// The column `column` names in `table`, or throws 1054.
uint16_t resolve_column(const ColumnExpr& column, const catalog::SqlTable& table,
                        const char* clause);
// The declared column `column` names in `context` (its scopes, then its outer
// contexts), or null when it names a derived table's or an alias's column.
const catalog::SqlColumn* column_of(const ColumnExpr& column, const EvalContext& context);
// True when `expr` reads no column (its value is fixed for the statement).
bool is_constant(const Expr& expr);
// The top-level AND terms of `condition` (none for null).
void split_conjuncts(const Expr* condition, std::vector<const Expr*>* out);

// MySQL's LIKE under the case-insensitive collation ('%', '_' one character, escape;
// storage/row/collation.h, the filter pushed to the data nodes matches the same).
bool like_match(std::string_view text, std::string_view pattern, char escape);

// The version string the server reports (also in the handshake).
std::string server_version();

}  // namespace duo::sql::executor
