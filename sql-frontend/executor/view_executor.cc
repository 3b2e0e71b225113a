// CREATE/ALTER/DROP VIEW, SHOW CREATE VIEW and reading views; see view_executor.h.
#include "sql-frontend/executor/view_executor.h"

#include <algorithm>
#include <set>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/catalog/user_record.h"
#include "sql-frontend/executor/admin_statements.h"
#include "sql-frontend/executor/expression_walk.h"
#include "sql-frontend/executor/privilege_check.h"
#include "sql-frontend/executor/view_text.h"
#include "sql-frontend/parser/ascii_case.h"
#include "sql-frontend/parser/ast_printer.h"
#include "sql-frontend/parser/parser.h"
#include "sql-frontend/protocol/character_sets.h"

namespace duo::sql::executor {

namespace {

// Views within views deeper than this are taken for a loop (MySQL 1462).
constexpr int kViewNestingMax = 32;
thread_local int t_view_depth = 0;

// Runs a view's query as its own statement text in its own database: names and result
// labels resolve as they did when the view was created. Restores the session's on exit.
class ViewScope {
 public:
  ViewScope(StatementContext& context, const catalog::SqlView& view)
      : context_(context),
        database_(context.session.database),
        source_(context.source_text) {
    if (t_view_depth >= kViewNestingMax) {
      throw SqlException(1462, "HY000",
                         "`" + view.db + "`.`" + view.name + "` contains view recursion");
    }
    ++t_view_depth;
    context.session.database = view.db;
    context.source_text = view.query;
  }
  ~ViewScope() {
    --t_view_depth;
    context_.session.database = database_;
    context_.source_text = source_;
  }
  ViewScope(const ViewScope&) = delete;
  ViewScope& operator=(const ViewScope&) = delete;

 private:
  StatementContext& context_;
  std::string database_;
  std::string_view source_;
};

std::string backquoted(const std::string& name) {
  std::string out = "`";
  for (char c : name) {
    out += c;
    if (c == '`') out += '`';
  }
  return out + "`";
}

[[noreturn]] void throw_invalid_view(const catalog::SqlView& view) {
  throw SqlException(1356, "HY000",
                     "View '" + view.db + "." + view.name +
                         "' references invalid table(s) or column(s) or function(s) or "
                         "definer/invoker of view lack rights to use them");
}

// The view's query parsed as a SELECT statement (owned by the result).
ParsedStatement parse_view_query(const std::string& text) {
  ParsedStatement parsed = parse_statement(text);
  if (!parsed.ok() || parsed.statement->kind != StatementKind::kSelect) {
    return ParsedStatement{};
  }
  return parsed;
}

// The names of the view's columns: its column list, else its query's labels. 1353 when
// the list's length differs, 1060 for a name twice.
std::vector<std::string> view_column_names(const catalog::SqlView& view,
                                           std::vector<std::string> labels) {
  if (!view.columns.empty()) {
    if (view.columns.size() != labels.size()) {
      throw SqlException(1353, "HY000",
                         "In definition of view, derived table or common table expression, "
                         "SELECT list and column names list have different column counts");
    }
    labels = view.columns;
  }
  std::set<std::string> seen;
  for (const std::string& label : labels) {
    if (!seen.insert(ascii_lower(label)).second) {
      throw SqlException(1060, "42S21", "Duplicate column name '" + label + "'");
    }
  }
  return labels;
}

// The FROM tables of `ref` by the name the query refers to them by, with their columns
// (a view's are left empty: its columns are then qualified only when it is alone).
void collect_from_tables(StatementContext& context, const TableRef& ref,
                         std::vector<std::pair<std::string, std::vector<std::string>>>* out) {
  if (ref.kind == TableRefKind::kJoin) {
    collect_from_tables(context, *ref.left, out);
    collect_from_tables(context, *ref.right, out);
    return;
  }
  if (ref.kind != TableRefKind::kTable) return;
  std::vector<std::string> columns;
  const std::string db = context.database_of(ref.table);
  if (context.catalog.table_exists(db, ref.table.name.name)) {
    for (const catalog::SqlColumn& column : context.catalog.get_table(db, ref.table.name.name).sql.columns) {
      columns.push_back(column.name);
    }
  }
  out->emplace_back(ref.alias ? ref.alias->name : ref.table.name.name, std::move(columns));
}

std::string collation_name(uint16_t id) {
  const protocol::CollationInfo* collation = protocol::find_collation(id);
  return collation != nullptr ? std::string(collation->name) : "utf8mb4_0900_ai_ci";
}

std::string character_set_name(uint16_t id) {
  const protocol::CollationInfo* collation = protocol::find_collation(id);
  return collation != nullptr ? std::string(collation->character_set) : "utf8mb4";
}

catalog::SqlView view_from_statement(StatementContext& context, const ViewStatement& statement) {
  const ObjectName& name = statement.names.front();
  catalog::SqlView view;
  view.db = context.database_of(name);
  view.name = name.name.name;
  if (!context.catalog.database_exists(context.api_session, view.db)) {
    throw_unknown_database(view.db);
  }
  if (statement.query_end <= statement.query_begin ||
      statement.query_end > context.source_text.size()) {
    throw SqlException(1064, "42000", "the view's query text is not available");
  }
  view.query = std::string(context.source_text.substr(
      statement.query_begin, statement.query_end - statement.query_begin));
  if (!statement.algorithm.empty()) view.algorithm = statement.algorithm;
  if (!statement.security.empty()) view.security = statement.security;
  if (!statement.check_option.empty()) view.check_option = statement.check_option;
  for (const Identifier& column : statement.columns) view.columns.push_back(column.name);
  if (statement.definer && !statement.definer->current_user) {
    view.definer_user = statement.definer->user;
    view.definer_host = statement.definer->host;
  } else {
    // CURRENT_USER: the account the session authenticated as.
    const std::optional<catalog::UserRecord> account = session_account(context);
    view.definer_user = context.session.user;
    view.definer_host = account ? account->host : context.session.host;
  }
  view.character_set_client = character_set_name(context.session.client_collation);
  view.collation_connection = collation_name(context.session.connection_collation);

  // The query must bind now (1146 for a missing table, 1054 for a missing column ...).
  ParsedStatement parsed = parse_view_query(view.query);
  if (!parsed.ok()) throw SqlException(1064, "42000", "the view's query does not parse");
  const auto& select = parsed.statement->as<SelectStatement>();
  std::vector<server::ColumnDefinition41> columns;
  {
    ViewScope scope(context, view);
    columns = describe_select(context, select);
  }
  std::vector<std::string> labels;
  for (const server::ColumnDefinition41& column : columns) labels.push_back(column.name);
  const std::vector<std::string> names = view_column_names(view, labels);
  ViewTextInput text;
  text.query = select.query.get();
  text.columns = columns;
  text.names = names;
  text.view_db = view.db;
  text.character_set_client = view.character_set_client;
  if (!select.query->is_union()) {
    ViewScope scope(context, view);
    for (const TableRefPtr& ref : select.query->select->from) {
      collect_from_tables(context, *ref, &text.tables);
    }
  }
  view.canonical = canonical_view_text(text).value_or(view.query);
  if (view.check_option != "NONE" && !view_is_updatable(context, view)) {
    throw SqlException(1368, "HY000",
                       "CHECK OPTION on non-updatable view '" + view.db + "." + view.name + "'");
  }
  return view;
}

server::StatementResult drop_views(StatementContext& context, const ViewStatement& statement) {
  std::string missing;
  for (const ObjectName& name : statement.names) {
    const std::string db = context.database_of(name);
    if (context.catalog.drop_view(db, name.name.name)) continue;
    if (context.catalog.table_exists(db, name.name.name)) {
      throw SqlException(1347, "HY000", "'" + db + "." + name.name.name + "' is not VIEW");
    }
    if (statement.if_exists) {
      context.add_warning(1051, "Unknown table '" + db + "." + name.name.name + "'", "Note");
      continue;
    }
    if (!missing.empty()) missing += ",";
    missing += db + "." + name.name.name;
  }
  if (!missing.empty()) throw SqlException(1051, "42S02", "Unknown table '" + missing + "'");
  return server::OkResult{};
}

}  // namespace

server::StatementResult execute_view(StatementContext& context, const ViewStatement& statement) {
  switch (statement.action) {
    case ViewAction::kCreate:
      context.catalog.create_view(view_from_statement(context, statement), statement.or_replace);
      break;
    case ViewAction::kAlter:
      context.catalog.alter_view(view_from_statement(context, statement));
      break;
    case ViewAction::kDrop:
      return drop_views(context, statement);
  }
  return server::OkResult{};
}

server::StatementResult show_create_view(StatementContext& context, const ShowStatement& show) {
  ObjectName name = *show.table;
  if (show.db) name.db = show.db;
  const std::string db = context.database_of(name);
  const std::optional<catalog::SqlView> view = find_view(context, db, name.name.name);
  if (!view) {
    if (context.catalog.table_exists(db, name.name.name)) {
      throw SqlException(1347, "HY000", "'" + db + "." + name.name.name + "' is not VIEW");
    }
    throw_unknown_table(db, name.name.name);
  }
  std::string text = "CREATE ALGORITHM=" + view->algorithm + " DEFINER=" +
                     backquoted(view->definer_user) + "@" + backquoted(view->definer_host) +
                     " SQL SECURITY " + view->security + " VIEW " + backquoted(view->name);
  if (!view->columns.empty()) {
    text += " (";
    for (size_t i = 0; i < view->columns.size(); ++i) {
      if (i > 0) text += ",";
      text += backquoted(view->columns[i]);
    }
    text += ")";
  }
  text += " AS " + view->canonical;
  if (view->check_option != "NONE") text += " WITH " + view->check_option + " CHECK OPTION";
  return text_result({"View", "Create View", "character_set_client", "collation_connection"},
                     {{view->name, text, view->character_set_client,
                       view->collation_connection}});
}

std::optional<catalog::SqlView> find_view(StatementContext& context, const std::string& db,
                                          const std::string& name) {
  if (context.catalog.table_exists(db, name)) return std::nullopt;
  return context.catalog.find_view(db, name);
}

DerivedRows read_view(StatementContext& context, const catalog::SqlView& view,
                      const RunDerived& run_derived) {
  ParsedStatement parsed = parse_view_query(view.query);
  if (!parsed.ok()) throw_invalid_view(view);
  DerivedRows rows;
  {
    ViewScope scope(context, view);
    try {
      if (view.security == "INVOKER") check_privileges(context, *parsed.statement);
      rows = run_derived(*parsed.statement->as<SelectStatement>().query);
    } catch (const SqlException& e) {
      // What no longer binds, or what the invoker may not read: the view's own error.
      const uint16_t code = e.code();
      if (code == 1146 || code == 1054 || code == 1142 || code == 1143 || code == 1044 ||
          code == 1049 || code == 1305) {
        throw_invalid_view(view);
      }
      throw;
    }
  }
  rows.names = view_column_names(view, std::move(rows.names));
  return rows;
}

catalog::SqlTable view_columns_table(StatementContext& context, const catalog::SqlView& view) {
  ParsedStatement parsed = parse_view_query(view.query);
  if (!parsed.ok()) throw_invalid_view(view);
  std::vector<server::ColumnDefinition41> columns;
  {
    ViewScope scope(context, view);
    try {
      columns = describe_select(context, parsed.statement->as<SelectStatement>());
    } catch (const SqlException& e) {
      if (e.code() == 1146 || e.code() == 1054) throw_invalid_view(view);
      throw;
    }
  }
  std::vector<std::string> labels;
  for (const server::ColumnDefinition41& c : columns) labels.push_back(c.name);
  const std::vector<std::string> names = view_column_names(view, labels);
  catalog::SqlTable table;
  table.db = view.db;
  table.name = view.name;
  for (size_t i = 0; i < columns.size(); ++i) {
    catalog::SqlColumn column;
    bool found = false;
    const server::ColumnDefinition41& meta = columns[i];
    if (!meta.org_table.empty() && !meta.org_name.empty() && !meta.schema.empty() &&
        context.catalog.table_exists(meta.schema, meta.org_table)) {
      const catalog::SqlTable source = context.catalog.get_table(meta.schema, meta.org_table).sql;
      const int at = source.find_column(meta.org_name);
      if (at >= 0) {
        column = source.columns[at];
        column.auto_increment = false;
        found = true;
      }
    }
    if (!found) {
      column.declared_type = "varchar(255)";
      catalog::derive_storage(&column);
    }
    column.name = names[i];
    table.columns.push_back(std::move(column));
  }
  return table;
}

bool view_is_updatable(StatementContext& context, const catalog::SqlView& view) {
  (void)context;
  ParsedStatement parsed = parse_view_query(view.query);
  if (!parsed.ok()) return false;
  const QueryExpr& query = *parsed.statement->as<SelectStatement>().query;
  if (query.is_union() || query.limit) return false;
  const SelectBlock& block = *query.select;
  if (block.distinct || !block.group_by.empty() || block.having != nullptr || block.limit ||
      block.from.size() != 1 || block.from.front()->kind != TableRefKind::kTable) {
    return false;
  }
  // A computed output is not updatable itself, but the view still is (MySQL).
  for (const SelectItem& item : block.items) {
    if (contains_aggregate(*item.expr) || contains_subquery(*item.expr)) return false;
  }
  return true;
}

}  // namespace duo::sql::executor
