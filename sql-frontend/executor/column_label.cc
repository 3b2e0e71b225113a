// Result column names from the query text; see column_label.h.
#include "sql-frontend/executor/column_label.h"

#include "sql-frontend/parser/lexer.h"

namespace duo::sql::executor {

namespace {

// Keywords that end a select item (the clauses that may follow the select list, and AS
// before an alias; an alias written without AS is named by the caller, which has it).
bool ends_item(const Token& token) {
  for (Keyword k : {Keyword::kFrom, Keyword::kWhere, Keyword::kGroup, Keyword::kHaving,
                    Keyword::kOrder, Keyword::kLimit, Keyword::kInto, Keyword::kFor, Keyword::kLock,
                    Keyword::kUnion, Keyword::kWindow, Keyword::kAs}) {
    if (token.is(k)) return true;
  }
  return false;
}

}  // namespace

std::string select_item_label(std::string_view text, uint32_t offset) {
  if (offset >= text.size()) return std::string();
  Lexer lexer(text, offset);
  int depth = 0;
  size_t end = offset;
  for (;;) {
    const Token token = lexer.next();
    if (token.is(TokenKind::kEnd) || token.is(TokenKind::kError) ||
        token.is(TokenKind::kSemicolon)) {
      break;
    }
    if (token.is(TokenKind::kLeftParen)) {
      ++depth;
    } else if (token.is(TokenKind::kRightParen)) {
      if (depth == 0) break;  // the end of an enclosing subquery
      --depth;
    } else if (depth == 0 && (token.is(TokenKind::kComma) || ends_item(token))) {
      break;
    }
    end = token.offset + token.text.size();
  }
  return std::string(text.substr(offset, end - offset));
}

}  // namespace duo::sql::executor
