// Syntax errors: MySQL's exact 1064 text, the "near" rest of the text (at most 80 bytes,
// cut on a character boundary), and the line of the offending token.
#include <gtest/gtest.h>

#include "sql-frontend/parser/parser_test_util.h"

namespace duo::sql {
namespace {

using testing::error_of;
using testing::near;

TEST(ParserErrorTest, ExactMessageAndCode) {
  ParsedStatement p = parse_statement("SELEC 1");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error->mysql_errno, 1064);
  EXPECT_EQ(p.error->sqlstate, "42000");
  EXPECT_EQ(p.error->message,
            "You have an error in your SQL syntax; check the manual that corresponds to your "
            "MySQL server version for the right syntax to use near 'SELEC 1' at line 1");
  EXPECT_EQ(p.error->line, 1u);
  EXPECT_EQ(p.error->offset, 0u);
}

TEST(ParserErrorTest, NearTextStartsAtTheOffendingToken) {
  EXPECT_EQ(error_of("SELECT * FORM t"), near("FORM t"));  // * takes no alias
  EXPECT_EQ(error_of("SELECT * FROM t WHERE"), near(""));
  EXPECT_EQ(error_of("SELECT 1 +"), near(""));
  EXPECT_EQ(error_of("SELECT a FROM t WHERE a = = 1"), near("= 1"));
  EXPECT_EQ(error_of("CREATE TABLE t (a INT,)"), near(")"));
  EXPECT_EQ(error_of("CREATE TABLE t (a VARCHAR)"), near(")"));
  EXPECT_EQ(error_of("INSERT INTO t VALUES (1"), near(""));
  EXPECT_EQ(error_of("INSERT INTO t VALUES 1"), near("1"));
  EXPECT_EQ(error_of("UPDATE t WHERE a = 1"), near("WHERE a = 1"));
  EXPECT_EQ(error_of("DELETE t WHERE a = 1"), near("WHERE a = 1"));  // `DELETE t FROM ...`
  EXPECT_EQ(error_of("SELECT * FROM select"), near("select"));
  EXPECT_EQ(error_of("SELECT * FROM t LEFT JOIN u"), near(""));
  EXPECT_EQ(error_of("SELECT a FROM t ORDER BY a UNION SELECT 1"), near("UNION SELECT 1"));
  EXPECT_EQ(error_of("SELECT * FROM t LIMIT -1"), near("-1"));
  EXPECT_EQ(error_of("SELECT CASE END"), near(""));  // END is a column there
  EXPECT_EQ(error_of("SHOW FULL DATABASES"), near("DATABASES"));
  EXPECT_EQ(error_of("SHOW NONSENSE"), near("NONSENSE"));
  EXPECT_EQ(error_of("DROP TABLE"), near(""));
  EXPECT_EQ(error_of("BEGIN TRANSACTION"), near("TRANSACTION"));
  EXPECT_EQ(error_of("SET NAMES"), near(""));
  EXPECT_EQ(error_of("KILL"), near(""));
  EXPECT_EQ(error_of("GRANT SELECT TO u"), near(""));
  EXPECT_EQ(error_of("CREATE USER 'a'@'b' IDENTIFIED"), near(""));
  EXPECT_EQ(error_of("ALTER TABLE t ADD"), near(""));
  EXPECT_EQ(error_of("SELECT 1 garbage more"), near("more"));
  EXPECT_EQ(error_of("SELECT (1"), near(""));
  EXPECT_EQ(error_of("SELECT 1)"), near(")"));
  EXPECT_EQ(error_of("SELECT a FROM t WHERE a IN ()"), near(")"));
  EXPECT_EQ(error_of("SELECT CAST(a AS WHATEVER)"), near("WHATEVER)"));
  EXPECT_EQ(error_of("SELECT d + INTERVAL 1 FORTNIGHT"), near("FORTNIGHT"));
  // Partitioning other than by KEY () (the primary key) with a count is not supported:
  // the error is at PARTITION, as before the clause was parsed at all.
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY KEY(a) PARTITIONS 2"),
            near("PARTITION BY KEY(a) PARTITIONS 2"));
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY HASH(a)"),
            near("PARTITION BY HASH(a)"));
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY LINEAR KEY()"),
            near("PARTITION BY LINEAR KEY()"));
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY) PARTITIONS 2"), near("PARTITIONS 2"));
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY KEY() PARTITIONS -1"),
            near("-1"));
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY KEY() PARTITIONS 2 "
                     "(PARTITION p0, PARTITION p1)"),
            near("(PARTITION p0, PARTITION p1)"));
}

TEST(ParserErrorTest, LexicalErrors) {
  EXPECT_EQ(error_of("SELECT 'unterminated"), near("'unterminated"));
  EXPECT_EQ(error_of("SELECT \"unterminated"), near("\"unterminated"));
  EXPECT_EQ(error_of("SELECT `unterminated"), near("`unterminated"));
  EXPECT_EQ(error_of("SELECT 1 /* open comment"), near("/* open comment"));
  EXPECT_EQ(error_of("SELECT X'ABC'"), near("X'ABC'"));
  EXPECT_EQ(error_of("SELECT a \\ b"), near("\\ b"));
}

TEST(ParserErrorTest, LineNumbers) {
  EXPECT_EQ(error_of("SELECT *\nFROM t\nWHERE a = = 1"), near("= 1", 3));
  EXPECT_EQ(error_of("SELECT\n1 +\n"), near("", 3));  // trailing newlines count (MySQL does)
  EXPECT_EQ(error_of("SELECT /* a\nb */ FROM"), near("FROM", 2));
  EXPECT_EQ(error_of("SELECT 'a\nb' garbage more"), near("more", 1));  // not counted in strings
  EXPECT_EQ(error_of("-- c\n# d\nSELEC"), near("SELEC", 3));
}

TEST(ParserErrorTest, NearTextIsCutAt80BytesOnACharacterBoundary) {
  std::string tail(100, 'x');
  EXPECT_EQ(error_of("SELECT 1 abc " + tail), near(tail.substr(0, 80)));
  // 79 ASCII bytes then a 2-byte character straddling byte 80: MySQL drops the partial one.
  std::string text = "SELECT 1 abc " + std::string(79, 'y') + "\xC3\xA9" + "zz";
  EXPECT_EQ(error_of(text), near(std::string(79, 'y')));
  std::string fits = "SELECT 1 abc " + std::string(78, 'y') + "\xC3\xA9" + "zz";
  EXPECT_EQ(error_of(fits), near(std::string(78, 'y') + "\xC3\xA9"));
}

TEST(ParserErrorTest, MultiStatements) {
  // The near text runs to the end of the whole text; lines restart per statement.
  ScriptParser script("SELECT 1;\nSELECT * FROM;\nSELECT 3");
  ParsedStatement first = script.next();
  ASSERT_TRUE(first.ok());
  ParsedStatement second = script.next();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error->message, near(";\nSELECT 3", 2));
  EXPECT_FALSE(script.has_next());  // execution stops at the first failing statement
  // Without multi-statements the second statement is the error, counted from line 1.
  EXPECT_EQ(error_of("SELECT 1;\nSELECT 2"), near("SELECT 2", 2));
  EXPECT_EQ(error_of("SELECT 1;"), "OK");
  EXPECT_EQ(error_of("SELECT 1; ; "), near("; ", 1));
}

TEST(ParserErrorTest, NestingDepthIsBounded) {
  std::string deep(kNestingDepthMax + 10, '(');
  deep = "SELECT " + deep + "1";
  ParsedStatement p = parse_statement(deep);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error->mysql_errno, 1064);
  std::string ok = "SELECT " + std::string(50, '(') + "1" + std::string(50, ')');
  EXPECT_TRUE(parse_statement(ok).ok());
  std::string minus = "SELECT " + std::string(kNestingDepthMax + 10, '~') + "1";
  EXPECT_FALSE(parse_statement(minus).ok());
}

TEST(ParserErrorTest, ReservedWordsNeedQuotes) {
  EXPECT_EQ(error_of("CREATE TABLE order (a INT)"), near("order (a INT)"));
  EXPECT_EQ(error_of("CREATE TABLE `order` (a INT)"), "OK");
  EXPECT_EQ(error_of("CREATE TABLE status (date DATE, text TEXT, comment INT)"), "OK");
  EXPECT_EQ(error_of("SELECT key FROM t"), near("key FROM t"));
}

}  // namespace
}  // namespace duo::sql
