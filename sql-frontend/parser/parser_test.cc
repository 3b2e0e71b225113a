// Parser tests per feature: each statement is parsed, printed in canonical form, and
// the canonical form must parse back to the same tree (checked inside canon()).
#include <gtest/gtest.h>

#include "sql-frontend/parser/parser_test_util.h"

namespace duo::sql {
namespace {

using testing::canon;
using testing::expr;

TEST(ParserPrecedenceTest, Arithmetic) {
  EXPECT_EQ(expr("1 + 2 * 3"), "(1 + (2 * 3))");
  EXPECT_EQ(expr("1 - 2 - 3"), "((1 - 2) - 3)");
  EXPECT_EQ(expr("2 * 3 ^ 4"), "(2 * (3 ^ 4))");
  EXPECT_EQ(expr("a DIV b MOD c % d / e"), "((((a DIV b) % c) % d) / e)");
  EXPECT_EQ(expr("1 << 2 + 3"), "(1 << (2 + 3))");
  EXPECT_EQ(expr("1 | 2 & 3"), "(1 | (2 & 3))");
  EXPECT_EQ(expr("1 & 2 << 3"), "(1 & (2 << 3))");
  EXPECT_EQ(expr("-a * b"), "(-(a) * b)");
  EXPECT_EQ(expr("- - 1"), "-(-(1))");
  EXPECT_EQ(expr("~a + 1"), "(~(a) + 1)");
  EXPECT_EQ(expr("+a"), "a");
  EXPECT_EQ(expr("(1 + 2) * 3"), "((1 + 2) * 3)");
}

TEST(ParserPrecedenceTest, Logical) {
  EXPECT_EQ(expr("a OR b AND c"), "(a OR (b AND c))");
  EXPECT_EQ(expr("a || b && c"), "(a OR (b AND c))");
  EXPECT_EQ(expr("a XOR b OR c"), "((a XOR b) OR c)");
  EXPECT_EQ(expr("a AND b XOR c"), "((a AND b) XOR c)");
  EXPECT_EQ(expr("NOT a AND b"), "((NOT a) AND b)");
  EXPECT_EQ(expr("NOT a = b"), "(NOT (a = b))");
  EXPECT_EQ(expr("!a = b"), "((NOT a) = b)");
  EXPECT_EQ(expr("NOT NOT a"), "(NOT (NOT a))");
  EXPECT_EQ(expr("a = 1 OR b = 2 AND NOT c"), "((a = 1) OR ((b = 2) AND (NOT c)))");
}

TEST(ParserPrecedenceTest, Comparisons) {
  EXPECT_EQ(expr("a = b + 1"), "(a = (b + 1))");
  EXPECT_EQ(expr("a <=> NULL"), "(a <=> NULL)");
  EXPECT_EQ(expr("a != b"), "(a <> b)");
  EXPECT_EQ(expr("a < b = c"), "((a < b) = c)");
  EXPECT_EQ(expr("a IS NULL"), "(a IS NULL)");
  EXPECT_EQ(expr("a IS NOT NULL AND b IS TRUE"), "((a IS NOT NULL) AND (b IS TRUE))");
  EXPECT_EQ(expr("a + 1 IS NOT FALSE"), "((a + 1) IS NOT FALSE)");
  EXPECT_EQ(expr("a BETWEEN 1 AND 2 AND b"), "((a BETWEEN 1 AND 2) AND b)");
  EXPECT_EQ(expr("a NOT BETWEEN b + 1 AND c * 2"), "(a NOT BETWEEN (b + 1) AND (c * 2))");
  EXPECT_EQ(expr("a IN (1, 2, 3)"), "(a IN (1, 2, 3))");
  EXPECT_EQ(expr("a NOT IN (SELECT b FROM t)"), "(a NOT IN (SELECT b FROM t))");
  EXPECT_EQ(expr("a LIKE 'x%' ESCAPE '!'"), "(a LIKE 'x%' ESCAPE '!')");
  EXPECT_EQ(expr("a NOT LIKE CONCAT('%', ?, '%')"), "(a NOT LIKE CONCAT('%', ?, '%'))");
  EXPECT_EQ(expr("a REGEXP '^x' OR a RLIKE 'y'"), "((a REGEXP '^x') OR (a REGEXP 'y'))");
  EXPECT_EQ(expr("(a, b) = (1, 2)"), "((a, b) = (1, 2))");
  EXPECT_EQ(expr("a COLLATE utf8mb4_bin = 'x'"), "((a COLLATE utf8mb4_bin) = 'x')");
  EXPECT_EQ(expr("-a COLLATE latin1_bin"), "-((a COLLATE latin1_bin))");
}

TEST(ParserExpressionTest, Literals) {
  EXPECT_EQ(expr("1, 1.0, 1e0, -5, 'a', \"b\", NULL, TRUE, false"),
            "1, 1.0, 1e0, -(5), 'a', 'b', NULL, TRUE, FALSE");
  EXPECT_EQ(expr("0x41, X'41', 0b1, B'1'"), "0x41, X'41', 0b1, B'1'");
  EXPECT_EQ(expr("_utf8mb4'x', N'y', _binary 0x41"), "_utf8mb4'x', _utf8mb3'y', _binary 0x41");
  EXPECT_EQ(expr("'a' 'b' \"c\""), "'abc'");
  EXPECT_EQ(expr("'it''s\\n'"), "'it\\'s\\n'");
  ParsedStatement p = parse_statement("SELECT 1.50, 'x'");
  ASSERT_TRUE(p.ok());
  const auto& items = p.statement->as<SelectStatement>().query->select->items;
  const auto& dec = items[0].expr->as<LiteralExpr>();
  EXPECT_EQ(dec.literal_kind, LiteralKind::kDecimal);
  EXPECT_EQ(dec.text, "1.50");
  EXPECT_EQ(items[1].expr->as<LiteralExpr>().text, "'x'");
  EXPECT_EQ(items[1].expr->pos.offset, 13u);
}

TEST(ParserExpressionTest, FunctionsAndSpecialForms) {
  EXPECT_EQ(expr("COUNT(*), count(DISTINCT a), SUM(b), max(c)"),
            "COUNT(*), COUNT(DISTINCT a), SUM(b), MAX(c)");
  EXPECT_EQ(expr("IFNULL(a, 0), IF(a > 1, 'x', 'y'), COALESCE(a, b, c)"),
            "IFNULL(a, 0), IF((a > 1), 'x', 'y'), COALESCE(a, b, c)");
  EXPECT_EQ(expr("NOW(), CURRENT_TIMESTAMP, CURRENT_TIMESTAMP(6), DATABASE(), USER()"),
            "NOW(), CURRENT_TIMESTAMP, CURRENT_TIMESTAMP(6), DATABASE(), USER()");
  EXPECT_EQ(expr("LEFT(s, 2), RIGHT(s, 1), REPLACE(s, 'a', 'b'), CHAR(65)"),
            "LEFT(s, 2), RIGHT(s, 1), REPLACE(s, 'a', 'b'), CHAR(65)");
  EXPECT_EQ(expr("CAST(a AS UNSIGNED), CAST(b AS CHAR(10)), CAST(c AS DECIMAL(10, 2))"),
            "CAST(a AS UNSIGNED), CAST(b AS CHAR(10)), CAST(c AS DECIMAL(10, 2))");
  EXPECT_EQ(expr("CONVERT(a, SIGNED INTEGER), CONVERT(b USING utf8mb4), BINARY c"),
            "CAST(a AS SIGNED), CONVERT(b USING utf8mb4), CAST(c AS BINARY)");
  EXPECT_EQ(expr("CASE a WHEN 1 THEN 'x' WHEN 2 THEN 'y' ELSE 'z' END"),
            "CASE a WHEN 1 THEN 'x' WHEN 2 THEN 'y' ELSE 'z' END");
  EXPECT_EQ(expr("CASE WHEN a > 0 THEN 1 END"), "CASE WHEN (a > 0) THEN 1 END");
  EXPECT_EQ(
      expr("d + INTERVAL 1 DAY, DATE_ADD(d, INTERVAL 2 HOUR), NOW() - INTERVAL '1:30' HOUR_MINUTE"),
      "(d + INTERVAL 1 DAY), DATE_ADD(d, INTERVAL 2 HOUR), (NOW() - INTERVAL '1:30' HOUR_MINUTE)");
  EXPECT_EQ(expr("INTERVAL(5, 1, 10)"), "INTERVAL(5, 1, 10)");
  EXPECT_EQ(expr("EXTRACT(YEAR FROM d)"), "EXTRACT(YEAR FROM d)");
  EXPECT_EQ(expr("SUBSTRING(s FROM 2 FOR 3), POSITION('a' IN s)"),
            "SUBSTRING(s, 2, 3), LOCATE('a', s)");
  EXPECT_EQ(expr("DATE '2024-01-02'"), "DATE('2024-01-02')");
  EXPECT_EQ(expr("GROUP_CONCAT(DISTINCT a SEPARATOR ',')"), "GROUP_CONCAT(DISTINCT a, ',')");
  EXPECT_EQ(expr("TRIM(s), TRIM(LEADING 'x' FROM s), TRIM(TRAILING FROM s), TRIM('ab' FROM s)"),
            "TRIM(s), TRIM(LEADING 'x' FROM s), TRIM(TRAILING FROM s), TRIM(BOTH 'ab' FROM s)");
  EXPECT_EQ(expr("TRIM(BOTH CONCAT(a, 'b') FROM s)"), "TRIM(BOTH CONCAT(a, 'b') FROM s)");
}

TEST(ParserExpressionTest, VariablesAndPlaceholders) {
  EXPECT_EQ(expr("@a, @'b c', @@version_comment, @@session.autocommit, @@GLOBAL.max_connections"),
            "@a, @`b c`, @@version_comment, @@SESSION.autocommit, @@GLOBAL.max_connections");
  ParsedStatement p = parse_statement("SELECT c FROM t WHERE id = ? AND k BETWEEN ? AND ?");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.statement->placeholder_count, 3u);
  const auto& where = *p.statement->as<SelectStatement>().query->select->where;
  const auto& between = where.as<BinaryExpr>().right->as<BetweenExpr>();
  EXPECT_EQ(between.low->as<PlaceholderExpr>().index, 1u);
  EXPECT_EQ(between.high->as<PlaceholderExpr>().index, 2u);
}

// @x := expr (MySQL's '@' ident SET_VAR expr): the right side is a whole expression,
// counted for the deprecation warning; SET's own @x := v is not counted.
TEST(ParserExpressionTest, UserVariableAssignment) {
  EXPECT_EQ(expr("@a := @a + 1, @`b c` := 'x'"), "(@a := (@a + 1)), (@`b c` := 'x')");
  EXPECT_EQ(expr("@a := 1 OR 2"), "(@a := (1 OR 2))");
  EXPECT_EQ(expr("(@a := 1) + 2"), "((@a := 1) + 2)");
  EXPECT_EQ(expr("@a := @b := 3"), "(@a := (@b := 3))");
  EXPECT_EQ(expr("@a:=1"), "(@a := 1)");
  ParsedStatement p = parse_statement("SELECT @n := @n + 1, (@m := 2) FROM t WHERE (@k := 1) > 0");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.statement->user_variable_assignments, 3u);
  const auto& item = *p.statement->as<SelectStatement>().query->select->items[0].expr;
  ASSERT_EQ(item.kind, ExprKind::kAssignUserVariable);
  EXPECT_EQ(item.as<AssignUserVariableExpr>().name, "n");
  ParsedStatement set = parse_statement("SET @x := 1, @y = 2");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set.statement->user_variable_assignments, 0u);
  ParsedStatement nested = parse_statement("SET @x := @y := 1");
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(nested.statement->user_variable_assignments, 1u);
  EXPECT_EQ(canon("SET @x := @y := 1"), "SET @x = (@y := 1)");
  EXPECT_EQ(canon("UPDATE t SET v = @u := v + 1 WHERE id = 1"),
            "UPDATE t SET v = (@u := (v + 1)) WHERE (id = 1)");
}

TEST(ParserExpressionTest, ColumnsAndIdentifiers) {
  EXPECT_EQ(expr("a, t.a, db.t.a, `select`, t.`from`, t.select, status, `a``b`"),
            "a, t.a, db.t.a, `select`, t.`from`, t.`select`, status, `a``b`");
  EXPECT_EQ(expr("*, t.*, db.t.*"), "*, t.*, db.t.*");
  ParsedStatement p = parse_statement("SELECT `Weird Name` FROM t");
  ASSERT_TRUE(p.ok());
  const auto& col =
      p.statement->as<SelectStatement>().query->select->items[0].expr->as<ColumnExpr>();
  EXPECT_EQ(col.column.name, "Weird Name");
  EXPECT_TRUE(col.column.quoted);
}

TEST(ParserSelectTest, Clauses) {
  EXPECT_EQ(
      canon("select distinct a as x, b y, c 'z' from t where a>1 group by a, b having count(*) > 1 "
            "order by a desc, b asc limit 10"),
      "SELECT DISTINCT a AS x, b AS y, c AS z FROM t WHERE (a > 1) GROUP BY a, b HAVING "
      "(COUNT(*) > 1) ORDER BY a DESC, b LIMIT 10");
  EXPECT_EQ(canon("SELECT * FROM t LIMIT 5, 10"), "SELECT * FROM t LIMIT 10 OFFSET 5");
  EXPECT_EQ(canon("SELECT * FROM t LIMIT 10 OFFSET 5"), "SELECT * FROM t LIMIT 10 OFFSET 5");
  EXPECT_EQ(canon("SELECT * FROM t WHERE id = 1 FOR UPDATE"),
            "SELECT * FROM t WHERE (id = 1) FOR UPDATE");
  EXPECT_EQ(canon("SELECT * FROM t LOCK IN SHARE MODE"), "SELECT * FROM t LOCK IN SHARE MODE");
  EXPECT_EQ(canon("SELECT * FROM t FOR SHARE"), "SELECT * FROM t LOCK IN SHARE MODE");
  EXPECT_EQ(canon("SELECT 1 FROM DUAL"), "SELECT 1");
  EXPECT_EQ(canon("SELECT SQL_CALC_FOUND_ROWS SQL_NO_CACHE a FROM t"),
            "SELECT SQL_CALC_FOUND_ROWS a FROM t");
  EXPECT_EQ(canon("SELECT a FROM t GROUP BY a WITH ROLLUP"),
            "SELECT a FROM t GROUP BY a WITH ROLLUP");
  EXPECT_EQ(canon("SELECT a FROM t LIMIT ?, ?"), "SELECT a FROM t LIMIT ? OFFSET ?");
}

TEST(ParserSelectTest, Joins) {
  EXPECT_EQ(canon("SELECT * FROM a JOIN b ON a.id = b.id LEFT JOIN c USING (id)"),
            "SELECT * FROM a JOIN b ON (a.id = b.id) LEFT JOIN c USING (id)");
  EXPECT_EQ(canon("SELECT * FROM a INNER JOIN b ON 1 RIGHT OUTER JOIN c ON 2"),
            "SELECT * FROM a JOIN b ON 1 RIGHT JOIN c ON 2");
  EXPECT_EQ(canon("SELECT * FROM a, b AS bb, c cc WHERE a.x = bb.x"),
            "SELECT * FROM a, b AS bb, c AS cc WHERE (a.x = bb.x)");
  EXPECT_EQ(canon("SELECT * FROM a JOIN (b JOIN c ON b.x = c.x) ON a.y = b.y"),
            "SELECT * FROM a JOIN (b JOIN c ON (b.x = c.x)) ON (a.y = b.y)");
  EXPECT_EQ(canon("SELECT * FROM a CROSS JOIN b"), "SELECT * FROM a JOIN b");
  EXPECT_EQ(canon("SELECT * FROM a NATURAL LEFT JOIN b"), "SELECT * FROM a NATURAL LEFT JOIN b");
  EXPECT_EQ(canon("SELECT * FROM (a JOIN b ON a.x = b.x) JOIN c ON c.y = b.y"),
            "SELECT * FROM a JOIN b ON (a.x = b.x) JOIN c ON (c.y = b.y)");
  EXPECT_EQ(canon("SELECT * FROM a STRAIGHT_JOIN b ON a.x = b.x"),
            "SELECT * FROM a STRAIGHT_JOIN b ON (a.x = b.x)");
  EXPECT_EQ(canon("SELECT * FROM db1.t1 FORCE INDEX (k_1) JOIN t2 USE KEY (PRIMARY, k2) ON 1"),
            "SELECT * FROM db1.t1 FORCE INDEX (k_1) JOIN t2 USE INDEX (PRIMARY, k2) ON 1");
}

TEST(ParserSelectTest, SubqueriesAndDerivedTables) {
  EXPECT_EQ(canon("SELECT (SELECT MAX(b) FROM t2) AS m FROM t1 WHERE EXISTS (SELECT 1 FROM t3 "
                  "WHERE t3.a = t1.a)"),
            "SELECT (SELECT MAX(b) FROM t2) AS m FROM t1 WHERE EXISTS (SELECT 1 FROM t3 WHERE "
            "(t3.a = t1.a))");
  EXPECT_EQ(canon("SELECT d.x FROM (SELECT a AS x FROM t) AS d"),
            "SELECT d.x FROM (SELECT a AS x FROM t) AS d");
  EXPECT_EQ(canon("SELECT * FROM (SELECT 1) d JOIN (SELECT 2) e ON 1"),
            "SELECT * FROM (SELECT 1) AS d JOIN (SELECT 2) AS e ON 1");
  EXPECT_EQ(canon("SELECT * FROM t WHERE a IN (SELECT a FROM u UNION SELECT b FROM v)"),
            "SELECT * FROM t WHERE (a IN (SELECT a FROM u UNION SELECT b FROM v))");
}

TEST(ParserSelectTest, Union) {
  EXPECT_EQ(
      canon("SELECT a FROM t UNION ALL SELECT b FROM u UNION SELECT c FROM v ORDER BY 1 LIMIT 3"),
      "SELECT a FROM t UNION ALL SELECT b FROM u UNION SELECT c FROM v ORDER BY 1 LIMIT 3");
  EXPECT_EQ(canon("(SELECT a FROM t ORDER BY a LIMIT 1) UNION (SELECT b FROM u) ORDER BY 1"),
            "(SELECT a FROM t ORDER BY a LIMIT 1) UNION (SELECT b FROM u) ORDER BY 1");
  EXPECT_EQ(canon("(SELECT 1)"), "(SELECT 1)");
  ParsedStatement p = parse_statement("SELECT a FROM t UNION SELECT b FROM u LIMIT 2");
  ASSERT_TRUE(p.ok());
  const QueryExpr& q = *p.statement->as<SelectStatement>().query;
  ASSERT_TRUE(q.is_union());
  EXPECT_TRUE(q.limit.has_value());  // the LIMIT applies to the whole union
  EXPECT_FALSE(q.right->select->limit.has_value());
}

TEST(ParserDmlTest, Insert) {
  EXPECT_EQ(canon("INSERT INTO t (a, b) VALUES (1, 'x'), (2, DEFAULT)"),
            "INSERT INTO t (a, b) VALUES (1, 'x'), (2, DEFAULT)");
  EXPECT_EQ(canon("insert ignore t values (1)"), "INSERT IGNORE INTO t VALUES (1)");
  EXPECT_EQ(canon("INSERT INTO t () VALUES ()"), "INSERT INTO t () VALUES ()");
  EXPECT_EQ(canon("INSERT INTO t SET a = 1, b = b + 1"), "INSERT INTO t SET a = 1, b = (b + 1)");
  EXPECT_EQ(canon("INSERT INTO t (a) SELECT x FROM u WHERE x > 0"),
            "INSERT INTO t (a) SELECT x FROM u WHERE (x > 0)");
  EXPECT_EQ(canon("INSERT INTO t VALUES (1, 2) ON DUPLICATE KEY UPDATE b = VALUES(b), c = c + 1"),
            "INSERT INTO t VALUES (1, 2) ON DUPLICATE KEY UPDATE b = VALUES(b), c = (c + 1)");
  EXPECT_EQ(canon("REPLACE INTO db.t VALUE (1)"), "REPLACE INTO db.t VALUES (1)");
  EXPECT_EQ(canon("INSERT LOW_PRIORITY INTO t (a) VALUES (?)"), "INSERT INTO t (a) VALUES (?)");
}

TEST(ParserDmlTest, UpdateAndDelete) {
  EXPECT_EQ(canon("UPDATE t SET k = k + 1 WHERE id = ?"),
            "UPDATE t SET k = (k + 1) WHERE (id = ?)");
  EXPECT_EQ(canon("UPDATE IGNORE t SET a = 1, t.b = DEFAULT WHERE x ORDER BY id DESC LIMIT 5"),
            "UPDATE IGNORE t SET a = 1, t.b = DEFAULT WHERE x ORDER BY id DESC LIMIT 5");
  EXPECT_EQ(canon("UPDATE a JOIN b ON a.id = b.id SET a.x = b.x"),
            "UPDATE a JOIN b ON (a.id = b.id) SET a.x = b.x");
  EXPECT_EQ(canon("DELETE FROM t WHERE id = 1"), "DELETE FROM t WHERE (id = 1)");
  EXPECT_EQ(canon("DELETE QUICK IGNORE FROM t ORDER BY a LIMIT 10"),
            "DELETE QUICK IGNORE FROM t ORDER BY a LIMIT 10");
}

TEST(ParserDdlTest, Databases) {
  EXPECT_EQ(
      canon("CREATE DATABASE IF NOT EXISTS d DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"),
      "CREATE DATABASE IF NOT EXISTS d CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
  EXPECT_EQ(canon("create schema s"), "CREATE DATABASE s");
  EXPECT_EQ(canon("DROP DATABASE IF EXISTS d"), "DROP DATABASE IF EXISTS d");
  EXPECT_EQ(canon("DROP SCHEMA d"), "DROP DATABASE d");
  EXPECT_EQ(canon("USE `my db`"), "USE `my db`");
}

TEST(ParserDdlTest, CreateTable) {
  EXPECT_EQ(
      canon("CREATE TABLE IF NOT EXISTS t ("
            " id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,"
            " a INT(11) ZEROFILL, b TINYINT SIGNED DEFAULT -1, c DECIMAL(10,2) DEFAULT '0.00',"
            " d VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '' COMMENT "
            "'dee',"
            " e DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),"
            " f BLOB, g TEXT STORAGE DISK, h TIME(3), i TIMESTAMP NULL, j DOUBLE, k FLOAT(7,3),"
            " l BINARY(16), m VARBINARY(32) UNIQUE, n DATE, o MEDIUMTEXT, p BOOL,"
            " UNIQUE KEY uk (d(10), e DESC), KEY (a), INDEX ix USING BTREE (b, c)"
            ") ENGINE=NDBCLUSTER DEFAULT CHARSET=utf8mb4 AUTO_INCREMENT=100"
            " COMMENT='NDB_TABLE=READ_BACKUP=1'"),
      "CREATE TABLE IF NOT EXISTS t (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, "
      "a INT(11) ZEROFILL, b TINYINT DEFAULT (-(1)), c DECIMAL(10, 2) DEFAULT ('0.00'), "
      "d VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT ('') COMMENT "
      "'dee', "
      "e DATETIME(6) DEFAULT (CURRENT_TIMESTAMP(6)) ON UPDATE CURRENT_TIMESTAMP(6), "
      "f BLOB, g TEXT STORAGE DISK, h TIME(3), i TIMESTAMP NULL, j DOUBLE, k FLOAT(7, 3), "
      "l BINARY(16), m VARBINARY(32) UNIQUE, n DATE, o MEDIUMTEXT, p TINYINT(1), "
      "UNIQUE KEY uk (d(10), e DESC), KEY (a), KEY ix (b, c) USING BTREE) "
      "ENGINE = NDBCLUSTER AUTO_INCREMENT = 100 DEFAULT CHARSET = utf8mb4 "
      "COMMENT = 'NDB_TABLE=READ_BACKUP=1'");
  EXPECT_EQ(canon("CREATE TABLE t (a INT, b INT, PRIMARY KEY USING HASH (a, b)) ENGINE=ndb"),
            "CREATE TABLE t (a INT, b INT, PRIMARY KEY (a, b) USING HASH) ENGINE = ndb");
  EXPECT_EQ(canon("CREATE TABLE t (a INT, CONSTRAINT pk PRIMARY KEY (a), CONSTRAINT UNIQUE u (a))"),
            "CREATE TABLE t (a INT, CONSTRAINT pk PRIMARY KEY (a), UNIQUE KEY u (a))");
  EXPECT_EQ(canon("CREATE TABLE t (a INT) ENGINE InnoDB, ROW_FORMAT=DYNAMIC"),
            "CREATE TABLE t (a INT) ENGINE = InnoDB ROW_FORMAT = DYNAMIC");
  EXPECT_EQ(canon("CREATE TABLE t (a INT) TABLESPACE ts1 STORAGE DISK"),
            "CREATE TABLE t (a INT) TABLESPACE ts1 STORAGE DISK");
  EXPECT_EQ(canon("CREATE TABLE t2 LIKE t1"), "CREATE TABLE t2 LIKE t1");
  // The partition count (PARTITION BY KEY () only: every table is partitioned by its
  // primary key), also in the versioned comment mysqldump writes.
  EXPECT_EQ(canon("CREATE TABLE t (a INT PRIMARY KEY) ENGINE=NDB PARTITION BY KEY() PARTITIONS 4"),
            "CREATE TABLE t (a INT PRIMARY KEY) ENGINE = NDB PARTITION BY KEY () PARTITIONS 4");
  EXPECT_EQ(canon("create table t (a int primary key) partition by key ( ) partitions 0"),
            "CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY KEY () PARTITIONS 0");
  EXPECT_EQ(canon("CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY KEY ()"),
            "CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY KEY ()");
  EXPECT_EQ(canon("CREATE TABLE t (a INT PRIMARY KEY) ENGINE=ndbcluster\n"
                  "/*!50100 PARTITION BY KEY ()\nPARTITIONS 3 */"),
            "CREATE TABLE t (a INT PRIMARY KEY) ENGINE = ndbcluster PARTITION BY KEY () "
            "PARTITIONS 3");
  EXPECT_EQ(canon("CREATE TEMPORARY TABLE t (a CHAR, b CHARACTER VARYING(3), c LONGBLOB, d YEAR)"),
            "CREATE TEMPORARY TABLE t (a CHAR, b VARCHAR(3), c LONGBLOB, d YEAR)");
  EXPECT_EQ(canon("CREATE TABLE t (a INT COLUMN_FORMAT DYNAMIC, b INT KEY)"),
            "CREATE TABLE t (a INT COLUMN_FORMAT DYNAMIC, b INT PRIMARY KEY)");
}

TEST(ParserDdlTest, DropTruncateRenameAlter) {
  EXPECT_EQ(canon("DROP TABLE IF EXISTS t1, db.t2"), "DROP TABLE IF EXISTS t1, db.t2");
  EXPECT_EQ(canon("TRUNCATE t"), "TRUNCATE TABLE t");
  EXPECT_EQ(canon("RENAME TABLE a TO b, c TO db.d"), "RENAME TABLE a TO b, c TO db.d");
  EXPECT_EQ(canon("ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 0 AFTER b, DROP COLUMN d"),
            "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT (0) AFTER b, DROP COLUMN d");
  EXPECT_EQ(canon("ALTER TABLE t ADD x INT FIRST, ADD INDEX ix (x), DROP INDEX iy, DROP KEY iz"),
            "ALTER TABLE t ADD COLUMN x INT FIRST, ADD KEY ix (x), DROP INDEX iy, DROP INDEX iz");
  EXPECT_EQ(canon("ALTER TABLE t ADD UNIQUE INDEX u (a), ADD PRIMARY KEY (id), DROP PRIMARY KEY"),
            "ALTER TABLE t ADD UNIQUE KEY u (a), ADD PRIMARY KEY (id), DROP PRIMARY KEY");
  EXPECT_EQ(canon("ALTER TABLE t ALGORITHM=INPLACE, ADD COLUMN (a INT, b INT)"),
            "ALTER TABLE t ALGORITHM = INPLACE, ADD COLUMN a INT, ADD COLUMN b INT");
  EXPECT_EQ(canon("ALTER TABLE t ENGINE=NDB"), "ALTER TABLE t ENGINE = NDB");
  EXPECT_EQ(canon("ALTER TABLE t MODIFY a BIGINT NOT NULL FIRST, CHANGE COLUMN b c INT AFTER a"),
            "ALTER TABLE t MODIFY COLUMN a BIGINT NOT NULL FIRST, CHANGE COLUMN b c INT AFTER a");
  EXPECT_EQ(canon("ALTER TABLE t RENAME TO u"), "ALTER TABLE t RENAME TO u");
  EXPECT_EQ(canon("ALTER TABLE t RENAME AS db.u, ADD COLUMN d INT"),
            "ALTER TABLE t RENAME TO db.u, ADD COLUMN d INT");
  EXPECT_EQ(canon("ALTER TABLE t RENAME u"), "ALTER TABLE t RENAME TO u");
  EXPECT_EQ(canon("ALTER TABLE t ALTER COLUMN a SET DEFAULT 3, ALTER b DROP DEFAULT"),
            "ALTER TABLE t ALTER COLUMN a SET DEFAULT (3), ALTER COLUMN b DROP DEFAULT");
  EXPECT_EQ(canon("ALTER TABLE t ALTER a SET DEFAULT -1"),
            "ALTER TABLE t ALTER COLUMN a SET DEFAULT (-(1))");
  EXPECT_EQ(canon("CREATE UNIQUE INDEX u ON t (a, b(4))"), "CREATE UNIQUE INDEX u ON t (a, b(4))");
  EXPECT_EQ(canon("CREATE INDEX i USING HASH ON db.t (a) ALGORITHM=INPLACE"),
            "CREATE INDEX i ON db.t (a) USING HASH");
  EXPECT_EQ(canon("DROP INDEX i ON t"), "DROP INDEX i ON t");
  EXPECT_EQ(canon("DROP INDEX `PRIMARY` ON t"), "DROP INDEX `PRIMARY` ON t");
}

TEST(ParserDdlTest, DiskDataObjects) {
  EXPECT_EQ(canon("create logfile group lg1 add undofile 'u.log' initial_size = 16M "
                  "undo_buffer_size 2M engine=ndb"),
            "CREATE LOGFILE GROUP lg1 ADD UNDOFILE 'u.log' INITIAL_SIZE 16M UNDO_BUFFER_SIZE 2M "
            "ENGINE ndb");
  EXPECT_EQ(canon("ALTER LOGFILE GROUP lg1 ADD UNDOFILE 'u2.log' INITIAL_SIZE 1048576 ENGINE NDB"),
            "ALTER LOGFILE GROUP lg1 ADD UNDOFILE 'u2.log' INITIAL_SIZE 1048576 ENGINE NDB");
  EXPECT_EQ(canon("CREATE TABLESPACE ts ADD DATAFILE 'd.dat' USE LOGFILE GROUP lg1 "
                  "EXTENT_SIZE=256K INITIAL_SIZE 1G AUTOEXTEND_SIZE 4M ENGINE NDBCLUSTER"),
            "CREATE TABLESPACE ts ADD DATAFILE 'd.dat' USE LOGFILE GROUP lg1 INITIAL_SIZE 1G "
            "EXTENT_SIZE 256K AUTOEXTEND_SIZE 4M ENGINE NDBCLUSTER");
  EXPECT_EQ(canon("ALTER TABLESPACE ts ADD DATAFILE 'd2.dat' INITIAL_SIZE 1M"),
            "ALTER TABLESPACE ts ADD DATAFILE 'd2.dat' INITIAL_SIZE 1M");
  EXPECT_EQ(canon("ALTER TABLESPACE ts DROP DATAFILE 'd2.dat'"),
            "ALTER TABLESPACE ts DROP DATAFILE 'd2.dat'");
  EXPECT_EQ(canon("DROP TABLESPACE ts ENGINE=NDB"), "DROP TABLESPACE ts ENGINE NDB");
  EXPECT_EQ(canon("DROP LOGFILE GROUP lg1 ENGINE NDB"), "DROP LOGFILE GROUP lg1 ENGINE NDB");
  // A size is one token: "10 M" is two.
  EXPECT_EQ(testing::error_of("CREATE LOGFILE GROUP lg ADD UNDOFILE 'u' INITIAL_SIZE 10 M"),
            testing::near("M"));
  EXPECT_EQ(testing::error_of("ALTER LOGFILE GROUP lg DROP UNDOFILE 'u'"),
            testing::near("DROP UNDOFILE 'u'"));
  EXPECT_EQ(testing::error_of("CREATE TABLESPACE ts ADD UNDOFILE 'u'"),
            testing::near("UNDOFILE 'u'"));
}

TEST(ParserAdminTest, Transactions) {
  EXPECT_EQ(canon("BEGIN"), "BEGIN");
  EXPECT_EQ(canon("begin work"), "BEGIN WORK");
  EXPECT_EQ(canon("START TRANSACTION"), "START TRANSACTION");
  EXPECT_EQ(canon("START TRANSACTION READ ONLY"), "START TRANSACTION READ ONLY");
  EXPECT_EQ(canon("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ WRITE"),
            "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ WRITE");
  EXPECT_EQ(canon("COMMIT"), "COMMIT");
  EXPECT_EQ(canon("COMMIT WORK"), "COMMIT WORK");
  EXPECT_EQ(canon("ROLLBACK"), "ROLLBACK");
  EXPECT_EQ(canon("SET autocommit=0"), "SET @@autocommit = 0");
  EXPECT_EQ(canon("SET autocommit = ON"), "SET @@autocommit = `ON`");
}

TEST(ParserAdminTest, Set) {
  EXPECT_EQ(canon("SET NAMES utf8mb4"), "SET NAMES utf8mb4");
  EXPECT_EQ(canon("SET NAMES 'utf8mb4' COLLATE 'utf8mb4_general_ci'"),
            "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci");
  EXPECT_EQ(canon("SET NAMES DEFAULT"), "SET NAMES DEFAULT");
  EXPECT_EQ(canon("SET CHARACTER SET utf8"), "SET CHARACTER SET utf8");
  EXPECT_EQ(canon("SET GLOBAL max_connections = 1000, SESSION sql_mode = 'ANSI', @@local.x = 1"),
            "SET GLOBAL max_connections = 1000, SESSION sql_mode = 'ANSI', SESSION x = 1");
  EXPECT_EQ(canon("SET @a := 1, @b = @a + 1"), "SET @a = 1, @b = (@a + 1)");
  EXPECT_EQ(canon("SET @@session.transaction_isolation = 'READ-COMMITTED'"),
            "SET SESSION transaction_isolation = 'READ-COMMITTED'");
  EXPECT_EQ(canon("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"),
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
  EXPECT_EQ(canon("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY"),
            "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY");
  EXPECT_EQ(canon("SET TRANSACTION READ WRITE"), "SET TRANSACTION READ WRITE");
  EXPECT_EQ(canon("SET PASSWORD = 'secret'"), "SET PASSWORD = 'secret'");
  EXPECT_EQ(canon("SET PASSWORD FOR 'bob'@'%' = 'pw'"), "SET PASSWORD FOR 'bob'@'%' = 'pw'");
  EXPECT_EQ(canon("SET sql_mode = DEFAULT"), "SET @@sql_mode = DEFAULT");
}

TEST(ParserAdminTest, Show) {
  EXPECT_EQ(canon("SHOW DATABASES"), "SHOW DATABASES");
  EXPECT_EQ(canon("show schemas like 'x%'"), "SHOW DATABASES LIKE 'x%'");
  EXPECT_EQ(canon("SHOW FULL TABLES FROM db WHERE Table_type = 'BASE TABLE'"),
            "SHOW FULL TABLES FROM db WHERE (Table_type = 'BASE TABLE')");
  EXPECT_EQ(canon("SHOW TABLES IN db LIKE 't%'"), "SHOW TABLES FROM db LIKE 't%'");
  EXPECT_EQ(canon("SHOW FULL COLUMNS FROM t FROM db LIKE 'a%'"),
            "SHOW FULL COLUMNS FROM t FROM db LIKE 'a%'");
  EXPECT_EQ(canon("SHOW FIELDS IN db.t"), "SHOW COLUMNS FROM db.t");
  EXPECT_EQ(canon("SHOW INDEX FROM t"), "SHOW INDEX FROM t");
  EXPECT_EQ(canon("SHOW KEYS IN t IN db"), "SHOW INDEX FROM t FROM db");
  EXPECT_EQ(canon("SHOW INDEXES FROM t"), "SHOW INDEX FROM t");
  EXPECT_EQ(canon("SHOW CREATE TABLE db.t"), "SHOW CREATE TABLE db.t");
  EXPECT_EQ(canon("SHOW CREATE DATABASE IF NOT EXISTS d"), "SHOW CREATE DATABASE IF NOT EXISTS d");
  EXPECT_EQ(canon("SHOW CREATE SCHEMA d"), "SHOW CREATE DATABASE d");
  EXPECT_EQ(canon("SHOW VARIABLES LIKE 'lower_case_table_names'"),
            "SHOW VARIABLES LIKE 'lower_case_table_names'");
  EXPECT_EQ(canon("SHOW GLOBAL STATUS"), "SHOW GLOBAL STATUS");
  EXPECT_EQ(canon("SHOW SESSION VARIABLES WHERE Variable_name = 'x'"),
            "SHOW SESSION VARIABLES WHERE (Variable_name = 'x')");
  EXPECT_EQ(canon("SHOW WARNINGS"), "SHOW WARNINGS");
  EXPECT_EQ(canon("SHOW WARNINGS LIMIT 2, 5"), "SHOW WARNINGS LIMIT 5 OFFSET 2");
  EXPECT_EQ(canon("SHOW ERRORS"), "SHOW ERRORS");
  EXPECT_EQ(canon("SHOW STORAGE ENGINES"), "SHOW ENGINES");
  EXPECT_EQ(canon("SHOW FULL PROCESSLIST"), "SHOW FULL PROCESSLIST");
  EXPECT_EQ(canon("SHOW COLLATION LIKE 'utf8%'"), "SHOW COLLATION LIKE 'utf8%'");
  EXPECT_EQ(canon("SHOW CHARSET"), "SHOW CHARACTER SET");
  EXPECT_EQ(canon("SHOW CHARACTER SET WHERE Charset = 'x'"),
            "SHOW CHARACTER SET WHERE (Charset = 'x')");
  EXPECT_EQ(canon("SHOW GRANTS FOR root@localhost"), "SHOW GRANTS FOR 'root'@'localhost'");
  EXPECT_EQ(canon("SHOW TABLE STATUS FROM db LIKE 't'"), "SHOW TABLE STATUS FROM db LIKE 't'");
}

TEST(ParserAdminTest, DescribeExplainKill) {
  EXPECT_EQ(canon("DESCRIBE t"), "DESCRIBE t");
  EXPECT_EQ(canon("desc db.t c"), "DESCRIBE db.t c");
  EXPECT_EQ(canon("EXPLAIN t"), "DESCRIBE t");
  EXPECT_EQ(canon("EXPLAIN SELECT * FROM t WHERE id = 1"),
            "EXPLAIN SELECT * FROM t WHERE (id = 1)");
  EXPECT_EQ(canon("EXPLAIN FORMAT=TREE SELECT 1"), "EXPLAIN FORMAT = TREE SELECT 1");
  EXPECT_EQ(canon("DESCRIBE UPDATE t SET a = 1"), "EXPLAIN UPDATE t SET a = 1");
  EXPECT_EQ(canon("EXPLAIN DELETE FROM t"), "EXPLAIN DELETE FROM t");
  EXPECT_EQ(canon("KILL 42"), "KILL CONNECTION 42");
  EXPECT_EQ(canon("KILL QUERY 7"), "KILL QUERY 7");
  EXPECT_EQ(canon("KILL CONNECTION 7"), "KILL CONNECTION 7");
}

TEST(ParserDmlTest, MultiTableUpdateAndDelete) {
  EXPECT_EQ(canon("UPDATE a JOIN b ON a.x = b.x SET a.y = b.y WHERE b.z = 1"),
            "UPDATE a JOIN b ON (a.x = b.x) SET a.y = b.y WHERE (b.z = 1)");
  EXPECT_EQ(canon("UPDATE a, b SET a.y = 1 WHERE a.x = b.x"),
            "UPDATE a, b SET a.y = 1 WHERE (a.x = b.x)");
  EXPECT_EQ(canon("DELETE a, b.* FROM a JOIN b ON a.x = b.x WHERE a.y > 2"),
            "DELETE a, b FROM a JOIN b ON (a.x = b.x) WHERE (a.y > 2)");
  EXPECT_EQ(canon("DELETE FROM a.* USING a LEFT JOIN b ON a.x = b.x WHERE b.x IS NULL"),
            "DELETE a FROM a LEFT JOIN b ON (a.x = b.x) WHERE (b.x IS NULL)");
  EXPECT_EQ(canon("DELETE FROM t AS x WHERE x.a = 1"), "DELETE FROM t AS x WHERE (x.a = 1)");
  EXPECT_NE(testing::error_of("UPDATE a, b SET a.y = 1 ORDER BY a.x"), "");
  EXPECT_NE(testing::error_of("DELETE a FROM a, b LIMIT 1"), "");
}

TEST(ParserAdminTest, SqlPreparedStatements) {
  EXPECT_EQ(canon("PREPARE s FROM 'SELECT ?'"), "PREPARE s FROM 'SELECT ?'");
  EXPECT_EQ(canon("prepare `my stmt` from @q"), "PREPARE `my stmt` FROM @q");
  EXPECT_EQ(canon("EXECUTE s"), "EXECUTE s");
  EXPECT_EQ(canon("execute s using @a, @b"), "EXECUTE s USING @a, @b");
  EXPECT_EQ(canon("DEALLOCATE PREPARE s"), "DEALLOCATE PREPARE s");
  EXPECT_EQ(canon("DROP PREPARE s"), "DEALLOCATE PREPARE s");
  EXPECT_NE(testing::error_of("PREPARE s FROM 1"), "");
  EXPECT_NE(testing::error_of("EXECUTE s USING 1"), "");
  EXPECT_NE(testing::error_of("DEALLOCATE s"), "");
  EXPECT_EQ(canon("SET @x = 1, @y := 'a'"), "SET @x = 1, @y = 'a'");
}

TEST(ParserAdminTest, UsersAndGrants) {
  EXPECT_EQ(canon("CREATE USER IF NOT EXISTS 'app'@'%' IDENTIFIED BY 'pw'"),
            "CREATE USER IF NOT EXISTS 'app'@'%' IDENTIFIED BY 'pw'");
  EXPECT_EQ(
      canon("CREATE USER bob@localhost IDENTIFIED WITH mysql_native_password BY 'x', 'eve'"),
      "CREATE USER 'bob'@'localhost' IDENTIFIED WITH mysql_native_password BY 'x', 'eve'@'%'");
  EXPECT_EQ(canon("CREATE USER 'u'@'10.0.0.1' IDENTIFIED WITH caching_sha2_password"),
            "CREATE USER 'u'@'10.0.0.1' IDENTIFIED WITH caching_sha2_password");
  EXPECT_EQ(canon("ALTER USER 'root'@'localhost' IDENTIFIED BY 'new'"),
            "ALTER USER 'root'@'localhost' IDENTIFIED BY 'new'");
  EXPECT_EQ(canon("ALTER USER IF EXISTS CURRENT_USER() IDENTIFIED BY 'n'"),
            "ALTER USER IF EXISTS CURRENT_USER IDENTIFIED BY 'n'");
  EXPECT_EQ(canon("DROP USER IF EXISTS 'a'@'%', b"), "DROP USER IF EXISTS 'a'@'%', 'b'@'%'");
  EXPECT_EQ(canon("GRANT ALL PRIVILEGES ON *.* TO 'app'@'%' WITH GRANT OPTION"),
            "GRANT ALL ON *.* TO 'app'@'%' WITH GRANT OPTION");
  EXPECT_EQ(canon("GRANT SELECT, INSERT, UPDATE (a, b) ON db.* TO app"),
            "GRANT SELECT, INSERT, UPDATE (a, b) ON db.* TO 'app'@'%'");
  EXPECT_EQ(canon("GRANT SELECT ON TABLE db.t TO 'r'@'h', 's'"),
            "GRANT SELECT ON db.t TO 'r'@'h', 's'@'%'");
  EXPECT_EQ(canon("GRANT CREATE USER, SHOW DATABASES ON * TO u"),
            "GRANT CREATE USER, SHOW DATABASES ON * TO 'u'@'%'");
  EXPECT_EQ(canon("REVOKE INSERT ON db.t FROM 'u'@'%'"), "REVOKE INSERT ON db.t FROM 'u'@'%'");
  EXPECT_EQ(canon("FLUSH PRIVILEGES"), "FLUSH PRIVILEGES");
  EXPECT_EQ(canon("FLUSH LOCAL TABLES, STATUS"), "FLUSH LOCAL TABLES, STATUS");
}

TEST(ParserScriptTest, MultiStatementSplitting) {
  std::string_view text = "SELECT ';' ; /* ; */ INSERT INTO t VALUES (1) -- ;\n; SELECT `a;b`;  ";
  ScriptParser script(text);
  std::vector<std::string> got;
  while (script.has_next()) {
    ParsedStatement s = script.next();
    ASSERT_TRUE(s.ok()) << s.error->message;
    got.push_back(to_sql(*s.statement) + " | " + std::string(s.text));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"SELECT ';' | SELECT ';'",
                                           "INSERT INTO t VALUES (1) | INSERT INTO t VALUES (1)",
                                           "SELECT `a;b` | SELECT `a;b`"}));
}

TEST(ParserScriptTest, VersionedCommentsAreSql) {
  EXPECT_EQ(canon("/*!40101 SET NAMES utf8mb4 */"), "SET NAMES utf8mb4");
  EXPECT_EQ(canon("SELECT 1 /*!99999 + 1 */"), "SELECT 1");
  EXPECT_EQ(canon("CREATE TABLE t (a INT) /*!50100 ENGINE=ndbcluster */"),
            "CREATE TABLE t (a INT) ENGINE = ndbcluster");
}

TEST(ParserScriptTest, EmptyQuery) {
  ParsedStatement p = parse_statement("  -- nothing\n ");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error->mysql_errno, kErrEmptyQuery);
  EXPECT_EQ(p.error->message, "Query was empty");
  EXPECT_EQ(p.error->sqlstate, "42000");
}

}  // namespace
}  // namespace duo::sql

namespace duo::sql::testing {
namespace {

TEST(ParserLoadDataTest, EveryClauseAndItsDefaults) {
  // The printer writes the separators as escaped string literals (a tab as itself).
  EXPECT_EQ(canon("load data local infile 'a.txt' into table t"),
            "LOAD DATA LOCAL INFILE 'a.txt' INTO TABLE t FIELDS TERMINATED BY '\t' ENCLOSED BY "
            "'' ESCAPED BY '\\\\' LINES STARTING BY '' TERMINATED BY '\\n'");
  EXPECT_EQ(canon("LOAD DATA LOW_PRIORITY LOCAL INFILE '/x.csv' REPLACE INTO TABLE d.t "
                  "CHARACTER SET utf8mb4 COLUMNS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' "
                  "ESCAPED BY '' LINES STARTING BY '>' TERMINATED BY '\\r\\n' IGNORE 2 ROWS "
                  "(a, @v, `b c`) SET a = @v + 1, d = NOW()"),
            "LOAD DATA LOCAL INFILE '/x.csv' REPLACE INTO TABLE d.t CHARACTER SET utf8mb4 FIELDS "
            "TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '' LINES STARTING BY '>' "
            "TERMINATED BY '\\r\\n' IGNORE 2 LINES (a, @v, `b c`) SET a = (@v + 1), d = NOW()");
  EXPECT_EQ(canon("LOAD DATA INFILE 'f' IGNORE INTO TABLE t"),
            "LOAD DATA INFILE 'f' IGNORE INTO TABLE t FIELDS TERMINATED BY '\t' ENCLOSED BY '' "
            "ESCAPED BY '\\\\' LINES STARTING BY '' TERMINATED BY '\\n'");
}

TEST(ParserLoadDataTest, MalformedFormsAreSyntaxErrors) {
  EXPECT_NE(error_of("LOAD DATA LOCAL INFILE 'a' INTO t"), "OK");                    // TABLE
  EXPECT_NE(error_of("LOAD DATA LOCAL INFILE 'a' INTO TABLE t FIELDS"), "OK");        // empty
  EXPECT_NE(error_of("LOAD DATA INFILE 'a' INTO TABLE t FIELDS ENCLOSED BY 'ab'"), "OK");
  EXPECT_NE(error_of("LOAD DATA INFILE 'a' INTO TABLE t IGNORE x LINES"), "OK");
  EXPECT_NE(error_of("LOAD XML INFILE 'a' INTO TABLE t"), "OK");
}

}  // namespace
}  // namespace duo::sql::testing
