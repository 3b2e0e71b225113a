// PageCache behaviours one at a time, over FakeDiskIo (IO completes when the test says)
// and FakeUndo (the test moves the durable undo LSN).
#include "storage/page_cache/page_cache.h"

#include <gtest/gtest.h>

#include "storage/memory/test_memory.h"
#include "storage/page_cache/page_cache_test_io.h"

namespace duo::storage {
namespace {

using testing::FakeDiskIo;
using testing::FakeUndo;
using testing::fill_page;
using testing::page_version;

class PageCacheTest : public ::testing::Test {
 protected:
  void make_cache(uint32_t frames, PageCacheConfig config = {}) {
    memory_ = make_test_memory(frames + 4);
    config.frames_max = frames;
    cache_ = std::move(PageCache::create(*memory_, config, io_, undo_)).value();
    ASSERT_EQ(cache_->frame_count(), frames);
  }
  // Puts pages 0..count-1 of `file` on the fake disk, page p holding version p.
  void put_on_disk(uint32_t file, uint32_t count) {
    for (uint32_t p = 0; p < count; ++p) {
      std::vector<uint8_t> page(kPageSize);
      fill_page(page.data(), PageId{file, p}, p);
      io_.disk[PageId{file, p}.key()] = std::move(page);
    }
  }
  // Requests, completes the read if needed, and returns the pinned page.
  PageRef pin(PageId id, PageIntent intent = PageIntent::kRead, uint64_t token = 1) {
    Result<PageGrant> grant = cache_->request_page(id, intent, token);
    EXPECT_TRUE(grant.ok()) << grant.status().to_string();
    if (!grant.ok()) return PageRef{};
    if (grant->ready) return grant->page;
    io_.complete_all(*cache_);
    std::vector<PageReady> ready = cache_->take_ready();
    EXPECT_EQ(ready.size(), 1u);
    if (ready.size() != 1) return PageRef{};
    EXPECT_TRUE(ready[0].status.ok()) << ready[0].status.to_string();
    return ready[0].page;
  }
  void check() { EXPECT_TRUE(cache_->check_invariants().ok()) << cache_->check_invariants().to_string(); }

  FakeDiskIo io_;
  FakeUndo undo_;
  std::unique_ptr<GlobalMemory> memory_;
  std::unique_ptr<PageCache> cache_;
};

TEST_F(PageCacheTest, FramesComeFromDiskPageBufferMemory) {
  make_cache(6);
  EXPECT_EQ(memory_->usage(MemoryArea::kDiskPageBuffer).used_pages, 6u);
  cache_.reset();
  EXPECT_EQ(memory_->usage(MemoryArea::kDiskPageBuffer).used_pages, 0u);
}

TEST_F(PageCacheTest, MissReadsOnceForManyWaitersThenHits) {
  make_cache(4);
  put_on_disk(1, 8);
  const PageId id{1, 5};
  for (uint64_t token = 1; token <= 3; ++token) {
    Result<PageGrant> grant = cache_->request_page(id, PageIntent::kRead, token);
    ASSERT_TRUE(grant.ok());
    EXPECT_FALSE(grant->ready);
  }
  EXPECT_EQ(io_.reads_started, 1u);
  io_.complete_all(*cache_);
  std::vector<PageReady> ready = cache_->take_ready();
  ASSERT_EQ(ready.size(), 3u);
  for (uint64_t token = 1; token <= 3; ++token) {
    EXPECT_EQ(ready[token - 1].token, token);
    ASSERT_TRUE(ready[token - 1].status.ok());
    EXPECT_EQ(page_version(ready[token - 1].page.data), 5u);
    cache_->unpin(ready[token - 1].page, PageIntent::kRead);
  }
  Result<PageGrant> hit = cache_->request_page(id, PageIntent::kRead, 9);
  ASSERT_TRUE(hit.ok());
  ASSERT_TRUE(hit->ready);
  EXPECT_EQ(page_version(hit->page.data), 5u);
  cache_->unpin(hit->page, PageIntent::kRead);
  const PageCacheStats stats = cache_->stats();
  EXPECT_EQ(stats.page_requests, 4u);
  EXPECT_EQ(stats.page_requests_wait_io, 1u);
  EXPECT_EQ(stats.page_requests_wait_queue, 2u);
  EXPECT_EQ(stats.page_requests_direct_return, 1u);
  EXPECT_EQ(stats.pages_read, 1u);
  check();
}

TEST_F(PageCacheTest, CreateNeedsNoReadAndIsWrittenWithItsHeader) {
  make_cache(2);
  const PageId id{2, 40};
  Result<PageGrant> grant = cache_->request_page(id, PageIntent::kCreate, 1);
  ASSERT_TRUE(grant.ok());
  ASSERT_TRUE(grant->ready);
  EXPECT_EQ(io_.reads_started, 0u);
  EXPECT_EQ(page_name(grant->page.data), id);
  fill_page(grant->page.data, id, 77);
  cache_->mark_dirty(grant->page, 0);
  cache_->unpin(grant->page, PageIntent::kCreate);
  cache_->flush_dirty(5);
  ASSERT_EQ(io_.pending.size(), 1u);
  io_.complete_all(*cache_);
  std::vector<FlushDone> flushed = cache_->take_flushed();
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_EQ(flushed[0].token, 5u);
  EXPECT_TRUE(flushed[0].status.ok());
  EXPECT_TRUE(verify_page(io_.disk[id.key()].data(), id).ok());
  EXPECT_EQ(page_version(io_.disk[id.key()].data()), 77u);
  EXPECT_EQ(cache_->stats().pages_written_lcp, 1u);
  check();
}

TEST_F(PageCacheTest, ChecksumMismatchIsAnErrorAndThePageIsReadAgain) {
  make_cache(4);
  put_on_disk(1, 4);
  io_.corrupt_next_read = true;
  ASSERT_TRUE(cache_->request_page(PageId{1, 2}, PageIntent::kRead, 7).ok());
  io_.complete_all(*cache_);
  std::vector<PageReady> ready = cache_->take_ready();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(ready[0].status.is(ErrorCode::kCorruption)) << ready[0].status.to_string();
  EXPECT_NE(ready[0].status.message().find("checksum mismatch"), std::string::npos);
  EXPECT_FALSE(ready[0].page.valid());
  EXPECT_EQ(cache_->stats().checksum_errors, 1u);
  EXPECT_EQ(cache_->stats().frames_pinned, 0u);
  check();
  // Not cached: the next request reads the (sound) page again.
  PageRef page = pin(PageId{1, 2});
  EXPECT_EQ(page_version(page.data), 2u);
  EXPECT_EQ(io_.reads_started, 2u);
  cache_->unpin(page, PageIntent::kRead);
  check();
}

TEST_F(PageCacheTest, ReadErrorReachesEveryWaiter) {
  make_cache(2);
  ASSERT_TRUE(cache_->request_page(PageId{1, 0}, PageIntent::kRead, 1).ok());
  ASSERT_TRUE(cache_->request_page(PageId{1, 0}, PageIntent::kUpdate, 2).ok());
  io_.complete(*cache_, 0, Status(ErrorCode::kIoError, "EIO"));
  std::vector<PageReady> ready = cache_->take_ready();
  ASSERT_EQ(ready.size(), 2u);
  for (const PageReady& r : ready) EXPECT_TRUE(r.status.is(ErrorCode::kIoError));
  EXPECT_EQ(cache_->stats().frames_in_use, 0u);
  check();
}

TEST_F(PageCacheTest, AllFramesPinnedRefusesWithTemporaryError) {
  make_cache(3);
  put_on_disk(1, 8);
  std::vector<PageRef> held;
  for (uint32_t p = 0; p < 3; ++p) held.push_back(pin(PageId{1, p}));
  Result<PageGrant> refused = cache_->request_page(PageId{1, 5}, PageIntent::kRead, 9);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().is(ErrorCode::kTemporary));
  EXPECT_NE(refused.status().message().find("all 3 frames are pinned"), std::string::npos);
  EXPECT_EQ(cache_->stats().page_requests_refused, 1u);
  // A hit on a pinned page still works.
  PageRef again = pin(PageId{1, 1});
  cache_->unpin(again, PageIntent::kRead);
  cache_->unpin(held[0], PageIntent::kRead);
  PageRef page = pin(PageId{1, 5});  // evicts the one unpinned page
  EXPECT_EQ(page_version(page.data), 5u);
  EXPECT_EQ(cache_->stats().evictions, 1u);
  cache_->unpin(page, PageIntent::kRead);
  cache_->unpin(held[1], PageIntent::kRead);
  cache_->unpin(held[2], PageIntent::kRead);
  check();
}

TEST_F(PageCacheTest, MissWaitsForWriteBackThenGetsTheFrame) {
  make_cache(2);
  put_on_disk(1, 4);
  PageRef dirty = pin(PageId{1, 0}, PageIntent::kUpdate);
  fill_page(dirty.data, PageId{1, 0}, 100);
  cache_->mark_dirty(dirty, 0);
  cache_->unpin(dirty, PageIntent::kUpdate);
  PageRef held = pin(PageId{1, 1});
  Result<PageGrant> grant = cache_->request_page(PageId{1, 2}, PageIntent::kRead, 3);
  ASSERT_TRUE(grant.ok());
  EXPECT_FALSE(grant->ready);
  EXPECT_EQ(cache_->stats().page_requests_wait_queue, 1u);
  ASSERT_EQ(io_.pending.size(), 1u);
  EXPECT_TRUE(io_.pending[0].write);
  io_.complete(*cache_, 0);  // the write-back: frame free, the read starts
  ASSERT_EQ(io_.pending.size(), 1u);
  EXPECT_FALSE(io_.pending[0].write);
  io_.complete(*cache_, 0);
  std::vector<PageReady> ready = cache_->take_ready();
  ASSERT_EQ(ready.size(), 1u);
  ASSERT_TRUE(ready[0].status.ok());
  EXPECT_EQ(page_version(ready[0].page.data), 2u);
  EXPECT_EQ(page_version(io_.disk[PageId{1, 0}.key()].data()), 100u);
  cache_->unpin(ready[0].page, PageIntent::kRead);
  cache_->unpin(held, PageIntent::kRead);
  check();
}

TEST_F(PageCacheTest, FrameWaiterIsRefusedWhenTheLastFreeableFrameGetsPinned) {
  make_cache(2);
  put_on_disk(1, 4);
  PageRef dirty = pin(PageId{1, 0}, PageIntent::kUpdate);
  cache_->mark_dirty(dirty, 0);
  cache_->unpin(dirty, PageIntent::kUpdate);
  PageRef held = pin(PageId{1, 1});
  ASSERT_TRUE(cache_->request_page(PageId{1, 2}, PageIntent::kRead, 3).ok());  // waits
  PageRef reader = pin(PageId{1, 0});  // pins the page under write-back
  io_.complete_all(*cache_);           // the write ends; no frame can be freed now
  std::vector<PageReady> ready = cache_->take_ready();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].token, 3u);
  EXPECT_TRUE(ready[0].status.is(ErrorCode::kTemporary)) << ready[0].status.to_string();
  EXPECT_EQ(cache_->stats().waiters_refused, 1u);
  cache_->unpin(reader, PageIntent::kRead);
  cache_->unpin(held, PageIntent::kRead);
  check();
}

TEST_F(PageCacheTest, WriteWaitsForUndoDurableUpToThePageLsn) {
  make_cache(4);
  put_on_disk(1, 4);
  PageRef page = pin(PageId{1, 1}, PageIntent::kUpdate);
  cache_->mark_dirty(page, 40);
  EXPECT_EQ(page_lsn(page.data), 40u);
  cache_->unpin(page, PageIntent::kUpdate);
  undo_.durable = 39;
  cache_->flush_dirty(1);
  EXPECT_TRUE(io_.pending.empty());  // held back by the write-ahead rule
  EXPECT_EQ(undo_.requested, 40u);
  EXPECT_EQ(cache_->stats().log_waits, 1u);
  EXPECT_TRUE(cache_->take_flushed().empty());
  undo_.make_durable(*cache_);
  ASSERT_EQ(io_.pending.size(), 1u);
  EXPECT_EQ(page_lsn(io_.pending[0].written.data()), 40u);
  io_.complete_all(*cache_);
  EXPECT_EQ(cache_->take_flushed().size(), 1u);
  EXPECT_EQ(page_lsn(io_.disk[PageId{1, 1}.key()].data()), 40u);
  check();
}

TEST_F(PageCacheTest, FlushWaitsOnlyForPagesDirtyWhenAsked) {
  make_cache(4);
  put_on_disk(1, 4);
  PageRef a = pin(PageId{1, 0}, PageIntent::kUpdate);
  cache_->mark_dirty(a, 0);
  cache_->unpin(a, PageIntent::kUpdate);
  cache_->flush_dirty(1);
  ASSERT_EQ(io_.pending.size(), 1u);
  PageRef b = pin(PageId{1, 1}, PageIntent::kUpdate);  // dirtied after the request
  io_.complete_all(*cache_);
  cache_->mark_dirty(b, 0);
  std::vector<FlushDone> flushed = cache_->take_flushed();
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_EQ(flushed[0].token, 1u);
  // A second flush waits for b, which an update pin holds: written after the unpin.
  cache_->flush_dirty(2);
  EXPECT_TRUE(io_.pending.empty());
  cache_->unpin(b, PageIntent::kUpdate);
  ASSERT_EQ(io_.pending.size(), 1u);
  io_.complete_all(*cache_);
  flushed = cache_->take_flushed();
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_EQ(flushed[0].token, 2u);
  EXPECT_EQ(cache_->stats().pages_dirty, 0u);
  check();
}

TEST_F(PageCacheTest, UpdateWaitsForTheWriteOfItsPage) {
  make_cache(4);
  put_on_disk(1, 4);
  PageRef page = pin(PageId{1, 3}, PageIntent::kUpdate);
  cache_->mark_dirty(page, 0);
  cache_->unpin(page, PageIntent::kUpdate);
  cache_->flush_dirty(1);
  ASSERT_EQ(io_.pending.size(), 1u);
  PageRef reader = pin(PageId{1, 3}, PageIntent::kRead);  // readers do not wait
  Result<PageGrant> update = cache_->request_page(PageId{1, 3}, PageIntent::kUpdate, 8);
  ASSERT_TRUE(update.ok());
  EXPECT_FALSE(update->ready);
  io_.complete_all(*cache_);
  std::vector<PageReady> ready = cache_->take_ready();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].token, 8u);
  ASSERT_TRUE(ready[0].status.ok());
  cache_->unpin(ready[0].page, PageIntent::kUpdate);
  cache_->unpin(reader, PageIntent::kRead);
  check();
}

TEST_F(PageCacheTest, WriteErrorFailsTheFlushAndKeepsThePageDirty) {
  make_cache(4);
  put_on_disk(1, 4);
  PageRef page = pin(PageId{1, 0}, PageIntent::kUpdate);
  cache_->mark_dirty(page, 0);
  cache_->unpin(page, PageIntent::kUpdate);
  cache_->flush_dirty(1);
  io_.complete(*cache_, 0, Status(ErrorCode::kIoError, "ENOSPC"));
  std::vector<FlushDone> flushed = cache_->take_flushed();
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_TRUE(flushed[0].status.is(ErrorCode::kIoError));
  EXPECT_EQ(cache_->stats().pages_dirty, 1u);
  cache_->flush_dirty(2);
  io_.complete_all(*cache_);
  flushed = cache_->take_flushed();
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_TRUE(flushed[0].status.ok());
  check();
}

TEST_F(PageCacheTest, ReadAheadStartsReadsThatLaterRequestsJoin) {
  make_cache(8);
  put_on_disk(1, 16);
  EXPECT_EQ(cache_->read_ahead(1, 4, 4), 4u);
  EXPECT_EQ(io_.reads_started, 4u);
  EXPECT_EQ(cache_->read_ahead(1, 4, 4), 0u);  // already on their way
  Result<PageGrant> grant = cache_->request_page(PageId{1, 5}, PageIntent::kRead, 1);
  ASSERT_TRUE(grant.ok());
  EXPECT_FALSE(grant->ready);
  io_.complete_all(*cache_);
  std::vector<PageReady> ready = cache_->take_ready();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(page_version(ready[0].page.data), 5u);
  cache_->unpin(ready[0].page, PageIntent::kRead);
  PageRef hit = pin(PageId{1, 7});
  EXPECT_EQ(io_.reads_started, 4u);
  cache_->unpin(hit, PageIntent::kRead);
  const PageCacheStats stats = cache_->stats();
  EXPECT_EQ(stats.read_ahead_pages, 4u);
  EXPECT_EQ(stats.page_requests_wait_queue, 1u);
  EXPECT_EQ(stats.page_requests_direct_return, 1u);
  check();
}

TEST_F(PageCacheTest, DropFileForgetsItsPages) {
  make_cache(4);
  put_on_disk(1, 4);
  PageRef page = pin(PageId{1, 0}, PageIntent::kUpdate);
  cache_->mark_dirty(page, 0);
  EXPECT_TRUE(cache_->drop_file(1).is(ErrorCode::kTemporary));
  cache_->unpin(page, PageIntent::kUpdate);
  EXPECT_TRUE(cache_->drop_file(1).ok());
  EXPECT_EQ(cache_->stats().frames_in_use, 0u);
  EXPECT_EQ(cache_->stats().pages_dirty, 0u);
  check();
}

// A long sequential scan (each page pinned once per row, in a burst) does not push the
// hot working set out: afterwards every hot page is still a hit.
TEST_F(PageCacheTest, ScanDoesNotEvictTheHotSet) {
  constexpr uint32_t kFrames = 64, kHot = 16, kScanPages = 640, kRowsPerPage = 4;
  make_cache(kFrames);
  put_on_disk(1, kHot);
  put_on_disk(2, kScanPages);
  for (int round = 0; round < 4; ++round) {
    for (uint32_t p = 0; p < kHot; ++p) cache_->unpin(pin(PageId{1, p}), PageIntent::kRead);
  }
  for (uint32_t p = 0; p < kScanPages; ++p) {
    if (p % 8 == 0) cache_->read_ahead(2, p, 8);
    for (uint32_t row = 0; row < kRowsPerPage; ++row) {
      cache_->unpin(pin(PageId{2, p}), PageIntent::kRead);
      // The hot set keeps being used now and then during the scan.
      if (row == 0 && p % 16 == 0) cache_->unpin(pin(PageId{1, p / 16 % kHot}), PageIntent::kRead);
    }
  }
  io_.complete_all(*cache_);
  (void)cache_->take_ready();
  const uint64_t reads_before = io_.reads_started;
  for (uint32_t p = 0; p < kHot; ++p) {
    Result<PageGrant> grant = cache_->request_page(PageId{1, p}, PageIntent::kRead, 1);
    ASSERT_TRUE(grant.ok());
    EXPECT_TRUE(grant->ready) << "hot page " << p << " was evicted by the scan";
    if (grant->ready) cache_->unpin(grant->page, PageIntent::kRead);
  }
  EXPECT_EQ(io_.reads_started, reads_before);
  check();
}

}  // namespace
}  // namespace duo::storage
