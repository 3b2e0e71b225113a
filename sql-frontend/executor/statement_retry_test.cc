// Tests of the statement retry after temporary cluster errors: what is retried, how
// often, with which backoff, and what reaches the client.
#include "sql-frontend/executor/statement_retry.h"

#include <gtest/gtest.h>

#include "sql-frontend/executor/duplicate_key.h"
#include "sql-frontend/parser/parser.h"

namespace duo::sql::executor {
namespace {

SqlException temporary() {
  return SqlException(kTemporaryErrorCode, "HY000",
                      "Got temporary error 4010 'Node failure caused abort of transaction' "
                      "from NDBCLUSTER");
}

TEST(StatementRetryTest, TemporaryErrorsAreRetriedWithBackoffUntilSuccess) {
  int runs = 0;
  std::vector<uint64_t> sleeps;
  server::StatementResult result = run_with_retry(
      true,
      [&]() -> server::StatementResult {
        if (++runs < 3) throw temporary();
        return server::OkResult{7, 0, 0, ""};
      },
      [&](uint64_t ms) { sleeps.push_back(ms); });
  EXPECT_EQ(runs, 3);
  ASSERT_TRUE(std::holds_alternative<server::OkResult>(result));
  EXPECT_EQ(std::get<server::OkResult>(result).affected_rows, 7u);
  EXPECT_EQ(sleeps, (std::vector<uint64_t>{kRetryBackoffMs[0], kRetryBackoffMs[1]}));
}

TEST(StatementRetryTest, AttemptsAreBoundedAndTheLastErrorReachesTheClient) {
  int runs = 0;
  try {
    run_with_retry(
        true,
        [&]() -> server::StatementResult {
          ++runs;
          throw temporary();
        },
        [](uint64_t) {});
    FAIL() << "expected 1297";
  } catch (const SqlException& e) {
    EXPECT_EQ(e.code(), kTemporaryErrorCode);
  }
  EXPECT_EQ(runs, kStatementAttemptsMax);
}

TEST(StatementRetryTest, UnsafeStatementsOtherErrorsAndUnknownCommitsAreNotRetried) {
  int runs = 0;
  auto failing = [&](const SqlException& error) {
    runs = 0;
    return [&runs, error]() -> server::StatementResult {
      ++runs;
      throw error;
    };
  };
  EXPECT_THROW(run_with_retry(false, failing(temporary()), [](uint64_t) {}), SqlException);
  EXPECT_EQ(runs, 1);
  EXPECT_THROW(run_with_retry(true, failing(SqlException(1062, "23000", "dup")), [](uint64_t) {}),
               SqlException);
  EXPECT_EQ(runs, 1);
  runs = 0;
  EXPECT_THROW(run_with_retry(
                   true,
                   [&]() -> server::StatementResult {
                     ++runs;
                     throw CommitOutcomeUnknown(temporary());
                   },
                   [](uint64_t) {}),
               CommitOutcomeUnknown);
  EXPECT_EQ(runs, 1);
}

// A writer that names its table in 1062 texts (duplicate_key.h) keeps an unknown commit
// unknown: retrying it could apply `k = k + 1` twice.
TEST(StatementRetryTest, NamingTheTableKeepsACommitOutcomeUnknown) {
  catalog::SqlTable table;
  table.name = "t";
  int runs = 0;
  EXPECT_THROW(run_with_retry(
                   true,
                   [&]() -> server::StatementResult {
                     ++runs;
                     try {
                       throw CommitOutcomeUnknown(temporary());
                     } catch (const SqlException& e) {
                       rethrow_with_table(e, table);
                     }
                   },
                   [](uint64_t) {}),
               CommitOutcomeUnknown);
  EXPECT_EQ(runs, 1);
  try {
    rethrow_with_table(SqlException(1062, "23000", "Duplicate entry '1' for key 'k'"), table);
  } catch (const CommitOutcomeUnknown&) {
    ADD_FAILURE() << "a plain error became an unknown commit";
  } catch (const SqlException& e) {
    EXPECT_STREQ(e.what(), "Duplicate entry '1' for key 't.k'");
  }
}

TEST(StatementRetryTest, OnlyDataStatementsOutsideTransactionsAreSafe) {
  server::SessionState session;
  auto safe = [&](const std::string& sql) {
    ParsedStatement parsed = parse_statement(sql);
    EXPECT_TRUE(parsed.ok()) << sql;
    return statement_retry_safe(*parsed.statement, session);
  };
  EXPECT_TRUE(safe("SELECT * FROM t WHERE id = 1"));
  EXPECT_TRUE(safe("INSERT INTO t VALUES (1)"));
  EXPECT_TRUE(safe("UPDATE t SET a = a + 1 WHERE id = 1"));
  EXPECT_TRUE(safe("DELETE FROM t WHERE id = 1"));
  EXPECT_FALSE(safe("CREATE TABLE t (id INT PRIMARY KEY)"));
  EXPECT_FALSE(safe("SET @x = 1"));
  session.in_transaction = true;
  EXPECT_FALSE(safe("SELECT * FROM t WHERE id = 1"));
  session.in_transaction = false;
  session.autocommit = false;
  EXPECT_FALSE(safe("INSERT INTO t VALUES (1)"));
}

}  // namespace
}  // namespace duo::sql::executor
