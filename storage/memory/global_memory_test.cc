#include "storage/memory/global_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace duo::storage {
namespace {

GlobalMemoryConfig small_config(size_t pages) {
  GlobalMemoryConfig c;
  c.total_bytes = pages * kPageSize;
  c.prefault = false;
  return c;
}

TEST(GlobalMemory, PagesAreAlignedAndDistinct) {
  auto mem = GlobalMemory::create(small_config(8));
  ASSERT_TRUE(mem.ok());
  std::vector<void*> pages;
  for (int i = 0; i < 8; ++i) {
    auto p = (*mem)->allocate_page(MemoryArea::kDataMemory);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % kPageSize, 0u);
    std::memset(*p, i, kPageSize);
    pages.push_back(*p);
  }
  auto* mid = static_cast<char*>(pages[3]) + 1234;
  EXPECT_EQ(GlobalMemory::page_of(mid), pages[3]);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(static_cast<unsigned char*>(pages[i])[kPageSize - 1], i);
  EXPECT_EQ((*mem)->usage(MemoryArea::kDataMemory).used_pages, 8u);
  for (void* p : pages) (*mem)->free_page(MemoryArea::kDataMemory, p);
  EXPECT_EQ((*mem)->free_pages(), 8u);
}

TEST(GlobalMemory, ExhaustionIsTableFullAndKeepsData) {
  auto mem = GlobalMemory::create(small_config(4));
  ASSERT_TRUE(mem.ok());
  std::vector<void*> pages;
  for (int i = 0; i < 4; ++i) {
    auto p = (*mem)->allocate_page(MemoryArea::kDataMemory);
    ASSERT_TRUE(p.ok());
    std::memset(*p, 0x5A, kPageSize);
    pages.push_back(*p);
  }
  auto full = (*mem)->allocate_page(MemoryArea::kDataMemory);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), ErrorCode::kTableFull);
  EXPECT_EQ(error_info(full.status().code()).mysql_errno, 1114);
  for (void* p : pages) EXPECT_EQ(static_cast<unsigned char*>(p)[kPageSize / 2], 0x5A);
  (*mem)->free_page(MemoryArea::kDataMemory, pages.back());
  EXPECT_TRUE((*mem)->allocate_page(MemoryArea::kDataMemory).ok());
}

TEST(GlobalMemory, ReservedPagesAreNeverLentAndMaximumsHold) {
  GlobalMemoryConfig c = small_config(10);
  c.areas[static_cast<size_t>(MemoryArea::kTransactionMemory)] = {3, 0};
  c.areas[static_cast<size_t>(MemoryArea::kDataMemory)] = {2, 6};
  auto mem = GlobalMemory::create(c);
  ASSERT_TRUE(mem.ok());
  // DataMemory: 2 reserved + up to 4 borrowed (max 6), though 7 are not reserved by others.
  int data_pages = 0;
  while ((*mem)->allocate_page(MemoryArea::kDataMemory).ok()) ++data_pages;
  EXPECT_EQ(data_pages, 6);
  // Schema memory (no reserve) gets what is left of the shared pool: 10 - 3 - 6 = 1.
  EXPECT_TRUE((*mem)->allocate_page(MemoryArea::kSchemaMemory).ok());
  EXPECT_FALSE((*mem)->allocate_page(MemoryArea::kSchemaMemory).ok());
  // TransactionMemory still has its 3 reserved pages.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE((*mem)->allocate_page(MemoryArea::kTransactionMemory).ok());
  auto r = (*mem)->allocate_page(MemoryArea::kTransactionMemory);
  EXPECT_EQ(r.status().code(), ErrorCode::kTableFull);
  const std::string report = (*mem)->usage_report();
  EXPECT_NE(report.find("DataMemory: 6 of 6 pages"), std::string::npos) << report;
  EXPECT_NE(report.find("TransactionMemory: 3 of"), std::string::npos) << report;
}

TEST(GlobalMemory, RejectsImpossibleConfig) {
  GlobalMemoryConfig c = small_config(4);
  c.areas[0] = {5, 0};
  auto mem = GlobalMemory::create(c);
  ASSERT_FALSE(mem.ok());
  EXPECT_EQ(mem.status().code(), ErrorCode::kConfigError);
  c.areas[0] = {3, 2};
  EXPECT_FALSE(GlobalMemory::create(c).ok());
  EXPECT_FALSE(GlobalMemory::create(small_config(0)).ok());
}

}  // namespace
}  // namespace duo::storage
