// SqlEngine: duo_sqld's QueryHandler — parses each statement, runs it over the cluster
// through the client library (statement_context.h and the executors), and turns every
// error into a MySQL error result. It keeps no data: databases and tables live in the
// cluster (catalog/), so any number of sqld serve one cluster.
//
// Per connection it keeps an api::Session (the session thread is its only user), the
// open cluster transaction (BEGIN/START TRANSACTION, or any statement with
// autocommit=0, opens one; COMMIT/ROLLBACK end it), and its prepared statements, each
// with what its executions reuse: the plan of a SELECT (prepared_plan.h) and its last
// passed privilege check.
// A cluster error inside a transaction aborts the whole cluster transaction, as in
// NDB: the error is returned and the transaction is over (rolled back).
//
// Error handling: executors throw SqlException (catalog/sql_exception.h);
// run_statement() catches it once per statement. std::exception escaping from below
// (a bug) is left to the session, which answers 1105 and carries on.
//
// Thread-safety: methods are called concurrently from session threads; the connection
// map is guarded by mutex_, each connection's state is used only by its own thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "ndb-kernel/api/cluster_connection.h"
#include "sql-frontend/catalog/catalog.h"
#include "sql-frontend/executor/temporary_tables.h"
#include "sql-frontend/executor/prepared_plan.h"
#include "sql-frontend/executor/privilege_check.h"
#include "sql-frontend/executor/sql_value.h"
#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/parser/parser.h"
#include "sql-frontend/server/query_handler.h"

namespace duo::sql::executor {

// Prepared statements one connection may hold (MySQL's max_prepared_stmt_count is
// global; this bounds one client's memory).
inline constexpr size_t kPreparedStatementsMax = 1024;

class SqlEngine : public server::QueryHandler {
 public:
  // `cluster` must outlive the engine.
  explicit SqlEngine(api::Cluster* cluster);

  std::vector<server::StatementResult> query(server::SessionState& session, std::string_view sql,
                                             bool multi_statements) override;
  std::variant<server::PreparedStatementInfo, server::SqlError> prepare(
      server::SessionState& session, std::string_view sql) override;
  server::StatementResult execute(server::SessionState& session, uint64_t handler_token,
                                  const std::vector<server::BoundParameter>& params) override;
  void close_statement(server::SessionState& session, uint64_t handler_token) override;
  std::optional<server::SqlError> change_database(server::SessionState& session,
                                                  std::string_view database) override;
  std::variant<std::vector<server::ColumnDefinition41>, server::SqlError> field_list(
      server::SessionState& session, std::string_view table, std::string_view wildcard) override;
  void on_disconnect(server::SessionState& session) override;

 private:
  struct Prepared {
    std::string text;  // owns what `statement` was parsed from
    StatementPtr statement;
    // What its executions keep: the SELECT's plan (bound at the first execution) and
    // the last passed privilege check.
    std::unique_ptr<PreparedPlan> plan;
    PrivilegeCheckCache privileges;
  };
  struct Connection {
    std::unique_ptr<api::Session> api_session;
    std::unique_ptr<api::Transaction> transaction;  // open BEGIN ... COMMIT, or null
    std::map<uint64_t, Prepared> prepared;          // COM_STMT_PREPARE
    uint64_t next_token = 1;
    std::map<std::string, Prepared> sql_prepared;    // PREPARE name: by lower-case name
    std::map<std::string, SqlValue> user_variables;  // @name: by lower-case name
    TemporaryTables temporary_tables;                // CREATE TEMPORARY TABLE: the session's
    uint64_t last_insert_id = 0;
    int64_t row_count = -1;   // ROW_COUNT() of the next statement
    uint64_t found_rows = 0;  // FOUND_ROWS() of the next statement
    // The last statement's warnings or error (MySQL's diagnostics area), kept until the
    // next statement that is not SHOW WARNINGS / SHOW ERRORS.
    std::vector<StatementContext::Warning> diagnostics;
    // What the running statement's failed attempt reserved (StatementContext::
    // retry_auto_increment); cleared when a statement starts.
    std::optional<StatementContext::ReservedAutoIncrement> retry_auto_increment;
  };

  Connection& connection(server::SessionState& session);
  // Runs one parsed statement; never throws SqlException.
  // `source` is the whole text the statement was parsed from.
  // `prepared`: the prepared statement being executed (its plan and privilege check are
  // kept there), or null.
  server::StatementResult run_statement(server::SessionState& session, const Statement& statement,
                                        std::string_view source,
                                        const std::vector<SqlValue>& params,
                                        Prepared* prepared = nullptr);
  // `previous_diagnostics`: the diagnostics area before this statement.
  server::StatementResult dispatch(
      server::SessionState& session, Connection& connection, const Statement& statement,
      std::string_view source, const std::vector<SqlValue>& params,
      const std::vector<StatementContext::Warning>& previous_diagnostics,
      Prepared* prepared = nullptr);
  server::StatementResult transaction_statement(server::SessionState& session,
                                                Connection& connection,
                                                const TransactionStatement& statement);
  server::StatementResult set_statement(server::SessionState& session, Connection& connection,
                                        const SetStatement& statement,
                                        const std::vector<SqlValue>& params);
  // SQL-level PREPARE / EXECUTE / DEALLOCATE PREPARE (sql_prepared_statements.cc).
  server::StatementResult prepare_sql(Connection& connection, const PrepareStatement& statement);
  server::StatementResult execute_sql(
      server::SessionState& session, Connection& connection, const ExecuteStatement& statement,
      const std::vector<StatementContext::Warning>& previous_diagnostics);
  server::StatementResult deallocate_sql(Connection& connection,
                                         const DeallocatePrepareStatement& statement);
  // Ends the connection's open transaction: commit or roll back.
  void end_transaction(server::SessionState& session, Connection& connection, bool commit);

  api::Cluster* const cluster_;
  catalog::Catalog catalog_;

  std::mutex mutex_;
  std::map<uint32_t, std::unique_ptr<Connection>> connections_;  // GUARDED_BY(mutex_)
};

}  // namespace duo::sql::executor
