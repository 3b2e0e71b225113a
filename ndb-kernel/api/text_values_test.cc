// Text <-> storage values of the C API: key/value split, NULLs, parse errors naming the
// column, unknown and missing columns, and the round trip back to text.
#include "ndb-kernel/api/text_values.h"

#include <gtest/gtest.h>

#include "storage/row/column.h"

namespace duo::api {
namespace {

protocol::TableDef table() {
  protocol::TableDef def;
  def.schema.name = "t";
  storage::ColumnDef id;
  id.name = "id";
  id.type = storage::ColumnType::kInt;
  id.nullable = false;
  storage::ColumnDef name;
  name.name = "name";
  name.type = storage::ColumnType::kVarchar;
  name.length = 4;
  storage::ColumnDef age;
  age.name = "age";
  age.type = storage::ColumnType::kTinyInt;
  age.nullable = false;
  def.schema.columns = {id, name, age};
  def.schema.primary_key = {0};
  return def;
}

TEST(TextValues, SplitsKeyFromValuesAndRoundTrips) {
  storage::AttrValues key, values;
  ASSERT_TRUE(
      values_from_text(table(), {{"name", "bob"}, {"id", "42"}, {"age", "7"}}, &key, &values).ok());
  ASSERT_EQ(key.size(), 1u);
  EXPECT_EQ(key.entry(0).column, 0);
  ASSERT_EQ(values.size(), 2u);
  const std::vector<TextValue> text = values_to_text(table(), values);
  ASSERT_EQ(text.size(), 2u);
  EXPECT_EQ(text[0].column, "name");
  EXPECT_EQ(*text[0].value, "bob");
  EXPECT_EQ(*text[1].value, "7");
  EXPECT_EQ(*values_to_text(table(), key)[0].value, "42");
}

TEST(TextValues, NullsAndErrors) {
  storage::AttrValues key, values;
  ASSERT_TRUE(values_from_text(table(), {{"id", "1"}, {"name", std::nullopt}}, &key, &values).ok());
  EXPECT_TRUE(values.entry(0).is_null);
  EXPECT_FALSE(values_to_text(table(), values)[0].value.has_value());

  auto code = [](std::vector<TextValue> text, bool allow_values = true) {
    storage::AttrValues k, v;
    return values_from_text(table(), text, &k, allow_values ? &v : nullptr).code();
  };
  EXPECT_EQ(code({{"id", "1"}, {"nope", "1"}}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{"id", "1"}, {"id", "2"}}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{"name", "x"}}), ErrorCode::kInvalidArgument);  // key missing
  EXPECT_EQ(code({{"id", std::nullopt}}), ErrorCode::kNotNullViolation);
  EXPECT_EQ(code({{"id", "1"}, {"age", std::nullopt}}), ErrorCode::kNotNullViolation);
  EXPECT_EQ(code({{"id", "1"}, {"age", "300"}}), ErrorCode::kOutOfRange);
  EXPECT_EQ(code({{"id", "1"}, {"name", "toolong"}}), ErrorCode::kDataTooLong);
  EXPECT_EQ(code({{"id", "x"}}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{"id", "1"}, {"age", "3"}}, false), ErrorCode::kInvalidArgument);
  storage::AttrValues k, v;
  Status status = values_from_text(table(), {{"id", "1"}, {"age", "300"}}, &k, &v);
  EXPECT_NE(status.message().find("age"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace duo::api
