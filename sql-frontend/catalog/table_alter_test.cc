// Tests of table-shape changes (ALTER TABLE, CREATE/DROP INDEX) on SqlTable definitions
// with MySQL's errors, and of SHOW CREATE TABLE's text.
#include "sql-frontend/catalog/table_alter.h"

#include <gtest/gtest.h>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/parser/parser.h"

namespace duo::sql::catalog {
namespace {

SqlTable create(const std::string& sql) {
  ParsedStatement parsed = parse_statement(sql);
  EXPECT_TRUE(parsed.ok()) << sql;
  return table_from_create(parsed.statement->as<CreateTableStatement>(), "db1");
}

TableChange alter(const SqlTable& table, const std::string& sql) {
  ParsedStatement parsed = parse_statement(sql);
  EXPECT_TRUE(parsed.ok()) << sql;
  return plan_alter(table, parsed.statement->as<AlterTableStatement>());
}

uint16_t alter_error(const SqlTable& table, const std::string& sql) {
  try {
    alter(table, sql);
  } catch (const SqlException& e) {
    return e.code();
  }
  return 0;
}

const char* kBase =
    "CREATE TABLE t1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT '0',"
    " c CHAR(120) COLLATE utf8mb4_bin NOT NULL DEFAULT '', name VARCHAR(20),"
    " PRIMARY KEY (id), KEY k_1 (k))";

TEST(TableAlterTest, IndexChangesKeepTheRows) {
  const SqlTable t = create(kBase);
  TableChange change = alter(t, "ALTER TABLE t1 ADD UNIQUE INDEX uk (name, k), DROP INDEX k_1");
  EXPECT_FALSE(change.copy_rows);
  ASSERT_EQ(change.table.indexes.size(), 2u);
  EXPECT_EQ(change.table.indexes[1].name, "uk");
  EXPECT_EQ(change.table.indexes[1].kind, SqlIndexKind::kUnique);
  EXPECT_EQ(change.table.indexes[1].columns, (std::vector<uint16_t>{3, 1}));
  // Unnamed: after the first column, then _2.
  change = alter(t, "ALTER TABLE t1 ADD KEY (name), ADD KEY (name)");
  EXPECT_EQ(change.table.indexes[2].name, "name");
  EXPECT_EQ(change.table.indexes[3].name, "name_2");
}

TEST(TableAlterTest, IndexErrorsAreMySqls) {
  const SqlTable t = create(kBase);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 ADD INDEX k_1 (name)"), 1061);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 ADD INDEX K_1 (name)"), 1061) << "case-insensitive";
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 ADD INDEX x (nope)"), 1072);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 DROP INDEX nope"), 1091);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 ADD PRIMARY KEY (k)"), 1068);
  // ENGINE= is the executor's (engine_substitution.h: 1266 or 1286 by sql_mode), not the plan's.
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 ENGINE=MyISAM"), 0);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 ENGINE=InnoDB"), 0);
}

TEST(TableAlterTest, ColumnChangesCopyRowsAndRenumberIndexes) {
  const SqlTable t = create(kBase);
  TableChange change = alter(t, "ALTER TABLE t1 ADD COLUMN z INT DEFAULT 7 FIRST");
  EXPECT_TRUE(change.copy_rows);
  ASSERT_EQ(change.table.columns.size(), 5u);
  EXPECT_EQ(change.table.columns[0].name, "z");
  EXPECT_EQ(change.origin, (std::vector<int>{-1, 0, 1, 2, 3}));
  EXPECT_EQ(change.table.primary_key().columns, std::vector<uint16_t>{1});
  EXPECT_EQ(change.table.indexes[1].columns, std::vector<uint16_t>{2});

  change = alter(t, "ALTER TABLE t1 ADD COLUMN y INT AFTER k, DROP COLUMN c");
  EXPECT_EQ(change.origin, (std::vector<int>{0, 1, -1, 3}));
  EXPECT_EQ(change.table.columns[2].name, "y");

  // Dropping an indexed column takes it out of the index; an empty index goes.
  change = alter(t, "ALTER TABLE t1 DROP COLUMN k");
  EXPECT_EQ(change.table.indexes.size(), 1u);

  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 ADD COLUMN k INT"), 1060);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 ADD COLUMN q INT AFTER nope"), 1054);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 DROP COLUMN nope"), 1091);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 DROP COLUMN id"), 1235);
  const SqlTable one = create("CREATE TABLE t2 (id INT PRIMARY KEY)");
  EXPECT_EQ(alter_error(one, "ALTER TABLE t2 DROP COLUMN id"), 1090);
}

TEST(TableAlterTest, ModifyAndChangeRedefineAndMoveColumns) {
  const SqlTable t = create(kBase);
  TableChange change = alter(t, "ALTER TABLE t1 MODIFY name VARCHAR(40) NOT NULL");
  EXPECT_TRUE(change.copy_rows);
  EXPECT_EQ(change.origin, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(change.table.columns[3].declared_type, "varchar(40)");
  EXPECT_FALSE(change.table.columns[3].nullable);

  // CHANGE renames; FIRST / AFTER move the column and the index follows it.
  change = alter(t, "ALTER TABLE t1 CHANGE k kk BIGINT NOT NULL AFTER name");
  EXPECT_EQ(change.origin, (std::vector<int>{0, 2, 3, 1}));
  EXPECT_EQ(change.table.columns[3].name, "kk");
  EXPECT_EQ(change.table.indexes[1].columns, std::vector<uint16_t>{3});
  change = alter(t, "ALTER TABLE t1 MODIFY name VARCHAR(20) FIRST");
  EXPECT_EQ(change.origin, (std::vector<int>{3, 0, 1, 2}));
  EXPECT_EQ(change.table.primary_key().columns, std::vector<uint16_t>{1});
  EXPECT_EQ(change.table.indexes[1].columns, std::vector<uint16_t>{2});
  change = alter(t, "ALTER TABLE t1 MODIFY id INT AUTO_INCREMENT AFTER k");
  EXPECT_EQ(change.origin, (std::vector<int>{1, 0, 2, 3}));
  // A key column stays NOT NULL.
  EXPECT_FALSE(change.table.columns[1].nullable);
  EXPECT_EQ(change.table.primary_key().columns, std::vector<uint16_t>{1});

  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 MODIFY nope INT"), 1054);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 CHANGE nope x INT"), 1054);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 CHANGE k name INT"), 1060);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 MODIFY k INT AFTER k"), 1054);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 MODIFY k INT PRIMARY KEY"), 1068);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 MODIFY id INT NULL"), 1171);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 MODIFY k INT AUTO_INCREMENT"), 1235);
}

TEST(TableAlterTest, DefaultsAndRenameChangeOnlyTheDefinition) {
  const SqlTable t = create(kBase);
  TableChange change = alter(t, "ALTER TABLE t1 ALTER COLUMN k SET DEFAULT 5");
  EXPECT_FALSE(change.copy_rows);
  EXPECT_EQ(change.table.columns[1].default_value, std::optional<std::string>("5"));
  change = alter(t, "ALTER TABLE t1 ALTER k DROP DEFAULT");
  EXPECT_FALSE(change.copy_rows);
  EXPECT_FALSE(change.table.columns[1].has_default);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 ALTER k SET DEFAULT NULL"), 1067);
  EXPECT_EQ(alter_error(t, "ALTER TABLE t1 ALTER nope DROP DEFAULT"), 1054);

  change = alter(t, "ALTER TABLE t1 RENAME TO db2.t9");
  EXPECT_FALSE(change.copy_rows);
  ASSERT_TRUE(change.new_name.has_value());
  EXPECT_EQ(change.new_name->name.name, "t9");
  EXPECT_EQ(change.new_name->db->name, "db2");
}

TEST(TableAlterTest, ShowCreateTableIsMySqls) {
  SqlTable t = create(
      "CREATE TABLE t1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT '0',"
      " c CHAR(120) COLLATE utf8mb4_bin NOT NULL DEFAULT '', name VARCHAR(20),"
      " d DECIMAL(10,2) DEFAULT 1.50, b BLOB, ts TIMESTAMP NULL, n BIGINT UNSIGNED NOT NULL,"
      " PRIMARY KEY (id), KEY k_1 (k), UNIQUE KEY un (name), UNIQUE KEY uk (k, n))");
  EXPECT_EQ(show_create_table_text(t, 5),
            "CREATE TABLE `t1` (\n"
            "  `id` int NOT NULL AUTO_INCREMENT,\n"
            "  `k` int NOT NULL DEFAULT '0',\n"
            "  `c` char(120) COLLATE utf8mb4_bin NOT NULL DEFAULT '',\n"
            "  `name` varchar(20) DEFAULT NULL,\n"
            "  `d` decimal(10,2) DEFAULT '1.50',\n"
            "  `b` blob,\n"
            "  `ts` timestamp NULL DEFAULT NULL,\n"
            "  `n` bigint unsigned NOT NULL,\n"
            "  PRIMARY KEY (`id`),\n"
            "  UNIQUE KEY `uk` (`k`,`n`),\n"
            "  UNIQUE KEY `un` (`name`),\n"
            "  KEY `k_1` (`k`)\n"
            ") ENGINE=ndbcluster AUTO_INCREMENT=5 DEFAULT CHARSET=utf8mb4 "
            "COLLATE=utf8mb4_0900_ai_ci");
  EXPECT_EQ(show_create_table_text(create("CREATE TABLE `a``b` (id INT PRIMARY KEY)"), 1),
            "CREATE TABLE `a``b` (\n"
            "  `id` int NOT NULL,\n"
            "  PRIMARY KEY (`id`)\n"
            ") ENGINE=ndbcluster DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci");
}

}  // namespace
}  // namespace duo::sql::catalog
