// An API node that fails and comes back at once with the same node id, in a whole
// simulated cluster (testing/sim_cluster.h, membership on): the API failure hold-back
// (membership_block.h "API node failure"; NDB's API_FAILREQ / API_FAILCONF).
//
// The client (node 110) has a scan open, transaction 1 with rows prepared at both
// replicas and one more operation on its way, and transaction 2 committing, when its
// link to data node 1 closes (the harness does what duo_datad's report_link_down does:
// API_FAILREQ to the membership block); an operation its process had already sent is
// still in flight. A restarted process of node 110 counts its transaction ids from 1
// again: it sends new transactions 1 and 2 — once data node 1 accepts it again
// (duo_datad refuses its link while MembershipBlock::api_held_back(); here the harness
// waits for the same condition).
//
// Checked: the new transactions commit; the old transaction 1 is aborted (none of its
// rows anywhere), the old transaction 2 is all or nothing (both happen among the
// seeds); the scan is closed; no row is lost and no other exists; both replicas agree;
// the late operation was dropped by the gate; the hold-back ended. The same scenario
// through the old path (NODE_FAILREP straight to the coordinator and dictionary, the new
// process sending at once) mixes the two processes' transactions: the second test shows
// it, so the first one can fail.
//
// DUO_API_FAILURE_SEEDS=N runs N seeds (CI: 12), each with its own moment of failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/membership/membership_block.h"
#include "ndb-kernel/membership/signal_gate.h"
#include "ndb-kernel/testing/bank_accounts.h"
#include "ndb-kernel/testing/sim_cluster.h"

namespace duo::testing {
namespace {

using kernel::Signal;
using protocol::OpBody;
using storage::OpType;

// The failing client: a node of its own whose signals cross the simulated network (the
// cluster's ScriptClient injects, which no gate sees), so its late signals meet node 1's
// gate as they would in duo_datad.
constexpr uint16_t kApiNode = kFirstClientNode + 10;
constexpr uint16_t kCoordinatorNode = 1;
// The rows the old process's open scan reads.
constexpr int32_t kScannedFirst = 40;
constexpr int32_t kScannedLast = 59;

class LinkedClient : public kernel::Block {
 public:
  LinkedClient() : Block("linked_client", protocol::kApiBlock) {
    for (kernel::SignalId id = 1; id < 300; ++id) on(id, &LinkedClient::on_any);
  }
  // Sends over the link from this node to `to`'s node.
  Status transmit(const kernel::BlockAddress& to, Signal signal) {
    signal.set_receiver(to);
    return send(to, std::move(signal));
  }
  std::deque<Signal>& inbox() { return inbox_; }

 private:
  void on_any(Signal& signal) { inbox_.push_back(std::move(signal)); }
  std::deque<Signal> inbox_;
};

// What one run of the scenario ended with.
struct Outcome {
  std::vector<std::string> violations;  // empty: nothing mixed
  uint64_t dropped = 0;                 // the client's signals dropped by node 1's gate
  uint64_t hold_backs_ended = 0;
  bool old_committed = false;  // the old transaction 2 committed (else it aborted)
};

class ApiFailureScenario {
 public:
  explicit ApiFailureScenario(uint64_t seed)
      : seed_(seed),
        cluster_(SimClusterOptions{.seed = seed, .lock_wait_timeout_ms = 300, .membership = true}) {
    EXPECT_TRUE(cluster_.sim()
                    .add_node(kApiNode,
                              [](uint16_t) {
                                std::vector<std::unique_ptr<kernel::Block>> blocks;
                                blocks.push_back(std::make_unique<LinkedClient>());
                                return blocks;
                              })
                    .ok());
  }

  LinkedClient& client() { return *cluster_.block<LinkedClient>(kApiNode, protocol::kApiBlock); }

  // `hold_back`: the failure goes through the membership block (API_FAILREQ) and the new
  // process waits until node 1 accepts it; else the old path, and it sends at once.
  Outcome run(bool hold_back) {
    Outcome outcome;
    EXPECT_TRUE(cluster_.wait_started());
    create_table();
    // Old process: rows committed earlier, and a scan of them left open (one row per
    // fragment batch, none asked for again) ...
    for (int32_t id = kScannedFirst; id <= kScannedLast; ++id) {
      send_op(3, static_cast<uint32_t>(id - kScannedFirst), OpType::kInsert, account_row(id, 1),
              id == kScannedLast ? protocol::kOpExecute | protocol::kOpCommit : 0);
    }
    std::optional<protocol::TcKeyConf> loaded = wait_conf(3, 2'000);
    EXPECT_TRUE(loaded && (loaded->flags & protocol::kTcCommitted)) << "rows to scan";
    protocol::ScanBody scan_body;
    scan_body.columns = {1};
    protocol::ScanTabReq scan;
    scan.api_tx = 4;
    scan.scan_id = 1;
    scan.table_id = table_.schema.table_id;
    scan.table_version = table_.version;
    scan.batch_rows = 1;
    EXPECT_TRUE(scan_body.encode(&scan.body).ok());
    EXPECT_TRUE(
        client()
            .transmit(SimCluster::coordinator(kCoordinatorNode), std::move(scan).to_signal())
            .ok());
    EXPECT_TRUE(cluster_.run_until(
        [&] {
          return std::any_of(client().inbox().begin(), client().inbox().end(),
                             [](const Signal& s) { return s.id() == protocol::kScanTabConf; });
        },
        1'000))
        << "the scan's first batch";
    // ... transaction 1 with two rows prepared at both replicas ...
    send_op(1, 0, OpType::kInsert, account_row(1, 100), 0);
    send_op(1, 1, OpType::kInsert, account_row(2, 100), protocol::kOpExecute);
    std::optional<protocol::TcKeyConf> prepared = wait_conf(1, 2'000);
    EXPECT_TRUE(prepared && prepared->flags == protocol::kTcBatchDone) << "old transaction 1";
    // ... and a third on its way; transaction 2 committing.
    send_op(1, 2, OpType::kInsert, account_row(3, 100), protocol::kOpExecute);
    send_op(2, 0, OpType::kInsert, account_row(10, 100), 0);
    send_op(2, 1, OpType::kInsert, account_row(11, 100),
            protocol::kOpExecute | protocol::kOpCommit);
    // The link closes at a seeded moment of all that (links take 1 ms each way).
    cluster_.sim().run_for((seed_ * 1237 % 6000) * 1000);
    // An operation the old process had sent before its link closed.
    send_op(1, 3, OpType::kInsert, account_row(4, 100), protocol::kOpExecute);
    if (hold_back) {
      report(kernel::BlockAddress{kCoordinatorNode, protocol::kMembershipBlock, 0},
             protocol::kApiFailReq);
    } else {
      report(SimCluster::coordinator(kCoordinatorNode), protocol::kNodeFailRep);
      report(SimCluster::dictionary(kCoordinatorNode), protocol::kNodeFailRep);
    }
    membership::MembershipBlock* membership = cluster_.membership(kCoordinatorNode);
    // The new process of node 100; its ids start at 1 again.
    if (hold_back) {
      EXPECT_TRUE(cluster_.run_until([&] { return membership->api_held_back(kApiNode); }, 1));
      EXPECT_TRUE(cluster_.run_until([&] { return !membership->api_held_back(kApiNode); }, 5'000))
          << "the hold-back never ended";
    }
    // What the old process was sent dies with its connection.
    client().inbox().clear();
    send_op(1, 0, OpType::kInsert, account_row(20, 200),
            protocol::kOpExecute | protocol::kOpCommit);
    send_op(2, 0, OpType::kInsert, account_row(21, 200), 0);
    send_op(2, 1, OpType::kInsert, account_row(22, 200),
            protocol::kOpExecute | protocol::kOpCommit);
    for (uint64_t tx : {1, 2}) {
      std::optional<protocol::TcKeyConf> conf = wait_conf(tx, 3'000);
      if (!conf) {
        outcome.violations.push_back("new transaction " + std::to_string(tx) + " got no answer");
      } else if ((conf->flags & protocol::kTcCommitted) == 0) {
        outcome.violations.push_back("new transaction " + std::to_string(tx) +
                                     " did not commit: " + conf->tx_message);
      }
    }
    // Whatever is left open ends by itself (aborts, lock wait timeouts).
    if (!cluster_.run_until([&] { return quiesced(cluster_, cluster_.data_nodes()); }, 5'000)) {
      outcome.violations.push_back("transactions left open");
    }
    const std::map<int32_t, int64_t> rows = replica_rows(cluster_, 1, table_.schema.table_id);
    if (rows != replica_rows(cluster_, 2, table_.schema.table_id)) {
      outcome.violations.push_back("replicas differ");
    }
    std::set<int32_t> ids;
    for (const auto& [id, balance] : rows) ids.insert(id);
    for (int32_t id : {20, 21, 22}) {
      if (ids.count(id) == 0)
        outcome.violations.push_back("new row " + std::to_string(id) + " missing");
    }
    for (int32_t id : {1, 2, 3, 4}) {
      if (ids.count(id) != 0) {
        outcome.violations.push_back("row " + std::to_string(id) +
                                     " of the old, never committed transaction 1 exists");
      }
    }
    outcome.old_committed = ids.count(10) != 0 && ids.count(11) != 0;
    if (ids.count(10) != ids.count(11)) {
      outcome.violations.push_back("old transaction 2 committed in part");
    }
    for (int32_t id = kScannedFirst; id <= kScannedLast; ++id) {
      if (ids.count(id) == 0) outcome.violations.push_back("row " + std::to_string(id) + " lost");
    }
    for (int32_t id : ids) {
      if (id != 10 && id != 11 && id != 20 && id != 21 && id != 22 && (id < 1 || id > 4) &&
          (id < kScannedFirst || id > kScannedLast)) {
        outcome.violations.push_back("unexpected row " + std::to_string(id));
      }
    }
    if (cluster_
            .block<coordinator::CoordinatorBlock>(kCoordinatorNode, protocol::kCoordinatorBlock)
            ->scan_count() != 0) {
      outcome.violations.push_back("the old scan is still open");
    }
    outcome.dropped = membership->signal_gate()->dropped(kApiNode);
    outcome.hold_backs_ended = membership->api_failures_handled();
    return outcome;
  }

 private:
  void create_table() {
    Result<protocol::TableDef> table =
        cluster_.create_table(create_table_signal(1, bank_accounts_schema()));
    ASSERT_TRUE(table.ok()) << table.status().to_string();
    table_ = *table;
  }

  void send_op(uint64_t api_tx, uint32_t op_index, OpType type, const OpBody& body, uint8_t flags) {
    ASSERT_TRUE(client()
                    .transmit(SimCluster::coordinator(kCoordinatorNode),
                              key_signal(api_tx, op_index, table_, type, body, flags))
                    .ok());
  }

  // What duo_datad's transporter callback reports when the client's link closes.
  void report(const kernel::BlockAddress& to, kernel::SignalId id) {
    Signal signal(id, {kApiNode});
    signal.set_sender({kCoordinatorNode, 0, 0});
    signal.set_receiver(to);
    ASSERT_TRUE(cluster_.sim().inject(std::move(signal)).ok());
  }

  // The TC_KEYCONF(s) of api_tx up to the one ending its batch, merged; nullopt if none
  // came within `limit_ms`.
  std::optional<protocol::TcKeyConf> wait_conf(uint64_t api_tx, uint64_t limit_ms) {
    std::optional<protocol::TcKeyConf> merged;
    const uint64_t deadline_ns = cluster_.sim().now_ns() + limit_ms * kNanosPerMilli;
    for (;;) {
      auto& inbox = client().inbox();
      auto it = inbox.begin();
      const auto find = [&] {
        it = std::find_if(inbox.begin(), inbox.end(), [&](const Signal& s) {
          return s.id() == protocol::kTcKeyConf && protocol::transaction_of(s) == api_tx;
        });
        return it != inbox.end();
      };
      const uint64_t now_ns = cluster_.sim().now_ns();
      if (now_ns >= deadline_ns ||
          !cluster_.run_until(find, (deadline_ns - now_ns + kNanosPerMilli - 1) / kNanosPerMilli)) {
        return std::nullopt;
      }
      Result<protocol::TcKeyConf> conf = protocol::TcKeyConf::from_signal(*it);
      inbox.erase(it);
      if (!conf.ok()) return std::nullopt;
      if (!merged) merged.emplace();
      merged->flags = conf->flags;
      merged->tx_error = conf->tx_error;
      merged->tx_message = conf->tx_message;
      if ((conf->flags & protocol::kTcBatchDone) != 0) return merged;
    }
  }

  const uint64_t seed_;
  SimCluster cluster_;
  protocol::TableDef table_;
};

class ApiFailureTest : public ::testing::TestWithParam<uint64_t> {
 protected:
  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "replay: DUO_API_FAILURE_FIRST_SEED=" << GetParam()
                << " DUO_API_FAILURE_SEEDS=1 ./duo_api_failure_sim_test\n";
    }
  }
};

TEST_P(ApiFailureTest, RestartedClientMeetsNothingOfItsOldConnection) {
  ApiFailureScenario scenario(GetParam());
  const Outcome outcome = scenario.run(/*hold_back=*/true);
  for (const std::string& violation : outcome.violations) ADD_FAILURE() << violation;
  EXPECT_GT(outcome.dropped, 0u) << "the late operation reached the coordinator";
  EXPECT_EQ(outcome.hold_backs_ended, 1u);
  std::cout << "seed " << GetParam() << ": the old committing transaction "
            << (outcome.old_committed ? "committed" : "aborted") << "\n";
}

std::vector<uint64_t> seeds() {
  const uint64_t first = env_u64("DUO_API_FAILURE_FIRST_SEED", 1);
  const uint64_t count = env_u64("DUO_API_FAILURE_SEEDS", 12);
  std::vector<uint64_t> list;
  for (uint64_t seed = first; seed < first + count; ++seed) list.push_back(seed);
  return list;
}

INSTANTIATE_TEST_SUITE_P(Seeds, ApiFailureTest, ::testing::ValuesIn(seeds()));

// Without the hold-back the same scenario goes wrong (so the test above can fail): the
// late operation and the new process's transactions meet the old transactions under
// the same (node, api_tx) keys.
TEST(ApiFailureWithoutHoldBackTest, OldAndNewTransactionsMix) {
  uint64_t mixed = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    ApiFailureScenario scenario(seed);
    const Outcome outcome = scenario.run(/*hold_back=*/false);
    if (!outcome.violations.empty()) ++mixed;
    for (const std::string& violation : outcome.violations) {
      std::cout << "seed " << seed << " without the hold-back: " << violation << "\n";
    }
  }
  EXPECT_GT(mixed, 0u) << "the scenario no longer shows what the hold-back prevents";
}

}  // namespace
}  // namespace duo::testing
