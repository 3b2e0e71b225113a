// System views; see system_views.h.
#include "sql-frontend/executor/system_views.h"

#include "sql-frontend/catalog/sql_exception.h"

namespace duo::sql::executor {

bool is_system_view_database(const std::string& db) {
  return db == "information_schema" || db == "ndbinfo";
}

std::optional<SystemView> read_system_view(StatementContext& /*context*/, const std::string& db,
                                           const std::string& name) {
  if (!is_system_view_database(db)) return std::nullopt;
  throw SqlException(1109, "42S02", "Unknown table '" + name + "' in " + db);
}

}  // namespace duo::sql::executor
