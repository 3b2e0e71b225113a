// System views: tables whose rows duo_sqld computes when a statement reads them —
// `information_schema` (SCHEMATA, TABLES, COLUMNS, STATISTICS, ...) from the catalog,
// and `ndbinfo` (nodes, memoryusage, transporters, cluster_operations, ...) from the
// cluster. SELECT binds them like cluster tables; they cannot be written.
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

}  // namespace duo::sql::executor
