// Typed values as the MySQL protocol carries them: the parameters of COM_STMT_EXECUTE
// and the cells of result rows, with their text-protocol rendering and their
// binary-protocol encoding for every column type.
//
// A Value holds NULL, a signed or unsigned 64-bit integer, a double, bytes (strings,
// blobs, DECIMAL digits, JSON, BIT, ENUM, SET) or a MysqlTime (DATE, DATETIME,
// TIMESTAMP, TIME). The FieldType of the column or parameter says how it is encoded;
// the integer width is a property of the type, not the value.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "sql-frontend/protocol/mysql_constants.h"
#include "sql-frontend/protocol/wire_buffer.h"

namespace duo::sql::protocol {

// DATE / DATETIME / TIMESTAMP use year..microsecond; TIME uses negative, days,
// hour..microsecond (days * 24 + hour is the hour count of the text form).
struct MysqlTime {
  bool negative = false;
  uint16_t year = 0;
  uint8_t month = 0;
  uint8_t day = 0;
  uint32_t days = 0;
  uint8_t hour = 0;
  uint8_t minute = 0;
  uint8_t second = 0;
  uint32_t microsecond = 0;
  bool operator==(const MysqlTime&) const = default;
};

using Value = std::variant<std::monostate, int64_t, uint64_t, double, std::string, MysqlTime>;

inline bool is_null(const Value& value) {
  return std::holds_alternative<std::monostate>(value);
}

// True for the types whose binary form is a length-encoded string.
bool is_string_encoded(FieldType type);

// MySQL's NOT_FIXED_DEC: the decimals of a column whose values carry their own
// (DOUBLE, a computed DATETIME).
inline constexpr uint8_t kDecimalsNotFixed = 31;

// The text-protocol form of `value` in a column of `type` (never called for NULL).
// TIME, DATETIME and TIMESTAMP get exactly `decimals` fractional digits when it is 0..6
// (a DATETIME(3) column prints .120 for .12), else the value's own (none when its
// microseconds are 0). YEAR gets 4 digits (0000). Throws std::invalid_argument when the value
// cannot be shown as that type.
std::string format_text_value(const Value& value, FieldType type,
                              uint8_t decimals = kDecimalsNotFixed);

// format_text_value() as a length-encoded string (a text-protocol cell), written
// without building the text first where it can (strings, integers).
void write_text_value(PacketWriter& writer, const Value& value, FieldType type,
                      uint8_t decimals = kDecimalsNotFixed);

// A DOUBLE as MySQL's my_gcvt prints it: the shortest digits that read back as the
// same value, in fixed notation unless the point is more than 15 digits right of the
// digits ("1e20", "1.5e16") or more than 14 zeros left of them ("1e-16"); the exponent
// has no '+' and no leading zeros. Also SqlValue's text form of a double.
std::string mysql_double_text(double v);
// The same for a FLOAT: the shortest digits that read back as the same float.
std::string mysql_float_text(float v);

// Binary-protocol encoding of a non-NULL value (binary result rows, execute params).
// Throws std::invalid_argument when the value does not fit the type.
void write_binary_value(PacketWriter& writer, FieldType type, const Value& value);
// Decodes one binary-protocol value of `type`; `is_unsigned` selects the integer kind.
// Throws ProtocolError on truncation or an impossible length.
Value read_binary_value(PacketReader& reader, FieldType type, bool is_unsigned);

}  // namespace duo::sql::protocol
