// DualCopyFile over the simulated file system: the newest completed write is what a
// read returns, across crashes at any instant, and a damaged copy falls back to the
// other one.
#include "ndb-kernel/fs_client/dual_copy_file.h"

#include <gtest/gtest.h>

#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/sim/sim_file_system.h"
#include "ndb-kernel/sim/simulator.h"

namespace duo::fs_client {
namespace {

using kernel::Signal;

// A block owning one DualCopyFile; tests start operations through it between events.
class Owner : public kernel::Block {
 public:
  Owner() : Block("owner", 900) {
    for (kernel::SignalId id : {protocol::kFsOpenConf, protocol::kFsRef, protocol::kFsWriteConf,
                                protocol::kFsReadConf, protocol::kFsCloseConf}) {
      on(id, &Owner::on_fs);
    }
  }
  void on_start() override {
    file = std::make_unique<DualCopyFile>("dir/state", 7, node_id(), [this](Signal s) {
      return send(s.receiver(), std::move(s));
    });
  }
  void on_fs(Signal& signal) {
    ASSERT_TRUE(file->owns(signal));
    file->on_fs_answer(signal);
  }
  std::unique_ptr<DualCopyFile> file;
};

Bytes bytes_of(const std::string& text) { return Bytes(text.begin(), text.end()); }

class DualCopyFileTest : public ::testing::TestWithParam<uint64_t> {
 protected:
  DualCopyFileTest() : sim_(sim::SimulatorOptions{.seed = GetParam()}), disk_(GetParam()) {
    EXPECT_TRUE(sim_.add_node(1, [this](sim::NodeId) {
      std::vector<std::unique_ptr<kernel::Block>> blocks;
      blocks.push_back(std::make_unique<sim::SimFileSystem>(disk_));
      auto owner = std::make_unique<Owner>();
      owner_ = owner.get();
      blocks.push_back(std::move(owner));
      return blocks;
    }).ok());
    sim_.run_for(0);
  }

  Status write(const std::string& text) {
    std::optional<Status> done;
    owner_->file->write(bytes_of(text), [&](Status s) { done = std::move(s); });
    EXPECT_TRUE(sim_.run_until([&] { return done.has_value(); }, 10 * kNanosPerSecond));
    if (!done) return Status(ErrorCode::kInternal, "no answer");
    return std::move(*done);
  }
  // The contents, or "error: ..." (so comparisons print what went wrong).
  std::string read_text() {
    Result<std::string> r = read();
    return r.ok() ? *r : "error: " + r.status().to_string();
  }
  Result<std::string> read() {
    std::optional<Result<Bytes>> done;
    owner_->file->read([&](Result<Bytes> r) { done = std::move(r); });
    EXPECT_TRUE(sim_.run_until([&] { return done.has_value(); }, 10 * kNanosPerSecond));
    if (!done) return Status(ErrorCode::kInternal, "no answer");
    if (!done->ok()) return done->status();
    return std::string((*done)->begin(), (*done)->end());
  }
  void crash_and_restart() {
    ASSERT_TRUE(sim_.crash_node(1).ok());
    disk_.crash();
    ASSERT_TRUE(sim_.restart_node(1).ok());
    sim_.run_for(0);
  }

  sim::Simulator sim_;
  sim::SimDisk disk_;
  Owner* owner_ = nullptr;
};

TEST_P(DualCopyFileTest, NothingWrittenReadsAsNotFound) {
  Result<std::string> r = read();
  EXPECT_TRUE(r.status().is(ErrorCode::kNotFound)) << r.status().to_string();
}

TEST_P(DualCopyFileTest, NewestCompletedWriteSurvivesCrashes) {
  ASSERT_TRUE(write("one").ok());
  ASSERT_TRUE(write("two").ok());
  ASSERT_TRUE(write(std::string(150'000, 'x')).ok());  // several chunks
  crash_and_restart();
  EXPECT_EQ(read_text(), std::string(150'000, 'x'));
  ASSERT_TRUE(write("four").ok());
  crash_and_restart();
  EXPECT_EQ(read_text(), "four");
}

TEST_P(DualCopyFileTest, ACrashDuringAWriteKeepsThePreviousContents) {
  ASSERT_TRUE(write("stable").ok());
  // Start a big write and crash at a seeded instant before it completes.
  bool done = false;
  owner_->file->write(bytes_of(std::string(200'000, 'n')), [&](Status) { done = true; });
  SeededRandom random(GetParam());
  sim_.run_until([&] { return done; }, random.uniform(3) * kNanosPerMilli);
  const bool completed = done;
  crash_and_restart();
  Result<std::string> r = read();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  if (completed) {
    EXPECT_EQ(*r, std::string(200'000, 'n'));
  } else {
    EXPECT_TRUE(*r == "stable" || *r == std::string(200'000, 'n'));
  }
}

TEST_P(DualCopyFileTest, ADamagedCopyFallsBackToTheOther) {
  ASSERT_TRUE(write("old").ok());
  ASSERT_TRUE(write("new").ok());  // copy .1
  disk_.fail_path("dir/state.1", /*reads=*/true, /*writes=*/false);
  Result<std::string> r = read();
  // An unreadable copy is an IO error, not silently skipped.
  EXPECT_FALSE(r.ok());
  disk_.clear_faults();
  EXPECT_EQ(read_text(), "new");
}

TEST(DualCopyFileCodec, CopiesAreChecked) {
  Bytes copy = DualCopyFile::encode_copy(5, bytes_of("payload"));
  Result<std::pair<uint32_t, Bytes>> back = DualCopyFile::decode_copy(copy);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->first, 5u);
  EXPECT_EQ(back->second, bytes_of("payload"));
  for (size_t i = 0; i < copy.size(); ++i) {
    Bytes bad = copy;
    bad[i] ^= 0x20;
    EXPECT_FALSE(DualCopyFile::decode_copy(bad).ok()) << "byte " << i;
  }
  for (size_t n = 0; n < copy.size(); ++n) {
    EXPECT_FALSE(DualCopyFile::decode_copy(Bytes(copy.begin(), copy.begin() + n)).ok());
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, DualCopyFileTest, ::testing::Range<uint64_t>(1, 11));

}  // namespace
}  // namespace duo::fs_client
