// System variables: the table of MySQL system variables duo_sqld knows — what @@name,
// SHOW VARIABLES, information_schema.GLOBAL_VARIABLES / SESSION_VARIABLES and SET read
// and write — with MySQL 8.0's defaults for those that change nothing in DuoDB, so that
// drivers, ORMs and test suites that read, save and restore them work (SET
// sql_notes=0 ... SET sql_notes=@old). A few are computed (autocommit, port, socket,
// version, ndb_read_backup ...); the others hold their default until SET changes them:
// SET SESSION in the connection (SessionState::system_variables, cleared by
// COM_RESET_CONNECTION), SET GLOBAL in this process (not persisted, not shared with
// other sqld of the cluster). Unlike MySQL, where a connection copies the global values
// when it starts, a connection that did not SET a variable sees SET GLOBAL at once.
//
// Variables with behaviour: sql_mode (NO_ENGINE_SUBSTITUTION decides ENGINE=
// substitution; the other modes are kept and shown, DuoDB's checks do not read them
// yet), autocommit, ndb_read_backup. DuoDB's default sql_mode is MySQL 8.0's without
// NO_ENGINE_SUBSTITUTION, so that ENGINE=InnoDB/MyISAM tables are created as ndbcluster
// tables (warning 1266) unless a session asks for the strict behaviour.
//
// Errors as MySQL: 1193 unknown variable, 1238 wrong scope or read only, 1229 a GLOBAL
// variable set without GLOBAL, 1231 a value a variable cannot take, 1232 a non-number
// for a numeric variable.
//
// Thread-safety: every function is safe from any thread; a SessionState is used only
// by its own session thread. Global values are guarded by a mutex inside.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sql-frontend/executor/sql_value.h"
#include "sql-frontend/parser/ast.h"
#include "sql-frontend/server/query_handler.h"

namespace duo::sql::executor {

// @@[GLOBAL. | SESSION.]name as this session sees it (session: may be null).
SqlValue system_variable(const std::string& name, const server::SessionState* session,
                         VariableScope scope = VariableScope::kDefault);

// SET [GLOBAL | SESSION] name = value. `word` is set when the value was a bare word
// (ON, OFF, DEFAULT, a mode name), else `value` holds the evaluated expression.
// autocommit and ndb_read_backup are the caller's (they act at once).
void set_system_variable(server::SessionState& session, VariableScope scope,
                         const std::string& name, const std::optional<std::string>& word,
                         const SqlValue& value);

// SET NAMES charset [COLLATE collation] ("" charset: DEFAULT) and SET CHARACTER SET
// charset: the session's connection character set (SessionState's collation ids).
// MySQL's errors: 1115 unknown character set, 1273 unknown collation, 1253 a collation
// of another character set, 1231 ucs2/utf16/utf32.
void set_names(server::SessionState& session, const std::string& charset,
               const std::optional<std::string>& collate);
void set_character_set(server::SessionState& session, const std::string& charset);

// (name, value) of every variable, by name, as SHOW [GLOBAL] VARIABLES prints them
// (booleans ON/OFF).
std::vector<std::pair<std::string, std::string>> list_system_variables(
    const server::SessionState* session, bool global);

// Whether the session's sql_mode holds `mode` (upper case, e.g. NO_ENGINE_SUBSTITUTION).
bool sql_mode_has(const server::SessionState& session, std::string_view mode);

// Where this server listens, set once by duo_sqld before it serves: @@port, @@socket
// (empty: no Unix socket).
void set_server_endpoints(uint16_t port, std::string socket_path);

}  // namespace duo::sql::executor
