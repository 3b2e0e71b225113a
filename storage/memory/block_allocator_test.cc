#include "storage/memory/block_allocator.h"

#include <gtest/gtest.h>

#include "storage/memory/test_memory.h"

#include <cstring>
#include <map>
#include <random>

namespace duo::storage {
namespace {

TEST(BlockAllocator, RandomAllocFreeKeepsContentsAndShrinks) {
  auto mem = make_test_memory(4096);
  BlockAllocator alloc(mem.get(), MemoryArea::kTransactionMemory);
  std::mt19937 rng(7);
  std::map<void*, std::pair<size_t, uint8_t>> live;
  for (int i = 0; i < 20000; ++i) {
    if (live.empty() || rng() % 3 != 0) {
      const size_t size = 1 + rng() % (rng() % 50 == 0 ? BlockAllocator::kMaxBlock : 600);
      auto b = alloc.allocate(size);
      ASSERT_TRUE(b.ok()) << b.status().to_string();
      ASSERT_EQ(reinterpret_cast<uintptr_t>(*b) % 8, 0u);
      const uint8_t fill = static_cast<uint8_t>(rng());
      std::memset(*b, fill, size);
      ASSERT_TRUE(live.emplace(*b, std::make_pair(size, fill)).second) << "block handed out twice";
    } else {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      const auto [size, fill] = it->second;
      for (size_t k = 0; k < size; k += 97) {
        ASSERT_EQ(static_cast<uint8_t*>(it->first)[k], fill);
      }
      alloc.free(it->first);
      live.erase(it);
    }
  }
  for (auto& [p, info] : live) alloc.free(p);
  EXPECT_EQ(alloc.memory_bytes(), 0u);
  EXPECT_EQ(mem->usage(MemoryArea::kTransactionMemory).used_pages, 0u);
}

TEST(BlockAllocator, ExhaustionIsTableFull) {
  auto mem = make_test_memory(2);
  BlockAllocator alloc(mem.get(), MemoryArea::kTransactionMemory);
  auto a = alloc.allocate(BlockAllocator::kMaxBlock);
  auto b = alloc.allocate(BlockAllocator::kMaxBlock);
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = alloc.allocate(100);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), ErrorCode::kTableFull);
  alloc.free(*a);
  EXPECT_TRUE(alloc.allocate(100).ok());
  EXPECT_FALSE(alloc.allocate(0).ok());
  EXPECT_FALSE(alloc.allocate(BlockAllocator::kMaxBlock + 1).ok());
}

}  // namespace
}  // namespace duo::storage
