// Fragment with disk parts (storage/disk over in-memory datafiles): every write path
// against a model with random aborts and several operations per row and transaction,
// space accounting back to zero, rows that grow and move, tablespace full and recovery
// from it, the redo sink's full rows, and "HEAD" reads and scans that touch no disk page.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <random>

#include "storage/disk/disk_test_support.h"
#include "storage/fragment/fragment.h"
#include "storage/scan/filter.h"

namespace duo::storage {
namespace {

// Counts every page the fragment's disk code touches (the page cache's requests, here).
class CountingPages final : public disk::DiskPageAccess {
 public:
  explicit CountingPages(disk::DiskPageAccess* inner) : inner_(inner) {}
  uint8_t* page(disk::DiskPageId id) override {
    ++accesses;
    return inner_->page(id);
  }
  void mark_dirty(disk::DiskPageId id) override { inner_->mark_dirty(id); }
  uint64_t accesses = 0;

 private:
  disk::DiskPageAccess* inner_;
};

constexpr uint16_t kId = 0, kK = 1, kNote = 2, kSmall = 3, kTag = 4;

struct ModelRow {
  int64_t k = 0;
  std::optional<std::string> note;   // VARBINARY(4096) STORAGE DISK
  std::optional<std::string> small;  // VARCHAR(100) STORAGE DISK
  std::string tag;                   // VARCHAR(20), memory
  friend bool operator==(const ModelRow&, const ModelRow&) = default;
};

class FragmentDiskTest : public ::testing::Test {
 protected:
  // A tablespace of one datafile of `file_pages` pages in extents of 4 pages.
  void make(uint32_t file_pages) {
    fragment_.reset();  // before the memory and disk it uses
    GlobalMemoryConfig mc;
    mc.total_bytes = 4096 * kPageSize;
    mc.prefault = false;
    mc.areas[static_cast<size_t>(MemoryArea::kTransactionMemory)].reserved_pages = 64;
    memory_ = std::move(GlobalMemory::create(mc)).value();
    schema_.name = "t";
    schema_.columns = {{"id", ColumnType::kInt, false, false},
                       {"k", ColumnType::kBigInt, false, false},
                       {"note", ColumnType::kVarbinary, false, true, 4096},
                       {"small", ColumnType::kVarchar, false, true, 100},
                       {"tag", ColumnType::kVarchar, false, false, 20}};
    schema_.columns[kNote].storage_disk = true;
    schema_.columns[kSmall].storage_disk = true;
    schema_.primary_key = {kId};
    schema_.ordered_indexes = {{"k_idx", {kK}, false}};
    ASSERT_TRUE(schema_.validate().ok());
    rig_ = std::make_unique<disk::testing::DiskRig>(1, file_pages, 4, 64u << 20);
    counting_ = std::make_unique<CountingPages>(&rig_->pages);
    FragmentDisk d;
    d.tablespace = rig_->tablespace.get();
    d.undo = rig_->undo.get();
    d.pages = counting_.get();
    d.owner = {7, 0};
    d.resident = [](disk::DiskPageId) { return true; };  // in-memory datafiles: all resident
    fragment_ = std::move(Fragment::create(&schema_, memory_.get(), &d)).value();
    ASSERT_TRUE(fragment_->keeps_disk_parts());
  }

  std::string i32(int32_t v) const { return encode_int(schema_.columns[kId], v); }
  AttrValues key(int32_t id) const {
    AttrValues a;
    a.add(kId, i32(id));
    return a;
  }
  AttrValues full_row(int32_t id, const ModelRow& r) const {
    AttrValues a;
    a.add(kId, i32(id));
    a.add(kK, encode_int(schema_.columns[kK], r.k));
    if (r.note)
      a.add(kNote, *r.note);
    else
      a.add_null(kNote);
    if (r.small)
      a.add(kSmall, *r.small);
    else
      a.add_null(kSmall);
    a.add(kTag, r.tag);
    return a;
  }
  ModelRow decode(const AttrValues& v) const {
    ModelRow r;
    for (size_t i = 0; i < v.size(); ++i) {
      const AttrValues::Entry& e = v.entry(i);
      if (e.column == kK) r.k = decode_int(schema_.columns[kK], v.value(i));
      if (e.column == kNote && !e.is_null) r.note = std::string(v.value(i));
      if (e.column == kSmall && !e.is_null) r.small = std::string(v.value(i));
      if (e.column == kTag) r.tag = std::string(v.value(i));
    }
    return r;
  }
  std::optional<ModelRow> read_row(int32_t id, TxId tx = kNullId) {
    AttrValues out;
    const OpResult r = fragment_->read(tx, key(id), LockMode::kCommittedRead, {}, &out);
    if (r.status.is(ErrorCode::kNotFound)) return std::nullopt;
    EXPECT_TRUE(r.status.ok()) << r.status.to_string();
    return decode(out);
  }
  std::map<int32_t, ModelRow> scan_all(const FilterProgram* filter = nullptr,
                                       std::vector<uint16_t> cols = {}) {
    Fragment::ScanSpec spec;
    spec.filter = filter;
    spec.columns = std::move(cols);
    auto scan = std::move(fragment_->open_scan(spec)).value();
    std::map<int32_t, ModelRow> out;
    RowBatch batch;
    while (!scan->done()) {
      batch.clear();
      auto n = scan->next(16, &batch);
      EXPECT_TRUE(n.ok());
      for (size_t i = 0; i < batch.rows(); ++i) {
        AttrValues v;
        const RowBatch::Row row = batch.row(i);
        int32_t id = -1;
        for (size_t c = 0; c < row.size(); ++c) {
          if (row.is_null(c))
            v.add_null(row.column(c));
          else
            v.add(row.column(c), row.value(c));
          if (row.column(c) == kId)
            id = static_cast<int32_t>(decode_int(schema_.columns[kId], row.value(c)));
        }
        out[id] = decode(v);
      }
    }
    return out;
  }
  static std::string bytes(std::mt19937_64& rng, size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>('a' + rng() % 26);
    return s;
  }
  ModelRow random_row(std::mt19937_64& rng) {
    ModelRow r;
    r.k = static_cast<int64_t>(rng() % 1000);
    const uint32_t pick = static_cast<uint32_t>(rng() % 10);
    if (pick != 0)
      r.note = bytes(rng, pick < 5 ? rng() % 64 : pick < 9 ? rng() % 1500 : 3000 + rng() % 1097);
    if (rng() % 3 != 0) r.small = bytes(rng, rng() % 101);
    r.tag = bytes(rng, rng() % 21);
    return r;
  }

  std::unique_ptr<GlobalMemory> memory_;
  TableSchema schema_;
  std::unique_ptr<disk::testing::DiskRig> rig_;
  std::unique_ptr<CountingPages> counting_;
  std::unique_ptr<Fragment> fragment_;
};

TEST_F(FragmentDiskTest, CommittedValuesLiveInDiskPartsAndReadBack) {
  make(64);
  ModelRow r{5, std::string(4000, 'x'), std::string("small"), "tag"};
  TxId tx = *fragment_->begin();
  ASSERT_TRUE(fragment_->insert(tx, full_row(1, r)).status.ok());
  EXPECT_EQ(read_row(1, tx), r);  // own uncommitted version: all in memory
  EXPECT_EQ(fragment_->disk_stats().extents, 1u);
  ASSERT_TRUE(fragment_->commit(tx).ok());
  EXPECT_EQ(read_row(1), r);
  const disk::DiskRowSpace::Usage usage = fragment_->disk_space()->usage();
  EXPECT_EQ(usage.entries, 1u);
  EXPECT_GE(usage.bytes, 4000u + 5u);  // the disk-part columns, not in DataMemory
  EXPECT_LT(fragment_->stats().var_pages, 2u);
}

TEST_F(FragmentDiskTest, HeadReadsAndScansTouchNoDiskPage) {
  make(64);
  std::mt19937_64 rng(3);
  for (int32_t id = 0; id < 40; ++id) {
    TxId tx = *fragment_->begin();
    ASSERT_TRUE(fragment_->insert(tx, full_row(id, random_row(rng))).status.ok());
    ASSERT_TRUE(fragment_->commit(tx).ok());
  }
  const uint64_t before = counting_->accesses;
  // Key reads of memory columns (with and without a lock).
  for (int32_t id = 0; id < 40; ++id) {
    EXPECT_FALSE(fragment_->disk_page_for(OpType::kRead, key(id), {kId, kK, kTag}).has_value());
    AttrValues out;
    ASSERT_TRUE(
        fragment_->read(kNullId, key(id), LockMode::kCommittedRead, {kK, kTag}, &out).status.ok());
    TxId tx = *fragment_->begin();
    out.clear();
    ASSERT_TRUE(fragment_->read(tx, key(id), LockMode::kShared, {kK}, &out).status.ok());
    ASSERT_TRUE(fragment_->commit(tx).ok());
  }
  // A scan projecting memory columns, filtered on a memory column and on a disk
  // column's NULL bit.
  FilterBuilder b;
  auto f =
      b.and_({b.cmp(kK, CmpOp::kGe, encode_int(schema_.columns[kK], 100)), b.is_not_null(kNote)});
  FilterProgram program = std::move(b.build(f)).value();
  ASSERT_TRUE(program.bind(schema_).ok());
  const auto rows = scan_all(&program, {kId, kK, kTag});
  EXPECT_FALSE(rows.empty());
  EXPECT_EQ(counting_->accesses, before) << "a HEAD read or scan touched a disk page";
  // Asking for a disk column does touch pages.
  EXPECT_TRUE(fragment_->disk_page_for(OpType::kRead, key(1), {kNote}).has_value());
  AttrValues out;
  ASSERT_TRUE(
      fragment_->read(kNullId, key(1), LockMode::kCommittedRead, {kNote}, &out).status.ok());
  EXPECT_GT(counting_->accesses, before);
}

TEST_F(FragmentDiskTest, GrowingRowMovesAndSpaceIsHeldUntilTransactionEnd) {
  make(64);
  // Fill one page with mid-sized parts, then grow one of them past the page's room.
  std::map<int32_t, ModelRow> model;
  for (int32_t id = 0; id < 7; ++id) {
    ModelRow r{id, std::string(4000, static_cast<char>('a' + id)), std::nullopt, "t"};
    TxId tx = *fragment_->begin();
    ASSERT_TRUE(fragment_->insert(tx, full_row(id, r)).status.ok());
    ASSERT_TRUE(fragment_->commit(tx).ok());
    model[id] = r;
  }
  const auto page_of = [&](int32_t id) {
    return fragment_->disk_page_for(OpType::kUpdate, key(id), {});
  };
  const auto first_page = page_of(0);
  ASSERT_TRUE(first_page.has_value());
  EXPECT_EQ(page_of(3), first_page);
  TxId tx = *fragment_->begin();
  AttrValues grow;
  grow.add(kId, i32(3));
  grow.add(kSmall, std::string(100, 'g'));
  ASSERT_TRUE(fragment_->update(tx, key(3), grow).status.ok());
  model[3].small = std::string(100, 'g');
  ModelRow big = model[3];
  big.note = std::string(4096, 'B');
  ASSERT_TRUE(fragment_->write(tx, full_row(3, big)).status.ok());  // second op on the row
  const disk::DiskSpaceStats during = fragment_->disk_stats();
  EXPECT_GT(during.reserved_bytes, 0u);
  ASSERT_TRUE(fragment_->commit(tx).ok());
  model[3] = big;
  EXPECT_EQ(fragment_->disk_stats().reserved_bytes, 0u);
  EXPECT_EQ(fragment_->disk_stats().held_bytes, 0u);
  for (const auto& [id, r] : model) EXPECT_EQ(read_row(id), r) << id;
  EXPECT_TRUE(fragment_->disk_space()->check_consistency().ok());
  EXPECT_EQ(fragment_->disk_space()->usage().entries, model.size());
}

TEST_F(FragmentDiskTest, TablespaceFullIsRefusedAtPrepareAndDeleteFreesSpace) {
  // A datafile of few extents: about 16 pages of 32 KiB.
  make(24);
  std::map<int32_t, ModelRow> model;
  int32_t id = 0;
  Status full;
  for (; id < 1000; ++id) {
    ModelRow r{id, std::string(4096, 'f'), std::nullopt, "t"};
    TxId tx = *fragment_->begin();
    const OpResult res = fragment_->insert(tx, full_row(id, r));
    if (!res.status.ok()) {
      full = res.status;
      ASSERT_TRUE(fragment_->abort(tx).ok());
      break;
    }
    ASSERT_TRUE(fragment_->commit(tx).ok());
    model[id] = r;
  }
  ASSERT_TRUE(full.is(ErrorCode::kTablespaceFull)) << full.to_string();
  ASSERT_GT(model.size(), 10u);
  for (const auto& [k, r] : model) EXPECT_EQ(read_row(k), r);  // the data stays intact
  // DELETE frees space: inserts succeed again.
  for (int32_t k = 0; k < 4; ++k) {
    TxId tx = *fragment_->begin();
    ASSERT_TRUE(fragment_->remove(tx, key(k)).status.ok());
    ASSERT_TRUE(fragment_->commit(tx).ok());
    model.erase(k);
  }
  for (int32_t k = 0; k < 4; ++k) {
    ModelRow r{k, std::string(4096, 'n'), std::nullopt, "t"};
    TxId tx = *fragment_->begin();
    ASSERT_TRUE(fragment_->insert(tx, full_row(id + k, r)).status.ok()) << k;
    ASSERT_TRUE(fragment_->commit(tx).ok());
    model[id + k] = r;
  }
  EXPECT_EQ(scan_all(), model);
  EXPECT_TRUE(fragment_->check_disk_parts().ok());
}

TEST_F(FragmentDiskTest, DropGivesTheExtentsBackAfterTheNextCheckpoint) {
  make(64);
  for (int32_t id = 0; id < 60; ++id) {  // 240 KB: two extents of 4 pages
    TxId tx = *fragment_->begin();
    ASSERT_TRUE(
        fragment_->insert(tx, full_row(id, ModelRow{id, std::string(4000, 'd'), std::nullopt, "t"}))
            .status.ok());
    ASSERT_TRUE(fragment_->commit(tx).ok());
  }
  const size_t extents = fragment_->disk_stats().extents;
  const size_t free_before = rig_->tablespace->free_extent_count();
  ASSERT_GT(extents, 1u);
  TxId open = *fragment_->begin();
  EXPECT_TRUE(fragment_->drop_disk_parts().is(ErrorCode::kTransactionState));
  ASSERT_TRUE(fragment_->abort(open).ok());
  ASSERT_TRUE(fragment_->drop_disk_parts().ok());
  fragment_.reset();
  EXPECT_EQ(rig_->tablespace->freed_extent_count(), extents);
  EXPECT_EQ(rig_->tablespace->free_extent_count(), free_before);
  rig_->tablespace->begin_checkpoint();
  rig_->tablespace->end_checkpoint();
  EXPECT_EQ(rig_->tablespace->free_extent_count(), free_before + extents);
}

// Records what commits install, as the redo log does.
class FullRowSink : public ChangeSink {
 public:
  void row_written(const AttrValues& row) override { written.push_back(row); }
  void row_deleted(const AttrValues& key) override { deleted.push_back(key); }
  std::vector<AttrValues> written, deleted;
};

TEST_F(FragmentDiskTest, RedoSinkSeesTheDiskColumns) {
  make(64);
  FullRowSink sink;
  fragment_->set_change_sink(&sink);
  ModelRow r{1, std::string(3000, 'r'), std::string("s"), "t"};
  TxId tx = *fragment_->begin();
  ASSERT_TRUE(fragment_->insert(tx, full_row(9, r)).status.ok());
  ASSERT_TRUE(fragment_->commit(tx).ok());
  ASSERT_EQ(sink.written.size(), 1u);
  EXPECT_EQ(decode(sink.written[0]), r);
  tx = *fragment_->begin();
  AttrValues change;
  change.add(kId, i32(9));
  change.add(kK, encode_int(schema_.columns[kK], 2));
  ASSERT_TRUE(fragment_->update(tx, key(9), change).status.ok());
  ASSERT_TRUE(fragment_->commit(tx).ok());
  r.k = 2;
  ASSERT_EQ(sink.written.size(), 2u);
  EXPECT_EQ(decode(sink.written[1]), r);
  fragment_->set_change_sink(nullptr);
}

// Random transactions of one to four operations (insert, update, write, delete,
// interpreted update of a memory column), each operation sometimes aborted alone, the
// whole transaction sometimes aborted, against a model; every row and a scan compared
// after each transaction, space accounting checked, and everything deleted at the end
// leaves no disk entry and no reservation.
TEST_F(FragmentDiskTest, RandomTransactionsMatchModel) {
  const int seeds = std::getenv("DUO_FRAGMENT_DISK_SEEDS")
                        ? std::atoi(std::getenv("DUO_FRAGMENT_DISK_SEEDS"))
                        : 3;
  for (int seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    make(256);
    std::mt19937_64 rng(seed);
    std::map<int32_t, ModelRow> committed;
    constexpr int32_t kKeys = 60;
    for (int round = 0; round < 400; ++round) {
      TxId tx = *fragment_->begin();
      std::map<int32_t, ModelRow> view = committed;
      const int ops = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < ops; ++i) {
        const int32_t id = static_cast<int32_t>(rng() % kKeys);
        const bool exists = view.count(id) > 0;
        const std::map<int32_t, ModelRow> before = view;
        OpResult res;
        const uint32_t kind = static_cast<uint32_t>(rng() % 5);
        if (!exists || kind == 0) {
          ModelRow r = random_row(rng);
          res = kind == 0 ? fragment_->write(tx, full_row(id, r))
                          : fragment_->insert(tx, full_row(id, r));
          if (res.status.ok())
            view[id] = r;
          else
            ASSERT_TRUE(res.status.is(ErrorCode::kDuplicateKey)) << res.status.to_string();
        } else if (kind == 1) {
          res = fragment_->remove(tx, key(id));
          ASSERT_TRUE(res.status.ok()) << res.status.to_string();
          view.erase(id);
        } else if (kind == 2) {
          InterpretedUpdate program;
          program.add(kK, 7);
          ASSERT_TRUE(program.bind(schema_).ok());
          res = fragment_->interpreted_update(tx, key(id), program);
          ASSERT_TRUE(res.status.ok()) << res.status.to_string();
          view[id].k += 7;
        } else {
          ModelRow r = random_row(rng);
          AttrValues change;
          change.add(kId, i32(id));
          ModelRow& m = view[id];
          if (rng() % 2) {
            change.add(kNote, *(r.note ? r.note : (r.note = std::string())));
            m.note = r.note;
          }
          if (rng() % 2) {
            if (r.small)
              change.add(kSmall, *r.small);
            else
              change.add_null(kSmall);
            m.small = r.small;
          }
          change.add(kTag, r.tag);
          m.tag = r.tag;
          res = fragment_->update(tx, key(id), change);
          ASSERT_TRUE(res.status.ok()) << res.status.to_string();
        }
        if (res.status.ok() && rng() % 8 == 0) {
          // Abort this operation alone: the row reverts to what the transaction saw.
          ASSERT_TRUE(fragment_->abort_operation(res.op).ok());
          view = before;
        }
      }
      for (const auto& [id, r] : view) ASSERT_EQ(read_row(id, tx), r) << "own view of " << id;
      if (rng() % 5 == 0) {
        ASSERT_TRUE(fragment_->abort(tx).ok());
      } else {
        ASSERT_TRUE(fragment_->commit(tx).ok());
        committed = view;
      }
      const disk::DiskSpaceStats st = fragment_->disk_stats();
      ASSERT_EQ(st.reserved_bytes, 0u);
      ASSERT_EQ(st.held_bytes, 0u);
      ASSERT_EQ(st.live_operations, 0u);
      if (round % 50 == 49) {
        ASSERT_EQ(scan_all(), committed);
        ASSERT_TRUE(fragment_->check_consistency().ok());
        const Status disk_check = fragment_->check_disk_parts();
        ASSERT_TRUE(disk_check.ok()) << disk_check.to_string();
        ASSERT_EQ(fragment_->disk_space()->usage().entries, committed.size());
      }
    }
    for (const auto& [id, r] : committed) ASSERT_EQ(read_row(id), r) << id;
    TxId tx = *fragment_->begin();
    for (const auto& entry : committed)
      ASSERT_TRUE(fragment_->remove(tx, key(entry.first)).status.ok());
    ASSERT_TRUE(fragment_->commit(tx).ok());
    EXPECT_EQ(fragment_->disk_space()->usage().entries, 0u);
    EXPECT_EQ(fragment_->disk_space()->usage().bytes, 0u);
    EXPECT_TRUE(fragment_->disk_space()->check_consistency().ok());
  }
}

}  // namespace
}  // namespace duo::storage
