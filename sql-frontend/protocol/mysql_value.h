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

// The text-protocol form of `value` in a column of `type` (never called for NULL).
// Throws std::invalid_argument when the value cannot be shown as that type.
std::string format_text_value(const Value& value, FieldType type);

// Binary-protocol encoding of a non-NULL value (binary result rows, execute params).
// Throws std::invalid_argument when the value does not fit the type.
void write_binary_value(PacketWriter& writer, FieldType type, const Value& value);
// Decodes one binary-protocol value of `type`; `is_unsigned` selects the integer kind.
// Throws ProtocolError on truncation or an impossible length.
Value read_binary_value(PacketReader& reader, FieldType type, bool is_unsigned);

}  // namespace duo::sql::protocol
