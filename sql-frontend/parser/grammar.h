// The recursive-descent grammar behind parser.h: one Parser object parses one
// statement's tokens. Internal to sql-frontend/parser (the public API is parser.h).
//
// Grammar functions are split by area: grammar_expr.cc (expressions), grammar_query.cc
// (SELECT, table references, INSERT/UPDATE/DELETE), grammar_ddl.cc (CREATE/ALTER/DROP,
// column types), grammar_admin.cc (transactions, SET, SHOW, users, KILL ...). Each
// function consumes exactly its construct and leaves the cursor on the next token; on
// a syntax error it throws SyntaxErrorAt, caught in parser.cc.
//
// Thread-safety: a Parser is used by one thread for one statement.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sql-frontend/parser/ast.h"
#include "sql-frontend/parser/lexer.h"

namespace duo::sql {

// Thrown by the grammar on the first syntax error: the index of the offending token.
struct SyntaxErrorAt {
  size_t token_index;
};

class Parser {
 public:
  // `tokens` ends with a sentinel (kEnd, kSemicolon or kError) the parser never passes.
  explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  // Parses the whole statement; the cursor must end on the sentinel.
  StatementPtr parse_statement();

 private:
  friend class DepthGuard;

  // --- cursor
  const Token& peek(size_t ahead = 0) const {
    size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  bool at_end() const {
    const Token& t = peek();
    return t.kind == TokenKind::kEnd || t.kind == TokenKind::kSemicolon ||
           t.kind == TokenKind::kError;
  }
  const Token& take() {
    const Token& t = tokens_[pos_];
    if (!at_end()) ++pos_;
    return t;
  }
  bool accept(Keyword k) {
    if (!peek().is(k)) return false;
    take();
    return true;
  }
  bool accept(TokenKind k) {
    if (!peek().is(k) || at_end()) return false;
    take();
    return true;
  }
  void expect(Keyword k) {
    if (!accept(k)) fail();
  }
  void expect(TokenKind k) {
    if (!accept(k)) fail();
  }
  // True if the current token is a word spelled `upper` that is not in the keyword
  // table (rare words such as COLUMN_FORMAT are matched by spelling).
  bool peek_word(std::string_view upper, size_t ahead = 0) const;
  bool accept_word(std::string_view upper);
  [[noreturn]] void fail() const { throw SyntaxErrorAt{pos_}; }
  [[noreturn]] void fail_at(size_t index) const { throw SyntaxErrorAt{index}; }
  SourcePos pos_of(const Token& t) const { return SourcePos{t.offset, t.line}; }
  SourcePos here() const { return pos_of(peek()); }

  // --- names and small pieces
  bool peek_identifier(size_t ahead = 0) const;  // non-reserved word or `quoted`
  Identifier parse_identifier();
  // After a '.', MySQL accepts any word, reserved or not (t.select is a column).
  Identifier parse_identifier_after_dot();
  ObjectName parse_object_name();
  std::string parse_name_or_string();  // charset, collation, engine: word or 'string'
  std::string parse_string();
  uint64_t parse_unsigned();
  std::vector<Identifier> parse_identifier_list();  // ( a, b )
  UserName parse_user_name();

  // --- expressions (grammar_expr.cc)
  ExprPtr parse_expr();
  ExprPtr parse_or();
  ExprPtr parse_xor();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_boolean_primary();
  ExprPtr parse_predicate();
  ExprPtr parse_bit_or();
  ExprPtr parse_bit_and();
  ExprPtr parse_shift();
  ExprPtr parse_additive();
  ExprPtr parse_multiplicative();
  ExprPtr parse_bit_xor();
  ExprPtr parse_unary();
  ExprPtr parse_primary();
  ExprPtr parse_literal();
  ExprPtr parse_json_arrows(ExprPtr e);  // col->'path', col->>'path'
  ExprPtr parse_word_expr();
  ExprPtr parse_function_call(std::string name, SourcePos pos);
  ExprPtr parse_case();
  ExprPtr parse_cast_or_convert(bool convert);
  ExprPtr parse_interval();
  ExprPtr parse_variable();
  IntervalUnit parse_interval_unit();
  bool peek_interval_unit() const;
  DataType parse_cast_type();
  std::unique_ptr<ColumnExpr> parse_column_ref();
  ExprPtr parse_limit_value();

  // --- queries and DML (grammar_query.cc)
  QueryPtr parse_query_expr();
  QueryPtr parse_query_term();
  std::unique_ptr<SelectBlock> parse_select_block();
  void parse_select_item(SelectBlock& block);
  std::vector<TableRefPtr> parse_table_ref_list();
  TableRefPtr parse_table_ref();
  TableRefPtr parse_table_factor();
  std::optional<Identifier> parse_optional_alias(bool allow_string);
  std::vector<OrderItem> parse_order_by();
  Limit parse_limit();
  std::vector<Assignment> parse_assignments();
  StatementPtr parse_select_statement();
  StatementPtr parse_do();  // DO expr [, expr ...]
  StatementPtr parse_insert(bool replace);
  StatementPtr parse_update();
  StatementPtr parse_delete();

  // --- DDL (grammar_ddl.cc)
  StatementPtr parse_create();
  StatementPtr parse_drop();
  // Disk-data objects (grammar_disk.cc), after CREATE / ALTER / DROP.
  enum class DiskObjectVerb : uint8_t { kCreate, kAlter, kDrop };
  bool peek_disk_object(size_t ahead = 0) const;
  StatementPtr parse_disk_object(SourcePos pos, DiskObjectVerb verb);
  StatementPtr parse_alter();
  // Views (grammar_view.cc): after CREATE / ALTER, and DROP VIEW after DROP.
  bool peek_view_definition(size_t ahead = 0) const;
  StatementPtr parse_view_definition(SourcePos pos, bool alter);
  StatementPtr parse_drop_view(SourcePos pos);
  // ANALYZE / OPTIMIZE / CHECK TABLE (grammar_table_maintenance.cc).
  StatementPtr parse_table_maintenance();
  StatementPtr parse_create_table(SourcePos pos, bool temporary);
  StatementPtr parse_create_index(SourcePos pos, bool unique);
  StatementPtr parse_rename();
  StatementPtr parse_truncate();
  ColumnDef parse_column_def();
  // [FIRST | AFTER c] after a column definition of ALTER TABLE.
  void parse_column_position(AlterAction* action);
  DataType parse_data_type();
  void parse_charset_collate(DataType& type);
  IndexDef parse_index_def();  // PRIMARY KEY / UNIQUE / KEY / INDEX ... (cols)
  std::vector<IndexColumn> parse_index_columns();
  bool parse_table_option(TableOptions& options);
  // PARTITION BY KEY () [PARTITIONS n] after CREATE TABLE's options.
  void parse_partition_by_key(CreateTableStatement& stmt);
  IndexAlgorithm parse_index_algorithm();

  // --- administration (grammar_admin.cc)
  StatementPtr parse_use();
  StatementPtr parse_transaction();
  StatementPtr parse_set();
  SetItem parse_set_item();
  void parse_transaction_characteristics(SetItem& item);
  StatementPtr parse_show();
  void parse_show_filter(ShowStatement& show, bool allow_where);
  StatementPtr parse_describe_or_explain();
  StatementPtr parse_kill();
  StatementPtr parse_user_statement(StatementKind kind, SourcePos pos);
  StatementPtr parse_grant(bool revoke);
  StatementPtr parse_flush();
  StatementPtr parse_load_data();  // grammar_load.cc
  StatementPtr parse_prepare();
  StatementPtr parse_execute();
  StatementPtr parse_deallocate_prepare();  // after DEALLOCATE or DROP
  std::string parse_user_variable_name();   // @name, without '@'

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  uint32_t depth_ = 0;
  uint32_t placeholder_count_ = 0;
  uint32_t user_variable_assignments_ = 0;  // @x := expr parsed in expressions
};

// Bounds recursion (kNestingDepthMax): constructed on entry to a recursive rule.
class DepthGuard {
 public:
  explicit DepthGuard(Parser& parser);
  ~DepthGuard() { --parser_.depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  Parser& parser_;
};

// Upper-cases ASCII letters (function names, privilege names).
std::string to_upper(std::string_view s);

}  // namespace duo::sql
