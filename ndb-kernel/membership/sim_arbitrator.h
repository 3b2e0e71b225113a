// SimArbitrator: the arbitrator of simulated clusters — a block on a node of its own
// that answers ARBIT_REQ with the same ArbitrationRule duo_mgmd uses (`arbitrate`), so
// split tests in the simulator exercise the real grant logic. Cut its links to make the
// arbitrator unreachable.
//
// Thread-safety: a Block; single-threaded.
#pragma once

#include <cstdint>

#include "ndb-kernel/membership/arbitration_rule.h"
#include "ndb-kernel/runtime/block.h"

namespace duo::membership {

class SimArbitrator : public kernel::Block {
 public:
  SimArbitrator();

  ArbitrationRule& rule() { return rule_; }

 private:
  void on_arbit_req(kernel::Signal& signal);

  ArbitrationRule rule_;
};

}  // namespace duo::membership
