#include "ndb-kernel/membership/sim_arbitrator.h"

#include "ndb-kernel/membership/membership_messages.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::membership {

SimArbitrator::SimArbitrator() : Block("arbitrator", protocol::kArbitratorBlock) {
  protocol::register_protocol_signal_names();
  on(protocol::kArbitReq, &SimArbitrator::on_arbit_req);
}

void SimArbitrator::on_arbit_req(kernel::Signal& signal) {
  const ArbitReqMsg request = ArbitReqMsg::from_signal(signal);
  const ArbitrationDecision decision =
      rule_.request(request.president, request.survivors, request.failed);
  DUO_BLOCK_LOG(INFO) << "arbitration for node " << request.president << " (survivors "
                      << format_node_set(request.survivors) << ", failed "
                      << format_node_set(request.failed)
                      << "): " << (decision.granted ? "granted" : "refused: " + decision.reason);
  kernel::Signal answer =
      decision.granted
          ? kernel::Signal(protocol::kArbitConf, {request.round})
          : kernel::Signal(
                protocol::kArbitRef,
                {request.round, static_cast<uint32_t>(ShutdownReason::kArbitrationRefused)});
  send(signal.sender(), std::move(answer)).ignore_error();
}

}  // namespace duo::membership
