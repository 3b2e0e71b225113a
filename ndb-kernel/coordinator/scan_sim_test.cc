// Scans in rounds, end to end in the simulator (coordinator_block.h "Scans run in
// rounds"): real dictionary, coordinator and local_query blocks on two data nodes, a
// scripted client doing what the client library does (ScriptClient::scan). Checked: an
// ordered-index range over every fragment returns each row exactly once in one round
// trip (one SCAN_TABCONF), whatever order the fragments answer in (seeded link jitter);
// small batches take exactly as many rounds as the fullest fragment needs; a round
// larger than a signal arrives in several SCAN_TABCONFs; a client's close and an early
// SCAN_TABNEXTREQ are handled; and a data node dying mid-scan fails the scan with a
// temporary error while a new scan reads every row once from the survivor.
//
// DUO_SCAN_SEEDS=N runs N seeds of the seeded tests (20 by default).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/testing/sim_cluster.h"
#include "ndb-kernel/testing/value_bytes.h"

namespace duo::testing {
namespace {

using kernel::Signal;
using protocol::TableDef;
using storage::ColumnType;
using storage::OpType;

constexpr int32_t kRows = 1000;

// items(id INT PRIMARY KEY, v BIGINT NOT NULL, pad VARCHAR(250), KEY(id)): index 0
// orders the primary key, as NDB's (and sqld's) PRIMARY ordered index does.
storage::TableSchema items_schema() {
  storage::TableSchema schema;
  schema.name = "scan/def/items";
  schema.columns = {{"id", ColumnType::kInt, false, false},
                    {"v", ColumnType::kBigInt, false, false},
                    {"pad", ColumnType::kVarchar, false, true, 250}};
  schema.primary_key = {0};
  schema.ordered_indexes = {{"id_idx", {0}, false}};
  return schema;
}

uint64_t seed_count() {
  const char* env = std::getenv("DUO_SCAN_SEEDS");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 20;
}

class ScanTest : public ::testing::Test {
 protected:
  explicit ScanTest(uint64_t seed = 1, bool membership = false)
      : cluster_(SimClusterOptions{.seed = seed,
                                   .link_jitter_ns = 2'000'000,
                                   .gcp_interval_ms = 50,
                                   .membership = membership}) {}

  ScriptClient& client() { return cluster_.client(); }
  coordinator::CoordinatorBlock* coordinator(uint16_t node) {
    return cluster_.block<coordinator::CoordinatorBlock>(node, protocol::kCoordinatorBlock);
  }

  // Creates items with `fragments` fragments and loads ids 0..rows-1 (v = id, pad of
  // `pad_bytes`), 100 rows per transaction.
  void load(uint32_t fragments, int32_t rows = kRows, size_t pad_bytes = 0) {
    ASSERT_TRUE(cluster_.wait_started());
    Result<TableDef> table =
        cluster_.create_table(create_table_signal(1, items_schema(), fragments), 2);
    if (!table.ok() && client().has(protocol::kCreateTableRef)) {
      protocol::DictMsg ref =
          protocol::DictMsg::from_signal(client().take(protocol::kCreateTableRef));
      FAIL() << "CREATE_TABLEREF " << ref.c << " " << ref.text;
    }
    ASSERT_TRUE(table.ok()) << table.status().to_string();
    table_ = *table;
    ASSERT_EQ(table_.fragment_count, fragments);
    for (int32_t first = 0; first < rows; first += 100) {
      const uint64_t tx = next_tx_++;
      const int32_t last = std::min(first + 100, rows) - 1;
      for (int32_t id = first; id <= last; ++id) {
        protocol::OpBody body;
        body.key_or_row.add(0, i32(id));
        body.key_or_row.add(1, i64(id));
        body.key_or_row.add(2, std::string(pad_bytes, static_cast<char>('a' + id % 26)));
        ASSERT_TRUE(
            client()
                .send(SimCluster::coordinator(1),
                      key_signal(tx, static_cast<uint32_t>(id - first), table_, OpType::kInsert,
                                 body, id == last ? protocol::kOpExecute | protocol::kOpCommit : 0))
                .ok());
      }
      ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kTcKeyConf); }));
      Signal answer = client().take(protocol::kTcKeyConf);
      Result<protocol::TcKeyConf> conf = protocol::TcKeyConf::from_signal(answer);
      ASSERT_TRUE(conf.ok());
      ASSERT_TRUE(conf->flags & protocol::kTcCommitted) << conf->tx_message;
    }
  }

  // A scan of ids [low, high] by the primary-key index (both unbounded when negative),
  // projecting id only.
  protocol::ScanTabReq range(int32_t low, int32_t high, uint32_t batch_rows = 0,
                             std::vector<uint16_t> columns = {0}) {
    protocol::ScanBody body;
    body.columns = std::move(columns);
    if (low >= 0) body.low.add(0, i32(low));
    if (high >= 0) body.high.add(0, i32(high));
    protocol::ScanTabReq req;
    req.api_tx = next_tx_++;
    req.scan_id = next_scan_id_++;
    req.table_id = table_.schema.table_id;
    req.table_version = table_.version;
    req.index = 0;
    req.flags = protocol::kScanLowInclusive | protocol::kScanHighInclusive;
    req.batch_rows = batch_rows;
    EXPECT_TRUE(body.encode(&req.body).ok());
    return req;
  }

  // id -> times seen.
  static std::map<int32_t, int> ids_of(const ScanOutcome& outcome) {
    std::map<int32_t, int> seen;
    for (const storage::RowBatch& rows : outcome.batches) {
      for (size_t r = 0; r < rows.rows(); ++r) {
        int32_t id = 0;
        std::memcpy(&id, rows.row(r).value(0).data(), 4);
        ++seen[id];
      }
    }
    return seen;
  }
  static void expect_each_once(const ScanOutcome& outcome, int32_t low, int32_t high) {
    const std::map<int32_t, int> seen = ids_of(outcome);
    EXPECT_EQ(seen.size(), static_cast<size_t>(high - low + 1));
    for (int32_t id = low; id <= high; ++id) {
      auto it = seen.find(id);
      EXPECT_TRUE(it != seen.end() && it->second == 1) << "id " << id << " not seen exactly once";
    }
    EXPECT_EQ(seen.begin()->first, low);
    EXPECT_EQ(seen.rbegin()->first, high);
  }
  // Rows of ids [low, high] in each fragment.
  std::vector<size_t> rows_per_fragment(int32_t low, int32_t high) const {
    std::vector<size_t> count(table_.fragment_count);
    for (int32_t id = low; id <= high; ++id) {
      storage::AttrValues key;
      key.add(0, i32(id));
      ++count[*protocol::distribution_hash(table_.schema, key) % table_.fragment_count];
    }
    return count;
  }
  // Scans open at every local_query instance of the live data nodes.
  size_t local_scans() {
    size_t open = 0;
    for (uint16_t node : cluster_.data_nodes()) {
      for (uint16_t part = 0; part < cluster_.topology().log_parts; ++part) {
        auto* lqh =
            cluster_.block<local_query::LocalQueryBlock>(node, protocol::kLocalQueryBlock, part);
        if (lqh != nullptr) open += lqh->scan_count();
      }
    }
    return open;
  }

  SimCluster cluster_;
  TableDef table_;
  uint64_t next_tx_ = 1;
  uint32_t next_scan_id_ = 1;
};

class SeededScanTest : public ScanTest, public ::testing::WithParamInterface<uint64_t> {
 protected:
  SeededScanTest() : ScanTest(GetParam()) {}
};

TEST_P(SeededScanTest, RangeOverEveryFragmentIsOneRoundTripWithEachRowOnce) {
  ASSERT_NO_FATAL_FAILURE(load(8));
  for (uint16_t tc : {1, 2}) {
    // 100 rows over 8 fragments, the fragments answering in a seeded order.
    Result<ScanOutcome> outcome = client().scan(SimCluster::coordinator(tc), range(200, 299));
    ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
    EXPECT_EQ(outcome->rounds, 1u);
    EXPECT_EQ(outcome->confs, 1u) << "every fragment's batch in one SCAN_TABCONF";
    expect_each_once(*outcome, 200, 299);
    // A range the index holds nothing of: one round, no rows.
    outcome = client().scan(SimCluster::coordinator(tc), range(5000, 6000));
    ASSERT_TRUE(outcome.ok());
    EXPECT_EQ(outcome->rounds, 1u);
    EXPECT_EQ(outcome->rows(), 0u);
  }
  EXPECT_EQ(coordinator(1)->scan_count() + coordinator(2)->scan_count(), 0u);
  EXPECT_EQ(local_scans(), 0u);
}

TEST_P(SeededScanTest, SmallBatchesTakeTheRoundsOfTheFullestFragment) {
  const uint32_t fragments = GetParam() % 2 == 0 ? 8 : 3;
  ASSERT_NO_FATAL_FAILURE(load(fragments));
  const uint32_t batch_rows = 1 + GetParam() % 7;
  Result<ScanOutcome> outcome =
      client().scan(SimCluster::coordinator(1), range(0, kRows - 1, batch_rows));
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  expect_each_once(*outcome, 0, kRows - 1);
  // A fragment whose last batch is full says it is done with it: no extra empty round.
  size_t rounds = 0;
  for (size_t rows : rows_per_fragment(0, kRows - 1)) {
    rounds = std::max(rounds, (rows + batch_rows - 1) / batch_rows);
  }
  EXPECT_EQ(outcome->rounds, rounds);
  EXPECT_EQ(local_scans(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, SeededScanTest, ::testing::Range<uint64_t>(1, 1 + seed_count()));

TEST_F(ScanTest, ARoundLargerThanASignalComesInSeveralSignals) {
  // 8 fragments of ~125 rows of ~210 encoded bytes: each fragment's batch stops at its
  // share of the round budget (32 KiB), two fit in no 64 KiB signal.
  ASSERT_NO_FATAL_FAILURE(load(8, kRows, 200));
  Result<ScanOutcome> outcome =
      client().scan(SimCluster::coordinator(1), range(-1, -1, 0, {0, 1, 2}));
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  expect_each_once(*outcome, 0, kRows - 1);
  EXPECT_EQ(outcome->rounds, 1u);
  EXPECT_GE(outcome->confs, 4u);
  for (const storage::RowBatch& rows : outcome->batches) {
    EXPECT_EQ(rows.row(0).value(2).size(), 200u);
  }
}

TEST_F(ScanTest, TheRoundBudgetIsDividedOverTheFragments) {
  // 16 fragments share 256 KiB: 16 KiB each, so one round of ~210-byte rows is ~80 rows
  // per fragment and the 1000 rows (~63 per fragment) need one round; with 2 fragments
  // (32 KiB each, ~155 rows) the ~500 rows per fragment need four.
  ASSERT_NO_FATAL_FAILURE(load(2, kRows, 200));
  Result<ScanOutcome> outcome =
      client().scan(SimCluster::coordinator(1), range(-1, -1, 0, {0, 1, 2}));
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  expect_each_once(*outcome, 0, kRows - 1);
  EXPECT_EQ(outcome->rounds, 4u);
}

TEST_F(ScanTest, ClientClosesMidScanAndEverythingIsFreed) {
  ASSERT_NO_FATAL_FAILURE(load(8));
  protocol::ScanTabReq req = range(0, kRows - 1, 2);
  const uint64_t api_tx = req.api_tx;
  const uint32_t scan_id = req.scan_id;
  ASSERT_TRUE(client().send(SimCluster::coordinator(2), std::move(req).to_signal()).ok());
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kScanTabConf); }));
  Signal first = client().take(protocol::kScanTabConf);
  EXPECT_TRUE(protocol::ScanTabConf::from_signal(first)->flags & protocol::kScanRoundDone);
  EXPECT_EQ(local_scans(), 8u) << "every fragment has more: its scan stays open";
  ASSERT_TRUE(client()
                  .send(SimCluster::coordinator(2),
                        protocol::ScanNextReq{api_tx, scan_id, 0, protocol::kScanClose}.to_signal(
                            protocol::kScanTabNextReq))
                  .ok());
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kScanTabConf); }));
  Signal last = client().take(protocol::kScanTabConf);
  Result<protocol::ScanTabConf> done = protocol::ScanTabConf::from_signal(last);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->flags & protocol::kScanAllDone);
  EXPECT_EQ(done->fragments, 0u);
  EXPECT_EQ(coordinator(2)->scan_count(), 0u);
  EXPECT_EQ(local_scans(), 0u);
}

TEST_F(ScanTest, ANextRequestBeforeTheRoundEndedIsIgnored) {
  ASSERT_NO_FATAL_FAILURE(load(8));
  protocol::ScanTabReq req = range(0, kRows - 1, 50);
  const uint64_t api_tx = req.api_tx;
  const uint32_t scan_id = req.scan_id;
  const uint64_t malformed = coordinator(1)->stats().malformed_signals;
  // Sent right behind the SCAN_TABREQ: the round is still out.
  ASSERT_TRUE(client().send(SimCluster::coordinator(1), std::move(req).to_signal()).ok());
  ASSERT_TRUE(
      client()
          .send(SimCluster::coordinator(1),
                protocol::ScanNextReq{api_tx, scan_id, 0, 0}.to_signal(protocol::kScanTabNextReq))
          .ok());
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kScanTabConf); }));
  EXPECT_EQ(coordinator(1)->stats().malformed_signals, malformed + 1);
  client().inbox().clear();
  ASSERT_TRUE(client()
                  .send(SimCluster::coordinator(1),
                        protocol::ScanNextReq{api_tx, scan_id, 0, protocol::kScanClose}.to_signal(
                            protocol::kScanTabNextReq))
                  .ok());
  ASSERT_TRUE(cluster_.run_until([&] { return coordinator(1)->scan_count() == 0; }));
  ASSERT_TRUE(cluster_.run_until([&] { return local_scans() == 0; }));
}

class NodeFailureScanTest : public ScanTest, public ::testing::WithParamInterface<uint64_t> {
 protected:
  NodeFailureScanTest() : ScanTest(GetParam(), /*membership=*/true) {}
};

TEST_P(NodeFailureScanTest, ADataNodeDyingMidScanFailsItAndANewScanSeesEveryRowOnce) {
  ASSERT_NO_FATAL_FAILURE(load(8));
  // Primaries on both nodes (not a read-backup table); small batches, so the scan has
  // rounds left when node 2 dies — before the next round is asked (odd seeds) or while
  // it is out (even seeds).
  bool crashed = false;
  auto crash = [&] {
    ASSERT_TRUE(cluster_.sim().crash_node(2).ok());
    crashed = true;
  };
  Result<ScanOutcome> outcome =
      client().scan(SimCluster::coordinator(1), range(0, kRows - 1, 4), [&](size_t round) {
        if (round == 1 && GetParam() % 2 == 1) crash();
        if (round == 1 && GetParam() % 2 == 0) {
          cluster_.sim().schedule_action(1'000'000 * (GetParam() % 5), [&] { crash(); });
        }
      });
  ASSERT_TRUE(crashed);
  ASSERT_FALSE(outcome.ok()) << "the scan had fragments on the dead node";
  EXPECT_EQ(outcome.status().code(), ErrorCode::kTemporary) << outcome.status().to_string();
  ASSERT_TRUE(cluster_.run_until([&] { return coordinator(1)->scan_count() == 0; }, 5'000));
  ASSERT_TRUE(cluster_.run_until([&] { return local_scans() == 0; }, 5'000));
  // The survivor now primary of every fragment: a new scan reads each row once, a range
  // in one round.
  ASSERT_TRUE(
      cluster_.run_until([&] { return !cluster_.membership(1)->live_nodes().contains(2); }));
  outcome = client().scan(SimCluster::coordinator(1), range(0, kRows - 1, 4));
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  expect_each_once(*outcome, 0, kRows - 1);
  outcome = client().scan(SimCluster::coordinator(1), range(300, 399));
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_EQ(outcome->rounds, 1u);
  expect_each_once(*outcome, 300, 399);
}

INSTANTIATE_TEST_SUITE_P(Seeds, NodeFailureScanTest,
                         ::testing::Range<uint64_t>(1,
                                                    1 + std::max<uint64_t>(seed_count() / 2, 1)));

}  // namespace
}  // namespace duo::testing
