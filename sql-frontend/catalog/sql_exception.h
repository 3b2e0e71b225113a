// SqlException: how the SQL engine (catalog/ and executor/) reports a MySQL error from
// deep inside a statement.
//
// Why exceptions here: STYLE.md lets the SQL front-end throw inside a command and catch
// once per command. A statement's error may arise anywhere in binding, type conversion,
// expression evaluation or cluster calls, and always abandons the whole statement;
// threading a Result through every evaluator would double the code for no gain. The
// engine catches SqlException exactly once per statement (SqlEngine::run_statement) and
// turns it into the ERR packet's errno, SQLSTATE and message. Layers below SQL never
// throw: cluster Statuses are converted with from_status() at the call site.
//
// Thread-safety: value type.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ndb-kernel/common/status.h"

namespace duo::sql {

class SqlException : public std::runtime_error {
 public:
  SqlException(uint16_t code, std::string sql_state, const std::string& message)
      : std::runtime_error(message), code_(code), sql_state_(std::move(sql_state)) {}

  uint16_t code() const { return code_; }
  const std::string& sql_state() const { return sql_state_; }
  // Warnings that come before the error in SHOW WARNINGS (NDB's mysqld explains a
  // failed schema change with "Got error N '...' from NDB" warnings, code 1296).
  const std::vector<std::pair<uint16_t, std::string>>& warnings() const { return warnings_; }
  SqlException& with_warning(uint16_t code, std::string message) {
    warnings_.emplace_back(code, std::move(message));
    return *this;
  }

 private:
  std::vector<std::pair<uint16_t, std::string>> warnings_;
  uint16_t code_;
  std::string sql_state_;
};

// The MySQL errors the engine raises, with MySQL's message texts.
[[noreturn]] void throw_unknown_database(const std::string& db);                     // 1049
[[noreturn]] void throw_no_database_selected();                                      // 1046
[[noreturn]] void throw_unknown_table(const std::string& db, const std::string& t);  // 1146
[[noreturn]] void throw_unknown_column(const std::string& column,
                                       const std::string& where);  // 1054
[[noreturn]] void throw_not_supported(const std::string& what);    // 1235
// A cluster Status as the MySQL error error_info() maps it to; kTemporary becomes 1297
// "Got temporary error ... from NDBCLUSTER" carrying the cluster's text.
[[noreturn]] void throw_status(const Status& status);
// Throws throw_status(status) unless it is OK.
inline void check(const Status& status) {
  if (!status.ok()) throw_status(status);
}
template <typename T>
T check(Result<T> result) {
  if (!result.ok()) throw_status(result.status());
  return std::move(result).value();
}

}  // namespace duo::sql
