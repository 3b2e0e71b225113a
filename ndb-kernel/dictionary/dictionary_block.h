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
// lowest live node becomes the master for new requests. Not yet: a schema transaction
// the dead master was running is not finished by the new one (its prepared state stays
// on the participants until the next system restart).
//
// Thread-safety: a Block; single-threaded by the runtime's contract.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>

#include "ndb-kernel/fs_client/dual_copy_file.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/runtime/block.h"

namespace duo::dictionary {

class DictionaryBlock : public kernel::Block {
 public:
  explicit DictionaryBlock(protocol::ClusterTopology topology);
  ~DictionaryBlock() override;

  void on_start() override;

  // The tables this node has installed (tests, the node's reports).
  const std::map<uint32_t, protocol::TableDef>& tables() const { return tables_; }
  bool is_master() const { return node_id() == master_; }

 private:
  // A client's request waiting at the master for its schema transaction.
  struct Request {
    kernel::BlockAddress client;
    uint32_t request_id = 0;
    uint32_t kind = 0;  // kSchemaCreate / kSchemaDrop / kSchemaAlter
    protocol::TableDef table;
    protocol::TableDef previous;  // kSchemaAlter: the definition replaced (for the undo)
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
  // Master side.
  void start_next();
  // Checks an ALTER_TABLEREQ against the installed table and completes its definition
  // (version, fragments, flags); the refusal's code and message otherwise.
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

  // To every live data node's dictionary; returns the nodes it was sent to.
  std::set<uint16_t> send_to_every_dictionary(kernel::Signal signal);
  void answer(const kernel::BlockAddress& to, kernel::SignalId id, protocol::DictMsg msg);
  const protocol::TableDef* find_by_name(const std::string& name) const;

  const protocol::ClusterTopology topology_;
  const std::vector<uint16_t> data_nodes_;
  uint16_t master_;                // the lowest live data node
  std::set<uint16_t> dead_nodes_;  // data nodes reported failed

  std::map<uint32_t, protocol::TableDef> tables_;
  std::set<uint16_t> subscribers_;

  // Master state.
  uint32_t next_table_id_ = 1;
  uint32_t next_schema_tx_ = 1;
  std::deque<Request> queue_;
  std::unique_ptr<Running> running_;

  // Participant state, by schema transaction id.
  std::map<uint32_t, Prepared> prepared_;

  std::unique_ptr<fs_client::DualCopyFile> schema_file_;  // created at on_start
  // System restart in progress.
  kernel::BlockAddress restore_requester_;
  uint32_t restore_awaiting_ = 0;
};

}  // namespace duo::dictionary
