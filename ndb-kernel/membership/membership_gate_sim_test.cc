// The membership block's SignalGate and admission watching in the simulator: three data
// nodes (one node group of three) run the membership block beside a stand-in
// distribution block that, like the real one at a start, reports RESTART_INFOREP to
// every other data node shortly after the start and then every interval (the start
// protocol), and counts what it receives. No arbitrator: two of three are a majority.
//
// Checked: a node frozen after its start traffic but before any heartbeat of it got
// through is declared dead after the normal number of missed intervals (admission is a
// heartbeat heard); a node never heard from is not (it may not have started yet); once
// a node is declared dead, the survivors' gates drop everything it sends when it
// resumes (counted) except the start protocol; the gate unit: close/open, allow list,
// heard, one log line per closing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <vector>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/membership/membership_block.h"
#include "ndb-kernel/membership/signal_gate.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/sim/simulator.h"

namespace duo::membership {
namespace {

constexpr uint64_t kMs = kNanosPerMilli;
constexpr uint64_t kHeartbeatMs = 100;

// Stands in for the distribution block (and the other NODE_FAILREP receivers' count):
// reports RESTART_INFOREP to the other data nodes `first_report_ms` after its start and
// then every heartbeat interval; counts RESTART_INFOREP and NODE_FAILREP received.
class StartReporter : public kernel::Block {
 public:
  StartReporter(std::vector<uint16_t> data_nodes, uint64_t first_report_ms)
      : Block("start_reporter", protocol::kDistributionBlock),
        data_nodes_(std::move(data_nodes)),
        first_report_ms_(first_report_ms) {
    on(protocol::kRestartTimer, &StartReporter::on_timer);
    on(protocol::kRestartInfoRep, &StartReporter::on_restart_info_rep);
    on(protocol::kNodeFailRep, &StartReporter::on_node_fail_rep);
  }
  void on_start() override {
    send_delayed(address(), kernel::Signal(protocol::kRestartTimer), first_report_ms_)
        .ignore_error();
  }

  std::map<uint16_t, uint64_t> reports_from;  // sender node -> RESTART_INFOREPs
  std::vector<uint16_t> failed;               // NODE_FAILREPs, in order

 private:
  void on_timer(kernel::Signal& /*signal*/) {
    for (uint16_t node : data_nodes_) {
      if (node == node_id()) continue;
      send({node, protocol::kDistributionBlock, 0}, kernel::Signal(protocol::kRestartInfoRep, {0}))
          .ignore_error();
    }
    send_delayed(address(), kernel::Signal(protocol::kRestartTimer), kHeartbeatMs).ignore_error();
  }
  void on_restart_info_rep(kernel::Signal& signal) { ++reports_from[signal.sender().node_id]; }
  void on_node_fail_rep(kernel::Signal& signal) {
    failed.push_back(static_cast<uint16_t>(signal.word(0)));
  }

  const std::vector<uint16_t> data_nodes_;
  const uint64_t first_report_ms_;
};

// Absorbs the NODE_FAILREPs of the coordinator, dictionary and local_query addresses.
class Sink : public kernel::Block {
 public:
  Sink(uint16_t block, uint16_t instance) : Block("sink", block, instance) {
    on(protocol::kNodeFailRep, &Sink::on_any);
  }

 private:
  void on_any(kernel::Signal& /*signal*/) {}
};

class GateCluster {
 public:
  // Node n's stand-in reports first at first_report_ms[n] (default 60 ms).
  explicit GateCluster(uint64_t seed, std::map<uint16_t, uint64_t> first_report_ms = {}) {
    set_log_level(std::getenv("DUO_MEMBERSHIP_LOG") != nullptr ? LogLevel::kInfo
                                                               : LogLevel::kError);
    protocol::register_protocol_signal_names();
    topology_.node_groups = {{1, 2, 3}};
    topology_.log_parts = 1;
    sim::SimulatorOptions options;
    options.seed = seed;
    sim_ = std::make_unique<sim::Simulator>(options);
    MembershipOptions membership;
    membership.heartbeat_interval_ms = kHeartbeatMs;
    for (uint16_t node : topology_.data_nodes()) {
      const uint64_t report_ms =
          first_report_ms.contains(node) ? first_report_ms.at(node) : uint64_t{60};
      EXPECT_TRUE(
          sim_->add_node(node,
                         [this, membership, report_ms](uint16_t) {
                           std::vector<std::unique_ptr<kernel::Block>> blocks;
                           blocks.push_back(
                               std::make_unique<MembershipBlock>(topology_, membership));
                           blocks.push_back(
                               std::make_unique<StartReporter>(topology_.data_nodes(), report_ms));
                           blocks.push_back(std::make_unique<Sink>(protocol::kCoordinatorBlock, 0));
                           blocks.push_back(std::make_unique<Sink>(protocol::kDictionaryBlock, 0));
                           blocks.push_back(std::make_unique<Sink>(protocol::kLocalQueryBlock, 0));
                           return blocks;
                         })
              .ok());
    }
  }

  sim::Simulator& sim() { return *sim_; }
  MembershipBlock* membership(uint16_t node) {
    return static_cast<MembershipBlock*>(sim_->find_block({node, protocol::kMembershipBlock, 0}));
  }
  StartReporter* reporter(uint16_t node) {
    return static_cast<StartReporter*>(sim_->find_block({node, protocol::kDistributionBlock, 0}));
  }
  // `live` agree on themselves as the membership.
  bool agreed(const NodeSet& live) {
    for (uint16_t node : live) {
      MembershipBlock* block = membership(node);
      if (block == nullptr || block->shutdown_requested() || block->live_nodes() != live) {
        return false;
      }
    }
    return true;
  }
  bool run_until(const std::function<bool()>& predicate, uint64_t limit_ms) {
    return sim_->run_until(predicate, limit_ms * kMs);
  }

 private:
  protocol::ClusterTopology topology_;
  std::unique_ptr<sim::Simulator> sim_;
};

// The ring is 1 -> 2 -> 3 -> 1: node 3 watches node 2. Node 2's first heartbeat to node
// 3 is lost (its link is not up yet, as in duo_datad before start phase 3); the link
// comes up at 50 ms, node 2's start traffic reaches node 3 at 60 ms, and node 2 is
// frozen at 70 ms, before its second heartbeat (100 ms). It must be declared dead within
// the normal bound: 4 missed intervals after its admission, a tick of phase, the round.
TEST(MembershipGateSim, FrozenBeforeItsFirstHeartbeatIsDeclaredDead) {
  for (uint64_t seed : {1, 2, 3}) {
    GateCluster cluster(seed);
    cluster.sim().cut_link(2, 3);
    cluster.sim().schedule_action(50 * kMs, [&] { cluster.sim().heal_link(2, 3); });
    cluster.sim().schedule_action(70 * kMs, [&] { ASSERT_TRUE(cluster.sim().pause_node(2).ok()); });
    cluster.sim().run_for(75 * kMs);
    ASSERT_TRUE(cluster.membership(3)->signal_gate()->heard(2));
    EXPECT_TRUE(cluster.membership(3)->live_nodes().contains(2));
    // 100 ms: admitted (heard); 200..500 ms: four intervals missed; then the round.
    ASSERT_TRUE(cluster.run_until(
        [&] {
          return cluster.agreed({1, 3});
        },
        6 * kHeartbeatMs + 100 - 75))
        << "seed " << seed << ": a node frozen before its first heartbeat was not declared dead";
    EXPECT_GE(cluster.sim().now_ns(), 500 * kMs);
    cluster.sim().run_for(10 * kMs);  // the NODE_FAILREPs are on their way
    EXPECT_EQ(cluster.reporter(3)->failed, std::vector<uint16_t>{2});
    EXPECT_EQ(cluster.reporter(1)->failed, std::vector<uint16_t>{2});
  }
}

// A node never heard from in this life is not watched: it may simply not have been
// started yet. Node 2 is cut off from both others for 1.5 s (15 intervals), then heard.
TEST(MembershipGateSim, NodeNeverHeardFromIsNotDeclaredDead) {
  GateCluster cluster(4);
  cluster.sim().cut_link(2, 1);
  cluster.sim().cut_link(2, 3);
  cluster.sim().run_for(1500 * kMs);
  EXPECT_FALSE(cluster.membership(3)->signal_gate()->heard(2));
  EXPECT_TRUE(cluster.agreed({1, 2, 3}));
  cluster.sim().heal_all();
  cluster.sim().run_for(2000 * kMs);
  EXPECT_TRUE(cluster.agreed({1, 2, 3}));
  EXPECT_EQ(cluster.membership(1)->failures_committed(), 0u);
  EXPECT_EQ(cluster.membership(3)->failures_committed(), 0u);
}

// Node 2 runs normally, is frozen until the others declared it dead, then resumes: it
// takes in what was held for it (heartbeats, the failure round naming it) and learns
// its fate; meanwhile everything it sends the survivors (heartbeats, FAIL_REPs, answers)
// is dropped by their gates — except its RESTART_INFOREPs (start protocol), which the
// survivors' stand-ins still count.
TEST(MembershipGateSim, DeadNodesSignalsAreDroppedButItsStartProtocol) {
  GateCluster cluster(5);
  cluster.sim().run_for(1000 * kMs);
  ASSERT_TRUE(cluster.agreed({1, 2, 3}));
  ASSERT_TRUE(cluster.sim().pause_node(2).ok());
  ASSERT_TRUE(cluster.run_until([&] { return cluster.agreed({1, 3}); }, 1000));
  cluster.sim().run_for(10 * kMs);
  for (uint16_t survivor : {1, 3}) {
    const SignalGate* gate = cluster.membership(survivor)->signal_gate();
    EXPECT_TRUE(gate->closed_to(2));
    EXPECT_FALSE(gate->closed_to(survivor == 1 ? 3 : 1));
  }
  const uint64_t dropped_before = cluster.membership(1)->signal_gate()->dropped(2) +
                                  cluster.membership(3)->signal_gate()->dropped(2);
  const uint64_t reports_before = cluster.reporter(1)->reports_from[2];
  // The failure round's COMMIT_FAILREQ reaches node 2 too (held, after its timers).
  cluster.sim().run_for(20 * kMs);
  ASSERT_TRUE(cluster.sim().resume_node(2).ok());
  ASSERT_TRUE(cluster.run_until([&] { return cluster.membership(2)->shutdown_requested(); }, 100));
  cluster.sim().run_for(500 * kMs);
  const uint64_t dropped_after = cluster.membership(1)->signal_gate()->dropped(2) +
                                 cluster.membership(3)->signal_gate()->dropped(2);
  EXPECT_GT(dropped_after, dropped_before) << "the resumed node's signals were not dropped";
  EXPECT_EQ(cluster.sim().stats().dropped_by_filter,
            cluster.membership(1)->signal_gate()->dropped_total() +
                cluster.membership(3)->signal_gate()->dropped_total() +
                cluster.membership(2)->signal_gate()->dropped_total());
  // Its stand-in keeps reporting (its process still runs here): the start protocol
  // passes the gate.
  EXPECT_GT(cluster.reporter(1)->reports_from[2], reports_before);
  EXPECT_TRUE(cluster.agreed({1, 3}));
  EXPECT_EQ(cluster.reporter(1)->failed, std::vector<uint16_t>{2});
}

TEST(SignalGate, ClosedNodeIsDroppedButItsStartProtocolUntilOpened) {
  protocol::register_protocol_signal_names();
  SignalGate gate(1);
  auto from = [](uint16_t node, kernel::SignalId id) {
    kernel::Signal signal(id, {0});
    signal.set_sender({node, protocol::kLocalQueryBlock, 0});
    signal.set_receiver({1, protocol::kCoordinatorBlock, 0});
    return signal;
  };
  EXPECT_FALSE(gate.heard(2));
  EXPECT_FALSE(gate.drops(from(2, protocol::kLqhKeyConf)));
  EXPECT_TRUE(gate.heard(2));
  EXPECT_FALSE(gate.heard(3));

  gate.close_to(2);
  gate.close_to(2);  // idempotent
  EXPECT_TRUE(gate.closed_to(2));
  EXPECT_TRUE(gate.drops(from(2, protocol::kLqhKeyConf)));
  EXPECT_TRUE(gate.drops(from(2, protocol::kHeartbeat)));
  EXPECT_TRUE(gate.drops(from(2, protocol::kGcpPrepareReq)));
  EXPECT_FALSE(gate.drops(from(2, protocol::kRestartInfoRep)));
  EXPECT_FALSE(gate.drops(from(2, protocol::kStartPermReq)));
  EXPECT_FALSE(gate.drops(from(3, protocol::kLqhKeyConf)));
  EXPECT_EQ(gate.dropped(2), 3u);
  EXPECT_EQ(gate.dropped(3), 0u);

  gate.admit(2);
  EXPECT_FALSE(gate.closed_to(2));
  EXPECT_FALSE(gate.drops(from(2, protocol::kLqhKeyConf)));
  gate.close_to(2);
  EXPECT_TRUE(gate.drops(from(2, protocol::kLqhKeyConf)));
  EXPECT_EQ(gate.dropped(2), 4u);
  EXPECT_EQ(gate.dropped_total(), 4u);
  // Ids beyond any data node (an API node's) are never dropped.
  EXPECT_FALSE(gate.drops(from(kNodeSetIdMax + 1, protocol::kLqhKeyConf)));
}

}  // namespace
}  // namespace duo::membership
