// Accounts in the cluster; see user_catalog.h.
#include "sql-frontend/catalog/user_catalog.h"

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/catalog/sql_table.h"

namespace duo::sql::catalog {

namespace {

constexpr uint16_t kUserColumn = 0;
constexpr uint16_t kHostColumn = 1;
constexpr uint16_t kPluginColumn = 2;
constexpr uint16_t kCredentialColumn = 3;
constexpr uint16_t kGrantsColumn = 4;

SqlColumn text_column(const std::string& name, uint32_t length) {
  SqlColumn column;
  column.name = name;
  column.declared_type = "varchar(" + std::to_string(length) + ") binary";
  column.nullable = false;
  derive_storage(&column);
  return column;
}

SqlTable user_table_definition() {
  SqlTable table;
  table.db = "mysql";
  table.name = "user";
  table.columns = {text_column("user", kUserNameLengthMax), text_column("host", kHostNameLengthMax),
                   text_column("plugin", 64), text_column("credential", 128),
                   text_column("grants", kGrantsLengthMax)};
  table.indexes.push_back(SqlIndex{SqlIndexKind::kPrimary, "PRIMARY", {kUserColumn, kHostColumn}});
  return table;
}

storage::AttrValues key_of(const std::string& user, const std::string& host) {
  storage::AttrValues key;
  key.add(kUserColumn, user);
  key.add(kHostColumn, host);
  return key;
}

storage::AttrValues row_of(const UserRecord& record) {
  const std::string grants = encode_grants(record.grants);
  if (grants.size() > kGrantsLengthMax) {
    throw SqlException(1105, "HY000",
                       "Too many grants for " + account_text(record.user, record.host));
  }
  storage::AttrValues row = key_of(record.user, record.host);
  row.add(kPluginColumn, record.plugin);
  row.add(kCredentialColumn, to_hex(record.credential));
  row.add(kGrantsColumn, grants);
  return row;
}

std::string column_text(const storage::AttrValues& row, uint16_t column) {
  const int at = row.find(column);
  if (at < 0 || row.entry(at).is_null) return "";
  return std::string(row.value(at));
}

UserRecord record_of(const storage::AttrValues& row) {
  UserRecord record;
  record.user = column_text(row, kUserColumn);
  record.host = column_text(row, kHostColumn);
  record.plugin = column_text(row, kPluginColumn);
  std::optional<std::string> credential = from_hex(column_text(row, kCredentialColumn));
  Result<std::vector<Grant>> grants = decode_grants(column_text(row, kGrantsColumn));
  if (!credential || !grants.ok()) {
    throw SqlException(1105, "HY000",
                       "Unreadable account " + account_text(record.user, record.host));
  }
  record.credential = std::move(*credential);
  record.grants = std::move(grants).value();
  return record;
}

UserRecord initial_root() {
  UserRecord root;
  root.user = "root";
  root.host = "%";
  root.grants.push_back(Grant{"*", "*", all_privileges(PrivilegeLevel::kGlobal), true});
  return root;
}

}  // namespace

Status ensure_user_table(api::Cluster& cluster, api::Session& session) {
  const SqlTable definition = user_table_definition();
  Result<api::TablePtr> existing = cluster.get_table(kUserTable);
  if (existing.ok()) return Status::OK();
  if (!existing.status().is(ErrorCode::kNoSuchTable) &&
      !existing.status().is(ErrorCode::kNotFound)) {
    return existing.status();
  }
  Result<api::TablePtr> created = cluster.create_table(to_table_def(definition));
  // Another sqld starting at the same time may have won the race; it seeds root too,
  // and the duplicate insert below is harmless.
  if (!created.ok() && !created.status().is(ErrorCode::kTableExists)) return created.status();
  Result<api::TablePtr> table = cluster.get_table(kUserTable);
  if (!table.ok()) return table.status();
  try {
    Result<std::unique_ptr<api::Transaction>> tx = session.begin(table->get());
    if (!tx.ok()) return tx.status();
    Result<uint32_t> op = (*tx)->insert(**table, row_of(initial_root()));
    if (!op.ok()) return op.status();
    Status status = (*tx)->execute(api::ExecType::kCommit);
    if (!status.ok() && !status.is(ErrorCode::kDuplicateKey)) return status;
  } catch (const SqlException& e) {
    return Status(ErrorCode::kInternal, e.what());
  }
  return Status::OK();
}

api::TablePtr UserCatalog::table() {
  return check(cluster_->get_table(kUserTable));
}

std::vector<UserRecord> UserCatalog::list(api::Session& session) {
  api::TablePtr def = table();
  std::vector<UserRecord> out;
  auto tx = check(session.begin());
  auto cursor = check(tx->scan(*def, api::ScanSpec{}));
  storage::AttrValues row;
  while (check(cursor->next(&row))) out.push_back(record_of(row));
  cursor.reset();
  check(tx->execute(api::ExecType::kCommit));
  return out;
}

std::optional<UserRecord> UserCatalog::find(api::Session& session, const std::string& user,
                                            const std::string& host) {
  if (user.size() > kUserNameLengthMax || host.size() > kHostNameLengthMax) return std::nullopt;
  api::TablePtr def = table();
  const storage::AttrValues key = key_of(user, host);
  auto tx = check(session.begin(def.get(), &key));
  const uint32_t op = check(tx->read(*def, key, {}, storage::LockMode::kCommittedRead,
                                     api::OpOptions{.ignore_error = true}));
  check(tx->execute(api::ExecType::kCommit));
  api::OpResult result = check(tx->result(op));
  if (result.status.is(ErrorCode::kNotFound)) return std::nullopt;
  check(result.status);
  UserRecord record = record_of(result.values);
  // A read returns the requested columns; the key columns may be left out.
  record.user = user;
  record.host = host;
  return record;
}

bool UserCatalog::insert(api::Session& session, const UserRecord& record) {
  api::TablePtr def = table();
  const storage::AttrValues key = key_of(record.user, record.host);
  auto tx = check(session.begin(def.get(), &key));
  check(tx->insert(*def, row_of(record)));
  Status status = tx->execute(api::ExecType::kCommit);
  invalidate();
  if (status.is(ErrorCode::kDuplicateKey)) return false;
  check(status);
  return true;
}

bool UserCatalog::update(api::Session& session, const UserRecord& record) {
  api::TablePtr def = table();
  const storage::AttrValues key = key_of(record.user, record.host);
  storage::AttrValues values;
  const storage::AttrValues row = row_of(record);
  for (uint16_t column : {kPluginColumn, kCredentialColumn, kGrantsColumn}) {
    values.add(column, row.value(static_cast<size_t>(row.find(column))));
  }
  auto tx = check(session.begin(def.get(), &key));
  const uint32_t op = check(tx->update(*def, key, values, api::OpOptions{.ignore_error = true}));
  check(tx->execute(api::ExecType::kCommit));
  invalidate();
  api::OpResult result = check(tx->result(op));
  if (result.status.is(ErrorCode::kNotFound)) return false;
  check(result.status);
  return true;
}

bool UserCatalog::remove(api::Session& session, const std::string& user, const std::string& host) {
  if (user.size() > kUserNameLengthMax || host.size() > kHostNameLengthMax) return false;
  api::TablePtr def = table();
  const storage::AttrValues key = key_of(user, host);
  auto tx = check(session.begin(def.get(), &key));
  const uint32_t op = check(tx->remove(*def, key, api::OpOptions{.ignore_error = true}));
  check(tx->execute(api::ExecType::kCommit));
  invalidate();
  api::OpResult result = check(tx->result(op));
  if (result.status.is(ErrorCode::kNotFound)) return false;
  check(result.status);
  return true;
}

std::shared_ptr<const std::vector<UserRecord>> UserCatalog::accounts_snapshot(
    api::Session& session) {
  const auto now = std::chrono::steady_clock::now();
  uint64_t generation = 0;
  {
    std::lock_guard lock(mutex_);
    if (snapshot_ && now - snapshot_time_ < std::chrono::milliseconds(kAccountsSnapshotTtlMs)) {
      return snapshot_;
    }
    generation = generation_;
  }
  // Read outside the lock: a slow cluster must not stall other sessions' checks.
  auto fresh = std::make_shared<const std::vector<UserRecord>>(list(session));
  std::lock_guard lock(mutex_);
  // A change made while we read may be missing from `fresh`: use it once, keep nothing.
  if (generation == generation_) {
    snapshot_ = fresh;
    snapshot_time_ = now;
  }
  return fresh;
}

void UserCatalog::invalidate() {
  std::lock_guard lock(mutex_);
  snapshot_.reset();
  ++generation_;
}

}  // namespace duo::sql::catalog
