// Tests of NDB_TABLE options in table comments: NDB's syntax and error texts, what
// CREATE TABLE and ALTER TABLE do with READ_BACKUP, and the comment's round trip
// through sql_definition, the cluster table's flags and SHOW CREATE TABLE.
#include "sql-frontend/catalog/ndb_table_options.h"

#include <gtest/gtest.h>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/catalog/table_alter.h"
#include "sql-frontend/parser/parser.h"

namespace duo::sql::catalog {
namespace {

NdbTableOptions parsed(std::string_view comment) {
  Result<NdbTableOptions> options = parse_ndb_table_options(comment);
  EXPECT_TRUE(options.ok()) << comment << ": " << options.status().message();
  return options.ok() ? *options : NdbTableOptions{};
}

std::string error_of(std::string_view comment) {
  Result<NdbTableOptions> options = parse_ndb_table_options(comment);
  EXPECT_FALSE(options.ok()) << comment;
  return options.ok() ? "" : options.status().message();
}

TEST(NdbTableOptionsTest, CommentsWithoutTheKeywordCarryNoOptions) {
  for (std::string_view comment :
       {"", "just a comment", "ndb_table=READ_BACKUP=1", "NDB_TABLE READ_BACKUP=1"}) {
    const NdbTableOptions options = parsed(comment);
    EXPECT_FALSE(options.read_backup) << comment << ": the prefix is case-sensitive, as NDB's";
    EXPECT_FALSE(options.nologging);
    EXPECT_FALSE(options.fully_replicated);
    EXPECT_FALSE(options.partition_balance);
  }
}

TEST(NdbTableOptionsTest, ParsesEveryOptionNdbAccepts) {
  EXPECT_EQ(parsed("NDB_TABLE=READ_BACKUP=1").read_backup, true);
  EXPECT_EQ(parsed("NDB_TABLE=READ_BACKUP=0").read_backup, false);
  EXPECT_EQ(parsed("NDB_TABLE=read_backup").read_backup, true) << "bare name: 1, any case";
  const NdbTableOptions all = parsed(
      "before NDB_TABLE=NOLOGGING=1,READ_BACKUP=0,FULLY_REPLICATED=0,"
      "PARTITION_BALANCE=for_ra_by_ldm_x_2 after, READ_BACKUP=1");
  EXPECT_EQ(all.nologging, true);
  EXPECT_EQ(all.read_backup, false) << "the list ends at the first space";
  EXPECT_EQ(all.fully_replicated, false);
  EXPECT_EQ(all.partition_balance, "FOR_RA_BY_LDM_X_2");
  EXPECT_EQ(parsed("NDB_TABLE=READ_BACKUP=1,").read_backup, true);
}

TEST(NdbTableOptionsTest, SyntaxErrorsAreWordedAsNdbWordsThem) {
  EXPECT_EQ(error_of("NDB_TABLE=READ_BACKUP=2"), "NDB_TABLE= : invalid value '2' for READ_BACKUP");
  EXPECT_EQ(error_of("NDB_TABLE=READ_BACKUP=10"),
            "NDB_TABLE= : invalid value '10' for READ_BACKUP");
  EXPECT_EQ(error_of("NDB_TABLE=FOO=1"), "NDB_TABLE= : unknown modifier: FOO=1");
  EXPECT_EQ(error_of("NDB_TABLE=READ_BACKUPS=1"), "NDB_TABLE= : unknown modifier: READ_BACKUPS=1");
  EXPECT_EQ(error_of("NDB_TABLE=READ_BACKUP=1,READ_BACKUP=0"),
            "NDB_TABLE= : modifier READ_BACKUP specified twice");
  EXPECT_EQ(error_of("NDB_TABLE=PARTITION_BALANCE=FOR_EVERYONE"),
            "NDB_TABLE= : invalid value 'FOR_EVERYONE' for PARTITION_BALANCE");
}

SqlTable create(const std::string& sql) {
  ParsedStatement statement = parse_statement(sql);
  EXPECT_TRUE(statement.ok()) << sql;
  const auto& create = statement.statement->as<CreateTableStatement>();
  SqlTable table = table_from_create(create, "db1");
  std::vector<std::string> warnings;
  apply_table_comment(&table, create.options.comment, /*read_backup_default=*/false, &warnings);
  return table;
}

uint16_t create_error(const std::string& sql, std::string* message) {
  try {
    create(sql);
  } catch (const SqlException& e) {
    *message = e.what();
    return e.code();
  }
  return 0;
}

TEST(NdbTableOptionsTest, CreateTableTakesReadBackupFromTheCommentElseTheDefault) {
  EXPECT_TRUE(
      create("CREATE TABLE t (a INT PRIMARY KEY) COMMENT='NDB_TABLE=READ_BACKUP=1'").read_backup);
  EXPECT_FALSE(
      create("CREATE TABLE t (a INT PRIMARY KEY) COMMENT='NDB_TABLE=READ_BACKUP=0'").read_backup);
  EXPECT_FALSE(create("CREATE TABLE t (a INT PRIMARY KEY) COMMENT='hello'").read_backup);

  ParsedStatement statement = parse_statement("CREATE TABLE t (a INT PRIMARY KEY)");
  ASSERT_TRUE(statement.ok());
  const auto& plain = statement.statement->as<CreateTableStatement>();
  SqlTable table = table_from_create(plain, "db1");
  std::vector<std::string> warnings;
  apply_table_comment(&table, plain.options.comment, /*read_backup_default=*/true, &warnings);
  EXPECT_TRUE(table.read_backup) << "ndb_read_backup=ON";
  EXPECT_TRUE(table.comment.empty()) << "the default shows no comment, as in NDB";
  EXPECT_TRUE(warnings.empty());

  warnings.clear();
  apply_table_comment(&table, "NDB_TABLE=READ_BACKUP=0,PARTITION_BALANCE=FOR_RP_BY_NODE", true,
                      &warnings);
  EXPECT_FALSE(table.read_backup);
  ASSERT_EQ(warnings.size(), 1u) << "PARTITION_BALANCE is accepted, with a warning";
}

TEST(NdbTableOptionsTest, CreateTableRefusesWhatNdbRefusesAndFullReplication) {
  std::string message;
  EXPECT_EQ(create_error("CREATE TABLE t (a INT PRIMARY KEY) COMMENT='NDB_TABLE=READ_BACKUP=2'",
                         &message),
            1478);
  EXPECT_EQ(message,
            "Table storage engine 'ndbcluster' does not support the create option 'Syntax error "
            "in COMMENT modifier'");
  EXPECT_EQ(
      create_error("CREATE TABLE t (a INT PRIMARY KEY) COMMENT='NDB_TABLE=FULLY_REPLICATED=1'",
                   &message),
      1478);
  EXPECT_EQ(
      create_error("CREATE TABLE t (a INT PRIMARY KEY) COMMENT='NDB_TABLE=FULLY_REPLICATED=0'",
                   &message),
      0);
}

TEST(NdbTableOptionsTest, TheOptionTravelsInFlagsAndTheCommentInTheSqlDefinition) {
  const SqlTable table = create(
      "CREATE TABLE t (a INT PRIMARY KEY, b INT) COMMENT='it''s NDB_TABLE=READ_BACKUP=1 x,y'");
  EXPECT_EQ(table.comment, "it's NDB_TABLE=READ_BACKUP=1 x,y");
  const ::duo::protocol::TableDef def = to_table_def(table);
  EXPECT_EQ(def.flags, ::duo::protocol::kTableReadBackup);
  Result<SqlTable> back = from_table_def(def);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->read_backup);
  EXPECT_EQ(back->comment, table.comment);
  EXPECT_EQ(show_create_table_text(*back, std::nullopt),
            "CREATE TABLE `t` (\n  `a` int NOT NULL,\n  `b` int DEFAULT NULL,\n"
            "  PRIMARY KEY (`a`)\n) ENGINE=ndbcluster DEFAULT CHARSET=utf8mb4 "
            "COLLATE=utf8mb4_0900_ai_ci COMMENT='it''s NDB_TABLE=READ_BACKUP=1 x,y'");

  ::duo::protocol::TableDef plain = to_table_def(create("CREATE TABLE t (a INT PRIMARY KEY)"));
  EXPECT_EQ(plain.flags, 0u);
  EXPECT_EQ(plain.sql_definition.find("comment"), std::string::npos)
      << "no comment record without a comment";
}

TableChange alter(const SqlTable& table, const std::string& sql) {
  ParsedStatement statement = parse_statement(sql);
  EXPECT_TRUE(statement.ok()) << sql;
  return plan_alter(table, statement.statement->as<AlterTableStatement>());
}

TEST(NdbTableOptionsTest, AlterTableCommentChangesTheOptionAndTheTextInPlace) {
  const SqlTable table =
      create("CREATE TABLE t (a INT PRIMARY KEY) COMMENT='NDB_TABLE=READ_BACKUP=1'");
  TableChange same = alter(table, "ALTER TABLE t COMMENT='NDB_TABLE=NOLOGGING=1'");
  EXPECT_TRUE(same.table.read_backup) << "left out: the table keeps its value";
  EXPECT_FALSE(same.copy_rows);
  EXPECT_EQ(same.table.comment, "NDB_TABLE=NOLOGGING=1");
  TableChange off = alter(table, "ALTER TABLE t COMMENT='NDB_TABLE=READ_BACKUP=0'");
  EXPECT_FALSE(off.table.read_backup);
  EXPECT_FALSE(off.copy_rows);
  EXPECT_THROW(alter(table, "ALTER TABLE t COMMENT='NDB_TABLE=NOPE'"), SqlException);
}

}  // namespace
}  // namespace duo::sql::catalog
