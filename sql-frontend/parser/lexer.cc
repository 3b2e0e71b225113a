// The SQL lexer. See lexer.h for the rules it follows.
#include "sql-frontend/parser/lexer.h"

#include <cassert>

namespace duo::sql {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
// Characters of an unquoted identifier: MySQL also allows any byte >= 0x80 so that
// UTF-8 names work without quoting.
bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

std::string_view token_kind_name(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEnd:
      return "end of input";
    case TokenKind::kError:
      return "error";
    case TokenKind::kWord:
      return "word";
    case TokenKind::kQuotedIdent:
      return "quoted identifier";
    case TokenKind::kString:
      return "string";
    case TokenKind::kInteger:
      return "integer";
    case TokenKind::kDecimal:
      return "decimal";
    case TokenKind::kFloat:
      return "float";
    case TokenKind::kHex:
      return "hex";
    case TokenKind::kBit:
      return "bit";
    case TokenKind::kParam:
      return "?";
    case TokenKind::kUserVar:
      return "user variable";
    case TokenKind::kAt:
      return "@";
    case TokenKind::kAtAt:
      return "@@";
    case TokenKind::kLeftParen:
      return "(";
    case TokenKind::kRightParen:
      return ")";
    case TokenKind::kComma:
      return ",";
    case TokenKind::kSemicolon:
      return ";";
    case TokenKind::kDot:
      return ".";
    case TokenKind::kEq:
      return "=";
    case TokenKind::kNullSafeEq:
      return "<=>";
    case TokenKind::kNe:
      return "<>";
    case TokenKind::kLt:
      return "<";
    case TokenKind::kLe:
      return "<=";
    case TokenKind::kGt:
      return ">";
    case TokenKind::kGe:
      return ">=";
    case TokenKind::kPlus:
      return "+";
    case TokenKind::kMinus:
      return "-";
    case TokenKind::kJsonExtract:
      return "->";
    case TokenKind::kJsonUnquoteExtract:
      return "->>";
    case TokenKind::kStar:
      return "*";
    case TokenKind::kSlash:
      return "/";
    case TokenKind::kPercent:
      return "%";
    case TokenKind::kCaret:
      return "^";
    case TokenKind::kAmp:
      return "&";
    case TokenKind::kPipe:
      return "|";
    case TokenKind::kTilde:
      return "~";
    case TokenKind::kBang:
      return "!";
    case TokenKind::kShiftLeft:
      return "<<";
    case TokenKind::kShiftRight:
      return ">>";
    case TokenKind::kAndAnd:
      return "&&";
    case TokenKind::kOrOr:
      return "||";
    case TokenKind::kAssign:
      return ":=";
  }
  return "?";
}

Lexer::Lexer(std::string_view text, size_t offset) : text_(text), pos_(offset) {
  assert(text.size() < (size_t{1} << 32));
  assert(offset <= text.size());
}

Token Lexer::make(TokenKind kind, size_t start, size_t end) const {
  Token t;
  t.kind = kind;
  t.offset = static_cast<uint32_t>(start);
  t.line = token_line_;
  t.text = text_.substr(start, end - start);
  return t;
}

bool Lexer::skip_space_and_comments() {
  const size_t n = text_.size();
  while (pos_ < n) {
    char c = text_[pos_];
    if (is_space(c)) {
      if (c == '\n') ++line_;
      ++pos_;
      continue;
    }
    // "-- " starts a comment only when followed by whitespace, a control byte or the
    // end: MySQL's rule, so that "1--1" stays an expression.
    if (c == '-' && pos_ + 1 < n && text_[pos_ + 1] == '-' &&
        (pos_ + 2 == n || static_cast<unsigned char>(text_[pos_ + 2]) <= ' ')) {
      while (pos_ < n && text_[pos_] != '\n') ++pos_;
      continue;
    }
    if (c == '#') {
      while (pos_ < n && text_[pos_] != '\n') ++pos_;
      continue;
    }
    if (c == '*' && in_versioned_comment_ && pos_ + 1 < n && text_[pos_ + 1] == '/') {
      in_versioned_comment_ = false;
      pos_ += 2;
      continue;
    }
    if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '*') {
      size_t start = pos_;
      if (pos_ + 2 < n && text_[pos_ + 2] == '!' && !in_versioned_comment_) {
        // Versioned comment: /*! or /*!NNNNN. Executed when the version is ours or older.
        size_t p = pos_ + 3;
        size_t digits = 0;
        while (p + digits < n && digits < 5 && is_digit(text_[p + digits])) ++digits;
        uint32_t version = 0;
        if (digits == 5) {
          for (size_t i = 0; i < 5; ++i) version = version * 10 + (text_[p + i] - '0');
          p += 5;
        }
        if (digits == 5 && version > kServerVersionId) {
          // Too new for us: the whole comment is skipped (falls through below).
        } else {
          in_versioned_comment_ = true;
          pos_ = p;
          continue;
        }
      }
      pos_ += 2;
      bool closed = false;
      while (pos_ < n) {
        if (text_[pos_] == '\n') ++line_;
        if (text_[pos_] == '*' && pos_ + 1 < n && text_[pos_ + 1] == '/') {
          pos_ += 2;
          closed = true;
          break;
        }
        ++pos_;
      }
      if (!closed) {
        error_offset_ = start;
        return false;
      }
      continue;
    }
    break;
  }
  return true;
}

Token Lexer::next() {
  if (!skip_space_and_comments()) {
    token_line_ = line_;
    after_name_ = false;
    return make(TokenKind::kError, error_offset_, text_.size());
  }
  token_line_ = line_;
  const size_t n = text_.size();
  const size_t start = pos_;
  if (pos_ >= n) return make(TokenKind::kEnd, n, n);
  const bool after_name = after_name_;
  after_name_ = false;
  const char c = text_[pos_];
  const char c1 = pos_ + 1 < n ? text_[pos_ + 1] : '\0';

  // Literals introduced by a letter: X'..', B'..', N'..'.
  if ((c == 'x' || c == 'X') && c1 == '\'') {
    size_t p = pos_ + 2;
    while (p < n && is_hex_digit(text_[p])) ++p;
    if (p >= n || text_[p] != '\'' || (p - pos_ - 2) % 2 != 0) {
      pos_ = n;
      return make(TokenKind::kError, start, n);
    }
    pos_ = p + 1;
    return make(TokenKind::kHex, start, pos_);
  }
  if ((c == 'b' || c == 'B') && c1 == '\'') {
    size_t p = pos_ + 2;
    while (p < n && (text_[p] == '0' || text_[p] == '1')) ++p;
    if (p >= n || text_[p] != '\'') {
      pos_ = n;
      return make(TokenKind::kError, start, n);
    }
    pos_ = p + 1;
    return make(TokenKind::kBit, start, pos_);
  }
  if ((c == 'n' || c == 'N') && c1 == '\'') {
    pos_ += 2;
    Token t = lex_quoted(start, '\'', TokenKind::kString);
    t.national = t.kind == TokenKind::kString;
    return t;
  }
  if (is_digit(c) || (c == '.' && is_digit(c1) && !after_name)) return lex_number(start);
  if (is_ident_char(c)) return lex_word(start);

  pos_ += 1;
  switch (c) {
    case '\'':
    case '"':
      return lex_quoted(start, c, TokenKind::kString);
    case '`': {
      Token t = lex_quoted(start, '`', TokenKind::kQuotedIdent);
      after_name_ = t.kind == TokenKind::kQuotedIdent;
      return t;
    }
    case '(':
      return make(TokenKind::kLeftParen, start, pos_);
    case ')':
      after_name_ = true;
      return make(TokenKind::kRightParen, start, pos_);
    case ',':
      return make(TokenKind::kComma, start, pos_);
    case ';':
      return make(TokenKind::kSemicolon, start, pos_);
    case '.':
      return make(TokenKind::kDot, start, pos_);
    case '?':
      return make(TokenKind::kParam, start, pos_);
    case '=':
      return make(TokenKind::kEq, start, pos_);
    case '+':
      return make(TokenKind::kPlus, start, pos_);
    case '-':
      if (c1 == '>') {
        ++pos_;
        if (pos_ < n && text_[pos_] == '>') return ++pos_, make(TokenKind::kJsonUnquoteExtract, start, pos_);
        return make(TokenKind::kJsonExtract, start, pos_);
      }
      return make(TokenKind::kMinus, start, pos_);
    case '*':
      return make(TokenKind::kStar, start, pos_);
    case '/':
      return make(TokenKind::kSlash, start, pos_);
    case '%':
      return make(TokenKind::kPercent, start, pos_);
    case '^':
      return make(TokenKind::kCaret, start, pos_);
    case '~':
      return make(TokenKind::kTilde, start, pos_);
    case '&':
      if (c1 == '&') return ++pos_, make(TokenKind::kAndAnd, start, pos_);
      return make(TokenKind::kAmp, start, pos_);
    case '|':
      if (c1 == '|') return ++pos_, make(TokenKind::kOrOr, start, pos_);
      return make(TokenKind::kPipe, start, pos_);
    case '!':
      if (c1 == '=') return ++pos_, make(TokenKind::kNe, start, pos_);
      return make(TokenKind::kBang, start, pos_);
    case ':':
      if (c1 == '=') return ++pos_, make(TokenKind::kAssign, start, pos_);
      break;
    case '<':
      if (c1 == '=') {
        ++pos_;
        if (pos_ < n && text_[pos_] == '>')
          return ++pos_, make(TokenKind::kNullSafeEq, start, pos_);
        return make(TokenKind::kLe, start, pos_);
      }
      if (c1 == '>') return ++pos_, make(TokenKind::kNe, start, pos_);
      if (c1 == '<') return ++pos_, make(TokenKind::kShiftLeft, start, pos_);
      return make(TokenKind::kLt, start, pos_);
    case '>':
      if (c1 == '=') return ++pos_, make(TokenKind::kGe, start, pos_);
      if (c1 == '>') return ++pos_, make(TokenKind::kShiftRight, start, pos_);
      return make(TokenKind::kGt, start, pos_);
    case '@':
      if (c1 == '@') return ++pos_, make(TokenKind::kAtAt, start, pos_);
      if (is_ident_char(c1) || c1 == '.') {
        while (pos_ < n && (is_ident_char(text_[pos_]) || text_[pos_] == '.')) ++pos_;
        return make(TokenKind::kUserVar, start, pos_);
      }
      return make(TokenKind::kAt, start, pos_);
    default:
      break;
  }
  // A byte that starts no token (a control character, '\\', ':' alone ...).
  pos_ = start;
  Token t = make(TokenKind::kError, start, start + 1);
  pos_ = n;
  return t;
}

Token Lexer::lex_number(size_t start) {
  const size_t n = text_.size();
  size_t p = start;
  // 0x.. and 0b.. literals, unless more identifier characters follow (then it's a word).
  if (text_[p] == '0' && p + 1 < n && (text_[p + 1] == 'x' || text_[p + 1] == 'b')) {
    const bool hex = text_[p + 1] == 'x';
    size_t q = p + 2;
    while (q < n && (hex ? is_hex_digit(text_[q]) : (text_[q] == '0' || text_[q] == '1'))) ++q;
    if (q > p + 2 && (q >= n || !is_ident_char(text_[q]))) {
      pos_ = q;
      return make(hex ? TokenKind::kHex : TokenKind::kBit, start, q);
    }
  }
  while (p < n && is_digit(text_[p])) ++p;
  TokenKind kind = TokenKind::kInteger;
  if (p < n && text_[p] == '.') {
    ++p;
    while (p < n && is_digit(text_[p])) ++p;
    kind = TokenKind::kDecimal;
  }
  if (p < n && (text_[p] == 'e' || text_[p] == 'E')) {
    size_t q = p + 1;
    if (q < n && (text_[q] == '+' || text_[q] == '-')) ++q;
    if (q < n && is_digit(text_[q])) {
      while (q < n && is_digit(text_[q])) ++q;
      p = q;
      kind = TokenKind::kFloat;
    }
  }
  // MySQL identifiers may start with digits: "123abc" is a word, not 123 then abc.
  if (kind == TokenKind::kInteger && p < n && is_ident_char(text_[p])) return lex_word(start);
  pos_ = p;
  return make(kind, start, p);
}

Token Lexer::lex_word(size_t start) {
  const size_t n = text_.size();
  size_t p = start;
  while (p < n && is_ident_char(text_[p])) ++p;
  pos_ = p;
  Token t = make(TokenKind::kWord, start, p);
  t.keyword = lookup_keyword(t.text);
  after_name_ = true;
  return t;
}

Token Lexer::lex_quoted(size_t start, char quote, TokenKind kind) {
  // pos_ is just after the opening quote.
  const size_t n = text_.size();
  size_t p = pos_;
  while (p < n) {
    char c = text_[p];
    if (c == '\\' && quote != '`') {
      p += 2;
      continue;
    }
    if (c == quote) {
      if (p + 1 < n && text_[p + 1] == quote) {
        p += 2;
        continue;
      }
      pos_ = p + 1;
      return make(kind, start, pos_);
    }
    ++p;
  }
  pos_ = n;
  return make(TokenKind::kError, start, n);
}

std::string decode_string(const Token& token) {
  assert(token.kind == TokenKind::kString);
  std::string_view body = token.text;
  if (token.national) body.remove_prefix(1);
  const char quote = body.front();
  body = body.substr(1, body.size() - 2);
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == quote) {  // doubled quote
      out.push_back(c);
      ++i;
      continue;
    }
    if (c != '\\' || i + 1 >= body.size()) {
      out.push_back(c);
      continue;
    }
    char e = body[++i];
    switch (e) {
      case '0':
        out.push_back('\0');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'Z':
        out.push_back('\x1a');
        break;
      case '%':
      case '_':
        out.push_back('\\');
        out.push_back(e);
        break;
      default:
        out.push_back(e);
        break;
    }
  }
  return out;
}

std::string decode_identifier(const Token& token) {
  if (token.kind != TokenKind::kQuotedIdent) return std::string(token.text);
  std::string_view body = token.text.substr(1, token.text.size() - 2);
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    out.push_back(body[i]);
    if (body[i] == '`') ++i;  // `` inside a quoted identifier is one backtick
  }
  return out;
}

std::string decode_hex_or_bit(const Token& token) {
  std::string_view digits = token.text;
  if (digits.size() >= 2 && digits[0] == '0') {
    digits.remove_prefix(2);  // 0x.. / 0b..
  } else {
    digits = digits.substr(2, digits.size() - 3);  // X'..' / B'..'
  }
  std::string out;
  if (token.kind == TokenKind::kHex) {
    // 0xABC has an odd digit count: MySQL pads on the left (0x0ABC).
    size_t i = 0;
    if (digits.size() % 2 == 1) {
      out.push_back(static_cast<char>(hex_value(digits[0])));
      i = 1;
    }
    for (; i + 1 < digits.size() + 1 && i < digits.size(); i += 2) {
      out.push_back(static_cast<char>(hex_value(digits[i]) * 16 + hex_value(digits[i + 1])));
    }
    return out;
  }
  size_t first_bits = digits.size() % 8;
  size_t i = 0;
  if (first_bits != 0) {
    unsigned v = 0;
    for (; i < first_bits; ++i) v = v * 2 + (digits[i] - '0');
    out.push_back(static_cast<char>(v));
  }
  while (i < digits.size()) {
    unsigned v = 0;
    for (size_t k = 0; k < 8; ++k, ++i) v = v * 2 + (digits[i] - '0');
    out.push_back(static_cast<char>(v));
  }
  return out;
}

}  // namespace duo::sql
