// SimApiBlock: an API node inside the deterministic simulator — a kernel block at
// {node, kApiBlock, 0} that owns an ApiCore whose SignalSink is the block's send(). A
// whole-cluster simulator test adds one node with this block beside the data nodes and
// drives transactions through core(), exactly as an application drives Cluster, but on
// virtual time and under a seed.
//
// The simulator has no link events, so the harness says which data nodes are reachable:
// SimApiBlockOptions::connected_nodes are marked connected in on_start() (subscribing to
// schema events), and after crash_node()/restart_node() of a data node the harness calls
// core().set_node_connected(node, false/true) between simulator steps.
//
// Thread-safety: a block; single-threaded like everything in the simulator.
#pragma once

#include <utility>
#include <vector>

#include "ndb-kernel/api/api_core.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/runtime/block.h"

namespace duo::api {

struct SimApiBlockOptions {
  ApiCoreOptions core;  // core.node_id is set from the node the block is built for
  protocol::ClusterTopology topology;
  std::vector<uint16_t> connected_nodes;  // data nodes reachable from the start
};

class SimApiBlock final : public kernel::Block, private SignalSink {
 public:
  SimApiBlock(uint16_t node_id, SimApiBlockOptions options)
      : Block("api", protocol::kApiBlock),
        connected_nodes_(std::move(options.connected_nodes)),
        core_(with_node_id(std::move(options.core), node_id), std::move(options.topology), this) {
    // Every signal an API node receives goes to the core.
    for (kernel::SignalId id :
         {protocol::kTcKeyConf, protocol::kScanTabConf, protocol::kScanTabRef,
          protocol::kCreateTableConf, protocol::kCreateTableRef, protocol::kDropTableConf,
          protocol::kDropTableRef, protocol::kGetTableConf, protocol::kGetTableRef,
          protocol::kListTablesConf, protocol::kSchemaEvent,
          protocol::kFilegroupConf, protocol::kFilegroupRef, protocol::kListFilegroupsConf}) {
      on(id, &SimApiBlock::on_core_signal);
    }
  }

  ApiCore& core() { return core_; }

  void on_start() override {
    for (uint16_t node : connected_nodes_) core_.set_node_connected(node, true);
  }

 private:
  static ApiCoreOptions with_node_id(ApiCoreOptions options, uint16_t node_id) {
    options.node_id = node_id;
    return options;
  }

  void on_core_signal(kernel::Signal& signal) { core_.on_signal(signal); }

  // SignalSink: the core's signals leave through the block (the simulator's network).
  Status send(kernel::Signal signal) override {
    const kernel::BlockAddress receiver = signal.receiver();
    return Block::send(receiver, std::move(signal));
  }

  const std::vector<uint16_t> connected_nodes_;
  ApiCore core_;
};

}  // namespace duo::api
