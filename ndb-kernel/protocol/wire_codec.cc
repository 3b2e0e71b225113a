#include "ndb-kernel/protocol/wire_codec.h"

#include <cstring>
#include <limits>

namespace duo::protocol {

namespace {
constexpr uint16_t kNullBit = 0x8000;
}

void append(Bytes* out, std::string_view bytes) {
  // One resize and a memcpy: insert() from a char range into a vector of uint8_t
  // converts element by element, which showed up as ~10% of a data node's CPU once
  // scan batches were combined (SCAN_TABCONF).
  if (bytes.empty()) return;
  const size_t at = out->size();
  out->resize(at + bytes.size());
  std::memcpy(out->data() + at, bytes.data(), bytes.size());
}
Status put_string(Bytes* out, std::string_view text) {
  if (text.size() > std::numeric_limits<uint16_t>::max()) {
    return Status(ErrorCode::kInvalidArgument, "string of " + std::to_string(text.size()) +
                                                   " bytes does not fit a u16 length");
  }
  put_u16(out, static_cast<uint16_t>(text.size()));
  append(out, text);
  return Status::OK();
}

bool get_string(ByteReader* in, std::string* out) {
  uint16_t size = 0;
  std::string_view bytes;
  if (!in->u16(&size) || !in->take(size, &bytes)) return false;
  out->assign(bytes);
  return true;
}

namespace {

Status encode_entries(const storage::AttrValues& values, Bytes* out) {
  for (size_t i = 0; i < values.size(); ++i) {
    const storage::AttrValues::Entry& entry = values.entry(i);
    if (entry.column >= kNullBit) {
      return Status(ErrorCode::kInvalidArgument, "column id " + std::to_string(entry.column) +
                                                     " out of range");
    }
    if (entry.is_null) {
      put_u16(out, static_cast<uint16_t>(entry.column | kNullBit));
      continue;
    }
    if (entry.size > std::numeric_limits<uint16_t>::max()) {
      return Status(ErrorCode::kDataTooLong,
                    "value of column " + std::to_string(entry.column) + " is too long");
    }
    put_u16(out, entry.column);
    put_u16(out, static_cast<uint16_t>(entry.size));
    append(out, values.value(i));
  }
  return Status::OK();
}

bool decode_entries(ByteReader* in, uint64_t count, storage::AttrValues* out) {
  for (uint64_t i = 0; i < count; ++i) {
    uint16_t column = 0;
    if (!in->u16(&column)) return false;
    if ((column & kNullBit) != 0) {
      out->add_null(static_cast<uint16_t>(column & ~kNullBit));
      continue;
    }
    uint16_t size = 0;
    std::string_view value;
    if (!in->u16(&size) || !in->take(size, &value)) return false;
    out->add(column, value);
  }
  return true;
}

}  // namespace

size_t encoded_size(const storage::AttrValues& values) {
  size_t bytes = 2;
  for (const storage::AttrValues::Entry& entry : values.entries()) {
    bytes += entry.is_null ? 2 : 4 + size_t{entry.size};
  }
  return bytes;
}

Status encode_attr_values(const storage::AttrValues& values, Bytes* out) {
  if (values.size() > std::numeric_limits<uint16_t>::max()) {
    return Status(ErrorCode::kInvalidArgument, "too many values");
  }
  // One growth at most: per-value appends would reallocate as the vector doubles.
  const size_t needed = out->size() + encoded_size(values);
  if (needed > out->capacity()) {
    out->reserve(needed > 2 * out->capacity() ? needed : 2 * out->capacity());
  }
  put_u16(out, static_cast<uint16_t>(values.size()));
  return encode_entries(values, out);
}

bool decode_attr_values(ByteReader* in, storage::AttrValues* out) {
  uint16_t count = 0;
  return in->u16(&count) && decode_entries(in, count, out);
}

void encode_columns(const std::vector<uint16_t>& columns, Bytes* out) {
  put_u16(out, static_cast<uint16_t>(columns.size()));
  for (uint16_t column : columns) put_u16(out, column);
}

bool decode_columns(ByteReader* in, std::vector<uint16_t>* out) {
  uint16_t count = 0;
  if (!in->u16(&count)) return false;
  out->resize(count);
  for (uint16_t& column : *out) {
    if (!in->u16(&column)) return false;
  }
  return true;
}

Status encode_row_batch(const storage::RowBatch& batch, Bytes* out) {
  put_u32(out, static_cast<uint32_t>(batch.rows()));
  size_t entry = 0;
  for (size_t r = 0; r < batch.rows(); ++r) {
    put_u32(out, static_cast<uint32_t>(entry));
    entry += batch.row(r).size();
  }
  put_u32(out, static_cast<uint32_t>(batch.values().size()));
  return encode_entries(batch.values(), out);
}

Status decode_row_batch(std::string_view bytes, storage::RowBatch* out) {
  out->clear();
  ByteReader in(bytes);
  // Built only on failure: an unchecked error Status aborts debug builds.
  const auto bad = [] { return Status(ErrorCode::kInvalidArgument, "malformed row batch"); };
  uint32_t rows = 0;
  if (!in.u32(&rows) || rows > in.remaining() / 4) return bad();
  std::vector<uint32_t> starts(rows);
  for (uint32_t& start : starts) {
    if (!in.u32(&start)) return bad();
  }
  uint32_t count = 0;
  if (!in.u32(&count)) return bad();
  // Every value belongs to exactly one row.
  if ((rows == 0 && count != 0) || (rows > 0 && starts[0] != 0)) return bad();
  storage::AttrValues values;
  if (!decode_entries(&in, count, &values) || !in.done()) return bad();
  // Rebuild row by row so RowBatch's own bookkeeping stays the only truth.
  for (uint32_t r = 0; r < rows; ++r) {
    const uint32_t begin = starts[r];
    const uint32_t end = r + 1 < rows ? starts[r + 1] : count;
    if (begin > end || end > count) return bad();
    storage::AttrValues& row = out->begin_row();
    for (uint32_t i = begin; i < end; ++i) {
      const storage::AttrValues::Entry& e = values.entry(i);
      if (e.is_null) {
        row.add_null(e.column);
      } else {
        row.add(e.column, values.value(i));
      }
    }
  }
  return Status::OK();
}

Status encode_table_def(const TableDef& table, Bytes* out) {
  const storage::TableSchema& schema = table.schema;
  put_u32(out, schema.table_id);
  put_u32(out, table.version);
  put_u32(out, table.fragment_count);
  put_u32(out, table.flags);
  DUO_RETURN_IF_ERROR(put_string(out, schema.name));
  put_u16(out, static_cast<uint16_t>(schema.columns.size()));
  for (const storage::ColumnDef& col : schema.columns) {
    DUO_RETURN_IF_ERROR(put_string(out, col.name));
    put_u8(out, static_cast<uint8_t>(col.type));
    put_u8(out, static_cast<uint8_t>((col.is_unsigned ? 1 : 0) | (col.nullable ? 2 : 0) |
                                     (col.storage_disk ? 4 : 0)));
    put_u32(out, col.length);
    put_u8(out, col.precision);
    put_u8(out, col.scale);
    put_u8(out, static_cast<uint8_t>(col.collation));
  }
  encode_columns(schema.primary_key, out);
  put_u16(out, static_cast<uint16_t>(schema.ordered_indexes.size()));
  for (const storage::IndexDef& index : schema.ordered_indexes) {
    DUO_RETURN_IF_ERROR(put_string(out, index.name));
    put_u8(out, index.unique ? 1 : 0);
    encode_columns(index.columns, out);
  }
  DUO_RETURN_IF_ERROR(put_string(out, table.sql_definition));
  put_u32(out, table.tablespace_id);
  return Status::OK();
}

Result<TableDef> decode_table_def(std::string_view bytes) {
  const auto bad = [] { return Status(ErrorCode::kInvalidArgument, "malformed table definition"); };
  ByteReader in(bytes);
  TableDef table;
  storage::TableSchema& schema = table.schema;
  uint16_t column_count = 0;
  if (!in.u32(&schema.table_id) || !in.u32(&table.version) || !in.u32(&table.fragment_count) ||
      !in.u32(&table.flags) || !get_string(&in, &schema.name) || !in.u16(&column_count)) {
    return bad();
  }
  if (column_count > storage::kMaxColumns) return bad();
  schema.columns.resize(column_count);
  for (storage::ColumnDef& col : schema.columns) {
    uint8_t type = 0, bits = 0, collation = 0;
    if (!get_string(&in, &col.name) || !in.u8(&type) || !in.u8(&bits) || !in.u32(&col.length) ||
        !in.u8(&col.precision) || !in.u8(&col.scale) || !in.u8(&collation)) {
      return bad();
    }
    if (type > static_cast<uint8_t>(storage::ColumnType::kText) ||
        collation > static_cast<uint8_t>(storage::Collation::kCaseInsensitive) || bits > 7) {
      return bad();
    }
    col.type = static_cast<storage::ColumnType>(type);
    col.is_unsigned = (bits & 1) != 0;
    col.nullable = (bits & 2) != 0;
    col.storage_disk = (bits & 4) != 0;
    col.collation = static_cast<storage::Collation>(collation);
  }
  uint16_t index_count = 0;
  if (!decode_columns(&in, &schema.primary_key) || !in.u16(&index_count)) return bad();
  // An index takes at least 5 bytes: never reserve for more than the input can hold.
  if (index_count > in.remaining() / 5) return bad();
  schema.ordered_indexes.resize(index_count);
  for (storage::IndexDef& index : schema.ordered_indexes) {
    uint8_t unique = 0;
    if (!get_string(&in, &index.name) || !in.u8(&unique) || unique > 1 ||
        !decode_columns(&in, &index.columns)) {
      return bad();
    }
    index.unique = unique == 1;
  }
  if (!get_string(&in, &table.sql_definition) || !in.u32(&table.tablespace_id) || !in.done()) {
    return bad();
  }
  return table;
}

}  // namespace duo::protocol
