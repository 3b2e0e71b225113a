// Membership in the deterministic simulator: data nodes running only the membership
// block, with recorders where the coordinator, dictionary, distribution and local_query
// blocks would be (they count NODE_FAILREP), and a SimArbitrator on a node of its own.
// Fixed scenarios (freeze, splits, president crash, unreachable arbitrator) and a seeded
// campaign of random crashes. A failing seed prints the command that replays it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/common/random.h"
#include "ndb-kernel/membership/membership_block.h"
#include "ndb-kernel/membership/membership_rules.h"
#include "ndb-kernel/membership/sim_arbitrator.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/sim/simulator.h"

namespace duo::membership {
namespace {

constexpr uint64_t kMs = kNanosPerMilli;
constexpr uint16_t kArbitratorNode = 90;
constexpr uint32_t kLogParts = 2;

// Stands in for a block that consumes NODE_FAILREP; records into the harness (which
// outlives the node's blocks).
class FailRepRecorder : public kernel::Block {
 public:
  FailRepRecorder(uint16_t block, uint16_t instance, std::vector<uint16_t>* log)
      : Block("recorder", block, instance), log_(log) {
    on(protocol::kNodeFailRep, &FailRepRecorder::on_node_fail_rep);
  }

 private:
  void on_node_fail_rep(kernel::Signal& signal) {
    log_->push_back(static_cast<uint16_t>(signal.word(0)));
  }
  std::vector<uint16_t>* log_;
};

struct ClusterShape {
  uint32_t groups = 1;
  uint32_t replicas = 2;
};

class MembershipCluster {
 public:
  MembershipCluster(ClusterShape shape, uint64_t seed, uint64_t jitter_ns = 0,
                    bool with_arbitrator = true)
      : heartbeat_ms_(100) {
    // DUO_MEMBERSHIP_LOG=1 shows the blocks' decisions when replaying a seed.
    set_log_level(std::getenv("DUO_MEMBERSHIP_LOG") != nullptr ? LogLevel::kInfo
                                                               : LogLevel::kError);
    protocol::register_protocol_signal_names();
    uint16_t next = 1;
    for (uint32_t g = 0; g < shape.groups; ++g) {
      topology_.node_groups.emplace_back();
      for (uint32_t r = 0; r < shape.replicas; ++r) topology_.node_groups.back().push_back(next++);
    }
    topology_.log_parts = kLogParts;
    sim::SimulatorOptions options;
    options.seed = seed;
    options.link_jitter_ns = jitter_ns;
    sim_ = std::make_unique<sim::Simulator>(options);
    MembershipOptions membership;
    membership.heartbeat_interval_ms = heartbeat_ms_;
    membership.arbitration_timeout_ms = 750;
    if (with_arbitrator) membership.arbitrator = {kArbitratorNode, protocol::kArbitratorBlock, 0};
    for (uint16_t node : topology_.data_nodes()) {
      nodes_.push_back(node);
      EXPECT_TRUE(sim_->add_node(node,
                                 [this, membership](uint16_t id) {
                                   std::vector<std::unique_ptr<kernel::Block>> blocks;
                                   blocks.push_back(
                                       std::make_unique<MembershipBlock>(topology_, membership));
                                   for (const kernel::BlockAddress& receiver : receivers(id)) {
                                     blocks.push_back(std::make_unique<FailRepRecorder>(
                                         receiver.block, receiver.instance, &delivered_[receiver]));
                                   }
                                   return blocks;
                                 })
                      .ok());
    }
    if (with_arbitrator) {
      EXPECT_TRUE(sim_->add_node(kArbitratorNode,
                                 [this](uint16_t) {
                                   std::vector<std::unique_ptr<kernel::Block>> blocks;
                                   auto arbitrator = std::make_unique<SimArbitrator>();
                                   arbitrator_ = arbitrator.get();
                                   blocks.push_back(std::move(arbitrator));
                                   return blocks;
                                 })
                      .ok());
    }
  }

  static std::vector<kernel::BlockAddress> receivers(uint16_t node) {
    std::vector<kernel::BlockAddress> out = {{node, protocol::kCoordinatorBlock, 0},
                                             {node, protocol::kDictionaryBlock, 0},
                                             {node, protocol::kDistributionBlock, 0}};
    for (uint16_t part = 0; part < kLogParts; ++part) {
      out.push_back({node, protocol::kLocalQueryBlock, part});
    }
    return out;
  }

  sim::Simulator& sim() { return *sim_; }
  const std::vector<uint16_t>& nodes() const { return nodes_; }
  const protocol::ClusterTopology& topology() const { return topology_; }
  uint64_t heartbeat_ms() const { return heartbeat_ms_; }
  MembershipBlock* membership(uint16_t node) {
    return static_cast<MembershipBlock*>(sim_->find_block({node, protocol::kMembershipBlock, 0}));
  }
  SimArbitrator* arbitrator() { return arbitrator_; }
  bool shut_down(uint16_t node) {
    MembershipBlock* block = membership(node);
    return block != nullptr && block->shutdown_requested();
  }
  // Up and not shut down.
  bool running(uint16_t node) { return membership(node) != nullptr && !shut_down(node); }
  // NODE_FAILREPs naming `failed` that `receiver` got.
  size_t delivered(const kernel::BlockAddress& receiver, uint16_t failed) {
    size_t count = 0;
    for (uint16_t node : delivered_[receiver]) count += node == failed ? 1 : 0;
    return count;
  }
  // Every block of `node` got exactly one NODE_FAILREP for each of `failed` and none
  // for any other node.
  ::testing::AssertionResult delivered_exactly(uint16_t node, const NodeSet& failed) {
    for (const kernel::BlockAddress& receiver : receivers(node)) {
      const std::vector<uint16_t>& got = delivered_[receiver];
      if (got.size() != failed.size()) {
        return ::testing::AssertionFailure() << receiver.to_string() << " got " << got.size()
                                             << " NODE_FAILREP, want " << failed.size();
      }
      for (uint16_t f : failed) {
        if (delivered(receiver, f) != 1) {
          return ::testing::AssertionFailure()
                 << receiver.to_string() << " got " << delivered(receiver, f)
                 << " NODE_FAILREP for node " << f;
        }
      }
    }
    return ::testing::AssertionSuccess();
  }
  // Every running node agrees on the membership `live` and delivered the rest.
  bool settled(const NodeSet& live) {
    for (uint16_t node : live) {
      MembershipBlock* block = membership(node);
      if (block == nullptr || block->shutdown_requested() || block->live_nodes() != live) {
        return false;
      }
      NodeSet failed;
      for (uint16_t n : nodes_) {
        if (!live.contains(n)) failed.insert(n);
      }
      if (!delivered_exactly(node, failed)) return false;
    }
    return true;
  }
  bool run_until(const std::function<bool()>& predicate, uint64_t limit_ms) {
    return sim_->run_until(predicate, limit_ms * kMs);
  }

 private:
  const uint64_t heartbeat_ms_;
  protocol::ClusterTopology topology_;
  std::unique_ptr<sim::Simulator> sim_;
  std::vector<uint16_t> nodes_;
  std::map<kernel::BlockAddress, std::vector<uint16_t>> delivered_;
  SimArbitrator* arbitrator_ = nullptr;
};

// The detection bound: 4 missed intervals after the last heartbeat, one more interval of
// tick phase, the round trips of the failure round and an arbitration.
uint64_t failure_bound_ms(const MembershipCluster& cluster) {
  return 6 * cluster.heartbeat_ms() + 100;
}

TEST(MembershipSim, QuietClusterNeverSuspects) {
  MembershipCluster cluster({2, 2}, 1, 300 * 1000);
  cluster.sim().run_for(20'000 * kMs);
  for (uint16_t node : cluster.nodes()) {
    EXPECT_TRUE(cluster.running(node));
    EXPECT_EQ(cluster.membership(node)->rounds_started(), 0u);
    EXPECT_EQ(cluster.membership(node)->live_nodes().size(), 4u);
    EXPECT_TRUE(cluster.delivered_exactly(node, {}));
  }
}

TEST(MembershipSim, CrashOfOneOfTwoIsAgreedWithArbitration) {
  MembershipCluster cluster({1, 2}, 3);
  cluster.sim().run_for(1000 * kMs);
  const uint64_t crash_ns = cluster.sim().now_ns();
  ASSERT_TRUE(cluster.sim().crash_node(2).ok());
  ASSERT_TRUE(cluster.run_until([&] { return cluster.settled({1}); }, failure_bound_ms(cluster)));
  const uint64_t detect_ms = (cluster.sim().now_ns() - crash_ns) / kMs;
  EXPECT_GE(detect_ms, 3 * cluster.heartbeat_ms());
  EXPECT_EQ(cluster.arbitrator()->rule().granted_count(), 1u);
  cluster.sim().run_for(3000 * kMs);
  EXPECT_TRUE(cluster.settled({1}));
}

TEST(MembershipSim, LinkDownIsImmediateSuspicion) {
  MembershipCluster cluster({2, 2}, 4);
  cluster.sim().run_for(1000 * kMs);
  const uint64_t crash_ns = cluster.sim().now_ns();
  ASSERT_TRUE(cluster.sim().crash_node(3).ok());
  // Node 4 watches node 3; node 2's transport sees the link close.
  kernel::Signal link_down(protocol::kLinkDownRep, {3});
  link_down.set_sender({2, 0, 0});
  link_down.set_receiver({2, protocol::kMembershipBlock, 0});
  ASSERT_TRUE(cluster.sim().inject(std::move(link_down)).ok());
  ASSERT_TRUE(cluster.run_until([&] { return cluster.settled({1, 2, 4}); }, 50));
  EXPECT_LT(cluster.sim().now_ns() - crash_ns, 50 * kMs);
  // 3 of 4 with both groups: no arbitration.
  EXPECT_EQ(cluster.arbitrator()->rule().granted_count(), 0u);
}

// Node 2's signals to its right neighbour stop (its heartbeats are lost, the link is
// not reported closed): it is declared dead after ~4 intervals and, still hearing the
// cluster, learns it and shuts down.
TEST(MembershipSim, SilentNodeIsDeclaredDeadAfterFourIntervals) {
  for (ClusterShape shape : {ClusterShape{1, 2}, ClusterShape{2, 2}}) {
    MembershipCluster cluster(shape, 5);
    cluster.sim().run_for(1000 * kMs);
    const uint16_t silent = 2;
    const uint16_t watcher = shape.groups == 1 ? 1 : 3;
    const uint64_t cut_ns = cluster.sim().now_ns();
    cluster.sim().cut_link_one_way(silent, watcher);
    NodeSet live(cluster.nodes().begin(), cluster.nodes().end());
    live.erase(silent);
    ASSERT_TRUE(
        cluster.run_until([&] { return cluster.settled(live); }, failure_bound_ms(cluster)));
    const uint64_t detect_ms = (cluster.sim().now_ns() - cut_ns) / kMs;
    EXPECT_GE(detect_ms, 4 * cluster.heartbeat_ms() - cluster.heartbeat_ms());
    EXPECT_LE(detect_ms, 5 * cluster.heartbeat_ms() + 50);
    ASSERT_TRUE(cluster.run_until([&] { return cluster.shut_down(silent); }, 100));
    EXPECT_NE(cluster.membership(silent)->shutdown_reason().find("declared"), std::string::npos);
    cluster.sim().run_for(3000 * kMs);
    EXPECT_TRUE(cluster.settled(live));
  }
}

// Shared by the split tests: after the split, exactly one of `sides` keeps running,
// agreed on itself, and every node of the others shut down.
void expect_one_side_wins(MembershipCluster& cluster, const std::vector<NodeSet>& sides) {
  auto decided = [&] {
    size_t running = 0, stopped = 0;
    for (uint16_t node : cluster.nodes()) (cluster.running(node) ? running : stopped) += 1;
    return stopped > 0 &&
           std::any_of(sides.begin(), sides.end(),
                       [&](const NodeSet& side) { return cluster.settled(side); }) &&
           running + stopped == cluster.nodes().size() &&
           std::all_of(sides.begin(), sides.end(), [&](const NodeSet& side) {
             return cluster.settled(side) || std::all_of(side.begin(), side.end(), [&](uint16_t n) {
                      return cluster.shut_down(n);
                    });
           });
  };
  ASSERT_TRUE(cluster.run_until(decided, 10'000));
  cluster.sim().run_for(3000 * kMs);
  ASSERT_TRUE(decided());
  size_t winners = 0;
  for (const NodeSet& side : sides) winners += cluster.settled(side) ? 1 : 0;
  EXPECT_EQ(winners, 1u);
}

// DUO_MEMBERSHIP_SEEDS=N runs a longer campaign (CI runs 1000 per campaign).
uint64_t seed_count() {
  const char* text = std::getenv("DUO_MEMBERSHIP_SEEDS");
  return text != nullptr ? std::strtoull(text, nullptr, 10) : 1000;
}

class SplitTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(SplitTest, OneOneExactlyOneSideContinues) {
  const uint64_t seed = GetParam();
  SCOPED_TRACE("replay: duo_membership_sim_test --gtest_filter='*OneOne*/" +
               std::to_string(seed - 1) + "'");
  MembershipCluster cluster({1, 2}, seed, 2 * kMs);
  cluster.sim().run_for((500 + seed * 37 % 500) * kMs);
  cluster.sim().partition({{1}, {2}});
  expect_one_side_wins(cluster, {{1}, {2}});
}

TEST_P(SplitTest, TwoTwoAcrossGroupsExactlyOneSideContinues) {
  const uint64_t seed = GetParam();
  SCOPED_TRACE("replay: duo_membership_sim_test --gtest_filter='*TwoTwoAcross*/" +
               std::to_string(seed - 1) + "'");
  MembershipCluster cluster({2, 2}, seed, 2 * kMs);
  cluster.sim().run_for((500 + seed * 37 % 500) * kMs);
  cluster.sim().partition({{1, 3}, {2, 4}});
  expect_one_side_wins(cluster, {{1, 3}, {2, 4}});
  EXPECT_EQ(cluster.arbitrator()->rule().granted_count() >= 1, true);
}

TEST_P(SplitTest, TwoTwoAlongGroupsEverythingStops) {
  const uint64_t seed = GetParam();
  MembershipCluster cluster({2, 2}, seed, 2 * kMs);
  cluster.sim().run_for((500 + seed * 37 % 500) * kMs);
  cluster.sim().partition({{1, 2}, {3, 4}});
  ASSERT_TRUE(cluster.run_until(
      [&] {
        for (uint16_t node : cluster.nodes()) {
          if (!cluster.shut_down(node)) return false;
        }
        return true;
      },
      10'000));
  EXPECT_NE(cluster.membership(1)->shutdown_reason().find("Node group 1 lost"), std::string::npos)
      << cluster.membership(1)->shutdown_reason();
}

INSTANTIATE_TEST_SUITE_P(Seeds, SplitTest, ::testing::Range<uint64_t>(1, 1 + seed_count() / 5));

TEST(MembershipSim, PresidentCrashDuringFailureRound) {
  MembershipCluster cluster({2, 2}, 6);
  cluster.sim().run_for(1000 * kMs);
  ASSERT_TRUE(cluster.sim().crash_node(3).ok());
  // The president (node 1) is in the middle of the round for node 3 when it dies.
  ASSERT_TRUE(cluster.run_until([&] { return cluster.membership(1)->rounds_started() > 0; },
                                failure_bound_ms(cluster)));
  ASSERT_TRUE(cluster.sim().crash_node(1).ok());
  ASSERT_TRUE(cluster.run_until(
      [&] {
        return cluster.settled({2, 4});
      },
      2 * failure_bound_ms(cluster)));
  cluster.sim().run_for(3000 * kMs);
  EXPECT_TRUE(cluster.settled({2, 4}));
}

TEST(MembershipSim, UnreachableArbitratorStopsTheSideThatNeedsIt) {
  MembershipCluster cluster({1, 2}, 7);
  cluster.sim().run_for(1000 * kMs);
  cluster.sim().cut_link(1, kArbitratorNode);
  cluster.sim().cut_link(2, kArbitratorNode);
  ASSERT_TRUE(cluster.sim().crash_node(2).ok());
  ASSERT_TRUE(cluster.run_until([&] { return cluster.shut_down(1); }, 2000));
  EXPECT_NE(cluster.membership(1)->shutdown_reason().find("ArbitrationTimeout"), std::string::npos);
  EXPECT_TRUE(cluster.delivered_exactly(1, {}));
}

TEST(MembershipSim, NoArbitratorConfiguredStopsTheSideThatNeedsIt) {
  MembershipCluster cluster({1, 2}, 8, 0, /*with_arbitrator=*/false);
  cluster.sim().run_for(1000 * kMs);
  ASSERT_TRUE(cluster.sim().crash_node(1).ok());
  ASSERT_TRUE(cluster.run_until([&] { return cluster.shut_down(2); }, 2000));
  EXPECT_TRUE(cluster.delivered_exactly(2, {}));
}

TEST(MembershipSim, SameSeedSameTrace) {
  auto run = [](uint64_t seed) {
    MembershipCluster cluster({2, 2}, seed, 3 * kMs);
    cluster.sim().run_for(700 * kMs);
    cluster.sim().crash_node(2).ignore_error();
    cluster.sim().run_for(2000 * kMs);
    return cluster.sim().trace_hash();
  };
  EXPECT_EQ(run(11), run(11));
  EXPECT_NE(run(11), run(12));
}

// ---- The crash campaign ----

class CrashCampaign : public ::testing::TestWithParam<uint64_t> {};

// One or two random crashes at random times (the second often during the first's
// failure round, sometimes of the president) in a 2- or 4-node cluster with jitter:
// the survivors agree on the membership and each delivers exactly one NODE_FAILREP per
// dead node to every block, within the bound — or, when a node group is gone, every
// survivor shuts down.
TEST_P(CrashCampaign, SurvivorsAgree) {
  const uint64_t seed = GetParam();
  SCOPED_TRACE(
      "replay: duo_membership_sim_test --gtest_filter='Seeds/CrashCampaign.SurvivorsAgree/" +
      std::to_string(seed - 1) + "' (seed " + std::to_string(seed) + ")");
  SeededRandom random(seed * 7919);
  const ClusterShape shape = random.uniform(2) == 0 ? ClusterShape{1, 2} : ClusterShape{2, 2};
  MembershipCluster cluster(shape, seed, random.uniform(5) * kMs);
  const auto& nodes = cluster.nodes();
  NodeSet dead;
  const uint16_t first = nodes[random.uniform(nodes.size())];
  cluster.sim().run_for((300 + random.uniform(2000)) * kMs);
  ASSERT_TRUE(cluster.sim().crash_node(first).ok());
  dead.insert(first);
  uint64_t last_crash_ns = cluster.sim().now_ns();
  if (shape.groups == 2 && random.uniform(2) == 0) {
    // A second crash while the first is being handled (the president half the time).
    cluster.sim().run_for(random.uniform(6 * cluster.heartbeat_ms()) * kMs);
    NodeSet candidates;
    for (uint16_t node : nodes) {
      if (!dead.contains(node)) candidates.insert(node);
    }
    const uint16_t second = random.uniform(2) == 0
                                ? president_of(candidates)
                                : *std::next(candidates.begin(), random.uniform(candidates.size()));
    ASSERT_TRUE(cluster.sim().crash_node(second).ok());
    dead.insert(second);
    last_crash_ns = cluster.sim().now_ns();
  }
  NodeSet live;
  for (uint16_t node : nodes) {
    if (!dead.contains(node)) live.insert(node);
  }
  const bool viable =
      check_viability(cluster.topology(), NodeSet(nodes.begin(), nodes.end()), live).viability !=
      Viability::kNodeGroupLost;
  if (viable) {
    ASSERT_TRUE(
        cluster.run_until([&] { return cluster.settled(live); }, 2 * failure_bound_ms(cluster)))
        << "dead " << format_node_set(dead) << " survivors " << format_node_set(live);
    EXPECT_LE(cluster.sim().now_ns() - last_crash_ns, 2 * failure_bound_ms(cluster) * kMs);
    cluster.sim().run_for(2000 * kMs);
    EXPECT_TRUE(cluster.settled(live)) << "unstable after settling";
  } else {
    ASSERT_TRUE(cluster.run_until(
        [&] {
          return std::all_of(live.begin(), live.end(),
                             [&](uint16_t n) { return cluster.shut_down(n); });
        },
        2 * failure_bound_ms(cluster)))
        << "a node group died (dead " << format_node_set(dead) << ") but survivors run on";
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, CrashCampaign, ::testing::Range<uint64_t>(1, 1 + seed_count()));

class FaultCampaign : public ::testing::TestWithParam<uint64_t> {};

// One random fault — a crash, a one-way cut between two nodes, a split into two random
// halves, or a crash with the arbitrator cut off — at a random time, with jitter. At
// the end the nodes still running (up and not shut down) are exactly the agreed
// membership of each of them, each delivered one NODE_FAILREP per other node, and they
// can all talk to each other: no two sides of a split both run (no split brain).
TEST_P(FaultCampaign, RunningNodesAgreeAndAreConnected) {
  const uint64_t seed = GetParam();
  SCOPED_TRACE("replay: duo_membership_sim_test --gtest_filter='Seeds/FaultCampaign.*/" +
               std::to_string(seed - 1) + "' (seed " + std::to_string(seed) + ")");
  SeededRandom random(seed * 104729);
  const ClusterShape shape = random.uniform(2) == 0 ? ClusterShape{1, 2} : ClusterShape{2, 2};
  MembershipCluster cluster(shape, seed, random.uniform(5) * kMs);
  const auto& nodes = cluster.nodes();
  cluster.sim().run_for((300 + random.uniform(2000)) * kMs);
  const uint64_t fault = random.uniform(4);
  std::string what;
  if (fault == 0) {
    const uint16_t victim = nodes[random.uniform(nodes.size())];
    what = "crash " + std::to_string(victim);
    ASSERT_TRUE(cluster.sim().crash_node(victim).ok());
  } else if (fault == 1) {
    const uint16_t from = nodes[random.uniform(nodes.size())];
    uint16_t to = nodes[random.uniform(nodes.size())];
    if (to == from)
      to = nodes[(std::find(nodes.begin(), nodes.end(), from) - nodes.begin() + 1) % nodes.size()];
    what = "cut " + std::to_string(from) + "->" + std::to_string(to);
    cluster.sim().cut_link_one_way(from, to);
  } else if (fault == 2) {
    std::vector<uint16_t> a, b;
    for (uint16_t node : nodes) (random.uniform(2) == 0 ? a : b).push_back(node);
    what = "split " + format_node_set(NodeSet(a.begin(), a.end())) + "|" +
           format_node_set(NodeSet(b.begin(), b.end()));
    cluster.sim().partition({a, b});
  } else {
    const uint16_t victim = nodes[random.uniform(nodes.size())];
    what = "crash " + std::to_string(victim) + " with the arbitrator cut off";
    for (uint16_t node : nodes) cluster.sim().cut_link(node, kArbitratorNode);
    ASSERT_TRUE(cluster.sim().crash_node(victim).ok());
  }
  SCOPED_TRACE(what);
  cluster.sim().run_for(10'000 * kMs);
  NodeSet running;
  for (uint16_t node : nodes) {
    if (cluster.running(node)) running.insert(node);
  }
  for (uint16_t a : running) {
    for (uint16_t b : running) {
      EXPECT_FALSE(a != b && cluster.sim().link_cut(a, b) && cluster.sim().link_cut(b, a))
          << "split brain: nodes " << a << " and " << b << " both run, cut off from each other";
    }
  }
  if (!running.empty()) {
    EXPECT_TRUE(cluster.settled(running)) << "running " << format_node_set(running);
  }
  // Only a crash with the arbitrator unreachable (and a 2-node cluster or a lost group)
  // may stop everything; a crash with a reachable arbitrator never does.
  if (fault == 0) {
    EXPECT_FALSE(running.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, FaultCampaign, ::testing::Range<uint64_t>(1, 1 + seed_count()));

}  // namespace
}  // namespace duo::membership
