// Robustness of the MySQL front-end against hostile or broken peers: random bytes,
// truncated and oversized handshakes, wrong sequence ids, bad authentication answers,
// malformed and random commands after login. After each campaign the server must
// still serve a real client, and every broken session must have ended. Seeds are
// fixed, so a failure replays. Run under ASan too (build/h-sqlp-asan).
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "sql-frontend/server/sql_server_test_util.h"

namespace duo::sql::server {
namespace {

using protocol::PacketEndpoint;
using protocol::PacketReader;
using testing::Client;
using testing::error_code_of;
using testing::RawClient;
using testing::TestServer;

void expect_server_healthy(TestServer& server) {
  // Every broken session ends (none stays stuck in a read).
  for (int i = 0; i < 1000 && server.server->connection_count() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(server.server->connection_count(), 0u);
  Client client(server.port(), "native_user", "npass");
  ASSERT_TRUE(client.connected) << client.error;
  EXPECT_EQ(client.scalar("SELECT 'healthy'"), "healthy");
}

class SessionFuzzTest : public ::testing::Test {
 protected:
  TestServer server_;
};

TEST_F(SessionFuzzTest, RandomBytesInsteadOfHandshake) {
  std::mt19937 random(12345);
  auto bystander = std::make_unique<Client>(server_.port(), "native_user", "npass");
  ASSERT_TRUE(bystander->connected);
  for (int i = 0; i < 150; ++i) {
    RawClient raw(server_.port());
    if (random() % 2) {
      ASSERT_TRUE(raw.read_greeting());
    }
    std::string junk(random() % 400, '\0');
    for (char& c : junk) c = static_cast<char>(random());
    if (random() % 3 == 0 && junk.size() >= 4) {
      // A plausible header in front of the junk.
      junk[0] = static_cast<char>(junk.size() - 4);
      junk[1] = junk[2] = 0;
      junk[3] = 1;
    }
    (void)raw.socket->write_all(junk);
    if (random() % 2) raw.drain(5);
  }
  // The bystander session was never disturbed.
  EXPECT_EQ(bystander->scalar("SELECT 7"), "7");
  bystander.reset();
  expect_server_healthy(server_);
}

TEST_F(SessionFuzzTest, TruncatedAndOversizedHandshakes) {
  std::string good;
  {
    RawClient probe(server_.port());
    ASSERT_TRUE(probe.read_greeting());
    good = protocol::encode(probe.response_for("native_user", "npass"));
  }
  for (size_t cut = 0; cut < good.size(); cut += 3) {
    RawClient raw(server_.port());
    ASSERT_TRUE(raw.read_greeting());
    ASSERT_TRUE(raw.send(good.substr(0, cut)));
    std::optional<std::string> reply = raw.receive();
    // Either a refusal (Bad handshake / access denied) or a closed connection.
    if (reply) {
      uint16_t code = error_code_of(reply);
      EXPECT_TRUE(code == protocol::kErHandshake || code == protocol::kErAccessDenied) << cut;
    }
  }
  {
    // A handshake packet far over its 64 KiB cap just ends the connection.
    RawClient big(server_.port());
    ASSERT_TRUE(big.read_greeting());
    (void)big.send(std::string(200000, 'A'));
    EXPECT_FALSE(big.receive().has_value());
  }
  expect_server_healthy(server_);
}

TEST_F(SessionFuzzTest, WrongSequenceIds) {
  RawClient raw(server_.port());
  ASSERT_TRUE(raw.read_greeting());
  raw.endpoint.set_sequence(7);  // the response must carry 1
  ASSERT_TRUE(raw.send(protocol::encode(raw.response_for("native_user", "npass"))));
  EXPECT_FALSE(raw.receive().has_value());

  RawClient logged_in(server_.port());
  ASSERT_TRUE(logged_in.login("native_user", "npass"));
  logged_in.endpoint.set_sequence(3);  // commands must start at 0
  ASSERT_TRUE(logged_in.send(std::string(1, '\x0e')));
  // The server answers at the sequence it expected (0), not the client's.
  logged_in.endpoint.set_sequence(0);
  std::optional<std::string> reply = logged_in.receive();
  EXPECT_EQ(error_code_of(reply), protocol::kErNetPacketsOutOfOrder);
  EXPECT_FALSE(logged_in.receive().has_value());
  // An SSLRequest to a server without TLS is a bad handshake.
  TestServer no_tls(SqlServerOptions{}, /*with_tls=*/false);
  RawClient ssl(no_tls.port());
  ASSERT_TRUE(ssl.read_greeting());
  EXPECT_FALSE(ssl.greeting.capabilities & protocol::kClientSsl);
  protocol::SslRequest request{protocol::kClientProtocol41 | protocol::kClientSsl, 1 << 24, 45};
  ASSERT_TRUE(ssl.send(protocol::encode(request)));
  EXPECT_EQ(error_code_of(ssl.receive()), protocol::kErHandshake);
  expect_server_healthy(server_);
}

TEST_F(SessionFuzzTest, BadAuthenticationAnswers) {
  std::mt19937 random(777);
  for (int i = 0; i < 40; ++i) {
    RawClient raw(server_.port());
    ASSERT_TRUE(raw.read_greeting());
    protocol::HandshakeResponse41 response = raw.response_for("native_user", "npass");
    response.auth_response.resize(random() % 40);
    for (char& c : response.auth_response) c = static_cast<char>(random());
    if (i % 4 == 0) response.auth_plugin_name = "no_such_plugin";
    if (i % 4 == 1) response.auth_plugin_name = protocol::kCachingSha2PasswordPlugin;
    ASSERT_TRUE(raw.send(protocol::encode(response)));
    std::optional<std::string> reply = raw.receive();
    // An AuthSwitchRequest first is fine; answer it with junk too.
    while (
        reply && !reply->empty() &&
        (static_cast<uint8_t>((*reply)[0]) == 0xfe || static_cast<uint8_t>((*reply)[0]) == 0x01)) {
      std::string junk(random() % 40, 'j');
      if (!raw.send(junk)) break;
      reply = raw.receive();
    }
    if (reply) {
      EXPECT_EQ(error_code_of(reply), protocol::kErAccessDenied) << i;
    }
  }
  // The right answer after all that still works.
  {
    RawClient good(server_.port());
    EXPECT_TRUE(good.login("native_user", "npass"));
  }
  expect_server_healthy(server_);
}

TEST_F(SessionFuzzTest, MalformedCommandsGetErrorsAndSessionCarriesOn) {
  auto owned = std::make_unique<RawClient>(server_.port());
  RawClient& raw = *owned;
  ASSERT_TRUE(raw.login("native_user", "npass"));
  EXPECT_TRUE(raw.ping());
  EXPECT_EQ(error_code_of(raw.command("")), protocol::kErMalformedPacket);
  EXPECT_EQ(error_code_of(raw.command("\x99")), protocol::kErUnknownCom);
  EXPECT_EQ(error_code_of(raw.command(std::string("\x0e"
                                                  "x",
                                                  2))),
            protocol::kErMalformedPacket);
  EXPECT_EQ(error_code_of(raw.command(std::string("\x17", 1))), protocol::kErMalformedPacket);
  EXPECT_EQ(error_code_of(raw.command(std::string("\x17\x09\x00\x00\x00\x00\x01\x00\x00\x00", 10))),
            protocol::kErUnknownStmtHandler);
  EXPECT_EQ(error_code_of(raw.command(std::string("\x1a\x09\x00\x00\x00", 5))),
            protocol::kErUnknownStmtHandler);
  EXPECT_EQ(error_code_of(raw.command(std::string("\x19\x01", 2))), protocol::kErMalformedPacket);
  // Commands without SQL are size-capped.
  EXPECT_EQ(error_code_of(raw.command("\x02" + std::string(70000, 'd'))),
            protocol::kErMalformedPacket);

  // A prepared statement with one parameter, then broken executes of it.
  std::optional<std::string> prepared = raw.command("\x16SELECT ?");
  ASSERT_TRUE(prepared && (*prepared)[0] == 0x00);
  PacketReader reader(*prepared);
  uint32_t id = protocol::StmtPrepareOk::read(reader).statement_id;
  ASSERT_TRUE(raw.drain(50));  // parameter and column definitions
  std::string execute("\x17", 1);
  execute += std::string(reinterpret_cast<const char*>(&id), 4);
  execute += std::string("\x00\x01\x00\x00\x00", 5);
  // No types ever bound: refused.
  EXPECT_EQ(error_code_of(raw.command(execute + std::string("\x00\x00", 2))),
            protocol::kErMalformedPacket);
  // Unknown type byte.
  EXPECT_EQ(error_code_of(raw.command(execute + std::string("\x00\x01\x63\x00", 4))),
            protocol::kErMalformedPacket);
  // A string longer than the packet.
  EXPECT_EQ(error_code_of(raw.command(execute + std::string("\x00\x01\xfd\x00\xfc\xff\xff", 7))),
            protocol::kErMalformedPacket);
  // The good form works.
  std::optional<std::string> ok = raw.command(execute + std::string("\x00\x01\x08\x00", 4) +
                                              std::string("\x05\x00\x00\x00\x00\x00\x00\x00", 8));
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(error_code_of(ok), 0);
  ASSERT_TRUE(raw.drain(50));
  EXPECT_TRUE(raw.ping());
  owned.reset();
  expect_server_healthy(server_);
}

TEST_F(SessionFuzzTest, RandomCommandsAfterLogin) {
  std::mt19937 random(4242);
  auto raw = std::make_unique<RawClient>(server_.port());
  ASSERT_TRUE(raw->login("native_user", "npass"));
  int reconnects = 0;
  for (int i = 0; i < 250; ++i) {
    std::string payload(random() % 64, '\0');
    for (char& c : payload) c = static_cast<char>(random());
    if (!payload.empty() && random() % 2) payload[0] = static_cast<char>(random() % 0x20);
    raw->endpoint.reset_sequence();
    (void)raw->send(payload);
    bool alive = raw->drain(10);
    if (alive) alive = raw->ping();
    if (!alive) {
      ++reconnects;
      raw = std::make_unique<RawClient>(server_.port());
      ASSERT_TRUE(raw->login("native_user", "npass"));
    }
  }
  // Only COM_QUIT / COM_PROCESS_KILL of itself / a broken command stream may end a
  // session; most random commands must not.
  EXPECT_LT(reconnects, 60);
  raw.reset();
  expect_server_healthy(server_);
}

}  // namespace
}  // namespace duo::sql::server
