// Server views: the system views computed from this duo_sqld's own state rather than
// the catalog or the cluster — information_schema GLOBAL_VARIABLES, SESSION_VARIABLES,
// GLOBAL_STATUS, SESSION_STATUS (MySQL 5.7's shape: upper-case names), COLLATIONS,
// CHARACTER_SETS; performance_schema global_variables, session_variables,
// global_status, session_status (8.0's shape: names as SHOW prints them) and
// session_account_connect_attrs (the handshake attributes of this user's connections).
// Their rows come from the same sources as SHOW VARIABLES / SHOW STATUS / SHOW
// COLLATION (system_variables.h, status_variables(), character_sets.h). Status
// counters are this server's: the GLOBAL and SESSION status views show the same ones.
//
// Thread-safety: one session thread (the StatementContext's).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sql-frontend/executor/system_views.h"

namespace duo::sql::executor {

// The view `name` of `db` (information_schema names upper case already), or nullopt
// when it is not a server view.
std::optional<SystemView> read_server_view(StatementContext& context, const std::string& db,
                                           const std::string& name);
// The server views of `db`, as SHOW TABLES lists them.
std::vector<std::string> server_view_names(const std::string& db);

}  // namespace duo::sql::executor
