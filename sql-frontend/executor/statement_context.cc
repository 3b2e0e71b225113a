// StatementContext: the statement's transaction plumbing; see statement_context.h.
#include "sql-frontend/executor/statement_context.h"

#include "ndb-kernel/common/clock.h"
#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/statement_retry.h"

namespace duo::sql::executor {

api::Transaction& StatementContext::transaction(const ::duo::protocol::TableDef* hint,
                                                const storage::AttrValues* hint_key) {
  if (open_transaction != nullptr) {
    if (!*open_transaction) *open_transaction = check(api_session.begin(hint, hint_key));
    throw_if_aborted_meanwhile(**open_transaction);
    return **open_transaction;
  }
  retire_committed_reads();
  if (!own_) own_ = check(api_session.begin(hint, hint_key));
  own_reads_only_ = false;
  return *own_;
}

api::Transaction& StatementContext::read_transaction(storage::LockMode lock,
                                                     const ::duo::protocol::TableDef* hint,
                                                     const storage::AttrValues* hint_key) {
  if (open_transaction != nullptr || !autocommit_statement ||
      lock != storage::LockMode::kCommittedRead) {
    return transaction(hint, hint_key);
  }
  retire_committed_reads();
  if (!own_) {
    own_ = check(api_session.begin(hint, hint_key));
    own_reads_only_ = true;
  }
  return *own_;
}

void StatementContext::execute_reads() {
  if (own_ == nullptr || !own_reads_only_ || own_committed_by_reads_ ||
      open_transaction != nullptr || !autocommit_statement) {
    execute(false);
    return;
  }
  // Not commit_checked(): a temporary failure here committed nothing that matters.
  check(own_->execute(api::ExecType::kCommit));
  committed_ = true;
  own_committed_by_reads_ = true;
}

void StatementContext::retire_committed_reads() {
  if (!own_committed_by_reads_) return;
  own_.reset();
  committed_ = false;
  own_reads_only_ = false;
  own_committed_by_reads_ = false;
}

void throw_if_aborted_meanwhile(api::Transaction& tx) {
  // Between statements only the cluster aborts a transaction (a data node failed, or it
  // timed out): the client gets the temporary error NDB gives, and retries the whole
  // transaction, instead of a state error on the next statement.
  if (tx.state() == api::TxState::kAborted) {
    throw SqlException(kTemporaryErrorCode, "HY000",
                       "Got temporary error 'the transaction was aborted by the cluster (node "
                       "failure or timeout); run it again' from NDBCLUSTER");
  }
}

void StatementContext::execute(bool last) {
  api::Transaction& tx = transaction();
  const bool commit = last && open_transaction == nullptr && autocommit_statement;
  if (!commit) {
    check(tx.execute(api::ExecType::kNoCommit));
    return;
  }
  commit_checked(tx);
  committed_ = true;
}

void StatementContext::start_next_part() {
  own_.reset();
  committed_ = false;
  own_reads_only_ = false;
  own_committed_by_reads_ = false;
}

void StatementContext::finish() {
  if (own_ && !committed_) {
    commit_checked(*own_);
    committed_ = true;
  }
}

void StatementContext::commit_checked(api::Transaction& tx) {
  try {
    check(tx.execute(api::ExecType::kCommit));
  } catch (const SqlException& e) {
    // The coordinator may have died after deciding to commit: not retryable.
    if (e.code() == kTemporaryErrorCode) throw CommitOutcomeUnknown(e);
    throw;
  }
}

namespace {

// The SQLSTATE MySQL gives the warnings functions raise when strict mode makes them
// errors (sql/share/messages_to_clients.txt).
const char* warning_sqlstate(uint16_t code) {
  switch (code) {
    case 1264:
      return "22003";
    case 1265:
      return "01000";
    case 1292:
      return "22007";
    case 1365:
      return "22012";
    case 3020:
      return "2201E";
    default:
      return "HY000";
  }
}

}  // namespace

StatementContext::StatementContext(server::SessionState& s, catalog::Catalog& c, api::Session& a,
                                   const std::vector<SqlValue>& p)
    : session(s),
      catalog(c),
      api_session(a),
      params(p),
      start_time_us(real_clock().wall_time_ns() / 1000) {}

void StatementContext::expression_warning(uint16_t code, const std::string& message,
                                          const char* level) {
  if (warnings_are_errors && std::string_view(level) == "Warning") {
    throw SqlException(code, warning_sqlstate(code), message);
  }
  add_warning(code, message, level);
}

void StatementContext::add_warning(uint16_t code, std::string message, std::string level) {
  ++warning_count;
  if (warnings.size() >= kStatementWarningsMax) return;
  warnings.push_back(Warning{std::move(level), code, std::move(message)});
}

const std::string& StatementContext::current_database() const {
  if (session.database.empty()) throw_no_database_selected();
  return session.database;
}

std::string StatementContext::database_of(const ObjectName& name) const {
  if (name.db) return name.db->name;
  return current_database();
}

uint64_t limit_value(const Expr* expr, StatementContext& context) {
  if (expr == nullptr) return 0;
  SqlValue v = evaluate(*expr, context.eval());
  if (v.is_null() || (v.kind == SqlValue::Kind::kInt && v.i < 0)) {
    throw SqlException(1210, "HY000", "Incorrect arguments to LIMIT");
  }
  return v.kind == SqlValue::Kind::kUInt ? v.u : static_cast<uint64_t>(v.to_int());
}

void throw_too_many_rows() {
  throw SqlException(1038, "HY001",
                     "Out of sort memory, consider increasing server sort buffer size");
}

}  // namespace duo::sql::executor
