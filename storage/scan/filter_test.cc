// Tests for FilterProgram / FilterBuilder: SQL three-valued logic against a reference
// evaluator, comparisons, LIKE against a reference matcher, schema validation, limits,
// the wire format (known bytes, round trips) and decoding of garbage.
#include "storage/scan/filter.h"

#include <gtest/gtest.h>

#include <cctype>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "storage/scan/test_row.h"

namespace duo::storage {
namespace {

using testing::MaybeText;
using testing::TestRow;

enum Col : uint16_t { kId, kA, kB, kName, kCode, kBin, kTxt, kPrice, kU, kWhen, kColumnCount };

ColumnDef column(std::string name, ColumnType type, bool nullable = true, uint32_t length = 0,
                 Collation collation = Collation::kBinary) {
  ColumnDef c;
  c.name = std::move(name);
  c.type = type;
  c.nullable = nullable;
  c.length = length;
  c.collation = collation;
  return c;
}

TableSchema test_schema() {
  TableSchema s;
  s.name = "t";
  s.columns = {
      column("id", ColumnType::kBigInt, false),
      column("a", ColumnType::kInt),
      column("b", ColumnType::kInt),
      column("name", ColumnType::kVarchar, true, 20, Collation::kCaseInsensitive),
      column("code", ColumnType::kChar, true, 6),
      column("bin", ColumnType::kVarbinary, true, 10),
      column("txt", ColumnType::kText, true, 32, Collation::kCaseInsensitive),
      column("price", ColumnType::kDecimal),
      column("u", ColumnType::kBigInt),
      column("when", ColumnType::kDatetime),
  };
  s.columns[kPrice].precision = 8;
  s.columns[kPrice].scale = 2;
  s.columns[kU].is_unsigned = true;
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

// A row with the given columns set (by text), everything else NULL except id.
TestRow row_with(std::vector<std::pair<uint16_t, MaybeText>> values) {
  std::vector<MaybeText> texts(kColumnCount);
  texts[kId] = "1";
  for (auto& [col, text] : values) texts[col] = text;
  return TestRow::from_text(schema(), texts);
}

FilterProgram must_build(const FilterBuilder& b, FilterBuilder::Node root) {
  auto r = b.build(root);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  FilterProgram p = r.ok() ? std::move(r).value() : FilterProgram();
  Status s = p.bind(schema());
  EXPECT_TRUE(s.ok()) << s.to_string();
  return p;
}

const char* name_of(Truth t) {
  return t == Truth::kTrue ? "TRUE" : (t == Truth::kFalse ? "FALSE" : "UNKNOWN");
}

// Column `col` = 1 is TRUE for value 1, FALSE for 0, UNKNOWN for NULL.
MaybeText text_for(Truth t) {
  if (t == Truth::kTrue) return "1";
  if (t == Truth::kFalse) return "0";
  return std::nullopt;
}

constexpr Truth kTruths[] = {Truth::kFalse, Truth::kTrue, Truth::kUnknown};

// ---------------------------------------------------------------------------------------
// Three-valued logic

static_assert(truth_not(Truth::kUnknown) == Truth::kUnknown);
static_assert(truth_and(Truth::kFalse, Truth::kUnknown) == Truth::kFalse);
static_assert(truth_and(Truth::kUnknown, Truth::kFalse) == Truth::kFalse);
static_assert(truth_and(Truth::kTrue, Truth::kUnknown) == Truth::kUnknown);
static_assert(truth_or(Truth::kTrue, Truth::kUnknown) == Truth::kTrue);
static_assert(truth_or(Truth::kUnknown, Truth::kTrue) == Truth::kTrue);
static_assert(truth_or(Truth::kFalse, Truth::kUnknown) == Truth::kUnknown);

TEST(Filter, BinaryTruthTables) {
  FilterBuilder b;
  const std::string one = enc(kA, "1");
  const auto x = b.cmp(kA, CmpOp::kEq, one);
  const auto y = b.cmp(kB, CmpOp::kEq, one);
  const FilterProgram p_and = must_build(b, b.and_({x, y}));
  const FilterProgram p_or = must_build(b, b.or_({x, y}));
  const FilterProgram p_not = must_build(b, b.not_(x));
  for (Truth tx : kTruths) {
    for (Truth ty : kTruths) {
      const TestRow row = row_with({{kA, text_for(tx)}, {kB, text_for(ty)}});
      SCOPED_TRACE(std::string(name_of(tx)) + ", " + name_of(ty));
      EXPECT_EQ(p_and.evaluate_truth(row), truth_and(tx, ty));
      EXPECT_EQ(p_or.evaluate_truth(row), truth_or(tx, ty));
      EXPECT_EQ(p_not.evaluate_truth(row), truth_not(tx));
      EXPECT_EQ(p_and.evaluate(row), truth_and(tx, ty) == Truth::kTrue);
    }
  }
  // The named cases of the spec.
  EXPECT_EQ(p_not.evaluate_truth(row_with({{kA, std::nullopt}})), Truth::kUnknown);
  EXPECT_FALSE(p_not.evaluate(row_with({{kA, std::nullopt}})));
  EXPECT_EQ(p_and.evaluate_truth(row_with({{kA, "0"}, {kB, std::nullopt}})), Truth::kFalse);
  EXPECT_EQ(p_or.evaluate_truth(row_with({{kA, "1"}, {kB, std::nullopt}})), Truth::kTrue);
}

// Random condition trees over three truth sources, checked for every assignment against a
// direct recursive evaluation (the reference), and again after an encode/decode trip.
struct RefNode {
  enum Kind { kLeaf, kConstTrue, kConstFalse, kNot, kAnd, kOr } kind;
  int leaf = 0;
  std::vector<RefNode> children;
};

Truth reference_eval(const RefNode& n, const Truth (&leaves)[3]) {
  switch (n.kind) {
    case RefNode::kLeaf: return leaves[n.leaf];
    case RefNode::kConstTrue: return Truth::kTrue;
    case RefNode::kConstFalse: return Truth::kFalse;
    case RefNode::kNot: return truth_not(reference_eval(n.children[0], leaves));
    case RefNode::kAnd: {
      Truth t = Truth::kTrue;
      for (const RefNode& c : n.children) t = truth_and(t, reference_eval(c, leaves));
      return t;
    }
    case RefNode::kOr: {
      Truth t = Truth::kFalse;
      for (const RefNode& c : n.children) t = truth_or(t, reference_eval(c, leaves));
      return t;
    }
  }
  return Truth::kUnknown;
}

RefNode random_tree(std::mt19937_64& rng, int depth) {
  RefNode n;
  const int pick = static_cast<int>(rng() % (depth <= 0 ? 4 : 8));
  if (pick < 3) {
    n.kind = RefNode::kLeaf;
    n.leaf = pick;
  } else if (pick == 3) {
    n.kind = rng() % 2 ? RefNode::kConstTrue : RefNode::kConstFalse;
  } else if (pick == 4) {
    n.kind = RefNode::kNot;
    n.children.push_back(random_tree(rng, depth - 1));
  } else {
    n.kind = pick % 2 ? RefNode::kAnd : RefNode::kOr;
    const int arity = static_cast<int>(rng() % 5);  // includes the empty AND/OR
    for (int i = 0; i < arity; ++i) n.children.push_back(random_tree(rng, depth - 1));
  }
  return n;
}

FilterBuilder::Node build_tree(FilterBuilder& b, const RefNode& n,
                               const FilterBuilder::Node (&leaves)[3]) {
  switch (n.kind) {
    case RefNode::kLeaf: return leaves[n.leaf];
    case RefNode::kConstTrue: return b.always_true();
    case RefNode::kConstFalse: return b.always_false();
    case RefNode::kNot: return b.not_(build_tree(b, n.children[0], leaves));
    default: {
      std::vector<FilterBuilder::Node> children;
      for (const RefNode& c : n.children) children.push_back(build_tree(b, c, leaves));
      return n.kind == RefNode::kAnd ? b.and_(children) : b.or_(children);
    }
  }
}

TEST(Filter, RandomTreesMatchReference) {
  std::mt19937_64 rng(11);
  const std::string one = enc(kA, "1");
  for (int iter = 0; iter < 400; ++iter) {
    const RefNode tree = random_tree(rng, 5);
    FilterBuilder b;
    const FilterBuilder::Node leaves[3] = {b.cmp(kA, CmpOp::kEq, one), b.cmp(kB, CmpOp::kEq, one),
                                           b.cmp(kU, CmpOp::kEq, enc(kU, "1"))};
    const FilterProgram p = must_build(b, build_tree(b, tree, leaves));
    auto decoded = FilterProgram::decode(p.encode());
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    ASSERT_TRUE(decoded->bind(schema()).ok());
    for (Truth t0 : kTruths) {
      for (Truth t1 : kTruths) {
        for (Truth t2 : kTruths) {
          const Truth assignment[3] = {t0, t1, t2};
          const TestRow row = row_with({{kA, text_for(t0)}, {kB, text_for(t1)}, {kU, text_for(t2)}});
          const Truth expected = reference_eval(tree, assignment);
          ASSERT_EQ(p.evaluate_truth(row), expected) << p.to_string();
          ASSERT_EQ(decoded->evaluate_truth(row), expected);
        }
      }
    }
  }
}

TEST(Filter, ShortCircuitSkipsDecidedOperands) {
  FilterBuilder b;
  const auto is_false = b.cmp(kA, CmpOp::kEq, enc(kA, "1"));  // a = 0 in the row below
  std::vector<FilterBuilder::Node> rest;
  for (int i = 0; i < 100; ++i) rest.push_back(b.like(kName, "%x%y%"));
  std::vector<FilterBuilder::Node> all = {is_false};
  all.insert(all.end(), rest.begin(), rest.end());
  const FilterProgram p = must_build(b, b.and_(all));
  const TestRow row = row_with({{kA, "0"}, {kName, "abc"}});
  EXPECT_FALSE(p.evaluate(row));
  EXPECT_EQ(row.reads(), 1u);  // only `a` was read
  // A 100-operand AND needs two stack slots, not 100.
  EXPECT_LT(p.instructions().size(), 400u);
}

// ---------------------------------------------------------------------------------------
// Leaves

TEST(Filter, ComparisonsWithConstants) {
  const CmpOp ops[] = {CmpOp::kEq, CmpOp::kNe, CmpOp::kLt, CmpOp::kLe, CmpOp::kGt, CmpOp::kGe};
  auto reference = [](CmpOp op, int a, int b) {
    switch (op) {
      case CmpOp::kEq: return a == b;
      case CmpOp::kNe: return a != b;
      case CmpOp::kLt: return a < b;
      case CmpOp::kLe: return a <= b;
      case CmpOp::kGt: return a > b;
      case CmpOp::kGe: return a >= b;
    }
    return false;
  };
  for (CmpOp op : ops) {
    FilterBuilder b;
    const FilterProgram with_const = must_build(b, b.cmp(kA, op, enc(kA, "0")));
    const FilterProgram with_column = must_build(b, b.cmp_columns(kA, op, kB));
    for (int a = -2; a <= 2; ++a) {
      const TestRow row = row_with({{kA, std::to_string(a)}, {kB, "0"}});
      EXPECT_EQ(with_const.evaluate(row), reference(op, a, 0)) << a;
      EXPECT_EQ(with_column.evaluate(row), reference(op, a, 0)) << a;
    }
    // NULL on either side is UNKNOWN for every operator, even <>.
    EXPECT_EQ(with_const.evaluate_truth(row_with({})), Truth::kUnknown);
    EXPECT_EQ(with_column.evaluate_truth(row_with({{kA, "1"}})), Truth::kUnknown);
    EXPECT_EQ(with_column.evaluate_truth(row_with({{kB, "1"}})), Truth::kUnknown);
  }
}

TEST(Filter, ComparisonsUseColumnSemantics) {
  FilterBuilder b;
  auto check = [&](FilterBuilder::Node n, const TestRow& row, bool expected) {
    EXPECT_EQ(must_build(b, n).evaluate(row), expected);
  };
  // Case-insensitive PAD SPACE.
  check(b.cmp(kName, CmpOp::kEq, "ABC  "), row_with({{kName, "abc"}}), true);
  check(b.cmp(kName, CmpOp::kLt, "abd"), row_with({{kName, "ABC"}}), true);
  // CHAR against an unpadded constant.
  check(b.cmp(kCode, CmpOp::kEq, "ab"), row_with({{kCode, "ab"}}), true);
  // Binary string: case matters, trailing spaces matter.
  check(b.cmp(kBin, CmpOp::kEq, "ab"), row_with({{kBin, "ab "}}), false);
  check(b.cmp(kBin, CmpOp::kGt, "AB"), row_with({{kBin, "ab"}}), true);
  // DECIMAL, unsigned BIGINT above INT64_MAX, DATETIME, TEXT.
  check(b.cmp(kPrice, CmpOp::kGe, enc(kPrice, "10.00")), row_with({{kPrice, "-10.5"}}), false);
  check(b.cmp(kPrice, CmpOp::kGe, enc(kPrice, "-11")), row_with({{kPrice, "-10.5"}}), true);
  check(b.cmp(kU, CmpOp::kGt, enc(kU, "9223372036854775807")),
        row_with({{kU, "18446744073709551615"}}), true);
  check(b.cmp(kWhen, CmpOp::kLt, enc(kWhen, "2024-03-01 00:00:00")),
        row_with({{kWhen, "2024-02-29 23:59:59"}}), true);
  check(b.cmp(kTxt, CmpOp::kEq, enc(kTxt, "HELLO")), row_with({{kTxt, "hello  "}}), true);
}

// BYTES_DIFFER: the stored bytes, not the collation (MySQL's "changed" test).
TEST(Filter, BytesDifferIgnoresTheCollation) {
  FilterBuilder b;
  auto truth = [&](FilterBuilder::Node n, const TestRow& row) {
    return must_build(b, n).evaluate_truth(row);
  };
  // Equal under the case-insensitive collation, but different bytes: a change.
  EXPECT_EQ(truth(b.cmp(kName, CmpOp::kNe, enc(kName, "ABC")), row_with({{kName, "abc"}})),
            Truth::kFalse);
  EXPECT_EQ(truth(b.bytes_differ(kName, enc(kName, "ABC")), row_with({{kName, "abc"}})),
            Truth::kTrue);
  EXPECT_EQ(truth(b.bytes_differ(kName, enc(kName, "abc")), row_with({{kName, "abc"}})),
            Truth::kFalse);
  // CHAR holds its padded form: the same value stored again is no change.
  EXPECT_EQ(truth(b.bytes_differ(kCode, enc(kCode, "ab")), row_with({{kCode, "ab"}})),
            Truth::kFalse);
  EXPECT_EQ(truth(b.bytes_differ(kA, enc(kA, "5")), row_with({{kA, "6"}})), Truth::kTrue);
  EXPECT_EQ(truth(b.bytes_differ(kA, enc(kA, "5")), row_with({})), Truth::kUnknown);
  // Its constant is checked like a comparison's, and it survives the wire format.
  FilterBuilder bad;
  auto wrong = bad.build(bad.bytes_differ(kA, "xyz"));
  ASSERT_TRUE(wrong.ok());
  EXPECT_FALSE(wrong->bind(schema()).ok());
  const FilterProgram p = must_build(b, b.or_({b.is_null(kTxt), b.bytes_differ(kTxt, enc(kTxt, "x"))}));
  auto decoded = FilterProgram::decode(p.encode());
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->encode(), p.encode());
  EXPECT_NE(decoded->to_string().find("BYTES_DIFFER c6 0x"), std::string::npos);
}

TEST(Filter, IsNullAndConstants) {
  FilterBuilder b;
  const FilterProgram is_null = must_build(b, b.is_null(kA));
  const FilterProgram not_null = must_build(b, b.is_not_null(kA));
  const FilterProgram t = must_build(b, b.always_true());
  const FilterProgram empty_and = must_build(b, b.and_({}));
  const FilterProgram empty_or = must_build(b, b.or_({}));
  const TestRow null_row = row_with({});
  const TestRow value_row = row_with({{kA, "5"}});
  EXPECT_EQ(is_null.evaluate_truth(null_row), Truth::kTrue);  // never UNKNOWN
  EXPECT_EQ(is_null.evaluate_truth(value_row), Truth::kFalse);
  EXPECT_EQ(not_null.evaluate_truth(null_row), Truth::kFalse);
  EXPECT_EQ(not_null.evaluate_truth(value_row), Truth::kTrue);
  EXPECT_TRUE(t.evaluate(null_row));
  EXPECT_TRUE(empty_and.evaluate(null_row));
  EXPECT_FALSE(empty_or.evaluate(null_row));
}

struct LikeCase {
  uint16_t column;
  const char* value;
  const char* pattern;
  bool expected;
};

TEST(Filter, LikeCases) {
  const LikeCase cases[] = {
      {kName, "ABCdef", "abc%", true},     {kName, "abc", "abc%", true},
      {kName, "ab", "abc%", false},        {kName, "xabc", "%abc", true},
      {kName, "xabcx", "%abc", false},     {kName, "aXc", "a_c", true},
      {kName, "ac", "a_c", false},         {kName, "", "%", true},
      {kName, "", "", true},               {kName, "a", "", false},
      {kName, "a%b", "a\\%b", true},       {kName, "axb", "a\\%b", false},
      {kName, "a_", "a\\_", true},         {kName, "ab", "a\\_", false},
      {kName, "a\\", "a\\", true},         {kName, "aXbYc", "a%b%c", true},
      {kName, "acb", "a%b%c", false},      {kName, "abc ", "abc", false},  // LIKE never pads
      {kName, "ABC", "abc", true},         {kName, "mississippi", "%iss%ppi", true},
      {kName, "mississippi", "m%s%s%s%i", true}, {kName, "mississippi", "m%s%s%s%s%s%i", false},
      {kName, "abc", "%%%", true},         {kName, "abc", "_%_", true},
      {kName, "a", "_%_", false},          {kName, "abc%", "abc\\%", true},
      {kName, "abcd", "abc\\%", false},    {kName, "aaa", "%a", true},
      {kBin, "ABC", "abc%", false},        {kBin, "abc", "abc%", true},
      {kBin, "abc", "_B_", false},         {kBin, "aBc", "_B_", true},
      {kCode, "ab", "ab", true},           {kCode, "ab", "ab %", false},  // CHAR reads unpadded
      {kCode, "ab", "a_", true},           {kTxt, "Hello World", "%world", true},
      {kTxt, "Hello World", "hello", false},
      // Case- and accent-insensitive by character (storage/row/collation.h).
      {kName, "été", "ETE", true},         {kName, "été", "et%", true},
      {kName, "été", "_T_", true},         {kName, "été", "__", false},
      {kName, "Straße", "%ASE", true},     {kTxt, "Ärger", "a%", true},
      {kBin, "été", "ete", false},         {kBin, "été", "_t_", false},  // binary: bytes
  };
  for (const LikeCase& c : cases) {
    FilterBuilder b;
    const FilterProgram p = must_build(b, b.like(c.column, c.pattern));
    EXPECT_EQ(p.evaluate(row_with({{c.column, c.value}})), c.expected)
        << "'" << c.value << "' LIKE '" << c.pattern << "'";
  }
  FilterBuilder b;
  const FilterProgram bang = must_build(b, b.like(kName, "a!%", '!'));
  EXPECT_TRUE(bang.evaluate(row_with({{kName, "a%"}})));
  EXPECT_FALSE(bang.evaluate(row_with({{kName, "ab"}})));
  // NULL LIKE x and NOT (NULL LIKE x) are both UNKNOWN.
  const FilterProgram like = must_build(b, b.like(kName, "%"));
  const FilterProgram not_like = must_build(b, b.not_(b.like(kName, "%")));
  EXPECT_EQ(like.evaluate_truth(row_with({})), Truth::kUnknown);
  EXPECT_EQ(not_like.evaluate_truth(row_with({})), Truth::kUnknown);
  // Patterns are classified once: prefix and exact patterns skip the general matcher.
  FilterBuilder c;
  EXPECT_EQ(must_build(c, c.like(kName, "ab\\%c%%")).instructions()[0].like_mode, LikeMode::kPrefix);
  EXPECT_EQ(must_build(c, c.like(kName, "abc")).instructions()[0].like_mode, LikeMode::kExact);
  EXPECT_EQ(must_build(c, c.like(kName, "a%c")).instructions()[0].like_mode, LikeMode::kGeneral);
}

// Plain recursive LIKE, exponential but obviously correct for short inputs.
bool reference_like(std::string_view s, std::string_view p, bool fold) {
  if (p.empty()) return s.empty();
  auto eq = [fold](char a, char b) {
    if (fold) {
      a = static_cast<char>(std::toupper(static_cast<unsigned char>(a)));
      b = static_cast<char>(std::toupper(static_cast<unsigned char>(b)));
    }
    return a == b;
  };
  if (p[0] == '%') {
    for (size_t k = 0; k <= s.size(); ++k) {
      if (reference_like(s.substr(k), p.substr(1), fold)) return true;
    }
    return false;
  }
  if (s.empty()) return false;
  if (p[0] == '_') return reference_like(s.substr(1), p.substr(1), fold);
  if (p[0] == '\\' && p.size() > 1) {
    return eq(p[1], s[0]) && reference_like(s.substr(1), p.substr(2), fold);
  }
  return eq(p[0], s[0]) && reference_like(s.substr(1), p.substr(1), fold);
}

TEST(Filter, LikeMatchesReferenceRandom) {
  std::mt19937_64 rng(12);
  const char subject_chars[] = {'a', 'A', 'b', '%', '_', '\\'};
  const char pattern_chars[] = {'a', 'A', 'b', '%', '%', '_', '\\'};
  for (int i = 0; i < 20000; ++i) {
    std::string s, p;
    for (size_t n = rng() % 8; n > 0; --n) s.push_back(subject_chars[rng() % 6]);
    for (size_t n = rng() % 7; n > 0; --n) p.push_back(pattern_chars[rng() % 7]);
    const bool ci = rng() % 2;
    const uint16_t col = ci ? kName : kBin;
    FilterBuilder b;
    const FilterProgram prog = must_build(b, b.like(col, p));
    ASSERT_EQ(prog.evaluate(row_with({{col, s}})), reference_like(s, p, ci))
        << "'" << s << "' LIKE '" << p << "' ci=" << ci;
  }
}

// ---------------------------------------------------------------------------------------
// Validation and limits

TEST(Filter, ValidationAgainstSchema) {
  auto bind_code = [](FilterBuilder& b, FilterBuilder::Node n) {
    auto r = b.build(n);
    if (!r.ok()) return r.status().code();
    return r->bind(schema()).code();
  };
  FilterBuilder b;
  EXPECT_EQ(bind_code(b, b.is_null(99)), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bind_code(b, b.cmp(kA, CmpOp::kEq, "abc")), ErrorCode::kInvalidArgument);  // 3 bytes
  EXPECT_EQ(bind_code(b, b.cmp(kA, CmpOp::kEq, enc(kA, "3"))), ErrorCode::kOk);
  EXPECT_EQ(bind_code(b, b.like(kA, "1%")), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bind_code(b, b.cmp_columns(kA, CmpOp::kEq, kU)), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bind_code(b, b.cmp_columns(kA, CmpOp::kEq, 99)), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bind_code(b, b.cmp_columns(kA, CmpOp::kEq, kB)), ErrorCode::kOk);
  EXPECT_EQ(bind_code(b, b.cmp(kTxt, CmpOp::kEq, "no header")), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bind_code(b, b.cmp(kName, CmpOp::kEq, std::string(100, 'x'))), ErrorCode::kOk);
  FilterBuilder bad_escape;
  EXPECT_EQ(bind_code(bad_escape, bad_escape.like(kName, "a", '%')), ErrorCode::kInvalidArgument);
  FilterBuilder bad_handle;
  EXPECT_EQ(bind_code(bad_handle, bad_handle.not_(FilterBuilder::Node{42})),
            ErrorCode::kInvalidArgument);
  FilterBuilder other;
  const auto n = other.is_null(kA);
  EXPECT_EQ(bind_code(b, b.and_({n, b.is_null(kB), FilterBuilder::Node{1000}})),
            ErrorCode::kInvalidArgument);
}

TEST(Filter, EvaluateUnboundDies) {
  FilterBuilder b;
  auto r = b.build(b.is_null(kA));
  ASSERT_TRUE(r.ok());
  const FilterProgram p = std::move(r).value();
  EXPECT_FALSE(p.is_bound());
  EXPECT_DEATH(p.evaluate(row_with({})), "unbound");
}

TEST(Filter, NestingAndSizeLimits) {
  {
    FilterBuilder b;
    auto n = b.is_null(kA);
    for (uint32_t i = 1; i < kFilterNestingMax; ++i) n = (i % 2) ? b.and_({b.is_null(kB), n}) : b.or_({n, b.is_null(kB)});
    auto ok = b.build(n);
    EXPECT_TRUE(ok.ok()) << ok.status().to_string();
    n = b.not_(n);  // one level too deep
    EXPECT_FALSE(b.build(n).ok());
  }
  {
    // A wide OR (an IN list) stays within the stack bound.
    FilterBuilder b;
    std::vector<FilterBuilder::Node> in_list;
    for (int i = 0; i < 5000; ++i) in_list.push_back(b.cmp(kA, CmpOp::kEq, enc(kA, std::to_string(i))));
    const FilterProgram p = must_build(b, b.or_(in_list));
    EXPECT_TRUE(p.evaluate(row_with({{kA, "4999"}})));
    EXPECT_FALSE(p.evaluate(row_with({{kA, "5000"}})));
    auto decoded = FilterProgram::decode(p.encode());
    ASSERT_TRUE(decoded.ok());
  }
  {
    // Too many instructions: 10000 leaves need ~30000.
    FilterBuilder b;
    std::vector<FilterBuilder::Node> many;
    for (int i = 0; i < 10000; ++i) many.push_back(b.is_null(kA));
    EXPECT_FALSE(b.build(b.or_(many)).ok());
  }
  {
    // Too many bytes.
    FilterBuilder b;
    std::vector<FilterBuilder::Node> big;
    for (int i = 0; i < 20; ++i) big.push_back(b.cmp(kName, CmpOp::kEq, std::string(100000, 'x')));
    EXPECT_FALSE(b.build(b.or_(big)).ok());
    EXPECT_FALSE(b.build(b.cmp(kName, CmpOp::kEq, std::string(kFilterConstantBytesMax + 1, 'x'))).ok());
  }
}

// ---------------------------------------------------------------------------------------
// Wire format

TEST(Filter, KnownEncoding) {
  FilterBuilder b;
  auto r = b.build(b.and_({b.is_null(kA), b.cmp(kB, CmpOp::kLt, enc(kB, "258"))}));
  ASSERT_TRUE(r.ok());
  const std::string expected(
      "\x01" "\x04\x00"                                  // version 1, 4 instructions
      "\x05" "\x01\x00"                                  // IS_NULL a
      "\x0B" "\x04\x00"                                  // JUMP_IF_FALSE -> 4 (end)
      "\x03" "\x02" "\x02\x00" "\x04\x00\x00\x00" "\x02\x01\x00\x00"  // CMP b < 258
      "\x09",                                            // AND
      22);
  EXPECT_EQ(r->encode(), expected);
  auto decoded = FilterProgram::decode(expected);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->encode(), expected);
}

TEST(Filter, EncodeDecodeRoundTrip) {
  FilterBuilder b;
  const auto root = b.or_({
      b.and_({b.cmp(kA, CmpOp::kGe, enc(kA, "10")), b.not_(b.is_null(kB)),
              b.cmp_columns(kA, CmpOp::kNe, kB)}),
      b.like(kName, "ab\\_%", '\\'),
      b.like(kTxt, "%x_y%"),
      b.cmp(kPrice, CmpOp::kLe, enc(kPrice, "-1.25")),
      b.always_false(),
  });
  const FilterProgram p = must_build(b, root);
  const std::string bytes = p.encode();
  auto decoded = FilterProgram::decode(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->encode(), bytes);
  EXPECT_EQ(decoded->to_string(), p.to_string());
  EXPECT_FALSE(decoded->is_bound());
  ASSERT_TRUE(decoded->bind(schema()).ok());
  const TestRow rows[] = {
      row_with({{kA, "10"}, {kB, "3"}}),          row_with({{kA, "10"}, {kB, "10"}}),
      row_with({{kName, "ab_x"}}),                row_with({{kName, "abcx"}}),
      row_with({{kTxt, "..X-Y.."}}),              row_with({{kPrice, "-2"}}),
      row_with({{kPrice, "0"}, {kA, "1"}}),
  };
  const bool expected[] = {true, false, true, false, true, true, false};
  for (size_t i = 0; i < std::size(rows); ++i) {
    EXPECT_EQ(p.evaluate(rows[i]), expected[i]) << i;
    EXPECT_EQ(decoded->evaluate(rows[i]), expected[i]) << i;
  }
}

TEST(Filter, DecodeRejectsMalformedPrograms) {
  auto rejects = [](std::string bytes) { return !FilterProgram::decode(bytes).ok(); };
  EXPECT_TRUE(rejects(""));
  EXPECT_TRUE(rejects(std::string("\x02\x01\x00\x01", 4)));  // version 2
  EXPECT_TRUE(rejects(std::string("\x01\x00\x00", 3)));      // no instructions
  EXPECT_TRUE(rejects(std::string("\x01\x01\x00\x01\x01", 5)));  // trailing byte
  EXPECT_TRUE(rejects(std::string("\x01\x01\x00\x7F", 4)));      // unknown opcode
  EXPECT_TRUE(rejects(std::string("\x01\x01\x00\x03\x00\x01\x00\x08\x00\x00\x00" "ab", 12)));  // truncated constant
  EXPECT_TRUE(rejects(std::string("\x01\x01\x00\x03\x09\x01\x00\x00\x00\x00\x00", 11)));  // bad cmp
  EXPECT_TRUE(rejects(std::string("\x01\x02\x00\x01\x09", 5)));              // AND of one
  EXPECT_TRUE(rejects(std::string("\x01\x02\x00\x01\x01", 5)));              // two results
  EXPECT_TRUE(rejects(std::string("\x01\x02\x00\x01\x0B\x00\x00", 7)));      // jump backward
  EXPECT_TRUE(rejects(std::string("\x01\x02\x00\x01\x0B\x09\x00", 7)));      // jump past end
  // Jump landing where the stack is deeper than at the jump.
  EXPECT_TRUE(rejects(std::string("\x01\x04\x00\x01\x0B\x03\x00\x01\x09", 9)));
  EXPECT_TRUE(rejects(std::string("\x01\x01\x00\x07%\x01\x00\x00\x00\x00\x00", 11)));  // escape '%'
  // Stack deeper than kFilterStackDepthMax: 70 TRUEs then 69 ANDs.
  std::string deep("\x01", 1);
  deep.push_back(static_cast<char>(139));
  deep.push_back('\0');
  deep.append(70, '\x01');
  deep.append(69, '\x09');
  EXPECT_TRUE(rejects(deep));
  // Same shape within the bound is fine.
  std::string shallow("\x01", 1);
  shallow.push_back(static_cast<char>(63));
  shallow.push_back('\0');
  shallow.append(32, '\x01');
  shallow.append(31, '\x09');
  EXPECT_FALSE(rejects(shallow));
}

TEST(Filter, DecodeSurvivesGarbage) {
  std::mt19937_64 rng(13);
  // Seeds: valid encodings that reach deep into the decoder.
  std::vector<std::string> seeds;
  {
    FilterBuilder b;
    seeds.push_back(must_build(b, b.or_({b.and_({b.cmp(kA, CmpOp::kGe, enc(kA, "10")),
                                                  b.like(kName, "a%b_")}),
                                          b.not_(b.cmp_columns(kA, CmpOp::kLt, kB)),
                                          b.is_not_null(kTxt)}))
                        .encode());
    seeds.push_back(must_build(b, b.cmp(kTxt, CmpOp::kEq, enc(kTxt, "hello"))).encode());
  }
  const TestRow rows[] = {row_with({{kA, "10"}, {kB, "3"}, {kName, "axbc"}, {kTxt, "x"}}),
                          row_with({})};
  size_t decoded_ok = 0;
  for (int i = 0; i < 30000; ++i) {
    std::string bytes;
    if (i % 3 == 0) {
      const size_t n = rng() % 48;
      for (size_t k = 0; k < n; ++k) bytes.push_back(static_cast<char>(rng()));
      if (!bytes.empty() && rng() % 2) bytes[0] = '\x01';
    } else {
      bytes = seeds[rng() % seeds.size()];
      for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
        switch (rng() % 3) {
          case 0: bytes[rng() % bytes.size()] = static_cast<char>(rng()); break;
          case 1: bytes.resize(rng() % bytes.size() + 1); break;
          case 2: bytes.insert(rng() % bytes.size(), 1, static_cast<char>(rng())); break;
        }
      }
    }
    auto r = FilterProgram::decode(bytes);
    if (!r.ok()) continue;
    ++decoded_ok;
    FilterProgram p = std::move(r).value();
    if (!p.bind(schema()).ok()) continue;
    for (const TestRow& row : rows) (void)p.evaluate_truth(row);
  }
  EXPECT_GT(decoded_ok, 0u);  // the mutations also produced valid programs to evaluate
}

}  // namespace
}  // namespace duo::storage
