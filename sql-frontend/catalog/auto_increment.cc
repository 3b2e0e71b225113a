// AUTO_INCREMENT counters in the cluster; see auto_increment.h.
#include "sql-frontend/catalog/auto_increment.h"

#include <algorithm>

#include "sql-frontend/catalog/sql_exception.h"
#include "storage/scan/filter.h"
#include "storage/scan/interpreted_update.h"

namespace duo::sql::catalog {

namespace {

constexpr uint16_t kNameColumn = 0;
constexpr uint16_t kNextColumn = 1;
// Creating the counter can race with another sqld; after this many lost races something
// else is wrong.
constexpr int kReserveAttemptsMax = 4;

api::TablePtr counters(api::Cluster& cluster) {
  return check(cluster.get_table(kAutoIncrementTable));
}

storage::AttrValues key_of(const std::string& table) {
  if (table.size() > kAutoIncrementNameLengthMax) {
    throw SqlException(1059, "42000", "Identifier name '" + table + "' is too long");
  }
  storage::AttrValues key;
  key.add(kNameColumn, table);
  return key;
}

// Inserts the counter row; false when it already exists.
bool create_counter(api::Session& session, const ::duo::protocol::TableDef& def,
                    const std::string& table, uint64_t next_value) {
  storage::AttrValues row = key_of(table);
  row.add(kNextColumn, storage::encode_uint(def.schema.columns[kNextColumn], next_value));
  auto tx = check(session.begin(&def));
  check(tx->insert(def, std::move(row)));
  Status status = tx->execute(api::ExecType::kCommit);
  if (status.is(ErrorCode::kDuplicateKey)) return false;
  check(status);
  return true;
}

}  // namespace

SqlTable auto_increment_definition() {
  SqlTable table;
  table.db = "mysql";
  table.name = "auto_increment";
  SqlColumn name;
  name.name = "name";
  name.declared_type = "varchar(" + std::to_string(kAutoIncrementNameLengthMax) + ") binary";
  name.nullable = false;
  derive_storage(&name);
  SqlColumn next;
  next.name = "next_value";
  next.declared_type = "bigint unsigned";
  next.nullable = false;
  derive_storage(&next);
  table.columns = {std::move(name), std::move(next)};
  table.indexes.push_back(SqlIndex{SqlIndexKind::kPrimary, "PRIMARY", {kNameColumn}});
  return table;
}

uint64_t reserve_auto_increment(api::Cluster& cluster, api::Session& session,
                                const std::string& table, uint64_t count,
                                const std::function<uint64_t()>& seed) {
  const api::TablePtr def = counters(cluster);
  const storage::AttrValues key = key_of(table);
  for (int attempt = 0; attempt < kReserveAttemptsMax; ++attempt) {
    auto tx = check(session.begin(def.get(), &key));
    storage::InterpretedUpdate add;
    add.add(kNextColumn, static_cast<int64_t>(count));
    const uint32_t update =
        check(tx->interpreted_update(*def, key, add, api::OpOptions{.ignore_error = true}));
    check(tx->execute(api::ExecType::kNoCommit));
    api::OpResult updated = check(tx->result(update));
    if (updated.status.is(ErrorCode::kNotFound)) {
      tx.reset();  // rolls back; nothing was changed
      const uint64_t first = std::max<uint64_t>(1, seed());
      if (create_counter(session, *def, table, first + count)) return first;
      continue;  // another sqld created it first: take values from its counter
    }
    check(updated.status);
    const uint32_t read = check(tx->read(*def, key, {kNextColumn}));
    check(tx->execute(api::ExecType::kCommit));
    api::OpResult row = check(tx->result(read));
    check(row.status);
    const int at = row.values.find(kNextColumn);
    if (at < 0 || row.values.entry(at).is_null) {
      throw SqlException(1105, "HY000", "AUTO_INCREMENT counter of " + table + " unreadable");
    }
    return storage::decode_uint(def->schema.columns[kNextColumn], row.values.value(at)) - count;
  }
  throw SqlException(1297, "HY000",
                     "Got temporary error 'AUTO_INCREMENT counter contention' from NDBCLUSTER");
}

bool AutoIncrementFloors::covers(uint32_t table_id, uint32_t version, uint64_t value) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = floors_.find({table_id, version});
  return it != floors_.end() && value <= it->second;
}

void AutoIncrementFloors::learn(uint32_t table_id, uint32_t version, uint64_t value) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (floors_.size() >= kTablesMax && floors_.count({table_id, version}) == 0) floors_.clear();
  uint64_t& floor = floors_[{table_id, version}];
  floor = std::max(floor, value);
}

bool raise_auto_increment(api::Cluster& cluster, api::Session& session, const std::string& table,
                          uint64_t value) {
  if (value == UINT64_MAX) return false;
  const api::TablePtr def = counters(cluster);
  const storage::AttrValues key = key_of(table);
  const storage::ColumnDef& next = def->schema.columns[kNextColumn];
  storage::FilterBuilder builder;
  storage::FilterProgram guard = check(builder.build(
      builder.cmp(kNextColumn, storage::CmpOp::kLe, storage::encode_uint(next, value))));
  storage::InterpretedUpdate update;
  update.set(kNextColumn, storage::encode_uint(next, value + 1)).guard(std::move(guard));
  auto tx = check(session.begin(def.get(), &key));
  const uint32_t op =
      check(tx->interpreted_update(*def, key, update, api::OpOptions{.ignore_error = true}));
  check(tx->execute(api::ExecType::kCommit));
  api::OpResult result = check(tx->result(op));
  if (result.status.is(ErrorCode::kNotFound)) {
    // No counter yet: the first reserve() seeds from MAX(column), which sees this value.
    return false;
  }
  check(result.status);
  return true;  // raised, or already past `value` (the guard filtered the update)
}

std::optional<uint64_t> peek_auto_increment(api::Cluster& cluster, api::Session& session,
                                            const std::string& table) {
  const api::TablePtr def = counters(cluster);
  const storage::AttrValues key = key_of(table);
  auto tx = check(session.begin(def.get(), &key));
  const uint32_t read = check(tx->read(*def, key, {kNextColumn}, api::LockMode::kCommittedRead,
                                       api::OpOptions{.ignore_error = true}));
  check(tx->execute(api::ExecType::kCommit));
  api::OpResult row = check(tx->result(read));
  if (row.status.is(ErrorCode::kNotFound)) return std::nullopt;
  check(row.status);
  const int at = row.values.find(kNextColumn);
  if (at < 0 || row.values.entry(at).is_null) return std::nullopt;
  return storage::decode_uint(def->schema.columns[kNextColumn], row.values.value(at));
}

void rename_auto_increment(api::Cluster& cluster, api::Session& session, const std::string& from,
                           const std::string& to) {
  const std::optional<uint64_t> next = peek_auto_increment(cluster, session, from);
  if (!next) return;
  const api::TablePtr def = counters(cluster);
  storage::AttrValues row = key_of(to);
  row.add(kNextColumn, storage::encode_uint(def->schema.columns[kNextColumn], *next));
  auto tx = check(session.begin(def.get(), &row));
  check(tx->write(*def, std::move(row)));
  check(tx->remove(*def, key_of(from), api::OpOptions{.ignore_error = true}));
  check(tx->execute(api::ExecType::kCommit));
}

void drop_auto_increment(api::Cluster& cluster, api::Session& session, const std::string& table) {
  const api::TablePtr def = counters(cluster);
  const storage::AttrValues key = key_of(table);
  auto tx = check(session.begin(def.get(), &key));
  check(tx->remove(*def, key, api::OpOptions{.ignore_error = true}));
  check(tx->execute(api::ExecType::kCommit));
}

}  // namespace duo::sql::catalog
