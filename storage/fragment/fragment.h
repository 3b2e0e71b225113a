// Fragment: one table fragment in memory — rows, primary-key hash index, ordered
// indexes — and the operations of transactions on it (DBLQH + DBACC + DBTUP + DBTUX of
// NDB, minus networking).
//
// Versions. The committed version of a row lives in its slot (and var entry). A write
// operation creates an uncommitted version owned by the operation: an insert of a new
// key writes straight into a fresh slot that stays invisible to others until commit;
// updates and re-inserts build a full row image in TransactionMemory. Commit installs
// the newest live version into the slot; abort just discards. Isolation is READ
// COMMITTED: readers without locks see the committed version, a transaction sees its
// own newest version.
//
// Resources. Everything an operation needs to commit (fixed slot, var space, index
// entries, images) is reserved when it is prepared, so commit cannot fail for lack of
// memory. Nothing an operation reserved is released before its transaction ends: an
// operation can be aborted while another operation of the same transaction on the
// same row commits.
//
// Locks. Writes take an exclusive row lock, locking reads a shared or exclusive one; all
// are held until the transaction ends. A conflicting request parks its operation in the
// row's wait queue (OpResult::waiting). When the holders finish, waiters become ready:
// the owner (the kernel's LDM thread, or a test) takes them with take_ready() and calls
// resume(), which re-executes the request from the key. Lock wait timeouts are the
// owner's clock: it calls cancel_wait() (MySQL 1205 to the client).
//
// Ordered index entries name either a row slot or an uncommitted image (op id with the
// top bit set); an entry is visible to a reader when the image it names is the one that
// holds the reader's version's key (see entry_visible()).
//
// Disk parts. A fragment created with a FragmentDisk keeps the values of its var-sized
// STORAGE DISK columns of committed rows in a disk part (storage/disk DiskRowSpace),
// named by the row's disk reference (row_layout.h); without one they stay in memory.
// Uncommitted versions hold every value in memory. Space for a write's disk part is
// reserved when the write is prepared (kTablespaceFull, NDB 1601, or kOutOfUndoSpace,
// NDB 1501, then and only then) and written when it is installed. The fragment never
// waits for a page: the owner pins, before each call, the pages it names
// (disk_page_for before a key request, disk_pages_of after a write until its
// transaction ends, ScanSpec::disk_page_ready during scans); a request whose columns
// and filter are all in memory touches no disk page at all (a "HEAD" read).
//
// Thread-compatible: one owner thread per fragment (the LDM thread), as in NDB.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/disk/disk_row_space.h"
#include "storage/hash_index/hash_index.h"
#include "storage/memory/block_allocator.h"
#include "storage/memory/global_memory.h"
#include "storage/memory/record_pool.h"
#include "storage/ordered_index/ordered_index.h"
#include "storage/row/attr_values.h"
#include "storage/row/fixed_row_store.h"
#include "storage/row/row_batch.h"
#include "storage/row/row_layout.h"
#include "storage/row/table_schema.h"
#include "storage/row/var_row_store.h"
#include "storage/scan/filter.h"
#include "storage/scan/interpreted_update.h"

namespace duo::storage {

using TxId = uint32_t;
using OpId = uint32_t;

enum class LockMode : uint8_t {
  kCommittedRead,  // no lock: latest committed version (or the reader's own version)
  kShared,         // LOCK IN SHARE MODE
  kExclusive,      // FOR UPDATE
};

enum class OpType : uint8_t { kRead, kInsert, kUpdate, kWrite, kDelete, kInterpretedUpdate };

struct OpResult {
  Status status;          // error: the operation did nothing (its lock, if taken, is kept)
  OpId op = kNullId;      // the operation record (commit/abort it), or the waiting one
  bool waiting = false;   // parked on a row lock; resume() once take_ready() returns it
  bool filtered = false;  // interpreted update whose guard was not TRUE: row unchanged
};

// Told about every change a commit installs, in commit order: the redo log's source.
// Called from inside commit()/commit_operation(), so a sink must not call back into the
// fragment. The values are valid only during the call.
class ChangeSink {
 public:
  virtual ~ChangeSink() = default;
  // The row's whole committed image (every column, in column order).
  virtual void row_written(const AttrValues& row) = 0;
  // The row is gone; `key` holds its primary-key columns.
  virtual void row_deleted(const AttrValues& key) = 0;
};

struct FragmentStats {
  size_t rows = 0;                  // rows with a committed version
  size_t fixed_pages = 0;
  size_t var_pages = 0;
  size_t hash_index_bytes = 0;
  size_t ordered_index_bytes = 0;
  size_t transaction_bytes = 0;     // operation records, locks, images (pages held)
  size_t image_bytes = 0;           // uncommitted row images alone
};

// Where a fragment keeps the disk parts of its rows (every pointer outlives the fragment).
struct FragmentDisk {
  disk::Tablespace* tablespace = nullptr;
  disk::UndoLog* undo = nullptr;
  disk::DiskPageAccess* pages = nullptr;  // pages the owner pinned (see the file comment)
  disk::FragmentOwner owner;              // the extents' owner id (table, fragment)
  disk::PageResidency resident;           // allocation prefers resident pages; may be empty
};

class Fragment {
 public:
  // Builds a fragment for a validated schema (the schema must outlive the fragment).
  // With `disk` (and a schema with var-sized STORAGE DISK columns) rows keep disk parts.
  static Result<std::unique_ptr<Fragment>> create(const TableSchema* schema, GlobalMemory* memory,
                                                  const FragmentDisk* disk = nullptr);
  ~Fragment();
  Fragment(const Fragment&) = delete;
  Fragment& operator=(const Fragment&) = delete;

  // ---- transactions ----
  Result<TxId> begin();
  // Commit every prepared operation, then end the transaction (release everything).
  Status commit(TxId tx);
  // Abort every operation, then end the transaction.
  Status abort(TxId tx);
  // Per-operation commit: the row's new version is installed once every live write
  // operation of the transaction on that row is committed. After the first commit the
  // transaction accepts no new operations.
  Status commit_operation(OpId op);
  // Per-operation abort: the operation's version is discarded at once; its resources are
  // released when the transaction ends.
  Status abort_operation(OpId op);
  // Ends a transaction whose operations are all committed or aborted.
  Status end(TxId tx);

  // ---- key operations (key = the primary-key columns) ----
  OpResult insert(TxId tx, const AttrValues& row);
  OpResult update(TxId tx, const AttrValues& key, const AttrValues& changes);
  OpResult write(TxId tx, const AttrValues& row);  // insert, or update all given columns
  OpResult remove(TxId tx, const AttrValues& key);
  // `program` must be bound to this fragment's schema (InterpretedUpdate::bind).
  OpResult interpreted_update(TxId tx, const AttrValues& key, const InterpretedUpdate& program);
  // Reads `columns` (all when empty) into *out. kCommittedRead needs no transaction
  // (tx = kNullId) and takes no lock; with a tx it sees that transaction's own writes.
  OpResult read(TxId tx, const AttrValues& key, LockMode mode, const std::vector<uint16_t>& columns,
                AttrValues* out);

  // ---- lock waits ----
  // Operations whose lock wait ended; each must be resume()d or cancel_wait()ed.
  std::vector<OpId> take_ready();
  // Re-executes a ready operation; reads fill *out (may be null for writes).
  OpResult resume(OpId op, AttrValues* out);
  // Gives up a waiting or ready operation (lock wait timeout): kLockWaitTimeout.
  Status cancel_wait(OpId op);
  bool is_waiting(OpId op) const;

  // ---- scans (committed read, plus the scanning transaction's own writes) ----
  struct ScanSpec {
    TxId tx = kNullId;
    const FilterProgram* filter = nullptr;  // pushed-down condition, bound; null passes all
    std::vector<uint16_t> columns;          // projection; empty = all
    int index = -1;                         // ordered index number, -1 = full scan
    // Range on the index's leading columns (storage encoding; empty = unbounded).
    AttrValues low, high;
    bool low_inclusive = true, high_inclusive = true;
    bool descending = false;
    // Full scans only (partial local checkpoints): a row last changed in a GCI below
    // `min_gci` is skipped unless its row ref lies in part `always_part` of `parts`
    // (scan_part_of). Row refs never move, so a part names the same rows from one scan
    // to the next.
    uint32_t min_gci = 0;
    uint32_t parts = 0;  // 0: no part passes regardless of its GCI
    uint32_t always_part = 0;
    // Disk parts (only called when the projection or filter reads a disk-part column):
    // before the scan reads a committed row's disk part on page `id`, true when the
    // owner has it pinned (until next() returns); false when it is not resident yet (the
    // owner starts its read): next() returns with the rows so far, done() false, and
    // the next call starts at that row. Empty: every page is accessible.
    std::function<bool(disk::DiskPageId)> disk_page_ready;
  };
  // The part of `parts` a row ref belongs to (ScanSpec::parts): refs dealt round-robin,
  // so even a fragment of a few rows spreads over every part.
  static uint32_t scan_part_of(RowRef row, uint32_t parts) { return parts == 0 ? 0 : row % parts; }
  class Scan;
  Result<std::unique_ptr<Scan>> open_scan(ScanSpec spec);

  // ---- disk parts (see the file comment) ----
  bool keeps_disk_parts() const { return disk_ != nullptr; }
  // The page of the committed disk part that a request of `type` on `key` reads (a read
  // only when `columns`, all when empty, include a disk-part column); none when it
  // needs none. The owner pins it before the request (and before its resume()).
  std::optional<disk::DiskPageId> disk_page_for(OpType type, const AttrValues& key,
                                                const std::vector<uint16_t>& columns) const;
  // The pages the commit of prepared write operation `op` writes (pin them before its
  // commit; the target of an insert or move is `target_fresh` when it needs no read).
  disk::DiskOpPages disk_pages_of(OpId op) const;
  // Space of the disk parts (extents, pages, reservations); zeros without disk parts.
  disk::DiskSpaceStats disk_stats() const;
  // DROP TABLE: gives the fragment's extents back to the tablespace (allocatable once a
  // checkpoint that began after it completed, Tablespace::free_extent); touches only the
  // extent-header pages. No transaction may be active (kTransactionState);
  // kOutOfUndoSpace when its undo records do not fit (nothing changed). The fragment is
  // to be destroyed next: its rows' disk references name freed space.
  Status drop_disk_parts();
  // Checks every committed row's disk part: a live entry, well formed, one per row, and
  // the disk row space's accounting (every page must be accessible: tests).
  Status check_disk_parts() const;
  // The fragment's disk row space (null without disk parts), for consistency checks.
  const disk::DiskRowSpace* disk_space() const { return disk_.get(); }

  // ---- misc ----
  const TableSchema& schema() const { return *schema_; }
  const RowLayout& layout() const { return layout_; }
  // GCI recorded in rows committed from now on (set by the kernel at each GCP).
  void set_commit_gci(uint32_t gci) { commit_gci_ = gci; }
  // Receives every installed change from now on (null: none). Not owned.
  void set_change_sink(ChangeSink* sink) { change_sink_ = sink; }
  FragmentStats stats() const;
  size_t row_count() const { return committed_rows_; }
  // Checks index/row consistency (every committed row once in every index); for tests.
  Status check_consistency() const;

  // ---- online schema change (fragment_rebuild.cc) ----
  // Re-creates every ordered index from schema().ordered_indexes, which the owner has
  // just changed (CREATE/DROP INDEX), over the committed rows. Needs a quiet fragment:
  // no active transaction (uncommitted images carry per-index entry bits) and no open
  // ordered scan (cursors point into the old trees); the owner drains both first.
  // kDuplicateKey ("Duplicate entry '<key>' for key '<index>'") when a unique index
  // would hold a key twice, kTableFull when memory runs out: the indexes are then
  // unusable until the owner restores the previous schema and rebuilds again (which
  // cannot meet a duplicate the previous indexes did not have).
  Status rebuild_ordered_indexes();

  // ---- restore ----
  // A restore (checkpoint load, then redo replay) passes through states that never
  // existed: a checkpoint is fuzzy (a row moved during its scan is in it twice) and redo
  // older than the checkpoint is applied again over newer rows, so a unique key may be
  // held twice for a while; the committed state the restore ends in cannot hold it
  // twice. The owner turns enforcement off for the restore and on again after it.
  // Turning it off also makes the delete log unusable (see restart_delete_log()).
  void set_enforce_unique(bool on);
  size_t active_transaction_count() const { return active_tx_count_; }

  // ---- introspection (ndbinfo.cluster_operations) ----
  struct OperationInfo {
    OpType type = OpType::kRead;
    LockMode mode = LockMode::kCommittedRead;
    bool waiting = false;  // parked on a row lock (or ready to resume)
  };
  // The live operations of transaction `tx` (prepared or waiting), oldest first.
  std::vector<OperationInfo> operations_of(TxId tx) const;

  // ---- node restart: copy of changed rows (fragment_copy.cc) ----
  // A starting node restored from its own disk to GCI G receives from the live replica
  // whole rows (changed since G) and keys of rows unchanged since G. Each one it holds
  // is marked seen; once the fragment's copy ended, the rows not seen that were last
  // changed at or before G were deleted at the live replica since, and go.
  //
  // The GCI the committed version of the row `key` was last changed in (rows carry it
  // in their header; restore and copies keep it at or above the real one).
  // kNotFound when the row has no committed version.
  Result<uint32_t> committed_gci(const AttrValues& key) const;
  // Marks the committed row `key` seen by the copy; kNotFound when there is none.
  Status mark_copy_seen(const AttrValues& key);
  // Records `gci` as the committed row's GCI (a copied row keeps its source's GCI)
  // and marks it seen; kNotFound when there is none.
  Status set_copied_gci(const AttrValues& key, uint32_t gci);
  struct CopySweep {
    size_t deleted = 0;  // rows removed
    size_t busy = 0;     // candidates a transaction holds: the sweep must run again
  };
  // Deletes every committed row not marked seen whose GCI is at most `gci_max` and
  // that no transaction holds (no lock record: a pending chain operation may commit
  // with a newer GCI, or abort and leave the old row — only its end decides). The
  // deletes are committed at once, through no change sink. Marks are kept.
  Result<CopySweep> sweep_unseen(uint32_t gci_max);
  // Clears every copy mark (after a sweep that found nothing busy).
  void clear_copy_marks();
  // Deletes each committed row of `keys` whose GCI is at most `gci_max` and that no
  // transaction holds (those count as busy, as in sweep_unseen); a key with no row, or
  // with a newer one, is skipped. Committed at once, through no change sink.
  Result<CopySweep> remove_unchanged(const RowBatch& keys, uint32_t gci_max);

  // ---- node restart: the delete log (fragment_copy.cc) ----
  // The keys of committed deletes with their GCI, oldest first, so that the live replica
  // of a node restart sends the starting node the keys deleted since its GCI G instead
  // of a key for every row unchanged since G. The log is complete above its floor: every
  // delete committed with a GCI above floor() is in it. It holds at most
  // set_delete_log_max_bytes() (kDeleteLogDefaultBytes); the oldest entries go first and
  // raise the floor to their GCI.
  //
  // Only deletes this fragment commits as they happen are complete: a fragment whose
  // unique-key enforcement is off is being filled from another moment (a restore, a
  // node restart's copy) and misses the deletes made meanwhile elsewhere, so
  // set_enforce_unique(false) empties the log and makes it unusable (floor
  // kDeleteLogUnusable) until the owner calls restart_delete_log(gci) once every
  // delete with a GCI above `gci` is committed here. A new fragment is empty: its log
  // is complete from GCI 0.
  static constexpr uint32_t kDeleteLogUnusable = UINT32_MAX;
  static constexpr size_t kDeleteLogDefaultBytes = 1 << 20;
  void set_delete_log_max_bytes(size_t bytes) { delete_log_max_bytes_ = bytes; }
  uint32_t delete_log_floor() const { return delete_log_floor_; }
  void restart_delete_log(uint32_t floor);
  // The keys deleted with a GCI above `gci` (each once, oldest first), or kNotFound when
  // the log does not reach back to `gci` (floor() > gci).
  Result<std::vector<AttrValues>> deleted_since(uint32_t gci) const;
  size_t delete_log_bytes() const { return delete_log_bytes_; }

 private:
  friend class Scan;
  struct Operation;
  struct RowLock;
  struct LocalTx;
  struct PendingRequest;
  class IndexComparator;
  class IndexProbe;

  Fragment(const TableSchema* schema, GlobalMemory* memory);
  Status init_indexes();

  // Disk parts.
  disk::DiskRef slot_disk_ref(RowRef row) const;
  void set_slot_disk_ref(RowRef row, disk::DiskRef ref);
  // The committed disk part the row's writes start from (none if not committed).
  disk::DiskRef committed_disk_ref(RowRef row) const;
  // `image` of committed `row` with its disk part merged in (valid until the next call).
  RowImage with_disk_part(RowRef row, const RowImage& image) const;
  // Reserves the disk part of write `op` (new full image `img`, or a delete).
  Status prepare_disk(Operation* op, RowRef row, const RowImage* img);
  // Writes the committed image's disk part for `newest` and sets the slot's reference;
  // rewrites the slot's var entry `v` with the memory var part. Returns the var bytes.
  void install_disk_part(RowRef row, Operation* newest, const RowImage& full);
  bool is_active(TxId tx) const { return tx < tx_active_.size() && tx_active_[tx]; }

  // Request execution (first attempt and resume).
  OpResult execute(TxId tx, OpType type, const AttrValues& key_or_row, const AttrValues* values,
                   const InterpretedUpdate* program, LockMode mode,
                   const std::vector<uint16_t>* columns, AttrValues* out, OpId resumed);
  OpResult park(OpId op, uint32_t lock_id, TxId tx, OpType type, const AttrValues& key_or_row,
                const AttrValues* values, const InterpretedUpdate* program, LockMode mode,
                const std::vector<uint16_t>* columns);

  // Keys and rows.
  uint32_t key_hash_of(const AttrValues& values, Status* status) const;
  uint32_t row_key_hash(const RowImage& image) const;
  RowRef find_row(uint32_t hash, const AttrValues& key) const;
  // The row `key` if it has a committed version; kNotFound else (fragment_copy.cc).
  Result<RowRef> committed_row(const AttrValues& key) const;
  // Deletes the committed, unlocked rows `keys` in one transaction committed through no
  // change sink (fragment_copy.cc).
  Status remove_committed(const std::vector<AttrValues>& keys);
  // Appends the key of `row`, whose delete is being installed, to the delete log.
  void log_delete(RowRef row);
  RowImage slot_image(RowRef row) const;
  RowImage op_image(const Operation& op) const;
  RowImage entry_image(uint32_t entry) const;
  RowRef entry_row(uint32_t entry) const;
  uint32_t row_flags(RowRef row) const;
  void set_row_flags(RowRef row, uint32_t flags);
  uint32_t row_lock_id(RowRef row) const;
  void set_row_lock_id(RowRef row, uint32_t lock_id);

  // Views: which version a reader sees.
  struct View {
    bool exists = false;
    RowImage image;
    const Operation* op = nullptr;  // the op whose version it is, null for committed
  };
  View view_of(TxId tx, RowRef row) const;
  const Operation* newest_live_write(TxId tx, RowRef row) const;
  bool entry_visible(int index, uint32_t entry, TxId tx, View* view) const;
  int compare_index_keys(int index, const RowImage& a, const RowImage& b) const;
  uint32_t index_prefix(int index, const RowImage& image) const;

  // Locks.
  enum class LockOutcome { kGranted, kMustWait, kFailed };
  LockOutcome acquire_lock(TxId tx, RowRef row, LockMode mode, OpId op, uint32_t* lock_id,
                           Status* error);

  // Write paths.
  Status check_unique(TxId tx, RowRef row, const RowImage& image, const Operation* prev_image_op,
                      bool prev_exists, const RowImage& prev, uint32_t* wait_lock_row);
  Status add_op_entries(OpId op_id, RowRef row);
  void remove_op_entries(OpId op_id);
  void remove_slot_entries(RowRef row);
  Status add_slot_entries(RowRef row);
  Result<OpId> new_operation(TxId tx, OpType type, LockMode mode, RowRef row);
  void install(RowRef row);
  // Tells the change sink what install() just made of `row`.
  void report_change(RowRef row, bool deleted);
  void release_row_if_dead(RowRef row);
  void wake_waiters(RowLock* lock);

  // Constant after construction.
  const TableSchema* const schema_;
  GlobalMemory* const memory_;
  const RowLayout layout_;

  FixedRowStore fixed_;
  VarRowStore var_;
  HashIndex hash_;
  std::vector<std::unique_ptr<IndexComparator>> comparators_;
  std::vector<std::unique_ptr<OrderedIndex>> ordered_;
  RecordPool<Operation> ops_;
  RecordPool<RowLock> locks_;
  RecordPool<LocalTx> txs_;
  BlockAllocator images_;
  std::vector<OpId> ready_;
  std::vector<uint8_t> tx_active_;  // by TxId: begun and not yet ended
  size_t active_tx_count_ = 0;
  bool enforce_unique_ = true;
  std::vector<RowRef> scratch_rows_;
  uint32_t commit_gci_ = 0;
  size_t committed_rows_ = 0;
  ChangeSink* change_sink_ = nullptr;
  AttrValues scratch_change_;
  // The delete log (fragment_copy.cc): committed deletes, oldest first.
  struct DeletedKey {
    uint32_t gci;
    AttrValues key;
  };
  std::deque<DeletedKey> delete_log_;
  size_t delete_log_bytes_ = 0;
  uint32_t delete_log_floor_ = 0;
  size_t delete_log_max_bytes_ = kDeleteLogDefaultBytes;
  // Scratch buffers reused across operations (no allocation on the hot path).
  std::string scratch_fixed_, scratch_var_;
  // Disk parts (null without): the space, and scratch for splitting and merging images.
  std::unique_ptr<disk::DiskRowSpace> disk_;
  disk::PageResidency disk_resident_;
  std::string scratch_memory_var_, scratch_disk_part_;
  mutable std::string scratch_merged_var_;
};

// A resumable scan over one fragment: full scan in row order, or an ordered-index range
// in either direction. Survives modifications of the fragment between batches.
class Fragment::Scan {
 public:
  // Appends up to max_rows qualifying rows (projected) to *out. Returns the number
  // appended; 0 means the scan is complete.
  Result<size_t> next(size_t max_rows, RowBatch* out);
  // The row ref of the last row returned (for a following locking read by key).
  RowRef last_row() const { return last_row_; }
  bool done() const { return done_; }
  // The last next() stopped because a disk page was not ready (ScanSpec::disk_page_ready).
  bool waiting_for_page() const { return waiting_for_page_; }

 private:
  friend class Fragment;
  // True when the row's disk part is needed and its page is not ready (stop here).
  bool page_missing(const View& view, RowRef row);
  Scan(Fragment* fragment, ScanSpec spec);
  bool emit(const View& view, RowBatch* out);

  Fragment* fragment_;
  ScanSpec spec_;
  bool done_ = false;
  bool started_ = false;
  bool needs_disk_ = false;  // projection or filter reads a disk-part column
  bool waiting_for_page_ = false;
  RowRef position_ = 0;  // full scan: next slot position
  RowRef last_row_ = kNoRef;
  RowRef last_candidate_ = kNoRef;  // the row emit() is looking at
  // Ordered scan: where to resume.
  uint32_t last_entry_ = kNoRef;
  uint32_t last_tie_ = kNoRef;  // row of the last entry: where to seek again
  std::string last_key_fixed_, last_key_var_;  // copy of the last entry's image
  uint64_t seen_modifications_ = 0;
  OrderedIndex::Cursor cursor_;
};

}  // namespace duo::storage
