// ApiCore: the protocol engine of one API node (DESIGN.md §8) — dictionary requests and
// the table cache, transactions with batched key operations, scans with flow control,
// and what a data node's failure means for all of them. It speaks the data-path
// protocol of ndb-kernel/protocol/messages.h with the coordinator (kCoordinatorBlock)
// and the dictionary (kDictionaryBlock) of the data nodes.
//
// ApiCore never blocks and owns no threads, sockets or clocks: whoever hosts it hands it
// a SignalSink for what it sends and feeds it every received signal (on_signal) and every
// link change (set_node_connected). Two hosts exist: Cluster (cluster_connection.h: real
// TCP links, a mutex around the core, sync and async callers) and SimApiBlock
// (sim_api_block.h: a kernel block in the deterministic simulator). So the whole client
// protocol is testable by hand-fed signals, without a cluster.
//
// Transactions (NDB's NdbTransaction, simplified): begin() picks the coordinator node
// (distribution aware with a hint), operations are defined locally, execute() sends
// every operation defined since the last execute as one batch of TC_KEYREQs and calls
// back once the coordinator's TC_KEYCONF with kTcBatchDone arrived. Many transactions
// may be in flight at once (flexAsynch); each has at most one execute in flight.
//
// Callbacks run inside the call that completes them: on_signal(), set_node_connected(),
// or — when nothing has to travel (a cache hit, a commit of a transaction that never
// reached a coordinator) — the requesting call itself. They may call back into ApiCore.
//
// Limits (DESIGN.md §3 "bounded everything"): transactions open at once, scans open at
// once and dictionary requests in flight are capped by ApiCoreOptions; beyond a cap the
// request fails with kTemporary (the caller retries). Scan buffering is bounded by
// protocol: one round of batches (at most one per fragment, within the coordinator's
// per-round byte budget), because the next round is only asked for once the caller
// consumed this one.
//
// Thread-safety: none; one thread (or one mutex holder) at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/protocol/filegroup.h"
#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/runtime/signal.h"
#include "storage/row/attr_values.h"
#include "storage/row/row_batch.h"
#include "storage/scan/interpreted_update.h"

namespace duo::api {

using protocol::TableDef;
using storage::LockMode;
using storage::OpType;

// Where ApiCore's signals go. The receiver is set; the sender is ApiCore's own address
// ({node_id, kApiBlock, block_instance}). An error means the signal was not sent (kTemporary: no
// link, or the link's buffer is full).
class SignalSink {
 public:
  virtual ~SignalSink() = default;
  virtual Status send(kernel::Signal signal) = 0;
};

// Tables are shared read-only between the cache and the transactions that use them.
using TablePtr = std::shared_ptr<const TableDef>;

struct ApiCoreOptions {
  uint16_t node_id = 0;  // this API node's id (from mgmd)
  // The core's block instance: its address is {node_id, kApiBlock, block_instance}, so
  // answers to what it sends come back to it. One API node may run many cores (one per
  // Session, each at its own instance; the Cluster's dictionary core at 0).
  uint16_t block_instance = 0;
  // The core subscribes to schema events (and keeps the table cache) once a data node is
  // connected. One core per API node does: the dictionary core.
  bool schema_events = true;
  // Transaction ids (api_tx) must be unique per API node, whichever of its cores begins
  // the transaction (the coordinator keys transactions by API node and api_tx): cores
  // of one node share this counter. Null: the core's own.
  std::atomic<uint64_t>* api_tx_counter = nullptr;
  // Transactions begun and not yet closed. NDB's MaxNoOfConcurrentTransactions for one
  // Ndb object is 1024 by default; the bench runs threads x parallelism of them.
  size_t transactions_open_max = 4096;
  // Operations one transaction may define (all batches together): bounds its records.
  size_t operations_per_transaction_max = 8192;
  size_t scans_open_max = 256;
  size_t dictionary_requests_max = 256;
};

enum class ExecType : uint8_t {
  kNoCommit,  // run the batch, keep the transaction open (locks held)
  kCommit,    // run the batch (if any) and commit
  kRollback,  // abort the transaction; operations not executed yet are dropped
};

enum class TxState : uint8_t {
  kOpen,       // operations may be defined and executed
  kExecuting,  // an execute is in flight
  kCommitted,  // final
  kAborted,    // final: error() says why (OK for a requested rollback)
};
const char* tx_state_name(TxState state);

// The outcome of one operation, once its batch completed.
struct OpResult {
  Status status;               // per-operation error (kNotFound, kDuplicateKey, ...)
  storage::AttrValues values;  // reads: the requested columns
  bool filtered = false;       // interpreted update whose guard was not TRUE
  bool executed = false;       // false until its batch completed
};

// Options of one operation.
struct OpOptions {
  // An error of this operation does not abort the transaction (NDB's AO_IgnoreError):
  // it shows only in the operation's result.
  bool ignore_error = false;
};

// The transaction's batch completed: OK when the batch ran (and committed, for kCommit);
// otherwise the transaction is aborted and the status says why. Per-operation results
// are read with op_result().
using ExecuteCallback = std::function<void(uint64_t api_tx, const Status& status)>;
using TableCallback = std::function<void(Result<TablePtr> table)>;
using StatusCallback = std::function<void(const Status& status)>;
using TableListCallback = std::function<void(Result<std::vector<protocol::TableListEntry>>)>;
// The answer to a disk-data object change (FILEGROUP_REQ): OK with the filegroup's id and
// new version, or the refusal with NDB's error code (protocol/filegroup.h kNdb*; 0 when
// the refusal is not one of NDB's) and `detail` (FILEGROUP_REF c).
struct FilegroupOutcome {
  Status status;
  uint32_t ndb_error = 0;
  uint32_t detail = 0;
  uint32_t filegroup_id = 0;
  uint32_t version = 0;
};
using FilegroupCallback = std::function<void(FilegroupOutcome outcome)>;
using FilegroupListCallback = std::function<void(Result<std::vector<protocol::FilegroupDef>>)>;
using DbinfoOperationsCallback =
    std::function<void(Result<std::vector<protocol::DbinfoOperation>>)>;
// A round of rows arrived for the scan, or it ended (done or failed): call next_row().
using ScanCallback = std::function<void(uint32_t scan_id)>;

// A scan of one table: full scan or ordered index range, with a pushed filter.
struct ScanSpec {
  std::string filter;             // FilterProgram::encode(); empty = every row
  std::vector<uint16_t> columns;  // empty = every column
  int32_t index = -1;             // ordered index number; -1 = full table scan
  storage::AttrValues low, high;  // index bounds (prefixes); empty = unbounded
  bool low_inclusive = true;
  bool high_inclusive = true;
  bool descending = false;
  uint32_t batch_rows = 0;  // rows per fragment batch; 0 = coordinator's default
};

enum class ScanFetch : uint8_t {
  kRow,      // *row is the next row (valid until the next next_row/close_scan call)
  kWaiting,  // no row buffered; the scan callback fires when more arrive
  kDone,     // every row was returned
};

struct ApiCoreStats {
  uint64_t transactions_begun = 0;
  uint64_t transactions_committed = 0;
  uint64_t transactions_aborted = 0;
  uint64_t batches_executed = 0;
  uint64_t operations_sent = 0;
  uint64_t scans_started = 0;          // SCAN_TABREQs sent
  uint64_t scan_next_requests = 0;     // SCAN_TABNEXTREQs sent (one per round after the first)
  uint64_t scan_batches_received = 0;  // SCAN_TABCONFs received (one or more per round)
  uint64_t stray_signals = 0;      // answers for closed transactions/scans/requests
  uint64_t malformed_signals = 0;  // signals that failed to decode (logged)
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
};

class ApiCore {
 public:
  // `sink` must outlive the core. The topology is the cluster's (from the configuration).
  ApiCore(ApiCoreOptions options, protocol::ClusterTopology topology, SignalSink* sink);
  ~ApiCore();
  ApiCore(const ApiCore&) = delete;
  ApiCore& operator=(const ApiCore&) = delete;

  // ---- Fed by the host ----

  // Handles one received signal (TC_KEYCONF, SCAN_TABCONF/REF, dictionary answers,
  // SCHEMA_EVENT). Unknown, stray and malformed signals are counted and dropped. Returns
  // false when nothing a caller may wait for changed (a stray, the dropped answer to a
  // released read-only transaction's commit), so the host need not wake anybody.
  bool on_signal(kernel::Signal& signal);
  // A link to data node `node` came up / went down. Down fails every transaction, scan
  // and dictionary request whose coordinator is `node` with kTemporary: "node failure
  // caused abort of transaction" (NDB 4010), except a transaction whose commit was in
  // flight, whose outcome is unknown (commit_outcome_unknown_message: the survivors'
  // takeover committed it everywhere or nowhere). The first link up (and the loss of
  // the subscribed node) subscribes to schema events.
  void set_node_connected(uint16_t node, bool connected);
  bool node_connected(uint16_t node) const { return connected_.count(node) != 0; }
  std::vector<uint16_t> connected_nodes() const {
    return std::vector<uint16_t>(connected_.begin(), connected_.end());
  }

  // ---- Dictionary ----

  // Creates `table` (its schema.table_id and version are assigned by the dictionary;
  // fragment_count 0 means the cluster default). Sent to the master dictionary, the one
  // of the lowest connected data node. The callback gets the table with id and version.
  Status create_table(TableDef table, TableCallback done);
  Status drop_table(uint32_t table_id, StatusCallback done);
  // Replaces the definition of table `table.schema.table_id` (NDB's online ALTER):
  // its ordered indexes, name and sql_definition may change, its columns and primary key
  // may not (kInvalidArgument). `table.version` must be the version the change was made
  // from (kSchemaVersion when the table changed meanwhile). Every data node rebuilds the
  // table's indexes from its rows before the answer; a UNIQUE index over duplicate keys
  // fails with kDuplicateKey and changes nothing. The callback gets the new definition.
  Status alter_table(TableDef table, TableCallback done);
  // The table named `name`, from the cache or from any connected data node's dictionary.
  Status get_table(const std::string& name, TableCallback done);
  // The cached table, or nullptr.
  TablePtr cached_table(const std::string& name) const;
  Status list_tables(TableListCallback done);
  // Disk-data objects: a change (CREATE/ALTER/DROP LOGFILE GROUP and TABLESPACE) run by
  // the master dictionary, and the list of every filegroup with its files from any
  // connected data node (not cached: always what the dictionary holds now).
  Status change_filegroup(protocol::FilegroupChange change, FilegroupCallback done);
  Status list_filegroups(FilegroupListCallback done);

  // ---- ndbinfo ----

  // ndbinfo.cluster_operations: the live operations of every local_query instance of
  // every connected data node (DBINFO_SCANREQ to each). An instance whose node drops
  // meanwhile is not waited for. kTemporary when no data node is connected.
  Status dbinfo_operations(DbinfoOperationsCallback done);

  // ---- Transactions ----

  // Starts a transaction and returns its id (api_tx). With a hint (table + key holding
  // the table's primary key columns), the coordinator is the node holding the primary
  // replica of the key's fragment among the connected nodes (a dead primary's backup
  // has taken over), so the coordinator's first hop is local (NDB's distribution
  // awareness) — or, for a READ_BACKUP table, at one of the key's live replicas chosen
  // by its hash, where the coordinator reads locally; without one, connected data nodes
  // take turns. kTemporary when no data
  // node is connected or transactions_open_max transactions are open.
  Result<uint64_t> begin(const TableDef* hint_table = nullptr,
                         const storage::AttrValues* hint_key = nullptr);
  // The coordinator node begin() chose.
  Result<uint16_t> coordinator_of(uint64_t api_tx) const;

  // Define one operation; returns its op_index (0, 1, ... across all batches of the
  // transaction). `key` holds the primary key columns; insert and write take the whole
  // row in `row`. Only valid in kOpen.
  Result<uint32_t> read(uint64_t api_tx, const TableDef& table, storage::AttrValues key,
                        std::vector<uint16_t> columns, LockMode lock = LockMode::kCommittedRead,
                        OpOptions options = {});
  Result<uint32_t> insert(uint64_t api_tx, const TableDef& table, storage::AttrValues row,
                          OpOptions options = {});
  Result<uint32_t> update(uint64_t api_tx, const TableDef& table, storage::AttrValues key,
                          storage::AttrValues values, OpOptions options = {});
  Result<uint32_t> write(uint64_t api_tx, const TableDef& table, storage::AttrValues row,
                         OpOptions options = {});
  Result<uint32_t> remove(uint64_t api_tx, const TableDef& table, storage::AttrValues key,
                          OpOptions options = {});
  // `program` is validated against the table's schema here, so a bad program fails at
  // definition rather than on the data node.
  Result<uint32_t> interpreted_update(uint64_t api_tx, const TableDef& table,
                                      storage::AttrValues key,
                                      const storage::InterpretedUpdate& program,
                                      OpOptions options = {});

  // Sends the operations defined since the last execute as one batch (kOpExecute on the
  // last; kOpCommit too with kCommit). kCommit without new operations sends TC_COMMITREQ,
  // kRollback sends TC_ROLLBACKREQ. `done` runs once the batch completed. An error
  // return means nothing is pending and `done` is never called: kTransactionState (not
  // kOpen), or a send failure (the transaction is then aborted with that error).
  Status execute(uint64_t api_tx, ExecType type, ExecuteCallback done);

  Result<TxState> state(uint64_t api_tx) const;
  // The GCI a committed transaction committed in (0 before it committed): it survives a
  // crash of the whole cluster once that GCI is complete.
  Result<uint32_t> commit_gci(uint64_t api_tx) const;
  // Why the transaction aborted: OK while it has not (and after a requested rollback);
  // kInvalidArgument for an unknown transaction.
  Status error(uint64_t api_tx) const;
  // The result of operation `op_index`; kInvalidArgument for an unknown index.
  Result<const OpResult*> op_result(uint64_t api_tx, uint32_t op_index) const;
  size_t operation_count(uint64_t api_tx) const;
  // Forgets the transaction. If the coordinator may still hold it open (operations were
  // sent and it neither committed nor aborted), a TC_ROLLBACKREQ is sent; a pending
  // execute callback is dropped, never called. Unknown ids are ignored.
  void close(uint64_t api_tx);
  size_t open_transactions() const { return transactions_.size(); }

  // ---- Scans ----

  // Starts a scan of `table` within transaction `api_tx` (at its coordinator). `ready`
  // runs whenever a round of rows has arrived or the scan ends. Returns the scan id.
  Result<uint32_t> scan(uint64_t api_tx, const TableDef& table, const ScanSpec& spec,
                        ScanCallback ready);
  // The next buffered row. Consuming the last row of a round asks the coordinator for
  // the next round from every fragment that has more (one SCAN_TABNEXTREQ). A failed
  // scan returns its error. `ready` runs once per round (when its last SCAN_TABCONF
  // came), at the end and on failure.
  Result<ScanFetch> next_row(uint32_t scan_id, std::optional<storage::RowBatch::Row>* row);
  // Stops the scan (SCAN_TABNEXTREQ with kScanClose if rows may still come) and forgets
  // it. Unknown ids are ignored.
  void close_scan(uint32_t scan_id);

  const ApiCoreStats& stats() const { return stats_; }
  const protocol::ClusterTopology& topology() const { return topology_; }
  kernel::BlockAddress address() const {
    return kernel::BlockAddress{options_.node_id, protocol::kApiBlock, options_.block_instance};
  }

 private:
  struct Operation;
  struct Transaction;
  struct Scan;
  struct DictRequest;

  // Sends `signal` to `block` on `node`.
  Status send_to(uint16_t node, uint16_t block, kernel::Signal signal);
  // Connected data nodes in turn; 0 if none.
  uint16_t next_node_round_robin();
  uint16_t lowest_connected_node() const;

  Result<uint32_t> define(uint64_t api_tx, const TableDef& table, OpType type, LockMode lock,
                          protocol::OpBody body, OpOptions options);
  // A read-only transaction's commit was sent without waiting: its answer is dropped.
  void note_released(uint64_t api_tx, uint16_t coordinator);
  // Whether `api_tx` was released (and forgets it): its answer is to be dropped.
  bool take_released(uint64_t api_tx);
  // False when the answer changed nothing (released, stray or malformed).
  bool on_tc_key_conf(kernel::Signal& signal);
  // Completes the transaction's execute: state, results, callback.
  void finish_execute(Transaction& tx, Status status, bool committed);
  void abort_transaction(Transaction& tx, Status why);

  // False until a round's rows are all in (nobody need wake before).
  bool on_scan_tab_conf(kernel::Signal& signal);
  void on_scan_tab_ref(kernel::Signal& signal);
  void fail_scan(Scan& scan, Status why);

  Status start_dict_request(uint16_t node, kernel::Signal signal, DictRequest request);
  void on_dict_answer(kernel::Signal& signal);
  void on_dbinfo_scan_conf(const kernel::Signal& signal);
  // Calls back the dbinfo requests nothing is awaited for any more.
  void finish_dbinfo_requests();
  void on_schema_event(const kernel::Signal& signal);
  void subscribe_schema_events();
  void forget_table(uint32_t table_id, const std::string& name);

  // Constant after construction.
  const ApiCoreOptions options_;
  const protocol::ClusterTopology topology_;
  const std::vector<uint16_t> data_nodes_;  // ascending
  SignalSink* const sink_;

  std::set<uint16_t> connected_;
  size_t round_robin_ = 0;
  std::atomic<uint64_t> own_api_tx_counter_{0};
  uint32_t next_scan_id_ = 1;
  uint32_t next_request_id_ = 1;
  uint16_t subscribed_node_ = 0;  // data node whose dictionary sends us SCHEMA_EVENTs

  using TransactionMap = std::unordered_map<uint64_t, std::unique_ptr<Transaction>>;
  TransactionMap transactions_;
  // Closed transactions' records with their map entries (node handles), kept for the
  // next ones with their lists emptied, so begin() and close() allocate nothing (at most
  // kSpareRecordsMax; poisoned under AddressSanitizer while kept). And the read values
  // of closed transactions' operations, whose buffers the next reads decode into.
  static constexpr size_t kSpareRecordsMax = 64;
  std::vector<TransactionMap::node_type> spare_transactions_;
  std::vector<storage::AttrValues> spare_values_;
  // Read-only transactions committed without waiting (see execute()): api_tx -> the
  // coordinator whose answer to the releasing TC_COMMITREQ is still to come and dropped;
  // and entries of answered ones, kept for the next (node handles, at most
  // kSpareRecordsMax).
  using ReleasedMap = std::unordered_map<uint64_t, uint16_t>;
  ReleasedMap released_;
  std::vector<ReleasedMap::node_type> spare_released_;
  // The TC_KEYCONF being handled, parsed into a view kept from one to the next (read
  // only before the execute's callback runs).
  protocol::TcKeyConfView conf_view_;
  std::unordered_map<uint32_t, std::unique_ptr<Scan>> scans_;
  std::map<uint32_t, std::unique_ptr<DictRequest>> dict_requests_;
  struct DbinfoRequest {
    std::set<std::pair<uint16_t, uint16_t>> awaiting;  // (node, local_query instance)
    std::vector<protocol::DbinfoOperation> rows;
    DbinfoOperationsCallback done;
  };
  std::map<uint32_t, DbinfoRequest> dbinfo_requests_;
  std::map<std::string, TablePtr> table_cache_;  // by name
  ApiCoreStats stats_;
};

// The message of the kTemporary error every request in flight at a failed node gets.
std::string node_failure_message(uint16_t node);
// The kTemporary error of a transaction whose coordinator died while its commit was in
// flight (NDB 4012-style "outcome unknown").
std::string commit_outcome_unknown_message(uint16_t node);

}  // namespace duo::api
