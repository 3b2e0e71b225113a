#include "ndb-kernel/protocol/unique_index.h"

#include <string>

#include "ndb-kernel/common/crc32c.h"

namespace duo::protocol {

uint32_t unique_index_table_id(uint32_t base_table_id, std::string_view index_name) {
  const uint32_t slot = 1 + crc32c(index_name.data(), index_name.size()) % 2047;
  return kUniqueIndexTableBit | (slot << 20) | base_table_id;
}

Result<std::vector<UniqueIndexTable>> unique_index_tables(const TableDef& base) {
  std::vector<UniqueIndexTable> out;
  if (is_unique_index_table(base.schema.table_id)) return out;
  const storage::TableSchema& schema = base.schema;
  for (uint32_t ordinal = 0; ordinal < schema.ordered_indexes.size(); ++ordinal) {
    const storage::IndexDef& index = schema.ordered_indexes[ordinal];
    if (!index.unique) continue;
    if (schema.table_id > kMaxBaseTableId) {
      return Status(ErrorCode::kInvalidArgument, "table id " + std::to_string(schema.table_id) +
                                                     " too large for unique indexes");
    }
    const uint32_t id = unique_index_table_id(schema.table_id, index.name);
    for (const UniqueIndexTable& earlier : out) {
      if (earlier.def.schema.table_id == id) {
        return Status(ErrorCode::kInvalidArgument,
                      "unique indexes '" + earlier.index_name + "' and '" + index.name +
                          "' of table '" + schema.name + "' collide; rename one of them");
      }
    }
    UniqueIndexTable hidden;
    hidden.ordinal = ordinal;
    hidden.index_name = index.name;
    hidden.key_columns = static_cast<uint32_t>(index.columns.size());
    hidden.base_columns = index.columns;
    hidden.base_columns.insert(hidden.base_columns.end(), schema.primary_key.begin(),
                               schema.primary_key.end());
    TableDef& def = hidden.def;
    def.schema.table_id = id;
    // NDB names its index tables after the base table and index the same way.
    def.schema.name = schema.name + "/" + index.name + "$unique";
    for (size_t i = 0; i < hidden.base_columns.size(); ++i) {
      storage::ColumnDef column = schema.columns[hidden.base_columns[i]];
      // A column may be in the index and in the primary key: names must differ.
      column.name = (i < hidden.key_columns ? "k" : "p") + std::to_string(i);
      column.nullable = false;  // an entry exists only for a value without NULLs
      column.storage_disk = false;
      def.schema.columns.push_back(std::move(column));
      if (i < hidden.key_columns) def.schema.primary_key.push_back(static_cast<uint16_t>(i));
    }
    def.version = base.version;
    def.fragment_count = base.fragment_count;
    def.flags = base.flags;
    out.push_back(std::move(hidden));
  }
  return out;
}

bool index_entry_of(const UniqueIndexTable& index, const storage::AttrValues& row,
                    storage::AttrValues* entry) {
  entry->clear();
  for (size_t i = 0; i < index.base_columns.size(); ++i) {
    const int at = row.find(index.base_columns[i]);
    if (at < 0 || row.entry(at).is_null) return false;
    entry->add(static_cast<uint16_t>(i), row.value(at));
  }
  return true;
}

namespace {

bool same_key(const UniqueIndexTable& index, const storage::AttrValues& a,
              const storage::AttrValues& b) {
  for (uint32_t i = 0; i < index.key_columns; ++i) {
    if (a.value(i) != b.value(i)) return false;
  }
  return true;
}

}  // namespace

void index_changes(const UniqueIndexTable& index, const storage::AttrValues* before,
                   const storage::AttrValues* after, std::vector<IndexChange>* out) {
  storage::AttrValues old_entry, new_entry;
  const bool had = before != nullptr && index_entry_of(index, *before, &old_entry);
  const bool has = after != nullptr && index_entry_of(index, *after, &new_entry);
  // The primary key never changes in a write, so an unchanged value keeps its entry.
  if (had && has && same_key(index, old_entry, new_entry)) return;
  if (had) {
    IndexChange remove{index.def.schema.table_id, false, {}};
    for (uint32_t i = 0; i < index.key_columns; ++i) {
      remove.values.add(static_cast<uint16_t>(i), old_entry.value(i));
    }
    out->push_back(std::move(remove));
  }
  if (has) out->push_back(IndexChange{index.def.schema.table_id, true, std::move(new_entry)});
}

Status encode_index_changes(const std::vector<IndexChange>& changes, Bytes* out) {
  for (const IndexChange& change : changes) {
    put_u32(out, change.index_table);
    put_u8(out, change.insert ? 2 : 1);
    DUO_RETURN_IF_ERROR(encode_attr_values(change.values, out));
  }
  return Status::OK();
}

bool decode_index_changes(std::string_view bytes, std::vector<IndexChange>* out) {
  ByteReader in(bytes);
  while (!in.done()) {
    IndexChange change;
    uint8_t kind = 0;
    if (!in.u32(&change.index_table) || !in.u8(&kind) || (kind != 1 && kind != 2) ||
        !is_unique_index_table(change.index_table) || !decode_attr_values(&in, &change.values)) {
      return false;
    }
    change.insert = kind == 2;
    out->push_back(std::move(change));
  }
  return true;
}

}  // namespace duo::protocol
