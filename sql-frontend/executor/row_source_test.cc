// Tests of the re-check a unique-index lookup makes on the base rows it read
// (holds_unique_value): the keys come from the planner, the hidden tables from the
// table's definition, as row_source.cc takes them. (The reads themselves run against a
// cluster: mtr-tests dml/unique_lookups and joins/unique_key_joins.)
#include "sql-frontend/executor/row_source.h"

#include <gtest/gtest.h>

#include "sql-frontend/parser/parser.h"

namespace duo::sql::executor {
namespace {

class UniqueRecheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ParsedStatement parsed = parse_statement(
        "CREATE TABLE u (id INT PRIMARY KEY, email VARCHAR(20), a INT, b INT, "
        "UNIQUE KEY email_uk (email), UNIQUE KEY ab_uk (a, b))");
    ASSERT_TRUE(parsed.ok());
    table_ = catalog::table_from_create(parsed.statement->as<CreateTableStatement>(), "db");
    def_ = catalog::to_table_def(table_);
    def_.schema.table_id = 7;
    Result<std::vector<::duo::protocol::UniqueIndexTable>> hidden =
        ::duo::protocol::unique_index_tables(def_);
    ASSERT_TRUE(hidden.ok());
    hidden_ = std::move(hidden).value();
    ASSERT_EQ(hidden_.size(), 2u);
  }

  // The plan's one key for `where` and the hidden table it is a key of.
  std::pair<const ::duo::protocol::UniqueIndexTable*, storage::AttrValues> key_of_lookup(
      const std::string& where) {
    parsed_ = parse_statement("SELECT * FROM u WHERE " + where);
    EXPECT_TRUE(parsed_.ok()) << where;
    EvalContext context;
    context.params = &params_;
    AccessPlan plan =
        plan_access(table_, parsed_.statement->as<SelectStatement>().query->select->where.get(),
                    context, def_.schema.ordered_indexes);
    EXPECT_EQ(plan.kind, AccessPlan::Kind::kUniqueLookup) << where;
    EXPECT_EQ(plan.keys.size(), 1u) << where;
    const ::duo::protocol::UniqueIndexTable* index = nullptr;
    for (const ::duo::protocol::UniqueIndexTable& hidden : hidden_) {
      if (static_cast<int32_t>(hidden.ordinal) == plan.index) index = &hidden;
    }
    EXPECT_NE(index, nullptr);
    return {index, plan.keys.empty() ? storage::AttrValues() : plan.keys[0]};
  }

  // A row of u; nullopt is NULL.
  static Row row(int id, std::optional<std::string> email, std::optional<int> a,
                 std::optional<int> b) {
    Row out(4);
    out[0] = SqlValue::of_int(id);
    if (email) out[1] = SqlValue::of_string(*email);
    if (a) out[2] = SqlValue::of_int(*a);
    if (b) out[3] = SqlValue::of_int(*b);
    return out;
  }

  bool holds(const std::string& where, const Row& r) {
    auto [index, key] = key_of_lookup(where);
    return index != nullptr && holds_unique_value(table_, *index, r, key);
  }

  catalog::SqlTable table_;
  ::duo::protocol::TableDef def_;
  std::vector<::duo::protocol::UniqueIndexTable> hidden_;
  ParsedStatement parsed_;
  std::vector<SqlValue> params_;
};

TEST_F(UniqueRecheckTest, TheRowMustStillHoldTheValue) {
  EXPECT_TRUE(holds("email = 'a@x'", row(1, "a@x", 1, 1)));
  // The column's collation decides, as the index does.
  EXPECT_TRUE(holds("email = 'A@X'", row(1, "a@x", 1, 1)));
  // The row changed its value, or lost it, after the entry was read: not returned.
  EXPECT_FALSE(holds("email = 'a@x'", row(1, "b@x", 1, 1)));
  EXPECT_FALSE(holds("email = 'a@x'", row(1, std::nullopt, 1, 1)));
}

TEST_F(UniqueRecheckTest, EveryColumnOfACompositeKeyIsChecked) {
  EXPECT_TRUE(holds("b = 2 AND a = 1", row(1, "x", 1, 2)));
  EXPECT_FALSE(holds("a = 1 AND b = 2", row(1, "x", 1, 3)));
  EXPECT_FALSE(holds("a = 1 AND b = 2", row(1, "x", 2, 2)));
  EXPECT_FALSE(holds("a = 1 AND b = 2", row(1, "x", 1, std::nullopt)));
  // Other columns do not matter.
  EXPECT_TRUE(holds("a = 1 AND b = 2", row(9, std::nullopt, 1, 2)));
}

}  // namespace
}  // namespace duo::sql::executor
