#include "ndb-kernel/datad/arbitrator_proxy.h"

#include <utility>

#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::datad {

ArbitratorProxy::ArbitratorProxy() : Block("arbitrator_proxy", protocol::kArbitratorBlock) {
  on(protocol::kArbitReq, &ArbitratorProxy::on_arbit_req);
  on(protocol::kNodeFailRep, &ArbitratorProxy::on_node_fail_rep);
}

std::vector<ArbitratorProxy::Request> ArbitratorProxy::take_requests() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(queued_, {});
}

void ArbitratorProxy::on_arbit_req(kernel::Signal& signal) {
  queue({0, membership::ArbitReqMsg::from_signal(signal), signal.sender()});
}

void ArbitratorProxy::on_node_fail_rep(kernel::Signal& signal) {
  queue({static_cast<uint16_t>(signal.word(0)), {}, signal.sender()});
}

void ArbitratorProxy::queue(Request request) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (queued_.size() >= kQueuedRequestsMax) queued_.erase(queued_.begin());
  queued_.push_back(std::move(request));
}

}  // namespace duo::datad
