// System views: tables whose rows duo_sqld computes when a statement reads them —
// `information_schema` (SCHEMATA, TABLES, COLUMNS, STATISTICS, KEY_COLUMN_USAGE, ENGINES,
// USER_PRIVILEGES, PROCESSLIST) from the catalog, with MySQL 8.0's column names and
// value formats; the server's own views (server_views.h: variables, status, collations,
// character sets, performance_schema); and `ndbinfo` (nodes, memoryusage,
// transporters) from the management server's `get status` (what the data nodes report
// to it). SELECT binds them like cluster tables; they cannot be written.
//
// Not available (they need data the kernel does not report yet): ndbinfo.nodes'
// uptime and config_generation, transporters' byte counters and the data nodes' own
// view of their links (status is derived from mgmd's node states), cluster_operations.
//
// Thread-safety: one session thread (the StatementContext's).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

struct SystemView {
  catalog::SqlTable table;                  // its columns (db and name set)
  std::vector<std::vector<SqlValue>> rows;  // by column id
};

// True when `db` holds system views rather than cluster tables.
bool is_system_view_database(const std::string& db);
// The view `db`.`name` with its current rows; nullopt when `db` is not a system-view
// database. Throws 1109 (Unknown table) for a name that is no view of `db`.
std::optional<SystemView> read_system_view(StatementContext& context, const std::string& db,
                                           const std::string& name);
// The view names of a system-view database, as SHOW TABLES lists them.
std::vector<std::string> system_view_names(const std::string& db);

// Where ndbinfo asks for the nodes' state: the management server of the cluster
// (duo_sqld sets it once at start, before serving).
void set_management_connect_string(const std::string& connect_string);

// This server's link to the cluster, for SHOW ENGINE NDB STATUS: its API node id, the
// management server it was given, and the data nodes mgmd knows of and those STARTED.
struct NdbConnectionStatus {
  uint32_t node_id = 0;
  std::string management_host;
  uint32_t management_port = 0;
  size_t data_nodes = 0;
  size_t ready_data_nodes = 0;
};
NdbConnectionStatus ndb_connection_status(StatementContext& context);

// Text helpers shared with SHOW (admin_executor.cc): MySQL's COLUMN_TYPE and
// DATA_TYPE of a column, and its COLUMN_KEY (PRI, UNI, MUL or empty).
std::string column_type_text(const catalog::SqlColumn& column);
std::string column_key_text(const catalog::SqlTable& table, uint16_t column);

}  // namespace duo::sql::executor
