// Simulator: nodes, the event queue, the simulated network and the trace hash.
#include "ndb-kernel/sim/simulator.h"

#include <algorithm>
#include <string>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/runtime/kernel_check.h"
#include "ndb-kernel/runtime/runtime.h"

namespace duo::sim {
namespace {

constexpr const char* kLogComponent = "sim";
constexpr uint64_t kFnvPrime = 1099511628211ull;

uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

uint64_t ms_to_ns(uint64_t ms) {
  return ms > UINT64_MAX / kNanosPerMilli ? UINT64_MAX : ms * kNanosPerMilli;
}

}  // namespace

struct Simulator::Node {
  NodeId id = 0;
  BlockFactory factory;
  bool up = false;
  uint32_t incarnation = 0;
  // Frozen (SIGSTOP): what arrives meanwhile, its own timers included, waits here in
  // arrival order.
  bool paused = false;
  std::vector<Event> held;
  // Installed by one of the blocks; forgotten with them.
  kernel::RemoteSignalFilter* remote_filter = nullptr;
  // Blocks are declared after contexts so they are destroyed first.
  std::vector<std::unique_ptr<Context>> contexts;
  std::vector<std::unique_ptr<Block>> blocks;
  std::map<uint32_t, Block*> block_by_key;  // BlockAddress::local_key() -> block
};

// The BlockContext of one simulated block: sends go into the simulator's event queue.
class Simulator::Context final : public kernel::BlockContext {
 public:
  Context(Simulator& simulator, NodeId node_id, uint64_t seed)
      : simulator_(simulator), node_id_(node_id), random_(seed) {}

  Status send(Signal signal) override {
    return simulator_.send_from_block(node_id_, std::move(signal), false, 0);
  }
  Status send_delayed(Signal signal, uint64_t delay_ms) override {
    return simulator_.send_from_block(node_id_, std::move(signal), true, ms_to_ns(delay_ms));
  }
  const Clock& clock() const override { return simulator_.clock_; }
  Random& random() override { return random_; }
  uint16_t node_id() const override { return node_id_; }
  void set_remote_signal_filter(kernel::RemoteSignalFilter* filter) override {
    simulator_.nodes_.at(node_id_)->remote_filter = filter;
  }

 private:
  Simulator& simulator_;
  const NodeId node_id_;
  SeededRandom random_;
};

Simulator::Simulator(SimulatorOptions options)
    : options_(options), network_random_(0), block_seed_source_(0) {
  // Two independent streams from the one seed: network draws and block draws never
  // shift each other's sequences.
  SeededRandom root(options_.seed);
  network_random_ = root.fork();
  block_seed_source_ = root.fork();
  if (options_.virtual_log_time) previous_log_clock_ = set_log_clock(&clock_);
}

Simulator::~Simulator() {
  // Blocks may log while being destroyed, so they go while the log clock is still ours.
  nodes_.clear();
  events_.clear();
  if (options_.virtual_log_time) set_log_clock(previous_log_clock_);
}

// ---- Nodes ----

Status Simulator::add_node(NodeId node_id, BlockFactory factory) {
  if (node_id == 0) return Status(ErrorCode::kInvalidArgument, "node id 0 is reserved");
  if (nodes_.contains(node_id)) {
    return Status(ErrorCode::kInvalidArgument, "node " + std::to_string(node_id) + " exists");
  }
  if (!factory) return Status(ErrorCode::kInvalidArgument, "null block factory");
  auto node = std::make_unique<Node>();
  node->id = node_id;
  node->factory = std::move(factory);
  Node& added = *node;
  nodes_.emplace(node_id, std::move(node));
  Status started = build_node(added);
  if (!started.ok()) nodes_.erase(node_id);
  return started;
}

Status Simulator::build_node(Node& node) {
  std::vector<std::unique_ptr<Block>> blocks = node.factory(node.id);
  std::map<uint32_t, Block*> by_key;
  for (const auto& block : blocks) {
    if (block == nullptr) return Status(ErrorCode::kInvalidArgument, "factory returned null");
    if (!by_key.emplace(block->address().local_key(), block.get()).second) {
      return Status(ErrorCode::kInvalidArgument,
                    "node " + std::to_string(node.id) + ": block " +
                        std::to_string(block->address().block) + " instance " +
                        std::to_string(block->address().instance) + " built twice");
    }
  }
  for (const auto& block : blocks) {
    node.contexts.push_back(
        std::make_unique<Context>(*this, node.id, block_seed_source_.fork().next_u64()));
    block->attach(*node.contexts.back());
  }
  node.blocks = std::move(blocks);
  node.block_by_key = std::move(by_key);
  node.up = true;
  Event start;
  start.time_ns = now_ns();
  start.kind = Event::Kind::kNodeStart;
  start.node_id = node.id;
  start.receiver_incarnation = node.incarnation;
  push_event(std::move(start));
  return Status::OK();
}

void Simulator::run_node_start(const Event& event) {
  Node& node = *nodes_.at(event.node_id);
  // A node that crashed before its start event never runs the old blocks' on_start.
  if (!node.up || node.incarnation != event.receiver_incarnation) return;
  DUO_LOG(DEBUG, kLogComponent) << "node " << node.id << " started (incarnation "
                                << node.incarnation << ", " << node.blocks.size() << " blocks)";
  delivering_to_ = node.id;
  for (const auto& block : node.blocks) block->on_start();
  delivering_to_ = 0;
}

Status Simulator::crash_node(NodeId node_id) {
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) {
    return Status(ErrorCode::kNotFound, "no node " + std::to_string(node_id));
  }
  Node& node = *it->second;
  if (!node.up) {
    return Status(ErrorCode::kInvalidArgument, "node " + std::to_string(node_id) + " is down");
  }
  // A block cannot destroy itself from inside its own handler.
  DUO_KERNEL_CHECK(delivering_to_ != node_id, "crash_node of the node whose handler is running");
  node.up = false;
  node.paused = false;
  node.held.clear();
  node.remote_filter = nullptr;
  ++node.incarnation;
  node.block_by_key.clear();
  node.blocks.clear();
  node.contexts.clear();
  DUO_LOG(INFO, kLogComponent) << "node " << node_id << " crashed";
  return Status::OK();
}

Status Simulator::restart_node(NodeId node_id) {
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) {
    return Status(ErrorCode::kNotFound, "no node " + std::to_string(node_id));
  }
  Node& node = *it->second;
  if (node.up) {
    return Status(ErrorCode::kInvalidArgument, "node " + std::to_string(node_id) + " is up");
  }
  return build_node(node);
}

Status Simulator::pause_node(NodeId node_id) {
  auto it = nodes_.find(node_id);
  if (it == nodes_.end() || !it->second->up || it->second->paused) {
    return Status(ErrorCode::kInvalidArgument,
                  "node " + std::to_string(node_id) + " is not a running node");
  }
  it->second->paused = true;
  DUO_LOG(INFO, kLogComponent) << "node " << node_id << " paused";
  return Status::OK();
}

Status Simulator::resume_node(NodeId node_id) {
  auto it = nodes_.find(node_id);
  if (it == nodes_.end() || !it->second->paused) {
    return Status(ErrorCode::kInvalidArgument, "node " + std::to_string(node_id) + " is not paused");
  }
  Node& node = *it->second;
  node.paused = false;
  // Everything held arrives now, in the order it came.
  std::vector<Event> held = std::move(node.held);
  node.held.clear();
  for (Event& event : held) {
    event.time_ns = now_ns();
    push_event(std::move(event));
  }
  DUO_LOG(INFO, kLogComponent) << "node " << node_id << " resumed with " << held.size()
                               << " signals held";
  return Status::OK();
}

bool Simulator::node_up(NodeId node_id) const {
  auto it = nodes_.find(node_id);
  return it != nodes_.end() && it->second->up;
}

uint32_t Simulator::node_incarnation(NodeId node_id) const {
  auto it = nodes_.find(node_id);
  return it == nodes_.end() ? 0 : it->second->incarnation;
}

Block* Simulator::find_block(const BlockAddress& address) const {
  auto node = nodes_.find(address.node_id);
  if (node == nodes_.end() || !node->second->up) return nullptr;
  auto block = node->second->block_by_key.find(address.local_key());
  return block == node->second->block_by_key.end() ? nullptr : block->second;
}

// ---- Network ----

Simulator::Link& Simulator::link(NodeId from, NodeId to) {
  return links_[{from, to}];
}

void Simulator::set_link_latency(NodeId from, NodeId to, uint64_t latency_ns, uint64_t jitter_ns) {
  Link& l = link(from, to);
  l.latency_overridden = true;
  l.latency_ns = latency_ns;
  l.jitter_ns = jitter_ns;
}

void Simulator::cut_link_one_way(NodeId from, NodeId to) {
  if (from == to) return;  // a node is never cut off from itself
  Link& l = link(from, to);
  if (l.cut) return;
  l.cut = true;
  ++l.epoch;
}

void Simulator::cut_link(NodeId a, NodeId b) {
  cut_link_one_way(a, b);
  cut_link_one_way(b, a);
}

void Simulator::heal_link(NodeId a, NodeId b) {
  link(a, b).cut = false;
  link(b, a).cut = false;
}

void Simulator::partition(const std::vector<std::vector<NodeId>>& groups) {
  for (size_t i = 0; i < groups.size(); ++i) {
    for (size_t j = i + 1; j < groups.size(); ++j) {
      for (NodeId a : groups[i]) {
        for (NodeId b : groups[j]) cut_link(a, b);
      }
    }
  }
}

void Simulator::heal_all() {
  for (auto& [key, l] : links_) l.cut = false;
}

bool Simulator::link_cut(NodeId from, NodeId to) const {
  auto it = links_.find({from, to});
  return it != links_.end() && it->second.cut;
}

// ---- Sending ----

Status Simulator::send_from_block(NodeId from, Signal signal, bool delayed, uint64_t delay_ns) {
  DUO_RETURN_IF_ERROR(signal.check_sendable());
  if (events_.size() >= options_.events_max) {
    ++stats_.refused_queue_full;
    return Status(ErrorCode::kTemporary, "simulator event queue full");
  }
  const NodeId to = signal.receiver().node_id;
  auto receiver_it = nodes_.find(to);
  if (receiver_it == nodes_.end()) {
    return Status(ErrorCode::kInvalidArgument,
                  "no node " + std::to_string(to) + " for " + kernel::signal_name(signal.id()));
  }
  Node& receiver = *receiver_it->second;
  const Node& sender = *nodes_.at(from);

  Event event;
  event.sender_incarnation = sender.incarnation;
  event.receiver_incarnation = receiver.incarnation;
  if (to == from) {
    // Same node: the receiver must exist now, as in the real runtime.
    if (!receiver.block_by_key.contains(signal.receiver().local_key())) {
      return Status(ErrorCode::kInvalidArgument, "no block " + signal.receiver().to_string() +
                                                     " for " + kernel::signal_name(signal.id()));
    }
    if (delayed) {
      event.time_ns = saturating_add(now_ns(), delay_ns);
    } else {
      Link& l = link(from, to);
      event.time_ns =
          std::max(saturating_add(now_ns(), options_.local_latency_ns), l.last_delivery_ns);
      l.last_delivery_ns = event.time_ns;
    }
  } else {
    if (delayed) {
      return Status(ErrorCode::kInvalidArgument, "delayed signals must stay on their node");
    }
    // The network does not tell the sender about losses: both are OK here.
    if (!receiver.up) {
      ++stats_.dropped_node_down;
      return Status::OK();
    }
    Link& l = link(from, to);
    if (l.cut) {
      ++stats_.dropped_link_cut;
      return Status::OK();
    }
    const uint64_t latency_ns = l.latency_overridden ? l.latency_ns : options_.link_latency_ns;
    const uint64_t jitter_ns = l.latency_overridden ? l.jitter_ns : options_.link_jitter_ns;
    // Draw only when jitter is on, so runs without jitter do not depend on the seed.
    const uint64_t jitter_draw_ns =
        jitter_ns == 0 ? 0 : network_random_.uniform(saturating_add(jitter_ns, 1));
    const uint64_t arrival_ns =
        saturating_add(saturating_add(now_ns(), latency_ns), jitter_draw_ns);
    // FIFO per link: never before the previous signal on this link.
    event.time_ns = std::max(arrival_ns, l.last_delivery_ns);
    l.last_delivery_ns = event.time_ns;
    event.link_epoch = l.epoch;
  }
  event.signal = std::move(signal);
  push_event(std::move(event));
  return Status::OK();
}

Status Simulator::inject(Signal signal) {
  DUO_RETURN_IF_ERROR(signal.check_sendable());
  if (find_block(signal.receiver()) == nullptr) {
    return Status(ErrorCode::kInvalidArgument, "no live block " + signal.receiver().to_string());
  }
  Event event;
  event.time_ns = now_ns();
  event.from_harness = true;
  event.receiver_incarnation = node_incarnation(signal.receiver().node_id);
  event.signal = std::move(signal);
  push_event(std::move(event));
  return Status::OK();
}

void Simulator::schedule_action(uint64_t delay_ns, std::function<void()> action) {
  Event event;
  event.time_ns = saturating_add(now_ns(), delay_ns);
  event.kind = Event::Kind::kAction;
  event.action = std::move(action);
  push_event(std::move(event));
}

void Simulator::push_event(Event event) {
  event.sequence = next_sequence_++;
  events_.push_back(std::move(event));
  std::push_heap(events_.begin(), events_.end(), FiresLater{});
}

// ---- Running ----

bool Simulator::step() {
  if (events_.empty()) return false;
  std::pop_heap(events_.begin(), events_.end(), FiresLater{});
  Event event = std::move(events_.back());
  events_.pop_back();
  if (event.time_ns > now_ns()) clock_.set_now_ns(event.time_ns);
  switch (event.kind) {
    case Event::Kind::kSignal:
      deliver(event);
      break;
    case Event::Kind::kAction:
      ++stats_.actions_run;
      event.action();
      break;
    case Event::Kind::kNodeStart:
      run_node_start(event);
      break;
  }
  return true;
}

void Simulator::deliver(Event& event) {
  Signal& signal = event.signal;
  const NodeId from = signal.sender().node_id;
  const NodeId to = signal.receiver().node_id;
  Node& receiver = *nodes_.at(to);
  if (!receiver.up || receiver.incarnation != event.receiver_incarnation) {
    ++stats_.dropped_node_down;
    return;
  }
  if (!event.from_harness) {
    if (nodes_.at(from)->incarnation != event.sender_incarnation) {
      ++stats_.dropped_node_down;  // the sender crashed: its connection died with it
      return;
    }
    if (from != to) {
      const Link& l = link(from, to);
      if (l.cut || l.epoch != event.link_epoch) {
        ++stats_.dropped_link_cut;
        return;
      }
    }
  }
  if (receiver.paused) {
    receiver.held.push_back(std::move(event));
    return;
  }
  if (!event.from_harness && from != to && receiver.remote_filter != nullptr &&
      receiver.remote_filter->drops(signal)) {
    ++stats_.dropped_by_filter;
    return;
  }
  auto block = receiver.block_by_key.find(signal.receiver().local_key());
  if (block == receiver.block_by_key.end()) {
    ++stats_.dropped_unknown_block;
    DUO_LOG(ERROR, kLogComponent) << "node " << to << " has no block for " << signal.describe()
                                  << "; dropped";
    return;
  }
  ++stats_.delivered;
  hash_delivery(event.time_ns, signal);
  if (delivery_observer_) delivery_observer_(event.time_ns, signal);
  delivering_to_ = to;
  block->second->deliver(signal);
  delivering_to_ = 0;
}

bool Simulator::run_until(const std::function<bool()>& predicate, uint64_t time_limit_ns) {
  const uint64_t deadline_ns = saturating_add(now_ns(), time_limit_ns);
  uint64_t processed = 0;
  for (;;) {
    if (predicate()) return true;
    if (events_.empty() || events_.front().time_ns > deadline_ns) break;
    if (processed >= options_.events_per_run_max) {
      DUO_LOG(ERROR, kLogComponent) << "run_until stopped after " << processed
                                    << " events without reaching its time limit (livelock?)";
      return false;
    }
    step();
    ++processed;
  }
  // Nothing else happens before the limit: let the time pass (unless the caller asked
  // for "forever", which would leave no room for later runs).
  if (deadline_ns != UINT64_MAX && now_ns() < deadline_ns) clock_.set_now_ns(deadline_ns);
  return predicate();
}

void Simulator::run_for(uint64_t duration_ns) {
  run_until([] { return false; }, duration_ns);
}

void Simulator::hash_delivery(uint64_t time_ns, const Signal& signal) {
  // Bytes are mixed in little-endian order explicitly, so the hash of a run is the same
  // on every machine.
  uint64_t h = trace_hash_;
  auto mix = [&h](uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      h ^= (value >> (8 * i)) & 0xff;
      h *= kFnvPrime;
    }
  };
  mix(time_ns, 8);
  for (const BlockAddress* a : {&signal.sender(), &signal.receiver()}) {
    mix(a->node_id, 2);
    mix(a->block, 2);
    mix(a->instance, 2);
  }
  mix(signal.id(), 2);
  mix(signal.length_words(), 1);
  for (uint32_t word : signal.words()) mix(word, 4);
  mix(signal.section().size(), 4);
  for (uint8_t byte : signal.section()) mix(byte, 1);
  trace_hash_ = h;
}

}  // namespace duo::sim
