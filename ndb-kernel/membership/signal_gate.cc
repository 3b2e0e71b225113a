#include "ndb-kernel/membership/signal_gate.h"

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::membership {

SignalGate::SignalGate(uint16_t own_node)
    : log_tag_("membership.gate@n" + std::to_string(own_node)) {}

bool SignalGate::is_start_protocol(kernel::SignalId id) {
  switch (id) {
    // A restarted process reports its sysfile GCI to every data node before anything
    // else; a running node must answer it (RESTART_GCIREP "start by a node restart"),
    // or the process never learns that a cluster runs without it.
    case protocol::kRestartInfoRep:
    // It then asks the master for permission to start (repeated every 200 ms); the
    // master's membership admits it (INCLUDE_ORD) before START_PERMCONF, and everything
    // it sends later (its INCLUDE_CONF, heartbeats, schema copy, NODE_*) follows that
    // admission at every member.
    case protocol::kStartPermReq:
      return true;
    default:
      return false;
  }
}

void SignalGate::close_to(uint16_t node) {
  if (node > kNodeSetIdMax) return;
  set(closed_, node);
}

void SignalGate::admit(uint16_t node) {
  if (node > kNodeSetIdMax || !test(closed_, node)) return;
  clear(closed_, node);
  clear(logged_, node);
}

void SignalGate::hold_back_api(uint16_t node) {
  if (node > kNodeSetIdMax) return;
  set(held_back_, node);
}

void SignalGate::release_api(uint16_t node) {
  if (node > kNodeSetIdMax || !test(held_back_, node)) return;
  clear(held_back_, node);
  clear(held_back_logged_, node);
}

bool SignalGate::drops(const kernel::Signal& signal) {
  const uint16_t node = signal.sender().node_id;
  if (node > kNodeSetIdMax) return false;
  // Read before written: once set, the common case costs one load, no shared write.
  if (!test(heard_, node)) set(heard_, node);
  if (test(held_back_, node)) {
    dropped_[node].fetch_add(1, std::memory_order_relaxed);
    dropped_total_.fetch_add(1, std::memory_order_relaxed);
    const uint64_t bit = uint64_t{1} << (node % 64);
    if ((held_back_logged_[node / 64].fetch_or(bit, std::memory_order_relaxed) & bit) == 0) {
      DUO_LOG(INFO, log_tag_) << "dropping every signal of API node " << node
                              << " until the failure handling of its last connection is done"
                              << " (first: " << kernel::signal_name(signal.id()) << " to block "
                              << signal.receiver().block << ")";
    }
    return true;
  }
  if (!test(closed_, node) || is_start_protocol(signal.id())) {
    passed_[node].fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  dropped_[node].fetch_add(1, std::memory_order_relaxed);
  dropped_total_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t bit = uint64_t{1} << (node % 64);
  if ((logged_[node / 64].fetch_or(bit, std::memory_order_relaxed) & bit) == 0) {
    DUO_LOG(INFO, log_tag_) << "dropping every signal of data node " << node
                            << ", declared dead, until it is admitted again (first: "
                            << kernel::signal_name(signal.id()) << " to block "
                            << signal.receiver().block << ")";
  }
  return true;
}

bool SignalGate::closed_to(uint16_t node) const {
  return node <= kNodeSetIdMax && test(closed_, node);
}

bool SignalGate::held_back(uint16_t node) const {
  return node <= kNodeSetIdMax && test(held_back_, node);
}

uint64_t SignalGate::passed(uint16_t node) const {
  return node <= kNodeSetIdMax ? passed_[node].load(std::memory_order_relaxed) : 0;
}

bool SignalGate::heard(uint16_t node) const {
  return node <= kNodeSetIdMax && test(heard_, node);
}

uint64_t SignalGate::dropped(uint16_t node) const {
  return node <= kNodeSetIdMax ? dropped_[node].load(std::memory_order_relaxed) : 0;
}

bool SignalGate::test(const Bits& bits, uint16_t node) {
  // Acquire pairs with the owner's release: a block that sees a node closed also sees
  // everything its membership did before closing it.
  return (bits[node / 64].load(std::memory_order_acquire) >> (node % 64)) & 1;
}

void SignalGate::set(Bits& bits, uint16_t node) {
  bits[node / 64].fetch_or(uint64_t{1} << (node % 64), std::memory_order_release);
}

void SignalGate::clear(Bits& bits, uint16_t node) {
  bits[node / 64].fetch_and(~(uint64_t{1} << (node % 64)), std::memory_order_release);
}

}  // namespace duo::membership
