// Account statements: CREATE/DROP/ALTER USER, GRANT, REVOKE, SET PASSWORD, over the
// accounts in the cluster (catalog/user_catalog.h). Privileges to run them are checked
// before (privilege_check.h). See admin_statements.h.
//
// Differences from MySQL 8.0 kept on purpose: accounts created without IDENTIFIED WITH
// use mysql_native_password (MySQL's default is caching_sha2_password, whose full
// authentication needs TLS or RSA keys that duo_sqld does not have); GRANT and REVOKE
// read and rewrite an account's row in two transactions, so two GRANTs to one account
// at the same instant through two sqld may lose one.
#include <cctype>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/admin_statements.h"
#include "sql-frontend/executor/cluster_user_directory.h"
#include "sql-frontend/executor/privilege_check.h"
#include "sql-frontend/protocol/auth_scramble.h"

namespace duo::sql::executor {

using catalog::PrivilegeLevel;
using catalog::PrivilegeSet;
using catalog::UserRecord;

namespace {

// The account a user name means: CURRENT_USER is the session's own account.
UserName resolve_user(StatementContext& context, const UserName& name) {
  if (!name.current_user) return name;
  UserName self;
  self.user = context.session.user;
  const std::optional<UserRecord> account = session_account(context);
  self.host = account ? account->host : context.session.host;
  self.host_given = true;
  return self;
}

void check_name_lengths(const UserName& name) {
  if (name.user.size() > catalog::kUserNameLengthMax) {
    throw SqlException(1470, "HY000",
                       "String '" + name.user +
                           "' is too long for user name (should be no longer than " +
                           std::to_string(catalog::kUserNameLengthMax) + ")");
  }
  if (name.host.size() > catalog::kHostNameLengthMax) {
    throw SqlException(1470, "HY000",
                       "String '" + name.host +
                           "' is too long for host name (should be no longer than " +
                           std::to_string(catalog::kHostNameLengthMax) + ")");
  }
}

// The plugin name IDENTIFIED WITH gives; 1524 for one duo_sqld does not have.
std::string plugin_of(const std::optional<std::string>& plugin) {
  if (!plugin) return protocol::kNativePasswordPlugin;
  std::string name = *plugin;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name != protocol::kNativePasswordPlugin && name != protocol::kCachingSha2PasswordPlugin) {
    throw SqlException(1524, "HY000", "Plugin '" + *plugin + "' is not loaded");
  }
  return name;
}

// "Operation CREATE USER failed for 'a'@'%','b'@'%'".
[[noreturn]] void throw_operation_failed(const std::string& operation,
                                         const std::vector<UserName>& failed) {
  std::string list;
  for (const UserName& name : failed) {
    if (!list.empty()) list += ",";
    list += catalog::account_text(name.user, name.host);
  }
  throw SqlException(1396, "HY000", "Operation " + operation + " failed for " + list);
}

std::string does_not_exist(const UserName& name) {
  return "Authorization ID " + catalog::account_text(name.user, name.host) + " does not exist.";
}

server::StatementResult create_users(StatementContext& context, const UserStatement& statement) {
  catalog::UserCatalog& users = shared_user_catalog(context.catalog.cluster());
  std::vector<UserRecord> records;
  std::vector<UserName> failed;
  // MySQL 8.0's CREATE USER is atomic: check every account before creating any.
  for (const UserSpec& spec : statement.users) {
    check_name_lengths(spec.user);
    UserRecord record;
    record.user = spec.user.user;
    record.host = spec.user.host;
    record.plugin = plugin_of(spec.plugin);
    record.credential = credential_for(auth_plugin_of(record.plugin), spec.password.value_or(""));
    record.grants.push_back(catalog::Grant{});
    if (users.find(context.api_session, record.user, record.host)) {
      if (!statement.if_not_exists) {
        failed.push_back(spec.user);
      } else {
        context.add_warning(3163,
                            "Authorization ID " + catalog::account_text(record.user, record.host) +
                                " already exists.",
                            "Note");
      }
      continue;
    }
    records.push_back(std::move(record));
  }
  if (!failed.empty()) throw_operation_failed("CREATE USER", failed);
  for (const UserRecord& record : records) {
    // Lost a race with another sqld creating the same account.
    if (!users.insert(context.api_session, record) && !statement.if_not_exists) {
      UserName name;
      name.user = record.user;
      name.host = record.host;
      throw_operation_failed("CREATE USER", {name});
    }
  }
  return server::OkResult{};
}

server::StatementResult drop_users(StatementContext& context, const UserStatement& statement) {
  catalog::UserCatalog& users = shared_user_catalog(context.catalog.cluster());
  std::vector<UserName> failed;
  std::vector<UserName> names;
  for (const UserSpec& spec : statement.users) names.push_back(resolve_user(context, spec.user));
  for (const UserName& name : names) {
    if (!users.find(context.api_session, name.user, name.host)) {
      if (!statement.if_exists) {
        failed.push_back(name);
      } else {
        context.add_warning(3162, does_not_exist(name), "Note");
      }
    }
  }
  if (!failed.empty()) throw_operation_failed("DROP USER", failed);
  for (const UserName& name : names) users.remove(context.api_session, name.user, name.host);
  return server::OkResult{};
}

server::StatementResult alter_users(StatementContext& context, const UserStatement& statement) {
  catalog::UserCatalog& users = shared_user_catalog(context.catalog.cluster());
  std::vector<UserName> failed;
  std::vector<UserRecord> changed;
  for (const UserSpec& spec : statement.users) {
    const UserName name = resolve_user(context, spec.user);
    std::optional<UserRecord> record = users.find(context.api_session, name.user, name.host);
    if (!record) {
      if (!statement.if_exists) {
        failed.push_back(name);
      } else {
        context.add_warning(3162, does_not_exist(name), "Note");
      }
      continue;
    }
    if (spec.plugin) record->plugin = plugin_of(spec.plugin);
    if (spec.password || spec.plugin) {
      record->credential =
          credential_for(auth_plugin_of(record->plugin), spec.password.value_or(""));
    }
    changed.push_back(std::move(*record));
  }
  if (!failed.empty()) throw_operation_failed("ALTER USER", failed);
  for (const UserRecord& record : changed) users.update(context.api_session, record);
  return server::OkResult{};
}

// The privilege set a GRANT/REVOKE names at `level`, and whether it names GRANT OPTION.
std::pair<PrivilegeSet, bool> privileges_of(const GrantStatement& grant, PrivilegeLevel level) {
  PrivilegeSet set = 0;
  bool grant_option = false;
  for (const Privilege& privilege : grant.privileges) {
    if (!privilege.columns.empty()) throw_not_supported("column privileges");
    if (privilege.name == "ALL") {
      set |= catalog::all_privileges(level);
    } else if (privilege.name == "USAGE") {
      // Nothing: USAGE means "no privileges".
    } else if (privilege.name == "GRANT OPTION") {
      grant_option = true;
    } else {
      const PrivilegeSet bit = catalog::privilege_bit(privilege.name);
      if (bit == 0) throw_not_supported("the privilege " + privilege.name);
      set |= bit;
    }
  }
  if ((set & ~catalog::all_privileges(level)) != 0) {
    if (level == PrivilegeLevel::kDatabase) {
      throw SqlException(1221, "HY000", "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES");
    }
    throw SqlException(1144, "42000",
                       "Illegal GRANT/REVOKE command; please consult the manual to see which "
                       "privileges can be used");
  }
  return {set, grant_option};
}

server::StatementResult grant_or_revoke(StatementContext& context, const GrantStatement& grant) {
  catalog::UserCatalog& users = shared_user_catalog(context.catalog.cluster());
  std::string db = grant.db.empty() ? context.current_database() : grant.db;
  const std::string& table = grant.table;
  const PrivilegeLevel level = db == "*"      ? PrivilegeLevel::kGlobal
                               : table == "*" ? PrivilegeLevel::kDatabase
                                              : PrivilegeLevel::kTable;
  const auto [privileges, grant_option] = privileges_of(grant, level);
  if (level == PrivilegeLevel::kTable && !grant.revoke) {
    // 1146 for a table that does not exist; a view takes grants as a table does.
    if (!context.catalog.find_view(db, table)) context.catalog.get_table(db, table);
  }
  std::vector<UserRecord> changed;
  for (const UserName& given : grant.users) {
    const UserName name = resolve_user(context, given);
    std::optional<UserRecord> record = users.find(context.api_session, name.user, name.host);
    if (!record) {
      if (!grant.revoke) {
        throw SqlException(1410, "42000", "You are not allowed to create a user with GRANT");
      }
      throw SqlException(1141, "42000",
                         "There is no such grant defined for user '" + name.user + "' on host '" +
                             name.host + "'");
    }
    if (grant.revoke) {
      bool held = level == PrivilegeLevel::kGlobal;
      for (const catalog::Grant& g : record->grants) held |= g.db == db && g.table == table;
      if (!held) {
        if (level == PrivilegeLevel::kTable) {
          throw SqlException(1147, "42000",
                             "There is no such grant defined for user '" + name.user +
                                 "' on host '" + name.host + "' on table '" + table + "'");
        }
        throw SqlException(1141, "42000",
                           "There is no such grant defined for user '" + name.user + "' on host '" +
                               name.host + "'");
      }
      record->revoke(db, table, privileges, grant_option);
    } else {
      record->grant(db, table, privileges, grant_option || grant.with_grant_option);
    }
    changed.push_back(std::move(*record));
  }
  for (const UserRecord& record : changed) users.update(context.api_session, record);
  return server::OkResult{};
}

}  // namespace

server::StatementResult execute_account_statement(StatementContext& context,
                                                  const Statement& statement) {
  switch (statement.kind) {
    case StatementKind::kCreateUser:
      return create_users(context, static_cast<const UserStatement&>(statement));
    case StatementKind::kDropUser:
      return drop_users(context, static_cast<const UserStatement&>(statement));
    case StatementKind::kAlterUser:
      return alter_users(context, static_cast<const UserStatement&>(statement));
    case StatementKind::kGrant:
      return grant_or_revoke(context, statement.as<GrantStatement>());
    default:
      throw_not_supported("this statement");
  }
}

server::StatementResult execute_set_password(StatementContext& context, const SetItem& item) {
  UserName name;
  if (item.user) {
    name = resolve_user(context, *item.user);
    const std::optional<UserRecord> self = session_account(context);
    const bool own = self && name.user == self->user && name.host == self->host;
    if (!own && !(self && self->has_global(catalog::kCreateUserPrivilege))) {
      throw_database_access_denied(context.session, "mysql");
    }
  } else {
    UserName current;
    current.current_user = true;
    name = resolve_user(context, current);
  }
  catalog::UserCatalog& users = shared_user_catalog(context.catalog.cluster());
  std::optional<UserRecord> record = users.find(context.api_session, name.user, name.host);
  if (!record) {
    throw SqlException(1133, "42000", "Can't find any matching row in the user table");
  }
  record->credential = credential_for(auth_plugin_of(record->plugin), item.password);
  users.update(context.api_session, *record);
  return server::OkResult{};
}

}  // namespace duo::sql::executor
