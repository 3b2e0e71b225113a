// Tests of the case- and accent-insensitive collation: weights MySQL's general_ci gives,
// PAD SPACE, invalid UTF-8, LIKE, and randomized properties tying compare_values,
// hash_value and normalized_prefix of a case-insensitive column together (equal values
// hash equal, the order is total and consistent, prefixes keep it).
#include "storage/row/collation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "storage/row/column.h"

namespace duo::storage {
namespace {

uint32_t weight_of(std::string_view utf8) {
  size_t pos = 0;
  const uint32_t w = next_weight(utf8, &pos);
  EXPECT_EQ(pos, utf8.size()) << utf8;
  return w;
}

TEST(Collation, WeightsAreUpperCaseWithoutAccents) {
  EXPECT_EQ(weight_of("a"), 'A');
  EXPECT_EQ(weight_of("Z"), 'Z');
  EXPECT_EQ(weight_of("_"), '_');
  EXPECT_EQ(weight_of("é"), 'E');
  EXPECT_EQ(weight_of("É"), 'E');
  EXPECT_EQ(weight_of("ê"), 'E');
  EXPECT_EQ(weight_of("Ä"), 'A');
  EXPECT_EQ(weight_of("ä"), 'A');
  EXPECT_EQ(weight_of("å"), 'A');
  EXPECT_EQ(weight_of("ß"), 'S');  // general_ci: 'ß' = 's'
  EXPECT_EQ(weight_of("ſ"), 'S');
  EXPECT_EQ(weight_of("ı"), 'I');
  EXPECT_EQ(weight_of("İ"), 'I');
  EXPECT_EQ(weight_of("ç"), 'C');
  EXPECT_EQ(weight_of("ñ"), 'N');
  EXPECT_EQ(weight_of("σ"), weight_of("Σ"));
  EXPECT_EQ(weight_of("ς"), weight_of("Σ"));
  EXPECT_EQ(weight_of("я"), weight_of("Я"));
  EXPECT_EQ(weight_of("ø"), weight_of("Ø"));  // no decomposition: a letter of its own
  EXPECT_NE(weight_of("ø"), 'O');
  EXPECT_EQ(weight_of("가"), 0xAC00u);    // Hangul syllables keep their own weight
  EXPECT_EQ(weight_of("\u00A0"), 0xA0u);  // only ' ' weighs like a space
  EXPECT_EQ(weight_of("😀"), 0x1F600u);    // beyond the BMP: itself
}

TEST(Collation, InvalidUtf8IsOneCharacterPerByte) {
  EXPECT_EQ(weight_of("\xFF"), kInvalidByteWeight + 0xFF);
  EXPECT_EQ(weight_of("\xC0"), kInvalidByteWeight + 0xC0);
  size_t pos = 0;
  const std::string overlong = "\xC0\xAF";  // '/' overlong: two invalid bytes
  EXPECT_EQ(next_weight(overlong, &pos), kInvalidByteWeight + 0xC0);
  EXPECT_EQ(pos, 1u);
  pos = 0;
  const std::string surrogate = "\xED\xA0\x80";
  EXPECT_EQ(next_weight(surrogate, &pos), kInvalidByteWeight + 0xED);
  pos = 0;
  const std::string truncated = "\xC3";
  EXPECT_EQ(next_weight(truncated, &pos), kInvalidByteWeight + 0xC3);
  EXPECT_NE(compare_case_insensitive("\xFF", "\xFE"), 0);
  EXPECT_GT(compare_case_insensitive("\xFF", "😀"), 0);
}

TEST(Collation, ComparesByWeightsWithPadSpace) {
  EXPECT_EQ(compare_case_insensitive("été", "ETE"), 0);
  EXPECT_EQ(compare_case_insensitive("Straße", "STRASE"), 0);
  EXPECT_EQ(compare_case_insensitive("Ärger", "arger  "), 0);
  EXPECT_LT(compare_case_insensitive("a", "B"), 0);
  EXPECT_LT(compare_case_insensitive("é", "f"), 0);  // 'E' < 'F', not by bytes (0xC3 > 'f')
  EXPECT_LT(compare_case_insensitive("a", "_"), 0);
  EXPECT_LT(compare_case_insensitive(std::string("a\x01", 2), "a"), 0);
  EXPECT_GT(compare_case_insensitive("a", std::string("a\x01", 2)), 0);
  EXPECT_TRUE(equal_case_insensitive("Été", "ete"));
  EXPECT_FALSE(equal_case_insensitive("ete ", "ete"));
}

TEST(Collation, KeysOfAsciiAreTheUpperCasedBytes) {
  std::string buffer;
  EXPECT_EQ(case_insensitive_key("Hello  ", &buffer), "HELLO");
  EXPECT_EQ(case_insensitive_key("HELLO", &buffer), "HELLO");
  EXPECT_EQ(case_insensitive_key("été", &buffer), "ETE");
  EXPECT_EQ(case_insensitive_key("ÉTÉ", &buffer), "ETE");
  EXPECT_NE(case_insensitive_key("ø", &buffer), "O");
}

TEST(Collation, LikeMatchesCharactersByWeight) {
  EXPECT_TRUE(like_matches("été", "ETE", '\\', true));
  EXPECT_TRUE(like_matches("été", "_T_", '\\', true));
  EXPECT_TRUE(like_matches("été", "e%", '\\', true));
  EXPECT_TRUE(like_matches("Straße", "%SSE", '\\', false) == false);
  EXPECT_TRUE(like_matches("Straße", "%ASE", '\\', true));
  EXPECT_TRUE(like_matches("a%b", "a\\%b", '\\', true));
  EXPECT_FALSE(like_matches("axb", "a\\%b", '\\', true));
  EXPECT_FALSE(like_matches("ete ", "ete", '\\', true));  // LIKE does not pad
  EXPECT_FALSE(like_matches("été", "ete", '\\', false));
  EXPECT_TRUE(like_matches("été", "_t_", '\\', false));  // '_' is one character
  EXPECT_TRUE(like_matches("", "%", '\\', true));
  EXPECT_FALSE(like_matches("", "_", '\\', true));
}

// Random strings over letters that the collation makes equal in several ways.
std::string random_text(std::mt19937* rng) {
  static const std::vector<std::string> kPieces = {
      "a", "A",    "e", "E", "é", "É", "ê", "s",  "S", "ß",    "z",    "_", " ",
      " ", "\x01", "ø", "Ø", "σ", "ς", "Σ", "가", "😀", "\xFF", "\xC3", "0"};
  std::uniform_int_distribution<size_t> length(0, 5);
  std::uniform_int_distribution<size_t> piece(0, kPieces.size() - 1);
  std::string s;
  for (size_t n = length(*rng); n > 0; --n) s += kPieces[piece(*rng)];
  return s;
}

TEST(Collation, CompareHashAndPrefixAgreeOnRandomStrings) {
  for (ColumnType type : {ColumnType::kVarchar, ColumnType::kChar, ColumnType::kText}) {
    SCOPED_TRACE(static_cast<int>(type));
    ColumnDef col;
    col.name = "c";
    col.type = type;
    col.length = 64;
    col.collation = Collation::kCaseInsensitive;
    std::mt19937 rng(20261123);
    std::vector<std::string> values;  // encoded (CHAR padded, TEXT with its header)
    for (int i = 0; i < 300; ++i) {
      Result<std::string> encoded = parse_value(col, random_text(&rng));
      ASSERT_TRUE(encoded.ok());
      values.push_back(std::move(encoded).value());
    }
    size_t equal_pairs = 0;
    for (const std::string& a : values) {
      for (const std::string& b : values) {
        const int c = compare_values(col, a, b);
        ASSERT_EQ(c, -compare_values(col, b, a)) << a << " | " << b;
        bool exact_a = false, exact_b = false;
        const uint32_t pa = normalized_prefix(col, a, &exact_a);
        const uint32_t pb = normalized_prefix(col, b, &exact_b);
        if (c == 0) {
          ++equal_pairs;
          ASSERT_EQ(hash_value(col, a, 7), hash_value(col, b, 7)) << a << " | " << b;
          ASSERT_EQ(pa, pb) << a << " | " << b;
        } else {
          ASSERT_TRUE(c < 0 ? pa <= pb : pa >= pb) << a << " | " << b;
        }
      }
    }
    EXPECT_GT(equal_pairs, values.size());  // the alphabet does make distinct strings equal
    // Total order: after sorting, every earlier value is <= every later one.
    std::sort(values.begin(), values.end(), [&](const std::string& a, const std::string& b) {
      return compare_values(col, a, b) < 0;
    });
    for (size_t i = 0; i < values.size(); ++i) {
      for (size_t j = i + 1; j < values.size(); ++j) {
        ASSERT_LE(compare_values(col, values[i], values[j]), 0) << values[i] << " | " << values[j];
      }
    }
  }
}

TEST(Collation, DistinctKeysForUnequalStrings) {
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    const std::string a = random_text(&rng), b = random_text(&rng);
    std::string ka, kb;
    ASSERT_EQ(compare_case_insensitive(a, b) == 0,
              case_insensitive_key(a, &ka) == case_insensitive_key(b, &kb))
        << a << " | " << b;
  }
}

}  // namespace
}  // namespace duo::storage
