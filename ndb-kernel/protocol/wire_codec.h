// Byte encodings of the values the data-path signals carry in their sections: column
// values (AttrValues), row batches, column lists and table definitions. Layouts are
// documented in docs/formats/kernel-protocol.md. All integers little-endian.
//
// Decoders take untrusted bytes (a peer may run another version, or be broken): every
// malformed input is kInvalidArgument, never a crash or an over-read.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/row/attr_values.h"
#include "storage/row/row_batch.h"
#include "storage/row/table_schema.h"
#include "storage/scan/byte_codec.h"

namespace duo::protocol {

using storage::scan_codec::ByteReader;

// A section is a byte vector (Signal::section); codecs append to / read from it.
using Bytes = std::vector<uint8_t>;

inline std::string_view as_view(const Bytes& bytes) {
  return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}
void append(Bytes* out, std::string_view bytes);
// Little-endian integers. Inline and one resize each: every data-path signal is built
// from them, byte-wise push_backs showed up as several percent of a data node's CPU.
template <typename T>
inline void put_le(Bytes* out, T v) {
  const size_t at = out->size();
  out->resize(at + sizeof(T));
  uint8_t* p = out->data() + at;
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void put_u8(Bytes* out, uint8_t v) { out->push_back(v); }
inline void put_u16(Bytes* out, uint16_t v) { put_le(out, v); }
inline void put_u32(Bytes* out, uint32_t v) { put_le(out, v); }
inline void put_u64(Bytes* out, uint64_t v) { put_le(out, v); }
// u16 length + bytes; kInvalidArgument beyond 65535 bytes.
Status put_string(Bytes* out, std::string_view text);
bool get_string(ByteReader* in, std::string* out);

// AttrValues: u16 count, then per value u16 (column | 0x8000 if NULL) and, unless
// NULL, u16 size + bytes. Values are at most kMaxRowSizeBytes, so u16 sizes suffice.
// encode_attr_values grows *out at most once (to what it needs, or double its capacity
// when that is more): a section built from scratch is allocated once.
Status encode_attr_values(const storage::AttrValues& values, Bytes* out);
// Bytes encode_attr_values appends for `values`.
size_t encoded_size(const storage::AttrValues& values);
bool decode_attr_values(ByteReader* in, storage::AttrValues* out);

// Column list: u16 count + u16 ids.
inline size_t encoded_columns_size(const std::vector<uint16_t>& columns) {
  return 2 + 2 * columns.size();
}
void encode_columns(const std::vector<uint16_t>& columns, Bytes* out);
bool decode_columns(ByteReader* in, std::vector<uint16_t>* out);

// RowBatch: u32 rows, u32 entry index where each row starts, then the AttrValues
// of the whole batch (with a u32 count instead of u16, batches can hold many values).
Status encode_row_batch(const storage::RowBatch& batch, Bytes* out);
Status decode_row_batch(std::string_view bytes, storage::RowBatch* out);

// A table as the dictionary distributes it: the storage schema plus what the cluster
// adds (version, fragment count, options).
struct TableDef {
  storage::TableSchema schema;     // schema.table_id is the table id
  uint32_t version = 0;            // bumped by every change of the table's definition
  uint32_t fragment_count = 0;     // fixed at creation
  uint32_t flags = 0;              // kTableReadBackup ...
  // The SQL layer's own definition of the table (column types as declared, defaults,
  // AUTO_INCREMENT, comments ...), opaque to the kernel: the dictionary stores and
  // distributes it with the table, as NDB keeps a table's frm/SDI blob, so every SQL
  // front-end sees the same definition. At most 64 KiB - 1.
  std::string sql_definition;
  // The tablespace (protocol/filegroup.h) its STORAGE DISK columns use; 0: none. The
  // dictionary refuses to drop a tablespace a table names.
  uint32_t tablespace_id = 0;
};
inline constexpr uint32_t kTableReadBackup = 1;
// A copying ALTER TABLE reads the table (NDB's global schema lock for it): writes are
// refused with kTemporary until it ends. Bits 16..31 of flags name the API node holding
// it; the dictionary lifts the lock when that node fails.
inline constexpr uint32_t kTableCopyLocked = 2;
inline uint32_t with_copy_lock(uint32_t flags, uint16_t api_node) {
  return (flags & 0xFFFF & ~kTableCopyLocked) |
         (api_node == 0 ? 0 : kTableCopyLocked | (uint32_t{api_node} << 16));
}
inline uint16_t copy_lock_owner(uint32_t flags) {
  return (flags & kTableCopyLocked) != 0 ? static_cast<uint16_t>(flags >> 16) : 0;
}

Status encode_table_def(const TableDef& table, Bytes* out);
Result<TableDef> decode_table_def(std::string_view bytes);

}  // namespace duo::protocol
