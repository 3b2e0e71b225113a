// DDL and SHOW statements: CREATE/DROP DATABASE, USE, CREATE/DROP TABLE, SHOW
// DATABASES/TABLES/COLUMNS/VARIABLES/WARNINGS/ENGINES, DESCRIBE. See statement_context.h.
#include <algorithm>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

namespace {

server::ColumnDefinition41 text_column(const std::string& name) {
  return computed_column_definition(name, protocol::FieldType::kVarString);
}

server::ResultSet text_result(std::vector<std::string> names,
                              const std::vector<std::vector<std::optional<std::string>>>& rows) {
  server::ResultSet result;
  for (const std::string& name : names) result.columns.push_back(text_column(name));
  for (const auto& row : rows) {
    std::vector<server::Value> cells;
    for (const auto& cell : row) {
      if (cell)
        cells.emplace_back(*cell);
      else
        cells.emplace_back(std::monostate{});
    }
    result.rows.push_back(std::move(cells));
  }
  return result;
}

bool like_filter(const ShowStatement& show, const std::string& value) {
  return !show.like || like_match(value, *show.like, '\\');
}

server::StatementResult describe(StatementContext& context, const ObjectName& name,
                                 const std::optional<std::string>& like) {
  const std::string db = context.database_of(name);
  if (!context.catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
  const catalog::BoundTable bound = context.catalog.get_table(db, name.name.name);
  const catalog::SqlTable& table = bound.sql;
  std::vector<std::vector<std::optional<std::string>>> rows;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const catalog::SqlColumn& column = table.columns[c];
    if (like && !like_match(column.name, *like, '\\')) continue;
    std::string key;
    if (table.is_key_column(static_cast<uint16_t>(c))) {
      key = "PRI";
    } else {
      for (size_t i = 1; i < table.indexes.size(); ++i) {
        if (table.indexes[i].columns.front() != c || !key.empty()) continue;
        key = table.indexes[i].kind == catalog::SqlIndexKind::kUnique &&
                      table.indexes[i].columns.size() == 1
                  ? "UNI"
                  : "MUL";
      }
    }
    std::string type = column.declared_type;
    if (type.ends_with(" binary")) type.resize(type.size() - 7);
    rows.push_back({column.name, type, std::string(column.nullable ? "YES" : "NO"), key,
                    column.default_value,
                    std::string(column.auto_increment ? "auto_increment" : "")});
  }
  return text_result({"Field", "Type", "Null", "Key", "Default", "Extra"}, rows);
}

std::vector<std::string> variable_names() {
  return {"auto_increment_increment",
          "auto_increment_offset",
          "autocommit",
          "character_set_client",
          "character_set_connection",
          "character_set_database",
          "character_set_results",
          "character_set_server",
          "collation_connection",
          "collation_database",
          "collation_server",
          "default_storage_engine",
          "init_connect",
          "interactive_timeout",
          "license",
          "lower_case_table_names",
          "max_allowed_packet",
          "max_execution_time",
          "net_buffer_length",
          "net_write_timeout",
          "performance_schema",
          "sql_mode",
          "system_time_zone",
          "time_zone",
          "transaction_isolation",
          "transaction_read_only",
          "tx_isolation",
          "version",
          "version_comment",
          "wait_timeout"};
}

}  // namespace

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
      if (!catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
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
        std::string engine = *create.options.engine;
        for (char& c : engine) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (engine != "NDB" && engine != "NDBCLUSTER" && engine != "INNODB") {
          throw SqlException(1286, "42000",
                             "Unknown storage engine '" + *create.options.engine + "'");
        }
      }
      const catalog::SqlTable table = catalog::table_from_create(create, db);
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
      const auto& d = statement.as<DescribeStatement>();
      std::optional<std::string> like;
      if (d.column) like = d.column->name;
      return describe(context, d.table, like);
    }
    case StatementKind::kShow: {
      const auto& show = statement.as<ShowStatement>();
      if (show.where) throw_not_supported("SHOW ... WHERE");
      switch (show.what) {
        case ShowKind::kDatabases: {
          std::vector<std::vector<std::optional<std::string>>> rows;
          for (const std::string& db : catalog.list_databases(context.api_session)) {
            if (like_filter(show, db)) rows.push_back({db});
          }
          return text_result({"Database"}, rows);
        }
        case ShowKind::kTables: {
          const std::string db = show.db ? show.db->name : context.current_database();
          if (!catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
          std::vector<std::vector<std::optional<std::string>>> rows;
          for (const std::string& t : catalog.list_tables(db)) {
            if (!like_filter(show, t)) continue;
            if (show.full)
              rows.push_back({t, std::string("BASE TABLE")});
            else
              rows.push_back({t});
          }
          std::vector<std::string> names = {"Tables_in_" + db};
          if (show.full) names.push_back("Table_type");
          return text_result(names, rows);
        }
        case ShowKind::kColumns: {
          ObjectName name = *show.table;
          if (show.db) name.db = show.db;
          return describe(context, name, show.like);
        }
        case ShowKind::kVariables: {
          std::vector<std::vector<std::optional<std::string>>> rows;
          for (const std::string& name : variable_names()) {
            if (!like_filter(show, name)) continue;
            rows.push_back({name, system_variable(name, &context.session).to_text()});
          }
          return text_result({"Variable_name", "Value"}, rows);
        }
        case ShowKind::kWarnings:
        case ShowKind::kErrors:
          return text_result({"Level", "Code", "Message"}, {});
        case ShowKind::kEngines:
          return text_result({"Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"},
                             {{std::string("ndbcluster"), std::string("DEFAULT"),
                               std::string("DuoDB, a clustered, fault-tolerant storage engine"),
                               std::string("YES"), std::string("NO"), std::string("NO")}});
        default:
          throw_not_supported("this SHOW statement");
      }
    }
    default:
      throw_not_supported("this statement");
  }
}

}  // namespace duo::sql::executor
