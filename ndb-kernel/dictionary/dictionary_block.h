// DictionaryBlock: the schema of the cluster (NDB's DBDICT) — tables with their
// columns, primary key, ordered and unique indexes, version and fragment count.
//
// Every data node runs one; they hold identical copies. Changes are schema
// transactions run by the master (the lowest data node id): the master validates the
// request, assigns the table id and version, then
//   SCHEMA_PREPAREREQ -> every dictionary (each checks it can apply the change)
//   SCHEMA_COMMITREQ  -> every dictionary: each installs the change, tells its node's
//                        coordinator and local_query instances (TABLE_ADDREQ /
//                        TABLE_DROPREQ; an altered table is a TABLE_ADDREQ of a known
//                        table with a higher version), waits for them, answers
//                        SCHEMA_COMMITCONF,
//                        and pushes SCHEMA_EVENT to the API nodes subscribed to it
// and answers the client only when every node has the change, so a client that is told
// "created" can use the table through any data node. A prepare refused anywhere aborts
// the change everywhere (SCHEMA_COMMITREQ with a = 1). The master runs one schema
// transaction at a time and queues the rest (NDB serialises them too).
//
// ALTER_TABLEREQ replaces a table's definition — its ordered indexes, its name, its SQL
// definition — keeping id, columns, primary key and fragments, with version + 1 (NDB's
// online ALTER: CREATE/DROP INDEX, RENAME). Each local_query rebuilds the fragment's
// ordered indexes from its rows (local_query_alter.cc); a build that fails (a UNIQUE
// index meeting a duplicate key) fails the commit, and the master then runs the
// reverse alter (kSchemaAlterBack) back to the previous definition before anything
// else, so every node ends where it started and the client gets the build's error
// (kDuplicateKey, or kTemporary when the table's transactions did not end within
// LocalQueryOptions::alter_wait_ms; the reverse alter always waits). The
// client names the version it changed: a table altered meanwhile is refused with
// kSchemaVersion, so two front-ends editing one table never lose an index.
//
// Reads (GET_TABLEREQ by id or name, LIST_TABLESREQ) are answered by any dictionary.
// Names are the client's full names (the SQL layer uses "db/def/table" like NDB).
//
// Persistence: every dictionary writes the whole schema (tables and the next table id)
// to its node's file system (dict/schema, two alternating copies: DualCopyFile) when it
// commits a change, before it confirms the commit; so a change a client was told about
// is on disk on every node. At a system restart the distribution block asks for
// DICT_RESTOREREQ: the schema is read back and the tables re-created in the node's
// coordinator and local_query instances before their data is restored.
//
// A data node's failure (NODE_FAILREP after the survivors agreed): schema transactions
// go on over the live nodes — the dead node's answer is no longer awaited — and the
// lowest live node becomes the master for new requests. A schema transaction the dead
// master was running is finished by the new master before anything else (master
// takeover, dictionary_takeover.cc): committed where it is still prepared if any node
// committed it, else aborted.
//
// Node restart (dictionary_node_restart.cc; docs/formats/kernel-protocol.md "Node
// restart"), S being the starting node:
//   DICT_LOCKREQ{S}   the master's distribution block locks the schema: requests that
//                     arrive (or are still queued) are refused with kTemporary "System
//                     busy with node restart, schema operations not allowed" (NDB 711);
//                     DICT_LOCKCONF once no schema transaction runs. DICT_UNLOCKREQ{S}
//                     (or S's NODE_FAILREP) lifts it. A lock dies with the master that
//                     held it (the new master's distribution block locks again).
//   DICT_COPYREQ{M}   on S: the whole schema is pulled from M's dictionary, one table
//                     per DICT_SCHEMAREQ / DICT_SCHEMADATA (a section is at most 64 KiB),
//                     with M's next table id, master and dead set; it replaces S's own
//                     schema: written to the schema file, then tables S had that differ
//                     or are gone are dropped locally (TABLE_DROPREQ) and every copied
//                     table is added (TABLE_ADDREQ) to the coordinator and every
//                     local_query instance, as at a system restart; DICT_COPYCONF{tables}
//                     or DICT_COPYREF{error, message}.
//   NODE_STARTINGREP{S}  S is no longer dead but starting: later schema transactions
//                     include it (none runs before the unlock); it cannot be chosen
//                     master (a failure meanwhile picks the lowest live node not starting).
//   NODE_STARTEDREP{S}   S is an ordinary live node: the master is again the lowest live
//                     node (as the distribution block's master, possibly S). Both are
//                     confirmed to the sender (NODE_STARTINGCONF / NODE_STARTEDCONF{S}).
//
// Disk-data objects (dictionary_filegroups.cc; NDB's filegroups): logfile groups and
// tablespaces with their undo and data files are schema objects like tables — ids and
// versions from the master, changed by their own two-phase schema transactions
// (FILEGROUP_PREPAREREQ: every node creates the new file of its size through its file
// system block, FS_ALLOCREQ; FILEGROUP_COMMITREQ: every node records the change in its
// schema file, then removes a dropped file; an abort removes what a prepare created),
// serialised with the table changes, kept in the schema file, copied to a restarting
// node with the tables. A table names its tablespace (TableDef::tablespace_id).
//
// Thread-safety: a Block; single-threaded by the runtime's contract.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ndb-kernel/fs_client/dual_copy_file.h"
#include "ndb-kernel/protocol/filegroup.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/runtime/block.h"

namespace duo::dictionary {

// The refusal text of a schema request while a node restarts (NDB error 711, kTemporary).
inline constexpr const char* kNodeRestartBusyMessage =
    "System busy with node restart, schema operations not allowed";

class DictionaryBlock : public kernel::Block {
 public:
  explicit DictionaryBlock(protocol::ClusterTopology topology);
  ~DictionaryBlock() override;

  void on_start() override;

  // The disk-data objects an initial start creates (InitialLogFileGroup /
  // InitialTablespace): run by the master once the cluster has started
  // (CLUSTER_STARTED_REP from its distribution block) when it restored no schema file.
  // Set before the block starts.
  void set_initial_disk_objects(std::vector<protocol::FilegroupChange> changes) {
    initial_disk_objects_ = std::move(changes);
  }
  // Filegroup changes prepared here and not finished (tests: none is left behind).
  size_t filegroup_prepared_count() const { return filegroup_prepared_.size(); }
  // The filegroups this node has installed (tests).
  const std::map<uint32_t, protocol::FilegroupDef>& filegroups() const { return filegroups_; }
  // The tables this node has installed (tests, the node's reports).
  const std::map<uint32_t, protocol::TableDef>& tables() const { return tables_; }
  bool is_master() const { return node_id() == master_; }
  // Master takeovers this node ran (dictionary_takeover.cc).
  uint32_t takeovers_done() const { return takeovers_done_; }
  // Schema transactions held here prepared or committing (tests: none is left behind).
  size_t prepared_count() const { return prepared_.size(); }
  // Node restarts hold the schema lock (DICT_LOCKREQ): schema requests are refused.
  bool schema_locked() const { return !lock_holders_.empty(); }

 private:
  // A client's request waiting at the master for its schema transaction.
  struct Request {
    kernel::BlockAddress client;
    uint32_t request_id = 0;
    uint32_t kind = 0;  // kSchemaCreate / kSchemaDrop / kSchemaAlter
    protocol::TableDef table;
    protocol::TableDef previous;  // kSchemaAlter: the definition replaced (for the undo)
    // kSchemaAlterBack after a failed ALTER: the ALTER's client, answered with its error
    // only once the undo is done, so it never sees the failed definition afterwards.
    kernel::BlockAddress failed_client;
    uint32_t failed_request_id = 0;
    ErrorCode failed_error = ErrorCode::kOk;
    std::string failed_message;
    // The failed API node this request still belongs to (it was its client, or it lifts
    // that node's copy lock): that node's API_FAILCONF waits until it has finished.
    uint16_t failed_api_node = 0;
  };
  // The schema transaction the master is running.
  struct Running {
    Request request;
    uint32_t schema_tx = 0;
    std::set<uint16_t> awaiting;  // nodes whose prepare or commit answer is expected
    bool committing = false;
    bool aborting = false;
    ErrorCode error = ErrorCode::kOk;
    std::string message;
  };
  // A change this node prepared and has not committed yet.
  struct Prepared {
    uint32_t kind = 0;
    protocol::TableDef table;
    kernel::BlockAddress master;
    bool committing = false;      // its SCHEMA_COMMITREQ (commit) arrived
    uint32_t awaiting_local = 0;  // local TABLE_ADD/DROP confirmations while committing
    uint32_t local_error = 0;     // an ErrorCode from a local block that failed the change
    std::string local_message;
  };

  // Client side.
  void on_create_table_req(kernel::Signal& signal);
  void on_drop_table_req(kernel::Signal& signal);
  void on_alter_table_req(kernel::Signal& signal);
  // Queues a CREATE (kSchemaCreate) or ALTER (kSchemaAlter) from a client; a malformed
  // request or a non-master node answers `refuse`.
  void queue_table_request(kernel::Signal& signal, uint32_t kind, kernel::SignalId refuse);
  void on_get_table_req(kernel::Signal& signal);
  void on_list_tables_req(kernel::Signal& signal);
  void on_subscribe_schema_req(kernel::Signal& signal);
  void on_node_fail_rep(kernel::Signal& signal);
  // An API node failed (NODE_FAILREP, or API_FAILREQ from the membership block): its
  // queued requests go, its running one finishes unanswered, its copy locks are lifted.
  void on_api_node_failed(uint16_t node);
  // API_FAILREQ: as above, answered API_FAILCONF once nothing of the node is left here.
  void on_api_fail_req(kernel::Signal& signal);
  void answer_api_failures_if_done();
  // The lowest data node neither dead nor starting (the current master if none is).
  uint16_t choose_master() const;
  // Master side.
  void start_next();
  // Checks an ALTER_TABLEREQ against the installed table and completes its definition
  // (version, fragments, the flags it keeps: all but READ_BACKUP); the refusal's code and
  // message otherwise.
  Status check_alter(Request* request) const;
  void on_schema_prepare_conf(kernel::Signal& signal);
  void on_schema_prepare_ref(kernel::Signal& signal);
  void on_schema_commit_conf(kernel::Signal& signal);
  void finish_running();
  // Every prepare answer is in: commit (or abort) everywhere.
  void prepare_phase_done();
  // Participant side.
  void on_schema_prepare_req(kernel::Signal& signal);
  void on_schema_commit_req(kernel::Signal& signal);
  void on_table_add_conf(kernel::Signal& signal);
  void on_table_drop_conf(kernel::Signal& signal);
  void local_done(uint32_t schema_tx);
  // Applies a committed change to this node's blocks once the schema file has it.
  void apply_committed(uint32_t schema_tx, Status persisted);
  // Persistence.
  Result<fs_client::Bytes> encode_schema() const;
  Status decode_schema(const fs_client::Bytes& bytes);
  void on_fs_answer(kernel::Signal& signal);
  void on_dict_restore_req(kernel::Signal& signal);
  void restore_table_added();
  std::vector<kernel::BlockAddress> local_blocks() const;
  // Node restart (dictionary_node_restart.cc).
  void on_dict_lock_req(kernel::Signal& signal);
  void on_dict_unlock_req(kernel::Signal& signal);
  // Answers the DICT_LOCKREQs waiting for the running schema transaction to end.
  void confirm_lock_if_idle();
  // Refuses a client's schema request with NDB 711 while the schema is locked (true).
  bool refuse_if_locked(const kernel::BlockAddress& client, uint32_t request_id,
                        kernel::SignalId refuse);
  // A node failure ends its lock and any copy of the schema from it.
  void node_restart_on_node_failed(uint16_t node);
  void on_dict_copy_req(kernel::Signal& signal);
  void on_dict_schema_req(kernel::Signal& signal);
  void on_dict_schema_data(kernel::Signal& signal);
  void request_schema_table(uint32_t after_table_id);
  // Every table is in: replace this node's schema by the copy.
  void install_copy();
  void on_copy_written(Status written);
  void copy_add_tables();
  // A local TABLE_ADDCONF / TABLE_DROPCONF of the copy's installation.
  void copy_local_done(const protocol::DictMsg& conf, bool add);
  void finish_copy(ErrorCode error, std::string message);
  void on_node_starting_rep(kernel::Signal& signal);
  void on_node_started_rep(kernel::Signal& signal);
  // Master takeover (dictionary_takeover.cc).
  // This node became master because the master died: take over every dead node's
  // schema transactions, one dead node after the other (a master that died during its
  // own takeover left its predecessor's unfinished too).
  void start_takeovers();
  void start_takeover(uint16_t dead_master);
  void on_dict_takeover_req(kernel::Signal& signal);
  void on_dict_takeover_conf(kernel::Signal& signal);
  // Every answer is in: commit or abort the dead master's transaction where it is
  // prepared.
  void resolve_takeover();
  // A SCHEMA_COMMITCONF for the takeover (true if it was one).
  bool on_takeover_commit_conf(const protocol::DictMsg& conf, uint16_t from);
  // The dead master's last ALTER failed its index build on some live node and was not
  // undone: queue the undo (kSchemaAlterBack to the previous definition) first.
  void undo_failed_alter_if_needed();
  // Participant: a committed change of table `table_id` from `master` (the previous
  // definition, for an ALTER) and, once applied here, its local outcome.
  void note_committed_alter(uint32_t schema_tx, uint32_t kind, uint32_t table_id);
  void note_local_outcome(uint32_t schema_tx, uint32_t kind, uint32_t local_error);
  void takeover_node_failed(uint16_t node);
  void finish_takeover();

  // Disk-data objects (dictionary_filegroups.cc).
  void on_filegroup_req(kernel::Signal& signal);
  void on_list_filegroups_req(kernel::Signal& signal);
  // Master: starts the next queued filegroup change when no schema transaction runs.
  void start_next_filegroup();
  // Checks `change` against the installed filegroups and completes it (ids, versions);
  // the NDB error code (*ndb_error; for 768 *detail: 1 a table uses it, 2 it has files)
  // and message otherwise.
  Status complete_filegroup_change(protocol::FilegroupChange* change, uint32_t* ndb_error,
                                   uint32_t* detail);
  void on_filegroup_prepare_req(kernel::Signal& signal);
  void on_filegroup_prepare_answer(kernel::Signal& signal);
  void on_filegroup_commit_req(kernel::Signal& signal);
  void on_filegroup_commit_conf(kernel::Signal& signal);
  // Every answer of the running filegroup change's phase is in.
  void filegroup_phase_done();
  void finish_filegroup();
  // FS_ALLOCCONF / FS_REF / FS_REMOVECONF for a disk-data file (true if it was one).
  bool on_filegroup_fs_answer(kernel::Signal& signal);
  // Participant: sends the prepare answer of `schema_tx`.
  void answer_filegroup_prepare(uint32_t schema_tx, uint32_t error, uint32_t ndb_error,
                                std::string message);
  // Participant: the commit is persisted; removes dropped files, then confirms.
  void filegroup_committed(uint32_t schema_tx, Status persisted);
  // Removes `files` (FS_REMOVEREQ) and then answers FILEGROUP_COMMITCONF for schema_tx.
  void remove_files_then_confirm(uint32_t schema_tx,
                                 const std::vector<protocol::DiskFileDef>& files);
  // Creates every file of the installed filegroups that is missing here (a node that
  // copied the schema at a restart); an existing file is kept.
  void ensure_filegroup_files();
  void filegroup_node_failed(uint16_t node);
  // CLUSTER_STARTED_REP: the master queues the initial disk-data objects.
  void on_cluster_started_rep(kernel::Signal& signal);
  void filegroup_api_failed(uint16_t node);
  void encode_filegroups(fs_client::Bytes* out) const;
  Status decode_filegroups(protocol::ByteReader* in);
  const protocol::FilegroupDef* find_filegroup(const std::string& name) const;

  // To every live data node's dictionary; returns the nodes it was sent to.
  std::set<uint16_t> send_to_every_dictionary(kernel::Signal signal);
  void answer(const kernel::BlockAddress& to, kernel::SignalId id, protocol::DictMsg msg);
  const protocol::TableDef* find_by_name(const std::string& name) const;

  const protocol::ClusterTopology topology_;
  const std::vector<uint16_t> data_nodes_;
  uint16_t master_;                // the lowest live data node
  std::set<uint16_t> dead_nodes_;  // data nodes reported failed
  // Data nodes in a node restart (NODE_STARTINGREP .. NODE_STARTEDREP), this one too.
  std::set<uint16_t> starting_nodes_;

  std::map<uint32_t, protocol::TableDef> tables_;
  std::set<uint16_t> subscribers_;

  // Disk-data objects, by filegroup id, and the next ids (kept in the schema file).
  std::map<uint32_t, protocol::FilegroupDef> filegroups_;
  uint32_t next_filegroup_id_ = 1;
  uint32_t next_file_id_ = 1;
  // Master: a filegroup change of a client, queued or running.
  struct FilegroupRun {
    kernel::BlockAddress client;
    uint32_t request_id = 0;
    protocol::FilegroupChange change;
    uint32_t schema_tx = 0;
    std::set<uint16_t> awaiting;
    bool committing = false;  // the COMMITREQ (commit or abort) went out
    ErrorCode error = ErrorCode::kOk;
    uint32_t ndb_error = 0;
    std::string message;
  };
  std::deque<FilegroupRun> filegroup_queue_;
  std::unique_ptr<FilegroupRun> filegroup_running_;
  // Participant: prepared filegroup changes by schema transaction.
  struct FilegroupPrepared {
    protocol::FilegroupChange change;
    kernel::BlockAddress master;
    protocol::DiskFileDef created_file;  // the file this prepare created (name "": none)
    uint32_t awaiting_removes = 0;
    bool committing = false;  // its FILEGROUP_COMMITREQ (commit or abort) arrived
    bool allocating = false;  // its FS_ALLOCREQ has not been answered yet
    bool abort_when_allocated = false;  // its master died meanwhile: abort then
  };
  std::map<uint32_t, FilegroupPrepared> filegroup_prepared_;
  // FS requests for disk-data files: user_ref -> schema transaction (0: ensure at restart).
  struct FilegroupFsRequest {
    uint32_t schema_tx = 0;
    bool remove = false;  // FS_REMOVEREQ (else FS_ALLOCREQ)
  };
  std::map<uint32_t, FilegroupFsRequest> filegroup_fs_requests_;
  uint32_t next_filegroup_fs_ref_ = 0;
  std::vector<protocol::FilegroupChange> initial_disk_objects_;
  bool restored_empty_ = false;  // the restart found no schema file: an initial start

  // Master state.
  uint32_t next_table_id_ = 1;
  uint32_t next_schema_tx_ = 1;
  std::deque<Request> queue_;
  std::unique_ptr<Running> running_;
  // API_FAILREQs not answered yet: (API node, requester).
  std::vector<std::pair<uint16_t, kernel::BlockAddress>> api_failures_;

  // Participant state, by schema transaction id (ids carry their master's node id in
  // the top 8 bits, so two masters' ids never meet).
  std::map<uint32_t, Prepared> prepared_;
  // The last schema transaction committed here from each master, for a takeover.
  std::map<uint16_t, uint32_t> last_committed_from_;
  // The new master finishing the schema transaction of a master that died (NDB's DICT
  // master takeover): it asks every live dictionary what it holds from the dead master
  // and commits the transaction where it is still prepared if any node committed it,
  // else aborts it there; no new schema transaction starts meanwhile.
  struct MasterTakeover {
    uint16_t dead = 0;
    std::set<uint16_t> awaiting;              // DICT_TAKEOVERCONF still expected
    uint32_t in_flight = 0;                   // the dead master's prepared transaction
    bool commit = false;                      // some node committed it (or is committing)
    std::set<uint32_t> last_committed;        // the nodes' last commits from the dead master
    std::set<uint16_t> prepared_at;           // nodes holding it prepared, not committing
    std::set<uint16_t> resolving;             // SCHEMA_COMMITCONF still expected
    // The dead master's ALTER whose build failed on some live node and was not undone
    // there (DICT_TAKEOVERCONF w4; or a commit this takeover sent failed): 0 none.
    uint32_t failed_alter = 0;
    uint32_t failed_table = 0;
    bool commit_failed = false;  // a commit this takeover sent failed somewhere
  };
  std::unique_ptr<MasterTakeover> takeover_;
  uint32_t takeovers_done_ = 0;
  // Dead nodes whose takeover is still to run after takeover_ (ascending).
  std::vector<uint16_t> takeover_queue_;
  // Participant: the last ALTER committed here from each master (by the id's top 8
  // bits), with the definition it replaced, and whether it failed here (some local
  // block could not build its indexes) and was not undone since. A takeover asks for it:
  // a failed ALTER's undo was its dead master's job.
  struct CommittedAlter {
    uint32_t schema_tx = 0;
    uint32_t table_id = 0;
    protocol::TableDef previous;
    bool failed_here = false;
  };
  std::map<uint16_t, CommittedAlter> last_alter_from_;

  std::unique_ptr<fs_client::DualCopyFile> schema_file_;  // created at on_start
  // System restart in progress.
  kernel::BlockAddress restore_requester_;
  uint32_t restore_awaiting_ = 0;

  // TABLE_ADDREQ / TABLE_DROPREQ request id of the tables installed by a schema copy.
  static constexpr uint32_t kCopyRequest = 0xFFFFFFFE;
  // Node restart, master side: starting nodes holding the schema lock, and the
  // DICT_LOCKREQs to confirm once the running schema transaction ends.
  std::set<uint16_t> lock_holders_;
  std::vector<std::pair<kernel::BlockAddress, uint16_t>> lock_waiters_;  // (requester, S)
  // Node restart, starting side: the schema being copied from the master (DICT_COPYREQ).
  struct SchemaCopy {
    kernel::BlockAddress requester;
    uint16_t source = 0;   // the master's node
    uint32_t copy_id = 0;  // tells this copy's DICT_SCHEMADATA from a failed earlier one
    std::map<uint32_t, protocol::TableDef> tables;
    uint32_t next_table_id = 1;
    uint16_t master = 0;
    std::set<uint16_t> dead_nodes;
    std::map<uint32_t, protocol::TableDef> replaced;  // this node's tables before the copy
    fs_client::Bytes filegroups;  // the source's filegroups (encode_filegroups), if any
    bool installing = false;  // every table is in; the schema file and local blocks next
    bool adding = false;      // the local drops are done; TABLE_ADDREQs are out
    uint32_t awaiting_local = 0;
    ErrorCode error = ErrorCode::kOk;
    std::string message;
  };
  std::unique_ptr<SchemaCopy> copy_;
  uint32_t next_copy_id_ = 1;
};

}  // namespace duo::dictionary
