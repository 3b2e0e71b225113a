// Session: one MySQL client connection, from the server greeting to the last command.
// It is a state machine over the connection phases — greeting (HandshakeV10), optional
// TLS upgrade (SSLRequest), handshake response, authentication (authenticator.h),
// command phase — and in the command phase a switch over the command byte that
// decodes the command with the codec (sql-frontend/protocol/), hands it to the
// QueryHandler and encodes what comes back.
//
// Errors: a command's failure — a QueryHandler error result, an exception thrown by
// the handler, or a malformed command packet (ProtocolError) — is caught once per
// command and becomes an ERR packet; the session carries on. Only failures of the
// stream itself end the connection: the peer closes, a read/write times out, a packet
// arrives out of sequence (ERR 1156 is sent first), or a packet exceeds
// max_allowed_packet (ERR 1153 "Got a packet bigger than 'max_allowed_packet'
// bytes" is sent first, as MySQL does, because the rest of the stream can no longer
// be trusted). A bad handshake ends the connection with ERR 1043.
//
// Results are encoded straight into the connection's output buffer and sent once per
// command (or per 64 KiB between results); a result whose value cannot be encoded is
// taken back out of the buffer before anything of it was sent, so it turns into a clean
// ERR instead of half a result set.
//
// Limits: max_allowed_packet on every command packet and on accumulated
// COM_STMT_SEND_LONG_DATA per parameter, 64 KiB on commands without SQL or data and
// on handshake packets, 16 KiB on
// authentication packets, prepared_statements_max per session, and socket timeouts
// (connect_timeout during the handshake, wait_timeout between commands,
// write_timeout on every send).
//
// Thread-safety: run() runs on the session's own thread; kill() may be called from
// any thread while run() is active (the server serialises it against the session's
// destruction).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sql-frontend/protocol/packet_endpoint.h"
#include "sql-frontend/protocol/packets.h"
#include "sql-frontend/server/authenticator.h"
#include "sql-frontend/server/local_file_exchange.h"
#include "sql-frontend/server/query_handler.h"
#include "sql-frontend/server/socket_transport.h"
#include "sql-frontend/server/tls_transport.h"
#include "sql-frontend/server/user_directory.h"

namespace duo::sql::server {

struct SessionOptions {
  // What the greeting says. MySQL 8 clients look at the major version to pick
  // features; MariaDB's client would read "5.5.5-" as a MariaDB server.
  std::string server_version = "8.0.36-DuoDB";
  // The plugin named in the greeting; accounts of the other plugin get an
  // AuthSwitchRequest.
  AuthPlugin default_auth_plugin = AuthPlugin::kNativePassword;
  // MySQL's max_allowed_packet default (64 MiB in 8.0).
  size_t max_allowed_packet = 64u << 20;
  // Open prepared statements per session (MySQL's max_prepared_stmt_count is global
  // at 16382; per session keeps one client from using them all).
  size_t prepared_statements_max = 1024;
  uint64_t connect_timeout_ms = 10000;
  uint64_t wait_timeout_ms = 28800000;  // MySQL's 8 hours
  uint64_t write_timeout_ms = 60000;    // net_write_timeout
};

class Session {
 public:
  // Handshake-phase packets (greeting answers with connection attributes) are small.
  static constexpr size_t kHandshakePacketBytesMax = 64 * 1024;
  // Commands that carry no SQL or data (COM_INIT_DB, COM_FIELD_LIST, COM_PING, ...)
  // name at most a database or table: anything longer is refused as malformed.
  static constexpr size_t kControlCommandBytesMax = 64 * 1024;

  // `unix_socket`: the connection came over the Unix socket (a secure transport for
  // authentication, as in MySQL).
  Session(uint32_t connection_id, std::unique_ptr<SocketTransport> socket, std::string peer_host,
          bool unix_socket, const SessionOptions& options, QueryHandler* handler,
          Authenticator* authenticator, const TlsContext* tls_context, ServerControl* server);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Serves the connection until it ends.
  void run();
  // Ends the connection: a blocked read returns and run() finishes.
  void kill();
  // KILL QUERY: the running statement stops at its next check (error 1317).
  void kill_query() { query_killed_.store(true); }

 private:
  struct PreparedStatement {
    uint64_t handler_token = 0;
    uint16_t param_count = 0;
    std::vector<ParameterType> types;  // of the last execute that bound them
    std::vector<std::string> long_data;
    std::vector<bool> has_long_data;
    bool long_data_too_big = false;
  };

  // Phases.
  bool handshake();
  void command_loop();
  // One command; false when the connection must end (COM_QUIT).
  bool dispatch(const std::string& payload);

  // Commands.
  void on_query(const std::string& payload);
  void on_init_db(const std::string& payload);
  void on_field_list(const std::string& payload);
  void on_prepare(const std::string& payload);
  void on_execute(const std::string& payload);
  void on_send_long_data(const std::string& payload);
  void on_close_statement(const std::string& payload);
  void on_reset_statement(const std::string& payload);
  void on_set_option(const std::string& payload);
  void on_reset_connection();
  void on_process_kill(const std::string& payload);

  // Output.
  uint16_t status_flags() const;
  bool deprecate_eof() const;
  void send_ok(const OkResult& ok, uint16_t extra_status = 0);
  void send_error(const SqlError& error);
  void send_error(uint16_t code, const char* sql_state, const std::string& message);
  void send_end_of_metadata_or_rows(uint16_t warnings, uint16_t status, bool rows_end);
  void send_results(std::vector<StatementResult> results, bool binary);
  // Queues all packets of one result, encoded in place; throws if a value cannot be
  // encoded (send_results then takes back what was queued).
  void write_result(const StatementResult& result, bool binary, uint16_t status);
  void write_result_set(const ResultSet& set, bool binary, uint16_t status);
  void queue(const std::string& payload);
  // Queues one packet whose payload `write(PacketWriter&)` encodes straight into the
  // output buffer.
  template <typename Write>
  void queue_in_place(const Write& write);

  void close_all_statements();

  // Connection character set (SessionState::client_collation / results_collation).
  // Converts text the client sent (SQL, string parameters) to utf8mb4.
  void convert_client_text(std::string* text) const;
  // True when results go out in another character set than utf8mb4.
  bool results_rewritten() const;
  // Only when results_rewritten(): `text` (utf8mb4) in character_set_results, and a
  // column described in it (false for a binary column, whose values stay bytes).
  std::string in_results_charset(std::string_view text) const;
  bool describe_in_results_charset(ColumnDefinition41* column) const;
  void write_converted_result(const ResultSet& set, bool binary, uint16_t status);

  // Constant after construction.
  const SessionOptions& options_;
  QueryHandler* const handler_;
  Authenticator* const authenticator_;
  const TlsContext* const tls_context_;
  std::unique_ptr<SocketTransport> socket_;
  const bool unix_socket_;

  // Owned by the session thread.
  std::unique_ptr<TlsTransport> tls_;
  protocol::PacketEndpoint endpoint_;
  SessionState state_;
  std::string nonce_;
  uint32_t server_capabilities_ = 0;
  bool authenticated_ = false;
  bool io_failed_ = false;
  uint32_t next_statement_id_ = 1;
  std::map<uint32_t, PreparedStatement> statements_;
  LocalFileExchange local_files_;

  std::atomic<bool> killed_{false};
  std::atomic<bool> query_killed_{false};
};

}  // namespace duo::sql::server
