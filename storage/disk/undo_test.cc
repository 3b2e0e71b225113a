// The restart undo pass against a model: random transactions on two fragments, a
// checkpoint, more transactions (extents allocated, a fragment dropped), undo chunks
// flushed to a ring of undofile pages and data pages written back fuzzily under the
// write-ahead rule, a crash at a random point; the undo read back from the ring must
// bring every page and extent header back to the checkpoint's state, and again after a
// crash during the pass itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "storage/disk/disk_test_support.h"
#include "storage/disk/undo_apply.h"
#include "storage/disk/undo_ring.h"

namespace duo::storage::disk {
namespace {

using testing::DiskTxDriver;
using testing::random_part_size;
using testing::row_bytes;

constexpr uint32_t kFilePages = 80;
constexpr uint32_t kExtentPages = 2;
constexpr uint32_t kFiles[] = {1, 2};
constexpr FragmentOwner kOwnerA{10, 0};
constexpr FragmentOwner kOwnerB{11, 3};

using Disk = std::map<DiskPageId, MemoryPageAccess::PageBytes>;

// One transaction of 1..4 writes on random keys of one fragment, some operations
// aborted, committed or aborted as a whole.
void random_transaction(std::mt19937_64& rng, DiskTxDriver* d) {
  DiskTxDriver::Tx tx;
  const int ops = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < ops; ++i) {
    const uint32_t key = static_cast<uint32_t>(rng() % 40);
    const bool is_delete = d->exists_for(tx, key) && rng() % 4 == 0;
    Status s = d->write(&tx, key, is_delete, is_delete ? std::string() : row_bytes(rng, random_part_size(rng), key));
    if (s.is(ErrorCode::kTablespaceFull) || s.is(ErrorCode::kOutOfUndoSpace)) continue;
    ASSERT_TRUE(s.ok()) << s.to_string();
    if (rng() % 6 == 0) d->abort_op(&tx, tx.ops.size() - 1);
  }
  if (rng() % 5 == 0) d->end(&tx);
  else d->commit(&tx);
}

struct Recovered {
  MemoryPageAccess pages;
  std::unique_ptr<UndoLog> undo;
  std::unique_ptr<Tablespace> tablespace;
  UndoApplyStats stats;
};

// Restart from `disk`: open the files, undo back to `checkpoint_lsn`, read the extents.
std::unique_ptr<Recovered> recover(const Disk& disk, std::span<const uint8_t> undo_log, uint64_t checkpoint_lsn,
                                   uint64_t next_lsn) {
  auto r = std::make_unique<Recovered>();
  for (uint32_t f : kFiles) r->pages.add_file(f, kFilePages);
  for (const auto& [id, bytes] : disk) r->pages.store(id, bytes);
  r->pages.take_dirty();
  r->undo = std::make_unique<UndoLog>(uint64_t{1} << 32, next_lsn);
  r->tablespace = std::make_unique<Tablespace>(1, kExtentPages, &r->pages, r->undo.get());
  for (uint32_t f : kFiles) EXPECT_TRUE(r->tablespace->open_datafile(f, kFilePages).ok());
  Tablespace* list[] = {r->tablespace.get()};
  auto stats = apply_undo_backwards(undo_log, checkpoint_lsn, list, &r->pages);
  EXPECT_TRUE(stats.ok()) << stats.status().to_string();
  if (stats.ok()) r->stats = *stats;
  r->tablespace->scan_extent_headers();
  return r;
}

// The recovered fragment holds exactly the checkpoint's rows, and its accounting agrees
// with its pages and extent headers.
void expect_fragment(Recovered* r, FragmentOwner owner, const std::vector<ExtentId>& extents,
                     const std::map<uint32_t, DiskTxDriver::Committed>& rows) {
  std::vector<ExtentId> owned = r->tablespace->extents_owned_by(owner);
  EXPECT_EQ(std::set<ExtentId>(owned.begin(), owned.end()), std::set<ExtentId>(extents.begin(), extents.end()));
  DiskRowSpace space(owner, r->tablespace.get(), r->undo.get(), &r->pages);
  for (const ExtentId& e : owned) space.attach_extent(e);
  DiskTxDriver d(&space);
  d.committed() = rows;
  d.verify();
  const DiskRowSpace::Usage u = space.usage();
  EXPECT_EQ(u.entries, rows.size());
  EXPECT_EQ(u.bytes, d.model_bytes());
  Status c = space.check_consistency();
  EXPECT_TRUE(c.ok()) << c.to_string();
}

TEST(UndoApply, CrashWithFuzzyWriteBackRestoresTheCheckpoint) {
  const char* env = std::getenv("DUO_UNDO_SEEDS");
  const int seeds = env ? std::atoi(env) : 100;
  size_t applied = 0, not_on_page = 0, drops = 0, continued = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(static_cast<uint64_t>(seed) * 7919);
    MemoryPageAccess cache;
    for (uint32_t f : kFiles) cache.add_file(f, kFilePages);
    // The undofiles: written straight to "disk" (they do not go through the cache).
    MemoryPageAccess undo_disk;
    undo_disk.add_file(20, 100);
    undo_disk.add_file(21, 60);
    const UndoRing ring({{20, 100}, {21, 60}});
    UndoLog undo(ring.capacity_bytes(), 1);
    Tablespace ts(1, kExtentPages, &cache, &undo);
    for (uint32_t f : kFiles) ASSERT_TRUE(ts.open_datafile(f, kFilePages).ok());
    ts.scan_extent_headers();
    auto a = std::make_unique<DiskRowSpace>(kOwnerA, &ts, &undo, &cache);
    auto b = std::make_unique<DiskRowSpace>(kOwnerB, &ts, &undo, &cache);
    DiskTxDriver da(a.get()), db(b.get());

    // The page cache's side: pages dirty in memory, written back in any order once the
    // undo up to their LSN is durable.
    Disk disk;
    std::set<DiskPageId> dirty;
    uint64_t flushed_lsn = 0;
    uint64_t flushed_offset = 0;
    auto flush_undo = [&] {
      for (uint64_t c = flushed_offset - flushed_offset % kUndoChunkBytes; c < undo.end_offset(); c += kUndoChunkBytes) {
        const DiskPageId id = ring.page_of_chunk(c);
        write_undo_chunk(undo_disk.page(id), id, undo.chunk(c));
      }
      flushed_offset = undo.end_offset();
      flushed_lsn = undo.next_lsn() - 1;
    };
    auto collect = [&] {
      for (const DiskPageId& id : cache.take_dirty()) dirty.insert(id);
    };
    auto write_back_some = [&] {
      collect();
      if (rng() % 3 == 0) flush_undo();
      for (auto it = dirty.begin(); it != dirty.end();) {
        if (rng() % 4 == 0 && page_lsn(cache.page(*it)) <= flushed_lsn) {
          disk[*it] = cache.copy(*it);
          it = dirty.erase(it);
        } else {
          ++it;
        }
      }
    };
    auto write_back_all = [&] {
      collect();
      flush_undo();
      for (const DiskPageId& id : dirty) disk[id] = cache.copy(id);
      dirty.clear();
    };
    write_back_all();  // the file headers

    const int before = 10 + static_cast<int>(rng() % 40);
    for (int i = 0; i < before; ++i) {
      random_transaction(rng, rng() % 2 ? &da : &db);
      write_back_some();
    }
    // The checkpoint: every dirty page written, undo from here on kept.
    ts.begin_checkpoint();
    write_back_all();
    ts.end_checkpoint();
    const uint64_t checkpoint_lsn = undo.next_lsn() - 1;
    undo.release_through(checkpoint_lsn);
    const auto rows_a = da.committed();
    const auto rows_b = db.committed();
    const auto extents_a = ts.extents_owned_by(kOwnerA);
    const auto extents_b = ts.extents_owned_by(kOwnerB);

    const int after = 1 + static_cast<int>(rng() % 50);
    const int drop_at = rng() % 3 == 0 ? static_cast<int>(rng() % after) : -1;
    bool b_dropped = false;
    for (int i = 0; i < after; ++i) {
      if (i == drop_at) {
        ASSERT_TRUE(b->drop().ok());
        b_dropped = true;
        ++drops;
      }
      random_transaction(rng, b_dropped || rng() % 2 ? &da : &db);
      write_back_some();
    }
    // Crash: what is on disk is what was written back, and the undo chunks flushed.
    const RecoveredUndo recovered = read_undo_ring(ring, [&](DiskPageId id) { return undo_disk.page(id); });
    EXPECT_EQ(recovered.next_lsn, flushed_lsn + 1);
    const std::vector<uint8_t>& log = recovered.stream;
    // It ends where the last flush ended and agrees with the log in memory.
    ASSERT_EQ(recovered.start_offset + log.size(), flushed_offset);
    const uint64_t from = std::max(recovered.start_offset, undo.start_offset());
    ASSERT_LE(from, flushed_offset);
    EXPECT_TRUE(std::equal(log.begin() + static_cast<std::ptrdiff_t>(from - recovered.start_offset), log.end(),
                           undo.bytes().begin() + static_cast<std::ptrdiff_t>(from - undo.start_offset())));

    auto r = recover(disk, log, checkpoint_lsn, flushed_lsn + 1);
    applied += r->stats.applied;
    not_on_page += r->stats.not_on_page;
    expect_fragment(r.get(), kOwnerA, extents_a, rows_a);
    expect_fragment(r.get(), kOwnerB, extents_b, rows_b);

    // A crash during the undo pass: some of the pages it changed reached disk; the pass
    // runs again from the start over them.
    Disk partly = disk;
    for (const DiskPageId& id : r->pages.take_dirty()) {
      if (rng() % 2) partly[id] = r->pages.copy(id);
    }
    auto again = recover(partly, log, checkpoint_lsn, flushed_lsn + 1);
    expect_fragment(again.get(), kOwnerA, extents_a, rows_a);
    expect_fragment(again.get(), kOwnerB, extents_b, rows_b);

    // Life goes on after the restart: more changes, then everything deleted leaves
    // nothing used, reserved or held.
    DiskRowSpace a2(kOwnerA, again->tablespace.get(), again->undo.get(), &again->pages);
    for (const ExtentId& e : again->tablespace->extents_owned_by(kOwnerA)) a2.attach_extent(e);
    DiskTxDriver d2(&a2);
    d2.committed() = rows_a;
    for (int i = 0; i < 20; ++i) random_transaction(rng, &d2);
    d2.verify();
    DiskTxDriver::Tx tx;
    std::vector<uint32_t> keys;
    for (const auto& [key, c] : d2.committed()) keys.push_back(key);
    for (uint32_t key : keys) ASSERT_TRUE(d2.write(&tx, key, true, {}).ok());
    d2.commit(&tx);
    EXPECT_EQ(a2.usage().entries, 0u);
    EXPECT_EQ(a2.stats().reserved_bytes + a2.stats().held_bytes, 0u);
    Status c = a2.check_consistency();
    EXPECT_TRUE(c.ok()) << c.to_string();
    ++continued;
  }
  // Both kinds of record judgement happened: changes on their page and not.
  EXPECT_GT(applied, 0u);
  EXPECT_GT(not_on_page, 0u);
  EXPECT_GT(drops, 0u);
  EXPECT_EQ(continued, static_cast<size_t>(seeds));
}

TEST(UndoApply, DamagedRecordIsCorruptionNotACrash) {
  testing::DiskRig rig(1, 40, 2, uint64_t{1} << 30);
  DiskRowSpace space({1, 0}, rig.tablespace.get(), rig.undo.get(), &rig.pages);
  DiskTxDriver d(&space);
  std::mt19937_64 rng(1);
  DiskTxDriver::Tx tx;
  ASSERT_TRUE(d.write(&tx, 1, false, row_bytes(rng, 500, 1)).ok());
  d.commit(&tx);
  std::vector<uint8_t> log(rig.undo->bytes().begin(), rig.undo->bytes().end());
  Tablespace* list[] = {rig.tablespace.get()};
  // A log that lacks its oldest records cannot restore the checkpoint.
  const size_t first = undo_record_bytes(0);  // the extent allocation
  const std::vector<uint8_t> truncated(log.begin() + static_cast<std::ptrdiff_t>(first), log.end());
  EXPECT_EQ(apply_undo_backwards(truncated, 0, list, &rig.pages).status().code(), ErrorCode::kCorruption);
  log[log.size() - 20] ^= 1;
  EXPECT_EQ(apply_undo_backwards(log, 0, list, &rig.pages).status().code(), ErrorCode::kCorruption);
}

}  // namespace
}  // namespace duo::storage::disk
