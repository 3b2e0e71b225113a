// Views of the server's variables, counters, character sets and connections; see
// server_views.h.
#include "sql-frontend/executor/server_views.h"

#include <algorithm>
#include <cctype>

#include "sql-frontend/executor/admin_statements.h"
#include "sql-frontend/executor/session_registry.h"
#include "sql-frontend/executor/system_variables.h"
#include "sql-frontend/executor/system_view_builder.h"
#include "sql-frontend/parser/ascii_case.h"
#include "sql-frontend/protocol/character_sets.h"

namespace duo::sql::executor {

namespace {

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// A (name, value) view: information_schema's spells names upper case (MySQL 5.7,
// MariaDB), performance_schema's as SHOW does (MySQL 8.0).
SystemView name_value_view(const std::string& db, const std::string& name,
                           const std::vector<std::pair<std::string, std::string>>& pairs) {
  const bool information_schema = db == "information_schema";
  ViewBuilder view(db, name);
  view.column("VARIABLE_NAME", "varchar(64)").column("VARIABLE_VALUE", "varchar(1024)", true);
  for (const auto& [variable, value] : pairs) {
    view.row({text(information_schema ? upper(variable) : variable), text(value)});
  }
  return view.done();
}

SystemView collations_view() {
  ViewBuilder view("information_schema", "COLLATIONS");
  view.column("COLLATION_NAME", "varchar(64)")
      .column("CHARACTER_SET_NAME", "varchar(64)")
      .column("ID", "bigint unsigned")
      .column("IS_DEFAULT", "varchar(3)")
      .column("IS_COMPILED", "varchar(3)")
      .column("SORTLEN", "int unsigned")
      .column("PAD_ATTRIBUTE", "varchar(9)");
  for (const protocol::CollationInfo& c : protocol::collations()) {
    view.row({text(std::string(c.name)), text(std::string(c.character_set)), number(c.id),
              text(c.is_default ? "Yes" : ""), text("Yes"), number(c.sort_length),
              text(c.no_pad ? "NO PAD" : "PAD SPACE")});
  }
  return view.done();
}

SystemView character_sets_view() {
  ViewBuilder view("information_schema", "CHARACTER_SETS");
  view.column("CHARACTER_SET_NAME", "varchar(64)")
      .column("DEFAULT_COLLATE_NAME", "varchar(64)")
      .column("DESCRIPTION", "varchar(2048)")
      .column("MAXLEN", "int unsigned");
  for (const protocol::CharacterSetInfo& cs : protocol::character_sets()) {
    view.row({text(std::string(cs.name)), text(std::string(cs.default_collation)),
              text(std::string(cs.description)), number(cs.max_length_bytes)});
  }
  return view.done();
}

// MySQL lists the attributes of the connections of the asking account.
SystemView connect_attributes_view(StatementContext& context) {
  ViewBuilder view("performance_schema", "session_account_connect_attrs");
  view.column("PROCESSLIST_ID", "bigint unsigned")
      .column("ATTR_NAME", "varchar(32)")
      .column("ATTR_VALUE", "varchar(1024)", true)
      .column("ORDINAL_POSITION", "int");
  for (const auto& [id, attributes] :
       SessionRegistry::instance().connect_attributes_of(context.session.user)) {
    for (size_t i = 0; i < attributes.size(); ++i) {
      view.row({number(id), text(attributes[i].first), text(attributes[i].second),
                SqlValue::of_int(static_cast<int64_t>(i))});
    }
  }
  return view.done();
}

}  // namespace

std::vector<std::string> server_view_names(const std::string& db) {
  if (db == "information_schema") {
    return {"CHARACTER_SETS",   "COLLATIONS",     "GLOBAL_STATUS",
            "GLOBAL_VARIABLES", "SESSION_STATUS", "SESSION_VARIABLES"};
  }
  if (db == "performance_schema") {
    return {"global_status", "global_variables", "session_account_connect_attrs", "session_status",
            "session_variables"};
  }
  return {};
}

std::optional<SystemView> read_server_view(StatementContext& context, const std::string& db,
                                           const std::string& name) {
  // information_schema names are case-insensitive (the caller upper-cased them);
  // performance_schema's are table names (lower case).
  const std::string view = ascii_lower(name);
  if (db != "information_schema" && db != "performance_schema") return std::nullopt;
  const std::string shown = db == "information_schema" ? upper(view) : view;
  if (view == "global_variables" || view == "session_variables") {
    return name_value_view(db, shown,
                           list_system_variables(&context.session, view == "global_variables"));
  }
  if (view == "global_status" || view == "session_status") {
    return name_value_view(db, shown, status_variables(context));
  }
  if (db == "information_schema" && view == "collations") return collations_view();
  if (db == "information_schema" && view == "character_sets") return character_sets_view();
  if (db == "performance_schema" && view == "session_account_connect_attrs") {
    return connect_attributes_view(context);
  }
  return std::nullopt;
}

}  // namespace duo::sql::executor
