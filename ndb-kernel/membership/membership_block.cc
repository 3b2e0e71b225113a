#include "ndb-kernel/membership/membership_block.h"

#include <algorithm>
#include <utility>

#include "ndb-kernel/membership/membership_rules.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::membership {
namespace {

// A NODE_FAILREP refused by a full queue is re-sent after this long: it must never be
// lost (a dead node's transactions and locks would stay held).
constexpr uint64_t kRetryDelayMs = 1;

uint64_t prep_timeout_of(const MembershipOptions& options) {
  return options.prep_fail_timeout_ms != 0 ? options.prep_fail_timeout_ms
                                           : 2 * options.heartbeat_interval_ms;
}

}  // namespace

MembershipBlock::MembershipBlock(protocol::ClusterTopology topology, MembershipOptions options)
    : Block("membership", protocol::kMembershipBlock),
      topology_(std::move(topology)),
      options_(std::move(options)),
      prep_fail_timeout_ms_(prep_timeout_of(options_)) {
  protocol::register_protocol_signal_names();
  for (uint16_t node : topology_.data_nodes()) live_.insert(node);
  on(protocol::kMembershipTick, &MembershipBlock::on_tick);
  on(protocol::kHeartbeat, &MembershipBlock::on_heartbeat);
  on(protocol::kLinkDownRep, &MembershipBlock::on_link_down);
  on(protocol::kFailRep, &MembershipBlock::on_fail_rep);
  on(protocol::kFailAck, &MembershipBlock::on_fail_ack);
  on(protocol::kPrepFailReq, &MembershipBlock::on_prep_fail_req);
  on(protocol::kPrepFailConf, &MembershipBlock::on_prep_fail_conf);
  on(protocol::kPrepFailTimeout, &MembershipBlock::on_prep_fail_timeout);
  on(protocol::kCommitFailReq, &MembershipBlock::on_commit_fail_req);
  on(protocol::kCommitFailConf, &MembershipBlock::on_commit_fail_conf);
  on(protocol::kClusterShutdownOrd, &MembershipBlock::on_cluster_shutdown_ord);
  on(protocol::kArbitConf, &MembershipBlock::on_arbit_conf);
  on(protocol::kArbitRef, &MembershipBlock::on_arbit_ref);
  on(protocol::kArbitTimeout, &MembershipBlock::on_arbit_timeout);
  on(protocol::kMembershipJoining, &MembershipBlock::on_membership_joining);
  on(protocol::kIncludeNodeReq, &MembershipBlock::on_include_node_req);
  on(protocol::kIncludeOrd, &MembershipBlock::on_include_ord);
  on(protocol::kIncludeConf, &MembershipBlock::on_include_conf);
  on(protocol::kApiFailReq, &MembershipBlock::on_api_fail_req);
  on(protocol::kApiFailConf, &MembershipBlock::on_api_fail_conf);
}

void MembershipBlock::on_start() {
  gate_ = std::make_unique<SignalGate>(node_id());
  set_remote_signal_filter(gate_.get());
  shared_gate_.store(gate_.get(), std::memory_order_release);
  reset_watch();
  send_or_retry(address(), kernel::Signal(protocol::kMembershipTick));
}

uint16_t MembershipBlock::president() const {
  NodeSet candidates;
  for (uint16_t node : live_) {
    if (!blocked_.contains(node) && !suspected_.contains(node)) candidates.insert(node);
  }
  return president_of(candidates);
}

kernel::BlockAddress MembershipBlock::membership_of(uint16_t node) const {
  return {node, protocol::kMembershipBlock, 0};
}

void MembershipBlock::publish_blocked() {
  for (uint16_t node : topology_.data_nodes()) {
    if (blocked_.contains(node)) {
      gate_->close_to(node);
    } else {
      gate_->admit(node);
    }
  }
}

bool MembershipBlock::drop(const kernel::Signal& signal) const {
  if (shutdown_requested() || joining_) return true;
  return blocked_.contains(signal.sender().node_id);
}

NodeSet MembershipBlock::pending_suspicions() const {
  NodeSet pending;
  for (uint16_t node : suspected_) {
    if (live_.contains(node)) pending.insert(node);
  }
  return pending;
}

void MembershipBlock::send_or_retry(const kernel::BlockAddress& to, kernel::Signal signal) {
  const bool local = to.node_id == node_id();
  Status sent = local ? send(to, signal.clone()) : send(to, std::move(signal));
  if (sent.ok()) return;
  if (local && sent.code() == ErrorCode::kTemporary) {
    if (send_delayed(to, std::move(signal), kRetryDelayMs).ok()) return;
  }
  // A lost signal to another node is covered by the protocol's timeouts.
  DUO_BLOCK_LOG(WARNING) << "cannot send to " << to.to_string() << ": " << sent.message();
}

// ---- Detection ----

void MembershipBlock::reset_watch() {
  NodeSet ring;
  for (uint16_t node : live_) {
    if (!blocked_.contains(node)) ring.insert(node);
  }
  const uint16_t left = left_neighbour(ring, node_id());
  if (left == left_) return;
  left_ = left;
  left_passed_ = left != 0 ? gate_->passed(left) : 0;
  missed_ = -static_cast<int64_t>(options_.missed_heartbeats_max);
  heard_since_tick_ = false;
  // Watching carries over to the new neighbour (after the grace above); before the
  // first heartbeat ever, it waits for one or for the neighbour's admission (on_tick).
  watching_ = heard_any_ || gate_->heard(left);
}

void MembershipBlock::on_tick(kernel::Signal& /*signal*/) {
  if (shutdown_requested()) return;
  if (joining_) {
    // Passive: nothing to send or watch until INCLUDE_ORD, but the tick keeps going.
    send_delayed(address(), kernel::Signal(protocol::kMembershipTick),
                 options_.heartbeat_interval_ms)
        .ignore_error();
    return;
  }
  check_include_timeout();
  // A member is watched from its admission on, taken as a heartbeat heard: at cluster
  // start, its first signal of any kind in this life (its start protocol traffic), so
  // that a node frozen before its first heartbeat got through is still declared dead
  // after missed_heartbeats_max intervals. A node never heard from is not watched: it
  // may not have been started yet (a cluster's nodes start minutes apart).
  if (left_ != 0 && !watching_ && gate_->heard(left_)) {
    watching_ = true;
    heard_since_tick_ = true;
  }
  NodeSet ring;
  for (uint16_t node : live_) {
    if (!blocked_.contains(node)) ring.insert(node);
  }
  if (const uint16_t right = right_neighbour(ring, node_id()); right != 0) {
    send(membership_of(right), kernel::Signal(protocol::kHeartbeat, {node_id()})).ignore_error();
  }
  if (left_ != 0 && watching_) {
    // Any signal of the neighbour that passed the gate since the last tick proves it
    // alive as well as a heartbeat does: under load its heartbeat may wait behind a
    // batch of real work on its main thread, while that work's signals keep coming.
    const uint64_t passed = gate_->passed(left_);
    if (passed != left_passed_) heard_since_tick_ = true;
    left_passed_ = passed;
    missed_ = heard_since_tick_ ? 0 : missed_ + 1;
    heard_since_tick_ = false;
    if (missed_ >= static_cast<int64_t>(options_.missed_heartbeats_max) &&
        !suspected_.contains(left_)) {
      suspect(left_, "missed " + std::to_string(missed_) + " heartbeats");
    }
  }
  // Pending suspicions are repeated to the president until its round commits them; a
  // president silent for as long as a dead neighbour is suspected as well, which moves
  // the role to the next node.
  const uint16_t president_now = president();
  const NodeSet pending = pending_suspicions();
  if (president_now != node_id() && !pending.empty()) {
    const uint64_t silent_ns = clock().now_ns() - president_heard_ns_;
    if (silent_ns >=
        options_.missed_heartbeats_max * options_.heartbeat_interval_ms * kNanosPerMilli) {
      suspect(president_now, "president silent for " + std::to_string(silent_ns / kNanosPerMilli) +
                                 " ms while a failure is pending");
    } else {
      for (uint16_t node : pending) {
        send(membership_of(president_now), kernel::Signal(protocol::kFailRep, {node, node_id()}))
            .ignore_error();
      }
    }
  }
  send_delayed(address(), kernel::Signal(protocol::kMembershipTick), options_.heartbeat_interval_ms)
      .ignore_error();
}

void MembershipBlock::on_heartbeat(kernel::Signal& signal) {
  if (drop(signal)) return;
  const uint16_t from = signal.sender().node_id;
  if (!live_.contains(from)) return;
  heard_any_ = true;
  if (from == left_) {
    heard_since_tick_ = true;
    watching_ = true;
    missed_ = std::max<int64_t>(missed_, 0);  // it knows the ring: the grace ends
  }
}

void MembershipBlock::on_link_down(kernel::Signal& signal) {
  if (shutdown_requested() || joining_) return;
  suspect(static_cast<uint16_t>(signal.word(0)), "link closed");
}

void MembershipBlock::on_fail_rep(kernel::Signal& signal) {
  if (drop(signal)) return;
  // Tells the reporter this node is alive and has the report, whether it is the
  // president or passes the report on.
  send(signal.sender(), kernel::Signal(protocol::kFailAck, {node_id()})).ignore_error();
  const auto node = static_cast<uint16_t>(signal.word(0));
  suspect(node, "reported by node " + std::to_string(signal.word(1)));
}

void MembershipBlock::on_fail_ack(kernel::Signal& signal) {
  if (drop(signal)) return;
  if (signal.sender().node_id == president()) president_heard_ns_ = clock().now_ns();
}

void MembershipBlock::suspect(uint16_t node, const std::string& why) {
  if (joining_ || node == node_id() || !live_.contains(node) || suspected_.contains(node)) return;
  const uint16_t president_before = president();
  suspected_.insert(node);
  DUO_BLOCK_LOG(WARNING) << "Node " << node_id() << ": suspects node " << node << " (" << why
                         << ")";
  const uint16_t president_now = president();
  if (president_now == node_id()) {
    drive_rounds();
    return;
  }
  if (president_now == 0) return;
  // A new president learns every pending suspicion; the old one only the new one. Its
  // silence is counted from now.
  const bool changed = president_now != president_before;
  if (changed || pending_suspicions().size() == 1) president_heard_ns_ = clock().now_ns();
  for (uint16_t suspect_node : suspected_) {
    if (!live_.contains(suspect_node)) continue;
    if (changed || suspect_node == node) {
      send(membership_of(president_now),
           kernel::Signal(protocol::kFailRep, {suspect_node, node_id()}))
          .ignore_error();
    }
  }
}

// ---- President ----

void MembershipBlock::drive_rounds() {
  if (shutdown_requested() || president() != node_id()) return;
  const NodeSet pending = pending_suspicions();
  if (pending.empty()) return;
  if (!round_) {
    start_round();
    return;
  }
  // Arbitration in flight: the new suspicion waits for the next round.
  if (round_->phase == Round::Phase::kPrepare &&
      !std::includes(round_->failed.begin(), round_->failed.end(), pending.begin(),
                     pending.end())) {
    start_round();
  }
}

void MembershipBlock::start_round() {
  // Before the round's sets are taken: an unfinished include is undone, so the round
  // names S failed wherever S was added.
  abort_include();
  Round round;
  round.id = (uint32_t{node_id()} << 20) | (++round_counter_ & 0xFFFFF);
  round.before = live_;
  round.failed = pending_suspicions();
  // Also every node this president already committed dead: a survivor that missed an
  // earlier COMMIT_FAILREQ (its president died while sending them) catches up here, so
  // the memberships cannot stay apart.
  for (uint16_t node : topology_.data_nodes()) {
    if (!live_.contains(node)) round.failed.insert(node);
  }
  for (uint16_t node : live_) {
    if (!round.failed.contains(node)) round.survivors.insert(node);
  }
  ++rounds_started_;
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": president starts failure round " << round.id
                      << ": failed " << format_node_set(round.failed) << ", survivors "
                      << format_node_set(round.survivors);
  const FailRoundMsg msg{round.id, node_id(), round.failed};
  round_ = std::move(round);
  for (uint16_t node : round_->survivors) {
    send_or_retry(membership_of(node), msg.to_signal(protocol::kPrepFailReq));
  }
  send_delayed(address(), kernel::Signal(protocol::kPrepFailTimeout, {round_->id}),
               prep_fail_timeout_ms_)
      .ignore_error();
}

void MembershipBlock::on_prep_fail_conf(kernel::Signal& signal) {
  if (drop(signal) || !round_ || round_->id != signal.word(0) ||
      round_->phase != Round::Phase::kPrepare) {
    return;
  }
  round_->confirmed.insert(static_cast<uint16_t>(signal.word(1)));
  if (std::includes(round_->confirmed.begin(), round_->confirmed.end(), round_->survivors.begin(),
                    round_->survivors.end())) {
    decide(*round_);
  }
}

void MembershipBlock::on_prep_fail_timeout(kernel::Signal& signal) {
  if (shutdown_requested() || !round_ || round_->id != signal.word(0) ||
      round_->phase != Round::Phase::kPrepare) {
    return;
  }
  for (uint16_t node : round_->survivors) {
    if (round_->confirmed.contains(node) || suspected_.contains(node)) continue;
    suspected_.insert(node);
    DUO_BLOCK_LOG(WARNING) << "Node " << node_id() << ": node " << node
                           << " did not answer PREP_FAILREQ within " << prep_fail_timeout_ms_
                           << " ms: it fails too";
  }
  start_round();
}

void MembershipBlock::decide(Round& round) {
  const ViabilityVerdict verdict = check_viability(topology_, round.before, round.survivors);
  switch (verdict.viability) {
    case Viability::kNodeGroupLost:
      order_shutdown(round, ShutdownReason::kNodeGroupLost, verdict.lost_node_group);
      return;
    case Viability::kContinue:
      commit_round(round);
      return;
    case Viability::kNeedArbitration:
      break;
  }
  if (options_.arbitrator.node_id == 0) {
    order_shutdown(round, ShutdownReason::kNoArbitrator, 0);
    return;
  }
  round.phase = Round::Phase::kArbitrating;
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": survivors " << format_node_set(round.survivors)
                      << " are no majority of " << format_node_set(round.before)
                      << ": asking the arbitrator " << options_.arbitrator.to_string();
  send(options_.arbitrator,
       ArbitReqMsg{round.id, node_id(), round.survivors, round.failed}.to_signal())
      .ignore_error();
  send_delayed(address(), kernel::Signal(protocol::kArbitTimeout, {round.id}),
               options_.arbitration_timeout_ms)
      .ignore_error();
}

void MembershipBlock::on_arbit_conf(kernel::Signal& signal) {
  if (shutdown_requested() || !round_ || round_->id != signal.word(0) ||
      round_->phase != Round::Phase::kArbitrating) {
    return;
  }
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": the arbitrator granted round " << round_->id;
  commit_round(*round_);
}

void MembershipBlock::on_arbit_ref(kernel::Signal& signal) {
  if (shutdown_requested() || !round_ || round_->id != signal.word(0) ||
      round_->phase != Round::Phase::kArbitrating) {
    return;
  }
  order_shutdown(*round_, ShutdownReason::kArbitrationRefused, 0);
}

void MembershipBlock::on_arbit_timeout(kernel::Signal& signal) {
  if (shutdown_requested() || !round_ || round_->id != signal.word(0) ||
      round_->phase != Round::Phase::kArbitrating) {
    return;
  }
  order_shutdown(*round_, ShutdownReason::kArbitratorUnreachable, 0);
}

void MembershipBlock::commit_round(Round& round) {
  // No restart from here on: the decision is out.
  round.phase = Round::Phase::kCommitting;
  const FailRoundMsg msg{round.id, node_id(), round.failed};
  // The failed nodes hear it too: one that is alive after all (frozen, cut off) learns
  // it was declared dead and stops.
  for (uint16_t node : round.survivors) {
    send_or_retry(membership_of(node), msg.to_signal(protocol::kCommitFailReq));
  }
  for (uint16_t node : round.failed) {
    // Usually dead or unreachable: nothing to say when it cannot be sent.
    send(membership_of(node), msg.to_signal(protocol::kCommitFailReq)).ignore_error();
  }
}

void MembershipBlock::order_shutdown(const Round& round, ShutdownReason reason, uint32_t detail) {
  DUO_BLOCK_LOG(ERROR) << "Node " << node_id() << ": failure round " << round.id << " of survivors "
                       << format_node_set(round.survivors) << ": "
                       << shutdown_reason_text(reason, detail);
  const NodeSet survivors = round.survivors;
  const uint32_t id = round.id;
  for (uint16_t node : survivors) {
    send_or_retry(membership_of(node),
                  kernel::Signal(protocol::kClusterShutdownOrd,
                                 {id, node_id(), static_cast<uint32_t>(reason), detail}));
  }
}

// ---- Every survivor ----

bool MembershipBlock::from_rightful_president(uint16_t president, const NodeSet& failed) const {
  if (!live_.contains(president)) return false;
  for (uint16_t node : live_) {
    if (node >= president) break;
    if (!failed.contains(node)) return false;
  }
  return true;
}

void MembershipBlock::on_prep_fail_req(kernel::Signal& signal) {
  if (drop(signal)) return;
  const FailRoundMsg msg = FailRoundMsg::from_signal(signal);
  if (msg.failed.contains(node_id())) {
    if (!heard_any_) return;  // about this node's previous life (see on_commit_fail_req)
    request_shutdown("declared failed by president node " + std::to_string(msg.president));
    return;
  }
  if (!from_rightful_president(msg.president, msg.failed)) {
    DUO_BLOCK_LOG(WARNING) << "Node " << node_id() << ": ignoring PREP_FAILREQ of round "
                           << msg.round << " from node " << msg.president
                           << ", which is not the president";
    return;
  }
  president_heard_ns_ = clock().now_ns();
  adopt_included(msg.failed);
  for (uint16_t node : msg.failed) {
    if (!live_.contains(node)) continue;
    blocked_.insert(node);
    suspected_.insert(node);
  }
  publish_blocked();
  // A lower president took over: this node's own round and include (if any) are void.
  if (msg.president != node_id()) {
    round_.reset();
    if (include_) {
      refuse_include(include_->requester, include_->node, IncludeRefusal::kSuperseded);
      include_.reset();
    }
  }
  reset_watch();
  send_or_retry(membership_of(msg.president),
                kernel::Signal(protocol::kPrepFailConf, {msg.round, node_id()}));
}

void MembershipBlock::on_commit_fail_req(kernel::Signal& signal) {
  if (drop(signal)) return;
  const FailRoundMsg msg = FailRoundMsg::from_signal(signal);
  if (msg.failed.contains(node_id())) {
    if (!heard_any_) {
      // Not a single heartbeat reached this node in this life: the round is about its
      // previous life (a restart right after a stop or crash, before the survivors had
      // agreed on it). This life starts by a node restart once they have.
      DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": president node " << msg.president
                          << " declared this node's previous life dead";
      return;
    }
    request_shutdown("declared dead by president node " + std::to_string(msg.president));
    return;
  }
  if (!from_rightful_president(msg.president, msg.failed)) {
    DUO_BLOCK_LOG(WARNING) << "Node " << node_id() << ": ignoring COMMIT_FAILREQ of round "
                           << msg.round << " from node " << msg.president
                           << ", which is not the president";
    return;
  }
  president_heard_ns_ = clock().now_ns();
  adopt_included(msg.failed);
  for (uint16_t node : msg.failed) {
    blocked_.insert(node);
    suspected_.erase(node);
    if (live_.erase(node) == 0) continue;  // committed by an earlier round already
    ++failures_committed_;
    DUO_BLOCK_LOG(WARNING) << "Node " << node_id() << ": Node " << node << " declared dead";
    deliver_node_failure(node);
  }
  publish_blocked();
  if (round_ && (msg.president != node_id() || round_->id == msg.round)) round_.reset();
  reset_watch();
  send_or_retry(membership_of(msg.president),
                kernel::Signal(protocol::kCommitFailConf, {msg.round, node_id()}));
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": membership now " << format_node_set(live_)
                      << ", president node " << president_of(live_);
  // Suspicions that arrived during the round: the next round, or a report to the
  // president (which may have changed with the membership).
  if (president() == node_id()) {
    drive_rounds();
  } else if (const uint16_t president_now = president(); president_now != 0) {
    for (uint16_t node : pending_suspicions()) {
      send(membership_of(president_now), kernel::Signal(protocol::kFailRep, {node, node_id()}))
          .ignore_error();
    }
  }
}

void MembershipBlock::on_commit_fail_conf(kernel::Signal& signal) {
  if (drop(signal)) return;
  DUO_BLOCK_LOG(DEBUG) << "Node " << node_id() << ": node " << signal.word(1)
                       << " committed failure round " << signal.word(0);
}

void MembershipBlock::on_cluster_shutdown_ord(kernel::Signal& signal) {
  if (drop(signal)) return;
  request_shutdown(
      shutdown_reason_text(static_cast<ShutdownReason>(signal.word(2)), signal.word(3)) +
      " (decided by president node " + std::to_string(signal.word(1)) + ")");
}

void MembershipBlock::deliver_node_failure(uint16_t node) {
  std::vector<kernel::BlockAddress> receivers = {local_address(protocol::kCoordinatorBlock),
                                                 local_address(protocol::kDictionaryBlock),
                                                 local_address(protocol::kDistributionBlock)};
  for (uint32_t part = 0; part < topology_.log_parts; ++part) {
    receivers.push_back(local_address(protocol::kLocalQueryBlock, static_cast<uint16_t>(part)));
  }
  if (options_.failure_observer.node_id != 0) receivers.push_back(options_.failure_observer);
  for (const kernel::BlockAddress& receiver : receivers) {
    send_or_retry(receiver, kernel::Signal(protocol::kNodeFailRep, {node}));
  }
}

// ---- Include (node restart) ----

void MembershipBlock::on_membership_joining(kernel::Signal& signal) {
  if (shutdown_requested() || signal.sender().node_id != node_id()) return;
  if (include_applied_ != 0) {
    DUO_BLOCK_LOG(WARNING) << "Node " << node_id()
                           << ": MEMBERSHIP_JOINING after this node was included: ignored";
    return;
  }
  joining_ = true;
  live_ = {node_id()};
  blocked_.clear();
  suspected_.clear();
  round_.reset();
  include_.reset();
  left_ = 0;
  watching_ = false;
  heard_since_tick_ = false;
  heard_any_ = false;
  missed_ = 0;
  publish_blocked();
  DUO_BLOCK_LOG(INFO) << "Node " << node_id()
                      << ": joining a running cluster: passive until included";
}

void MembershipBlock::on_include_node_req(kernel::Signal& signal) {
  if (shutdown_requested()) return;
  const auto node = static_cast<uint16_t>(signal.word(0));
  const kernel::BlockAddress requester = signal.sender();
  auto refuse = [&](IncludeRefusal reason) { refuse_include(requester, node, reason); };
  const std::vector<uint16_t> data_nodes = topology_.data_nodes();
  if (joining_ || president() != node_id()) return refuse(IncludeRefusal::kNotPresident);
  if (node == node_id() ||
      std::find(data_nodes.begin(), data_nodes.end(), node) == data_nodes.end()) {
    return refuse(IncludeRefusal::kNotADataNode);
  }
  if (include_) return refuse(IncludeRefusal::kIncludeRunning);
  if (round_ || !pending_suspicions().empty()) {
    return refuse(IncludeRefusal::kFailureRoundRunning);
  }
  if (live_.contains(node)) return refuse(IncludeRefusal::kAlreadyLive);

  Include include;
  include.id = (uint32_t{node_id()} << 20) | (++round_counter_ & 0xFFFFF);
  include.node = node;
  include.requester = requester;
  include.started_ns = clock().now_ns();
  // The president adds S first, so S's INCLUDE_CONF (and heartbeats) are not dropped.
  live_.insert(node);
  blocked_.erase(node);
  suspected_.erase(node);
  publish_blocked();
  reset_watch();
  for (uint16_t member : live_) {
    if (member != node_id()) include.awaited.insert(member);
  }
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": president includes node " << node << " (round "
                      << include.id << "): membership " << format_node_set(live_);
  const IncludeOrdMsg msg{include.id, node_id(), node, live_};
  for (uint16_t member : include.awaited) {
    send_or_retry(membership_of(member), msg.to_signal());
  }
  include_ = std::move(include);
}

void MembershipBlock::refuse_include(const kernel::BlockAddress& requester, uint16_t node,
                                     IncludeRefusal reason) {
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": cannot include node " << node << ": "
                      << include_refusal_text(reason);
  send_or_retry(requester,
                kernel::Signal(protocol::kIncludeNodeRef, {node, static_cast<uint32_t>(reason)}));
}

void MembershipBlock::on_include_ord(kernel::Signal& signal) {
  if (shutdown_requested()) return;
  const IncludeOrdMsg msg = IncludeOrdMsg::from_signal(signal);
  if (signal.sender().node_id != msg.president) return;
  if (msg.node == node_id()) {
    // The included node takes the membership whole: it knows nothing of its own. (With
    // a lower id than the president's it is the president from now on.)
    if (!msg.live.contains(node_id()) || !msg.live.contains(msg.president)) {
      DUO_BLOCK_LOG(WARNING) << "Node " << node_id() << ": ignoring INCLUDE_ORD of round "
                             << msg.round << " naming membership " << format_node_set(msg.live)
                             << " from node " << msg.president;
      return;
    }
    if (joining_ || include_applied_ != msg.round) join(msg);
  } else {
    if (drop(signal)) return;
    if (!from_rightful_president(msg.president, {})) {
      DUO_BLOCK_LOG(WARNING) << "Node " << node_id() << ": ignoring INCLUDE_ORD of round "
                             << msg.round << " from node " << msg.president
                             << ", which is not the president";
      return;
    }
    president_heard_ns_ = clock().now_ns();
    // Idempotent: a repeat only confirms again. (No INCLUDE_ORD can come after the
    // PREP_FAILREQ of a round that undid its include: both come from the president, in
    // order on one link.)
    if (!live_.contains(msg.node)) {
      live_.insert(msg.node);
      blocked_.erase(msg.node);
      suspected_.erase(msg.node);
      publish_blocked();
      reset_watch();
      DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": node " << msg.node
                          << " included: membership now " << format_node_set(live_);
    }
  }
  send_or_retry(membership_of(msg.president),
                kernel::Signal(protocol::kIncludeConf, {msg.round, node_id()}));
}

void MembershipBlock::join(const IncludeOrdMsg& msg) {
  joining_ = false;
  include_applied_ = msg.round;
  live_ = msg.live;
  blocked_.clear();
  // The nodes dead now stay blocked here too, until an include of their own.
  for (uint16_t node : topology_.data_nodes()) {
    if (!live_.contains(node)) blocked_.insert(node);
  }
  publish_blocked();
  suspected_.clear();
  round_.reset();
  include_.reset();
  president_heard_ns_ = clock().now_ns();
  // Watch the new left neighbour with the grace of a changed ring: it may not have
  // the INCLUDE_ORD yet and still send its heartbeats elsewhere.
  heard_any_ = true;
  left_ = 0;
  reset_watch();
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": included by president node " << msg.president
                      << ": membership " << format_node_set(live_);
}

void MembershipBlock::on_include_conf(kernel::Signal& signal) {
  if (drop(signal) || !include_ || include_->id != signal.word(0)) return;
  include_->confirmed.insert(static_cast<uint16_t>(signal.word(1)));
  if (!std::includes(include_->confirmed.begin(), include_->confirmed.end(),
                     include_->awaited.begin(), include_->awaited.end())) {
    return;
  }
  ++includes_completed_;
  DUO_BLOCK_LOG(INFO) << "Node " << node_id() << ": node " << include_->node
                      << " is in the membership of every member (round " << include_->id << ")";
  send_or_retry(include_->requester, kernel::Signal(protocol::kIncludeNodeConf, {include_->node}));
  include_.reset();
}

void MembershipBlock::check_include_timeout() {
  if (!include_ ||
      clock().now_ns() - include_->started_ns < prep_fail_timeout_ms_ * kNanosPerMilli) {
    return;
  }
  // As for PREP_FAILREQ: a silent member (or S) fails. As president, suspect() starts the
  // round that undoes the include; if S (a lower id) is president for the others by now,
  // the suspicion goes to it and its round's PREP_FAILREQ ends the include here.
  const Include include = *include_;
  for (uint16_t node : include.awaited) {
    if (include.confirmed.contains(node)) continue;
    suspect(node,
            "did not answer INCLUDE_ORD within " + std::to_string(prep_fail_timeout_ms_) + " ms");
  }
}

void MembershipBlock::abort_include() {
  if (!include_) return;
  const Include include = std::move(*include_);
  include_.reset();
  DUO_BLOCK_LOG(WARNING) << "Node " << node_id()
                         << ": a failure round supersedes the include of node " << include.node
                         << " (round " << include.id << ")";
  refuse_include(include.requester, include.node, IncludeRefusal::kSuperseded);
  if (live_.erase(include.node) != 0) {
    blocked_.insert(include.node);
    suspected_.erase(include.node);
    publish_blocked();
    deliver_node_failure(include.node);
  }
  reset_watch();
}

void MembershipBlock::adopt_included(const NodeSet& failed) {
  for (uint16_t node : topology_.data_nodes()) {
    if (node == node_id() || failed.contains(node) || live_.contains(node)) continue;
    live_.insert(node);
    blocked_.erase(node);
    suspected_.erase(node);
    DUO_BLOCK_LOG(WARNING) << "Node " << node_id() << ": node " << node
                           << " is live for the president (its include did not reach this node)";
  }
  publish_blocked();
}

void MembershipBlock::request_shutdown(const std::string& why) {
  if (shutdown_requested()) return;
  shutdown_reason_ = why;
  shutdown_requested_.store(true, std::memory_order_release);
  DUO_BLOCK_LOG(ERROR) << "Node " << node_id() << ": shutdown requested: " << why;
}

}  // namespace duo::membership
