// Read backup (NDB's READ_BACKUP table option, protocol::kTableReadBackup) end to end in
// the simulator: real dictionary, coordinator and local_query blocks, a scripted client.
// Checks what the option promises: a committed read (and every fragment of a scan) of
// such a table is served by the coordinator's own replica, locking reads and every read
// of an ordinary table by the primary; a read through one coordinator right after the
// commit was acknowledged through another sees the committed row, however the
// replicas' signals interleave (the commit is acknowledged only after every replica
// applied it); a starting or dead replica is never read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

#include "ndb-kernel/common/random.h"
#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/protocol/packed_signals.h"
#include "ndb-kernel/testing/sim_cluster.h"
#include "ndb-kernel/testing/value_bytes.h"

namespace duo::testing {
namespace {

using kernel::Signal;
using protocol::OpBody;
using protocol::TableDef;
using storage::AttrValues;
using storage::ColumnType;
using storage::LockMode;
using storage::OpType;

// kv(id INT PRIMARY KEY, value BIGINT NOT NULL)
storage::TableSchema kv_schema(const std::string& name) {
  storage::TableSchema schema;
  schema.name = "rb/def/" + name;
  schema.columns = {{"id", ColumnType::kInt, false, false},
                    {"value", ColumnType::kBigInt, false, false}};
  schema.primary_key = {0};
  return schema;
}

OpBody row(int32_t id, int64_t value) {
  OpBody body;
  body.key_or_row.add(0, i32(id));
  body.key_or_row.add(1, i64(value));
  return body;
}

OpBody read_key(int32_t id) {
  OpBody body;
  body.key_or_row.add(0, i32(id));
  body.columns = {1};
  return body;
}

// The value column of a read's result; nullopt when the row does not exist.
std::optional<int64_t> read_value(const protocol::OpResultMsg& result) {
  if (result.error != ErrorCode::kOk) return std::nullopt;
  protocol::ByteReader in(protocol::as_view(result.data));
  AttrValues values;
  EXPECT_TRUE(protocol::decode_attr_values(&in, &values));
  EXPECT_EQ(values.size(), 1u);
  if (values.size() != 1) return std::nullopt;
  return as_i64(values.value(0));
}

// Where a read or a scan fragment was delivered.
struct ReadSeen {
  uint16_t node = 0;
  uint32_t position = 0;  // in the chain the coordinator sent
  std::vector<uint16_t> chain;
  LockMode lock = LockMode::kCommittedRead;
};

class ReadBackupHarness {
 public:
  explicit ReadBackupHarness(SimClusterOptions options) : cluster_(options) {
    // Every key read and scan fragment delivered to a local_query, packed or not.
    cluster_.sim().set_delivery_observer([this](uint64_t, const Signal& signal) {
      if (signal.id() == protocol::kPackedSignals) {
        Result<std::vector<Signal>> inner = protocol::unpack_signals(signal);
        if (inner.ok()) {
          for (Signal& one : *inner) {
            one.set_receiver(signal.receiver());
            observe(one);
          }
        }
        return;
      }
      observe(signal);
    });
  }

  ScriptClient& client() { return cluster_.client(); }
  coordinator::CoordinatorBlock* tc(uint16_t node) {
    return cluster_.block<coordinator::CoordinatorBlock>(node, protocol::kCoordinatorBlock);
  }
  uint64_t backup_reads() {
    uint64_t total = 0;
    for (uint16_t node : cluster_.data_nodes()) {
      if (auto* block = tc(node)) total += block->stats().backup_reads;
    }
    return total;
  }

  // CREATE_TABLEREQ through node 1's dictionary; the definition as node 2 serves it.
  TableDef create_table(const std::string& name, bool read_backup) {
    protocol::TableMsg msg;
    msg.request_id = next_request_++;
    msg.table.schema = kv_schema(name);
    msg.table.flags = read_backup ? protocol::kTableReadBackup : 0;
    Result<Signal> create = msg.to_signal(protocol::kCreateTableReq);
    EXPECT_TRUE(create.ok());
    EXPECT_TRUE(client().send(SimCluster::dictionary(1), std::move(create).value()).ok());
    EXPECT_TRUE(cluster_.run_until([&] { return client().has(protocol::kCreateTableConf); }));
    protocol::DictMsg conf =
        protocol::DictMsg::from_signal(client().take(protocol::kCreateTableConf));
    EXPECT_TRUE(client()
                    .send(SimCluster::dictionary(2),
                          protocol::DictMsg{next_request_++, conf.a, 0, 0, ""}.to_signal(
                              protocol::kGetTableReq))
                    .ok());
    EXPECT_TRUE(cluster_.run_until([&] { return client().has(protocol::kGetTableConf); }));
    Result<protocol::TableMsg> table =
        protocol::TableMsg::from_signal(client().take(protocol::kGetTableConf));
    EXPECT_TRUE(table.ok());
    EXPECT_EQ(table->table.flags, msg.table.flags) << "the option persists in the dictionary";
    return table->table;
  }

  void send_op(uint16_t node, uint64_t api_tx, uint32_t op_index, const TableDef& table,
               OpType type, const OpBody& body, uint8_t flags,
               LockMode lock = LockMode::kCommittedRead) {
    EXPECT_TRUE(client()
                    .send(SimCluster::coordinator(node),
                          key_signal(api_tx, op_index, table, type, body, flags, lock))
                    .ok());
  }

  // Waits for api_tx's answer up to kTcBatchDone, merging its TC_KEYCONFs.
  protocol::TcKeyConf wait_conf(uint64_t api_tx) {
    protocol::TcKeyConf merged;
    while ((merged.flags & protocol::kTcBatchDone) == 0) {
      auto mine = [&](const Signal& s) {
        return s.id() == protocol::kTcKeyConf && protocol::transaction_of(s) == api_tx;
      };
      bool found = false;
      EXPECT_TRUE(cluster_.run_until([&] {
        for (const Signal& s : client().inbox()) found |= mine(s);
        return found;
      }));
      if (!found) return merged;
      for (auto it = client().inbox().begin(); it != client().inbox().end(); ++it) {
        if (!mine(*it)) continue;
        Result<protocol::TcKeyConf> conf = protocol::TcKeyConf::from_signal(*it);
        client().inbox().erase(it);
        EXPECT_TRUE(conf.ok());
        for (auto& r : conf->results) merged.results.push_back(std::move(r));
        merged.flags = conf->flags;
        break;
      }
    }
    return merged;
  }

  void insert_rows(uint16_t node, const TableDef& table, int32_t count) {
    const uint64_t tx = next_tx_++;
    for (int32_t id = 0; id < count; ++id) {
      send_op(node, tx, static_cast<uint32_t>(id), table, OpType::kInsert, row(id, 100 + id),
              id + 1 == count ? protocol::kOpExecute | protocol::kOpCommit : 0);
    }
    EXPECT_TRUE(wait_conf(tx).flags & protocol::kTcCommitted);
  }

  std::optional<int64_t> read(uint16_t node, const TableDef& table, int32_t id,
                              LockMode lock = LockMode::kCommittedRead) {
    const uint64_t tx = next_tx_++;
    send_op(node, tx, 0, table, OpType::kRead, read_key(id),
            protocol::kOpExecute | protocol::kOpCommit, lock);
    protocol::TcKeyConf conf = wait_conf(tx);
    EXPECT_TRUE(conf.flags & protocol::kTcCommitted);
    EXPECT_EQ(conf.results.size(), 1u);
    return conf.results.empty() ? std::nullopt : read_value(conf.results[0]);
  }

  // A whole-table scan through `node`'s coordinator: id -> value.
  std::map<int32_t, int64_t> scan(uint16_t node, const TableDef& table) {
    protocol::ScanBody body;
    protocol::ScanTabReq req;
    req.api_tx = next_tx_++;
    req.scan_id = 1;
    req.table_id = table.schema.table_id;
    req.table_version = table.version;
    req.batch_rows = 16;
    EXPECT_TRUE(body.encode(&req.body).ok());
    std::map<int32_t, int64_t> rows;
    Result<ScanOutcome> outcome = client().scan(SimCluster::coordinator(node), std::move(req));
    EXPECT_TRUE(outcome.ok()) << outcome.status().message();
    if (!outcome.ok()) return rows;
    for (const storage::RowBatch& decoded : outcome->batches) {
      for (size_t r = 0; r < decoded.rows(); ++r) {
        int32_t id = 0;
        std::memcpy(&id, decoded.row(r).value(0).data(), 4);
        EXPECT_TRUE(rows.emplace(id, as_i64(decoded.row(r).value(1))).second) << "seen twice";
      }
    }
    return rows;
  }

  // A NODE_STARTINGREP / NODE_STARTEDREP for `subject` to the coordinators of `nodes`,
  // as their distribution blocks send it in a node restart (which ignore the answers
  // they did not ask for).
  void report(kernel::SignalId id, uint16_t subject, std::vector<uint16_t> nodes) {
    for (uint16_t node : nodes) {
      Signal signal(id, {subject, 5});
      signal.set_sender({node, protocol::kDistributionBlock, 0});
      signal.set_receiver(SimCluster::coordinator(node));
      ASSERT_TRUE(cluster_.sim().inject(std::move(signal)).ok());
    }
    const bool starting = id == protocol::kNodeStartingRep;
    ASSERT_TRUE(cluster_.run_until([&] {
      for (uint16_t node : nodes) {
        const std::vector<uint16_t>& set = tc(node)->starting_nodes();
        if ((std::find(set.begin(), set.end(), subject) != set.end()) != starting) return false;
      }
      return true;
    }));
  }

  // The node dies: its blocks are gone, its links cut, and every survivor's blocks hear
  // NODE_FAILREP (what membership delivers once the survivors agree).
  void crash(uint16_t node) {
    ASSERT_TRUE(cluster_.sim().crash_node(node).ok());
    for (uint16_t other : cluster_.data_nodes()) {
      if (other != node) cluster_.sim().cut_link(node, other);
    }
    cluster_.sim().cut_link(node, kFirstClientNode);
    for (uint16_t survivor : cluster_.data_nodes()) {
      if (survivor == node) continue;
      std::vector<kernel::BlockAddress> targets{SimCluster::coordinator(survivor),
                                                SimCluster::dictionary(survivor),
                                                {survivor, protocol::kDistributionBlock, 0}};
      for (uint16_t part = 0; part < cluster_.topology().log_parts; ++part) {
        targets.push_back({survivor, protocol::kLocalQueryBlock, part});
      }
      for (const kernel::BlockAddress& target : targets) {
        Signal fail(protocol::kNodeFailRep, {node});
        fail.set_sender({survivor, 0, 0});
        fail.set_receiver(target);
        ASSERT_TRUE(cluster_.sim().inject(std::move(fail)).ok());
      }
    }
    cluster_.run_until([] { return false; }, 50);
  }

  SimCluster cluster_;
  std::vector<ReadSeen> key_reads_;       // LQH_KEYREQ of type read, in delivery order
  std::vector<uint16_t> scan_fragments_;  // SCAN_FRAGREQ receivers
  uint64_t next_tx_ = 1000;
  uint32_t next_request_ = 1;

 private:
  void observe(const Signal& signal) {
    if (signal.id() == protocol::kLqhKeyReq) {
      Signal copy = signal.clone();
      Result<protocol::LqhKeyReq> req = protocol::LqhKeyReq::from_signal(copy);
      if (req.ok() && req->type == OpType::kRead) {
        key_reads_.push_back({signal.receiver().node_id, req->position, req->chain, req->lock});
      }
    } else if (signal.id() == protocol::kScanFragReq) {
      scan_fragments_.push_back(signal.receiver().node_id);
    }
  }
};

// ---------------------------------------------------------------------------------------
// Routing.

class ReadBackupRoutingTest : public ::testing::Test {
 protected:
  ReadBackupHarness h_{SimClusterOptions{}};  // one node group: nodes 1 and 2
};

TEST_F(ReadBackupRoutingTest, CommittedReadsAndScansOfAReadBackupTableStayOnTheCoordinatorsNode) {
  const TableDef table = h_.create_table("rb", /*read_backup=*/true);
  EXPECT_EQ(table.flags & protocol::kTableReadBackup, protocol::kTableReadBackup);
  constexpr int32_t kRows = 64;
  h_.insert_rows(1, table, kRows);
  for (uint16_t node : {1, 2}) {
    h_.key_reads_.clear();
    const uint64_t backup_before = h_.tc(node)->stats().backup_reads;
    for (int32_t id = 0; id < kRows; ++id) EXPECT_EQ(h_.read(node, table, id), 100 + id);
    ASSERT_EQ(h_.key_reads_.size(), static_cast<size_t>(kRows));
    uint64_t at_backup = 0;
    for (const ReadSeen& seen : h_.key_reads_) {
      EXPECT_EQ(seen.node, node) << "served by the coordinator's own replica";
      EXPECT_EQ(seen.chain.at(seen.position), node);
      at_backup += seen.position != 0;
    }
    EXPECT_GT(at_backup, 0u) << "some keys have the other node as primary";
    EXPECT_LT(at_backup, static_cast<uint64_t>(kRows));
    EXPECT_EQ(h_.tc(node)->stats().backup_reads - backup_before, at_backup);

    h_.scan_fragments_.clear();
    const uint64_t scans_before = h_.tc(node)->stats().backup_scan_fragments;
    const std::map<int32_t, int64_t> rows = h_.scan(node, table);
    EXPECT_EQ(rows.size(), static_cast<size_t>(kRows));
    EXPECT_EQ(h_.scan_fragments_.size(), table.fragment_count);
    for (uint16_t at : h_.scan_fragments_) EXPECT_EQ(at, node);
    EXPECT_GT(h_.tc(node)->stats().backup_scan_fragments, scans_before);
  }
}

TEST_F(ReadBackupRoutingTest, LockingReadsOfAReadBackupTableGoToThePrimary) {
  const TableDef table = h_.create_table("rb", /*read_backup=*/true);
  h_.insert_rows(1, table, 32);
  h_.key_reads_.clear();
  for (int32_t id = 0; id < 32; ++id) {
    EXPECT_EQ(h_.read(2, table, id, LockMode::kShared), 100 + id);
    EXPECT_EQ(h_.read(2, table, id, LockMode::kExclusive), 100 + id);
  }
  ASSERT_EQ(h_.key_reads_.size(), 64u);
  for (const ReadSeen& seen : h_.key_reads_) {
    EXPECT_EQ(seen.position, 0u);
    EXPECT_EQ(seen.node, seen.chain.front());
  }
}

// A write and a read of the same row in one batch: the write reaches the backup only
// through the primary, so the read must not be sent straight to the backup.
TEST_F(ReadBackupRoutingTest, ATransactionThatWroteReadsItsOwnWritesAtThePrimary) {
  const TableDef table = h_.create_table("rb", /*read_backup=*/true);
  constexpr int32_t kRows = 32;
  h_.insert_rows(1, table, kRows);
  const uint64_t tx = h_.next_tx_++;
  uint32_t op = 0;
  for (int32_t id = 0; id < kRows; ++id) {
    h_.send_op(2, tx, op++, table, OpType::kWrite, row(id, 5000 + id), 0);
    h_.send_op(2, tx, op++, table, OpType::kRead, read_key(id),
               id + 1 == kRows ? protocol::kOpExecute : 0);
  }
  h_.key_reads_.clear();
  protocol::TcKeyConf conf = h_.wait_conf(tx);
  ASSERT_EQ(conf.results.size(), 2u * kRows);
  for (const protocol::OpResultMsg& result : conf.results) {
    if (result.op_index % 2 == 0) continue;
    EXPECT_EQ(read_value(result), 5000 + static_cast<int64_t>(result.op_index / 2))
        << "the transaction's own write";
  }
  for (const ReadSeen& seen : h_.key_reads_) EXPECT_EQ(seen.position, 0u);
  ASSERT_TRUE(h_.client()
                  .send(SimCluster::coordinator(2),
                        protocol::api_transaction_signal(protocol::kTcRollbackReq, tx))
                  .ok());
  EXPECT_TRUE(h_.wait_conf(tx).flags & protocol::kTcAborted);
  for (int32_t id = 0; id < kRows; ++id) EXPECT_EQ(h_.read(2, table, id), 100 + id);
}

TEST_F(ReadBackupRoutingTest, AnOrdinaryTableIsReadAndScannedAtThePrimary) {
  const TableDef table = h_.create_table("plain", /*read_backup=*/false);
  h_.insert_rows(2, table, 64);
  for (uint16_t node : {1, 2}) {
    h_.key_reads_.clear();
    for (int32_t id = 0; id < 64; ++id) EXPECT_EQ(h_.read(node, table, id), 100 + id);
    for (const ReadSeen& seen : h_.key_reads_) {
      EXPECT_EQ(seen.position, 0u);
      EXPECT_EQ(seen.node, seen.chain.front());
    }
    h_.scan_fragments_.clear();
    EXPECT_EQ(h_.scan(node, table).size(), 64u);
    std::map<uint16_t, size_t> per_node;
    for (uint16_t at : h_.scan_fragments_) ++per_node[at];
    EXPECT_EQ(per_node.size(), 2u) << "each fragment at its primary, on both nodes";
  }
  EXPECT_EQ(h_.backup_reads(), 0u);
  EXPECT_EQ(h_.tc(1)->stats().backup_scan_fragments + h_.tc(2)->stats().backup_scan_fragments, 0u);
}

// Two node groups (nodes 1, 2 | 3, 4): node 1 is starting as far as the coordinators
// know (its own coordinator is told nothing, so it keeps coordinating), then started,
// then node 2 dies. A read never reaches the starting or the dead replica.
TEST(ReadBackupReplicaStateTest, AStartingOrDeadReplicaIsNeverRead) {
  ReadBackupHarness h(SimClusterOptions{.node_groups = 2});
  const TableDef table = h.create_table("rb", /*read_backup=*/true);
  constexpr int32_t kRows = 64;
  h.insert_rows(3, table, kRows);
  auto read_everything = [&](std::vector<uint16_t> coordinators) {
    h.key_reads_.clear();
    h.scan_fragments_.clear();
    for (uint16_t node : coordinators) {
      for (int32_t id = 0; id < kRows; ++id) EXPECT_EQ(h.read(node, table, id), 100 + id);
      EXPECT_EQ(h.scan(node, table).size(), static_cast<size_t>(kRows));
    }
    std::map<uint16_t, size_t> reads_at;
    for (const ReadSeen& seen : h.key_reads_) ++reads_at[seen.node];
    for (uint16_t at : h.scan_fragments_) ++reads_at[at];
    return reads_at;
  };

  h.report(protocol::kNodeStartingRep, 1, {2, 3, 4});
  std::map<uint16_t, size_t> reads_at = read_everything({2, 3, 4});
  EXPECT_EQ(reads_at.count(1), 0u) << "node 1 is starting: never read";
  EXPECT_GT(reads_at[2], 0u);

  h.report(protocol::kNodeStartedRep, 1, {2, 3, 4});
  reads_at = read_everything({1, 3});
  EXPECT_GT(reads_at[1], 0u) << "started: an ordinary replica again";

  h.crash(2);
  reads_at = read_everything({1, 3, 4});
  EXPECT_EQ(reads_at.count(2), 0u) << "node 2 is dead: never read";
}

// ---------------------------------------------------------------------------------------
// No stale read from a backup, under concurrency.
//
// Checkers each own a few keys (nobody else writes them): each round writes one or two
// of them in one transaction through one node's coordinator and, as soon as the
// outcome is known, reads them with committed reads through the OTHER node's
// coordinator, which serves them from its own replica — the backup for about half the
// keys. A read must return exactly the last acknowledged value (an aborted write leaves
// the previous one). Meanwhile noise writers update shared keys (conflicting, waiting
// for locks, sometimes timing out) and noise readers read them, so commits and reads
// of all kinds interleave, with link jitter reordering signals across links.

constexpr int32_t kCheckers = 4;
constexpr int32_t kKeysPerChecker = 6;
constexpr int32_t kRounds = 12;
constexpr int32_t kNoiseKeys = 8;
constexpr int32_t kNoiseBase = 1000;
constexpr int32_t kNoiseWriters = 3;

class ReadBackupStaleReadTest : public ::testing::TestWithParam<uint64_t> {
 protected:
  ReadBackupStaleReadTest()
      : h_(SimClusterOptions{
            .seed = GetParam(), .lock_wait_timeout_ms = 200, .link_jitter_ns = 2'000'000}),
        random_(GetParam() * 7919 + 17) {}

  uint16_t random_node() { return static_cast<uint16_t>(1 + random_.uniform(2)); }

  // Sends a transaction; `done` gets its merged answer.
  void start(uint16_t node, std::vector<std::pair<OpType, OpBody>> ops, LockMode lock,
             std::function<void(const protocol::TcKeyConf&)> done) {
    const uint64_t tx = h_.next_tx_++;
    for (size_t i = 0; i < ops.size(); ++i) {
      h_.send_op(node, tx, static_cast<uint32_t>(i), table_, ops[i].first, ops[i].second,
                 i + 1 == ops.size() ? protocol::kOpExecute | protocol::kOpCommit : 0, lock);
    }
    pending_[tx] = Pending{std::move(done), {}};
  }

  void dispatch(Signal& signal) {
    if (signal.id() != protocol::kTcKeyConf) return;
    auto it = pending_.find(protocol::transaction_of(signal));
    ASSERT_NE(it, pending_.end()) << "an answer nobody waits for";
    Result<protocol::TcKeyConf> conf = protocol::TcKeyConf::from_signal(signal);
    ASSERT_TRUE(conf.ok());
    for (auto& r : conf->results) it->second.merged.results.push_back(std::move(r));
    it->second.merged.flags = conf->flags;
    if ((conf->flags & protocol::kTcBatchDone) == 0) return;
    Pending done = std::move(it->second);
    pending_.erase(it);
    done.done(done.merged);
  }

  void checker_round(int32_t checker) {
    if (rounds_[checker] == kRounds) return;
    ++rounds_[checker];
    const uint16_t writer_node = random_node();
    std::vector<int32_t> keys{checker * kKeysPerChecker +
                              static_cast<int32_t>(random_.uniform(kKeysPerChecker))};
    if (random_.uniform(2) == 0) {
      const int32_t other =
          checker * kKeysPerChecker + static_cast<int32_t>(random_.uniform(kKeysPerChecker));
      if (other != keys[0]) keys.push_back(other);
    }
    std::vector<std::pair<OpType, OpBody>> ops;
    std::vector<int64_t> values;
    for (int32_t key : keys) {
      values.push_back(++version_);
      ops.emplace_back(OpType::kWrite, row(key, values.back()));
    }
    start(writer_node, std::move(ops), LockMode::kCommittedRead,
          [=, this](const protocol::TcKeyConf& conf) {
            if ((conf.flags & protocol::kTcCommitted) != 0) {
              for (size_t i = 0; i < keys.size(); ++i) acked_[keys[i]] = values[i];
              ++commits_;
            }
            // Right after the acknowledgement: read through the other coordinator.
            const uint16_t reader_node = writer_node == 1 ? 2 : 1;
            std::vector<std::pair<OpType, OpBody>> reads;
            for (int32_t key : keys) reads.emplace_back(OpType::kRead, read_key(key));
            start(reader_node, std::move(reads), LockMode::kCommittedRead,
                  [=, this](const protocol::TcKeyConf& answer) {
                    ASSERT_TRUE(answer.flags & protocol::kTcCommitted);
                    ASSERT_EQ(answer.results.size(), keys.size());
                    for (const protocol::OpResultMsg& result : answer.results) {
                      const int32_t key = keys.at(result.op_index);
                      auto acked = acked_.find(key);
                      const std::optional<int64_t> expected =
                          acked == acked_.end() ? std::nullopt
                                                : std::optional<int64_t>(acked->second);
                      EXPECT_EQ(read_value(result), expected)
                          << "key " << key << " read through node " << reader_node
                          << " after its write through node " << writer_node;
                      ++checked_reads_;
                    }
                    checker_round(checker);
                  });
          });
  }

  void noise_round() {
    if (std::all_of(rounds_.begin(), rounds_.end(), [](int32_t r) { return r == kRounds; })) {
      return;
    }
    const int32_t a = kNoiseBase + static_cast<int32_t>(random_.uniform(kNoiseKeys));
    const int32_t b = kNoiseBase + static_cast<int32_t>(random_.uniform(kNoiseKeys));
    if (random_.uniform(3) == 0) {
      // A noise reader: committed or locking, any coordinator, any answer but an error.
      const LockMode lock = random_.uniform(2) == 0 ? LockMode::kCommittedRead : LockMode::kShared;
      start(random_node(), {{OpType::kRead, read_key(a)}}, lock,
            [this](const protocol::TcKeyConf&) { noise_round(); });
      return;
    }
    std::vector<std::pair<OpType, OpBody>> ops{{OpType::kWrite, row(a, ++version_)}};
    if (b != a) ops.emplace_back(OpType::kWrite, row(b, ++version_));
    start(random_node(), std::move(ops), LockMode::kCommittedRead,
          [this](const protocol::TcKeyConf&) { noise_round(); });
  }

  ReadBackupHarness h_;
  SeededRandom random_;
  TableDef table_;
  struct Pending {
    std::function<void(const protocol::TcKeyConf&)> done;
    protocol::TcKeyConf merged;
  };
  std::unordered_map<uint64_t, Pending> pending_;
  std::vector<int32_t> rounds_ = std::vector<int32_t>(kCheckers, 0);
  std::map<int32_t, int64_t> acked_;  // key -> last acknowledged value
  int64_t version_ = 0;
  uint64_t commits_ = 0;
  uint64_t checked_reads_ = 0;
};

TEST_P(ReadBackupStaleReadTest, EveryReadThroughTheOtherNodeSeesTheLastAcknowledgedWrite) {
  table_ = h_.create_table("rb", /*read_backup=*/true);
  for (int32_t c = 0; c < kCheckers; ++c) checker_round(c);
  for (int32_t w = 0; w < kNoiseWriters; ++w) noise_round();
  while (!pending_.empty()) {
    ASSERT_TRUE(h_.cluster_.run_until([&] { return !h_.client().inbox().empty(); }))
        << "no answer for " << pending_.size() << " transaction(s)";
    while (!h_.client().inbox().empty()) {
      Signal signal = std::move(h_.client().inbox().front());
      h_.client().inbox().pop_front();
      dispatch(signal);
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GE(checked_reads_, static_cast<uint64_t>(kCheckers * kRounds));
  EXPECT_GE(commits_, static_cast<uint64_t>(kCheckers * kRounds) / 2) << "most writes commit";
  EXPECT_GT(h_.backup_reads(), 0u) << "backups served some of the reads";
  // Every key a checker wrote reads back its last acknowledged value on both replicas'
  // coordinators, once more at rest.
  for (const auto& [key, value] : acked_) {
    EXPECT_EQ(h_.read(1, table_, key), value);
    EXPECT_EQ(h_.read(2, table_, key), value);
  }
}

// DUO_READ_BACKUP_SEEDS=N runs a longer campaign (CI runs 20).
uint64_t read_backup_seed_count() {
  const char* text = std::getenv("DUO_READ_BACKUP_SEEDS");
  return text != nullptr ? std::strtoull(text, nullptr, 10) : 20;
}

INSTANTIATE_TEST_SUITE_P(Seeds, ReadBackupStaleReadTest,
                         ::testing::Range<uint64_t>(1, 1 + read_backup_seed_count()));

}  // namespace
}  // namespace duo::testing
