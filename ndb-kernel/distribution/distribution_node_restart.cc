// DistributionBlock: node restart (NDB's DBDIH node restart, initial-style: the starting
// node copies every row of its fragments from the live replica while the cluster keeps
// serving). See distribution_block.h for the rules and docs/formats/kernel-protocol.md
// "Node restart" for the signals.
#include <algorithm>
#include <utility>

#include "ndb-kernel/distribution/distribution_block.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/protocol/wire_codec.h"

namespace duo::distribution {

using kernel::BlockAddress;
using kernel::Signal;

namespace {
// How long the master waits before asking its membership block again to include the
// starting node (a failure round was running, or the president moved).
constexpr uint64_t kIncludeRetryMs = 100;
constexpr uint32_t kIncludeAttemptsMax = 100;
// NODE_RESTART_TIMER w0: what to repeat (w1: the generation it belongs to).
constexpr uint32_t kRepeatStartPerm = 1;
constexpr uint32_t kRetryInclude = 2;
constexpr uint32_t kRetryStarted = 3;
// INCLUDE_NODEREF w1 (membership_messages.h IncludeRefusal): the node is a member already.
constexpr uint32_t kIncludeRefusedAlreadyLive = 3;

std::string message_of(const Signal& signal) {
  return std::string(signal.section().begin(), signal.section().end());
}
}  // namespace

std::vector<BlockAddress> DistributionBlock::local_blocks() const {
  std::vector<BlockAddress> blocks{local_address(protocol::kCoordinatorBlock),
                                   local_address(protocol::kDictionaryBlock)};
  for (uint16_t part = 0; part < topology_.log_parts; ++part) {
    blocks.push_back(local_address(protocol::kLocalQueryBlock, part));
  }
  return blocks;
}

uint32_t DistributionBlock::tell_local_blocks(kernel::SignalId id, uint16_t node, uint32_t extra) {
  uint32_t sent = 0;
  for (const BlockAddress& target : local_blocks()) {
    Signal signal(id, {node, extra});
    signal.set_receiver(target);
    if (send(target, std::move(signal)).ok()) ++sent;
  }
  return sent;
}

uint16_t DistributionBlock::node_group_of(uint16_t node) const {
  for (size_t g = 0; g < topology_.node_groups.size(); ++g) {
    const auto& nodes = topology_.node_groups[g];
    if (std::find(nodes.begin(), nodes.end(), node) != nodes.end()) {
      return static_cast<uint16_t>(g);
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------------------
// The starting node

void DistributionBlock::begin_node_restart(uint16_t master) {
  master_ = master;
  started_by_node_restart_.store(true);
  start_state_.store(NodeStartState::kJoining);
  DUO_BLOCK_LOG(INFO) << "node restart: the cluster runs without this node (master: node " << master
                      << "); asking to start, this node's old data is discarded";
  // Passive in the heartbeat ring until the master's membership includes this node.
  const BlockAddress membership = local_address(protocol::kMembershipBlock);
  Signal joining(protocol::kMembershipJoining);
  joining.set_receiver(membership);
  send(membership, std::move(joining)).ignore_error();  // no membership block in some tests
  ++node_restart_generation_;
  send_start_perm_req();
}

void DistributionBlock::send_start_perm_req() {
  if (start_state_.load() != NodeStartState::kJoining) return;
  send_to_master(Signal(protocol::kStartPermReq, {node_id()}));
  send_delayed(address(),
               Signal(protocol::kNodeRestartTimer, {kRepeatStartPerm, node_restart_generation_}),
               options_.restart_retry_ms)
      .ignore_error();
}

void DistributionBlock::on_node_restart_timer(Signal& signal) {
  switch (signal.word(0)) {
    case kRepeatStartPerm:
      if (signal.word(1) == node_restart_generation_) send_start_perm_req();
      return;
    case kRetryInclude:
      if (node_restart_ && node_restart_->node == signal.word(1) &&
          node_restart_->step == NodeRestart::Step::kIncluding) {
        request_include();
      }
      return;
    case kRetryStarted:
      send_node_started_if_idle();
      return;
    default:
      return;
  }
}

void DistributionBlock::on_start_perm_ref(Signal& signal) {
  // Another node is restarting, or the master is busy: START_PERMREQ is repeated.
  DUO_BLOCK_LOG(INFO) << "node restart: the master cannot start this node yet: "
                      << message_of(signal);
}

void DistributionBlock::on_start_perm_conf(Signal& signal) {
  if (start_state_.load() != NodeStartState::kJoining) return;  // a repeated answer
  master_ = static_cast<uint16_t>(signal.word(0));
  current_gci_.store(signal.word(1));
  last_complete_gci_.store(signal.word(2));
  recorded_gci_ = signal.word(2);
  // The master's record of dead nodes replaces this node's old one; it lists this node
  // too (dead until it can recover by itself), so the sysfile written from now on does.
  dead_since_.clear();
  unrecovered_.clear();
  protocol::ByteReader in(protocol::as_view(signal.section()));
  uint16_t node = 0;
  uint32_t gci = 0;
  uint8_t live = 0;
  while (in.u16(&node) && in.u32(&gci) && in.u8(&live)) {
    (live != 0 ? unrecovered_ : dead_since_)[node] = gci;
  }
  dead_since_.try_emplace(node_id(), signal.word(1));
  start_state_.store(NodeStartState::kCopying);
  copy_start_ns_ = clock().now_ns();
  DUO_BLOCK_LOG(INFO) << "node restart: allowed by node " << master_ << " at GCI " << signal.word(1)
                      << "; discarding the old data";
  // The coordinator takes no transaction until the node has started; the other blocks
  // learn the dead nodes.
  tell_local_blocks(protocol::kNodeStartingRep, node_id());
  announce_dead_nodes_locally();
  inits_awaited_ = topology_.log_parts;
  for (uint16_t part = 0; part < topology_.log_parts; ++part) {
    send_local(protocol::kLocalQueryBlock, part, protocol::kNodeRestartInitReq, node_id());
  }
}

void DistributionBlock::on_node_restart_init_conf(Signal& signal) {
  if (start_state_.load() != NodeStartState::kCopying || inits_awaited_ == 0) return;
  if (signal.word(1) != 0) {
    inits_awaited_ = 0;
    return fail_start("node restart: log part " + std::to_string(signal.sender().instance) +
                      " could not discard its old data: " + message_of(signal));
  }
  if (--inits_awaited_ > 0) return;
  DUO_BLOCK_LOG(INFO) << "node restart: local data discarded; copying the schema from node "
                      << master_;
  send_local(protocol::kDictionaryBlock, 0, protocol::kDictCopyReq, master_);
}

void DistributionBlock::on_dict_copy_conf(Signal& signal) {
  if (start_state_.load() != NodeStartState::kCopying) return;
  DUO_BLOCK_LOG(INFO) << "node restart: schema copied (" << signal.word(0)
                      << " tables); waiting for the rows";
  send_to_master(Signal(protocol::kNodeRestartReadyRep, {node_id()}));
}

void DistributionBlock::on_dict_copy_ref(Signal& signal) {
  if (start_state_.load() != NodeStartState::kCopying) return;
  fail_start("node restart: the schema could not be copied from node " + std::to_string(master_) +
             ": " + message_of(signal));
}

void DistributionBlock::on_lcp_start_conf(Signal& signal) {
  if (lcps_awaited_ == 0) return;
  if (signal.word(2) != 0) {
    // The node runs, but cannot yet recover by itself; the next checkpoint (after
    // enough redo) may. The sysfile keeps it recorded dead meanwhile.
    lcps_awaited_ = 0;
    DUO_BLOCK_LOG(WARNING) << "node restart: the first local checkpoint failed (log part "
                           << signal.sender().instance
                           << "); this node stays recorded dead until a system restart";
    return;
  }
  if (--lcps_awaited_ > 0) return;
  DUO_BLOCK_LOG(INFO) << "node restart: first local checkpoint done; recoverable from the next "
                         "complete GCI";
  send_to_master(Signal(protocol::kNodeRecoverableRep, {node_id()}));
}

// ---------------------------------------------------------------------------------------
// The master

void DistributionBlock::on_start_perm_req(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (node != signal.sender().node_id) return;
  const auto refuse = [&](const std::string& why) {
    Signal ref(protocol::kStartPermRef, {static_cast<uint32_t>(ErrorCode::kTemporary)});
    ref.set_section(fs_client::Bytes(why.begin(), why.end()));
    ref.set_receiver(signal.sender());
    send(signal.sender(), std::move(ref)).ignore_error();
  };
  if (!is_master() || start_state_.load() != NodeStartState::kStarted) {
    return refuse("node " + std::to_string(node_id()) + " is not the running master");
  }
  if (!is_dead(node)) return refuse("the cluster has not yet declared it dead");
  if (master_takeover_) return refuse("the master is taking over a GCP round");
  if (node_restart_) {
    if (node_restart_->node != node) {
      return refuse("node " + std::to_string(node_restart_->node) + " is restarting");
    }
    return;  // a repeated request: the answer follows when the include is done
  }
  node_restart_ = NodeRestart{};
  node_restart_->node = node;
  node_restart_->start_ns = clock().now_ns();
  DUO_BLOCK_LOG(INFO) << "node restart of data node " << node
                      << ": locking the schema, then including it";
  send_local(protocol::kDictionaryBlock, 0, protocol::kDictLockReq, node);
}

void DistributionBlock::on_dict_lock_conf(Signal& signal) {
  if (!node_restart_ || node_restart_->node != signal.word(0) ||
      node_restart_->step != NodeRestart::Step::kLockingSchema) {
    return;
  }
  node_restart_->step = NodeRestart::Step::kIncluding;
  request_include();
}

void DistributionBlock::request_include() {
  const BlockAddress membership = local_address(protocol::kMembershipBlock);
  Signal request(protocol::kIncludeNodeReq, {node_restart_->node});
  request.set_receiver(membership);
  if (!send(membership, std::move(request)).ok()) {
    // No membership block (simulator tests without heartbeats): nothing to join.
    Signal conf(protocol::kIncludeNodeConf, {node_restart_->node});
    conf.set_sender(membership);
    on_include_node_conf(conf);
  }
}

void DistributionBlock::on_include_node_ref(Signal& signal) {
  if (!node_restart_ || node_restart_->node != signal.word(0)) return;
  if (signal.word(1) == kIncludeRefusedAlreadyLive) {
    // A failure round after a president's death kept the node included: done.
    Signal conf(protocol::kIncludeNodeConf, {node_restart_->node});
    conf.set_sender(signal.sender());
    return on_include_node_conf(conf);
  }
  if (++node_restart_->include_attempts > kIncludeAttemptsMax) {
    // The starting node asks again (START_PERMREQ repeats): start over then.
    return abort_node_restart("its membership include was refused " +
                              std::to_string(kIncludeAttemptsMax) + " times (reason " +
                              std::to_string(signal.word(1)) + ")");
  }
  send_delayed(address(), Signal(protocol::kNodeRestartTimer, {kRetryInclude, node_restart_->node}),
               kIncludeRetryMs)
      .ignore_error();
}

void DistributionBlock::on_include_node_conf(Signal& signal) {
  if (!node_restart_ || node_restart_->node != signal.word(0) ||
      node_restart_->step != NodeRestart::Step::kIncluding) {
    return;
  }
  node_restart_->step = NodeRestart::Step::kPreparing;
  // The sysfile's record: dead nodes, and live ones back from a node restart that are
  // still recorded dead until they can recover by themselves (flag 1).
  fs_client::Bytes dead;
  for (const auto& [node, since] : dead_since_) {
    protocol::put_u16(&dead, node);
    protocol::put_u32(&dead, since);
    protocol::put_u8(&dead, 0);
  }
  for (const auto& [node, since] : unrecovered_) {
    protocol::put_u16(&dead, node);
    protocol::put_u32(&dead, since);
    protocol::put_u8(&dead, 1);
  }
  const BlockAddress target{node_restart_->node, protocol::kDistributionBlock, 0};
  Signal conf(protocol::kStartPermConf,
              {node_id(), current_gci_.load(), last_complete_gci_.load()});
  conf.set_section(std::move(dead));
  conf.set_receiver(target);
  send(target, std::move(conf)).ignore_error();  // lost: the node fails and is declared dead
  DUO_BLOCK_LOG(INFO) << "node restart of data node " << node_restart_->node
                      << ": in the heartbeat ring; it discards its data and copies the schema";
}

void DistributionBlock::on_node_restart_ready_rep(Signal& signal) {
  const uint16_t node = signal.sender().node_id;
  if (!node_restart_ || node_restart_->node != node ||
      node_restart_->step != NodeRestart::Step::kPreparing) {
    return;
  }
  // Every live node (and the starting one) routes the starting node's writes to it
  // before any row is copied.
  node_restart_->step = NodeRestart::Step::kStarting;
  node_restart_->awaiting.clear();
  for (uint16_t peer : data_nodes_) {
    if (is_dead(peer) && peer != node) continue;
    const BlockAddress target{peer, protocol::kDistributionBlock, 0};
    Signal rep(protocol::kNodeStartingRep, {node});
    rep.set_receiver(target);
    if (send(target, std::move(rep)).ok()) node_restart_->awaiting.insert(peer);
  }
}

void DistributionBlock::on_copy_node_conf(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (signal.sender().node_id == node_id() && signal.sender().block == protocol::kLocalQueryBlock) {
    // One of this node's instances finished its share of a copy.
    if (copies_awaited_ == 0 || node != copy_node_) return;
    copy_fragments_ += signal.word(1);
    copy_rows_ +=
        static_cast<uint64_t>(signal.word(2)) | (static_cast<uint64_t>(signal.word(3)) << 32);
    if (--copies_awaited_ > 0) return;
    Signal conf(protocol::kCopyNodeConf, {node, copy_fragments_, static_cast<uint32_t>(copy_rows_),
                                          static_cast<uint32_t>(copy_rows_ >> 32)});
    conf.set_receiver(copy_requester_);
    send(copy_requester_, std::move(conf)).ignore_error();
    return;
  }
  if (!node_restart_ || node_restart_->node != node ||
      node_restart_->step != NodeRestart::Step::kCopying) {
    return;
  }
  node_restart_->rows +=
      static_cast<uint64_t>(signal.word(2)) | (static_cast<uint64_t>(signal.word(3)) << 32);
  node_restart_->awaiting.erase(signal.sender().node_id);
  if (!node_restart_->awaiting.empty()) return;
  node_restart_->step = NodeRestart::Step::kStarted;
  send_node_started_if_idle();
}

void DistributionBlock::on_copy_node_ref(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (signal.sender().node_id == node_id() && signal.sender().block == protocol::kLocalQueryBlock) {
    if (copies_awaited_ == 0 || node != copy_node_) return;
    copies_awaited_ = 0;
    Signal ref(protocol::kCopyNodeRef, {node, signal.word(1)});
    ref.set_section(signal.section());
    ref.set_receiver(copy_requester_);
    send(copy_requester_, std::move(ref)).ignore_error();
    return;
  }
  if (!node_restart_ || node_restart_->node != node) return;
  // The starting node cannot become a replica: it must not go on half-copied. It is
  // told to stop; its failure is then handled as any node's.
  const std::string why = "copying to data node " + std::to_string(node) + " failed on node " +
                          std::to_string(signal.sender().node_id) + ": " + message_of(signal);
  const BlockAddress target{node, protocol::kDistributionBlock, 0};
  Signal stop(protocol::kRestartGciRep, {0, 1});
  stop.set_section(fs_client::Bytes(why.begin(), why.end()));
  stop.set_receiver(target);
  send(target, std::move(stop)).ignore_error();
  DUO_BLOCK_LOG(ERROR) << "node restart: " << why;
}

void DistributionBlock::send_node_started_if_idle() {
  if (!node_restart_ || node_restart_->step != NodeRestart::Step::kStarted ||
      node_restart_->started_sent) {
    return;
  }
  // Between GCP rounds, so the starting node joins the next round from its first
  // phase; no round starts until every node has answered (see on_gcp_timer).
  if (phase_ != Phase::kIdle || master_takeover_) {
    send_delayed(address(), Signal(protocol::kNodeRestartTimer, {kRetryStarted}), 10)
        .ignore_error();
    return;
  }
  const uint16_t node = node_restart_->node;
  node_restart_->started_sent = true;
  node_restart_->awaiting.clear();
  for (uint16_t peer : data_nodes_) {
    if (is_dead(peer) && peer != node) continue;
    const BlockAddress target{peer, protocol::kDistributionBlock, 0};
    Signal rep(protocol::kNodeStartedRep, {node, current_gci_.load()});
    rep.set_receiver(target);
    if (send(target, std::move(rep)).ok()) node_restart_->awaiting.insert(peer);
  }
}

void DistributionBlock::finish_node_restart() {
  const NodeRestart done = *node_restart_;
  node_restart_.reset();
  send_local(protocol::kDictionaryBlock, 0, protocol::kDictUnlockReq, done.node);
  node_restarts_completed_.fetch_add(1);
  const double seconds = static_cast<double>(clock().now_ns() - done.start_ns) / 1e9;
  DUO_BLOCK_LOG(INFO) << "node restart of data node " << done.node << " complete: " << done.rows
                      << " rows copied, " << seconds << " s; it serves again from GCI "
                      << current_gci_.load();
  // The master may have moved to the restarted node (the lowest live one): the new
  // master runs the rounds from here on.
  if (is_master()) {
    send_delayed(address(), Signal(protocol::kGcpTimer), options_.gcp_interval_ms).ignore_error();
  }
}

void DistributionBlock::on_node_recoverable_rep(Signal& signal) {
  const uint16_t node = signal.sender().node_id;
  if (unrecovered_.count(node) == 0) return;
  if (!is_master()) {
    // The master moved meanwhile: pass it on.
    send_to_master(Signal(protocol::kNodeRecoverableRep, {node}));
    return;
  }
  revive_next_round_ = node;
}

void DistributionBlock::abort_node_restart(const std::string& why) {
  if (!node_restart_) return;
  DUO_BLOCK_LOG(WARNING) << "node restart of data node " << node_restart_->node
                         << " abandoned: " << why;
  send_local(protocol::kDictionaryBlock, 0, protocol::kDictUnlockReq, node_restart_->node);
  node_restart_.reset();
  if (is_master() && phase_ == Phase::kIdle) {
    send_delayed(address(), Signal(protocol::kGcpTimer), options_.gcp_interval_ms).ignore_error();
  }
}

// ---------------------------------------------------------------------------------------
// Every node

void DistributionBlock::on_node_starting_rep(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  // Its next death needs a takeover of its own (the coordinator forgets it too).
  takeovers_done_.erase(node);
  local_answer_to_ = signal.sender();
  local_answer_id_ = protocol::kNodeStartingConf;
  local_answer_node_ = node;
  local_answers_awaited_ = tell_local_blocks(protocol::kNodeStartingRep, node);
  if (local_answers_awaited_ == 0) {
    Signal conf(protocol::kNodeStartingConf, {node});
    conf.set_receiver(local_answer_to_);
    send(local_answer_to_, std::move(conf)).ignore_error();
  }
}

void DistributionBlock::on_node_starting_conf(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (signal.sender().node_id == node_id() &&
      signal.sender().block != protocol::kDistributionBlock) {
    if (local_answers_awaited_ == 0 || local_answer_id_ != protocol::kNodeStartingConf ||
        node != local_answer_node_) {
      return;  // the starting node's own early announcement
    }
    if (--local_answers_awaited_ > 0) return;
    Signal conf(protocol::kNodeStartingConf, {node});
    conf.set_receiver(local_answer_to_);
    send(local_answer_to_, std::move(conf)).ignore_error();
    return;
  }
  if (!node_restart_ || node_restart_->node != node ||
      node_restart_->step != NodeRestart::Step::kStarting) {
    return;
  }
  node_restart_->awaiting.erase(signal.sender().node_id);
  if (!node_restart_->awaiting.empty()) return;
  // Every node writes to the starting node: the copy may begin, from every live node of
  // its group (each copies the fragments it is primary of).
  node_restart_->step = NodeRestart::Step::kCopying;
  const auto& group = topology_.node_groups[node_group_of(node)];
  for (uint16_t peer : group) {
    if (peer == node || is_dead(peer)) continue;
    const BlockAddress target{peer, protocol::kDistributionBlock, 0};
    Signal request(protocol::kCopyNodeReq, {node});
    request.set_receiver(target);
    if (send(target, std::move(request)).ok()) node_restart_->awaiting.insert(peer);
  }
  DUO_BLOCK_LOG(INFO) << "node restart of data node " << node << ": every node writes to it; "
                      << "copying rows from " << node_restart_->awaiting.size()
                      << " node(s) of its group";
  if (node_restart_->awaiting.empty()) abort_node_restart("no live node can copy to it");
}

void DistributionBlock::on_copy_node_req(Signal& signal) {
  copy_requester_ = signal.sender();
  copy_node_ = static_cast<uint16_t>(signal.word(0));
  copy_rows_ = 0;
  copy_fragments_ = 0;
  copies_awaited_ = topology_.log_parts;
  for (uint16_t part = 0; part < topology_.log_parts; ++part) {
    send_local(protocol::kLocalQueryBlock, part, protocol::kCopyNodeReq, copy_node_);
  }
}

void DistributionBlock::on_node_started_rep(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  const uint32_t gci = signal.word(1);
  // The restarted node runs: it takes part in GCP rounds, may be primary and master.
  // The sysfile keeps it recorded dead until it can recover by itself.
  if (auto dead = dead_since_.find(node); dead != dead_since_.end()) {
    unrecovered_[node] = dead->second;
    dead_since_.erase(dead);
  }
  master_ = lowest_live_node();
  local_answer_to_ = signal.sender();
  local_answer_id_ = protocol::kNodeStartedConf;
  local_answer_node_ = node;
  local_answers_awaited_ = tell_local_blocks(protocol::kNodeStartedRep, node, gci);
  if (node == node_id() && start_state_.load() == NodeStartState::kCopying) {
    current_gci_.store(gci);
    send_local(protocol::kCoordinatorBlock, 0, protocol::kGcpSwitchReq, gci);
    start_state_.store(NodeStartState::kStarted);
    const double seconds = static_cast<double>(clock().now_ns() - copy_start_ns_) / 1e9;
    DUO_BLOCK_LOG(INFO) << "node restart: started in GCI " << gci << " after " << seconds
                        << " s; taking a local checkpoint";
    lcps_awaited_ = topology_.log_parts;
    for (uint16_t part = 0; part < topology_.log_parts; ++part) {
      send_local(protocol::kLocalQueryBlock, part, protocol::kLcpStartReq, 0);
    }
  }
  if (node == node_id() && is_master()) {
    // The restarted node is now the lowest live one: it runs the GCP rounds.
    send_delayed(address(), Signal(protocol::kGcpTimer), options_.gcp_interval_ms).ignore_error();
  }
  if (local_answers_awaited_ == 0) {
    Signal conf(protocol::kNodeStartedConf, {node});
    conf.set_receiver(local_answer_to_);
    send(local_answer_to_, std::move(conf)).ignore_error();
  }
}

void DistributionBlock::on_node_started_conf(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (signal.sender().node_id == node_id() &&
      signal.sender().block != protocol::kDistributionBlock) {
    if (local_answers_awaited_ == 0 || local_answer_id_ != protocol::kNodeStartedConf ||
        node != local_answer_node_) {
      return;
    }
    if (--local_answers_awaited_ > 0) return;
    Signal conf(protocol::kNodeStartedConf, {node});
    conf.set_receiver(local_answer_to_);
    send(local_answer_to_, std::move(conf)).ignore_error();
    return;
  }
  if (!node_restart_ || node_restart_->node != node || !node_restart_->started_sent) return;
  node_restart_->awaiting.erase(signal.sender().node_id);
  if (node_restart_->awaiting.empty()) finish_node_restart();
}

}  // namespace duo::distribution
