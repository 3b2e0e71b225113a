// SqlServer: duo_sqld's MySQL listener. Accepts TCP connections and, with a socket
// path, connections on a Unix-domain socket (unix_socket_listener.h), enforces
// max_connections over both, and runs one Session per connection on its own thread.
// A socket path that cannot be used is logged and the server serves TCP only (as the
// brief for `mysql -uroot` asks: a clear line, not a failed start). A Unix-socket
// client's host is "localhost", and the socket counts as a secure transport for
// authentication (caching_sha2_password may take the clear password), as in MySQL.
//
// Why a thread per connection rather than epoll: a session's work is a blocking
// conversation — TLS reads and writes, and (in the next piece) synchronous calls into
// the cluster client library that wait for data nodes. With a thread each, that code
// stays straight-line and a slow query never stalls other sessions; MySQL's own
// default (one-thread-per-connection) made the same choice. The cost — a stack per
// connection — is bounded by max_connections (MySQL's default, 151), and the per-
// connection buffers are bounded by max_allowed_packet and the socket timeouts
// (session.h). An event loop would pay off only at thousands of mostly idle
// connections, which a MySQL front-end of a cluster does not expect.
//
// A connection beyond max_connections gets ERR 1040 "Too many connections" as its
// first packet and is closed. stop() closes the listener, ends every session
// (shutting down its socket) and joins all threads. KILL goes through
// kill_connection(), which shuts the target's socket down; its thread then ends the
// session (rolling back through QueryHandler::on_disconnect).
//
// Thread-safety: start()/stop() from one controlling thread; kill_connection(),
// connection_count() and port() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "sql-frontend/server/authenticator.h"
#include "sql-frontend/server/query_handler.h"
#include "sql-frontend/server/session.h"
#include "sql-frontend/server/tls_transport.h"
#include "sql-frontend/server/unix_socket_listener.h"
#include "sql-frontend/server/user_directory.h"

namespace duo::sql::server {

struct SqlServerOptions {
  std::string bind_address = "127.0.0.1";  // numeric IPv4 or IPv6 address
  uint16_t port = 3306;                    // 0: the kernel picks one (tests)
  std::string socket_path;                 // Unix socket; empty: none
  size_t max_connections = 151;            // MySQL's default
  // PEM files; both empty: no TLS (CLIENT_SSL is not offered).
  std::string tls_cert_file;
  std::string tls_key_file;
  SessionOptions session;
};

class SqlServer : public ServerControl {
 public:
  SqlServer(QueryHandler* handler, UserDirectory* directory, SqlServerOptions options);
  ~SqlServer() override;
  SqlServer(const SqlServer&) = delete;
  SqlServer& operator=(const SqlServer&) = delete;

  // Loads TLS material, binds, listens and starts accepting.
  Status start();
  // Ends all sessions and joins their threads. Idempotent.
  void stop();

  // The bound port (after start()).
  uint16_t port() const { return port_; }
  // The Unix socket served (after start()); empty when none.
  const std::string& socket_path() const { return unix_listener_.path(); }
  // Sessions currently running (including ones still in the handshake).
  size_t connection_count() const;
  bool kill_connection(uint32_t connection_id) override;
  bool kill_query(uint32_t connection_id) override;
  // The caching_sha2_password cache, to drop an account whose password changed.
  Sha2FastAuthCache& sha2_cache() { return sha2_cache_; }

 private:
  struct Connection {
    std::thread thread;
    Session* session = nullptr;  // null before the session exists / after it ended
  };

  void accept_loop();
  void run_connection(uint32_t connection_id, int fd, std::string peer_host, bool unix_socket);
  // Accepts one pending connection on `listen_fd` and starts its thread.
  void accept_one(int listen_fd, bool unix_socket);
  void reap_finished();

  // Constant after start().
  QueryHandler* const handler_;
  const SqlServerOptions options_;
  std::unique_ptr<TlsContext> tls_context_;
  Sha2FastAuthCache sha2_cache_;
  Authenticator authenticator_;
  int listen_fd_ = -1;
  UnixSocketListener unix_listener_;
  int wake_fd_ = -1;  // eventfd that wakes the accept loop on stop()
  uint16_t port_ = 0;
  std::thread accept_thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint32_t> next_connection_id_{1};

  mutable std::mutex mutex_;
  std::map<uint32_t, Connection> connections_;  // GUARDED_BY(mutex_)
  std::vector<uint32_t> finished_;              // GUARDED_BY(mutex_): to join
};

}  // namespace duo::sql::server
