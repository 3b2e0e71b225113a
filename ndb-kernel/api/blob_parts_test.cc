// The BLOB/TEXT parts layout (blob_parts.h): split and reassembly at the part
// boundaries, the parts table's definition and name, part keys.
#include "ndb-kernel/api/blob_parts.h"

#include <gtest/gtest.h>

#include "storage/row/column.h"

namespace duo::api {
namespace {

// A whole value of `size` bytes in the head encoding (u64 length, then the bytes).
std::string whole_value(uint64_t size) {
  std::string out;
  for (size_t i = 0; i < kBlobHeaderBytes; ++i) out += static_cast<char>(size >> (8 * i));
  for (uint64_t i = 0; i < size; ++i) out += static_cast<char>('a' + i % 23);
  return out;
}

protocol::TableDef base_table() {
  protocol::TableDef table;
  table.schema.table_id = 42;
  table.schema.name = "db/def/t";
  storage::ColumnDef id;
  id.name = "id";
  id.type = storage::ColumnType::kInt;
  id.nullable = false;
  storage::ColumnDef body;
  body.name = "body";
  body.type = storage::ColumnType::kText;
  body.length = kBlobInlineBytes;
  body.storage_disk = true;
  storage::ColumnDef small;
  small.name = "small";
  small.type = storage::ColumnType::kBlob;
  small.length = kTinyBlobBytesMax;
  table.schema.columns = {id, body, small};
  table.schema.primary_key = {0};
  table.fragment_count = 4;
  table.tablespace_id = 7;
  return table;
}

TEST(BlobPartsTest, OnlyFullInlineBlobColumnsHaveParts) {
  const protocol::TableDef table = base_table();
  EXPECT_EQ(blob_parts_columns(table), std::vector<uint16_t>{1});
  EXPECT_FALSE(has_blob_parts(table.schema.columns[0]));
  EXPECT_FALSE(has_blob_parts(table.schema.columns[2])) << "TINYBLOB is all inline";
}

TEST(BlobPartsTest, PartsTableNameFollowsNdbAndStaysInTheDatabase) {
  EXPECT_EQ(blob_parts_table_name("db/def/t", 42, 1), "db/def/NDB$BLOB_42_1");
  EXPECT_TRUE(is_blob_parts_table_name("db/def/NDB$BLOB_42_1"));
  EXPECT_FALSE(is_blob_parts_table_name("db/def/t"));
  EXPECT_FALSE(is_blob_parts_table_name("db/def/xNDB$BLOB_1_1"));
}

TEST(BlobPartsTest, PartsTableHasKeyPartAndData) {
  const protocol::TableDef base = base_table();
  Result<protocol::TableDef> parts = blob_parts_table_def(base, 1, kMediumBlobPartBytes);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  const storage::TableSchema& schema = parts->schema;
  ASSERT_EQ(schema.columns.size(), 3u);
  EXPECT_EQ(schema.columns[0].name, "id");
  EXPECT_EQ(schema.columns[1].name, kBlobPartColumn);
  EXPECT_EQ(schema.columns[2].name, kBlobDataColumn);
  EXPECT_EQ(schema.columns[2].type, storage::ColumnType::kVarbinary);
  EXPECT_EQ(blob_part_bytes(*parts), kMediumBlobPartBytes);
  EXPECT_EQ(schema.primary_key, (std::vector<uint16_t>{0, 1}));
  EXPECT_TRUE(schema.columns[2].storage_disk) << "a STORAGE DISK blob's parts are on disk";
  EXPECT_EQ(parts->tablespace_id, 7u);
  EXPECT_EQ(parts->fragment_count, 4u);
  EXPECT_TRUE(schema.validate().ok()) << schema.validate().message();
  EXPECT_FALSE(blob_parts_table_def(base, 2, kBlobPartBytes).ok()) << "TINYBLOB";
  EXPECT_FALSE(blob_parts_table_def(base, 1, 0).ok());
}

TEST(BlobPartsTest, PartCountsAtBoundaries) {
  EXPECT_EQ(blob_part_count(0, 256, 2000), 0u);
  EXPECT_EQ(blob_part_count(256, 256, 2000), 0u);
  EXPECT_EQ(blob_part_count(257, 256, 2000), 1u);
  EXPECT_EQ(blob_part_count(2256, 256, 2000), 1u);
  EXPECT_EQ(blob_part_count(2257, 256, 2000), 2u);
  EXPECT_EQ(blob_part_count(16u << 20, 256, 4000), ((16u << 20) - 256 + 3999) / 4000);
}

TEST(BlobPartsTest, SplitAndAssembleRoundTrip) {
  for (uint64_t size : {0ull, 1ull, 255ull, 256ull, 257ull, 2255ull, 2256ull, 2257ull, 65535ull}) {
    const std::string whole = whole_value(size);
    const std::string head = blob_head(whole, kBlobInlineBytes);
    EXPECT_EQ(blob_total_bytes(head), size);
    EXPECT_EQ(blob_head_is_whole(head), size <= kBlobInlineBytes) << size;
    std::vector<std::string> parts;
    const uint64_t count = blob_part_count(size, kBlobInlineBytes, kBlobPartBytes);
    for (uint64_t p = 0; p < count; ++p) {
      const std::string_view data = blob_part_data(whole, kBlobInlineBytes, kBlobPartBytes, p);
      EXPECT_FALSE(data.empty());
      if (p + 1 < count) {
        EXPECT_EQ(data.size(), kBlobPartBytes);
      }
      parts.emplace_back(data);
    }
    Result<std::string> back = blob_assemble(head, parts);
    ASSERT_TRUE(back.ok()) << size;
    EXPECT_EQ(*back, whole) << size;
  }
}

TEST(BlobPartsTest, AssembleRefusesMissingOrExtraBytes) {
  const std::string whole = whole_value(3000);
  const std::string head = blob_head(whole, kBlobInlineBytes);
  const std::string part0(blob_part_data(whole, kBlobInlineBytes, kBlobPartBytes, 0));
  EXPECT_FALSE(blob_assemble(head, {part0}).ok()) << "one part missing";
  const std::string part1(blob_part_data(whole, kBlobInlineBytes, kBlobPartBytes, 1));
  EXPECT_TRUE(blob_assemble(head, {part0, part1}).ok());
  EXPECT_FALSE(blob_assemble(head, {part0, part1, "x"}).ok()) << "a stray part";
}

TEST(BlobPartsTest, PartKeyIsBaseKeyThenPartNumber) {
  const protocol::TableDef base = base_table();
  storage::AttrValues row;
  storage::ColumnDef int_column;
  int_column.type = storage::ColumnType::kInt;
  row.add(0, storage::encode_int(int_column, 9));
  row.add(1, whole_value(10));
  Result<storage::AttrValues> key = blob_part_key(base, row, 3);
  ASSERT_TRUE(key.ok());
  ASSERT_EQ(key->size(), 2u);
  EXPECT_EQ(key->entry(0).column, 0);
  EXPECT_EQ(key->value(0), storage::encode_int(int_column, 9));
  EXPECT_EQ(key->entry(1).column, 1);
  storage::ColumnDef part_column;
  part_column.type = storage::ColumnType::kInt;
  part_column.is_unsigned = true;
  EXPECT_EQ(key->value(1), storage::encode_uint(part_column, 3)) << "NDB$PART as INT UNSIGNED";
  Result<storage::AttrValues> part_row = blob_part_row(base, row, 3, "xyz");
  ASSERT_TRUE(part_row.ok());
  EXPECT_EQ(part_row->value(2), "xyz");
  EXPECT_EQ(part_row->entry(2).column, 2);
  storage::AttrValues no_key;
  no_key.add(1, whole_value(10));
  EXPECT_FALSE(blob_part_key(base, no_key, 0).ok());
}

}  // namespace
}  // namespace duo::api
