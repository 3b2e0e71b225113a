// Tests of accounts and privileges: privilege names and levels, GRANT/REVOKE on a
// record, the grants encoding round trip, host matching and account choice at login,
// and MySQL 8.0's SHOW GRANTS lines.
#include "sql-frontend/catalog/user_record.h"

#include <gtest/gtest.h>

namespace duo::sql::catalog {
namespace {

UserRecord account(const std::string& user, const std::string& host) {
  UserRecord record;
  record.user = user;
  record.host = host;
  return record;
}

TEST(UserRecordTest, PrivilegeNamesAndLevels) {
  EXPECT_EQ(privilege_bit("SELECT"), kSelectPrivilege);
  EXPECT_EQ(privilege_bit("CREATE USER"), kCreateUserPrivilege);
  EXPECT_EQ(privilege_bit("INDEX"), kIndexPrivilege);
  EXPECT_EQ(privilege_bit("ALTER"), kAlterPrivilege);
  EXPECT_EQ(privilege_bit("FROBNICATE"), 0u);
  EXPECT_EQ(privilege_name(kDropPrivilege), "DROP");
  // Table-level privileges are database-level ones, which are global ones.
  const PrivilegeSet global = all_privileges(PrivilegeLevel::kGlobal);
  const PrivilegeSet database = all_privileges(PrivilegeLevel::kDatabase);
  const PrivilegeSet table = all_privileges(PrivilegeLevel::kTable);
  EXPECT_EQ(database & ~global, 0u);
  EXPECT_EQ(table & ~database, 0u);
  EXPECT_EQ(database & kCreateUserPrivilege, 0u);
  EXPECT_EQ(table & privilege_bit("LOCK TABLES"), 0u);
}

TEST(UserRecordTest, GrantAndRevokeAtEachLevel) {
  UserRecord bob = account("bob", "%");
  bob.grants.push_back(Grant{});
  bob.grant("db1", "*", kSelectPrivilege | kInsertPrivilege, false);
  bob.grant("db2", "t1", kUpdatePrivilege, false);
  EXPECT_EQ(bob.privileges_on("db1", "t9"), kSelectPrivilege | kInsertPrivilege);
  EXPECT_EQ(bob.privileges_on("db2", "t1"), kUpdatePrivilege);
  EXPECT_EQ(bob.privileges_on("db2", "t2"), 0u);
  EXPECT_EQ(bob.privileges_on("db3", "t1"), 0u);
  EXPECT_TRUE(bob.has_any_privilege_in("db2"));
  EXPECT_FALSE(bob.has_any_privilege_in("db3"));
  EXPECT_FALSE(bob.has_global(kSelectPrivilege));

  bob.revoke("db1", "*", kInsertPrivilege, false);
  EXPECT_EQ(bob.privileges_on("db1", "t9"), kSelectPrivilege);
  bob.revoke("db2", "t1", kUpdatePrivilege, false);
  EXPECT_FALSE(bob.has_any_privilege_in("db2"));
  EXPECT_EQ(bob.grants.size(), 2u);  // the global grant stays, empty

  bob.grant("*", "*", kSelectPrivilege, false);
  EXPECT_TRUE(bob.has_global(kSelectPrivilege));
  EXPECT_EQ(bob.privileges_on("anything", "t"), kSelectPrivilege);
}

TEST(UserRecordTest, GrantsEncodingRoundTrips) {
  std::vector<Grant> grants = {
      Grant{"*", "*", kSelectPrivilege, true},
      Grant{"d%b\t1", "*", all_privileges(PrivilegeLevel::kDatabase), false},
      Grant{"db", "t\n1", kDeletePrivilege, false}};
  Result<std::vector<Grant>> decoded = decode_grants(encode_grants(grants));
  ASSERT_TRUE(decoded.ok());
  ASSERT_EQ(decoded->size(), 3u);
  for (size_t i = 0; i < grants.size(); ++i) {
    EXPECT_EQ((*decoded)[i].db, grants[i].db);
    EXPECT_EQ((*decoded)[i].table, grants[i].table);
    EXPECT_EQ((*decoded)[i].privileges, grants[i].privileges);
    EXPECT_EQ((*decoded)[i].grant_option, grants[i].grant_option);
  }
  EXPECT_FALSE(decode_grants("").ok());
  EXPECT_FALSE(decode_grants("duo-grants 2\n").ok());
  EXPECT_FALSE(decode_grants("duo-grants 1\ngrant\t*\t*\tx1\t0\n").ok());
  EXPECT_FALSE(decode_grants("duo-grants 1\ngrant\t%4\t*\t1\t0\n").ok());
}

TEST(UserRecordTest, CredentialHexRoundTrips) {
  const std::string bytes("\x00\x01\xfe\xff", 4);
  EXPECT_EQ(to_hex(bytes), "0001FEFF");
  EXPECT_EQ(from_hex("0001feff"), bytes);
  EXPECT_FALSE(from_hex("0").has_value());
  EXPECT_FALSE(from_hex("zz").has_value());
}

TEST(UserRecordTest, HostPatterns) {
  EXPECT_TRUE(host_matches("%", "10.1.2.3"));
  EXPECT_TRUE(host_matches("localhost", "127.0.0.1"));
  EXPECT_TRUE(host_matches("localhost", "::1"));
  EXPECT_FALSE(host_matches("localhost", "10.1.2.3"));
  EXPECT_TRUE(host_matches("127.0.0.1", "127.0.0.1"));
  EXPECT_TRUE(host_matches("10.1.%", "10.1.2.3"));
  EXPECT_FALSE(host_matches("10.1.%", "10.2.2.3"));
  EXPECT_TRUE(host_matches("10.1.2._", "10.1.2.3"));
  EXPECT_FALSE(host_matches("10.1.2._", "10.1.2.33"));
}

TEST(UserRecordTest, MostSpecificHostWins) {
  std::vector<UserRecord> records = {account("bob", "%"), account("bob", "localhost"),
                                     account("bob", "10.%"), account("amy", "%")};
  const UserRecord* local = match_account(records, "bob", "127.0.0.1");
  ASSERT_NE(local, nullptr);
  EXPECT_EQ(local->host, "localhost");
  const UserRecord* lan = match_account(records, "bob", "10.0.0.7");
  ASSERT_NE(lan, nullptr);
  EXPECT_EQ(lan->host, "10.%");
  const UserRecord* remote = match_account(records, "bob", "192.168.1.1");
  ASSERT_NE(remote, nullptr);
  EXPECT_EQ(remote->host, "%");
  EXPECT_EQ(match_account(records, "carl", "127.0.0.1"), nullptr);
  std::vector<UserRecord> only_local = {account("dan", "localhost")};
  EXPECT_EQ(match_account(only_local, "dan", "10.0.0.7"), nullptr);
}

TEST(UserRecordTest, ShowGrantsLinesAsMysql) {
  UserRecord bob = account("bob", "%");
  ASSERT_EQ(show_grants_lines(bob).size(), 1u);
  EXPECT_EQ(show_grants_lines(bob)[0], "GRANT USAGE ON *.* TO `bob`@`%`");
  bob.grants.push_back(Grant{});
  bob.grant("db1", "*", all_privileges(PrivilegeLevel::kDatabase), false);
  bob.grant("db1", "t1", kSelectPrivilege | kInsertPrivilege, true);
  bob.grant("db0", "*", kDeletePrivilege | kSelectPrivilege, false);
  const std::vector<std::string> lines = show_grants_lines(bob);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "GRANT USAGE ON *.* TO `bob`@`%`");
  EXPECT_EQ(lines[1], "GRANT SELECT, DELETE ON `db0`.* TO `bob`@`%`");
  EXPECT_EQ(lines[2], "GRANT ALL PRIVILEGES ON `db1`.* TO `bob`@`%`");
  EXPECT_EQ(lines[3], "GRANT SELECT, INSERT ON `db1`.`t1` TO `bob`@`%` WITH GRANT OPTION");
  UserRecord amy = account("amy", "localhost");
  amy.grants.push_back(Grant{"*", "*", kSelectPrivilege | kProcessPrivilege, false});
  EXPECT_EQ(show_grants_lines(amy)[0], "GRANT SELECT, PROCESS ON *.* TO `amy`@`localhost`");
}

}  // namespace
}  // namespace duo::sql::catalog
