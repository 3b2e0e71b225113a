// The undo stream written chunk by chunk into a ring of undofile pages and read back at
// restart: across many laps of the ring, checkpoints releasing space, and torn newest
// pages.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "storage/disk/memory_page_access.h"
#include "storage/disk/undo_log.h"
#include "storage/disk/undo_ring.h"

namespace duo::storage::disk {
namespace {

TEST(UndoRing, ChunksGoRoundTheFilesSkippingHeaderPages) {
  UndoRing ring({{3, 4}, {7, 3}});
  ASSERT_EQ(ring.ring_pages(), 5u);
  EXPECT_EQ(ring.capacity_bytes(), 4u * kUndoChunkBytes);
  const DiskPageId want[] = {{3, 1}, {3, 2}, {3, 3}, {7, 1}, {7, 2}, {3, 1}, {3, 2}};
  for (uint64_t c = 0; c < std::size(want); ++c) EXPECT_EQ(ring.page_of_chunk(c * kUndoChunkBytes), want[c]) << c;
}

TEST(UndoRing, NeverUsedRingIsAnEmptyLog) {
  MemoryPageAccess pages;
  pages.add_file(1, 4);
  UndoRing ring({{1, 4}});
  const RecoveredUndo r = read_undo_ring(ring, [&](DiskPageId id) { return pages.page(id); });
  EXPECT_TRUE(r.stream.empty());
  EXPECT_EQ(r.next_lsn, 1u);
}

TEST(UndoRing, StreamSurvivesLapsCheckpointsAndTornNewestPages) {
  struct Appended {
    uint64_t lsn;
    uint64_t end;  // stream offset past the record
    std::vector<uint8_t> before;
  };
  size_t checks = 0, torn_checks = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    MemoryPageAccess pages;
    pages.add_file(3, 6);
    pages.add_file(4, 5);
    const UndoRing ring({{3, 6}, {4, 5}});
    UndoLog log(ring.capacity_bytes(), 1);
    std::vector<Appended> all;
    uint64_t flushed = 0;
    uint64_t released_lsn = 0;
    auto flush = [&] {
      for (uint64_t c = flushed - flushed % kUndoChunkBytes; c < log.end_offset(); c += kUndoChunkBytes) {
        const DiskPageId id = ring.page_of_chunk(c);
        write_undo_chunk(pages.page(id), id, log.chunk(c));
      }
      flushed = log.end_offset();
    };
    for (int step = 0; step < 500; ++step) {
      const uint32_t pick = static_cast<uint32_t>(rng() % 100);
      const uint32_t size = pick < 70   ? static_cast<uint32_t>(rng() % 200)
                            : pick < 95 ? 200 + static_cast<uint32_t>(rng() % 5000)
                                        : 5000 + static_cast<uint32_t>(rng() % 25000);
      if (!log.reserve(undo_record_bytes(size)).ok()) {
        // Full: a checkpoint makes all but the newest few records unneeded.
        flush();
        released_lsn = all[all.size() - std::min<size_t>(3, all.size())].lsn;
        log.release_through(released_lsn);
        ASSERT_TRUE(log.reserve(undo_record_bytes(size)).ok());
      }
      std::vector<uint8_t> before(size);
      for (auto& b : before) b = static_cast<uint8_t>(rng());
      UndoRecord rec;
      rec.type = UndoType::kEntryUpdate;
      rec.page = {9, static_cast<uint32_t>(step)};
      rec.slot = static_cast<uint32_t>(rng() % 4096);
      rec.before = before;
      const uint64_t lsn = log.append(rec);
      all.push_back({lsn, log.end_offset(), std::move(before)});
      if (rng() % 4 == 0) flush();
      if (rng() % 25 != 0 || flushed == 0) continue;

      // Crash: read the ring back, maybe with the newest page torn.
      const uint64_t head = (flushed - 1) - (flushed - 1) % kUndoChunkBytes;
      const DiskPageId head_page = ring.page_of_chunk(head);
      const bool torn = rng() % 3 == 0;
      const MemoryPageAccess::PageBytes saved = pages.copy(head_page);
      if (torn) pages.page(head_page)[kDiskPageHeaderBytes + kUndoChunkHeaderBytes] ^= 0x10;
      const RecoveredUndo r = read_undo_ring(ring, [&](DiskPageId id) { return pages.page(id); });
      pages.store(head_page, saved);
      // What must be there: every record flushed (or, torn, every record before the
      // newest chunk) newer than the last checkpoint, newest first.
      const uint64_t limit = torn ? head : flushed;
      size_t i = all.size();
      while (i > 0 && all[i - 1].end > limit) --i;
      if (i == 0 || all[i - 1].lsn <= released_lsn) continue;  // nothing needed survives
      ASSERT_EQ(r.start_offset + r.stream.size(), all[i - 1].end);
      EXPECT_EQ(r.next_lsn, all[i - 1].lsn + 1);
      UndoReader reader(r.stream);
      for (; i > 0 && all[i - 1].lsn > released_lsn; --i) {
        auto got = reader.next();
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        ASSERT_EQ(got->lsn, all[i - 1].lsn);
        ASSERT_EQ(std::vector<uint8_t>(got->before.begin(), got->before.end()), all[i - 1].before);
      }
      ++checks;
      torn_checks += torn;
    }
  }
  EXPECT_GT(checks, 100u);
  EXPECT_GT(torn_checks, 20u);
}

}  // namespace
}  // namespace duo::storage::disk
