// StatementContext: the statement's transaction plumbing; see statement_context.h.
#include "sql-frontend/executor/statement_context.h"

#include "sql-frontend/catalog/sql_exception.h"

namespace duo::sql::executor {

api::Transaction& StatementContext::transaction(const ::duo::protocol::TableDef* hint,
                                                const storage::AttrValues* hint_key) {
  if (open_transaction != nullptr) {
    if (!*open_transaction) *open_transaction = check(api_session.begin(hint, hint_key));
    return **open_transaction;
  }
  if (!own_) own_ = check(api_session.begin(hint, hint_key));
  return *own_;
}

void StatementContext::execute(bool last) {
  api::Transaction& tx = transaction();
  const bool commit = last && open_transaction == nullptr && autocommit_statement;
  check(tx.execute(commit ? api::ExecType::kCommit : api::ExecType::kNoCommit));
  if (commit) committed_ = true;
}

void StatementContext::finish() {
  if (own_ && !committed_) {
    check(own_->execute(api::ExecType::kCommit));
    committed_ = true;
  }
}

const std::string& StatementContext::current_database() const {
  if (session.database.empty()) throw_no_database_selected();
  return session.database;
}

std::string StatementContext::database_of(const ObjectName& name) const {
  if (name.db) return name.db->name;
  return current_database();
}

uint64_t limit_value(const Expr* expr, const StatementContext& context) {
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
