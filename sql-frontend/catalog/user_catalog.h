// UserCatalog: MySQL accounts as rows of the cluster table "mysql/def/user"
// (user VARCHAR(32), host VARCHAR(255), plugin, credential as hex text, grants as
// user_record.h's encoding; primary key (user, host)), so every duo_sqld authenticates
// and authorizes alike. ensure_user_table() creates the table at sqld start and seeds
// root@'%' with no password and every privilege; both steps tolerate another sqld
// doing the same at the same time.
//
// Reads go to the cluster each time (login, CREATE USER ...). Privilege checks of every
// statement use accounts_snapshot(), a copy of the whole table kept for at most
// kAccountsSnapshotTtlMs and dropped by any change this sqld makes: a change made
// through another sqld reaches this one's running sessions within that time.
//
// Errors are thrown as SqlException; ensure_user_table() returns a Status.
//
// Thread-safety: safe from any thread; the snapshot is guarded by its mutex.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ndb-kernel/api/cluster_connection.h"
#include "sql-frontend/catalog/user_record.h"

namespace duo::sql::catalog {

inline constexpr const char* kUserTable = "mysql/def/user";
inline constexpr uint32_t kUserNameLengthMax = 32;   // MySQL 8.0's
inline constexpr uint32_t kHostNameLengthMax = 255;  // MySQL 8.0's
// Room for the grants of one account; GRANT beyond it fails (1105), it does not grow.
inline constexpr uint32_t kGrantsLengthMax = 4096;
// How stale the privilege-check snapshot may be (changes through another sqld).
inline constexpr uint64_t kAccountsSnapshotTtlMs = 1000;

// Creates "mysql/def/user" if missing and root@'%' in it if the table is new.
Status ensure_user_table(api::Cluster& cluster, api::Session& session);

class UserCatalog {
 public:
  explicit UserCatalog(api::Cluster* cluster) : cluster_(cluster) {}

  // Every account, read from the cluster now.
  std::vector<UserRecord> list(api::Session& session);
  // The account user@host (exact host pattern), or nullopt.
  std::optional<UserRecord> find(api::Session& session, const std::string& user,
                                 const std::string& host);
  // Inserts; false when the account exists.
  bool insert(api::Session& session, const UserRecord& record);
  // Replaces an existing account's plugin, credential and grants; false when it is gone.
  bool update(api::Session& session, const UserRecord& record);
  // False when there was no such account.
  bool remove(api::Session& session, const std::string& user, const std::string& host);

  // The accounts as of at most kAccountsSnapshotTtlMs ago (see above).
  std::shared_ptr<const std::vector<UserRecord>> accounts_snapshot(api::Session& session);
  // Forgets the snapshot (after a change).
  void invalidate();

 private:
  api::TablePtr table();

  api::Cluster* const cluster_;

  std::mutex mutex_;
  std::shared_ptr<const std::vector<UserRecord>> snapshot_;  // GUARDED_BY(mutex_)
  std::chrono::steady_clock::time_point snapshot_time_;      // GUARDED_BY(mutex_)
  uint64_t generation_ = 0;  // GUARDED_BY(mutex_); counts invalidate() calls
};

}  // namespace duo::sql::catalog
