// HashIndex tests: a reference model (std::unordered_multimap) under random operations,
// collision-heavy chains, growth to a million entries and shrinking back, and memory
// exhaustion from a tiny GlobalMemory.
#include "storage/hash_index/hash_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

namespace duo::storage {

// Holds overflow nodes out of the index's pool, so the index sees its pool as empty
// without any page being involved.
class HashIndexTestPeer {
 public:
  explicit HashIndexTestPeer(HashIndex* index) : index_(index) {}
  ~HashIndexTestPeer() { release_nodes(); }
  // Takes free nodes until the pool would need a page; GlobalMemory must be exhausted.
  void take_free_nodes() {
    for (;;) {
      Result<HashIndex::Node*> node = index_->allocate_node();
      if (!node.ok()) return;
      held_.push_back(*node);
    }
  }
  void release_nodes() {
    for (HashIndex::Node* node : held_) index_->free_node(node);
    held_.clear();
  }

 private:
  HashIndex* index_;
  std::vector<HashIndex::Node*> held_;
};

namespace {

std::unique_ptr<GlobalMemory> make_memory(size_t pages, bool prefault = false) {
  GlobalMemoryConfig config;
  config.total_bytes = pages * kPageSize;
  config.prefault = prefault;
  auto memory = GlobalMemory::create(config);
  EXPECT_TRUE(memory.ok());
  return std::move(memory).value();
}

size_t used_pages(const GlobalMemory& memory, MemoryArea area = MemoryArea::kDataMemory) {
  return memory.usage(area).used_pages;
}

// The reference: hash -> refs, plus ref -> hash so predicates can check what they see.
class Model {
 public:
  void insert(uint32_t hash, uint32_t ref) {
    by_hash_.emplace(hash, ref);
    hash_of_[ref] = hash;
  }
  bool erase(uint32_t hash, uint32_t ref) {
    auto [begin, end] = by_hash_.equal_range(hash);
    for (auto it = begin; it != end; ++it) {
      if (it->second == ref) {
        by_hash_.erase(it);
        hash_of_.erase(ref);
        return true;
      }
    }
    return false;
  }
  bool contains(uint32_t hash, uint32_t ref) const {
    auto [begin, end] = by_hash_.equal_range(hash);
    return std::any_of(begin, end, [&](const auto& e) { return e.second == ref; });
  }
  size_t size() const { return by_hash_.size(); }
  std::vector<std::pair<uint32_t, uint32_t>> sorted() const {
    std::vector<std::pair<uint32_t, uint32_t>> v(by_hash_.begin(), by_hash_.end());
    std::sort(v.begin(), v.end());
    return v;
  }
  const std::unordered_multimap<uint32_t, uint32_t>& entries() const { return by_hash_; }
  uint32_t hash_of(uint32_t ref) const { return hash_of_.at(ref); }

 private:
  std::unordered_multimap<uint32_t, uint32_t> by_hash_;
  std::unordered_map<uint32_t, uint32_t> hash_of_;
};

std::vector<std::pair<uint32_t, uint32_t>> sorted_entries(const HashIndex& index) {
  std::vector<std::pair<uint32_t, uint32_t>> v;
  index.for_each([&](uint32_t hash, uint32_t ref) { v.emplace_back(hash, ref); });
  std::sort(v.begin(), v.end());
  return v;
}

void expect_consistent(const HashIndex& index) {
  Status status = index.check_consistency();
  EXPECT_TRUE(status.ok()) << status.to_string();
}

TEST(HashIndex, EmptyIndexHoldsNoPages) {
  auto memory = make_memory(4);
  HashIndex index(memory.get());
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.memory_bytes(), 0u);
  EXPECT_EQ(index.find(42, [](uint32_t) { return true; }), kNoRef);
  EXPECT_FALSE(index.erase(42, 1));
  size_t visited = 0;
  index.for_each([&](uint32_t, uint32_t) { ++visited; });
  EXPECT_EQ(visited, 0u);
  expect_consistent(index);
  EXPECT_EQ(used_pages(*memory), 0u);
}

TEST(HashIndex, InsertFindEraseOne) {
  auto memory = make_memory(4);
  HashIndex index(memory.get());
  ASSERT_TRUE(index.insert(0xDEADBEEF, 7).ok());
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.memory_bytes(), kPageSize);
  EXPECT_EQ(index.find(0xDEADBEEF, [](uint32_t ref) { return ref == 7; }), 7u);
  EXPECT_EQ(index.find(0xDEADBEEF, [](uint32_t) { return false; }), kNoRef);
  EXPECT_EQ(index.find(0xDEADBEEE, [](uint32_t) { return true; }), kNoRef);
  EXPECT_FALSE(index.erase(0xDEADBEEF, 8));
  EXPECT_FALSE(index.erase(0xDEADBEEE, 7));
  EXPECT_TRUE(index.erase(0xDEADBEEF, 7));
  EXPECT_FALSE(index.erase(0xDEADBEEF, 7));
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.find(0xDEADBEEF, [](uint32_t) { return true; }), kNoRef);
  expect_consistent(index);
}

TEST(HashIndex, RejectsNoRef) {
  auto memory = make_memory(4);
  HashIndex index(memory.get());
  Status status = index.insert(1, kNoRef);
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(index.size(), 0u);
}

TEST(HashIndex, FindReturnsTheFirstMatchAndOnlyAsksAboutEqualHashes) {
  auto memory = make_memory(8);
  HashIndex index(memory.get());
  Model model;
  for (uint32_t ref = 0; ref < 200; ++ref) {
    const uint32_t hash = ref % 3 == 0 ? 0x1234 : ref * 0x9E3779B1u;
    ASSERT_TRUE(index.insert(hash, ref).ok());
    model.insert(hash, ref);
  }
  size_t calls = 0;
  const uint32_t found = index.find(0x1234, [&](uint32_t ref) {
    ++calls;
    EXPECT_EQ(model.hash_of(ref), 0x1234u);
    return ref >= 99;
  });
  EXPECT_NE(found, kNoRef);
  EXPECT_GE(found, 99u);
  EXPECT_EQ(found % 3, 0u);
  EXPECT_LE(calls, 67u);
}

// One randomized campaign: inserts, erases of present and absent pairs, and lookups,
// compared with the model after every operation and structurally every few hundred.
void run_against_model(uint32_t seed, uint32_t hash_space, int operations) {
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " hash_space=" << hash_space);
  std::mt19937 rng(seed);
  auto memory = make_memory(256);
  HashIndex index(memory.get());
  Model model;
  std::vector<std::pair<uint32_t, uint32_t>> live;  // for picking erase victims
  uint32_t next_ref = 0;
  // Phases alternate between growth and shrinkage so merges are exercised too.
  for (int op = 0; op < operations; ++op) {
    const bool growing = (op / 2000) % 2 == 0;
    const uint32_t dice = rng() % 100;
    const uint32_t hash = hash_space == 0 ? rng() : rng() % hash_space;
    if (dice < (growing ? 55u : 25u)) {
      const uint32_t ref = next_ref++;
      ASSERT_TRUE(index.insert(hash, ref).ok());
      model.insert(hash, ref);
      live.emplace_back(hash, ref);
    } else if (dice < 80 && !live.empty()) {
      const size_t victim = rng() % live.size();
      const auto [h, r] = live[victim];
      live[victim] = live.back();
      live.pop_back();
      ASSERT_TRUE(index.erase(h, r));
      ASSERT_TRUE(model.erase(h, r));
      ASSERT_EQ(index.find(h, [&](uint32_t ref) { return ref == r; }), kNoRef);
    } else if (dice < 85) {
      // Absent pairs: an unused ref, or a live ref under the wrong hash.
      ASSERT_FALSE(index.erase(hash, next_ref + 1));
      if (!live.empty()) {
        const auto [h, r] = live[rng() % live.size()];
        if (!model.contains(h + 1, r)) {
          ASSERT_FALSE(index.erase(h + 1, r));
        }
      }
    } else if (!live.empty()) {
      const auto [h, r] = live[rng() % live.size()];
      ASSERT_EQ(index.find(h, [&](uint32_t ref) { return ref == r; }), r);
      // A hash that may or may not be present: the answer must agree with the model.
      const uint32_t found = index.find(hash, [&](uint32_t ref) {
        EXPECT_EQ(model.hash_of(ref), hash);
        return true;
      });
      if (model.entries().count(hash) == 0) {
        ASSERT_EQ(found, kNoRef);
      } else {
        ASSERT_TRUE(model.contains(hash, found));
      }
    }
    ASSERT_EQ(index.size(), model.size());
    if (op % 500 == 0) {
      Status status = index.check_consistency();
      ASSERT_TRUE(status.ok()) << status.to_string();
    }
  }
  expect_consistent(index);
  EXPECT_EQ(sorted_entries(index), model.sorted());
  for (const auto& [h, r] : live) {
    ASSERT_EQ(index.find(h, [&, r = r](uint32_t ref) { return ref == r; }), r);
  }
}

TEST(HashIndex, RandomAgainstModelFullHashes) {
  for (uint32_t seed = 1; seed <= 24; ++seed) run_against_model(seed, 0, 12000);
}

TEST(HashIndex, RandomAgainstModelFewDistinctHashes) {
  // Many refs per hash: long collision chains, splits that move nothing.
  for (uint32_t seed = 101; seed <= 116; ++seed) run_against_model(seed, 37, 8000);
}

TEST(HashIndex, RandomAgainstModelMediumHashSpace) {
  for (uint32_t seed = 201; seed <= 216; ++seed) run_against_model(seed, 5000, 12000);
}

TEST(HashIndex, ManyRefsWithOneHash) {
  auto memory = make_memory(64);
  HashIndex index(memory.get());
  constexpr uint32_t kSame = 0xABCD0123;
  constexpr uint32_t kRefs = 10000;
  for (uint32_t ref = 0; ref < kRefs; ++ref) ASSERT_TRUE(index.insert(kSame, ref).ok());
  for (uint32_t ref = 0; ref < 100; ++ref) ASSERT_TRUE(index.insert(ref, kRefs + ref).ok());
  expect_consistent(index);
  // All 10000 live in one chain; splitting cannot separate equal hashes.
  EXPECT_GE(index.stats().longest_chain_lines,
            (kRefs - HashIndex::kSlotsPerBucket) / HashIndex::kSlotsPerNode);
  for (uint32_t ref = 0; ref < kRefs; ref += 97) {
    EXPECT_EQ(index.find(kSame, [&](uint32_t r) { return r == ref; }), ref);
  }
  for (uint32_t ref = 0; ref < kRefs; ref += 2) ASSERT_TRUE(index.erase(kSame, ref));
  expect_consistent(index);
  EXPECT_EQ(index.size(), kRefs / 2 + 100);
  for (uint32_t ref = 0; ref < kRefs; ++ref) {
    const uint32_t expected = ref % 2 == 0 ? kNoRef : ref;
    ASSERT_EQ(index.find(kSame, [&](uint32_t r) { return r == ref; }), expected);
  }
  for (uint32_t ref = 0; ref < 100; ++ref) {
    EXPECT_EQ(index.find(ref, [](uint32_t) { return true; }), kRefs + ref);
  }
  for (uint32_t ref = 1; ref < kRefs; ref += 2) ASSERT_TRUE(index.erase(kSame, ref));
  expect_consistent(index);
  EXPECT_EQ(index.size(), 100u);
  EXPECT_EQ(index.stats().overflow_nodes, 0u);
}

TEST(HashIndex, ForEachVisitsExactlyTheEntries) {
  auto memory = make_memory(64);
  HashIndex index(memory.get());
  Model model;
  std::mt19937 rng(7);
  for (uint32_t ref = 0; ref < 20000; ++ref) {
    const uint32_t hash = rng() % 3 == 0 ? rng() % 50 : rng();
    ASSERT_TRUE(index.insert(hash, ref).ok());
    model.insert(hash, ref);
  }
  for (uint32_t ref = 0; ref < 20000; ref += 3) {
    ASSERT_TRUE(index.erase(model.hash_of(ref), ref));
    ASSERT_TRUE(model.erase(model.hash_of(ref), ref));
  }
  EXPECT_EQ(sorted_entries(index), model.sorted());
}

TEST(HashIndex, GrowsToAMillionAndShrinksBack) {
  constexpr uint32_t kEntries = 1000000;
  auto memory = make_memory(1024);
  HashIndex index(memory.get());
  std::mt19937 rng(2024);
  std::vector<uint32_t> hashes(kEntries);
  for (uint32_t& h : hashes) h = rng();
  size_t max_bytes_per_entry_seen = 0;
  for (uint32_t ref = 0; ref < kEntries; ++ref) {
    ASSERT_TRUE(index.insert(hashes[ref], ref).ok());
    if (ref >= 100000 && ref % 50000 == 0) {
      max_bytes_per_entry_seen =
          std::max(max_bytes_per_entry_seen, index.memory_bytes() / index.size());
    }
  }
  expect_consistent(index);
  const HashIndexStats stats = index.stats();
  EXPECT_EQ(stats.entries, kEntries);
  EXPECT_EQ(stats.split_failures, 0u);
  // One split per insert kept the average load exactly at the split fill.
  const double expected_buckets =
      kEntries * 100.0 / (HashIndex::kSlotsPerBucket * HashIndex::kSplitFillPercent);
  EXPECT_NEAR(static_cast<double>(stats.primary_buckets), expected_buckets, 2.0);
  EXPECT_LE(stats.longest_chain_lines, 10u);
  const double bytes_per_entry = static_cast<double>(index.memory_bytes()) / kEntries;
  std::printf("1M entries: %.2f bytes/entry, %zu primary buckets + %zu overflow nodes, %zu pages\n",
              bytes_per_entry, stats.primary_buckets, stats.overflow_nodes,
              index.memory_bytes() / kPageSize);
  EXPECT_LT(bytes_per_entry, 12.5);
  EXPECT_LE(max_bytes_per_entry_seen, 13u);
  EXPECT_EQ(used_pages(*memory), index.memory_bytes() / kPageSize);

  for (uint32_t ref = 0; ref < kEntries; ref += 1) {
    ASSERT_EQ(index.find(hashes[ref], [&](uint32_t r) { return r == ref; }), ref);
  }
  // Erase everything in a different order: merges run one per erase.
  for (uint32_t i = 0; i < kEntries; ++i) {
    const uint32_t ref = static_cast<uint32_t>((i * 7919ull) % kEntries);
    ASSERT_TRUE(index.erase(hashes[ref], ref));
    if (i % 100000 == 0) expect_consistent(index);
  }
  expect_consistent(index);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.stats().primary_buckets, 1u);
  // One segment plus at most the one cached empty overflow page.
  EXPECT_LE(index.memory_bytes(), 2 * kPageSize);
  EXPECT_EQ(used_pages(*memory), index.memory_bytes() / kPageSize);
}

TEST(HashIndex, DestructorReturnsEveryPage) {
  auto memory = make_memory(128);
  {
    HashIndex index(memory.get(), MemoryArea::kTransactionMemory);
    std::mt19937 rng(5);
    for (uint32_t ref = 0; ref < 100000; ++ref) ASSERT_TRUE(index.insert(rng(), ref).ok());
    for (uint32_t ref = 0; ref < 2000; ++ref) ASSERT_TRUE(index.insert(77, 100000 + ref).ok());
    EXPECT_GT(used_pages(*memory, MemoryArea::kTransactionMemory), 9u);  // directory page too
    EXPECT_EQ(used_pages(*memory, MemoryArea::kDataMemory), 0u);
    EXPECT_GE(index.stats().directory_pages, 1u);
  }
  EXPECT_EQ(used_pages(*memory, MemoryArea::kTransactionMemory), 0u);
  EXPECT_EQ(memory->free_pages(), 128u);
}

// Holds pages of the same area "elsewhere" so a test can squeeze and then release memory.
class MemoryHog {
 public:
  explicit MemoryHog(GlobalMemory* memory) : memory_(memory) {}
  ~MemoryHog() { release_all(); }
  // Takes pages until only `leave` are free.
  void take_all_but(size_t leave) {
    while (memory_->free_pages() > leave) {
      auto page = memory_->allocate_page(MemoryArea::kDataMemory);
      ASSERT_TRUE(page.ok());
      pages_.push_back(*page);
    }
  }
  size_t page_count() const { return pages_.size(); }
  void release_all() {
    for (void* page : pages_) memory_->free_page(MemoryArea::kDataMemory, page);
    pages_.clear();
  }

 private:
  GlobalMemory* memory_;
  std::vector<void*> pages_;
};

TEST(HashIndex, ExhaustionIsTableFullAndLeavesTheIndexUsable) {
  auto memory = make_memory(6);
  HashIndex index(memory.get());
  Model model;
  std::mt19937 rng(99);
  uint32_t ref = 0;
  uint32_t failed_hash = 0;
  for (;;) {
    const uint32_t hash = rng();
    Status status = index.insert(hash, ref);
    if (!status.ok()) {
      ASSERT_EQ(status.code(), ErrorCode::kTableFull);
      failed_hash = hash;
      break;
    }
    model.insert(hash, ref++);
    ASSERT_LT(ref, 1000000u) << "never ran out of memory";
  }
  EXPECT_EQ(memory->free_pages(), 0u);
  EXPECT_EQ(index.size(), model.size());
  EXPECT_EQ(index.find(failed_hash, [&](uint32_t r) { return r == ref; }), kNoRef);
  expect_consistent(index);
  EXPECT_EQ(sorted_entries(index), model.sorted());
  const size_t bytes_when_full = index.memory_bytes();
  EXPECT_EQ(bytes_when_full, 6 * kPageSize);

  // Further inserts: some land in buckets with room, the rest are refused; either way the
  // index stays exact.
  size_t refused = 0;
  for (int i = 0; i < 2000; ++i) {
    const uint32_t hash = rng();
    Status status = index.insert(hash, ++ref);
    if (status.ok()) {
      model.insert(hash, ref);
    } else {
      ASSERT_EQ(status.code(), ErrorCode::kTableFull);
      ++refused;
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(index.stats().split_failures, 0u);
  expect_consistent(index);
  EXPECT_EQ(sorted_entries(index), model.sorted());

  // Erasing frees overflow buckets and lets inserts succeed again.
  std::vector<std::pair<uint32_t, uint32_t>> victims(model.entries().begin(),
                                                     model.entries().end());
  for (size_t i = 0; i < victims.size(); i += 4) {
    ASSERT_TRUE(index.erase(victims[i].first, victims[i].second));
    ASSERT_TRUE(model.erase(victims[i].first, victims[i].second));
  }
  expect_consistent(index);
  EXPECT_EQ(sorted_entries(index), model.sorted());
  for (const auto& [h, r] : model.entries()) {
    ASSERT_EQ(index.find(h, [&, r = r](uint32_t x) { return x == r; }), r);
  }
}

TEST(HashIndex, InsertsResumeWhenMemoryIsFreedElsewhere) {
  auto memory = make_memory(64);
  HashIndex index(memory.get());
  Model model;
  std::mt19937 rng(31);
  uint32_t ref = 0;
  for (; ref < 5000; ++ref) {
    const uint32_t hash = rng();
    ASSERT_TRUE(index.insert(hash, ref).ok());
    model.insert(hash, ref);
  }
  MemoryHog hog(memory.get());
  hog.take_all_but(0);
  const size_t buckets_before = index.stats().primary_buckets;
  size_t refused = 0;
  for (int i = 0; i < 20000; ++i, ++ref) {
    const uint32_t hash = rng();
    Status status = index.insert(hash, ref);
    if (status.ok()) {
      model.insert(hash, ref);
    } else {
      ASSERT_EQ(status.code(), ErrorCode::kTableFull);
      ++refused;
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(index.stats().split_failures, 0u);
  expect_consistent(index);
  EXPECT_EQ(sorted_entries(index), model.sorted());

  hog.release_all();
  for (int i = 0; i < 50000; ++i, ++ref) {
    const uint32_t hash = rng();
    ASSERT_TRUE(index.insert(hash, ref).ok());
    model.insert(hash, ref);
  }
  expect_consistent(index);
  EXPECT_EQ(sorted_entries(index), model.sorted());
  const HashIndexStats stats = index.stats();
  EXPECT_GT(stats.primary_buckets, buckets_before);
  // Splitting caught up: the load is back under the split fill.
  EXPECT_LE(stats.entries, stats.primary_buckets * HashIndex::kSlotsPerBucket *
                                   HashIndex::kSplitFillPercent / 100 +
                               HashIndex::kResizeRetryOperations);
}

TEST(HashIndex, RefusedDirectoryGrowthFreesItsPartialPage) {
  // The ninth segment needs a directory page and a segment page; leave room for one.
  auto memory = make_memory(64);
  HashIndex index(memory.get());
  Model model;
  std::mt19937 rng(8);
  uint32_t ref = 0;
  while (index.stats().primary_buckets < 8 * HashIndex::kBucketsPerSegment) {
    const uint32_t hash = rng();
    ASSERT_TRUE(index.insert(hash, ref).ok());
    model.insert(hash, ref++);
  }
  EXPECT_EQ(index.stats().directory_pages, 0u);
  MemoryHog hog(memory.get());
  hog.take_all_but(1);
  const size_t split_failures_before = index.stats().split_failures;
  for (int i = 0; i < 50; ++i, ++ref) {
    const uint32_t hash = rng();
    Status status = index.insert(hash, ref);
    if (status.ok()) model.insert(hash, ref);
  }
  EXPECT_GT(index.stats().split_failures, split_failures_before);
  EXPECT_EQ(index.stats().directory_pages, 0u);
  EXPECT_EQ(index.stats().primary_buckets, 8 * HashIndex::kBucketsPerSegment);
  expect_consistent(index);
  EXPECT_EQ(sorted_entries(index), model.sorted());
  EXPECT_EQ(used_pages(*memory), index.memory_bytes() / kPageSize + hog.page_count());

  hog.release_all();
  for (int i = 0; i < 200; ++i, ++ref) {
    const uint32_t hash = rng();
    ASSERT_TRUE(index.insert(hash, ref).ok());
    model.insert(hash, ref);
  }
  EXPECT_EQ(index.stats().directory_pages, 1u);
  expect_consistent(index);
  EXPECT_EQ(sorted_entries(index), model.sorted());
}

TEST(HashIndex, RefusedMergeLeavesTheIndexIntact) {
  // Shrink while no overflow node and no page is free, so a merge that needs a node up
  // front (the last bucket's entries overfill its buddy's tail) is refused.
  auto memory = make_memory(32);
  HashIndex index(memory.get());
  Model model;
  std::mt19937 rng(4242);
  std::vector<std::pair<uint32_t, uint32_t>> spread;
  for (uint32_t ref = 0; ref < 20000; ++ref) {
    const uint32_t hash = rng();
    ASSERT_TRUE(index.insert(hash, ref).ok());
    model.insert(hash, ref);
    spread.emplace_back(hash, ref);
  }
  MemoryHog hog(memory.get());
  hog.take_all_but(0);
  HashIndexTestPeer peer(&index);
  peer.take_free_nodes();
  const size_t buckets_before = index.stats().primary_buckets;
  size_t erased = 0;
  for (const auto& [h, r] : spread) {
    ASSERT_TRUE(index.erase(h, r));
    ASSERT_TRUE(model.erase(h, r));
    ++erased;
    peer.take_free_nodes();  // whatever the erase freed
    if (index.stats().merge_failures > 0) break;
  }
  EXPECT_GT(index.stats().merge_failures, 0u);
  EXPECT_LT(index.stats().primary_buckets, buckets_before);  // merges without nodes went on
  EXPECT_EQ(sorted_entries(index), model.sorted());
  for (const auto& [h, r] : model.entries()) {
    ASSERT_EQ(index.find(h, [&, r = r](uint32_t x) { return x == r; }), r);
  }
  peer.release_nodes();
  expect_consistent(index);

  // With memory back, erasing everything merges down to one bucket.
  hog.release_all();
  for (size_t i = erased; i < spread.size(); ++i) {
    ASSERT_TRUE(index.erase(spread[i].first, spread[i].second));
  }
  expect_consistent(index);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.stats().primary_buckets, 1u);
  EXPECT_LE(index.memory_bytes(), 2 * kPageSize);
}

TEST(HashIndex, RandomOperationsUnderTinyMemory) {
  // Exhaustion at random points: splits, merges and overflow allocation all get refused
  // sometimes; the index must match the model throughout.
  size_t split_failures = 0;
  size_t merge_failures = 0;
  size_t refused = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed=" << seed);
    auto memory = make_memory(3);
    HashIndex index(memory.get());
    Model model;
    std::vector<std::pair<uint32_t, uint32_t>> live;
    std::mt19937 rng(seed);
    uint32_t next_ref = 0;
    size_t refused_here = 0;
    for (int op = 0; op < 60000; ++op) {
      const bool growing = (op / 10000) % 2 == 0;
      if (rng() % 100 < (growing ? 80u : 30u)) {
        const uint32_t hash = rng() % 4 == 0 ? rng() % 200 : rng();
        Status status = index.insert(hash, next_ref);
        if (status.ok()) {
          model.insert(hash, next_ref);
          live.emplace_back(hash, next_ref);
        } else {
          ASSERT_EQ(status.code(), ErrorCode::kTableFull);
          ++refused_here;
        }
        ++next_ref;
      } else if (!live.empty()) {
        const size_t victim = rng() % live.size();
        const auto [h, r] = live[victim];
        live[victim] = live.back();
        live.pop_back();
        ASSERT_TRUE(index.erase(h, r));
        ASSERT_TRUE(model.erase(h, r));
      }
      ASSERT_EQ(index.size(), model.size());
      if (op % 1000 == 0) {
        Status status = index.check_consistency();
        ASSERT_TRUE(status.ok()) << status.to_string();
      }
    }
    expect_consistent(index);
    EXPECT_EQ(sorted_entries(index), model.sorted());
    split_failures += index.stats().split_failures;
    merge_failures += index.stats().merge_failures;
    refused += refused_here;
  }
  std::printf("tiny memory: %zu refused inserts, %zu split and %zu merge failures\n", refused,
              split_failures, merge_failures);
  EXPECT_GT(refused, 0u);
  EXPECT_GT(split_failures, 0u);
}

}  // namespace
}  // namespace duo::storage
