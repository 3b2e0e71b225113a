#include "ndb-kernel/membership/node_set.h"

namespace duo::membership {

std::string format_node_set(const NodeSet& nodes) {
  std::string text = "{";
  for (uint16_t node : nodes) {
    if (text.size() > 1) text += ",";
    text += std::to_string(node);
  }
  return text + "}";
}

}  // namespace duo::membership
