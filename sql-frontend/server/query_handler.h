// QueryHandler: the interface between the MySQL session (protocol, this folder) and
// the SQL engine (parser, planner, executor — a later piece). The session decodes
// commands and encodes results; the handler turns SQL text into results. Also the
// per-connection SessionState both sides read and write, and ServerControl, the hook
// through which a handler reaches the server (KILL).
//
// Results are plain values: OK (affected rows, last insert id, warnings, info), an
// error (MySQL errno, SQLSTATE, message) or a result set (column metadata and rows of
// typed values). A command that carries several statements (multi-statements) gets
// one result per statement, in order; an error is always the last result, because
// MySQL stops at the first failing statement.
//
// A handler may throw from any method: the session catches once per command and
// answers ERR 1105 (or the ProtocolError's errno), and the connection carries on.
//
// Thread-safety: one QueryHandler serves all sessions; its methods are called
// concurrently from the session threads, each with its own SessionState.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sql-frontend/protocol/character_sets.h"
#include "sql-frontend/protocol/packets.h"

namespace duo::sql::server {

using protocol::ColumnDefinition41;
using protocol::FieldType;
using protocol::MysqlTime;
using protocol::ParameterType;
using protocol::Value;

struct SqlError {
  uint16_t code = 1105;
  std::string sql_state = "HY000";
  std::string message;
};

struct OkResult {
  uint64_t affected_rows = 0;
  uint64_t last_insert_id = 0;
  uint16_t warnings = 0;
  std::string info;
};

// A result set's column definitions with their encoded packets, built once and
// shared: a prepared statement's plan hands the same object to every execution, so its
// metadata is not built and encoded again each time. Immutable once made.
struct EncodedColumns {
  std::vector<ColumnDefinition41> columns;
  std::vector<std::string> packets;  // protocol::encode(columns[i])

  static std::shared_ptr<const EncodedColumns> of(std::vector<ColumnDefinition41> columns) {
    auto encoded = std::make_shared<EncodedColumns>();
    encoded->packets.reserve(columns.size());
    for (const ColumnDefinition41& column : columns) {
      encoded->packets.push_back(protocol::encode(column));
    }
    encoded->columns = std::move(columns);
    return encoded;
  }
};

struct ResultSet {
  std::vector<ColumnDefinition41> columns;
  // Set by a handler that keeps its metadata encoded: used instead of `columns`.
  std::shared_ptr<const EncodedColumns> encoded_columns;
  std::vector<std::vector<Value>> rows;  // each row has one value per column
  uint16_t warnings = 0;

  const std::vector<ColumnDefinition41>& column_definitions() const {
    return encoded_columns != nullptr ? encoded_columns->columns : columns;
  }
};

using StatementResult = std::variant<OkResult, ResultSet, SqlError>;

// What a handler says about a statement it prepared.
struct PreparedStatementInfo {
  uint64_t handler_token = 0;  // the handler's own id, passed back on execute/close
  uint16_t param_count = 0;
  std::vector<ColumnDefinition41> params;   // empty: the session describes them as "?"
  std::vector<ColumnDefinition41> columns;  // of the result set, if any
};

// A bound parameter of COM_STMT_EXECUTE (long data already joined in).
struct BoundParameter {
  ParameterType type;
  Value value;
};

// The server side a handler may call.
class ServerControl {
 public:
  virtual ~ServerControl() = default;
  // KILL [CONNECTION] id: ends that connection. False if there is no such id.
  virtual bool kill_connection(uint32_t connection_id) = 0;
  // KILL QUERY id: interrupts the statement that connection runs (if any); the
  // connection stays. False if there is no such id.
  virtual bool kill_query(uint32_t connection_id) = 0;
};

// The client's side of LOAD DATA LOCAL INFILE (the session implements it): the server
// asks for a file by name, the client sends its bytes in packets and an empty packet at
// the end. Once requested, the file must be read to its end (next_chunk() false) before
// the statement answers, whatever it decides.
class LocalFileSource {
 public:
  virtual ~LocalFileSource() = default;
  // Whether the client announced CLIENT_LOCAL_FILES (it can answer a request).
  virtual bool client_can_send_files() const = 0;
  // Sends the request for `file_name`.
  virtual void request(const std::string& file_name) = 0;
  // The next piece of the file; false at its end, or when the connection broke (then
  // broken() is true).
  virtual bool next_chunk(std::string* chunk) = 0;
  virtual bool broken() const = 0;
};

// Per-connection state. The session owns it; the handler may change database,
// autocommit and in_transaction (USE, SET autocommit, BEGIN/COMMIT).
struct SessionState {
  uint32_t connection_id = 0;
  std::string user;
  std::string host;
  std::string database;
  bool autocommit = true;
  bool in_transaction = false;
  uint32_t client_capabilities = 0;
  bool unix_socket = false;  // connected over the Unix socket
  // From the HandshakeResponse41: the client's collation id and its connection
  // attributes (performance_schema.session_account_connect_attrs), in the order sent.
  uint8_t handshake_collation = 0;
  // The connection character set as collation ids (protocol/character_sets.h), from the
  // handshake and SET NAMES / SET CHARACTER SET / SET character_set_*: the client's text
  // is converted from `client_collation`'s character set, text results to
  // `results_collation`'s (0: character_set_results NULL, sent as stored).
  uint16_t client_collation = protocol::kDefaultCollationId;
  uint16_t connection_collation = protocol::kDefaultCollationId;
  uint16_t results_collation = protocol::kDefaultCollationId;
  std::vector<std::pair<std::string, std::string>> connect_attributes;
  // System variables this connection SET (lower-case name -> value as MySQL shows it);
  // the handler owns their meaning. COM_RESET_CONNECTION clears them.
  std::map<std::string, std::string> system_variables;
  // Set when the connection is being killed; long-running handlers poll it.
  const std::atomic<bool>* killed = nullptr;
  // Set by KILL QUERY until the next command starts; long-running handlers poll it too.
  const std::atomic<bool>* query_killed = nullptr;
  ServerControl* server = nullptr;
  LocalFileSource* local_files = nullptr;  // LOAD DATA LOCAL; null: not available

  // The connection, or the statement it runs, was killed: long work stops (1317).
  bool interrupted() const {
    return (killed != nullptr && killed->load()) ||
           (query_killed != nullptr && query_killed->load());
  }
};

class QueryHandler {
 public:
  virtual ~QueryHandler() = default;

  // COM_QUERY. `multi_statements` is false unless the client enabled
  // CLIENT_MULTI_STATEMENTS: a handler must then refuse text with several statements
  // (1064), as MySQL does. Returns at least one result.
  virtual std::vector<StatementResult> query(SessionState& session, std::string_view sql,
                                             bool multi_statements) = 0;

  // COM_STMT_PREPARE.
  virtual std::variant<PreparedStatementInfo, SqlError> prepare(SessionState& session,
                                                                std::string_view sql) = 0;
  // COM_STMT_EXECUTE with one value per parameter.
  virtual StatementResult execute(SessionState& session, uint64_t handler_token,
                                  const std::vector<BoundParameter>& params) = 0;
  // COM_STMT_CLOSE, and every statement still open when the session ends.
  virtual void close_statement(SessionState& session, uint64_t handler_token) = 0;

  // COM_INIT_DB and the database of the handshake: nullopt (and session.database set
  // by the caller) when `database` exists, else the error (1049).
  virtual std::optional<SqlError> change_database(SessionState& session,
                                                  std::string_view database) = 0;

  // COM_FIELD_LIST (deprecated, still sent by old clients): the columns of `table`.
  virtual std::variant<std::vector<ColumnDefinition41>, SqlError> field_list(
      SessionState& session, std::string_view table, std::string_view wildcard) = 0;

  // The session ends (QUIT, disconnect, KILL): roll back what it left open.
  virtual void on_disconnect(SessionState& session) = 0;
};

}  // namespace duo::sql::server
