// The SQL parser's entry points: text in, AST (ast.h) or a MySQL error out.
//
// A COM_QUERY text may hold several statements separated by ';' (with
// CLIENT_MULTI_STATEMENTS); ScriptParser hands them out one at a time, so the session
// executes each before parsing the next, as MySQL does. Splitting is done by the lexer,
// so a ';' inside quotes or comments does not split.
//
// Errors are values: a syntax error is MySQL's 1064 (SQLSTATE 42000) with the server's
// exact text "You have an error in your SQL syntax; check the manual that corresponds
// to your MySQL server version for the right syntax to use near '<rest>' at line N",
// where <rest> is the text from the offending token to the end of the whole query text,
// cut to at most 80 bytes at a UTF-8 character boundary (MySQL's '%-.80s'), and N is the
// token's line within its statement. An empty query is 1065 "Query was empty". Name
// resolution errors (1054, 1146, 1149 ...) belong to the binder.
//
// Internally the recursive-descent parser throws on the first syntax error and the
// entry points below catch it once per statement: threading a Result through ~80
// grammar functions would double their size, and a syntax error always abandons the
// whole statement (STYLE.md lets the SQL front-end throw inside a command). Nothing
// here throws to the caller.
//
// Thread-safety: ScriptParser is thread-compatible (one session owns it); the free
// functions are pure and thread-safe. The returned AST owns all its strings, so it
// outlives the text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sql-frontend/parser/ast.h"
#include "sql-frontend/parser/lexer.h"

namespace duo::sql {

inline constexpr uint16_t kErrParse = 1064;       // ER_PARSE_ERROR
inline constexpr uint16_t kErrEmptyQuery = 1065;  // ER_EMPTY_QUERY
inline constexpr const char* kSqlStateSyntax = "42000";

// Nesting bound for expressions, subqueries and parenthesised joins. The parser is
// recursive, so without it "((((...))))" from a client could overflow the session
// thread's stack; MySQL stops at its own stack limit. Deeper input gets a 1064 at the
// token where the limit was reached.
inline constexpr uint32_t kNestingDepthMax = 200;

// A parse error, ready for an ERR packet.
struct SqlError {
  uint16_t mysql_errno = kErrParse;
  std::string sqlstate = kSqlStateSyntax;
  std::string message;
  uint32_t line = 1;    // line of the offending token within its statement
  uint32_t offset = 0;  // byte offset of the offending token in the whole text
};

// One statement of a query text: an AST, or the error that stopped it.
struct ParsedStatement {
  StatementPtr statement;  // null on error
  std::optional<SqlError> error;
  std::string_view text;  // the statement's source text (no trailing ';'), a view into input

  bool ok() const { return statement != nullptr; }
};

// Splits and parses a multi-statement text. Usage:
//   ScriptParser script(text);
//   while (script.has_next()) { ParsedStatement s = script.next(); ...; if (!s.ok()) break; }
class ScriptParser {
 public:
  // `text` must outlive the parser and the `text` views of the statements it returns.
  explicit ScriptParser(std::string_view text);

  // True while another statement (or an error) remains. Whitespace, comments and one
  // trailing ';' after the last statement do not count. An entirely empty text yields
  // one 1065 result.
  bool has_next() const;

  // Parses the next statement. After an error has_next() is false: MySQL stops
  // executing a multi-statement text at its first failing statement.
  ParsedStatement next();

  // The first token of the next statement (valid while has_next()), and the line of
  // the ';' that ended the previous one: parse_statement() reports a second statement.
  const Token& next_token() const { return lookahead_; }
  uint32_t terminator_line() const { return terminator_line_; }

 private:
  void lex_statement();  // fills tokens_ with the next statement's tokens

  std::string_view text_;
  Lexer lexer_;
  Token lookahead_;  // first token of the next statement
  bool first_ = true;
  bool failed_ = false;
  uint32_t terminator_line_ = 1;
  std::vector<Token> tokens_;  // reused across statements
};

// Parses `text` as exactly one statement (an optional trailing ';' is allowed): the
// COM_QUERY case without CLIENT_MULTI_STATEMENTS and COM_STMT_PREPARE. A second
// statement is a 1064 at its start, as in MySQL.
ParsedStatement parse_statement(std::string_view text);

// MySQL's 1064 message for an error at byte `offset` of `text`, line `line`.
std::string syntax_error_message(std::string_view text, size_t offset, uint32_t line);

}  // namespace duo::sql
