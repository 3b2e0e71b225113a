#include "ndb-kernel/api/text_values.h"

#include <algorithm>
#include <set>

#include "storage/row/column.h"

namespace duo::api {

Status values_from_text(const protocol::TableDef& table, const std::vector<TextValue>& text,
                        storage::AttrValues* key, storage::AttrValues* values) {
  const storage::TableSchema& schema = table.schema;
  std::set<int> seen;
  for (const TextValue& item : text) {
    const int column = schema.find_column(item.column);
    if (column < 0) {
      return Status(ErrorCode::kInvalidArgument,
                    "Unknown column '" + item.column + "' in table '" + schema.name + "'");
    }
    if (!seen.insert(column).second) {
      return Status(ErrorCode::kInvalidArgument, "Column '" + item.column + "' given twice");
    }
    const bool is_key = std::find(schema.primary_key.begin(), schema.primary_key.end(),
                                  static_cast<uint16_t>(column)) != schema.primary_key.end();
    storage::AttrValues* out = is_key ? key : values;
    if (out == nullptr) {
      return Status(ErrorCode::kInvalidArgument,
                    "Column '" + item.column + "' is not part of the primary key");
    }
    const storage::ColumnDef& def = schema.columns[static_cast<size_t>(column)];
    if (!item.value) {
      if (is_key || !def.nullable) {
        return Status(ErrorCode::kNotNullViolation, "Column '" + item.column + "' cannot be null");
      }
      out->add_null(static_cast<uint16_t>(column));
      continue;
    }
    Result<std::string> encoded = storage::parse_value(def, *item.value);
    if (!encoded.ok()) {
      return Status(encoded.status().code(),
                    "column '" + item.column + "': " + encoded.status().message());
    }
    out->add(static_cast<uint16_t>(column), *encoded);
  }
  if (key != nullptr) {
    for (uint16_t column : schema.primary_key) {
      if (seen.count(column) == 0) {
        return Status(ErrorCode::kInvalidArgument,
                      "primary key column '" + schema.columns[column].name + "' missing");
      }
    }
  }
  return Status::OK();
}

std::vector<TextValue> values_to_text(const protocol::TableDef& table,
                                      const storage::AttrValues& values) {
  std::vector<TextValue> text;
  for (size_t i = 0; i < values.size(); ++i) {
    const storage::AttrValues::Entry& entry = values.entry(i);
    TextValue item;
    if (entry.column < table.schema.columns.size()) {
      const storage::ColumnDef& def = table.schema.columns[entry.column];
      item.column = def.name;
      if (!entry.is_null) item.value = storage::format_value(def, values.value(i));
    } else {
      item.column = "#" + std::to_string(entry.column);
    }
    text.push_back(std::move(item));
  }
  return text;
}

}  // namespace duo::api
