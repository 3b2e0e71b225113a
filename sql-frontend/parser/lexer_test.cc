// Lexer tests: token kinds, literals, comments, versioned comments, line counting.
#include "sql-frontend/parser/lexer.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

namespace duo::sql {
namespace {

std::vector<Token> lex_all(std::string_view text) {
  Lexer lexer(text);
  std::vector<Token> out;
  for (;;) {
    Token t = lexer.next();
    out.push_back(t);
    if (t.kind == TokenKind::kEnd || t.kind == TokenKind::kError) return out;
  }
}

std::vector<TokenKind> kinds(std::string_view text) {
  std::vector<TokenKind> out;
  for (const Token& t : lex_all(text)) out.push_back(t.kind);
  return out;
}

using K = TokenKind;

TEST(LexerTest, KeywordsAreCaseInsensitive) {
  auto toks = lex_all("select SeLeCt FROM foo");
  EXPECT_TRUE(toks[0].is(Keyword::kSelect));
  EXPECT_TRUE(toks[1].is(Keyword::kSelect));
  EXPECT_TRUE(toks[2].is(Keyword::kFrom));
  EXPECT_EQ(toks[3].keyword, Keyword::kNone);
  EXPECT_EQ(lookup_keyword("sql_calc_found_rows"), Keyword::kSqlCalcFoundRows);
  EXPECT_TRUE(is_reserved(Keyword::kSelect));
  EXPECT_FALSE(is_reserved(Keyword::kStatus));
}

// The hashed lookup finds every keyword of the list in any case, and nothing else.
TEST(LexerTest, EveryKeywordLooksUpToItself) {
  const Keyword all[] = {
#define X(enumerator, spelling, reserved) Keyword::enumerator,
#include "sql-frontend/parser/keyword_list.inc"
#undef X
  };
  for (Keyword keyword : all) {
    const std::string spelling(keyword_spelling(keyword));
    std::string lower = spelling;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(lookup_keyword(spelling), keyword) << spelling;
    EXPECT_EQ(lookup_keyword(lower), keyword) << lower;
    EXPECT_EQ(lookup_keyword(spelling + "X"), Keyword::kNone) << spelling;
    EXPECT_EQ(lookup_keyword(spelling.substr(1)) == keyword, false) << spelling;
  }
  for (const char* word : {"", "sbtest1", "id", "c", "k", "selec", "selectt", "_", "é",
                           "a_very_long_identifier_beyond_any_keyword"}) {
    EXPECT_EQ(lookup_keyword(word), Keyword::kNone) << word;
  }
}

TEST(LexerTest, Numbers) {
  EXPECT_EQ(kinds("1 1.5 .5 1. 1e5 1.5E-3 0x1F X'0a' 0b101 b'11'"),
            (std::vector<K>{K::kInteger, K::kDecimal, K::kDecimal, K::kDecimal, K::kFloat,
                            K::kFloat, K::kHex, K::kHex, K::kBit, K::kBit, K::kEnd}));
  // Identifiers may start with digits.
  auto toks = lex_all("1abc 0xZZ");
  EXPECT_EQ(toks[0].kind, K::kWord);
  EXPECT_EQ(toks[0].text, "1abc");
  EXPECT_EQ(toks[1].kind, K::kWord);
  // t.5 after a name is a dot and a number, not ".5".
  EXPECT_EQ(kinds("t.c"), (std::vector<K>{K::kWord, K::kDot, K::kWord, K::kEnd}));
  EXPECT_EQ(decode_hex_or_bit(lex_all("X'4142'")[0]), "AB");
  EXPECT_EQ(decode_hex_or_bit(lex_all("0x141")[0]), std::string("\x01\x41", 2));
  EXPECT_EQ(decode_hex_or_bit(lex_all("b'1000001'")[0]), "A");
}

TEST(LexerTest, StringsAndEscapes) {
  auto toks = lex_all(R"('it''s' "say \"hi\"" 'a\nb\\c\%' N'x')");
  ASSERT_EQ(toks[0].kind, K::kString);
  EXPECT_EQ(decode_string(toks[0]), "it's");
  EXPECT_EQ(decode_string(toks[1]), "say \"hi\"");
  EXPECT_EQ(decode_string(toks[2]), "a\nb\\c\\%");
  EXPECT_TRUE(toks[3].national);
  EXPECT_EQ(decode_string(toks[3]), "x");
  auto id = lex_all("`we``ird`");
  EXPECT_EQ(id[0].kind, K::kQuotedIdent);
  EXPECT_EQ(decode_identifier(id[0]), "we`ird");
}

TEST(LexerTest, Operators) {
  EXPECT_EQ(kinds("<=> <> != <= >= << >> && || := ! ~ ^ @@ @x ? ;"),
            (std::vector<K>{K::kNullSafeEq, K::kNe, K::kNe, K::kLe, K::kGe, K::kShiftLeft,
                            K::kShiftRight, K::kAndAnd, K::kOrOr, K::kAssign, K::kBang, K::kTilde,
                            K::kCaret, K::kAtAt, K::kUserVar, K::kParam, K::kSemicolon, K::kEnd}));
}

TEST(LexerTest, Comments) {
  EXPECT_EQ(kinds("1 -- comment\n2 # another\n3 /* block\n */ 4"),
            (std::vector<K>{K::kInteger, K::kInteger, K::kInteger, K::kInteger, K::kEnd}));
  // "--" without a following space is two minus signs.
  EXPECT_EQ(kinds("1--1"),
            (std::vector<K>{K::kInteger, K::kMinus, K::kMinus, K::kInteger, K::kEnd}));
  // Versioned comments are SQL when not newer than the server; hints are comments.
  EXPECT_EQ(kinds("/*!40101 SET */ x"), (std::vector<K>{K::kWord, K::kWord, K::kEnd}));
  EXPECT_EQ(kinds("/*!99999 SET */ x"), (std::vector<K>{K::kWord, K::kEnd}));
  EXPECT_EQ(kinds("/*! SET */"), (std::vector<K>{K::kWord, K::kEnd}));
  EXPECT_EQ(kinds("SELECT /*+ BKA(t) */ 1"), (std::vector<K>{K::kWord, K::kInteger, K::kEnd}));
}

TEST(LexerTest, LinesCountOutsideStringsOnly) {
  auto toks = lex_all("a\n/* x\ny */ b 'multi\nline' c\n-- z\nd");
  EXPECT_EQ(toks[0].line, 1u);
  EXPECT_EQ(toks[1].line, 3u);
  EXPECT_EQ(toks[2].line, 3u);
  EXPECT_EQ(toks[3].line, 3u);  // MySQL does not count a newline inside a string
  EXPECT_EQ(toks[4].line, 5u);
}

TEST(LexerTest, Errors) {
  EXPECT_EQ(kinds("'open").back(), K::kError);
  EXPECT_EQ(kinds("/* open").back(), K::kError);
  EXPECT_EQ(kinds("X'0'").back(), K::kError);  // odd number of hex digits
  EXPECT_EQ(kinds("a \\ b").back(), K::kError);
  auto toks = lex_all("SELECT 'abc");
  EXPECT_EQ(toks[1].offset, 7u);
}

}  // namespace
}  // namespace duo::sql
