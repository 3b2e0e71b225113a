// Simulator: virtual time, the simulated network (latency, jitter, per-link FIFO, cuts,
// partitions), crashes and restarts, and bit-for-bit determinism under a seed. The
// blocks are the shared test blocks that also run on real threads in
// runtime/thread_runtime_test.cc. Everything here runs on virtual time, so every test
// takes milliseconds of real time however many virtual seconds it simulates.
#include "ndb-kernel/sim/simulator.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/runtime/testing/test_blocks.h"

namespace duo::sim {
namespace {

using namespace kernel::test_blocks;  // NOLINT(build/namespaces): the shared test blocks

constexpr uint64_t kMs = kNanosPerMilli;
constexpr uint64_t kSecond = kNanosPerSecond;

SimulatorOptions network(uint64_t seed, uint64_t latency_ns, uint64_t jitter_ns) {
  register_test_signal_names();
  SimulatorOptions options;
  options.seed = seed;
  options.link_latency_ns = latency_ns;
  options.link_jitter_ns = jitter_ns;
  return options;
}

// A factory for a node with one block of type T, built by `make`; `*out` always points
// at the node's current incarnation of the block.
template <typename T, typename Make>
BlockFactory one_block(T** out, Make make) {
  return [out, make](NodeId node_id) {
    std::unique_ptr<T> block = make(node_id);
    *out = block.get();
    std::vector<std::unique_ptr<Block>> blocks;
    blocks.push_back(std::move(block));
    return blocks;
  };
}

// ---- Ping-pong ----

TEST(Simulator, PingPongTakesTwoLatenciesPerRound) {
  Simulator sim(network(1, 1 * kMs, 0));
  PongBlock* pong = nullptr;
  PingBlock* ping = nullptr;
  ASSERT_TRUE(
      sim.add_node(2, one_block(&pong, [](NodeId) { return std::make_unique<PongBlock>(); })).ok());
  ASSERT_TRUE(
      sim.add_node(
             1, one_block(
                    &ping,
                    [](NodeId) {
                      return std::make_unique<PingBlock>(BlockAddress{2, kPongBlockNumber, 0}, 100);
                    }))
          .ok());
  ASSERT_TRUE(sim.run_until([&] { return ping->done(); }, 10 * kSecond));
  EXPECT_EQ(sim.now_ns(), 200 * kMs);  // 100 rounds of 1 ms there and 1 ms back
  EXPECT_EQ(ping->errors(), 0u);
  EXPECT_EQ(pong->pings(), 100u);
  EXPECT_EQ(sim.stats().delivered, 200u);
  EXPECT_EQ(sim.pending_events(), 0u);
}

TEST(Simulator, LinkLatencyOverrideIsPerDirection) {
  Simulator sim(network(1, 1 * kMs, 0));
  sim.set_link_latency(1, 2, 50 * kMs, 0);
  PongBlock* pong = nullptr;
  PingBlock* ping = nullptr;
  ASSERT_TRUE(
      sim.add_node(2, one_block(&pong, [](NodeId) { return std::make_unique<PongBlock>(); })).ok());
  ASSERT_TRUE(
      sim.add_node(
             1, one_block(
                    &ping,
                    [](NodeId) {
                      return std::make_unique<PingBlock>(BlockAddress{2, kPongBlockNumber, 0}, 1);
                    }))
          .ok());
  ASSERT_TRUE(sim.run_until([&] { return ping->done(); }, 10 * kSecond));
  EXPECT_EQ(sim.now_ns(), 51 * kMs);
}

TEST(Simulator, PingPongUnderJitterOverManySeeds) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE(seed);
    Simulator sim(network(seed, 1 * kMs, 3 * kMs));
    PongBlock* pong = nullptr;
    PingBlock* ping = nullptr;
    ASSERT_TRUE(
        sim.add_node(2, one_block(&pong, [](NodeId) { return std::make_unique<PongBlock>(); }))
            .ok());
    ASSERT_TRUE(
        sim.add_node(
               1,
               one_block(
                   &ping,
                   [](NodeId) {
                     return std::make_unique<PingBlock>(BlockAddress{2, kPongBlockNumber, 0}, 50);
                   }))
            .ok());
    ASSERT_TRUE(sim.run_until([&] { return ping->done(); }, 10 * kSecond));
    EXPECT_EQ(ping->errors(), 0u);
    // Each of the 100 trips takes 1..4 ms.
    EXPECT_GE(sim.now_ns(), 100 * kMs);
    EXPECT_LE(sim.now_ns(), 400 * kMs);
  }
}

// ---- A ring of blocks over several nodes ----

struct RingResult {
  bool done = false;
  uint64_t trace_hash = 0;
  uint64_t end_ns = 0;
  uint64_t delivered = 0;
  uint32_t fifo_violations = 0;
  uint32_t corrupt_sections = 0;
  uint32_t send_errors = 0;
};

// `ring_size` ring members spread round-robin over `nodes` nodes (so some hops are
// local and most cross the network), `tokens` tokens, each retiring after `laps` laps.
RingResult run_ring(uint64_t seed, uint64_t jitter_ns, uint16_t nodes = 4, uint16_t ring_size = 8,
                    uint32_t tokens = 3, uint32_t laps = 20) {
  Simulator sim(network(seed, 1 * kMs, jitter_ns));
  std::vector<BlockAddress> ring;
  for (uint16_t i = 0; i < ring_size; ++i) {
    ring.push_back({static_cast<uint16_t>(1 + i % nodes), kRingBlockNumber, i});
  }
  std::vector<RingBlock*> members(ring_size, nullptr);
  for (uint16_t node = 1; node <= nodes; ++node) {
    Status added = sim.add_node(node, [&, node](NodeId) {
      std::vector<std::unique_ptr<Block>> blocks;
      for (uint16_t i = 0; i < ring_size; ++i) {
        if (ring[i].node_id != node) continue;
        auto member = std::make_unique<RingBlock>(ring, i, tokens, laps);
        members[i] = member.get();
        blocks.push_back(std::move(member));
      }
      return blocks;
    });
    EXPECT_TRUE(added.ok()) << added.to_string();
  }
  RingResult result;
  auto retired = [&] {
    uint32_t sum = 0;
    for (RingBlock* m : members) sum += m->tokens_retired();
    return sum;
  };
  result.done = sim.run_until([&] { return retired() == tokens; }, 60 * kSecond);
  result.trace_hash = sim.trace_hash();
  result.end_ns = sim.now_ns();
  result.delivered = sim.stats().delivered;
  for (RingBlock* m : members) {
    result.fifo_violations += m->fifo_violations();
    result.corrupt_sections += m->corrupt_sections();
    result.send_errors += m->send_errors();
  }
  return result;
}

TEST(Simulator, RingOverManySeedsKeepsFifoAndFinishes) {
  std::set<uint64_t> hashes;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE(seed);
    const RingResult r = run_ring(seed, 2 * kMs);
    ASSERT_TRUE(r.done);
    EXPECT_EQ(r.fifo_violations, 0u);
    EXPECT_EQ(r.corrupt_sections, 0u);
    EXPECT_EQ(r.send_errors, 0u);
    EXPECT_EQ(r.delivered, 3u * 20u * 8u);
    hashes.insert(r.trace_hash);
  }
  // Jitter makes every seed a different interleaving.
  EXPECT_EQ(hashes.size(), 100u);
}

TEST(Simulator, SameSeedReplaysBitForBit) {
  for (uint64_t seed : {1ull, 2ull, 77ull, 123456789ull, 0xdeadbeefull}) {
    SCOPED_TRACE(seed);
    const RingResult a = run_ring(seed, 3 * kMs, 5, 11, 4, 15);
    const RingResult b = run_ring(seed, 3 * kMs, 5, 11, 4, 15);
    ASSERT_TRUE(a.done);
    EXPECT_EQ(a.trace_hash, b.trace_hash);
    EXPECT_EQ(a.end_ns, b.end_ns);
    EXPECT_EQ(a.delivered, b.delivered);
    const RingResult other = run_ring(seed + 1, 3 * kMs, 5, 11, 4, 15);
    EXPECT_NE(a.trace_hash, other.trace_hash);
  }
}

TEST(Simulator, WithoutJitterTheSeedDoesNotChangeTheRun) {
  const RingResult first = run_ring(1, 0);
  ASSERT_TRUE(first.done);
  // Neighbours are always on different nodes, so each of a token's 160 hops takes 1 ms.
  EXPECT_EQ(first.end_ns, 160 * kMs);
  for (uint64_t seed = 2; seed <= 5; ++seed) {
    const RingResult r = run_ring(seed, 0);
    EXPECT_EQ(r.trace_hash, first.trace_hash) << seed;
  }
}

// ---- Per-link FIFO with many signals in flight ----

TEST(Simulator, HeavyJitterReordersAcrossLinksButNeverWithinOne) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    Simulator sim(network(seed, 1 * kMs, 10 * kMs));
    SequenceChecker* checker = nullptr;
    ASSERT_TRUE(
        sim.add_node(
               5, one_block(&checker, [](NodeId) { return std::make_unique<SequenceChecker>(); }))
            .ok());
    struct Arrival {
      NodeId from;
      uint64_t sent_ns;
    };
    std::vector<Arrival> arrivals;
    sim.set_delivery_observer([&](uint64_t, const Signal& signal) {
      if (signal.id() != kData) return;
      arrivals.push_back(
          {signal.sender().node_id, signal.word(1) | (uint64_t{signal.word(2)} << 32)});
    });
    std::vector<BurstSender*> senders(5, nullptr);
    for (NodeId node = 1; node <= 4; ++node) {
      ASSERT_TRUE(
          sim.add_node(node, one_block(&senders[node],
                                       [](NodeId) {
                                         return std::make_unique<BurstSender>(
                                             BlockAddress{5, kSequenceCheckerBlockNumber, 0}, 200,
                                             10, 1);
                                       }))
              .ok());
    }
    ASSERT_TRUE(sim.run_until([&] { return checker->received() == 800; }, 10 * kSecond));
    EXPECT_EQ(checker->order_violations(), 0u);
    EXPECT_EQ(checker->gaps(), 0u);
    for (NodeId node = 1; node <= 4; ++node) {
      EXPECT_EQ(checker->received_from({node, kBurstSenderBlockNumber, 0}), 200u);
      EXPECT_EQ(senders[node]->errors(), 0u);
    }
    // Arrival order vs send order: never inverted on one link, often across links.
    uint64_t cross_link_inversions = 0;
    std::map<NodeId, uint64_t> last_sent_on_link;
    for (size_t i = 0; i < arrivals.size(); ++i) {
      EXPECT_GE(arrivals[i].sent_ns, last_sent_on_link[arrivals[i].from]);
      last_sent_on_link[arrivals[i].from] = arrivals[i].sent_ns;
      if (i > 0 && arrivals[i].from != arrivals[i - 1].from &&
          arrivals[i].sent_ns < arrivals[i - 1].sent_ns) {
        ++cross_link_inversions;
      }
    }
    EXPECT_GT(cross_link_inversions, 0u);
  }
}

// ---- Timers ----

TEST(Simulator, DelayedSignalsFireAtExactVirtualTimesInOrder) {
  Simulator sim(network(1, 1 * kMs, 0));
  sim.run_for(7 * kMs);  // arm the timers at a time that is not 0
  TimerBlock* timers = nullptr;
  ASSERT_TRUE(
      sim.add_node(1, one_block(&timers,
                                [](NodeId) {
                                  return std::make_unique<TimerBlock>(
                                      std::vector<std::pair<uint32_t, uint64_t>>{
                                          {1, 30}, {2, 10}, {3, 20}, {4, 10}, {5, 0}, {6, 1000}});
                                }))
          .ok());
  sim.run_for(100 * kMs);
  EXPECT_EQ(sim.now_ns(), 107 * kMs);
  ASSERT_EQ(timers->errors(), 0u);
  const auto& fired = timers->fired();
  ASSERT_EQ(fired.size(), 5u);  // the 1000 ms timer is still pending
  const std::vector<uint32_t> expected_order{5, 2, 4, 3, 1};
  const std::vector<uint64_t> expected_delay_ms{0, 10, 10, 20, 30};
  for (size_t i = 0; i < fired.size(); ++i) {
    EXPECT_EQ(fired[i].tag, expected_order[i]) << i;
    EXPECT_EQ(fired[i].armed_ns, 7 * kMs);
    EXPECT_EQ(fired[i].fired_ns - fired[i].armed_ns, expected_delay_ms[i] * kMs) << i;
  }
  EXPECT_EQ(sim.pending_events(), 1u);
  sim.run_for(2 * kSecond);
  ASSERT_EQ(timers->fired().size(), 6u);
  EXPECT_EQ(timers->fired()[5].fired_ns, 1007 * kMs);
}

// ---- Cuts, partitions, crashes ----

// Three or more nodes each running a BeaconBlock that beats to all others every 10 ms.
class BeaconCluster {
 public:
  BeaconCluster(uint16_t nodes, uint64_t latency_ns, uint64_t seed = 1)
      : sim(network(seed, latency_ns, 0)) {
    std::vector<uint16_t> all;
    for (uint16_t n = 1; n <= nodes; ++n) all.push_back(n);
    for (uint16_t n = 1; n <= nodes; ++n) {
      Status added = sim.add_node(n, [this, n, all](NodeId) {
        ++factory_calls[n];
        auto beacon = std::make_unique<BeaconBlock>(all, 10);
        beacons[n] = beacon.get();
        std::vector<std::unique_ptr<Block>> blocks;
        blocks.push_back(std::move(beacon));
        return blocks;
      });
      EXPECT_TRUE(added.ok());
    }
  }
  uint64_t beats(NodeId at, NodeId from) { return beacons[at]->beats_from(from); }

  Simulator sim;
  std::map<NodeId, BeaconBlock*> beacons;
  std::map<NodeId, int> factory_calls;
};

TEST(Simulator, CutLinkDropsBothWaysAndHealingRestoresDelivery) {
  BeaconCluster c(3, 1 * kMs);
  c.sim.run_for(100 * kMs);
  EXPECT_EQ(c.beats(2, 1), 9u);  // beats leave at 10..100 ms; the 100 ms one is in flight
  c.sim.cut_link(1, 2);
  EXPECT_TRUE(c.sim.link_cut(1, 2));
  EXPECT_TRUE(c.sim.link_cut(2, 1));
  const uint64_t b21 = c.beats(2, 1), b12 = c.beats(1, 2), b31 = c.beats(3, 1), b13 = c.beats(1, 3);
  c.sim.run_for(100 * kMs);
  EXPECT_EQ(c.beats(2, 1), b21);
  EXPECT_EQ(c.beats(1, 2), b12);
  EXPECT_EQ(c.beats(3, 1), b31 + 10);  // other links unaffected
  EXPECT_EQ(c.beats(1, 3), b13 + 10);
  // The beats sent at 100 ms were in flight at the cut; then 10 per direction while cut.
  EXPECT_EQ(c.sim.stats().dropped_link_cut, 2u + 20u);

  c.sim.heal_link(1, 2);
  EXPECT_FALSE(c.sim.link_cut(1, 2));
  c.sim.run_for(100 * kMs);
  // The 200 ms beats were sent while cut; those of 210..290 ms have arrived.
  EXPECT_EQ(c.beats(2, 1), b21 + 9);
  EXPECT_EQ(c.beats(1, 2), b12 + 9);
}

TEST(Simulator, SignalsInFlightAreLostWhenTheLinkIsCut) {
  Simulator sim(network(1, 10 * kMs, 0));
  SequenceChecker* checker = nullptr;
  BurstSender* sender = nullptr;
  ASSERT_TRUE(sim.add_node(2, one_block(&checker,
                                        [](NodeId) { return std::make_unique<SequenceChecker>(); }))
                  .ok());
  // seq 0 leaves at 0 ms (due at 10 ms), seq 1 at 20 ms (due at 30 ms).
  ASSERT_TRUE(sim.add_node(1, one_block(&sender,
                                        [](NodeId) {
                                          return std::make_unique<BurstSender>(
                                              BlockAddress{2, kSequenceCheckerBlockNumber, 0}, 2, 1,
                                              20);
                                        }))
                  .ok());
  sim.schedule_action(5 * kMs, [&] { sim.cut_link(1, 2); });
  sim.schedule_action(6 * kMs, [&] { sim.heal_link(1, 2); });
  sim.run_for(50 * kMs);
  EXPECT_EQ(sender->sent(), 2u);
  EXPECT_EQ(checker->received(), 1u);  // seq 0 died with the cut, although healed since
  EXPECT_EQ(checker->gaps(), 1u);
  EXPECT_EQ(checker->order_violations(), 0u);
  EXPECT_EQ(sim.stats().dropped_link_cut, 1u);
  EXPECT_EQ(sim.stats().actions_run, 2u);
}

TEST(Simulator, OneWayCutStopsOnlyOneDirection) {
  BeaconCluster c(2, 1 * kMs);
  c.sim.cut_link_one_way(1, 2);
  c.sim.run_for(100 * kMs);
  EXPECT_EQ(c.beats(2, 1), 0u);
  EXPECT_EQ(c.beats(1, 2), 9u);
  c.sim.heal_all();
  c.sim.run_for(100 * kMs);
  EXPECT_EQ(c.beats(2, 1), 9u);
}

TEST(Simulator, PartitionIsolatesGroupsUntilHealed) {
  BeaconCluster c(4, 1 * kMs);
  c.sim.partition({{1, 2}, {3, 4}});
  EXPECT_TRUE(c.sim.link_cut(1, 3));
  EXPECT_TRUE(c.sim.link_cut(4, 2));
  EXPECT_FALSE(c.sim.link_cut(1, 2));
  EXPECT_FALSE(c.sim.link_cut(3, 4));
  c.sim.run_for(100 * kMs);
  EXPECT_EQ(c.beats(2, 1), 9u);
  EXPECT_EQ(c.beats(4, 3), 9u);
  for (NodeId a : {1, 2}) {
    for (NodeId b : {3, 4}) {
      EXPECT_EQ(c.beats(a, b), 0u);
      EXPECT_EQ(c.beats(b, a), 0u);
    }
  }
  c.sim.heal_all();
  EXPECT_FALSE(c.sim.link_cut(1, 3));
  c.sim.run_for(100 * kMs);
  for (NodeId a : {1, 2}) {
    for (NodeId b : {3, 4}) {
      EXPECT_EQ(c.beats(a, b), 9u);
      EXPECT_EQ(c.beats(b, a), 9u);
    }
  }
}

TEST(Simulator, CrashLosesStateAndSignalsRestartBuildsFreshBlocks) {
  BeaconCluster c(3, 5 * kMs);
  c.sim.schedule_action(52 * kMs, [&] { ASSERT_TRUE(c.sim.crash_node(3).ok()); });
  c.sim.schedule_action(100 * kMs, [&] { ASSERT_TRUE(c.sim.restart_node(3).ok()); });
  c.sim.run_for(80 * kMs);
  EXPECT_FALSE(c.sim.node_up(3));
  EXPECT_EQ(c.sim.find_block({3, kBeaconBlockNumber, 0}), nullptr);
  EXPECT_NE(c.sim.find_block({1, kBeaconBlockNumber, 0}), nullptr);
  EXPECT_EQ(c.sim.node_incarnation(3), 1u);
  // Node 3 beat at 10..50 ms; the beat of 50 ms (due at 55) was in flight at the crash.
  EXPECT_EQ(c.beats(1, 3), 4u);
  EXPECT_EQ(c.beats(2, 3), 4u);

  EXPECT_TRUE(c.sim.crash_node(3).is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(c.sim.crash_node(9).is(ErrorCode::kNotFound));
  EXPECT_TRUE(c.sim.restart_node(1).is(ErrorCode::kInvalidArgument));

  c.sim.run_for(120 * kMs);  // to 200 ms; node 3 restarted at 100 ms
  EXPECT_TRUE(c.sim.node_up(3));
  EXPECT_EQ(c.factory_calls[3], 2);
  // The fresh block knows nothing of its previous life: beats sent 100..190 ms.
  EXPECT_EQ(c.beats(3, 1), 10u);
  // Node 3's new beacon beats from 110 ms: 110..190 have arrived.
  EXPECT_EQ(c.beats(1, 3), 4u + 9u);
  // Lost to the crash: beats from 3 in flight (2), beats to 3 in flight (2), node 3's own
  // pending timer (1), and beats sent to 3 while down at 60..90 ms (2 nodes x 4).
  EXPECT_EQ(c.sim.stats().dropped_node_down, 13u);
}

TEST(Simulator, PausedNodeHoldsWhatArrivesAndTakesItInOnResume) {
  BeaconCluster c(3, 1 * kMs);
  c.sim.run_for(55 * kMs);  // beats left at 10..50 ms and have arrived
  EXPECT_EQ(c.beats(3, 1), 5u);
  ASSERT_TRUE(c.sim.pause_node(3).ok());
  EXPECT_TRUE(c.sim.pause_node(3).is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(c.sim.resume_node(2).is(ErrorCode::kInvalidArgument));
  c.sim.run_for(100 * kMs);  // to 155 ms
  // Frozen: node 3 takes nothing in and sends nothing (its own beat timer waits too).
  EXPECT_EQ(c.beats(3, 1), 5u);
  EXPECT_EQ(c.beats(1, 3), 5u);
  EXPECT_TRUE(c.sim.node_up(3));
  ASSERT_TRUE(c.sim.resume_node(3).ok());
  c.sim.run_for(2 * kMs);
  // Everything sent to it meanwhile (beats of 60..150 ms) arrives at once, none lost.
  EXPECT_EQ(c.beats(3, 1), 15u);
  EXPECT_EQ(c.beats(3, 2), 15u);
  EXPECT_EQ(c.sim.stats().dropped_node_down, 0u);
  EXPECT_EQ(c.sim.stats().dropped_link_cut, 0u);
  // Its own timer fired on resume: it beats again.
  EXPECT_GE(c.beats(1, 3), 6u);
  // A crash of a paused node drops what it held.
  ASSERT_TRUE(c.sim.pause_node(3).ok());
  c.sim.run_for(30 * kMs);
  ASSERT_TRUE(c.sim.crash_node(3).ok());
  EXPECT_TRUE(c.sim.resume_node(3).is(ErrorCode::kInvalidArgument));
}

// ---- Errors ----

TEST(Simulator, UnknownSignalsAndBlocksAreLoggedNotFatal) {
  ScopedLogCapture capture(LogLevel::kError);
  Simulator sim(network(1, 1 * kMs, 0));
  PongBlock* pong = nullptr;
  ProbeBlock* probe = nullptr;
  ASSERT_TRUE(
      sim.add_node(2, one_block(&pong, [](NodeId) { return std::make_unique<PongBlock>(); })).ok());
  ASSERT_TRUE(
      sim.add_node(1, one_block(&probe, [](NodeId) { return std::make_unique<ProbeBlock>(); }))
          .ok());
  Signal stray(kUnknownToEveryone, {1});
  stray.set_sender(probe->address());
  stray.set_receiver(pong->address());
  ASSERT_TRUE(sim.inject(std::move(stray)).ok());
  // A remote block that does not exist is only found out on arrival.
  ASSERT_TRUE(probe->probe_send({2, 77, 0}, Signal(kData)).ok());
  sim.run_for(10 * kMs);
  EXPECT_EQ(pong->unknown_signal_count(), 1u);
  EXPECT_EQ(sim.stats().dropped_unknown_block, 1u);
  EXPECT_TRUE(capture.sink().contains("no handler for signal GSN199"));
  EXPECT_TRUE(capture.sink().contains("node 2 has no block for DATA"));
}

TEST(Simulator, SendErrorsAreStatuses) {
  SimulatorOptions options = network(1, 1 * kMs, 0);
  options.events_max = 8;
  Simulator sim(options);
  ProbeBlock* probe = nullptr;
  ProbeBlock* remote = nullptr;
  ASSERT_TRUE(
      sim.add_node(1, one_block(&probe, [](NodeId) { return std::make_unique<ProbeBlock>(); }))
          .ok());
  ASSERT_TRUE(
      sim.add_node(2, one_block(&remote, [](NodeId) { return std::make_unique<ProbeBlock>(); }))
          .ok());
  sim.run_for(0);  // run the nodes' start events, so the queue is empty
  const BlockAddress self = probe->address();
  Signal big(kData);
  big.set_section(std::vector<uint8_t>(kernel::kSectionBytesMax + 1));
  EXPECT_TRUE(probe->probe_send(self, std::move(big)).is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(probe->probe_send({1, 77, 0}, Signal(kData)).is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(probe->probe_send({9, 1, 0}, Signal(kData)).is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(probe->probe_send_delayed(remote->address(), Signal(kData), 1)
                  .is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(
      probe->probe_send_delayed({1, 77, 0}, Signal(kData), 1).is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(sim.inject(Signal(kData)).is(ErrorCode::kInvalidArgument));  // no receiver

  // The event budget: 8 pending events, then kTemporary.
  int accepted = 0;
  for (int i = 0; i < 12; ++i) {
    const Status status = probe->probe_send(remote->address(), Signal(kData));
    if (status.ok()) {
      ++accepted;
    } else {
      EXPECT_TRUE(status.is(ErrorCode::kTemporary));
    }
  }
  EXPECT_EQ(accepted, 8);
  EXPECT_EQ(sim.stats().refused_queue_full, 4u);
  sim.run_for(10 * kMs);
  EXPECT_EQ(remote->received(), 8u);
}

TEST(Simulator, AddNodeValidates) {
  Simulator sim(network(1, 1 * kMs, 0));
  EXPECT_TRUE(sim.add_node(0, [](NodeId) { return std::vector<std::unique_ptr<Block>>{}; })
                  .is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(sim.add_node(1, nullptr).is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(sim.add_node(1,
                           [](NodeId) {
                             std::vector<std::unique_ptr<Block>> blocks;
                             blocks.push_back(std::make_unique<ProbeBlock>());
                             blocks.push_back(std::make_unique<ProbeBlock>());  // same address
                             return blocks;
                           })
                  .is(ErrorCode::kInvalidArgument));
  EXPECT_FALSE(sim.node_up(1));
  ASSERT_TRUE(sim.add_node(1, [](NodeId) { return std::vector<std::unique_ptr<Block>>{}; }).ok());
  EXPECT_TRUE(sim.add_node(1, [](NodeId) { return std::vector<std::unique_ptr<Block>>{}; })
                  .is(ErrorCode::kInvalidArgument));
}

// ---- Running ----

TEST(Simulator, RunUntilHonoursTheTimeLimit) {
  BeaconCluster c(2, 1 * kMs);
  EXPECT_FALSE(c.sim.run_until([] { return false; }, 35 * kMs));
  EXPECT_EQ(c.sim.now_ns(), 35 * kMs);
  EXPECT_EQ(c.beats(2, 1), 3u);
  EXPECT_TRUE(c.sim.run_until([] { return true; }, 1 * kSecond));
  EXPECT_EQ(c.sim.now_ns(), 35 * kMs);  // a predicate that already holds costs no time
  EXPECT_TRUE(c.sim.run_until([&] { return c.beats(2, 1) == 5; }, 1 * kSecond));
  EXPECT_EQ(c.sim.now_ns(), 51 * kMs);  // the 5th beat, sent at 50 ms, arrives at 51

  Simulator empty(network(1, 1 * kMs, 0));
  EXPECT_FALSE(empty.run_until([] { return false; }, 3 * kSecond));
  EXPECT_EQ(empty.now_ns(), 3 * kSecond);
  EXPECT_FALSE(empty.step());
}

// Sends itself a signal at zero delay forever: virtual time never moves.
class SpinBlock final : public Block {
 public:
  SpinBlock() : Block("spin", 60) { on(kTick, &SpinBlock::on_tick); }
  void on_start() override { send(address(), Signal(kTick)).ignore_error(); }

 private:
  void on_tick(Signal&) { send(address(), Signal(kTick)).ignore_error(); }
};

TEST(Simulator, EventBudgetStopsALivelock) {
  ScopedLogCapture capture(LogLevel::kError);
  SimulatorOptions options = network(1, 1 * kMs, 0);
  options.events_per_run_max = 1000;
  Simulator sim(options);
  SpinBlock* spin = nullptr;
  ASSERT_TRUE(
      sim.add_node(1, one_block(&spin, [](NodeId) { return std::make_unique<SpinBlock>(); })).ok());
  EXPECT_FALSE(sim.run_until([] { return false; }, 1 * kSecond));
  EXPECT_EQ(sim.stats().delivered, 999u);  // the node's start was the first event
  EXPECT_EQ(sim.now_ns(), 0u);
  EXPECT_TRUE(capture.sink().contains("livelock"));
}

TEST(Simulator, SameInstantEventsRunInSchedulingOrder) {
  Simulator sim(network(1, 1 * kMs, 0));
  SequenceChecker* checker = nullptr;
  ASSERT_TRUE(sim.add_node(1, one_block(&checker,
                                        [](NodeId) { return std::make_unique<SequenceChecker>(); }))
                  .ok());
  std::vector<std::string> order;
  sim.set_delivery_observer([&](uint64_t, const Signal& signal) {
    order.push_back("signal" + std::to_string(signal.word(0)));
  });
  for (uint32_t i = 0; i < 3; ++i) {
    Signal data(kData, {i});
    data.set_sender({1, 99, 0});
    data.set_receiver(checker->address());
    ASSERT_TRUE(sim.inject(std::move(data)).ok());
    sim.schedule_action(0, [&order, i] { order.push_back("action" + std::to_string(i)); });
  }
  sim.run_for(0);
  EXPECT_EQ(order, (std::vector<std::string>{"signal0", "action0", "signal1", "action1", "signal2",
                                             "action2"}));
  EXPECT_EQ(checker->order_violations(), 0u);
}

TEST(Simulator, TraceHashCoversThePayload) {
  auto hash_of = [](uint32_t word, uint8_t section_byte) {
    Simulator sim(network(1, 1 * kMs, 0));
    SequenceChecker* checker = nullptr;
    EXPECT_TRUE(
        sim.add_node(
               1, one_block(&checker, [](NodeId) { return std::make_unique<SequenceChecker>(); }))
            .ok());
    Signal data(kData, {0, word});
    data.set_sender({1, 99, 0});
    data.set_receiver(checker->address());
    data.set_section({section_byte});
    EXPECT_TRUE(sim.inject(std::move(data)).ok());
    sim.run_for(1 * kMs);
    return sim.trace_hash();
  };
  EXPECT_EQ(hash_of(1, 1), hash_of(1, 1));
  EXPECT_NE(hash_of(1, 1), hash_of(2, 1));
  EXPECT_NE(hash_of(1, 1), hash_of(1, 2));
}

TEST(Simulator, LogLinesCarryVirtualTime) {
  ScopedLogCapture capture(LogLevel::kInfo);
  {
    Simulator sim(network(1, 1 * kMs, 0));
    sim.run_for(1500 * kMs);
    DUO_LOG(INFO, "test") << "virtual hello";
  }
  const auto lines = capture.sink().lines();
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("2020-01-01T00:00:01.500000Z INFO [test] virtual hello"),
            std::string::npos)
      << lines.back();
}

}  // namespace
}  // namespace duo::sim
