// Tests of the access planner: which WHERE clauses become key lookups, unique lookups or
// index ranges (and with which bounds), which are pushed to the data nodes as a filter,
// and what stays in sqld.
#include "sql-frontend/executor/access_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/parser/parser.h"
#include "storage/scan/filter.h"

namespace duo::sql::executor {
namespace {

class AccessPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ParsedStatement parsed = parse_statement(
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10), price DECIMAL(5,2), n INT)");
    ASSERT_TRUE(parsed.ok());
    table_ = catalog::table_from_create(parsed.statement->as<CreateTableStatement>(), "db");
    ParsedStatement two = parse_statement("CREATE TABLE u (a INT, b CHAR(2), PRIMARY KEY (a, b))");
    ASSERT_TRUE(two.ok());
    composite_ = catalog::table_from_create(two.statement->as<CreateTableStatement>(), "db");
  }

  AccessPlan plan(const std::string& where, const catalog::SqlTable* table = nullptr,
                  std::vector<SqlValue> params = {}) {
    parsed_ = parse_statement("SELECT * FROM t WHERE " + where);
    EXPECT_TRUE(parsed_.ok()) << where;
    params_ = std::move(params);
    EvalContext context;
    context.params = &params_;
    return plan_access(table ? *table : table_,
                       parsed_.statement->as<SelectStatement>().query->select->where.get(),
                       context);
  }

  catalog::SqlTable table_;
  catalog::SqlTable composite_;
  ParsedStatement parsed_;
  std::vector<SqlValue> params_;
};

TEST_F(AccessPlanTest, PrimaryKeyEqualityAndInBecomeKeyLookups) {
  AccessPlan p = plan("id = 5");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kKeyLookup);
  ASSERT_EQ(p.keys.size(), 1u);
  EXPECT_TRUE(p.residual.empty());

  p = plan("id IN (1, 2, 2, 3) AND n > 4");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kKeyLookup);
  EXPECT_EQ(p.keys.size(), 3u);  // duplicates read once
  EXPECT_EQ(p.residual.size(), 1u);

  p = plan("? = id", nullptr, {SqlValue::of_int(9)});
  EXPECT_EQ(p.kind, AccessPlan::Kind::kKeyLookup);
  EXPECT_EQ(p.keys.size(), 1u);

  p = plan("id = NULL");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kKeyLookup);
  EXPECT_TRUE(p.keys.empty());

  p = plan("a IN (1, 2) AND b = 'x'", &composite_);
  EXPECT_EQ(p.kind, AccessPlan::Kind::kKeyLookup);
  EXPECT_EQ(p.keys.size(), 2u);
  p = plan("a = 1", &composite_);
  EXPECT_EQ(p.kind, AccessPlan::Kind::kScan);
}

TEST_F(AccessPlanTest, SimpleConjunctsArePushedTheRestStaysInSqld) {
  AccessPlan p = plan("n > 3 AND name = 'bob' AND name IS NOT NULL AND name LIKE 'b%'");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kScan);
  EXPECT_EQ(p.pushed_conjuncts, 4u);
  EXPECT_TRUE(p.residual.empty());
  Result<storage::FilterProgram> program = storage::FilterProgram::decode(p.filter);
  ASSERT_TRUE(program.ok());
  EXPECT_TRUE(program->validate(catalog::to_table_def(table_).schema).ok());

  // DECIMAL columns, OR, arithmetic on columns and out-of-range constants stay here.
  p = plan("price > 1 AND (n = 1 OR n = 2) AND n + 1 = 3 AND n < 99999999999");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kScan);
  EXPECT_EQ(p.pushed_conjuncts, 0u);
  EXPECT_TRUE(p.filter.empty());
  EXPECT_EQ(p.residual.size(), 4u);

  // A string constant against an integer column is compared numerically by sqld.
  p = plan("n = '3'");
  EXPECT_EQ(p.pushed_conjuncts, 0u);
  // The key compared with a non-integer value: a scan, evaluated here.
  p = plan("id = 1.5");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kScan);
  EXPECT_EQ(p.residual.size(), 1u);
}

TEST_F(AccessPlanTest, NoWhereIsAFullScan) {
  EvalContext context;
  AccessPlan p = plan_access(table_, nullptr, context);
  EXPECT_EQ(p.kind, AccessPlan::Kind::kScan);
  EXPECT_TRUE(p.filter.empty());
  EXPECT_TRUE(p.residual.empty());
}

// A table with ordered indexes: a UNIQUE one, a two-column one and a one-column one.
class IndexPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ParsedStatement parsed = parse_statement(
        "CREATE TABLE r (id INT PRIMARY KEY, a INT, b INT, c VARCHAR(10), d DECIMAL(5,2), "
        "UNIQUE KEY uc (c), KEY kab (a, b), KEY kb (b))");
    ASSERT_TRUE(parsed.ok());
    table_ = catalog::table_from_create(parsed.statement->as<CreateTableStatement>(), "db");
    indexes_ = catalog::to_table_def(table_).schema.ordered_indexes;
    // The hidden ordered index over the primary key, as new tables have it.
    bool has_key_index = false;
    for (const storage::IndexDef& def : indexes_)
      has_key_index |= def.columns == std::vector<uint16_t>{0};
    if (!has_key_index) indexes_.push_back(storage::IndexDef{"PRIMARY", {0}, false});
    without_unique_ = indexes_;
    for (storage::IndexDef& def : without_unique_) def.unique = false;
  }

  int index_named(const std::string& name) const {
    for (size_t i = 0; i < indexes_.size(); ++i) {
      if (indexes_[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }

  AccessPlan plan(const std::string& where, const FixedColumns& fixed = {},
                  const std::vector<storage::IndexDef>* indexes = nullptr) {
    parsed_ = parse_statement("SELECT * FROM r WHERE " + where);
    EXPECT_TRUE(parsed_.ok()) << where;
    EvalContext context;
    context.params = &params_;
    return plan_access(table_, parsed_.statement->as<SelectStatement>().query->select->where.get(),
                       context, indexes ? *indexes : indexes_, fixed);
  }

  // "1,5" for a bound holding the values 1 and 5.
  std::string text(const storage::AttrValues& bound) const {
    std::string out;
    for (size_t i = 0; i < bound.size(); ++i) {
      if (i > 0) out += ",";
      out += bound.entry(i).is_null
                 ? "NULL"
                 : from_storage(table_.columns[bound.entry(i).column], bound.value(i)).to_text();
    }
    return out;
  }

  catalog::SqlTable table_;
  std::vector<storage::IndexDef> indexes_;
  std::vector<storage::IndexDef> without_unique_;  // the same, none UNIQUE: scans only
  ParsedStatement parsed_;
  std::vector<SqlValue> params_;
};

TEST_F(IndexPlanTest, EveryColumnOfAUniqueIndexFixedIsAUniqueLookup) {
  AccessPlan p = plan("c = 'x' AND a > 1");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  EXPECT_EQ(p.index, index_named("uc"));
  // The key of the hidden table: its column 0 is the index's column 0 (c).
  ASSERT_EQ(p.keys.size(), 1u);
  ASSERT_EQ(p.keys[0].size(), 1u);
  EXPECT_EQ(p.keys[0].entry(0).column, 0u);
  EXPECT_EQ(p.keys[0].value(0), "x");
  // Nothing is pushed; what the key did not use is evaluated in sqld.
  EXPECT_TRUE(p.filter.empty());
  EXPECT_TRUE(p.ranges.empty());
  ASSERT_EQ(p.residual.size(), 1u);
  EXPECT_EQ(p.pushed_conjuncts, 0u);

  // A unique lookup beats a longer equality prefix; the primary key beats both.
  p = plan("a = 1 AND b = 2 AND c = 'x'");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  EXPECT_EQ(p.index, index_named("uc"));
  EXPECT_EQ(p.residual.size(), 2u);
  p = plan("id = 3 AND c = 'x'");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kKeyLookup);
  ASSERT_EQ(p.keys.size(), 1u);
  EXPECT_EQ(p.residual.size(), 1u);

  // Only some other column fixed, or a range on the unique column: no unique lookup.
  EXPECT_EQ(plan("c > 'x'").kind, AccessPlan::Kind::kIndexScan);
  EXPECT_EQ(plan("c LIKE 'x'").kind, AccessPlan::Kind::kScan);
}

TEST_F(IndexPlanTest, UniqueLookupsTakeInListsAndNulls) {
  // Values the collation finds equal are one key.
  AccessPlan p = plan("c IN ('x', 'X', 'y')");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  ASSERT_EQ(p.keys.size(), 2u);
  EXPECT_EQ(p.keys[0].value(0), "x");
  EXPECT_EQ(p.keys[1].value(0), "y");
  EXPECT_TRUE(p.residual.empty());

  // A NULL matches nothing: dropped from an IN list, no key at all for `= NULL`.
  p = plan("c IN ('x', NULL)");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  EXPECT_EQ(p.keys.size(), 1u);
  p = plan("c = NULL");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  EXPECT_TRUE(p.keys.empty());
  // IS NULL is not an equality: several rows may hold NULL.
  EXPECT_NE(plan("c IS NULL").kind, AccessPlan::Kind::kUniqueLookup);

  // A value that does not convert exactly is no key (the scan path compares it).
  EXPECT_NE(plan("c = 'abcdefghijklmnop'").kind, AccessPlan::Kind::kUniqueLookup);

  // More values than kKeyLookupsMax: a scan instead.
  std::string many = "c IN (";
  for (size_t i = 0; i <= kKeyLookupsMax; ++i) many += (i ? ",'v" : "'v") + std::to_string(i) + "'";
  many += ")";
  EXPECT_NE(plan(many).kind, AccessPlan::Kind::kUniqueLookup);
}

// A table with a composite UNIQUE index and a single-column one.
class CompositeUniquePlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ParsedStatement parsed = parse_statement(
        "CREATE TABLE u (id INT PRIMARY KEY, a INT, b INT, c INT, "
        "UNIQUE KEY uab (a, b), UNIQUE KEY uc (c))");
    ASSERT_TRUE(parsed.ok());
    table_ = catalog::table_from_create(parsed.statement->as<CreateTableStatement>(), "db");
    indexes_ = catalog::to_table_def(table_).schema.ordered_indexes;
  }

  AccessPlan plan(const std::string& where, const FixedColumns& fixed = {}) {
    parsed_ = parse_statement("SELECT * FROM u WHERE " + where);
    EXPECT_TRUE(parsed_.ok()) << where;
    EvalContext context;
    context.params = &params_;
    return plan_access(table_, parsed_.statement->as<SelectStatement>().query->select->where.get(),
                       context, indexes_, fixed);
  }

  // "1:2|3:4" for keys (1,2) and (3,4) of the hidden table.
  static std::string keys(const AccessPlan& p) {
    std::string out;
    for (const storage::AttrValues& key : p.keys) {
      if (!out.empty()) out += "|";
      for (size_t i = 0; i < key.size(); ++i) {
        if (i > 0) out += ":";
        EXPECT_EQ(key.entry(i).column, i);  // hidden column i = index column i
        int32_t v = 0;
        std::memcpy(&v, key.value(i).data(), sizeof v);
        out += std::to_string(v);
      }
    }
    return out;
  }

  catalog::SqlTable table_;
  std::vector<storage::IndexDef> indexes_;
  ParsedStatement parsed_;
  std::vector<SqlValue> params_;
};

TEST_F(CompositeUniquePlanTest, EveryColumnMustBeFixed) {
  AccessPlan p = plan("b = 2 AND a = 1");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  EXPECT_EQ(keys(p), "1:2");  // index column order, whatever the WHERE's
  EXPECT_TRUE(p.residual.empty());

  // A prefix is a range scan of the ordered index, not a lookup.
  p = plan("a = 1");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kIndexScan);
  EXPECT_EQ(p.equality_columns, 1u);
  EXPECT_EQ(plan("b = 2").kind, AccessPlan::Kind::kScan);
  EXPECT_EQ(plan("a = 1 AND b > 2").kind, AccessPlan::Kind::kIndexScan);

  // IN lists give every combination; a NULL in one column none with it.
  p = plan("a IN (1, 3) AND b IN (2, 4)");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  EXPECT_EQ(keys(p), "1:2|3:2|1:4|3:4");
  p = plan("a IN (1, NULL) AND b = 2");
  EXPECT_EQ(keys(p), "1:2");
  p = plan("a = 1 AND b = NULL");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  EXPECT_TRUE(p.keys.empty());
}

TEST_F(CompositeUniquePlanTest, FewestValuesWinsAndFixedColumnsCount) {
  // Both indexes fixed: the one with fewer values.
  AccessPlan p = plan("a IN (1, 3) AND b = 2 AND c = 9");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  EXPECT_EQ(keys(p), "9");
  EXPECT_EQ(p.residual.size(), 2u);
  p = plan("a = 1 AND b = 2 AND c IN (7, 8)");
  EXPECT_EQ(keys(p), "1:2");

  // A join's outer row fixes b: with a = in the WHERE, a unique lookup; the fixed value
  // stays the caller's to check, the WHERE's equality is the key's.
  p = plan("a = 1", {{2, SqlValue::of_int(5)}});
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  EXPECT_EQ(keys(p), "1:5");
  EXPECT_TRUE(p.residual.empty());
  p = plan("id > 0", {{1, SqlValue::of_int(4)}, {2, SqlValue::of_int(6)}});
  EXPECT_EQ(keys(p), "4:6");
  EXPECT_EQ(p.residual.size(), 1u);
  p = plan("id > 0", {{1, SqlValue::of_int(4)}, {2, SqlValue::null()}});
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  EXPECT_TRUE(p.keys.empty());
}

TEST_F(IndexPlanTest, LongestEqualityPrefixWinsThenARange) {
  AccessPlan p = plan("b = 2 AND a = 1");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kIndexScan);
  EXPECT_EQ(p.index, index_named("kab"));
  EXPECT_EQ(p.equality_columns, 2u);
  ASSERT_EQ(p.ranges.size(), 1u);
  EXPECT_EQ(text(p.ranges[0].low), "1,2");

  p = plan("b = 2");
  EXPECT_EQ(p.index, index_named("kb"));
  EXPECT_EQ(p.equality_columns, 1u);

  // Equality on a, then a range on b.
  p = plan("a = 1 AND b > 5");
  EXPECT_EQ(p.index, index_named("kab"));
  EXPECT_EQ(p.equality_columns, 1u);
  EXPECT_TRUE(p.has_range);
  ASSERT_EQ(p.ranges.size(), 1u);
  EXPECT_EQ(text(p.ranges[0].low), "1,5");
  EXPECT_FALSE(p.ranges[0].low_inclusive);
  EXPECT_EQ(text(p.ranges[0].high), "1");
  EXPECT_TRUE(p.ranges[0].high_inclusive);

  // An equality prefix of one on kab beats a bare range on kb.
  p = plan("b < 3 AND a = 7");
  EXPECT_EQ(p.index, index_named("kab"));
  EXPECT_EQ(text(p.ranges[0].high), "7,3");
  EXPECT_FALSE(p.ranges[0].high_inclusive);
}

TEST_F(IndexPlanTest, RangesTakeTheTightestExactBounds) {
  AccessPlan p = plan("b > 3 AND b <= 10");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kIndexScan);
  EXPECT_EQ(p.index, index_named("kb"));
  ASSERT_EQ(p.ranges.size(), 1u);
  EXPECT_EQ(text(p.ranges[0].low), "3");
  EXPECT_FALSE(p.ranges[0].low_inclusive);
  EXPECT_EQ(text(p.ranges[0].high), "10");
  EXPECT_TRUE(p.ranges[0].high_inclusive);

  p = plan("b BETWEEN 2 AND 4");
  EXPECT_EQ(text(p.ranges[0].low), "2");
  EXPECT_EQ(text(p.ranges[0].high), "4");
  EXPECT_TRUE(p.ranges[0].low_inclusive && p.ranges[0].high_inclusive);

  p = plan("b > 3 AND b >= 5 AND 9 > b AND b < 20");
  EXPECT_EQ(text(p.ranges[0].low), "5");
  EXPECT_TRUE(p.ranges[0].low_inclusive);
  EXPECT_EQ(text(p.ranges[0].high), "9");  // `9 > b` is `b < 9`
  EXPECT_FALSE(p.ranges[0].high_inclusive);

  // On a tie the exclusive bound is the tighter one.
  p = plan("b >= 5 AND b > 5");
  EXPECT_EQ(text(p.ranges[0].low), "5");
  EXPECT_FALSE(p.ranges[0].low_inclusive);

  // Only one side bounded: the other is open.
  p = plan("b < 8");
  EXPECT_TRUE(p.ranges[0].low.empty());
  EXPECT_EQ(text(p.ranges[0].high), "8");

  // The primary key's hidden ordered index serves ranges on the key.
  p = plan("id >= 100");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kIndexScan);
  ASSERT_GE(p.index, 0);
  EXPECT_EQ(indexes_[p.index].columns, std::vector<uint16_t>{0});
}

TEST_F(IndexPlanTest, InexactConstantsNeverNarrowAScan) {
  // 1.5 is no INT: the bound is dropped (wider), the condition stays for sqld.
  AccessPlan p = plan("b > 1.5");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kScan);
  EXPECT_EQ(p.residual.size(), 1u);
  p = plan("b > 1.5 AND b < 10");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kIndexScan);
  EXPECT_TRUE(p.ranges[0].low.empty());
  EXPECT_EQ(text(p.ranges[0].high), "10");
  EXPECT_EQ(p.residual.size(), 1u);
  // Out of the column's range, or a string against an integer: no bound at all.
  EXPECT_EQ(plan("b < 99999999999").kind, AccessPlan::Kind::kScan);
  EXPECT_EQ(plan("b = '3'").kind, AccessPlan::Kind::kScan);
  EXPECT_EQ(plan("a = 1.5").kind, AccessPlan::Kind::kScan);
  // Longer than the column: not a bound.
  EXPECT_EQ(plan("c = 'abcdefghijklmnop'").kind, AccessPlan::Kind::kScan);
  // DECIMAL columns are never bounds; NOT BETWEEN and OR are not ranges.
  EXPECT_EQ(plan("d > 1").kind, AccessPlan::Kind::kScan);
  EXPECT_EQ(plan("b NOT BETWEEN 1 AND 3").kind, AccessPlan::Kind::kScan);
  EXPECT_EQ(plan("b = 1 OR b = 2").kind, AccessPlan::Kind::kScan);
  // A non-constant bound.
  EXPECT_EQ(plan("b > a").kind, AccessPlan::Kind::kScan);
}

TEST_F(IndexPlanTest, InListsGiveOneRangePerDistinctValue) {
  AccessPlan p = plan("a IN (1, 2, 2) AND b = 3");
  EXPECT_EQ(p.index, index_named("kab"));
  ASSERT_EQ(p.ranges.size(), 2u);
  EXPECT_EQ(text(p.ranges[0].low), "1,3");
  EXPECT_EQ(text(p.ranges[1].low), "2,3");

  // Values the collation finds equal are one range: the ranges never overlap.
  p = plan("c > 'a' AND c IN ('x', 'X', 'y')", {}, &without_unique_);
  EXPECT_EQ(p.kind, AccessPlan::Kind::kIndexScan);
  EXPECT_EQ(p.ranges.size(), 2u);

  // Too many combinations: the equality prefix is shortened until they fit.
  p = plan("a IN (1,2,3,4,5,6,7,8,9,10) AND b IN (1,2,3,4,5,6,7,8,9,10)");
  EXPECT_EQ(p.index, index_named("kab"));
  EXPECT_EQ(p.equality_columns, 1u);
  EXPECT_EQ(p.ranges.size(), 10u);
  EXPECT_LE(p.ranges.size(), kIndexRangesMax);

  // Only NULL: no range, no row.
  p = plan("a = NULL");
  EXPECT_EQ(p.kind, AccessPlan::Kind::kIndexScan);
  EXPECT_TRUE(p.ranges.empty());
  p = plan("a IN (NULL, 4)");
  EXPECT_EQ(p.ranges.size(), 1u);
}

TEST_F(IndexPlanTest, FixedColumnsChooseKeysAndIndexes) {
  AccessPlan p = plan("a > 0", {{0, SqlValue::of_int(3)}});
  EXPECT_EQ(p.kind, AccessPlan::Kind::kKeyLookup);
  ASSERT_EQ(p.keys.size(), 1u);
  EXPECT_EQ(p.residual.size(), 1u);  // the WHERE is still checked

  p = plan("d > 0", {{1, SqlValue::of_int(7)}});
  EXPECT_EQ(p.kind, AccessPlan::Kind::kIndexScan);
  EXPECT_EQ(p.index, index_named("kab"));
  EXPECT_EQ(text(p.ranges[0].low), "7");
  EXPECT_FALSE(p.filter.empty());  // a = 7 is pushed too

  p = plan("b = 1", {{3, SqlValue::of_string("q")}});
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  EXPECT_EQ(p.keys.size(), 1u);
  EXPECT_EQ(p.residual.size(), 1u);
  p = plan("b = 1", {{3, SqlValue::null()}});
  EXPECT_EQ(p.kind, AccessPlan::Kind::kUniqueLookup);
  EXPECT_TRUE(p.keys.empty());

  // A fixed value that does not convert exactly is left to the caller's check.
  p = plan("d > 0", {{2, SqlValue::of_string("x")}});
  EXPECT_EQ(p.kind, AccessPlan::Kind::kScan);
}

TEST_F(IndexPlanTest, OtherTablesColumnsAreNotPlannedUnknownOnesThrow) {
  // `x.b` is an outer query's column: evaluated in sqld, never a bound or a filter.
  AccessPlan p = plan("x.b = 1 AND r.a = 2 AND x.b BETWEEN 1 AND 2");
  EXPECT_EQ(p.index, index_named("kab"));
  EXPECT_EQ(p.equality_columns, 1u);
  EXPECT_EQ(p.residual.size(), 2u);
  EXPECT_THROW(plan("nosuch = 1"), SqlException);
  EXPECT_THROW(plan("r.nosuch BETWEEN 1 AND 2"), SqlException);
}

TEST_F(IndexPlanTest, WithoutIndexesOnlyKeysAndScans) {
  const std::vector<storage::IndexDef> none;
  EXPECT_EQ(plan("a = 1 AND b = 2", {}, &none).kind, AccessPlan::Kind::kScan);
  EXPECT_EQ(plan("id = 1", {}, &none).kind, AccessPlan::Kind::kKeyLookup);
}

// Reference check: for random rows and random conjunctions planned as unique lookups,
// the rows whose index value is one of the plan's keys and that pass its residual are
// exactly the rows that pass the WHERE — no row lost, no row wrongly returned.
TEST_F(CompositeUniquePlanTest, LookupsFindExactlyTheMatchingRowsAgainstAReference) {
  uint64_t seed = 7;
  auto next = [&seed](uint64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % n;
  };
  auto value = [&]() { return next(8) == 0 ? std::string("NULL") : std::to_string(next(5)); };
  const char* columns[] = {"a", "b", "c", "id"};
  size_t lookups = 0;
  for (int round = 0; round < 400; ++round) {
    std::string where;
    const int terms = 1 + static_cast<int>(next(4));
    for (int t = 0; t < terms; ++t) {
      if (t > 0) where += " AND ";
      const std::string column = columns[next(4)];
      switch (next(4)) {
        case 0:
          where += column + " IN (" + value() + ", " + value() + ")";
          break;
        case 1:
          where += column + " > " + value();
          break;
        default:
          where += column + " = " + value();
          break;
      }
    }
    const AccessPlan p = plan(where);
    if (p.kind != AccessPlan::Kind::kUniqueLookup) continue;
    ++lookups;
    const storage::IndexDef& def = indexes_[p.index];
    for (int a = -1; a < 5; ++a) {
      for (int b = -1; b < 5; ++b) {
        for (int c = -1; c < 5; ++c) {
          std::vector<SqlValue> row(table_.columns.size());
          row[0] = SqlValue::of_int(2);
          if (a >= 0) row[1] = SqlValue::of_int(a);
          if (b >= 0) row[2] = SqlValue::of_int(b);
          if (c >= 0) row[3] = SqlValue::of_int(c);
          EvalContext context;
          context.table = &table_;
          context.row = &row;
          const bool matches =
              passes(parsed_.statement->as<SelectStatement>().query->select->where.get(), context);
          // What the hidden table would give: the row when its value is a key (no entry
          // for a NULL), then the residual.
          bool found = true;
          storage::AttrValues entry;
          for (size_t k = 0; k < def.columns.size() && found; ++k) {
            const SqlValue& v = row[def.columns[k]];
            found = !v.is_null();
            if (found) {
              entry.add(static_cast<uint16_t>(k), to_storage(table_.columns[def.columns[k]], v, 1));
            }
          }
          found = found && std::any_of(p.keys.begin(), p.keys.end(),
                                       [&](const auto& key) { return key.data() == entry.data(); });
          for (const Expr* conjunct : p.residual) found = found && passes(conjunct, context);
          EXPECT_EQ(found, matches) << where << " a=" << a << " b=" << b << " c=" << c;
        }
      }
    }
  }
  EXPECT_GT(lookups, 50u);  // the reference saw enough lookups to mean something
}

// Reference check: for random rows and random conjunctions, the rows inside the plan's
// ranges (compared the way the data node compares index prefixes) that pass the WHERE
// are exactly the rows that pass the WHERE — a bound never loses a row.
TEST_F(IndexPlanTest, RangesNeverLoseRowsAgainstAReference) {
  uint64_t seed = 42;
  auto next = [&seed](uint64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % n;
  };
  const char* ops[] = {"=", "<", "<=", ">", ">="};
  auto in_range = [&](const IndexRange& range, const storage::IndexDef& def,
                      const std::vector<SqlValue>& row) {
    auto cmp = [&](const storage::AttrValues& bound) {  // bound vs row, on the prefix
      for (size_t i = 0; i < bound.size(); ++i) {
        const SqlValue& v = row[def.columns[i]];
        if (v.is_null()) return 1;  // NULL sorts first: the bound is greater
        const int c = compare(from_storage(table_.columns[def.columns[i]], bound.value(i)), v);
        if (c != 0) return c;
      }
      return 0;
    };
    if (!range.low.empty()) {
      const int c = cmp(range.low);
      if (c > 0 || (c == 0 && !range.low_inclusive)) return false;
    }
    if (!range.high.empty()) {
      const int c = cmp(range.high);
      if (c < 0 || (c == 0 && !range.high_inclusive)) return false;
    }
    return true;
  };
  for (int round = 0; round < 300; ++round) {
    std::string where;
    const int terms = 1 + static_cast<int>(next(3));
    for (int t = 0; t < terms; ++t) {
      if (t > 0) where += " AND ";
      const char* column = next(2) ? "a" : "b";
      if (next(5) == 0) {
        where += std::string(column) + " BETWEEN " + std::to_string(next(6)) + " AND " +
                 std::to_string(next(6));
      } else if (next(5) == 0) {
        where += std::string(column) + " IN (" + std::to_string(next(6)) + ", " +
                 std::to_string(next(6)) + ")";
      } else {
        where += std::string(column) + " " + ops[next(5)] + " " + std::to_string(next(6));
      }
    }
    const AccessPlan p = plan(where);
    if (p.kind != AccessPlan::Kind::kIndexScan) continue;
    const storage::IndexDef& def = indexes_[p.index];
    EvalContext context;
    for (int a = -1; a < 6; ++a) {
      for (int b = -1; b < 6; ++b) {
        std::vector<SqlValue> row(table_.columns.size());
        row[0] = SqlValue::of_int(1);
        if (a >= 0) row[1] = SqlValue::of_int(a);
        if (b >= 0) row[2] = SqlValue::of_int(b);
        context.table = &table_;
        context.row = &row;
        const bool matches =
            passes(parsed_.statement->as<SelectStatement>().query->select->where.get(), context);
        bool found = false;
        for (const IndexRange& range : p.ranges) found |= in_range(range, def, row);
        if (matches) {
          EXPECT_TRUE(found) << where << " a=" << a << " b=" << b;
        }
      }
    }
  }
}

}  // namespace
}  // namespace duo::sql::executor
