// CachedPageAccess: pins per holder over the real PageCache, with the test disk of
// page_cache_test_io.h.
#include "storage/page_cache/cached_page_access.h"

#include <gtest/gtest.h>

#include "storage/memory/test_memory.h"
#include "storage/page_cache/page_cache_test_io.h"

namespace duo::storage {
namespace {

using Pin = CachedPageAccess::PinState;

class CachedPageAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    memory_ = make_test_memory(kFrames + 4);
    PageCacheConfig config;
    config.frames_max = kFrames;
    cache_ = std::move(PageCache::create(*memory_, config, io_, undo_)).value();
    access_ = std::make_unique<CachedPageAccess>(cache_.get());
    for (uint32_t p = 0; p < 8; ++p) {
      std::vector<uint8_t> page(kPageSize);
      testing::fill_page(page.data(), PageId{1, p}, p);
      io_.disk[PageId{1, p}.key()] = std::move(page);
    }
  }
  void check() {
    EXPECT_TRUE(cache_->check_invariants().ok()) << cache_->check_invariants().to_string();
  }

  static constexpr uint32_t kFrames = 3;
  std::unique_ptr<GlobalMemory> memory_;
  testing::FakeDiskIo io_;
  testing::FakeUndo undo_;
  std::unique_ptr<PageCache> cache_;
  std::unique_ptr<CachedPageAccess> access_;
};

TEST_F(CachedPageAccessTest, MissParksTheHolderUntilTheReadArrivesThenThePageIsPinned) {
  auto r = access_->pin(7, {1, 2}, PageIntent::kRead);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, Pin::kWaiting);
  EXPECT_FALSE(access_->holds(7, {1, 2}, PageIntent::kRead));
  EXPECT_EQ(*access_->pin(7, {1, 2}, PageIntent::kRead), Pin::kWaiting);  // one read, not two
  EXPECT_EQ(io_.pending.size(), 1u);
  io_.complete_all(*cache_);
  const auto arrivals = access_->take_arrivals();
  ASSERT_EQ(arrivals.size(), 1u);
  EXPECT_EQ(arrivals[0].holder, 7u);
  EXPECT_TRUE(arrivals[0].status.ok());
  EXPECT_TRUE(access_->holds(7, {1, 2}, PageIntent::kRead));
  EXPECT_EQ(testing::page_version(access_->page({1, 2})), 2u);
  // Held already: no new request to the cache.
  const uint64_t requests = cache_->stats().page_requests;
  EXPECT_EQ(*access_->pin(7, {1, 2}, PageIntent::kRead), Pin::kReady);
  EXPECT_EQ(cache_->stats().page_requests, requests);
  EXPECT_TRUE(access_->resident({1, 2}));
  access_->release(7);
  EXPECT_EQ(access_->pinned_pages(), 0u);
  EXPECT_EQ(cache_->stats().frames_pinned, 0u);
  check();
}

TEST_F(CachedPageAccessTest, ReleasedHolderLosesItsReadInFlight) {
  ASSERT_EQ(*access_->pin(7, {1, 3}, PageIntent::kRead), Pin::kWaiting);
  access_->release(7);
  io_.complete_all(*cache_);
  EXPECT_TRUE(access_->take_arrivals().empty());
  EXPECT_EQ(cache_->stats().frames_pinned, 0u);
  EXPECT_EQ(access_->pinned_pages(), 0u);
  check();
}

TEST_F(CachedPageAccessTest, EveryFramePinnedIsRefusedNotAHang) {
  for (uint32_t p = 0; p < kFrames; ++p) {
    ASSERT_EQ(*access_->pin(p + 1, {1, p}, PageIntent::kRead), Pin::kWaiting);
  }
  io_.complete_all(*cache_);
  EXPECT_EQ(access_->take_arrivals().size(), kFrames);
  auto refused = access_->pin(99, {1, 5}, PageIntent::kRead);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().is(ErrorCode::kTemporary)) << refused.status().to_string();
  access_->release(1);  // one holder gives up: the next request gets a frame
  EXPECT_EQ(*access_->pin(99, {1, 5}, PageIntent::kRead), Pin::kWaiting);
  check();
}

TEST_F(CachedPageAccessTest, MarkDirtyUsesThePageLsnForTheWriteAheadRule) {
  ASSERT_EQ(*access_->pin(4, {1, 1}, PageIntent::kUpdate), Pin::kWaiting);
  io_.complete_all(*cache_);
  ASSERT_EQ(access_->take_arrivals().size(), 1u);
  uint8_t* page = access_->page({1, 1});
  disk::set_page_lsn(page, 42);
  access_->mark_dirty({1, 1});
  EXPECT_EQ(cache_->stats().pages_dirty, 1u);
  access_->release(4);
  cache_->flush_dirty(1);
  EXPECT_TRUE(io_.pending.empty());  // held back: undo is durable only up to 0
  EXPECT_EQ(undo_.requested, 42u);
  undo_.make_durable(*cache_);
  io_.complete_all(*cache_);
  EXPECT_EQ(cache_->take_flushed().size(), 1u);
  check();
}

TEST_F(CachedPageAccessTest, PageNoHolderPinnedIsABug) {
  EXPECT_DEATH(access_->page({1, 6}), "page not pinned");
}

}  // namespace
}  // namespace duo::storage
