// Packet-exact tests of the session state machine with a hand-driven client: the
// greeting, the auth switch, result set framing with and without
// CLIENT_DEPRECATE_EOF (libmariadb never asks for it, MySQL 8 clients always do),
// SERVER_MORE_RESULTS_EXISTS on multi-statements, the prepared statement replies, and
// COM_SET_OPTION / COM_FIELD_LIST endings.
#include <gtest/gtest.h>

#include "sql-frontend/server/sql_server_test_util.h"

namespace duo::sql::server {
namespace {

using protocol::PacketReader;
using testing::RawClient;
using testing::TestServer;

template <typename Packet>
Packet parse(const std::optional<std::string>& payload) {
  EXPECT_TRUE(payload.has_value());
  PacketReader reader(payload ? std::string_view(*payload) : std::string_view());
  return Packet::read(reader);
}

uint8_t first_byte(const std::optional<std::string>& payload) {
  return payload && !payload->empty() ? static_cast<uint8_t>((*payload)[0]) : 0xee;
}

class SessionTest : public ::testing::Test {
 protected:
  TestServer server_;
};

TEST_F(SessionTest, GreetingAdvertisesTheProtocol) {
  RawClient raw(server_.port());
  ASSERT_TRUE(raw.read_greeting());
  const protocol::HandshakeV10& g = raw.greeting;
  EXPECT_EQ(g.auth_plugin_data.size(), protocol::kScrambleBytes);
  EXPECT_EQ(g.auth_plugin_name, "mysql_native_password");
  EXPECT_GT(g.connection_id, 0u);
  for (uint32_t flag :
       {protocol::kClientProtocol41, protocol::kClientPluginAuth, protocol::kClientSsl,
        protocol::kClientDeprecateEof, protocol::kClientMultiStatements,
        protocol::kClientMultiResults, protocol::kClientPsMultiResults,
        protocol::kClientConnectWithDb, protocol::kClientSecureConnection}) {
    EXPECT_TRUE(g.capabilities & flag) << flag;
  }
  EXPECT_FALSE(g.capabilities & protocol::kClientCompress);
  EXPECT_TRUE(g.status_flags & protocol::kServerStatusAutocommit);
}

TEST_F(SessionTest, AccountOfAnotherPluginGetsAuthSwitch) {
  RawClient raw(server_.port());
  ASSERT_TRUE(raw.read_greeting());
  ASSERT_TRUE(raw.send(protocol::encode(raw.response_for("sha2_user", "spass"))));
  auto request = parse<protocol::AuthSwitchRequest>(raw.receive());
  EXPECT_EQ(request.plugin_name, "caching_sha2_password");
  EXPECT_EQ(request.plugin_data, raw.greeting.auth_plugin_data + std::string(1, '\0'));
  // Answer with the SHA-256 scramble; the cache is cold and there is no TLS, so the
  // server asks for full authentication and then refuses.
  ASSERT_TRUE(raw.send(protocol::caching_sha2_scramble("spass", raw.greeting.auth_plugin_data)));
  auto more = parse<protocol::AuthMoreData>(raw.receive());
  EXPECT_EQ(more.data, std::string(1, protocol::kSha2PerformFullAuthentication));
  ASSERT_TRUE(raw.send(std::string(1, protocol::kSha2RequestPublicKey)));
  auto error = parse<protocol::ErrPacket>(raw.receive());
  EXPECT_EQ(error.error_code, 1045);
  EXPECT_EQ(error.sql_state, "28000");
}

TEST_F(SessionTest, TextResultWithAndWithoutDeprecateEof) {
  for (bool deprecate : {false, true}) {
    SCOPED_TRACE(deprecate ? "CLIENT_DEPRECATE_EOF" : "EOF packets");
    RawClient raw(server_.port());
    ASSERT_TRUE(raw.login("root", "", deprecate ? protocol::kClientDeprecateEof : 0));
    auto count = parse<protocol::ColumnCount>(raw.command("\x03SELECT 1, 'a'"));
    EXPECT_EQ(count.count, 2u);
    EXPECT_EQ(parse<protocol::ColumnDefinition41>(raw.receive()).name, "1");
    EXPECT_EQ(parse<protocol::ColumnDefinition41>(raw.receive()).name, "a");
    if (!deprecate) parse<protocol::EofPacket>(raw.receive());
    std::optional<std::string> row_payload = raw.receive();
    ASSERT_TRUE(row_payload);
    PacketReader row_reader(*row_payload);
    auto row = protocol::TextResultRow::read(row_reader, 2);
    EXPECT_EQ(row.cells[0], "1");
    EXPECT_EQ(row.cells[1], "a");
    std::optional<std::string> end = raw.receive();
    ASSERT_EQ(first_byte(end), 0xfe);
    if (deprecate) {
      auto ok = parse<protocol::OkPacket>(end);
      EXPECT_TRUE(ok.status_flags & protocol::kServerStatusAutocommit);
    } else {
      auto eof = parse<protocol::EofPacket>(end);
      EXPECT_TRUE(eof.status_flags & protocol::kServerStatusAutocommit);
    }
    EXPECT_TRUE(raw.ping());  // nothing stray was left behind
  }
}

TEST_F(SessionTest, MultiStatementsSetMoreResultsExists) {
  RawClient raw(server_.port());
  ASSERT_TRUE(raw.login("root", "",
                        protocol::kClientMultiStatements | protocol::kClientMultiResults |
                            protocol::kClientDeprecateEof));
  auto first = parse<protocol::OkPacket>(raw.command("\x03INSERT 1;UPDATE 2;INSERT 3"));
  EXPECT_TRUE(first.status_flags & protocol::kServerMoreResultsExists);
  auto second = parse<protocol::OkPacket>(raw.receive());
  EXPECT_TRUE(second.status_flags & protocol::kServerMoreResultsExists);
  EXPECT_EQ(second.info, "Rows matched: 3  Changed: 3  Warnings: 1");
  auto third = parse<protocol::OkPacket>(raw.receive());
  EXPECT_FALSE(third.status_flags & protocol::kServerMoreResultsExists);
  EXPECT_EQ(third.last_insert_id, 42u);
  // A result set in the middle ends with the flag in its closing OK.
  parse<protocol::ColumnCount>(raw.command("\x03SELECT 1;INSERT 2"));
  parse<protocol::ColumnDefinition41>(raw.receive());
  raw.receive();  // row
  auto end = parse<protocol::OkPacket>(raw.receive());
  EXPECT_EQ(end.header, 0xfe);
  EXPECT_TRUE(end.status_flags & protocol::kServerMoreResultsExists);
  EXPECT_FALSE(parse<protocol::OkPacket>(raw.receive()).status_flags &
               protocol::kServerMoreResultsExists);
  EXPECT_TRUE(raw.ping());
}

TEST_F(SessionTest, PreparedStatementRepliesWithDeprecateEof) {
  RawClient raw(server_.port());
  ASSERT_TRUE(raw.login("root", "", protocol::kClientDeprecateEof));
  auto ok = parse<protocol::StmtPrepareOk>(raw.command("\x16SELECT ?, ?"));
  EXPECT_EQ(ok.num_params, 2);
  EXPECT_EQ(ok.num_columns, 2);
  for (int i = 0; i < 4; ++i) parse<protocol::ColumnDefinition41>(raw.receive());
  EXPECT_TRUE(raw.ping());  // no EOF packets followed the definitions

  protocol::StmtExecute execute;
  execute.statement_id = ok.statement_id;
  execute.new_params_bound = true;
  execute.types = {{protocol::FieldType::kLongLong, true},
                   {protocol::FieldType::kVarString, false}};
  execute.values = {Value(uint64_t{1} << 63), Value(std::string("v"))};
  EXPECT_EQ(parse<protocol::ColumnCount>(raw.command(protocol::encode(execute))).count, 2u);
  std::vector<ColumnDefinition41> columns = {parse<ColumnDefinition41>(raw.receive()),
                                             parse<ColumnDefinition41>(raw.receive())};
  EXPECT_EQ(columns[0].type, protocol::FieldType::kLongLong);
  EXPECT_TRUE(columns[0].flags & protocol::kUnsignedFlag);
  std::optional<std::string> row_payload = raw.receive();
  ASSERT_TRUE(row_payload);
  PacketReader row_reader(*row_payload);
  auto row = protocol::BinaryResultRow::read(row_reader, columns);
  EXPECT_TRUE(row.values[0] == Value(uint64_t{1} << 63));
  EXPECT_TRUE(row.values[1] == Value(std::string("v")));
  EXPECT_EQ(parse<protocol::OkPacket>(raw.receive()).header, 0xfe);

  // Long data for parameter 1, then an execute that omits its value and the types.
  protocol::StmtSendLongData data{ok.statement_id, 1, "long "};
  raw.endpoint.reset_sequence();
  ASSERT_TRUE(raw.send(protocol::encode(data)));
  data.data = "data";
  raw.endpoint.reset_sequence();
  ASSERT_TRUE(raw.send(protocol::encode(data)));
  std::string again("\x17", 1);
  again += std::string(reinterpret_cast<const char*>(&ok.statement_id), 4);
  again += std::string("\x00\x01\x00\x00\x00", 5);
  again += std::string("\x00\x00", 2);  // null bitmap, types not re-bound
  again += std::string("\x07\x00\x00\x00\x00\x00\x00\x00", 8);
  parse<protocol::ColumnCount>(raw.command(again));
  parse<ColumnDefinition41>(raw.receive());
  parse<ColumnDefinition41>(raw.receive());
  row_payload = raw.receive();
  ASSERT_TRUE(row_payload);
  PacketReader again_reader(*row_payload);
  row = protocol::BinaryResultRow::read(again_reader, columns);
  EXPECT_TRUE(row.values[0] == Value(uint64_t{7}));
  EXPECT_TRUE(row.values[1] == Value(std::string("long data")));
  parse<protocol::OkPacket>(raw.receive());

  // COM_STMT_CLOSE has no reply; the id is then unknown.
  raw.endpoint.reset_sequence();
  ASSERT_TRUE(raw.send(protocol::encode(
      protocol::ComWithStatement{protocol::Command::kStmtClose, ok.statement_id})));
  EXPECT_EQ(testing::error_code_of(raw.command(again)), protocol::kErUnknownStmtHandler);
  EXPECT_EQ(server_.handler.open_statements(), 0u);
}

TEST_F(SessionTest, SetOptionAndFieldListEndings) {
  for (bool deprecate : {false, true}) {
    RawClient raw(server_.port());
    ASSERT_TRUE(raw.login("root", "", deprecate ? protocol::kClientDeprecateEof : 0));
    std::optional<std::string> reply = raw.command(std::string("\x1b\x00\x00", 3));
    ASSERT_EQ(first_byte(reply), 0xfe);
    if (deprecate) {
      parse<protocol::OkPacket>(reply);
    } else {
      parse<protocol::EofPacket>(reply);
    }
    auto id = parse<ColumnDefinition41>(raw.command(std::string("\x04t1\0", 4)));
    EXPECT_EQ(id.name, "id");
    EXPECT_EQ(id.default_value, "");
    parse<ColumnDefinition41>(raw.receive());
    EXPECT_EQ(first_byte(raw.receive()), 0xfe);
    EXPECT_TRUE(raw.ping());
    // COM_QUIT closes without a reply.
    raw.endpoint.reset_sequence();
    ASSERT_TRUE(raw.send(std::string(1, '\x01')));
    EXPECT_FALSE(raw.receive().has_value());
  }
}

// A result is encoded straight into the output buffer; one whose value cannot be
// encoded is taken back whole, even past the 64 KiB flush threshold: the client gets the
// ERR alone, and the connection carries on.
TEST_F(SessionTest, ResultThatFailsToEncodeIsTakenBackWhole) {
  for (uint64_t good_rows : {uint64_t{0}, uint64_t{2000}}) {
    SCOPED_TRACE(good_rows);
    RawClient raw(server_.port());
    ASSERT_TRUE(raw.login("root", "", protocol::kClientDeprecateEof));
    const std::string sql = "SELECT BADROWS(" + std::to_string(good_rows) + ")";
    auto ok = parse<protocol::StmtPrepareOk>(raw.command("\x16" + sql));
    EXPECT_EQ(ok.num_params, 0);
    ASSERT_EQ(ok.num_columns, 2);
    for (int i = 0; i < ok.num_columns; ++i) parse<ColumnDefinition41>(raw.receive());
    std::string execute("\x17", 1);
    for (int i = 0; i < 4; ++i) execute += static_cast<char>((ok.statement_id >> (8 * i)) & 0xff);
    execute += std::string("\x00\x01\x00\x00\x00", 5);  // no cursor, iteration count 1
    auto error = parse<protocol::ErrPacket>(raw.command(execute));
    EXPECT_EQ(error.error_code, 1105);
    EXPECT_TRUE(raw.ping());  // nothing of the result was left behind
    // The text protocol can show the same value.
    auto count = parse<protocol::ColumnCount>(raw.command("\x03" + sql));
    EXPECT_EQ(count.count, 2u);
  }
}

TEST_F(SessionTest, EncodedColumnsAreSentAsGiven) {
  for (bool deprecate : {false, true}) {
    RawClient raw(server_.port());
    ASSERT_TRUE(raw.login("root", "", deprecate ? protocol::kClientDeprecateEof : 0));
    auto count = parse<protocol::ColumnCount>(raw.command("\x03SELECT ENCODED"));
    EXPECT_EQ(count.count, 2u);
    EXPECT_EQ(parse<protocol::ColumnDefinition41>(raw.receive()).name, "i");
    EXPECT_EQ(parse<protocol::ColumnDefinition41>(raw.receive()).name, "s");
    if (!deprecate) parse<protocol::EofPacket>(raw.receive());
    std::optional<std::string> row_payload = raw.receive();
    ASSERT_TRUE(row_payload);
    PacketReader row_reader(*row_payload);
    auto row = protocol::TextResultRow::read(row_reader, 2);
    EXPECT_EQ(row.cells[0], "7");
    EXPECT_EQ(row.cells[1], "seven");
    EXPECT_EQ(first_byte(raw.receive()), 0xfe);
    EXPECT_TRUE(raw.ping());
  }
}

// ucs2, utf16 and utf32 cannot carry SQL: a handshake asking for one is refused before
// authentication, as MySQL refuses it (1231); a collation id the server does not list
// falls back to the default and the login goes on.
TEST_F(SessionTest, HandshakeRefusesUcs2Utf16Utf32ClientCharsets) {
  for (uint8_t id : {35, 54, 56, 60, 101, 160}) {
    testing::RawClient raw(server_.port());
    ASSERT_TRUE(raw.read_greeting());
    protocol::HandshakeResponse41 response = raw.response_for("native_user", "npass");
    response.character_set = id;
    ASSERT_TRUE(raw.send(protocol::encode(response)));
    auto error = parse<protocol::ErrPacket>(raw.receive());
    EXPECT_EQ(error.error_code, 1231) << int(id);
    EXPECT_NE(error.message.find("Variable 'character_set_client' can't be set to the value of"),
              std::string::npos)
        << error.message;
    EXPECT_FALSE(raw.receive().has_value()) << "the connection stays open";
  }
  testing::RawClient raw(server_.port());
  ASSERT_TRUE(raw.read_greeting());
  protocol::HandshakeResponse41 response = raw.response_for("native_user", "npass");
  response.character_set = 250;  // gb18030_unicode_520_ci: not listed here
  ASSERT_TRUE(raw.send(protocol::encode(response)));
  auto ok = raw.receive();
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(static_cast<uint8_t>((*ok)[0]), 0x00) << "login refused";
}

}  // namespace
}  // namespace duo::sql::server
