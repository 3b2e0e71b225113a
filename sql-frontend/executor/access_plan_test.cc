// Tests of the access planner: which WHERE clauses become key lookups, which are pushed
// to the data nodes as a filter, and what stays in sqld.
#include "sql-frontend/executor/access_plan.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace duo::sql::executor
