// Tests for protocol/unique_index.h: the hidden table derived from a UNIQUE index (ids
// stable under other indexes' changes, columns, key), the changes a write makes (NULLs,
// unchanged values, insert / update / delete) and their wire form (round trip, every
// truncation refused).
#include "ndb-kernel/protocol/unique_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace duo::protocol {
namespace {

using storage::AttrValues;
using storage::ColumnDef;
using storage::ColumnType;

std::string int_bytes(int32_t v) {
  return std::string(reinterpret_cast<const char*>(&v), 4);
}

// t(id INT PK, a INT, b INT, c INT) with indexes ka(a), ub UNIQUE(b), uac UNIQUE(a, c).
TableDef sample_table() {
  TableDef def;
  def.schema.table_id = 7;
  def.schema.name = "db/def/t";
  for (const char* name : {"id", "a", "b", "c"}) {
    ColumnDef column;
    column.name = name;
    column.type = ColumnType::kInt;
    column.nullable = std::string(name) != "id";
    def.schema.columns.push_back(column);
  }
  def.schema.primary_key = {0};
  def.schema.ordered_indexes = {{"ka", {1}, false}, {"ub", {2}, true}, {"uac", {1, 3}, true}};
  def.version = 3;
  def.fragment_count = 8;
  return def;
}

AttrValues row(int32_t id, std::optional<int32_t> a, std::optional<int32_t> b, int32_t c) {
  AttrValues values;
  values.add(0, int_bytes(id));
  a ? values.add(1, int_bytes(*a)) : values.add_null(1);
  b ? values.add(2, int_bytes(*b)) : values.add_null(2);
  values.add(3, int_bytes(c));
  return values;
}

TEST(UniqueIndexTest, HiddenTablesFollowTheUniqueIndexes) {
  auto hidden = unique_index_tables(sample_table());
  ASSERT_TRUE(hidden.ok()) << hidden.status().to_string();
  ASSERT_EQ(hidden->size(), 2u);
  const UniqueIndexTable& ub = (*hidden)[0];
  EXPECT_EQ(ub.index_name, "ub");
  EXPECT_EQ(ub.ordinal, 1u);
  EXPECT_TRUE(is_unique_index_table(ub.def.schema.table_id));
  EXPECT_EQ(base_of_unique_index_table(ub.def.schema.table_id), 7u);
  EXPECT_EQ(ub.base_columns, (std::vector<uint16_t>{2, 0}));
  EXPECT_EQ(ub.key_columns, 1u);
  EXPECT_EQ(ub.def.schema.primary_key, (std::vector<uint16_t>{0}));
  EXPECT_EQ(ub.def.version, 3u);
  EXPECT_EQ(ub.def.fragment_count, 8u);
  EXPECT_TRUE(ub.def.schema.validate().ok()) << ub.def.schema.validate().to_string();
  EXPECT_EQ((*hidden)[1].def.schema.primary_key, (std::vector<uint16_t>{0, 1}));
  // A hidden table has none of its own.
  auto none = unique_index_tables(ub.def);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(UniqueIndexTest, IdsDoNotMoveWhenOtherIndexesChange) {
  TableDef def = sample_table();
  const uint32_t before = (*unique_index_tables(def))[1].def.schema.table_id;
  def.schema.ordered_indexes.erase(def.schema.ordered_indexes.begin());  // DROP INDEX ka
  def.schema.ordered_indexes.insert(def.schema.ordered_indexes.begin(), {"uz", {3}, true});
  auto after = unique_index_tables(def);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)[2].index_name, "uac");
  EXPECT_EQ((*after)[2].def.schema.table_id, before);
}

TEST(UniqueIndexTest, RefusesBaseIdsBeyondTheRange) {
  TableDef def = sample_table();
  def.schema.table_id = kMaxBaseTableId + 1;
  EXPECT_EQ(unique_index_tables(def).status().code(), ErrorCode::kInvalidArgument);
}

TEST(UniqueIndexTest, ChangesOfInsertUpdateDelete) {
  const UniqueIndexTable ub = (*unique_index_tables(sample_table()))[0];
  const AttrValues r1 = row(1, 10, 20, 30);
  std::vector<IndexChange> changes;
  index_changes(ub, nullptr, &r1, &changes);  // insert
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_TRUE(changes[0].insert);
  EXPECT_EQ(changes[0].values.size(), 2u);  // value and primary key
  EXPECT_EQ(changes[0].values.value(0), int_bytes(20));
  EXPECT_EQ(changes[0].values.value(1), int_bytes(1));

  changes.clear();
  const AttrValues same_b = row(1, 11, 20, 31);
  index_changes(ub, &r1, &same_b, &changes);  // b unchanged: nothing
  EXPECT_TRUE(changes.empty());

  const AttrValues new_b = row(1, 10, 21, 30);
  index_changes(ub, &r1, &new_b, &changes);  // b changed: delete old, insert new
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_FALSE(changes[0].insert);
  EXPECT_EQ(changes[0].values.size(), 1u);
  EXPECT_EQ(changes[0].values.value(0), int_bytes(20));
  EXPECT_TRUE(changes[1].insert);

  changes.clear();
  const AttrValues null_b = row(1, 10, std::nullopt, 30);
  index_changes(ub, &r1, &null_b, &changes);  // to NULL: the entry goes
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_FALSE(changes[0].insert);
  changes.clear();
  index_changes(ub, &null_b, nullptr, &changes);  // delete of a NULL value: nothing
  EXPECT_TRUE(changes.empty());
  index_changes(ub, &r1, nullptr, &changes);  // delete
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_FALSE(changes[0].insert);
}

TEST(UniqueIndexTest, WireFormRoundTripsAndRefusesTruncation) {
  const auto hidden = *unique_index_tables(sample_table());
  const AttrValues r1 = row(1, 10, 20, 30);
  const AttrValues r2 = row(1, 12, 22, 30);
  std::vector<IndexChange> changes;
  for (const UniqueIndexTable& index : hidden) index_changes(index, &r1, &r2, &changes);
  ASSERT_EQ(changes.size(), 4u);
  Bytes bytes;
  ASSERT_TRUE(encode_index_changes(changes, &bytes).ok());
  std::vector<IndexChange> decoded;
  ASSERT_TRUE(decode_index_changes(as_view(bytes), &decoded));
  ASSERT_EQ(decoded.size(), changes.size());
  for (size_t i = 0; i < changes.size(); ++i) {
    EXPECT_EQ(decoded[i].index_table, changes[i].index_table);
    EXPECT_EQ(decoded[i].insert, changes[i].insert);
    EXPECT_EQ(decoded[i].values.data(), changes[i].values.data());
  }
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    std::vector<IndexChange> partial;
    const bool ok = decode_index_changes(as_view(bytes).substr(0, cut), &partial);
    // Only a cut exactly between two changes decodes (to fewer changes).
    if (ok) {
      EXPECT_LT(partial.size(), changes.size());
    }
  }
  Bytes bad = bytes;
  bad[4] = 3;  // kind
  decoded.clear();
  EXPECT_FALSE(decode_index_changes(as_view(bad), &decoded));
}

}  // namespace
}  // namespace duo::protocol
