// Column definitions and the storage encoding of one column value.
//
// Every value the storage engine holds is in the "storage encoding" below; the SQL
// layer and the client library convert to and from it. Encodings are chosen so that
// comparison is cheap and hashing agrees with equality under the column's collation.
// The encodings are an on-disk/on-wire format: see docs/formats/row-format.md.
//
//   TINYINT..BIGINT   1,2,3,4,8 bytes little-endian two's complement (or unsigned)
//   FLOAT / DOUBLE    4 / 8 bytes IEEE-754 little-endian
//   DECIMAL(p,s)      MySQL binary decimal format (memcmp-ordered), decimal_bin_size(p,s)
//   CHAR(n)           n bytes, padded with spaces (PAD SPACE comparison)
//   BINARY(n)         n bytes, padded with 0x00 (exact comparison)
//   VARCHAR/VARBINARY up to n bytes, variable
//   DATE              3 bytes little-endian uint: year*512 + month*32 + day
//   TIME(fsp)         8 bytes little-endian int64: signed microseconds
//   DATETIME(fsp)     8 bytes little-endian uint64, bit fields (order-preserving):
//                     (year*512 + month*32 + day) << 37 | hour << 32 | minute << 26
//                     | second << 20 | microseconds   (60 bits used; a decimal
//                     YYYYMMDDhhmmss * 1e6 would overflow 64 bits after 1844)
//   TIMESTAMP(fsp)    8 bytes little-endian int64: microseconds since 1970-01-01 UTC
//   BLOB / TEXT       variable: 8-byte little-endian total length, then the inline
//                     part (at most `length` bytes); the rest lives in parts (later)
//
// Thread-safety: pure functions over immutable definitions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ndb-kernel/common/status.h"

namespace duo::storage {

enum class ColumnType : uint8_t {
  kTinyInt,
  kSmallInt,
  kMediumInt,
  kInt,
  kBigInt,
  kFloat,
  kDouble,
  kDecimal,
  kChar,
  kVarchar,
  kBinary,
  kVarbinary,
  kDate,
  kTime,
  kDatetime,
  kTimestamp,
  kBlob,
  kText,
};

enum class Collation : uint8_t {
  kBinary,  // byte order (BINARY/VARBINARY/BLOB, and *_bin string collations)
  // Case- and accent-insensitive on UTF-8 ('é' = 'E', 'ß' = 's'), PAD SPACE, like
  // utf8mb4_general_ci: one weight per character, storage/row/collation.h.
  kCaseInsensitive,
};

struct ColumnDef {
  std::string name;
  ColumnType type = ColumnType::kInt;
  bool is_unsigned = false;
  bool nullable = true;
  // CHAR/BINARY: fixed byte length; VARCHAR/VARBINARY: maximum byte length;
  // BLOB/TEXT: maximum inline bytes kept in the row (NDB keeps 256).
  uint32_t length = 0;
  uint8_t precision = 0;  // DECIMAL(p, s): p
  uint8_t scale = 0;      // DECIMAL(p, s): s; TIME/DATETIME/TIMESTAMP: fractional digits
  Collation collation = Collation::kBinary;
  bool storage_disk = false;  // STORAGE DISK column (disk data issue); must be non-indexed
};

// True for columns stored in the variable-size part of the row.
bool is_var_sized(const ColumnDef& col);
// Bytes in the fixed part for fixed-size columns; maximum encoded bytes for var-sized ones
// (BLOB/TEXT: 8 + inline length).
uint32_t column_max_size(const ColumnDef& col);
uint32_t decimal_bin_size(uint8_t precision, uint8_t scale);
bool is_integer(ColumnType type);
bool is_string(ColumnType type);  // CHAR/VARCHAR/BINARY/VARBINARY/BLOB/TEXT

// Checks a definition for internal consistency (lengths, precision, scale).
Status validate_column(const ColumnDef& col);

// Three-way comparison of two non-NULL encoded values of `col` under its collation.
int compare_values(const ColumnDef& col, std::string_view a, std::string_view b);

// Hash of an encoded value; equal values under the collation hash equal (weights of
// collation.h, trailing spaces ignored for PAD SPACE types). Part of the distribution
// format: stable (a change of the weight table changes it for the characters it touches).
uint64_t hash_value(const ColumnDef& col, std::string_view value, uint64_t seed);

// Order-preserving 32-bit prefix of an encoded value: a < b implies prefix(a) <= prefix(b).
// `exact` is set when prefix equality implies value equality (e.g. INT, SMALLINT).
uint32_t normalized_prefix(const ColumnDef& col, std::string_view value, bool* exact);

// Text conversions, as MySQL prints and parses them ("12.50", "2024-02-29 10:00:00").
// parse_value rejects malformed input (kInvalidArgument), too long values (kDataTooLong)
// and out-of-range numbers (kOutOfRange).
Result<std::string> parse_value(const ColumnDef& col, std::string_view text);
std::string format_value(const ColumnDef& col, std::string_view value);

// Integer columns: encode / decode the storage encoding.
std::string encode_int(const ColumnDef& col, int64_t value);
std::string encode_uint(const ColumnDef& col, uint64_t value);
int64_t decode_int(const ColumnDef& col, std::string_view value);
uint64_t decode_uint(const ColumnDef& col, std::string_view value);
// Range of an integer column: is `value` representable? (signed / unsigned variants)
bool int_fits(const ColumnDef& col, int64_t value);
bool uint_fits(const ColumnDef& col, uint64_t value);

}  // namespace duo::storage
