// BLOB/TEXT values beyond the row (NDB's NdbBlob, "blob V2" layout): the row keeps a
// head — the value's total length and its first inline bytes — and the rest lives in a
// hidden parts table, one row per fixed-size part, written and read by the client
// library in the same transaction as the row. This file is the layout: which columns
// have parts, the parts table's definition and name, how a value splits into head and
// parts and is put back together. Transaction (transaction_blobs.cc) applies it.
//
// Head (the column's value in the row, storage/row/column.cc's BLOB/TEXT encoding):
// u64 little-endian total length, then min(total, inline) bytes. The API hands callers
// the whole value in the same encoding (total, then all total bytes).
//
// Parts table of column c of table "db/def/t" with id N: "db/def/NDB$BLOB_N_c" (NDB's
// name, by table id so that renaming the table within its database leaves it alone).
// Columns: the base table's primary-key columns (same names and types), NDB$PART (INT
// UNSIGNED, the part number from 0), NDB$DATA (VARBINARY(part size): the part's bytes,
// STORAGE DISK when the blob column is). Primary key: base key, then NDB$PART. Part k
// holds bytes [inline + k*part, inline + (k+1)*part) of the value; all parts but the
// last are full. NDB also has NDB$PKID (a head field checking that parts belong to the
// head); our head has no such field, the exclusive lock on the head guards instead.
//
// Which columns have parts: a BLOB/TEXT column whose inline size is kBlobInlineBytes
// (BLOB/TEXT/MEDIUM*/LONG*/JSON). TINYBLOB/TINYTEXT are declared with inline size 255
// (kTinyBlobBytesMax), so the row holds every value they can have and they have no
// parts table (NDB keeps inline 256 and part size 0 for them: the same effect).
//
// Thread-safety: pure functions and values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/wire_codec.h"
#include "storage/row/attr_values.h"

namespace duo::api {

inline constexpr uint32_t kBlobInlineBytes = 256;    // NDB's inline size
inline constexpr uint32_t kTinyBlobBytesMax = 255;   // TINYBLOB/TINYTEXT: all inline
inline constexpr size_t kBlobHeaderBytes = 8;        // u64 total length
// NDB's part sizes by type (ha_ndbcluster: BLOB/TEXT 2000, MEDIUM* 4000, LONG* 13948).
inline constexpr uint32_t kBlobPartBytes = 2000;
inline constexpr uint32_t kMediumBlobPartBytes = 4000;
inline constexpr uint32_t kLongBlobPartBytes = 13948;
// Bytes of parts one execute carries at most (NDB's ndb_blob_write_batch_bytes and
// ndb_blob_read_batch_bytes, 64K by default there): a 16 MiB value goes out in 16
// batches, each well below a link's send buffer (ClusterOptions::send_buffer_bytes_max,
// 4 MiB), not in one round trip per part.
inline constexpr size_t kBlobBatchBytesMax = 1024 * 1024;

inline constexpr const char* kBlobPartColumn = "NDB$PART";
inline constexpr const char* kBlobDataColumn = "NDB$DATA";

// A BLOB/TEXT column's part size to create its parts table with (0: no parts table).
struct BlobPartsSpec {
  uint16_t column = 0;
  uint32_t part_bytes = 0;
};

// True for a BLOB/TEXT column that has a parts table (see the file comment).
bool has_blob_parts(const storage::ColumnDef& column);
// The columns of `table` that have parts, in column order.
std::vector<uint16_t> blob_parts_columns(const protocol::TableDef& table);

// "db/def/NDB$BLOB_<table id>_<column>" for the table named `base_name`.
std::string blob_parts_table_name(const std::string& base_name, uint32_t table_id,
                                  uint16_t column);
// True for a name made by blob_parts_table_name (its last component starts NDB$BLOB_).
bool is_blob_parts_table_name(std::string_view name);

// The parts table of `column` of `base` (created after base, so base has its id).
// kInvalidArgument when the column has no parts or part_bytes is 0.
Result<protocol::TableDef> blob_parts_table_def(const protocol::TableDef& base, uint16_t column,
                                                uint32_t part_bytes);
// The part size of a parts table (its NDB$DATA length).
uint32_t blob_part_bytes(const protocol::TableDef& parts_table);

// A value in the head/whole encoding: its total length (0 for a malformed value).
uint64_t blob_total_bytes(std::string_view value);
// The head of a whole value: total length and the first `inline_bytes` bytes.
std::string blob_head(std::string_view whole, uint32_t inline_bytes);
// Whether a head (or whole value) holds all of the value's bytes.
bool blob_head_is_whole(std::string_view head);
// Parts a value of `total_bytes` has.
uint64_t blob_part_count(uint64_t total_bytes, uint32_t inline_bytes, uint32_t part_bytes);
// The bytes of part `part` of a whole value.
std::string_view blob_part_data(std::string_view whole, uint32_t inline_bytes, uint32_t part_bytes,
                                uint64_t part);

// The key of part `part` in the parts table: the base key columns (taken from
// `base_values` by base column id, renumbered to the parts table's), then NDB$PART.
// kInvalidArgument when a key column is missing from base_values.
Result<storage::AttrValues> blob_part_key(const protocol::TableDef& base,
                                          const storage::AttrValues& base_values, uint64_t part);
// The whole part row: blob_part_key plus NDB$DATA = data.
Result<storage::AttrValues> blob_part_row(const protocol::TableDef& base,
                                          const storage::AttrValues& base_values, uint64_t part,
                                          std::string_view data);

// Puts a value back together: `head` as read from the row and the parts' bytes in part
// order. kCorruption when the bytes do not add up to the head's total length.
Result<std::string> blob_assemble(std::string_view head, const std::vector<std::string>& parts);

}  // namespace duo::api
