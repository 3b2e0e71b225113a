// DistributionBlock: the global checkpoint protocol of a data node (NDB's DBDIH; the
// fragment placement itself is the pure function of protocol/distribution.h).
//
// A global checkpoint (GCP) makes a cluster-wide consistent point durable: every
// transaction commits in exactly one GCI (global checkpoint id), the same on every
// replica, and GCI g is "complete" once every node has the redo of every transaction
// of g on disk. A system restart recovers to the last complete GCI. The master (the
// lowest data node id) runs one round every TimeBetweenGlobalCheckpoints:
//
//   1. GCP_PREPAREREQ(g+1) -> every node: its coordinator stops starting commits
//      (GCP_BLOCKREQ) and the node answers GCP_PREPARECONF.
//   2. GCP_COMMITREQ(g+1) -> every node: the coordinator switches to g+1 and resumes
//      (GCP_SWITCHREQ); once its last commit of g has completed (all replicas
//      answered) it reports GCP_NOMORETRANS(g) and the node answers GCP_COMMITCONF(g).
//      From here on nothing can commit in g anywhere.
//   3. GCP_SAVEREQ(g) -> every node -> each local_query instance: write and sync the
//      redo up to g; GCP_SAVECONF back to the master once all instances did.
//   4. GCP_COMPLETEREP(g) -> every node: g is complete (and is what the node's sysfile
//      will record once the file system block exists).
//
// Commits are held back only between steps 1 and 2 (one round trip), as in NDB.
// Master takeover and GCP stop detection belong to the failover issue.
//
// Thread-safety: a Block; single-threaded. last_complete_gci() and current_gci() are
// atomics so the process (duo_datad's status reports) may read them from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/runtime/block.h"

namespace duo::distribution {

struct DistributionOptions {
  uint64_t gcp_interval_ms = 2000;  // TimeBetweenGlobalCheckpoints
  uint32_t first_gci = 1;           // the GCI the cluster starts committing in
};

class DistributionBlock : public kernel::Block {
 public:
  DistributionBlock(protocol::ClusterTopology topology, DistributionOptions options);
  ~DistributionBlock() override;

  void on_start() override;

  uint32_t last_complete_gci() const { return last_complete_gci_.load(); }
  uint32_t current_gci() const { return current_gci_.load(); }
  uint64_t completed_rounds() const { return completed_rounds_.load(); }
  bool is_master() const { return node_id() == master_; }

 private:
  // Master side.
  void on_gcp_timer(kernel::Signal& signal);
  void on_gcp_prepare_conf(kernel::Signal& signal);
  void on_gcp_commit_conf(kernel::Signal& signal);
  void on_gcp_save_conf(kernel::Signal& signal);
  // Every node.
  void on_gcp_prepare_req(kernel::Signal& signal);
  void on_gcp_block_conf(kernel::Signal& signal);
  void on_gcp_commit_req(kernel::Signal& signal);
  void on_gcp_no_more_trans(kernel::Signal& signal);
  void on_gcp_save_req(kernel::Signal& signal);
  void on_gcp_complete_rep(kernel::Signal& signal);

  void send_to_every_node(kernel::SignalId id, uint32_t gci);
  void send_local(uint16_t block, uint16_t instance, kernel::SignalId id, uint32_t gci);
  void answer_master(kernel::SignalId id, uint32_t gci);

  const protocol::ClusterTopology topology_;
  const DistributionOptions options_;
  const std::vector<uint16_t> data_nodes_;
  const uint16_t master_;

  std::atomic<uint32_t> current_gci_;
  std::atomic<uint32_t> last_complete_gci_{0};
  std::atomic<uint64_t> completed_rounds_{0};

  // Master: the round in progress.
  enum class Phase : uint8_t { kIdle, kPreparing, kCommitting, kSaving };
  Phase phase_ = Phase::kIdle;
  uint32_t round_gci_ = 0;   // the GCI being closed (g)
  uint32_t awaiting_ = 0;    // node answers still expected in this phase

  // Every node: local save in progress.
  uint32_t saving_gci_ = 0;
  uint32_t saves_awaited_ = 0;
};

}  // namespace duo::distribution
