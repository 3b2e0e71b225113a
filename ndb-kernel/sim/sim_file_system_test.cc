// SimFileSystem in the Simulator: the shared contract cases of fs/testing/fs_contract.h
// (the same ones the real FileSystemBlock passes), run with answer jitter so per-handle
// FIFO is really exercised; then what only the simulated disk has — the crash model
// (synced data survives, unsynced writes survive, vanish or tear as the seed says,
// reproducibly), handles dying with the node, injected faults, latency, and bit-for-bit
// replay. All on virtual time: the whole file takes well under a second.
#include "ndb-kernel/sim/sim_file_system.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "ndb-kernel/fs/testing/fs_contract.h"
#include "ndb-kernel/sim/simulator.h"

namespace duo::sim {
namespace {

using fs::contract::FsAnswerCollector;
using namespace fs;  // NOLINT(build/namespaces): the FS_* messages and flags

constexpr NodeId kNode = 1;
constexpr uint64_t kTimeLimitNs = 600 * kNanosPerSecond;

struct SimFsOptions {
  uint64_t seed = 1;       // the simulator's (block random streams: the jitter)
  uint64_t disk_seed = 7;  // the crash model's
  SimFileSystemOptions fs{.open_files_max = 40, .latency_ms = 1, .latency_jitter_ms = 3};
};

// One node holding a SimFileSystem and the test requester, over a SimDisk that
// survives the node's crashes.
class SimFs : public contract::FsDriver {
 public:
  explicit SimFs(SimFsOptions options = {})
      : options_(options), disk_(options.disk_seed), sim_(simulator_options(options.seed)) {
    protocol::register_protocol_signal_names();
    const Status added = sim_.add_node(kNode, [this](NodeId) {
      auto file_system = std::make_unique<SimFileSystem>(disk_, options_.fs);
      file_system_ = file_system.get();
      auto collector = std::make_unique<FsAnswerCollector>();
      collector_ = collector.get();
      std::vector<std::unique_ptr<Block>> blocks;
      blocks.push_back(std::move(file_system));
      blocks.push_back(std::move(collector));
      return blocks;
    });
    EXPECT_TRUE(added.ok()) << added.to_string();
  }

  std::vector<Signal> exchange(std::vector<Signal> requests) override {
    const size_t expected = collector_->count() + requests.size();
    for (Signal& request : requests) {
      request.set_sender(BlockAddress{kNode, contract::kFsTestClientBlock, 0});
      request.set_receiver(BlockAddress{kNode, protocol::kFileSystemBlock, 0});
      const Status injected = sim_.inject(std::move(request));
      EXPECT_TRUE(injected.ok()) << injected.to_string();
    }
    EXPECT_TRUE(sim_.run_until([&] { return collector_->count() >= expected; }, kTimeLimitNs))
        << collector_->count() << " of " << expected << " answers";
    return collector_->take();
  }
  uint32_t open_files_max() const override { return options_.fs.open_files_max; }

  // Crashes the node, applies the disk's crash model, and starts the node again.
  void crash_and_restart() {
    ASSERT_TRUE(sim_.crash_node(kNode).ok());
    disk_.crash();
    ASSERT_TRUE(sim_.restart_node(kNode).ok());
  }

  SimDisk& disk() { return disk_; }
  Simulator& sim() { return sim_; }
  SimFileSystem& file_system() { return *file_system_; }

 private:
  static SimulatorOptions simulator_options(uint64_t seed) {
    SimulatorOptions options;
    options.seed = seed;
    return options;
  }

  const SimFsOptions options_;
  SimDisk disk_;
  Simulator sim_;
  SimFileSystem* file_system_ = nullptr;
  FsAnswerCollector* collector_ = nullptr;
};

class SimFileSystemContract : public ::testing::Test {
 protected:
  contract::FsDriver& driver() { return fs_; }
  SimFs fs_;
};

DUO_FS_CONTRACT_TESTS(SimFileSystemContract)

std::string text(const std::string& prefix, size_t length, char fill) {
  std::string bytes = prefix;
  bytes.resize(length, fill);
  return bytes;
}

// ---- Crash model ----

TEST(SimFileSystem, SyncedDataAlwaysSurvivesACrash) {
  for (uint64_t disk_seed = 1; disk_seed <= 20; ++disk_seed) {
    SimFs fs({.disk_seed = disk_seed});
    const uint32_t handle = contract::open_ok(fs, "redo/part0", kFsRead | kFsWrite | kFsCreate);
    const std::string synced = text("synced", 3000, 's');
    contract::write_ok(fs, handle, 0, synced, kFsSyncAfter);
    const std::string later = text("later", 1500, 'l');
    contract::write_ok(fs, handle, 4096, later);
    contract::sync_ok(fs, handle);  // makes `later` durable too
    for (uint64_t i = 0; i < 20; ++i) {
      contract::write_ok(fs, handle, 8192 + i * 2048, text("unsynced", 1800, 'u'));
    }
    fs.crash_and_restart();
    const uint32_t reopened = contract::open_ok(fs, "redo/part0", kFsRead);
    EXPECT_EQ(contract::read_ok(fs, reopened, 0, 3000), synced) << "disk seed " << disk_seed;
    EXPECT_EQ(contract::read_ok(fs, reopened, 4096, 1500), later) << "disk seed " << disk_seed;
    // Directories and the file itself were durable at once.
    EXPECT_EQ(contract::list_ok(fs, "redo"), std::vector<std::string>{"part0"});
    contract::close_ok(fs, reopened);
  }
}

// 300 unsynced writes of 2048 bytes (4 sectors, sector-aligned) to separate 4 KiB
// slots: after the crash each slot holds the whole write, nothing, or a proper prefix
// of whole sectors — and how many of each is the disk seed's business.
struct CrashOutcome {
  std::string file;
  uint32_t survived = 0;
  uint32_t lost = 0;
  uint32_t torn = 0;
};

CrashOutcome crash_unsynced_writes(uint64_t disk_seed) {
  SimFs fs({.disk_seed = disk_seed});
  constexpr uint32_t kWrites = 300;
  constexpr uint32_t kSlotBytes = 4096;
  constexpr uint32_t kWriteBytes = 2048;
  const uint32_t handle = contract::open_ok(fs, "data", kFsRead | kFsWrite | kFsCreate);
  // A durable, zeroed file first, so every slot reads as "nothing" unless a write landed.
  for (uint32_t slot = 0; slot < kWrites; slot += 15) {
    contract::write_ok(fs, handle, uint64_t{slot} * kSlotBytes, std::string(15 * kSlotBytes, '\0'));
  }
  contract::sync_ok(fs, handle);
  std::vector<Signal> writes;
  for (uint32_t slot = 0; slot < kWrites; ++slot) {
    writes.push_back(FsWriteReq{slot, handle, uint64_t{slot} * kSlotBytes, 0,
                                contract::bytes_of(std::string(kWriteBytes, 'w'))}
                         .to_signal());
  }
  EXPECT_EQ(fs.exchange(std::move(writes)).size(), kWrites);
  fs.crash_and_restart();

  CrashOutcome outcome;
  outcome.file = fs.disk().content("data");
  EXPECT_EQ(outcome.file, fs.disk().durable_content("data"));
  EXPECT_EQ(outcome.file.size(), uint64_t{kWrites} * kSlotBytes);
  for (uint32_t slot = 0; slot < kWrites && outcome.file.size() >= (slot + 1) * kSlotBytes;
       ++slot) {
    const std::string region = outcome.file.substr(uint64_t{slot} * kSlotBytes, kWriteBytes);
    const size_t written =
        region.find('\0') == std::string::npos ? region.size() : region.find('\0');
    EXPECT_EQ(region.find('w', written), std::string::npos) << "slot " << slot << " has a hole";
    EXPECT_EQ(written % kFsSectorBytes, 0u) << "slot " << slot << " torn inside a sector";
    if (written == kWriteBytes) {
      ++outcome.survived;
    } else if (written == 0) {
      ++outcome.lost;
    } else {
      ++outcome.torn;
    }
  }
  const SimDiskStats& stats = fs.disk().stats();
  EXPECT_EQ(stats.writes_survived, outcome.survived);
  EXPECT_EQ(stats.writes_lost, outcome.lost);
  EXPECT_EQ(stats.writes_torn, outcome.torn);
  return outcome;
}

TEST(SimFileSystem, UnsyncedWritesAreLostOrTornAsTheSeedDecides) {
  const CrashOutcome first = crash_unsynced_writes(11);
  EXPECT_EQ(first.survived + first.lost + first.torn, 300u);
  EXPECT_GT(first.survived, 50u);
  EXPECT_GT(first.lost, 50u);
  EXPECT_GT(first.torn, 50u);
  const CrashOutcome again = crash_unsynced_writes(11);
  EXPECT_TRUE(again.file == first.file) << "same seed, different disk";
  const CrashOutcome other = crash_unsynced_writes(12);
  EXPECT_FALSE(other.file == first.file) << "another seed, the same disk";
}

TEST(SimFileSystem, OneSectorWritesAreNeverTorn) {
  SimFs fs;
  const uint32_t handle = contract::open_ok(fs, "small", kFsRead | kFsWrite | kFsCreate);
  for (uint32_t i = 0; i < 100; ++i) contract::write_ok(fs, handle, uint64_t{i} * 512, "x");
  fs.crash_and_restart();
  EXPECT_EQ(fs.disk().stats().writes_torn, 0u);
  EXPECT_EQ(fs.disk().stats().writes_survived + fs.disk().stats().writes_lost, 100u);
}

TEST(SimFileSystem, HandlesDieWithTheNode) {
  SimFs fs;
  const uint32_t handle = contract::open_ok(fs, "f", kFsRead | kFsWrite | kFsCreate);
  contract::write_ok(fs, handle, 0, "before", kFsSyncAfter);
  fs.crash_and_restart();
  EXPECT_EQ(fs.file_system().open_files(), 0u);
  Signal write = fs.call(FsWriteReq{1, handle, 0, 0, contract::bytes_of("after")}.to_signal());
  contract::expect_ref(write, ErrorCode::kInvalidArgument, 0);
  Signal read = fs.call(FsReadReq{2, handle, 0, 6}.to_signal());
  contract::expect_ref(read, ErrorCode::kInvalidArgument, 0);
  // The file is still there for whoever opens it again.
  const uint32_t reopened = contract::open_ok(fs, "f", kFsRead);
  EXPECT_EQ(contract::read_ok(fs, reopened, 0, 100), "before");
  contract::close_ok(fs, reopened);
}

TEST(SimFileSystem, AnswersInFlightAtACrashAreLost) {
  SimFs fs({.fs = {.latency_ms = 50}});
  const uint32_t handle = contract::open_ok(fs, "f", kFsRead | kFsWrite | kFsCreate);
  Signal write = FsWriteReq{1, handle, 0, kFsSyncAfter, contract::bytes_of("done")}.to_signal();
  write.set_sender(BlockAddress{kNode, contract::kFsTestClientBlock, 0});
  write.set_receiver(BlockAddress{kNode, protocol::kFileSystemBlock, 0});
  ASSERT_TRUE(fs.sim().inject(std::move(write)).ok());
  fs.sim().run_for(10 * kNanosPerMilli);  // executed, answer still in flight
  fs.crash_and_restart();
  fs.sim().run_for(100 * kNanosPerMilli);
  // The requester died unanswered, but the synced write had happened.
  EXPECT_EQ(fs.disk().content("f"), "done");
}

// ---- Faults ----

TEST(SimFileSystem, InjectedIoErrors) {
  SimFs fs;
  const uint32_t handle = contract::open_ok(fs, "bad", kFsRead | kFsWrite | kFsCreate);
  contract::write_ok(fs, handle, 0, "ok", kFsSyncAfter);
  fs.disk().fail_path("bad", /*reads=*/false, /*writes=*/true);
  Signal write = fs.call(FsWriteReq{1, handle, 0, 0, contract::bytes_of("no")}.to_signal());
  const std::string message = contract::expect_ref(write, ErrorCode::kIoError, EIO);
  EXPECT_NE(message.find("bad"), std::string::npos) << message;
  Signal sync = fs.call(FsSyncReq{2, handle}.to_signal());
  contract::expect_ref(sync, ErrorCode::kIoError, EIO);
  EXPECT_EQ(contract::read_ok(fs, handle, 0, 10), "ok");  // reads still work

  fs.disk().fail_path("bad", /*reads=*/true, /*writes=*/false);
  Signal read = fs.call(FsReadReq{3, handle, 0, 2}.to_signal());
  contract::expect_ref(read, ErrorCode::kIoError, EIO);
  contract::write_ok(fs, handle, 0, "OK");

  fs.disk().clear_faults();
  EXPECT_EQ(contract::read_ok(fs, handle, 0, 10), "OK");
  EXPECT_EQ(fs.disk().stats().faults_injected, 3u);
  contract::close_ok(fs, handle);
}

TEST(SimFileSystem, FullDiskFailsWritesWithEnospc) {
  SimFs fs;
  fs.disk().set_capacity_bytes(10000);
  const uint32_t a = contract::open_ok(fs, "a", kFsRead | kFsWrite | kFsCreate);
  const uint32_t b = contract::open_ok(fs, "b", kFsRead | kFsWrite | kFsCreate);
  contract::write_ok(fs, a, 0, std::string(6000, 'a'));
  contract::write_ok(fs, b, 0, std::string(4000, 'b'));  // exactly full
  Signal grow = fs.call(FsWriteReq{1, b, 4000, 0, contract::bytes_of("+")}.to_signal());
  EXPECT_EQ(grow.word(2), static_cast<uint32_t>(ENOSPC));
  contract::expect_ref(grow, ErrorCode::kIoError, ENOSPC);
  // Overwriting in place needs no space; freeing space makes room again.
  contract::write_ok(fs, a, 100, std::string(100, 'A'));
  contract::close_ok(fs, a, kFsRemoveAfter);
  contract::write_ok(fs, b, 4000, std::string(6000, 'b'));
  EXPECT_EQ(fs.disk().used_bytes(), 10000u);
  contract::close_ok(fs, b);
}

// ---- Latency and replay ----

TEST(SimFileSystem, AnswersComeAfterTheConfiguredLatency) {
  SimFs fs({.fs = {.latency_ms = 5, .latency_jitter_ms = 0}});
  const uint64_t start_ns = fs.sim().now_ns();
  contract::list_ok(fs, "");
  EXPECT_EQ(fs.sim().now_ns() - start_ns, 5 * kNanosPerMilli);
}

uint64_t replay_hash(uint64_t seed) {
  SimFs fs({.seed = seed});
  contract::random_requests_match_a_model(fs, /*seed=*/5, /*requests=*/500);
  fs.crash_and_restart();
  contract::list_ok(fs, "stress");
  return fs.sim().trace_hash();
}

TEST(SimFileSystem, ASeedReplaysBitForBit) {
  EXPECT_EQ(replay_hash(3), replay_hash(3));
  EXPECT_NE(replay_hash(3), replay_hash(4));  // the jitter follows the simulator seed
}

}  // namespace
}  // namespace duo::sim
