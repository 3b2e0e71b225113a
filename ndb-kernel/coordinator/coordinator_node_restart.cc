// CoordinatorBlock: its part of a node restart (NDB's DBTC in a node restart) — the
// starting set that routing places last in every chain, and no transactions on the
// starting node itself. See coordinator_block.h for the rules; the signals are in
// docs/formats/kernel-protocol.md "Node restart".
//
// Thread-safety: a Block; single-threaded by the runtime's contract.
#include <algorithm>
#include <utility>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/protocol/block_numbers.h"

namespace duo::coordinator {

using kernel::Signal;

bool CoordinatorBlock::is_starting(uint16_t node) const {
  return std::binary_search(starting_nodes_.begin(), starting_nodes_.end(), node);
}

protocol::FragmentPlacement CoordinatorBlock::live_placement(const protocol::TableDef& def,
                                                             uint32_t fragment) const {
  return protocol::place_fragment_live(topology_, fragment, def.fragment_count, dead_nodes_,
                                       starting_nodes_);
}

void CoordinatorBlock::on_node_starting_rep(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (is_data_node(node)) {
    std::erase(dead_nodes_, node);
    if (!is_starting(node)) {
      starting_nodes_.insert(std::upper_bound(starting_nodes_.begin(), starting_nodes_.end(), node),
                             node);
    }
    // Its earlier life's takeover is done; a death in this life needs its own (the
    // distribution block waits for its TAKEOVER_DONEREP).
    std::erase(takeovers_done_, node);
    if (node == node_id()) starting_here_ = true;
    DUO_BLOCK_LOG(INFO) << "data node " << node << " is starting: it takes the writes of its "
                        << "fragments, last in their chains"
                        << (starting_here_ ? "; this node takes no transactions until started"
                                           : "");
  } else {
    ++stats_.malformed_signals;
    DUO_BLOCK_LOG(WARNING) << "NODE_STARTINGREP for node " << node << ", not a data node";
  }
  Signal conf(protocol::kNodeStartingConf, {node});
  conf.set_receiver(signal.sender());
  send(signal.sender(), std::move(conf)).ignore_error();
}

void CoordinatorBlock::on_node_started_rep(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (is_starting(node)) {
    std::erase(starting_nodes_, node);
    DUO_BLOCK_LOG(INFO) << "data node " << node << " started: an ordinary replica again";
  }
  // The GCI this node's commits use comes with the distribution block's GCP_SWITCHREQ.
  if (node == node_id() && starting_here_) {
    starting_here_ = false;
    DUO_BLOCK_LOG(INFO) << "this node started: taking transactions";
  }
  Signal conf(protocol::kNodeStartedConf, {node});
  conf.set_receiver(signal.sender());
  send(signal.sender(), std::move(conf)).ignore_error();
}

}  // namespace duo::coordinator
