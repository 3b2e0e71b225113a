// MembershipBlock: API node failure handling and its hold-back (NDB's QMGR
// API_FAILREQ / API_FAILCONF). See membership_block.h "API node failure" for the rules,
// docs/formats/kernel-protocol.md "API node failure" for the signals and
// docs/reliability.md for why: a restarted client of the same node id must not meet
// what its previous process left in the coordinator or the dictionary.
#include <algorithm>
#include <utility>

#include "ndb-kernel/membership/membership_block.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::membership {

using kernel::Signal;

namespace {

// The blocks that hold API node state and confirm its failure handling. The distribution
// and local_query blocks hold none (local_query transactions belong to coordinators).
constexpr uint16_t kApiStateBlocks[] = {protocol::kCoordinatorBlock, protocol::kDictionaryBlock};

}  // namespace

void MembershipBlock::hold_back_api(uint16_t node) {
  if (SignalGate* gate = shared_gate_.load(std::memory_order_acquire)) gate->hold_back_api(node);
}

bool MembershipBlock::api_held_back(uint16_t node) const {
  const SignalGate* gate = shared_gate_.load(std::memory_order_acquire);
  return gate != nullptr && gate->held_back(node);
}

void MembershipBlock::on_api_fail_req(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  const std::vector<uint16_t> data_nodes = topology_.data_nodes();
  // Only this node's host reports its links; a data node fails through a round.
  if (signal.sender().node_id != node_id() || node == 0 || node > kNodeSetIdMax ||
      std::find(data_nodes.begin(), data_nodes.end(), node) != data_nodes.end()) {
    DUO_BLOCK_LOG(WARNING) << "ignoring API_FAILREQ for node " << node << " from "
                           << signal.sender().to_string();
    return;
  }
  gate_->hold_back_api(node);
  auto [failure, started] = api_failures_.try_emplace(node);
  if (!started) return;  // already being handled: the same hold-back covers it
  failure->second.started_ns = clock().now_ns();
  for (uint16_t block : kApiStateBlocks) {
    failure->second.awaiting.push_back(block);
    send_or_retry({node_id(), block, 0}, Signal(protocol::kApiFailReq, {node}));
  }
  DUO_BLOCK_LOG(INFO) << "API node " << node
                      << " failed: holding it back (its signals dropped, its reconnection "
                         "refused) until the coordinator and dictionary have handled it";
}

void MembershipBlock::on_api_fail_conf(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  auto failure = api_failures_.find(node);
  if (signal.sender().node_id != node_id() || failure == api_failures_.end()) return;
  std::vector<uint16_t>& awaiting = failure->second.awaiting;
  std::erase(awaiting, signal.sender().block);
  if (!awaiting.empty()) return;
  const uint64_t took_ms = (clock().now_ns() - failure->second.started_ns) / kNanosPerMilli;
  api_failures_.erase(failure);
  gate_->release_api(node);
  ++api_failures_handled_;
  DUO_BLOCK_LOG(INFO) << "API node " << node << ": failure handled in " << took_ms
                      << " ms, hold-back ended (it may connect again)";
}

}  // namespace duo::membership
