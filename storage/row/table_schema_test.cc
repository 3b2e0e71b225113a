// Tests for TableSchema::validate() and find_column(): every rejection the header lists,
// and the row-size limit exactly at its boundary.
#include "storage/row/table_schema.h"

#include <gtest/gtest.h>

#include <string>

namespace duo::storage {
namespace {

ColumnDef column(std::string name, ColumnType type, bool nullable = true, uint32_t length = 0) {
  ColumnDef c;
  c.name = std::move(name);
  c.type = type;
  c.nullable = nullable;
  c.length = length;
  return c;
}

// t(id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(32), score INT, KEY by_score(score)).
TableSchema valid_schema() {
  TableSchema s;
  s.table_id = 7;
  s.name = "t";
  s.columns = {column("id", ColumnType::kBigInt, false), column("name", ColumnType::kVarchar, true, 32),
               column("score", ColumnType::kInt)};
  s.primary_key = {0};
  s.ordered_indexes = {IndexDef{"by_score", {2}, false}};
  return s;
}

ErrorCode validate_code(const TableSchema& s) { return s.validate().code(); }

TEST(TableSchema, ValidSchemaPasses) {
  EXPECT_TRUE(valid_schema().validate().ok());
}

TEST(TableSchema, RejectsBadColumnSets) {
  TableSchema s = valid_schema();
  s.columns.clear();
  s.primary_key.clear();
  s.ordered_indexes.clear();
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);

  s = valid_schema();
  for (uint32_t i = 0; s.columns.size() <= kMaxColumns; ++i) {
    s.columns.push_back(column("extra" + std::to_string(i), ColumnType::kTinyInt));
  }
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);
  s.columns.resize(kMaxColumns);
  EXPECT_TRUE(s.validate().ok());

  s = valid_schema();
  s.columns.push_back(column("NAME", ColumnType::kInt));  // names are case-insensitive
  Status st = s.validate();
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "Duplicate column name 'NAME'");

  s = valid_schema();
  s.columns[1].length = 70000;  // a bad column definition
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);
}

TEST(TableSchema, RejectsBadPrimaryKeys) {
  TableSchema s = valid_schema();
  s.primary_key.clear();
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);

  s = valid_schema();
  s.primary_key = {1};  // nullable
  Status st = s.validate();
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("All parts of a PRIMARY KEY must be NOT NULL"), std::string::npos);

  s = valid_schema();
  s.primary_key = {0, 0};
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);

  s = valid_schema();
  s.primary_key = {9};
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);

  s = valid_schema();
  s.columns[0].storage_disk = true;
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);

  s = valid_schema();
  s.columns.push_back(column("body", ColumnType::kText, false, 256));
  s.primary_key = {3};
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);

  s = valid_schema();
  s.columns[1].nullable = false;
  s.primary_key = {1, 0};  // composite keys in any column order are fine
  EXPECT_TRUE(s.validate().ok());
}

TEST(TableSchema, RejectsBadIndexes) {
  TableSchema s = valid_schema();
  s.ordered_indexes.push_back(IndexDef{"bad", {5}, false});
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);

  s = valid_schema();
  s.ordered_indexes.push_back(IndexDef{"empty", {}, false});
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);

  s = valid_schema();
  s.ordered_indexes.push_back(IndexDef{"BY_SCORE", {1}, false});
  {
    Status st = s.validate();
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(st.message(), "Duplicate key name 'BY_SCORE'");
  }

  s = valid_schema();
  s.columns[2].storage_disk = true;  // by_score is on a disk column
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);
  s.ordered_indexes.clear();  // a non-indexed disk column is fine
  EXPECT_TRUE(s.validate().ok());

  s = valid_schema();
  s.ordered_indexes.push_back(IndexDef{"twice", {1, 1}, false});
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);

  s = valid_schema();
  s.ordered_indexes.push_back(IndexDef{"", {1}, false});
  EXPECT_EQ(validate_code(s), ErrorCode::kInvalidArgument);
}

TEST(TableSchema, RowSizeLimit) {
  // 8 (BIGINT) + n (VARCHAR NOT NULL) + 0 null bytes + 16 header = 30000 at the limit.
  TableSchema s;
  s.name = "wide";
  s.columns = {column("id", ColumnType::kBigInt, false),
               column("payload", ColumnType::kVarchar, false, kMaxRowSizeBytes - 8 - 16)};
  s.primary_key = {0};
  EXPECT_TRUE(s.validate().ok());
  s.columns[1].length += 1;
  Status st = s.validate();
  EXPECT_EQ(st.code(), ErrorCode::kRowTooBig);
  EXPECT_NE(st.message().find("Row size too large. The maximum row size for the used table type"),
            std::string::npos);
  EXPECT_NE(st.message().find("30000"), std::string::npos);
  // A nullable column costs a null bit (one byte for up to 8 of them).
  s.columns[1].length -= 1;
  s.columns[1].nullable = true;
  EXPECT_EQ(validate_code(s), ErrorCode::kRowTooBig);
}

TEST(TableSchema, FindColumnIsCaseInsensitive) {
  const TableSchema s = valid_schema();
  EXPECT_EQ(s.find_column("score"), 2);
  EXPECT_EQ(s.find_column("SCORE"), 2);
  EXPECT_EQ(s.find_column("Id"), 0);
  EXPECT_EQ(s.find_column("missing"), -1);
  EXPECT_EQ(s.find_column(""), -1);
}

}  // namespace
}  // namespace duo::storage
