// MembershipBlock: heartbeats, failure detection, agreed node failure and arbitration
// of one data node (NDB's QMGR; DESIGN.md §3 and §5). One instance per data node.
//
// Detection. The live data nodes form a ring sorted by id (membership_rules.h). Every
// heartbeat_interval_ms each node sends HEARTBEAT to its right neighbour and counts an
// interval in which nothing came from its left neighbour as missed — neither a heartbeat
// nor any other signal (the SignalGate counts what passes it per node: a node busy with
// real work proves itself alive by that work's signals even when its heartbeat waits
// behind them); after missed_heartbeats_max missed intervals in a row (NDB: 4) it
// suspects that neighbour. With the default HeartbeatIntervalDbDb of 400 ms (NDB: 5000)
// a frozen node is suspected after at least 1.6 s of silence: its last signal counts for
// the interval it came in, then 4 intervals pass without any; as its heartbeats go out
// every interval, that is 1.2-2.0 s after it froze (docs/reliability.md "Gray
// failures").
// A member is watched from its admission, taken as a heartbeat heard: at cluster start
// (every configured data node is a member) its first signal of any kind in this life,
// as the SignalGate saw it arrive (its start protocol traffic, or its first heartbeat),
// so a node frozen before its first heartbeat got through is still declared dead after
// missed_heartbeats_max intervals; at a node restart, its INCLUDE_ORD. A member never
// heard from is not watched (nodes of one cluster start at different times, minutes
// apart). Watching carries over to each new left neighbour after a failure, with a
// grace of missed_heartbeats_max intervals until the first heartbeat from it. A link
// that closes (LINK_DOWN_REP from the node's transport) is an immediate suspicion.
//
// Agreement. A suspicion goes to the president, the lowest live node this node does not
// suspect (FAIL_REP); a node receiving FAIL_REP trusts it. The president runs one round
// at a time over the survivors:
//   1. PREP_FAILREQ(failed set: the suspects and every node the president already
//      committed dead, so a survivor that missed a COMMIT catches up) -> every
//      survivor: it stops accepting signals from the failed nodes (its SignalGate drops
//      them for every block; see "Late signals") and answers PREP_FAILCONF. A survivor silent for
//      prep_fail_timeout_ms joins the failed set and the round restarts; so does a new suspicion
//      arriving meanwhile.
//   2. Viability (check_viability): a node group without survivors -> CLUSTER_SHUTDOWN_ORD
//      to every survivor; no strict majority -> ARBIT_REQ to the arbitrator, which must
//      grant (ARBIT_CONF) within arbitration_timeout_ms, else every survivor shuts down.
//   3. COMMIT_FAILREQ -> every survivor and every failed node: a survivor removes each
//      failed node from its membership and delivers NODE_FAILREP{node} (one per node,
//      exactly once) to its coordinator, dictionary, distribution and every local_query
//      instance, then answers COMMIT_FAILCONF; a failed node that still hears it
//      learns it was declared dead and shuts down.
// A president that fails is suspected like any node; the next lowest then takes over
// with everything it knows (its suspicions include every failed set it prepared for).
// A PREP/COMMIT is only accepted from a node whose failed set covers every live node
// below it, i.e. from the rightful president. While a suspicion is pending, its reporter
// repeats FAIL_REP every interval and the president answers each with FAIL_ACK (also
// while it waits for the arbitrator); a reporter that hears nothing from the president
// for missed_heartbeats_max intervals suspects the president too. That catches a
// president whose own watcher died with it, and one cut off without a link event.
//
// Shutdown. A node that learns it was declared failed, or whose side lost a node group
// or the arbitration, stops acting (every later signal is dropped) and raises
// shutdown_requested(): duo_datad polls it and exits with the reason in its log. A node
// that has not heard a single heartbeat in this life ignores being declared failed: the
// verdict is about its previous life (restarted right after a stop or crash, before
// the survivors agreed on it); it starts by a node restart.
//
// Late signals. The nodes named failed by an accepted PREP_FAILREQ are blocked: this
// block installs a SignalGate (signal_gate.h) as the node's kernel::RemoteSignalFilter
// and keeps it equal to the blocked set, so every block of this node stops hearing them
// at once — the late answers of a declared-dead node that still runs (frozen, cut off
// one way, its process dialling again on a new link) never reach the coordinator,
// dictionary, distribution or local_query — except the start protocol by which a
// restarted process asks to come back (RESTART_INFOREP, START_PERMREQ). A dead node
// that restarts stays blocked (every later failure round names it failed) until it is
// included; the included node itself blocks every data node outside the membership it
// adopts. This block's own drop() applies the same set to its own signals (and drops
// everything while shutting down or joining).
//
// Include (node restart, NDB's CM_ADD). A restarting node S's distribution block first
// sends MEMBERSHIP_JOINING to its own membership block: S turns passive (live set {S},
// no heartbeats, no watching, no suspicions, never president; FAIL_REP, PREP/COMMIT and
// the like are ignored) until INCLUDE_ORD names it. The distribution master asks the
// president (its own membership block) with INCLUDE_NODEREQ{S}. The president refuses
// (INCLUDE_NODEREF with an IncludeRefusal) unless it is president with no failure round
// and no suspicion pending, S is a dead data node and no other include runs. Else it adds
// S itself and sends INCLUDE_ORD(round, S, live set with S) to every other member and to
// S. A member adds S (unblocks it, re-derives its ring neighbours with the grace of a
// changed ring) and answers INCLUDE_CONF; S adopts the live set, leaves passive mode and
// starts heartbeating and watching (with grace), and answers too. Once everyone answered,
// INCLUDE_NODECONF{S} goes to the requester.
//   A failure round started while the include runs supersedes it: the president takes S
// out of its membership again (NODE_FAILREP{S} locally, INCLUDE_NODEREF kSuperseded to
// the requester), so the round names S failed and every member that added S drops it
// (NODE_FAILREP{S}) at its COMMIT; S, if it was told, shuts down. Members silent for
// prep_fail_timeout_ms after INCLUDE_ORD (S included) are suspected, which starts such a
// round. If the president dies during an include, members may disagree on S; the next
// president's round settles it: a survivor whose membership lacks a node the round's
// failed set leaves out (the round says the president has it) adds it ("adoption"); if
// the new president lacks S, S is in the failed set and leaves every membership. So a
// round's failed set always carries the president's whole membership (every data node
// not in it is failed), and after it commits all survivors agree. INCLUDE_ORD is
// idempotent: a repeat is only answered again.
//
// API node failure (NDB's API_FAILREQ / API_FAILCONF in QMGR;
// membership_api_failure.cc). When an API node's link closes, the runtime's host sends
// API_FAILREQ{node} to this block (duo_datad's report_link_down; a simulator harness
// injects it). The node is held back at once (SignalGate::hold_back_api: every signal of
// it is dropped, and duo_datad refuses its link while api_held_back()), and API_FAILREQ
// goes to the coordinator and the dictionary, which abort, finish or close what that
// node's connection left and answer API_FAILCONF when nothing of it is left. Once both
// answered, the hold-back ends (one INFO line) and the node may connect again. A repeat
// API_FAILREQ while the handling runs (a refused reconnection's link closing) changes
// nothing. Data nodes are never named in API_FAILREQ (they fail through rounds).
//
// Thread-safety: a Block; single-threaded. shutdown_requested(), shutdown_reason(),
// hold_back_api() and api_held_back() may be used from any thread (duo_datad's control
// loop and transporter thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ndb-kernel/membership/membership_messages.h"
#include "ndb-kernel/membership/signal_gate.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/runtime/block.h"

namespace duo::membership {

struct MembershipOptions {
  uint64_t heartbeat_interval_ms = 400;    // HeartbeatIntervalDbDb (NDB's default: 5000)
  uint32_t missed_heartbeats_max = 4;      // NDB declares a node dead after missing 4
  uint64_t arbitration_timeout_ms = 7500;  // ArbitrationTimeout
  // How long the president waits for PREP_FAILCONF; 0: twice the heartbeat interval.
  uint64_t prep_fail_timeout_ms = 0;
  // The arbitrator (node_id 0: none is configured, ArbitrationRank 0 everywhere).
  kernel::BlockAddress arbitrator;
  // A block on this node that gets a copy of every NODE_FAILREP (duo_datad's cluster log
  // reporting); node_id 0: none.
  kernel::BlockAddress failure_observer;
};

class MembershipBlock : public kernel::Block {
 public:
  MembershipBlock(protocol::ClusterTopology topology, MembershipOptions options);

  void on_start() override;

  // ---- Observers (block thread; tests read them between simulator steps) ----
  // The agreed live data nodes.
  const NodeSet& live_nodes() const { return live_; }
  // The president this node would report to now.
  uint16_t president() const;
  uint64_t rounds_started() const { return rounds_started_; }
  // Passive after MEMBERSHIP_JOINING, until INCLUDE_ORD names this node.
  bool joining() const { return joining_; }
  // As president: includes that every member confirmed.
  uint64_t includes_completed() const { return includes_completed_; }
  uint64_t failures_committed() const { return failures_committed_; }
  // The node's gate for signals of other data nodes (null before on_start). Its
  // observers may be read from any thread.
  const SignalGate* signal_gate() const { return gate_.get(); }
  // API node failures whose hold-back ended.
  uint64_t api_failures_handled() const { return api_failures_handled_; }

  // ---- Any thread (API node failure, above) ----
  // `node`'s link closed: hold it back now, before its API_FAILREQ is handled, so that a
  // reconnection racing that request is refused too. No-op before on_start (nothing of
  // any API node exists then).
  void hold_back_api(uint16_t node);
  // `node` is held back: its failure handling has not finished.
  bool api_held_back(uint16_t node) const;

  // ---- Any thread ----
  bool shutdown_requested() const { return shutdown_requested_.load(std::memory_order_acquire); }
  // Why (empty until shutdown_requested()).
  std::string shutdown_reason() const {
    return shutdown_requested() ? shutdown_reason_ : std::string();
  }

 private:
  struct Round {
    enum class Phase : uint8_t { kPrepare, kArbitrating, kCommitting };
    uint32_t id = 0;
    Phase phase = Phase::kPrepare;
    NodeSet before;  // the membership when the round started
    NodeSet failed;
    NodeSet survivors;
    NodeSet confirmed;  // survivors that answered PREP_FAILCONF
  };

  // An include this node runs as president.
  struct Include {
    uint32_t id = 0;
    uint16_t node = 0;
    kernel::BlockAddress requester;
    NodeSet awaited;    // every member but this one, and the node itself
    NodeSet confirmed;  // those that answered INCLUDE_CONF
    uint64_t started_ns = 0;
  };

  void on_tick(kernel::Signal& signal);
  void on_heartbeat(kernel::Signal& signal);
  void on_link_down(kernel::Signal& signal);
  void on_fail_rep(kernel::Signal& signal);
  void on_fail_ack(kernel::Signal& signal);
  void on_prep_fail_req(kernel::Signal& signal);
  void on_prep_fail_conf(kernel::Signal& signal);
  void on_prep_fail_timeout(kernel::Signal& signal);
  void on_commit_fail_req(kernel::Signal& signal);
  void on_commit_fail_conf(kernel::Signal& signal);
  void on_cluster_shutdown_ord(kernel::Signal& signal);
  void on_arbit_conf(kernel::Signal& signal);
  void on_arbit_ref(kernel::Signal& signal);
  void on_arbit_timeout(kernel::Signal& signal);
  void on_membership_joining(kernel::Signal& signal);
  void on_include_node_req(kernel::Signal& signal);
  void on_include_ord(kernel::Signal& signal);
  void on_include_conf(kernel::Signal& signal);
  // API node failure (membership_api_failure.cc).
  void on_api_fail_req(kernel::Signal& signal);
  void on_api_fail_conf(kernel::Signal& signal);

  // True if the signal must be ignored: this node is shutting down or joining (passive),
  // or it comes from a node this node has declared (or is declaring) dead.
  bool drop(const kernel::Signal& signal) const;
  // Makes the gate drop exactly the blocked nodes' signals; after every change of
  // blocked_.
  void publish_blocked();
  // Records a suspicion of `node` and reports it to the president (or, as president,
  // starts or restarts a round).
  void suspect(uint16_t node, const std::string& why);
  // As president: starts a round if suspicions are pending and none runs, or restarts
  // one still preparing whose failed set has grown.
  void drive_rounds();
  void start_round();
  void decide(Round& round);
  void commit_round(Round& round);
  void order_shutdown(const Round& round, ShutdownReason reason, uint32_t detail);
  // A PREP/COMMIT from `president` naming `failed` may be acted on.
  bool from_rightful_president(uint16_t president, const NodeSet& failed) const;
  void deliver_node_failure(uint16_t node);
  // INCLUDE_NODEREF{node, reason} to the requester.
  void refuse_include(const kernel::BlockAddress& requester, uint16_t node, IncludeRefusal reason);
  // As president: a failure round starts while an include runs; undoes it (see
  // "Include" above).
  void abort_include();
  // As president, every tick: members silent too long after INCLUDE_ORD are suspected.
  void check_include_timeout();
  // A survivor adds every data node a rightful president's round leaves out of its
  // failed set but this node does not have: the president included it.
  void adopt_included(const NodeSet& failed);
  // This node (S) takes the membership an INCLUDE_ORD names and becomes an active member.
  void join(const IncludeOrdMsg& msg);
  void send_or_retry(const kernel::BlockAddress& to, kernel::Signal signal);
  // Re-derives the left neighbour after the ring changed.
  void reset_watch();
  void request_shutdown(const std::string& why);
  // Suspicions of live nodes not yet committed.
  NodeSet pending_suspicions() const;
  kernel::BlockAddress membership_of(uint16_t node) const;

  // Constant after construction.
  const protocol::ClusterTopology topology_;
  const MembershipOptions options_;
  const uint64_t prep_fail_timeout_ms_;

  NodeSet live_;     // agreed membership
  NodeSet blocked_;  // nodes named failed by an accepted PREP_FAILREQ: signals dropped
  // Installed as the node's RemoteSignalFilter at on_start; mirrors blocked_.
  std::unique_ptr<SignalGate> gate_;
  // gate_ for other threads (hold_back_api / api_held_back): null until on_start.
  std::atomic<SignalGate*> shared_gate_{nullptr};
  // API node failures being handled: the blocks whose API_FAILCONF is still expected.
  struct ApiFailure {
    std::vector<uint16_t> awaiting;  // block numbers
    uint64_t started_ns = 0;
  };
  std::map<uint16_t, ApiFailure> api_failures_;
  uint64_t api_failures_handled_ = 0;
  NodeSet suspected_;  // suspicions: this node's, reported ones, and PREP_FAILREQ failed sets
  // Last sign of life (FAIL_ACK, PREP/COMMIT) from the president this node reports to.
  uint64_t president_heard_ns_ = 0;
  // Watching the left neighbour.
  uint16_t left_ = 0;
  bool watching_ = false;  // started after the first heartbeat heard
  bool heard_since_tick_ = false;
  // gate_->passed(left_) at the last tick: a change is a sign of life (on_tick).
  uint64_t left_passed_ = 0;
  // Intervals missed in a row; negative after the ring changed: a grace of as many
  // intervals, because the new neighbour may not yet know the ring changed (the
  // PREP_FAILREQ that changed it here may have died with its president).
  int64_t missed_ = 0;
  bool heard_any_ = false;

  // Passive: joining a running cluster, not included yet.
  bool joining_ = false;
  // The INCLUDE_ORD round that included this node (0: none in this life); a repeat of it
  // is only answered again.
  uint32_t include_applied_ = 0;

  // As president.
  std::optional<Round> round_;
  std::optional<Include> include_;
  uint32_t round_counter_ = 0;

  uint64_t rounds_started_ = 0;
  uint64_t failures_committed_ = 0;
  uint64_t includes_completed_ = 0;

  // Written once before shutdown_requested_ is set (release), read after it (acquire).
  std::string shutdown_reason_;
  std::atomic<bool> shutdown_requested_{false};
};

}  // namespace duo::membership
