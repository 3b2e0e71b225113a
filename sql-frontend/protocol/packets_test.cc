// Tests of every packet type: write/read round trips, size() against the bytes
// written, known byte layouts, COM_STMT_EXECUTE parameter decoding for every MySQL
// type, and refusal of truncated or over-long payloads.
#include "sql-frontend/protocol/packets.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sql-frontend/protocol/auth_scramble.h"

namespace duo::sql::protocol {
namespace {

// Every strict prefix of a valid payload must be refused, and so must the payload
// with one extra byte (a packet not fully consumed is a protocol error).
template <typename ReadFn>
void expect_prefixes_and_suffix_refused(const std::string& payload, ReadFn read,
                                        bool check_suffix = true) {
  for (size_t cut = 0; cut < payload.size(); ++cut) {
    PacketReader reader(std::string_view(payload).substr(0, cut));
    EXPECT_THROW(read(reader), ProtocolError) << "prefix of " << cut << " bytes";
  }
  if (check_suffix) {
    std::string longer = payload + "x";
    PacketReader reader(longer);
    EXPECT_THROW(read(reader), ProtocolError) << "trailing byte";
  }
}

TEST(PacketsTest, HandshakeV10RoundTrip) {
  HandshakeV10 p;
  p.server_version = "8.0.36-duodb";
  p.connection_id = 77;
  p.auth_plugin_data = "abcdefghijklmnopqrst";
  p.capabilities = kServerCapabilities | kClientSsl;
  p.status_flags = kServerStatusAutocommit;
  p.auth_plugin_name = "mysql_native_password";
  std::string bytes = encode(p);
  EXPECT_EQ(bytes.size(), p.size());
  EXPECT_EQ(bytes[0], 10);
  PacketReader reader(bytes);
  HandshakeV10 q = HandshakeV10::read(reader);
  EXPECT_EQ(q.server_version, p.server_version);
  EXPECT_EQ(q.connection_id, 77u);
  EXPECT_EQ(q.auth_plugin_data, p.auth_plugin_data);
  EXPECT_EQ(q.capabilities, p.capabilities);
  EXPECT_EQ(q.status_flags, p.status_flags);
  EXPECT_EQ(q.auth_plugin_name, p.auth_plugin_name);
  expect_prefixes_and_suffix_refused(bytes, [](PacketReader& r) { HandshakeV10::read(r); });
}

TEST(PacketsTest, SslRequestIs32Bytes) {
  SslRequest p{kClientProtocol41 | kClientSsl, 1 << 24, 45};
  std::string bytes = encode(p);
  EXPECT_EQ(bytes.size(), SslRequest::kBytes);
  PacketReader reader(bytes);
  SslRequest q = SslRequest::read(reader);
  EXPECT_EQ(q.capabilities, p.capabilities);
  EXPECT_EQ(q.max_packet_size, p.max_packet_size);
  expect_prefixes_and_suffix_refused(bytes, [](PacketReader& r) { SslRequest::read(r); });
}

TEST(PacketsTest, HandshakeResponse41AllOptionalParts) {
  HandshakeResponse41 p;
  p.capabilities = kClientProtocol41 | kClientSecureConnection | kClientPluginAuth |
                   kClientPluginAuthLenencClientData | kClientConnectWithDb | kClientConnectAttrs;
  p.max_packet_size = 16 << 20;
  p.character_set = 45;
  p.username = "root";
  p.auth_response = std::string(20, '\x01');
  p.database = "test";
  p.auth_plugin_name = "mysql_native_password";
  p.attributes = {{"_client_name", "libmariadb"}, {"_os", "Linux"}};
  std::string bytes = encode(p);
  EXPECT_EQ(bytes.size(), p.size());
  PacketReader reader(bytes);
  HandshakeResponse41 q = HandshakeResponse41::read(reader, kServerCapabilities);
  EXPECT_EQ(q.username, "root");
  EXPECT_EQ(q.auth_response, p.auth_response);
  EXPECT_EQ(q.database, "test");
  EXPECT_EQ(q.auth_plugin_name, p.auth_plugin_name);
  EXPECT_EQ(q.attributes, p.attributes);
  // A truncation before the plugin name still parses (old clients omit the tail), so
  // only the prefixes up to the database are refused.
  std::string head = bytes.substr(0, 32 + 5 + 21 + 5);
  for (size_t cut = 0; cut < head.size(); ++cut) {
    PacketReader r(std::string_view(bytes).substr(0, cut));
    EXPECT_THROW(HandshakeResponse41::read(r, kServerCapabilities), ProtocolError) << cut;
  }
  std::string longer = bytes + "x";
  PacketReader r(longer);
  EXPECT_THROW(HandshakeResponse41::read(r, kServerCapabilities), ProtocolError);
}

TEST(PacketsTest, HandshakeResponse41OneByteLengthAuth) {
  HandshakeResponse41 p;
  p.capabilities = kClientProtocol41 | kClientSecureConnection;
  p.username = "u";
  p.auth_response = "xyz";
  std::string bytes = encode(p);
  PacketReader reader(bytes);
  HandshakeResponse41 q = HandshakeResponse41::read(reader, kServerCapabilities);
  EXPECT_EQ(q.auth_response, "xyz");
  EXPECT_EQ(q.database, "");
}

TEST(PacketsTest, HandshakeResponseWithoutProtocol41Refused) {
  HandshakeResponse41 p;
  p.capabilities = kClientSecureConnection;
  p.username = "u";
  std::string bytes = encode(p);
  PacketReader reader(bytes);
  EXPECT_THROW(HandshakeResponse41::read(reader, kServerCapabilities), ProtocolError);
}

TEST(PacketsTest, AuthSwitchAndMoreData) {
  AuthSwitchRequest p{"caching_sha2_password", std::string("abcdefghijklmnopqrst\0", 21)};
  std::string bytes = encode(p);
  EXPECT_EQ(bytes.size(), p.size());
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0xfe);
  PacketReader reader(bytes);
  AuthSwitchRequest q = AuthSwitchRequest::read(reader);
  EXPECT_EQ(q.plugin_name, p.plugin_name);
  EXPECT_EQ(q.plugin_data, p.plugin_data);

  AuthMoreData more{std::string(1, kSha2PerformFullAuthentication)};
  EXPECT_EQ(encode(more), std::string("\x01\x04"));
  std::string reader2_bytes = encode(more);
  PacketReader reader2(reader2_bytes);
  EXPECT_EQ(AuthMoreData::read(reader2).data, more.data);
}

TEST(PacketsTest, OkPacketLayout) {
  OkPacket p;
  p.affected_rows = 300;
  p.last_insert_id = 5;
  p.status_flags = kServerStatusAutocommit | kServerMoreResultsExists;
  p.warnings = 2;
  p.info = "Rows matched: 1";
  std::string bytes = encode(p);
  EXPECT_EQ(bytes.size(), p.size());
  EXPECT_EQ(bytes.substr(0, 11), std::string("\x00\xfc\x2c\x01\x05\x0a\x00\x02\x00\x0fR", 11));
  PacketReader reader(bytes);
  OkPacket q = OkPacket::read(reader);
  EXPECT_EQ(q.affected_rows, 300u);
  EXPECT_EQ(q.last_insert_id, 5u);
  EXPECT_EQ(q.status_flags, p.status_flags);
  EXPECT_EQ(q.warnings, 2);
  EXPECT_EQ(q.info, p.info);
  // Every prefix but the one that ends before the (optional) info is refused.
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    if (cut == 9) continue;
    PacketReader r(std::string_view(bytes).substr(0, cut));
    EXPECT_THROW(OkPacket::read(r), ProtocolError) << cut;
  }
  std::string bare = encode(OkPacket{});
  EXPECT_EQ(bare, std::string("\x00\x00\x00\x00\x00\x00\x00", 7));
}

TEST(PacketsTest, ErrPacketHasSqlstateMarker) {
  ErrPacket p{1045, "28000", "Access denied for user 'x'@'h' (using password: YES)"};
  std::string bytes = encode(p);
  EXPECT_EQ(bytes.size(), p.size());
  EXPECT_EQ(bytes.substr(0, 9), std::string("\xff\x15\x04#28000", 9));
  PacketReader reader(bytes);
  ErrPacket q = ErrPacket::read(reader);
  EXPECT_EQ(q.error_code, 1045);
  EXPECT_EQ(q.sql_state, "28000");
  EXPECT_EQ(q.message, p.message);
  std::string bad = bytes;
  bad[3] = '!';
  PacketReader bad_reader(bad);
  EXPECT_THROW(ErrPacket::read(bad_reader), ProtocolError);
}

TEST(PacketsTest, EofPacket) {
  EofPacket p{3, kServerStatusAutocommit};
  std::string bytes = encode(p);
  EXPECT_EQ(bytes, std::string("\xfe\x03\x00\x02\x00", 5));
  expect_prefixes_and_suffix_refused(bytes, [](PacketReader& r) { EofPacket::read(r); });
}

TEST(PacketsTest, ColumnDefinitionRoundTrip) {
  ColumnDefinition41 p;
  p.schema = "db";
  p.table = "t";
  p.org_table = "t_org";
  p.name = "c";
  p.org_name = "c_org";
  p.column_length = 11;
  p.type = FieldType::kLong;
  p.flags = kNotNullFlag | kPriKeyFlag | kUnsignedFlag;
  p.decimals = 0;
  std::string bytes = encode(p);
  EXPECT_EQ(bytes.size(), p.size());
  PacketReader reader(bytes);
  ColumnDefinition41 q = ColumnDefinition41::read(reader);
  EXPECT_EQ(q.schema, "db");
  EXPECT_EQ(q.org_table, "t_org");
  EXPECT_EQ(q.name, "c");
  EXPECT_EQ(q.type, FieldType::kLong);
  EXPECT_EQ(q.flags, p.flags);
  EXPECT_EQ(q.column_length, 11u);
  EXPECT_FALSE(q.default_value.has_value());
  expect_prefixes_and_suffix_refused(bytes, [](PacketReader& r) { ColumnDefinition41::read(r); });
  p.default_value = "42";
  std::string reader2_bytes = encode(p);
  PacketReader reader2(reader2_bytes);
  EXPECT_EQ(ColumnDefinition41::read(reader2).default_value, "42");
}

TEST(PacketsTest, TextRowWithNulls) {
  TextResultRow p{{std::string("1"), std::nullopt, std::string(300, 'z'), std::string()}};
  std::string bytes = encode(p);
  EXPECT_EQ(bytes.size(), p.size());
  PacketReader reader(bytes);
  TextResultRow q = TextResultRow::read(reader, 4);
  EXPECT_EQ(q.cells, p.cells);
  expect_prefixes_and_suffix_refused(bytes, [](PacketReader& r) { TextResultRow::read(r, 4); });
}

std::vector<ColumnDefinition41> columns_of(std::vector<std::pair<FieldType, bool>> types) {
  std::vector<ColumnDefinition41> out;
  for (auto [type, is_unsigned] : types) {
    ColumnDefinition41 c;
    c.type = type;
    c.flags = is_unsigned ? kUnsignedFlag : 0;
    out.push_back(c);
  }
  return out;
}

TEST(PacketsTest, BinaryRowAllTypes) {
  MysqlTime date{false, 2024, 2, 29, 0, 0, 0, 0, 0};
  MysqlTime datetime{false, 1999, 12, 31, 0, 23, 59, 58, 123456};
  MysqlTime time{true, 0, 0, 0, 3, 4, 5, 6, 7};
  auto columns = columns_of({{FieldType::kTiny, false},
                             {FieldType::kShort, true},
                             {FieldType::kLong, false},
                             {FieldType::kLongLong, true},
                             {FieldType::kFloat, false},
                             {FieldType::kDouble, false},
                             {FieldType::kNewDecimal, false},
                             {FieldType::kVarString, false},
                             {FieldType::kDate, false},
                             {FieldType::kDateTime, false},
                             {FieldType::kTime, false},
                             {FieldType::kBlob, false},
                             {FieldType::kLong, false}});
  BinaryResultRow p{{Value(int64_t{-5}), Value(uint64_t{65535}), Value(int64_t{-100000}),
                     Value(uint64_t{UINT64_MAX}), Value(1.5), Value(-2.25),
                     Value(std::string("123.45")), Value(std::string("hello")), Value(date),
                     Value(datetime), Value(time), Value(std::string("\0\1\2", 3)), Value()}};
  PacketWriter writer;
  p.write(writer, columns);
  EXPECT_EQ(writer.size(), p.size(columns));
  PacketReader reader(writer.buffer());
  BinaryResultRow q = BinaryResultRow::read(reader, columns);
  ASSERT_EQ(q.values.size(), p.values.size());
  for (size_t i = 0; i < p.values.size(); ++i) EXPECT_TRUE(q.values[i] == p.values[i]) << i;
  std::string bytes = writer.buffer();
  expect_prefixes_and_suffix_refused(bytes,
                                     [&](PacketReader& r) { BinaryResultRow::read(r, columns); });
}

TEST(PacketsTest, StmtPrepareOkLayout) {
  StmtPrepareOk p{7, 2, 3, 0};
  std::string bytes = encode(p);
  EXPECT_EQ(bytes, std::string("\x00\x07\x00\x00\x00\x02\x00\x03\x00\x00\x00\x00", 12));
  expect_prefixes_and_suffix_refused(bytes, [](PacketReader& r) { StmtPrepareOk::read(r); });
}

TEST(PacketsTest, SimpleCommands) {
  ComWithText query{Command::kQuery, "SELECT 1"};
  std::string r1_bytes = encode(query);
  PacketReader r1(r1_bytes);
  EXPECT_EQ(ComWithText::read(r1, Command::kQuery).text, "SELECT 1");
  std::string r1b_bytes = encode(query);
  PacketReader r1b(r1b_bytes);
  EXPECT_THROW(ComWithText::read(r1b, Command::kInitDb), ProtocolError);

  ComWithStatement close{Command::kStmtClose, 9};
  std::string bytes = encode(close);
  EXPECT_EQ(bytes.size(), 5u);
  expect_prefixes_and_suffix_refused(
      bytes, [](PacketReader& r) { ComWithStatement::read(r, Command::kStmtClose); });

  ComFieldList list{"t1", "c%"};
  std::string r2_bytes = encode(list);
  PacketReader r2(r2_bytes);
  ComFieldList q = ComFieldList::read(r2);
  EXPECT_EQ(q.table, "t1");
  EXPECT_EQ(q.wildcard, "c%");

  StmtSendLongData data{4, 1, std::string(1000, 'L')};
  std::string dbytes = encode(data);
  EXPECT_EQ(dbytes.size(), data.size());
  PacketReader r3(dbytes);
  StmtSendLongData d = StmtSendLongData::read(r3);
  EXPECT_EQ(d.statement_id, 4u);
  EXPECT_EQ(d.param_id, 1);
  EXPECT_EQ(d.data, data.data);
}

// Decoding of every parameter type, signed and unsigned, with NULLs in between.
TEST(PacketsTest, StmtExecuteDecodesEveryParameterType) {
  struct Case {
    ParameterType type;
    Value value;
  };
  MysqlTime date{false, 2001, 2, 3, 0, 0, 0, 0, 0};
  MysqlTime datetime{false, 2001, 2, 3, 0, 4, 5, 6, 0};
  MysqlTime datetime_us{false, 2001, 2, 3, 0, 4, 5, 6, 999999};
  MysqlTime zero_date{};
  MysqlTime time{false, 0, 0, 0, 1, 2, 3, 4, 0};
  MysqlTime time_us{true, 0, 0, 0, 0, 2, 3, 4, 500};
  std::vector<Case> cases = {
      {{FieldType::kTiny, false}, Value(int64_t{-128})},
      {{FieldType::kTiny, true}, Value(uint64_t{255})},
      {{FieldType::kShort, false}, Value(int64_t{-32768})},
      {{FieldType::kShort, true}, Value(uint64_t{65535})},
      {{FieldType::kYear, true}, Value(uint64_t{2024})},
      {{FieldType::kInt24, false}, Value(int64_t{-8388608})},
      {{FieldType::kLong, false}, Value(int64_t{INT32_MIN})},
      {{FieldType::kLong, true}, Value(uint64_t{UINT32_MAX})},
      {{FieldType::kLongLong, false}, Value(int64_t{INT64_MIN})},
      {{FieldType::kLongLong, true}, Value(uint64_t{UINT64_MAX})},
      {{FieldType::kFloat, false}, Value(3.5)},
      {{FieldType::kDouble, false}, Value(-1e300)},
      {{FieldType::kDecimal, false}, Value(std::string("1.10"))},
      {{FieldType::kNewDecimal, false}, Value(std::string("-99999999999999999999.5"))},
      {{FieldType::kString, false}, Value(std::string("abc"))},
      {{FieldType::kVarString, false}, Value(std::string(300, 'v'))},
      {{FieldType::kVarchar, false}, Value(std::string(""))},
      {{FieldType::kTinyBlob, false}, Value(std::string("\0t", 2))},
      {{FieldType::kBlob, false}, Value(std::string(70000, 'b'))},
      {{FieldType::kMediumBlob, false}, Value(std::string("m"))},
      {{FieldType::kLongBlob, false}, Value(std::string("l"))},
      {{FieldType::kJson, false}, Value(std::string("{\"a\":1}"))},
      {{FieldType::kBit, false}, Value(std::string("\x05"))},
      {{FieldType::kEnum, false}, Value(std::string("red"))},
      {{FieldType::kSet, false}, Value(std::string("a,b"))},
      {{FieldType::kDate, false}, Value(date)},
      {{FieldType::kDate, false}, Value(zero_date)},
      {{FieldType::kDateTime, false}, Value(datetime)},
      {{FieldType::kDateTime, false}, Value(datetime_us)},
      {{FieldType::kTimestamp, false}, Value(datetime)},
      {{FieldType::kTime, false}, Value(time)},
      {{FieldType::kTime, false}, Value(time_us)},
      {{FieldType::kTime, false}, Value(MysqlTime{})},
      {{FieldType::kNull, false}, Value()},
      {{FieldType::kLong, false}, Value()},  // NULL through the bitmap
  };
  StmtExecute p;
  p.statement_id = 12;
  p.new_params_bound = true;
  for (const Case& c : cases) {
    p.types.push_back(c.type);
    p.values.push_back(c.value);
  }
  std::string bytes = encode(p);
  EXPECT_EQ(bytes.size(), p.size());
  PacketReader reader(bytes);
  StmtExecute q = StmtExecute::read(reader, cases.size(), {}, {});
  EXPECT_EQ(q.statement_id, 12u);
  EXPECT_TRUE(q.new_params_bound);
  ASSERT_EQ(q.values.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(q.types[i], cases[i].type) << i;
    EXPECT_TRUE(q.values[i] == cases[i].value) << "parameter " << i;
  }
  expect_prefixes_and_suffix_refused(
      bytes, [&](PacketReader& r) { StmtExecute::read(r, cases.size(), {}, {}); });

  // Re-execute without re-binding: the previous types apply.
  StmtExecute again = p;
  again.new_params_bound = false;
  std::string reader2_bytes = encode(again);
  PacketReader reader2(reader2_bytes);
  StmtExecute q2 = StmtExecute::read(reader2, cases.size(), q.types, {});
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_TRUE(q2.values[i] == cases[i].value) << i;
  // ... but not if there never were types.
  std::string reader3_bytes = encode(again);
  PacketReader reader3(reader3_bytes);
  EXPECT_THROW(StmtExecute::read(reader3, cases.size(), {}, {}), ProtocolError);
}

TEST(PacketsTest, StmtExecuteSkipsLongDataParameters) {
  StmtExecute p;
  p.statement_id = 1;
  p.new_params_bound = true;
  p.types = {{FieldType::kBlob, false}, {FieldType::kLong, false}};
  p.values = {Value(std::string("ignored")), Value(int64_t{7})};
  // The client does not send a value for a long-data parameter.
  PacketWriter writer;
  writer.write_u8(static_cast<uint8_t>(Command::kStmtExecute));
  writer.write_u32(1);
  writer.write_u8(0);
  writer.write_u32(1);
  writer.write_u8(0);  // null bitmap
  writer.write_u8(1);
  writer.write_u8(static_cast<uint8_t>(FieldType::kBlob));
  writer.write_u8(0);
  writer.write_u8(static_cast<uint8_t>(FieldType::kLong));
  writer.write_u8(0);
  writer.write_u32(7);
  PacketReader reader(writer.buffer());
  StmtExecute q = StmtExecute::read(reader, 2, {}, {true, false});
  EXPECT_TRUE(is_null(q.values[0]));
  EXPECT_TRUE(q.values[1] == Value(int64_t{7}));
}

TEST(PacketsTest, StmtExecuteRefusesBadTypesAndLengths) {
  auto execute_with = [](uint8_t type, std::string value_bytes) {
    PacketWriter writer;
    writer.write_u8(static_cast<uint8_t>(Command::kStmtExecute));
    writer.write_u32(1);
    writer.write_u8(0);
    writer.write_u32(1);
    writer.write_u8(0);
    writer.write_u8(1);
    writer.write_u8(type);
    writer.write_u8(0);
    writer.write_bytes(value_bytes);
    return writer.take();
  };
  auto decode = [](const std::string& bytes) {
    PacketReader reader(bytes);
    return StmtExecute::read(reader, 1, {}, {});
  };
  EXPECT_THROW(decode(execute_with(100, "x")), ProtocolError);  // no such type
  EXPECT_THROW(decode(execute_with(static_cast<uint8_t>(FieldType::kDate),
                                   "\x05"
                                   "12345")),
               ProtocolError);
  EXPECT_THROW(decode(execute_with(static_cast<uint8_t>(FieldType::kTime),
                                   "\x07"
                                   "1234567")),
               ProtocolError);
  EXPECT_THROW(decode(execute_with(static_cast<uint8_t>(FieldType::kLong), "\x01\x02")),
               ProtocolError);
  EXPECT_NO_THROW(decode(execute_with(static_cast<uint8_t>(FieldType::kLong), "\x01\x02\x03\x04")));
}

// The row writers over values the caller keeps produce exactly the packets of
// BinaryResultRow / TextResultRow with format_text_value(), also into a buffer that
// already holds bytes (a connection's output).
TEST(PacketsTest, RowWritersMatchTheRowPackets) {
  auto columns = columns_of({{FieldType::kLongLong, false},
                             {FieldType::kLongLong, true},
                             {FieldType::kYear, true},
                             {FieldType::kDouble, false},
                             {FieldType::kFloat, false},
                             {FieldType::kVarString, false},
                             {FieldType::kDateTime, false},
                             {FieldType::kNewDecimal, false},
                             {FieldType::kLong, false}});
  columns[6].decimals = 3;
  const std::vector<Value> values = {Value(int64_t{INT64_MIN}),
                                     Value(uint64_t{UINT64_MAX}),
                                     Value(uint64_t{0}),
                                     Value(0.1),
                                     Value(static_cast<double>(1.5f)),
                                     Value(std::string(300, 's')),
                                     Value(MysqlTime{false, 2024, 1, 2, 0, 3, 4, 5, 120000}),
                                     Value(std::string("-12.50")),
                                     Value()};
  PacketWriter binary;
  BinaryResultRow{values}.write(binary, columns);
  TextResultRow text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (is_null(values[i])) {
      text.cells.emplace_back(std::nullopt);
    } else {
      text.cells.emplace_back(format_text_value(values[i], columns[i].type, columns[i].decimals));
    }
  }
  EXPECT_EQ(text.cells[2], "0000");
  EXPECT_EQ(text.cells[6], "2024-01-02 03:04:05.120");
  std::string out = "prefix";
  PacketWriter into(&out);
  write_binary_row(into, values, columns);
  EXPECT_EQ(into.size(), binary.buffer().size());
  EXPECT_EQ(out, "prefix" + binary.buffer());
  std::string text_out = "x";
  PacketWriter text_into(&text_out);
  write_text_row(text_into, values, columns);
  EXPECT_EQ(text_out, "x" + encode(text));
  // A row of the wrong width, or a value its type cannot carry, is refused.
  PacketWriter refused;
  EXPECT_THROW(write_binary_row(refused, std::span(values).first(3), columns),
               std::invalid_argument);
  EXPECT_THROW(write_binary_row(refused, std::vector<Value>{Value(std::string("x"))},
                                columns_of({{FieldType::kLong, false}})),
               std::invalid_argument);
}

TEST(PacketsTest, TextFormatting) {
  EXPECT_EQ(format_text_value(Value(int64_t{-3}), FieldType::kLong), "-3");
  EXPECT_EQ(format_text_value(Value(uint64_t{UINT64_MAX}), FieldType::kLongLong),
            "18446744073709551615");
  EXPECT_EQ(format_text_value(Value(uint64_t{0}), FieldType::kYear), "0000") << "ZEROFILL(4)";
  EXPECT_EQ(format_text_value(Value(int64_t{0}), FieldType::kYear), "0000");
  EXPECT_EQ(format_text_value(Value(uint64_t{2024}), FieldType::kYear), "2024");
  EXPECT_EQ(format_text_value(Value(0.1), FieldType::kDouble), "0.1");
  EXPECT_EQ(format_text_value(Value(static_cast<double>(0.1f)), FieldType::kFloat), "0.1");
  EXPECT_EQ(
      format_text_value(Value(MysqlTime{false, 2024, 1, 2, 0, 3, 4, 5, 0}), FieldType::kDateTime),
      "2024-01-02 03:04:05");
  EXPECT_EQ(
      format_text_value(Value(MysqlTime{false, 2024, 1, 2, 0, 3, 4, 5, 6}), FieldType::kTimestamp),
      "2024-01-02 03:04:05.000006");
  EXPECT_EQ(format_text_value(Value(MysqlTime{false, 2024, 1, 2, 0, 0, 0, 0, 0}), FieldType::kDate),
            "2024-01-02");
  EXPECT_EQ(format_text_value(Value(MysqlTime{true, 0, 0, 0, 2, 1, 2, 3, 0}), FieldType::kTime),
            "-49:02:03");
}

TEST(PacketsTest, DoublesAsMySqlPrintsThem) {
  EXPECT_EQ(format_text_value(Value(1e20), FieldType::kDouble), "1e20");
  EXPECT_EQ(format_text_value(Value(0.00001), FieldType::kDouble), "0.00001");
  EXPECT_EQ(format_text_value(Value(1e-16), FieldType::kDouble), "1e-16");
  EXPECT_EQ(format_text_value(Value(1.5e16), FieldType::kDouble), "1.5e16");
  EXPECT_EQ(format_text_value(Value(123456789012345.0), FieldType::kDouble), "123456789012345");
  EXPECT_EQ(format_text_value(Value(-2.5), FieldType::kDouble), "-2.5");
  EXPECT_EQ(format_text_value(Value(0.0), FieldType::kDouble), "0");
  EXPECT_EQ(format_text_value(Value(static_cast<double>(1e20f)), FieldType::kFloat), "1e20");
  EXPECT_EQ(mysql_double_text(2.0 / 3), "0.6666666666666666");
  EXPECT_EQ(mysql_float_text(0.1f), "0.1");
}

TEST(PacketsTest, TemporalColumnsShowTheirFractionalDigits) {
  const MysqlTime t{false, 2024, 1, 2, 0, 3, 4, 5, 120000};
  EXPECT_EQ(format_text_value(Value(t), FieldType::kDateTime, 3), "2024-01-02 03:04:05.120");
  EXPECT_EQ(format_text_value(Value(t), FieldType::kDateTime, 0), "2024-01-02 03:04:05");
  EXPECT_EQ(format_text_value(Value(t), FieldType::kDateTime), "2024-01-02 03:04:05.120000");
  const MysqlTime whole{false, 0, 0, 0, 0, 10, 0, 0, 0};
  EXPECT_EQ(format_text_value(Value(whole), FieldType::kTime, 2), "10:00:00.00");
  EXPECT_EQ(format_text_value(Value(whole), FieldType::kTime), "10:00:00");
  EXPECT_EQ(format_text_value(Value(t), FieldType::kDate, 3), "2024-01-02");
}

}  // namespace
}  // namespace duo::sql::protocol
