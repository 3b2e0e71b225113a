#include "storage/page_cache/two_queue_policy.h"

#include <gtest/gtest.h>

#include <vector>

namespace duo::storage {
namespace {

std::vector<uint32_t> eviction_order(const TwoQueuePolicy& policy) {
  std::vector<uint32_t> order;
  policy.for_each_candidate([&](uint32_t frame) {
    order.push_back(frame);
    return false;
  });
  return order;
}

TEST(TwoQueuePolicy, NewPagesAreOnProbationOldestFirst) {
  TwoQueuePolicy policy(8, 2, 4, 100);
  for (uint32_t frame = 0; frame < 4; ++frame) policy.on_load(frame, 1000 + frame);
  EXPECT_EQ(policy.recent_size(), 4u);
  EXPECT_EQ(eviction_order(policy), (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST(TwoQueuePolicy, ReferencesInsideTheWindowDoNotPromote) {
  TwoQueuePolicy policy(8, 2, 4, 5);
  policy.on_load(0, 10);
  policy.on_access(0);
  policy.on_access(0);
  EXPECT_FALSE(policy.is_frequent(0));
  for (uint32_t frame = 1; frame < 4; ++frame) policy.on_load(frame, 10 + frame);
  policy.on_access(0);  // five references after its load
  EXPECT_TRUE(policy.is_frequent(0));
}

TEST(TwoQueuePolicy, GhostHitLoadsIntoFrequent) {
  TwoQueuePolicy policy(4, 1, 4, 1000);
  policy.on_load(0, 77);
  policy.on_remove(0, 77, true);
  EXPECT_EQ(policy.ghost_size(), 1u);
  policy.on_load(1, 77);
  EXPECT_TRUE(policy.is_frequent(1));
  EXPECT_EQ(policy.ghost_size(), 0u);
  policy.on_load(2, 78);
  policy.on_remove(2, 78, false);  // forgotten, not a ghost
  policy.on_load(2, 78);
  EXPECT_FALSE(policy.is_frequent(2));
}

TEST(TwoQueuePolicy, ProbationGoesFirstOnlyWhileOverItsTarget) {
  TwoQueuePolicy policy(8, 2, 4, 1);
  policy.on_load(0, 1);
  policy.on_load(1, 2);
  policy.on_access(0);  // promoted (window 1)
  policy.on_access(1);  // promoted
  policy.on_load(2, 3);
  // Probation (1 page) is within its target: the LRU frequent page goes first.
  EXPECT_EQ(eviction_order(policy), (std::vector<uint32_t>{0, 1, 2}));
  policy.on_load(3, 4);
  policy.on_load(4, 5);
  // Probation (3 pages) is over its target: its oldest goes first.
  EXPECT_EQ(eviction_order(policy), (std::vector<uint32_t>{2, 3, 4, 0, 1}));
}

TEST(TwoQueuePolicy, GhostListIsBounded) {
  TwoQueuePolicy policy(2, 1, 3, 1000);
  for (uint64_t key = 0; key < 100; ++key) {
    policy.on_load(0, key);
    policy.on_remove(0, key, true);
  }
  EXPECT_EQ(policy.ghost_size(), 3u);
  policy.on_load(0, 99);
  EXPECT_TRUE(policy.is_frequent(0));
  policy.on_remove(0, 99, false);
  policy.on_load(0, 50);
  EXPECT_FALSE(policy.is_frequent(0));
}

}  // namespace
}  // namespace duo::storage
