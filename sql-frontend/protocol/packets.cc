// Read/write of every MySQL packet type; see packets.h.
#include "sql-frontend/protocol/packets.h"

#include <algorithm>

namespace duo::sql::protocol {

namespace {

void expect_command(PacketReader& reader, Command command) {
  uint8_t byte = reader.read_u8();
  if (byte != static_cast<uint8_t>(command)) {
    throw ProtocolError("malformed packet: command byte " + std::to_string(byte) + " where " +
                        std::to_string(static_cast<int>(command)) + " was expected");
  }
}

}  // namespace

bool is_known_field_type(uint8_t type) {
  return type <= 19 || type >= 245;
}

// --- HandshakeV10 ---------------------------------------------------------------------

HandshakeV10 HandshakeV10::read(PacketReader& reader) {
  HandshakeV10 p;
  if (reader.read_u8() != 10) throw ProtocolError("malformed packet: protocol version is not 10");
  p.server_version = std::string(reader.read_null_terminated());
  p.connection_id = reader.read_u32();
  std::string data(reader.read_bytes(8));
  reader.skip(1);
  p.capabilities = reader.read_u16();
  p.character_set = reader.read_u8();
  p.status_flags = reader.read_u16();
  p.capabilities |= static_cast<uint32_t>(reader.read_u16()) << 16;
  uint8_t data_length = reader.read_u8();
  reader.skip(10);
  if (p.capabilities & kClientSecureConnection) {
    size_t rest = std::max<int>(13, static_cast<int>(data_length) - 8);
    std::string_view part2 = reader.read_bytes(rest);
    // The second part ends with a NUL that is not part of the nonce.
    if (!part2.empty() && part2.back() == '\0') part2.remove_suffix(1);
    data.append(part2);
  }
  p.auth_plugin_data = std::move(data);
  if (p.capabilities & kClientPluginAuth)
    p.auth_plugin_name = std::string(reader.read_null_terminated());
  reader.expect_end("HandshakeV10");
  return p;
}

void HandshakeV10::write(PacketWriter& writer) const {
  writer.write_u8(10);
  writer.write_null_terminated(server_version);
  writer.write_u32(connection_id);
  std::string data = auth_plugin_data;
  data.resize(std::max<size_t>(data.size(), 8), '\0');
  writer.write_bytes(std::string_view(data).substr(0, 8));
  writer.write_u8(0);
  writer.write_u16(static_cast<uint16_t>(capabilities & 0xffff));
  writer.write_u8(character_set);
  writer.write_u16(status_flags);
  writer.write_u16(static_cast<uint16_t>(capabilities >> 16));
  writer.write_u8(static_cast<uint8_t>(data.size() + 1));
  writer.write_zeros(10);
  if (capabilities & kClientSecureConnection) {
    std::string part2 = data.substr(8);
    part2.resize(std::max<size_t>(part2.size() + 1, 13), '\0');
    writer.write_bytes(part2);
  }
  if (capabilities & kClientPluginAuth) writer.write_null_terminated(auth_plugin_name);
}

// --- SslRequest / HandshakeResponse41 -------------------------------------------------

SslRequest SslRequest::read(PacketReader& reader) {
  SslRequest p;
  p.capabilities = reader.read_u32();
  p.max_packet_size = reader.read_u32();
  p.character_set = reader.read_u8();
  reader.skip(23);
  reader.expect_end("SSLRequest");
  return p;
}

void SslRequest::write(PacketWriter& writer) const {
  writer.write_u32(capabilities);
  writer.write_u32(max_packet_size);
  writer.write_u8(character_set);
  writer.write_zeros(23);
}

HandshakeResponse41 HandshakeResponse41::read(PacketReader& reader, uint32_t server_capabilities) {
  HandshakeResponse41 p;
  p.capabilities = reader.read_u32();
  if (!(p.capabilities & kClientProtocol41)) {
    throw ProtocolError("client does not speak protocol 4.1", kErHandshake);
  }
  uint32_t flags = p.capabilities & server_capabilities;
  p.max_packet_size = reader.read_u32();
  p.character_set = reader.read_u8();
  reader.skip(23);
  p.username = std::string(reader.read_null_terminated());
  if (flags & kClientPluginAuthLenencClientData) {
    p.auth_response = std::string(reader.read_lenenc_string());
  } else if (flags & kClientSecureConnection) {
    p.auth_response = std::string(reader.read_bytes(reader.read_u8()));
  } else {
    p.auth_response = std::string(reader.read_null_terminated());
  }
  if (flags & kClientConnectWithDb) p.database = std::string(reader.read_null_terminated());
  if ((flags & kClientPluginAuth) && !reader.at_end()) {
    p.auth_plugin_name = std::string(reader.read_null_terminated());
  }
  if ((flags & kClientConnectAttrs) && !reader.at_end()) {
    uint64_t total = reader.read_lenenc_int();
    if (total > reader.remaining()) throw ProtocolError("malformed packet: connection attributes");
    PacketReader attrs(reader.read_bytes(static_cast<size_t>(total)));
    while (!attrs.at_end()) {
      std::string key(attrs.read_lenenc_string());
      std::string value(attrs.read_lenenc_string());
      p.attributes.emplace_back(std::move(key), std::move(value));
    }
  }
  reader.expect_end("HandshakeResponse41");
  return p;
}

void HandshakeResponse41::write(PacketWriter& writer) const {
  writer.write_u32(capabilities);
  writer.write_u32(max_packet_size);
  writer.write_u8(character_set);
  writer.write_zeros(23);
  writer.write_null_terminated(username);
  if (capabilities & kClientPluginAuthLenencClientData) {
    writer.write_lenenc_string(auth_response);
  } else if (capabilities & kClientSecureConnection) {
    writer.write_u8(static_cast<uint8_t>(auth_response.size()));
    writer.write_bytes(auth_response);
  } else {
    writer.write_null_terminated(auth_response);
  }
  if (capabilities & kClientConnectWithDb) writer.write_null_terminated(database);
  if (capabilities & kClientPluginAuth) writer.write_null_terminated(auth_plugin_name);
  if (capabilities & kClientConnectAttrs) {
    PacketWriter attrs;
    for (const auto& [key, value] : attributes) {
      attrs.write_lenenc_string(key);
      attrs.write_lenenc_string(value);
    }
    writer.write_lenenc_string(attrs.buffer());
  }
}

// --- Authentication exchange ----------------------------------------------------------

AuthSwitchRequest AuthSwitchRequest::read(PacketReader& reader) {
  AuthSwitchRequest p;
  if (reader.read_u8() != kAuthSwitchHeader)
    throw ProtocolError("malformed packet: not an auth switch");
  p.plugin_name = std::string(reader.read_null_terminated());
  p.plugin_data = std::string(reader.read_rest());
  return p;
}

void AuthSwitchRequest::write(PacketWriter& writer) const {
  writer.write_u8(kAuthSwitchHeader);
  writer.write_null_terminated(plugin_name);
  writer.write_bytes(plugin_data);
}

AuthMoreData AuthMoreData::read(PacketReader& reader) {
  AuthMoreData p;
  if (reader.read_u8() != kAuthMoreDataHeader)
    throw ProtocolError("malformed packet: not auth data");
  p.data = std::string(reader.read_rest());
  return p;
}

void AuthMoreData::write(PacketWriter& writer) const {
  writer.write_u8(kAuthMoreDataHeader);
  writer.write_bytes(data);
}

// --- OK / ERR / EOF -------------------------------------------------------------------

OkPacket OkPacket::read(PacketReader& reader) {
  OkPacket p;
  p.header = reader.read_u8();
  if (p.header != kOkHeader && p.header != kEofHeader)
    throw ProtocolError("malformed packet: not OK");
  p.affected_rows = reader.read_lenenc_int();
  p.last_insert_id = reader.read_lenenc_int();
  p.status_flags = reader.read_u16();
  p.warnings = reader.read_u16();
  if (!reader.at_end()) p.info = std::string(reader.read_lenenc_string());
  reader.expect_end("OK");
  return p;
}

void OkPacket::write(PacketWriter& writer) const {
  writer.write_u8(header);
  writer.write_lenenc_int(affected_rows);
  writer.write_lenenc_int(last_insert_id);
  writer.write_u16(status_flags);
  writer.write_u16(warnings);
  // Without CLIENT_SESSION_TRACK the manual calls this string<EOF>, but MySQL's server
  // writes it length-encoded and libmysqlclient / libmariadb read it so.
  if (!info.empty()) writer.write_lenenc_string(info);
}

ErrPacket ErrPacket::read(PacketReader& reader) {
  ErrPacket p;
  if (reader.read_u8() != kErrHeader) throw ProtocolError("malformed packet: not ERR");
  p.error_code = reader.read_u16();
  if (reader.read_u8() != '#') throw ProtocolError("malformed packet: ERR without SQLSTATE marker");
  p.sql_state = std::string(reader.read_bytes(5));
  p.message = std::string(reader.read_rest());
  return p;
}

void ErrPacket::write(PacketWriter& writer) const {
  writer.write_u8(kErrHeader);
  writer.write_u16(error_code);
  writer.write_u8('#');
  std::string state = sql_state;
  state.resize(5, '0');
  writer.write_bytes(state);
  writer.write_bytes(message);
}

EofPacket EofPacket::read(PacketReader& reader) {
  EofPacket p;
  if (reader.read_u8() != kEofHeader) throw ProtocolError("malformed packet: not EOF");
  p.warnings = reader.read_u16();
  p.status_flags = reader.read_u16();
  reader.expect_end("EOF");
  return p;
}

void EofPacket::write(PacketWriter& writer) const {
  writer.write_u8(kEofHeader);
  writer.write_u16(warnings);
  writer.write_u16(status_flags);
}

// --- Result sets ----------------------------------------------------------------------

ColumnDefinition41 ColumnDefinition41::read(PacketReader& reader) {
  ColumnDefinition41 p;
  if (reader.read_lenenc_string() != "def")
    throw ProtocolError("malformed packet: catalog is not def");
  p.schema = std::string(reader.read_lenenc_string());
  p.table = std::string(reader.read_lenenc_string());
  p.org_table = std::string(reader.read_lenenc_string());
  p.name = std::string(reader.read_lenenc_string());
  p.org_name = std::string(reader.read_lenenc_string());
  if (reader.read_lenenc_int() != 0x0c)
    throw ProtocolError("malformed packet: fixed fields length");
  p.character_set = reader.read_u16();
  p.column_length = reader.read_u32();
  uint8_t type = reader.read_u8();
  if (!is_known_field_type(type)) throw ProtocolError("malformed packet: unknown column type");
  p.type = static_cast<FieldType>(type);
  p.flags = reader.read_u16();
  p.decimals = reader.read_u8();
  reader.skip(2);
  if (!reader.at_end()) p.default_value = std::string(reader.read_lenenc_string());
  reader.expect_end("ColumnDefinition41");
  return p;
}

void ColumnDefinition41::write(PacketWriter& writer) const {
  writer.write_lenenc_string("def");
  writer.write_lenenc_string(schema);
  writer.write_lenenc_string(table);
  writer.write_lenenc_string(org_table);
  writer.write_lenenc_string(name);
  writer.write_lenenc_string(org_name);
  writer.write_lenenc_int(0x0c);
  writer.write_u16(character_set);
  writer.write_u32(column_length);
  writer.write_u8(static_cast<uint8_t>(type));
  writer.write_u16(flags);
  writer.write_u8(decimals);
  writer.write_zeros(2);
  if (default_value) writer.write_lenenc_string(*default_value);
}

ColumnCount ColumnCount::read(PacketReader& reader) {
  ColumnCount p;
  p.count = reader.read_lenenc_int();
  if (p.count == 0) throw ProtocolError("malformed packet: a result set has columns");
  reader.expect_end("column count");
  return p;
}

void ColumnCount::write(PacketWriter& writer) const {
  writer.write_lenenc_int(count);
}

TextResultRow TextResultRow::read(PacketReader& reader, size_t column_count) {
  TextResultRow p;
  p.cells.reserve(column_count);
  for (size_t i = 0; i < column_count; ++i) {
    if (reader.peek_u8() == 0xfb) {
      reader.read_u8();
      p.cells.emplace_back(std::nullopt);
    } else {
      p.cells.emplace_back(std::string(reader.read_lenenc_string()));
    }
  }
  reader.expect_end("text row");
  return p;
}

void TextResultRow::write(PacketWriter& writer) const {
  for (const auto& cell : cells) {
    if (cell) {
      writer.write_lenenc_string(*cell);
    } else {
      writer.write_u8(0xfb);
    }
  }
}

BinaryResultRow BinaryResultRow::read(PacketReader& reader,
                                      const std::vector<ColumnDefinition41>& columns) {
  BinaryResultRow p;
  if (reader.read_u8() != 0x00) throw ProtocolError("malformed packet: binary row header");
  std::string_view bitmap = reader.read_bytes((columns.size() + 7 + 2) / 8);
  for (size_t i = 0; i < columns.size(); ++i) {
    size_t bit = i + 2;
    if (static_cast<uint8_t>(bitmap[bit / 8]) & (1u << (bit % 8))) {
      p.values.emplace_back();
    } else {
      p.values.push_back(
          read_binary_value(reader, columns[i].type, (columns[i].flags & kUnsignedFlag) != 0));
    }
  }
  reader.expect_end("binary row");
  return p;
}

void BinaryResultRow::write(PacketWriter& writer,
                            const std::vector<ColumnDefinition41>& columns) const {
  write_binary_row(writer, values, columns);
}

void write_binary_row(PacketWriter& writer, std::span<const Value> values,
                      const std::vector<ColumnDefinition41>& columns) {
  if (values.size() != columns.size())
    throw std::invalid_argument("row width differs from columns");
  writer.write_u8(0x00);
  // The NULL bitmap (offset 2); on the stack for up to 1022 columns.
  const size_t bitmap_bytes = (columns.size() + 7 + 2) / 8;
  char small[128] = {};
  std::string large;
  char* bitmap = small;
  if (bitmap_bytes > sizeof small) {
    large.assign(bitmap_bytes, '\0');
    bitmap = large.data();
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (is_null(values[i])) bitmap[(i + 2) / 8] |= static_cast<char>(1u << ((i + 2) % 8));
  }
  writer.write_bytes(std::string_view(bitmap, bitmap_bytes));
  for (size_t i = 0; i < values.size(); ++i) {
    if (!is_null(values[i])) write_binary_value(writer, columns[i].type, values[i]);
  }
}

void write_text_row(PacketWriter& writer, std::span<const Value> values,
                    const std::vector<ColumnDefinition41>& columns) {
  if (values.size() != columns.size())
    throw std::invalid_argument("row width differs from columns");
  for (size_t i = 0; i < values.size(); ++i) {
    if (is_null(values[i])) {
      writer.write_u8(0xfb);
    } else {
      write_text_value(writer, values[i], columns[i].type, columns[i].decimals);
    }
  }
}

size_t BinaryResultRow::size(const std::vector<ColumnDefinition41>& columns) const {
  PacketWriter writer(PacketWriter::kCountOnly);
  write(writer, columns);
  return writer.size();
}

// --- Prepared statements --------------------------------------------------------------

StmtPrepareOk StmtPrepareOk::read(PacketReader& reader) {
  StmtPrepareOk p;
  if (reader.read_u8() != 0x00) throw ProtocolError("malformed packet: not PREPARE_OK");
  p.statement_id = reader.read_u32();
  p.num_columns = reader.read_u16();
  p.num_params = reader.read_u16();
  reader.skip(1);
  p.warnings = reader.read_u16();
  reader.expect_end("COM_STMT_PREPARE_OK");
  return p;
}

void StmtPrepareOk::write(PacketWriter& writer) const {
  writer.write_u8(0x00);
  writer.write_u32(statement_id);
  writer.write_u16(num_columns);
  writer.write_u16(num_params);
  writer.write_u8(0);
  writer.write_u16(warnings);
}

ComWithText ComWithText::read(PacketReader& reader, Command command) {
  ComWithText p;
  expect_command(reader, command);
  p.command = command;
  p.text = std::string(reader.read_rest());
  return p;
}

void ComWithText::write(PacketWriter& writer) const {
  writer.write_u8(static_cast<uint8_t>(command));
  writer.write_bytes(text);
}

ComWithStatement ComWithStatement::read(PacketReader& reader, Command command) {
  ComWithStatement p;
  expect_command(reader, command);
  p.command = command;
  p.statement_id = reader.read_u32();
  reader.expect_end("statement command");
  return p;
}

void ComWithStatement::write(PacketWriter& writer) const {
  writer.write_u8(static_cast<uint8_t>(command));
  writer.write_u32(statement_id);
}

ComFieldList ComFieldList::read(PacketReader& reader) {
  ComFieldList p;
  expect_command(reader, Command::kFieldList);
  p.table = std::string(reader.read_null_terminated());
  p.wildcard = std::string(reader.read_rest());
  return p;
}

void ComFieldList::write(PacketWriter& writer) const {
  writer.write_u8(static_cast<uint8_t>(Command::kFieldList));
  writer.write_null_terminated(table);
  writer.write_bytes(wildcard);
}

StmtExecute StmtExecute::read(PacketReader& reader, size_t param_count,
                              const std::vector<ParameterType>& previous_types,
                              const std::vector<bool>& has_long_data) {
  StmtExecute p;
  expect_command(reader, Command::kStmtExecute);
  p.statement_id = reader.read_u32();
  p.flags = reader.read_u8();
  p.iteration_count = reader.read_u32();
  if (param_count == 0) {
    reader.expect_end("COM_STMT_EXECUTE");
    return p;
  }
  std::string_view null_bitmap = reader.read_bytes((param_count + 7) / 8);
  p.new_params_bound = reader.read_u8() != 0;
  if (p.new_params_bound) {
    p.types.reserve(param_count);
    for (size_t i = 0; i < param_count; ++i) {
      uint8_t type = reader.read_u8();
      uint8_t flags = reader.read_u8();
      if (!is_known_field_type(type)) {
        throw ProtocolError("malformed packet: unknown parameter type " + std::to_string(type));
      }
      p.types.push_back({static_cast<FieldType>(type), (flags & 0x80) != 0});
    }
  } else {
    if (previous_types.size() != param_count) {
      throw ProtocolError("malformed packet: parameters were never bound");
    }
    p.types = previous_types;
  }
  p.values.resize(param_count);
  for (size_t i = 0; i < param_count; ++i) {
    bool null = (static_cast<uint8_t>(null_bitmap[i / 8]) >> (i % 8)) & 1;
    bool long_data = i < has_long_data.size() && has_long_data[i];
    if (null || long_data) continue;
    p.values[i] = read_binary_value(reader, p.types[i].type, p.types[i].is_unsigned);
  }
  reader.expect_end("COM_STMT_EXECUTE");
  return p;
}

void StmtExecute::write(PacketWriter& writer) const {
  writer.write_u8(static_cast<uint8_t>(Command::kStmtExecute));
  writer.write_u32(statement_id);
  writer.write_u8(flags);
  writer.write_u32(iteration_count);
  if (values.empty()) return;
  std::string bitmap((values.size() + 7) / 8, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    if (is_null(values[i])) bitmap[i / 8] |= static_cast<char>(1u << (i % 8));
  }
  writer.write_bytes(bitmap);
  writer.write_u8(new_params_bound ? 1 : 0);
  if (new_params_bound) {
    for (const ParameterType& t : types) {
      writer.write_u8(static_cast<uint8_t>(t.type));
      writer.write_u8(t.is_unsigned ? 0x80 : 0x00);
    }
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!is_null(values[i])) write_binary_value(writer, types[i].type, values[i]);
  }
}

StmtSendLongData StmtSendLongData::read(PacketReader& reader) {
  StmtSendLongData p;
  expect_command(reader, Command::kStmtSendLongData);
  p.statement_id = reader.read_u32();
  p.param_id = reader.read_u16();
  p.data = std::string(reader.read_rest());
  return p;
}

void StmtSendLongData::write(PacketWriter& writer) const {
  writer.write_u8(static_cast<uint8_t>(Command::kStmtSendLongData));
  writer.write_u32(statement_id);
  writer.write_u16(param_id);
  writer.write_bytes(data);
}

}  // namespace duo::sql::protocol
