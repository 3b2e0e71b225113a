// TableSchema validation: the checks a table definition must pass before a fragment is
// created from it, with MySQL's wording so the SQL layer can forward the messages.
//
// Thread-safety: validate() and find_column() only read the schema; safe concurrently.
#include "storage/row/table_schema.h"

#include <string_view>
#include <unordered_set>

namespace duo::storage {
namespace {

// Estimated per-row header bytes (version, checksum, var-part reference, flags): the
// limit is checked against the data plus this, as NDB counts its own overhead.
constexpr uint32_t kRowHeaderEstimateBytes = 16;

// MySQL identifiers (columns, indexes) compare case-insensitively.
std::string fold_name(std::string_view name) {
  std::string s(name);
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

Status invalid(std::string message) {
  return Status(ErrorCode::kInvalidArgument, message);
}

// Shared checks for the primary key and the ordered indexes. `what` names the key in
// messages ("PRIMARY" or the index name).
Status validate_key_columns(const TableSchema& schema, const std::vector<uint16_t>& columns,
                            const std::string& what) {
  std::unordered_set<uint16_t> seen;
  for (uint16_t id : columns) {
    if (id >= schema.columns.size()) {
      return invalid("Key column " + std::to_string(id) + " of key '" + what +
                     "' doesn't exist in table");
    }
    const ColumnDef& col = schema.columns[id];
    if (!seen.insert(id).second) return invalid("Duplicate column name '" + col.name + "'");
    if (col.storage_disk) {
      // Indexes live in memory and must not fault disk pages in while searching.
      return invalid("Column '" + col.name + "' of key '" + what +
                     "' is STORAGE DISK; indexed columns must be stored in memory");
    }
    if (col.type == ColumnType::kBlob || col.type == ColumnType::kText) {
      return invalid("BLOB/TEXT column '" + col.name +
                     "' used in key specification without a key length");
    }
  }
  return Status::OK();
}

}  // namespace

Status TableSchema::validate() const {
  if (columns.empty()) return invalid("A table must have at least 1 column");
  if (columns.size() > kMaxColumns) return invalid("Too many columns");

  std::unordered_set<std::string> names;
  uint32_t data_bytes = 0;  // at most 512 * (8 + 65535): no overflow in 32 bits
  uint32_t nullable_columns = 0;
  for (const ColumnDef& col : columns) {
    DUO_RETURN_IF_ERROR(validate_column(col));
    if (!names.insert(fold_name(col.name)).second) {
      return invalid("Duplicate column name '" + col.name + "'");
    }
    data_bytes += column_max_size(col);
    if (col.nullable) ++nullable_columns;
  }

  if (primary_key.empty()) return invalid("This table type requires a primary key");
  DUO_RETURN_IF_ERROR(validate_key_columns(*this, primary_key, "PRIMARY"));
  for (uint16_t id : primary_key) {
    if (columns[id].nullable) {
      return invalid("All parts of a PRIMARY KEY must be NOT NULL; if you need NULL in a key, "
                     "use UNIQUE instead (column '" + columns[id].name + "')");
    }
  }

  std::unordered_set<std::string> index_names;
  for (const IndexDef& index : ordered_indexes) {
    if (index.name.empty()) return invalid("Incorrect index name ''");
    const std::string folded = fold_name(index.name);
    if (folded == "primary") return invalid("Incorrect index name '" + index.name + "'");
    if (!index_names.insert(folded).second) {
      return invalid("Duplicate key name '" + index.name + "'");
    }
    if (index.columns.empty()) return invalid("Index '" + index.name + "' has no columns");
    DUO_RETURN_IF_ERROR(validate_key_columns(*this, index.columns, index.name));
  }

  const uint32_t row_bytes = data_bytes + (nullable_columns + 7) / 8 + kRowHeaderEstimateBytes;
  if (row_bytes > kMaxRowSizeBytes) {
    return Status(ErrorCode::kRowTooBig,
                  "Row size too large. The maximum row size for the used table type, not "
                  "counting BLOBs, is " + std::to_string(kMaxRowSizeBytes) +
                      ". This includes storage overhead, check the manual. You have to change "
                      "some columns to TEXT or BLOBs (row size " + std::to_string(row_bytes) +
                      ")");
  }
  return Status::OK();
}

int TableSchema::find_column(const std::string& name) const {
  const std::string folded = fold_name(name);
  for (size_t i = 0; i < columns.size(); ++i) {
    if (fold_name(columns[i].name) == folded) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace duo::storage
