// A view's dictionary object and its definition text; see sql_view.h.
#include "sql-frontend/catalog/sql_view.h"
#include "sql-frontend/catalog/definition_escape.h"

#include <string_view>

namespace duo::sql::catalog {

namespace {

constexpr const char* kMagic = "duo-sql-view 1";
constexpr std::string_view kViewInfix = "/view/";

Status corrupt(const std::string& db, const std::string& name, const std::string& why) {
  return Status(ErrorCode::kCorruption, "view definition of " + db + "." + name + ": " + why);
}

}  // namespace

std::string cluster_view_name(const std::string& db, const std::string& view) {
  return db + std::string(kViewInfix) + view;
}

bool split_cluster_view_name(const std::string& cluster_name, std::string* db,
                             std::string* view) {
  const size_t at = cluster_name.find(kViewInfix);
  if (at == std::string::npos || at == 0 || at + kViewInfix.size() >= cluster_name.size()) {
    return false;
  }
  *db = cluster_name.substr(0, at);
  *view = cluster_name.substr(at + kViewInfix.size());
  return true;
}

std::string encode_view_definition(const SqlView& view) {
  std::string out = kMagic;
  out += '\n';
  const auto record = [&](std::string_view key, std::string_view value) {
    out += key;
    out += '\t';
    out += escape(value);
    out += '\n';
  };
  record("algorithm", view.algorithm);
  out += "definer\t" + escape(view.definer_user) + "\t" + escape(view.definer_host) + "\n";
  record("security", view.security);
  record("check_option", view.check_option);
  for (const std::string& column : view.columns) record("column", column);
  record("query", view.query);
  record("canonical", view.canonical);
  out += "charset\t" + escape(view.character_set_client) + "\t" +
         escape(view.collation_connection) + "\n";
  return out;
}

Result<SqlView> decode_view_definition(const std::string& text, std::string db,
                                       std::string name) {
  SqlView view;
  view.db = std::move(db);
  view.name = std::move(name);
  std::string_view rest = text;
  bool first = true;
  while (!rest.empty()) {
    const size_t eol = rest.find('\n');
    if (eol == std::string_view::npos) return corrupt(view.db, view.name, "unterminated line");
    const std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol + 1);
    if (first) {
      if (line != kMagic) return corrupt(view.db, view.name, "not a view definition");
      first = false;
      continue;
    }
    std::vector<std::string> fields;
    size_t start = 0;
    for (;;) {
      const size_t tab = line.find('\t', start);
      std::string field;
      if (!unescape(line.substr(start, tab == std::string_view::npos ? line.npos : tab - start),
                    &field)) {
        return corrupt(view.db, view.name, "bad escape");
      }
      fields.push_back(std::move(field));
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    const std::string& key = fields[0];
    const size_t want = key == "definer" || key == "charset" ? 3 : 2;
    if (fields.size() != want) return corrupt(view.db, view.name, "bad record " + key);
    if (key == "algorithm") {
      view.algorithm = fields[1];
    } else if (key == "definer") {
      view.definer_user = fields[1];
      view.definer_host = fields[2];
    } else if (key == "security") {
      view.security = fields[1];
    } else if (key == "check_option") {
      view.check_option = fields[1];
    } else if (key == "column") {
      view.columns.push_back(fields[1]);
    } else if (key == "query") {
      view.query = fields[1];
    } else if (key == "canonical") {
      view.canonical = fields[1];
    } else if (key == "charset") {
      view.character_set_client = fields[1];
      view.collation_connection = fields[2];
    } else {
      return corrupt(view.db, view.name, "unknown record " + key);
    }
  }
  if (first || view.query.empty()) return corrupt(view.db, view.name, "no query");
  return view;
}

::duo::protocol::TableDef to_view_table_def(const SqlView& view) {
  ::duo::protocol::TableDef def;
  def.schema.name = cluster_view_name(view.db, view.name);
  // The dictionary wants a key; a view never holds rows. One fragment: nothing to spread.
  storage::ColumnDef key;
  key.name = "view$key";
  key.type = storage::ColumnType::kInt;
  key.nullable = false;
  def.schema.columns.push_back(key);
  def.schema.primary_key = {0};
  def.fragment_count = 1;
  def.sql_definition = encode_view_definition(view);
  return def;
}

Result<SqlView> view_from_table_def(const ::duo::protocol::TableDef& table_def) {
  std::string db, name;
  if (!split_cluster_view_name(table_def.schema.name, &db, &name)) {
    return Status(ErrorCode::kCorruption, "not a view: " + table_def.schema.name);
  }
  return decode_view_definition(table_def.sql_definition, std::move(db), std::move(name));
}

}  // namespace duo::sql::catalog
