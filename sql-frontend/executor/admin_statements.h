// The statement executors behind execute_admin (statement_context.h) besides DDL: the
// account statements (account_executor.cc) and SHOW (show_executor.cc), plus helpers
// they share for building text result sets.
//
// Thread-safety: one session thread (the StatementContext's).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

// CREATE USER, DROP USER, ALTER USER, GRANT and REVOKE.
server::StatementResult execute_account_statement(StatementContext& context,
                                                  const Statement& statement);
// SET PASSWORD [FOR user] = 'pw' (one item of a SET statement).
server::StatementResult execute_set_password(StatementContext& context, const SetItem& item);
// KILL [CONNECTION | QUERY] id. Another user's connection needs SUPER (MySQL: 1095).
// KILL QUERY checks the target and answers OK without interrupting its statement: the
// session has no per-statement cancel yet (only the connection's `killed`).
server::StatementResult execute_kill(StatementContext& context, const KillStatement& kill);
// SHOW ... (CREATE TABLE through ddl_executor.cc's show_create_table).
server::StatementResult execute_show(StatementContext& context, const ShowStatement& show);

// SHOW STATUS's (name, value) pairs, sorted by name as MySQL lists them; also
// information_schema GLOBAL_STATUS / SESSION_STATUS (server_views.cc).
std::vector<std::pair<std::string, std::string>> status_variables(StatementContext& context);

// A result set of text columns; nullopt cells are NULL.
using TextRow = std::vector<std::optional<std::string>>;
server::ResultSet text_result(const std::vector<std::string>& names,
                              const std::vector<TextRow>& rows);

}  // namespace duo::sql::executor
