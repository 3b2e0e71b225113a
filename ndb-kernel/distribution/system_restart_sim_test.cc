// System restart in the simulator: a two-node cluster runs transactions while global
// checkpoints complete, every node crashes at a random instant (unsynced disk writes
// lost or torn), and the cluster restarts from its disks. The promise checked, over
// many seeds and several crashes per run: every transaction acknowledged with a GCI
// at or below the recovered GCI is back, whole; none above it is (all or nothing per
// transaction; one the client got no answer for is all there or not at all); the
// recovered GCI is at least the last one known complete before the crash; both replicas
// are identical; and the cluster keeps working afterwards.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/distribution/distribution_block.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/testing/sim_cluster.h"
#include "ndb-kernel/testing/value_bytes.h"
#include "storage/scan/interpreted_update.h"

namespace duo::testing {
namespace {

using kernel::Signal;
using protocol::OpBody;
using storage::AttrValues;
using storage::ColumnType;
using storage::OpType;

storage::TableSchema counters_schema() {
  storage::TableSchema schema;
  schema.name = "sr/def/counters";
  schema.columns = {{"id", ColumnType::kBigInt, false, false},
                    {"n", ColumnType::kBigInt, false, false},
                    {"pad", ColumnType::kVarchar, false, true, 100}};
  schema.primary_key = {0};
  schema.ordered_indexes = {{"n_idx", {1}, false}};
  return schema;
}

// What one acknowledged transaction did: inserted row `inserted` (or -1) and added 1
// to counter `bumped` (or -1).
struct Committed {
  uint32_t gci = 0;
  int64_t inserted = -1;
  int64_t bumped = -1;
};

class SystemRestartTest : public ::testing::TestWithParam<uint64_t> {
 protected:
  SystemRestartTest()
      : cluster_(SimClusterOptions{.seed = GetParam(), .link_jitter_ns = 200'000,
                                   .gcp_interval_ms = 50}) {}

  ScriptClient& client() { return cluster_.client(); }

  protocol::TableDef get_table(uint16_t node) {
    EXPECT_TRUE(client()
                    .send(SimCluster::dictionary(node),
                          protocol::DictMsg{1, 0, 0, 0, "sr/def/counters"}.to_signal(
                              protocol::kGetTableReq))
                    .ok());
    EXPECT_TRUE(cluster_.run_until([&] {
      return client().has(protocol::kGetTableConf) || client().has(protocol::kGetTableRef);
    }));
    EXPECT_TRUE(client().has(protocol::kGetTableConf)) << "table restored";
    Result<protocol::TableMsg> msg =
        protocol::TableMsg::from_signal(client().take(protocol::kGetTableConf));
    return msg->table;
  }

  void send(uint16_t tc, uint64_t api_tx, uint32_t op, OpType type, const OpBody& body,
            uint8_t flags) {
    ASSERT_TRUE(client()
                    .send(SimCluster::coordinator(tc), key_signal(api_tx, op, table_, type, body, flags))
                    .ok());
  }

  // Starts a transaction inserting a new row and bumping a random counter.
  void start_transaction() {
    const uint64_t tx = next_tx_++;
    Committed what;
    what.inserted = next_id_++;
    OpBody row;
    row.key_or_row.add(0, i64(what.inserted));
    row.key_or_row.add(1, i64(0));
    row.key_or_row.add(2, std::string(random_.uniform(100), 'x'));
    const uint16_t tc = static_cast<uint16_t>(1 + random_.uniform(2));
    send(tc, tx, 0, OpType::kInsert, row, 0);
    what.bumped = static_cast<int64_t>(random_.uniform(kCounters));
    OpBody bump;
    bump.key_or_row.add(0, i64(what.bumped));
    storage::InterpretedUpdate program;
    program.add(1, 1);
    bump.program = program.encode();
    send(tc, tx, 1, OpType::kInterpretedUpdate, bump, protocol::kOpExecute | protocol::kOpCommit);
    in_flight_[tx] = what;
  }

  // Drains answers; acknowledged commits are recorded with their GCI.
  void collect() {
    while (client().has(protocol::kTcKeyConf)) {
      Signal s = client().take(protocol::kTcKeyConf);
      Result<protocol::TcKeyConf> conf = protocol::TcKeyConf::from_signal(s);
      ASSERT_TRUE(conf.ok());
      auto it = in_flight_.find(conf->api_tx);
      if (it == in_flight_.end() || (conf->flags & protocol::kTcBatchDone) == 0) continue;
      if (conf->flags & protocol::kTcCommitted) {
        ASSERT_GT(conf->gci, 0u);
        it->second.gci = conf->gci;
        committed_.push_back(it->second);
      }
      in_flight_.erase(it);
    }
  }

  std::map<int64_t, int64_t> replica(uint16_t node) {
    std::map<int64_t, int64_t> rows;
    for (uint16_t part = 0; part < cluster_.topology().log_parts; ++part) {
      auto* lqh = cluster_.block<local_query::LocalQueryBlock>(node, protocol::kLocalQueryBlock, part);
      for (uint32_t f : lqh->fragment_ids(table_.schema.table_id)) {
        auto* fragment = const_cast<storage::Fragment*>(lqh->fragment(table_.schema.table_id, f));
        auto scan = fragment->open_scan(storage::Fragment::ScanSpec{});
        storage::RowBatch batch;
        for (;;) {
          batch.clear();
          Result<size_t> n = (*scan)->next(256, &batch);
          if (!n.ok() || *n == 0) break;
          for (size_t r = 0; r < batch.rows(); ++r) {
            rows[as_i64(batch.row(r).value(0))] = as_i64(batch.row(r).value(1));
          }
        }
      }
    }
    return rows;
  }

  // Expected contents if everything committed at or below `gci` survived.
  std::map<int64_t, int64_t> expected(uint32_t gci) const {
    std::map<int64_t, int64_t> rows;
    for (int64_t id = 0; id < kCounters; ++id) rows[id] = 0;
    for (const Committed& c : committed_) {
      if (c.gci > gci) continue;
      rows[c.inserted] = 0;
      rows[c.bumped] += 1;
    }
    return rows;
  }

  static constexpr int64_t kCounters = 8;
  SimCluster cluster_;
  SeededRandom random_{GetParam() * 7919};
  protocol::TableDef table_;
  uint64_t next_tx_ = 1;
  int64_t next_id_ = kCounters;
  std::map<uint64_t, Committed> in_flight_;
  std::vector<Committed> committed_;
};

TEST_P(SystemRestartTest, RecoversEveryCommitUpToTheRecoveredGciAndNothingAfter) {
  ASSERT_TRUE(client().send(SimCluster::dictionary(1), create_table_signal(1, counters_schema())).ok());
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kCreateTableConf); }));
  client().take(protocol::kCreateTableConf);
  table_ = get_table(2);
  // The counters, committed and made durable before anything else.
  for (int64_t id = 0; id < kCounters; ++id) {
    OpBody row;
    row.key_or_row.add(0, i64(id));
    row.key_or_row.add(1, i64(0));
    send(1, next_tx_, static_cast<uint32_t>(id), OpType::kInsert, row,
         id == kCounters - 1 ? protocol::kOpExecute | protocol::kOpCommit : 0);
  }
  in_flight_[next_tx_++] = Committed{};
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kTcKeyConf); }));
  collect();
  ASSERT_EQ(committed_.size(), 1u);
  const uint32_t counters_gci = committed_[0].gci;
  committed_.clear();
  ASSERT_TRUE(cluster_.run_until([&] { return cluster_.last_complete_gci() >= counters_gci; }));

  for (int round = 0; round < 3; ++round) {
    // Load with up to 6 transactions in flight for a random stretch of virtual time.
    const uint64_t load_ms = 100 + random_.uniform(400);
    const uint64_t until = cluster_.sim().now_ns() + load_ms * kNanosPerMilli;
    while (cluster_.sim().now_ns() < until) {
      while (in_flight_.size() < 6) start_transaction();
      cluster_.run_until([&] { return client().has(protocol::kTcKeyConf); }, 20);
      collect();
    }
    const uint32_t complete_before = cluster_.last_complete_gci();
    cluster_.crash_and_restart_all();
    if (random_.uniform(3) == 0) {
      // Crash again in the middle of the restart (restore, its checkpoint, the switch
      // to the new redo): recovery must be restartable at every point.
      cluster_.sim().run_for(random_.uniform(30) * kNanosPerMilli);
      cluster_.crash_and_restart_all();
    }
    // Transactions without an answer: committed or not, the client cannot know. Each
    // must be all there or not at all, which the row it inserted tells.
    std::vector<Committed> uncertain;
    for (const auto& [tx, what] : in_flight_) uncertain.push_back(what);
    in_flight_.clear();
    client().inbox().clear();
    ASSERT_TRUE(cluster_.wait_started(30'000)) << "round " << round;
    auto* dih = cluster_.block<distribution::DistributionBlock>(1, protocol::kDistributionBlock);
    const uint32_t recovered = dih->restart_gci();
    EXPECT_GE(recovered, complete_before) << "round " << round;
    table_ = get_table(1);
    const std::map<int64_t, int64_t> on_1 = replica(1);
    EXPECT_EQ(on_1, replica(2)) << "round " << round;
    for (Committed& what : uncertain) {
      if (what.inserted < 0 || on_1.count(what.inserted) == 0) continue;
      what.gci = recovered;  // it committed in some GCI the restart kept
      committed_.push_back(what);
    }
    EXPECT_EQ(on_1, expected(recovered)) << "round " << round << ", recovered GCI " << recovered;
    // Forget what did not survive: the client was never promised it.
    std::erase_if(committed_, [&](const Committed& c) { return c.gci > recovered; });
  }
}

// DUO_RESTART_SEEDS=N runs a longer campaign (CI runs 200).
uint64_t seed_count() {
  const char* text = std::getenv("DUO_RESTART_SEEDS");
  return text != nullptr ? std::strtoull(text, nullptr, 10) : 200;
}

INSTANTIATE_TEST_SUITE_P(Seeds, SystemRestartTest, ::testing::Range<uint64_t>(1, 1 + seed_count()));

}  // namespace
}  // namespace duo::testing
