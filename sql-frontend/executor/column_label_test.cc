// Tests of result column names taken from the query text.
#include "sql-frontend/executor/column_label.h"

#include <gtest/gtest.h>

namespace duo::sql::executor {
namespace {

std::string label(std::string_view text, std::string_view item) {
  return select_item_label(text, static_cast<uint32_t>(text.find(item)));
}

TEST(ColumnLabelTest, NamesAreTheItemsAsWritten) {
  EXPECT_EQ(label("SELECT 1+1", "1+1"), "1+1");
  EXPECT_EQ(label("select @@version_comment limit 1", "@@"), "@@version_comment");
  EXPECT_EQ(label("SELECT a, COUNT( * ), b FROM t", "COUNT"), "COUNT( * )");
  EXPECT_EQ(label("SELECT f(x, y) AS z FROM t", "f("), "f(x, y)");
  EXPECT_EQ(label("SELECT 1.0/3;SELECT 2", "1.0"), "1.0/3");
  EXPECT_EQ(label("SELECT x IN (SELECT 1 FROM t) FROM u", "x IN"), "x IN (SELECT 1 FROM t)");
  EXPECT_EQ(label("SELECT (SELECT a FROM t), 2", "a FROM"), "a");
  EXPECT_EQ(label("SELECT  DATABASE()\n WHERE 1", "DATABASE"), "DATABASE()");
  EXPECT_EQ(select_item_label("SELECT 1", 99), "");
}

}  // namespace
}  // namespace duo::sql::executor
