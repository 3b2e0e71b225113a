// Tests of the view grammar (grammar_view.cc): CREATE [OR REPLACE] / ALTER / DROP VIEW
// with their clauses, the query's source range, SHOW CREATE VIEW, and refusals; and of
// ANALYZE / OPTIMIZE / CHECK TABLE and EXPLAIN ANALYZE (grammar_table_maintenance.cc).
#include <gtest/gtest.h>

#include "sql-frontend/parser/parser_test_util.h"

namespace duo::sql::testing {
namespace {

TEST(ParserViewTest, CreateAlterDropPrintCanonically) {
  EXPECT_EQ(canon("create view v as select a from t"), "CREATE VIEW v AS SELECT a FROM t");
  EXPECT_EQ(canon("CREATE OR REPLACE ALGORITHM=TEMPTABLE DEFINER=`app`@`%` SQL SECURITY "
                  "INVOKER VIEW db.v (x, y) AS SELECT a, b FROM t WITH LOCAL CHECK OPTION"),
            "CREATE OR REPLACE ALGORITHM = TEMPTABLE DEFINER = 'app'@'%' SQL SECURITY INVOKER "
            "VIEW db.v (x, y) AS SELECT a, b FROM t WITH LOCAL CHECK OPTION");
  EXPECT_EQ(canon("CREATE DEFINER = CURRENT_USER VIEW v AS SELECT 1 WITH CHECK OPTION"),
            "CREATE DEFINER = CURRENT_USER VIEW v AS SELECT 1 WITH CASCADED CHECK OPTION");
  EXPECT_EQ(canon("ALTER SQL SECURITY DEFINER VIEW v AS SELECT a FROM t UNION SELECT b FROM u"),
            "ALTER SQL SECURITY DEFINER VIEW v AS SELECT a FROM t UNION SELECT b FROM u");
  EXPECT_EQ(canon("drop view if exists v1, db.v2 cascade"), "DROP VIEW IF EXISTS v1, db.v2");
  EXPECT_EQ(canon("SHOW CREATE VIEW db.v"), "SHOW CREATE VIEW db.v");
}

TEST(ParserViewTest, QueryRangeIsTheSelectAsWritten) {
  const std::string sql = "CREATE VIEW v AS  select a ,b from t where a > 1  WITH CHECK OPTION";
  ParsedStatement parsed = parse_statement(sql);
  ASSERT_TRUE(parsed.ok());
  const auto& view = parsed.statement->as<ViewStatement>();
  EXPECT_EQ(sql.substr(view.query_begin, view.query_end - view.query_begin),
            "select a ,b from t where a > 1");
  EXPECT_EQ(view.check_option, "CASCADED");
}

TEST(ParserViewTest, RefusesMalformedViews) {
  EXPECT_NE(error_of("CREATE VIEW v SELECT 1"), "OK");
  EXPECT_NE(error_of("CREATE ALGORITHM=FAST VIEW v AS SELECT 1"), "OK");
  EXPECT_NE(error_of("CREATE VIEW v AS SELECT 1 WITH CHECK"), "OK");
  EXPECT_NE(error_of("ALTER OR REPLACE VIEW v AS SELECT 1"), "OK");
  EXPECT_NE(error_of("DROP VIEW"), "OK");
}

TEST(ParserTableMaintenanceTest, AnalyzeOptimizeCheckAndExplainAnalyze) {
  EXPECT_EQ(canon("analyze no_write_to_binlog table t1, db.t2"), "ANALYZE TABLE t1, db.t2");
  EXPECT_EQ(canon("OPTIMIZE LOCAL TABLE t"), "OPTIMIZE TABLE t");
  EXPECT_EQ(canon("check table t for upgrade quick extended"), "CHECK TABLE t");
  EXPECT_EQ(canon("EXPLAIN ANALYZE SELECT a FROM t"), "EXPLAIN ANALYZE SELECT a FROM t");
  EXPECT_EQ(canon("EXPLAIN FORMAT=TREE SELECT a FROM t"), "EXPLAIN FORMAT = TREE SELECT a FROM t");
  EXPECT_NE(error_of("CHECK TABLE"), "OK");
  EXPECT_EQ(canon("CREATE TEMPORARY TABLE t SELECT a FROM s"),
            "CREATE TEMPORARY TABLE t AS SELECT a FROM s");
  EXPECT_EQ(canon("CREATE TEMPORARY TABLE t (k INT PRIMARY KEY) ENGINE=MEMORY AS SELECT a AS k FROM s"),
            "CREATE TEMPORARY TABLE t (k INT PRIMARY KEY) ENGINE = MEMORY AS SELECT a AS k FROM s");
  EXPECT_NE(error_of("OPTIMIZE t"), "OK");
}

}  // namespace
}  // namespace duo::sql::testing
