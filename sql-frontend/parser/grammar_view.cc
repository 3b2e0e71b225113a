// View grammar (MySQL 8.0): CREATE [OR REPLACE] [ALGORITHM = ...] [DEFINER = user]
// [SQL SECURITY {DEFINER | INVOKER}] VIEW v [(cols)] AS query [WITH [CASCADED | LOCAL]
// CHECK OPTION], ALTER VIEW with the same clauses, DROP VIEW [IF EXISTS] v [, ...]
// [RESTRICT | CASCADE]. Kept apart from grammar_ddl.cc so view changes merge easily.
#include "sql-frontend/parser/grammar.h"

namespace duo::sql {

bool Parser::peek_view_definition(size_t ahead) const {
  const Token& t = peek(ahead);
  return t.is(Keyword::kView) || t.is(Keyword::kAlgorithm) || peek_word("DEFINER", ahead) ||
         (peek_word("SQL", ahead) && peek_word("SECURITY", ahead + 1)) ||
         (t.is(Keyword::kOr) && peek(ahead + 1).is(Keyword::kReplace));
}

StatementPtr Parser::parse_view_definition(SourcePos pos, bool alter) {
  auto stmt = std::make_unique<ViewStatement>(pos);
  stmt->action = alter ? ViewAction::kAlter : ViewAction::kCreate;
  if (!alter && accept(Keyword::kOr)) {
    expect(Keyword::kReplace);
    stmt->or_replace = true;
  }
  if (accept(Keyword::kAlgorithm)) {
    expect(TokenKind::kEq);
    if (accept_word("UNDEFINED")) {
      stmt->algorithm = "UNDEFINED";
    } else if (accept_word("MERGE")) {
      stmt->algorithm = "MERGE";
    } else if (accept_word("TEMPTABLE")) {
      stmt->algorithm = "TEMPTABLE";
    } else {
      fail();
    }
  }
  if (accept_word("DEFINER")) {
    expect(TokenKind::kEq);
    stmt->definer = parse_user_name();
  }
  if (accept_word("SQL")) {
    if (!accept_word("SECURITY")) fail();
    if (accept_word("DEFINER")) {
      stmt->security = "DEFINER";
    } else if (accept_word("INVOKER")) {
      stmt->security = "INVOKER";
    } else {
      fail();
    }
  }
  expect(Keyword::kView);
  stmt->names.push_back(parse_object_name());
  if (peek().is(TokenKind::kLeftParen)) stmt->columns = parse_identifier_list();
  expect(Keyword::kAs);
  stmt->query_begin = peek().offset;
  stmt->query = parse_query_expr();
  // The query's text ends with its last token (before WITH CHECK OPTION or the end).
  const Token& last = tokens_[pos_ - 1];
  stmt->query_end = last.offset + last.text.size();
  if (accept(Keyword::kWith)) {
    if (accept_word("CASCADED")) {
      stmt->check_option = "CASCADED";
    } else if (accept(Keyword::kLocal)) {
      stmt->check_option = "LOCAL";
    } else {
      stmt->check_option = "CASCADED";
    }
    expect(Keyword::kCheck);
    expect(Keyword::kOption);
  }
  return stmt;
}

StatementPtr Parser::parse_drop_view(SourcePos pos) {
  auto stmt = std::make_unique<ViewStatement>(pos);
  stmt->action = ViewAction::kDrop;
  expect(Keyword::kView);
  if (accept(Keyword::kIf)) {
    expect(Keyword::kExists);
    stmt->if_exists = true;
  }
  do {
    stmt->names.push_back(parse_object_name());
  } while (accept(TokenKind::kComma));
  if (!accept(Keyword::kRestrict)) accept(Keyword::kCascade);
  return stmt;
}

}  // namespace duo::sql
