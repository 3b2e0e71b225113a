// A dead data node's late signals in a whole simulated cluster (testing/sim_cluster.h,
// membership on): bank transfers (testing/bank_transfers.h) run through the data nodes'
// coordinators; one node is frozen (SIGSTOP) with transfers in flight until the others
// declared it dead, then resumed: it takes in everything held for it at once — key
// requests, commits, GCP rounds, scans of nothing — and answers them (LQH_KEYCONF,
// LQH_COMMITCONF, GCP answers, its own timers' requests) before it learns its fate and
// stops. Then it restarts and is admitted again by a node restart.
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

#include <functional>
#include <iostream>
#include <map>

#include "ndb-kernel/distribution/distribution_block.h"
#include "ndb-kernel/membership/membership_block.h"
#include "ndb-kernel/membership/signal_gate.h"
#include "ndb-kernel/testing/bank_accounts.h"
#include "ndb-kernel/testing/bank_transfers.h"
#include "ndb-kernel/testing/sim_cluster.h"

namespace duo::testing {
namespace {

using distribution::DistributionBlock;
using distribution::NodeStartState;
using kernel::Signal;
using membership::SignalGate;

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
        random_(seed_ * 7919 + node_groups_),
        bank_(&cluster_, &random_, {.accounts = 30, .in_flight = 8}) {}

  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "replay: DUO_DEAD_SIGNALS_FIRST_SEED=" << seed_
                << " DUO_DEAD_SIGNALS_SEEDS=1 ./duo_dead_node_signals_sim_test\n";
    }
  }

  bool started(uint16_t node) {
    DistributionBlock* d = cluster_.block<DistributionBlock>(node, protocol::kDistributionBlock);
    return d != nullptr && d->start_state() == NodeStartState::kStarted;
  }
  bool pump(const std::function<bool()>& done, uint64_t limit_ms) {
    return bank_.pump(done, limit_ms);
  }
  uint64_t dropped_by_survivors(uint16_t node) {
    uint64_t total = 0;
    for (uint16_t n : bank_.up_nodes()) {
      total += cluster_.membership(n)->signal_gate()->dropped(node);
    }
    return total;
  }
  void check_contents() { bank_.check_contents(bank_.contents()); }

  const uint32_t node_groups_;
  const uint64_t seed_;
  SimCluster cluster_;
  SeededRandom random_;
  BankTransfers bank_;
};

TEST_P(DeadNodeSignalsTest, FrozenNodesLateSignalsAreIgnoredUntilItIsAdmittedAgain) {
  ASSERT_TRUE(cluster_.wait_started());
  bank_.create_and_load();
  if (HasFatalFailure()) return;
  const std::vector<uint16_t> nodes = cluster_.data_nodes();
  const uint16_t victim = nodes[random_.uniform(nodes.size())];

  // Every signal a survivor's block handles from the victim while that survivor counts
  // it dead (its membership committed the failure): only the start protocol may pass.
  std::map<std::string, uint64_t> handled_from_dead;
  cluster_.sim().set_delivery_observer([&](uint64_t, const Signal& signal) {
    const uint16_t from = signal.sender().node_id;
    const uint16_t to = signal.receiver().node_id;
    if (from != victim || to == victim || !bank_.up(to)) return;
    membership::MembershipBlock* m = cluster_.membership(to);
    if (m == nullptr || m->live_nodes().contains(victim)) return;
    if (!SignalGate::is_start_protocol(signal.id())) {
      ++handled_from_dead[kernel::signal_name(signal.id())];
    }
  });

  const uint64_t freeze_at = cluster_.sim().now_ns() + (50 + random_.uniform(150)) * 1'000'000;
  ASSERT_TRUE(pump([&] { return cluster_.sim().now_ns() >= freeze_at; }, 10'000));
  ASSERT_TRUE(cluster_.sim().pause_node(victim).ok());
  bank_.give_up(victim);
  ASSERT_TRUE(pump([&] { return bank_.declared_dead_everywhere(victim); }, 20'000))
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
  bank_.drain();
  if (HasFatalFailure()) return;
  check_contents();
  if (HasFatalFailure()) return;

  // Admitted again by a node restart: its signals pass, transfers commit through it.
  ASSERT_TRUE(cluster_.sim().restart_node(victim).ok());
  cluster_.arbitrator()->rule().node_rejoined(victim);
  bank_.mark_up(victim);
  ASSERT_TRUE(pump([&] { return started(victim); }, 60'000))
      << "node " << victim << " did not finish its node restart";
  for (uint16_t n : bank_.up_nodes()) {
    EXPECT_TRUE(cluster_.membership(n)->live_nodes().contains(victim)) << "at node " << n;
    EXPECT_FALSE(cluster_.membership(n)->signal_gate()->closed_to(victim)) << "at node " << n;
  }
  const size_t committed_before = bank_.committed().size();
  ASSERT_TRUE(pump([&] { return bank_.committed().size() >= committed_before + 20; }, 20'000))
      << "transfers stopped committing after the node restart";
  bank_.drain();
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
