// GlobalVariables: the server's GLOBAL-only system variables that SET GLOBAL changes
// at run time (MySQL's dynamic global variables), one set per duo_sqld process as
// mysqld keeps them per server: another sqld of the cluster has its own values.
//   ndb_read_backup (ON): READ_BACKUP of a table created without NDB_TABLE=READ_BACKUP
//     in its comment (NDB 8.0.19 and later: ON), ndb_table_options.h.
// Like MySQL, values are not persisted: a restarted sqld starts from the defaults.
//
// Thread-safety: every method is safe from any thread (atomics).
#pragma once

#include <atomic>

namespace duo::sql::executor {

class GlobalVariables {
 public:
  // The variables of this process (one sqld serves one cluster).
  static GlobalVariables& instance();

  bool ndb_read_backup() const { return ndb_read_backup_.load(std::memory_order_relaxed); }
  void set_ndb_read_backup(bool on) { ndb_read_backup_.store(on, std::memory_order_relaxed); }

 private:
  std::atomic<bool> ndb_read_backup_{true};
};

}  // namespace duo::sql::executor
