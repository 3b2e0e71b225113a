// The coordinator's part of a node restart in the simulator: two data nodes (one node
// group {1, 2}, four log parts) with their real file system, dictionary, coordinator
// and local_query blocks, and in place of the distribution block a stand-in that sends
// what the real one would (NODE_STARTINGREP / NODE_STARTEDREP, DICT_COPYREQ) and keeps
// the answers. Every LQH_KEYREQ and SCAN_FRAGREQ is observed on delivery, so the tests
// check where the coordinators route: while node 2 is starting every write's chain ends
// at node 2 and no read or scan goes there, node 2's own coordinator refuses clients,
// and after NODE_STARTEDREP node 2 is primary again for its fragments. A starting node
// that dies is dead again: its transactions abort, writes skip it, and its takeover runs
// again.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/dictionary/dictionary_block.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/testing/sim_cluster.h"
#include "ndb-kernel/testing/stand_in_distribution.h"
#include "ndb-kernel/testing/value_bytes.h"

namespace duo::testing {
namespace {

using kernel::BlockAddress;
using kernel::Signal;
using kernel::SignalId;
using protocol::OpBody;
using storage::LockMode;
using storage::OpType;

// One LQH_KEYREQ as delivered.
struct KeyRequest {
  uint16_t receiver = 0;
  uint32_t fragment = 0;
  OpType type = OpType::kRead;
  std::vector<uint16_t> chain;
  uint32_t position = 0;
};

class CoordinatorNodeRestartTest : public StandInDistributionTest {
 protected:
  CoordinatorNodeRestartTest() : StandInDistributionTest(3) {
    sim_->set_delivery_observer([this](uint64_t, const Signal& signal) { observe(signal); });
    sim_->run_for(0);
    create_table();
  }

  void observe(const Signal& signal) {
    if (signal.id() == protocol::kLqhKeyReq) {
      Signal copy = signal.clone();
      Result<protocol::LqhKeyReq> req = protocol::LqhKeyReq::from_signal(copy);
      ASSERT_TRUE(req.ok());
      key_requests_.push_back(
          {signal.receiver().node_id, req->fragment, req->type, req->chain, req->position});
    } else if (signal.id() == protocol::kScanFragReq) {
      scan_fragments_at_.push_back(signal.receiver().node_id);
    }
  }

  coordinator::CoordinatorBlock* coordinator(uint16_t node) {
    return static_cast<coordinator::CoordinatorBlock*>(
        sim_->find_block(SimCluster::coordinator(node)));
  }
  // `report` (NODE_STARTINGREP / NODE_STARTEDREP) for node `starting` to the
  // coordinators of `nodes`, each answered with `conf`.
  void report(SignalId report, SignalId conf, uint16_t starting, std::vector<uint16_t> nodes) {
    for (uint16_t node : nodes) {
      const size_t before = distribution(node)->count(conf, starting);
      from_distribution(node, SimCluster::coordinator(node), Signal(report, {starting, 5}));
      ASSERT_TRUE(run_until([&] { return distribution(node)->count(conf, starting) > before; }));
    }
  }

  void create_table() {
    storage::TableSchema schema;
    schema.name = "bank/def/accounts";
    schema.columns = {{"id", storage::ColumnType::kInt, false, false},
                      {"balance", storage::ColumnType::kBigInt, false, false}};
    schema.primary_key = {0};
    ASSERT_TRUE(client_->send(SimCluster::dictionary(1), create_table_signal(1, schema)).ok());
    ASSERT_TRUE(run_until([&] { return client_->has(protocol::kCreateTableConf); }));
    const uint32_t id = protocol::DictMsg::from_signal(client_->take(protocol::kCreateTableConf)).a;
    table_ = static_cast<dictionary::DictionaryBlock*>(sim_->find_block(SimCluster::dictionary(1)))
                 ->tables()
                 .at(id);
  }

  // Sends one operation (committed unless `open`) through `tc`; returns the answer.
  protocol::TcKeyConf execute(uint16_t tc, OpType type, int32_t id,
                              LockMode lock = LockMode::kCommittedRead, bool open = false,
                              uint64_t api_tx = 0) {
    OpBody body;
    body.key_or_row.add(0, i32(id));
    if (type != OpType::kRead) body.key_or_row.add(1, i64(1000 + id));
    const uint8_t flags = protocol::kOpExecute | (open ? 0 : protocol::kOpCommit);
    if (api_tx == 0) api_tx = next_api_tx_++;
    EXPECT_TRUE(client_
                    ->send(SimCluster::coordinator(tc),
                           key_signal(api_tx, 0, table_, type, body, flags, lock))
                    .ok());
    return answer(api_tx);
  }
  protocol::TcKeyConf answer(uint64_t api_tx) {
    EXPECT_TRUE(run_until([&] { return client_->has(protocol::kTcKeyConf); }));
    if (!client_->has(protocol::kTcKeyConf)) return {};
    Signal signal = client_->take(protocol::kTcKeyConf);
    Result<protocol::TcKeyConf> conf = protocol::TcKeyConf::from_signal(signal);
    EXPECT_TRUE(conf.ok());
    EXPECT_EQ(conf->api_tx, api_tx);
    return std::move(conf).value();
  }
  uint32_t fragment_of(int32_t id) {
    storage::AttrValues key;
    key.add(0, i32(id));
    Result<uint32_t> hash = protocol::distribution_hash(table_.schema, key);
    EXPECT_TRUE(hash.ok());
    return *hash % table_.fragment_count;
  }
  // Full scan through `tc`; the rows seen, or the refusal.
  Result<size_t> scan(uint16_t tc) {
    protocol::ScanTabReq req;
    req.api_tx = next_api_tx_++;
    req.scan_id = 1;
    req.table_id = table_.schema.table_id;
    req.table_version = table_.version;
    EXPECT_TRUE(protocol::ScanBody{}.encode(&req.body).ok());
    DUO_ASSIGN_OR_RETURN(ScanOutcome outcome,
                         client_->scan(SimCluster::coordinator(tc), std::move(req)));
    return outcome.rows();
  }

  protocol::TableDef table_;
  uint64_t next_api_tx_ = 1;
  std::vector<KeyRequest> key_requests_;
  std::vector<uint16_t> scan_fragments_at_;
};

constexpr int32_t kRows = 32;

TEST_F(CoordinatorNodeRestartTest, WritesEndAtTheStartingNodeAndNothingElseGoesThere) {
  ASSERT_NO_FATAL_FAILURE(
      report(protocol::kNodeStartingRep, protocol::kNodeStartingConf, 2, {1, 2}));
  EXPECT_EQ(coordinator(1)->starting_nodes(), std::vector<uint16_t>{2});
  EXPECT_FALSE(coordinator(1)->starting());
  EXPECT_TRUE(coordinator(2)->starting());

  // Writes: chain [1, 2] for every fragment, also those node 2 is normally primary of.
  int normally_primary_2 = 0;
  for (int32_t id = 0; id < kRows; ++id) {
    const protocol::TcKeyConf conf = execute(1, OpType::kInsert, id);
    ASSERT_TRUE(conf.flags & protocol::kTcCommitted) << conf.tx_message;
    if (protocol::place_fragment(topology_, fragment_of(id), table_.fragment_count)
            .replicas.front() == 2) {
      ++normally_primary_2;
    }
  }
  EXPECT_GT(normally_primary_2, 0) << "some rows live in fragments node 2 is primary of";
  ASSERT_EQ(key_requests_.size(), 2u * kRows) << "each insert reached both replicas";
  for (const KeyRequest& req : key_requests_) {
    EXPECT_EQ(req.chain, (std::vector<uint16_t>{1, 2})) << "fragment " << req.fragment;
    EXPECT_EQ(req.receiver, req.chain[req.position]);
  }

  // Reads, committed or locking, and scans: node 1 only.
  key_requests_.clear();
  for (int32_t id = 0; id < kRows; ++id) {
    for (LockMode lock : {LockMode::kCommittedRead, LockMode::kShared}) {
      const protocol::TcKeyConf conf = execute(1, OpType::kRead, id, lock);
      ASSERT_TRUE(conf.flags & protocol::kTcCommitted);
      ASSERT_EQ(conf.results.size(), 1u);
      EXPECT_EQ(conf.results[0].error, ErrorCode::kOk);
    }
  }
  ASSERT_EQ(key_requests_.size(), 2u * kRows);
  for (const KeyRequest& req : key_requests_) {
    EXPECT_EQ(req.receiver, 1u) << "fragment " << req.fragment;
    EXPECT_EQ(req.chain.front(), 1u) << "the primary";
  }
  Result<size_t> rows = scan(1);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(*rows, static_cast<size_t>(kRows));
  ASSERT_EQ(scan_fragments_at_.size(), table_.fragment_count);
  for (uint16_t node : scan_fragments_at_) EXPECT_EQ(node, 1u);

  // Node 2's own coordinator takes no transaction and no scan.
  const protocol::TcKeyConf refused = execute(2, OpType::kInsert, 1000);
  EXPECT_TRUE(refused.flags & protocol::kTcAborted);
  EXPECT_EQ(refused.tx_error, ErrorCode::kTemporary);
  EXPECT_EQ(refused.tx_message, coordinator::kNodeStartingMessage);
  Result<size_t> refused_scan = scan(2);
  ASSERT_FALSE(refused_scan.ok());
  EXPECT_EQ(refused_scan.status().code(), ErrorCode::kTemporary);
  EXPECT_EQ(refused_scan.status().message(), coordinator::kNodeStartingMessage);
  EXPECT_EQ(coordinator(2)->stats().refused_starting, 2u);
  EXPECT_EQ(coordinator(2)->transaction_count(), 0u);

  // Started: node 2 coordinates, and is the primary of its fragments again.
  ASSERT_NO_FATAL_FAILURE(report(protocol::kNodeStartedRep, protocol::kNodeStartedConf, 2, {1, 2}));
  EXPECT_TRUE(coordinator(1)->starting_nodes().empty());
  EXPECT_FALSE(coordinator(2)->starting());
  key_requests_.clear();
  for (int32_t id = 0; id < kRows; ++id) {
    const protocol::TcKeyConf conf = execute(2, OpType::kRead, id, LockMode::kShared);
    ASSERT_TRUE(conf.flags & protocol::kTcCommitted) << conf.tx_message;
    EXPECT_EQ(conf.results.at(0).error, ErrorCode::kOk) << "node 2 has row " << id;
  }
  int read_at_2 = 0;
  for (const KeyRequest& req : key_requests_) {
    EXPECT_EQ(
        req.receiver,
        protocol::place_fragment(topology_, req.fragment, table_.fragment_count).replicas.front());
    read_at_2 += req.receiver == 2 ? 1 : 0;
  }
  EXPECT_EQ(read_at_2, normally_primary_2);
  key_requests_.clear();
  ASSERT_TRUE(execute(2, OpType::kInsert, 1000).flags & protocol::kTcCommitted);
  EXPECT_EQ(key_requests_.at(0).chain,
            protocol::place_fragment(topology_, fragment_of(1000), table_.fragment_count).replicas);
}

TEST_F(CoordinatorNodeRestartTest, AStartingNodeThatDiesIsDeadAgain) {
  // Node 2 dies and its transactions are taken over (TAKEOVER_DONEREP), then it starts
  // again: the schema copied, every node told it is starting.
  crash(2, 1);
  ASSERT_TRUE(
      run_until([&] { return distribution(1)->count(protocol::kTakeoverDoneRep, 2) == 1; }));
  sim_->heal_link(2, 1);
  sim_->heal_link(2, kClientNode);
  ASSERT_TRUE(sim_->restart_node(2).ok());
  sim_->run_for(kNanosPerMilli);
  from_distribution(2, SimCluster::dictionary(2), Signal(protocol::kDictCopyReq, {1}));
  ASSERT_TRUE(run_until([&] { return distribution(2)->count(protocol::kDictCopyConf, 1) == 1; }));
  ASSERT_NO_FATAL_FAILURE(
      report(protocol::kNodeStartingRep, protocol::kNodeStartingConf, 2, {1, 2}));

  ASSERT_TRUE(execute(1, OpType::kInsert, 1).flags & protocol::kTcCommitted);
  EXPECT_EQ(key_requests_.back().chain, (std::vector<uint16_t>{1, 2}));
  // An open transaction with a write at node 2 ...
  const uint64_t open_tx = next_api_tx_++;
  const protocol::TcKeyConf executed =
      execute(1, OpType::kInsert, 2, LockMode::kCommittedRead, /*open=*/true, open_tx);
  ASSERT_TRUE(executed.flags & protocol::kTcBatchDone);
  ASSERT_FALSE(executed.flags & (protocol::kTcCommitted | protocol::kTcAborted));

  // ... aborts when node 2 dies again; writes then skip it, and its takeover runs again.
  crash(2, 1);
  EXPECT_TRUE(coordinator(1)->starting_nodes().empty());
  ASSERT_TRUE(client_
                  ->send(SimCluster::coordinator(1),
                         protocol::api_transaction_signal(protocol::kTcCommitReq, open_tx))
                  .ok());
  const protocol::TcKeyConf aborted = answer(open_tx);
  EXPECT_TRUE(aborted.flags & protocol::kTcAborted);
  EXPECT_EQ(aborted.tx_error, ErrorCode::kTemporary);
  EXPECT_NE(aborted.tx_message.find("Node failure"), std::string::npos) << aborted.tx_message;
  ASSERT_TRUE(
      run_until([&] { return distribution(1)->count(protocol::kTakeoverDoneRep, 2) == 2; }));
  key_requests_.clear();
  ASSERT_TRUE(execute(1, OpType::kInsert, 3).flags & protocol::kTcCommitted);
  EXPECT_EQ(key_requests_.at(0).chain, std::vector<uint16_t>{1});
}

}  // namespace
}  // namespace duo::testing
