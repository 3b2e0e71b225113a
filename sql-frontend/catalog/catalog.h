// Catalog: databases and SQL tables as they live in the cluster, for duo_sqld.
//
// A database is a row of the system table "mysql/def/databases" (`name VARCHAR(64)
// PRIMARY KEY`), created at start by ensure_system_tables() if missing; `mysql` and
// `information_schema` are built in and always exist. A SQL table `db`.`t` is the
// cluster table "db/def/t" whose sql_definition holds its SqlTable (sql_table.h). The
// catalog keeps nothing itself: every lookup asks the client library, whose table cache
// the dictionary's schema events keep current, so DDL done by another sqld is seen at
// once.
//
// Errors are thrown as SqlException (sql_exception.h) with MySQL's codes.
//
// Thread-safety: safe from any thread (api::Cluster is; each call uses its own
// transaction on the caller's api::Session).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ndb-kernel/api/cluster_connection.h"
#include "sql-frontend/catalog/auto_increment.h"
#include "sql-frontend/catalog/sql_table.h"
#include "sql-frontend/catalog/sql_view.h"

namespace duo::sql::catalog {

inline constexpr const char* kDatabasesTable = "mysql/def/databases";
inline constexpr uint32_t kDatabaseNameLengthMax = 64;

// A table resolved for a statement: the cluster's TableDef (for operations) and the
// SQL definition (for binding).
struct BoundTable {
  api::TablePtr table_def;
  SqlTable sql;
};

class Catalog {
 public:
  explicit Catalog(api::Cluster* cluster) : cluster_(cluster) {}

  // Creates the system tables that are missing. Safe when several sqld start at once.
  Status ensure_system_tables();

  bool database_exists(api::Session& session, const std::string& db);
  // Sorted, including the built-in ones.
  std::vector<std::string> list_databases(api::Session& session);
  // 1007 if it exists (unless if_not_exists: then false).
  bool create_database(api::Session& session, const std::string& db, bool if_not_exists);
  // Drops the database's tables, then the database. 1008 if it does not exist (unless
  // if_exists: then false).
  bool drop_database(api::Session& session, const std::string& db, bool if_exists);

  // Sorted table names of `db`.
  std::vector<std::string> list_tables(const std::string& db);
  // 1146 if there is no such table; 1347 "'db.v' is not BASE TABLE" for a view.
  BoundTable get_table(const std::string& db, const std::string& table);
  // 1050 if it exists, as a table or a view (unless if_not_exists: then false).
  bool create_table(const SqlTable& table, bool if_not_exists);

  // Views (sql_view.h): dictionary objects of their own, seen by every sqld at once.
  // The view `db`.`name`, or nullopt when there is none (a table of that name is not one).
  std::optional<SqlView> find_view(const std::string& db, const std::string& name);
  // Sorted view names of `db`.
  std::vector<std::string> list_views(const std::string& db);
  // CREATE [OR REPLACE] VIEW: 1050 when a table has the name, or a view has it and not
  // `or_replace`.
  void create_view(const SqlView& view, bool or_replace);
  // ALTER VIEW: replaces the definition. 1347 "'db.v' is not VIEW" for a table, 1146 when
  // nothing has the name.
  void alter_view(const SqlView& view);
  // False when there is no such view.
  bool drop_view(const std::string& db, const std::string& name);
  // Whether `db`.`name` is a table (not a view).
  bool table_exists(const std::string& db, const std::string& name);
  // Drops the table and its AUTO_INCREMENT counter. False when the table does not exist.
  bool drop_table(api::Session& session, const std::string& db, const std::string& table);

  // Replaces `table`'s definition by `altered`, which has the same columns (indexes,
  // name and SQL definition change: the cluster's online ALTER rebuilds the indexes on
  // every data node). 1062 when a new UNIQUE index meets duplicate keys, 1050 when the
  // new name is taken; the table is then unchanged.
  api::TablePtr alter_table(const BoundTable& table, const SqlTable& altered);
  // Takes (`locked`) or lifts the copy lock of `table` (protocol::kTableCopyLocked,
  // owned by this API node): the data nodes refuse writes to it (temporary error) while
  // a copying ALTER reads it, and lift it themselves if this sqld dies. Taking it waits
  // for the table's open transactions to end. Returns the new definition.
  api::TablePtr set_copy_lock(const BoundTable& table, bool locked);
  // RENAME TABLE: same table id and rows under `db`.`name`, its AUTO_INCREMENT counter
  // moved along. 1050 if the name is taken.
  void rename_table(api::Session& session, const BoundTable& table, const std::string& db,
                    const std::string& name);
  // TRUNCATE TABLE as NDB does it: drop and re-create with the same definition, which
  // also resets AUTO_INCREMENT. 1146 if there is no such table.
  void truncate_table(api::Session& session, const std::string& db, const std::string& table);

  api::Cluster& cluster() { return *cluster_; }
  AutoIncrementFloors& auto_increment_floors() { return auto_increment_floors_; }

 private:
  api::TablePtr databases_table();
  // With the "#sql..." tables of copying ALTERs (left behind by a crashed sqld) or not.
  std::vector<std::string> list_tables(const std::string& db, bool with_alter_copies);
  // The databases table's key for `db`; 1102 for a name that cannot be one.
  static storage::AttrValues database_key(const std::string& db);

  api::Cluster* const cluster_;

  // Decoded SQL definitions by cluster table name, valid while the client library's
  // cache hands out the same TableDef (a schema change replaces it): decoding the
  // definition on every statement would cost more than the statement's key lookup.
  struct Decoded {
    api::TablePtr table_def;
    std::shared_ptr<const SqlTable> sql;
  };
  std::mutex decoded_mutex_;
  // One entry per table name used (a dropped table's stays until the name is reused).
  std::map<std::string, Decoded, std::less<>> decoded_;  // GUARDED_BY(decoded_mutex_)
  // Decoded view definitions, the same way (keyed by the view's cluster name).
  struct DecodedView {
    api::TablePtr table_def;
    std::shared_ptr<const SqlView> view;
  };
  std::map<std::string, DecodedView, std::less<>> decoded_views_;  // GUARDED_BY(decoded_mutex_)
  // The dictionary object of view `db`.`name`, or null.
  api::TablePtr view_object(const std::string& db, const std::string& name);
  AutoIncrementFloors auto_increment_floors_;
};

bool is_builtin_database(const std::string& db);

}  // namespace duo::sql::catalog
