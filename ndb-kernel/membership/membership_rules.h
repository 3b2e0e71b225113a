// The pure rules of membership (NDB's QMGR): who heartbeats whom, who is president, and
// whether a set of survivors may go on after a failure (DESIGN.md §5). The membership
// block applies them; keeping them apart lets unit tests check every case directly.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "ndb-kernel/membership/membership_messages.h"
#include "ndb-kernel/protocol/distribution.h"

namespace duo::membership {

// Heartbeats go round the ring of live data nodes sorted by id: each node sends to its
// right neighbour (the next higher id, wrapping to the lowest) and watches its left one
// (the next lower id, wrapping to the highest). 0 when `self` is alone or not in `live`.
uint16_t right_neighbour(const NodeSet& live, uint16_t self);
uint16_t left_neighbour(const NodeSet& live, uint16_t self);

// The president: the lowest live node id (0 for an empty set). Every node derives it from
// the same agreed membership, so no election is needed; when the president fails, the
// next lowest takes over.
uint16_t president_of(const NodeSet& live);

enum class Viability : uint8_t {
  kContinue,         // strict majority of `before` and a node of every node group
  kNeedArbitration,  // every node group kept, but no strict majority: ask the arbitrator
  kNodeGroupLost,    // some node group has no survivor: the cluster must shut down
};

struct ViabilityVerdict {
  Viability viability = Viability::kContinue;
  uint32_t lost_node_group = 0;  // kNodeGroupLost: the lowest group without a survivor
};

// NDB's rule with two replicas: the survivors win on their own only if they are a strict
// majority of the data nodes alive before the failure (`before`) and still hold a node
// of every node group. With all groups but no majority (1 of 2, 2 of 4) the other side
// may hold all groups as well, so only the arbitrator may decide; a side that lost a
// whole group cannot serve its fragments and stops.
ViabilityVerdict check_viability(const protocol::ClusterTopology& topology, const NodeSet& before,
                                 const NodeSet& survivors);

}  // namespace duo::membership
