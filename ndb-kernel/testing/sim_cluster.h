// SimCluster: a whole DuoDB cluster in the deterministic simulator, for tests — data
// nodes with their real dictionary, coordinator and local_query blocks, plus scripted
// client nodes (ScriptClient) that send protocol signals and record every answer.
//
//   SimCluster cluster({.node_groups = 1, .replicas = 2, .seed = 7});
//   ScriptClient& client = cluster.client();
//   client.send(cluster.dictionary(1), create_table_signal);
//   ASSERT_TRUE(cluster.run_until([&] { return client.has(kCreateTableConf); }));
//
// Data node ids are 1..groups*replicas (group g holds nodes g*replicas+1 ...); client
// nodes start at kFirstClientNode. With `membership` on, every data node also runs the
// membership block (heartbeats, agreed NODE_FAILREP, arbitration; NDB's QMGR) and a
// SimArbitrator runs on node kArbitratorNode. Each data node runs the real file system contract on
// a SimDisk (sim/sim_file_system.h) and has its own GlobalMemory; both outlive crashes
// of the node's blocks, like a machine's disk and its memory budget. A data node starts
// as duo_datad does: the distribution block runs the (system) restart, and the cluster
// is usable once every node reports started (wait_started()).
//
// Thread-safety: none (the simulator is single-threaded).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "ndb-kernel/membership/membership_block.h"
#include "ndb-kernel/membership/sim_arbitrator.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/runtime/block.h"
#include "ndb-kernel/sim/sim_file_system.h"
#include "ndb-kernel/sim/simulator.h"
#include "storage/memory/global_memory.h"
#include "storage/row/row_batch.h"

namespace duo::testing {

inline constexpr uint16_t kFirstClientNode = 100;
// The simulated arbitrator's node (SimClusterOptions::membership).
inline constexpr uint16_t kArbitratorNode = 99;

// What ScriptClient::scan() saw: the rows' batches in arrival order, the SCAN_TABCONFs
// and the rounds.
struct ScanOutcome {
  std::vector<storage::RowBatch> batches;
  size_t confs = 0;   // SCAN_TABCONFs received
  size_t rounds = 0;  // the SCAN_TABREQ's round and one per SCAN_TABNEXTREQ
  size_t rows() const;
};

// A client node's block (kApiBlock) that records what it receives. Tests send through
// send(), which injects the signal as if this block had sent it.
class ScriptClient : public kernel::Block {
 public:
  explicit ScriptClient(sim::Simulator* simulator);

  Status send(const kernel::BlockAddress& to, kernel::Signal signal);
  // Received signals, oldest first.
  std::deque<kernel::Signal>& inbox() { return inbox_; }
  bool has(kernel::SignalId id) const;
  // Removes and returns the first received signal with `id` (must exist: has(id)).
  kernel::Signal take(kernel::SignalId id);
  // Runs scan `req` to its end through `coordinator` as the client library does:
  // SCAN_TABREQ, then after each round's last SCAN_TABCONF (kScanRoundDone) one
  // SCAN_TABNEXTREQ, until kScanAllDone; the simulator runs meanwhile.
  // `between_rounds(round)`, when given, runs before each SCAN_TABNEXTREQ (round 1,
  // 2 ...). Other scans' signals stay in the inbox. The SCAN_TABREF's error, or kInternal
  // when an answer does not come within `limit_ms` of virtual time.
  Result<ScanOutcome> scan(const kernel::BlockAddress& coordinator, protocol::ScanTabReq req,
                           const std::function<void(size_t round)>& between_rounds = nullptr,
                           uint64_t limit_ms = 10'000);

 private:
  void on_any(kernel::Signal& signal);
  sim::Simulator* simulator_;
  std::deque<kernel::Signal> inbox_;
};

struct SimClusterOptions {
  uint32_t node_groups = 1;
  uint32_t replicas = 2;
  uint32_t log_parts = 4;
  uint32_t clients = 1;
  uint64_t seed = 1;
  size_t memory_pages_per_node = 512;  // 16 MiB
  uint64_t lock_wait_timeout_ms = 1200;
  uint64_t link_jitter_ns = 0;
  uint64_t gcp_interval_ms = 100;  // TimeBetweenGlobalCheckpoints (short: tests run fast)
  // Run the membership block on every data node and a SimArbitrator on kArbitratorNode.
  // Off, nothing tells the other data nodes that one crashed (the simulator has no link
  // events), as before node failure handling existed.
  bool membership = false;
  uint64_t heartbeat_interval_ms = 100;   // HeartbeatIntervalDbDb (short: tests run fast)
  uint64_t arbitration_timeout_ms = 750;  // ArbitrationTimeout
};

class SimCluster {
 public:
  explicit SimCluster(SimClusterOptions options);
  ~SimCluster();

  sim::Simulator& sim() { return *sim_; }
  const protocol::ClusterTopology& topology() const { return topology_; }
  ScriptClient& client(uint32_t index = 0) { return *clients_.at(index); }
  const std::vector<uint16_t>& data_nodes() const { return data_nodes_; }

  static kernel::BlockAddress dictionary(uint16_t node) {
    return {node, protocol::kDictionaryBlock, 0};
  }
  static kernel::BlockAddress coordinator(uint16_t node) {
    return {node, protocol::kCoordinatorBlock, 0};
  }
  // The live block of `node` (null when the node is down).
  template <typename B>
  B* block(uint16_t node, uint16_t block_number, uint16_t instance = 0) {
    return static_cast<B*>(sim_->find_block({node, block_number, instance}));
  }

  // Runs until `predicate` holds or `limit_ms` of virtual time pass.
  bool run_until(const std::function<bool()>& predicate, uint64_t limit_ms = 10'000);
  // Runs until every data node's distribution block reports started.
  bool wait_started(uint64_t limit_ms = 10'000);
  // The last GCI every data node knows complete (0 before the first GCP).
  uint32_t last_complete_gci();
  // Crashes every data node (unsynced disk writes are lost or torn as the seed decides)
  // and starts them again: a system restart.
  void crash_and_restart_all();
  // Calls `each` with every committed row of `table_id` held by `node` (all its log
  // parts), read straight from the fragments by a committed-read scan, which changes
  // nothing. The node must be up; the first scan error is returned.
  Status for_each_row(uint16_t node, uint32_t table_id,
                      const std::function<void(const storage::RowBatch::Row&)>& each);
  // Sends `create` (a CREATE_TABLEREQ) to node 1's dictionary as client 0, then fetches
  // the created table's definition from node `fetch_from`'s dictionary, as a client
  // would: what key operations on it need. An error if either answer does not come.
  Result<protocol::TableDef> create_table(kernel::Signal create, uint16_t fetch_from = 1);
  sim::SimDisk& disk(uint16_t node) { return *disk_.at(node); }
  // The live membership block of `node` (null when the node is down or membership off).
  membership::MembershipBlock* membership(uint16_t node) {
    return block<membership::MembershipBlock>(node, protocol::kMembershipBlock);
  }
  // The arbitrator (null with membership off).
  membership::SimArbitrator* arbitrator() {
    return block<membership::SimArbitrator>(kArbitratorNode, protocol::kArbitratorBlock);
  }

 private:
  const SimClusterOptions options_;
  protocol::ClusterTopology topology_;
  std::vector<uint16_t> data_nodes_;
  std::map<uint16_t, std::unique_ptr<storage::GlobalMemory>> memory_;
  std::map<uint16_t, std::unique_ptr<sim::SimDisk>> disk_;
  std::unique_ptr<sim::Simulator> sim_;
  std::vector<ScriptClient*> clients_;  // owned by the simulator's nodes
};

// Builders of the common requests.
kernel::Signal create_table_signal(uint32_t request_id, const storage::TableSchema& schema,
                                   uint32_t fragment_count = 0);
// One TC_KEYREQ; `body` as the operation needs (protocol::OpBody).
kernel::Signal key_signal(uint64_t api_tx, uint32_t op_index, const protocol::TableDef& table,
                          storage::OpType type, const protocol::OpBody& body, uint8_t flags,
                          storage::LockMode lock = storage::LockMode::kCommittedRead);

}  // namespace duo::testing
