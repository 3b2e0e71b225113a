// Tests for column encodings: text round trips at type boundaries, MySQL's binary
// DECIMAL bytes, collations (PAD SPACE, case folding), and randomized properties that tie
// compare_values, hash_value and normalized_prefix to a reference model of each type.
#include "storage/row/column.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace duo::storage {
namespace {

ColumnDef make_col(ColumnType type, bool is_unsigned = false, uint32_t length = 0,
                   uint8_t precision = 0, uint8_t scale = 0,
                   Collation collation = Collation::kBinary) {
  ColumnDef c;
  c.name = "c";
  c.type = type;
  c.is_unsigned = is_unsigned;
  c.length = length;
  c.precision = precision;
  c.scale = scale;
  c.collation = collation;
  return c;
}

std::string must_parse(const ColumnDef& col, std::string_view text) {
  auto r = parse_value(col, text);
  EXPECT_TRUE(r.ok()) << "parse '" << text << "': " << r.status().to_string();
  return r.ok() ? r.value() : std::string();
}

ErrorCode parse_error(const ColumnDef& col, std::string_view text) {
  auto r = parse_value(col, text);
  if (r.ok()) return ErrorCode::kOk;
  return r.status().code();
}

// Parses then formats; expects `expected` (defaults to the input).
void expect_round_trip(const ColumnDef& col, std::string_view text,
                       std::string_view expected = {}) {
  if (expected.empty()) expected = text;
  auto r = parse_value(col, text);
  ASSERT_TRUE(r.ok()) << "parse '" << text << "': " << r.status().to_string();
  EXPECT_EQ(format_value(col, r.value()), expected) << "input '" << text << "'";
  EXPECT_EQ(r.value().size() <= column_max_size(col), true);
}

int sgn(int v) { return (v > 0) - (v < 0); }
template <typename T>
int natural_cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Checks the contract between compare, hash and prefix on one pair with a known
// reference order.
void check_pair(const ColumnDef& col, std::string_view a, std::string_view b, int expected) {
  const int got = sgn(compare_values(col, a, b));
  ASSERT_EQ(got, expected) << format_value(col, a) << " vs " << format_value(col, b);
  ASSERT_EQ(sgn(compare_values(col, b, a)), -expected);
  bool exact_a = false, exact_b = false;
  const uint32_t pa = normalized_prefix(col, a, &exact_a);
  const uint32_t pb = normalized_prefix(col, b, &exact_b);
  ASSERT_EQ(exact_a, exact_b);
  if (expected < 0) {
    ASSERT_LE(pa, pb) << format_value(col, a) << " vs " << format_value(col, b);
  }
  if (expected > 0) {
    ASSERT_GE(pa, pb);
  }
  if (expected == 0) {
    ASSERT_EQ(pa, pb);
    ASSERT_EQ(hash_value(col, a, 7), hash_value(col, b, 7));
  }
  if (exact_a && pa == pb) {
    ASSERT_EQ(expected, 0);
  }
}

// ---------------------------------------------------------------------------------------
// Sizes and definitions

TEST(Column, DecimalBinSize) {
  EXPECT_EQ(decimal_bin_size(1, 0), 1u);
  EXPECT_EQ(decimal_bin_size(9, 0), 4u);
  EXPECT_EQ(decimal_bin_size(10, 0), 5u);
  EXPECT_EQ(decimal_bin_size(14, 4), 7u);   // 1 + 4 | 2
  EXPECT_EQ(decimal_bin_size(18, 9), 8u);   // 4 | 4
  EXPECT_EQ(decimal_bin_size(20, 6), 10u);  // 3 + 4 | 3
  EXPECT_EQ(decimal_bin_size(65, 30), 30u); // 4 + 3*4 | 3*4 + 2
  EXPECT_EQ(decimal_bin_size(5, 5), 3u);
}

TEST(Column, MaxSizesAndKinds) {
  EXPECT_EQ(column_max_size(make_col(ColumnType::kMediumInt)), 3u);
  EXPECT_EQ(column_max_size(make_col(ColumnType::kDate)), 3u);
  EXPECT_EQ(column_max_size(make_col(ColumnType::kDatetime)), 8u);
  EXPECT_EQ(column_max_size(make_col(ColumnType::kVarchar, false, 100)), 100u);
  EXPECT_EQ(column_max_size(make_col(ColumnType::kText, false, 256)), 264u);
  EXPECT_TRUE(is_var_sized(make_col(ColumnType::kBlob)));
  EXPECT_FALSE(is_var_sized(make_col(ColumnType::kChar, false, 3)));
  EXPECT_TRUE(is_integer(ColumnType::kMediumInt));
  EXPECT_FALSE(is_integer(ColumnType::kDecimal));
  EXPECT_TRUE(is_string(ColumnType::kBinary));
  EXPECT_FALSE(is_string(ColumnType::kDate));
}

TEST(Column, ValidateColumn) {
  EXPECT_TRUE(validate_column(make_col(ColumnType::kDecimal, false, 0, 65, 30)).ok());
  EXPECT_FALSE(validate_column(make_col(ColumnType::kDecimal, false, 0, 66, 0)).ok());
  EXPECT_FALSE(validate_column(make_col(ColumnType::kDecimal, false, 0, 40, 31)).ok());
  EXPECT_FALSE(validate_column(make_col(ColumnType::kDecimal, false, 0, 5, 6)).ok());
  EXPECT_FALSE(validate_column(make_col(ColumnType::kDecimal, false, 0, 0, 0)).ok());
  EXPECT_TRUE(validate_column(make_col(ColumnType::kDatetime, false, 0, 0, 6)).ok());
  EXPECT_FALSE(validate_column(make_col(ColumnType::kTime, false, 0, 0, 7)).ok());
  EXPECT_FALSE(validate_column(make_col(ColumnType::kBinary, false, 256)).ok());
  EXPECT_FALSE(validate_column(make_col(ColumnType::kVarchar, false, 65536)).ok());
  EXPECT_FALSE(validate_column(make_col(ColumnType::kChar, true, 3)).ok());  // UNSIGNED CHAR
  EXPECT_FALSE(validate_column(
      make_col(ColumnType::kVarbinary, false, 3, 0, 0, Collation::kCaseInsensitive)).ok());
  EXPECT_TRUE(validate_column(
      make_col(ColumnType::kText, false, 3, 0, 0, Collation::kCaseInsensitive)).ok());
  ColumnDef unnamed = make_col(ColumnType::kInt);
  unnamed.name.clear();
  EXPECT_FALSE(validate_column(unnamed).ok());
}

// ---------------------------------------------------------------------------------------
// Integers

struct IntCase {
  ColumnType type;
  bool is_unsigned;
  const char* min;
  const char* max;
  const char* below_min;
  const char* above_max;
};

TEST(Column, IntegerBoundariesRoundTrip) {
  const IntCase cases[] = {
      {ColumnType::kTinyInt, false, "-128", "127", "-129", "128"},
      {ColumnType::kTinyInt, true, "0", "255", "-1", "256"},
      {ColumnType::kSmallInt, false, "-32768", "32767", "-32769", "32768"},
      {ColumnType::kSmallInt, true, "0", "65535", "-1", "65536"},
      {ColumnType::kMediumInt, false, "-8388608", "8388607", "-8388609", "8388608"},
      {ColumnType::kMediumInt, true, "0", "16777215", "-1", "16777216"},
      {ColumnType::kInt, false, "-2147483648", "2147483647", "-2147483649", "2147483648"},
      {ColumnType::kInt, true, "0", "4294967295", "-1", "4294967296"},
      {ColumnType::kBigInt, false, "-9223372036854775808", "9223372036854775807",
       "-9223372036854775809", "9223372036854775808"},
      {ColumnType::kBigInt, true, "0", "18446744073709551615", "-1", "18446744073709551616"},
  };
  for (const IntCase& c : cases) {
    const ColumnDef col = make_col(c.type, c.is_unsigned);
    SCOPED_TRACE(std::string(c.min) + ".." + c.max);
    expect_round_trip(col, c.min);
    expect_round_trip(col, c.max);
    expect_round_trip(col, "0");
    EXPECT_EQ(must_parse(col, c.max).size(), column_max_size(col));
    EXPECT_EQ(parse_error(col, c.below_min), ErrorCode::kOutOfRange);
    EXPECT_EQ(parse_error(col, c.above_max), ErrorCode::kOutOfRange);
    EXPECT_LT(compare_values(col, must_parse(col, c.min), must_parse(col, c.max)), 0);
  }
}

TEST(Column, IntegerTextForms) {
  const ColumnDef col = make_col(ColumnType::kInt);
  expect_round_trip(col, " 42 ", "42");
  expect_round_trip(col, "+7", "7");
  expect_round_trip(col, "-0", "0");
  expect_round_trip(col, "12.5", "13");   // MySQL rounds half away from zero
  expect_round_trip(col, "-12.5", "-13");
  expect_round_trip(col, "12.49", "12");
  expect_round_trip(col, "1e3", "1000");
  expect_round_trip(col, "0.4", "0");
  expect_round_trip(col, "00012", "12");
  EXPECT_EQ(parse_error(col, ""), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(col, "abc"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(col, "12abc"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(col, "1e"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(col, "-"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(col, "1e400"), ErrorCode::kOutOfRange);
  EXPECT_EQ(parse_error(col, "99999999999999999999999999"), ErrorCode::kOutOfRange);
  EXPECT_EQ(parse_error(make_col(ColumnType::kBigInt, true), "18446744073709551615.5"),
            ErrorCode::kOutOfRange);
  auto r = parse_value(make_col(ColumnType::kTinyInt), "300");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "Out of range value for column 'c'");
}

TEST(Column, IntegerHelpers) {
  const ColumnDef s24 = make_col(ColumnType::kMediumInt);
  const ColumnDef u24 = make_col(ColumnType::kMediumInt, true);
  EXPECT_EQ(encode_int(s24, -1), std::string("\xFF\xFF\xFF", 3));
  EXPECT_EQ(decode_int(s24, encode_int(s24, -8388608)), -8388608);
  EXPECT_EQ(decode_uint(u24, encode_uint(u24, 16777215)), 16777215u);
  EXPECT_TRUE(int_fits(s24, -8388608));
  EXPECT_FALSE(int_fits(s24, 8388608));
  EXPECT_FALSE(int_fits(u24, -1));
  EXPECT_TRUE(uint_fits(u24, 16777215));
  EXPECT_FALSE(uint_fits(s24, 8388608));
  const ColumnDef u64 = make_col(ColumnType::kBigInt, true);
  EXPECT_TRUE(uint_fits(u64, std::numeric_limits<uint64_t>::max()));
  EXPECT_FALSE(int_fits(u64, -1));
  EXPECT_FALSE(int_fits(make_col(ColumnType::kDouble), 0));
}

TEST(Column, IntegerOrderingRandom) {
  std::mt19937_64 rng(1);
  const ColumnType types[] = {ColumnType::kTinyInt, ColumnType::kSmallInt, ColumnType::kMediumInt,
                              ColumnType::kInt, ColumnType::kBigInt};
  for (ColumnType type : types) {
    for (bool is_unsigned : {false, true}) {
      const ColumnDef col = make_col(type, is_unsigned);
      const int bits = static_cast<int>(column_max_size(col)) * 8;
      auto random_value = [&]() -> std::string {
        // Mix small values (to hit equal pairs) with full-range ones.
        uint64_t raw = (rng() % 4 == 0) ? rng() % 5 : rng();
        if (bits < 64) raw &= (uint64_t{1} << bits) - 1;
        return encode_uint(col, raw);
      };
      for (int i = 0; i < 2000; ++i) {
        const std::string a = random_value(), b = random_value();
        int expected;
        if (is_unsigned) {
          expected = natural_cmp(decode_uint(col, a), decode_uint(col, b));
        } else {
          expected = natural_cmp(decode_int(col, a), decode_int(col, b));
        }
        check_pair(col, a, b, expected);
        // The textual form agrees too.
        ASSERT_EQ(must_parse(col, format_value(col, a)), a);
      }
      bool exact = false;
      normalized_prefix(col, encode_int(col, 0), &exact);
      EXPECT_EQ(exact, type != ColumnType::kBigInt);
    }
  }
}

// ---------------------------------------------------------------------------------------
// FLOAT / DOUBLE

TEST(Column, FloatingTextForms) {
  const ColumnDef d = make_col(ColumnType::kDouble);
  const ColumnDef f = make_col(ColumnType::kFloat);
  expect_round_trip(d, "1.5");
  expect_round_trip(d, "0.1");
  expect_round_trip(d, "-3.25");
  expect_round_trip(d, "100000");
  expect_round_trip(d, "123456789012345");
  expect_round_trip(d, "1e15");
  expect_round_trip(d, "1e20");
  expect_round_trip(d, "1.5e-7");
  expect_round_trip(d, "0.0001");
  expect_round_trip(d, "1e-5");
  expect_round_trip(d, "1.7976931348623157e308");
  expect_round_trip(d, "-0", "0");
  expect_round_trip(d, "+2.5e2", "250");
  expect_round_trip(d, "1e-400", "0");  // underflow stores 0, as MySQL
  expect_round_trip(f, "1.1");
  expect_round_trip(f, "3.4028235e38");
  expect_round_trip(f, "0.3");
  EXPECT_EQ(parse_error(d, "1e400"), ErrorCode::kOutOfRange);
  EXPECT_EQ(parse_error(f, "3.5e38"), ErrorCode::kOutOfRange);
  EXPECT_EQ(parse_error(d, "inf"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(d, "nan"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(d, "0x10"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(d, "1.2.3"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(make_col(ColumnType::kDouble, true), "-1"), ErrorCode::kOutOfRange);
  // -0 and 0 are equal: same comparison, hash and prefix.
  const std::string neg_zero("\0\0\0\0\0\0\0\x80", 8);
  check_pair(d, neg_zero, must_parse(d, "0"), 0);
}

TEST(Column, FloatingRandomRoundTripAndOrder) {
  std::mt19937_64 rng(2);
  const ColumnDef d = make_col(ColumnType::kDouble);
  const ColumnDef f = make_col(ColumnType::kFloat);
  auto random_double = [&]() {
    for (;;) {
      double v;
      if (rng() % 3 == 0) {
        v = static_cast<double>(static_cast<int64_t>(rng() % 21) - 10) / 4;  // ties likely
      } else {
        const uint64_t bits = rng();
        std::memcpy(&v, &bits, sizeof v);
      }
      if (std::isfinite(v)) return v;
    }
  };
  auto encode_double = [](double v) {
    std::string s(8, '\0');
    std::memcpy(s.data(), &v, 8);  // little-endian host
    return s;
  };
  auto encode_float = [](float v) {
    std::string s(4, '\0');
    std::memcpy(s.data(), &v, 4);
    return s;
  };
  for (int i = 0; i < 3000; ++i) {
    const double a = random_double(), b = random_double();
    const std::string ea = encode_double(a), eb = encode_double(b);
    check_pair(d, ea, eb, natural_cmp(a, b));
    ASSERT_EQ(must_parse(d, format_value(d, ea)), a == 0 ? encode_double(0) : ea)
        << format_value(d, ea);
    const float fa = static_cast<float>(a / 1e300 * 1e30), fb = static_cast<float>(b / 1e300 * 1e30);
    if (std::isfinite(fa) && std::isfinite(fb)) {
      check_pair(f, encode_float(fa), encode_float(fb), natural_cmp(fa, fb));
      ASSERT_EQ(must_parse(f, format_value(f, encode_float(fa))),
                fa == 0 ? encode_float(0) : encode_float(fa));
    }
  }
}

// ---------------------------------------------------------------------------------------
// DECIMAL

TEST(Column, DecimalMysqlBinaryBytes) {
  // The example of MySQL's decimal2bin: 1234567890.1234 as DECIMAL(14,4).
  const ColumnDef col = make_col(ColumnType::kDecimal, false, 0, 14, 4);
  EXPECT_EQ(must_parse(col, "1234567890.1234"), std::string("\x81\x0D\xFB\x38\xD2\x04\xD2", 7));
  EXPECT_EQ(must_parse(col, "-1234567890.1234"), std::string("\x7E\xF2\x04\xC7\x2D\xFB\x2D", 7));
  EXPECT_EQ(format_value(col, std::string("\x81\x0D\xFB\x38\xD2\x04\xD2", 7)), "1234567890.1234");
}

TEST(Column, DecimalTextForms) {
  const ColumnDef d52 = make_col(ColumnType::kDecimal, false, 0, 5, 2);
  expect_round_trip(d52, "12.5", "12.50");
  expect_round_trip(d52, "-12.5", "-12.50");
  expect_round_trip(d52, "999.99");
  expect_round_trip(d52, "-999.99");
  expect_round_trip(d52, "0", "0.00");
  expect_round_trip(d52, ".5", "0.50");
  expect_round_trip(d52, "0.005", "0.01");
  expect_round_trip(d52, "-0.004", "0.00");
  expect_round_trip(d52, "1.5e2", "150.00");
  expect_round_trip(d52, "00001.10", "1.10");
  EXPECT_EQ(must_parse(d52, "-0.00"), must_parse(d52, "0"));  // no negative zero
  EXPECT_EQ(parse_error(d52, "1000"), ErrorCode::kOutOfRange);
  EXPECT_EQ(parse_error(d52, "999.995"), ErrorCode::kOutOfRange);  // rounds to 1000.00
  EXPECT_EQ(parse_error(d52, "1e1000000000"), ErrorCode::kOutOfRange);
  EXPECT_EQ(parse_error(d52, "12,5"), ErrorCode::kInvalidArgument);
  expect_round_trip(d52, "1e-1000000000", "0.00");
  EXPECT_EQ(parse_error(make_col(ColumnType::kDecimal, true, 0, 5, 2), "-1"),
            ErrorCode::kOutOfRange);

  const ColumnDef d65 = make_col(ColumnType::kDecimal, false, 0, 65, 30);
  const std::string max65 = std::string(35, '9') + "." + std::string(30, '9');
  expect_round_trip(d65, max65);
  expect_round_trip(d65, "-" + max65);
  expect_round_trip(d65, "0.000000000000000000000000000001");
  EXPECT_EQ(parse_error(d65, "1" + std::string(35, '0')), ErrorCode::kOutOfRange);
  EXPECT_EQ(must_parse(d65, max65).size(), 30u);

  const ColumnDef d55 = make_col(ColumnType::kDecimal, false, 0, 5, 5);
  expect_round_trip(d55, "0.12345");
  expect_round_trip(d55, "-0.12345");
  EXPECT_EQ(parse_error(d55, "1"), ErrorCode::kOutOfRange);
  const ColumnDef d10 = make_col(ColumnType::kDecimal, false, 0, 10, 0);
  expect_round_trip(d10, "9999999999");
  expect_round_trip(d10, "-1234.5", "-1235");
}

TEST(Column, DecimalOrderingRandom) {
  std::mt19937_64 rng(3);
  for (auto [p, s] : {std::pair<int, int>{5, 2}, {18, 9}, {20, 6}, {12, 0}, {4, 4}, {30, 12}}) {
    const ColumnDef col = make_col(ColumnType::kDecimal, false, 0, static_cast<uint8_t>(p),
                                   static_cast<uint8_t>(s));
    // Values are random integers of up to min(p, 18) digits, read as n / 10^s.
    const int digits = std::min(p, 18);
    int64_t limit = 1;
    for (int i = 0; i < digits; ++i) limit *= 10;
    auto random_units = [&]() -> int64_t {
      const int64_t range = (rng() % 3 == 0) ? 20 : limit;
      return static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * range - 1)) - (range - 1);
    };
    auto to_text = [&](int64_t units) {
      std::string mag = std::to_string(units < 0 ? -units : units);
      if (static_cast<int>(mag.size()) <= s) mag.insert(0, s - mag.size() + 1, '0');
      if (s > 0) mag.insert(mag.size() - s, ".");
      return (units < 0 ? "-" : "") + mag;
    };
    for (int i = 0; i < 2000; ++i) {
      const int64_t a = random_units(), b = random_units();
      const std::string ea = must_parse(col, to_text(a)), eb = must_parse(col, to_text(b));
      ASSERT_EQ(format_value(col, ea), to_text(a));
      check_pair(col, ea, eb, natural_cmp(a, b));
    }
  }
}

// ---------------------------------------------------------------------------------------
// Strings and collations

TEST(Column, StringStorage) {
  const ColumnDef chr = make_col(ColumnType::kChar, false, 5);
  EXPECT_EQ(must_parse(chr, "ab"), "ab   ");
  EXPECT_EQ(format_value(chr, "ab   "), "ab");  // MySQL strips CHAR padding on read
  expect_round_trip(chr, "abcde");
  expect_round_trip(chr, "abcde   ", "abcde");  // only spaces cut: allowed
  expect_round_trip(chr, "", "");
  EXPECT_EQ(parse_error(chr, "abcdef"), ErrorCode::kDataTooLong);

  const ColumnDef bin = make_col(ColumnType::kBinary, false, 4);
  EXPECT_EQ(must_parse(bin, "ab"), std::string("ab\0\0", 4));
  EXPECT_EQ(format_value(bin, std::string("ab\0\0", 4)), std::string("ab\0\0", 4));
  EXPECT_EQ(parse_error(bin, "abcd "), ErrorCode::kDataTooLong);

  const ColumnDef vc = make_col(ColumnType::kVarchar, false, 3);
  EXPECT_EQ(must_parse(vc, "ab "), "ab ");  // VARCHAR keeps trailing spaces
  EXPECT_EQ(parse_error(vc, "abcd"), ErrorCode::kDataTooLong);
  const ColumnDef vb = make_col(ColumnType::kVarbinary, false, 3);
  EXPECT_EQ(parse_error(vb, "abc "), ErrorCode::kDataTooLong);
  EXPECT_EQ(must_parse(vb, std::string("\0\1", 2)), std::string("\0\1", 2));

  const ColumnDef text = make_col(ColumnType::kText, false, 10);
  EXPECT_EQ(must_parse(text, "hello"), std::string("\x05\0\0\0\0\0\0\0hello", 13));
  expect_round_trip(text, "0123456789");
  EXPECT_EQ(parse_error(text, "0123456789x"), ErrorCode::kDataTooLong);
  const ColumnDef blob = make_col(ColumnType::kBlob, false, 4);
  expect_round_trip(blob, std::string("\0a\0b", 4), std::string("\0a\0b", 4));
  EXPECT_EQ(parse_error(blob, "abcde"), ErrorCode::kDataTooLong);
  auto r = parse_value(vc, "abcd");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "Data too long for column 'c'");
}

TEST(Column, CaseInsensitivePadSpace) {
  for (ColumnType type : {ColumnType::kChar, ColumnType::kVarchar, ColumnType::kText}) {
    const ColumnDef ci = make_col(type, false, 8, 0, 0, Collation::kCaseInsensitive);
    SCOPED_TRACE(static_cast<int>(type));
    const std::string abc = must_parse(ci, "abc"), upper = must_parse(ci, "ABC  ");
    check_pair(ci, abc, upper, 0);
    check_pair(ci, must_parse(ci, "abc"), must_parse(ci, "abd"), -1);
    check_pair(ci, must_parse(ci, "ABC"), must_parse(ci, "abd"), -1);
    check_pair(ci, must_parse(ci, "a"), must_parse(ci, "_"), -1);  // folds to upper, like MySQL
    check_pair(ci, must_parse(ci, ""), must_parse(ci, "   "), 0);
  }
  const ColumnDef ci = make_col(ColumnType::kVarchar, false, 8, 0, 0, Collation::kCaseInsensitive);
  // PAD SPACE is padding, not stripping: "a\x01" sorts before "a" (0x01 < ' ').
  check_pair(ci, std::string("a\x01", 2), "a", -1);
  check_pair(ci, "a\t", "a ", -1);
}

TEST(Column, BinaryCollations) {
  const ColumnDef vc = make_col(ColumnType::kVarchar, false, 8);  // *_bin: PAD SPACE
  check_pair(vc, "abc", "abc  ", 0);
  check_pair(vc, "ABC", "abc", -1);
  const ColumnDef vb = make_col(ColumnType::kVarbinary, false, 8);  // exact bytes
  check_pair(vb, "abc", "abc ", -1);
  check_pair(vb, "ab", std::string("ab\0", 3), -1);
  const ColumnDef bin = make_col(ColumnType::kBinary, false, 3);
  check_pair(bin, std::string("ab\0", 3), std::string("ab ", 3), -1);
  const ColumnDef blob = make_col(ColumnType::kBlob, false, 8);
  check_pair(blob, must_parse(blob, "ab"), must_parse(blob, "ab "), -1);
  check_pair(blob, must_parse(blob, "ab"), must_parse(blob, "ab"), 0);
}

// Reference PAD SPACE comparison: pad both to the same length, fold, compare bytes.
int reference_string_cmp(std::string a, std::string b, bool pad, bool fold) {
  if (pad) {
    const size_t n = std::max(a.size(), b.size());
    a.resize(n, ' ');
    b.resize(n, ' ');
  }
  if (fold) {
    for (auto* s : {&a, &b}) {
      for (char& c : *s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  return natural_cmp(a, b);
}

TEST(Column, StringOrderingRandom) {
  std::mt19937_64 rng(4);
  const char alphabet[] = {'a', 'A', 'b', 'B', ' ', '\x01', '_', 'z', '\0', '\xE9'};
  struct Case {
    ColumnType type;
    Collation collation;
    uint32_t length;
  };
  const Case cases[] = {
      {ColumnType::kVarchar, Collation::kCaseInsensitive, 6},
      {ColumnType::kVarchar, Collation::kBinary, 6},
      {ColumnType::kChar, Collation::kCaseInsensitive, 6},
      {ColumnType::kChar, Collation::kBinary, 3},
      {ColumnType::kText, Collation::kCaseInsensitive, 6},
      {ColumnType::kVarbinary, Collation::kBinary, 6},
      {ColumnType::kBinary, Collation::kBinary, 6},
      {ColumnType::kBinary, Collation::kBinary, 2},
      {ColumnType::kBlob, Collation::kBinary, 6},
  };
  for (const Case& c : cases) {
    const ColumnDef col = make_col(c.type, false, c.length, 0, 0, c.collation);
    const bool pad = c.type == ColumnType::kChar || c.type == ColumnType::kVarchar ||
                     c.type == ColumnType::kText;
    const bool fold = c.collation == Collation::kCaseInsensitive;
    for (int i = 0; i < 4000; ++i) {
      std::string ta, tb;
      for (size_t n = rng() % (c.length + 1); n > 0; --n) ta.push_back(alphabet[rng() % 10]);
      for (size_t n = rng() % (c.length + 1); n > 0; --n) tb.push_back(alphabet[rng() % 10]);
      const std::string ea = must_parse(col, ta), eb = must_parse(col, tb);
      // BINARY values are compared as stored (zero padded).
      const std::string ra = c.type == ColumnType::kBinary ? ea : ta;
      const std::string rb = c.type == ColumnType::kBinary ? eb : tb;
      check_pair(col, ea, eb, reference_string_cmp(ra, rb, pad, fold));
    }
  }
}

// ---------------------------------------------------------------------------------------
// Dates and times

TEST(Column, DateParseAndValidate) {
  const ColumnDef col = make_col(ColumnType::kDate);
  expect_round_trip(col, "2024-02-29");
  expect_round_trip(col, "2000-02-29");
  expect_round_trip(col, "9999-12-31");
  expect_round_trip(col, "1000-01-01");
  expect_round_trip(col, "0001-01-01");
  expect_round_trip(col, "2024-1-5", "2024-01-05");
  EXPECT_EQ(must_parse(col, "2024-02-29"), encode_uint(make_col(ColumnType::kMediumInt, true),
                                                       2024 * 512 + 2 * 32 + 29));
  for (const char* bad : {"2023-02-29", "1900-02-29", "0000-00-00", "2024-00-10", "2024-13-01",
                          "2024-04-31", "2024-01-00", "2024-01-32", "24-01-01", "2024/01/01",
                          "2024-01-01x", "", "2024-01-01 10:00:00"}) {
    EXPECT_EQ(parse_error(col, bad), ErrorCode::kInvalidArgument) << bad;
  }
  auto r = parse_value(col, "2023-02-29");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "Incorrect date value: '2023-02-29' for column 'c'");
}

TEST(Column, TimeParseAndFormat) {
  const ColumnDef t0 = make_col(ColumnType::kTime);
  expect_round_trip(t0, "838:59:59");
  expect_round_trip(t0, "-838:59:59");
  expect_round_trip(t0, "00:00:00");
  expect_round_trip(t0, "-00:00:01");
  expect_round_trip(t0, "-00:00:00", "00:00:00");
  expect_round_trip(t0, "1:2:3", "01:02:03");
  expect_round_trip(t0, "12:00:00.5", "12:00:01");  // rounds to the column's scale
  EXPECT_EQ(parse_error(t0, "839:00:00"), ErrorCode::kOutOfRange);
  EXPECT_EQ(parse_error(t0, "838:59:59.5"), ErrorCode::kOutOfRange);
  EXPECT_EQ(parse_error(t0, "12:60:00"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(t0, "12:00"), ErrorCode::kInvalidArgument);
  const ColumnDef t3 = make_col(ColumnType::kTime, false, 0, 0, 3);
  expect_round_trip(t3, "12:00:00.5", "12:00:00.500");
  expect_round_trip(t3, "-01:02:03.0004", "-01:02:03.000");
  expect_round_trip(t3, "-01:02:03.9996", "-01:02:04.000");
  const ColumnDef t6 = make_col(ColumnType::kTime, false, 0, 0, 6);
  expect_round_trip(t6, "838:59:59.000000");
  expect_round_trip(t6, "-838:59:58.999999");
  check_pair(t6, must_parse(t6, "-00:00:00.000001"), must_parse(t6, "00:00:00"), -1);
}

TEST(Column, DatetimeParseAndFormat) {
  const ColumnDef dt0 = make_col(ColumnType::kDatetime);
  expect_round_trip(dt0, "2024-02-29 23:59:59");
  expect_round_trip(dt0, "1000-01-01 00:00:00");
  expect_round_trip(dt0, "9999-12-31 23:59:59");
  expect_round_trip(dt0, "2024-01-01", "2024-01-01 00:00:00");
  expect_round_trip(dt0, "2024-01-01T10:11:12", "2024-01-01 10:11:12");
  expect_round_trip(dt0, "2023-12-31 23:59:59.5", "2024-01-01 00:00:00");  // carry
  expect_round_trip(dt0, "2024-02-28 23:59:59.7", "2024-02-29 00:00:00");
  EXPECT_EQ(parse_error(dt0, "9999-12-31 23:59:59.5"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(dt0, "2024-02-29 24:00:00"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(dt0, "2023-02-29 10:00:00"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_error(dt0, "0000-00-00 00:00:00"), ErrorCode::kInvalidArgument);
  const ColumnDef dt3 = make_col(ColumnType::kDatetime, false, 0, 0, 3);
  expect_round_trip(dt3, "2024-02-29 10:00:00", "2024-02-29 10:00:00.000");
  expect_round_trip(dt3, "2024-02-29 10:00:00.12345", "2024-02-29 10:00:00.123");
  const ColumnDef dt6 = make_col(ColumnType::kDatetime, false, 0, 0, 6);
  expect_round_trip(dt6, "9999-12-31 23:59:59.999999");
  expect_round_trip(dt6, "2024-02-29 23:59:59.9999995", "2024-03-01 00:00:00.000000");
}

TEST(Column, TimestampRange) {
  const ColumnDef ts = make_col(ColumnType::kTimestamp);
  expect_round_trip(ts, "1970-01-01 00:00:01");
  expect_round_trip(ts, "2038-01-19 03:14:07");
  expect_round_trip(ts, "2024-02-29 12:34:56");
  EXPECT_EQ(must_parse(ts, "1970-01-01 00:00:01"),
            encode_int(make_col(ColumnType::kBigInt), 1'000'000));
  EXPECT_EQ(parse_error(ts, "1970-01-01 00:00:00"), ErrorCode::kOutOfRange);
  EXPECT_EQ(parse_error(ts, "2038-01-19 03:14:08"), ErrorCode::kOutOfRange);
  EXPECT_EQ(parse_error(ts, "1969-12-31 23:59:59"), ErrorCode::kOutOfRange);
  const ColumnDef ts6 = make_col(ColumnType::kTimestamp, false, 0, 0, 6);
  expect_round_trip(ts6, "2038-01-19 03:14:07.999999");
  expect_round_trip(ts6, "1970-01-01 00:00:01.000000");
  EXPECT_EQ(parse_error(ts6, "1970-01-01 00:00:00.999999"), ErrorCode::kOutOfRange);
}

TEST(Column, TemporalOrderingRandom) {
  std::mt19937_64 rng(5);
  struct Moment {
    int year, month, day, hour, minute, second, micros;
    auto tuple() const { return std::tie(year, month, day, hour, minute, second, micros); }
  };
  auto random_moment = [&](int year_lo, int year_hi) {
    Moment m;
    m.year = year_lo + static_cast<int>(rng() % static_cast<uint64_t>(year_hi - year_lo + 1));
    m.month = 1 + static_cast<int>(rng() % 12);
    m.day = 1 + static_cast<int>(rng() % 28);
    m.hour = static_cast<int>(rng() % 24);
    m.minute = static_cast<int>(rng() % 60);
    m.second = static_cast<int>(rng() % 60);
    m.micros = static_cast<int>(rng() % 1000000);
    if (rng() % 4 == 0) m = Moment{2000, 1, 1, 0, 0, 0, static_cast<int>(rng() % 3)};
    return m;
  };
  auto text = [](const Moment& m, bool with_time) {
    char buf[64];
    if (!with_time) {
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", m.year, m.month, m.day);
    } else {
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%06d", m.year, m.month, m.day,
                    m.hour, m.minute, m.second, m.micros);
    }
    return std::string(buf);
  };
  const ColumnDef date = make_col(ColumnType::kDate);
  const ColumnDef dt6 = make_col(ColumnType::kDatetime, false, 0, 0, 6);
  const ColumnDef ts6 = make_col(ColumnType::kTimestamp, false, 0, 0, 6);
  for (int i = 0; i < 3000; ++i) {
    Moment a = random_moment(0, 9999), b = random_moment(0, 9999);
    if (rng() % 2) b.year = a.year;
    const Moment da{a.year, a.month, a.day, 0, 0, 0, 0}, db{b.year, b.month, b.day, 0, 0, 0, 0};
    check_pair(date, must_parse(date, text(a, false)), must_parse(date, text(b, false)),
               natural_cmp(da.tuple(), db.tuple()));
    const std::string ea = must_parse(dt6, text(a, true)), eb = must_parse(dt6, text(b, true));
    ASSERT_EQ(format_value(dt6, ea), text(a, true));
    check_pair(dt6, ea, eb, natural_cmp(a.tuple(), b.tuple()));
    const Moment ta = random_moment(1971, 2037), tb = random_moment(1971, 2037);
    const std::string sa = must_parse(ts6, text(ta, true)), sb = must_parse(ts6, text(tb, true));
    ASSERT_EQ(format_value(ts6, sa), text(ta, true));
    check_pair(ts6, sa, sb, natural_cmp(ta.tuple(), tb.tuple()));
  }
  const ColumnDef t6 = make_col(ColumnType::kTime, false, 0, 0, 6);
  for (int i = 0; i < 3000; ++i) {
    auto random_time = [&]() -> int64_t {
      const int64_t max = int64_t{3020399} * 1'000'000;
      if (rng() % 4 == 0) return static_cast<int64_t>(rng() % 5) - 2;
      return static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * max + 1)) - max;
    };
    const int64_t a = random_time(), b = random_time();
    const std::string ea = encode_int(make_col(ColumnType::kBigInt), a);
    const std::string eb = encode_int(make_col(ColumnType::kBigInt), b);
    ASSERT_EQ(must_parse(t6, format_value(t6, ea)), ea) << format_value(t6, ea);
    check_pair(t6, ea, eb, natural_cmp(a, b));
  }
}

// ---------------------------------------------------------------------------------------
// Hash stability

TEST(Column, HashIsStable) {
  // Golden values: the hash decides data placement, so it must never change silently.
  // (Cross-checked against an independent implementation of the algorithm documented in
  // column.cc; CI text hashes its upper-case fold, so "Hello, World" hashes "HELLO, WORLD".)
  const ColumnDef i32 = make_col(ColumnType::kInt);
  const ColumnDef ci = make_col(ColumnType::kVarchar, false, 32, 0, 0, Collation::kCaseInsensitive);
  const ColumnDef vb = make_col(ColumnType::kVarbinary, false, 32);
  EXPECT_EQ(hash_value(i32, encode_int(i32, 1), 0), 0xD3F1187512CDE8E8ull);
  EXPECT_EQ(hash_value(ci, "Hello, World", 0), 0x49BCD9C6895B09ABull);
  EXPECT_EQ(hash_value(vb, "", 0), 0x7DE53DE772EA694Cull);
  EXPECT_EQ(hash_value(vb, "0123456789abcdef0", 42), 0x3A7575054E040DACull);
  EXPECT_EQ(hash_value(ci, "HELLO, WORLD   ", 0), hash_value(ci, "hello, world", 0));
  EXPECT_NE(hash_value(vb, "a", 0), hash_value(vb, std::string("a\0", 2), 0));
  EXPECT_NE(hash_value(vb, "a", 0), hash_value(vb, "a", 1));
}

TEST(Column, HashSpreadsSequentialKeys) {
  // Sequential integers must spread evenly over a power-of-two number of buckets.
  const ColumnDef col = make_col(ColumnType::kBigInt);
  constexpr int kBuckets = 64;
  constexpr int kKeys = 64000;
  std::vector<int> counts(kBuckets);
  for (int64_t k = 0; k < kKeys; ++k) ++counts[hash_value(col, encode_int(col, k), 0) % kBuckets];
  for (int c : counts) {
    EXPECT_GT(c, kKeys / kBuckets * 8 / 10);
    EXPECT_LT(c, kKeys / kBuckets * 12 / 10);
  }
}

}  // namespace
}  // namespace duo::storage
