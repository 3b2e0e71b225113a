// CoordinatorBlock: the API node failure hold-back (NDB's API_FAILREQ / API_FAILCONF in
// DBTC). The membership block holds a failed API node back (its signals dropped, its
// reconnection refused) until this block says nothing of that node's old connection is
// left here: every transaction it had has ended and every scan it had has closed. The
// abort itself is on_api_node_failed (coordinator_block.cc), shared with NODE_FAILREP.
// See coordinator_block.h for the rules; the signals are in
// docs/formats/kernel-protocol.md "API node failure".
#include <algorithm>
#include <utility>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/coordinator/coordinator_records.h"
#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::coordinator {

using kernel::Signal;

void CoordinatorBlock::on_api_fail_req(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (node == 0 || is_data_node(node)) {
    ++stats_.malformed_signals;
    return;
  }
  ApiFailure failure;
  failure.node = node;
  failure.requester = signal.sender();
  // Remembered before on_api_node_failed clears their client address.
  for (const auto& [ptr, scan] : scans_) {
    if (scan->client.node_id == node) failure.scans.push_back(ptr);
  }
  on_api_node_failed(node);
  api_failures_.push_back(std::move(failure));
  answer_api_failures_if_done();
}

void CoordinatorBlock::answer_api_failures_if_done() {
  // Called when a transaction or a scan record is released while requests wait; both
  // counts are bounded (MaxNoOfConcurrentTransactions, MaxNoOfConcurrentScans), and
  // failed API nodes are few, so a plain search is enough.
  std::vector<ApiFailure> done;
  std::erase_if(api_failures_, [&](ApiFailure& failure) {
    for (const auto& [key, tx] : transactions_) {
      if (key.node == failure.node) return false;
    }
    for (uint32_t ptr : failure.scans) {
      if (scans_.count(ptr) != 0) return false;
    }
    done.push_back(std::move(failure));
    return true;
  });
  for (const ApiFailure& failure : done) {
    Signal conf(protocol::kApiFailConf, {failure.node});
    conf.set_receiver(failure.requester);
    Status sent = send(failure.requester, conf.clone());
    // A full queue: try again shortly; a lost answer would hold the API node back forever.
    if (sent.code() == ErrorCode::kTemporary)
      sent = send_delayed(failure.requester, std::move(conf), 1);
    if (!sent.ok()) {
      DUO_BLOCK_LOG(ERROR) << "cannot confirm the failure handling of API node " << failure.node
                           << ": " << sent.message();
    }
  }
}

}  // namespace duo::coordinator
