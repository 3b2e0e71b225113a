// DiskRowSpace against a reference model: var-sized churn with concurrent transactions,
// several operations per row, per-operation aborts; tablespace full; undo full;
// allocation preferring resident pages; space accounting back to zero.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "storage/disk/disk_test_support.h"

namespace duo::storage::disk {
namespace {

using testing::as_span;
using testing::DiskRig;
using testing::DiskTxDriver;
using testing::random_part_size;
using testing::row_bytes;

int seeds_from_env(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

// Deletes every row, then checks that nothing is used, reserved or held anywhere.
void delete_all_and_expect_empty(DiskTxDriver* d, DiskRowSpace* space, UndoLog* undo) {
  DiskTxDriver::Tx tx;
  std::vector<uint32_t> keys;
  for (const auto& [key, c] : d->committed()) keys.push_back(key);
  for (uint32_t key : keys) ASSERT_TRUE(d->write(&tx, key, true, {}).ok());
  d->commit(&tx);
  EXPECT_TRUE(d->committed().empty());
  const DiskSpaceStats s = space->stats();
  EXPECT_EQ(s.reserved_bytes, 0u);
  EXPECT_EQ(s.held_bytes, 0u);
  EXPECT_EQ(s.live_operations, 0u);
  EXPECT_EQ(undo->reserved_bytes(), 0u);
  const DiskRowSpace::Usage u = space->usage();
  EXPECT_EQ(u.entries, 0u);
  EXPECT_EQ(u.bytes, 0u);
  // Every page is empty again, in the extent headers too (check_consistency compares).
  Status c = space->check_consistency();
  EXPECT_TRUE(c.ok()) << c.to_string();
}

struct ChurnCounts {
  size_t moves = 0, aborted_beside = 0, multi_op_rows = 0, full = 0;
};

// Three interleaved transactions over 250 keys: writes (often several on one row),
// per-operation aborts, commits and aborts; checked against the model throughout.
// A tablespace of `file_pages`-page files may run full: the refused write must leave
// everything as it was.
void churn(int seed, uint32_t file_pages, ChurnCounts* counts) {
  SCOPED_TRACE("seed " + std::to_string(seed) + ", files of " + std::to_string(file_pages) + " pages");
  DiskRig rig(2, file_pages, 4, uint64_t{1} << 32);
  DiskRowSpace space({7, 0}, rig.tablespace.get(), rig.undo.get(), &rig.pages);
  DiskTxDriver d(&space);
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  constexpr uint32_t kKeys = 250;
  std::vector<DiskTxDriver::Tx> txs(3);
  std::vector<bool> open(3, false);
  std::map<uint32_t, int> locked;  // key -> tx holding it
  auto finish = [&](int t, bool commit) {
    std::map<uint32_t, int> per_key;
    for (const auto& op : txs[t].ops) ++per_key[op.key];
    for (const auto& [k, n] : per_key) counts->multi_op_rows += n > 1;
    if (commit) d.commit(&txs[t]);
    else d.end(&txs[t]);
    for (auto it = locked.begin(); it != locked.end();) it = it->second == t ? locked.erase(it) : std::next(it);
    open[t] = false;
    d.verify();
  };
  for (int step = 0; step < 2500; ++step) {
    const int t = static_cast<int>(rng() % 3);
    const uint32_t r = static_cast<uint32_t>(rng() % 100);
    if (!open[t]) {
      open[t] = true;
      continue;
    }
    if (r < 65) {
      // A write: often again on a row this transaction already wrote.
      uint32_t key;
      if (!txs[t].ops.empty() && rng() % 2 == 0) {
        key = txs[t].ops[rng() % txs[t].ops.size()].key;
      } else {
        key = static_cast<uint32_t>(rng() % kKeys);
        auto l = locked.find(key);
        if (l != locked.end() && l->second != t) continue;  // row locked by another
      }
      locked[key] = t;
      const bool exists = d.exists_for(txs[t], key);
      const bool is_delete = exists && rng() % 5 == 0;
      std::string bytes = is_delete ? std::string() : row_bytes(rng, random_part_size(rng), key);
      const DiskSpaceStats before = space.stats();
      const uint64_t undo_reserved = rig.undo->reserved_bytes();
      Status s = d.write(&txs[t], key, is_delete, std::move(bytes));
      if (s.is(ErrorCode::kTablespaceFull)) {
        ++counts->full;
        ASSERT_EQ(space.stats().reserved_bytes, before.reserved_bytes);
        ASSERT_EQ(space.stats().live_operations, before.live_operations);
        ASSERT_EQ(rig.undo->reserved_bytes(), undo_reserved);
        continue;
      }
      ASSERT_TRUE(s.ok()) << s.to_string();
    } else if (r < 75) {
      if (txs[t].ops.empty()) continue;
      d.abort_op(&txs[t], rng() % txs[t].ops.size());  // per-operation abort
    } else if (r < 92) {
      finish(t, true);
    } else {
      finish(t, false);
    }
    if (step % 100 == 0) {
      Status c = space.check_consistency();
      ASSERT_TRUE(c.ok()) << c.to_string();
    }
  }
  for (int t = 0; t < 3; ++t) {
    if (open[t]) finish(t, rng() % 2 == 0);
  }
  Status c = space.check_consistency();
  ASSERT_TRUE(c.ok()) << c.to_string();
  EXPECT_EQ(space.stats().reserved_bytes, 0u);
  EXPECT_EQ(space.stats().held_bytes, 0u);
  EXPECT_EQ(rig.undo->reserved_bytes(), 0u);
  const DiskRowSpace::Usage u = space.usage();
  EXPECT_EQ(u.entries, d.committed().size());
  EXPECT_EQ(u.bytes, d.model_bytes());
  EXPECT_GT(space.stats().extents, 1u);
  counts->moves += d.moves;
  counts->aborted_beside += d.aborted_beside_installed;
  delete_all_and_expect_empty(&d, &space, rig.undo.get());
}

TEST(DiskRowSpace, ChurnAgainstModelWithConcurrentTransactionsAndOpAborts) {
  const int seeds = seeds_from_env("DUO_DISK_SEEDS", 12);
  ChurnCounts counts;
  for (int seed = 1; seed <= seeds; ++seed) churn(seed, 400, &counts);
  // The rare paths ran: rows that moved, and aborted operations beside committed ones.
  EXPECT_GT(counts.moves, 0u);
  EXPECT_GT(counts.aborted_beside, 0u);
  EXPECT_GT(counts.multi_op_rows, 0u);
  EXPECT_EQ(counts.full, 0u);
}

TEST(DiskRowSpace, ChurnInATablespaceThatRunsFull) {
  const int seeds = seeds_from_env("DUO_DISK_SEEDS", 12);
  ChurnCounts counts;
  for (int seed = 1; seed <= seeds; ++seed) churn(seed, 22, &counts);
  EXPECT_GT(counts.full, 0u);
  EXPECT_GT(counts.moves, 0u);
}

TEST(DiskRowSpace, GrowBeyondThePageMovesAndAnAbortedGrowthKeepsItsSpaceUntilTheEnd) {
  DiskRig rig(1, 100, 4, uint64_t{1} << 30);
  DiskRowSpace space({1, 0}, rig.tablespace.get(), rig.undo.get(), &rig.pages);
  DiskTxDriver d(&space);
  std::mt19937_64 rng(5);
  // Two parts share a page; the first then grows beyond what the page has.
  DiskTxDriver::Tx tx;
  ASSERT_TRUE(d.write(&tx, 1, false, row_bytes(rng, 16000, 1)).ok());
  ASSERT_TRUE(d.write(&tx, 2, false, row_bytes(rng, 16000, 2)).ok());
  d.commit(&tx);
  ASSERT_EQ(d.committed()[1].ref.page_id(), d.committed()[2].ref.page_id());
  const DiskRef before = d.committed()[1].ref;
  // op A grows row 1 (moves), op B shrinks it (in place); A is aborted, B commits.
  ASSERT_TRUE(d.write(&tx, 1, false, row_bytes(rng, 30000, 1)).ok());
  const DiskSpaceStats reserved = space.stats();
  EXPECT_GE(reserved.reserved_bytes, 30000u);
  ASSERT_TRUE(d.write(&tx, 1, false, row_bytes(rng, 100, 1)).ok());
  d.abort_op(&tx, 0);
  d.commit(&tx);
  EXPECT_EQ(d.committed()[1].ref, before);  // installed in place
  d.verify();
  EXPECT_EQ(space.stats().reserved_bytes, 0u);
  EXPECT_EQ(space.stats().held_bytes, 0u);
  // Growth beyond the page moves the part; the old place is held until the end.
  ASSERT_TRUE(d.write(&tx, 2, false, row_bytes(rng, kMaxDiskPartBytes, 2)).ok());
  const DiskOpId grow = tx.ops.back().op;
  EXPECT_TRUE(space.pages_for(grow).has_target);
  EXPECT_NE(space.pages_for(grow).target, before.page_id());
  const DiskRef moved = space.install(grow, as_span(tx.ops.back().bytes));
  EXPECT_NE(moved.page_id(), before.page_id());
  EXPECT_GE(space.stats().held_bytes, 16000u);  // row 2's old bytes: not reusable yet
  space.release(grow);
  tx.ops.clear();
  EXPECT_EQ(space.stats().held_bytes, 0u);
  Status c = space.check_consistency();
  EXPECT_TRUE(c.ok()) << c.to_string();
}

TEST(DiskRowSpace, TablespaceFullChangesNothingAndFreeingSpaceHelps) {
  // One datafile of 3 extents of 2 pages.
  DiskRig rig(1, 8, 2, uint64_t{1} << 30);
  ASSERT_EQ(rig.tablespace->extent_count(), 3u);
  DiskRowSpace a({1, 0}, rig.tablespace.get(), rig.undo.get(), &rig.pages);
  DiskTxDriver d(&a);
  std::mt19937_64 rng(9);
  for (uint32_t key = 0; key < 6; ++key) {
    DiskTxDriver::Tx tx;
    ASSERT_TRUE(d.write(&tx, key, false, row_bytes(rng, 20000, key)).ok());
    d.commit(&tx);
  }
  EXPECT_EQ(rig.tablespace->free_extent_count(), 0u);
  auto snapshot = [&] {
    std::vector<MemoryPageAccess::PageBytes> out;
    for (uint32_t p = 0; p < 8; ++p) out.push_back(rig.pages.copy({1, p}));
    return out;
  };
  DiskTxDriver::Tx tx;
  // Small parts still fit beside the big ones.
  ASSERT_TRUE(d.write(&tx, 101, false, row_bytes(rng, 100, 101)).ok());
  d.commit(&tx);
  uint32_t neighbour = 0;
  for (const auto& [key, c] : d.committed()) {
    if (key != 101 && c.ref.page_id() == d.committed()[101].ref.page_id()) neighbour = key;
  }
  const auto pages_before = snapshot();
  const DiskSpaceStats stats_before = a.stats();
  const uint64_t undo_used = rig.undo->used_bytes();
  const uint64_t undo_reserved = rig.undo->reserved_bytes();
  Status full = d.write(&tx, 100, false, row_bytes(rng, 20000, 100));
  EXPECT_EQ(full.code(), ErrorCode::kTablespaceFull);
  EXPECT_EQ(error_info(full.code()).mysql_errno, 1114);
  // Growing the small part's neighbour needs a move, and there is no page for it.
  EXPECT_EQ(d.write(&tx, neighbour, false, row_bytes(rng, kMaxDiskPartBytes, neighbour)).code(),
            ErrorCode::kTablespaceFull);
  EXPECT_TRUE(snapshot() == pages_before);
  EXPECT_EQ(a.stats().reserved_bytes, stats_before.reserved_bytes);
  EXPECT_EQ(a.stats().live_operations, 0u);
  EXPECT_EQ(rig.undo->used_bytes(), undo_used);
  EXPECT_EQ(rig.undo->reserved_bytes(), undo_reserved);
  d.verify();
  // Growth in place still works on a page with room.
  const uint32_t alone = neighbour == 0 ? 1 : 0;
  ASSERT_TRUE(d.write(&tx, alone, false, row_bytes(rng, 25000, alone)).ok());
  d.commit(&tx);
  d.verify();
  // A delete frees a page, but only when its transaction ends.
  ASSERT_TRUE(d.write(&tx, 3, true, {}).ok());
  const DiskOpId del = tx.ops.back().op;
  a.install(del, {});
  DiskTxDriver::Tx other;
  EXPECT_EQ(d.write(&other, 102, false, row_bytes(rng, 20000, 102)).code(), ErrorCode::kTablespaceFull);
  a.release(del);
  tx.ops.clear();
  d.committed().erase(3);
  ASSERT_TRUE(d.write(&other, 102, false, row_bytes(rng, 20000, 102)).ok());
  d.commit(&other);
  d.verify();
  // Another fragment finds no extent until the first is dropped and a checkpoint passed.
  DiskRowSpace b({2, 0}, rig.tablespace.get(), rig.undo.get(), &rig.pages);
  DiskTxDriver db(&b);
  DiskTxDriver::Tx tb;
  EXPECT_EQ(db.write(&tb, 1, false, row_bytes(rng, 100, 1)).code(), ErrorCode::kTablespaceFull);
  ASSERT_TRUE(a.drop().ok());
  EXPECT_EQ(rig.tablespace->freed_extent_count(), 3u);
  EXPECT_EQ(db.write(&tb, 1, false, row_bytes(rng, 100, 1)).code(), ErrorCode::kTablespaceFull);
  rig.tablespace->begin_checkpoint();
  rig.tablespace->end_checkpoint();
  EXPECT_EQ(rig.tablespace->free_extent_count(), 3u);
  ASSERT_TRUE(db.write(&tb, 1, false, row_bytes(rng, 100, 1)).ok());
  db.commit(&tb);
  db.verify();
  Status c = b.check_consistency();
  EXPECT_TRUE(c.ok()) << c.to_string();
}

TEST(DiskRowSpace, OutOfUndoSpaceAtPrepareNeverAtCommit) {
  // Undo for about three 1000-byte deletes.
  DiskRig rig(1, 100, 4, 3 * undo_record_bytes(1000) + 2 * undo_record_bytes(0));
  DiskRowSpace space({1, 0}, rig.tablespace.get(), rig.undo.get(), &rig.pages);
  DiskTxDriver d(&space);
  std::mt19937_64 rng(3);
  uint32_t key = 0;
  Status s;
  for (;; ++key) {
    DiskTxDriver::Tx tx;
    s = d.write(&tx, key, false, row_bytes(rng, 1000, key));
    if (!s.ok()) break;
    d.commit(&tx);
  }
  EXPECT_EQ(s.code(), ErrorCode::kOutOfUndoSpace);
  EXPECT_EQ(error_info(s.code()).mysql_errno, 1297);
  EXPECT_EQ(space.stats().reserved_bytes, 0u);
  EXPECT_EQ(rig.undo->reserved_bytes(), 0u);
  DiskTxDriver::Tx tx;
  EXPECT_EQ(d.write(&tx, 0, true, {}).code(), ErrorCode::kOutOfUndoSpace);  // needs the before-image
  d.verify();
  // A checkpoint makes the records so far unneeded: writes succeed again.
  rig.undo->release_through(rig.undo->next_lsn() - 1);
  ASSERT_TRUE(d.write(&tx, 0, true, {}).ok());
  ASSERT_TRUE(d.write(&tx, key, false, row_bytes(rng, 1000, key)).ok());
  d.commit(&tx);
  d.verify();
  EXPECT_EQ(rig.undo->reserved_bytes(), 0u);
}

TEST(DiskRowSpace, AllocationPrefersResidentPagesThenFreshOnes) {
  DiskRig rig(1, 100, 4, uint64_t{1} << 30);
  DiskRowSpace space({1, 0}, rig.tablespace.get(), rig.undo.get(), &rig.pages);
  DiskTxDriver d(&space);
  std::mt19937_64 rng(4);
  for (uint32_t key = 0; key < 3; ++key) {
    DiskTxDriver::Tx tx;
    ASSERT_TRUE(d.write(&tx, key, false, row_bytes(rng, 20000, key)).ok());
    d.commit(&tx);
  }
  std::set<DiskPageId> used;
  for (const auto& [key, c] : d.committed()) used.insert(c.ref.page_id());
  ASSERT_EQ(used.size(), 3u);
  for (const DiskPageId& want : used) {
    DiskTxDriver::Tx tx;
    ASSERT_TRUE(d.write(&tx, 50, false, row_bytes(rng, 100, 50), [&](DiskPageId id) { return id == want; }).ok());
    EXPECT_EQ(space.pages_for(tx.ops.back().op).target, want);
    EXPECT_FALSE(space.pages_for(tx.ops.back().op).target_fresh);
    d.end(&tx);
  }
  // Nothing resident: a never-formatted page (no read) before a used one.
  DiskTxDriver::Tx tx;
  ASSERT_TRUE(d.write(&tx, 50, false, row_bytes(rng, 100, 50)).ok());
  EXPECT_TRUE(space.pages_for(tx.ops.back().op).target_fresh);
  EXPECT_EQ(used.count(space.pages_for(tx.ops.back().op).target), 0u);
  d.commit(&tx);
  d.verify();
}

TEST(DiskRowSpace, RefusesBadSizesAndRefs) {
  DiskRig rig(1, 100, 4, uint64_t{1} << 30);
  DiskRowSpace space({1, 0}, rig.tablespace.get(), rig.undo.get(), &rig.pages);
  EXPECT_EQ(space.prepare_insert(kMaxDiskPartBytes + 1, {}).status().code(), ErrorCode::kRowTooBig);
  EXPECT_EQ(space.prepare_insert(kMinDiskPartBytes - 1, {}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(space.prepare_update(DiskRef{1, 0, 50}, 100, {}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(space.stats().live_operations, 0u);
  EXPECT_EQ(rig.undo->reserved_bytes(), 0u);
  // The largest part takes a page of its own.
  auto op = space.prepare_insert(kMaxDiskPartBytes, {});
  ASSERT_TRUE(op.ok());
  std::string bytes(kMaxDiskPartBytes, 'x');
  const DiskRef ref = space.install(*op, as_span(bytes));
  space.release(*op);
  EXPECT_EQ(space.part(ref).size(), kMaxDiskPartBytes);
  EXPECT_EQ(DiskRef::decode(ref.encode()), ref);
  Status c = space.check_consistency();
  EXPECT_TRUE(c.ok()) << c.to_string();
}

}  // namespace
}  // namespace duo::storage::disk
