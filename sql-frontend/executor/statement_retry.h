// Transparent retry of statements that failed with a temporary cluster error (a data
// node failed, a limit was hit for a moment: ErrorCode::kTemporary, MySQL 1297), as
// issue 4 asks: the client sees the error only when running the statement again could
// change what was committed.
//
// A statement is retried when
//   - it ran in a cluster transaction of its own (autocommit and no open transaction:
//     inside BEGIN ... COMMIT the earlier statements' work is lost with the transaction,
//     which only the client can redo), and
//   - it is a data statement (SELECT, INSERT, REPLACE, UPDATE, DELETE): DDL and SET are
//     not repeated behind the client's back, and
//   - no commit of its transaction had been sent when it failed: a commit that failed
//     with a temporary error (its coordinator died) may still have been completed by
//     the node taking over, so repeating an INSERT could apply it twice. Such failures
//     are thrown as CommitOutcomeUnknown and reach the client as 1297.
// Reads never commit anything, so they are always safe under the first two rules.
//
// Attempts and backoff: kStatementAttemptsMax in all, sleeping kRetryBackoffMs[i] before
// retry i+1 (node failure handling in the cluster takes tens to hundreds of ms).
//
// Thread-safety: pure functions; the sleep runs on the caller's (session) thread.
#pragma once

#include <cstdint>
#include <functional>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/parser/ast.h"
#include "sql-frontend/server/query_handler.h"

namespace duo::sql::executor {

inline constexpr int kStatementAttemptsMax = 4;
inline constexpr uint64_t kRetryBackoffMs[kStatementAttemptsMax - 1] = {20, 100, 300};

// MySQL's ER_GET_TEMPORARY_ERRMSG.
inline constexpr uint16_t kTemporaryErrorCode = 1297;

// 1297 for a commit that was sent and failed: whether it committed is not known.
class CommitOutcomeUnknown : public SqlException {
 public:
  explicit CommitOutcomeUnknown(const SqlException& cause)
      : SqlException(cause.code(), cause.sql_state(), cause.what()) {}
};

// Whether `statement`, run by `session` now, may be run again after a temporary error
// (the first two rules above). Call before running it: the statement may open a
// transaction (autocommit=0).
bool statement_retry_safe(const Statement& statement, const server::SessionState& session);

// Runs `attempt` and, while it throws a temporary error (1297) that is not
// CommitOutcomeUnknown and `retry_safe`, runs it again after a backoff passed to `sleep_ms`
// (at most kStatementAttemptsMax runs). The last error propagates.
server::StatementResult run_with_retry(bool retry_safe,
                                       const std::function<server::StatementResult()>& attempt,
                                       const std::function<void(uint64_t)>& sleep_ms = {});

}  // namespace duo::sql::executor
