// PageCache + PageFileIo over the simulated file system block: the page cache's reads and
// writes really go through FS_PAGE_READREQ / FS_PAGE_WRITEREQ (answers jittered, so out
// of order) into a file on the SimDisk; pages written back come back intact, a page
// damaged on disk is reported as corruption, and a page of an unknown file fails cleanly.
#include "ndb-kernel/fs_client/page_file_io.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/sim/sim_file_system.h"
#include "ndb-kernel/sim/simulator.h"
#include "storage/memory/test_memory.h"
#include "storage/page_cache/page_cache_test_io.h"

namespace duo::fs_client {
namespace {

using kernel::Signal;
using storage::PageCache;
using storage::PageGrant;
using storage::PageId;
using storage::PageIntent;
using storage::PageReady;
using storage::PageRef;

constexpr uint32_t kFrames = 4;
constexpr uint32_t kFileNo = 3;
constexpr const char* kPath = "ts/data_3.dat";

// The undo log stand-in: durable up to whatever was asked, at once (this test is about
// IO; the write-ahead rule has its own tests in storage/page_cache).
class DurableUndo final : public storage::UndoDurability {
 public:
  uint64_t durable_undo_lsn() const override { return UINT64_MAX; }
  void request_undo_flush(uint64_t) override {}
};

// A block owning a PageCache whose IO is a PageFileIo; tests request pages between events.
class Owner : public kernel::Block {
 public:
  Owner() : Block("page_owner", 900) {
    for (kernel::SignalId id : {protocol::kFsOpenConf, protocol::kFsRef, protocol::kFsPageConf}) {
      on(id, &Owner::on_fs);
    }
  }
  void on_start() override {
    memory = storage::make_test_memory(kFrames + 1);
    io = std::make_unique<PageFileIo>(5, node_id(), [this](Signal s) {
      return send(s.receiver(), std::move(s));
    });
    storage::PageCacheConfig config;
    config.frames_max = kFrames;
    cache = std::move(PageCache::create(*memory, config, *io, undo)).value();
    io->set_cache(cache.get());
    Signal open =
        fs::FsOpenReq{1, fs::kFsRead | fs::kFsWrite | fs::kFsCreate | fs::kFsDirectIo, kPath}
            .to_signal();
    ASSERT_TRUE(send({node_id(), protocol::kFileSystemBlock, 0}, std::move(open)).ok());
  }
  void on_fs(Signal& signal) {
    if (signal.id() == protocol::kFsOpenConf) {
      Result<fs::FsOpenConf> conf = fs::FsOpenConf::from_signal(signal);
      ASSERT_TRUE(conf.ok());
      io->add_file(kFileNo, conf->handle);
      opened = true;
      return;
    }
    ASSERT_TRUE(io->owns(signal)) << signal.describe();
    io->on_fs_answer(signal);
    io->report_send_failures();
    for (PageReady& r : cache->take_ready()) ready.push_back(std::move(r));
    flushed += cache->take_flushed().size();
  }

  DurableUndo undo;
  std::unique_ptr<storage::GlobalMemory> memory;
  std::unique_ptr<PageFileIo> io;
  std::unique_ptr<PageCache> cache;
  bool opened = false;
  std::vector<PageReady> ready;
  size_t flushed = 0;
};

class PageFileIoTest : public ::testing::Test {
 protected:
  PageFileIoTest() : sim_(sim::SimulatorOptions{.seed = 11}), disk_(5) {
    protocol::register_protocol_signal_names();
    EXPECT_TRUE(sim_.add_node(1, [this](sim::NodeId) {
      std::vector<std::unique_ptr<kernel::Block>> blocks;
      blocks.push_back(std::make_unique<sim::SimFileSystem>(
          disk_, sim::SimFileSystemOptions{.latency_ms = 1, .latency_jitter_ms = 4}));
      auto owner = std::make_unique<Owner>();
      owner_ = owner.get();
      blocks.push_back(std::move(owner));
      return blocks;
    }).ok());
    EXPECT_TRUE(sim_.run_until([&] { return owner_->opened; }, 10 * kNanosPerSecond));
  }

  // Pins `id` for `intent`, waiting for IO as needed; the PageReady status on failure.
  Result<PageRef> pin(PageId id, PageIntent intent) {
    Result<PageGrant> grant = owner_->cache->request_page(id, intent, id.page_no);
    if (!grant.ok()) return grant.status();
    if (grant->ready) return grant->page;
    EXPECT_TRUE(sim_.run_until([&] { return !owner_->ready.empty(); }, 10 * kNanosPerSecond));
    if (owner_->ready.empty()) return Status(ErrorCode::kInternal, "no answer");
    PageReady ready = std::move(owner_->ready.front());
    owner_->ready.erase(owner_->ready.begin());
    EXPECT_EQ(ready.token, id.page_no);
    if (!ready.status.ok()) return std::move(ready.status);
    return ready.page;
  }

  void write_pages(uint32_t count) {
    PageCache& cache = *owner_->cache;
    for (uint32_t p = 0; p < count; ++p) {
      Result<PageRef> page = pin(PageId{kFileNo, p}, PageIntent::kCreate);
      ASSERT_TRUE(page.ok()) << page.status().to_string();
      storage::testing::fill_page(page->data, page->id, 1000 + p);
      cache.mark_dirty(*page, p + 1);
      cache.unpin(*page, PageIntent::kCreate);
    }
    cache.flush_dirty(1);
    ASSERT_TRUE(sim_.run_until([&] { return owner_->flushed == 1; }, 10 * kNanosPerSecond));
  }

  sim::Simulator sim_;
  sim::SimDisk disk_;
  Owner* owner_ = nullptr;
};

TEST_F(PageFileIoTest, PagesWrittenBackComeBackThroughTheFileSystem) {
  constexpr uint32_t kPages = 3 * kFrames;  // three times the cache
  write_pages(kPages);
  for (int round = 0; round < 2; ++round) {
    for (uint32_t p = kPages; p-- > 0;) {
      Result<PageRef> page = pin(PageId{kFileNo, p}, PageIntent::kRead);
      ASSERT_TRUE(page.ok()) << page.status().to_string();
      EXPECT_EQ(storage::testing::page_version(page->data), 1000 + p);
      EXPECT_EQ(storage::page_lsn(page->data), p + 1);
      owner_->cache->unpin(*page, PageIntent::kRead);
    }
  }
  const storage::PageCacheStats stats = owner_->cache->stats();
  EXPECT_GE(stats.pages_written, kPages);
  EXPECT_GT(stats.pages_read, 0u);
  EXPECT_EQ(owner_->io->in_flight(), 0u);
  EXPECT_TRUE(owner_->cache->check_invariants().ok());
}

TEST_F(PageFileIoTest, APageDamagedOnDiskIsCorruption) {
  write_pages(2);
  ASSERT_TRUE(owner_->cache->drop_file(kFileNo).ok());  // forget the cached copies
  std::shared_ptr<sim::SimFile> file;
  uint32_t os_errno = 0;
  ASSERT_TRUE(disk_.open_file(kPath, fs::kFsRead | fs::kFsWrite, &file, &os_errno).ok());
  const uint64_t inside_page_1 = storage::kPageSize + 5000;
  ASSERT_TRUE(disk_.write_file(*file, kPath, inside_page_1, fs::Bytes{0x55}, &os_errno).ok());
  Result<PageRef> damaged = pin(PageId{kFileNo, 1}, PageIntent::kRead);
  ASSERT_FALSE(damaged.ok());
  EXPECT_TRUE(damaged.status().is(ErrorCode::kCorruption)) << damaged.status().to_string();
  EXPECT_EQ(owner_->cache->stats().checksum_errors, 1u);
  Result<PageRef> sound = pin(PageId{kFileNo, 0}, PageIntent::kRead);
  ASSERT_TRUE(sound.ok()) << sound.status().to_string();
  owner_->cache->unpin(*sound, PageIntent::kRead);
  // A page past the end of the file reads as an unformatted (all-zero) page.
  Result<PageRef> beyond = pin(PageId{kFileNo, 50}, PageIntent::kRead);
  ASSERT_TRUE(beyond.ok()) << beyond.status().to_string();
  EXPECT_EQ(storage::page_kind(beyond->data), 0u);
  owner_->cache->unpin(*beyond, PageIntent::kRead);
}

TEST_F(PageFileIoTest, APageOfAnUnknownFileFailsCleanly) {
  Result<PageRef> page = pin(PageId{kFileNo + 1, 0}, PageIntent::kRead);
  ASSERT_FALSE(page.ok());
  EXPECT_TRUE(page.status().is(ErrorCode::kInvalidArgument)) << page.status().to_string();
  EXPECT_EQ(owner_->cache->stats().read_errors, 1u);
  EXPECT_EQ(owner_->cache->stats().frames_in_use, 0u);
}

}  // namespace
}  // namespace duo::fs_client
