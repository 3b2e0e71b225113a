// ArbitratorProxy: the arbitrator as the membership block of duo_datad sees it — a block
// at (own node, kArbitratorBlock) that hands each ARBIT_REQ to the process, because
// kernel blocks talk only by signals and the arbitrator lives in duo_mgmd. It is also
// the membership block's failure observer: each NODE_FAILREP it gets is handed on the
// same way, for the cluster log ("Node 2: Node 1 declared dead"). The control
// loop of datad_main.cc takes the requests (take_requests), asks mgmd on its session
// (`arbitrate`, docs/formats/mgm-protocol.md) and answers the membership block with
// ARBIT_CONF / ARBIT_REF through ThreadRuntime::send_from_outside. No answer (mgmd
// unreachable) is an answer too: the membership block's ArbitrationTimeout shuts the
// side down.
//
// Thread-safety: the block's handler runs on its runtime thread; take_requests() is
// called from the control loop thread. The queue between them is guarded by mutex_
// (arbitration is rare: a lock here costs nothing).
#pragma once

#include <mutex>
#include <vector>

#include "ndb-kernel/membership/membership_messages.h"
#include "ndb-kernel/runtime/block.h"

namespace duo::datad {

class ArbitratorProxy : public kernel::Block {
 public:
  struct Request {
    uint16_t failed_node = 0;  // a NODE_FAILREP for this node; 0: an ARBIT_REQ
    membership::ArbitReqMsg request;
    kernel::BlockAddress reply_to;  // the membership block that asked
  };
  // A president asks at most a few times per failure; more waiting means mgmd is gone,
  // and the oldest requests are dropped (their rounds have timed out anyway).
  static constexpr size_t kQueuedRequestsMax = 16;

  ArbitratorProxy();

  // The requests received since the last call, oldest first.
  std::vector<Request> take_requests();

 private:
  void on_arbit_req(kernel::Signal& signal);
  void on_node_fail_rep(kernel::Signal& signal);
  void queue(Request request);

  std::mutex mutex_;
  std::vector<Request> queued_;  // guarded by mutex_
};

}  // namespace duo::datad
