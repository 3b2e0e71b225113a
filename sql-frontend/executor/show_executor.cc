// SHOW statements: DATABASES, TABLES, COLUMNS, INDEX, VARIABLES, STATUS, PROCESSLIST,
// ENGINES, WARNINGS/ERRORS, CREATE DATABASE, GRANTS, COLLATION, CHARACTER SET, TABLE
// STATUS, ENGINE NDB STATUS — MySQL 8.0's column sets, with
// LIKE (on the first column) and WHERE (over the result's columns by name). SHOW CREATE
// TABLE is ddl_executor.cc's. See admin_statements.h.
#include <algorithm>
#include <cctype>

#include "sql-frontend/catalog/auto_increment.h"
#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/catalog/table_alter.h"
#include "sql-frontend/executor/admin_statements.h"
#include "sql-frontend/executor/privilege_check.h"
#include "sql-frontend/executor/session_registry.h"
#include "sql-frontend/executor/system_variables.h"
#include "sql-frontend/executor/system_views.h"
#include "sql-frontend/executor/temporary_tables.h"
#include "sql-frontend/executor/view_executor.h"
#include "sql-frontend/parser/ascii_case.h"
#include "sql-frontend/parser/parser.h"
#include "sql-frontend/protocol/character_sets.h"

namespace duo::sql::executor {

namespace {

// SHOW PROCESSLIST without FULL shows this much of each statement, as MySQL.
constexpr size_t kProcesslistInfoChars = 100;

// Applies LIKE (to the first column) and WHERE (columns by name) to text rows.
std::vector<TextRow> filter_rows(const ShowStatement& show, const std::vector<std::string>& names,
                                 std::vector<TextRow> rows, StatementContext& context) {
  std::vector<TextRow> out;
  catalog::SqlTable table;
  if (show.where) {
    for (const std::string& name : names) {
      catalog::SqlColumn column;
      column.name = name;
      column.declared_type = "varchar(1024)";
      catalog::derive_storage(&column);
      table.columns.push_back(std::move(column));
    }
  }
  for (TextRow& row : rows) {
    if (show.like && (!row.front() || !like_match(*row.front(), *show.like, '\\'))) continue;
    if (show.where) {
      std::vector<SqlValue> values;
      for (const auto& cell : row)
        values.push_back(cell ? SqlValue::of_string(*cell) : SqlValue::null());
      EvalContext eval = context.eval(&table, &values);
      eval.clause = "where clause";
      if (!passes(show.where.get(), eval)) continue;
    }
    out.push_back(std::move(row));
  }
  return out;
}

server::StatementResult filtered(const ShowStatement& show, const std::vector<std::string>& names,
                                 std::vector<TextRow> rows, StatementContext& context) {
  return text_result(names, filter_rows(show, names, std::move(rows), context));
}

std::string database_of_show(StatementContext& context, const ShowStatement& show) {
  return show.db ? show.db->name : context.current_database();
}

bool database_exists(StatementContext& context, const std::string& db) {
  return is_system_view_database(db) || context.catalog.database_exists(context.api_session, db);
}

server::StatementResult show_databases(StatementContext& context, const ShowStatement& show) {
  std::vector<std::string> dbs = context.catalog.list_databases(context.api_session);
  if (std::find(dbs.begin(), dbs.end(), "ndbinfo") == dbs.end()) dbs.push_back("ndbinfo");
  std::sort(dbs.begin(), dbs.end());
  // Without SHOW DATABASES, an account sees the databases it has privileges in.
  const std::optional<catalog::UserRecord> account = session_account(context);
  const bool all = account && account->has_global(catalog::kShowDatabasesPrivilege);
  std::vector<TextRow> rows;
  for (const std::string& db : dbs) {
    if (!all && db != "information_schema" && !(account && account->has_any_privilege_in(db)))
      continue;
    rows.push_back({db});
  }
  std::string name = "Database";
  if (show.like) name += " (" + *show.like + ")";
  return filtered(show, {name}, std::move(rows), context);
}

server::StatementResult show_tables(StatementContext& context, const ShowStatement& show) {
  const std::string db = database_of_show(context, show);
  if (!database_exists(context, db)) throw_unknown_database(db);
  const bool views = is_system_view_database(db);
  std::vector<TextRow> rows;
  for (const std::string& t : views ? system_view_names(db) : context.catalog.list_tables(db)) {
    if (show.full)
      rows.push_back({t, std::string(views ? "SYSTEM VIEW" : "BASE TABLE")});
    else
      rows.push_back({t});
  }
  if (!views) {
    // Views are listed with the tables, in name order, as MySQL lists them.
    for (const std::string& v : context.catalog.list_views(db)) {
      if (show.full)
        rows.push_back({v, std::string("VIEW")});
      else
        rows.push_back({v});
    }
    std::sort(rows.begin(), rows.end(),
              [](const TextRow& a, const TextRow& b) { return *a[0] < *b[0]; });
  }
  std::string name = "Tables_in_" + db;
  if (show.like) name += " (" + *show.like + ")";
  std::vector<std::string> names = {name};
  if (show.full) names.push_back("Table_type");
  return filtered(show, names, std::move(rows), context);
}

// The definition of a table or system view named by SHOW COLUMNS/INDEX.
catalog::SqlTable table_of(StatementContext& context, const ShowStatement& show,
                           std::string* db_out) {
  ObjectName name = *show.table;
  if (show.db) name.db = show.db;
  const std::string db = context.database_of(name);
  *db_out = db;
  if (!database_exists(context, db)) throw_unknown_database(db);
  if (is_system_view_database(db)) {
    return read_system_view(context, db, name.name.name)->table;
  }
  // The session's temporary table first, then a view, then the table.
  if (context.temporary_tables != nullptr) {
    if (TemporaryTable* temporary = context.temporary_tables->find(db, name.name.name)) {
      return temporary->sql;
    }
  }
  if (std::optional<catalog::SqlView> view = find_view(context, db, name.name.name)) {
    return view_columns_table(context, *view);
  }
  return context.catalog.get_table(db, name.name.name).sql;
}

server::StatementResult show_columns(StatementContext& context, const ShowStatement& show) {
  std::string db;
  const catalog::SqlTable table = table_of(context, show, &db);
  std::vector<TextRow> rows;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const catalog::SqlColumn& column = table.columns[c];
    const std::string type = column_type_text(column);
    const std::string key = column_key_text(table, static_cast<uint16_t>(c));
    const std::string extra = column.auto_increment ? "auto_increment" : "";
    if (show.full) {
      std::optional<std::string> collation;
      if (column.char_length > 0) {
        collation =
            column.declared_type.ends_with(" binary") ? "utf8mb4_bin" : "utf8mb4_0900_ai_ci";
      }
      rows.push_back({column.name, type, collation, std::string(column.nullable ? "YES" : "NO"),
                      key, catalog::shown_default(column), extra,
                      std::string("select,insert,update,references"), std::string("")});
    } else {
      rows.push_back({column.name, type, std::string(column.nullable ? "YES" : "NO"), key,
                      catalog::shown_default(column), extra});
    }
  }
  if (show.full) {
    return filtered(
        show,
        {"Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges", "Comment"},
        std::move(rows), context);
  }
  return filtered(show, {"Field", "Type", "Null", "Key", "Default", "Extra"}, std::move(rows),
                  context);
}

server::StatementResult show_index(StatementContext& context, const ShowStatement& show) {
  std::string db;
  const catalog::SqlTable table = table_of(context, show, &db);
  std::vector<TextRow> rows;
  for (const catalog::SqlIndex& index : table.indexes) {
    for (size_t i = 0; i < index.columns.size(); ++i) {
      const catalog::SqlColumn& column = table.columns[index.columns[i]];
      rows.push_back({table.name,
                      std::string(index.kind == catalog::SqlIndexKind::kKey ? "1" : "0"),
                      index.name, std::to_string(i + 1), column.name, std::string("A"),
                      std::nullopt, std::nullopt, std::nullopt,
                      std::string(column.nullable ? "YES" : ""), std::string("BTREE"),
                      std::string(""), std::string(""), std::string("YES"), std::nullopt});
    }
  }
  return filtered(show,
                  {"Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name", "Collation",
                   "Cardinality", "Sub_part", "Packed", "Null", "Index_type", "Comment",
                   "Index_comment", "Visible", "Expression"},
                  std::move(rows), context);
}

server::StatementResult show_variables(StatementContext& context, const ShowStatement& show) {
  std::vector<TextRow> rows;
  for (auto& [name, value] :
       list_system_variables(&context.session, show.scope == VariableScope::kGlobal)) {
    rows.push_back({name, value});
  }
  return filtered(show, {"Variable_name", "Value"}, std::move(rows), context);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> status_variables(StatementContext& context) {
  std::vector<std::pair<std::string, std::string>> status =
      SessionRegistry::instance().status(context.session);
  // NDB's counters of this server's cluster connection (every session's, as NDB's global
  // ones): how many scans and round trips statements made, e.g. to see that a lookup by
  // a key or a unique index scanned nothing. Ndb_api_wait_*_count count the times a
  // session thread waited for the cluster (an execute, a scan batch, a dictionary
  // request): their sum per statement is the round trips tools/bench reports.
  api::Cluster& cluster = context.catalog.cluster();
  const api::ApiCoreStats api = cluster.stats();
  const api::WaitCounts waits = cluster.wait_counts();
  const transport::TransporterStats links = cluster.transporter_stats();
  status.emplace_back("Ndb_api_bytes_received_count", std::to_string(links.bytes_read));
  status.emplace_back("Ndb_api_bytes_sent_count", std::to_string(links.bytes_written));
  status.emplace_back("Ndb_api_scan_batch_count", std::to_string(api.scan_batches_received));
  status.emplace_back("Ndb_api_trans_abort_count", std::to_string(api.transactions_aborted));
  status.emplace_back("Ndb_api_trans_commit_count", std::to_string(api.transactions_committed));
  status.emplace_back("Ndb_api_trans_start_count", std::to_string(api.transactions_begun));
  status.emplace_back("Ndb_api_wait_exec_complete_count", std::to_string(waits.exec_complete));
  status.emplace_back("Ndb_api_wait_meta_request_count", std::to_string(waits.meta_request));
  status.emplace_back("Ndb_api_wait_scan_result_count", std::to_string(waits.scan_result));
  status.emplace_back("Ndb_scan_count", std::to_string(api.scans_started));
  // DuoDB's own: who read the cluster's sockets (the client library's poll right).
  const api::PollCounts polls = cluster.poll_counts();
  status.emplace_back("Duo_api_poll_handoff_count", std::to_string(polls.handoffs));
  status.emplace_back("Duo_api_poll_io_thread_turn_count", std::to_string(polls.io_thread_turns));
  status.emplace_back("Duo_api_poll_owner_turn_count", std::to_string(polls.owner_turns));
  status.emplace_back("Duo_api_poll_receive_thread_activation_count",
                      std::to_string(polls.receive_thread_activations));
  status.emplace_back("Duo_api_poll_sleep_count", std::to_string(polls.sleeps));
  // MySQL lists status variables case-insensitively by name.
  std::sort(status.begin(), status.end(), [](const auto& a, const auto& b) {
    return std::lexicographical_compare(a.first.begin(), a.first.end(), b.first.begin(),
                                        b.first.end(), [](char x, char y) {
                                          return std::tolower(static_cast<unsigned char>(x)) <
                                                 std::tolower(static_cast<unsigned char>(y));
                                        });
  });
  return status;
}

namespace {

server::StatementResult show_status(StatementContext& context, const ShowStatement& show) {
  std::vector<TextRow> rows;
  for (auto& [name, value] : status_variables(context)) rows.push_back({name, value});
  return filtered(show, {"Variable_name", "Value"}, std::move(rows), context);
}

server::StatementResult show_collation(StatementContext& context, const ShowStatement& show) {
  std::vector<TextRow> rows;
  for (const protocol::CollationInfo& c : protocol::collations()) {
    rows.push_back({std::string(c.name), std::string(c.character_set), std::to_string(c.id),
                    std::string(c.is_default ? "Yes" : ""), std::string("Yes"),
                    std::to_string(c.sort_length), std::string(c.no_pad ? "NO PAD" : "PAD SPACE")});
  }
  return filtered(show,
                  {"Collation", "Charset", "Id", "Default", "Compiled", "Sortlen", "Pad_attribute"},
                  std::move(rows), context);
}

server::StatementResult show_charset(StatementContext& context, const ShowStatement& show) {
  std::vector<TextRow> rows;
  for (const protocol::CharacterSetInfo& cs : protocol::character_sets()) {
    rows.push_back({std::string(cs.name), std::string(cs.description),
                    std::string(cs.default_collation), std::to_string(cs.max_length_bytes)});
  }
  return filtered(show, {"Charset", "Description", "Default collation", "Maxlen"}, std::move(rows),
                  context);
}

std::string quoted_identifier(const std::string& name) {
  std::string out = "`";
  for (char c : name) {
    out += c;
    if (c == '`') out += '`';
  }
  return out + "`";
}

// The table's rows, counted by a scan on the data nodes (COUNT(*)): NDB's handler
// reports the fragments' committed row counts; a count is what DuoDB has for that.
uint64_t table_row_count(StatementContext& context, const std::string& db,
                         const std::string& table) {
  const std::string sql =
      "SELECT COUNT(*) FROM " + quoted_identifier(db) + "." + quoted_identifier(table);
  ParsedStatement parsed = parse_statement(sql);
  if (!parsed.ok()) return 0;
  // A statement of its own: each count is one cluster transaction (a scan).
  const std::vector<SqlValue> no_params;
  StatementContext counting{context.session, context.catalog, context.api_session, no_params};
  counting.source_text = sql;
  server::StatementResult result =
      execute_select(counting, parsed.statement->as<SelectStatement>());
  const auto* rows = std::get_if<server::ResultSet>(&result);
  if (rows == nullptr || rows->rows.empty() || rows->rows.front().empty()) return 0;
  const server::Value& count = rows->rows.front().front();
  if (const auto* i = std::get_if<int64_t>(&count)) return static_cast<uint64_t>(*i);
  if (const auto* u = std::get_if<uint64_t>(&count)) return *u;
  return 0;
}

// MySQL 8.0's columns; the statistics the cluster does not keep are 0 or NULL.
server::StatementResult show_table_status(StatementContext& context, const ShowStatement& show) {
  const std::string db = database_of_show(context, show);
  if (!database_exists(context, db)) throw_unknown_database(db);
  std::vector<TextRow> rows;
  if (!is_system_view_database(db)) {
    for (const std::string& name : context.catalog.list_tables(db)) {
      if (show.like && !like_match(name, *show.like, '\\')) continue;
      catalog::BoundTable bound;
      try {
        bound = context.catalog.get_table(db, name);
      } catch (const SqlException& e) {
        if (e.code() == 1146) continue;  // dropped while we listed
        throw;
      }
      const std::optional<uint64_t> next = catalog::peek_auto_increment(
          context.catalog.cluster(), context.api_session, catalog::cluster_table_name(db, name));
      std::optional<std::string> auto_increment;
      if (next)
        auto_increment = std::to_string(*next);
      else if (std::any_of(bound.sql.columns.begin(), bound.sql.columns.end(),
                           [](const catalog::SqlColumn& c) { return c.auto_increment; }))
        auto_increment = "1";
      rows.push_back({name, std::string("ndbcluster"), std::string("10"), std::string("Dynamic"),
                      std::to_string(table_row_count(context, db, name)), std::string("0"),
                      std::string("0"), std::string("0"), std::string("0"), std::string("0"),
                      auto_increment, std::nullopt, std::nullopt, std::nullopt,
                      std::string("utf8mb4_0900_ai_ci"), std::nullopt, std::string(""),
                      std::string("")});
    }
  }
  return filtered(
      show,
      {"Name", "Engine", "Version", "Row_format", "Rows", "Avg_row_length", "Data_length",
       "Max_data_length", "Index_length", "Data_free", "Auto_increment", "Create_time",
       "Update_time", "Check_time", "Collation", "Checksum", "Create_options", "Comment"},
      std::move(rows), context);
}

// SHOW ENGINE NDB STATUS: the server's connection to the cluster, as NDB's mysqld
// shows it (Type, Name, Status). The NDB API object counters it adds have no
// counterpart in the client library and are not shown.
server::StatementResult show_engine_status(StatementContext& context, const ShowStatement& show) {
  const std::string engine = ascii_lower(show.engine);
  if (engine != "ndb" && engine != "ndbcluster") {
    if (engine == "innodb" || engine == "performance_schema" || engine == "myisam" ||
        engine == "memory") {
      return text_result({"Type", "Name", "Status"}, {});
    }
    throw SqlException(1286, "42000", "Unknown storage engine '" + show.engine + "'");
  }
  const NdbConnectionStatus status = ndb_connection_status(context);
  const std::string connection =
      "cluster_node_id=" + std::to_string(status.node_id) +
      ", connected_host=" + status.management_host +
      ", connected_port=" + std::to_string(status.management_port) +
      ", number_of_data_nodes=" + std::to_string(status.data_nodes) +
      ", number_of_ready_data_nodes=" + std::to_string(status.ready_data_nodes) +
      ", connect_count=0";
  return text_result({"Type", "Name", "Status"},
                     {{std::string("ndbcluster"), std::string("connection"), connection}});
}

server::StatementResult show_processlist(StatementContext& context, const ShowStatement& show) {
  std::vector<TextRow> rows;
  for (ProcessInfo& p : visible_processes(context)) {
    if (p.info && !show.full && p.info->size() > kProcesslistInfoChars)
      p.info->resize(kProcesslistInfoChars);
    rows.push_back({std::to_string(p.id), p.user, p.host,
                    p.db.empty() ? std::nullopt : std::optional<std::string>(p.db), p.command,
                    std::to_string(p.time_s), p.state, p.info});
  }
  return text_result({"Id", "User", "Host", "db", "Command", "Time", "State", "Info"}, rows);
}

server::StatementResult show_create_database(StatementContext& context, const ShowStatement& show) {
  const std::string db = show.db->name;
  if (!database_exists(context, db)) throw_unknown_database(db);
  std::string text = "CREATE DATABASE ";
  if (show.if_not_exists) text += "/*!32312 IF NOT EXISTS*/ ";
  text += "`" + db +
          "` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci */ /*!80016 "
          "DEFAULT ENCRYPTION='N' */";
  return text_result({"Database", "Create Database"}, {{db, text}});
}

server::StatementResult show_grants(StatementContext& context, const ShowStatement& show) {
  std::optional<catalog::UserRecord> record;
  if (!show.user || show.user->current_user) {
    record = session_account(context);
    if (!record) {
      throw SqlException(1141, "42000",
                         "There is no such grant defined for user '" + context.session.user +
                             "' on host '" + context.session.host + "'");
    }
  } else {
    record = shared_user_catalog(context.catalog.cluster())
                 .find(context.api_session, show.user->user, show.user->host);
    if (!record) {
      throw SqlException(1141, "42000",
                         "There is no such grant defined for user '" + show.user->user +
                             "' on host '" + show.user->host + "'");
    }
  }
  std::vector<TextRow> rows;
  for (const std::string& line : catalog::show_grants_lines(*record)) rows.push_back({line});
  return text_result({"Grants for " + record->user + "@" + record->host}, rows);
}

}  // namespace

server::ResultSet text_result(const std::vector<std::string>& names,
                              const std::vector<TextRow>& rows) {
  server::ResultSet result;
  for (const std::string& name : names)
    result.columns.push_back(computed_column_definition(name, protocol::FieldType::kVarString));
  for (const TextRow& row : rows) {
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

server::StatementResult execute_show(StatementContext& context, const ShowStatement& show) {
  switch (show.what) {
    case ShowKind::kDatabases:
      return show_databases(context, show);
    case ShowKind::kTables:
      return show_tables(context, show);
    case ShowKind::kColumns:
      return show_columns(context, show);
    case ShowKind::kIndex:
      return show_index(context, show);
    case ShowKind::kVariables:
      return show_variables(context, show);
    case ShowKind::kStatus:
      return show_status(context, show);
    case ShowKind::kProcesslist:
      return show_processlist(context, show);
    case ShowKind::kWarnings:
    case ShowKind::kErrors: {
      // The previous statement's diagnostics; SHOW ERRORS lists only its errors.
      std::vector<std::vector<std::optional<std::string>>> rows;
      if (context.previous_diagnostics != nullptr) {
        for (const StatementContext::Warning& w : *context.previous_diagnostics) {
          if (show.what == ShowKind::kErrors && w.level != "Error") continue;
          rows.push_back({w.level, std::to_string(w.code), w.message});
        }
      }
      return text_result({"Level", "Code", "Message"}, rows);
    }
    case ShowKind::kEngines:
      return text_result(
          {"Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"},
          {{std::string("ndbcluster"), std::string("DEFAULT"),
            std::string("Clustered, fault-tolerant tables"), std::string("YES"), std::string("NO"),
            std::string("NO")},
           {std::string("ndbinfo"), std::string("YES"),
            std::string("MySQL Cluster system information storage engine"), std::string("NO"),
            std::string("NO"), std::string("NO")},
           {std::string("InnoDB"), std::string("YES"),
            std::string("Accepted in CREATE TABLE; such tables are ndbcluster tables"),
            std::string("YES"), std::string("NO"), std::string("NO")}});
    case ShowKind::kCreateDatabase:
      return show_create_database(context, show);
    case ShowKind::kCreateTable: {
      // SHOW CREATE TABLE of a view shows the view, as MySQL does.
      ObjectName name = *show.table;
      if (show.db) name.db = show.db;
      const std::string db = context.database_of(name);
      if (context.temporary_tables != nullptr) {
        if (TemporaryTable* temporary = context.temporary_tables->find(db, name.name.name)) {
          std::string text = catalog::show_create_table_text(temporary->sql, std::nullopt);
          if (text.starts_with("CREATE TABLE")) text.insert(7, "TEMPORARY ");
          if (const size_t at = text.find(") ENGINE=ndbcluster"); at != std::string::npos) {
            text.replace(at + 9, 10, temporary->engine);
          }
          return text_result({"Table", "Create Table"}, {{temporary->sql.name, text}});
        }
      }
      if (find_view(context, db, name.name.name)) return show_create_view(context, show);
      return show_create_table(context, show);  // ddl_executor.cc
    }
    case ShowKind::kCreateView:
      return show_create_view(context, show);  // view_executor.cc
    case ShowKind::kGrants:
      return show_grants(context, show);
    case ShowKind::kCollation:
      return show_collation(context, show);
    case ShowKind::kCharset:
      return show_charset(context, show);
    case ShowKind::kTableStatus:
      return show_table_status(context, show);
    case ShowKind::kEngineStatus:
      return show_engine_status(context, show);
    default:
      throw_not_supported("this SHOW statement");
  }
}

}  // namespace duo::sql::executor
