// StatementContext: what one statement's execution needs — the session, the catalog,
// the bound parameters, and the cluster transaction the statement runs in — shared by
// the statement executors (dml_executor.cc, admin_executor.cc) and set up by SqlEngine.
//
// Transactions: with autocommit and no open transaction, the statement gets a fresh
// cluster transaction, begun lazily at its first operation (with the first key as the
// distribution hint) and committed by its last batch (execute(/*last=*/true) commits
// in the same round trip). Inside BEGIN ... COMMIT (or with autocommit=0) the
// statement uses the connection's open transaction and never commits it.
//
// Batches of committed reads (read_transaction() + execute_reads()) in an autocommit
// statement are cluster transactions of their own when nothing else of the statement
// used the transaction yet: the batch goes out with its commit (one request, one answer;
// the coordinator releases its record at once) and the next batch begins a new
// transaction at its own first key. Committed reads take no locks and see committed rows
// only (READ COMMITTED), so splitting them changes nothing a statement can observe, and
// a temporary error of such a commit stays retryable (nothing was written). Locking reads
// and every other use (writes, scans) share one transaction, committed at the end.
//
// A failed statement inside an open transaction (decided from what the kernel does): an
// operation error aborts the whole cluster transaction unless the operation ran with
// OpOptions.ignore_error, which leaves the transaction open and the error in the
// operation's result (NDB's AO_IgnoreError). So statement-level rollback is done where
// the statement can undo its own work: INSERT runs its rows with ignore_error inside an
// open transaction and, when one fails (1062, ...), deletes the rows it did insert and
// throws — the transaction and the earlier statements' work survive, as in MySQL.
// INSERT ... ON DUPLICATE KEY UPDATE and REPLACE keep an undo list of their writes and
// apply it when they fail with the transaction still open (an error raised in sqld). The
// other statements' errors (a failed UPDATE/DELETE batch, lock wait timeout, deadlock,
// node failure) abort the transaction as NDB does; SqlEngine then leaves it.
//
// A commit that was sent and failed with a temporary error throws CommitOutcomeUnknown
// (statement_retry.h): such a statement must not be retried.
//
// Thread-safety: one session thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ndb-kernel/api/cluster_connection.h"
#include "sql-frontend/catalog/catalog.h"
#include "sql-frontend/executor/expression.h"
#include "sql-frontend/server/query_handler.h"

namespace duo::sql::executor {

class TemporaryTables;

// Rows sqld holds for one statement (sorting, a DELETE's keys ...): beyond it the
// statement fails rather than growing without bound.
inline constexpr size_t kStatementRowsMax = 1'000'000;
inline constexpr size_t kStatementWarningsMax = 1024;

struct StatementContext {
  StatementContext(server::SessionState& s, catalog::Catalog& c, api::Session& a,
                   const std::vector<SqlValue>& p);
  // eval() hands out pointers to this statement's state.
  StatementContext(const StatementContext&) = delete;
  StatementContext& operator=(const StatementContext&) = delete;

  server::SessionState& session;
  catalog::Catalog& catalog;
  api::Session& api_session;
  const std::vector<SqlValue>& params;
  // The whole query text the statement's source positions refer to (result column names).
  std::string_view source_text;
  uint64_t last_insert_id = 0;  // in: the connection's; out: set by INSERT
  // The connection's open transaction (explicit or autocommit=0), or null.
  std::unique_ptr<api::Transaction>* open_transaction = nullptr;
  // The connection's user variables (@name, by lower-case name), or null.
  std::map<std::string, SqlValue>* user_variables = nullptr;
  // The connection's temporary tables (temporary_tables.h), or null.
  TemporaryTables* temporary_tables = nullptr;
  bool autocommit_statement = true;  // commit when the statement ends
  // AUTO_INCREMENT values an earlier attempt of this same statement reserved and never
  // committed (statement_retry.h retries only what committed nothing): a retry takes
  // them again, so a transparent retry leaves no gap. Null outside the engine.
  struct ReservedAutoIncrement {
    std::string counter;
    uint64_t first = 0;
    uint64_t count = 0;
    // Set when a new attempt starts; taking the values clears it, so one attempt never
    // hands out the same values twice.
    bool reusable = false;
  };
  std::optional<ReservedAutoIncrement>* retry_auto_increment = nullptr;

  // Warnings of the statement (for the OK packet's count and SHOW WARNINGS), at most
  // kStatementWarningsMax (MySQL's max_error_count default); later ones are only counted.
  struct Warning {
    std::string level;  // "Warning", "Note"
    uint16_t code = 0;
    std::string message;
  };
  std::vector<Warning> warnings;
  uint64_t warning_count = 0;
  void add_warning(uint16_t code, std::string message, std::string level = "Warning");
  // A function's warning (1292, 1365 ...; EvalContext::statement). In an INSERT or
  // UPDATE without IGNORE, MySQL's strict mode makes it the statement's error.
  void expression_warning(uint16_t code, const std::string& message, const char* level);
  bool warnings_are_errors = false;  // set by INSERT/UPDATE (strict mode, no IGNORE)

  // When the statement started, in microseconds since the Unix epoch: NOW(),
  // CURRENT_TIMESTAMP, CURDATE() ... give it on every row, as MySQL fixes them per
  // statement (SYSDATE() reads the clock per call).
  const int64_t start_time_us;
  // RAND(N)'s generator state per call site (MySQL's my_rnd_struct: seed1, seed2),
  // seeded at the site's first call: the sequence goes on from row to row.
  std::map<const Expr*, std::pair<uint64_t, uint64_t>> random_sequences;
  // The previous statement's diagnostics (its warnings, or its error with level
  // "Error"), which SHOW WARNINGS / SHOW ERRORS list; null when there are none.
  const std::vector<Warning>* previous_diagnostics = nullptr;
  // ROW_COUNT() and FOUND_ROWS(): the previous statement's affected rows (-1 after a
  // SELECT or an error) and rows found. `calc_found_rows` is set by a SELECT
  // SQL_CALC_FOUND_ROWS: its rows before LIMIT.
  int64_t previous_row_count = -1;
  uint64_t previous_found_rows = 0;
  std::optional<uint64_t> calc_found_rows;

  // The transaction to define operations in, begun on first use.
  api::Transaction& transaction(const ::duo::protocol::TableDef* hint = nullptr,
                                const storage::AttrValues* hint_key = nullptr);
  bool has_transaction() const {
    return own_ != nullptr || (open_transaction && *open_transaction);
  }
  // Runs the operations defined so far; `last` in an autocommit statement also commits.
  void execute(bool last);
  // An autocommit statement that commits in parts (LOAD DATA): after a part committed
  // (finish()), the next operations begin a new transaction.
  void start_next_part();
  // The transaction to define one batch of key reads with `lock` in, to be run by
  // execute_reads() (see the top of this file). Results must be taken before the next
  // batch starts: a committed batch's transaction is then replaced.
  api::Transaction& read_transaction(storage::LockMode lock,
                                     const ::duo::protocol::TableDef* hint = nullptr,
                                     const storage::AttrValues* hint_key = nullptr);
  // Runs the batch of read_transaction(): with its commit when it is a batch of committed
  // reads of its own, else as execute(false).
  void execute_reads();
  // Commits the statement's own transaction if it has not been committed yet.
  void finish();

  EvalContext eval(const catalog::SqlTable* table = nullptr,
                   const std::vector<SqlValue>* row = nullptr) {
    EvalContext context;
    context.table = table;
    context.row = row;
    context.params = &params;
    context.session = &session;
    context.statement = this;
    context.last_insert_id = last_insert_id;
    return context;
  }
  // The current database, or 1046.
  const std::string& current_database() const;
  // `name`'s database: its qualifier, else the current one.
  std::string database_of(const ObjectName& name) const;

 private:
  // Commits `tx`; a temporary failure becomes CommitOutcomeUnknown.
  void commit_checked(api::Transaction& tx);

  // Drops own_ when a batch of committed reads committed it: the next use begins anew.
  void retire_committed_reads();

  std::unique_ptr<api::Transaction> own_;
  bool committed_ = false;
  // own_ holds only batches of committed reads (read_transaction()), so far.
  bool own_reads_only_ = false;
  // own_ was committed by execute_reads(): replaced at its next use.
  bool own_committed_by_reads_ = false;
};

// Throws MySQL 1297 when the cluster aborted `tx` while the session was not using it
// (a data node failure, a timeout).
void throw_if_aborted_meanwhile(api::Transaction& tx);

// Statement executors (one per statement kind family).
// The result columns of a SELECT (for COM_STMT_PREPARE), without reading rows.
std::vector<server::ColumnDefinition41> describe_select(StatementContext& context,
                                                        const SelectStatement& statement);
server::StatementResult execute_select(StatementContext& context, const SelectStatement& statement);
// INSERT, INSERT IGNORE, ON DUPLICATE KEY UPDATE, REPLACE, INSERT ... SELECT
// (insert_executor.cc).
server::StatementResult execute_insert(StatementContext& context, const InsertStatement& statement);
server::StatementResult execute_update(StatementContext& context, const UpdateStatement& statement);
server::StatementResult execute_delete(StatementContext& context, const DeleteStatement& statement);
// The multi-table forms (multi_table_dml.cc); execute_update/execute_delete pass them on.
server::StatementResult execute_multi_table_update(StatementContext& context,
                                                   const UpdateStatement& statement);
server::StatementResult execute_multi_table_delete(StatementContext& context,
                                                   const DeleteStatement& statement);
// CREATE/DROP DATABASE, USE, CREATE/DROP TABLE, SHOW, DESCRIBE.
server::StatementResult execute_admin(StatementContext& context, const Statement& statement);
// CREATE/DROP INDEX, ALTER TABLE, RENAME TABLE, TRUNCATE TABLE (ddl_executor.cc).
server::StatementResult execute_ddl(StatementContext& context, const Statement& statement);
// CREATE/ALTER/DROP LOGFILE GROUP and TABLESPACE (disk_object_executor.cc).
server::StatementResult execute_disk_object(StatementContext& context,
                                            const DiskObjectStatement& statement);
// LOAD DATA [LOCAL] INFILE (load_data_executor.cc).
server::StatementResult execute_load_data(StatementContext& context,
                                          const LoadDataStatement& statement);
// SHOW CREATE TABLE (ddl_executor.cc).
server::StatementResult show_create_table(StatementContext& context, const ShowStatement& show);

// Result-set metadata for a column of a cluster table, and for a computed value.
server::ColumnDefinition41 table_column_definition(const catalog::SqlTable& table, uint16_t column,
                                                   const std::string& label);
server::ColumnDefinition41 computed_column_definition(const std::string& label,
                                                      protocol::FieldType type);
// The result type of computed column `column` from the values it holds.
protocol::FieldType infer_type(const std::vector<std::vector<SqlValue>>& rows, size_t column);

// The value of a LIMIT/OFFSET expression; 1210 for NULL or a negative value.
uint64_t limit_value(const Expr* expr, StatementContext& context);
// 1038: a statement would hold more than kStatementRowsMax rows in sqld.
[[noreturn]] void throw_too_many_rows();

}  // namespace duo::sql::executor
