#include <gtest/gtest.h>

#include "storage/memory/test_memory.h"

#include <cstring>
#include <map>
#include <random>
#include <string>

#include "storage/row/fixed_row_store.h"
#include "storage/row/row_layout.h"
#include "storage/row/var_row_store.h"

namespace duo::storage {
namespace {

TEST(FixedRowStore, AllocFreeIterateAndReleasePages) {
  auto mem = make_test_memory(64);
  FixedRowStore store(mem.get(), 200);
  std::map<RowRef, uint8_t> live;
  std::mt19937 rng(3);
  for (int i = 0; i < 5000; ++i) {
    if (live.empty() || rng() % 3 != 0) {
      auto r = store.allocate();
      ASSERT_TRUE(r.ok());
      ASSERT_LT(*r, 0x80000000u);
      const uint8_t tag = static_cast<uint8_t>(rng() | 1);
      uint8_t* row = store.row(*r);
      for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(row[k], 0);
      }
      row[0] = 1;  // flags: allocated
      std::memset(row + 4, tag, 196);
      ASSERT_TRUE(live.emplace(*r, tag).second);
    } else {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      EXPECT_EQ(store.row(it->first)[100], it->second);
      store.free(it->first);
      live.erase(it);
    }
  }
  EXPECT_EQ(store.rows(), live.size());
  // Iteration sees exactly the live rows.
  size_t seen = 0;
  for (RowRef r = store.next_position(0); r != FixedRowStore::kEnd; r = store.next_position(r + 1)) {
    if (store.row(r)[0] & 1) {
      ASSERT_TRUE(live.count(r));
      ++seen;
    }
  }
  EXPECT_EQ(seen, live.size());
  for (auto& [r, tag] : live) store.free(r);
  EXPECT_EQ(store.pages(), 0u);
  EXPECT_EQ(mem->usage(MemoryArea::kDataMemory).used_pages, 0u);
}

TEST(FixedRowStore, ExhaustionIsTableFull) {
  auto mem = make_test_memory(1);
  FixedRowStore store(mem.get(), 1000);
  int n = 0;
  for (;; ++n) {
    auto r = store.allocate();
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), ErrorCode::kTableFull);
      break;
    }
    store.row(*r)[0] = 1;
  }
  EXPECT_EQ(n, static_cast<int>(store.slots_per_page()));
}

TEST(VarRowStore, RandomAllocGrowShrinkFreeAgainstModel) {
  auto mem = make_test_memory(128);
  VarRowStore store(mem.get());
  std::map<VarRef, std::string> model;
  std::mt19937 rng(11);
  auto random_bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  };
  for (int i = 0; i < 30000; ++i) {
    const int action = static_cast<int>(rng() % 10);
    if (model.empty() || action < 4) {
      const size_t n = rng() % (rng() % 20 == 0 ? 20000 : 300);
      auto r = store.allocate(static_cast<uint32_t>(n));
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      std::string bytes = random_bytes(n);
      std::memcpy(store.data(*r), bytes.data(), n);
      ASSERT_TRUE(model.emplace(*r, bytes).second) << "var ref reused while live";
      continue;
    }
    auto it = model.begin();
    std::advance(it, rng() % model.size());
    ASSERT_EQ(store.size(it->first), it->second.size());
    ASSERT_EQ(std::memcmp(store.data(it->first), it->second.data(), it->second.size()), 0);
    if (action < 7) {
      store.free(it->first);
      model.erase(it);
    } else {
      const size_t n = rng() % 600;
      if (store.try_grow(it->first, static_cast<uint32_t>(n))) {
        it->second.resize(n, 'z');
        if (n > 0) std::memset(store.data(it->first), 'z', n);
        it->second.assign(n, 'z');
      }
    }
  }
  for (auto& [r, bytes] : model) {
    ASSERT_EQ(store.size(r), bytes.size());
    ASSERT_EQ(std::memcmp(store.data(r), bytes.data(), bytes.size()), 0);
  }
  for (auto& [r, bytes] : model) store.free(r);
  EXPECT_EQ(store.pages(), 0u);
}

TEST(RowLayout, DiskPartSplitsOffTheDiskColumnsAndMergesBack) {
  TableSchema t;
  t.name = "t";
  t.columns = {{"id", ColumnType::kInt, false, false},
               {"a", ColumnType::kVarchar, false, true, 20},
               {"d1", ColumnType::kVarbinary, false, true, 4096},
               {"b", ColumnType::kVarchar, false, true, 20},
               {"d2", ColumnType::kVarchar, false, true, 100},
               {"f", ColumnType::kInt, false, true}};
  t.columns[2].storage_disk = true;
  t.columns[4].storage_disk = true;
  t.columns[5].storage_disk = true;  // fixed-size: stays in the fixed part
  t.primary_key = {0};
  ASSERT_TRUE(t.validate().ok());
  RowLayout layout(t);
  EXPECT_TRUE(layout.has_disk());
  EXPECT_TRUE(layout.has_disk_part());
  EXPECT_TRUE(layout.in_disk_part(2));
  EXPECT_TRUE(layout.in_disk_part(4));
  EXPECT_FALSE(layout.in_disk_part(5));
  EXPECT_FALSE(layout.needs_disk_part({0, 1, 3, 5}));
  EXPECT_TRUE(layout.needs_disk_part({1, 4}));
  EXPECT_TRUE(layout.needs_disk_part({}));
  AttrValues v;
  v.add(0, encode_int(t.columns[0], 1));
  v.add(1, "aa");
  v.add(2, std::string(3000, 'x'));
  v.add(3, "bbb");
  v.add(4, "dd");
  std::string fixed, var;
  ASSERT_TRUE(layout.build_image(nullptr, v, true, &fixed, &var).ok());
  RowImage full{reinterpret_cast<uint8_t*>(fixed.data()), reinterpret_cast<const uint8_t*>(var.data()),
                static_cast<uint32_t>(var.size())};
  std::string memory_var, disk_part, merged;
  layout.split_disk_part(full, 8, &memory_var, &disk_part);
  EXPECT_EQ(disk_part.size(), 2u * 2 + 3000 + 2);  // two ends, then the bytes
  EXPECT_EQ(memory_var.size(), 2u * 4 + 2 + 3);
  RowImage slot{full.fixed, reinterpret_cast<const uint8_t*>(memory_var.data()),
                static_cast<uint32_t>(memory_var.size())};
  EXPECT_EQ(layout.get(slot, 1).data, "aa");
  EXPECT_EQ(layout.get(slot, 3).data, "bbb");
  EXPECT_EQ(layout.get(slot, 2).data.size(), 0u);  // not in memory
  layout.merge_disk_part(slot.var, slot.var_size, reinterpret_cast<const uint8_t*>(disk_part.data()),
                         static_cast<uint32_t>(disk_part.size()), &merged);
  EXPECT_EQ(merged, var);
  // Empty disk columns: the part is padded to the minimum and still merges back.
  AttrValues small;
  small.add(0, encode_int(t.columns[0], 2));
  ASSERT_TRUE(layout.build_image(nullptr, small, true, &fixed, &var).ok());
  full = RowImage{reinterpret_cast<uint8_t*>(fixed.data()), reinterpret_cast<const uint8_t*>(var.data()),
                  static_cast<uint32_t>(var.size())};
  layout.split_disk_part(full, 8, &memory_var, &disk_part);
  EXPECT_EQ(disk_part.size(), 8u);
  layout.merge_disk_part(reinterpret_cast<const uint8_t*>(memory_var.data()), static_cast<uint32_t>(memory_var.size()),
                         reinterpret_cast<const uint8_t*>(disk_part.data()), static_cast<uint32_t>(disk_part.size()),
                         &merged);
  EXPECT_EQ(merged, var);
}

TEST(RowLayout, BuildImageAndReadBack) {
  TableSchema t;
  t.name = "t";
  t.columns = {{"id", ColumnType::kInt, false, false},
               {"name", ColumnType::kVarchar, false, true, 20},
               {"score", ColumnType::kBigInt, false, true},
               {"tag", ColumnType::kChar, false, false, 4}};
  t.primary_key = {0};
  ASSERT_TRUE(t.validate().ok());
  RowLayout layout(t);
  EXPECT_TRUE(layout.has_var());
  EXPECT_EQ(layout.fixed_size() % 4, 0u);
  AttrValues v;
  v.add(0, encode_int(t.columns[0], 42));
  v.add(1, "hello");
  v.add(3, "ab  ");
  std::string fixed, var;
  ASSERT_TRUE(layout.build_image(nullptr, v, true, &fixed, &var).ok());
  RowImage img{reinterpret_cast<uint8_t*>(fixed.data()), reinterpret_cast<const uint8_t*>(var.data()),
               static_cast<uint32_t>(var.size())};
  EXPECT_EQ(decode_int(t.columns[0], layout.get(img, 0).data), 42);
  EXPECT_EQ(layout.get(img, 1).data, "hello");
  EXPECT_TRUE(layout.get(img, 2).is_null);
  EXPECT_EQ(layout.get(img, 3).data, "ab  ");
  // Update from a base keeps other columns.
  AttrValues u;
  u.add(2, encode_int(t.columns[2], -5));
  u.add_null(1);
  std::string fixed2, var2;
  ASSERT_TRUE(layout.build_image(&img, u, false, &fixed2, &var2).ok());
  RowImage img2{reinterpret_cast<uint8_t*>(fixed2.data()), reinterpret_cast<const uint8_t*>(var2.data()),
                static_cast<uint32_t>(var2.size())};
  EXPECT_TRUE(layout.get(img2, 1).is_null);
  EXPECT_EQ(decode_int(t.columns[2], layout.get(img2, 2).data), -5);
  EXPECT_EQ(decode_int(t.columns[0], layout.get(img2, 0).data), 42);
  // Errors: missing NOT NULL, NULL into NOT NULL, too long, wrong fixed size, unknown column.
  AttrValues missing;
  missing.add(0, encode_int(t.columns[0], 1));
  EXPECT_EQ(layout.build_image(nullptr, missing, true, &fixed, &var).code(), ErrorCode::kNotNullViolation);
  AttrValues null_pk = v;
  null_pk.add_null(3);
  EXPECT_EQ(layout.build_image(nullptr, null_pk, true, &fixed, &var).code(), ErrorCode::kInvalidArgument);
  AttrValues too_long;
  too_long.add(1, std::string(21, 'x'));
  EXPECT_EQ(layout.build_image(&img, too_long, false, &fixed, &var).code(), ErrorCode::kDataTooLong);
  AttrValues bad_size;
  bad_size.add(0, "abc");
  EXPECT_EQ(layout.build_image(&img, bad_size, false, &fixed, &var).code(), ErrorCode::kInvalidArgument);
  AttrValues unknown;
  unknown.add(9, "x");
  EXPECT_EQ(layout.build_image(&img, unknown, false, &fixed, &var).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace duo::storage
