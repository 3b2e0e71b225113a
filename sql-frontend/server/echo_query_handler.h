// EchoQueryHandler: a QueryHandler for the protocol tests — NOT a SQL engine. It
// answers a fixed repertoire of statements so that every protocol path can be driven
// by real clients:
//
//   SELECT <literal>, ...        one row of integer / decimal / 'string' / NULL literals
//   SELECT ROWS(n)               n rows of (i BIGINT, s VARCHAR)
//   SELECT CONNECTION_ID(), SELECT DATABASE(), SELECT @@version_comment [LIMIT 1]
//   SELECT * FROM missing        error 1146
//   SELECT ENCODED               one row, with its metadata as EncodedColumns
//   SELECT BADROWS(n)            n good rows (over 64 KiB for large n), then a value its
//                                column type cannot carry in the binary protocol
//   INSERT ... / UPDATE ...      OK packets with affected rows, insert id, warnings, info
//   USE db, SET autocommit=0|1, BEGIN, COMMIT, ROLLBACK, KILL n
//   THROW                        the handler throws (the session must survive)
//   SLEEP                        waits (at most 10 s) until the connection is killed
//   a;b;c                        several statements (if the client enabled them)
//
// Prepared statements: a SELECT with `?` markers answers one row echoing every
// parameter with its bound type; an INSERT with markers answers OK with affected rows
// = parameter count; a statement without markers runs as a query.
//
// Thread-safety: safe for concurrent sessions (prepared statements under a mutex).
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>

#include "sql-frontend/server/query_handler.h"

namespace duo::sql::server {

class EchoQueryHandler : public QueryHandler {
 public:
  std::vector<StatementResult> query(SessionState& session, std::string_view sql,
                                     bool multi_statements) override;
  std::variant<PreparedStatementInfo, SqlError> prepare(SessionState& session,
                                                        std::string_view sql) override;
  StatementResult execute(SessionState& session, uint64_t handler_token,
                          const std::vector<BoundParameter>& params) override;
  void close_statement(SessionState& session, uint64_t handler_token) override;
  std::optional<SqlError> change_database(SessionState& session,
                                          std::string_view database) override;
  std::variant<std::vector<ColumnDefinition41>, SqlError> field_list(
      SessionState& session, std::string_view table, std::string_view wildcard) override;
  void on_disconnect(SessionState& session) override;

  size_t open_statements() const;
  uint64_t disconnects() const { return disconnects_.load(); }

 private:
  StatementResult run_one(SessionState& session, std::string_view statement);

  struct Prepared {
    std::string sql;
    uint16_t param_count = 0;
  };
  mutable std::mutex mutex_;
  uint64_t next_token_ = 1;                // GUARDED_BY(mutex_)
  std::map<uint64_t, Prepared> prepared_;  // GUARDED_BY(mutex_)
  std::atomic<uint64_t> disconnects_{0};
};

}  // namespace duo::sql::server
