// SessionRegistry: what each connection of this sqld is doing, for SHOW PROCESSLIST
// (id, user, host, db, command, time, state, info) and the SHOW STATUS counters
// (Questions, Com_*, Threads_connected, Threads_running, Uptime). SqlEngine reports a
// statement's start and end (StatementActivity) and a connection's end; the registry
// keeps copies of the session's fields, never a pointer to its state, so a session
// that ends while another lists them is harmless.
//
// Bounded by the server's max_connections: one entry per live connection.
//
// Thread-safety: every method is safe from any thread (one mutex).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sql-frontend/parser/ast.h"
#include "sql-frontend/server/query_handler.h"

namespace duo::sql::executor {

struct ProcessInfo {
  uint32_t id = 0;
  std::string user;
  std::string host;
  std::string db;  // empty: none
  std::string command = "Sleep";
  uint64_t time_s = 0;  // in the current command (or idle)
  std::string state;
  std::optional<std::string> info;  // the running statement's text
};

class SessionRegistry {
 public:
  // The registry of this process (one sqld serves one cluster).
  static SessionRegistry& instance();

  // A connection authenticated (listed as Sleep until its first statement).
  void connected(const server::SessionState& session);
  void statement_started(const server::SessionState& session, StatementKind kind,
                         std::string_view text);
  void statement_finished(const server::SessionState& session);
  void disconnected(uint32_t connection_id);

  // Every registered connection, by id; `self` is included even if its statements are
  // not reported (so SHOW PROCESSLIST always shows the asking connection).
  std::vector<ProcessInfo> list(const server::SessionState& self, std::string_view self_text);

  // The connection attributes (from the handshake) of every registered connection of
  // user `user`, by connection id (performance_schema.session_account_connect_attrs).
  std::vector<std::pair<uint32_t, std::vector<std::pair<std::string, std::string>>>>
  connect_attributes_of(const std::string& user);

  // The user connection `connection_id` runs as, if it is registered.
  std::optional<std::string> user_of(uint32_t connection_id);

  // SHOW STATUS values, by MySQL's names (Com_* lower case after the prefix).
  std::vector<std::pair<std::string, std::string>> status(const server::SessionState& self);

 private:
  struct Entry {
    ProcessInfo info;  // info.info unused: `text` while running
    std::vector<std::pair<std::string, std::string>> connect_attributes;
    // The running statement's text; kept (not freed) between statements, so reporting
    // one costs no allocation once the connection's statements fit.
    std::string text;
    std::chrono::steady_clock::time_point since;
    bool running = false;
  };
  using Clock = std::chrono::steady_clock;

  const Clock::time_point started_ = Clock::now();
  std::mutex mutex_;
  std::map<uint32_t, Entry> entries_;   // GUARDED_BY(mutex_)
  uint64_t questions_ = 0;              // GUARDED_BY(mutex_)
  uint32_t highest_connection_id_ = 0;  // GUARDED_BY(mutex_)
  // Statements run, by kind (the Com_* counters).
  std::array<uint64_t, 256> statements_by_kind_{};  // GUARDED_BY(mutex_)
};

// Reports one statement to the registry for its lifetime.
class StatementActivity {
 public:
  StatementActivity(const server::SessionState& session, StatementKind kind, std::string_view text)
      : session_(session) {
    SessionRegistry::instance().statement_started(session, kind, text);
  }
  ~StatementActivity() { SessionRegistry::instance().statement_finished(session_); }
  StatementActivity(const StatementActivity&) = delete;
  StatementActivity& operator=(const StatementActivity&) = delete;

 private:
  const server::SessionState& session_;
};

}  // namespace duo::sql::executor
