// LOAD DATA grammar (MySQL 8.0's, without PARTITION and LOAD XML): see LoadDataStatement.
#include "sql-frontend/parser/grammar.h"

namespace duo::sql {

namespace {
// MySQL's limit for the separators' lengths is the column's; one byte for the enclosing
// and escape characters (an empty string turns them off).
bool one_byte_or_empty(const std::string& s) { return s.size() <= 1; }
}  // namespace

StatementPtr Parser::parse_load_data() {
  auto stmt = std::make_unique<LoadDataStatement>(here());
  take();  // LOAD
  if (peek_word("XML")) fail();  // LOAD XML: not supported (1064 as for any unknown form)
  if (!accept_word("DATA")) fail();
  if (!accept(Keyword::kLowPriority)) accept_word("CONCURRENT");
  stmt->local = accept(Keyword::kLocal);
  if (!accept_word("INFILE")) fail();
  stmt->file = parse_string();
  if (accept(Keyword::kReplace)) {
    stmt->replace = true;
  } else if (accept(Keyword::kIgnore)) {
    stmt->ignore = true;
  }
  expect(Keyword::kInto);
  expect(Keyword::kTable);
  stmt->table = parse_object_name();
  if (accept(Keyword::kCharset)) {
    stmt->charset = parse_name_or_string();
  } else if (peek().is(Keyword::kCharacter) && peek(1).is(Keyword::kSet)) {
    take();
    take();
    stmt->charset = parse_name_or_string();
  }
  if (accept_word("FIELDS") || accept_word("COLUMNS")) {
    bool any = false;
    for (;;) {
      if (accept_word("TERMINATED")) {
        if (!accept_word("BY")) fail();
        stmt->fields_terminated = parse_string();
      } else if (accept_word("OPTIONALLY")) {
        if (!accept_word("ENCLOSED") || !accept_word("BY")) fail();
        stmt->fields_enclosed = parse_string();
        stmt->optionally_enclosed = true;
      } else if (accept_word("ENCLOSED")) {
        if (!accept_word("BY")) fail();
        stmt->fields_enclosed = parse_string();
      } else if (accept_word("ESCAPED")) {
        if (!accept_word("BY")) fail();
        stmt->fields_escaped = parse_string();
      } else {
        break;
      }
      any = true;
    }
    if (!any) fail();
    if (!one_byte_or_empty(stmt->fields_enclosed) || !one_byte_or_empty(stmt->fields_escaped)) {
      fail();
    }
  }
  if (accept(Keyword::kLines)) {
    bool any = false;
    for (;;) {
      if (accept_word("STARTING")) {
        if (!accept_word("BY")) fail();
        stmt->lines_starting = parse_string();
      } else if (accept_word("TERMINATED")) {
        if (!accept_word("BY")) fail();
        stmt->lines_terminated = parse_string();
      } else {
        break;
      }
      any = true;
    }
    if (!any) fail();
  }
  if (accept(Keyword::kIgnore)) {
    const Token& t = peek();
    if (!t.is(TokenKind::kInteger)) fail();
    stmt->ignore_lines = std::stoull(std::string(t.text));
    take();
    if (!accept(Keyword::kLines) && !accept_word("ROWS")) fail();
  }
  if (accept(TokenKind::kLeftParen)) {
    if (!accept(TokenKind::kRightParen)) {
      do {
        if (peek().kind == TokenKind::kUserVar) {
          stmt->targets.emplace_back(take().text);
        } else {
          stmt->targets.push_back(parse_identifier().name);
        }
      } while (accept(TokenKind::kComma));
      expect(TokenKind::kRightParen);
    }
  }
  if (accept(Keyword::kSet)) stmt->set = parse_assignments();
  return stmt;
}

}  // namespace duo::sql
