// SqlValue: a value while a statement runs in duo_sqld — NULL, a signed or unsigned
// integer, a double, a DECIMAL (its canonical text) or a string (also dates and times,
// in their canonical text form, which orders as the value does). Plus the conversions
// between SqlValue, the storage encoding of a column (storage/row/column.h) and the
// protocol's typed Value of a result cell.
//
// Conversions follow MySQL's strict mode: a value that does not fit its column is an
// error (1264 out of range, 1406 too long, 1366 incorrect value), never a silent
// truncation. They throw SqlException. YEAR and BIT(M) follow MySQL's Field_year and
// Field_bit (docs/formats/sql-types.md): a YEAR is read back as its year, a BIT as the
// unsigned number of its bits.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "sql-frontend/catalog/sql_table.h"
#include "sql-frontend/executor/json_value.h"
#include "sql-frontend/protocol/mysql_value.h"

namespace duo::sql::executor {

struct SqlValue {
  enum class Kind : uint8_t { kNull, kInt, kUInt, kDouble, kDecimal, kString };
  // kString only: the text is a canonical DATE, DATETIME or TIME (a temporal column's
  // value, NOW(), CAST(... AS DATE) ...), so that result metadata can give its type.
  enum class TemporalType : uint8_t { kNone, kDate, kDatetime, kTime };
  Kind kind = Kind::kNull;
  TemporalType temporal_type = TemporalType::kNone;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;  // kDecimal digits or kString bytes
  // kString read from an ENUM or SET column (from_storage): `u` is the value's position
  // or bit set, which numeric context sees, as in MySQL (e + 0, e = 2, SUM(e)).
  bool enum_number = false;
  // kString holding normalized JSON text (a JSON column's value, a JSON function's
  // result): comparisons use JSON's rules and JSON_OBJECT/JSON_ARRAY embed it as JSON.
  bool is_json = false;

  static SqlValue null() { return SqlValue{}; }
  static SqlValue of_int(int64_t v) {
    SqlValue x;
    x.kind = Kind::kInt;
    x.i = v;
    return x;
  }
  static SqlValue of_uint(uint64_t v) {
    SqlValue x;
    x.kind = Kind::kUInt;
    x.u = v;
    return x;
  }
  static SqlValue of_double(double v) {
    SqlValue x;
    x.kind = Kind::kDouble;
    x.d = v;
    return x;
  }
  static SqlValue of_decimal(std::string v) {
    SqlValue x;
    x.kind = Kind::kDecimal;
    x.s = std::move(v);
    return x;
  }
  static SqlValue of_string(std::string v) {
    SqlValue x;
    x.kind = Kind::kString;
    x.s = std::move(v);
    return x;
  }

  static SqlValue of_json(std::string v) {
    SqlValue x = of_string(std::move(v));
    x.is_json = true;
    return x;
  }

  static SqlValue of_temporal(std::string v, TemporalType type) {
    SqlValue x = of_string(std::move(v));
    x.temporal_type = type;
    return x;
  }

  bool is_null() const { return kind == Kind::kNull; }
  bool is_numeric() const { return kind != Kind::kNull && kind != Kind::kString; }
  // MySQL's text form ("1", "2.50", "1e20", "abc"); "NULL" for NULL.
  std::string to_text() const;
  double to_double() const;
  // Integer value for LIMIT, booleans, IN ... (strings parsed as MySQL does: leading
  // number, else 0).
  int64_t to_int() const;
};

// Three-way comparison of two non-NULL values: numerically when either is a number,
// else as strings under the storage's kCaseInsensitive collation (storage/row/
// collation.h: case- and accent-insensitive, 'é' = 'E', PAD SPACE), like the default
// utf8mb4 collation.
// A JSON value on either side: both compared as JSON (json_value.h, compare_json), the
// other side taken as a JSON scalar.
int compare(const SqlValue& a, const SqlValue& b);

// `value` as a JSON value: NULL as null, numbers as numbers, a JSON-typed string parsed,
// other strings as JSON strings.
JsonValue json_of_sql(const SqlValue& value);

// MySQL's number of ENUM/SET `column`'s value `label` (as stored): an ENUM's 1-based
// position (0 for a label it does not declare), a SET's bit set.
uint64_t enum_number(const catalog::SqlColumn& column, std::string_view label);

// The storage encoding of `value` for `column`; the caller handles NULL. `row` (1-based)
// is for MySQL's "at row N" messages.
std::string to_storage(const catalog::SqlColumn& column, const SqlValue& value, uint64_t row);
// The same for a column of `table`: MySQL names JSON's 3140 column as 'table.column'.
std::string to_storage(const catalog::SqlTable& table, const catalog::SqlColumn& column,
                       const SqlValue& value, uint64_t row);
// MySQL's implicit default of a NOT NULL `column` that has no DEFAULT: 0, '', the zero
// date/time (what ALTER TABLE ADD COLUMN gives existing rows, LOAD DATA a missing or NULL
// field).
SqlValue implicit_default(const catalog::SqlColumn& column);
// A stored value (non-NULL) of `column`; an ENUM/SET's carries its enum_number.
SqlValue from_storage(const catalog::SqlColumn& column, std::string_view value);

// The protocol value of a result cell of type `type`; `column_length` is the result
// column's length (a BIT(M) column's M, which says how many bytes its value takes).
protocol::Value to_protocol(const SqlValue& value, protocol::FieldType type,
                            uint32_t column_length = 0);
// The `bits` of a BIT(`width`) value as MySQL sends and stores them: ceil(width/8)
// bytes, big-endian (at least one).
std::string bit_bytes(uint64_t bits, uint32_t width);
// A bound COM_STMT_EXECUTE parameter.
SqlValue from_protocol(const protocol::Value& value, protocol::FieldType type);

}  // namespace duo::sql::executor
