// The SQL lexer: turns MySQL-dialect statement text into tokens for the parser.
//
// It follows MySQL's lexical rules (default sql_mode): keywords are case-insensitive;
// `backtick` identifiers; 'single' and "double" quoted strings with backslash escapes
// and doubled quotes; X'..'/0x.. hex and B'..'/0b.. bit literals; integers, decimals
// and floats; words may start with a digit (`1st_col`); comments `-- ` (dash dash
// space), `#` and `/* */`; versioned comments `/*!40101 ... */` whose contents are
// lexed as SQL when their version is not above kServerVersionId; optimizer hints
// `/*+ ... */` are skipped as comments. Line numbers count newlines in whitespace and
// comments only, as MySQL's lexer does (a newline inside a string literal does not
// advance the line of the 1064 message).
//
// Tokens point into the text (no allocation per token); string and identifier values
// are decoded on demand by decode_string() / decode_identifier(). A lexical error
// (unterminated string or comment, stray byte) becomes one TokenKind::kError token at
// the offending position; the parser turns it into a 1064.
//
// Thread-safety: a Lexer is thread-compatible (one owner); the free functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sql-frontend/parser/keywords.h"

namespace duo::sql {

// The MySQL version duo_sqld reports (8.0.36): versioned comments up to it are executed.
inline constexpr uint32_t kServerVersionId = 80036;

enum class TokenKind : uint8_t {
  kEnd,          // end of the text
  kError,        // lexical error starting here
  kWord,         // unquoted identifier or keyword (Token::keyword tells which)
  kQuotedIdent,  // `identifier`
  kString,       // 'text' or "text" (Token::national for N'text')
  kInteger,      // 123
  kDecimal,      // 1.5, .5, 1.
  kFloat,        // 1e5, 1.5E-3
  kHex,          // X'0A' or 0x0A
  kBit,          // B'01' or 0b01
  kParam,        // ? placeholder of a prepared statement
  kUserVar,      // @name (text includes the '@'); @'name' lexes as kAt + kString
  kAt,           // @ not followed by a name character
  kAtAt,         // @@ (system variable prefix)
  kLeftParen,
  kRightParen,
  kComma,
  kSemicolon,
  kDot,
  kEq,          // =
  kNullSafeEq,  // <=>
  kNe,          // <> or !=
  kLt,
  kLe,
  kGt,
  kGe,
  kPlus,
  kMinus,
  kJsonExtract,          // ->  (col->'$.path' is JSON_EXTRACT(col, '$.path'))
  kJsonUnquoteExtract,   // ->> (JSON_UNQUOTE(JSON_EXTRACT(...)))
  kStar,
  kSlash,
  kPercent,
  kCaret,
  kAmp,
  kPipe,
  kTilde,
  kBang,
  kShiftLeft,
  kShiftRight,
  kAndAnd,  // &&
  kOrOr,    // || (OR in the default sql_mode)
  kAssign,  // :=
};

// A short printable name for diagnostics and tests ("','", "word", "end of input").
std::string_view token_kind_name(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::kEnd;
  Keyword keyword = Keyword::kNone;  // set for kWord tokens that are keywords
  bool national = false;             // kString written N'...'
  uint32_t offset = 0;               // byte offset of the token in the whole text
  uint32_t line = 1;                 // line of the token within its statement
  std::string_view text;             // the token's source bytes, quotes included

  bool is(TokenKind k) const { return kind == k; }
  bool is(Keyword k) const { return kind == TokenKind::kWord && keyword == k; }
};

class Lexer {
 public:
  // Lexes `text` starting at byte `offset`. Precondition: text.size() < 4 GiB (the
  // protocol layer caps statements at max_allowed_packet, far below that).
  explicit Lexer(std::string_view text, size_t offset = 0);

  // The next token; kEnd at the end of the text (and for ever after).
  Token next();

  // Restarts line counting at 1: MySQL numbers lines per statement of a multi-statement
  // text. The parser calls this after each ';'.
  void reset_line() { line_ = 1; }

  size_t offset() const { return pos_; }

 private:
  // Skips whitespace and comments; returns false (with error_offset_) on an
  // unterminated comment.
  bool skip_space_and_comments();
  Token make(TokenKind kind, size_t start, size_t end) const;
  Token lex_number(size_t start);
  Token lex_word(size_t start);
  Token lex_quoted(size_t start, char quote, TokenKind kind);

  std::string_view text_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t token_line_ = 1;
  size_t error_offset_ = 0;
  // Inside a versioned comment /*!NNNNN ... */ whose contents are lexed: its closing
  // "*/" is skipped like whitespace.
  bool in_versioned_comment_ = false;
  // The previous token was a name or ')': a following ".5" is then a '.' and a number
  // (`t.5col` is rare, `t1.c` common), not the decimal .5.
  bool after_name_ = false;
};

// The value of a kString token: quotes removed, doubled quotes and backslash escapes
// decoded (\0 \b \n \r \t \Z \\ \' \" kept as MySQL does, \% and \_ keep their
// backslash so LIKE still sees them, any other \x is x).
std::string decode_string(const Token& token);
// The name of a kWord or kQuotedIdent token (backticks removed, `` decoded).
std::string decode_identifier(const Token& token);
// The bytes of a kHex / kBit literal (X'0A' -> "\n"; bits are right-aligned in bytes).
std::string decode_hex_or_bit(const Token& token);

}  // namespace duo::sql
