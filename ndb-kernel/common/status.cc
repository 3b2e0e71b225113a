// Error-code metadata: how each ErrorCode surfaces as a MySQL error.
#include "ndb-kernel/common/status.h"

namespace duo {

const ErrorInfo& error_info(ErrorCode code) {
  // MySQL error numbers and SQLSTATEs from the MySQL server error reference.
  static const ErrorInfo kInfo[] = {
      {"OK", 0, "00000"},
      {"InvalidArgument", 1210, "HY000"},     // ER_WRONG_ARGUMENTS
      {"NotFound", 1032, "HY000"},            // ER_KEY_NOT_FOUND
      {"DuplicateKey", 1062, "23000"},        // ER_DUP_ENTRY
      {"TableFull", 1114, "HY000"},           // ER_RECORD_FILE_FULL
      {"RowTooBig", 1118, "42000"},           // ER_TOO_BIG_ROWSIZE
      {"DataTooLong", 1406, "22001"},         // ER_DATA_TOO_LONG
      {"OutOfRange", 1690, "22003"},          // ER_DATA_OUT_OF_RANGE
      {"NotNullViolation", 1048, "23000"},    // ER_BAD_NULL_ERROR
      {"LockWaitTimeout", 1205, "HY000"},     // ER_LOCK_WAIT_TIMEOUT
      {"Deadlock", 1213, "40001"},            // ER_LOCK_DEADLOCK
      {"TransactionState", 1399, "XAE07"},    // ER_XAER_RMFAIL-like: wrong state
      {"ConfigError", 1210, "HY000"},
      {"Corruption", 1296, "HY000"},          // ER_GET_ERRMSG (from engine)
      {"IoError", 1296, "HY000"},
      {"Temporary", 1297, "HY000"},           // ER_GET_TEMPORARY_ERRMSG
      {"NotSupported", 1235, "42000"},        // ER_NOT_SUPPORTED_YET
      {"NoSuchTable", 1146, "42S02"},         // ER_NO_SUCH_TABLE
      {"TableExists", 1050, "42S01"},         // ER_TABLE_EXISTS_ERROR
      {"SchemaVersion", 1412, "HY000"},       // ER_TABLE_DEF_CHANGED
      {"TablespaceFull", 1114, "HY000"},      // ER_RECORD_FILE_FULL (NDB 1601 in the warning)
      {"OutOfUndoSpace", 1297, "HY000"},      // ER_GET_TEMPORARY_ERRMSG (NDB 1501, TR class)
      {"Internal", 1105, "HY000"},            // ER_UNKNOWN_ERROR
  };
  static_assert(sizeof(kInfo) / sizeof(kInfo[0]) == static_cast<size_t>(ErrorCode::kInternal) + 1);
  return kInfo[static_cast<size_t>(code)];
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  mark_checked();
  return state_ ? state_->message : kEmpty;
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  return std::string(error_info(state_->code).name) + ": " + state_->message;
}

}  // namespace duo
