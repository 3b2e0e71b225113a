#include "ndb-kernel/membership/membership_rules.h"

namespace duo::membership {

uint16_t right_neighbour(const NodeSet& live, uint16_t self) {
  if (live.size() < 2 || !live.contains(self)) return 0;
  auto next = live.upper_bound(self);
  return next == live.end() ? *live.begin() : *next;
}

uint16_t left_neighbour(const NodeSet& live, uint16_t self) {
  if (live.size() < 2 || !live.contains(self)) return 0;
  auto at = live.find(self);
  return at == live.begin() ? *live.rbegin() : *std::prev(at);
}

uint16_t president_of(const NodeSet& live) {
  return live.empty() ? 0 : *live.begin();
}

ViabilityVerdict check_viability(const protocol::ClusterTopology& topology, const NodeSet& before,
                                 const NodeSet& survivors) {
  for (size_t group = 0; group < topology.node_groups.size(); ++group) {
    bool kept = false;
    for (uint16_t node : topology.node_groups[group]) kept |= survivors.contains(node);
    if (!kept) return {Viability::kNodeGroupLost, static_cast<uint32_t>(group)};
  }
  if (2 * survivors.size() > before.size()) return {Viability::kContinue, 0};
  return {Viability::kNeedArbitration, 0};
}

}  // namespace duo::membership
