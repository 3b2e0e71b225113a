// NodeDiskSpace: one tablespace and undo log shared by several LDM threads, each with its
// own fragments and row pages, every disk-part call made under the node's lock. Real
// threads: the extent headers must end up naming each extent's one owner, every row
// part must read back, and the extent accounting must add up.
#include "storage/disk/node_disk_space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <set>
#include <thread>

#include "storage/disk/disk_test_support.h"

namespace duo::storage::disk {
namespace {

using testing::DiskTxDriver;
using testing::random_part_size;
using testing::row_bytes;

constexpr uint32_t kTablespace = 3, kLogfileGroup = 2, kTable = 7;
constexpr uint32_t kFilePages = 160, kExtentPages = 4;

struct SharedRig {
  MemoryPageAccess header_pages;  // the owner keeps these pinned in a real node
  NodeDiskSpace space{&header_pages};
  SharedRig() {
    header_pages.add_file(1, kFilePages);
    header_pages.add_file(2, kFilePages);
    NodeDiskSpace::Lock held = space.lock();
    EXPECT_TRUE(space.create_logfile_group(held, kLogfileGroup, 512u << 20).ok());
    EXPECT_TRUE(space.create_tablespace(held, kTablespace, kExtentPages, kLogfileGroup).ok());
    EXPECT_TRUE(space.add_datafile(held, kTablespace, 1, kFilePages).ok());
  }
};

// One LDM instance: its fragments' row pages and their disk row spaces.
struct Instance {
  MemoryPageAccess row_pages;
  std::vector<std::unique_ptr<DiskRowSpace>> spaces;
  std::vector<std::unique_ptr<DiskTxDriver>> drivers;
  size_t commits = 0, full = 0;
};

TEST(NodeDiskSpace, SeveralInstancesShareOneTablespaceUnderTheLock) {
  SharedRig rig;
  constexpr int kInstances = 3, kFragmentsPerInstance = 2, kTransactions = 400;
  std::vector<Instance> instances(kInstances);
  {
    NodeDiskSpace::Lock held = rig.space.lock();
    for (int i = 0; i < kInstances; ++i) {
      Instance& in = instances[i];
      in.row_pages.add_file(1, kFilePages);
      in.row_pages.add_file(2, kFilePages);
      for (int f = 0; f < kFragmentsPerInstance; ++f) {
        const FragmentOwner owner{kTable, static_cast<uint32_t>(i * kFragmentsPerInstance + f)};
        in.spaces.push_back(std::make_unique<DiskRowSpace>(owner, rig.space.tablespace(held, kTablespace),
                                                           rig.space.undo(held), &in.row_pages));
        in.drivers.push_back(std::make_unique<DiskTxDriver>(in.spaces.back().get()));
      }
    }
  }
  std::atomic<bool> second_file_added{false};
  auto run = [&](int i) {
    Instance& in = instances[i];
    std::mt19937_64 rng(static_cast<uint64_t>(i) + 1);
    for (int t = 0; t < kTransactions; ++t) {
      NodeDiskSpace::Lock held = rig.space.lock();
      if (i == 0 && t == kTransactions / 2) {
        // ALTER TABLESPACE ADD DATAFILE while the other instances write.
        ASSERT_TRUE(rig.space.add_datafile(held, kTablespace, 2, kFilePages).ok());
        second_file_added = true;
      }
      DiskTxDriver& d = *in.drivers[rng() % in.drivers.size()];
      DiskTxDriver::Tx tx;
      const int ops = 1 + static_cast<int>(rng() % 3);
      bool failed = false;
      for (int o = 0; o < ops && !failed; ++o) {
        const uint32_t key = static_cast<uint32_t>(rng() % 40);
        const bool del = d.exists_for(tx, key) && rng() % 4 == 0;
        Status s = d.write(&tx, key, del, del ? std::string() : row_bytes(rng, random_part_size(rng), key));
        if (!s.ok()) {
          ASSERT_TRUE(s.is(ErrorCode::kTablespaceFull)) << s.to_string();
          ++in.full;
          failed = true;
        }
      }
      if (failed || rng() % 8 == 0) {
        d.end(&tx);
      } else {
        d.commit(&tx);
        ++in.commits;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kInstances; ++i) threads.emplace_back(run, i);
  for (std::thread& t : threads) t.join();
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  ASSERT_TRUE(second_file_added);

  NodeDiskSpace::Lock held = rig.space.lock();
  Tablespace& ts = *rig.space.tablespace(held, kTablespace);
  std::set<ExtentId> owned;
  size_t owned_count = 0;
  for (int i = 0; i < kInstances; ++i) {
    Instance& in = instances[i];
    EXPECT_GT(in.commits, 0u);
    for (size_t f = 0; f < in.spaces.size(); ++f) {
      in.drivers[f]->verify();
      const FragmentOwner owner{kTable, static_cast<uint32_t>(i * kFragmentsPerInstance + f)};
      const std::vector<ExtentId> mine = ts.extents_owned_by(owner);
      // The headers name exactly the extents this fragment's space holds.
      EXPECT_EQ(mine.size(), in.spaces[f]->stats().extents) << "fragment " << owner.fragment;
      for (const ExtentId& e : mine) EXPECT_TRUE(owned.insert(e).second) << "extent owned twice";
      owned_count += mine.size();
      EXPECT_EQ(in.spaces[f]->stats().reserved_bytes, 0u);
      EXPECT_EQ(in.spaces[f]->stats().live_operations, 0u);
    }
  }
  EXPECT_EQ(owned_count + ts.free_extent_count() + ts.freed_extent_count(), ts.extent_count());
  size_t usage_free = 0, usage_extents = 0;
  for (const NodeDiskSpace::DatafileUsage& u : rig.space.datafile_usage(held)) {
    EXPECT_EQ(u.tablespace_id, kTablespace);
    usage_free += u.free_extents;
    usage_extents += u.extents;
  }
  EXPECT_EQ(usage_free, ts.free_extent_count());
  EXPECT_EQ(usage_extents, ts.extent_count());
  EXPECT_EQ(rig.space.undo(held)->reserved_bytes(), 0u);
}

TEST(NodeDiskSpace, OneLogfileGroupAndKnownFilegroupsOnly) {
  SharedRig rig;
  NodeDiskSpace::Lock held = rig.space.lock();
  EXPECT_TRUE(rig.space.create_logfile_group(held, kLogfileGroup, 1u << 20).ok());  // repeated
  EXPECT_FALSE(rig.space.create_logfile_group(held, kLogfileGroup + 1, 1u << 20).ok());
  EXPECT_TRUE(rig.space.create_tablespace(held, 9, 8, kLogfileGroup + 1).is(ErrorCode::kNotFound));
  EXPECT_TRUE(rig.space.add_datafile(held, 9, 2, kFilePages).is(ErrorCode::kNotFound));
  // A datafile number is unique on the node.
  EXPECT_TRUE(rig.space.create_tablespace(held, 9, 8, kLogfileGroup).ok());
  EXPECT_FALSE(rig.space.add_datafile(held, 9, 1, kFilePages).ok());
  EXPECT_EQ(rig.space.logfile_group_id(held), kLogfileGroup);
}

TEST(NodeDiskSpace, AddedDatafileLeavesFreedExtentsWaitingForACheckpoint) {
  SharedRig rig;
  NodeDiskSpace::Lock held = rig.space.lock();
  Tablespace& ts = *rig.space.tablespace(held, kTablespace);
  UndoLog& undo = *rig.space.undo(held);
  const size_t free_before = ts.free_extent_count();
  ASSERT_TRUE(undo.reserve(Tablespace::kExtentAllocUndoBytes + ts.extent_free_undo_bytes()).ok());
  Result<ExtentId> extent = ts.allocate_extent({kTable, 0});
  ASSERT_TRUE(extent.ok());
  ts.free_extent(*extent);
  ASSERT_EQ(ts.freed_extent_count(), 1u);
  ASSERT_TRUE(rig.space.add_datafile(held, kTablespace, 2, kFilePages).ok());
  EXPECT_EQ(ts.freed_extent_count(), 1u);  // still waiting: undo may give it back
  const size_t file2 = ts.layout_of(2)->extent_count;
  EXPECT_EQ(ts.free_extent_count(), free_before - 1 + file2);
  EXPECT_EQ(ts.free_extent_count(2), file2);
  // The files in use fill first: the next extent still comes from file 1.
  ASSERT_TRUE(undo.reserve(Tablespace::kExtentAllocUndoBytes).ok());
  EXPECT_EQ(ts.allocate_extent({kTable, 1})->file, 1u);
}

TEST(NodeDiskSpaceDeathTest, UseWithoutTheLockStopsTheNode) {
  SharedRig rig;
  EXPECT_DEATH(rig.space.undo(NodeDiskSpace::Lock()), "without its lock");
}

}  // namespace
}  // namespace duo::storage::disk
