// The BLOB/TEXT parts layout; see blob_parts.h.
#include "ndb-kernel/api/blob_parts.h"

#include <algorithm>

namespace duo::api {

namespace {

constexpr const char* kPartsTablePrefix = "NDB$BLOB_";

uint64_t load_u64(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < kBlobHeaderBytes; ++i) {
    value |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
  }
  return value;
}

bool is_lob(const storage::ColumnDef& column) {
  return column.type == storage::ColumnType::kBlob || column.type == storage::ColumnType::kText;
}

}  // namespace

bool has_blob_parts(const storage::ColumnDef& column) {
  return is_lob(column) && column.length >= kBlobInlineBytes;
}

std::vector<uint16_t> blob_parts_columns(const protocol::TableDef& table) {
  std::vector<uint16_t> out;
  for (size_t c = 0; c < table.schema.columns.size(); ++c) {
    if (has_blob_parts(table.schema.columns[c])) out.push_back(static_cast<uint16_t>(c));
  }
  return out;
}

std::string blob_parts_table_name(const std::string& base_name, uint32_t table_id,
                                  uint16_t column) {
  const size_t slash = base_name.rfind('/');
  const std::string prefix = slash == std::string::npos ? "" : base_name.substr(0, slash + 1);
  return prefix + kPartsTablePrefix + std::to_string(table_id) + "_" + std::to_string(column);
}

bool is_blob_parts_table_name(std::string_view name) {
  const size_t slash = name.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? name : name.substr(slash + 1);
  return last.starts_with(kPartsTablePrefix);
}

Result<protocol::TableDef> blob_parts_table_def(const protocol::TableDef& base, uint16_t column,
                                                uint32_t part_bytes) {
  if (column >= base.schema.columns.size() || !has_blob_parts(base.schema.columns[column]) ||
      part_bytes == 0) {
    return Status(ErrorCode::kInvalidArgument,
                  "column " + std::to_string(column) + " of '" + base.schema.name +
                      "' has no blob parts");
  }
  protocol::TableDef parts;
  parts.schema.name = blob_parts_table_name(base.schema.name, base.schema.table_id, column);
  for (uint16_t key_column : base.schema.primary_key) {
    storage::ColumnDef def = base.schema.columns[key_column];
    def.nullable = false;
    def.storage_disk = false;
    parts.schema.primary_key.push_back(static_cast<uint16_t>(parts.schema.columns.size()));
    parts.schema.columns.push_back(std::move(def));
  }
  storage::ColumnDef part;
  part.name = kBlobPartColumn;
  part.type = storage::ColumnType::kInt;
  part.is_unsigned = true;
  part.nullable = false;
  parts.schema.primary_key.push_back(static_cast<uint16_t>(parts.schema.columns.size()));
  parts.schema.columns.push_back(std::move(part));
  storage::ColumnDef data;
  data.name = kBlobDataColumn;
  data.type = storage::ColumnType::kVarbinary;
  data.length = part_bytes;
  data.nullable = false;
  // NDB: the parts of a STORAGE DISK blob column are on disk; the head stays in memory.
  data.storage_disk = base.schema.columns[column].storage_disk;
  parts.schema.columns.push_back(std::move(data));
  parts.fragment_count = base.fragment_count;
  parts.flags = base.flags & protocol::kTableReadBackup;
  if (parts.schema.columns.back().storage_disk) parts.tablespace_id = base.tablespace_id;
  return parts;
}

uint32_t blob_part_bytes(const protocol::TableDef& parts_table) {
  return parts_table.schema.columns.empty() ? 0 : parts_table.schema.columns.back().length;
}

uint64_t blob_total_bytes(std::string_view value) {
  return value.size() < kBlobHeaderBytes ? 0 : load_u64(value);
}

std::string blob_head(std::string_view whole, uint32_t inline_bytes) {
  const size_t bytes = std::min<size_t>(whole.size(), kBlobHeaderBytes + inline_bytes);
  return std::string(whole.substr(0, bytes));
}

bool blob_head_is_whole(std::string_view head) {
  return head.size() >= kBlobHeaderBytes &&
         head.size() - kBlobHeaderBytes >= blob_total_bytes(head);
}

uint64_t blob_part_count(uint64_t total_bytes, uint32_t inline_bytes, uint32_t part_bytes) {
  if (total_bytes <= inline_bytes || part_bytes == 0) return 0;
  return (total_bytes - inline_bytes + part_bytes - 1) / part_bytes;
}

std::string_view blob_part_data(std::string_view whole, uint32_t inline_bytes, uint32_t part_bytes,
                                uint64_t part) {
  const uint64_t start = kBlobHeaderBytes + inline_bytes + part * part_bytes;
  if (start >= whole.size()) return {};
  return whole.substr(start, std::min<uint64_t>(part_bytes, whole.size() - start));
}

Result<storage::AttrValues> blob_part_key(const protocol::TableDef& base,
                                          const storage::AttrValues& base_values, uint64_t part) {
  storage::AttrValues key;
  uint16_t parts_column = 0;
  for (uint16_t key_column : base.schema.primary_key) {
    const int at = base_values.find(key_column);
    if (at < 0 || base_values.entry(static_cast<size_t>(at)).is_null) {
      return Status(ErrorCode::kInvalidArgument,
                    "blob parts need key column " + std::to_string(key_column) + " of '" +
                        base.schema.name + "'");
    }
    key.add(parts_column++, base_values.value(static_cast<size_t>(at)));
  }
  const uint32_t number = static_cast<uint32_t>(part);
  const char bytes[4] = {static_cast<char>(number), static_cast<char>(number >> 8),
                         static_cast<char>(number >> 16), static_cast<char>(number >> 24)};
  key.add(parts_column, std::string_view(bytes, 4));
  return key;
}

Result<storage::AttrValues> blob_part_row(const protocol::TableDef& base,
                                          const storage::AttrValues& base_values, uint64_t part,
                                          std::string_view data) {
  DUO_ASSIGN_OR_RETURN(storage::AttrValues row, blob_part_key(base, base_values, part));
  row.add(static_cast<uint16_t>(base.schema.primary_key.size() + 1), data);
  return row;
}

Result<std::string> blob_assemble(std::string_view head, const std::vector<std::string>& parts) {
  const uint64_t total = blob_total_bytes(head);
  std::string whole(head);
  for (const std::string& part : parts) whole += part;
  if (head.size() < kBlobHeaderBytes || whole.size() - kBlobHeaderBytes != total) {
    return Status(ErrorCode::kCorruption,
                  "blob parts hold " + std::to_string(whole.size() - std::min(whole.size(), kBlobHeaderBytes)) +
                      " bytes, the head says " + std::to_string(total));
  }
  return whole;
}

}  // namespace duo::api
