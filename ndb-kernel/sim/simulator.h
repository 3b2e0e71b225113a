// Simulator: a deterministic runtime that runs every node of a cluster in one thread on
// virtual time, with a simulated network between the nodes (DESIGN.md §3,
// "Determinism"; FoundationDB's sim2 and TigerBeetle's VOPR are the models).
//
// Pieces:
//   - Nodes. A node is the set of blocks a BlockFactory builds. add_node() builds and
//     attaches them at once and runs their on_start() as the node's first event at the
//     current virtual time, so nodes added together at one instant all exist before any
//     of them sends its first signal (like a cluster started with one command).
//     crash_node() destroys them (all in-memory state is gone, as in a real crash);
//     restart_node() calls the factory again for fresh blocks. The test harness keeps
//     whatever pointers it needs by capturing them in its factory.
//   - Virtual time. One ManualClock. Nothing happens between events, so time jumps
//     straight to the next event. Log lines carry virtual time (the simulator installs
//     its clock as the log clock while it lives).
//   - The event queue, ordered by (virtual time, sequence number). The sequence number
//     is a counter of scheduled events, so events at the same instant run in the order
//     they were scheduled, never in an order that depends on memory addresses.
//   - The network. Every directed link (from node, to node) delivers in FIFO order after
//     a latency plus a seeded uniform jitter in [0, jitter]: a signal's delivery time is
//     max(now + latency + jitter, the link's previous delivery time), so jitter reorders
//     nothing on a link but does reorder across links. Links can be cut (one way or both
//     ways), a set of groups can be partitioned from each other, and everything heals.
//     A cut loses the signals in flight on the link and everything sent while it is cut
//     (like a dropped TCP connection: its buffers die with it). A crashed node loses the
//     signals in flight to it and from it.
//   - Randomness. One seed. The simulator derives a stream for the network jitter and
//     one per block (in the order blocks are created), so the same seed and the same
//     harness replay the run bit for bit, and trace_hash() (64-bit FNV-1a over the time,
//     addresses, signal id, words and section of every delivered signal) proves it.
//
// A node's RemoteSignalFilter (installed by one of its blocks, runtime/
// remote_signal_filter.h) sees every signal from another node right before it would be
// handed to its block — after a paused node's held signals are released, as a resumed
// process reads its sockets — and may drop it (stats().dropped_by_filter). It goes with
// the node's blocks at a crash.
//
// Signals within one node use `local_latency_ns` (default 0) and the same FIFO rule on
// the (node, node) link; they are lost only when the node crashes. Delayed signals are
// delivered exactly at now + delay (virtual time has no scheduling noise), in the order
// they were armed when their times tie.
//
// Thread-safety: none. A Simulator and all its blocks live on one thread; that is the
// point. Only one Simulator should exist at a time if virtual_log_time is on (the log
// clock is process-wide; it is restored when the simulator is destroyed).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "ndb-kernel/common/clock.h"
#include "ndb-kernel/common/random.h"
#include "ndb-kernel/common/status.h"
#include "ndb-kernel/runtime/block.h"
#include "ndb-kernel/runtime/signal.h"

namespace duo::sim {

using kernel::Block;
using kernel::BlockAddress;
using kernel::Signal;
using NodeId = uint16_t;

// Builds the blocks of one node, for its first start and for every restart.
using BlockFactory = std::function<std::vector<std::unique_ptr<Block>>(NodeId node_id)>;

struct SimulatorOptions {
  uint64_t seed = 1;
  // Default one-way latency and jitter of every link between two different nodes.
  uint64_t link_latency_ns = 1 * kNanosPerMilli;
  uint64_t link_jitter_ns = 0;
  // Latency of signals between blocks of one node (no jitter).
  uint64_t local_latency_ns = 0;
  // Pending events the queue may hold; a send beyond it is kTemporary (bounded
  // everything — a runaway block fails its test instead of eating the machine).
  size_t events_max = 1 << 20;
  // Events one run_until/run_for may process: stops a block that re-sends to itself at
  // zero delay from spinning forever without virtual time moving.
  uint64_t events_per_run_max = 100'000'000;
  // Install the virtual clock as the log clock while the simulator lives.
  bool virtual_log_time = true;
};

struct SimulatorStats {
  uint64_t delivered = 0;
  uint64_t dropped_link_cut = 0;       // sent on, or in flight on, a cut link
  uint64_t dropped_node_down = 0;      // to a crashed node, or from/to a node that crashed
  uint64_t dropped_unknown_block = 0;  // arrived at a node with no such block
  uint64_t dropped_by_filter = 0;      // dropped by the receiving node's RemoteSignalFilter
  uint64_t refused_queue_full = 0;     // send answered kTemporary (events_max)
  uint64_t actions_run = 0;            // harness actions executed
};

class Simulator {
 public:
  explicit Simulator(SimulatorOptions options);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // ---- Nodes ----

  // Adds node `node_id` (> 0): builds its blocks with `factory` and attaches them now;
  // their on_start() runs, in factory order, as an event at the current virtual time.
  // kInvalidArgument for a duplicate node id, a null block, or two blocks with one
  // (block, instance).
  Status add_node(NodeId node_id, BlockFactory factory);
  // Destroys the node's blocks; signals in flight to or from it are lost.
  // kNotFound for an unknown node, kInvalidArgument if it is already down.
  Status crash_node(NodeId node_id);
  // Builds fresh blocks for a crashed node and starts them (as add_node does).
  // kInvalidArgument if it is up.
  Status restart_node(NodeId node_id);
  // Freezes a running node (SIGSTOP): its blocks run nothing; signals reaching it,
  // timers included, wait (links stay up, so peers notice only missing answers) until
  // resume_node() delivers them all at once (SIGCONT). kInvalidArgument unless running
  // / paused.
  Status pause_node(NodeId node_id);
  Status resume_node(NodeId node_id);
  bool node_up(NodeId node_id) const;
  // Bumped by every crash; 0 for a node's first life.
  uint32_t node_incarnation(NodeId node_id) const;
  // The live block at `address`, or nullptr (node down, no such block).
  Block* find_block(const BlockAddress& address) const;

  // ---- Network ----

  // Latency and jitter of the directed link from -> to (overrides the defaults).
  void set_link_latency(NodeId from, NodeId to, uint64_t latency_ns, uint64_t jitter_ns);
  // Cuts both directions between a and b / only from -> to.
  void cut_link(NodeId a, NodeId b);
  void cut_link_one_way(NodeId from, NodeId to);
  // Heals both directions between a and b.
  void heal_link(NodeId a, NodeId b);
  // Cuts every link between nodes of different groups (both ways). Nodes in no group
  // keep their links.
  void partition(const std::vector<std::vector<NodeId>>& groups);
  // Heals every cut link.
  void heal_all();
  bool link_cut(NodeId from, NodeId to) const;

  // ---- Driving the run ----

  // Delivers `signal` to its receiver at the current virtual time, as if sent by its
  // sender() from inside the receiver's node (no network). The harness's way to poke
  // a block. kInvalidArgument if unsendable or the receiver does not exist.
  Status inject(Signal signal);
  // Runs `action` at now + delay_ns in event order (crash a node at t, heal at t'...).
  void schedule_action(uint64_t delay_ns, std::function<void()> action);
  // Processes the next event (advancing virtual time to it). False if none is pending.
  bool step();
  // Processes events until `predicate` holds (checked before the first event and after
  // each one) or virtual time would pass now + time_limit_ns. Returns whether the
  // predicate held. If it did not, the clock is left at the time limit.
  bool run_until(const std::function<bool()>& predicate, uint64_t time_limit_ns);
  // Processes every event due within the next `duration_ns`, then sets the clock to
  // now + duration_ns.
  void run_for(uint64_t duration_ns);

  // ---- Observing ----

  const ManualClock& clock() const { return clock_; }
  uint64_t now_ns() const { return clock_.now_ns(); }
  uint64_t seed() const { return options_.seed; }
  // FNV-1a 64 over every delivered signal so far; equal for equal runs.
  uint64_t trace_hash() const { return trace_hash_; }
  const SimulatorStats& stats() const { return stats_; }
  size_t pending_events() const { return events_.size(); }
  // Called for each signal just before its handler runs (time in ns, the signal).
  void set_delivery_observer(std::function<void(uint64_t, const Signal&)> observer) {
    delivery_observer_ = std::move(observer);
  }

 private:
  class Context;
  struct Node;
  struct Link {
    bool cut = false;
    uint64_t epoch = 0;  // bumped by each cut: signals sent in an older epoch are lost
    uint64_t last_delivery_ns = 0;
    bool latency_overridden = false;
    uint64_t latency_ns = 0;
    uint64_t jitter_ns = 0;
  };
  struct Event {
    enum class Kind : uint8_t { kSignal, kAction, kNodeStart };
    uint64_t time_ns = 0;
    uint64_t sequence = 0;
    Kind kind = Kind::kSignal;
    Signal signal;                 // kSignal
    std::function<void()> action;  // kAction
    NodeId node_id = 0;            // kNodeStart: the node, with receiver_incarnation
    bool from_harness = false;     // kSignal injected by the harness (no sender node)
    uint32_t sender_incarnation = 0;
    uint32_t receiver_incarnation = 0;
    uint64_t link_epoch = 0;
  };
  struct FiresLater {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time_ns != b.time_ns) return a.time_ns > b.time_ns;
      return a.sequence > b.sequence;
    }
  };

  // The send path of every block of node `from` (`delayed`: send_delayed by delay_ns).
  Status send_from_block(NodeId from, Signal signal, bool delayed, uint64_t delay_ns);
  // Builds and attaches the node's blocks and schedules their on_start().
  Status build_node(Node& node);
  void run_node_start(const Event& event);
  Link& link(NodeId from, NodeId to);
  void push_event(Event event);
  void deliver(Event& event);
  void hash_delivery(uint64_t time_ns, const Signal& signal);

  // Constant after construction.
  const SimulatorOptions options_;

  ManualClock clock_;
  const Clock* previous_log_clock_ = nullptr;
  SeededRandom network_random_;
  SeededRandom block_seed_source_;

  std::map<NodeId, std::unique_ptr<Node>> nodes_;  // ordered: iteration is deterministic
  std::map<std::pair<NodeId, NodeId>, Link> links_;
  std::vector<Event> events_;  // a min-heap under FiresLater
  uint64_t next_sequence_ = 0;
  uint64_t trace_hash_ = 14695981039346656037ull;  // FNV-1a 64 offset basis
  SimulatorStats stats_;
  std::function<void(uint64_t, const Signal&)> delivery_observer_;
  NodeId delivering_to_ = 0;  // node whose handler is running; 0 between deliveries
};

}  // namespace duo::sim
