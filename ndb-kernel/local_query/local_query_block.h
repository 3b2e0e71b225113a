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
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/runtime/block.h"
#include "storage/fragment/fragment.h"
#include "storage/memory/global_memory.h"
#include "storage/scan/filter.h"

namespace duo::local_query {

struct LocalQueryOptions {
  // TransactionDeadlockDetectionTimeout: how long an operation may wait for a row lock
  // before it is refused with kLockWaitTimeout (MySQL 1205).
  uint64_t lock_wait_timeout_ms = 1200;
  // Rows per scan batch when SCAN_FRAGREQ asks for 0.
  uint32_t scan_batch_rows_default = 64;
  // A scan batch stops once its encoded size passes this, but always holds at least one
  // row. Rows are at most kMaxRowSizeBytes, so a batch stays under the 64 KiB section
  // limit; larger settings are clamped to kScanBatchBytesLimit.
  size_t scan_batch_bytes_max = 32 * 1024;
  // MaxNoOfConcurrentScans: scans open at once on this instance.
  size_t concurrent_scans_max = 256;
  // MaxNoOfConcurrentTransactions (per instance): transids holding local state here.
  size_t transactions_max = 16384;
  // Operations parked on row locks at once on this instance.
  size_t lock_waits_max = 4096;
};

// The largest scan_batch_bytes_max honoured: one more row of the maximum size (plus the
// per-value framing of every column) must still fit in a signal section.
inline constexpr size_t kScanBatchBytesLimit = 32 * 1024;
// Fragments of one table (NDB's MAX_NDB_PARTITIONS is 8160): bounds the placement loop
// of TABLE_ADDREQ against a corrupt fragment count.
inline constexpr uint32_t kFragmentsPerTableMax = 8192;

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

 private:
  // A table this instance knows, with the fragments it holds. Heap-allocated and never
  // moved, because the fragments point at def.schema.
  struct Table {
    protocol::TableDef def;
    std::map<uint32_t, std::unique_ptr<storage::Fragment>> fragments;  // by fragment id
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
  };

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

  // ---- Key operations ----
  void on_key_request(kernel::Signal& signal);
  // Runs a request for the first time and acts on the outcome.
  void execute(protocol::LqhKeyReq request);
  // Acts on an operation's outcome: park it, refuse it, answer it or pass it down the
  // chain. `values` holds what a read returned.
  void conclude(protocol::LqhKeyReq request, const storage::OpResult& result,
                const storage::AttrValues& values);
  void forward(protocol::LqhKeyReq request);
  void confirm(protocol::LqhKeyReq request, uint8_t flags, const storage::AttrValues* values);
  void refuse(const protocol::LqhKeyReq& request, ErrorCode error, std::string message);

  // ---- Transactions ----
  void on_commit_request(kernel::Signal& signal);
  void on_abort_request(kernel::Signal& signal);
  // Commits or aborts everything `transid` holds here, then resumes the operations the
  // released locks let go.
  void end_transaction(uint64_t transid, bool commit);
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
  void refuse_lock_waits(Predicate matches, ErrorCode error, const std::string& message);
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

  // ---- Helpers ----
  Table* find_table(uint32_t table_id);
  storage::Fragment* find_fragment(uint32_t table_id, uint32_t fragment_id);
  void log_malformed(const kernel::Signal& signal, const Status& status);
  void send_or_log(const kernel::BlockAddress& to, kernel::Signal signal);

  // Constant after construction.
  storage::GlobalMemory* const memory_;
  const protocol::ClusterTopology topology_;
  const LocalQueryOptions options_;

  std::map<uint32_t, std::unique_ptr<Table>> tables_;  // by table id
  std::map<uint64_t, Transaction> transactions_;       // by transid
  std::vector<LockWait> lock_waits_;                   // slots; see LockWait
  std::vector<uint32_t> free_wait_slots_;
  // (table id, fragment id, op) -> slot: maps take_ready() answers to their requests.
  std::map<std::tuple<uint32_t, uint32_t, storage::OpId>, uint32_t> waits_by_op_;
  size_t lock_wait_count_ = 0;
  ScanMap scans_;
  uint64_t malformed_signal_count_ = 0;
};

}  // namespace duo::local_query
