// Databases and tables in the cluster; see catalog.h.
#include "sql-frontend/catalog/catalog.h"

#include <algorithm>

#include "sql-frontend/catalog/auto_increment.h"
#include "sql-frontend/catalog/sql_exception.h"

namespace duo::sql::catalog {

namespace {

SqlTable databases_definition() {
  SqlTable table;
  table.db = "mysql";
  table.name = "databases";
  SqlColumn name;
  name.name = "name";
  name.declared_type = "varchar(" + std::to_string(kDatabaseNameLengthMax) + ") binary";
  name.nullable = false;
  derive_storage(&name);
  table.columns.push_back(std::move(name));
  table.indexes.push_back(SqlIndex{SqlIndexKind::kPrimary, "PRIMARY", {0}});
  return table;
}

}  // namespace

bool is_builtin_database(const std::string& db) {
  return db == "mysql" || db == "information_schema" || db == "ndbinfo" ||
         db == "performance_schema";
}

Status Catalog::ensure_system_tables() {
  for (const SqlTable& definition : {databases_definition(), auto_increment_definition()}) {
    const std::string name = cluster_table_name(definition.db, definition.name);
    Result<api::TablePtr> existing = cluster_->get_table(name);
    if (existing.ok()) continue;
    if (!existing.status().is(ErrorCode::kNoSuchTable) &&
        !existing.status().is(ErrorCode::kNotFound)) {
      return existing.status();
    }
    Result<api::TablePtr> created = cluster_->create_table(to_table_def(definition));
    // Another sqld starting at the same time may have won the race.
    if (!created.ok() && !created.status().is(ErrorCode::kTableExists)) return created.status();
  }
  return Status::OK();
}

api::TablePtr Catalog::databases_table() {
  Result<api::TablePtr> table = cluster_->get_table(kDatabasesTable);
  if (!table.ok()) throw_status(table.status());
  return *table;
}

storage::AttrValues Catalog::database_key(const std::string& db) {
  if (db.size() > kDatabaseNameLengthMax || db.empty()) {
    throw SqlException(1102, "42000", "Incorrect database name '" + db + "'");
  }
  storage::AttrValues key;
  key.add(0, db);
  return key;
}

bool Catalog::database_exists(api::Session& session, const std::string& db) {
  if (is_builtin_database(db)) return true;
  if (db.empty() || db.size() > kDatabaseNameLengthMax) return false;
  api::TablePtr table = databases_table();
  auto tx = check(session.begin(table.get()));
  const uint32_t op =
      check(tx->read(*table, database_key(db), {}, storage::LockMode::kCommittedRead,
                     api::OpOptions{.ignore_error = true}));
  check(tx->execute(api::ExecType::kCommit));
  api::OpResult result = check(tx->result(op));
  if (result.status.is(ErrorCode::kNotFound)) return false;
  check(result.status);
  return true;
}

std::vector<std::string> Catalog::list_databases(api::Session& session) {
  api::TablePtr table = databases_table();
  std::vector<std::string> out = {"information_schema", "mysql", "ndbinfo", "performance_schema"};
  auto tx = check(session.begin());
  auto cursor = check(tx->scan(*table, api::ScanSpec{}));
  storage::AttrValues row;
  while (check(cursor->next(&row))) out.emplace_back(row.value(0));
  cursor.reset();
  check(tx->execute(api::ExecType::kCommit));
  std::sort(out.begin(), out.end());
  return out;
}

bool Catalog::create_database(api::Session& session, const std::string& db, bool if_not_exists) {
  auto exists_error = [&]() {
    if (if_not_exists) return false;
    throw SqlException(1007, "HY000", "Can't create database '" + db + "'; database exists");
  };
  if (is_builtin_database(db)) return exists_error();
  api::TablePtr table = databases_table();
  auto tx = check(session.begin(table.get()));
  check(tx->insert(*table, database_key(db)));
  Status status = tx->execute(api::ExecType::kCommit);
  if (status.is(ErrorCode::kDuplicateKey)) return exists_error();
  check(status);
  return true;
}

bool Catalog::drop_database(api::Session& session, const std::string& db, bool if_exists) {
  if (is_builtin_database(db)) {
    throw SqlException(1044, "42000", "Access denied for user to database '" + db + "'");
  }
  if (!database_exists(session, db)) {
    if (if_exists) return false;
    throw SqlException(1008, "HY000", "Can't drop database '" + db + "'; database doesn't exist");
  }
  for (const std::string& v : list_views(db)) drop_view(db, v);
  for (const std::string& t : list_tables(db, /*with_alter_copies=*/true)) {
    drop_table(session, db, t);
  }
  api::TablePtr table = databases_table();
  auto tx = check(session.begin(table.get()));
  check(tx->remove(*table, database_key(db), api::OpOptions{.ignore_error = true}));
  check(tx->execute(api::ExecType::kCommit));
  return true;
}

std::vector<std::string> Catalog::list_tables(const std::string& db) {
  return list_tables(db, /*with_alter_copies=*/false);
}

std::vector<std::string> Catalog::list_tables(const std::string& db, bool with_alter_copies) {
  std::vector<std::string> out;
  for (const ::duo::protocol::TableListEntry& entry : check(cluster_->list_tables())) {
    std::string entry_db, name;
    if (split_cluster_table_name(entry.name, &entry_db, &name) && entry_db == db) {
      if (db == "mysql" && (name == "databases" || name == "auto_increment")) continue;  // internal
      // A copying ALTER's tables (MySQL hides its "#sql..." tables too).
      if (!with_alter_copies && name.starts_with("#sql")) continue;
      // BLOB/TEXT parts tables go with their table (created, dropped, renamed by it).
      if (api::is_blob_parts_table_name(name)) continue;
      out.push_back(name);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

BoundTable Catalog::get_table(const std::string& db, const std::string& table) {
  const std::string name = cluster_table_name(db, table);
  Result<api::TablePtr> def = cluster_->get_table(name);
  if (!def.ok()) {
    if (def.status().is(ErrorCode::kNoSuchTable) || def.status().is(ErrorCode::kNotFound)) {
      if (view_object(db, table) != nullptr) {
        throw SqlException(1347, "HY000", "'" + db + "." + table + "' is not BASE TABLE");
      }
      throw_unknown_table(db, table);
    }
    throw_status(def.status());
  }
  {
    std::lock_guard<std::mutex> lock(decoded_mutex_);
    auto it = decoded_.find(name);
    if (it != decoded_.end() && it->second.table_def == *def) {
      return BoundTable{*def, *it->second.sql};
    }
  }
  Result<SqlTable> sql = from_table_def(**def);
  if (!sql.ok()) throw_status(sql.status());
  auto decoded = std::make_shared<const SqlTable>(std::move(sql).value());
  {
    std::lock_guard<std::mutex> lock(decoded_mutex_);
    decoded_[name] = Decoded{*def, decoded};
  }
  return BoundTable{*def, *decoded};
}

bool Catalog::create_table(const SqlTable& table, bool if_not_exists) {
  if (view_object(table.db, table.name) != nullptr) {
    if (if_not_exists) return false;
    throw SqlException(1050, "42S01", "Table '" + table.name + "' already exists");
  }
  Result<api::TablePtr> created =
      cluster_->create_table(to_table_def(table), blob_parts_specs(table));
  if (created.ok()) return true;
  if (created.status().is(ErrorCode::kTableExists)) {
    if (if_not_exists) return false;
    throw SqlException(1050, "42S01", "Table '" + table.name + "' already exists");
  }
  throw_status(created.status());
}

api::TablePtr Catalog::alter_table(const BoundTable& table, const SqlTable& altered) {
  ::duo::protocol::TableDef def = *table.table_def;
  ::duo::protocol::TableDef wanted = to_table_def(altered);
  def.schema.name = std::move(wanted.schema.name);
  def.schema.ordered_indexes = std::move(wanted.schema.ordered_indexes);
  def.sql_definition = std::move(wanted.sql_definition);
  def.flags = wanted.flags;  // READ_BACKUP changes in place
  Result<api::TablePtr> done = cluster_->alter_table(std::move(def));
  if (done.ok()) return std::move(done).value();
  const Status& status = done.status();
  if (status.is(ErrorCode::kTableExists)) {
    throw SqlException(1050, "42S01", "Table '" + altered.name + "' already exists");
  }
  if (status.is(ErrorCode::kDuplicateKey)) {
    // The data node names the index alone; MySQL 8.0 qualifies it with the table.
    std::string message = status.message();
    const std::string marker = "for key '";
    if (const size_t at = message.rfind(marker); at != std::string::npos) {
      message.insert(at + marker.size(), altered.name + ".");
    }
    throw SqlException(1062, "23000", message);
  }
  throw_status(status);
}

api::TablePtr Catalog::set_copy_lock(const BoundTable& table, bool locked) {
  ::duo::protocol::TableDef def = *table.table_def;
  def.flags = ::duo::protocol::with_copy_lock(def.flags, locked ? cluster_->node_id() : 0);
  Result<api::TablePtr> done = cluster_->alter_table(std::move(def));
  if (!done.ok()) throw_status(done.status());
  return std::move(done).value();
}

void Catalog::rename_table(api::Session& session, const BoundTable& table, const std::string& db,
                           const std::string& name) {
  SqlTable renamed = table.sql;
  renamed.db = db;
  renamed.name = name;
  alter_table(table, renamed);
  rename_auto_increment(*cluster_, session, cluster_table_name(table.sql.db, table.sql.name),
                        cluster_table_name(db, name));
}

void Catalog::truncate_table(api::Session& session, const std::string& db,
                             const std::string& table) {
  const BoundTable bound = get_table(db, table);
  if (!drop_table(session, db, table)) throw_unknown_table(db, table);
  create_table(bound.sql, /*if_not_exists=*/false);
}

bool Catalog::drop_table(api::Session& session, const std::string& db, const std::string& table) {
  const std::string name = cluster_table_name(db, table);
  Status status = cluster_->drop_table(name);
  if (status.is(ErrorCode::kNoSuchTable) || status.is(ErrorCode::kNotFound)) return false;
  check(status);
  drop_auto_increment(*cluster_, session, name);
  return true;
}

// --- views

bool Catalog::table_exists(const std::string& db, const std::string& name) {
  Result<api::TablePtr> def = cluster_->get_table(cluster_table_name(db, name));
  if (def.ok()) return true;
  if (def.status().is(ErrorCode::kNoSuchTable) || def.status().is(ErrorCode::kNotFound)) {
    return false;
  }
  throw_status(def.status());
}

api::TablePtr Catalog::view_object(const std::string& db, const std::string& name) {
  Result<api::TablePtr> def = cluster_->get_table(cluster_view_name(db, name));
  if (def.ok()) return *def;
  if (def.status().is(ErrorCode::kNoSuchTable) || def.status().is(ErrorCode::kNotFound)) {
    return nullptr;
  }
  throw_status(def.status());
}

std::optional<SqlView> Catalog::find_view(const std::string& db, const std::string& name) {
  api::TablePtr def = view_object(db, name);
  if (def == nullptr) return std::nullopt;
  const std::string key = cluster_view_name(db, name);
  {
    std::lock_guard<std::mutex> lock(decoded_mutex_);
    auto it = decoded_views_.find(key);
    if (it != decoded_views_.end() && it->second.table_def == def) return *it->second.view;
  }
  Result<SqlView> view = view_from_table_def(*def);
  if (!view.ok()) throw_status(view.status());
  auto decoded = std::make_shared<const SqlView>(std::move(view).value());
  {
    std::lock_guard<std::mutex> lock(decoded_mutex_);
    decoded_views_[key] = DecodedView{def, decoded};
  }
  return *decoded;
}

std::vector<std::string> Catalog::list_views(const std::string& db) {
  std::vector<std::string> out;
  for (const ::duo::protocol::TableListEntry& entry : check(cluster_->list_tables())) {
    std::string entry_db, name;
    if (split_cluster_view_name(entry.name, &entry_db, &name) && entry_db == db) {
      out.push_back(name);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Catalog::create_view(const SqlView& view, bool or_replace) {
  const auto exists = [&] {
    throw SqlException(1050, "42S01", "Table '" + view.name + "' already exists");
  };
  if (table_exists(view.db, view.name)) exists();
  if (api::TablePtr current = view_object(view.db, view.name); current != nullptr) {
    if (!or_replace) exists();
    alter_view(view);
    return;
  }
  Result<api::TablePtr> created = cluster_->create_table(to_view_table_def(view));
  if (created.ok()) return;
  // Another sqld created it meanwhile.
  if (created.status().is(ErrorCode::kTableExists)) {
    if (!or_replace) exists();
    alter_view(view);
    return;
  }
  throw_status(created.status());
}

void Catalog::alter_view(const SqlView& view) {
  api::TablePtr current = view_object(view.db, view.name);
  if (current == nullptr) {
    if (table_exists(view.db, view.name)) {
      throw SqlException(1347, "HY000", "'" + view.db + "." + view.name + "' is not VIEW");
    }
    throw_unknown_table(view.db, view.name);
  }
  ::duo::protocol::TableDef def = *current;
  def.sql_definition = encode_view_definition(view);
  Result<api::TablePtr> done = cluster_->alter_table(std::move(def));
  if (!done.ok()) throw_status(done.status());
}

bool Catalog::drop_view(const std::string& db, const std::string& name) {
  Status status = cluster_->drop_table(cluster_view_name(db, name));
  if (status.is(ErrorCode::kNoSuchTable) || status.is(ErrorCode::kNotFound)) return false;
  check(status);
  return true;
}

}  // namespace duo::sql::catalog
