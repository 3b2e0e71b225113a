// Privilege checks before a statement runs; see privilege_check.h.
#include "sql-frontend/executor/privilege_check.h"

#include <map>
#include <memory>
#include <mutex>

#include "sql-frontend/catalog/sql_exception.h"

namespace duo::sql::executor {

using catalog::PrivilegeSet;
using catalog::UserRecord;

namespace {

// One table (or database, `table` empty) a statement touches and what it needs there.
struct Access {
  std::string db;
  std::string table;
  PrivilegeSet needed = 0;
};

const char* command_name(PrivilegeSet privilege) {
  if (privilege == catalog::kSelectPrivilege) return "SELECT";
  if (privilege == catalog::kInsertPrivilege) return "INSERT";
  if (privilege == catalog::kUpdatePrivilege) return "UPDATE";
  if (privilege == catalog::kDeletePrivilege) return "DELETE";
  if (privilege == catalog::kCreatePrivilege) return "CREATE";
  if (privilege == catalog::kDropPrivilege) return "DROP";
  if (privilege == catalog::kAlterPrivilege) return "ALTER";
  if (privilege == catalog::kIndexPrivilege) return "INDEX";
  if (privilege == catalog::privilege_bit("CREATE VIEW")) return "CREATE VIEW";
  return "SELECT";
}

class AccessCollector {
 public:
  explicit AccessCollector(StatementContext& context) : context_(context) {}

  void table(const ObjectName& name, PrivilegeSet needed) {
    std::string db;
    if (name.db) {
      db = name.db->name;
    } else if (!context_.session.database.empty()) {
      db = context_.session.database;
    } else {
      return;  // the executor answers 1046 No database selected
    }
    accesses_.push_back(Access{db, name.name.name, needed});
  }
  void database(const std::string& db, PrivilegeSet needed) {
    accesses_.push_back(Access{db, "", needed});
  }
  void query(const QueryExpr* query, PrivilegeSet needed) {
    if (query == nullptr) return;
    if (query->is_union()) {
      this->query(query->left.get(), needed);
      this->query(query->right.get(), needed);
      return;
    }
    for (const TableRefPtr& ref : query->select->from) table_ref(ref.get(), needed);
  }
  void table_ref(const TableRef* ref, PrivilegeSet needed) {
    if (ref == nullptr) return;
    switch (ref->kind) {
      case TableRefKind::kTable:
        table(ref->table, needed);
        break;
      case TableRefKind::kDerived:
        query(ref->query.get(), catalog::kSelectPrivilege);
        break;
      case TableRefKind::kJoin:
        table_ref(ref->left.get(), needed);
        table_ref(ref->right.get(), needed);
        break;
    }
  }
  const std::vector<Access>& accesses() const { return accesses_; }

 private:
  StatementContext& context_;
  std::vector<Access> accesses_;
};

bool is_open_database(const std::string& db) {
  return db == "information_schema";
}

void check_accesses(StatementContext& context, const UserRecord* account,
                    const std::vector<Access>& accesses) {
  for (const Access& access : accesses) {
    if (is_open_database(access.db)) continue;
    const PrivilegeSet held =
        account == nullptr ? 0 : account->privileges_on(access.db, access.table);
    const PrivilegeSet missing = access.needed & ~held;
    if (missing == 0) continue;
    if (access.table.empty()) throw_database_access_denied(context.session, access.db);
    const PrivilegeSet first = missing & (~missing + 1);
    throw_table_access_denied(context.session, command_name(first), access.table);
  }
}

void need_global(const UserRecord* account, PrivilegeSet privilege, const char* name) {
  if (account == nullptr || !account->has_global(privilege)) throw_privilege_needed(name);
}

// Whether a user statement only changes the session's own password (allowed to all).
bool is_own_password_change(const server::SessionState& session, const UserRecord* account,
                            const UserStatement& statement) {
  if (statement.kind != StatementKind::kAlterUser || account == nullptr) return false;
  for (const UserSpec& spec : statement.users) {
    const bool self = spec.user.current_user ||
                      (spec.user.user == session.user && spec.user.host == account->host);
    if (!self) return false;
  }
  return true;
}

}  // namespace

catalog::UserCatalog& shared_user_catalog(api::Cluster& cluster) {
  // One per cluster connection (a process has one; tests may have several). Catalogs
  // live as long as the process, so each thread may remember the last one it used.
  thread_local api::Cluster* last_cluster = nullptr;
  thread_local catalog::UserCatalog* last_catalog = nullptr;
  if (last_cluster == &cluster) return *last_catalog;
  static std::mutex mutex;
  static std::map<api::Cluster*, std::unique_ptr<catalog::UserCatalog>> catalogs;
  std::lock_guard lock(mutex);
  std::unique_ptr<catalog::UserCatalog>& entry = catalogs[&cluster];
  if (!entry) entry = std::make_unique<catalog::UserCatalog>(&cluster);
  last_cluster = &cluster;
  last_catalog = entry.get();
  return *entry;
}

std::optional<UserRecord> session_account(StatementContext& context) {
  auto accounts =
      shared_user_catalog(context.catalog.cluster()).accounts_snapshot(context.api_session);
  const UserRecord* account =
      catalog::match_account(*accounts, context.session.user, context.session.host);
  if (account == nullptr) return std::nullopt;
  return *account;
}

void throw_table_access_denied(const server::SessionState& session, const std::string& command,
                               const std::string& table) {
  throw SqlException(1142, "42000",
                     command + " command denied to user " +
                         catalog::account_text(session.user, session.host) + " for table '" +
                         table + "'");
}

void throw_database_access_denied(const server::SessionState& session, const std::string& db) {
  throw SqlException(1044, "42000",
                     "Access denied for user " + catalog::account_text(session.user, session.host) +
                         " to database '" + db + "'");
}

void throw_privilege_needed(const std::string& privilege) {
  throw SqlException(1227, "42000",
                     "Access denied; you need (at least one of) the " + privilege +
                         " privilege(s) for this operation");
}

void check_use_database(StatementContext& context, const std::string& db) {
  if (is_open_database(db)) return;
  const std::optional<UserRecord> account = session_account(context);
  if (!account || !account->has_any_privilege_in(db)) {
    throw_database_access_denied(context.session, db);
  }
}

namespace {

void check_privileges_of(StatementContext& context, const Statement& statement,
                         const UserRecord* account);

}  // namespace

void check_privileges(StatementContext& context, const Statement& statement,
                      PrivilegeCheckCache* cache) {
  std::shared_ptr<const std::vector<UserRecord>> accounts =
      shared_user_catalog(context.catalog.cluster()).accounts_snapshot(context.api_session);
  const server::SessionState& session = context.session;
  if (cache != nullptr && cache->snapshot == accounts && cache->user == session.user &&
      cache->host == session.host && cache->database == session.database) {
    return;
  }
  // `accounts` keeps the record alive while it is checked against.
  check_privileges_of(context, statement,
                      catalog::match_account(*accounts, session.user, session.host));
  if (cache != nullptr) {
    cache->snapshot = std::move(accounts);
    cache->user = session.user;
    cache->host = session.host;
    cache->database = session.database;
  }
}

namespace {

void check_privileges_of(StatementContext& context, const Statement& statement,
                         const UserRecord* account) {
  // The common case of an administrator: nothing to look at.
  if (account != nullptr &&
      account->has_global(catalog::all_privileges(catalog::PrivilegeLevel::kGlobal))) {
    return;
  }
  AccessCollector collect(context);
  switch (statement.kind) {
    case StatementKind::kSelect:
      collect.query(statement.as<SelectStatement>().query.get(), catalog::kSelectPrivilege);
      break;
    case StatementKind::kLoadData: {
      const auto& load = statement.as<LoadDataStatement>();
      collect.table(load.table, load.replace
                                    ? catalog::kInsertPrivilege | catalog::kDeletePrivilege
                                    : catalog::kInsertPrivilege);
      break;
    }
    case StatementKind::kInsert: {
      const auto& insert = statement.as<InsertStatement>();
      collect.table(insert.table, insert.replace
                                      ? catalog::kInsertPrivilege | catalog::kDeletePrivilege
                                      : catalog::kInsertPrivilege);
      if (!insert.on_duplicate.empty()) collect.table(insert.table, catalog::kUpdatePrivilege);
      collect.query(insert.select.get(), catalog::kSelectPrivilege);
      break;
    }
    case StatementKind::kUpdate: {
      // Multi-table: UPDATE on every table of the join (MySQL asks SELECT only of the
      // tables not assigned to; this is stricter, never looser).
      const auto& update = statement.as<UpdateStatement>();
      for (const TableRefPtr& ref : update.join ? update.join->from : update.tables)
        collect.table_ref(ref.get(), catalog::kUpdatePrivilege);
      break;
    }
    case StatementKind::kDelete: {
      const auto& del = statement.as<DeleteStatement>();
      if (!del.join) {
        collect.table(del.table, catalog::kDeletePrivilege);
        break;
      }
      // Multi-table: DELETE on every table of the join (stricter than MySQL, as above).
      for (const TableRefPtr& ref : del.join->from)
        collect.table_ref(ref.get(), catalog::kDeletePrivilege);
      break;
    }
    case StatementKind::kCreateDatabase:
      collect.database(statement.as<CreateDatabaseStatement>().name.name,
                       catalog::kCreatePrivilege);
      break;
    case StatementKind::kDropDatabase:
      collect.database(statement.as<DropDatabaseStatement>().name.name, catalog::kDropPrivilege);
      break;
    case StatementKind::kUse:
      check_use_database(context, statement.as<UseStatement>().db.name);
      break;
    case StatementKind::kCreateTable:
      collect.table(statement.as<CreateTableStatement>().table, catalog::kCreatePrivilege);
      break;
    case StatementKind::kDropTable:
      for (const ObjectName& name : statement.as<DropTableStatement>().tables)
        collect.table(name, catalog::kDropPrivilege);
      break;
    case StatementKind::kTruncateTable:
      collect.table(statement.as<TruncateTableStatement>().table, catalog::kDropPrivilege);
      break;
    case StatementKind::kRenameTable:
      for (const auto& [from, to] : statement.as<RenameTableStatement>().renames) {
        collect.table(from, catalog::kAlterPrivilege | catalog::kDropPrivilege);
        collect.table(to, catalog::kCreatePrivilege | catalog::kInsertPrivilege);
      }
      break;
    case StatementKind::kAlterTable:
      collect.table(statement.as<AlterTableStatement>().table, catalog::kAlterPrivilege);
      break;
    case StatementKind::kCreateIndex:
      collect.table(statement.as<CreateIndexStatement>().table, catalog::kIndexPrivilege);
      break;
    case StatementKind::kDropIndex:
      collect.table(statement.as<DropIndexStatement>().table, catalog::kIndexPrivilege);
      break;
    case StatementKind::kShow: {
      const auto& show = statement.as<ShowStatement>();
      if (show.what == ShowKind::kTables && show.db) {
        const std::string& db = show.db->name;
        if (!is_open_database(db) && (account == nullptr || !account->has_any_privilege_in(db))) {
          throw_database_access_denied(context.session, db);
        }
      }
      if ((show.what == ShowKind::kColumns || show.what == ShowKind::kIndex) && show.table) {
        ObjectName name = *show.table;
        if (show.db) name.db = show.db;
        std::string db = name.db ? name.db->name : context.session.database;
        if (!db.empty() && !is_open_database(db) &&
            (account == nullptr || account->privileges_on(db, name.name.name) == 0)) {
          throw_table_access_denied(context.session, "SELECT", name.name.name);
        }
      }
      if (show.what == ShowKind::kGrants && show.user && !show.user->current_user &&
          !(show.user->user == context.session.user && account != nullptr &&
            show.user->host == account->host)) {
        // Another account's grants: MySQL wants SELECT on the mysql database.
        if (account == nullptr ||
            (account->privileges_on("mysql", "") & catalog::kSelectPrivilege) == 0) {
          throw_database_access_denied(context.session, "mysql");
        }
      }
      break;
    }
    case StatementKind::kDescribe: {
      const auto& describe = statement.as<DescribeStatement>();
      std::string db = describe.table.db ? describe.table.db->name : context.session.database;
      if (!db.empty() && !is_open_database(db) &&
          (account == nullptr || account->privileges_on(db, describe.table.name.name) == 0)) {
        throw_table_access_denied(context.session, "SELECT", describe.table.name.name);
      }
      break;
    }
    case StatementKind::kCreateUser:
    case StatementKind::kDropUser:
    case StatementKind::kAlterUser:
      if (!is_own_password_change(context.session, account,
                                  static_cast<const UserStatement&>(statement))) {
        need_global(account, catalog::kCreateUserPrivilege, "CREATE USER");
      }
      break;
    case StatementKind::kGrant: {
      // GRANT/REVOKE: the grant option at (or above) the level, or CREATE USER.
      const auto& grant = statement.as<GrantStatement>();
      if (account != nullptr && account->has_global(catalog::kCreateUserPrivilege)) break;
      std::string db = grant.db.empty() ? context.session.database : grant.db;
      bool grant_option = false;
      if (account != nullptr) {
        for (const catalog::Grant& g : account->grants) {
          if (!g.grant_option) continue;
          if (g.db == "*" || (g.db == db && (g.table == "*" || g.table == grant.table)))
            grant_option = true;
        }
      }
      if (!grant_option) {
        if (db == "*") throw_privilege_needed("GRANT OPTION");
        throw_database_access_denied(context.session, db);
      }
      break;
    }
    case StatementKind::kFlush:
      need_global(account, catalog::privilege_bit("RELOAD"), "RELOAD");
      break;
    case StatementKind::kDiskObject:
      need_global(account, catalog::privilege_bit("CREATE TABLESPACE"), "CREATE TABLESPACE");
      break;
    case StatementKind::kView: {
      // CREATE VIEW on the view and SELECT on what its query reads (MySQL also wants
      // DROP for OR REPLACE and ALTER VIEW); DROP on each view dropped.
      const auto& view = statement.as<ViewStatement>();
      if (view.action == ViewAction::kDrop) {
        for (const ObjectName& name : view.names) collect.table(name, catalog::kDropPrivilege);
        break;
      }
      catalog::PrivilegeSet wanted = catalog::privilege_bit("CREATE VIEW");
      if (view.or_replace || view.action == ViewAction::kAlter) wanted |= catalog::kDropPrivilege;
      collect.table(view.names.front(), wanted);
      collect.query(view.query.get(), catalog::kSelectPrivilege);
      break;
    }
    default:
      break;
  }
  check_accesses(context, account, collect.accesses());
}

}  // namespace

std::vector<ProcessInfo> visible_processes(StatementContext& context) {
  const std::optional<catalog::UserRecord> account = session_account(context);
  const bool all = account && account->has_global(catalog::kProcessPrivilege);
  std::vector<ProcessInfo> processes =
      SessionRegistry::instance().list(context.session, context.source_text);
  if (!all)
    std::erase_if(processes, [&](const ProcessInfo& p) { return p.user != context.session.user; });
  return processes;
}

}  // namespace duo::sql::executor
