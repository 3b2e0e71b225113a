// Node restart in the membership: a crashed data node restarts, turns passive
// (MEMBERSHIP_JOINING) and is included again (INCLUDE_NODEREQ to the president), in the
// deterministic simulator. The data nodes run only the membership block; a recorder
// stands in for the distribution block (it is the requester: INCLUDE_NODECONF/REF come
// back to it) and for the other blocks that get NODE_FAILREP. Fixed scenarios check the
// ring after an include (the included node sends heartbeats and watches its neighbour,
// so failures are detected as before), the refusals, and includes undone by a failure;
// a seeded campaign mixes random crashes, restarts and includes under link jitter. A
// failing seed prints the command that replays it (DUO_MEMBERSHIP_LOG=1 shows the log).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/common/random.h"
#include "ndb-kernel/membership/membership_block.h"
#include "ndb-kernel/membership/membership_messages.h"
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
constexpr uint64_t kHeartbeatMs = 100;

// What one stand-in block of one node life received.
struct Received {
  std::vector<uint16_t> node_failreps;
  std::vector<uint16_t> include_confs;
  std::vector<std::pair<uint16_t, uint32_t>> include_refs;  // (node, reason)
};

// Stands in for the distribution block (and the other NODE_FAILREP consumers); records
// into the harness, which outlives the node's blocks.
class Recorder : public kernel::Block {
 public:
  Recorder(uint16_t block, uint16_t instance, Received* received)
      : Block("recorder", block, instance), received_(received) {
    on(protocol::kNodeFailRep, &Recorder::on_node_fail_rep);
    on(protocol::kIncludeNodeConf, &Recorder::on_include_node_conf);
    on(protocol::kIncludeNodeRef, &Recorder::on_include_node_ref);
  }

 private:
  void on_node_fail_rep(kernel::Signal& signal) {
    received_->node_failreps.push_back(static_cast<uint16_t>(signal.word(0)));
  }
  void on_include_node_conf(kernel::Signal& signal) {
    received_->include_confs.push_back(static_cast<uint16_t>(signal.word(0)));
  }
  void on_include_node_ref(kernel::Signal& signal) {
    received_->include_refs.emplace_back(static_cast<uint16_t>(signal.word(0)), signal.word(1));
  }
  Received* received_;
};

enum class IncludeAnswer { kNone, kConf, kRef };

class IncludeCluster {
 public:
  IncludeCluster(uint32_t groups, uint64_t seed, uint64_t jitter_ns = 0) {
    set_log_level(std::getenv("DUO_MEMBERSHIP_LOG") != nullptr ? LogLevel::kInfo
                                                               : LogLevel::kError);
    protocol::register_protocol_signal_names();
    uint16_t next = 1;
    for (uint32_t g = 0; g < groups; ++g) {
      topology_.node_groups.push_back({next, static_cast<uint16_t>(next + 1)});
      next += 2;
    }
    topology_.log_parts = kLogParts;
    sim::SimulatorOptions options;
    options.seed = seed;
    options.link_jitter_ns = jitter_ns;
    sim_ = std::make_unique<sim::Simulator>(options);
    MembershipOptions membership;
    membership.heartbeat_interval_ms = kHeartbeatMs;
    membership.arbitration_timeout_ms = 750;
    membership.arbitrator = {kArbitratorNode, protocol::kArbitratorBlock, 0};
    for (uint16_t node : topology_.data_nodes()) {
      nodes_.push_back(node);
      EXPECT_TRUE(sim_->add_node(node,
                                 [this, membership](uint16_t id) {
                                   std::vector<std::unique_ptr<kernel::Block>> blocks;
                                   blocks.push_back(
                                       std::make_unique<MembershipBlock>(topology_, membership));
                                   // A new life starts with empty records.
                                   for (const kernel::BlockAddress& receiver : receivers(id)) {
                                     received_[receiver] = Received{};
                                     blocks.push_back(std::make_unique<Recorder>(
                                         receiver.block, receiver.instance, &received_[receiver]));
                                   }
                                   return blocks;
                                 })
                      .ok());
    }
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

  static std::vector<kernel::BlockAddress> receivers(uint16_t node) {
    std::vector<kernel::BlockAddress> out = {distribution(node),
                                             {node, protocol::kCoordinatorBlock, 0},
                                             {node, protocol::kDictionaryBlock, 0}};
    for (uint16_t part = 0; part < kLogParts; ++part) {
      out.push_back({node, protocol::kLocalQueryBlock, part});
    }
    return out;
  }
  static kernel::BlockAddress distribution(uint16_t node) {
    return {node, protocol::kDistributionBlock, 0};
  }

  sim::Simulator& sim() { return *sim_; }
  const std::vector<uint16_t>& nodes() const { return nodes_; }
  const protocol::ClusterTopology& topology() const { return topology_; }
  SimArbitrator* arbitrator() { return arbitrator_; }
  MembershipBlock* membership(uint16_t node) {
    return static_cast<MembershipBlock*>(sim_->find_block({node, protocol::kMembershipBlock, 0}));
  }
  bool shut_down(uint16_t node) {
    MembershipBlock* block = membership(node);
    return block != nullptr && block->shutdown_requested();
  }
  // Up, not shut down and not joining: a node that takes part in the membership.
  bool member(uint16_t node) {
    MembershipBlock* block = membership(node);
    return block != nullptr && !block->shutdown_requested() && !block->joining();
  }
  NodeSet members() {
    NodeSet out;
    for (uint16_t node : nodes_) {
      if (member(node)) out.insert(node);
    }
    return out;
  }
  // Every member's membership is exactly the set of members.
  bool agreed() {
    const NodeSet all = members();
    if (all.empty()) return false;
    return std::all_of(all.begin(), all.end(),
                       [&](uint16_t node) { return membership(node)->live_nodes() == all; });
  }
  // Every member agrees on `live` and nothing else runs as a member.
  bool settled(const NodeSet& live) { return members() == live && agreed(); }
  // settled(live), and every member delivered `count` NODE_FAILREP{failed} in this life.
  bool settled_after_failure(const NodeSet& live, uint16_t failed, size_t count = 1) {
    return settled(live) && std::all_of(live.begin(), live.end(), [&](uint16_t node) {
             return failreps_everywhere(node, failed, count);
           });
  }
  const Received& received(const kernel::BlockAddress& receiver) { return received_[receiver]; }
  // NODE_FAILREPs naming `failed` that every stand-in block of `node` got in this life.
  bool failreps_everywhere(uint16_t node, uint16_t failed, size_t count) {
    for (const kernel::BlockAddress& receiver : receivers(node)) {
      const std::vector<uint16_t>& got = received_[receiver].node_failreps;
      if (static_cast<size_t>(std::count(got.begin(), got.end(), failed)) != count) return false;
    }
    return true;
  }
  // The president as the members see it (the lowest member's view), 0 if none.
  uint16_t president() {
    const NodeSet all = members();
    return all.empty() ? 0 : membership(*all.begin())->president();
  }

  // As node `node`'s distribution block would: restart the node (crashing what is left
  // of it first), then MEMBERSHIP_JOINING. The arbitrator forgets its mark (mgmd does
  // so when a node connects as starting).
  void restart_and_join(uint16_t node) {
    if (sim_->node_up(node)) {
      EXPECT_TRUE(sim_->crash_node(node).ok());
    }
    EXPECT_TRUE(sim_->restart_node(node).ok());
    join(node);
  }
  void join(uint16_t node) {
    arbitrator_->rule().node_rejoined(node);
    kernel::Signal joining(protocol::kMembershipJoining);
    joining.set_sender(distribution(node));
    joining.set_receiver({node, protocol::kMembershipBlock, 0});
    EXPECT_TRUE(sim_->inject(std::move(joining)).ok());
    // Delivered now (no virtual time passes), so the harness sees the node passive.
    sim_->run_until([&] { return membership(node)->joining(); }, 0);
  }
  // As `requester`'s distribution block: INCLUDE_NODEREQ{node} to its membership block.
  // False if the requester is down (the members may not have noticed yet).
  bool request_include(uint16_t requester, uint16_t node) {
    if (!sim_->node_up(requester)) return false;
    kernel::Signal request(protocol::kIncludeNodeReq, {node});
    request.set_sender(distribution(requester));
    request.set_receiver({requester, protocol::kMembershipBlock, 0});
    EXPECT_TRUE(sim_->inject(std::move(request)).ok());
    return true;
  }
  // The answers `requester`'s distribution block got so far for `node`.
  size_t confs(uint16_t requester, uint16_t node) {
    const auto& got = received_[distribution(requester)].include_confs;
    return static_cast<size_t>(std::count(got.begin(), got.end(), node));
  }
  std::vector<uint32_t> refs(uint16_t requester, uint16_t node) {
    std::vector<uint32_t> reasons;
    for (const auto& [n, reason] : received_[distribution(requester)].include_refs) {
      if (n == node) reasons.push_back(reason);
    }
    return reasons;
  }
  // Asks the president to include `node` and waits for its answer.
  IncludeAnswer include_once(uint16_t node, uint64_t limit_ms) {
    const uint16_t requester = president();
    const size_t confs_before = confs(requester, node);
    const size_t refs_before = refs(requester, node).size();
    if (!request_include(requester, node)) return IncludeAnswer::kNone;
    sim_->run_until(
        [&] {
          return confs(requester, node) > confs_before ||
                 refs(requester, node).size() > refs_before || !sim_->node_up(requester);
        },
        limit_ms * kMs);
    if (sim_->node_up(requester) && confs(requester, node) > confs_before) {
      return IncludeAnswer::kConf;
    }
    if (sim_->node_up(requester) && refs(requester, node).size() > refs_before) {
      return IncludeAnswer::kRef;
    }
    return IncludeAnswer::kNone;
  }
  // As the restart protocol's requester does: retries after a refusal until included.
  bool include(uint16_t node, int attempts = 20) {
    for (int i = 0; i < attempts; ++i) {
      if (include_once(node, 2000) == IncludeAnswer::kConf) return true;
      sim_->run_for(2 * kHeartbeatMs * kMs);
    }
    return false;
  }
  bool run_until(const std::function<bool()>& predicate, uint64_t limit_ms) {
    return sim_->run_until(predicate, limit_ms * kMs);
  }

 private:
  protocol::ClusterTopology topology_;
  std::unique_ptr<sim::Simulator> sim_;
  std::vector<uint16_t> nodes_;
  std::map<kernel::BlockAddress, Received> received_;
  SimArbitrator* arbitrator_ = nullptr;
};

// 4 missed intervals, one of tick phase, the failure round and an arbitration.
constexpr uint64_t kFailureBoundMs = 6 * kHeartbeatMs + 100;

NodeSet all_but(const std::vector<uint16_t>& nodes, const NodeSet& gone) {
  NodeSet out;
  for (uint16_t node : nodes) {
    if (!gone.contains(node)) out.insert(node);
  }
  return out;
}

struct RejoinCase {
  uint32_t groups;
  uint16_t restarted;
  // The node crashed after the include: the restarted one again, or a neighbour whose
  // failure only a watcher that is the restarted node (or watches it) notices first.
  uint16_t crashed_after;
};

class RejoinTest : public ::testing::TestWithParam<RejoinCase> {};

// The restarted node comes back passive, is included, every member (it too) then agrees
// on the whole cluster, the ring stays quiet (its heartbeats arrive, it hears its
// neighbour's), and a later crash is detected and agreed as before.
TEST_P(RejoinTest, IncludedNodeHeartbeatsAndIsWatched) {
  const RejoinCase c = GetParam();
  IncludeCluster cluster(c.groups, 17 + c.restarted * 3 + c.crashed_after, 2 * kMs);
  const std::vector<uint16_t>& nodes = cluster.nodes();
  cluster.sim().run_for(1000 * kMs);
  ASSERT_TRUE(cluster.sim().crash_node(c.restarted).ok());
  const NodeSet survivors = all_but(nodes, {c.restarted});
  ASSERT_TRUE(cluster.run_until(
      [&] { return cluster.settled_after_failure(survivors, c.restarted); }, kFailureBoundMs));

  cluster.restart_and_join(c.restarted);
  cluster.sim().run_for(2000 * kMs);
  // Passive: it disturbs nobody and watches nobody.
  EXPECT_TRUE(cluster.membership(c.restarted)->joining());
  EXPECT_EQ(cluster.membership(c.restarted)->live_nodes(), NodeSet{c.restarted});
  EXPECT_EQ(cluster.membership(c.restarted)->rounds_started(), 0u);
  ASSERT_TRUE(cluster.settled(survivors));

  const uint16_t president = cluster.president();
  const uint64_t rounds_before = cluster.membership(president)->rounds_started();
  ASSERT_EQ(cluster.include_once(c.restarted, 1000), IncludeAnswer::kConf);
  EXPECT_EQ(cluster.membership(president)->includes_completed(), 1u);
  const NodeSet everyone(nodes.begin(), nodes.end());
  EXPECT_TRUE(cluster.settled(everyone));
  EXPECT_FALSE(cluster.membership(c.restarted)->joining());

  // Quiet for 30 intervals: nobody misses a heartbeat, no round starts.
  cluster.sim().run_for(30 * kHeartbeatMs * kMs);
  EXPECT_TRUE(cluster.settled(everyone));
  for (uint16_t node : nodes) {
    const uint64_t expected = node == president ? rounds_before : 0;
    EXPECT_EQ(cluster.membership(node)->rounds_started(), node == c.restarted ? 0 : expected)
        << "node " << node;
  }

  ASSERT_TRUE(cluster.sim().crash_node(c.crashed_after).ok());
  const NodeSet after = all_but(nodes, {c.crashed_after});
  // The members that saw the first crash of the restarted node deliver its second.
  const size_t failreps = c.crashed_after == c.restarted ? 2 : 1;
  ASSERT_TRUE(cluster.run_until(
      [&] { return cluster.settled_after_failure(after, c.crashed_after, failreps); },
      kFailureBoundMs))
      << "crash of node " << c.crashed_after << " not agreed";
  cluster.sim().run_for(3000 * kMs);
  EXPECT_TRUE(cluster.settled(after));
}

INSTANTIATE_TEST_SUITE_P(Shapes, RejoinTest,
                         ::testing::Values(RejoinCase{1, 2, 2}, RejoinCase{1, 2, 1},
                                           RejoinCase{1, 1, 1}, RejoinCase{1, 1, 2},
                                           RejoinCase{2, 3, 3}, RejoinCase{2, 3, 2},
                                           RejoinCase{2, 3, 4}, RejoinCase{2, 1, 1},
                                           RejoinCase{2, 1, 4}, RejoinCase{2, 4, 3}),
                         [](const ::testing::TestParamInfo<RejoinCase>& info) {
                           return std::to_string(info.param.groups * 2) + "nodes_restart" +
                                  std::to_string(info.param.restarted) + "_crash" +
                                  std::to_string(info.param.crashed_after);
                         });

// A repeated INCLUDE_ORD (same round) changes nothing and is answered again, by a
// member and by the included node alike.
TEST(MembershipInclude, RepeatedIncludeOrdIsOnlyAnsweredAgain) {
  IncludeCluster cluster(2, 23, 1 * kMs);
  cluster.sim().run_for(1000 * kMs);
  ASSERT_TRUE(cluster.sim().crash_node(3).ok());
  ASSERT_TRUE(cluster.run_until([&] { return cluster.settled({1, 2, 4}); }, kFailureBoundMs));
  cluster.restart_and_join(3);
  std::optional<kernel::Signal> ord;
  uint64_t answers = 0;
  cluster.sim().set_delivery_observer([&](uint64_t, const kernel::Signal& signal) {
    if (signal.id() == protocol::kIncludeOrd && !ord) ord = signal.clone();
    if (signal.id() == protocol::kIncludeConf) ++answers;
  });
  ASSERT_TRUE(cluster.include(3));
  cluster.sim().run_for(500 * kMs);
  ASSERT_TRUE(ord.has_value());
  ASSERT_EQ(answers, 3u);
  std::vector<uint64_t> rounds;
  for (uint16_t node : {1, 2, 3, 4}) rounds.push_back(cluster.membership(node)->rounds_started());
  // The repeat goes to node 3 (included) and to node 4 (a member).
  for (uint16_t to : {3, 4}) {
    kernel::Signal repeat = ord->clone();
    repeat.set_receiver({to, protocol::kMembershipBlock, 0});
    ASSERT_TRUE(cluster.sim().inject(std::move(repeat)).ok());
  }
  cluster.sim().run_for(1000 * kMs);
  EXPECT_EQ(answers, 5u);
  EXPECT_TRUE(cluster.settled({1, 2, 3, 4}));
  for (uint16_t node : {1, 2, 3, 4}) {
    EXPECT_EQ(cluster.membership(node)->rounds_started(), rounds[node - 1]) << "node " << node;
  }
}

// A dead node that restarts without MEMBERSHIP_JOINING (its distribution block has not
// sent it yet) sends heartbeats the survivors drop; they go on undisturbed, and the next
// failure round among them names it failed, which it ignores: it has heard no heartbeat
// in this life, so the verdict is about its previous one.
TEST(MembershipInclude, RestartedButNotIncludedNodeDisturbsNobody) {
  IncludeCluster cluster(2, 31, 2 * kMs);
  cluster.sim().run_for(1000 * kMs);
  ASSERT_TRUE(cluster.sim().crash_node(4).ok());
  ASSERT_TRUE(cluster.run_until([&] { return cluster.settled({1, 2, 3}); }, kFailureBoundMs));
  const uint64_t rounds = cluster.membership(1)->rounds_started();
  ASSERT_TRUE(cluster.sim().restart_node(4).ok());
  cluster.sim().run_for(5000 * kMs);
  for (uint16_t node : {1, 2, 3}) {
    EXPECT_EQ(cluster.membership(node)->live_nodes(), (NodeSet{1, 2, 3})) << "node " << node;
    EXPECT_FALSE(cluster.shut_down(node));
  }
  EXPECT_EQ(cluster.membership(1)->rounds_started(), rounds);
  ASSERT_TRUE(cluster.sim().crash_node(2).ok());
  ASSERT_TRUE(cluster.run_until(
      [&] {
        return cluster.membership(1)->live_nodes() == NodeSet{1, 3} &&
               cluster.membership(3)->live_nodes() == NodeSet{1, 3};
      },
      kFailureBoundMs + 200));
  // Node 4 never heard a heartbeat in this life: the round's verdict is about its
  // previous life, so it stays up (its distribution block starts it by a node restart)
  // and still disturbs nobody.
  EXPECT_FALSE(cluster.shut_down(4));
  EXPECT_FALSE(cluster.shut_down(1));
  EXPECT_FALSE(cluster.shut_down(3));
}

// Refusals: not the president, a node already live, an include already running, a
// failure round running; every refused include succeeds when asked again later.
TEST(MembershipInclude, RefusalsAndOneIncludeAtATime) {
  IncludeCluster cluster(2, 41, 1 * kMs);
  cluster.sim().run_for(1000 * kMs);
  ASSERT_TRUE(cluster.sim().crash_node(2).ok());
  ASSERT_TRUE(cluster.sim().crash_node(4).ok());
  ASSERT_TRUE(cluster.run_until([&] { return cluster.settled({1, 3}); }, 2 * kFailureBoundMs));
  cluster.restart_and_join(2);
  cluster.restart_and_join(4);
  cluster.sim().run_for(500 * kMs);

  cluster.request_include(3, 2);
  cluster.request_include(1, 3);
  cluster.request_include(1, 7);
  cluster.request_include(1, 2);
  cluster.request_include(1, 4);  // while 2 is being included
  ASSERT_TRUE(cluster.run_until([&] { return cluster.confs(1, 2) == 1; }, 1000));
  EXPECT_EQ(cluster.refs(3, 2), (std::vector<uint32_t>{uint32_t(IncludeRefusal::kNotPresident)}));
  EXPECT_EQ(cluster.refs(1, 3), (std::vector<uint32_t>{uint32_t(IncludeRefusal::kAlreadyLive)}));
  EXPECT_EQ(cluster.refs(1, 7), (std::vector<uint32_t>{uint32_t(IncludeRefusal::kNotADataNode)}));
  EXPECT_EQ(cluster.refs(1, 4), (std::vector<uint32_t>{uint32_t(IncludeRefusal::kIncludeRunning)}));
  EXPECT_TRUE(cluster.settled({1, 2, 3}));
  // The passive node 4 refuses as well (it is nobody's president).
  cluster.request_include(4, 4);
  // A suspicion pending at the president: a failure is being handled.
  kernel::Signal link_down(protocol::kLinkDownRep, {2});
  link_down.set_sender({1, 0, 0});
  link_down.set_receiver({1, protocol::kMembershipBlock, 0});
  ASSERT_TRUE(cluster.sim().crash_node(2).ok());
  ASSERT_TRUE(cluster.sim().inject(std::move(link_down)).ok());
  cluster.request_include(1, 4);
  ASSERT_TRUE(cluster.run_until([&] { return cluster.refs(1, 4).size() == 2; }, 100));
  EXPECT_EQ(cluster.refs(1, 4)[1], uint32_t(IncludeRefusal::kFailureRoundRunning));
  EXPECT_EQ(cluster.refs(4, 4), (std::vector<uint32_t>{uint32_t(IncludeRefusal::kNotPresident)}));
  ASSERT_TRUE(cluster.run_until([&] { return cluster.settled({1, 3}); }, kFailureBoundMs));
  ASSERT_TRUE(cluster.include(4));
  EXPECT_TRUE(cluster.settled({1, 3, 4}));
}

// A member crashes while node 4 is being included: the failure round undoes the include
// (INCLUDE_NODEREF kSuperseded), every member that had added 4 drops it again and the
// already-told node 4 learns it was declared dead and stops; restarted, it is included.
TEST(MembershipInclude, FailureDuringIncludeUndoesIt) {
  IncludeCluster cluster(2, 51, 0);
  cluster.sim().set_link_latency(1, 4, 50 * kMs, 0);  // the INCLUDE_ORD to 4 is slow
  cluster.sim().set_link_latency(4, 1, 50 * kMs, 0);
  cluster.sim().run_for(1000 * kMs);
  ASSERT_TRUE(cluster.sim().crash_node(4).ok());
  ASSERT_TRUE(cluster.run_until([&] { return cluster.settled({1, 2, 3}); }, 2 * kFailureBoundMs));
  cluster.restart_and_join(4);
  cluster.sim().run_for(200 * kMs);
  cluster.request_include(1, 4);
  cluster.sim().run_for(20 * kMs);
  // Node 3 has added 4 by now; node 2 dies and its link reports it at once.
  ASSERT_TRUE(cluster.membership(3)->live_nodes().contains(4));
  ASSERT_TRUE(cluster.sim().crash_node(2).ok());
  kernel::Signal link_down(protocol::kLinkDownRep, {2});
  link_down.set_sender({1, 0, 0});
  link_down.set_receiver({1, protocol::kMembershipBlock, 0});
  ASSERT_TRUE(cluster.sim().inject(std::move(link_down)).ok());
  ASSERT_TRUE(cluster.run_until([&] { return !cluster.refs(1, 4).empty(); }, 100));
  EXPECT_EQ(cluster.refs(1, 4), (std::vector<uint32_t>{uint32_t(IncludeRefusal::kSuperseded)}));
  // Node 1 and node 3 had 4 in their membership: each delivers its failure again.
  ASSERT_TRUE(cluster.run_until(
      [&] {
        return cluster.settled_after_failure({1, 3}, 4, 2);
      },
      kFailureBoundMs));
  ASSERT_TRUE(cluster.run_until([&] { return cluster.shut_down(4); }, 500));
  cluster.restart_and_join(4);
  ASSERT_TRUE(cluster.include(4));
  EXPECT_TRUE(cluster.settled({1, 3, 4}));
}

// The node being included dies before it answers: its silence after INCLUDE_ORD fails it
// and the members agree without it.
TEST(MembershipInclude, IncludedNodeDiesDuringInclude) {
  IncludeCluster cluster(1, 61, 0);
  cluster.sim().run_for(1000 * kMs);
  ASSERT_TRUE(cluster.sim().crash_node(2).ok());
  ASSERT_TRUE(cluster.run_until([&] { return cluster.settled({1}); }, kFailureBoundMs));
  cluster.restart_and_join(2);
  cluster.sim().run_for(100 * kMs);
  cluster.sim().cut_link(1, 2);  // the INCLUDE_ORD is lost, then 2 dies
  cluster.request_include(1, 2);
  cluster.sim().run_for(10 * kMs);
  ASSERT_TRUE(cluster.sim().crash_node(2).ok());
  cluster.sim().heal_all();
  ASSERT_TRUE(cluster.run_until([&] { return !cluster.refs(1, 2).empty(); }, kFailureBoundMs));
  EXPECT_EQ(cluster.refs(1, 2), (std::vector<uint32_t>{uint32_t(IncludeRefusal::kSuperseded)}));
  ASSERT_TRUE(cluster.run_until([&] { return cluster.settled({1}); }, kFailureBoundMs));
  cluster.sim().run_for(2000 * kMs);
  EXPECT_TRUE(cluster.settled({1}));
  EXPECT_FALSE(cluster.shut_down(1));
}

// The president dies right after sending INCLUDE_ORD (only some members got it, node 4
// perhaps not): the next president's failure round settles node 4 one way or the other
// (a member that missed the include adopts it from the round; a node 4 that missed it
// stays passive, fails to answer PREP_FAILREQ and is failed), and every member agrees.
TEST(MembershipInclude, PresidentDiesDuringInclude) {
  for (const bool four_first : {false, true}) {
    for (uint64_t delay_us : {0, 500, 1000, 1500, 2500, 4000}) {
      SCOPED_TRACE("crash of the president " + std::to_string(delay_us) +
                   " us after the request; node 4 hears first: " + std::to_string(four_first));
      IncludeCluster cluster(2, 71 + delay_us, 0);
      cluster.sim().set_link_latency(1, 3, (four_first ? 3 : 2) * kMs, 0);
      cluster.sim().set_link_latency(1, 4, (four_first ? 2 : 3) * kMs, 0);
      cluster.sim().run_for(1000 * kMs);
      ASSERT_TRUE(cluster.sim().crash_node(4).ok());
      ASSERT_TRUE(cluster.run_until(
          [&] {
            return cluster.settled({1, 2, 3});
          },
          2 * kFailureBoundMs));
      cluster.restart_and_join(4);
      cluster.sim().run_for(100 * kMs);
      ASSERT_TRUE(cluster.request_include(1, 4));
      cluster.sim().run_for(delay_us * 1000);
      ASSERT_TRUE(cluster.sim().crash_node(1).ok());
      ASSERT_TRUE(cluster.run_until(
          [&] { return cluster.agreed() && !cluster.members().contains(1); }, 3 * kFailureBoundMs));
      cluster.sim().run_for(3000 * kMs);
      EXPECT_TRUE(cluster.agreed());
      EXPECT_FALSE(cluster.shut_down(2));
      EXPECT_FALSE(cluster.shut_down(3));
      if (!cluster.members().contains(4)) {
        cluster.restart_and_join(4);
        ASSERT_TRUE(cluster.include(4));
      }
      EXPECT_TRUE(cluster.settled({2, 3, 4}));
    }
  }
}

// ---- The restart campaign ----

// DUO_MEMBERSHIP_SEEDS=N runs a longer campaign (N / 4 seeds here).
uint64_t seed_count() {
  const char* text = std::getenv("DUO_MEMBERSHIP_SEEDS");
  return (text != nullptr ? std::strtoull(text, nullptr, 10) : 1000) / 4;
}

class RestartCampaign : public ::testing::TestWithParam<uint64_t> {};

// Random crashes, restarts and includes, at random moments (often in the middle of a
// failure round or of another include), in a 2- or 4-node cluster with link jitter.
// Crashes never take the last established node of a node group, so the cluster must
// never stop. Invariants: no node that was established (in the initial cluster, or
// whose include was confirmed) and not crashed since shuts down; after quiescing all
// members agree on exactly the set of members; every dead node is then included again;
// and the last included node is watched: its crash is detected and agreed.
TEST_P(RestartCampaign, MembersAgreeAndIncludedNodesAreWatched) {
  const uint64_t seed = GetParam();
  SCOPED_TRACE("replay: duo_membership_include_sim_test --gtest_filter='Seeds/RestartCampaign.*/" +
               std::to_string(seed - 1) + "' (seed " + std::to_string(seed) + ")");
  SeededRandom random(seed * 6271);
  const uint32_t groups = random.uniform(2) == 0 ? 1 : 2;
  IncludeCluster cluster(groups, seed, random.uniform(5) * kMs);
  const std::vector<uint16_t>& nodes = cluster.nodes();
  NodeSet established(nodes.begin(), nodes.end());
  uint16_t last_included = 0;
  std::string story;
  auto group_of = [&](uint16_t node) { return (node - 1) / 2; };
  auto check_established = [&]() {
    for (uint16_t node : established) {
      if (cluster.shut_down(node)) {
        ADD_FAILURE() << "established node " << node
                      << " shut down: " << cluster.membership(node)->shutdown_reason() << "; "
                      << story;
        return false;
      }
    }
    return true;
  };

  cluster.sim().run_for((300 + random.uniform(1000)) * kMs);
  const int steps = 4 + static_cast<int>(random.uniform(10));
  for (int step = 0; step < steps; ++step) {
    const uint64_t action = random.uniform(3);
    const uint16_t node = nodes[random.uniform(nodes.size())];
    if (action == 0) {
      // Crash, unless it takes the last established node of its group.
      bool partner_left = false;
      for (uint16_t other : established) {
        partner_left |=
            other != node && group_of(other) == group_of(node) && cluster.sim().node_up(other);
      }
      if (!cluster.sim().node_up(node) || !partner_left) continue;
      story += " crash " + std::to_string(node);
      ASSERT_TRUE(cluster.sim().crash_node(node).ok());
      established.erase(node);
    } else if (action == 1) {
      // Restart a node that is down or stopped, passive until included.
      if (cluster.member(node) || (cluster.sim().node_up(node) && !cluster.shut_down(node))) {
        continue;
      }
      story += " restart " + std::to_string(node);
      cluster.restart_and_join(node);
    } else {
      // Ask the president to include a joining node (no waiting for the answer); the
      // next step then often falls into the include.
      std::vector<uint16_t> joining;
      for (uint16_t n : nodes) {
        if (cluster.membership(n) != nullptr && cluster.membership(n)->joining()) {
          joining.push_back(n);
        }
      }
      const uint16_t president = cluster.president();
      if (joining.empty() || !cluster.sim().node_up(president)) continue;
      const uint16_t joiner = joining[random.uniform(joining.size())];
      story += " include " + std::to_string(joiner) + "@" + std::to_string(president);
      cluster.join(joiner);  // mgmd forgets its arbitration mark: it is starting again
      ASSERT_TRUE(cluster.request_include(president, joiner));
      cluster.sim().run_for(random.uniform(20'000) * 1000);
      continue;
    }
    cluster.sim().run_for(random.uniform(8 * kHeartbeatMs) * kMs);
    if (!check_established()) return;
  }
  SCOPED_TRACE("steps:" + story);
  // Quiesce: every round and include ends, the members agree on themselves.
  ASSERT_TRUE(cluster.run_until([&] { return cluster.agreed(); }, 4 * kFailureBoundMs))
      << "members " << format_node_set(cluster.members()) << " disagree";
  cluster.sim().run_for(2000 * kMs);
  ASSERT_TRUE(check_established());
  ASSERT_TRUE(cluster.agreed()) << "unstable after quiescing";

  // Bring everything back, one include at a time.
  for (uint16_t node : nodes) {
    if (cluster.member(node) &&
        cluster.membership(cluster.president())->live_nodes().contains(node)) {
      continue;
    }
    if (!cluster.membership(node) || !cluster.membership(node)->joining()) {
      cluster.restart_and_join(node);
    }
    cluster.join(node);
    ASSERT_TRUE(cluster.include(node)) << "node " << node << " cannot be included";
    last_included = node;
    established.insert(node);
  }
  const NodeSet everyone(nodes.begin(), nodes.end());
  cluster.sim().run_for(2000 * kMs);
  ASSERT_TRUE(check_established());
  ASSERT_TRUE(cluster.settled(everyone));

  // The last included node (else a random one) is watched: its crash is agreed.
  const uint16_t victim = last_included != 0 ? last_included : nodes[random.uniform(nodes.size())];
  ASSERT_TRUE(cluster.sim().crash_node(victim).ok());
  const NodeSet after = all_but(nodes, {victim});
  ASSERT_TRUE(cluster.run_until([&] { return cluster.settled(after); }, kFailureBoundMs))
      << "crash of node " << victim << " not agreed";
}

INSTANTIATE_TEST_SUITE_P(Seeds, RestartCampaign, ::testing::Range<uint64_t>(1, 1 + seed_count()));

}  // namespace
}  // namespace duo::membership
