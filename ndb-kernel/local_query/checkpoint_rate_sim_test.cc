// The checkpoint write-rate limit (checkpoint_rate.h) in the local_query block, under
// the simulator's virtual time: one data node with two log parts, a SimFileSystem, and
// a scripted driver playing coordinator, dictionary and distribution (the shared
// harness, lqh_sim_harness.h). Covers: a checkpoint of N bytes at limit L takes N/L
// (within one 100 ms slice and one chunk) and completes, where an unlimited one takes
// almost no time; a restore's checkpoint (the node's own restart) goes at
// MaxDiskWriteSpeedOwnRestart; a node starting elsewhere (NODE_STARTINGREP) raises it
// to MaxDiskWriteSpeedOtherNodeRestart; redo written during a slow checkpoint past the
// threshold raises it to the fastest limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "ndb-kernel/local_query/checkpoint_rate.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/local_query/lqh_sim_harness.h"
#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "storage/row/column.h"

namespace duo::local_query {
namespace {

using kernel::Signal;
using storage::AttrValues;
using storage::ColumnType;

constexpr uint64_t kMs = kNanosPerMilli;
constexpr uint64_t kSecond = kNanosPerSecond;
constexpr uint32_t kTable = 3;
constexpr uint32_t kVersion = 1;
constexpr uint32_t kFragments = 4;
constexpr int32_t kRows = 3000;
constexpr size_t kNameBytes = 300;

// Per-instance limits of the tests: slow enough that a checkpoint of the table takes
// seconds of virtual time, each one far from the others.
LcpWriteSpeeds test_speeds() {
  LcpWriteSpeeds speeds;
  speeds.normal_bytes_per_s = 400'000;
  speeds.other_node_restart_bytes_per_s = 1'200'000;
  speeds.own_restart_bytes_per_s = 4'000'000;
  speeds.min_bytes_per_s = 200'000;
  return speeds;
}

class CheckpointRateTest : public SingleNodeLqhTest {
 protected:
  void start(LocalQueryOptions options) {
    ASSERT_NO_FATAL_FAILURE(start_node(options, /*seed=*/11, /*disk_seed=*/7));
    add_table();
  }

  protocol::TableDef table_def() const override {
    protocol::TableDef def;
    def.schema.table_id = kTable;
    def.schema.name = "t";
    def.schema.columns = {{"id", ColumnType::kInt, false, false},
                          {"name", ColumnType::kVarchar, false, false, 400}};
    def.schema.primary_key = {0};
    def.version = kVersion;
    def.fragment_count = kFragments;
    return def;
  }

  // Writes rows [first, first + count) in transactions of 50 operations, committed in
  // `gci`.
  void write_rows(int32_t first, int32_t count, uint32_t gci) {
    const storage::TableSchema schema = table_def().schema;
    for (int32_t begin = first; begin < first + count; begin += 50) {
      const uint64_t transid = ++next_transid_;
      const int32_t end = std::min(first + count, begin + 50);
      for (int32_t id = begin; id < end; ++id) {
        AttrValues row;
        row.add(0, storage::encode_int(schema.columns[0], id));
        row.add(1, std::string(kNameBytes, static_cast<char>('a' + id % 26)));
        AttrValues key;
        key.add(0, storage::encode_int(schema.columns[0], id));
        auto fragment = fragment_of_key(schema, key, kFragments);
        ASSERT_TRUE(fragment.ok());
        auto req = key_req(transid, *fragment, storage::OpType::kWrite, row);
        ASSERT_TRUE(req.has_value());
        const uint32_t tc_op = req->tc_op;
        send_key_req(std::move(*req));
        ASSERT_TRUE(
            answered(protocol::kLqhKeyConf, [&](const Signal& s) { return s.word(2) == tc_op; }))
            << "row " << id;
      }
      commit(transid, gci);
    }
  }

  void save(uint32_t g) { ASSERT_TRUE(gcp_save(g)); }

  // Loads the table and saves its GCI.
  void load() {
    gci_ = 1;
    write_rows(0, kRows, gci_);
    save(gci_);
  }

  void start_checkpoint() {
    for (uint16_t part = 0; part < kLogParts; ++part) {
      send_to(lqh_address(part), Signal(protocol::kLcpStartReq));
    }
  }
  // Saves a GCI every 100 ms (a checkpoint waits for the save of one past its rows)
  // until every part answered LCP_STARTREQ; false if that takes over `limit_ns`.
  bool finish_checkpoint(uint64_t limit_ns = 60 * kSecond) {
    const uint64_t give_up = sim_->now_ns() + limit_ns;
    int confirmed = 0;
    while (confirmed < kLogParts && sim_->now_ns() < give_up) {
      while (auto conf = wait_for([](const Signal& s) { return s.id() == protocol::kLcpStartConf; },
                                  100 * kMs)) {
        EXPECT_EQ(conf->word(2), 0u);
        ++confirmed;
      }
      if (confirmed < kLogParts) save(++gci_);
    }
    return confirmed == kLogParts;
  }

  // The data of each part's last checkpoint was written at `bytes_per_s`: not faster
  // (within one slice and one chunk of the budget), and not much slower.
  void expect_written_at(uint64_t bytes_per_s) {
    for (uint16_t part = 0; part < kLogParts; ++part) {
      const LcpWriteStats& stats = lqh_[part]->last_lcp_write_stats();
      ASSERT_GT(stats.bytes, 200'000u) << part;
      const uint64_t ideal_ns = stats.bytes * kSecond / bytes_per_s;
      const uint64_t chunk_ns = (kLcpChunkFillBytes + 1024) * kSecond / bytes_per_s;
      EXPECT_GE(stats.write_ns + kLcpRateSliceNs + chunk_ns, ideal_ns)
          << "part " << part << ": " << stats.bytes << " bytes in " << stats.write_ns << " ns";
      EXPECT_LE(stats.write_ns, ideal_ns + 3 * kLcpRateSliceNs)
          << "part " << part << ": " << stats.bytes << " bytes in " << stats.write_ns << " ns";
      EXPECT_EQ(stats.last_speed.bytes_per_s, bytes_per_s) << part;
    }
  }

  uint32_t gci_ = 0;
};

TEST_F(CheckpointRateTest, UnlimitedCheckpointTakesAlmostNoTime) {
  start(LocalQueryOptions{});
  load();
  start_checkpoint();
  ASSERT_TRUE(finish_checkpoint());
  for (uint16_t part = 0; part < kLogParts; ++part) {
    const LcpWriteStats& stats = lqh_[part]->last_lcp_write_stats();
    EXPECT_GT(stats.bytes, 200'000u);
    EXPECT_EQ(stats.last_speed.reason, LcpSpeedReason::kUnlimited);
    EXPECT_EQ(stats.waited_ns, 0u);
    // At the normal limit of the other tests this would take over a second.
    EXPECT_LT(stats.write_ns, 200 * kMs) << part;
  }
}

TEST_F(CheckpointRateTest, CheckpointOfNBytesAtLimitLTakesNOverLSeconds) {
  LocalQueryOptions options;
  options.lcp_write_speeds = test_speeds();
  start(options);
  load();
  const uint64_t started_ns = sim_->now_ns();
  start_checkpoint();
  ASSERT_TRUE(finish_checkpoint());
  expect_written_at(400'000);
  for (uint16_t part = 0; part < kLogParts; ++part) {
    const LcpWriteStats& stats = lqh_[part]->last_lcp_write_stats();
    EXPECT_EQ(stats.strongest_reason, LcpSpeedReason::kNormal);
    EXPECT_GT(stats.waited_ns, 0u);
    EXPECT_EQ(lqh_[part]->last_lcp_id(), 1u);
    EXPECT_GE(sim_->now_ns() - started_ns, stats.write_ns);
  }
}

TEST_F(CheckpointRateTest, RestoreCheckpointGoesAtTheOwnRestartLimit) {
  LocalQueryOptions options;
  options.lcp_write_speeds = test_speeds();
  start(options);
  load();
  // The node crashes and restores from redo alone; its restore's checkpoint completes
  // the restart.
  crash_and_restart();
  for (uint16_t part = 0; part < kLogParts; ++part) {
    send_to(lqh_address(part), Signal(protocol::kLqhRestoreReq, {gci_}));
  }
  uint64_t rows = 0;
  for (uint16_t part = 0; part < kLogParts; ++part) {
    auto conf = wait_for([](const Signal& s) { return s.id() == protocol::kLqhRestoreConf; });
    ASSERT_TRUE(conf.has_value());
    EXPECT_EQ(conf->word(2), 0u);
    rows += conf->word(1);
  }
  EXPECT_EQ(rows, static_cast<uint64_t>(kRows));
  expect_written_at(4'000'000);
  for (uint16_t part = 0; part < kLogParts; ++part) {
    EXPECT_EQ(lqh_[part]->last_lcp_write_stats().strongest_reason, LcpSpeedReason::kOwnRestart);
  }
}

TEST_F(CheckpointRateTest, AnotherNodeRestartingRaisesTheLimit) {
  LocalQueryOptions options;
  options.lcp_write_speeds = test_speeds();
  start(options);
  load();
  EXPECT_EQ(lqh_[0]->lcp_write_speed().reason, LcpSpeedReason::kNormal);
  for (uint16_t part = 0; part < kLogParts; ++part) {
    send_to(lqh_address(part), Signal(protocol::kNodeStartingRep, {2}));
  }
  for (uint16_t part = 0; part < kLogParts; ++part) {
    ASSERT_TRUE(answered(protocol::kNodeStartingConf));
  }
  EXPECT_EQ(lqh_[0]->lcp_write_speed().reason, LcpSpeedReason::kOtherNodeRestart);
  start_checkpoint();
  ASSERT_TRUE(finish_checkpoint());
  expect_written_at(1'200'000);
  for (uint16_t part = 0; part < kLogParts; ++part) {
    EXPECT_EQ(lqh_[part]->last_lcp_write_stats().strongest_reason,
              LcpSpeedReason::kOtherNodeRestart);
  }
}

TEST_F(CheckpointRateTest, RedoFillingDuringASlowCheckpointRaisesTheLimit) {
  // Half the rows written again while the checkpoint writes: about 250 KB of redo per
  // part. Past the threshold the fastest limit applies; past twice it, none. The
  // checkpoint answers the redo's GCP saves meanwhile, which the first second does not
  // need (no save is asked for).
  struct Case {
    uint64_t raise_bytes;
    LcpSpeedReason reason;
  };
  for (const Case& c : {Case{150 * 1024, LcpSpeedReason::kRedoFilling},
                        Case{64 * 1024, LcpSpeedReason::kRedoOverflowing}}) {
    SCOPED_TRACE(c.raise_bytes);
    LocalQueryOptions options;
    options.lcp_write_speeds = test_speeds();
    options.lcp_write_speeds.normal_bytes_per_s = 100'000;  // ~5 s for a part's rows
    options.lcp_write_speeds.redo_raise_bytes = c.raise_bytes;
    start(options);
    load();
    std::array<uint64_t, kLogParts> lsn_at_start{};
    for (uint16_t part = 0; part < kLogParts; ++part) {
      lsn_at_start[part] = lqh_[part]->redo_log().appended_lsn();
    }
    start_checkpoint();
    // A second at the normal limit (a fifth of the rows), then the redo comes.
    sim_->run_for(1 * kSecond);
    EXPECT_EQ(lqh_[0]->lcp_write_speed().reason, LcpSpeedReason::kNormal);
    write_rows(0, kRows / 2, ++gci_);
    for (uint16_t part = 0; part < kLogParts; ++part) {
      const uint64_t redo = lqh_[part]->redo_log().appended_lsn() - lsn_at_start[part];
      EXPECT_GE(redo, c.raise_bytes) << part;
      if (c.reason == LcpSpeedReason::kRedoFilling) {
        EXPECT_LT(redo, 2 * c.raise_bytes) << part;
      }
      EXPECT_EQ(lqh_[part]->lcp_write_speed().reason, c.reason) << part;
    }
    ASSERT_TRUE(finish_checkpoint());
    for (uint16_t part = 0; part < kLogParts; ++part) {
      const LcpWriteStats& stats = lqh_[part]->last_lcp_write_stats();
      EXPECT_EQ(stats.strongest_reason, c.reason) << part;
      EXPECT_GT(stats.write_ns, 1 * kSecond) << part;
      const uint64_t at_normal_ns = stats.bytes * kSecond / 100'000;
      EXPECT_LT(stats.write_ns, at_normal_ns / 2)
          << "part " << part << ": " << stats.bytes << " bytes in " << stats.write_ns << " ns";
    }
    sim_.reset();
  }
}

}  // namespace
}  // namespace duo::local_query
