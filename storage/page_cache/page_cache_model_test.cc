// PageCache against a reference model, under random operations and random IO completion
// order (seeded; DUO_PAGE_CACHE_SEEDS=N for longer campaigns, default 40 seeds).
//
// Many operations run at once, each pinning several pages (read or update) one after
// another in a cache much smaller than the data, holding them for a while, changing the
// updated ones (a new version under a new undo LSN), then unpinning all. Reads, writes and
// undo flushes complete in random order; checkpoints, read-ahead and corrupted reads are
// mixed in. Checked throughout:
//   - every page handed out holds exactly the bytes of its newest version;
//   - a pinned frame is never reused for another page (no read lands in it);
//   - the write-ahead rule: no page is written with an LSN above the durable undo LSN;
//   - a checkpoint flush, once reported, has every page's newest version (as of its
//     request) on disk;
//   - no deadlock: once new operations stop, every operation finishes or is refused
//     with kTemporary, and the cache ends with no pins and nothing in flight;
//   - the cache's bookkeeping (check_invariants) after every step and the statistics'
//     sums against what the fake disk saw.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ndb-kernel/common/logging.h"
#include "storage/memory/test_memory.h"
#include "storage/page_cache/page_cache.h"
#include "storage/page_cache/page_cache_test_io.h"

namespace duo::storage {
namespace {

using testing::FakeDiskIo;
using testing::FakeUndo;
using testing::fill_page;
using testing::page_version;

constexpr uint32_t kFiles = 2;
constexpr uint32_t kPagesPerFile = 48;
constexpr uint32_t kFrames = 10;
constexpr uint32_t kOpsMax = 6;

struct Op {
  uint64_t token = 0;
  std::vector<std::pair<PageId, PageIntent>> pages;  // to pin, in order
  std::vector<PageRef> pinned;                       // granted so far
  bool waiting = false;
  uint32_t hold_steps = 0;
};

class Model {
 public:
  explicit Model(uint64_t seed) : random_(seed) {
    memory_ = make_test_memory(kFrames + 2);
    PageCacheConfig config;
    config.frames_max = kFrames;
    config.writes_in_flight_max = 3;
    config.frame_waiters_max = 4;
    cache_ = std::move(PageCache::create(*memory_, config, io_, undo_)).value();
    for (uint32_t file = 0; file < kFiles; ++file) {
      for (uint32_t page = 0; page < kPagesPerFile; ++page) {
        const PageId id{file, page};
        if (page % 7 == 3) continue;  // never written: reads as an unformatted page
        std::vector<uint8_t> bytes(kPageSize);
        fill_page(bytes.data(), id, 0);
        io_.disk[id.key()] = std::move(bytes);
        version_[id.key()] = 0;
      }
    }
  }

  uint32_t pick(uint32_t n) { return static_cast<uint32_t>(random_() % n); }

  void run(uint32_t steps) {
    for (uint32_t step = 0; step < steps; ++step) {
      this->step(true);
      if (::testing::Test::HasFatalFailure()) return;
    }
    // Drain: no new operations; everything must come to an end.
    for (uint32_t step = 0; step < 20000; ++step) {
      if (ops_.empty() && io_.pending.empty() && undo_.durable >= undo_.requested &&
          cache_->stats().frame_waiters == 0) {
        break;
      }
      this->step(false);
      if (::testing::Test::HasFatalFailure()) return;
    }
    ASSERT_TRUE(ops_.empty()) << ops_.size() << " operations never finished (deadlock)";
    ASSERT_TRUE(io_.pending.empty());
    cache_->flush_dirty(999999);
    while (!io_.pending.empty() || undo_.durable < undo_.requested) {
      undo_.make_durable(*cache_);
      io_.complete_all(*cache_);
    }
    collect();
    const PageCacheStats stats = cache_->stats();
    final_stats_ = stats;
    EXPECT_EQ(stats.frames_pinned, 0u);
    EXPECT_EQ(stats.pages_dirty, 0u);
    EXPECT_EQ(stats.page_requests, stats.page_requests_direct_return + stats.page_requests_wait_io +
                                       stats.page_requests_wait_queue + stats.page_requests_refused);
    EXPECT_EQ(stats.pages_written, io_.writes_done);
    EXPECT_EQ(stats.pages_read + stats.checksum_errors, io_.reads_done);
    EXPECT_EQ(stats.checksum_errors, corruptions_);
    EXPECT_GT(finished_, 0u);
    // Every page's newest version is on disk.
    for (const auto& [key, version] : version_) {
      auto it = io_.disk.find(key);
      ASSERT_NE(it, io_.disk.end());
      EXPECT_EQ(page_version(it->second.data()), version);
    }
  }

  uint64_t finished_ = 0;
  uint64_t refused_ = 0;
  PageCacheStats final_stats_;

 private:
  void step(bool new_ops) {
    const uint32_t action = pick(100);
    if (action < 25 && new_ops && ops_.size() < kOpsMax) {
      start_op();
    } else if (action < 60 && !io_.pending.empty()) {
      const size_t index = pick(static_cast<uint32_t>(io_.pending.size()));
      if (!io_.pending[index].write && pick(50) == 0) {
        io_.corrupt_next_read = true;
        ++corruptions_;
      }
      if (io_.pending[index].write) check_write_ahead(io_.pending[index]);
      if (!io_.pending[index].write) check_not_pinned(io_.pending[index].frame);
      io_.complete(*cache_, index);
    } else if (action < 68 && undo_.durable < undo_.requested) {
      undo_.make_durable(*cache_);
    } else if (action < 70 && new_ops) {
      flush_versions_[next_flush_] = version_;
      cache_->flush_dirty(next_flush_++);
    } else if (action < 72 && new_ops) {
      cache_->read_ahead(pick(kFiles), pick(kPagesPerFile), 1 + pick(6));
    } else {
      advance_ops();
    }
    collect();
    Status invariants = cache_->check_invariants();
    ASSERT_TRUE(invariants.ok()) << invariants.to_string();
  }

  void start_op() {
    Op op;
    op.token = next_token_++;
    const uint32_t count = 1 + pick(4);
    std::set<uint64_t> chosen;
    while (op.pages.size() < count) {
      const PageId id{pick(kFiles), pick(kPagesPerFile)};
      if (!chosen.insert(id.key()).second) continue;
      const uint32_t kind = pick(10);
      const PageIntent intent = kind < 5 ? PageIntent::kRead : PageIntent::kUpdate;
      op.pages.emplace_back(id, intent);
    }
    op.hold_steps = pick(6);
    ops_[op.token] = std::move(op);
  }

  // Each operation that is not waiting asks for its next page, or finishes.
  void advance_ops() {
    std::vector<uint64_t> tokens;
    for (const auto& [token, op] : ops_) tokens.push_back(token);
    for (uint64_t token : tokens) {
      auto it = ops_.find(token);
      if (it == ops_.end()) continue;
      Op& op = it->second;
      if (op.waiting) continue;
      if (op.pinned.size() < op.pages.size()) {
        const auto [id, intent] = op.pages[op.pinned.size()];
        Result<PageGrant> grant = cache_->request_page(id, intent, token);
        if (!grant.ok()) {
          ASSERT_TRUE(grant.status().is(ErrorCode::kTemporary)) << grant.status().to_string();
          abort_op(op);
          continue;
        }
        if (grant->ready) {
          granted(op, grant->page);
        } else {
          op.waiting = true;
        }
        continue;
      }
      if (op.hold_steps > 0) {
        --op.hold_steps;
        continue;
      }
      finish_op(op);
    }
  }

  void granted(Op& op, const PageRef& page) {
    const auto [id, intent] = op.pages[op.pinned.size()];
    ASSERT_TRUE(page.valid());
    ASSERT_EQ(page.id, id);
    check_contents(page);
    op.pinned.push_back(page);
  }

  void check_contents(const PageRef& page) {
    auto it = version_.find(page.id.key());
    if (it == version_.end()) {
      // Never written anywhere: all zeros.
      for (size_t at = 0; at < kPageSize; at += 4096) ASSERT_EQ(page.data[at], 0) << at;
      ASSERT_EQ(page_version(page.data), 0u);
      ASSERT_EQ(page_stored_crc(page.data), 0u);
      return;
    }
    ASSERT_EQ(page_version(page.data), it->second)
        << "page (" << page.id.file_no << "," << page.id.page_no << ") holds the wrong bytes";
    ASSERT_EQ(page_name(page.data), page.id);
  }

  void finish_op(Op& op) {
    for (size_t i = 0; i < op.pinned.size(); ++i) {
      const PageRef& page = op.pinned[i];
      const PageIntent intent = op.pages[i].second;
      if (intent != PageIntent::kRead) {
        const uint64_t version = ++version_[page.id.key()];
        fill_page(page.data, page.id, version);
        const uint64_t lsn = ++lsn_;
        cache_->mark_dirty(page, lsn);
        page_lsn_[page.id.key()] = lsn;
      }
      cache_->unpin(page, intent);
    }
    ++finished_;
    ops_.erase(op.token);
  }

  void abort_op(Op& op) {
    for (size_t i = 0; i < op.pinned.size(); ++i) cache_->unpin(op.pinned[i], op.pages[i].second);
    ++refused_;
    ops_.erase(op.token);
  }

  void collect() {
    for (PageReady& ready : cache_->take_ready()) {
      auto it = ops_.find(ready.token);
      ASSERT_NE(it, ops_.end()) << "a PageReady for no waiting operation";
      Op& op = it->second;
      ASSERT_TRUE(op.waiting);
      ASSERT_EQ(ready.id, op.pages[op.pinned.size()].first);
      op.waiting = false;
      if (!ready.status.ok()) {
        ASSERT_TRUE(ready.status.is(ErrorCode::kTemporary) || ready.status.is(ErrorCode::kCorruption))
            << ready.status.to_string();
        if (ready.status.is(ErrorCode::kCorruption)) {
          ASSERT_GT(corruptions_, 0u);
        }
        abort_op(op);
        continue;
      }
      granted(op, ready.page);
    }
    for (const FlushDone& done : cache_->take_flushed()) {
      ASSERT_TRUE(done.status.ok());
      auto it = flush_versions_.find(done.token);
      if (it == flush_versions_.end()) continue;  // the final flush
      for (const auto& [key, version] : it->second) {
        ASSERT_GE(page_version(io_.disk.at(key).data()), version)
            << "flush " << done.token << " reported before a page reached disk";
      }
      flush_versions_.erase(it);
    }
  }

  void check_write_ahead(const FakeDiskIo::Pending& write) {
    ASSERT_LE(page_lsn(write.written.data()), undo_.durable) << "write-ahead rule broken";
  }

  void check_not_pinned(const uint8_t* frame) {
    for (const auto& [token, op] : ops_) {
      for (const PageRef& page : op.pinned) {
        ASSERT_NE(page.data, frame) << "a read into a pinned frame";
      }
    }
  }

  std::mt19937_64 random_;
  FakeDiskIo io_;
  FakeUndo undo_;
  std::unique_ptr<GlobalMemory> memory_;
  std::unique_ptr<PageCache> cache_;
  std::map<uint64_t, Op> ops_;
  std::map<uint64_t, uint64_t> version_;   // page key -> newest version
  std::map<uint64_t, uint64_t> page_lsn_;  // page key -> LSN of the newest change
  std::map<uint64_t, std::map<uint64_t, uint64_t>> flush_versions_;
  uint64_t next_token_ = 1;
  uint64_t next_flush_ = 1;
  uint64_t lsn_ = 0;
  uint64_t corruptions_ = 0;
};

uint32_t seeds() {
  const char* text = std::getenv("DUO_PAGE_CACHE_SEEDS");
  return text != nullptr ? static_cast<uint32_t>(std::strtoul(text, nullptr, 10)) : 40;
}

TEST(PageCacheModel, RandomOperationsAgainstTheModel) {
  uint64_t finished = 0, refused = 0;
  PageCacheStats sum;
  for (uint32_t seed = 1; seed <= seeds(); ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ScopedLogCapture quiet(LogLevel::kError);  // the injected corruptions are logged
    Model model(seed);
    model.run(3000);
    if (::testing::Test::HasFailure()) return;
    finished += model.finished_;
    refused += model.refused_;
    const PageCacheStats& s = model.final_stats_;
    sum.page_requests_wait_io += s.page_requests_wait_io;
    sum.page_requests_wait_queue += s.page_requests_wait_queue;
    sum.page_requests_refused += s.page_requests_refused;
    sum.waiters_refused += s.waiters_refused;
    sum.log_waits += s.log_waits;
    sum.read_ahead_pages += s.read_ahead_pages;
    sum.evictions += s.evictions;
    sum.pages_written_lcp += s.pages_written_lcp;
    sum.checksum_errors += s.checksum_errors;
  }
  // The runs reach every path the checks are about.
  EXPECT_GT(sum.page_requests_wait_io, 0u);
  EXPECT_GT(sum.page_requests_wait_queue, 0u);
  EXPECT_GT(sum.page_requests_refused + sum.waiters_refused, 0u);
  EXPECT_GT(sum.log_waits, 0u);
  EXPECT_GT(sum.read_ahead_pages, 0u);
  EXPECT_GT(sum.evictions, 0u);
  EXPECT_GT(sum.pages_written_lcp, 0u);
  EXPECT_GT(sum.checksum_errors, 0u);
  std::printf("model: %llu ops finished, %llu refused; waits io %llu queue %llu; refused %llu+%llu; "
              "log waits %llu\n",
              (unsigned long long)finished, (unsigned long long)refused,
              (unsigned long long)sum.page_requests_wait_io,
              (unsigned long long)sum.page_requests_wait_queue,
              (unsigned long long)sum.page_requests_refused, (unsigned long long)sum.waiters_refused,
              (unsigned long long)sum.log_waits);
  // The small cache must both serve operations and, at times, refuse them.
  EXPECT_GT(finished, 0u);
  EXPECT_GT(refused, 0u);
}

}  // namespace
}  // namespace duo::storage
