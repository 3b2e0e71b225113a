// One type per MySQL protocol packet, each with read (from a PacketReader over the
// whole payload; throws ProtocolError and refuses leftover bytes), write (to a
// PacketWriter) and size (the encoded payload length, from the same code as write).
// Framing and sequence ids are PacketEndpoint's business; these are payloads only.
//
// Command packets (COM_QUERY, COM_STMT_EXECUTE, ...) include their command byte in
// both read and write, so a session can peek at the first byte, pick the type and hand
// it the untouched payload.
//
// References: the "Client/Server Protocol" chapter of the MySQL source documentation
// (Protocol::HandshakeV10, HandshakeResponse41, OK_Packet, ERR_Packet, EOF_Packet,
// ColumnDefinition41, ProtocolText::ResultsetRow, ProtocolBinary::ResultsetRow,
// COM_STMT_PREPARE_OK, COM_STMT_EXECUTE, COM_STMT_SEND_LONG_DATA).
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sql-frontend/protocol/mysql_constants.h"
#include "sql-frontend/protocol/mysql_value.h"
#include "sql-frontend/protocol/wire_buffer.h"

namespace duo::sql::protocol {

// size() of any packet type: write() into a counting writer.
template <typename Packet>
size_t encoded_size(const Packet& packet) {
  PacketWriter writer(PacketWriter::kCountOnly);
  packet.write(writer);
  return writer.size();
}

// Serializes a packet to a payload string.
template <typename Packet>
std::string encode(const Packet& packet) {
  PacketWriter writer;
  packet.write(writer);
  return writer.take();
}

struct HandshakeV10 {
  std::string server_version;
  uint32_t connection_id = 0;
  std::string auth_plugin_data;  // the nonce, 20 bytes
  uint32_t capabilities = 0;
  uint8_t character_set = kCharsetUtf8mb4GeneralCi;
  uint16_t status_flags = 0;
  std::string auth_plugin_name;

  static HandshakeV10 read(PacketReader& reader);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

// The 32-byte prefix a client sends to ask for TLS before its HandshakeResponse41.
struct SslRequest {
  static constexpr size_t kBytes = 32;
  uint32_t capabilities = 0;
  uint32_t max_packet_size = 0;
  uint8_t character_set = 0;

  static SslRequest read(PacketReader& reader);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

struct HandshakeResponse41 {
  uint32_t capabilities = 0;  // as sent by the client
  uint32_t max_packet_size = 0;
  uint8_t character_set = 0;
  std::string username;
  std::string auth_response;
  std::string database;                                         // if kClientConnectWithDb
  std::string auth_plugin_name;                                 // if kClientPluginAuth
  std::vector<std::pair<std::string, std::string>> attributes;  // kClientConnectAttrs

  // The optional parts are laid out by the client's flags limited to what the server
  // offered (`server_capabilities`), as MySQL's server parses them.
  static HandshakeResponse41 read(PacketReader& reader, uint32_t server_capabilities);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

struct AuthSwitchRequest {
  std::string plugin_name;
  std::string plugin_data;  // MySQL sends nonce + NUL

  static AuthSwitchRequest read(PacketReader& reader);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

// Extra authentication data from the server (0x01 prefix): caching_sha2_password's
// fast-auth result or the perform-full-authentication request.
struct AuthMoreData {
  std::string data;

  static AuthMoreData read(PacketReader& reader);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

struct OkPacket {
  // 0x00, or 0xfe when it ends a result set under CLIENT_DEPRECATE_EOF.
  uint8_t header = kOkHeader;
  uint64_t affected_rows = 0;
  uint64_t last_insert_id = 0;
  uint16_t status_flags = 0;
  uint16_t warnings = 0;
  std::string info;

  static OkPacket read(PacketReader& reader);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

struct ErrPacket {
  uint16_t error_code = 0;
  std::string sql_state = "HY000";  // five characters
  std::string message;

  static ErrPacket read(PacketReader& reader);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

struct EofPacket {
  uint16_t warnings = 0;
  uint16_t status_flags = 0;

  static EofPacket read(PacketReader& reader);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

struct ColumnDefinition41 {
  std::string schema;
  std::string table;
  std::string org_table;
  std::string name;
  std::string org_name;
  uint16_t character_set = kCharsetUtf8mb4;
  uint32_t column_length = 0;
  FieldType type = FieldType::kVarString;
  uint16_t flags = 0;
  uint8_t decimals = 0;
  // COM_FIELD_LIST appends the column default; absent elsewhere.
  std::optional<std::string> default_value;

  static ColumnDefinition41 read(PacketReader& reader);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

// The column-count packet that opens a result set.
struct ColumnCount {
  uint64_t count = 0;

  static ColumnCount read(PacketReader& reader);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

struct TextResultRow {
  std::vector<std::optional<std::string>> cells;  // nullopt is NULL

  static TextResultRow read(PacketReader& reader, size_t column_count);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

// A row of the binary protocol: 0x00, NULL bitmap (offset 2), non-NULL values.
struct BinaryResultRow {
  std::vector<Value> values;

  static BinaryResultRow read(PacketReader& reader, const std::vector<ColumnDefinition41>& columns);
  // Throws std::invalid_argument when a value does not fit its column's type.
  void write(PacketWriter& writer, const std::vector<ColumnDefinition41>& columns) const;
  size_t size(const std::vector<ColumnDefinition41>& columns) const;
};

// Result rows written from values the caller keeps (no row object is built): the
// binary protocol's (BinaryResultRow's layout) and the text protocol's (each value in
// its text form, format_text_value(); NULL as 0xfb). Both throw std::invalid_argument
// when a value does not fit its column's type, or the widths differ.
void write_binary_row(PacketWriter& writer, std::span<const Value> values,
                      const std::vector<ColumnDefinition41>& columns);
void write_text_row(PacketWriter& writer, std::span<const Value> values,
                    const std::vector<ColumnDefinition41>& columns);

struct StmtPrepareOk {
  uint32_t statement_id = 0;
  uint16_t num_columns = 0;
  uint16_t num_params = 0;
  uint16_t warnings = 0;

  static StmtPrepareOk read(PacketReader& reader);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

// Commands with one string argument: COM_QUERY, COM_INIT_DB, COM_STMT_PREPARE.
struct ComWithText {
  Command command = Command::kQuery;
  std::string text;

  static ComWithText read(PacketReader& reader, Command command);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

// Commands with one statement id: COM_STMT_CLOSE, COM_STMT_RESET.
struct ComWithStatement {
  Command command = Command::kStmtClose;
  uint32_t statement_id = 0;

  static ComWithStatement read(PacketReader& reader, Command command);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

struct ComFieldList {
  std::string table;
  std::string wildcard;

  static ComFieldList read(PacketReader& reader);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

// The type of one statement parameter as bound by the client.
struct ParameterType {
  FieldType type = FieldType::kNull;
  bool is_unsigned = false;
  bool operator==(const ParameterType&) const = default;
};

struct StmtExecute {
  uint32_t statement_id = 0;
  uint8_t flags = 0;  // cursor type
  uint32_t iteration_count = 1;
  bool new_params_bound = false;
  std::vector<ParameterType> types;  // as sent, or the previous ones if not re-bound
  std::vector<Value> values;         // one per parameter; long-data params left NULL

  // Decodes an execute for a statement of `param_count` parameters. `previous_types`
  // are those of the last execute (used when the client does not re-send them);
  // `has_long_data[i]` marks parameters whose value came by COM_STMT_SEND_LONG_DATA
  // and is therefore absent from this packet.
  static StmtExecute read(PacketReader& reader, size_t param_count,
                          const std::vector<ParameterType>& previous_types,
                          const std::vector<bool>& has_long_data);
  // Writes the client form (always with new-params-bound = 1 when there are
  // parameters); values that are NULL go in the bitmap.
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

struct StmtSendLongData {
  uint32_t statement_id = 0;
  uint16_t param_id = 0;
  std::string data;

  static StmtSendLongData read(PacketReader& reader);
  void write(PacketWriter& writer) const;
  size_t size() const { return encoded_size(*this); }
};

// True when the byte names a column type this server decodes.
bool is_known_field_type(uint8_t type);

}  // namespace duo::sql::protocol
