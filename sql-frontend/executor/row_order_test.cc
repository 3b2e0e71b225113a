// Tests of ORDER BY keys: ENUM by position, SET by bit set, other values unchanged.
#include "sql-frontend/executor/row_order.h"

#include <gtest/gtest.h>

namespace duo::sql::executor {
namespace {

catalog::SqlColumn enum_column(std::vector<std::string> labels, bool is_set) {
  catalog::SqlColumn column;
  column.name = "e";
  column.enum_values = std::move(labels);
  column.is_set = is_set;
  column.storage.type = storage::ColumnType::kVarchar;  // the labels, as sql_table.cc stores them
  column.storage.length = 64;
  column.storage.collation = storage::Collation::kCaseInsensitive;
  return column;
}

std::string key_text(const catalog::SqlColumn* column, const std::string& label) {
  return enum_order_key(column, SqlValue::of_string(label)).to_text();
}

TEST(RowOrderTest, EnumSortsByDeclaredPosition) {
  const catalog::SqlColumn status = enum_column({"new", "open", "Closed"}, false);
  EXPECT_EQ(key_text(&status, "new"), "1");
  EXPECT_EQ(key_text(&status, "open"), "2");
  EXPECT_EQ(key_text(&status, "Closed"), "3");
  EXPECT_EQ(key_text(&status, "closed"), "3");  // the collation's match, as stored
  EXPECT_EQ(key_text(&status, ""), "0");        // MySQL's error value sorts first
  // "Closed" < "new" as strings, but after it by position.
  EXPECT_LT(compare(enum_order_key(&status, SqlValue::of_string("new")),
                    enum_order_key(&status, SqlValue::of_string("Closed"))),
            0);
  EXPECT_TRUE(enum_order_key(&status, SqlValue::null()).is_null());
}

TEST(RowOrderTest, SetSortsByBitSet) {
  const catalog::SqlColumn features = enum_column({"Trailers", "Commentaries", "Deleted"}, true);
  EXPECT_EQ(key_text(&features, ""), "0");
  EXPECT_EQ(key_text(&features, "Trailers"), "1");
  EXPECT_EQ(key_text(&features, "Commentaries"), "2");
  EXPECT_EQ(key_text(&features, "Trailers,Commentaries"), "3");
  EXPECT_EQ(key_text(&features, "Trailers,Deleted"), "5");
  EXPECT_EQ(key_text(&features, "Deleted"), "4");
}

TEST(RowOrderTest, AValueReadFromTheColumnCarriesItsNumber) {
  const catalog::SqlColumn status = enum_column({"new", "open", "Closed"}, false);
  const SqlValue open = from_storage(status, "open");
  EXPECT_TRUE(open.enum_number);
  EXPECT_EQ(open.to_text(), "open");
  EXPECT_EQ(open.to_int(), 2);
  EXPECT_EQ(compare(open, SqlValue::of_int(2)), 0);          // e = 2 compares the position
  EXPECT_EQ(compare(open, SqlValue::of_string("OPEN")), 0);  // e = 'OPEN' the label
  // Through a derived table the column is unknown, the value still sorts by position.
  EXPECT_EQ(enum_order_key(nullptr, open).to_text(), "2");
  const catalog::SqlColumn features = enum_column({"a", "b", "c"}, true);
  EXPECT_EQ(from_storage(features, "a,c").to_int(), 5);
}

TEST(RowOrderTest, OtherColumnsKeepTheirValue) {
  catalog::SqlColumn name;
  name.name = "name";
  EXPECT_EQ(key_text(&name, "Closed"), "Closed");
  EXPECT_EQ(key_text(nullptr, "Closed"), "Closed");
  EXPECT_EQ(enum_order_key(nullptr, SqlValue::of_int(-4)).to_text(), "-4");
}

}  // namespace
}  // namespace duo::sql::executor
