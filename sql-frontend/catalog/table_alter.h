// Table-shape changes on an SqlTable (ALTER TABLE, CREATE/DROP INDEX) and the text of
// SHOW CREATE TABLE: pure functions over definitions, with MySQL's errors, so the DDL
// executor only runs what they decide (executor/ddl_executor.cc).
//
// An ALTER is applied action by action to a TableChange. Changes of indexes alone keep
// the rows as they are (NDB's online ALTER: the cluster rebuilds the indexes in
// place); adding or dropping a column changes the row format, so the rows are copied
// into a new table (NDB's copying ALTER). `origin` maps each column of the new
// definition to the column of the old one it takes its values from (-1: a new column,
// filled with its default).
//
// Errors are thrown as SqlException. Thread-safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sql-frontend/catalog/sql_table.h"
#include "sql-frontend/parser/ast.h"

namespace duo::sql::catalog {

// Secondary indexes a table may have (MySQL's MAX_KEY is 64, one of them the primary
// key; our hidden ordered index on the primary key takes one more storage slot).
inline constexpr size_t kSecondaryIndexesMax = 63;

struct TableChange {
  SqlTable table;
  std::vector<int> origin;  // per column of `table`: the old column id, or -1
  bool copy_rows = false;   // a column was added, dropped or redefined, or READ_BACKUP changed
  // RENAME [TO] in ALTER TABLE: applied by the executor after the other actions.
  std::optional<ObjectName> new_name;

  explicit TableChange(SqlTable old);
};

// ADD [UNIQUE] INDEX / KEY, CREATE [UNIQUE] INDEX. 1061 duplicate key name, 1072 key
// column missing, 1068 a second PRIMARY KEY, 1280 an index named PRIMARY, 1069 too
// many keys, 1235 prefix lengths.
void add_index(TableChange* change, const IndexDef& index);
// DROP INDEX / KEY. 1091 when there is no such index; 1235 for the PRIMARY KEY.
void drop_index(TableChange* change, const std::string& name);
// ADD COLUMN [FIRST | AFTER c]. 1060 duplicate column, 1054 unknown AFTER column,
// 1068 PRIMARY KEY, 1235 AUTO_INCREMENT (both need the rows checked).
void add_column(TableChange* change, const AlterAction& action);
// DROP COLUMN: also from the indexes using it (an index left without columns goes).
// 1091 unknown column, 1090 the last column, 1235 a primary key column.
void drop_column(TableChange* change, const std::string& name);

// MODIFY [COLUMN] / CHANGE [COLUMN] (action.name: the old name) [FIRST | AFTER c]: the
// column gets its new definition and place; its rows are converted while copied
// (executor: strict mode, so a value that does not fit fails the ALTER). 1054 unknown
// column, 1060 new name taken, 1068 PRIMARY KEY, 1171 NULL on a key column, 1235 a new
// AUTO_INCREMENT (the rows would need numbering).
void modify_column(TableChange* change, const AlterAction& action);
// ALTER [COLUMN] c SET DEFAULT v / DROP DEFAULT: the definition only, no copy. 1054
// unknown column, 1067 invalid default.
void set_column_default(TableChange* change, const AlterAction& action);

// COMMENT='...' in ALTER TABLE: the comment is replaced (in place); READ_BACKUP in it
// changes the table's option, which needs a copy of the table (copy_rows) until the
// dictionary can change a table's flags in place; READ_BACKUP left out keeps the
// table's value (NDB instead applies ndb_read_backup and refuses a mismatch). 1478 as
// CREATE TABLE for a syntax error or FULLY_REPLICATED=1 (ndb_table_options.h).
void set_table_comment(TableChange* change, const std::string& comment);

// Applies every action of ALTER TABLE in order (ENGINE= is the executor's to check:
// engine_substitution.h; COMMENT as set_table_comment; other options are accepted and ignored, as
// the storage has no use for them).
TableChange plan_alter(const SqlTable& table, const AlterTableStatement& statement);

// SHOW CREATE TABLE's text, as MySQL 8.0 prints it for an NDB table. `auto_increment`
// is the table's next AUTO_INCREMENT value when the counter exists and is above 1.
std::string show_create_table_text(const SqlTable& table, std::optional<uint64_t> auto_increment);

}  // namespace duo::sql::catalog
