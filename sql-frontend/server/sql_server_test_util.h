// Test support for the MySQL front-end tests: an in-process SqlServer on
// 127.0.0.1:0 with an EchoQueryHandler, an in-memory user directory and a self-signed
// TLS certificate made with the openssl CLI; and libmariadb connection helpers.
//
// RawClient speaks the protocol by hand through the codec, for tests that need
// exact packets (fuzzing, CLIENT_DEPRECATE_EOF, which libmariadb does not use).
//
// Users: root (no password, mysql_native_password), native_user / "npass"
// (mysql_native_password), sha2_user / "spass" (caching_sha2_password).
//
// Thread-safety: test code; a fixture is used by one test thread (sessions run on the
// server's threads).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <mysql.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "sql-frontend/protocol/auth_scramble.h"
#include "sql-frontend/protocol/packet_endpoint.h"
#include "sql-frontend/protocol/packets.h"
#include "sql-frontend/server/echo_query_handler.h"
#include "sql-frontend/server/socket_transport.h"
#include "sql-frontend/server/sql_server.h"

namespace duo::sql::server::testing {

// A directory with cert.pem and key.pem (self-signed, CN=localhost), made once per
// process and removed at exit. Empty if the openssl CLI failed.
inline const std::filesystem::path& tls_files_dir() {
  struct TlsFiles {
    std::filesystem::path dir;
    TlsFiles() {
      std::filesystem::path path =
          std::filesystem::temp_directory_path() / ("duo_sqlp_tls_" + std::to_string(::getpid()));
      std::filesystem::create_directories(path);
      std::string command =
          "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
          "-nodes -days 2 -subj /CN=localhost -keyout '" +
          (path / "key.pem").string() + "' -out '" + (path / "cert.pem").string() +
          "' >/dev/null 2>&1";
      if (std::system(command.c_str()) == 0) dir = path;
    }
    ~TlsFiles() {
      std::error_code ignored;
      std::filesystem::remove_all(
          std::filesystem::temp_directory_path() / ("duo_sqlp_tls_" + std::to_string(::getpid())),
          ignored);
    }
  };
  static const TlsFiles files;
  return files.dir;
}

struct TestServer {
  InMemoryUserDirectory users;
  EchoQueryHandler handler;
  std::unique_ptr<SqlServer> server;

  explicit TestServer(SqlServerOptions options = {}, bool with_tls = true) {
    users.add_user("root", "", AuthPlugin::kNativePassword);
    users.add_user("native_user", "npass", AuthPlugin::kNativePassword);
    users.add_user("sha2_user", "spass", AuthPlugin::kCachingSha2Password);
    options.bind_address = "127.0.0.1";
    options.port = 0;
    if (with_tls && !tls_files_dir().empty()) {
      options.tls_cert_file = (tls_files_dir() / "cert.pem").string();
      options.tls_key_file = (tls_files_dir() / "key.pem").string();
    }
    options.session.connect_timeout_ms = 5000;
    server = std::make_unique<SqlServer>(&handler, &users, options);
    Status status = server->start();
    EXPECT_TRUE(status.ok()) << status.to_string();
  }
  uint16_t port() const { return server->port(); }
};

struct ConnectOptions {
  bool tls = false;
  const char* database = nullptr;
  unsigned long flags = 0;
  unsigned long max_allowed_packet = 0;
};

// A libmariadb connection; `error`/`error_code` hold the failure if connect failed.
struct Client {
  MYSQL* mysql = nullptr;
  bool connected = false;
  unsigned error_code = 0;
  std::string error;

  Client(uint16_t port, const char* user, const char* password, ConnectOptions options = {}) {
    mysql = mysql_init(nullptr);
    unsigned timeout_s = 30;
    mysql_options(mysql, MYSQL_OPT_CONNECT_TIMEOUT, &timeout_s);
    mysql_options(mysql, MYSQL_OPT_READ_TIMEOUT, &timeout_s);
    mysql_options(mysql, MYSQL_OPT_WRITE_TIMEOUT, &timeout_s);
    my_bool off = 0, on = 1;
    mysql_options(mysql, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &off);
    if (options.tls) mysql_options(mysql, MYSQL_OPT_SSL_ENFORCE, &on);
    if (options.max_allowed_packet) {
      mysql_options(mysql, MYSQL_OPT_MAX_ALLOWED_PACKET, &options.max_allowed_packet);
    }
    connected = mysql_real_connect(mysql, "127.0.0.1", user, password, options.database, port,
                                   nullptr, options.flags) != nullptr;
    if (!connected) {
      error_code = mysql_errno(mysql);
      error = mysql_error(mysql);
    }
  }
  ~Client() { mysql_close(mysql); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Runs a query that returns one row; the first cell (or "NULL"), or "ERR <errno>".
  std::string scalar(const std::string& sql) {
    if (mysql_real_query(mysql, sql.data(), sql.size()) != 0) {
      return "ERR " + std::to_string(mysql_errno(mysql));
    }
    MYSQL_RES* result = mysql_store_result(mysql);
    if (result == nullptr) return "NO RESULT";
    MYSQL_ROW row = mysql_fetch_row(result);
    std::string out = row == nullptr ? "NO ROW" : (row[0] ? row[0] : "NULL");
    mysql_free_result(result);
    return out;
  }
};

// --- Raw protocol client -----------------------------------------------------------

inline int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A hand-driven client: raw packets through the codec, nothing from libmariadb.
struct RawClient {
  std::unique_ptr<SocketTransport> socket;
  protocol::PacketEndpoint endpoint;
  protocol::HandshakeV10 greeting;

  explicit RawClient(uint16_t port)
      : socket(std::make_unique<SocketTransport>(connect_to(port))), endpoint(socket.get()) {
    socket->set_timeouts(10000, 10000);
  }

  bool read_greeting() {
    std::string payload;
    if (endpoint.read_packet(&payload, 1 << 20) != protocol::PacketEndpoint::ReadResult::kOk)
      return false;
    protocol::PacketReader reader(payload);
    greeting = protocol::HandshakeV10::read(reader);
    return true;
  }

  protocol::HandshakeResponse41 response_for(const std::string& user, const std::string& password,
                                             uint32_t extra_capabilities = 0) {
    protocol::HandshakeResponse41 response;
    response.capabilities = protocol::kClientProtocol41 | protocol::kClientSecureConnection |
                            protocol::kClientPluginAuth |
                            protocol::kClientPluginAuthLenencClientData | extra_capabilities;
    response.max_packet_size = 1 << 24;
    response.character_set = 45;
    response.username = user;
    response.auth_response =
        protocol::native_password_scramble(password, greeting.auth_plugin_data);
    response.auth_plugin_name = protocol::kNativePasswordPlugin;
    return response;
  }

  bool send(const std::string& payload) {
    return endpoint.write_packet(payload).ok() && endpoint.flush().ok();
  }

  // The next packet's payload, or nullopt if the server closed the connection.
  std::optional<std::string> receive() {
    std::string payload;
    if (endpoint.read_packet(&payload, 64 << 20) != protocol::PacketEndpoint::ReadResult::kOk) {
      return std::nullopt;
    }
    return payload;
  }

  bool login(const std::string& user, const std::string& password,
             uint32_t extra_capabilities = 0) {
    if (!read_greeting()) return false;
    if (!send(protocol::encode(response_for(user, password, extra_capabilities)))) return false;
    std::optional<std::string> reply = receive();
    return reply && !reply->empty() && (*reply)[0] == 0x00;
  }

  // Sends a command (sequence 0) and returns the first reply packet.
  std::optional<std::string> command(const std::string& payload) {
    endpoint.reset_sequence();
    if (!send(payload)) return std::nullopt;
    return receive();
  }

  bool ping() {
    std::optional<std::string> reply = command(std::string(1, '\x0e'));
    return reply && !reply->empty() && (*reply)[0] == 0x00;
  }

  // Drops whatever the server sends until it is quiet for `idle_ms`; false if the
  // server closed the connection.
  bool drain(int idle_ms) {
    endpoint.set_transport(socket.get());  // drops what the endpoint buffered
    char buffer[65536];
    for (;;) {
      pollfd p{socket->fd(), POLLIN, 0};
      if (::poll(&p, 1, idle_ms) <= 0) return true;
      ssize_t n = ::recv(socket->fd(), buffer, sizeof buffer, 0);
      if (n <= 0) return false;
    }
  }
};

inline uint16_t error_code_of(const std::optional<std::string>& payload) {
  if (!payload || payload->empty() || static_cast<uint8_t>((*payload)[0]) != 0xff) return 0;
  protocol::PacketReader reader(*payload);
  return protocol::ErrPacket::read(reader).error_code;
}

}  // namespace duo::sql::server::testing
