// 1062 messages as MySQL 8.0 words them; see duplicate_key.h.
#include "sql-frontend/executor/duplicate_key.h"

namespace duo::sql::executor {

void rethrow_with_table(const SqlException& e, const catalog::SqlTable& table) {
  std::string message = e.what();
  const std::string marker = "for key '";
  const size_t at = message.rfind(marker);
  if (e.code() == 1062 && at != std::string::npos &&
      message.compare(at + marker.size(), table.name.size() + 1, table.name + ".") != 0) {
    message.insert(at + marker.size(), table.name + ".");
  }
  throw SqlException(e.code(), e.sql_state(), message);
}

}  // namespace duo::sql::executor
