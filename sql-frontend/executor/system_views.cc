// System views; see system_views.h.
#include "sql-frontend/executor/system_views.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <tuple>

#include "mgmd/client/mgm_commands.h"
#include "mgmd/client/mgm_connection.h"
#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/catalog/user_record.h"
#include "sql-frontend/executor/privilege_check.h"
#include "sql-frontend/executor/server_views.h"
#include "sql-frontend/executor/system_view_builder.h"
#include "sql-frontend/executor/view_executor.h"

namespace duo::sql::executor {

namespace {

// How long an ndbinfo read waits for the management server.
constexpr uint64_t kMgmCallTimeoutMs = 3000;
// ndbinfo reports memory in 32 KiB pages, as NDB's.
constexpr uint64_t kPageBytes = 32768;

std::mutex g_connect_string_mutex;
std::string g_connect_string;  // GUARDED_BY(g_connect_string_mutex)

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// The databases whose tables information_schema shows: every SQL database but the
// system-view ones (listed with their views separately).
std::vector<std::string> user_databases(StatementContext& context) {
  std::vector<std::string> out;
  for (const std::string& db : context.catalog.list_databases(context.api_session)) {
    if (!is_system_view_database(db)) out.push_back(db);
  }
  return out;
}

std::string data_type_text(const catalog::SqlColumn& column) {
  const std::string type = column_type_text(column);
  const size_t end = type.find_first_of(" (");
  return end == std::string::npos ? type : type.substr(0, end);
}

bool is_char_type(const std::string& data_type) {
  return data_type == "char" || data_type == "varchar" || data_type == "text" ||
         data_type == "tinytext" || data_type == "mediumtext" || data_type == "longtext" ||
         data_type == "enum" || data_type == "set";
}

// NUMERIC_PRECISION / NUMERIC_SCALE as MySQL 8.0 reports them.
std::pair<std::optional<uint64_t>, std::optional<uint64_t>> numeric_precision(
    const catalog::SqlColumn& column) {
  const std::string data_type = data_type_text(column);
  const bool is_unsigned = column.declared_type.find("unsigned") != std::string::npos;
  if (data_type == "tinyint") return {3, 0};
  if (data_type == "smallint") return {5, 0};
  if (data_type == "mediumint") return {7, 0};
  if (data_type == "int") return {10, 0};
  if (data_type == "bigint") return {is_unsigned ? 20 : 19, 0};
  if (data_type == "float") return {12, std::nullopt};
  if (data_type == "double") return {22, std::nullopt};
  if (data_type == "bit") return {column.bit_width, std::nullopt};
  if (data_type == "decimal") {
    uint64_t precision = 10, scale = 0;
    const size_t open = column.declared_type.find('(');
    if (open != std::string::npos) {
      precision = std::stoull(column.declared_type.substr(open + 1));
      const size_t comma = column.declared_type.find(',', open);
      if (comma != std::string::npos) scale = std::stoull(column.declared_type.substr(comma + 1));
    }
    return {precision, scale};
  }
  return {std::nullopt, std::nullopt};
}

std::optional<uint64_t> datetime_precision(const catalog::SqlColumn& column) {
  const std::string data_type = data_type_text(column);
  if (data_type != "datetime" && data_type != "timestamp" && data_type != "time") {
    return std::nullopt;
  }
  const size_t open = column.declared_type.find('(');
  return open == std::string::npos ? 0 : std::stoull(column.declared_type.substr(open + 1));
}

std::string collation_of(const catalog::SqlColumn& column) {
  return column.declared_type.ends_with(" binary") ? "utf8mb4_bin" : "utf8mb4_0900_ai_ci";
}

SqlValue optional_number(std::optional<uint64_t> value) {
  return value ? number(*value) : SqlValue::null();
}

// Every SQL table of the user databases (one catalog read per table).
template <typename Visit>
void for_each_table(StatementContext& context, Visit visit) {
  for (const std::string& db : user_databases(context)) {
    for (const std::string& name : context.catalog.list_tables(db)) {
      catalog::BoundTable bound;
      try {
        bound = context.catalog.get_table(db, name);
      } catch (const SqlException& e) {
        if (e.code() == 1146) continue;  // dropped while we listed
        throw;
      }
      visit(db, bound.sql);
    }
  }
}

SystemView schemata(StatementContext& context) {
  ViewBuilder view("information_schema", "SCHEMATA");
  view.column("CATALOG_NAME", "varchar(64)")
      .column("SCHEMA_NAME", "varchar(64)")
      .column("DEFAULT_CHARACTER_SET_NAME", "varchar(64)")
      .column("DEFAULT_COLLATION_NAME", "varchar(64)")
      .column("SQL_PATH", "varchar(64)", true)
      .column("DEFAULT_ENCRYPTION", "varchar(3)");
  std::vector<std::string> dbs = context.catalog.list_databases(context.api_session);
  if (std::find(dbs.begin(), dbs.end(), "ndbinfo") == dbs.end()) dbs.push_back("ndbinfo");
  std::sort(dbs.begin(), dbs.end());
  for (const std::string& db : dbs) {
    view.row({text("def"), text(db), text("utf8mb4"), text("utf8mb4_0900_ai_ci"), SqlValue::null(),
              text("NO")});
  }
  return view.done();
}

SystemView tables(StatementContext& context) {
  ViewBuilder view("information_schema", "TABLES");
  view.column("TABLE_CATALOG", "varchar(64)")
      .column("TABLE_SCHEMA", "varchar(64)")
      .column("TABLE_NAME", "varchar(64)")
      .column("TABLE_TYPE", "varchar(11)")
      .column("ENGINE", "varchar(64)", true)
      .column("VERSION", "int", true)
      .column("ROW_FORMAT", "varchar(10)", true)
      .column("TABLE_ROWS", "bigint unsigned", true)
      .column("AVG_ROW_LENGTH", "bigint unsigned", true)
      .column("DATA_LENGTH", "bigint unsigned", true)
      .column("MAX_DATA_LENGTH", "bigint unsigned", true)
      .column("INDEX_LENGTH", "bigint unsigned", true)
      .column("DATA_FREE", "bigint unsigned", true)
      .column("AUTO_INCREMENT", "bigint unsigned", true)
      .column("CREATE_TIME", "timestamp", true)
      .column("UPDATE_TIME", "datetime", true)
      .column("CHECK_TIME", "datetime", true)
      .column("TABLE_COLLATION", "varchar(64)", true)
      .column("CHECKSUM", "bigint", true)
      .column("CREATE_OPTIONS", "varchar(256)", true)
      .column("TABLE_COMMENT", "text", true);
  // `type`: "BASE TABLE", "SYSTEM VIEW" or "VIEW" (MySQL's TABLE_TYPE).
  auto add = [&](const std::string& db, const std::string& name, const char* type) {
    const bool system_view = std::string_view(type) != "BASE TABLE";
    // Statistics the cluster does not keep per table are NULL, as MySQL shows for
    // tables whose engine has none.
    view.row({text("def"),
              text(db),
              text(name),
              text(type),
              system_view ? SqlValue::null() : text("ndbcluster"),
              system_view ? SqlValue::null() : SqlValue::of_int(10),
              system_view ? SqlValue::null() : text("Dynamic"),
              SqlValue::null(),
              SqlValue::null(),
              SqlValue::null(),
              SqlValue::null(),
              SqlValue::null(),
              SqlValue::null(),
              SqlValue::null(),
              SqlValue::null(),
              SqlValue::null(),
              SqlValue::null(),
              system_view ? SqlValue::null() : text("utf8mb4_0900_ai_ci"),
              SqlValue::null(),
              system_view ? SqlValue::null() : text(""),
              text(std::string_view(type) == "VIEW" ? "VIEW" : "")});
  };
  for (const std::string& db : {std::string("information_schema"), std::string("ndbinfo"),
                                std::string("performance_schema")}) {
    for (const std::string& name : system_view_names(db)) add(db, name, "SYSTEM VIEW");
  }
  for (const std::string& db : user_databases(context)) {
    for (const std::string& name : context.catalog.list_tables(db)) add(db, name, "BASE TABLE");
    for (const std::string& name : context.catalog.list_views(db)) add(db, name, "VIEW");
  }
  return view.done();
}

// information_schema.VIEWS: one row per view of the user databases (MySQL 8.0's columns).
SystemView views(StatementContext& context) {
  ViewBuilder view("information_schema", "VIEWS");
  view.column("TABLE_CATALOG", "varchar(64)")
      .column("TABLE_SCHEMA", "varchar(64)")
      .column("TABLE_NAME", "varchar(64)")
      .column("VIEW_DEFINITION", "text", true)
      .column("CHECK_OPTION", "varchar(8)")
      .column("IS_UPDATABLE", "varchar(3)")
      .column("DEFINER", "varchar(288)")
      .column("SECURITY_TYPE", "varchar(7)")
      .column("CHARACTER_SET_CLIENT", "varchar(64)")
      .column("COLLATION_CONNECTION", "varchar(64)");
  for (const std::string& db : user_databases(context)) {
    for (const std::string& name : context.catalog.list_views(db)) {
      std::optional<catalog::SqlView> found = context.catalog.find_view(db, name);
      if (!found) continue;  // dropped while we listed
      view.row({text("def"), text(db), text(name), text(found->canonical),
                text(found->check_option), text(view_is_updatable(context, *found) ? "YES" : "NO"),
                text(found->definer_user + "@" + found->definer_host), text(found->security),
                text(found->character_set_client), text(found->collation_connection)});
    }
  }
  return view.done();
}

SystemView columns(StatementContext& context) {
  ViewBuilder view("information_schema", "COLUMNS");
  view.column("TABLE_CATALOG", "varchar(64)")
      .column("TABLE_SCHEMA", "varchar(64)")
      .column("TABLE_NAME", "varchar(64)")
      .column("COLUMN_NAME", "varchar(64)", true)
      .column("ORDINAL_POSITION", "int unsigned")
      .column("COLUMN_DEFAULT", "text", true)
      .column("IS_NULLABLE", "varchar(3)")
      .column("DATA_TYPE", "text", true)
      .column("CHARACTER_MAXIMUM_LENGTH", "bigint", true)
      .column("CHARACTER_OCTET_LENGTH", "bigint", true)
      .column("NUMERIC_PRECISION", "bigint unsigned", true)
      .column("NUMERIC_SCALE", "bigint unsigned", true)
      .column("DATETIME_PRECISION", "int unsigned", true)
      .column("CHARACTER_SET_NAME", "varchar(64)", true)
      .column("COLLATION_NAME", "varchar(64)", true)
      .column("COLUMN_TYPE", "text")
      .column("COLUMN_KEY", "varchar(3)")
      .column("EXTRA", "varchar(256)", true)
      .column("PRIVILEGES", "varchar(154)", true)
      .column("COLUMN_COMMENT", "text")
      .column("GENERATION_EXPRESSION", "text")
      .column("SRS_ID", "int unsigned", true);
  const auto add_columns = [&](const std::string& db, const catalog::SqlTable& table) {
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const catalog::SqlColumn& column = table.columns[c];
      const std::string data_type = data_type_text(column);
      const bool chars = is_char_type(data_type);
      const auto [precision, scale] = numeric_precision(column);
      std::optional<uint64_t> char_length;
      if (chars) char_length = column.char_length;
      view.row(
          {text("def"),
           text(db),
           text(table.name),
           text(column.name),
           number(c + 1),
           nullable_text(catalog::shown_default(column)),
           text(column.nullable ? "YES" : "NO"),
           text(data_type),
           optional_number(char_length),
           optional_number(char_length ? std::optional<uint64_t>(*char_length * 4) : std::nullopt),
           optional_number(precision),
           optional_number(scale),
           optional_number(datetime_precision(column)),
           chars ? text("utf8mb4") : SqlValue::null(),
           chars ? text(collation_of(column)) : SqlValue::null(),
           text(column_type_text(column)),
           text(column_key_text(table, static_cast<uint16_t>(c))),
           text(column.auto_increment ? "auto_increment" : ""),
           text("select,insert,update,references"),
           text(""),
           text(""),
           SqlValue::null()});
    }
  };
  for_each_table(context, add_columns);
  // Views' columns too, as MySQL lists them (a view that no longer binds has none).
  for (const std::string& db : user_databases(context)) {
    for (const std::string& name : context.catalog.list_views(db)) {
      std::optional<catalog::SqlView> found = context.catalog.find_view(db, name);
      if (!found) continue;
      try {
        add_columns(db, view_columns_table(context, *found));
      } catch (const SqlException& e) {
        if (e.code() != 1356) throw;
      }
    }
  }
  return view.done();
}

SystemView statistics(StatementContext& context) {
  ViewBuilder view("information_schema", "STATISTICS");
  view.column("TABLE_CATALOG", "varchar(64)")
      .column("TABLE_SCHEMA", "varchar(64)")
      .column("TABLE_NAME", "varchar(64)")
      .column("NON_UNIQUE", "int")
      .column("INDEX_SCHEMA", "varchar(64)")
      .column("INDEX_NAME", "varchar(64)", true)
      .column("SEQ_IN_INDEX", "int unsigned")
      .column("COLUMN_NAME", "varchar(64)", true)
      .column("COLLATION", "varchar(1)", true)
      .column("CARDINALITY", "bigint", true)
      .column("SUB_PART", "bigint", true)
      .column("PACKED", "varchar(64)", true)
      .column("NULLABLE", "varchar(3)")
      .column("INDEX_TYPE", "varchar(11)")
      .column("COMMENT", "varchar(8)")
      .column("INDEX_COMMENT", "varchar(2048)")
      .column("IS_VISIBLE", "varchar(3)")
      .column("EXPRESSION", "text", true);
  for_each_table(context, [&](const std::string& db, const catalog::SqlTable& table) {
    for (const catalog::SqlIndex& index : table.indexes) {
      for (size_t i = 0; i < index.columns.size(); ++i) {
        const catalog::SqlColumn& column = table.columns[index.columns[i]];
        view.row({text("def"), text(db), text(table.name),
                  SqlValue::of_int(index.kind == catalog::SqlIndexKind::kKey ? 1 : 0), text(db),
                  text(index.name), number(i + 1), text(column.name), text("A"), SqlValue::null(),
                  SqlValue::null(), SqlValue::null(), text(column.nullable ? "YES" : ""),
                  text("BTREE"), text(""), text(""), text("YES"), SqlValue::null()});
      }
    }
  });
  return view.done();
}

// The columns of PRIMARY KEY and UNIQUE constraints (foreign keys do not exist yet).
SystemView key_column_usage(StatementContext& context) {
  ViewBuilder view("information_schema", "KEY_COLUMN_USAGE");
  view.column("CONSTRAINT_CATALOG", "varchar(64)")
      .column("CONSTRAINT_SCHEMA", "varchar(64)")
      .column("CONSTRAINT_NAME", "varchar(64)", true)
      .column("TABLE_CATALOG", "varchar(64)")
      .column("TABLE_SCHEMA", "varchar(64)")
      .column("TABLE_NAME", "varchar(64)")
      .column("COLUMN_NAME", "varchar(64)", true)
      .column("ORDINAL_POSITION", "int unsigned")
      .column("POSITION_IN_UNIQUE_CONSTRAINT", "int unsigned", true)
      .column("REFERENCED_TABLE_SCHEMA", "varchar(64)", true)
      .column("REFERENCED_TABLE_NAME", "varchar(64)", true)
      .column("REFERENCED_COLUMN_NAME", "varchar(64)", true);
  for_each_table(context, [&](const std::string& db, const catalog::SqlTable& table) {
    for (const catalog::SqlIndex& index : table.indexes) {
      if (index.kind == catalog::SqlIndexKind::kKey) continue;
      for (size_t i = 0; i < index.columns.size(); ++i) {
        view.row({text("def"), text(db), text(index.name), text("def"), text(db), text(table.name),
                  text(table.columns[index.columns[i]].name), number(i + 1), SqlValue::null(),
                  SqlValue::null(), SqlValue::null(), SqlValue::null()});
      }
    }
  });
  return view.done();
}

// information_schema.FILES as MySQL 8.0 shows NDB's disk-data files: one row per undo
// file ("UNDO LOG") and data file ("DATAFILE"), from the dictionary of a data node (every
// data node holds the same files). No extent is handed out yet (rows stay in memory),
// so FREE_EXTENTS is TOTAL_EXTENTS. Undo files count in 4-byte words, as NDB's do.
SystemView files(StatementContext& context) {
  ViewBuilder view("information_schema", "FILES");
  view.column("FILE_ID", "bigint")
      .column("FILE_NAME", "text", true)
      .column("FILE_TYPE", "varchar(256)")
      .column("TABLESPACE_NAME", "varchar(268)", true)
      .column("TABLE_CATALOG", "varchar(64)")
      .column("TABLE_SCHEMA", "varchar(64)", true)
      .column("TABLE_NAME", "varchar(64)", true)
      .column("LOGFILE_GROUP_NAME", "varchar(256)", true)
      .column("LOGFILE_GROUP_NUMBER", "bigint", true)
      .column("ENGINE", "varchar(64)")
      .column("FULLTEXT_KEYS", "varchar(64)", true)
      .column("DELETED_ROWS", "varchar(64)", true)
      .column("UPDATE_COUNT", "varchar(64)", true)
      .column("FREE_EXTENTS", "bigint", true)
      .column("TOTAL_EXTENTS", "bigint", true)
      .column("EXTENT_SIZE", "bigint", true)
      .column("INITIAL_SIZE", "bigint", true)
      .column("MAXIMUM_SIZE", "bigint", true)
      .column("AUTOEXTEND_SIZE", "bigint", true)
      .column("CREATION_TIME", "varchar(64)", true)
      .column("LAST_UPDATE_TIME", "varchar(64)", true)
      .column("LAST_ACCESS_TIME", "varchar(64)", true)
      .column("RECOVER_TIME", "varchar(64)", true)
      .column("TRANSACTION_COUNTER", "varchar(64)", true)
      .column("VERSION", "bigint", true)
      .column("ROW_FORMAT", "varchar(256)", true)
      .column("TABLE_ROWS", "varchar(64)", true)
      .column("AVG_ROW_LENGTH", "varchar(64)", true)
      .column("DATA_LENGTH", "varchar(64)", true)
      .column("MAX_DATA_LENGTH", "varchar(64)", true)
      .column("INDEX_LENGTH", "varchar(64)", true)
      .column("DATA_FREE", "bigint", true)
      .column("CREATE_TIME", "varchar(64)", true)
      .column("UPDATE_TIME", "varchar(64)", true)
      .column("CHECK_TIME", "varchar(64)", true)
      .column("CHECKSUM", "varchar(64)", true)
      .column("STATUS", "varchar(256)", true)
      .column("EXTRA", "varchar(256)", true);
  const std::vector<::duo::protocol::FilegroupDef> filegroups =
      check(context.catalog.cluster().list_filegroups());
  const auto group_name = [&](uint32_t id) -> const ::duo::protocol::FilegroupDef* {
    for (const ::duo::protocol::FilegroupDef& fg : filegroups) {
      if (fg.id == id) return &fg;
    }
    return nullptr;
  };
  constexpr uint64_t kUndoWordBytes = 4;
  for (const ::duo::protocol::FilegroupDef& fg : filegroups) {
    const ::duo::protocol::FilegroupDef* group =
        fg.is_tablespace() ? group_name(fg.logfile_group_id) : &fg;
    for (const ::duo::protocol::DiskFileDef& file : fg.files) {
      const uint64_t extent = fg.is_tablespace() ? fg.extent_bytes : kUndoWordBytes;
      const uint64_t extents = extent == 0 ? 0 : file.size_bytes / extent;
      std::vector<SqlValue> row;
      row.push_back(number(file.file_id));
      row.push_back(text(file.name));
      row.push_back(text(fg.is_tablespace() ? "DATAFILE" : "UNDO LOG"));
      row.push_back(fg.is_tablespace() ? text(fg.name) : SqlValue::null());
      row.push_back(text(""));
      row.push_back(SqlValue::null());
      row.push_back(SqlValue::null());
      row.push_back(group != nullptr ? text(group->name) : SqlValue::null());
      row.push_back(group != nullptr ? number(group->id) : SqlValue::null());
      row.push_back(text("ndbcluster"));
      for (int k = 0; k < 3; ++k) row.push_back(SqlValue::null());
      row.push_back(number(extents));  // FREE_EXTENTS: nothing allocated yet
      row.push_back(number(extents));
      row.push_back(number(extent));
      row.push_back(number(file.size_bytes));
      row.push_back(number(file.size_bytes));
      row.push_back(fg.is_tablespace() ? number(fg.autoextend_bytes) : SqlValue::null());
      for (int k = 0; k < 5; ++k) row.push_back(SqlValue::null());
      row.push_back(number(fg.version));
      row.push_back(text("FIXED"));
      for (int k = 0; k < 5; ++k) row.push_back(SqlValue::null());
      row.push_back(SqlValue::null());  // DATA_FREE
      for (int k = 0; k < 4; ++k) row.push_back(SqlValue::null());
      row.push_back(text("NORMAL"));
      row.push_back(fg.is_tablespace()
                        ? SqlValue::null()
                        : text("UNDO_BUFFER_SIZE=" + std::to_string(fg.undo_buffer_bytes)));
      view.row(std::move(row));
    }
  }
  return view.done();
}

SystemView engines() {
  ViewBuilder view("information_schema", "ENGINES");
  view.column("ENGINE", "varchar(64)")
      .column("SUPPORT", "varchar(8)")
      .column("COMMENT", "varchar(80)")
      .column("TRANSACTIONS", "varchar(3)", true)
      .column("XA", "varchar(3)", true)
      .column("SAVEPOINTS", "varchar(3)", true);
  view.row({text("ndbcluster"), text("DEFAULT"), text("Clustered, fault-tolerant tables"),
            text("YES"), text("NO"), text("NO")});
  view.row({text("ndbinfo"), text("YES"), text("MySQL Cluster system information storage engine"),
            text("NO"), text("NO"), text("NO")});
  view.row({text("InnoDB"), text("YES"),
            text("Accepted in CREATE TABLE; such tables are ndbcluster tables"), text("YES"),
            text("NO"), text("NO")});
  return view.done();
}

SystemView processlist(StatementContext& context) {
  ViewBuilder view("information_schema", "PROCESSLIST");
  view.column("ID", "bigint unsigned")
      .column("USER", "varchar(32)")
      .column("HOST", "varchar(261)")
      .column("DB", "varchar(64)", true)
      .column("COMMAND", "varchar(16)")
      .column("TIME", "int")
      .column("STATE", "varchar(64)", true)
      .column("INFO", "text", true);  // MySQL: LONGTEXT
  for (const ProcessInfo& p : visible_processes(context)) {
    view.row({number(p.id), text(p.user), text(p.host),
              p.db.empty() ? SqlValue::null() : text(p.db), text(p.command), number(p.time_s),
              text(p.state), p.info ? text(*p.info) : SqlValue::null()});
  }
  return view.done();
}

SystemView user_privileges(StatementContext& context) {
  ViewBuilder view("information_schema", "USER_PRIVILEGES");
  view.column("GRANTEE", "varchar(292)")
      .column("TABLE_CATALOG", "varchar(512)")
      .column("PRIVILEGE_TYPE", "varchar(64)")
      .column("IS_GRANTABLE", "varchar(3)");
  // MySQL shows every account to those who may read the mysql database, else their own.
  const std::optional<catalog::UserRecord> self = session_account(context);
  const bool all = self && (self->privileges_on("mysql", "") & catalog::kSelectPrivilege) != 0;
  auto accounts =
      shared_user_catalog(context.catalog.cluster()).accounts_snapshot(context.api_session);
  for (const catalog::UserRecord& account : *accounts) {
    if (!all && !(self && account.user == self->user && account.host == self->host)) continue;
    const std::string grantee = catalog::account_text(account.user, account.host);
    catalog::PrivilegeSet global = 0;
    bool grantable = false;
    for (const catalog::Grant& g : account.grants) {
      if (g.level() != catalog::PrivilegeLevel::kGlobal) continue;
      global |= g.privileges;
      grantable |= g.grant_option;
    }
    if (global == 0) {
      view.row({text(grantee), text("def"), text("USAGE"), text("NO")});
      continue;
    }
    for (catalog::PrivilegeSet bit = 1; bit != 0 && bit <= global; bit <<= 1) {
      if ((global & bit) == 0) continue;
      view.row({text(grantee), text("def"), text(catalog::privilege_name(bit)),
                text(grantable ? "YES" : "NO")});
    }
  }
  return view.done();
}

// --- ndbinfo ---------------------------------------------------------------------

std::vector<mgm::NodeStatus> cluster_nodes() {
  std::string connect_string;
  {
    std::lock_guard lock(g_connect_string_mutex);
    connect_string = g_connect_string;
  }
  auto unavailable = [](const std::string& why) {
    throw SqlException(1296, "HY000", "Got error 4009 '" + why + "' from NDBINFO");
  };
  if (connect_string.empty()) unavailable("Cluster Failure");
  Result<mgm::ConnectString> target = mgm::parse_connect_string(connect_string);
  if (!target.ok()) unavailable(target.status().message());
  mgm::MgmConnection connection;
  if (Status connected = connection.connect(*target, kMgmCallTimeoutMs); !connected.ok()) {
    unavailable("Cluster Failure");
  }
  mgm::Message request;
  request.head = "get status";
  Result<mgm::Message> reply = connection.call(request, kMgmCallTimeoutMs);
  if (!reply.ok()) unavailable("Cluster Failure");
  Result<std::vector<mgm::NodeStatus>> nodes = mgm::parse_status_reply(*reply);
  if (!nodes.ok()) unavailable(nodes.status().message());
  return std::move(nodes).value();
}

SystemView nodes() {
  ViewBuilder view("ndbinfo", "nodes");
  view.column("node_id", "int unsigned")
      .column("status", "varchar(10)")
      .column("start_phase", "int unsigned");
  for (const mgm::NodeStatus& node : cluster_nodes()) {
    if (node.type != "NDB" || !mgm::is_running_data_node(node)) continue;
    // MySQL shows the phase a starting node is in, and 0 once it has started.
    view.row({number(node.node_id), text(node.status),
              number(node.status == "STARTED" ? 0 : node.start_phase)});
  }
  return view.done();
}

std::string memory_type_name(const std::string& area) {
  if (area == "datamemory") return "Data memory";
  if (area == "transactionmemory") return "Transaction memory";
  if (area == "diskpagebuffer") return "Disk page buffer";
  if (area == "schemamemory") return "Schema memory";
  return area;
}

SystemView memoryusage() {
  ViewBuilder view("ndbinfo", "memoryusage");
  view.column("node_id", "int unsigned")
      .column("memory_type", "varchar(512)")
      .column("used", "bigint unsigned")
      .column("used_pages", "bigint unsigned")
      .column("total", "bigint unsigned")
      .column("total_pages", "bigint unsigned");
  for (const mgm::NodeStatus& node : cluster_nodes()) {
    if (node.type != "NDB" || !mgm::is_running_data_node(node)) continue;
    for (const auto& [area, pages] : node.memory) {
      view.row({number(node.node_id), text(memory_type_name(area)), number(pages.used * kPageBytes),
                number(pages.used), number(pages.total * kPageBytes), number(pages.total)});
    }
  }
  return view.done();
}

// Each running data node's link to every other node, as mgmd sees the two ends: a data
// node links to the other data nodes, the management server and the API nodes.
SystemView transporters() {
  ViewBuilder view("ndbinfo", "transporters");
  view.column("node_id", "int unsigned")
      .column("remote_node_id", "int unsigned")
      .column("status", "varchar(512)")
      .column("remote_address", "varchar(512)");
  const std::vector<mgm::NodeStatus> all = cluster_nodes();
  for (const mgm::NodeStatus& node : all) {
    if (node.type != "NDB" || !mgm::is_running_data_node(node)) continue;
    for (const mgm::NodeStatus& remote : all) {
      if (remote.node_id == node.node_id) continue;
      const bool up =
          remote.type == "NDB" ? mgm::is_running_data_node(remote) : remote.status == "CONNECTED";
      view.row({number(node.node_id), number(remote.node_id),
                text(up ? "CONNECTED" : "DISCONNECTED"), text(up ? remote.address : "-")});
    }
  }
  return view.done();
}

std::string operation_type_name(const ::duo::protocol::DbinfoOperation& op) {
  switch (op.type) {
    case storage::OpType::kRead:
      return op.lock == storage::LockMode::kExclusive ? "READ-EX"
             : op.lock == storage::LockMode::kShared  ? "READ-SH"
                                                      : "READ";
    case storage::OpType::kInsert:
      return "INSERT";
    case storage::OpType::kUpdate:
    case storage::OpType::kInterpretedUpdate:
      return "UPDATE";
    case storage::OpType::kWrite:
      return "WRITE";
    case storage::OpType::kDelete:
      return "DELETE";
  }
  return "UNKNOWN";
}

// Every live operation at every data node's local_query instances (NDB's view of
// DBLQH's operation records): asked of the data nodes directly, not of mgmd.
SystemView cluster_operations(StatementContext& context) {
  ViewBuilder view("ndbinfo", "cluster_operations");
  view.column("node_id", "int unsigned")
      .column("block_instance", "int unsigned")
      .column("transid", "bigint unsigned")
      .column("operation_type", "varchar(9)")
      .column("state", "varchar(256)")
      .column("tableid", "int unsigned")
      .column("fragmentid", "int unsigned")
      .column("client_node_id", "int unsigned")
      .column("client_block_ref", "int unsigned")
      .column("tc_node_id", "int unsigned")
      .column("tc_block_no", "int unsigned")
      .column("tc_block_instance", "int unsigned");
  Result<std::vector<::duo::protocol::DbinfoOperation>> rows =
      context.catalog.cluster().dbinfo_operations();
  if (!rows.ok()) {
    throw SqlException(1296, "HY000",
                       "Got error 4009 '" + rows.status().message() + "' from NDBINFO");
  }
  std::sort(rows->begin(), rows->end(), [](const auto& a, const auto& b) {
    return std::tie(a.node_id, a.block_instance, a.transid) <
           std::tie(b.node_id, b.block_instance, b.transid);
  });
  for (const ::duo::protocol::DbinfoOperation& op : *rows) {
    view.row({number(op.node_id), number(op.block_instance), number(op.transid),
              text(operation_type_name(op)), text(op.waiting ? "LockWait" : "Prepared"),
              number(op.table_id), number(op.fragment), number(op.api_node),
              number(::duo::protocol::kApiBlock), number(op.transid >> 48),
              number(::duo::protocol::kCoordinatorBlock), number(0)});
  }
  return view.done();
}

}  // namespace

bool is_system_view_database(const std::string& db) {
  return db == "information_schema" || db == "ndbinfo" || db == "performance_schema";
}

std::vector<std::string> system_view_names(const std::string& db) {
  std::vector<std::string> names = server_view_names(db);
  if (db == "information_schema") {
    for (const char* name : {"COLUMNS", "ENGINES", "FILES", "KEY_COLUMN_USAGE", "PROCESSLIST", "SCHEMATA",
                             "STATISTICS", "TABLES", "USER_PRIVILEGES", "VIEWS"}) {
      names.emplace_back(name);
    }
  }
  if (db == "ndbinfo") names = {"cluster_operations", "memoryusage", "nodes", "transporters"};
  std::sort(names.begin(), names.end());
  return names;
}

NdbConnectionStatus ndb_connection_status(StatementContext& context) {
  NdbConnectionStatus status;
  status.node_id = context.catalog.cluster().node_id();
  std::string connect_string;
  {
    std::lock_guard lock(g_connect_string_mutex);
    connect_string = g_connect_string;
  }
  if (Result<mgm::ConnectString> target = mgm::parse_connect_string(connect_string); target.ok()) {
    status.management_host = target->host;
    status.management_port = target->port;
  }
  for (const mgm::NodeStatus& node : cluster_nodes()) {
    if (node.type != "NDB") continue;
    ++status.data_nodes;
    if (node.status == "STARTED") ++status.ready_data_nodes;
  }
  return status;
}

void set_management_connect_string(const std::string& connect_string) {
  std::lock_guard lock(g_connect_string_mutex);
  g_connect_string = connect_string;
}

std::string column_type_text(const catalog::SqlColumn& column) {
  std::string type = column.declared_type;
  if (type.ends_with(" binary")) type.resize(type.size() - 7);
  return type;
}

std::string column_key_text(const catalog::SqlTable& table, uint16_t column) {
  if (table.is_key_column(column)) return "PRI";
  for (size_t i = 1; i < table.indexes.size(); ++i) {
    if (table.indexes[i].columns.front() != column) continue;
    return table.indexes[i].kind == catalog::SqlIndexKind::kUnique &&
                   table.indexes[i].columns.size() == 1
               ? "UNI"
               : "MUL";
  }
  return "";
}

std::optional<SystemView> read_system_view(StatementContext& context, const std::string& db,
                                           const std::string& name) {
  if (!is_system_view_database(db)) return std::nullopt;
  if (std::optional<SystemView> view = read_server_view(context, db, name)) return view;
  if (db == "information_schema") {
    // MySQL's information_schema names are case-insensitive.
    const std::string view = upper(name);
    if (view == "SCHEMATA") return schemata(context);
    if (view == "TABLES") return tables(context);
    if (view == "COLUMNS") return columns(context);
    if (view == "STATISTICS") return statistics(context);
    if (view == "KEY_COLUMN_USAGE") return key_column_usage(context);
    if (view == "ENGINES") return engines();
    if (view == "FILES") return files(context);
    if (view == "USER_PRIVILEGES") return user_privileges(context);
    if (view == "PROCESSLIST") return processlist(context);
    if (view == "VIEWS") return views(context);
  } else {
    if (name == "nodes") return nodes();
    if (name == "memoryusage") return memoryusage();
    if (name == "transporters") return transporters();
    if (name == "cluster_operations") return cluster_operations(context);
  }
  // ndbinfo is a database of tables in MySQL (1146); information_schema's are views.
  if (db == "ndbinfo" || db == "performance_schema") throw_unknown_table(db, name);
  throw SqlException(1109, "42S02", "Unknown table '" + name + "' in " + db);
}

}  // namespace duo::sql::executor
