// TableSchema: the storage engine's view of a table definition (columns, primary key,
// ordered indexes). Immutable once a fragment is created from it; shared read-only by
// every fragment of the table. Thread-safe for concurrent reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/row/column.h"

namespace duo::storage {

// Largest row (fixed part + variable part, column data and header) the engine stores;
// like NDB's limit, a row must fit well inside one 32 KiB page.
inline constexpr uint32_t kMaxRowSizeBytes = 30000;
inline constexpr uint32_t kMaxColumns = 512;

struct IndexDef {
  std::string name;
  std::vector<uint16_t> columns;
  bool unique = false;  // NULLs never conflict, as in MySQL
};

struct TableSchema {
  uint32_t table_id = 0;
  std::string name;
  std::vector<ColumnDef> columns;
  std::vector<uint16_t> primary_key;      // column ids; NOT NULL, at least one
  std::vector<IndexDef> ordered_indexes;  // secondary ordered indexes

  // Rejects duplicate names, bad columns, a missing/nullable/disk primary key, indexes on
  // disk columns, and rows over kMaxRowSizeBytes (kRowTooBig).
  Status validate() const;
  int find_column(const std::string& name) const;
};

}  // namespace duo::storage
