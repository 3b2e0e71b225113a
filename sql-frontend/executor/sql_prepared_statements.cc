// SQL-level prepared statements: PREPARE name FROM 'text' | @variable, EXECUTE name
// [USING @a, ...], {DEALLOCATE | DROP} PREPARE name — MySQL's texts and error codes.
// The statement is parsed once at PREPARE and run by SqlEngine::dispatch at each
// EXECUTE with the user variables' values as its `?` parameters, so it is checked for
// privileges and planned as any statement is.
//
// Thread-safety: one session thread (the connection's state).
#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/sql_engine.h"
#include "sql-frontend/parser/ascii_case.h"

namespace duo::sql::executor {

namespace {

[[noreturn]] void throw_unknown(const Identifier& name, const char* where) {
  throw SqlException(1243, "HY000",
                     "Unknown prepared statement handler (" + name.name + ") given to " + where);
}

bool is_prepared_statement_command(StatementKind kind) {
  return kind == StatementKind::kPrepare || kind == StatementKind::kExecute ||
         kind == StatementKind::kDeallocatePrepare;
}

}  // namespace

server::StatementResult SqlEngine::prepare_sql(Connection& c, const PrepareStatement& statement) {
  const std::string key = ascii_lower(statement.name.name);
  // A PREPARE of an existing name drops the old statement first, even if the new one
  // then fails (as MySQL does).
  c.sql_prepared.erase(key);
  if (c.sql_prepared.size() + c.prepared.size() >= kPreparedStatementsMax) {
    throw SqlException(1461, "42000",
                       "Can't create more than max_prepared_stmt_count statements (current "
                       "value: " +
                           std::to_string(kPreparedStatementsMax) + ")");
  }
  Prepared prepared;
  if (statement.text) {
    prepared.text = *statement.text;
  } else {
    auto it = c.user_variables.find(ascii_lower(*statement.from_variable));
    prepared.text =
        it == c.user_variables.end() || it->second.is_null() ? "NULL" : it->second.to_text();
  }
  ParsedStatement parsed = parse_statement(prepared.text);
  if (!parsed.ok()) {
    throw SqlException(parsed.error->mysql_errno, parsed.error->sqlstate, parsed.error->message);
  }
  if (is_prepared_statement_command(parsed.statement->kind)) {
    throw SqlException(1295, "HY000",
                       "This command is not supported in the prepared statement protocol yet");
  }
  prepared.statement = std::move(parsed.statement);
  c.sql_prepared.emplace(key, std::move(prepared));
  return server::OkResult{0, 0, 0, "Statement prepared"};
}

server::StatementResult SqlEngine::execute_sql(
    server::SessionState& session, Connection& c, const ExecuteStatement& statement,
    const std::vector<StatementContext::Warning>& previous_diagnostics) {
  auto it = c.sql_prepared.find(ascii_lower(statement.name.name));
  if (it == c.sql_prepared.end()) throw_unknown(statement.name, "EXECUTE");
  Prepared& prepared = it->second;
  if (statement.using_variables.size() != prepared.statement->placeholder_count) {
    throw SqlException(1210, "HY000", "Incorrect arguments to EXECUTE");
  }
  std::vector<SqlValue> values;
  for (const std::string& name : statement.using_variables) {
    auto found = c.user_variables.find(ascii_lower(name));
    values.push_back(found == c.user_variables.end() ? SqlValue::null() : found->second);
  }
  return dispatch(session, c, *prepared.statement, prepared.text, values, previous_diagnostics,
                  &prepared);
}

server::StatementResult SqlEngine::deallocate_sql(Connection& c,
                                                  const DeallocatePrepareStatement& statement) {
  if (c.sql_prepared.erase(ascii_lower(statement.name.name)) == 0) {
    throw_unknown(statement.name, "DEALLOCATE PREPARE");
  }
  return server::OkResult{};
}

}  // namespace duo::sql::executor
