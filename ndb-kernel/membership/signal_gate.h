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
// The gate also notes which nodes sent anything at all in this life of this node: the
// membership block takes that first sign of life as the node's admission at cluster start
// (it is then watched like any member; see membership_block.h "Detection").
//
// Thread-safety: close_to/admit are for the owner (the membership block's thread); drops()
// runs on every block thread of the node and every observer may be read from any thread.
// Lock-free: per-node atomic bits and counters.
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

  // ---- Any thread ----
  bool drops(const kernel::Signal& signal) override;
  bool closed_to(uint16_t node) const;
  // Anything arrived from `node` since this gate was built (dropped or not).
  bool heard(uint16_t node) const;
  // Signals of `node` dropped (over every closing).
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
  std::array<std::atomic<uint64_t>, kNodeSetIdMax + 1> dropped_{};
  std::atomic<uint64_t> dropped_total_{0};
};

}  // namespace duo::membership
