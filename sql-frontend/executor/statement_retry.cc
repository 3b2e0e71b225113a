// Retry of statements after temporary cluster errors; see statement_retry.h.
#include "sql-frontend/executor/statement_retry.h"

#include <chrono>
#include <thread>

namespace duo::sql::executor {

bool statement_retry_safe(const Statement& statement, const server::SessionState& session) {
  if (session.in_transaction || !session.autocommit) return false;
  switch (statement.kind) {
    case StatementKind::kSelect:
    case StatementKind::kInsert:
    case StatementKind::kUpdate:
    case StatementKind::kDelete:
      return true;
    default:
      return false;
  }
}

server::StatementResult run_with_retry(bool retry_safe,
                                       const std::function<server::StatementResult()>& attempt,
                                       const std::function<void(uint64_t)>& sleep_ms) {
  for (int run = 1;; ++run) {
    try {
      return attempt();
    } catch (const CommitOutcomeUnknown&) {
      throw;
    } catch (const SqlException& e) {
      if (!retry_safe || e.code() != kTemporaryErrorCode || run >= kStatementAttemptsMax) throw;
      const uint64_t backoff_ms = kRetryBackoffMs[run - 1];
      if (sleep_ms) {
        sleep_ms(backoff_ms);
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
      }
    }
  }
}

}  // namespace duo::sql::executor
