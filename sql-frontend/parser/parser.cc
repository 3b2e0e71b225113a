// Entry points (ScriptParser, parse_statement), the 1064 message, statement dispatch
// and the small shared grammar pieces (identifiers, names, users). See parser.h.
#include "sql-frontend/parser/parser.h"

#include <cassert>
#include <limits>

#include "sql-frontend/parser/grammar.h"

namespace duo::sql {

namespace {

// Longest prefix of `s` of at most `bytes_max` bytes that ends on a UTF-8 character
// boundary and holds only well-formed characters: MySQL prints the "near" text with
// '%-.80s', which cuts at 80 bytes and then drops a trailing partial or malformed
// character (well_formed_len). A NUL byte ends it too (the text is a C string there).
size_t well_formed_prefix(std::string_view s, size_t bytes_max) {
  size_t limit = std::min(s.size(), bytes_max);
  size_t i = 0;
  while (i < limit) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0) break;
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    if (len == 0 || i + len > limit) break;
    bool ok = true;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) ok = false;
    }
    if (!ok) break;
    i += len;
  }
  return i;
}

SqlError make_syntax_error(std::string_view text, const Token& at) {
  SqlError e;
  e.line = at.line;
  e.offset = at.offset;
  e.message = syntax_error_message(text, at.offset, at.line);
  return e;
}

}  // namespace

std::string syntax_error_message(std::string_view text, size_t offset, uint32_t line) {
  std::string_view rest = offset < text.size() ? text.substr(offset) : std::string_view();
  rest = rest.substr(0, well_formed_prefix(rest, 80));
  std::string m =
      "You have an error in your SQL syntax; check the manual that corresponds to your MySQL "
      "server version for the right syntax to use near '";
  m.append(rest);
  m.append("' at line ");
  m.append(std::to_string(line));
  return m;
}

std::string to_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

// ---------------------------------------------------------------------------------
// ScriptParser

ScriptParser::ScriptParser(std::string_view text) : text_(text), lexer_(text) {
  lookahead_ = lexer_.next();
}

bool ScriptParser::has_next() const {
  if (failed_) return false;
  if (first_) return true;  // even an empty text yields one result (1065)
  return lookahead_.kind != TokenKind::kEnd;
}

void ScriptParser::lex_statement() {
  tokens_.clear();
  tokens_.push_back(lookahead_);
  while (tokens_.back().kind != TokenKind::kEnd && tokens_.back().kind != TokenKind::kSemicolon &&
         tokens_.back().kind != TokenKind::kError) {
    tokens_.push_back(lexer_.next());
  }
  // The next statement numbers its lines from 1 again, starting right after the ';'.
  terminator_line_ = tokens_.back().line;
  if (tokens_.back().kind == TokenKind::kSemicolon) lexer_.reset_line();
  lookahead_ = tokens_.back().kind == TokenKind::kEnd ? tokens_.back() : lexer_.next();
}

ParsedStatement ScriptParser::next() {
  assert(has_next());
  const bool first = first_;
  first_ = false;
  ParsedStatement result;
  if (first && lookahead_.kind == TokenKind::kEnd) {
    failed_ = true;
    SqlError e;
    e.mysql_errno = kErrEmptyQuery;
    e.message = "Query was empty";
    result.error = std::move(e);
    return result;
  }
  lex_statement();
  const Token& first_token = tokens_.front();
  const Token& last = tokens_.back();
  result.text = text_.substr(first_token.offset, last.offset - first_token.offset);
  // Trim trailing whitespace/comments from the statement text for logs: the sentinel's
  // offset is after them, the last real token's end is what matters.
  if (tokens_.size() >= 2) {
    const Token& t = tokens_[tokens_.size() - 2];
    result.text = text_.substr(first_token.offset, t.offset + t.text.size() - first_token.offset);
  }
  try {
    Parser parser(tokens_);
    result.statement = parser.parse_statement();
  } catch (const SyntaxErrorAt& e) {
    assert(e.token_index < tokens_.size());
    result.error = make_syntax_error(text_, tokens_[e.token_index]);
    failed_ = true;
  }
  return result;
}

ParsedStatement parse_statement(std::string_view text) {
  ScriptParser script(text);
  ParsedStatement result = script.next();
  if (result.ok() && script.has_next()) {
    // A second statement without CLIENT_MULTI_STATEMENTS: MySQL sees one statement
    // continuing after the ';' and reports the error at the next token, counting lines
    // from the start of the whole text.
    const Token& next = script.next_token();
    const uint32_t line = script.terminator_line() + next.line - 1;
    SqlError e;
    e.offset = next.offset;
    e.line = line;
    e.message = syntax_error_message(text, next.offset, line);
    result.statement.reset();
    result.error = std::move(e);
  }
  return result;
}

// ---------------------------------------------------------------------------------
// Statement dispatch

DepthGuard::DepthGuard(Parser& parser) : parser_(parser) {
  if (parser_.depth_ >= kNestingDepthMax) parser_.fail();
  ++parser_.depth_;
}

StatementPtr Parser::parse_statement() {
  const Token& t = peek();
  StatementPtr stmt;
  if (t.kind == TokenKind::kLeftParen) {
    stmt = parse_select_statement();
  } else if (t.kind != TokenKind::kWord) {
    fail();
  } else {
    switch (t.keyword) {
      case Keyword::kSelect:
        stmt = parse_select_statement();
        break;
      case Keyword::kDo:
        stmt = parse_do();
        break;
      case Keyword::kInsert:
        stmt = parse_insert(false);
        break;
      case Keyword::kReplace:
        stmt = parse_insert(true);
        break;
      case Keyword::kUpdate:
        stmt = parse_update();
        break;
      case Keyword::kDelete:
        stmt = parse_delete();
        break;
      case Keyword::kCreate:
        stmt = parse_create();
        break;
      case Keyword::kDrop:
        stmt = parse_drop();
        break;
      case Keyword::kAlter:
        stmt = parse_alter();
        break;
      case Keyword::kRename:
        stmt = parse_rename();
        break;
      case Keyword::kTruncate:
        stmt = parse_truncate();
        break;
      case Keyword::kUse:
        stmt = parse_use();
        break;
      case Keyword::kBegin:
      case Keyword::kStart:
      case Keyword::kCommit:
      case Keyword::kRollback:
        stmt = parse_transaction();
        break;
      case Keyword::kSet:
        stmt = parse_set();
        break;
      case Keyword::kShow:
        stmt = parse_show();
        break;
      case Keyword::kDescribe:
      case Keyword::kDesc:
      case Keyword::kExplain:
        stmt = parse_describe_or_explain();
        break;
      case Keyword::kAnalyze:
      case Keyword::kCheck:
        stmt = parse_table_maintenance();
        break;
      case Keyword::kKill:
        stmt = parse_kill();
        break;
      case Keyword::kGrant:
        stmt = parse_grant(false);
        break;
      case Keyword::kRevoke:
        stmt = parse_grant(true);
        break;
      case Keyword::kFlush:
        stmt = parse_flush();
        break;
      case Keyword::kLoad:
        stmt = parse_load_data();
        break;
      default:
        // Not keywords of the lexer (MySQL does not reserve them).
        if (peek_word("OPTIMIZE")) {
          stmt = parse_table_maintenance();
        } else if (peek_word("PREPARE")) {
          stmt = parse_prepare();
        } else if (peek_word("EXECUTE")) {
          stmt = parse_execute();
        } else if (peek_word("DEALLOCATE")) {
          take();
          stmt = parse_deallocate_prepare();
        } else {
          fail();
        }
    }
  }
  if (!at_end() || peek().kind == TokenKind::kError) fail();
  stmt->placeholder_count = placeholder_count_;
  stmt->user_variable_assignments = user_variable_assignments_;
  return stmt;
}

// ---------------------------------------------------------------------------------
// Shared small pieces

bool Parser::peek_word(std::string_view upper, size_t ahead) const {
  const Token& t = peek(ahead);
  if (t.kind != TokenKind::kWord || t.text.size() != upper.size()) return false;
  for (size_t i = 0; i < upper.size(); ++i) {
    char c = t.text[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != upper[i]) return false;
  }
  return true;
}

bool Parser::accept_word(std::string_view upper) {
  if (!peek_word(upper)) return false;
  take();
  return true;
}

bool Parser::peek_identifier(size_t ahead) const {
  const Token& t = peek(ahead);
  if (t.kind == TokenKind::kQuotedIdent) return true;
  return t.kind == TokenKind::kWord && !is_reserved(t.keyword);
}

Identifier Parser::parse_identifier() {
  if (!peek_identifier()) fail();
  const Token& t = take();
  return Identifier{decode_identifier(t), t.kind == TokenKind::kQuotedIdent, pos_of(t)};
}

Identifier Parser::parse_identifier_after_dot() {
  const Token& t = peek();
  if (t.kind != TokenKind::kWord && t.kind != TokenKind::kQuotedIdent) fail();
  take();
  return Identifier{decode_identifier(t), t.kind == TokenKind::kQuotedIdent, pos_of(t)};
}

ObjectName Parser::parse_object_name() {
  ObjectName name;
  name.name = parse_identifier();
  if (peek().is(TokenKind::kDot)) {
    take();
    name.db = std::move(name.name);
    name.name = parse_identifier_after_dot();
  }
  return name;
}

std::string Parser::parse_name_or_string() {
  const Token& t = peek();
  if (t.kind == TokenKind::kString) {
    take();
    return decode_string(t);
  }
  // Charset and engine names may be keywords (BINARY, MEMORY): any word is accepted.
  if (t.kind == TokenKind::kWord || t.kind == TokenKind::kQuotedIdent) {
    take();
    return decode_identifier(t);
  }
  fail();
}

std::string Parser::parse_string() {
  const Token& t = peek();
  if (t.kind != TokenKind::kString) fail();
  take();
  std::string value = decode_string(t);
  // Adjacent literals concatenate: 'a' 'b' is 'ab'.
  while (peek().kind == TokenKind::kString && !peek().national) value += decode_string(take());
  return value;
}

uint64_t Parser::parse_unsigned() {
  const Token& t = peek();
  if (t.kind != TokenKind::kInteger) fail();
  uint64_t v = 0;
  for (char c : t.text) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) fail();
    v = v * 10 + d;
  }
  take();
  return v;
}

std::vector<Identifier> Parser::parse_identifier_list() {
  expect(TokenKind::kLeftParen);
  std::vector<Identifier> list;
  do {
    list.push_back(parse_identifier());
  } while (accept(TokenKind::kComma));
  expect(TokenKind::kRightParen);
  return list;
}

UserName Parser::parse_user_name() {
  UserName user;
  if (peek().is(Keyword::kCurrentUser)) {
    take();
    if (accept(TokenKind::kLeftParen)) expect(TokenKind::kRightParen);
    user.current_user = true;
    return user;
  }
  const Token& t = peek();
  if (t.kind == TokenKind::kString) {
    user.user = decode_string(take());
  } else if (t.kind == TokenKind::kQuotedIdent || t.kind == TokenKind::kWord) {
    // User names are not identifiers: reserved words are fine ('root'@... or root@...).
    user.user = decode_identifier(take());
  } else {
    fail();
  }
  // The host: @'h', @`h`, @h (lexed as the user variable token "@h").
  if (peek().is(TokenKind::kUserVar)) {
    user.host = std::string(take().text.substr(1));
    user.host_given = true;
  } else if (peek().is(TokenKind::kAt)) {
    take();
    const Token& h = peek();
    if (h.kind == TokenKind::kString) {
      user.host = decode_string(take());
    } else if (h.kind == TokenKind::kQuotedIdent || h.kind == TokenKind::kWord) {
      user.host = decode_identifier(take());
    } else {
      fail();
    }
    user.host_given = true;
  }
  return user;
}

}  // namespace duo::sql
