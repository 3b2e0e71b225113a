// Tests for InterpretedUpdate: integer arithmetic at every width's boundaries (overflow by
// one in both directions), NULL arithmetic, SET / SET NULL, guards, schema validation,
// the wire format and decoding of garbage.
#include "storage/scan/interpreted_update.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "storage/scan/test_row.h"

namespace duo::storage {
namespace {

using testing::MaybeText;
using testing::TestRow;

enum Col : uint16_t {
  kId, kT, kUT, kS, kUS, kM, kUM, kI, kUI, kB, kUB, kName, kNotNull, kReal, kCode, kColumnCount
};

ColumnDef column(std::string name, ColumnType type, bool is_unsigned = false, bool nullable = true,
                 uint32_t length = 0) {
  ColumnDef c;
  c.name = std::move(name);
  c.type = type;
  c.is_unsigned = is_unsigned;
  c.nullable = nullable;
  c.length = length;
  return c;
}

TableSchema test_schema() {
  TableSchema s;
  s.name = "counters";
  s.columns = {
      column("id", ColumnType::kBigInt, false, false),
      column("t", ColumnType::kTinyInt),       column("ut", ColumnType::kTinyInt, true),
      column("s", ColumnType::kSmallInt),      column("us", ColumnType::kSmallInt, true),
      column("m", ColumnType::kMediumInt),     column("um", ColumnType::kMediumInt, true),
      column("i", ColumnType::kInt),           column("ui", ColumnType::kInt, true),
      column("k", ColumnType::kBigInt),        column("uk", ColumnType::kBigInt, true),
      column("name", ColumnType::kVarchar, false, true, 10),
      column("nn", ColumnType::kInt, false, false),
      column("real", ColumnType::kDouble),
      column("code", ColumnType::kChar, false, true, 4),
  };
  s.primary_key = {kId};
  EXPECT_TRUE(s.validate().ok());
  return s;
}

const TableSchema& schema() {
  static const TableSchema s = test_schema();
  return s;
}

std::string enc(uint16_t col, const std::string& text) {
  return testing::encode_text(schema().columns[col], text);
}

TestRow row_with(std::vector<std::pair<uint16_t, MaybeText>> values) {
  std::vector<MaybeText> texts(kColumnCount);
  texts[kId] = "1";
  texts[kNotNull] = "0";
  for (auto& [col, text] : values) texts[col] = text;
  return TestRow::from_text(schema(), texts);
}

InterpretedUpdate bound(InterpretedUpdate u) {
  Status s = u.bind(schema());
  EXPECT_TRUE(s.ok()) << s.to_string();
  return u;
}

struct Range {
  uint16_t column;
  const char* min;
  const char* max;
  const char* min_plus_one;
  const char* max_minus_one;
  const char* type_name;
};

const Range kRanges[] = {
    {kT, "-128", "127", "-127", "126", "TINYINT"},
    {kUT, "0", "255", "1", "254", "TINYINT UNSIGNED"},
    {kS, "-32768", "32767", "-32767", "32766", "SMALLINT"},
    {kUS, "0", "65535", "1", "65534", "SMALLINT UNSIGNED"},
    {kM, "-8388608", "8388607", "-8388607", "8388606", "MEDIUMINT"},
    {kUM, "0", "16777215", "1", "16777214", "MEDIUMINT UNSIGNED"},
    {kI, "-2147483648", "2147483647", "-2147483647", "2147483646", "INT"},
    {kUI, "0", "4294967295", "1", "4294967294", "INT UNSIGNED"},
    {kB, "-9223372036854775808", "9223372036854775807", "-9223372036854775807",
     "9223372036854775806", "BIGINT"},
    {kUB, "0", "18446744073709551615", "1", "18446744073709551614", "BIGINT UNSIGNED"},
};

// Applies `u` to a row where `column` = `start`; returns the new value's text or the error.
std::string run(const InterpretedUpdate& u, uint16_t column, const char* start) {
  const TestRow row = row_with({{column, start ? MaybeText(start) : std::nullopt}});
  AttrValues out;
  auto r = u.apply(row, &out);
  if (!r.ok()) {
    EXPECT_TRUE(out.empty());
    return "error " + std::string(error_info(r.status().code()).name) + ": " + r.status().message();
  }
  EXPECT_EQ(r.value(), UpdateOutcome::kApplied);
  const int i = out.find(column);
  if (i < 0) return "missing";
  if (out.entry(static_cast<size_t>(i)).is_null) return "NULL";
  return format_value(schema().columns[column], out.value(static_cast<size_t>(i)));
}

TEST(InterpretedUpdate, EveryIntegerWidthAtItsBoundaries) {
  for (const Range& r : kRanges) {
    const std::string name = schema().columns[r.column].name;
    SCOPED_TRACE(r.type_name);
    const auto plus_one = bound(InterpretedUpdate().add(r.column, 1));
    const auto minus_one = bound(InterpretedUpdate().sub(r.column, 1));
    const auto add_minus_one = bound(InterpretedUpdate().add(r.column, -1));
    const auto sub_minus_one = bound(InterpretedUpdate().sub(r.column, -1));
    const auto plus_zero = bound(InterpretedUpdate().add(r.column, 0));
    // Up to the boundary is fine ...
    EXPECT_EQ(run(plus_one, r.column, r.max_minus_one), r.max);
    EXPECT_EQ(run(minus_one, r.column, r.min_plus_one), r.min);
    EXPECT_EQ(run(plus_zero, r.column, r.max), r.max);
    EXPECT_EQ(run(plus_zero, r.column, r.min), r.min);
    // ... one past it in either direction is an error with MySQL's message.
    EXPECT_EQ(run(plus_one, r.column, r.max), std::string("error OutOfRange: ") + r.type_name +
                                                  " value is out of range in '(`" + name + "` + 1)'");
    EXPECT_EQ(run(sub_minus_one, r.column, r.max),
              std::string("error OutOfRange: ") + r.type_name + " value is out of range in '(`" +
                  name + "` - -1)'");
    EXPECT_EQ(run(minus_one, r.column, r.min), std::string("error OutOfRange: ") + r.type_name +
                                                   " value is out of range in '(`" + name + "` - 1)'");
    EXPECT_EQ(run(add_minus_one, r.column, r.min),
              std::string("error OutOfRange: ") + r.type_name + " value is out of range in '(`" +
                  name + "` + -1)'");
  }
}

TEST(InterpretedUpdate, ExtremeDeltas) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // BIGINT: 0 - INT64_MIN = 2^63 overflows; -1 - INT64_MIN = INT64_MAX fits.
  EXPECT_NE(run(bound(InterpretedUpdate().sub(kB, kMin)), kB, "0").find("error OutOfRange"),
            std::string::npos);
  EXPECT_EQ(run(bound(InterpretedUpdate().sub(kB, kMin)), kB, "-1"), "9223372036854775807");
  EXPECT_EQ(run(bound(InterpretedUpdate().add(kB, kMin)), kB, "9223372036854775807"), "-1");
  // BIGINT UNSIGNED spans more than any delta: climb to the top in two steps.
  EXPECT_EQ(run(bound(InterpretedUpdate().add(kUB, kMax)), kUB, "9223372036854775808"),
            "18446744073709551615");
  EXPECT_EQ(run(bound(InterpretedUpdate().add(kUB, kMin)), kUB, "18446744073709551615"),
            "9223372036854775807");
  EXPECT_EQ(run(bound(InterpretedUpdate().sub(kUB, kMin)), kUB, "9223372036854775807"),
            "18446744073709551615");
  EXPECT_NE(run(bound(InterpretedUpdate().sub(kUB, kMin)), kUB, "9223372036854775808")
                .find("error OutOfRange"),
            std::string::npos);
  // TINYINT with a huge delta.
  EXPECT_NE(run(bound(InterpretedUpdate().add(kT, kMax)), kT, "0").find("error OutOfRange"),
            std::string::npos);
}

TEST(InterpretedUpdate, NullArithmeticYieldsNull) {
  for (const Range& r : kRanges) {
    EXPECT_EQ(run(bound(InterpretedUpdate().add(r.column, 1)), r.column, nullptr), "NULL");
    EXPECT_EQ(run(bound(InterpretedUpdate().sub(r.column, 5)), r.column, nullptr), "NULL");
  }
}

TEST(InterpretedUpdate, SetSetNullAndOrder) {
  const auto u = bound(InterpretedUpdate()
                           .set(kName, "hello")
                           .add(kI, 10)
                           .set_null(kReal)
                           .set(kCode, enc(kCode, "ab"))
                           .set(kNotNull, enc(kNotNull, "-7")));
  TestRow row = row_with({{kI, "5"}, {kReal, "1.5"}, {kName, "old"}});
  AttrValues out;
  auto r = u.apply(row, &out);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), UpdateOutcome::kApplied);
  ASSERT_EQ(out.size(), 5u);  // only the updated columns, in action order
  EXPECT_EQ(out.entry(0).column, kName);
  EXPECT_EQ(out.value(0), "hello");
  EXPECT_EQ(out.entry(1).column, kI);
  EXPECT_EQ(out.value(1), enc(kI, "15"));
  EXPECT_EQ(out.entry(2).column, kReal);
  EXPECT_TRUE(out.entry(2).is_null);
  EXPECT_EQ(out.value(3), "ab  ");
  EXPECT_EQ(out.value(4), enc(kNotNull, "-7"));
  // Applying repeatedly keeps counting from the row's current value.
  row.apply(out);
  ASSERT_TRUE(u.apply(row, &out).ok());
  EXPECT_EQ(out.value(1), enc(kI, "25"));
}

TEST(InterpretedUpdate, FailureIsAllOrNothing) {
  const auto u = bound(InterpretedUpdate().set(kName, "x").add(kT, 1).add(kI, 1));
  AttrValues out;
  out.add(kS, "stale");
  auto r = u.apply(row_with({{kT, "127"}, {kI, "1"}}), &out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kOutOfRange);
  EXPECT_TRUE(out.empty());
}

TEST(InterpretedUpdate, GuardedUpdate) {
  FilterBuilder fb;
  auto guard = fb.build(fb.cmp(kI, CmpOp::kGt, enc(kI, "5")));  // WHERE i > 5
  ASSERT_TRUE(guard.ok());
  const auto u = bound(InterpretedUpdate().add(kI, 1).guard(std::move(guard).value()));
  AttrValues out;
  auto applied = u.apply(row_with({{kI, "10"}}), &out);
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(applied.value(), UpdateOutcome::kApplied);
  EXPECT_EQ(out.value(0), enc(kI, "11"));

  auto skipped = u.apply(row_with({{kI, "5"}}), &out);
  ASSERT_TRUE(skipped.ok());
  EXPECT_EQ(skipped.value(), UpdateOutcome::kGuardNotMet);
  EXPECT_TRUE(out.empty());

  auto unknown = u.apply(row_with({{kI, std::nullopt}}), &out);  // NULL > 5 is UNKNOWN
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown.value(), UpdateOutcome::kGuardNotMet);

  // The guard runs before the arithmetic: a failing guard hides an overflow.
  FilterBuilder fb2;
  auto never = fb2.build(fb2.always_false());
  ASSERT_TRUE(never.ok());
  const auto guarded_overflow = bound(InterpretedUpdate().add(kT, 1).guard(std::move(never).value()));
  auto r = guarded_overflow.apply(row_with({{kT, "127"}}), &out);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), UpdateOutcome::kGuardNotMet);
}

TEST(InterpretedUpdate, ValidationAgainstSchema) {
  auto code = [](InterpretedUpdate u) { return u.bind(schema()).code(); };
  EXPECT_EQ(code(InterpretedUpdate()), ErrorCode::kInvalidArgument);                   // no actions
  EXPECT_EQ(code(InterpretedUpdate().add(kId, 1)), ErrorCode::kInvalidArgument);       // primary key
  EXPECT_EQ(code(InterpretedUpdate().set(kId, enc(kId, "2"))), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(InterpretedUpdate().add(kName, 1)), ErrorCode::kInvalidArgument);     // VARCHAR
  EXPECT_EQ(code(InterpretedUpdate().add(kReal, 1)), ErrorCode::kInvalidArgument);     // DOUBLE
  EXPECT_EQ(code(InterpretedUpdate().set_null(kNotNull)), ErrorCode::kNotNullViolation);
  EXPECT_EQ(code(InterpretedUpdate().set(kI, "abc")), ErrorCode::kInvalidArgument);    // 3 bytes
  EXPECT_EQ(code(InterpretedUpdate().set(kCode, "ab")), ErrorCode::kInvalidArgument);  // unpadded
  EXPECT_EQ(code(InterpretedUpdate().set(kName, "01234567890")), ErrorCode::kDataTooLong);
  EXPECT_EQ(code(InterpretedUpdate().add(99, 1)), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(InterpretedUpdate().add(kI, 1).sub(kI, 2)), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(InterpretedUpdate().add(kI, 1).set_null(kI)), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(InterpretedUpdate().set_null(kName).add(kUB, -3)), ErrorCode::kOk);
  Status s = InterpretedUpdate().set_null(kNotNull).bind(schema());
  EXPECT_EQ(s.message(), "Column 'nn' cannot be null");
  FilterBuilder fb;
  auto bad_guard = fb.build(fb.is_null(77));
  ASSERT_TRUE(bad_guard.ok());
  EXPECT_EQ(code(InterpretedUpdate().add(kI, 1).guard(std::move(bad_guard).value())),
            ErrorCode::kInvalidArgument);
  // Not bound: an error, not a crash.
  AttrValues out;
  auto r = InterpretedUpdate().add(kI, 1).apply(row_with({}), &out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInternal);
}

TEST(InterpretedUpdate, CorruptStoredValueIsReported) {
  const auto u = bound(InterpretedUpdate().add(kI, 1));
  TestRow row = row_with({});
  row.set(kI, std::string("\x01\x02", 2));  // an INT must be 4 bytes
  AttrValues out;
  auto r = u.apply(row, &out);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kCorruption);
}

// ---------------------------------------------------------------------------------------
// Wire format

TEST(InterpretedUpdate, KnownEncoding) {
  const std::string bytes = InterpretedUpdate().add(kI, 1).set_null(kName).encode();
  const std::string expected(
      "\x01" "\x00" "\x02\x00"                                // version, no guard, 2 actions
      "\x03" "\x07\x00" "\x01\x00\x00\x00\x00\x00\x00\x00"    // ADD i, 1
      "\x02" "\x0B\x00",                                      // SET_NULL name
      18);
  EXPECT_EQ(bytes, expected);
}

TEST(InterpretedUpdate, EncodeDecodeRoundTrip) {
  FilterBuilder fb;
  auto guard = fb.build(fb.and_({fb.is_not_null(kI), fb.like(kName, "a%")}));
  ASSERT_TRUE(guard.ok());
  InterpretedUpdate u;
  u.add(kI, -3).sub(kUB, std::numeric_limits<int64_t>::min()).set(kName, "new").set_null(kReal);
  u.guard(std::move(guard).value());
  const std::string bytes = u.encode();
  auto decoded = InterpretedUpdate::decode(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->encode(), bytes);
  EXPECT_TRUE(decoded->has_guard());
  ASSERT_TRUE(decoded->bind(schema()).ok());
  ASSERT_TRUE(u.bind(schema()).ok());
  for (const TestRow& row : {row_with({{kI, "10"}, {kName, "abc"}, {kUB, "5"}}),
                             row_with({{kI, "10"}, {kName, "xyz"}})}) {
    AttrValues a, b;
    auto ra = u.apply(row, &a);
    auto rb = decoded->apply(row, &b);
    ASSERT_TRUE(ra.ok());
    ASSERT_TRUE(rb.ok());
    EXPECT_EQ(ra.value(), rb.value());
    EXPECT_EQ(a.data(), b.data());
    EXPECT_EQ(a.size(), b.size());
  }
}

TEST(InterpretedUpdate, DecodeRejectsMalformedPrograms) {
  auto rejects = [](std::string bytes) { return !InterpretedUpdate::decode(bytes).ok(); };
  const std::string good = InterpretedUpdate().add(kI, 1).encode();
  EXPECT_FALSE(rejects(good));
  EXPECT_TRUE(rejects(""));
  EXPECT_TRUE(rejects(good.substr(0, good.size() - 1)));  // truncated delta
  EXPECT_TRUE(rejects(good + "x"));                        // trailing byte
  std::string v = good;
  v[0] = 2;
  EXPECT_TRUE(rejects(v));  // version
  v = good;
  v[1] = 2;
  EXPECT_TRUE(rejects(v));  // unknown flag
  v = good;
  v[1] = 1;
  EXPECT_TRUE(rejects(v));  // guard flag without a guard
  v = good;
  v[4] = 9;
  EXPECT_TRUE(rejects(v));  // action kind
  v = good;
  v[2] = 0;
  EXPECT_TRUE(rejects(v));  // zero actions (and then trailing bytes)
  // A guard that is not a filter program.
  std::string with_guard = good;
  with_guard[1] = 1;
  with_guard += std::string("\x03\x00\x00\x00" "abc", 7);
  EXPECT_TRUE(rejects(with_guard));
}

TEST(InterpretedUpdate, DecodeSurvivesGarbage) {
  std::mt19937_64 rng(21);
  FilterBuilder fb;
  auto guard = fb.build(fb.or_({fb.cmp(kI, CmpOp::kGe, enc(kI, "3")), fb.like(kName, "%b_")}));
  ASSERT_TRUE(guard.ok());
  const std::string seed = InterpretedUpdate()
                               .add(kI, 1)
                               .sub(kT, 2)
                               .set(kName, "abc")
                               .set_null(kReal)
                               .guard(std::move(guard).value())
                               .encode();
  const TestRow rows[] = {row_with({{kI, "10"}, {kT, "-128"}, {kName, "xbc"}}), row_with({})};
  size_t decoded_ok = 0;
  for (int i = 0; i < 30000; ++i) {
    std::string bytes;
    if (i % 4 == 0) {
      for (size_t n = rng() % 40; n > 0; --n) bytes.push_back(static_cast<char>(rng()));
      if (!bytes.empty()) bytes[0] = '\x01';
    } else {
      bytes = seed;
      for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
        switch (rng() % 3) {
          case 0: bytes[rng() % bytes.size()] = static_cast<char>(rng()); break;
          case 1: bytes.resize(rng() % bytes.size() + 1); break;
          case 2: bytes.insert(rng() % bytes.size(), 1, static_cast<char>(rng())); break;
        }
      }
    }
    auto r = InterpretedUpdate::decode(bytes);
    if (!r.ok()) continue;
    ++decoded_ok;
    InterpretedUpdate u = std::move(r).value();
    if (!u.bind(schema()).ok()) continue;
    for (const TestRow& row : rows) {
      AttrValues out;
      auto applied = u.apply(row, &out);
      if (!applied.ok()) applied.status().ignore_error();
    }
  }
  EXPECT_GT(decoded_ok, 0u);
}

}  // namespace
}  // namespace duo::storage
