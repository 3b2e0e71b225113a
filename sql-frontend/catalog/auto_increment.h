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
#include <optional>
#include <string>

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
// Makes the next value handed out at least `value` + 1.
void raise_auto_increment(api::Cluster& cluster, api::Session& session, const std::string& table,
                          uint64_t value);
// The next value the counter hands out, or nullopt before the table's first reserve().
std::optional<uint64_t> peek_auto_increment(api::Cluster& cluster, api::Session& session,
                                            const std::string& table);
// Moves the counter to the table's new name (RENAME TABLE). Missing counters are fine.
void rename_auto_increment(api::Cluster& cluster, api::Session& session, const std::string& from,
                           const std::string& to);
// Forgets the counter (DROP TABLE). Missing counters are fine.
void drop_auto_increment(api::Cluster& cluster, api::Session& session, const std::string& table);

}  // namespace duo::sql::catalog
