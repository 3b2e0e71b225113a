// SignalGate: one data node's receive-side gate towards the other data nodes — every
// signal of a data node this node's membership declared dead is dropped before any
// block sees it, until that node is admitted again (NDB: once a node is declared dead,
// every block ignores its signals until it has been through node failure handling and
// started again). The membership block owns it and installs it as the node's
// kernel::RemoteSignalFilter, so duo_datad and the simulator apply it at the same point.
//
// Closed for a node: from the accepted PREP_FAILREQ naming it (the survivors agreed it
// fails; its failure is then committed or the whole side shuts down) until this node's
// membership admits it again (INCLUDE_ORD, or the president's own include). Until then
// only the start protocol by which a restarted process of that node asks to come back
// passes (is_start_protocol below): nothing else a dead node sends can be meant for a
// cluster that has gone on without it — late answers of its old process (frozen,
// partitioned, its bytes queued on a link that closed late) would be taken for those of
// a live node. One INFO line per closing, at its first drop; drops are counted per node.
//
// API nodes are held back instead (NDB's API_FAILREQ / API_FAILCONF): from the closing
// of an API node's link until every block of this node confirmed that nothing of that
// connection is left (the membership block's API failure handling, membership_block.h
// "API node failure"), every signal of that API node is dropped — late signals of its
// old connection, and anything a reconnected process of the same node id would send
// before duo_datad refuses its link (it refuses it while held_back()). Otherwise a
// restarted client counting its transaction ids from 1 again would find its old,
// still-aborting transactions under the same (node, api_tx) keys. One INFO line per
// hold-back, at its first drop; drops are counted with the node's other drops.
//
// The gate also notes which nodes sent anything at all in this life of this node: the
// membership block takes that first sign of life as the node's admission at cluster start
// (it is then watched like any member; see membership_block.h "Detection"); and it
// counts the signals it let through per node: any of them proves its sender alive, so a
// node whose heartbeat is late behind real work is not suspected while that work's
// signals keep coming (membership_block.h "Detection").
//
// Thread-safety: close_to/admit/release_api are for the owner (the membership block's
// thread); hold_back_api may also be called by the runtime's host on any thread
// (duo_datad's transporter thread, at the link's closing, so that a reconnection racing
// the API_FAILREQ is already refused); drops() runs on every block thread of the node
// and every observer may be read from any thread. Lock-free: per-node atomic bits and
// counters.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "ndb-kernel/membership/membership_messages.h"
#include "ndb-kernel/runtime/remote_signal_filter.h"

namespace duo::membership {

class SignalGate final : public kernel::RemoteSignalFilter {
 public:
  // `own_node` names this node in the log lines.
  explicit SignalGate(uint16_t own_node);

  // The signals a data node that is not (yet) admitted may send (the start protocol).
  static bool is_start_protocol(kernel::SignalId id);

  // ---- Owner ----
  // From now on drop `node`'s signals but the start protocol's. Idempotent.
  void close_to(uint16_t node);
  // `node` is admitted: its signals pass again. Idempotent.
  void admit(uint16_t node);

  // From now on drop every signal of API node `node` (its failure handling runs).
  // Idempotent; any thread (see Thread-safety).
  void hold_back_api(uint16_t node);
  // `node`'s failure handling is done: its signals (of a new connection) pass again.
  // Owner; idempotent.
  void release_api(uint16_t node);

  // ---- Any thread ----
  bool drops(const kernel::Signal& signal) override;
  bool closed_to(uint16_t node) const;
  // API node `node` is held back (duo_datad refuses its link meanwhile).
  bool held_back(uint16_t node) const;
  // Anything arrived from `node` since this gate was built (dropped or not).
  bool heard(uint16_t node) const;
  // Signals of `node` let through so far (a relaxed counter: read it on one thread and
  // compare with its own earlier reading).
  uint64_t passed(uint16_t node) const;
  // Signals of `node` dropped (over every closing or hold-back).
  uint64_t dropped(uint16_t node) const;
  uint64_t dropped_total() const { return dropped_total_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kWords = (size_t{kNodeSetIdMax} + 1) / 64;
  using Bits = std::array<std::atomic<uint64_t>, kWords>;

  static bool test(const Bits& bits, uint16_t node);
  static void set(Bits& bits, uint16_t node);
  static void clear(Bits& bits, uint16_t node);

  // Constant after construction.
  const std::string log_tag_;

  Bits closed_{};
  Bits heard_{};
  // Set when a closing was logged; cleared by admit(), so each closing logs once.
  Bits logged_{};
  // API nodes held back, and the same "logged once" bit per hold-back.
  Bits held_back_{};
  Bits held_back_logged_{};
  std::array<std::atomic<uint64_t>, kNodeSetIdMax + 1> dropped_{};
  std::array<std::atomic<uint64_t>, kNodeSetIdMax + 1> passed_{};
  std::atomic<uint64_t> dropped_total_{0};
};

}  // namespace duo::membership
