// DDL, SHOW and account statements: CREATE/DROP DATABASE, USE, CREATE/DROP TABLE,
// DESCRIBE here; SHOW in show_executor.cc; CREATE/DROP/ALTER USER, GRANT and REVOKE in
// account_executor.cc. See statement_context.h.
#include <algorithm>

#include "sql-frontend/catalog/ndb_table_options.h"
#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/admin_statements.h"
#include "sql-frontend/executor/engine_substitution.h"
#include "sql-frontend/executor/global_variables.h"
#include "sql-frontend/executor/privilege_check.h"
#include "sql-frontend/executor/session_registry.h"
#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/executor/system_views.h"

namespace duo::sql::executor {

server::StatementResult execute_admin(StatementContext& context, const Statement& statement) {
  catalog::Catalog& catalog = context.catalog;
  switch (statement.kind) {
    case StatementKind::kCreateDatabase: {
      const auto& create = statement.as<CreateDatabaseStatement>();
      const bool created =
          catalog.create_database(context.api_session, create.name.name, create.if_not_exists);
      return server::OkResult{created ? 1u : 0u, 0, 0, ""};
    }
    case StatementKind::kDropDatabase: {
      const auto& drop = statement.as<DropDatabaseStatement>();
      const size_t tables = catalog.database_exists(context.api_session, drop.name.name) &&
                                    !catalog::is_builtin_database(drop.name.name)
                                ? catalog.list_tables(drop.name.name).size()
                                : 0;
      catalog.drop_database(context.api_session, drop.name.name, drop.if_exists);
      if (context.session.database == drop.name.name) context.session.database.clear();
      return server::OkResult{tables, 0, 0, ""};
    }
    case StatementKind::kUse: {
      const std::string& db = statement.as<UseStatement>().db.name;
      if (!is_system_view_database(db) && !catalog.database_exists(context.api_session, db)) {
        throw_unknown_database(db);
      }
      context.session.database = db;
      return server::OkResult{};
    }
    case StatementKind::kCreateTable: {
      const auto& create = statement.as<CreateTableStatement>();
      const std::string db = context.database_of(create.table);
      if (catalog::is_builtin_database(db)) {
        throw SqlException(1044, "42000", "Access denied to database '" + db + "'");
      }
      if (!catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
      if (create.options.engine) {
        check_table_engine(context, *create.options.engine, create.table.name.name);
      }
      catalog::SqlTable table = catalog::table_from_create(create, db);
      if (!table.tablespace.empty()) {
        // The tablespace's id goes into the cluster table: the dictionary then refuses
        // to drop the tablespace while the table exists.
        for (const ::duo::protocol::FilegroupDef& filegroup :
             check(catalog.cluster().list_filegroups())) {
          if (filegroup.is_tablespace() && filegroup.name == table.tablespace) {
            table.tablespace_id = filegroup.id;
          }
        }
        if (table.tablespace_id == 0) {
          throw SqlException(3510, "HY000", "Tablespace " + table.tablespace + " doesn't exist.");
        }
      }
      for (const ColumnDef& column : create.columns) {
        if (column.type.name == TypeName::kYear && column.type.length) {
          // MySQL 8.0.19+: YEAR(4) is YEAR, and the width is deprecated.
          context.add_warning(1287,
                              "'YEAR(4)' is deprecated and will be removed in a future release. "
                              "Please use YEAR instead");
        }
      }
      // NDB_TABLE options in the comment; READ_BACKUP defaults to ndb_read_backup.
      std::vector<std::string> warnings;
      try {
        catalog::apply_table_comment(&table, create.options.comment,
                                     GlobalVariables::instance().ndb_read_backup(), &warnings);
      } catch (const SqlException&) {
        for (std::string& warning : warnings) context.add_warning(1478, std::move(warning));
        throw;
      }
      for (std::string& warning : warnings) context.add_warning(1478, std::move(warning));
      catalog.create_table(table, create.if_not_exists);
      return server::OkResult{};
    }
    case StatementKind::kDropTable: {
      const auto& drop = statement.as<DropTableStatement>();
      std::vector<std::string> missing;
      for (const ObjectName& name : drop.tables) {
        const std::string db = context.database_of(name);
        if (!catalog.drop_table(context.api_session, db, name.name.name))
          missing.push_back(db + "." + name.name.name);
      }
      if (!missing.empty() && !drop.if_exists) {
        std::string list;
        for (const std::string& m : missing) list += (list.empty() ? "" : ",") + m;
        throw SqlException(1051, "42S02", "Unknown table '" + list + "'");
      }
      return server::OkResult{};
    }
    case StatementKind::kDescribe: {
      // DESCRIBE t [c] is SHOW COLUMNS FROM t [LIKE 'c'].
      const auto& d = statement.as<DescribeStatement>();
      ShowStatement show(d.pos);
      show.what = ShowKind::kColumns;
      show.table = d.table;
      if (d.column) show.like = d.column->name;
      return execute_show(context, show);
    }
    case StatementKind::kShow:
      return execute_show(context, statement.as<ShowStatement>());
    case StatementKind::kKill:
      return execute_kill(context, statement.as<KillStatement>());
    case StatementKind::kCreateUser:
    case StatementKind::kDropUser:
    case StatementKind::kAlterUser:
    case StatementKind::kGrant:
      return execute_account_statement(context, statement);
    default:
      throw_not_supported("this statement");
  }
}

server::StatementResult execute_kill(StatementContext& context, const KillStatement& kill) {
  const SqlValue value = evaluate(*kill.id, context.eval());
  const int64_t requested = value.is_null() ? -1 : value.to_int();
  const std::string id_text = value.to_text();
  if (requested < 0 || requested > UINT32_MAX) {
    throw SqlException(1094, "HY000", "Unknown thread id: " + id_text);
  }
  const uint32_t id = static_cast<uint32_t>(requested);
  if (id != context.session.connection_id) {
    const std::optional<std::string> owner = SessionRegistry::instance().user_of(id);
    if (owner && *owner != context.session.user) {
      const std::optional<catalog::UserRecord> account = session_account(context);
      if (!account || !account->has_global(catalog::kSuperPrivilege)) {
        throw SqlException(1095, "HY000", "You are not owner of thread " + id_text);
      }
    }
  }
  if (kill.query_only) {
    if (context.session.server == nullptr || !context.session.server->kill_query(id)) {
      throw SqlException(1094, "HY000", "Unknown thread id: " + id_text);
    }
    // KILL QUERY of this very connection interrupts this statement, as in MySQL.
    if (id == context.session.connection_id) {
      throw SqlException(1317, "70100", "Query execution was interrupted");
    }
    return server::OkResult{};
  }
  if (context.session.server == nullptr || !context.session.server->kill_connection(id)) {
    throw SqlException(1094, "HY000", "Unknown thread id: " + id_text);
  }
  return server::OkResult{};
}

}  // namespace duo::sql::executor
