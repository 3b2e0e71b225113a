// Tests of MySQL's canonical view text (view_text.h): qualified, backquoted columns with
// AS names, parenthesised operations, string introducers, count(0), joins, and the
// fallback for what it does not cover; and EXPLAIN's condition form.
#include "sql-frontend/executor/view_text.h"

#include <gtest/gtest.h>

#include "sql-frontend/parser/parser.h"

namespace duo::sql::executor {
namespace {

protocol::ColumnDefinition41 column(const std::string& table, const std::string& name) {
  protocol::ColumnDefinition41 c;
  c.table = table;
  c.org_name = name;
  c.name = name;
  return c;
}

std::optional<std::string> canonical(const std::string& query,
                                     std::vector<std::string> names,
                                     std::vector<std::pair<std::string, std::vector<std::string>>> tables) {
  ParsedStatement parsed = parse_statement(query);
  EXPECT_TRUE(parsed.ok());
  ViewTextInput input;
  input.query = parsed.statement->as<SelectStatement>().query.get();
  input.written = query;
  for (const std::string& n : names) input.columns.push_back(column(tables.front().first, n));
  input.names = std::move(names);
  input.view_db = "test";
  input.tables = std::move(tables);
  input.character_set_client = "latin1";
  return canonical_view_text(input);
}

TEST(ViewTextTest, SingleTableWithCondition) {
  EXPECT_EQ(canonical("SELECT a, b FROM t1 WHERE c > 15 AND b LIKE 'x%'", {"a", "b"},
                      {{"t1", {"a", "b", "c"}}}),
            "select `t1`.`a` AS `a`,`t1`.`b` AS `b` from `t1` where ((`t1`.`c` > 15) and "
            "(`t1`.`b` like _latin1'x%'))");
}

TEST(ViewTextTest, StarAggregatesAndGrouping) {
  EXPECT_EQ(canonical("SELECT * FROM t1", {"a", "b"}, {{"t1", {"a", "b"}}}),
            "select `t1`.`a` AS `a`,`t1`.`b` AS `b` from `t1`");
  EXPECT_EQ(canonical("SELECT b, COUNT(*) FROM t1 GROUP BY b HAVING COUNT(*) > 1", {"b", "n"},
                      {{"t1", {"a", "b"}}}),
            "select `t1`.`b` AS `b`,count(0) AS `n` from `t1` group by `t1`.`b` having "
            "(count(0) > 1)");
}

TEST(ViewTextTest, JoinsQualifyByTheTableThatHasTheColumn) {
  EXPECT_EQ(canonical("SELECT d, b FROM t1 JOIN t2 ON t1.a = t2.a", {"d", "b"},
                      {{"t1", {"a", "b"}}, {"t2", {"a", "d"}}}),
            "select `t2`.`d` AS `d`,`t1`.`b` AS `b` from (`t1` join `t2` on((`t1`.`a` = "
            "`t2`.`a`)))");
}

TEST(ViewTextTest, UncoveredQueriesAreLeftAsWritten) {
  EXPECT_EQ(canonical("SELECT a FROM t1 UNION SELECT a FROM t2", {"a"}, {{"t1", {"a"}}}),
            std::nullopt);
  EXPECT_EQ(canonical("SELECT CASE WHEN a > 1 THEN 1 END FROM t1", {"x"}, {{"t1", {"a"}}}),
            std::nullopt);
  // Unqualified and in neither table: cannot say which.
  EXPECT_EQ(canonical("SELECT z FROM t1, t2", {"z"}, {{"t1", {"a"}}, {"t2", {"b"}}}),
            std::nullopt);
}

TEST(ViewTextTest, ConditionAsNdbPrintsPushedConditions) {
  ParsedStatement parsed = parse_statement("SELECT 1 FROM t WHERE b = 'x' OR c IS NULL");
  ASSERT_TRUE(parsed.ok());
  ViewTextInput input;
  input.tables = {{"t", {}}};
  input.column_db = "test";
  EXPECT_EQ(canonical_condition(*parsed.statement->as<SelectStatement>().query->select->where, input),
            "((`test`.`t`.`b` = 'x') or (`test`.`t`.`c` is null))");
}

}  // namespace
}  // namespace duo::sql::executor
