// AUTO_INCREMENT counters kept in the cluster, so that every duo_sqld hands out distinct
// values for a table (NDB keeps them in a hidden column of SYSTAB_0; we keep one row per
// table in the system table "mysql/def/auto_increment": `name VARCHAR(140) BINARY
// PRIMARY KEY` (the cluster table name "db/def/t"), `next_value BIGINT UNSIGNED NOT NULL`).
//
// reserve() takes `count` consecutive values with one interpreted update (next_value +=
// count) in its own committed transaction, outside the statement's: like MySQL, values
// of a rolled-back insert are not reused. A table's counter row is created on its first
// reserve(), starting at the seed the caller computes (the table's MAX(column) + 1, so
// rows inserted with explicit values are respected); two sqld creating it at once is
// resolved by the primary key (the loser retries the update). raise() moves the counter
// past an explicitly inserted value (an update guarded by `next_value <= value`).
//
// Errors are thrown as SqlException. Thread-safety: pure functions over the caller's
// api::Session (one thread).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "ndb-kernel/api/cluster_connection.h"
#include "sql-frontend/catalog/sql_table.h"

namespace duo::sql::catalog {

inline constexpr const char* kAutoIncrementTable = "mysql/def/auto_increment";
// Cluster table names are "db/def/t": 64 + 5 + 64 characters, and a margin.
inline constexpr uint32_t kAutoIncrementNameLengthMax = 140;

SqlTable auto_increment_definition();

// The first of `count` reserved values of `table` ("db/def/t"). `seed()` is called when
// the counter does not exist yet and returns the first value to hand out.
uint64_t reserve_auto_increment(api::Cluster& cluster, api::Session& session,
                                const std::string& table, uint64_t count,
                                const std::function<uint64_t()>& seed);
// Makes the next value handed out at least `value` + 1. True if the counter now hands out
// only values above `value` (false: the table has no counter yet).
bool raise_auto_increment(api::Cluster& cluster, api::Session& session, const std::string& table,
                          uint64_t value);
// The next value the counter hands out, or nullopt before the table's first reserve().
std::optional<uint64_t> peek_auto_increment(api::Cluster& cluster, api::Session& session,
                                            const std::string& table);
// What one duo_sqld learned of AUTO_INCREMENT counters: the counter of the table with
// (table id, definition version) hands out only values above floor(). A counter never
// moves down while its table keeps its definition (DROP and TRUNCATE make a new table,
// RENAME a new version), so raise_auto_increment() for a value at or below the floor
// would change nothing, and the INSERT skips it: one round trip less per INSERT with an
// explicit id (sysbench's inserts), as NDB's mysqld skips setting the counter below the
// values it knows are taken. Bounded: past kTablesMax tables it starts over.
// Thread-safe.
class AutoIncrementFloors {
 public:
  static constexpr size_t kTablesMax = 4096;
  // True if the counter is known to hand out only values above `value`.
  bool covers(uint32_t table_id, uint32_t version, uint64_t value) const;
  // The counter now hands out only values above `value` (it was raised past it, or
  // reserved up to it).
  void learn(uint32_t table_id, uint32_t version, uint64_t value);

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> floors_;  // GUARDED_BY(mutex_)
};

// Moves the counter to the table's new name (RENAME TABLE). Missing counters are fine.
void rename_auto_increment(api::Cluster& cluster, api::Session& session, const std::string& from,
                           const std::string& to);
// Forgets the counter (DROP TABLE). Missing counters are fine.
void drop_auto_increment(api::Cluster& cluster, api::Session& session, const std::string& table);

}  // namespace duo::sql::catalog
