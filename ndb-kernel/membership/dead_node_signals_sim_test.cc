// A dead data node's late signals in a whole simulated cluster (testing/sim_cluster.h,
// membership on): bank transfers run through the data nodes' coordinators; one node is
// frozen (SIGSTOP) with transfers in flight until the others declared it dead, then
// resumed: it takes in everything held for it at once — key requests, commits, GCP
// rounds, scans of nothing — and answers them (LQH_KEYCONF, LQH_COMMITCONF, GCP
// answers, its own timers' requests) before it learns its fate and stops. Then it
// restarts and is admitted again by a node restart.
//
// Checked: no block of a survivor handles a signal of the frozen node's old process
// while that survivor counts the node dead, but the start protocol (the delivery
// observer sees every signal right before its handler); the survivors' gates dropped
// some (the scenario exercised them) and the simulator's count agrees; every
// acknowledged transfer is present, balances match their transfers and the total is
// constant on every live replica (which agree row for row); after the restart the node
// is live everywhere, its gate entries are open and transfers commit through it.
//
// DUO_DEAD_SIGNALS_SEEDS=N runs N seeds per shape (CI: 3), from
// DUO_DEAD_SIGNALS_FIRST_SEED (1); a failing seed prints the command that replays it.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "ndb-kernel/distribution/distribution_block.h"
#include "ndb-kernel/membership/membership_block.h"
#include "ndb-kernel/membership/signal_gate.h"
#include "ndb-kernel/testing/bank_accounts.h"
#include "ndb-kernel/testing/sim_cluster.h"

namespace duo::testing {
namespace {

using distribution::DistributionBlock;
using distribution::NodeStartState;
using kernel::Signal;
using membership::SignalGate;
using protocol::OpBody;
using protocol::TableDef;
using storage::OpType;

constexpr int32_t kAccounts = 30;
constexpr int64_t kInitial = 1000;
constexpr int64_t kAmount = 7;
constexpr int32_t kLogBase = 1'000'000;  // log row of transfer t: id kLogBase + t
constexpr size_t kInFlight = 8;

struct Transfer {
  int32_t from = 0;
  int32_t to = 0;
};

class DeadNodeSignalsTest : public ::testing::TestWithParam<std::tuple<uint32_t, uint64_t>> {
 protected:
  DeadNodeSignalsTest()
      : node_groups_(std::get<0>(GetParam())),
        seed_(std::get<1>(GetParam())),
        cluster_(SimClusterOptions{.node_groups = node_groups_,
                                   .seed = seed_,
                                   .lock_wait_timeout_ms = 300,
                                   .link_jitter_ns = 500'000,
                                   .gcp_interval_ms = 30,
                                   .membership = true}),
        random_(seed_ * 7919 + node_groups_) {}

  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "replay: DUO_DEAD_SIGNALS_FIRST_SEED=" << seed_
                << " DUO_DEAD_SIGNALS_SEEDS=1 ./duo_dead_node_signals_sim_test\n";
    }
  }

  ScriptClient& client() { return cluster_.client(); }
  DistributionBlock* dih(uint16_t node) {
    return cluster_.block<DistributionBlock>(node, protocol::kDistributionBlock);
  }
  bool started(uint16_t node) {
    DistributionBlock* d = dih(node);
    return d != nullptr && d->start_state() == NodeStartState::kStarted;
  }
  std::vector<uint16_t> up_nodes() {
    std::vector<uint16_t> nodes;
    for (uint16_t n : cluster_.data_nodes()) {
      if (down_.count(n) == 0) nodes.push_back(n);
    }
    return nodes;
  }

  void send_op(uint16_t tc, uint64_t api_tx, uint32_t op_index, OpType type, const OpBody& body,
               uint8_t flags) {
    ASSERT_TRUE(client()
                    .send(SimCluster::coordinator(tc),
                          key_signal(api_tx, op_index, table_, type, body, flags))
                    .ok());
  }

  void create_and_load() {
    ASSERT_TRUE(cluster_.wait_started());
    ASSERT_TRUE(client()
                    .send(SimCluster::dictionary(1), create_table_signal(1, bank_accounts_schema()))
                    .ok());
    ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kCreateTableConf); }));
    protocol::DictMsg conf =
        protocol::DictMsg::from_signal(client().take(protocol::kCreateTableConf));
    ASSERT_TRUE(client()
                    .send(SimCluster::dictionary(1),
                          protocol::DictMsg{2, conf.a, 0, 0, ""}.to_signal(protocol::kGetTableReq))
                    .ok());
    ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kGetTableConf); }));
    Result<protocol::TableMsg> table =
        protocol::TableMsg::from_signal(client().take(protocol::kGetTableConf));
    ASSERT_TRUE(table.ok());
    table_ = table->table;
    for (int32_t id = 0; id < kAccounts; ++id) {
      send_op(1, 900'000'000, static_cast<uint32_t>(id), OpType::kInsert, account_row(id, kInitial),
              id + 1 == kAccounts ? protocol::kOpExecute | protocol::kOpCommit : 0);
    }
    ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kTcKeyConf); }));
    Signal answer = client().take(protocol::kTcKeyConf);
    Result<protocol::TcKeyConf> loaded = protocol::TcKeyConf::from_signal(answer);
    ASSERT_TRUE(loaded.ok() && (loaded->flags & protocol::kTcCommitted));
  }

  void start_transfer() {
    std::vector<uint16_t> nodes;
    for (uint16_t n : up_nodes()) {
      if (started(n)) nodes.push_back(n);
    }
    if (nodes.empty()) return;
    const int32_t from = static_cast<int32_t>(random_.uniform(kAccounts));
    int32_t to = static_cast<int32_t>(random_.uniform(kAccounts - 1));
    if (to >= from) ++to;
    const uint16_t tc = nodes[random_.uniform(nodes.size())];
    const uint64_t t = next_transfer_++;
    send_op(tc, t, 0, OpType::kInterpretedUpdate, add_to_balance(from, -kAmount), 0);
    send_op(tc, t, 1, OpType::kInterpretedUpdate, add_to_balance(to, kAmount), 0);
    send_op(tc, t, 2, OpType::kInsert, account_row(kLogBase + static_cast<int32_t>(t), kAmount),
            protocol::kOpExecute | protocol::kOpCommit);
    in_flight_[t] = tc;
    transfers_[t] = Transfer{from, to};
  }

  // Keeps kInFlight transfers going (while `more`) and takes their answers until
  // `done` holds; false after `limit_ms` of virtual time.
  bool pump(const std::function<bool()>& done, uint64_t limit_ms, bool more = true) {
    const uint64_t deadline = cluster_.sim().now_ns() + limit_ms * 1'000'000;
    while (!done()) {
      if (cluster_.sim().now_ns() > deadline) return false;
      while (more && in_flight_.size() < kInFlight) {
        const size_t before = in_flight_.size();
        start_transfer();
        if (in_flight_.size() == before) break;
      }
      cluster_.run_until([&] { return client().has(protocol::kTcKeyConf) || done(); }, 50);
      while (client().has(protocol::kTcKeyConf)) take_answer();
    }
    return true;
  }

  void take_answer() {
    Signal answer = client().take(protocol::kTcKeyConf);
    Result<protocol::TcKeyConf> conf = protocol::TcKeyConf::from_signal(answer);
    ASSERT_TRUE(conf.ok());
    auto it = in_flight_.find(conf->api_tx);
    if (it == in_flight_.end()) return;  // answered after its coordinator was given up
    if (conf->flags & protocol::kTcCommitted) {
      committed_.insert(conf->api_tx);
    } else {
      refused_.insert(conf->api_tx);
      EXPECT_TRUE(conf->tx_error == ErrorCode::kLockWaitTimeout ||
                  conf->tx_error == ErrorCode::kTemporary)
          << conf->tx_message;
    }
    in_flight_.erase(it);
  }

  // Clients stop using `node`: what it coordinated may or may not have committed.
  void give_up(uint16_t node) {
    down_.insert(node);
    for (auto it = in_flight_.begin(); it != in_flight_.end();) {
      if (it->second == node) {
        unknown_.insert(it->first);
        it = in_flight_.erase(it);
      } else {
        ++it;
      }
    }
  }
  bool declared_dead_everywhere(uint16_t node) {
    for (uint16_t n : up_nodes()) {
      DistributionBlock* d = dih(n);
      membership::MembershipBlock* m = cluster_.membership(n);
      if (d == nullptr || m == nullptr || d->dead_nodes().count(node) == 0 ||
          m->live_nodes().contains(node)) {
        return false;
      }
    }
    return true;
  }
  uint64_t dropped_by_survivors(uint16_t node) {
    uint64_t total = 0;
    for (uint16_t n : up_nodes()) total += cluster_.membership(n)->signal_gate()->dropped(node);
    return total;
  }

  // The table as the up nodes hold it; every up replica of a group must agree.
  std::map<int32_t, int64_t> contents() {
    std::map<int32_t, int64_t> all;
    for (const std::vector<uint16_t>& group : cluster_.topology().node_groups) {
      std::optional<std::map<int32_t, int64_t>> first;
      for (uint16_t node : group) {
        if (down_.count(node) != 0) continue;
        std::map<int32_t, int64_t> rows = replica_rows(cluster_, node, table_.schema.table_id);
        if (!first) {
          first = rows;
        } else {
          EXPECT_EQ(rows, *first) << "replicas of node group with node " << node << " differ";
        }
      }
      EXPECT_TRUE(first.has_value()) << "a node group has no up node";
      if (first) all.insert(first->begin(), first->end());
    }
    return all;
  }
  void check_contents() {
    const std::map<int32_t, int64_t> rows = contents();
    std::map<int32_t, int64_t> expected;
    for (int32_t id = 0; id < kAccounts; ++id) expected[id] = kInitial;
    std::set<uint64_t> present;
    for (const auto& [id, balance] : rows) {
      if (id < kLogBase) continue;
      const uint64_t t = static_cast<uint64_t>(id - kLogBase);
      present.insert(t);
      auto transfer = transfers_.find(t);
      ASSERT_NE(transfer, transfers_.end()) << "log row of a transfer never started: " << t;
      EXPECT_TRUE(committed_.count(t) != 0 || unknown_.count(t) != 0)
          << "transfer " << t << " was refused to its client but is present";
      expected[transfer->second.from] -= kAmount;
      expected[transfer->second.to] += kAmount;
    }
    for (uint64_t t : committed_) {
      EXPECT_EQ(present.count(t), 1u) << "acknowledged transfer " << t << " is lost";
    }
    int64_t total = 0;
    for (int32_t id = 0; id < kAccounts; ++id) {
      auto it = rows.find(id);
      ASSERT_NE(it, rows.end()) << "account " << id << " is lost";
      EXPECT_EQ(it->second, expected[id]) << "account " << id << " does not match its transfers";
      total += it->second;
    }
    EXPECT_EQ(total, kAccounts * kInitial);
  }
  void drain() {
    ASSERT_TRUE(pump([&] { return in_flight_.empty(); }, 60'000, false))
        << in_flight_.size() << " transfer(s) never answered";
    ASSERT_TRUE(cluster_.run_until([&] { return quiesced(cluster_, up_nodes()); }, 30'000))
        << "no quiesce";
  }

  const uint32_t node_groups_;
  const uint64_t seed_;
  SimCluster cluster_;
  SeededRandom random_;
  TableDef table_;
  std::set<uint16_t> down_;
  std::map<uint64_t, Transfer> transfers_;
  std::map<uint64_t, uint16_t> in_flight_;  // transfer -> its coordinator
  std::set<uint64_t> committed_;
  std::set<uint64_t> refused_;
  std::set<uint64_t> unknown_;
  uint64_t next_transfer_ = 1;
};

TEST_P(DeadNodeSignalsTest, FrozenNodesLateSignalsAreIgnoredUntilItIsAdmittedAgain) {
  create_and_load();
  if (HasFatalFailure()) return;
  const std::vector<uint16_t> nodes = cluster_.data_nodes();
  const uint16_t victim = nodes[random_.uniform(nodes.size())];

  // Every signal a survivor's block handles from the victim while that survivor counts
  // it dead (its membership committed the failure): only the start protocol may pass.
  std::map<std::string, uint64_t> handled_from_dead;
  cluster_.sim().set_delivery_observer([&](uint64_t, const Signal& signal) {
    const uint16_t from = signal.sender().node_id;
    const uint16_t to = signal.receiver().node_id;
    if (from != victim || to == victim || down_.count(to) != 0) return;
    membership::MembershipBlock* m = cluster_.membership(to);
    if (m == nullptr || m->live_nodes().contains(victim)) return;
    if (!SignalGate::is_start_protocol(signal.id())) {
      ++handled_from_dead[kernel::signal_name(signal.id())];
    }
  });

  const uint64_t freeze_at = cluster_.sim().now_ns() + (50 + random_.uniform(150)) * 1'000'000;
  ASSERT_TRUE(pump([&] { return cluster_.sim().now_ns() >= freeze_at; }, 10'000));
  ASSERT_TRUE(cluster_.sim().pause_node(victim).ok());
  give_up(victim);
  ASSERT_TRUE(pump([&] { return declared_dead_everywhere(victim); }, 20'000))
      << "frozen node " << victim << " was not declared dead";
  const uint64_t dropped_before = dropped_by_survivors(victim);
  const uint64_t filtered_before = cluster_.sim().stats().dropped_by_filter;
  ASSERT_TRUE(cluster_.sim().resume_node(victim).ok());
  ASSERT_TRUE(pump([&] { return cluster_.membership(victim)->shutdown_requested(); }, 20'000))
      << "node " << victim << " resumed but never learned it was declared dead";
  // Its process exits only a while later (duo_datad polls): it goes on answering.
  pump([] { return false; }, 200);
  const uint64_t dropped = dropped_by_survivors(victim) - dropped_before;
  EXPECT_GT(dropped, 0u) << "the resumed node sent the survivors nothing: scenario not exercised";
  EXPECT_EQ(cluster_.sim().stats().dropped_by_filter - filtered_before,
            dropped + cluster_.membership(victim)->signal_gate()->dropped_total())
      << "drops outside the gates";
  ASSERT_TRUE(cluster_.sim().crash_node(victim).ok());
  for (const auto& [name, count] : handled_from_dead) {
    ADD_FAILURE() << count << " x " << name << " from dead node " << victim
                  << " handled by a survivor";
  }
  drain();
  if (HasFatalFailure()) return;
  check_contents();
  if (HasFatalFailure()) return;

  // Admitted again by a node restart: its signals pass, transfers commit through it.
  ASSERT_TRUE(cluster_.sim().restart_node(victim).ok());
  cluster_.arbitrator()->rule().node_rejoined(victim);
  down_.erase(victim);
  ASSERT_TRUE(pump([&] { return started(victim); }, 60'000))
      << "node " << victim << " did not finish its node restart";
  for (uint16_t n : up_nodes()) {
    EXPECT_TRUE(cluster_.membership(n)->live_nodes().contains(victim)) << "at node " << n;
    EXPECT_FALSE(cluster_.membership(n)->signal_gate()->closed_to(victim)) << "at node " << n;
  }
  const size_t committed_before = committed_.size();
  ASSERT_TRUE(pump([&] { return committed_.size() >= committed_before + 20; }, 20'000))
      << "transfers stopped committing after the node restart";
  drain();
  if (HasFatalFailure()) return;
  check_contents();
  EXPECT_TRUE(handled_from_dead.empty());
}

std::vector<uint64_t> seeds() {
  const uint64_t first = env_u64("DUO_DEAD_SIGNALS_FIRST_SEED", 1);
  const uint64_t count = env_u64("DUO_DEAD_SIGNALS_SEEDS", 3);
  std::vector<uint64_t> out;
  for (uint64_t s = first; s < first + count; ++s) out.push_back(s);
  return out;
}
INSTANTIATE_TEST_SUITE_P(Seeds, DeadNodeSignalsTest,
                         ::testing::Combine(::testing::Values(1u, 2u),
                                            ::testing::ValuesIn(seeds())));

}  // namespace
}  // namespace duo::testing
