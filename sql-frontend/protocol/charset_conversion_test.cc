// Tests of the connection character set conversion: latin1 as cp1252 both ways (the
// 0x80..0x9F block included, every byte round-trips), ascii and utf8mb3 losing what
// they cannot hold as '?', invalid UTF-8 as '?', and the character set table lookups.
#include "sql-frontend/protocol/charset_conversion.h"

#include <gtest/gtest.h>

#include "sql-frontend/protocol/character_sets.h"

namespace duo::sql::protocol {
namespace {

TEST(CharsetConversionTest, Latin1IsCp1252AndEveryByteRoundTrips) {
  EXPECT_EQ(to_utf8mb4("caf\xe9", TextEncoding::kLatin1), "caf\xc3\xa9");
  EXPECT_EQ(to_utf8mb4("\x80", TextEncoding::kLatin1), "\xe2\x82\xac");  // €
  EXPECT_EQ(to_utf8mb4("\x81", TextEncoding::kLatin1), "\xc2\x81");      // undefined: C1
  for (int byte = 0; byte < 256; ++byte) {
    const std::string one(1, static_cast<char>(byte));
    EXPECT_EQ(from_utf8mb4(to_utf8mb4(one, TextEncoding::kLatin1), TextEncoding::kLatin1), one)
        << byte;
  }
  EXPECT_EQ(from_utf8mb4("\xe2\x82\xac \xc5\x93 \xe2\x9c\x93", TextEncoding::kLatin1),
            "\x80 \x9c ?");  // €, œ, ✓ (not in cp1252)
}

TEST(CharsetConversionTest, AsciiAndUtf8mb3LoseWhatTheyCannotHold) {
  EXPECT_EQ(to_utf8mb4("caf\xe9", TextEncoding::kAscii), "caf?");
  EXPECT_EQ(from_utf8mb4("caf\xc3\xa9", TextEncoding::kAscii), "caf?");
  EXPECT_EQ(from_utf8mb4("\xc3\xa9\xf0\x9f\x98\x80", TextEncoding::kUtf8mb3), "\xc3\xa9?");
  EXPECT_EQ(to_utf8mb4("\xf0\x9f\x98\x80", TextEncoding::kUtf8mb4), "\xf0\x9f\x98\x80");
  EXPECT_EQ(from_utf8mb4("\xff\xfe", TextEncoding::kBinary), "\xff\xfe");
}

TEST(CharsetConversionTest, InvalidUtf8BecomesQuestionMarks) {
  EXPECT_EQ(from_utf8mb4("a\xc3", TextEncoding::kLatin1), "a?");          // cut short
  EXPECT_EQ(from_utf8mb4("\xc0\xaf", TextEncoding::kLatin1), "??");       // overlong
  EXPECT_EQ(from_utf8mb4("\xed\xa0\x80", TextEncoding::kLatin1), "???");  // surrogate
  EXPECT_EQ(from_utf8mb4("\x80x", TextEncoding::kAscii), "?x");           // stray continuation
}

TEST(CharsetConversionTest, CharacterSetTable) {
  ASSERT_NE(find_collation(uint16_t{8}), nullptr);
  EXPECT_EQ(find_collation(uint16_t{8})->name, "latin1_swedish_ci");
  EXPECT_EQ(find_collation("UTF8MB4_BIN")->id, 46);
  EXPECT_EQ(find_collation(uint16_t{250}), nullptr);
  EXPECT_EQ(default_collation_of(*find_character_set("utf8mb4")).id, kDefaultCollationId);
  EXPECT_EQ(unusable_client_charset(35), "ucs2");
  EXPECT_EQ(unusable_client_charset(160), "utf32");
  EXPECT_EQ(unusable_client_charset(45), "");
  EXPECT_EQ(encoding_of_charset("latin1"), TextEncoding::kLatin1);
  for (const CollationInfo& c : collations()) {
    EXPECT_NE(find_character_set(c.character_set), nullptr) << c.name;
  }
}

}  // namespace
}  // namespace duo::sql::protocol
