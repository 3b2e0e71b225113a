// A fragment with disk parts over a real PageCache much smaller than the data, driven the
// way the LDM thread drives it (NDB's DBTUP with PGMAN): before a request runs, the page
// it needs is pinned for its holder; a miss parks the request while other transactions
// run; IO completes in random order; a request refused because every frame is pinned
// aborts its transaction (a temporary error), never hangs. Checked against a model:
// every committed row reads back, by key and by a scan that stops at pages not in yet.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <random>

#include "storage/disk/tablespace.h"
#include "storage/disk/undo_log.h"
#include "storage/fragment/fragment.h"
#include "storage/page_cache/cached_page_access.h"
#include "storage/page_cache/page_cache_test_io.h"

namespace duo::storage {
namespace {

constexpr uint16_t kId = 0, kK = 1, kNote = 2;
constexpr uint32_t kFilePages = 96;
constexpr uint32_t kFrames = 8;
constexpr CachedPageAccess::Holder kTablespaceHolder = 0;

class DiskCacheRig {
 public:
  explicit DiskCacheRig(uint64_t seed) : rng_(seed) {
    GlobalMemoryConfig mc;
    mc.total_bytes = 2048 * kPageSize;
    mc.prefault = false;
    mc.areas[static_cast<size_t>(MemoryArea::kTransactionMemory)].reserved_pages = 64;
    memory_ = std::move(GlobalMemory::create(mc)).value();
    PageCacheConfig pc;
    pc.frames_max = kFrames;
    cache_ = std::move(PageCache::create(*memory_, pc, io_, undo_durability_)).value();
    access_ = std::make_unique<CachedPageAccess>(cache_.get());
    undo_ = std::make_unique<disk::UndoLog>(64u << 20, 1);
    tablespace_ = std::make_unique<disk::Tablespace>(1, 4, access_.get(), undo_.get());
    // The tablespace's file header and extent-header pages stay pinned (NDB locks them).
    pin_now(kTablespaceHolder, {1, 0});
    EXPECT_TRUE(tablespace_->open_datafile(1, kFilePages).ok());
    const disk::DatafileLayout* layout = tablespace_->layout_of(1);
    for (uint32_t p = 0; p < layout->extent_header_pages; ++p) {
      pin_now(kTablespaceHolder, {1, layout->extent_header_first + p});
    }
    tablespace_->scan_extent_headers();

    schema_.name = "t";
    schema_.columns = {{"id", ColumnType::kInt, false, false},
                       {"k", ColumnType::kBigInt, false, false},
                       {"note", ColumnType::kVarbinary, false, true, 4096}};
    schema_.columns[kNote].storage_disk = true;
    schema_.primary_key = {kId};
    schema_.ordered_indexes = {{"k_idx", {kK}, false}};
    EXPECT_TRUE(schema_.validate().ok());
    FragmentDisk d;
    d.tablespace = tablespace_.get();
    d.undo = undo_.get();
    d.pages = access_.get();
    d.owner = {1, 0};
    d.resident = [this](disk::DiskPageId id) { return access_->resident(id); };
    fragment_ = std::move(Fragment::create(&schema_, memory_.get(), &d)).value();
  }
  ~DiskCacheRig() {
    fragment_.reset();
    access_->release(kTablespaceHolder);
  }

  // Pins a page, completing IO until it is in (setup only).
  void pin_now(CachedPageAccess::Holder holder, disk::DiskPageId id) {
    auto r = access_->pin(holder, id, PageIntent::kUpdate);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    while (*r == CachedPageAccess::PinState::kWaiting) {
      pump_io();
      for (const auto& a : access_->take_arrivals()) ASSERT_TRUE(a.status.ok());
      if (access_->holds(holder, id, PageIntent::kUpdate)) break;
    }
  }
  // Completes one random piece of IO, or makes undo durable; false if nothing to do.
  bool pump_io() {
    const bool undo_wanted = undo_durability_.requested > undo_durability_.durable;
    if (io_.pending.empty() && !undo_wanted) return false;
    if (undo_wanted && (io_.pending.empty() || rng_() % 4 == 0)) {
      undo_durability_.make_durable(*cache_);
    } else {
      io_.complete(*cache_, rng_() % io_.pending.size());
    }
    return true;
  }

  std::string i32(int32_t v) const { return encode_int(schema_.columns[kId], v); }
  AttrValues key(int32_t id) const {
    AttrValues a;
    a.add(kId, i32(id));
    return a;
  }

  std::mt19937_64 rng_;
  std::unique_ptr<GlobalMemory> memory_;
  testing::FakeDiskIo io_;
  testing::FakeUndo undo_durability_;
  std::unique_ptr<PageCache> cache_;
  std::unique_ptr<CachedPageAccess> access_;
  std::unique_ptr<disk::UndoLog> undo_;
  std::unique_ptr<disk::Tablespace> tablespace_;
  TableSchema schema_;
  std::unique_ptr<Fragment> fragment_;
};

using Model = std::map<int32_t, std::pair<int64_t, std::optional<std::string>>>;

// One client transaction: a few steps, then commit; parked while a page is on its way.
struct Client {
  enum class Kind { kWrite, kUpdateNote, kDelete, kRead };
  struct Step {
    Kind kind;
    int32_t id;
    int64_t k;
    std::optional<std::string> note;
  };
  CachedPageAccess::Holder holder = 0;
  TxId tx = kNullId;
  std::vector<Step> steps;
  size_t next = 0;
  bool parked = false;
  Model view;                                  // what the transaction sees
  std::vector<disk::DiskPageId> commit_pages;  // pages its commit writes (pinned)
};

TEST(FragmentDiskCacheTest, SmallCacheParksAndResumesWithoutPinDeadlock) {
  const int seeds =
      std::getenv("DUO_DISK_CACHE_SEEDS") ? std::atoi(std::getenv("DUO_DISK_CACHE_SEEDS")) : 3;
  for (int seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    DiskCacheRig rig(static_cast<uint64_t>(seed));
    std::mt19937_64& rng = rig.rng_;
    Fragment& f = *rig.fragment_;
    CachedPageAccess& access = *rig.access_;
    Model committed;
    constexpr int kSlots = 3;
    constexpr int32_t kKeysPerSlot = 100;  // 300 rows of up to 4 KiB: about 3x the 8 frames
    std::vector<Client> clients(kSlots);
    CachedPageAccess::Holder next_holder = 1;
    size_t commits = 0, refusals = 0, parks = 0;
    constexpr size_t kCommitsWanted = 1500;

    auto start = [&](int slot) {
      Client& c = clients[slot];
      c = Client{};
      c.holder = next_holder++;
      c.tx = *f.begin();
      c.view = committed;
      const int n = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < n; ++i) {
        Client::Step s;
        s.id = slot + kSlots * static_cast<int32_t>(rng() % kKeysPerSlot);  // slots own keys
        s.kind = static_cast<Client::Kind>(rng() % 4);
        s.k = static_cast<int64_t>(rng() % 1000);
        if (rng() % 8 != 0) {
          const size_t size = rng() % 4 == 0 ? 200 + rng() % 600 : 2000 + rng() % 2097;
          s.note = std::string(size, static_cast<char>('a' + rng() % 26));
        }
        c.steps.push_back(s);
      }
    };
    auto fail_temporary = [&](Client& c, int slot) {
      ASSERT_TRUE(f.abort(c.tx).ok());
      access.release(c.holder);
      ++refusals;
      start(slot);
    };
    // Pins `page` for the client: true when pinned; false when parked or refused.
    auto pin = [&](Client& c, int slot, disk::DiskPageId page, PageIntent intent) {
      auto r = access.pin(c.holder, page, intent);
      if (!r.ok()) {
        EXPECT_TRUE(r.status().is(ErrorCode::kTemporary)) << r.status().to_string();
        fail_temporary(c, slot);
        return false;
      }
      if (*r == CachedPageAccess::PinState::kWaiting) {
        c.parked = true;
        ++parks;
        return false;
      }
      return true;
    };
    // Runs the client as far as it can go.
    auto run = [&](int slot) {
      Client& c = clients[slot];
      while (!c.parked) {
        if (c.next == c.steps.size()) {
          // Commit: every page it writes is pinned first (so commit never waits).
          for (const disk::DiskPageId p : c.commit_pages) {
            if (!pin(c, slot, p, PageIntent::kUpdate)) return;
          }
          ASSERT_TRUE(f.commit(c.tx).ok());
          access.release(c.holder);
          // Slots own disjoint keys: the commit replaces this slot's rows alone.
          std::erase_if(committed, [&](const auto& e) { return e.first % kSlots == slot; });
          for (const auto& e : c.view) {
            if (e.first % kSlots == slot) committed.insert(e);
          }
          ++commits;
          start(slot);
          return;
        }
        const Client::Step& s = c.steps[c.next];
        const OpType type = s.kind == Client::Kind::kRead     ? OpType::kRead
                            : s.kind == Client::Kind::kDelete ? OpType::kDelete
                                                              : OpType::kWrite;
        if (auto page = f.disk_page_for(type, rig.key(s.id), {})) {
          if (!pin(c, slot, *page, type == OpType::kRead ? PageIntent::kRead : PageIntent::kUpdate))
            return;
        }
        OpResult res;
        AttrValues row = rig.key(s.id);
        const bool exists = c.view.count(s.id) > 0;
        if (s.kind == Client::Kind::kRead) {
          AttrValues out;
          res = f.read(c.tx, rig.key(s.id), LockMode::kCommittedRead, {}, &out);
          if (!exists) {
            ASSERT_TRUE(res.status.is(ErrorCode::kNotFound));
          } else {
            ASSERT_TRUE(res.status.ok()) << res.status.to_string();
            ASSERT_EQ(decode_int(rig.schema_.columns[kK], out.value(1)), c.view[s.id].first);
            const std::optional<std::string> note =
                out.entry(2).is_null ? std::nullopt
                                     : std::optional<std::string>(std::string(out.value(2)));
            ASSERT_EQ(note, c.view[s.id].second) << "row " << s.id;
          }
        } else if (s.kind == Client::Kind::kDelete) {
          res = f.remove(c.tx, rig.key(s.id));
          if (!exists)
            ASSERT_TRUE(res.status.is(ErrorCode::kNotFound));
          else
            ASSERT_TRUE(res.status.ok()) << res.status.to_string();
          c.view.erase(s.id);
        } else {
          row.add(kK, encode_int(rig.schema_.columns[kK], s.k));
          if (s.note)
            row.add(kNote, *s.note);
          else
            row.add_null(kNote);
          res = f.write(c.tx, row);
          if (res.status.is(ErrorCode::kTablespaceFull)) {
            ADD_FAILURE() << "tablespace full: the test's file is too small";
            return;
          }
          ASSERT_TRUE(res.status.ok()) << res.status.to_string();
          c.view[s.id] = {s.k, s.note};
        }
        if (type != OpType::kRead && res.status.ok()) {
          const disk::DiskOpPages pages = f.disk_pages_of(res.op);
          if (pages.has_target) {
            c.commit_pages.push_back(pages.target);
            // A fresh target needs no read: the cache hands out a zeroed frame.
            const CachedPageAccess::Holder holder = c.holder;
            if (pages.target_fresh && !pin(c, slot, pages.target, PageIntent::kCreate)) {
              if (c.holder == holder) ++c.next;  // parked after the step (not restarted)
              return;
            }
          }
          if (pages.current.valid()) c.commit_pages.push_back(pages.current.page_id());
        }
        ++c.next;
      }
    };

    for (int s = 0; s < kSlots; ++s) start(s);
    size_t idle_rounds = 0;
    while (commits < kCommitsWanted) {
      for (const CachedPageAccess::Arrival& a : access.take_arrivals()) {
        for (int s = 0; s < kSlots; ++s) {
          if (clients[s].holder != a.holder) continue;
          clients[s].parked = false;
          if (!a.status.ok()) {
            ASSERT_TRUE(a.status.is(ErrorCode::kTemporary)) << a.status.to_string();
            fail_temporary(clients[s], s);
          }
        }
      }
      bool progressed = false;
      const int order = static_cast<int>(rng() % kSlots);
      for (int i = 0; i < kSlots; ++i) {
        const int s = (order + i) % kSlots;
        if (clients[s].parked) continue;
        const size_t before = commits + refusals;
        const size_t step = clients[s].next;
        run(s);
        if (::testing::Test::HasFatalFailure() || ::testing::Test::HasFailure()) return;
        progressed |= commits + refusals != before || clients[s].next != step;
      }
      if (rig.pump_io()) progressed = true;
      // Every client parked and no IO left that could wake one: a pin deadlock.
      if (!progressed && !rig.cache_->has_ready()) {
        ASSERT_LT(++idle_rounds, 3u) << "no client can progress and no IO is pending";
      } else {
        idle_rounds = 0;
      }
    }
    EXPECT_GT(parks, 0u);
    for (Client& c : clients) {
      if (c.tx != kNullId) {
        ASSERT_TRUE(f.abort(c.tx).ok());
      }
      access.release(c.holder);
    }
    while (rig.pump_io()) access.take_arrivals();
    access.take_arrivals();
    EXPECT_EQ(access.holders(), 1u);  // the tablespace's pins alone

    // Every committed row by a full scan and by an ordered-index scan, each stopping for
    // every page not in the cache.
    for (const int index : {-1, 0}) {
      SCOPED_TRACE(index < 0 ? "full scan" : "ordered scan");
      CachedPageAccess::Holder scan_holder = next_holder++;
      Fragment::ScanSpec spec;
      spec.index = index;
      spec.disk_page_ready = [&](disk::DiskPageId id) {
        auto r = access.pin(scan_holder, id, PageIntent::kRead);
        EXPECT_TRUE(r.ok()) << r.status().to_string();
        return r.ok() && *r == CachedPageAccess::PinState::kReady;
      };
      auto scan = std::move(f.open_scan(spec)).value();
      Model scanned;
      RowBatch batch;
      size_t waits = 0;
      int64_t last_k = -1;
      while (!scan->done()) {
        batch.clear();
        ASSERT_TRUE(scan->next(4, &batch).ok());
        for (size_t i = 0; i < batch.rows(); ++i) {
          const RowBatch::Row r = batch.row(i);
          const auto id = static_cast<int32_t>(decode_int(rig.schema_.columns[kId], r.value(0)));
          const int64_t k = decode_int(rig.schema_.columns[kK], r.value(1));
          if (index >= 0) {
            ASSERT_LE(last_k, k) << "ordered scan out of order";
            last_k = k;
          }
          ASSERT_EQ(scanned.count(id), 0u) << "row " << id << " twice";
          scanned[id] = {
              k, r.is_null(2) ? std::nullopt : std::optional<std::string>(std::string(r.value(2)))};
        }
        access.release(scan_holder);  // a batch's pins end with it
        if (scan->waiting_for_page()) {
          ++waits;
          while (rig.pump_io()) {
          }
          access.take_arrivals();
          access.release(scan_holder);
        }
      }
      EXPECT_GT(waits, 0u);
      EXPECT_EQ(scanned, committed);
    }
    EXPECT_TRUE(f.check_consistency().ok());
    const PageCacheStats st = rig.cache_->stats();
    EXPECT_GT(st.pages_written, 0u);  // dirty pages were evicted through the write-ahead rule
    EXPECT_GT(st.page_requests_wait_io, 0u);
    std::printf("seed %d: %zu commits, %zu refusals, %zu parks, %lu reads, %lu writes\n", seed,
                commits, refusals, parks, static_cast<unsigned long>(st.pages_read),
                static_cast<unsigned long>(st.pages_written));
  }
}

}  // namespace
}  // namespace duo::storage
