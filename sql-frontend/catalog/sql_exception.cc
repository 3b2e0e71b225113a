// MySQL's error texts for the SqlExceptions the engine raises; see sql_exception.h.
#include "sql-frontend/catalog/sql_exception.h"

namespace duo::sql {

void throw_unknown_database(const std::string& db) {
  throw SqlException(1049, "42000", "Unknown database '" + db + "'");
}

void throw_no_database_selected() {
  throw SqlException(1046, "3D000", "No database selected");
}

void throw_unknown_table(const std::string& db, const std::string& t) {
  throw SqlException(1146, "42S02", "Table '" + db + "." + t + "' doesn't exist");
}

void throw_unknown_column(const std::string& column, const std::string& where) {
  throw SqlException(1054, "42S22", "Unknown column '" + column + "' in '" + where + "'");
}

void throw_not_supported(const std::string& what) {
  throw SqlException(1235, "42000", "This version of DuoDB doesn't yet support '" + what + "'");
}

void throw_status(const Status& status) {
  const ErrorInfo& info = error_info(status.code());
  if (status.is(ErrorCode::kTemporary)) {
    throw SqlException(info.mysql_errno, info.sqlstate,
                       "Got temporary error '" + status.message() + "' from NDBCLUSTER");
  }
  throw SqlException(info.mysql_errno, info.sqlstate, status.message());
}

}  // namespace duo::sql
