// LocalQueryBlock: the data node's local_query block (NDB's DBLQH, with DBTUP, DBACC and
// DBTUX folded in through storage::Fragment). One instance runs per log part (LDM
// thread); it owns the fragments whose replica this node holds in that log part and
// executes on them what coordinators ask (protocol/messages.h describes the flow):
//
//   - Key operations (LQH_KEYREQ) inside a local transaction per transid, holding one
//     storage transaction per fragment touched. A write runs here, then is forwarded
//     unchanged but for position+1 to the next replica of the chain; the last replica
//     answers LQH_KEYCONF to the coordinator. Reads run where they are sent and answer
//     with the row. Any failure answers LQH_KEYREF and stops the chain, so every
//     operation gets exactly one answer at the coordinator.
//   - Row-lock waits: a parked operation keeps a wait record and a timer
//     (TransactionDeadlockDetectionTimeout). Whenever locks may have been released the
//     block drains the fragment's ready operations and resumes them, continuing exactly
//     as a first execution would; the timer refuses the ones still waiting with
//     kLockWaitTimeout (MySQL 1205).
//   - Commit / abort (LQH_COMMITREQ / LQH_ABORTREQ) of everything a transid holds here;
//     both are idempotent.
//   - Scans (SCAN_FRAGREQ / SCAN_FRAGNEXTREQ) in batches bounded in rows and bytes.
//   - Tables (TABLE_ADDREQ / TABLE_DROPREQ) from the local dictionary.
//   - Durability (docs/formats/redo-and-lcp.md): every commit appends its changes,
//     tagged with the commit's GCI, to the part's redo log (redo_log.h), written out
//     through the node's file system block and synced on GCP_SAVEREQ
//     (local_query_redo.cc); full or partial local checkpoints on LCP_STARTREQ or after
//     enough redo (checkpoint.h, local_query_checkpoint.cc); and the system restart's
//     restore from the last checkpoint plus redo up to a GCI (LQH_RESTOREREQ, restore.cc).
//
//   - Node failure (NODE_FAILREP of a data node; local_query_takeover.cc): writes are
//     forwarded along the chain with dead replicas skipped, requests and scans from the
//     dead node are dropped, and the takeover coordinator's LQH_TRANSREQ is answered
//     with the dead node's transactions held here: prepared ones, and committed ones
//     (a commit is remembered with its GCI until that GCI's GCP_SAVEREQ, by which time
//     every participant of it has committed).
//
//   - Node restart (local_query_node_restart.cc; docs/formats/kernel-protocol.md "Node
//     restart"). On the starting node S: NODE_RESTART_INITREQ wipes the old life (the
//     checkpoint and redo, and the tables unless S just restored its own disk to GCI G:
//     then the rows stay and only what changed since G is copied, the rest confirmed by
//     key and the rows deleted meanwhile swept) and puts the part in copying state until
//     NODE_STARTEDREP{S}:
//     unique indexes are not enforced and an operation on a row S does not have yet is
//     lenient (update/delete/interpreted update of a missing row do nothing, an insert
//     of an existing row overwrites it); COPY_ROWSREQ batches from the live replica are
//     written at once (insert-or-overwrite, no redo: S's checkpoint after the restart
//     covers them). On every node NODE_STARTINGREP{S} makes S a starting replica (no
//     longer dead, last in every chain). On the live replicas COPY_NODEREQ{S} copies,
//     fragment after fragment in slices, every fragment whose live chain starts here and
//     holds S: each row is taken again by key under a shared lock in a copy transaction
//     (a row being written is retried a little later, never waited for), sent to S, and
//     the batch's locks are released once S confirmed it, so a writer's change reaches
//     S either through the chain or through the copy.
//
//   - Packed signals (PACKED_SIGNALS, protocol/packed_signals.h): each inner signal is
//     handled as if it came alone; what the block sends meanwhile to coordinators and
//     other local_query instances (answers, forwarded writes) leaves as packs when the
//     pack is done, so a batch stays a batch all along the replica chain.
//
// Every table, transaction, lock wait and scan count is bounded by LocalQueryOptions; a
// request over a bound is refused with kTemporary (the client retries), never queued.
// Malformed signals are logged and dropped.
//
// Thread-safety: a block is single-threaded (runtime/block.h). The accessors at the
// bottom read block state, so they may only be called on the block's thread, or while
// the runtime is stopped (tests under the simulator call them between events).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/local_query/checkpoint.h"
#include "ndb-kernel/local_query/checkpoint_rate.h"
#include "ndb-kernel/local_query/redo_log.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/protocol/packed_signals.h"
#include "ndb-kernel/protocol/unique_index.h"
#include "ndb-kernel/runtime/block.h"
#include "storage/fragment/fragment.h"
#include "storage/memory/global_memory.h"
#include "storage/scan/filter.h"

namespace duo::local_query {

struct LocalQueryOptions {
  // TransactionDeadlockDetectionTimeout: how long an operation may wait for a row lock
  // before it is refused with kLockWaitTimeout (MySQL 1205).
  uint64_t lock_wait_timeout_ms = 1200;
  // Rows per scan batch when SCAN_FRAGREQ asks for 0 (NDB's BatchSize default).
  uint32_t scan_batch_rows_default = 256;
  // A scan batch stops once its encoded size passes this (or SCAN_FRAGREQ's
  // batch_bytes, when smaller), but always holds at least one row. Rows are at most
  // kMaxRowSizeBytes, so a batch stays under the 64 KiB section limit; larger settings
  // are clamped to kScanBatchBytesLimit.
  size_t scan_batch_bytes_max = 32 * 1024;
  // MaxNoOfConcurrentScans: scans open at once on this instance.
  size_t concurrent_scans_max = 256;
  // MaxNoOfConcurrentTransactions (per instance): transids holding local state here.
  size_t transactions_max = 16384;
  // Operations parked on row locks at once on this instance.
  size_t lock_waits_max = 4096;
  // RedoBuffer: redo bytes buffered before they are written. Past 3/4 of it new write
  // operations are refused with kTemporary "REDO buffers overloaded" (NDB error 1221).
  size_t redo_buffer_bytes = 32u << 20;
  // FragmentLogFileSize: a redo file is switched away from once it holds this much.
  uint64_t redo_file_bytes = 16u << 20;
  // NoOfFragmentLogFiles: the redo files of this log part bound its redo space
  // (redo_log.h). From half of it a checkpoint starts (unthrottled) to free files; past
  // 3/4 new write operations are refused with kTemporary "REDO log files overloaded"
  // (NDB error 410). 0 (the default outside datad): unbounded.
  uint32_t redo_file_count = 0;
  // A local checkpoint starts by itself once this much redo was written since the
  // last one started.
  uint64_t lcp_redo_bytes = 64u << 20;
  // CompressedLCP: zstd-compress checkpoint data chunks.
  bool compress_lcp = false;
  // EnablePartialLcp: a checkpoint writes, per fragment, the rows changed since the last
  // one, the keys deleted, and every row of one of `lcp_parts` row-ref parts in turn
  // (checkpoint.h); a restore reads at most `lcp_parts` files per fragment. 0 or
  // 1 part: every checkpoint is full.
  uint32_t lcp_parts = 0;
  // Rows a checkpoint scans per slice (one LQH_CONTINUE); key operations are served
  // between slices.
  uint32_t lcp_slice_rows = 256;
  // MaxDiskWriteSpeed and its family: this instance's share of the node's checkpoint
  // write rate limits (checkpoint_rate.h). All 0: no limit.
  LcpWriteSpeeds lcp_write_speeds;
  // How long an index build waits for the table's transactions to end (new ones being
  // refused meanwhile) before the ALTER is refused with kTemporary and undone: an idle
  // open transaction must not make the table unavailable for long.
  uint64_t alter_wait_ms = 4000;
  // Rows per node-restart copy batch (COPY_ROWSREQ), whose shared row locks are held
  // until the starting node wrote it; a batch also stops once it passes 32 KiB.
  uint32_t copy_batch_rows = 64;
  // Bytes of deleted keys each fragment remembers for a node restart's copy
  // (storage::Fragment's delete log): a node down longer than its deletes fill gets the
  // keys of every unchanged row instead.
  size_t delete_log_bytes = storage::Fragment::kDeleteLogDefaultBytes;
};

// The largest scan_batch_bytes_max honoured: one more row of the maximum size (plus the
// per-value framing of every column) must still fit in a signal section.
inline constexpr size_t kScanBatchBytesLimit = 32 * 1024;
// The smallest batch_bytes a SCAN_FRAGREQ may ask for (smaller requests are raised).
inline constexpr size_t kScanBatchBytesMin = 1024;

class LocalQueryBlock final : public kernel::Block {
 public:
  // `log_part` is the block instance; `memory` (DataMemory and TransactionMemory of the
  // fragments) must outlive the block; `topology` places fragments on nodes.
  LocalQueryBlock(uint16_t log_part, storage::GlobalMemory* memory,
                  protocol::ClusterTopology topology, LocalQueryOptions options = {});
  ~LocalQueryBlock() override;

  // ---- Observers (block thread only; see the file comment) ----

  // The fragment (table_id, fragment_id) held here, or null.
  const storage::Fragment* fragment(uint32_t table_id, uint32_t fragment_id) const;
  // Fragment ids of `table_id` held here, ascending (empty for an unknown table).
  std::vector<uint32_t> fragment_ids(uint32_t table_id) const;
  size_t table_count() const { return tables_.size(); }
  // Transids with local state (operations, storage transactions) here.
  size_t transaction_count() const { return transactions_.size(); }
  // Operations parked on a row lock.
  size_t lock_wait_count() const { return lock_wait_count_; }
  size_t scan_count() const { return scans_.size(); }
  // Malformed signals dropped so far.
  uint64_t malformed_signal_count() const { return malformed_signal_count_; }
  // Sum of the stats of every fragment held here (the node's memory report).
  storage::FragmentStats fragment_stats() const;
  // The redo log (buffer, LSNs, files).
  const RedoLog& redo_log() const { return redo_; }
  // Write operations refused because the redo files were full (NDB error 410).
  uint64_t redo_space_refusals() const { return redo_space_refusals_; }
  // Id of the last completed local checkpoint (0: none), and whether one is running.
  uint32_t last_lcp_id() const { return last_lcp_id_; }
  bool lcp_running() const { return lcp_ != nullptr; }
  // The write cost of the last completed checkpoint, and the write rate limit that
  // applies to a checkpoint slice now (checkpoint_rate.h).
  const LcpWriteStats& last_lcp_write_stats() const { return last_lcp_write_; }
  LcpSpeed lcp_write_speed() const;
  // Highest GCI whose GCP_SAVEREQ was answered.
  uint32_t saved_gci() const { return saved_gci_; }
  // Commits remembered for a takeover (transid -> GCI), see the file comment.
  size_t remembered_commit_count() const { return committed_.size(); }
  // Node restart: this part is a starting node's, copying (see the file comment).
  bool copying() const { return copying_; }
  // Nodes in a node restart, as NODE_STARTINGREP / NODE_STARTEDREP told (ascending).
  const std::vector<uint16_t>& starting_nodes() const { return starting_nodes_; }
  // Whether a COPY_NODEREQ is being served here, and rows sent by this part's copies.
  bool copy_running() const { return copy_ != nullptr; }
  uint64_t rows_copied() const { return rows_copied_; }
  // Copy of changed rows: records this part sent as whole rows (changed since the
  // starting node's restore GCI, or every row of a full copy) and as keys alone
  // (unchanged since), and, on a starting node, rows its sweeps deleted.
  uint64_t copy_full_rows_sent() const { return copy_full_rows_sent_; }
  uint64_t copy_key_rows_sent() const { return copy_key_rows_sent_; }
  uint64_t copy_rows_swept() const { return copy_rows_swept_; }
  // Keys this part sent as deleted since the starting node's GCI (from the delete log),
  // and the bytes of every COPY_ROWSREQ section it sent.
  uint64_t copy_deleted_keys_sent() const { return copy_deleted_keys_sent_; }
  uint64_t copy_bytes_sent() const { return copy_bytes_sent_; }

 private:
  // A table this instance knows, with the fragments it holds. Heap-allocated and never
  // moved, because the fragments point at def.schema.
  struct Table {
    protocol::TableDef def;
    // Node restart: the fragments hold rows restored from this node's own disk (a
    // LQH_RESTOREREQ with kRestoreForNodeRestart), so the copy sends only what changed.
    bool restored = false;
    std::map<uint32_t, std::unique_ptr<storage::Fragment>> fragments;  // by fragment id
    // Its unique indexes' hidden tables (local_query_unique.cc), and the columns the
    // primary reads before and after a write to maintain them.
    std::vector<protocol::UniqueIndexTable> unique_indexes;
    std::vector<uint16_t> unique_image_columns;
    // Partial checkpoints, by fragment id: keys deleted by commits (the next partial
    // file's delete records), and the fragments the last checkpoint holds (a table
    // re-created under its id is a new Table: its fragments start with a full file).
    std::map<uint32_t, LcpDeletedKeys> lcp_deleted;
    std::set<uint32_t> lcp_in_last;
    uint64_t lcp_serial = 0;  // names this Table among checkpoints (0: none yet)
  };

  // The storage transaction a local transaction holds on one fragment.
  struct FragmentTx {
    uint32_t table_id = 0;
    uint32_t fragment_id = 0;
    storage::TxId tx = storage::kNullId;
  };
  // Everything one transid holds here.
  struct Transaction {
    std::vector<FragmentTx> fragments;  // few: a linear search beats a map
    uint16_t api_node = 0;              // the client (ndbinfo.cluster_operations)
  };
  using TransactionMap = std::map<uint64_t, Transaction>;  // by transid

  // An operation parked on a row lock: the request to continue with once it resumes,
  // and the generation its timer carries (a slot is reused; stale timers are ignored).
  struct LockWait {
    bool in_use = false;
    uint32_t generation = 0;
    storage::OpId op = storage::kNullId;
    protocol::LqhKeyReq request;
  };

  // A scan is named by who opened it: (coordinator node, transid, scan_ptr, fragment).
  struct ScanKey {
    uint16_t node_id = 0;
    uint64_t transid = 0;
    uint32_t scan_ptr = 0;
    uint32_t fragment = 0;
    friend auto operator<=>(const ScanKey&, const ScanKey&) = default;
  };
  struct ScanRecord {
    uint32_t table_id = 0;
    uint32_t fragment_id = 0;
    bool in_transaction = false;  // sees its transaction's writes (spec.tx != kNullId)
    uint32_t batch_rows = 0;
    size_t batch_bytes = 0;                          // encoded size a batch stops past
    size_t row_bytes_max = 0;                        // encoded size bound of one projected row
    std::unique_ptr<storage::FilterProgram> filter;  // the scan's spec points here
    std::unique_ptr<storage::Fragment::Scan> scan;
  };
  using ScanMap = std::map<ScanKey, std::unique_ptr<ScanRecord>>;

  // ---- Dictionary (local_query_block.cc) ----
  void on_table_add(kernel::Signal& signal);
  void on_table_drop(kernel::Signal& signal);
  Status add_table(protocol::TableDef def);
  void drop_table(uint32_t table_id);

  // ---- Online ALTER: index rebuilds (local_query_alter.cc) ----
  // A new definition of a table held here waiting for the table's transactions to end.
  struct PendingAlter {
    kernel::BlockAddress requester;
    uint32_t request_id = 0;
    protocol::TableDef def;
    bool may_give_up = false;  // TABLE_ADDREQ's kTableAddMayGiveUp
    uint32_t generation = 0;   // names its LQH_CONTINUE timer
  };
  // Installs `def` (same columns, higher version) and rebuilds the ordered indexes of
  // the table's fragments, now or once the table has no transaction; answers
  // TABLE_ADDCONF (c = the error of a failed build, the old definition kept).
  void alter_table(const kernel::BlockAddress& requester, uint32_t request_id,
                   protocol::TableDef def, bool may_give_up);
  // The alter_wait_ms timer of the pending alter `generation`: refuse it if still there.
  void on_alter_wait_over(uint32_t generation);
  // Runs the pending alters whose tables have become quiet.
  void run_pending_alters();
  bool table_has_transactions(uint32_t table_id) const;
  Status apply_alter(Table* table, protocol::TableDef def);

  // ---- Unique indexes as hidden tables (local_query_unique.cc) ----
  Status add_unique_index_tables(Table* base);
  void drop_unique_index_tables(const Table& base);
  // kNotSupported when `def` brings a new unique index while the table has rows here.
  Status check_new_unique_indexes(const Table& base, const protocol::TableDef& def) const;
  // After base->def changed: drops, re-versions and adds its hidden tables.
  Status sync_unique_index_tables(Table* base);
  static bool maintains_unique_indexes(const Table& table, const protocol::LqhKeyReq& request);
  // The index and key columns of the row with `key` as transaction `tx` sees it.
  static std::optional<storage::AttrValues> unique_image(const Table& table,
                                                         storage::Fragment* fragment,
                                                         storage::TxId tx,
                                                         const storage::AttrValues& key);
  // After a write ran (or resumed): a successful one carries its index changes in
  // *request; one whose changes cannot be encoded is undone and fails.
  static void note_index_changes(const Table& table, storage::Fragment* fragment,
                                 storage::TxId tx, const storage::AttrValues& key,
                                 const std::optional<storage::AttrValues>& before,
                                 storage::OpResult* result, protocol::LqhKeyReq* request);
  // Sets request->index_changes from `before` and the row as it is now.
  static Status attach_index_changes(const Table& table, storage::Fragment* fragment,
                                     storage::TxId tx, const storage::AttrValues& key,
                                     const std::optional<storage::AttrValues>& before,
                                     protocol::LqhKeyReq* request);

  // ---- Key operations ----
  void on_packed_signals(kernel::Signal& signal);
  // A collected signal whose pack could not be sent: a forwarded write is answered
  // LQH_KEYREF to its coordinator (as a refused single forward is); answers are logged.
  void on_unsent(const kernel::Signal& header, const Status& why);
  void on_key_request(kernel::Signal& signal);
  // DBINFO_SCANREQ (local_query_dbinfo.cc): the live operations held here.
  void on_dbinfo_scan(kernel::Signal& signal);
  // Runs a request for the first time and acts on the outcome.
  void execute(protocol::LqhKeyReq request);
  // Acts on an operation's outcome: park it, refuse it, answer it or pass it down the
  // chain (to the next live replica). `values` holds what a read returned.
  void conclude(protocol::LqhKeyReq request, const storage::OpResult& result,
                const storage::AttrValues& values);
  // Passes a write on to the replica at `next_position` of its chain.
  void forward(protocol::LqhKeyReq request, uint32_t next_position);
  void confirm(protocol::LqhKeyReq request, uint8_t flags, const storage::AttrValues* values);
  void refuse(const protocol::LqhKeyReq& request, ErrorCode error, std::string message);

  // ---- Transactions ----
  void on_commit_request(kernel::Signal& signal);
  void on_abort_request(kernel::Signal& signal);
  // Commits or aborts everything `transid` holds here, then resumes the operations the
  // released locks let go.
  // `gci` is the commit's GCI (unused for an abort).
  void end_transaction(uint64_t transid, bool commit, uint32_t gci);
  // The storage transaction `transid` holds on the fragment, or kNullId.
  storage::TxId find_fragment_tx(uint64_t transid, uint32_t table_id, uint32_t fragment_id) const;
  // ... or a new one (and a new local transaction if needed).
  Result<storage::TxId> begin_fragment_tx(uint64_t transid, uint32_t table_id, uint32_t fragment_id,
                                          storage::Fragment* fragment);

  // ---- Lock waits ----
  void on_lock_timeout(kernel::Signal& signal);
  void park(protocol::LqhKeyReq request, storage::OpId op);
  // Resumes every operation of the fragment whose lock wait ended.
  void resume_ready(uint32_t table_id, uint32_t fragment_id);
  // Cancels and refuses the waits `matches` selects (transaction end, table drop).
  template <typename Predicate>
  // `message` is a view: the common case (a transaction ending with no wait) builds no
  // string.
  void refuse_lock_waits(Predicate matches, ErrorCode error, std::string_view message);
  void release_wait(uint32_t slot);

  // ---- Scans (local_query_scan.cc) ----
  void on_scan_request(kernel::Signal& signal);
  void on_scan_next(kernel::Signal& signal);
  // Sends the next batch of the scan; frees it when it is finished or failed.
  void continue_scan(ScanMap::iterator it, const kernel::BlockAddress& to);
  void refuse_scan(const kernel::BlockAddress& to, uint64_t transid, uint32_t scan_ptr,
                   uint32_t fragment, ErrorCode error, std::string message);
  // Frees the scans `matches(key, record)` selects (transaction end, table drop). The
  // coordinator is not told: it learns on its next SCAN_FRAGNEXTREQ (SCAN_FRAGREF).
  template <typename Predicate>
  void close_scans(Predicate matches);

  // ---- File system requests (local_query_redo.cc) ----
  using FsDone = std::function<void(kernel::Signal& answer)>;
  // Sends `request` (word 0 is replaced by a fresh user_ref) to the node's file system
  // block; `done` runs with its answer (a CONF or FS_REF). A send failure runs `done`
  // at once with an FS_REF.
  void fs_request(kernel::Signal request, FsDone done);
  void on_fs_answer(kernel::Signal& signal);
  // OK for a CONF, the error an FS_REF carries.
  static Status fs_status(kernel::Signal& answer);

  // ---- Redo log (local_query_redo.cc) ----
  struct RedoFileIo {
    uint32_t handle = 0;  // 0 while opening
    bool dirty = false;   // written since its last sync
    uint32_t writes_in_flight = 0;
  };
  struct GcpSave {
    uint32_t gci = 0;
    uint64_t lsn = 0;  // every record of gci <= this GCI is before it
    kernel::BlockAddress requester;
  };
  void on_gcp_save(kernel::Signal& signal);
  // Commits one fragment's storage transaction with the redo sink installed.
  Status commit_fragment(storage::Fragment* fragment, const FragmentTx& ftx, uint32_t gci);
  // Starts the writes (and file opens) the buffer allows.
  void pump_redo();
  // Answers the saves that are durable, starts the sync round the next one needs.
  void pump_saves();
  void on_redo_write_done(uint64_t chunk_id, uint32_t file_seq, kernel::Signal& answer);
  void on_redo_sync_done(kernel::Signal& answer);
  void fail_redo(const Status& status);
  // The NDB 410 check of a write operation: false (counted, and a WARNING when the
  // refusals start) while the held redo files pass 3/4 of the redo space.
  bool redo_space_accepts_writes();
  // After redo files were freed: an INFO when writes are accepted again.
  void note_redo_space_freed();

  // ---- Local checkpoints (local_query_checkpoint.cc) ----
  // LQH_CONTINUE w0: which run a slice belongs to (w1: the run's generation).
  static constexpr uint32_t kContinueLcp = 1;
  static constexpr uint32_t kContinueRestore = 2;
  static constexpr uint32_t kContinueAlter = 3;  // w1: PendingAlter::generation
  struct LcpRun {
    uint32_t lcp_id = 0;
    uint32_t start_gci = 0;
    uint32_t max_gci = 0;
    bool after_restore = false;  // the restore's checkpoint: old-life redo goes
    uint32_t generation = 0;     // tells its LQH_CONTINUE from a stale one
    std::vector<kernel::BlockAddress> requesters;
    std::vector<std::pair<uint32_t, uint32_t>> todo;  // (table, fragment)
    // (table, fragment) -> lcp_serial of the Table written: a table dropped and
    // re-created under its id before the record is written is not the one it holds.
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> written_serials;
    size_t next = 0;
    // No fragment may continue its chain (checkpoint.h); and whether that is so for a
    // checkpoint started while the part was not copying (it ends lcp_after_copy_full_).
    bool all_full = false;
    bool full_after_copy = false;
    // The fragment being written: its chain so far and the new file; the delete chunks
    // still to write before its rows.
    LcpFragmentInfo current;
    LcpDataFile file;
    std::deque<Bytes> delete_chunks;
    std::unique_ptr<storage::Fragment::Scan> scan;
    bool current_dropped = false;
    uint32_t handle = 0;
    std::vector<LcpFragmentInfo> done;
    uint64_t rows = 0;
    uint32_t partial_files = 0;
    uint32_t removals_pending = 0;
    bool waiting_for_gcp = false;
    // Write rate (checkpoint_rate.h): whether it completes this node's restart (a
    // restore's checkpoint, or one during or right after the node restart's copy).
    bool own_restart = false;
    uint64_t start_ns = 0;
    LcpWriteStats write;
  };
  void on_lcp_start(kernel::Signal& signal);
  void on_continue(kernel::Signal& signal);
  // Starts a checkpoint; `restore_gci` set means the restore's own one.
  void start_lcp(std::vector<kernel::BlockAddress> requesters, std::optional<uint32_t> restore_gci);
  void lcp_next_fragment();
  // The chain `fragment` of `table` continues in this checkpoint (empty: a full file).
  std::vector<LcpDataFile> lcp_chain_to_continue(const Table& table, uint32_t fragment_id) const;
  // The last checkpoint's control record written or restored in this life, if any.
  const LcpControl* last_control() const;
  void lcp_slice();
  // Whether the next chunk must wait for the write budget; if so, the slice is sent
  // again (delayed) for the slice of time in which it may go.
  bool lcp_wait_for_budget();
  void lcp_write_chunk(uint64_t offset, Bytes chunk);
  void lcp_fragment_written();
  void lcp_write_control();
  // Writes `control` to its slot (by sequence) and syncs it; `done` gets the outcome.
  void write_control_record(LcpControl control, std::function<void(Status)> done);
  // Removes the files of `replaced` (the record before, if known) that no chain of
  // `control` (now the restore point) names, and the redo the checkpoint made useless.
  void lcp_remove_old_files(std::optional<LcpControl> replaced, LcpControl control);
  void lcp_finished();
  void fail_lcp(const Status& status);
  void maybe_start_lcp();
  // False while the first checkpoint after a node restart must wait (lcp_min_start_gci_).
  bool lcp_may_start() const;

  // ---- Restore (restore.cc) ----
  struct RestoreFile {
    std::string path;
    uint32_t handle = 0;
    uint64_t size = 0;
    uint64_t offset = 0;
    Bytes pending;  // read, not yet decoded
  };
  struct RestoreRun {
    uint32_t gci = 0;
    uint64_t file_limit = 0;      // bytes of the current file to read
    uint64_t pending_offset = 0;  // file offset of file.pending[0]
    uint32_t file_max_gci = 0;    // highest GCI of a record in the current redo file
    std::vector<std::pair<uint32_t, RedoFileInfo>> old_files;  // the crashed life's redo
    kernel::BlockAddress requester;
    std::optional<Result<LcpControl>> slots[2];
    std::optional<LcpControl> control;
    uint32_t start_gci = 0;
    // Every data file to load, each fragment's chain oldest first.
    struct LcpFile {
      uint32_t table_id = 0, fragment_id = 0;
      LcpDataFile file;
    };
    std::vector<LcpFile> lcp_files;
    size_t lcp_file_index = 0;
    std::vector<uint32_t> redo_files;
    size_t redo_index = 0;
    bool redo_phase = false;
    bool file_torn = false;
    RestoreFile file;
    uint32_t generation = 0;
    uint64_t lcp_rows = 0, lcp_deletes = 0, lcp_bytes = 0, redo_records = 0, redo_bytes = 0;
    uint64_t total_bytes = 0;  // estimate, for the progress percentage
    uint64_t start_ns = 0, last_log_ns = 0;
    bool for_node_restart = false;  // kRestoreForNodeRestart: no checkpoint after it
  };
  // Reads a whole small file; nullopt if it does not exist.
  using WholeFileDone = std::function<void(Result<std::optional<Bytes>>)>;
  void read_whole_file(std::string path, uint64_t size_max, WholeFileDone done);
  void on_restore_request(kernel::Signal& signal);
  void restore_read_control(uint32_t slot);
  void restore_list_redo();
  void restore_next_file();
  void restore_read_more();
  void restore_consume();
  void restore_file_done();
  // Writes the rows of `batch` (or deletes its keys) in the fragment of `file`.
  Status restore_apply_chunk(const storage::RowBatch& batch, const RestoreRun::LcpFile& file,
                             bool deletes);
  Status restore_apply_records(std::deque<RedoRecord>* records);
  void restore_log_progress(bool final);
  void restore_loaded();
  void restore_finished(Status status);

  // ---- Node failure (local_query_takeover.cc) ----
  void on_node_fail_rep(kernel::Signal& signal);
  void on_trans_req(kernel::Signal& signal);
  bool is_dead(uint16_t node) const;
  // Remembers a commit for takeovers; forgets those of GCIs up to `saved_gci`.
  void remember_commit(uint64_t transid, uint32_t gci);
  void forget_commits(uint32_t saved_gci);

  // ---- Node restart (local_query_node_restart.cc) ----
  // LQH_CONTINUE kinds of the copy (w1: CopyRun::generation) and of a COPY_ROWSREQ
  // retried on the starting node (w1: CopyWrite::generation).
  static constexpr uint32_t kContinueCopy = 4;
  static constexpr uint32_t kContinueCopyWrite = 5;
  // One COPY_NODEREQ being served: the fragments to copy and where the copy is.
  struct CopyRun {
    uint16_t starting_node = 0;
    kernel::BlockAddress requester;
    uint32_t generation = 0;
    // Transactions that held writes here when the copy was asked for: their writes may
    // have gone down a chain without S (or be inserts the scan cannot see), so the copy
    // starts once they have ended.
    std::vector<uint64_t> older_transids;
    std::vector<std::pair<uint32_t, uint32_t>> todo;  // (table, fragment)
    size_t next = 0;
    // The starting node restored its disk to this GCI (0: it has nothing, copy every
    // row), and the (table id, version) pairs whose rows it restored: only their
    // fragments are copied "since" that GCI.
    uint32_t since_gci = 0;
    std::set<std::pair<uint32_t, uint32_t>> restored_tables;
    // The fragment being copied (started = its scan was opened), and the GCI rows
    // changed after are sent whole (0: all); others go as their key alone.
    bool started = false;
    uint32_t table_id = 0;
    uint32_t fragment_id = 0;
    uint32_t fragment_since_gci = 0;
    // With the fragment's delete log reaching back to fragment_since_gci: only rows
    // changed since are scanned and sent, then deleted_keys (the keys deleted since),
    // and the end tells S not to sweep. Without: every row is scanned, unchanged ones
    // go as keys, and S sweeps.
    bool send_deletes = false;
    std::vector<storage::AttrValues> deleted_keys;
    size_t deleted_next = 0;
    uint64_t deleted_sent = 0, bytes = 0;
    bool end_in_flight = false;  // the batch in flight is the fragment's end marker
    std::unique_ptr<storage::Fragment::Scan> scan;
    std::deque<storage::AttrValues> keys;  // scanned, not yet copied, in scan order
    storage::TxId tx = storage::kNullId;   // holds the shared locks of the batch in flight
    uint32_t batch = 0;                    // sequence of the COPY_ROWSREQ in flight
    bool batch_in_flight = false;
    // A COPY_ROWSREQ that could not be sent yet: the starting node's link is not up
    // (it was included before every survivor reconnected to its new port). Sent again
    // until kCopyLinkWaitNs after the first try.
    std::optional<kernel::Signal> unsent;
    uint64_t unsent_since_ns = 0;
    uint32_t fragments = 0;
    uint64_t rows = 0;  // records confirmed (whole rows and keys)
    uint64_t full_rows = 0, key_rows = 0;
    uint64_t start_ns = 0, last_log_ns = 0, rows_at_last_log = 0;
  };
  // A COPY_ROWSREQ on the starting node whose rows are not all written yet (a row was
  // locked by a transaction that is committing there).
  struct CopyWrite {
    kernel::BlockAddress source;
    uint32_t table_id = 0;
    uint32_t fragment_id = 0;
    uint32_t batch = 0;
    storage::RowBatch rows;
    // Per row: its GCI at the source (a whole row), or 0 (a key: unchanged since).
    std::vector<uint32_t> gcis;
    uint32_t since_gci = 0;     // the source's G for this fragment (0: full copy)
    bool fragment_end = false;  // sweep the fragment, then answer
    bool deleted_keys = false;  // rows holds keys the source deleted since since_gci
    bool deletes_sent = false;  // with fragment_end: no sweep (deleted keys came)
    size_t next = 0;
    uint64_t give_up_ns = 0;
    uint32_t generation = 0;
  };
  void on_node_restart_init(kernel::Signal& signal);
  void on_node_starting(kernel::Signal& signal);
  void on_node_started(kernel::Signal& signal);
  void on_copy_node(kernel::Signal& signal);
  void on_copy_rows(kernel::Signal& signal);
  void on_copy_rows_conf(kernel::Signal& signal);
  void on_copy_rows_ref(kernel::Signal& signal);
  // While copying: the outcome of an operation that failed only because this replica
  // does not have the row yet (or has it already), or nullopt.
  std::optional<storage::OpResult> copying_outcome(const protocol::LqhKeyReq& request,
                                                   const storage::OpResult& result);
  // The source side: one slice (at most a batch) of the copy.
  void copy_slice();
  void copy_next_fragment();
  // Ends the copy transaction (releasing its shared locks) and resumes the waiters.
  void end_copy_tx();
  void copy_log_progress(bool final);
  void copy_finished();
  void fail_copy(const Status& status);
  // The starting side: writes what is left of the COPY_ROWSREQ from `source_node`.
  void copy_write(uint16_t source_node);
  // Node failure or table drop: what the copies of `node` / on `table_id` hold goes.
  void copy_node_failed(uint16_t node);
  void copy_table_dropped(uint32_t table_id);
  // The starting side: copy progress to this node's distribution block.
  void report_copy_progress();

  // ---- Helpers ----
  Table* find_table(uint32_t table_id);
  storage::Fragment* find_fragment(uint32_t table_id, uint32_t fragment_id);
  void log_malformed(const kernel::Signal& signal, const Status& status);
  void send_or_log(const kernel::BlockAddress& to, kernel::Signal signal);
  // Sends `signal`; to a coordinator or local_query while a pack is handled, through the
  // packer (then OK means "collected").
  Status send_data(const kernel::BlockAddress& to, kernel::Signal signal);

  // Constant after construction.
  storage::GlobalMemory* const memory_;
  const protocol::ClusterTopology topology_;
  const LocalQueryOptions options_;

  std::map<uint32_t, std::unique_ptr<Table>> tables_;  // by table id
  TransactionMap transactions_;
  // Ended transactions' map entries (node handles), kept for the next ones with their
  // fragments list emptied, so a transaction's begin and end allocate nothing (at most
  // kSpareTransactionsMax; poisoned under AddressSanitizer while kept).
  static constexpr size_t kSpareTransactionsMax = 256;
  std::vector<TransactionMap::node_type> spare_transactions_;
  // The key operation being executed: its body and a read's values, decoded / projected
  // into buffers kept from one operation to the next (execute() only; nothing outlives
  // it).
  protocol::OpBody body_scratch_;
  storage::AttrValues read_scratch_;
  std::vector<LockWait> lock_waits_;                   // slots; see LockWait
  std::vector<uint32_t> free_wait_slots_;
  // (table id, fragment id, op) -> slot: maps take_ready() answers to their requests.
  std::map<std::tuple<uint32_t, uint32_t, storage::OpId>, uint32_t> waits_by_op_;
  size_t lock_wait_count_ = 0;
  ScanMap scans_;
  uint64_t malformed_signal_count_ = 0;
  protocol::SignalPacker packer_;

  // File system requests in flight, by user_ref.
  std::map<uint32_t, FsDone> fs_waits_;
  uint32_t next_fs_ref_ = 1;

  // Redo log.
  RedoLog redo_;
  std::map<uint32_t, RedoFileIo> redo_files_;  // open (or opening) redo files, by seq
  uint32_t redo_writes_in_flight_ = 0;
  std::deque<GcpSave> saves_;
  uint32_t sync_round_pending_ = 0;  // syncs of the current round not yet answered
  uint64_t sync_round_lsn_ = 0;
  uint64_t synced_lsn_ = 0;  // every byte before it is durable
  uint32_t saved_gci_ = 0;
  uint32_t highest_commit_gci_ = 0;
  uint32_t first_file_seq_of_life_ = 1;  // earlier redo files belong to the crashed life
  Status redo_failure_;                  // the first redo IO error; the log stops
  bool redo_space_refusing_ = false;     // write operations refused for redo space (410)
  uint64_t redo_space_refusals_ = 0;

  // Local checkpoints.
  std::unique_ptr<LcpRun> lcp_;
  std::vector<kernel::BlockAddress> lcp_requesters_;  // for the checkpoint after this one
  uint32_t last_lcp_id_ = 0;
  uint32_t control_sequence_ = 0;
  // The control record of last_lcp_id_ (valid while its sequence is control_sequence_:
  // a node restart starts the part's checkpoints over).
  LcpControl last_control_;
  // A checkpoint ran while the part was copying (rows written without redo, with their
  // source's GCI): the next one is full for every fragment.
  bool lcp_after_copy_full_ = false;
  uint64_t lcp_serial_ = 0;  // last Table::lcp_serial given
  // Slot 0 holds the empty control record ("no checkpoint, all redo") a part writes
  // before its first checkpoint's record, so a crash never leaves only a torn slot.
  bool empty_control_written_ = false;
  uint64_t lcp_start_lsn_ = 0;  // redo LSN when the last checkpoint started
  // Checkpoint write rate: the budget of this instance's share, and what the last
  // completed checkpoint cost.
  LcpWriteBudget lcp_budget_;
  LcpWriteStats last_lcp_write_;
  // Node restart: the GCI after the one this node started in (0: none). While the
  // node was copying, a chain write on a row the copy had not yet made current (a
  // restored row unchanged here since G, changed at the live replica) logged an image
  // the copy then replaced in memory without redo. So no checkpoint may need redo of
  // those GCIs: checkpoints start once this part saved the started GCI (every commit
  // of it is in memory), and keep redo from this GCI on.
  uint32_t lcp_min_start_gci_ = 0;
  uint32_t continue_generation_ = 0;

  // Restore.
  std::unique_ptr<RestoreRun> restore_;

  // ALTERs waiting for their table's transactions to end, by table id.
  std::map<uint32_t, PendingAlter> pending_alters_;
  uint32_t alter_generation_ = 0;

  // Node failure: data nodes reported dead (few; ascending), and recent commits by
  // transid with their GCI, for the takeover of a dead coordinator's transactions.
  std::vector<uint16_t> dead_nodes_;
  // (transid, GCI) in commit order; a vector that keeps its buffer, as every commit of
  // another node's coordinator adds one.
  std::vector<std::pair<uint64_t, uint32_t>> committed_;

  // Node restart: whether this part is a starting node's and copying (fragments created
  // meanwhile are lenient and do not enforce unique indexes); the nodes starting in the
  // cluster (ascending); the copy served here and the copy batches being written here.
  bool copying_ = false;
  std::vector<uint16_t> starting_nodes_;
  std::unique_ptr<CopyRun> copy_;
  std::map<uint16_t, CopyWrite> copy_writes_;  // by source node
  uint32_t copy_generation_ = 0;
  uint64_t rows_copied_ = 0;
  uint64_t copy_full_rows_sent_ = 0;
  uint64_t copy_key_rows_sent_ = 0;
  uint64_t copy_rows_swept_ = 0;
  uint64_t copy_deleted_keys_sent_ = 0;
  uint64_t copy_bytes_sent_ = 0;
  // Starting node: fragments whose copy ended, rows written and keys marked (progress).
  uint32_t copy_fragments_received_ = 0;
  uint64_t copy_full_rows_received_ = 0;
  uint64_t copy_key_rows_received_ = 0;
};

}  // namespace duo::local_query
