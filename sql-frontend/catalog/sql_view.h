// SqlView: a SQL view as the cluster keeps it. A view `db`.`v` is a dictionary object of
// its own, the cluster table "db/view/v" (one key column, never holding rows) whose
// sql_definition carries the view's definition, so every duo_sqld sees a view as soon
// as the dictionary's schema event arrives and it survives restarts like a table does.
// The "view" namespace keeps views out of everything that lists tables ("db/def/...");
// the catalog keeps tables and views from sharing a name (MySQL's 1050).
//
// sql_definition encoding (text, one record per line, "key<TAB>value", values
// percent-escape '%', TAB and LF as %25 %09 %0A):
//   duo-sql-view 1
//   algorithm UNDEFINED|MERGE|TEMPTABLE
//   definer <user> <host>
//   security DEFINER|INVOKER
//   check_option NONE|CASCADED|LOCAL
//   column <name>                 (one per name of the view's column list, if given)
//   query <the SELECT as written, re-parsed at every use>
//   canonical <the SELECT in MySQL's canonical form: SHOW CREATE VIEW, VIEW_DEFINITION>
//   charset <character_set_client> <collation_connection>
// Unknown record kinds are refused, so a newer writer is detected.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <string>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/wire_codec.h"

namespace duo::sql::catalog {

struct SqlView {
  std::string db;
  std::string name;
  std::string algorithm = "UNDEFINED";
  std::string definer_user;
  std::string definer_host;
  std::string security = "DEFINER";
  std::string check_option = "NONE";
  std::vector<std::string> columns;  // the (cols) list; empty: the query's names
  std::string query;
  std::string canonical;
  std::string character_set_client = "utf8mb4";
  std::string collation_connection = "utf8mb4_0900_ai_ci";
};

// "db/view/v"; and back (false when `cluster_name` is not a view's).
std::string cluster_view_name(const std::string& db, const std::string& view);
bool split_cluster_view_name(const std::string& cluster_name, std::string* db, std::string* view);

std::string encode_view_definition(const SqlView& view);
// kCorruption for a malformed definition.
Result<SqlView> decode_view_definition(const std::string& text, std::string db, std::string name);

// The dictionary object for `view`; and back (kCorruption when it is not one).
::duo::protocol::TableDef to_view_table_def(const SqlView& view);
Result<SqlView> view_from_table_def(const ::duo::protocol::TableDef& table_def);

}  // namespace duo::sql::catalog
