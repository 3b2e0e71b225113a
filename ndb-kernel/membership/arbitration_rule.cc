#include "ndb-kernel/membership/arbitration_rule.h"

namespace duo::membership {

ArbitrationDecision ArbitrationRule::request(uint16_t president, const NodeSet& survivors,
                                             const NodeSet& failed) {
  // The president itself counts as a survivor even if a confused request left it out.
  NodeSet asking = survivors;
  asking.insert(president);
  for (uint16_t node : asking) {
    if (failed_.contains(node)) {
      ++refused_count_;
      return {false, "node " + std::to_string(node) +
                         " was declared failed by an earlier granted arbitration"};
    }
  }
  failed_.insert(failed.begin(), failed.end());
  ++granted_count_;
  return {true, ""};
}

}  // namespace duo::membership
