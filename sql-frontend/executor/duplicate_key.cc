// 1062 messages as MySQL 8.0 words them; see duplicate_key.h.
#include "sql-frontend/executor/duplicate_key.h"

#include "sql-frontend/executor/statement_retry.h"

namespace duo::sql::executor {

void rethrow_with_table(const SqlException& e, const catalog::SqlTable& table) {
  std::string message = e.what();
  const std::string marker = "for key '";
  const size_t at = message.rfind(marker);
  if (e.code() == 1062 && at != std::string::npos &&
      message.compare(at + marker.size(), table.name.size() + 1, table.name + ".") != 0) {
    message.insert(at + marker.size(), table.name + ".");
  }
  const SqlException renamed(e.code(), e.sql_state(), message);
  // A commit whose outcome is unknown must stay one: the statement must not be retried.
  if (dynamic_cast<const CommitOutcomeUnknown*>(&e) != nullptr) throw CommitOutcomeUnknown(renamed);
  throw renamed;
}

}  // namespace duo::sql::executor
