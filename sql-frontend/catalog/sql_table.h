// SqlTable: the SQL layer's definition of one table — what the cluster's TableDef
// carries opaquely in `sql_definition` (like NDB's frm blob), so every duo_sqld sees the
// same declared types, defaults, AUTO_INCREMENT and key names. Also the mapping of SQL
// types to the storage ColumnDefs of the table's TableSchema, and of names:
// SQL table `db`.`t` is the cluster table "db/def/t" (NDB's naming).
//
// sql_definition encoding (text, version 1; one record per line, fields separated by
// TAB; every field percent-escapes '%', TAB, LF and ',' as %25 %09 %0A %2C):
//   duo-sql-table 1
//   column <name> <declared type, lower case> <NULL|NOT NULL> <default> <auto_increment 0|1>
//          where <default> is "-" (none), "N" (DEFAULT NULL) or "V" followed by the text
//   index <PRIMARY|UNIQUE|KEY> <name> <column>,<column>...
//   comment <table comment as written>      (only when the table has one)
//   partition KEY <count, 0 = not given>    (only for PARTITION BY KEY () [PARTITIONS n])
//   storage <column> <DISK|MEMORY>          (a column's STORAGE as declared, if it was)
//   tablespace <name or "-"> <DEFAULT|DISK|MEMORY>  (TABLESPACE / table STORAGE, if given)
// Columns appear in table order (column i is storage column i); the PRIMARY index comes
// first. Unknown record kinds are refused, so a newer writer is detected.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ndb-kernel/api/blob_parts.h"
#include "ndb-kernel/protocol/wire_codec.h"
#include "sql-frontend/parser/ast.h"
#include "sql-frontend/protocol/mysql_constants.h"
#include "storage/row/table_schema.h"

namespace duo::sql::catalog {

struct SqlColumn {
  std::string name;
  std::string declared_type;  // "int", "varchar(20)", "bigint unsigned", "decimal(10,2)"
  bool nullable = true;
  bool has_default = false;                  // DEFAULT given (possibly NULL)
  std::optional<std::string> default_value;  // nullopt with has_default: DEFAULT NULL
  bool auto_increment = false;
  // Derived from declared_type (not encoded).
  storage::ColumnDef storage;
  uint32_t char_length = 0;  // CHAR/VARCHAR: length in characters (0: not a char type)
  // ENUM: the permitted values, in order. Stored as the value's text (a VARCHAR of the
  // longest one), so comparisons, filters pushed to the data nodes and indexes see the
  // labels; MySQL stores the 1-based position instead, which shows only in ORDER BY (by
  // position there) and in numeric context.
  std::vector<std::string> enum_values;
  // SET: `enum_values` are its members; a value is any subset, stored as the members'
  // labels in declared order joined by ',' (MySQL stores the bit set).
  bool is_set = false;
  // YEAR: stored as SMALLINT UNSIGNED holding the year itself (0 or 1901..2155), so
  // comparisons, pushed filters and ordered indexes see the number; shown as 4 digits.
  bool is_year = false;
  // BIT(M): M (1..64), 0 for other types. Stored as BIGINT UNSIGNED holding the bits, so
  // ORDER BY, indexes and pushed filters order by numeric value as MySQL does (fixed
  // big-endian bytes would order the same, but every expression would then have to turn
  // the bytes back into a number); the raw big-endian bytes exist only in results.
  uint8_t bit_width = 0;
  // BLOB/TEXT/JSON: the longest value in bytes (TINY* 255, BLOB/TEXT 65535, MEDIUM*
  // 16M-1, LONG* and JSON 4G-1; 1406 beyond) and the part size of its parts table (0
  // for TINY*, whose values the row holds whole). Values up to kBlobInlineBytes sit in
  // the row; the rest goes to the parts table (ndb-kernel/api/blob_parts.h).
  uint64_t blob_bytes_max = 0;
  uint32_t blob_part_bytes = 0;
  // JSON: a TEXT utf8mb4_bin column holding normalized JSON text, validated on write.
  bool is_json = false;
  // STORAGE DISK|MEMORY as declared on the column (kDefault: not given). Whether the
  // column is on disk (storage.storage_disk) follows from it and the table's STORAGE
  // (apply_disk_storage).
  ColumnStorage declared_storage = ColumnStorage::kDefault;
};

enum class SqlIndexKind : uint8_t { kPrimary, kUnique, kKey };

struct SqlIndex {
  SqlIndexKind kind = SqlIndexKind::kKey;
  std::string name;  // "PRIMARY" for the primary key
  std::vector<uint16_t> columns;
};

struct SqlTable {
  std::string db;
  std::string name;
  std::vector<SqlColumn> columns;
  std::vector<SqlIndex> indexes;  // PRIMARY first
  std::string comment;            // COMMENT='...' as written (may hold NDB_TABLE=...)
  // NDB's READ_BACKUP: committed reads from any replica. Kept in the cluster table's
  // flags (protocol::kTableReadBackup), not in sql_definition.
  bool read_backup = false;
  // Created with PARTITION BY KEY () (shown by SHOW CREATE TABLE, as NDB does), with
  // PARTITIONS n when `partitions` is not 0: the table's fragment count (TableDef's).
  bool partition_by_key = false;
  uint32_t partitions = 0;
  // TABLESPACE ts and table-level STORAGE DISK|MEMORY as declared. The tablespace's id
  // is the cluster table's (TableDef::tablespace_id), set when the table is created.
  std::string tablespace;
  ColumnStorage storage = ColumnStorage::kDefault;
  uint32_t tablespace_id = 0;

  // The column named `name` (case-insensitive, as MySQL's column names), or -1.
  int find_column(std::string_view column) const;
  const SqlIndex& primary_key() const { return indexes.front(); }
  bool is_key_column(uint16_t column) const;
  int auto_increment_column() const;
};

// "db/def/t"; and back (false when `cluster_name` is not of that form).
std::string cluster_table_name(const std::string& db, const std::string& table);
bool split_cluster_table_name(const std::string& cluster_name, std::string* db, std::string* table);

// Builds the definition of CREATE TABLE `statement` in `db`. Throws SqlException: 1075
// (more than one AUTO_INCREMENT / not a key), 1068 (multiple primary keys), 1060
// (duplicate column), 1072 (key column missing), 1235 (no PRIMARY KEY, or a type not
// supported yet), 1074 (CHAR/VARCHAR too long), 1067 (invalid default), 1504 (PARTITIONS
// 0), 1499 (more than protocol::kFragmentCountMax partitions).
SqlTable table_from_create(const CreateTableStatement& statement, const std::string& db);

// One column of CREATE TABLE / ALTER TABLE ADD COLUMN, storage derived (its PRIMARY KEY
// and UNIQUE attributes are the caller's). Throws like table_from_create.
SqlColumn column_from_def(const ColumnDef& def);
// NDB's placement of columns: a column declared STORAGE DISK is on disk, one declared
// MEMORY in memory, any other is on disk when the table is STORAGE DISK and the column
// is in no index (indexes stay in memory). Sets every column's storage.storage_disk.
void apply_disk_storage(SqlTable* table);
bool column_on_disk(const SqlTable& table, size_t column);
// NDB's checks of disk columns at CREATE/ALTER: an index on a column declared STORAGE
// DISK is refused (1005, NDB 756 "Index on disk column is not supported" in SHOW
// WARNINGS); disk columns without a tablespace too (3014, NDB 755 "Invalid tablespace").
void check_disk_storage(const SqlTable& table);
// DEFAULT `value` for `column` (ALTER COLUMN ... SET DEFAULT): 1067 when it is not a
// literal or is NULL for a NOT NULL column.
void set_default(SqlColumn* column, const Expr& value);

// The storage ColumnDef and character length of a declared type (lower-case text as
// produced by declared_type_text). Throws SqlException 1235 for an unsupported type.
void derive_storage(SqlColumn* column);
std::string declared_type_text(const DataType& type);

// The cluster table for `table`: schema (columns, primary key, ordered indexes for the
// UNIQUE and KEY indexes in table order, then the hidden ordered index on the primary
// key (kPrimaryOrderedIndex) over
// the primary key columns, last, as NDB's default ordered index on the primary key)
// and sql_definition. The hidden index is not an SqlIndex: SHOW INDEX and SHOW CREATE
// TABLE do not show it. Tables created before it existed simply lack it.
::duo::protocol::TableDef to_table_def(const SqlTable& table);
// The parts tables `table` needs beside its cluster table (Cluster::create_table).
std::vector<api::BlobPartsSpec> blob_parts_specs(const SqlTable& table);
// Named like NDB's ("PRIMARY" itself is refused by storage::TableSchema::validate, as
// MySQL refuses it for a secondary index); user indexes may not take this name.
inline constexpr const char* kPrimaryOrderedIndex = "PRIMARY$ordered";
// The number of the ordered index named `name` (ScanSpec::index), or -1. SqlIndex
// names and storage index names are the same, so this maps a key to its index.
int ordered_index_number(const storage::TableSchema& schema, std::string_view name);
// Decodes a cluster table created by to_table_def. kCorruption for a malformed blob.
Result<SqlTable> from_table_def(const ::duo::protocol::TableDef& table_def);

std::string encode_sql_definition(const SqlTable& table);
Result<SqlTable> decode_sql_definition(const std::string& text, std::string db, std::string name);

// The DEFAULT as SHOW CREATE TABLE and DESCRIBE show it: a BIT's as b'101' (kept as its
// bytes, shown unquoted), any other column's as kept.
std::optional<std::string> shown_default(const SqlColumn& column);

// How a column is described in result-set metadata.
protocol::FieldType field_type(const SqlColumn& column);
uint16_t column_flags(const SqlTable& table, uint16_t column);
uint32_t display_length(const SqlColumn& column);

}  // namespace duo::sql::catalog
