#include "ndb-kernel/membership/membership_messages.h"

#include <cstdlib>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::membership {

void put_node_set(kernel::Signal& signal, size_t first_word, const NodeSet& nodes) {
  uint32_t words[kNodeSetWords] = {};
  for (uint16_t node : nodes) {
    if (node > kNodeSetIdMax) {
      DUO_LOG(ERROR, "membership") << "node id " << node << " does not fit a node set";
      std::abort();
    }
    words[node / 32] |= uint32_t{1} << (node % 32);
  }
  for (size_t i = 0; i < kNodeSetWords; ++i) signal.set_word(first_word + i, words[i]);
}

NodeSet get_node_set(const kernel::Signal& signal, size_t first_word) {
  NodeSet nodes;
  for (size_t i = 0; i < kNodeSetWords; ++i) {
    const uint32_t word = signal.word(first_word + i);
    for (uint32_t bit = 0; bit < 32; ++bit) {
      if ((word >> bit) & 1) nodes.insert(static_cast<uint16_t>(i * 32 + bit));
    }
  }
  return nodes;
}

kernel::Signal FailRoundMsg::to_signal(kernel::SignalId id) const {
  kernel::Signal signal(id, {round, president});
  put_node_set(signal, 2, failed);
  return signal;
}

FailRoundMsg FailRoundMsg::from_signal(const kernel::Signal& signal) {
  FailRoundMsg msg;
  msg.round = signal.word(0);
  msg.president = static_cast<uint16_t>(signal.word(1));
  msg.failed = get_node_set(signal, 2);
  return msg;
}

kernel::Signal ArbitReqMsg::to_signal() const {
  kernel::Signal signal(protocol::kArbitReq, {round, president});
  put_node_set(signal, 2, survivors);
  put_node_set(signal, 2 + kNodeSetWords, failed);
  return signal;
}

ArbitReqMsg ArbitReqMsg::from_signal(const kernel::Signal& signal) {
  ArbitReqMsg msg;
  msg.round = signal.word(0);
  msg.president = static_cast<uint16_t>(signal.word(1));
  msg.survivors = get_node_set(signal, 2);
  msg.failed = get_node_set(signal, 2 + kNodeSetWords);
  return msg;
}

kernel::Signal IncludeOrdMsg::to_signal() const {
  kernel::Signal signal(protocol::kIncludeOrd, {round, president, node});
  put_node_set(signal, 3, live);
  return signal;
}

IncludeOrdMsg IncludeOrdMsg::from_signal(const kernel::Signal& signal) {
  IncludeOrdMsg msg;
  msg.round = signal.word(0);
  msg.president = static_cast<uint16_t>(signal.word(1));
  msg.node = static_cast<uint16_t>(signal.word(2));
  msg.live = get_node_set(signal, 3);
  return msg;
}

std::string include_refusal_text(IncludeRefusal reason) {
  switch (reason) {
    case IncludeRefusal::kNotPresident:
      return "this node is not the president";
    case IncludeRefusal::kFailureRoundRunning:
      return "a node failure is being handled";
    case IncludeRefusal::kAlreadyLive:
      return "the node is already in the membership";
    case IncludeRefusal::kIncludeRunning:
      return "another node is being included";
    case IncludeRefusal::kSuperseded:
      return "a node failure round started during the include and undid it";
    case IncludeRefusal::kNotADataNode:
      return "not a data node of this cluster (or the president itself)";
  }
  return "include refusal " + std::to_string(static_cast<uint32_t>(reason));
}

std::string shutdown_reason_text(ShutdownReason reason, uint32_t detail) {
  switch (reason) {
    case ShutdownReason::kNodeGroupLost:
      return "Node group " + std::to_string(detail) + " lost: cluster shutdown";
    case ShutdownReason::kArbitrationRefused:
      return "arbitration lost: the arbitrator chose the other side of the split";
    case ShutdownReason::kArbitratorUnreachable:
      return "arbitration failed: no arbitrator answered within ArbitrationTimeout";
    case ShutdownReason::kNoArbitrator:
      return "arbitration needed but no arbitrator is configured (ArbitrationRank > 0)";
  }
  return "shutdown reason " + std::to_string(static_cast<uint32_t>(reason));
}

}  // namespace duo::membership
