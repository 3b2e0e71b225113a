// One MySQL connection's state machine; see session.h.
#include "sql-frontend/server/session.h"

#include "ndb-kernel/common/logging.h"
#include "sql-frontend/protocol/auth_scramble.h"
#include "sql-frontend/protocol/character_sets.h"
#include "sql-frontend/protocol/charset_conversion.h"

namespace duo::sql::server {

using protocol::Command;
using protocol::PacketEndpoint;
using protocol::PacketReader;
using protocol::ProtocolError;

namespace {

// SQLSTATE of the errors the protocol layer raises itself.
const char* protocol_sql_state(uint16_t code) {
  switch (code) {
    case protocol::kErHandshake:
    case protocol::kErUnknownCom:
    case protocol::kErNetPacketTooLarge:
    case protocol::kErNetPacketsOutOfOrder:
    case protocol::kErNetReadError:
      return "08S01";
    default:
      return "HY000";
  }
}

}  // namespace

Session::Session(uint32_t connection_id, std::unique_ptr<SocketTransport> socket,
                 std::string peer_host, bool unix_socket, const SessionOptions& options,
                 QueryHandler* handler, Authenticator* authenticator, const TlsContext* tls_context,
                 ServerControl* server)
    : options_(options),
      handler_(handler),
      authenticator_(authenticator),
      tls_context_(tls_context),
      socket_(std::move(socket)),
      unix_socket_(unix_socket),
      endpoint_(socket_.get()),
      local_files_(&endpoint_, &state_.client_capabilities, options.max_allowed_packet) {
  state_.connection_id = connection_id;
  state_.host = std::move(peer_host);
  state_.killed = &killed_;
  state_.query_killed = &query_killed_;
  state_.server = server;
  state_.local_files = &local_files_;
  server_capabilities_ = protocol::kServerCapabilities | (tls_context_ ? protocol::kClientSsl : 0);
}

Session::~Session() = default;

void Session::kill() {
  killed_.store(true);
  socket_->shutdown();
}

void Session::run() {
  socket_->set_timeouts(options_.connect_timeout_ms, options_.write_timeout_ms);
  if (handshake()) {
    authenticated_ = true;
    socket_->set_timeouts(options_.wait_timeout_ms, options_.write_timeout_ms);
    command_loop();
  }
  close_all_statements();
  if (authenticated_) {
    try {
      handler_->on_disconnect(state_);
    } catch (const std::exception& e) {
      DUO_LOG(WARNING, "sqld") << "connection " << state_.connection_id
                               << ": on_disconnect failed: " << e.what();
    }
  }
  tls_.reset();
}

// --- Connection phase -----------------------------------------------------------------

bool Session::handshake() {
  nonce_ = protocol::generate_nonce();
  protocol::HandshakeV10 greeting;
  greeting.server_version = options_.server_version;
  greeting.connection_id = state_.connection_id;
  greeting.auth_plugin_data = nonce_;
  greeting.capabilities = server_capabilities_;
  greeting.character_set = protocol::kCharsetUtf8mb4GeneralCi;
  greeting.status_flags = status_flags();
  greeting.auth_plugin_name = auth_plugin_name(options_.default_auth_plugin);
  queue(protocol::encode(greeting));
  if (!endpoint_.flush().ok()) return false;

  std::string payload;
  auto bad_handshake = [this] {
    send_error(protocol::kErHandshake, "08S01", "Bad handshake");
    (void)endpoint_.flush().ok();
    return false;
  };
  endpoint_.set_read_ahead(false);  // an SSLRequest is followed by the ClientHello
  if (endpoint_.read_packet(&payload, kHandshakePacketBytesMax) !=
      PacketEndpoint::ReadResult::kOk) {
    return false;
  }
  endpoint_.set_read_ahead(true);
  protocol::HandshakeResponse41 response;
  try {
    if (payload.size() == protocol::SslRequest::kBytes) {
      PacketReader reader(payload);
      protocol::SslRequest request = protocol::SslRequest::read(reader);
      if (!(request.capabilities & protocol::kClientSsl) || tls_context_ == nullptr) {
        return bad_handshake();
      }
      // Read without read-ahead, so anything buffered was sent in plaintext as part of
      // the SSLRequest packet itself: never let it into the TLS stream.
      if (endpoint_.buffered_input_bytes() != 0) return bad_handshake();
      Result<std::unique_ptr<TlsTransport>> tls =
          TlsTransport::accept(*tls_context_, socket_->fd());
      if (!tls.ok()) {
        DUO_LOG(INFO, "sqld") << "connection " << state_.connection_id << ": "
                              << tls.status().message();
        return false;
      }
      tls_ = std::move(tls).value();
      endpoint_.set_transport(tls_.get());
      if (endpoint_.read_packet(&payload, kHandshakePacketBytesMax) !=
          PacketEndpoint::ReadResult::kOk) {
        return false;
      }
    }
    PacketReader reader(payload);
    response = protocol::HandshakeResponse41::read(reader, server_capabilities_);
  } catch (const ProtocolError& e) {
    DUO_LOG(INFO, "sqld") << "connection " << state_.connection_id << ": " << e.what();
    return bad_handshake();
  }

  state_.client_capabilities = response.capabilities & server_capabilities_;
  state_.user = response.username;
  state_.unix_socket = unix_socket_;
  state_.handshake_collation = response.character_set;
  // The client's character set: ucs2/utf16/utf32 are refused as MySQL refuses them; one
  // the server does not list falls back to the server's default, as in MySQL.
  if (std::string_view unusable = protocol::unusable_client_charset(response.character_set);
      !unusable.empty()) {
    send_error(protocol::kErWrongValueForVar, "42000",
               "Variable 'character_set_client' can't be set to the value of '" +
                   std::string(unusable) + "'");
    (void)endpoint_.flush().ok();
    return false;
  }
  if (protocol::find_collation(response.character_set) != nullptr) {
    state_.client_collation = state_.connection_collation = state_.results_collation =
        response.character_set;
  }
  Authenticator::Result auth =
      authenticator_->authenticate(endpoint_, response, state_.client_capabilities, nonce_,
                                   tls_ != nullptr || unix_socket_, state_.host);
  if (auth.outcome == Authenticator::Outcome::kConnectionLost) return false;
  if (auth.outcome == Authenticator::Outcome::kDenied) {
    send_error(auth.error);
    (void)endpoint_.flush().ok();
    return false;
  }
  state_.connect_attributes = std::move(response.attributes);
  if ((state_.client_capabilities & protocol::kClientConnectWithDb) && !response.database.empty()) {
    try {
      std::optional<SqlError> error = handler_->change_database(state_, response.database);
      if (error) {
        send_error(*error);
        (void)endpoint_.flush().ok();
        return false;
      }
    } catch (const std::exception& e) {
      send_error(protocol::kErUnknownError, "HY000", e.what());
      (void)endpoint_.flush().ok();
      return false;
    }
    state_.database = response.database;
  }
  send_ok(OkResult{});
  return endpoint_.flush().ok();
}

// --- Command phase --------------------------------------------------------------------

void Session::command_loop() {
  std::string payload;
  while (!killed_.load()) {
    endpoint_.reset_sequence();
    PacketEndpoint::ReadResult read = endpoint_.read_packet(&payload, options_.max_allowed_packet);
    if (read == PacketEndpoint::ReadResult::kClosed || killed_.load()) return;
    if (read == PacketEndpoint::ReadResult::kTooLarge) {
      send_error(protocol::kErNetPacketTooLarge, "08S01",
                 "Got a packet bigger than 'max_allowed_packet' bytes");
      (void)endpoint_.flush().ok();
      return;
    }
    if (read == PacketEndpoint::ReadResult::kOutOfOrder) {
      send_error(protocol::kErNetPacketsOutOfOrder, "08S01", "Got packets out of order");
      (void)endpoint_.flush().ok();
      return;
    }
    query_killed_.store(false);  // a KILL QUERY ends the statement it meets, no later one
    bool keep_going = dispatch(payload);
    if (!endpoint_.flush().ok() || io_failed_ || !keep_going) return;
    // A large command leaves a large buffer behind; do not keep it for hours.
    if (payload.capacity() > 1024 * 1024) std::string().swap(payload);
  }
}

bool Session::dispatch(const std::string& payload) {
  if (payload.empty()) {
    send_error(protocol::kErMalformedPacket, "HY000", "Malformed communication packet.");
    return true;
  }
  Command command = static_cast<Command>(payload[0]);
  bool carries_sql_or_data = command == Command::kQuery || command == Command::kStmtPrepare ||
                             command == Command::kStmtExecute ||
                             command == Command::kStmtSendLongData;
  if (!carries_sql_or_data && payload.size() > kControlCommandBytesMax) {
    send_error(protocol::kErMalformedPacket, "HY000", "Malformed communication packet.");
    return true;
  }
  try {
    switch (command) {
      case Command::kQuit:
        return false;
      case Command::kPing:
        if (payload.size() != 1) throw ProtocolError("malformed packet: COM_PING with a body");
        send_ok(OkResult{});
        break;
      case Command::kQuery:
        on_query(payload);
        break;
      case Command::kInitDb:
        on_init_db(payload);
        break;
      case Command::kFieldList:
        on_field_list(payload);
        break;
      case Command::kStmtPrepare:
        on_prepare(payload);
        break;
      case Command::kStmtExecute:
        on_execute(payload);
        break;
      case Command::kStmtSendLongData:
        on_send_long_data(payload);
        break;
      case Command::kStmtClose:
        on_close_statement(payload);
        break;
      case Command::kStmtReset:
        on_reset_statement(payload);
        break;
      case Command::kSetOption:
        on_set_option(payload);
        break;
      case Command::kResetConnection:
        on_reset_connection();
        break;
      case Command::kProcessKill:
        on_process_kill(payload);
        break;
      default:
        send_error(protocol::kErUnknownCom, "08S01", "Unknown command");
        break;
    }
  } catch (const ProtocolError& e) {
    send_error(e.mysql_errno(), protocol_sql_state(e.mysql_errno()), e.what());
  } catch (const std::exception& e) {
    // The handler (or an encoder) failed: this command fails, the connection stays.
    DUO_LOG(INFO, "sqld") << "connection " << state_.connection_id << ": command "
                          << static_cast<int>(command) << " failed: " << e.what();
    send_error(protocol::kErUnknownError, "HY000", e.what());
  }
  return true;
}

void Session::on_query(const std::string& payload) {
  PacketReader reader(payload);
  protocol::ComWithText query = protocol::ComWithText::read(reader, Command::kQuery);
  bool multi = (state_.client_capabilities & protocol::kClientMultiStatements) != 0;
  convert_client_text(&query.text);
  send_results(handler_->query(state_, query.text, multi), /*binary=*/false);
}

void Session::on_init_db(const std::string& payload) {
  PacketReader reader(payload);
  protocol::ComWithText init = protocol::ComWithText::read(reader, Command::kInitDb);
  if (init.text.empty()) {
    send_error(protocol::kErNoDb, "3D000", "No database selected");
    return;
  }
  std::optional<SqlError> error = handler_->change_database(state_, init.text);
  if (error) {
    send_error(*error);
    return;
  }
  state_.database = init.text;
  send_ok(OkResult{});
}

void Session::on_field_list(const std::string& payload) {
  PacketReader reader(payload);
  protocol::ComFieldList request = protocol::ComFieldList::read(reader);
  auto result = handler_->field_list(state_, request.table, request.wildcard);
  if (auto* error = std::get_if<SqlError>(&result)) {
    send_error(*error);
    return;
  }
  std::vector<std::string> packets;
  for (ColumnDefinition41 column : std::get<std::vector<ColumnDefinition41>>(result)) {
    // COM_FIELD_LIST definitions carry a default value (empty when there is none).
    if (!column.default_value) column.default_value = "";
    packets.push_back(protocol::encode(column));
  }
  for (const std::string& packet : packets) queue(packet);
  send_end_of_metadata_or_rows(0, status_flags(), /*rows_end=*/true);
}

void Session::on_prepare(const std::string& payload) {
  PacketReader reader(payload);
  protocol::ComWithText prepare = protocol::ComWithText::read(reader, Command::kStmtPrepare);
  convert_client_text(&prepare.text);
  auto result = handler_->prepare(state_, prepare.text);
  if (auto* error = std::get_if<SqlError>(&result)) {
    send_error(*error);
    return;
  }
  PreparedStatementInfo info = std::move(std::get<PreparedStatementInfo>(result));
  if (statements_.size() >= options_.prepared_statements_max) {
    handler_->close_statement(state_, info.handler_token);
    send_error(1461, "42000",
               "Can't create more than max_prepared_stmt_count statements (current value: " +
                   std::to_string(options_.prepared_statements_max) + ")");
    return;
  }
  if (!info.params.empty() && info.params.size() != info.param_count) {
    handler_->close_statement(state_, info.handler_token);
    throw std::logic_error("handler described a different number of parameters");
  }
  uint32_t id = next_statement_id_++;
  if (next_statement_id_ == 0) next_statement_id_ = 1;
  PreparedStatement& statement = statements_[id];
  statement.handler_token = info.handler_token;
  statement.param_count = info.param_count;
  statement.long_data.resize(info.param_count);
  statement.has_long_data.resize(info.param_count);

  protocol::StmtPrepareOk ok;
  ok.statement_id = id;
  ok.num_columns = static_cast<uint16_t>(info.columns.size());
  ok.num_params = info.param_count;
  queue(protocol::encode(ok));
  if (info.param_count > 0) {
    for (uint16_t i = 0; i < info.param_count; ++i) {
      ColumnDefinition41 param;
      if (!info.params.empty()) {
        param = info.params[i];
      } else {
        param.name = "?";
        param.type = FieldType::kVarString;
        param.character_set = protocol::kCharsetBinary;
        param.flags = protocol::kBinaryFlag;
      }
      queue(protocol::encode(param));
    }
    send_end_of_metadata_or_rows(0, status_flags(), /*rows_end=*/false);
  }
  if (!info.columns.empty()) {
    const bool rewritten = results_rewritten();
    for (ColumnDefinition41& column : info.columns) {
      if (rewritten) describe_in_results_charset(&column);
      queue(protocol::encode(column));
    }
    send_end_of_metadata_or_rows(0, status_flags(), /*rows_end=*/false);
  }
}

void Session::on_execute(const std::string& payload) {
  uint32_t id;
  {
    PacketReader peek(payload);
    peek.read_u8();
    id = peek.read_u32();
  }
  auto it = statements_.find(id);
  if (it == statements_.end()) {
    send_error(protocol::kErUnknownStmtHandler, "HY000",
               "Unknown prepared statement handler (" + std::to_string(id) +
                   ") given to mysqld_stmt_execute");
    return;
  }
  PreparedStatement& statement = it->second;
  PacketReader reader(payload);
  protocol::StmtExecute execute = protocol::StmtExecute::read(
      reader, statement.param_count, statement.types, statement.has_long_data);
  statement.types = execute.types;
  if (statement.long_data_too_big) {
    for (auto& data : statement.long_data) std::string().swap(data);
    std::fill(statement.has_long_data.begin(), statement.has_long_data.end(), false);
    statement.long_data_too_big = false;
    send_error(protocol::kErNetPacketTooLarge, "08S01",
               "Got a packet bigger than 'max_allowed_packet' bytes");
    return;
  }
  std::vector<BoundParameter> params;
  params.reserve(statement.param_count);
  for (size_t i = 0; i < statement.param_count; ++i) {
    BoundParameter param{execute.types[i], std::move(execute.values[i])};
    if (statement.has_long_data[i]) {
      param.value = std::move(statement.long_data[i]);
      statement.long_data[i].clear();
      statement.has_long_data[i] = false;
    }
    // String parameters are text in the client's character set; BLOB types are bytes.
    if (auto* text = std::get_if<std::string>(&param.value);
        text != nullptr &&
        (param.type.type == FieldType::kString || param.type.type == FieldType::kVarString ||
         param.type.type == FieldType::kVarchar)) {
      convert_client_text(text);
    }
    params.push_back(std::move(param));
  }
  std::vector<StatementResult> results;
  results.push_back(handler_->execute(state_, statement.handler_token, params));
  send_results(std::move(results), /*binary=*/true);
}

void Session::on_send_long_data(const std::string& payload) {
  // No reply, ever: errors surface at the next execute, as in MySQL.
  PacketReader reader(payload);
  protocol::StmtSendLongData data = protocol::StmtSendLongData::read(reader);
  auto it = statements_.find(data.statement_id);
  if (it == statements_.end()) return;
  PreparedStatement& statement = it->second;
  if (data.param_id >= statement.param_count) return;
  std::string& buffer = statement.long_data[data.param_id];
  if (buffer.size() + data.data.size() > options_.max_allowed_packet) {
    statement.long_data_too_big = true;
    std::string().swap(buffer);
    return;
  }
  buffer.append(data.data);
  statement.has_long_data[data.param_id] = true;
}

void Session::on_close_statement(const std::string& payload) {
  // No reply.
  PacketReader reader(payload);
  protocol::ComWithStatement close = protocol::ComWithStatement::read(reader, Command::kStmtClose);
  auto it = statements_.find(close.statement_id);
  if (it == statements_.end()) return;
  uint64_t token = it->second.handler_token;
  statements_.erase(it);
  handler_->close_statement(state_, token);
}

void Session::on_reset_statement(const std::string& payload) {
  PacketReader reader(payload);
  protocol::ComWithStatement reset = protocol::ComWithStatement::read(reader, Command::kStmtReset);
  auto it = statements_.find(reset.statement_id);
  if (it == statements_.end()) {
    send_error(protocol::kErUnknownStmtHandler, "HY000",
               "Unknown prepared statement handler (" + std::to_string(reset.statement_id) +
                   ") given to mysqld_stmt_reset");
    return;
  }
  PreparedStatement& statement = it->second;
  for (auto& data : statement.long_data) std::string().swap(data);
  std::fill(statement.has_long_data.begin(), statement.has_long_data.end(), false);
  statement.long_data_too_big = false;
  send_ok(OkResult{});
}

void Session::on_set_option(const std::string& payload) {
  PacketReader reader(payload);
  reader.read_u8();
  uint16_t option = reader.read_u16();
  reader.expect_end("COM_SET_OPTION");
  if (option == 0) {
    state_.client_capabilities |= protocol::kClientMultiStatements;
  } else if (option == 1) {
    state_.client_capabilities &= ~protocol::kClientMultiStatements;
  } else {
    send_error(protocol::kErUnknownCom, "08S01", "Unknown command");
    return;
  }
  send_end_of_metadata_or_rows(0, status_flags(), /*rows_end=*/true);
}

void Session::on_reset_connection() {
  close_all_statements();
  handler_->on_disconnect(state_);
  state_.autocommit = true;
  state_.system_variables.clear();
  // The connection character set goes back to the handshake's.
  const uint16_t handshake = protocol::find_collation(state_.handshake_collation) != nullptr
                                 ? state_.handshake_collation
                                 : protocol::kDefaultCollationId;
  state_.client_collation = state_.connection_collation = state_.results_collation = handshake;
  state_.in_transaction = false;
  send_ok(OkResult{});
}

void Session::on_process_kill(const std::string& payload) {
  PacketReader reader(payload);
  reader.read_u8();
  uint32_t id = reader.read_u32();
  reader.expect_end("COM_PROCESS_KILL");
  if (state_.server == nullptr || !state_.server->kill_connection(id)) {
    send_error(1094, "HY000", "Unknown thread id: " + std::to_string(id));
    return;
  }
  if (id != state_.connection_id) send_ok(OkResult{});
}

void Session::close_all_statements() {
  for (auto& [id, statement] : statements_) {
    try {
      handler_->close_statement(state_, statement.handler_token);
    } catch (const std::exception& e) {
      DUO_LOG(WARNING, "sqld") << "connection " << state_.connection_id
                               << ": close_statement failed: " << e.what();
    }
  }
  statements_.clear();
}

// --- Output ---------------------------------------------------------------------------

uint16_t Session::status_flags() const {
  uint16_t flags = 0;
  if (state_.autocommit) flags |= protocol::kServerStatusAutocommit;
  if (state_.in_transaction) flags |= protocol::kServerStatusInTrans;
  return flags;
}

bool Session::deprecate_eof() const {
  return (state_.client_capabilities & protocol::kClientDeprecateEof) != 0;
}

void Session::queue(const std::string& payload) {
  if (io_failed_) return;
  if (!endpoint_.write_packet(payload).ok()) io_failed_ = true;
}

void Session::send_ok(const OkResult& ok, uint16_t extra_status) {
  protocol::OkPacket packet;
  packet.affected_rows = ok.affected_rows;
  packet.last_insert_id = ok.last_insert_id;
  packet.status_flags = static_cast<uint16_t>(status_flags() | extra_status);
  packet.warnings = ok.warnings;
  packet.info = ok.info;
  queue(protocol::encode(packet));
}

void Session::send_error(const SqlError& error) {
  // MySQL sends messages in character_set_results too.
  protocol::ErrPacket packet{
      error.code, error.sql_state,
      results_rewritten() ? in_results_charset(error.message) : error.message};
  queue(protocol::encode(packet));
}

void Session::send_error(uint16_t code, const char* sql_state, const std::string& message) {
  send_error(SqlError{code, sql_state, message});
}

// After column definitions (rows_end false) or rows (rows_end true): EOF, or under
// CLIENT_DEPRECATE_EOF nothing after definitions and an OK with the 0xfe header after
// rows.
void Session::send_end_of_metadata_or_rows(uint16_t warnings, uint16_t status, bool rows_end) {
  if (!deprecate_eof()) {
    queue(protocol::encode(protocol::EofPacket{warnings, status}));
  } else if (rows_end) {
    protocol::OkPacket ok;
    ok.header = protocol::kEofHeader;
    ok.status_flags = status;
    ok.warnings = warnings;
    queue(protocol::encode(ok));
  }
}

template <typename Write>
void Session::queue_in_place(const Write& write) {
  if (io_failed_) return;
  protocol::PacketWriter writer(&endpoint_.start_packet());
  write(writer);
  if (!endpoint_.end_packet().ok()) io_failed_ = true;
}

void Session::write_result(const StatementResult& result, bool binary, uint16_t status) {
  if (auto* error = std::get_if<SqlError>(&result)) {
    send_error(*error);
    return;
  }
  if (auto* ok = std::get_if<OkResult>(&result)) {
    protocol::OkPacket packet;
    packet.affected_rows = ok->affected_rows;
    packet.last_insert_id = ok->last_insert_id;
    packet.status_flags = status;
    packet.warnings = ok->warnings;
    packet.info = ok->info;
    queue_in_place([&](protocol::PacketWriter& writer) { packet.write(writer); });
    return;
  }
  const ResultSet& set = std::get<ResultSet>(result);
  if (results_rewritten()) {
    write_converted_result(set, binary, status);
  } else {
    write_result_set(set, binary, status);
  }
}

void Session::write_result_set(const ResultSet& set, bool binary, uint16_t status) {
  const std::vector<ColumnDefinition41>& columns = set.column_definitions();
  if (columns.empty()) throw std::logic_error("result set without columns");
  queue_in_place(
      [&](protocol::PacketWriter& writer) { protocol::ColumnCount{columns.size()}.write(writer); });
  if (set.encoded_columns != nullptr) {
    for (const std::string& packet : set.encoded_columns->packets) queue(packet);
  } else {
    for (const ColumnDefinition41& column : columns) {
      queue_in_place([&](protocol::PacketWriter& writer) { column.write(writer); });
    }
  }
  if (!deprecate_eof()) {
    const protocol::EofPacket eof{0, status};
    queue_in_place([&](protocol::PacketWriter& writer) { eof.write(writer); });
  }
  for (const std::vector<Value>& row : set.rows) {
    if (row.size() != columns.size()) throw std::logic_error("row width differs from columns");
    queue_in_place([&](protocol::PacketWriter& writer) {
      if (binary) {
        protocol::write_binary_row(writer, row, columns);
      } else {
        protocol::write_text_row(writer, row, columns);
      }
    });
  }
  if (deprecate_eof()) {
    protocol::OkPacket end;
    end.header = protocol::kEofHeader;
    end.status_flags = status;
    end.warnings = set.warnings;
    queue_in_place([&](protocol::PacketWriter& writer) { end.write(writer); });
  } else {
    const protocol::EofPacket eof{set.warnings, status};
    queue_in_place([&](protocol::PacketWriter& writer) { eof.write(writer); });
  }
}

// --- Connection character set ------------------------------------------------------

void Session::convert_client_text(std::string* text) const {
  const protocol::CollationInfo* client = protocol::find_collation(state_.client_collation);
  if (client == nullptr) return;
  const protocol::TextEncoding encoding = protocol::encoding_of_charset(client->character_set);
  if (protocol::needs_conversion(encoding)) *text = protocol::to_utf8mb4(*text, encoding);
}

bool Session::results_rewritten() const {
  const protocol::CollationInfo* results = protocol::find_collation(state_.results_collation);
  return results != nullptr && results->character_set != "utf8mb4";
}

std::string Session::in_results_charset(std::string_view text) const {
  const protocol::CollationInfo& results = *protocol::find_collation(state_.results_collation);
  return protocol::from_utf8mb4(text, protocol::encoding_of_charset(results.character_set));
}

bool Session::describe_in_results_charset(ColumnDefinition41* column) const {
  for (std::string* name : {&column->name, &column->org_name, &column->table, &column->org_table}) {
    *name = in_results_charset(*name);
  }
  if (column->character_set == protocol::kCharsetBinary) return false;
  const protocol::CollationInfo& results = *protocol::find_collation(state_.results_collation);
  const protocol::CharacterSetInfo* charset = protocol::find_character_set(results.character_set);
  // Lengths are in bytes of the results' character set (stored text: 4 per character).
  column->column_length =
      column->column_length / 4 * (charset == nullptr ? 4 : charset->max_length_bytes);
  column->character_set = results.id;
  return true;
}

// The slow path, for a connection whose character_set_results is not utf8mb4: text
// columns are described in the results' collation and their values converted.
void Session::write_converted_result(const ResultSet& set, bool binary, uint16_t status) {
  std::vector<ColumnDefinition41> columns = set.column_definitions();
  std::vector<bool> is_text(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) is_text[i] = describe_in_results_charset(&columns[i]);
  ResultSet converted;
  converted.columns = std::move(columns);
  converted.warnings = set.warnings;
  converted.rows.reserve(set.rows.size());
  for (const std::vector<Value>& row : set.rows) {
    std::vector<Value> out = row;
    for (size_t i = 0; i < out.size() && i < is_text.size(); ++i) {
      if (auto* text = std::get_if<std::string>(&out[i]); text != nullptr && is_text[i]) {
        *text = in_results_charset(*text);
      }
    }
    converted.rows.push_back(std::move(out));
  }
  write_result_set(converted, binary, status);
}

void Session::send_results(std::vector<StatementResult> results, bool binary) {
  if (results.empty()) results.emplace_back(OkResult{});
  for (size_t i = 0; i < results.size(); ++i) {
    bool is_error = std::holds_alternative<SqlError>(results[i]);
    bool more = !is_error && i + 1 < results.size();
    uint16_t status =
        static_cast<uint16_t>(status_flags() | (more ? protocol::kServerMoreResultsExists : 0));
    // Encoded straight into the output buffer, and taken back if a value fails to encode:
    // the command then answers with an ERR alone.
    endpoint_.begin_result();
    try {
      write_result(results[i], binary, status);
    } catch (...) {
      endpoint_.abandon_result();
      throw;
    }
    if (!endpoint_.end_result().ok()) io_failed_ = true;
    // An error ends a multi-statement: what follows it was never run.
    if (is_error) break;
  }
}

}  // namespace duo::sql::server
