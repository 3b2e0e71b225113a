// ArbitrationRule: the arbitrator's decision (NDB's arbitrator in ndb_mgmd), shared by
// duo_mgmd's `arbitrate` command and the simulator's SimArbitrator so both decide alike.
//
// When survivors of a failure cannot prove they are the majority (DESIGN.md §5), their
// president asks the arbitrator. The arbitrator grants the first request and remembers
// the nodes that request declared failed; a later request whose survivors include a
// node marked failed is refused. In a split, both halves ask, each naming the other
// failed: whichever asks first wins and the other is refused, so exactly one side
// continues. A repeated request from the winning side (its president retried, or a
// later failure among the winners) is granted again, since none of its survivors is
// marked. A node that restarts and rejoins the cluster clears its mark
// (node_rejoined), so it can take part in a later arbitration.
//
// Thread-safety: thread-compatible (mgmd uses it from its event-loop thread).
#pragma once

#include <cstdint>
#include <string>

#include "ndb-kernel/membership/node_set.h"

namespace duo::membership {

struct ArbitrationDecision {
  bool granted = false;
  std::string reason;  // why it was refused (empty when granted)
};

class ArbitrationRule {
 public:
  // Decides the request of `president` for `survivors` to continue without `failed`.
  ArbitrationDecision request(uint16_t president, const NodeSet& survivors, const NodeSet& failed);
  // `node` restarted and rejoined: it is no longer marked failed.
  void node_rejoined(uint16_t node) { failed_.erase(node); }
  // Nodes marked failed by granted requests.
  const NodeSet& failed() const { return failed_; }
  uint64_t granted_count() const { return granted_count_; }
  uint64_t refused_count() const { return refused_count_; }

 private:
  NodeSet failed_;
  uint64_t granted_count_ = 0;
  uint64_t refused_count_ = 0;
};

}  // namespace duo::membership
