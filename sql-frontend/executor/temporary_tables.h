// Temporary tables (issue 17 item 3): CREATE TEMPORARY TABLE t (...) | LIKE s |
// [(...)] [AS] SELECT ..., with any
// ENGINE clause, held in this sqld's memory for one session (`TemporaryTables`, owned by
// the connection: gone at disconnect), invisible to other sessions and to SHOW TABLES /
// information_schema as in MySQL. A temporary table shadows a table or view of the same
// name for its session (SELECT, joins, INSERT, UPDATE, DELETE, DROP TABLE reach it first).
// Bounded: at most kTemporaryBytesMax bytes of values per session (MySQL's
// tmp_table_size default); beyond that an INSERT is MySQL's 1114 "The table 't' is full".
// Keys: the PRIMARY KEY and UNIQUE indexes are enforced (1062) by looking at every row;
// rows are kept in insertion order (a scan's order, as a heap table's).
//
// Not supported here (1235): ON DUPLICATE KEY UPDATE into a temporary table, UPDATE/DELETE ... ORDER BY of one, ALTER TABLE / indexes on one.
//
// Thread-safety: one session's (its connection thread).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sql-frontend/catalog/sql_table.h"
#include "sql-frontend/executor/row_source.h"
#include "sql-frontend/parser/ast.h"
#include "sql-frontend/server/query_handler.h"

namespace duo::sql::executor {

struct StatementContext;

inline constexpr size_t kTemporaryBytesMax = 16 * 1024 * 1024;

struct TemporaryTable {
  catalog::SqlTable sql;
  std::vector<Row> rows;
  size_t bytes = 0;                // the values' sizes, for the session's bound
  uint64_t auto_increment = 0;     // the last AUTO_INCREMENT value given
  std::string engine = "InnoDB";   // as SHOW CREATE TABLE names it (the ENGINE given)
};

class TemporaryTables {
 public:
  TemporaryTable* find(const std::string& db, const std::string& name);
  // 1050 when the session has one of that name (unless `if_not_exists`: then false).
  bool create(catalog::SqlTable table, bool if_not_exists, std::string engine = "InnoDB");
  bool drop(const std::string& db, const std::string& name);
  bool empty() const { return tables_.empty(); }
  // The bytes held by every table of the session.
  size_t bytes() const;

 private:
  static std::string key(const std::string& db, const std::string& name) {
    return db + '\0' + name;
  }
  std::map<std::string, TemporaryTable> tables_;
};

// CREATE TEMPORARY TABLE.
server::StatementResult create_temporary_table(StatementContext& context,
                                               const CreateTableStatement& statement);
// DROP [TEMPORARY] TABLE: drops the session's temporary tables among the names and
// returns the names left for the cluster (none for DROP TEMPORARY TABLE: a name that is
// not a temporary table is 1051 then).
std::vector<ObjectName> drop_temporary_tables(StatementContext& context,
                                              const DropTableStatement& statement);
// INSERT/REPLACE, UPDATE, DELETE of a temporary table; nullopt when the statement's
// target is not one.
std::optional<server::StatementResult> write_temporary_table(StatementContext& context,
                                                             const Statement& statement);

}  // namespace duo::sql::executor
