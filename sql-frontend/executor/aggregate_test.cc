// Tests of aggregate accumulation: MySQL's result types and NULL handling.
#include "sql-frontend/executor/aggregate.h"

#include <gtest/gtest.h>

#include "sql-frontend/parser/parser.h"

namespace duo::sql::executor {
namespace {

// The aggregate of "SELECT <call>" over `values` (one argument per row).
SqlValue aggregate(const std::string& call, const std::vector<SqlValue>& values) {
  static std::vector<ParsedStatement> keep;  // the call outlives this function's parse
  keep.push_back(parse_statement("SELECT " + call));
  EXPECT_TRUE(keep.back().ok()) << call;
  const Expr& expr = *keep.back().statement->as<SelectStatement>().query->select->items[0].expr;
  Aggregator aggregator(expr.as<FunctionExpr>());
  for (const SqlValue& v : values) {
    aggregator.add(expr.as<FunctionExpr>().star ? std::vector<SqlValue>{}
                                                : std::vector<SqlValue>{v});
  }
  return aggregator.result();
}

const SqlValue kNull = SqlValue::null();
SqlValue i(int64_t v) {
  return SqlValue::of_int(v);
}
SqlValue d(const std::string& v) {
  return SqlValue::of_decimal(v);
}
SqlValue s(const std::string& v) {
  return SqlValue::of_string(v);
}

TEST(AggregateTest, CountSkipsNullsButCountStarDoesNot) {
  EXPECT_EQ(aggregate("COUNT(*)", {i(1), kNull, i(3)}).to_text(), "3");
  EXPECT_EQ(aggregate("COUNT(a)", {i(1), kNull, i(3)}).to_text(), "2");
  EXPECT_EQ(aggregate("COUNT(DISTINCT a)", {i(1), i(1), kNull, i(3)}).to_text(), "2");
  EXPECT_EQ(aggregate("COUNT(DISTINCT a)", {s("x"), s("X"), s("x ")}).to_text(), "1");
  EXPECT_EQ(aggregate("COUNT(a)", {}).kind, SqlValue::Kind::kInt);
}

TEST(AggregateTest, SumAndAvgOfExactValuesAreDecimal) {
  const SqlValue sum = aggregate("SUM(a)", {i(1), i(2), kNull, i(4)});
  EXPECT_EQ(sum.kind, SqlValue::Kind::kDecimal);
  EXPECT_EQ(sum.to_text(), "7");
  EXPECT_EQ(aggregate("AVG(a)", {i(1), i(2)}).to_text(), "1.5000");
  EXPECT_EQ(aggregate("AVG(a)", {i(1), i(1), i(2)}).to_text(), "1.3333");
  EXPECT_EQ(aggregate("AVG(a)", {i(2), i(2), i(1)}).to_text(), "1.6667");
  EXPECT_EQ(aggregate("AVG(a)", {i(-2), i(-2), i(-1)}).to_text(), "-1.6667");
  EXPECT_EQ(aggregate("SUM(a)", {d("1.50"), i(2), d("-0.25")}).to_text(), "3.25");
  EXPECT_EQ(aggregate("AVG(a)", {d("1.25"), d("2.50")}).to_text(), "1.875000");
  EXPECT_EQ(aggregate("SUM(a)", {d("-0.5"), d("0.25")}).to_text(), "-0.25");
  EXPECT_EQ(aggregate("SUM(DISTINCT a)", {i(5), i(5), i(1)}).to_text(), "6");
  EXPECT_EQ(aggregate("AVG(DISTINCT a)", {i(5), i(5), i(1)}).to_text(), "3.0000");
}

TEST(AggregateTest, SumOfDoublesIsDouble) {
  const SqlValue sum = aggregate("SUM(a)", {SqlValue::of_double(0.5), i(1)});
  EXPECT_EQ(sum.kind, SqlValue::Kind::kDouble);
  EXPECT_DOUBLE_EQ(sum.d, 1.5);
}

TEST(AggregateTest, EmptyInputGivesNullExceptCount) {
  EXPECT_TRUE(aggregate("SUM(a)", {kNull}).is_null());
  EXPECT_TRUE(aggregate("AVG(a)", {}).is_null());
  EXPECT_TRUE(aggregate("MIN(a)", {}).is_null());
  EXPECT_TRUE(aggregate("GROUP_CONCAT(a)", {}).is_null());
  EXPECT_EQ(aggregate("COUNT(*)", {}).to_text(), "0");
}

TEST(AggregateTest, MinMaxCompareAsMysql) {
  EXPECT_EQ(aggregate("MIN(a)", {i(3), kNull, i(-1), i(2)}).to_text(), "-1");
  EXPECT_EQ(aggregate("MAX(a)", {s("apple"), s("Banana"), s("cherry")}).to_text(), "cherry");
  EXPECT_EQ(aggregate("MIN(a)", {s("b"), s("A")}).to_text(), "A");  // case-insensitive
}

TEST(AggregateTest, GroupConcatJoinsAndCutsAtTheLimit) {
  EXPECT_EQ(aggregate("GROUP_CONCAT(a)", {s("x"), kNull, i(2)}).to_text(), "x,2");
  std::vector<SqlValue> many(600, s("ab"));
  EXPECT_EQ(aggregate("GROUP_CONCAT(a)", many).to_text().size(), kGroupConcatLengthMax);
}

TEST(AggregateTest, GroupConcatSeparatorIsFoundInTheText) {
  const std::string text = "SELECT GROUP_CONCAT(a separator ';'), GROUP_CONCAT(a, ';')";
  ParsedStatement parsed = parse_statement(text);
  ASSERT_TRUE(parsed.ok());
  const auto& items = parsed.statement->as<SelectStatement>().query->select->items;
  EXPECT_EQ(group_concat_separator(items[0].expr->as<FunctionExpr>(), text), ";");
  EXPECT_FALSE(group_concat_separator(items[1].expr->as<FunctionExpr>(), text));
  Aggregator aggregator(items[0].expr->as<FunctionExpr>(), ";");
  aggregator.add({s("x")});
  aggregator.add({i(1)});
  EXPECT_EQ(aggregator.result().to_text(), "x;1");
}

TEST(AggregateTest, ValuesLessGroupsNullsTogetherAndFirst) {
  ValuesLess less;
  EXPECT_FALSE(less({kNull}, {kNull}));
  EXPECT_TRUE(less({kNull}, {i(0)}));
  EXPECT_FALSE(less({s("a")}, {s("A")}));
  EXPECT_TRUE(less({i(1), i(1)}, {i(1), i(2)}));
  EXPECT_EQ(decimal_text(-5, 3), "-0.005");
  EXPECT_EQ(decimal_text(12345, 2), "123.45");
}

}  // namespace
}  // namespace duo::sql::executor
