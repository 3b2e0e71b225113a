// Privilege checks: before a statement runs, whether the session's account (the one
// its user and client host match in the cluster's accounts, catalog/user_catalog.h) may
// run it, with MySQL's refusals: 1142 "<CMD> command denied to user 'u'@'h' for table
// 't'", 1044 "Access denied for user 'u'@'h' to database 'db'", 1227 "Access denied;
// you need (at least one of) the <P> privilege(s) for this operation".
//
// What is checked: the tables a statement reads or writes (FROM items of SELECT,
// including joins, derived tables and UNION branches; INSERT/REPLACE/UPDATE/DELETE
// targets and INSERT ... SELECT sources), DDL on databases, tables and indexes, USE,
// SHOW of a database's tables or a table's columns, account statements, FLUSH. Not
// checked: subqueries inside expressions, column-level grants (not supported).
// information_schema is readable by everyone, as in MySQL (its rows are not filtered).
//
// Thread-safety: any session thread; the account snapshot is shared (user_catalog.h).
#pragma once

#include "sql-frontend/catalog/user_catalog.h"
#include "sql-frontend/executor/session_registry.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

// A passed privilege check of one prepared statement: reused while it was made against
// the same accounts snapshot (user_catalog.h: a GRANT/REVOKE/DROP USER through this sqld
// replaces it at once, through another within kAccountsSnapshotTtlMs — as for every
// statement), for the same user, client host and current database.
struct PrivilegeCheckCache {
  std::shared_ptr<const std::vector<catalog::UserRecord>> snapshot;
  std::string user;
  std::string host;
  std::string database;
};

// Throws the MySQL error when the session's account may not run `statement`. With a
// `cache` (a prepared statement's), a pass it holds for the current snapshot is taken
// as is, and a new pass is recorded in it.
void check_privileges(StatementContext& context, const Statement& statement,
                      PrivilegeCheckCache* cache = nullptr);

// 1044 unless the session's account has some privilege in `db` (USE, COM_INIT_DB, the
// handshake's database).
void check_use_database(StatementContext& context, const std::string& db);

// The accounts of `cluster`, shared by every session of this sqld (one snapshot).
catalog::UserCatalog& shared_user_catalog(api::Cluster& cluster);

// The session's account from the shared snapshot; nullopt when it no longer exists.
std::optional<catalog::UserRecord> session_account(StatementContext& context);
// The connections SHOW PROCESSLIST and information_schema.PROCESSLIST list: all with
// the PROCESS privilege, else only those of the session's own user (as MySQL).
std::vector<ProcessInfo> visible_processes(StatementContext& context);

// 1142 for `command` ("SELECT", "INSERT", ...) on `table`.
[[noreturn]] void throw_table_access_denied(const server::SessionState& session,
                                            const std::string& command, const std::string& table);
// 1044 for `db`.
[[noreturn]] void throw_database_access_denied(const server::SessionState& session,
                                               const std::string& db);
// 1227 naming `privilege`.
[[noreturn]] void throw_privilege_needed(const std::string& privilege);

}  // namespace duo::sql::executor
