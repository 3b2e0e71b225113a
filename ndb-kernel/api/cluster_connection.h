// Cluster: an application's connection to a DuoDB cluster (NDB's
// Ndb_cluster_connection + Ndb + NdbTransaction, simplified; DESIGN.md §8).
//
// Cluster::connect() parses the connect string, takes an API node id from duo_mgmd
// (`get nodeid`, nodetype api) and keeps that session open for the connection's life
// (the id stays ours; `get status` once a second keeps it alive and tells us the
// transporter ports data nodes reported), fetches the configuration (`get config`),
// builds the ClusterTopology, and creates a Transporter that dials every data node (API
// ids are higher, so API nodes dial). Protocol: docs/formats/mgm-protocol.md,
// docs/formats/transport.md.
//
// Callers use Sessions (NDB's Ndb object: one per thread). Each Session has its own
// protocol engine (an ApiCore at its own block instance, so the data nodes answer it
// directly) under its own mutex: sessions share no lock on the request path. A Session
// begins Transactions, which run either synchronously (execute() blocks until the batch
// completed) or asynchronously (execute_async() with a callback; Session::poll() runs
// completed callbacks on the calling thread) — many transactions in flight from one
// thread is the flexAsynch pattern duo_bench uses. Dictionary requests and schema events
// go through the Cluster's own engine (instance 0), which keeps the table cache.
//
// Who reads the sockets (NDB's poll right): a thread that must wait for the cluster
// polls the transporter itself if nobody else does — it receives its own answer without
// any hand-off, and delivers what arrives for other sessions straight into their
// engines, waking only those whose wait is over. When it has its answer it hands the
// poll right to another waiting thread. Sends are written to the socket by the sending
// thread. The transporter's own thread only dials and handles links while the API is
// idle (it then polls, blocking up to kIdlePollMs), and otherwise looks at the sockets
// every kBusyTickMs without waiting, so that nothing arriving for a session that is not
// waiting (a schema event, a node failure report) sits there for long. With many threads
// waiting at once (ClusterOptions::recv_thread_activation_threshold) it becomes a
// receive thread and keeps the poll right: past a few waiters, handing the poll right
// from thread to thread costs more wake-ups than one thread delivering to all.
//
// Every wait is bounded by ClusterOptions::request_timeout_ms; a transaction that times
// out is closed (rolled back at its coordinator) and fails with kTemporary.
//
// Thread-safety: Cluster is safe from any thread. A Session and its Transactions and
// ScanCursors belong to one thread at a time. Destroy every Transaction and Session
// before their Cluster.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "mgmd/client/mgm_connection.h"
#include "ndb-kernel/api/api_core.h"
#include "ndb-kernel/api/blob_parts.h"
#include "ndb-kernel/common/config/config_parser.h"
#include "ndb-kernel/transport/transporter.h"

namespace duo::api {

struct ClusterOptions {
  std::string connect_string = "localhost:1186";
  uint32_t node_id = 0;          // API node id to ask for; 0 = any free API id
  std::string name = "duo_api";  // shown by `duo_mgm SHOW`
  uint64_t mgm_timeout_ms = 5000;
  // `get status` period: keeps the mgmd session alive (its idle timeout is minutes) and
  // learns data nodes' ports when they (re)start.
  uint64_t mgm_poll_interval_ms = 1000;
  // Longest wait of any blocking call (execute, dictionary requests, scan rows).
  uint64_t request_timeout_ms = 30000;
  // NDB's ndb_recv_thread_activation_threshold: with this many threads waiting for the
  // cluster at once, the transporter's thread becomes a receive thread — it keeps the
  // poll right and waiting threads only sleep — until fewer wait again for a while.
  // Below it, waiting threads poll themselves (no hand-off for a lone waiter). 0: the
  // receive thread always polls; 16 (NDB's maximum) or more: only threads that wait.
  uint32_t recv_thread_activation_threshold = 8;
  size_t send_buffer_bytes_max = 4 * 1024 * 1024;  // per data node link
  // TLS on the links (docs/formats/transport.md, TLS): used when this API node's section
  // or any data node's has RequireTls=1 (such a data node refuses plaintext), or when
  // require_tls is set here. Keys (NDB-Cluster-cert, NDB-Node-<id>.cert/.key) come from
  // tls_search_path (':'-separated directories); empty means $DUO_TLS_SEARCH_PATH, or
  // else $HOME/ndb-tls (NDB's default).
  bool require_tls = false;
  std::string tls_search_path;
  ApiCoreOptions core;                             // core.node_id is set from mgmd
};

// Transporter peers for every data node of `config`: HostName (127.0.0.1 when empty)
// and ServerPort (0 = dynamic, learned from `get status`).
std::vector<transport::PeerConfig> data_node_peers(const config::ClusterConfig& config);

// True if API node `node_id`'s links must use TLS (see ClusterOptions::require_tls).
bool api_requires_tls(const config::ClusterConfig& config, uint32_t node_id);
// ClusterOptions::tls_search_path with its defaults applied.
std::string effective_tls_search_path(const std::string& configured);

class Session;
class Transaction;

// Waits of user threads for the cluster (NDB's Ndb_api_wait_*_count): one per blocking
// call that had to sleep for an answer, i.e. the round trips a caller paid for.
struct WaitCounts {
  uint64_t exec_complete = 0;  // Transaction::execute
  uint64_t scan_result = 0;    // ScanCursor::next, for a batch of rows
  uint64_t meta_request = 0;   // the synchronous dictionary calls
};

// Who read the sockets, and what waiting cost (SHOW STATUS Duo_api_poll_*): per
// statement they show the thread hand-offs the poll right saves or costs.
struct PollCounts {
  uint64_t owner_turns = 0;     // transporter loop turns run by a waiting thread itself
  uint64_t io_thread_turns = 0;  // turns run by the transporter's thread
  uint64_t sleeps = 0;           // a waiting thread slept until woken (not polling)
  uint64_t handoffs = 0;         // the poll right handed to a sleeping waiter
  uint64_t receive_thread_activations = 0;
};

class Cluster {
 public:
  // Sessions one Cluster may have open at once: each is a block instance (16 bits, 0 is
  // the Cluster's own engine).
  static constexpr size_t kSessionsMax = 65535;

  // Connects as described above. kIoError when mgmd is unreachable, kConfigError when
  // it refuses an API node id or serves a configuration without data nodes.
  static Result<std::unique_ptr<Cluster>> connect(ClusterOptions options);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Waits until every data node is linked — or every one mgmd reports STARTED, when at
  // least one is linked: a data node that is down (or stays out after failing while the
  // others went on) is not waited for — or `timeout_ms` passed. Returns the number of
  // linked data nodes (at least one); kTemporary when none is linked by then.
  Result<size_t> wait_until_ready(uint64_t timeout_ms);
  // Stops the links and ends the mgmd session (freeing the API node id). Idempotent;
  // in-flight requests fail with kTemporary.
  void disconnect();

  uint16_t node_id() const { return node_id_; }
  const protocol::ClusterTopology& topology() const { return topology_; }

  // A new session (one per thread); null when kSessionsMax are open.
  std::unique_ptr<Session> new_session();

  // Dictionary, synchronous.
  Result<TablePtr> get_table(const std::string& name);
  // Creates the table, then the parts table of each BLOB/TEXT column in `blob_parts`
  // (blob_parts.h); if one fails the table is dropped again and the error returned.
  Result<TablePtr> create_table(TableDef table, const std::vector<BlobPartsSpec>& blob_parts = {});
  // Drops the table and its blob parts tables.
  Status drop_table(const std::string& name);
  // ApiCore::alter_table, and its three common uses on the table named `name`. A new
  // name in another database moves the table's blob parts tables along.
  Result<TablePtr> alter_table(TableDef table);
  Result<TablePtr> create_index(const std::string& name, storage::IndexDef index);
  Result<TablePtr> drop_index(const std::string& name, const std::string& index_name);
  Result<TablePtr> rename_table(const std::string& name, const std::string& new_name);
  Result<std::vector<protocol::TableListEntry>> list_tables();
  // ApiCore::change_filegroup / list_filegroups, waited for.
  FilegroupOutcome change_filegroup(protocol::FilegroupChange change);
  Result<std::vector<protocol::FilegroupDef>> list_filegroups();
  // ndbinfo.cluster_operations: ApiCore::dbinfo_operations, synchronous.
  Result<std::vector<protocol::DbinfoOperation>> dbinfo_operations();

  // The engines' counters, summed over the Cluster's own and every session's (those of
  // sessions already closed included).
  ApiCoreStats stats();
  WaitCounts wait_counts() const;
  PollCounts poll_counts() const;
  // Bytes written to and read from the data node links.
  transport::TransporterStats transporter_stats() const;

  // A thread waiting for the cluster (defined in the .cc; internal).
  struct Waiter;

 private:
  friend class Session;
  friend class Transaction;
  friend class ScanCursor;
  class TransporterSink;

  // How long the transporter's thread waits in epoll while no session waits for the
  // cluster, and how often it looks at the sockets (without waiting) while they do.
  static constexpr uint64_t kIdlePollMs = 10;
  static constexpr uint64_t kBusyTickMs = 10;

  Cluster(ClusterOptions options, uint16_t node_id, protocol::ClusterTopology topology);
  // The dictionary calls themselves (the public ones add the blob parts tables).
  Result<TablePtr> create_one_table(TableDef table);
  Status drop_one_table(const TableDef& table);
  Result<TablePtr> alter_one_table(TableDef table);
  Status start(const config::ClusterConfig& config, const std::string& secret);
  // Takes node id `node_id` (0 = any) on a fresh session to mgmd.
  static Result<uint16_t> allocate_node_id(mgm::MgmConnection& connection,
                                           const mgm::ConnectString& target, uint32_t node_id,
                                           const ClusterOptions& options);
  void run_mgm_poller();
  void poll_mgm_status();
  void run_io_thread();

  // ---- Receiving (the poll right) ----
  // The transporter's receive callback: routes `signal` to the engine at its receiver's
  // block instance. Runs on the poll owner's thread.
  Status on_receive(kernel::Signal& signal);
  void on_link_event(const transport::LinkEvent& event);
  // Waits (with `lock` held on entry and exit: the mutex guarding what `done` reads)
  // until done() or the request timeout; false on timeout. Polls the transporter itself
  // while nobody else does. Counts one wait in `waits` if done() was not true at once.
  bool wait(std::unique_lock<std::mutex>& lock, Waiter& waiter, std::atomic<uint64_t>& waits,
            const std::function<bool()>& done);
  // Returns once `waiter` has news, `deadline_ns` passed, or it is asked to take over
  // polling; the caller re-checks what it waits for.
  void wait_for_news(Waiter& waiter, uint64_t deadline_ns);
  // One turn of the transporter (the caller holds the poll right), then wakes the
  // waiters that got news, except `self`.
  void poll_turn(uint64_t max_wait_ms, Waiter* self);
  // Tells `waiter` something it may wait for changed: wakes it (at the end of the
  // current delivery stretch, if the calling thread is in one; out of epoll, if it is
  // the poll owner).
  void notify(const std::shared_ptr<Waiter>& waiter);
  bool try_take_poll_right();
  // The transporter's thread as the receive thread: takes the poll right as soon as it
  // is free and keeps it until few threads wait any more.
  void run_receive_thread();
  // Gives the poll right up and wakes one waiter without news to take it over.
  void release_poll_right();

  // ---- Node state (mutex_ held) ----
  // Marks `node` usable or not in every engine (failing what it coordinated when not).
  void set_usable(uint16_t node, bool usable);
  void on_link_change(uint16_t node, bool connected);

  // Constant after connect().
  const ClusterOptions options_;
  const uint16_t node_id_;
  const protocol::ClusterTopology topology_;
  std::vector<transport::PeerConfig> peers_;
  std::unique_ptr<TransporterSink> sink_;
  std::unique_ptr<transport::Transporter> transporter_;
  // api_tx of every transaction of this API node, whichever engine begins it.
  std::atomic<uint64_t> api_tx_counter_{0};
  // WaitCounts, atomic (relaxed) so that they need no lock.
  std::atomic<uint64_t> waits_exec_complete_{0};
  std::atomic<uint64_t> waits_scan_result_{0};
  std::atomic<uint64_t> waits_meta_request_{0};
  // PollCounts, relaxed.
  std::atomic<uint64_t> owner_turns_{0};
  std::atomic<uint64_t> io_thread_turns_{0};
  std::atomic<uint64_t> sleeps_{0};
  std::atomic<uint64_t> handoffs_{0};
  std::atomic<uint64_t> receive_thread_activations_{0};

  // Node state. Lock order: mutex_, then dict_mutex_ or sessions_mutex_, then a
  // session's mutex; a thread holding a later one never takes an earlier one.
  std::mutex mutex_;
  std::condition_variable links_changed_;  // a link came up or went down
  bool disconnected_ = false;              // GUARDED_BY(mutex_)
  std::set<uint16_t> usable_;              // GUARDED_BY(mutex_): data nodes in use
  // Data nodes mgmd last reported STARTED; nullopt before its first answer.
  std::optional<std::set<uint16_t>> mgm_started_;  // GUARDED_BY(mutex_)
  // Data nodes whose link is up but which mgmd does not report STARTED yet (a node in
  // its node restart): the client library uses them once it does.
  std::set<uint16_t> linked_not_started_;  // GUARDED_BY(mutex_)

  // The Cluster's own engine: dictionary requests, schema events, the table cache.
  std::mutex dict_mutex_;
  ApiCore dict_core_;  // GUARDED_BY(dict_mutex_)

  // Open sessions by block instance (index; 0 unused), and free instances.
  std::shared_mutex sessions_mutex_;
  std::vector<Session*> sessions_;         // GUARDED_BY(sessions_mutex_)
  std::vector<uint16_t> free_instances_;   // GUARDED_BY(sessions_mutex_)
  ApiCoreStats closed_sessions_stats_;     // GUARDED_BY(sessions_mutex_)

  // The poll right: who runs the transporter's loop now, and who waits.
  std::mutex poll_mutex_;
  std::condition_variable poll_released_;   // for disconnect(): the owner let go
  bool poll_owned_ = false;                 // GUARDED_BY(poll_mutex_)
  // The transporter's thread is the receive thread (see the threshold above). Changed
  // under poll_mutex_; atomic for the transporter's thread's idle wait.
  std::atomic<bool> recv_thread_active_{false};
  bool poll_closed_ = false;                // GUARDED_BY(poll_mutex_): disconnecting
  std::vector<Waiter*> poll_waiters_;       // GUARDED_BY(poll_mutex_)
  // When a thread last started to wait for the cluster (steady ns): the transporter's
  // thread stays out of the way while sessions are active.
  std::atomic<uint64_t> last_wait_ns_{0};

  // The transporter's thread (links while idle; see the file comment).
  std::thread io_thread_;
  std::mutex io_mutex_;
  std::condition_variable io_wake_;
  std::atomic<bool> io_stop_{false};  // set under io_mutex_ (and its waits' mutexes notified)

  // The mgmd session: the poller thread's, after connect().
  mgm::ConnectString mgm_target_;
  std::unique_ptr<mgm::MgmConnection> mgm_;
  std::vector<uint16_t> peer_ports_;  // what each peer is dialled at, by index in peers_
  std::thread mgm_poller_;
  std::mutex poller_mutex_;
  std::condition_variable poller_wake_;
  bool poller_stop_ = false;  // GUARDED_BY(poller_mutex_)
};

// One thread's context: begins transactions and runs their async callbacks.
class Session {
 public:
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Begins a transaction; with a hint (table and a key with its primary key columns) at
  // the node holding that key's primary replica. kTemporary when no data node is linked
  // or too many transactions are open.
  Result<std::unique_ptr<Transaction>> begin(const TableDef* hint_table = nullptr,
                                             const storage::AttrValues* hint_key = nullptr);
  // Runs the callbacks of async executes that completed, waiting up to `timeout_ms` for
  // the first one. Returns how many ran.
  size_t poll(uint64_t timeout_ms);

  Cluster& cluster() { return *cluster_; }

 private:
  friend class Cluster;
  friend class Transaction;
  friend class ScanCursor;
  Session(Cluster* cluster, uint16_t instance, ApiCoreOptions core_options);

  Cluster* const cluster_;
  const uint16_t instance_;
  // Woken by whoever delivers to this session's engine. Shared: the poll owner may
  // still hold it for a wake-up when the session is gone.
  const std::shared_ptr<Cluster::Waiter> waiter_;
  std::mutex mutex_;
  ApiCore core_;                        // GUARDED_BY(mutex_)
  std::deque<Transaction*> completed_;  // GUARDED_BY(mutex_)
};

class ScanCursor;

class Transaction {
 public:
  using AsyncCallback = std::function<void(Transaction& tx, const Status& status)>;

  // Closes the transaction (rolled back at the coordinator if still open).
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  uint64_t id() const { return api_tx_; }

  // Operation definitions (ApiCore's); each returns the operation's index.
  Result<uint32_t> read(const TableDef& table, storage::AttrValues key,
                        std::vector<uint16_t> columns = {},
                        LockMode lock = LockMode::kCommittedRead, OpOptions options = {});
  Result<uint32_t> insert(const TableDef& table, storage::AttrValues row, OpOptions options = {});
  Result<uint32_t> update(const TableDef& table, storage::AttrValues key,
                          storage::AttrValues values, OpOptions options = {});
  Result<uint32_t> write(const TableDef& table, storage::AttrValues row, OpOptions options = {});
  Result<uint32_t> remove(const TableDef& table, storage::AttrValues key, OpOptions options = {});
  Result<uint32_t> interpreted_update(const TableDef& table, storage::AttrValues key,
                                      const storage::InterpretedUpdate& program,
                                      OpOptions options = {});

  // Runs the defined operations and waits for the outcome (ApiCore::execute's status).
  // Reads of BLOB/TEXT columns with parts get their whole values: the batch runs without
  // commit, then the parts are read (a kCommit commits after that).
  Status execute(ExecType type);
  // Starts the batch; `done` runs from the session's poll() once it completed. An error
  // return means `done` will not run. Not for batches reading BLOB/TEXT parts
  // (kInvalidArgument): those need more round trips than one.
  Status execute_async(ExecType type, AsyncCallback done);

  // A copy of operation `op_index`'s result.
  Result<OpResult> result(uint32_t op_index);
  TxState state();
  // Once committed: the GCI the transaction committed in (durable when it is complete).
  uint32_t commit_gci();

  // Starts a scan within this transaction. Rows with BLOB/TEXT values beyond the head
  // get their parts read (in this transaction) as ScanCursor::next returns them.
  Result<std::unique_ptr<ScanCursor>> scan(const TableDef& table, const ScanSpec& spec);

 private:
  friend class Session;
  friend class ScanCursor;
  Transaction(Session* session, uint64_t api_tx) : session_(session), api_tx_(api_tx) {}
  // Starts the execute; the session's mutex held.
  Status start_execute(ExecType type);
  // execute() without the blob reads' completion.
  Status execute_batch(ExecType type);
  // A copy of an operation's result as the core has it.
  Result<OpResult> raw_result(uint32_t op_index);

  // ---- BLOB/TEXT parts (transaction_blobs.cc; layout in blob_parts.h) ----
  // A column with a parts table, resolved.
  struct BlobColumn {
    uint16_t column = 0;
    uint32_t inline_bytes = 0;
    uint32_t part_bytes = 0;
    TablePtr parts;
  };
  // A read whose values get their parts once its batch ran.
  struct BlobRead {
    uint32_t op = 0;
    TableDef table;
    storage::AttrValues key;
    LockMode lock = LockMode::kCommittedRead;
  };
  // The columns of `table` that have parts tables (empty for most tables, at no cost).
  Result<std::vector<BlobColumn>> blob_columns(const TableDef& table);
  // The total lengths of `columns` in the row with `key`, read under an exclusive lock
  // (the head's lock guards its parts); nullopt when the row does not exist.
  Result<std::optional<std::vector<uint64_t>>> lock_blob_heads(
      const TableDef& table, const storage::AttrValues& key, const std::vector<BlobColumn>& columns);
  // `row` with every whole BLOB value cut to its head.
  storage::AttrValues with_blob_heads(const storage::AttrValues& row,
                                      const std::vector<BlobColumn>& columns);
  // Defines the part writes of `whole` (a whole value, or empty for NULL/none) of
  // `column` in the row keyed by `key_source`, and the removal of the parts past its
  // own up to `old_count`; executes (no commit) each kBlobBatchBytesMax of parts.
  Status define_blob_parts(const TableDef& table, const storage::AttrValues& key_source,
                           const BlobColumn& column, std::string_view whole, uint64_t old_count,
                           bool fresh_row);
  // The write paths of insert/update/write/remove for a table with parts columns.
  Result<uint32_t> insert_with_blobs(const TableDef& table, storage::AttrValues row,
                                     OpOptions options, const std::vector<BlobColumn>& columns);
  Result<uint32_t> change_with_blobs(OpType kind, const TableDef& table, storage::AttrValues key,
                                     storage::AttrValues values, OpOptions options,
                                     const std::vector<BlobColumn>& columns);
  // Replaces the heads in *values (a row of `table` with its key columns) by the whole
  // values: locks the heads shared, then reads the parts in batches.
  Status fetch_blob_values(const TableDef& table, const std::vector<BlobColumn>& columns,
                           const storage::AttrValues& key_source, storage::AttrValues* values);
  // After a batch ran: the whole values of its blob reads, kept in blob_results_.
  Status complete_blob_reads();

  Session* const session_;
  const uint64_t api_tx_;
  // GUARDED_BY(session_->mutex_):
  bool executing_ = false;
  Status status_;  // the last execute's outcome
  AsyncCallback async_done_;
  bool closed_ = false;  // closed by a timeout
  // Owned by the thread using the transaction (no lock needed):
  std::vector<BlobRead> blob_reads_;                   // reads awaiting their parts
  std::map<uint32_t, storage::AttrValues> blob_results_;  // whole values by operation
  size_t blob_batch_bytes_ = 0;  // part bytes defined since the last execute
};

// Rows of one scan, fetched synchronously. Closes the scan when destroyed.
class ScanCursor {
 public:
  ~ScanCursor();
  ScanCursor(const ScanCursor&) = delete;
  ScanCursor& operator=(const ScanCursor&) = delete;

  // The next row's values (in projection order) into *row: true, or false at the end.
  Result<bool> next(storage::AttrValues* row);

 private:
  friend class Transaction;
  ScanCursor(Session* session, uint32_t scan_id) : session_(session), scan_id_(scan_id) {}

  Session* const session_;
  const uint32_t scan_id_;
  // A scan of blob columns with parts: its transaction reads the parts of each row
  // (the key columns are added to the projection for that and taken out again).
  Transaction* transaction_ = nullptr;
  TableDef table_;
  std::vector<Transaction::BlobColumn> blob_columns_;
  std::vector<uint16_t> added_key_columns_;
};

}  // namespace duo::api
