// Node failure handling in the simulator: bank transfers run through every data node's
// coordinator while one data node crashes (the test then reports NODE_FAILREP on every
// survivor, as the membership layer does once the survivors agree). Each transfer
// (testing/bank_transfers.h) moves 7 between two accounts and inserts a log row naming it,
// in one transaction, so the log rows say exactly which transfers committed — including
// those whose coordinator died before answering (the takeover commits or aborts them).
// Checked after quiesce: every acknowledged transfer is present and no refused one is;
// balances are exactly what the present transfers made them (atomic across node groups),
// so the total is constant; transfers keep committing after the failure; every fragment
// has a live primary holding it; the surviving replicas of each node group are identical;
// global checkpoints keep completing; and a system restart of the survivors recovers every
// transfer acknowledged at or below the recovered GCI, atomically. Scenarios: a crash at a
// random moment, the GCP master's crash during a GCP round, and a crash while the dead
// node's coordinator is committing many transactions; with 2 data nodes and with 4 (2 node
// groups).
//
// DUO_FAILOVER_SEEDS=N runs N seeds per scenario (CI: 50), from DUO_FAILOVER_FIRST_SEED
// (1); a failing seed prints the command that replays it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/distribution/distribution_block.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/protocol/packed_signals.h"
#include "ndb-kernel/testing/bank_accounts.h"
#include "ndb-kernel/testing/bank_transfers.h"
#include "ndb-kernel/testing/sim_cluster.h"
#include "storage/scan/interpreted_update.h"

namespace duo::testing {
namespace {

using kernel::Signal;
using storage::OpType;

constexpr int32_t kAccounts = 6;
constexpr int kTransfers = 80;
constexpr int kInFlight = 8;

enum class Scenario { kRandomCrash, kMasterDuringGcp, kDuringCommit };

class FailoverTest : public ::testing::Test {
 protected:
  FailoverTest(uint32_t node_groups, uint64_t seed)
      : seed_(seed),
        cluster_(SimClusterOptions{.node_groups = node_groups,
                                   .seed = seed,
                                   .lock_wait_timeout_ms = 200,
                                   .link_jitter_ns = 1'000'000,
                                   .gcp_interval_ms = 20}),
        random_(seed * 7919 + node_groups),
        bank_(&cluster_, &random_, {.accounts = kAccounts, .in_flight = kInFlight}) {}

  void TearDown() override {
    if (HasFailure()) {
      const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
      std::string name = info->name();
      name = name.substr(0, name.find('/'));
      std::cerr << "replay: DUO_FAILOVER_FIRST_SEED=" << seed_
                << " DUO_FAILOVER_SEEDS=1 ./duo_takeover_sim_test --gtest_filter='*"
                << info->test_suite_name() << "." << name << "*'\n";
    }
  }

  ScriptClient& client() { return cluster_.client(); }
  Result<protocol::TcKeyConf> take_conf() {
    Signal s = client().take(protocol::kTcKeyConf);
    return protocol::TcKeyConf::from_signal(s);
  }
  bool live(uint16_t node) const { return bank_.up(node); }
  std::vector<uint16_t> live_nodes() const { return bank_.up_nodes(); }

  // The node dies: its blocks are gone, its links cut, and every survivor's blocks get
  // NODE_FAILREP (what membership delivers once the survivors agree).
  void crash(uint16_t node) {
    crash_ns_ = cluster_.sim().now_ns();
    ASSERT_TRUE(cluster_.sim().crash_node(node).ok());
    // Transfers it coordinated get no answer: their outcome is what the takeover decided.
    bank_.give_up(node);
    for (uint16_t other : cluster_.data_nodes()) {
      if (other != node) cluster_.sim().cut_link(node, other);
    }
    cluster_.sim().cut_link(node, kFirstClientNode);
    for (uint16_t survivor : live_nodes()) {
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
  }

  // Through a random live coordinator, or three times in four through `favourite`
  // (when not 0 and live).
  void start_transfer(uint16_t favourite) {
    bank_.start_transfer(live_nodes(), live(favourite) ? favourite : 0);
  }

  // Every committed row held by `node`: id -> balance.
  std::map<int32_t, int64_t> replica_contents(uint16_t node) {
    return replica_rows(cluster_, node, bank_.table().schema.table_id);
  }

  uint32_t live_last_complete_gci() {
    uint32_t gci = UINT32_MAX;
    for (uint16_t node : live_nodes()) {
      auto* dih =
          cluster_.block<distribution::DistributionBlock>(node, protocol::kDistributionBlock);
      gci = std::min(gci, dih == nullptr ? 0 : dih->last_complete_gci());
    }
    return gci;
  }

  bool quiesced() { return testing::quiesced(cluster_, live_nodes()); }

  void run(Scenario scenario);
  // Loads the accounts (through node 1's coordinator).
  void load_accounts() { bank_.create_and_load(); }
  // Restarts every live node from its disk; true once all report started.
  bool restart_survivors();

  const uint64_t seed_;
  SimCluster cluster_;
  SeededRandom random_;
  BankTransfers bank_;  // its down nodes are the dead ones
  uint64_t crash_ns_ = 0;
};

bool FailoverTest::restart_survivors() {
  for (uint16_t node : live_nodes()) {
    if (!cluster_.sim().crash_node(node).ok()) return false;
    cluster_.disk(node).crash();
  }
  for (uint16_t node : live_nodes()) {
    if (!cluster_.sim().restart_node(node).ok()) return false;
  }
  return cluster_.run_until(
      [&] {
        for (uint16_t node : live_nodes()) {
          auto* dih =
              cluster_.block<distribution::DistributionBlock>(node, protocol::kDistributionBlock);
          if (dih == nullptr || dih->start_state() != distribution::NodeStartState::kStarted) {
            return false;
          }
        }
        return true;
      },
      20'000);
}

void FailoverTest::run(Scenario scenario) {
  load_accounts();
  if (HasFatalFailure()) return;

  const std::vector<uint16_t> nodes = cluster_.data_nodes();
  const uint16_t victim =
      scenario == Scenario::kMasterDuringGcp ? nodes.front() : nodes[random_.uniform(nodes.size())];
  const uint16_t favourite = scenario == Scenario::kDuringCommit ? victim : 0;
  // The crash is armed after this many answers, then happens at a random moment
  // (kRandomCrash), when the master sends a GCP request (kMasterDuringGcp), or when the
  // victim's coordinator sends a commit to another node (kDuringCommit).
  const int arm_after = 4 + static_cast<int>(random_.uniform(kTransfers / 3));
  const kernel::SignalId gcp_phase = std::vector<kernel::SignalId>{
      protocol::kGcpPrepareReq, protocol::kGcpCommitReq, protocol::kGcpSaveReq,
      protocol::kGcpCompleteRep}[random_.uniform(4)];
  bool armed = false;
  bool crash_scheduled = false;
  auto schedule_crash = [&](uint64_t delay_ns) {
    if (crash_scheduled) return;
    crash_scheduled = true;
    cluster_.sim().schedule_action(delay_ns, [this, victim] { crash(victim); });
  };
  cluster_.sim().set_delivery_observer([&](uint64_t, const Signal& s) {
    if (!armed || crash_scheduled || s.sender().node_id != victim ||
        s.receiver().node_id == victim) {
      return;
    }
    bool hit = false;
    if (scenario == Scenario::kMasterDuringGcp) {
      hit = s.id() == gcp_phase;
    } else if (scenario == Scenario::kDuringCommit) {
      if (s.id() == protocol::kLqhCommitReq) hit = true;
      if (s.id() == protocol::kPackedSignals) {
        Result<std::vector<Signal>> inner = protocol::unpack_signals(s);
        if (inner.ok()) {
          for (const Signal& one : *inner) hit = hit || one.id() == protocol::kLqhCommitReq;
        }
      }
    }
    if (hit) schedule_crash(0);
  });

  int answers = 0;
  int committed_after_crash = 0;
  std::map<ErrorCode, int> errors;
  auto started = [&] { return static_cast<int>(bank_.started()); };
  while (started() < kInFlight) start_transfer(favourite);
  while (bank_.in_flight() != 0 || started() < kTransfers) {
    while (started() < kTransfers && bank_.in_flight() < static_cast<size_t>(kInFlight)) {
      start_transfer(favourite);
    }
    if (bank_.in_flight() == 0) continue;
    // (A crash meanwhile may leave nothing to wait for.)
    ASSERT_TRUE(cluster_.run_until(
        [&] { return client().has(protocol::kTcKeyConf) || bank_.in_flight() == 0; }, 60'000))
        << bank_.in_flight() << " transfer(s) never answered";
    if (!client().has(protocol::kTcKeyConf)) continue;
    std::optional<BankTransfers::Answer> answer = bank_.take_answer();
    ASSERT_TRUE(answer.has_value());
    const protocol::TcKeyConf& conf = answer->conf;
    ASSERT_TRUE(conf.flags & protocol::kTcBatchDone);
    if (answer->late) continue;  // its coordinator died meanwhile
    if (conf.flags & protocol::kTcCommitted) {
      if (crash_ns_ != 0) ++committed_after_crash;
    } else {
      ++errors[conf.tx_error];
      EXPECT_TRUE(conf.tx_error == ErrorCode::kLockWaitTimeout ||
                  conf.tx_error == ErrorCode::kTemporary)
          << conf.tx_message;
      if (conf.tx_error == ErrorCode::kTemporary) {
        EXPECT_NE(conf.tx_message.find("Node failure caused abort of transaction"),
                  std::string::npos)
            << conf.tx_message;
      }
    }
    if (++answers == arm_after) {
      armed = true;
      if (scenario == Scenario::kRandomCrash) schedule_crash(random_.uniform(5'000'000));
    }
  }
  cluster_.sim().set_delivery_observer(nullptr);
  if (!crash_scheduled) schedule_crash(0);  // the trigger never came: crash now
  cluster_.sim().run_for(1'000'000);
  ASSERT_EQ(bank_.down().size(), 1u);

  // Progress: transfers through the survivors commit after the failure.
  const int more = started() + 10;
  while (started() < more || bank_.in_flight() != 0) {
    while (started() < more && bank_.in_flight() < 2) start_transfer(0);
    ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kTcKeyConf); }, 60'000));
    std::optional<BankTransfers::Answer> answer = bank_.take_answer();
    ASSERT_TRUE(answer.has_value());
    if (!answer->late && (answer->conf.flags & protocol::kTcCommitted)) ++committed_after_crash;
  }
  EXPECT_GE(committed_after_crash, 3) << "transfers must keep committing after the failure";

  // Quiesce: the takeover done, nothing left open anywhere.
  ASSERT_TRUE(cluster_.run_until([&] { return quiesced(); }, 30'000)) << "no quiesce";
  uint64_t takeover_commits = 0, takeover_aborts = 0;
  for (uint16_t node : live_nodes()) {
    auto* tc = cluster_.block<coordinator::CoordinatorBlock>(node, protocol::kCoordinatorBlock);
    takeover_commits += tc->taken_over_commits();
    takeover_aborts += tc->taken_over_aborts();
  }
  RecordProperty("takeover_commits", static_cast<int>(takeover_commits));
  RecordProperty("takeover_aborts", static_cast<int>(takeover_aborts));
  RecordProperty("unknown", static_cast<int>(bank_.unknown()));

  // No fragment without a live primary that holds it.
  for (uint32_t f = 0; f < bank_.table().fragment_count; ++f) {
    const protocol::FragmentPlacement placement =
        protocol::place_fragment_live(cluster_.topology(), f, bank_.table().fragment_count,
                                      {bank_.down().begin(), bank_.down().end()});
    ASSERT_FALSE(placement.replicas.empty()) << "fragment " << f << " has no live replica";
    auto* lqh = cluster_.block<local_query::LocalQueryBlock>(
        placement.replicas.front(), protocol::kLocalQueryBlock, placement.log_part);
    EXPECT_NE(lqh->fragment(bank_.table().schema.table_id, f), nullptr)
        << "the primary of fragment " << f << " does not hold it";
  }
  bank_.check_contents(bank_.contents(), UINT32_MAX);

  // Global checkpoints go on over the live nodes (and the new master, if it changed).
  const uint32_t gci_now = live_last_complete_gci();
  ASSERT_TRUE(cluster_.run_until([&] { return live_last_complete_gci() >= gci_now + 3; }, 5'000))
      << "GCP stopped at " << live_last_complete_gci();

  // System restart of the survivors (the dead node stays down): every transfer
  // acknowledged at or below the recovered GCI is back, atomically.
  const uint32_t complete_before = live_last_complete_gci();
  ASSERT_TRUE(restart_survivors()) << "the survivors did not restart";
  const uint32_t restart_gci = cluster_
                                   .block<distribution::DistributionBlock>(
                                       live_nodes().front(), protocol::kDistributionBlock)
                                   ->restart_gci();
  EXPECT_GE(restart_gci, complete_before);
  bank_.check_contents(bank_.contents(), restart_gci);
  // And the restarted cluster serves: one more transfer commits.
  client().inbox().clear();
  start_transfer(0);
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kTcKeyConf); }, 10'000));
  EXPECT_TRUE(take_conf()->flags & protocol::kTcCommitted);
}

class TwoNodeFailoverTest : public FailoverTest, public ::testing::WithParamInterface<uint64_t> {
 protected:
  TwoNodeFailoverTest() : FailoverTest(1, GetParam()) {}
};
class FourNodeFailoverTest : public FailoverTest, public ::testing::WithParamInterface<uint64_t> {
 protected:
  FourNodeFailoverTest() : FailoverTest(2, GetParam()) {}
};

TEST_P(TwoNodeFailoverTest, CrashAtRandomMoment) {
  run(Scenario::kRandomCrash);
}
TEST_P(TwoNodeFailoverTest, MasterCrashDuringGcpRound) {
  run(Scenario::kMasterDuringGcp);
}
TEST_P(TwoNodeFailoverTest, CrashDuringCommits) {
  run(Scenario::kDuringCommit);
}
TEST_P(FourNodeFailoverTest, CrashAtRandomMoment) {
  run(Scenario::kRandomCrash);
}
TEST_P(FourNodeFailoverTest, MasterCrashDuringGcpRound) {
  run(Scenario::kMasterDuringGcp);
}
TEST_P(FourNodeFailoverTest, CrashDuringCommits) {
  run(Scenario::kDuringCommit);
}

// Deterministic cases, one seed.
class TwoNodes : public FailoverTest {
 protected:
  TwoNodes() : FailoverTest(1, 1) {}
};
class FourNodes : public FailoverTest {
 protected:
  FourNodes() : FailoverTest(2, 1) {}
};

TEST_F(TwoNodes, ScanThroughTheDeadNodeFailsAndANewScanSeesEveryRowOnce) {
  load_accounts();
  const uint64_t fill = 900'000'001;
  for (int32_t i = 0; i < 64; ++i) {
    bank_.send_op(1, fill, static_cast<uint32_t>(i), OpType::kInsert, account_row(100 + i, i),
                  i == 63 ? protocol::kOpExecute | protocol::kOpCommit : 0);
  }
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kTcKeyConf); }));
  ASSERT_TRUE(take_conf()->flags & protocol::kTcCommitted);
  auto scan_request = [&](uint64_t api_tx) {
    protocol::ScanTabReq req;
    req.api_tx = api_tx;
    req.scan_id = 1;
    req.table_id = bank_.table().schema.table_id;
    req.table_version = bank_.table().version;
    req.batch_rows = 2;
    protocol::ScanBody body;
    body.columns = {0};
    EXPECT_TRUE(body.encode(&req.body).ok());
    return req;
  };
  ASSERT_TRUE(client().send(SimCluster::coordinator(1), scan_request(7001).to_signal()).ok());
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kScanTabConf); }));
  crash(2);
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kScanTabRef); }, 1'000))
      << "the scan had fragments on the dead node";
  Signal ref_signal = client().take(protocol::kScanTabRef);
  Result<protocol::ScanRef> ref = protocol::ScanRef::from_signal(ref_signal);
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->error, ErrorCode::kTemporary);
  EXPECT_NE(ref->message.find("Node failure"), std::string::npos) << ref->message;
  auto* tc1 = cluster_.block<coordinator::CoordinatorBlock>(1, protocol::kCoordinatorBlock);
  ASSERT_TRUE(cluster_.run_until([&] { return tc1->scan_count() == 0; }, 1'000));
  client().inbox().clear();

  // A new scan reads every fragment from its live replica, each row once.
  Result<ScanOutcome> outcome = client().scan(SimCluster::coordinator(1), scan_request(7002));
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  std::multiset<int32_t> seen;
  for (const storage::RowBatch& rows : outcome->batches) {
    for (size_t r = 0; r < rows.rows(); ++r) {
      int32_t id = 0;
      std::memcpy(&id, rows.row(r).value(0).data(), 4);
      seen.insert(id);
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kAccounts + 64));
  EXPECT_EQ(std::set<int32_t>(seen.begin(), seen.end()).size(), seen.size()) << "each row once";
}

TEST_F(TwoNodes, DeadNodeComesBackByANodeRestartWithEveryRow) {
  load_accounts();
  crash(2);
  const uint32_t gci = live_last_complete_gci();
  ASSERT_TRUE(cluster_.run_until([&] { return live_last_complete_gci() >= gci + 2; }, 2'000));
  // Node 2 starts again from its own disk: the running cluster takes it back by a node
  // restart (its old data discarded, every row copied from node 1).
  cluster_.sim().heal_all();
  ASSERT_TRUE(cluster_.sim().restart_node(2).ok());
  auto* dih2 = cluster_.block<distribution::DistributionBlock>(2, protocol::kDistributionBlock);
  ASSERT_TRUE(cluster_.run_until(
      [&] {
        return dih2->start_state() == distribution::NodeStartState::kStarted ||
               dih2->start_state() == distribution::NodeStartState::kFailed;
      },
      5'000));
  ASSERT_EQ(dih2->start_state(), distribution::NodeStartState::kStarted) << dih2->failure();
  bank_.mark_up(2);
  auto* dih1 = cluster_.block<distribution::DistributionBlock>(1, protocol::kDistributionBlock);
  EXPECT_EQ(dih1->dead_nodes().count(2), 0u);
  EXPECT_EQ(replica_contents(2), replica_contents(1));
  EXPECT_EQ(replica_contents(2).size(), static_cast<size_t>(kAccounts));
  // Node 2 coordinates again.
  start_transfer(2);
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kTcKeyConf); }, 5'000));
  EXPECT_TRUE(take_conf()->flags & protocol::kTcCommitted);
}

TEST_F(TwoNodes, SurvivorRestartsAloneWithoutTheDeadNode) {
  load_accounts();
  crash(2);
  const uint32_t gci = live_last_complete_gci();
  ASSERT_TRUE(cluster_.run_until([&] { return live_last_complete_gci() >= gci + 2; }, 2'000));
  // A system restart of the survivor alone: it neither waits for node 2 nor needs it.
  ASSERT_TRUE(restart_survivors());
  const std::map<int32_t, int64_t> rows = replica_contents(1);
  for (int32_t id = 0; id < kAccounts; ++id) EXPECT_EQ(rows.at(id), BankTransfers::kInitial);
  start_transfer(0);
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kTcKeyConf); }, 5'000));
  EXPECT_TRUE(take_conf()->flags & protocol::kTcCommitted) << "writes skip the dead replica";
}

TEST_F(TwoNodes, SchemaChangesGoOnWithTheLowestLiveNodeAsMaster) {
  load_accounts();
  crash(1);  // the dictionary's (and the GCP's) master
  storage::TableSchema other = bank_accounts_schema();
  other.name = "bank/def/other";
  ASSERT_TRUE(client().send(SimCluster::dictionary(2), create_table_signal(9, other)).ok());
  ASSERT_TRUE(cluster_.run_until(
      [&] {
        return client().has(protocol::kCreateTableConf) || client().has(protocol::kCreateTableRef);
      },
      2'000));
  ASSERT_TRUE(client().has(protocol::kCreateTableConf)) << "node 2 is the dictionary's master";
  // The accounts are still served, by node 2 alone.
  start_transfer(0);
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kTcKeyConf); }, 2'000));
  EXPECT_TRUE(take_conf()->flags & protocol::kTcCommitted);
}

TEST_F(FourNodes, LosingAWholeNodeGroupStopsTheSurvivorsWithTheReason) {
  load_accounts();
  crash(3);
  cluster_.sim().run_for(10 * kNanosPerMilli);
  for (uint16_t node : {1, 2, 4}) {
    EXPECT_EQ(cluster_.block<distribution::DistributionBlock>(node, protocol::kDistributionBlock)
                  ->start_state(),
              distribution::NodeStartState::kStarted)
        << "one replica of each group is enough";
  }
  crash(4);
  cluster_.sim().run_for(10 * kNanosPerMilli);
  for (uint16_t node : {1, 2}) {
    auto* dih = cluster_.block<distribution::DistributionBlock>(node, protocol::kDistributionBlock);
    EXPECT_EQ(dih->start_state(), distribution::NodeStartState::kFailed);
    EXPECT_NE(dih->failure().find("node group 1 has no live node left"), std::string::npos)
        << dih->failure();
  }
}

const uint64_t kFirstSeed = env_u64("DUO_FAILOVER_FIRST_SEED", 1);
const uint64_t kSeeds = env_u64("DUO_FAILOVER_SEEDS", 50);
INSTANTIATE_TEST_SUITE_P(Seeds, TwoNodeFailoverTest,
                         ::testing::Range<uint64_t>(kFirstSeed, kFirstSeed + kSeeds));
INSTANTIATE_TEST_SUITE_P(Seeds, FourNodeFailoverTest,
                         ::testing::Range<uint64_t>(kFirstSeed, kFirstSeed + kSeeds));

}  // namespace
}  // namespace duo::testing
