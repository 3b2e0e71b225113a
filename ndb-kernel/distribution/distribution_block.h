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
//   4. GCP_COMPLETEREP(g) -> every node: g is complete; each node records it in its
//      sysfile, and last_complete_gci() reports it once that write is durable; then it
//      answers GCP_COMPLETECONF(g). The master starts the next round only after every
//      node has, so a restart never recovers to less than the last GCI a node saved
//      redo for minus one (local_query's checkpoints rely on this bound).
//
// Commits are held back only between steps 1 and 2 (one round trip), as in NDB.
// Each node records every complete GCI in its sysfile (dih/sysfile, two alternating
// copies).
//
// System restart. At start every node reads its sysfile and reports its last complete
// GCI to the master (RESTART_INFOREP, repeated until answered: links may not be up
// yet). The master waits for every data node and picks the highest: a GCI is complete
// only once every node has its redo on disk, so every node can recover to it. Each node
// then restores — the dictionary re-creates the tables (DICT_RESTOREREQ), each
// local_query instance loads its checkpoint and replays its redo up to that GCI
// (LQH_RESTOREREQ) — and reports RESTART_DONEREP; when all have, the master announces
// CLUSTER_STARTEDREP and commits resume in GCI g + 1. A cluster where some nodes have
// data and others none (an initial start of one node) cannot be recovered this way:
// the master refuses and every node reports the error (node recovery of a single node
// is the failover issue).
//
// Node failure (NODE_FAILREP of a data node, after the survivors agreed; the node
// failure handling of DESIGN.md §5). The node goes on without the dead one: GCP rounds
// run over the live nodes, and the commit phase of a round does not finish while the
// coordinator is still taking over a dead node's transactions (TAKEOVER_DONEREP), so a
// GCI never completes with a takeover commit in it unresolved. If the master died, the
// lowest live node becomes master and finishes the round in progress: it asks every
// live node where it is (MASTER_GCPREQ / MASTER_GCPCONF) and resumes from the furthest
// phase any node reached (docs/formats/kernel-protocol.md "Node failure: takeover").
// A node group left with no live node stops this node (state kFailed, with that
// reason): its rows are gone. The sysfile records each dead node and the GCI it died
// in, so a later system restart neither waits for it nor restores from it; the dead
// node itself cannot rejoin yet (node restart: copying from the live replica) and is
// refused. A peer stopping on purpose announces it (NODE_STOPPINGREP) so that a stop it
// causes is reported as a clean one. GCP stop detection is not done here.
//
// Thread-safety: a Block; single-threaded. last_complete_gci() and current_gci() are
// atomics so the process (duo_datad's status reports) may read them from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ndb-kernel/fs_client/dual_copy_file.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/runtime/block.h"

namespace duo::distribution {

struct DistributionOptions {
  uint64_t gcp_interval_ms = 2000;  // TimeBetweenGlobalCheckpoints
  // How often a restarting node repeats its report to the master until answered.
  uint64_t restart_retry_ms = 200;
  // StartPartialTimeout (duo_datad passes the configured one; NDB's default is 30000):
  // how long a system restart that would go on without the data nodes its sysfile
  // records dead first waits — for them, or for one of them to answer that it runs a
  // cluster (then this node starts by a node restart instead).
  uint64_t partial_start_wait_ms = 3000;
};

// Where the node is in its start (read by duo_datad for its status reports).
enum class NodeStartState : uint8_t {
  kReadingSysfile = 0,
  kWaitingForNodes = 1,  // reported to the master, waiting for every data node
  kRestoring = 2,        // restoring schema and data up to the restart GCI
  kWaitingForStart = 3,  // restored, waiting for the other nodes
  kStarted = 4,
  kFailed = 5,  // cannot start: see failure()
  // Node restart (distribution_node_restart.cc): the cluster runs without this node.
  kJoining = 6,  // asking the master to start (START_PERMREQ)
  kCopying = 7,  // wiped, schema copied, rows being copied from the live replica
};
const char* node_start_state_name(NodeStartState state);

class DistributionBlock : public kernel::Block {
 public:
  DistributionBlock(protocol::ClusterTopology topology, DistributionOptions options);
  ~DistributionBlock() override;

  void on_start() override;

  NodeStartState start_state() const { return start_state_.load(); }
  // The GCI this start recovers to (valid from kRestoring on).
  uint32_t restart_gci() const { return restart_gci_.load(); }
  // Why the node cannot go on (only read after start_state() returned kFailed).
  std::string failure() const;
  // kFailed because a peer stopped on purpose (a clean stop, not a crash).
  bool failure_is_clean() const { return failure_is_clean_.load(); }
  uint32_t last_complete_gci() const { return last_complete_gci_.load(); }
  uint32_t current_gci() const { return current_gci_.load(); }
  uint64_t completed_rounds() const { return completed_rounds_.load(); }
  bool is_master() const { return node_id() == master_; }
  // Block thread only (or with the runtime stopped, as tests under the simulator do).
  uint16_t master() const { return master_; }
  // Dead data nodes and the GCI each died in (the sysfile's record).
  const std::map<uint16_t, uint32_t>& dead_nodes() const { return dead_since_; }
  // Live nodes back from a node restart whose own checkpoint is not yet complete: the
  // sysfile still records them dead (a system restart must not restore from them).
  const std::map<uint16_t, uint32_t>& unrecovered_nodes() const { return unrecovered_; }
  // Node restarts this node (as master) has completed.
  uint64_t node_restarts_completed() const { return node_restarts_completed_.load(); }
  // This node started by a node restart (copying from the live replicas), not by
  // restoring its own disk.
  bool started_by_node_restart() const { return started_by_node_restart_.load(); }
  // What the start is doing, for ALL STATUS `startinfo` and the start phase log (any
  // thread): the state's name, during a node restart with the local recovery and the
  // copy's progress, e.g. "node restart: copying rows: 45% (12 of 27 fragments, 410
  // changed rows, 9000 unchanged)".
  std::string start_info() const;
  // Node restart of this node: the GCI it restored from its own disk before the copy
  // (0: it copied every row — --initial, a disk that was not a full replica, or a
  // failed local recovery).
  uint32_t local_recovery_gci() const { return local_recovery_gci_.load(); }

 private:
  // Master side.
  void on_gcp_timer(kernel::Signal& signal);
  void on_gcp_prepare_conf(kernel::Signal& signal);
  void on_gcp_commit_conf(kernel::Signal& signal);
  void on_gcp_save_conf(kernel::Signal& signal);
  void on_gcp_complete_conf(kernel::Signal& signal);
  // Every node.
  void on_gcp_prepare_req(kernel::Signal& signal);
  void on_gcp_block_conf(kernel::Signal& signal);
  void on_gcp_commit_req(kernel::Signal& signal);
  void on_gcp_no_more_trans(kernel::Signal& signal);
  void on_gcp_save_req(kernel::Signal& signal);
  void on_gcp_complete_rep(kernel::Signal& signal);
  // System restart.
  void on_restart_info_rep(kernel::Signal& signal);   // master
  void on_restart_done_rep(kernel::Signal& signal);   // master
  void on_restart_gci_rep(kernel::Signal& signal);
  void on_dict_restore_conf(kernel::Signal& signal);
  void on_lqh_restore_conf(kernel::Signal& signal);
  void on_cluster_started_rep(kernel::Signal& signal);
  void on_restart_timer(kernel::Signal& signal);
  // Sends this node's restart report to the master now and every restart_retry_ms
  // until the state moves on (links may not be up yet, answers may be lost).
  void start_reporting();
  void repeat_report();
  void on_fs_answer(kernel::Signal& signal);
  void fail_start(std::string why);
  void on_node_fail_rep(kernel::Signal& signal);
  // Node failure handling (distribution_failover.cc).
  bool is_dead(uint16_t node) const { return dead_since_.count(node) != 0; }
  // A GCP request from a node this one declared dead: a frozen master that resumed,
  // or its requests queued on a link that closed late. Dropped (they would move this
  // node's GCI state backwards).
  bool from_dead_node(const kernel::Signal& signal) const;
  uint16_t lowest_live_node() const;
  void on_takeover_done_rep(kernel::Signal& signal);
  void on_master_gcp_req(kernel::Signal& signal);
  void on_master_gcp_conf(kernel::Signal& signal);
  // New master, every live node answered: resume from the furthest phase any reached.
  void resume_gcp_after_master_takeover();
  // Master: the phase in progress ends once every live node answered (and, for the
  // commit phase, every takeover is done).
  void advance_round_if_answered();
  // After a restart: the blocks of this node learn which nodes the sysfile lists dead.
  void announce_dead_nodes_locally();
  // A node group whose every node is dead or starting (its rows are gone), or -1.
  int lost_node_group() const;
  void on_node_stopping_rep(kernel::Signal& signal);
  // Node restart (distribution_node_restart.cc).
  // Starting node.
  void begin_node_restart(uint16_t master);
  void send_start_perm_req();
  void on_start_perm_conf(kernel::Signal& signal);
  void on_start_perm_ref(kernel::Signal& signal);
  void on_node_restart_init_conf(kernel::Signal& signal);
  void on_dict_copy_conf(kernel::Signal& signal);
  void on_dict_copy_ref(kernel::Signal& signal);
  void on_lcp_start_conf(kernel::Signal& signal);
  // Local recovery before the copy (the restore to the sysfile's GCI), its fallback to
  // the full copy, and the copy progress reports of this node's instances.
  // Lowers the local recovery GCI to what this node surely has: see its comment.
  void cap_local_recovery_gci(uint32_t declared_dead_in);
  void start_full_copy();
  void fall_back_to_full_copy(const std::string& why);
  void on_local_schema_restored(kernel::Signal& signal);
  void on_local_part_restored(kernel::Signal& signal);
  void on_copy_progress_rep(kernel::Signal& signal);
  // Master.
  void on_start_perm_req(kernel::Signal& signal);
  void on_dict_lock_conf(kernel::Signal& signal);
  void request_include();
  void on_include_node_conf(kernel::Signal& signal);
  void on_include_node_ref(kernel::Signal& signal);
  void on_node_restart_ready_rep(kernel::Signal& signal);
  void on_copy_node_conf(kernel::Signal& signal);  // also a node's own instances
  void on_copy_node_ref(kernel::Signal& signal);
  void send_node_started_if_idle();
  void on_node_recoverable_rep(kernel::Signal& signal);
  void abort_node_restart(const std::string& why);
  void finish_node_restart();
  // Every node.
  void on_node_starting_rep(kernel::Signal& signal);
  void on_node_starting_conf(kernel::Signal& signal);
  void on_copy_node_req(kernel::Signal& signal);
  void on_node_started_rep(kernel::Signal& signal);
  void on_node_started_conf(kernel::Signal& signal);
  void on_node_restart_timer(kernel::Signal& signal);
  // The coordinator, dictionary and every local_query instance of this node.
  std::vector<kernel::BlockAddress> local_blocks() const;
  // Sends `id` {node, extra} to each of local_blocks(); returns how many were sent.
  uint32_t tell_local_blocks(kernel::SignalId id, uint16_t node, uint32_t extra = 0);
  uint16_t node_group_of(uint16_t node) const;

  void send_to_master(kernel::Signal signal);
  void write_sysfile(uint32_t gci);
  // The sysfile's bytes: `gci`, then the nodes recorded dead (unrecovered ones too).
  fs_client::Bytes sysfile_payload(uint32_t gci) const;
  // Node restart, before any old file of this node goes (NODE_RESTART_INITREQ, keep
  // or not): the sysfile records this node itself dead, durably, so a crash from here
  // on never takes the disk for a recovery point again (the next restart copies all).
  void record_self_dead_then_init(uint32_t init_mode);
  void on_sysfile_written(uint32_t gci);

  // `extra` (word 1) rides along: GCP_COMPLETEREP's node that became recoverable.
  void send_to_every_node(kernel::SignalId id, uint32_t gci, uint32_t extra = 0);
  void send_local(uint16_t block, uint16_t instance, kernel::SignalId id, uint32_t gci);
  void answer_master(kernel::SignalId id, uint32_t gci);

  const protocol::ClusterTopology topology_;
  const DistributionOptions options_;
  const std::vector<uint16_t> data_nodes_;
  uint16_t master_;  // the lowest live data node

  std::atomic<NodeStartState> start_state_{NodeStartState::kReadingSysfile};
  std::atomic<uint32_t> restart_gci_{0};
  std::atomic<uint32_t> current_gci_{0};
  std::atomic<uint32_t> last_complete_gci_{0};
  std::atomic<uint64_t> completed_rounds_{0};

  // Master: the round in progress.
  enum class Phase : uint8_t { kIdle, kPreparing, kCommitting, kSaving, kCompleting };
  Phase phase_ = Phase::kIdle;
  uint32_t round_gci_ = 0;   // the GCI being closed (g)
  std::set<uint16_t> awaiting_;  // nodes whose answer this phase still expects

  // Node failure.
  std::map<uint16_t, uint32_t> dead_since_;  // dead data node -> the GCI it died in
  std::set<uint16_t> takeover_pending_;      // master: dead nodes not yet taken over
  std::set<uint16_t> takeovers_done_;        // TAKEOVER_DONEREP received
  uint32_t prepared_gci_ = 0;                // GCP_PREPAREREQ seen, its GCP_COMMITREQ not yet
  // New master: each live node's answer to MASTER_GCPREQ (current, prepared, complete).
  struct NodeGcpState {
    uint32_t current_gci = 0;
    uint32_t prepared_gci = 0;
    uint32_t complete_gci = 0;
  };
  bool master_takeover_ = false;
  std::map<uint16_t, NodeGcpState> master_gcp_states_;

  // The node whose GCP request this node answers (the master that sent it: during a
  // master handover after a node restart the two may briefly differ).
  uint16_t round_master_ = 0;

  // Node restart, on the starting node.
  uint32_t node_restart_generation_ = 0;  // names the START_PERMREQ repeat timer
  uint32_t inits_awaited_ = 0;
  uint32_t lcps_awaited_ = 0;
  std::atomic<bool> started_by_node_restart_{false};
  uint64_t copy_start_ns_ = 0;
  // Local recovery (see distribution_node_restart.cc): the sysfile listed this node
  // itself dead (its disk is not a full replica), and the step of the recovery.
  bool own_sysfile_lists_self_ = false;
  enum class LocalRecoveryStep : uint8_t {
    kNone,             // full copy
    kRestoringSchema,  // DICT_RESTOREREQ: the node's own schema file
    kRestoringData,    // LQH_RESTOREREQ(G) on every instance
    kCopyingSchema,    // DICT_COPYREQ: tables changed meanwhile are replaced, empty
    kKeeping,          // NODE_RESTART_INITREQ(keep): old files go, rows stay
    kCopying,          // NODE_RESTART_READYREP sent
  };
  LocalRecoveryStep local_step_ = LocalRecoveryStep::kNone;
  std::atomic<uint32_t> local_recovery_gci_{0};
  std::atomic<bool> local_restoring_{false};
  uint32_t local_restores_awaited_ = 0;
  std::string local_restore_failure_;
  // (table id, version) -> instances that kept its restored rows.
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> restored_table_parts_;
  // Copy progress, by instance: fragments held, fragments copied, rows whole, keys.
  struct PartProgress {
    uint32_t fragments = 0, fragments_done = 0;
    uint64_t full_rows = 0, key_rows = 0;
  };
  std::map<uint16_t, PartProgress> copy_progress_;
  std::atomic<uint32_t> progress_fragments_{0};
  std::atomic<uint32_t> progress_fragments_done_{0};
  std::atomic<uint64_t> progress_full_rows_{0};
  std::atomic<uint64_t> progress_key_rows_{0};
  uint64_t progress_logged_ns_ = 0, progress_logged_rows_ = 0;
  // Node restart, on the master: at most one at a time.
  struct NodeRestart {
    enum class Step : uint8_t {
      kLockingSchema,
      kIncluding,
      kPreparing,
      kStarting,
      kCopying,
      kStarted
    };
    uint16_t node = 0;
    Step step = Step::kLockingSchema;
    std::set<uint16_t> awaiting;  // nodes whose STARTING/COPY/STARTED answer is due
    bool started_sent = false;    // NODE_STARTEDREP went out (step kStarted)
    uint32_t include_attempts = 0;
    uint64_t rows = 0;
    uint64_t start_ns = 0;
    // From NODE_RESTART_READYREP: the GCI the node restored, the tables it restored.
    uint32_t since_gci = 0;
    fs_client::Bytes restored_tables;
  };
  std::optional<NodeRestart> node_restart_;
  uint16_t revive_next_round_ = 0;  // recoverable: revived at the next round's completion
  uint16_t round_revive_ = 0;       // ... revived at this round's GCP_COMPLETEREP
  // Recoverable too, each waiting for a round of its own (a round revives one node).
  std::set<uint16_t> revive_later_;
  std::atomic<uint64_t> node_restarts_completed_{0};
  // Every node: the requester of a COPY_NODEREQ and what its instances answered.
  kernel::BlockAddress copy_requester_;
  uint16_t copy_node_ = 0;
  uint32_t copies_awaited_ = 0;
  uint64_t copy_rows_ = 0;
  uint32_t copy_fragments_ = 0;
  // Every node: local blocks whose NODE_STARTING/STARTEDCONF is due, and the request.
  uint32_t local_answers_awaited_ = 0;
  kernel::BlockAddress local_answer_to_;
  kernel::SignalId local_answer_id_ = 0;
  uint16_t local_answer_node_ = 0;
  std::map<uint16_t, uint32_t> unrecovered_;  // see unrecovered_nodes()

  // Every node: local save in progress.
  uint32_t saving_gci_ = 0;
  uint32_t saves_awaited_ = 0;
  uint32_t recorded_gci_ = 0;  // the newest GCI handed to the sysfile writer

  // System restart.
  std::unique_ptr<fs_client::DualCopyFile> sysfile_;
  uint32_t sysfile_gci_ = 0;      // this node's last complete GCI from its sysfile
  uint32_t restores_awaited_ = 0;
  uint32_t report_generation_ = 0;  // the restart timer of another generation is stale
  std::map<uint16_t, uint32_t> reported_gci_;  // master: node -> its sysfile GCI
  std::set<uint16_t> restored_nodes_;          // master
  bool restart_decided_ = false;               // master
  uint64_t partial_start_since_ns_ = 0;        // master: every live-recorded node reported
  bool running_cluster_seen_ = false;          // a running node answered our report
  std::string restart_refusal_;                // master: why the cluster cannot start
  bool cluster_started_ = false;               // master: CLUSTER_STARTEDREP sent
  std::string failure_;  // written on the block thread before start_state_ = kFailed
  std::atomic<bool> failure_is_clean_{false};  // a peer stopped on purpose
  std::set<uint16_t> stopping_nodes_;          // peers that announced a clean stop
};

}  // namespace duo::distribution
