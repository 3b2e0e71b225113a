// CoordinatorBlock: the transaction coordinator of a data node (NDB's DBTC).
//
// Clients (API nodes) send their operations here. For each operation the coordinator
// finds the fragment (distribution hash of the key), the replica chain and log part
// (protocol/distribution.h), and sends LQH_KEYREQ to the primary's local_query (a
// committed read of a read-backup table may go to a backup: "Read backup" below), which
// passes writes down the chain; the last replica answers. When a batch is complete the
// coordinator either answers the client (TC_KEYCONF with every operation's result),
// or commits: LQH_COMMITREQ to every replica that took part, and only when all of them
// have committed in memory is the client told "committed" — so no single node's death
// loses an acknowledged commit (DESIGN.md §5). An operation error aborts the whole
// transaction (LQH_ABORTREQ to every participant) unless the client marked that
// operation kOpIgnoreError and the error came from the primary (a backup failing an
// operation the primary applied would leave the replicas different: always fatal).
// Lock wait timeouts (1205) abort the transaction, as in NDB.
//
// Scans run in rounds (NDB's TC does the same with its scan batches): SCAN_TABREQ sends
// SCAN_FRAGREQ to the primary of every fragment at once (for a read-backup table, this
// node's replica where it holds one); the fragments' batches are collected and go to the
// client together, as one SCAN_TABCONF (several when they pass a signal's 64 KiB), the
// last one flagged kScanRoundDone once every fragment asked has answered. The client's
// SCAN_TABNEXTREQ then asks every fragment that has more for its next batch, again at
// once. So a scan costs the client one round trip per round, and a range that fits in
// the first batches (256 rows per fragment, a per-round byte budget divided over the
// fragments) costs one; at most one batch per fragment is in flight and one round is
// buffered at the client (flow control end to end).
//
// Batches travel packed (protocol/packed_signals.h): a client sends a batch's TC_KEYREQs
// as one PACKED_SIGNALS, and while the coordinator handles a pack (or a pack of replica
// answers) the LQH_KEYREQs / LQH_COMMITREQs / LQH_ABORTREQs it sends are collected per
// local_query instance and leave as packs when the handler ends. A pack that cannot be
// sent fails what each of its signals stood for, exactly as a refused single send does.
//
// Table definitions arrive from the local dictionary (TABLE_ADDREQ / TABLE_DROPREQ).
// NODE_FAILREP for an API node aborts that client's transactions and closes its scans.
// API_FAILREQ{node} from the membership block does the same and is answered
// API_FAILCONF{node} once the last of those transactions has ended (aborted, or
// committed when its commit had begun) and the last of those scans closed
// (coordinator_api_failure.cc): until then that node is held back, so a restarted client
// of the same node id cannot meet its old transactions under the same (node, api_tx)
// keys.
//
// NODE_FAILREP for a data node X (node failure handling, coordinator_takeover.cc): new
// operations and scans use the fragments' replica chains without X (the first live
// replica is the primary); a transaction with an operation outstanding at X or a
// participant on X is aborted at the survivors and its client gets kTemporary "Node
// failure caused abort of transaction" (NDB 4010, MySQL 1297); a commit or abort
// waiting for X counts X as done (the survivors hold every acknowledged commit); a scan
// with a fragment on X fails with the same temporary error. The lowest live data node's
// coordinator then takes over X's own transactions (NDB's TC takeover): it asks every
// live local_query instance which of X's transactions it holds (LQH_TRANSREQ /
// LQH_TRANSCONF), commits everywhere (in the commit's GCI) those that any participant
// committed, aborts the rest, and meanwhile holds its GCP_NOMORETRANS and tells its
// distribution block when done (TAKEOVER_DONEREP), so no GCI completes with a takeover
// commit unresolved.
//
// Node restart of a data node S (coordinator_node_restart.cc; docs/formats/
// kernel-protocol.md "Node restart"): NODE_STARTINGREP{S} from the local distribution
// block makes S a starting replica — no longer dead, placed last in every chain of its
// fragments (protocol::place_fragment_live with the starting set), so it takes every
// write of its fragments but is never primary: reads and scans never reach it — until
// NODE_STARTEDREP{S} makes it an ordinary replica. A starting node is not the takeover
// node either (that is the lowest live node not starting). On S itself, from its own
// NODE_STARTINGREP to its own NODE_STARTEDREP, the coordinator takes no transaction:
// key operations and scans from clients are refused with kTemporary "Node is starting,
// try another data node", as overload refusals are. A starting node that dies
// (NODE_FAILREP) is dead again: the failure handling above aborts what it took part in
// and its takeover runs again. Both reports are answered to the sender
// (NODE_STARTINGCONF / NODE_STARTEDCONF{S}). Without NODE_STARTINGREP for itself (a
// system or initial start) the coordinator takes transactions as before.
//
// Read backup (NDB's READ_BACKUP table option, protocol::kTableReadBackup in
// TableDef.flags): a committed (lock-free) read of such a table, and every fragment of a
// scan of it (scans read committed rows), is served by this node's own replica of the
// fragment when it holds a live one that is not starting — NDB's TC locality; otherwise
// by the primary, as for every other table. Locking reads always go to the primary (the
// lock lives there), and so do every read and scan of a transaction that already wrote
// or locked rows (its writes reach a backup only through the primary: a read sent
// straight to the backup could overtake them). This is safe because the client hears
// "committed" only after EVERY live replica answered LQH_COMMITCONF, and local_query
// answers it only after the commit is applied in memory and the row locks released
// (LocalQueryBlock::end_transaction): a read at any replica after the acknowledgement
// sees the row. A committed read never waits for a row lock: a row another transaction
// holds in prepare is read as its last committed image, on a backup as on the primary. A
// starting replica is never read (it is still copying rows). A read at a backup is sent
// with the whole chain and `position` at that backup; its refusal is ignorable
// (kOpIgnoreError) as a refusal from the primary is, since a read changes nothing.
// Counted in CoordinatorStats::backup_reads / backup_scan_fragments.
//
// Limits (MaxNoOfConcurrentTransactions, MaxNoOfConcurrentOperations,
// MaxNoOfConcurrentScans): a request beyond them is refused with kTemporary (MySQL
// 1297), nothing else is disturbed.
//
// Thread-safety: a Block; single-threaded by the runtime's contract.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/protocol/packed_signals.h"
#include "ndb-kernel/runtime/block.h"

namespace duo::coordinator {

// The refusal of a client's request at a node in a node restart (kTemporary): the
// client retries through another data node.
inline constexpr const char* kNodeStartingMessage = "Node is starting, try another data node";

struct CoordinatorOptions {
  uint32_t max_transactions = 4096;   // MaxNoOfConcurrentTransactions
  uint32_t max_operations = 32768;    // MaxNoOfConcurrentOperations
  uint32_t max_scans = 256;           // MaxNoOfConcurrentScans
  // Rows per fragment batch when SCAN_TABREQ asks for 0 (NDB's BatchSize default).
  uint32_t scan_batch_rows_default = 256;
  // Encoded bytes one round of a scan may bring to the client, divided over its
  // fragments (NDB's MaxScanBatchSize default): bounds what a client buffers per scan.
  uint32_t scan_round_bytes_max = 256 * 1024;
  uint32_t first_gci = 1;             // the GCI commits use until the first GCP switch
};

struct CoordinatorStats {
  uint64_t committed = 0;
  uint64_t aborted = 0;
  uint64_t operations = 0;
  uint64_t scans = 0;
  uint64_t refused_overload = 0;
  uint64_t malformed_signals = 0;
  uint64_t packs_received = 0;
  uint64_t packs_sent = 0;
  uint64_t node_failure_aborts = 0;    // transactions aborted by a data node's failure
  uint64_t takeover_commits = 0;       // dead coordinators' transactions committed
  uint64_t takeover_aborts = 0;        // ... and aborted
  uint64_t refused_starting = 0;       // requests refused while this node is starting
  uint64_t backup_reads = 0;           // committed reads served by a backup replica
  uint64_t backup_scan_fragments = 0;  // scan fragments served by a backup replica
};

class CoordinatorBlock : public kernel::Block {
 public:
  CoordinatorBlock(protocol::ClusterTopology topology, CoordinatorOptions options);
  ~CoordinatorBlock() override;

  size_t transaction_count() const { return transactions_.size(); }
  size_t operation_count() const { return operation_count_; }
  size_t scan_count() const { return scans_.size(); }
  // A takeover of a dead node's transactions is running or queued here.
  bool takeover_pending() const { return takeover_ != nullptr || !takeover_queue_.empty(); }
  uint64_t taken_over_commits() const { return stats_.takeover_commits; }
  uint64_t taken_over_aborts() const { return stats_.takeover_aborts; }
  uint32_t current_gci() const { return current_gci_; }
  // Node restart: this node is starting (takes no transactions), and the starting set.
  bool starting() const { return starting_here_; }
  const std::vector<uint16_t>& starting_nodes() const { return starting_nodes_; }
  const CoordinatorStats& stats() const { return stats_; }

 private:
  struct Operation;
  struct Transaction;
  struct Scan;
  struct Table {
    protocol::TableDef def;
    std::vector<uint32_t> unique_index_tables;  // a base table's hidden tables
    std::string index_name;                     // a hidden table's unique index
  };
  // Key of a client's transaction: (API node, its api_tx).
  struct ApiKey {
    uint16_t node = 0;
    uint64_t api_tx = 0;
    friend bool operator==(const ApiKey&, const ApiKey&) = default;
  };
  struct ApiKeyHash {
    size_t operator()(const ApiKey& key) const {
      return std::hash<uint64_t>()(key.api_tx * 0x9E3779B97F4A7C15ull ^ key.node);
    }
  };

  // PACKED_SIGNALS: handles each inner signal, collecting what it sends into packs.
  void on_packed_signals(kernel::Signal& signal);
  // Sends `signal` to a local_query block, through the packer while a pack is handled.
  Status send_to_replica(const kernel::BlockAddress& receiver, kernel::Signal signal);
  // A collected signal whose pack could not be sent: fail what it stood for.
  void on_unsent(const kernel::Signal& header, const Status& why);
  // Client requests.
  void on_tc_key_req(kernel::Signal& signal);
  void on_tc_commit_req(kernel::Signal& signal);
  void on_tc_rollback_req(kernel::Signal& signal);
  // Replica answers.
  void on_lqh_key_conf(kernel::Signal& signal);
  void on_lqh_key_ref(kernel::Signal& signal);
  void on_lqh_commit_conf(kernel::Signal& signal);
  void on_lqh_abort_conf(kernel::Signal& signal);
  // Scans.
  void on_scan_tab_req(kernel::Signal& signal);
  void on_scan_tab_next_req(kernel::Signal& signal);
  void on_scan_frag_conf(kernel::Signal& signal);
  void on_scan_frag_ref(kernel::Signal& signal);
  // Schema and membership.
  void on_table_add_req(kernel::Signal& signal);
  void on_table_drop_req(kernel::Signal& signal);
  void on_node_fail_rep(kernel::Signal& signal);
  void on_api_node_failed(uint16_t node);
  // API node failure hold-back (coordinator_api_failure.cc).
  void on_api_fail_req(kernel::Signal& signal);
  // Answers every API_FAILREQ whose node has nothing left here.
  void answer_api_failures_if_done();
  // Node restart (coordinator_node_restart.cc).
  void on_node_starting_rep(kernel::Signal& signal);
  void on_node_started_rep(kernel::Signal& signal);
  bool is_starting(uint16_t node) const;
  // The replica chain of `def`'s `fragment` over live and starting nodes (starting ones
  // last).
  protocol::FragmentPlacement live_placement(const protocol::TableDef& def,
                                             uint32_t fragment) const;
  // Where in `placement`'s chain a committed read or a scan of `def` for `tx` (null: a
  // scan outside a transaction) runs: 0 (the primary), or this node's own replica for
  // a read-backup table ("Read backup" above).
  uint32_t read_position(const protocol::TableDef& def,
                         const protocol::FragmentPlacement& placement,
                         const Transaction* tx) const;
  // Node failure handling and the takeover (coordinator_takeover.cc).
  void on_data_node_failed(uint16_t node);
  bool is_data_node(uint16_t node) const;
  bool is_dead(uint16_t node) const;
  // The lowest live data node: it takes over dead nodes' transactions.
  bool is_takeover_node() const;
  void start_next_takeover();
  void on_lqh_trans_conf(kernel::Signal& signal);
  // Decides and sends the commits / aborts once every instance answered.
  void resolve_takeover();
  // An LQH_COMMITCONF / LQH_ABORTCONF of a taken-over transaction (true if it was one).
  bool on_takeover_answer(uint64_t transid, const kernel::BlockAddress& sender);
  void finish_takeover_if_done();
  // Marks the participant `sender` of tx answered; false if it was not awaited.
  bool mark_answered(Transaction& tx, const kernel::BlockAddress& sender);
  // Global checkpoints (distribution block): hold commits, switch GCI, report.
  void on_gcp_block_req(kernel::Signal& signal);
  void on_gcp_switch_req(kernel::Signal& signal);
  void report_no_more_trans_if_done();

  // Routes operation tx.ops[tc_op] by the key in `body` and sends its LQH_KEYREQ (to
  // the primary, or the replica read_position picks); an error says why it was not sent.
  Status send_operation(Transaction& tx, uint32_t tc_op, const protocol::TableDef& def,
                        storage::OpType type, storage::LockMode lock, uint8_t flags,
                        protocol::Bytes body);
  // Unique indexes (coordinator_unique.cc): runs the index changes a base operation's
  // LQH_KEYCONF carries as operations of its transaction; false if there were none.
  bool start_index_changes(Transaction& tx, uint32_t tc_op, const protocol::Bytes& changes);
  // An answer to a child operation (kOk or the error of its LQH_KEYREF).
  void child_done(Transaction& tx, Operation& child, ErrorCode error, std::string message);
  void add_table(protocol::TableDef def);
  void drop_table(uint32_t table_id);
  Transaction* find_or_create(const ApiKey& key, ErrorCode* refusal);
  Transaction* by_transid(uint64_t transid);
  uint64_t next_transid();
  // Records an operation's failure; decides whether it dooms the transaction.
  void fail_operation(Transaction& tx, Operation& op, ErrorCode error, std::string message,
                      bool fatal);
  // Called whenever an operation finishes: completes the batch when nothing is pending.
  void maybe_finish_batch(Transaction& tx);
  void start_commit(Transaction& tx);
  void send_commit(Transaction& tx);
  void start_abort(Transaction& tx);
  void on_participant_done(uint64_t transid);
  // Sends the buffered results to the client (several signals if large) with `flags`
  // on the last one, then resets the buffer.
  void reply(Transaction& tx, uint32_t flags);
  void release(Transaction& tx);
  void send_to_participants(Transaction& tx, kernel::SignalId id);

  Scan* find_scan(uint16_t api_node, uint64_t api_tx, uint32_t scan_id);
  // Sends the collected fragment batches to the client as one SCAN_TABCONF with `flags`.
  void send_scan_batches(Scan& scan, uint32_t flags);
  void fail_scan(Scan& scan, ErrorCode error, std::string message);
  void close_scan_fragments(Scan& scan);
  void release_scan_if_idle(Scan& scan);

  void send_tc_error(const kernel::BlockAddress& client, uint64_t api_tx, ErrorCode error,
                     std::string message);

  const protocol::ClusterTopology topology_;
  const CoordinatorOptions options_;
  const std::vector<uint16_t> data_nodes_;  // ascending

  // Node failure: dead data nodes (ascending) and the takeover in progress.
  // The takeover of one dead node's transactions.
  struct Takeover {
    struct Taken {
      uint32_t commit_gci = 0;  // the GCI a participant committed it in; 0: none did
      std::set<std::pair<uint16_t, uint16_t>> prepared;  // (node, log part) holding it
      std::set<std::pair<uint16_t, uint16_t>> awaiting;  // COMMITCONF / ABORTCONF expected
    };
    uint16_t dead = 0;
    bool resolving = false;  // every instance answered; commits / aborts are out
    std::set<std::pair<uint16_t, uint16_t>> unanswered;  // instances still to send their last
    std::map<uint64_t, Taken> transactions;              // by transid
  };
  std::vector<uint16_t> dead_nodes_;
  std::vector<uint16_t> takeover_queue_;  // dead nodes whose takeover is still to run
  std::vector<uint16_t> takeovers_done_;  // dead nodes this node took over
  std::unique_ptr<Takeover> takeover_;
  // Node restart: data nodes between NODE_STARTINGREP and NODE_STARTEDREP (ascending),
  // and whether this node is one of them (then it coordinates nothing).
  std::vector<uint16_t> starting_nodes_;
  bool starting_here_ = false;

  std::unordered_map<uint32_t, Table> tables_;
  using TransactionMap = std::unordered_map<ApiKey, std::unique_ptr<Transaction>, ApiKeyHash>;
  using TransidMap = std::unordered_map<uint64_t, Transaction*>;
  TransactionMap transactions_;
  TransidMap by_transid_;
  // Released transactions, kept for the next ones: the record with its map entries (node
  // handles), so beginning and ending a transaction allocates nothing (at most
  // kSpareTransactionsMax, the rest are freed).
  struct SpareTransaction {
    TransactionMap::node_type record;
    TransidMap::node_type by_transid;
  };
  static constexpr size_t kSpareTransactionsMax = 256;
  std::vector<SpareTransaction> spare_transactions_;
  std::map<uint32_t, std::unique_ptr<Scan>> scans_;  // by scan record id
  uint32_t next_scan_ptr_ = 1;
  uint64_t transid_counter_ = 0;
  size_t operation_count_ = 0;

  // Global checkpoints: every commit happens in current_gci_; between GCP_BLOCKREQ and
  // GCP_SWITCHREQ new commits wait (in order) so no transaction straddles two GCIs.
  uint32_t current_gci_;
  bool commits_blocked_ = false;
  std::vector<uint64_t> blocked_commits_;       // transids, in arrival order
  std::vector<uint64_t> releasing_commits_;     // blocked ones being sent (on_gcp_switch_req)
  // (gci, commits not yet complete), ascending by GCI: few entries (the current GCI and,
  // around a GCP switch, the one before), so a sorted vector that allocates nothing
  // once grown.
  std::vector<std::pair<uint32_t, uint32_t>> committing_in_gci_;
  uint32_t closing_gci_ = 0;                    // GCI whose last commit we wait for
  kernel::BlockAddress gcp_requester_;
  protocol::SignalPacker packer_;
  CoordinatorStats stats_;
  // send_operation's decoded key, kept so that decoding allocates only while it grows.
  storage::AttrValues key_scratch_;

  // API_FAILREQs not answered yet: the failed API node, its scans when the request came
  // (their client address is cleared then, so they are remembered by record id), and
  // who asked.
  struct ApiFailure {
    uint16_t node = 0;
    std::vector<uint32_t> scans;
    kernel::BlockAddress requester;
  };
  std::vector<ApiFailure> api_failures_;
};

}  // namespace duo::coordinator
