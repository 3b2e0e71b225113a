// UserRecord: one MySQL account as duo_sqld keeps it — user, host pattern, plugin,
// credential and its grants — with the pure logic around accounts: privilege names and
// levels, GRANT/REVOKE on a record, the grants encoding stored in the cluster, host
// matching at login, MySQL's SHOW GRANTS lines and the privilege question "may this
// account do P on db.t?". The cluster side (the table "mysql/def/user") is
// user_catalog.h.
//
// Grants encoding (text, version 1, one grant per line, fields separated by TAB and
// percent-escaped like sql_table.h's blob: '%', TAB, LF as %25 %09 %0A):
//   duo-grants 1
//   grant <db|*> <table|*> <privilege bits, decimal> <grant option 0|1>
// "* *" is the global level, "db *" a database, "db t" one table.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"

namespace duo::sql::catalog {

// A set of static privileges, one bit each (privilege_names() order, MySQL's).
using PrivilegeSet = uint64_t;

enum class PrivilegeLevel : uint8_t { kGlobal, kDatabase, kTable };

// Privileges that statements check; the other static privileges exist only to be
// granted, revoked and shown as MySQL does.
inline constexpr PrivilegeSet kSelectPrivilege = 1u << 0;
inline constexpr PrivilegeSet kInsertPrivilege = 1u << 1;
inline constexpr PrivilegeSet kUpdatePrivilege = 1u << 2;
inline constexpr PrivilegeSet kDeletePrivilege = 1u << 3;
inline constexpr PrivilegeSet kCreatePrivilege = 1u << 4;
inline constexpr PrivilegeSet kDropPrivilege = 1u << 5;
inline constexpr PrivilegeSet kProcessPrivilege = 1u << 8;
inline constexpr PrivilegeSet kIndexPrivilege = 1u << 11;
inline constexpr PrivilegeSet kAlterPrivilege = 1u << 12;
inline constexpr PrivilegeSet kShowDatabasesPrivilege = 1u << 13;
inline constexpr PrivilegeSet kSuperPrivilege = 1u << 14;
inline constexpr PrivilegeSet kCreateUserPrivilege = 1u << 24;

// The bit of privilege `name` (upper case, words separated by one space, as the parser
// gives them), or 0 for a name MySQL 8.0 does not have as a static privilege.
PrivilegeSet privilege_bit(std::string_view name);
// The name of a single-bit privilege set ("SELECT").
std::string privilege_name(PrivilegeSet bit);
// What ALL [PRIVILEGES] means at `level`.
PrivilegeSet all_privileges(PrivilegeLevel level);

struct Grant {
  std::string db = "*";     // "*": every database (global level)
  std::string table = "*";  // "*": every table of db
  PrivilegeSet privileges = 0;
  bool grant_option = false;

  PrivilegeLevel level() const {
    if (db == "*") return PrivilegeLevel::kGlobal;
    return table == "*" ? PrivilegeLevel::kDatabase : PrivilegeLevel::kTable;
  }
};

struct UserRecord {
  std::string user;
  std::string host = "%";
  std::string plugin = "mysql_native_password";
  std::string credential;     // raw bytes (user_directory.h); empty: no password
  std::vector<Grant> grants;  // the global grant first (possibly empty), then by db, table

  // Everything the account may do on `db`.`table` (`table` empty: the database itself):
  // the union of its global, database and table grants.
  PrivilegeSet privileges_on(std::string_view db, std::string_view table) const;
  // Whether any privilege at all reaches `db` (USE db, SHOW DATABASES).
  bool has_any_privilege_in(std::string_view db) const;
  bool has_global(PrivilegeSet privileges) const;

  // Adds `privileges` at db.table; with_grant_option adds GRANT OPTION there too.
  void grant(const std::string& db, const std::string& table, PrivilegeSet privileges,
             bool with_grant_option);
  // Removes them; a level left with nothing is dropped (the global one stays).
  void revoke(const std::string& db, const std::string& table, PrivilegeSet privileges,
              bool grant_option);
};

// `user`@`host` quoted as MySQL's error messages do: 'u'@'h'.
std::string account_text(std::string_view user, std::string_view host);

std::string encode_grants(const std::vector<Grant>& grants);
// kCorruption for a malformed text.
Result<std::vector<Grant>> decode_grants(std::string_view text);

// True when a client at `client_host` may use an account of host pattern `pattern`:
// LIKE-style '%' and '_' wildcards; "localhost" also covers the loopback addresses.
bool host_matches(std::string_view pattern, std::string_view client_host);
// The account `user` at `client_host` uses among `records`, in MySQL's order (hosts
// without wildcards before patterns, '%' last); nullptr when none matches.
const UserRecord* match_account(const std::vector<UserRecord>& records, std::string_view user,
                                std::string_view client_host);

// SHOW GRANTS FOR the record: MySQL 8.0's lines ("GRANT USAGE ON *.* TO `u`@`h`",
// "GRANT SELECT, INSERT ON `db`.* TO `u`@`h`", ...). A global ALL is shown as the
// static privileges only (MySQL adds a second line of dynamic privileges).
std::vector<std::string> show_grants_lines(const UserRecord& record);

// Hex text of raw credential bytes, and back (nullopt for malformed hex).
std::string to_hex(std::string_view bytes);
std::optional<std::string> from_hex(std::string_view hex);

}  // namespace duo::sql::catalog
