// SqlValue conversions; see sql_value.h.
#include "sql-frontend/executor/sql_value.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "ndb-kernel/api/blob_parts.h"
#include "sql-frontend/catalog/sql_exception.h"
#include "storage/row/collation.h"

namespace duo::sql::executor {

namespace {

// True when `s` starts (after spaces and a sign) with a digit: MySQL reads a number
// from it, so a failed conversion is a truncation (1265), not an incorrect value.
bool has_number_prefix(const std::string& s) {
  size_t at = s.find_first_not_of(' ');
  if (at != std::string::npos && (s[at] == '+' || s[at] == '-')) ++at;
  return at < s.size() && std::isdigit(static_cast<unsigned char>(s[at]));
}

// MySQL's string-to-number: the longest numeric prefix, else 0.
double leading_double(const std::string& s) {
  const char* begin = s.c_str();
  while (std::isspace(static_cast<unsigned char>(*begin))) ++begin;
  return std::strtod(begin, nullptr);
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string_view trim_trailing_spaces(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The type MySQL names in "Incorrect <type> value" (1366/1292): the value's kind, not
// the declared type (DECIMAL(5,2) is "decimal", TIMESTAMP is "datetime").
std::string value_type_name(storage::ColumnType type) {
  switch (type) {
    case storage::ColumnType::kFloat:
    case storage::ColumnType::kDouble:
      return "double";
    case storage::ColumnType::kDecimal:
      return "decimal";
    case storage::ColumnType::kDate:
      return "date";
    case storage::ColumnType::kTime:
      return "time";
    case storage::ColumnType::kDatetime:
    case storage::ColumnType::kTimestamp:
      return "datetime";
    default:
      return "string";
  }
}

// A string that is no integer: 1265 when it starts with a number ('12abc', which strict
// mode refuses as truncation), else 1366.
[[noreturn]] void bad_integer(const catalog::SqlColumn& column, const std::string& text,
                              bool number_prefix, uint64_t row) {
  if (number_prefix) {
    throw SqlException(
        1265, "01000",
        "Data truncated for column '" + column.name + "' at row " + std::to_string(row));
  }
  throw SqlException(1366, "HY000",
                     "Incorrect integer value: '" + text + "' for column '" + column.name +
                         "' at row " + std::to_string(row));
}

[[noreturn]] void out_of_range(const catalog::SqlColumn& column, uint64_t row) {
  throw SqlException(
      1264, "22003",
      "Out of range value for column '" + column.name + "' at row " + std::to_string(row));
}

bool parse_time_text(const std::string& text, protocol::FieldType type, protocol::MysqlTime* t) {
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  char fraction[16] = {0};
  if (type == protocol::FieldType::kTime) {
    const char* p = text.c_str();
    if (*p == '-') {
      t->negative = true;
      ++p;
    }
    if (std::sscanf(p, "%u:%u:%u.%15[0-9]", &hour, &minute, &second, fraction) < 3) return false;
    t->days = hour / 24;
    t->hour = static_cast<uint8_t>(hour % 24);
  } else {
    const int n = std::sscanf(text.c_str(), "%u-%u-%u %u:%u:%u.%15[0-9]", &year, &month, &day,
                              &hour, &minute, &second, fraction);
    if (n < 3) return false;
    t->year = static_cast<uint16_t>(year);
    t->month = static_cast<uint8_t>(month);
    t->day = static_cast<uint8_t>(day);
    t->hour = static_cast<uint8_t>(hour);
  }
  t->minute = static_cast<uint8_t>(minute);
  t->second = static_cast<uint8_t>(second);
  std::string digits = fraction;
  digits.resize(6, '0');
  t->microsecond = static_cast<uint32_t>(std::strtoul(digits.c_str(), nullptr, 10));
  return true;
}

}  // namespace

std::string SqlValue::to_text() const {
  switch (kind) {
    case Kind::kNull:
      return "NULL";
    case Kind::kInt:
      return std::to_string(i);
    case Kind::kUInt:
      return std::to_string(u);
    case Kind::kDouble:
      return protocol::mysql_double_text(d);
    case Kind::kDecimal:
    case Kind::kString:
      return s;
  }
  return s;
}

double SqlValue::to_double() const {
  switch (kind) {
    case Kind::kNull:
      return 0;
    case Kind::kInt:
      return static_cast<double>(i);
    case Kind::kUInt:
      return static_cast<double>(u);
    case Kind::kDouble:
      return d;
    case Kind::kDecimal:
      return leading_double(s);
    case Kind::kString:
      return enum_number ? static_cast<double>(u) : leading_double(s);
  }
  return 0;
}

int64_t SqlValue::to_int() const {
  switch (kind) {
    case Kind::kInt:
      return i;
    case Kind::kUInt:
      return static_cast<int64_t>(u);
    case Kind::kNull:
      return 0;
    default:
      return static_cast<int64_t>(std::llround(to_double()));
  }
}

JsonValue json_of_sql(const SqlValue& value) {
  switch (value.kind) {
    case SqlValue::Kind::kNull:
      return JsonValue();
    case SqlValue::Kind::kInt:
      return JsonValue::of_int(value.i);
    case SqlValue::Kind::kUInt: {
      JsonValue v;
      v.type = JsonValue::Type::kUInt;
      v.u = value.u;
      return v;
    }
    case SqlValue::Kind::kDouble:
      return JsonValue::of_double(value.d);
    case SqlValue::Kind::kDecimal:
      return JsonValue::of_double(value.to_double());
    case SqlValue::Kind::kString:
      break;
  }
  if (value.is_json) {
    JsonParseError error;
    if (std::optional<JsonValue> parsed = parse_json(value.s, &error)) return std::move(*parsed);
  }
  return JsonValue::of_string(value.s);
}

int compare(const SqlValue& a, const SqlValue& b) {
  using Kind = SqlValue::Kind;
  if (a.is_json || b.is_json) return compare_json(json_of_sql(a), json_of_sql(b));
  if (a.kind == Kind::kInt && b.kind == Kind::kInt) return a.i < b.i ? -1 : a.i > b.i;
  if (a.kind == Kind::kUInt && b.kind == Kind::kUInt) return a.u < b.u ? -1 : a.u > b.u;
  if ((a.kind == Kind::kInt && b.kind == Kind::kUInt) ||
      (a.kind == Kind::kUInt && b.kind == Kind::kInt)) {
    const bool a_neg = a.kind == Kind::kInt && a.i < 0;
    const bool b_neg = b.kind == Kind::kInt && b.i < 0;
    if (a_neg != b_neg) return a_neg ? -1 : 1;
    const uint64_t x = a.kind == Kind::kInt ? static_cast<uint64_t>(a.i) : a.u;
    const uint64_t y = b.kind == Kind::kInt ? static_cast<uint64_t>(b.i) : b.u;
    return x < y ? -1 : x > y;
  }
  if (a.is_numeric() || b.is_numeric()) {
    const double x = a.to_double(), y = b.to_double();
    return x < y ? -1 : x > y;
  }
  // The storage's collation, so that sqld and the data nodes (keys, pushed filters,
  // ordered indexes) agree on which strings are equal and how they order.
  return storage::compare_case_insensitive(a.s, b.s);
}

namespace {

[[noreturn]] void truncated(const catalog::SqlColumn& column, uint64_t row) {
  throw SqlException(
      1265, "01000",
      "Data truncated for column '" + column.name + "' at row " + std::to_string(row));
}

// A SET column's value: members separated by ',' (each one of the set's, matched
// case-insensitively; repeats and order do not matter), or the bit set as a number.
// Stored as the members in declared order.
std::string set_to_storage(const catalog::SqlColumn& column, const SqlValue& value, uint64_t row) {
  const std::vector<std::string>& members = column.enum_values;
  uint64_t bits = 0;
  if (value.kind == SqlValue::Kind::kInt || value.kind == SqlValue::Kind::kUInt) {
    if (value.kind == SqlValue::Kind::kInt && value.i < 0) truncated(column, row);
    bits = value.kind == SqlValue::Kind::kUInt ? value.u : static_cast<uint64_t>(value.i);
    if (members.size() < 64 && (bits >> members.size()) != 0) truncated(column, row);
  } else {
    const std::string text = value.to_text();
    size_t start = 0;
    while (start <= text.size() && !text.empty()) {
      const size_t comma = std::min(text.find(',', start), text.size());
      const SqlValue member = SqlValue::of_string(text.substr(start, comma - start));
      size_t k = 0;
      while (k < members.size() && compare(SqlValue::of_string(members[k]), member) != 0) ++k;
      if (k == members.size()) truncated(column, row);
      bits |= uint64_t{1} << k;
      start = comma + 1;
    }
  }
  std::string stored;
  for (size_t k = 0; k < members.size(); ++k) {
    if ((bits >> k & 1) == 0) continue;
    if (!stored.empty()) stored += ',';
    stored += members[k];
  }
  return *storage::parse_value(column.storage, stored);
}

// An ENUM column's value: one of its values (case-insensitively, trailing spaces
// ignored, stored as declared), or its 1-based position as a number; anything else is
// strict mode's 1265.
std::string enum_to_storage(const catalog::SqlColumn& column, const SqlValue& value, uint64_t row) {
  const std::vector<std::string>& values = column.enum_values;
  if (column.is_set) return set_to_storage(column, value, row);
  const std::string* chosen = nullptr;
  if (value.kind == SqlValue::Kind::kInt || value.kind == SqlValue::Kind::kUInt) {
    const uint64_t position = value.kind == SqlValue::Kind::kUInt
                                  ? value.u
                                  : static_cast<uint64_t>(std::max<int64_t>(0, value.i));
    if (position >= 1 && position <= values.size()) chosen = &values[position - 1];
  } else {
    const SqlValue text = SqlValue::of_string(value.to_text());
    for (const std::string& candidate : values) {
      if (compare(SqlValue::of_string(candidate), text) == 0) {
        chosen = &candidate;
        break;
      }
    }
  }
  if (chosen == nullptr) truncated(column, row);
  return *storage::parse_value(column.storage, *chosen);
}

// A YEAR column's value, as MySQL's Field_year::store: a number 1..69 is 2000..2069,
// 70..99 is 1970..1999, 0 is the zero year 0000; a string of 1 to 3 digits maps the same
// way except that '0' and '00' are 2000 (only the 4-digit '0000' is the zero year);
// 1901..2155 as is; anything else is 1264. A date or datetime gives its year.
std::string year_to_storage(const catalog::SqlColumn& column, const SqlValue& value, uint64_t row) {
  int64_t year = 0;
  bool zero_is_2000 = false;
  switch (value.kind) {
    case SqlValue::Kind::kInt:
      year = value.i;
      break;
    case SqlValue::Kind::kUInt:
      year = value.u > 9999 ? 9999 : static_cast<int64_t>(value.u);
      break;
    case SqlValue::Kind::kDouble:
    case SqlValue::Kind::kDecimal: {
      const double d = std::round(value.to_double());
      year = d < -1 ? -1 : d > 9999 ? 9999 : static_cast<int64_t>(d);
      break;
    }
    default: {
      if (value.temporal_type == SqlValue::TemporalType::kDate ||
          value.temporal_type == SqlValue::TemporalType::kDatetime) {
        year = std::strtol(value.s.substr(0, 4).c_str(), nullptr, 10);
        break;
      }
      const std::string text(trim_trailing_spaces(value.s));
      const size_t start = text.find_first_not_of(' ');
      const bool digits = start != std::string::npos &&
                          text.find_first_not_of("0123456789", start) == std::string::npos;
      if (!digits) {
        bad_integer(column, value.s, has_number_prefix(text), row);
      }
      const std::string number = text.substr(start);
      year = number.size() > 18 ? 9999 : std::strtoll(number.c_str(), nullptr, 10);
      zero_is_2000 = number.size() != 4;
      break;
    }
  }
  if (year < 0 || (year >= 100 && year <= 1900) || year > 2155) out_of_range(column, row);
  if (year != 0 || zero_is_2000) {
    if (year < 70)
      year += 2000;
    else if (year < 100)
      year += 1900;
  }
  return storage::encode_uint(column.storage, static_cast<uint64_t>(year));
}

[[noreturn]] void bit_too_long(const catalog::SqlColumn& column, uint64_t row) {
  throw SqlException(
      1406, "22001",
      "Data too long for column '" + column.name + "' at row " + std::to_string(row));
}

// A BIT(M) column's value, as MySQL's Field_bit::store: a number is its 64-bit two's
// complement (so -1 fits only BIT(64)); a string is its bytes, big-endian (b'101',
// X'05' and 'a' alike). More than M significant bits is 1406.
std::string bit_to_storage(const catalog::SqlColumn& column, const SqlValue& value, uint64_t row) {
  uint64_t bits = 0;
  switch (value.kind) {
    case SqlValue::Kind::kInt:
      bits = static_cast<uint64_t>(value.i);
      break;
    case SqlValue::Kind::kUInt:
      bits = value.u;
      break;
    case SqlValue::Kind::kDouble:
    case SqlValue::Kind::kDecimal: {
      const double d = std::round(value.to_double());
      if (d < -9.3e18 || d >= 1.8446744073709552e19) bit_too_long(column, row);
      bits = d < 0 ? static_cast<uint64_t>(static_cast<int64_t>(d)) : static_cast<uint64_t>(d);
      break;
    }
    default: {
      std::string_view bytes = value.s;
      while (!bytes.empty() && bytes.front() == '\0') bytes.remove_prefix(1);
      if (bytes.size() > 8) bit_too_long(column, row);
      for (char c : bytes) bits = bits << 8 | static_cast<unsigned char>(c);
      break;
    }
  }
  if (column.bit_width < 64 && (bits >> column.bit_width) != 0) bit_too_long(column, row);
  return storage::encode_uint(column.storage, bits);
}

}  // namespace

std::string bit_bytes(uint64_t bits, uint32_t width) {
  const uint32_t size = std::max<uint32_t>(1, (std::min<uint32_t>(width, 64) + 7) / 8);
  std::string out(size, '\0');
  for (uint32_t k = 0; k < size; ++k) {
    out[size - 1 - k] = static_cast<char>(bits >> (8 * k) & 0xFF);
  }
  return out;
}

SqlValue implicit_default(const catalog::SqlColumn& column) {
  using storage::ColumnType;
  switch (column.storage.type) {
    case ColumnType::kDate:
      return SqlValue::of_string("0000-00-00");
    case ColumnType::kTime:
      return SqlValue::of_string("00:00:00");
    case ColumnType::kDatetime:
    case ColumnType::kTimestamp:
      return SqlValue::of_string("0000-00-00 00:00:00");
    default:
      return storage::is_string(column.storage.type) ? SqlValue::of_string("")
                                                     : SqlValue::of_int(0);
  }
}

// A BLOB/TEXT/JSON value whole (u64 length, then the bytes: the client library keeps
// the head in the row and the rest in the parts table). Longer than the size class
// allows is 1406, as MySQL's strict mode.
std::string blob_to_storage(const catalog::SqlColumn& column, const SqlValue& value, uint64_t row) {
  std::string text = value.to_text();
  if (column.is_json) {
    // MySQL checks JSON on write (3140) and keeps it normalized. A string is JSON text;
    // a number (or a JSON function's result) is that JSON value.
    if (value.kind == SqlValue::Kind::kString && !value.is_json) {
      JsonParseError error;
      std::optional<JsonValue> parsed = parse_json(text, &error);
      if (!parsed) {
        throw SqlException(3140, "22032",
                           "Invalid JSON text: \"" + error.message + "\" at position " +
                               std::to_string(error.position) + " in value for column '" +
                               column.name + "'.");
      }
      text = to_json_text(*parsed);
    } else {
      text = to_json_text(json_of_sql(value));
    }
  }
  if (text.size() > column.blob_bytes_max) {
    throw SqlException(
        1406, "22001",
        "Data too long for column '" + column.name + "' at row " + std::to_string(row));
  }
  std::string out;
  out.reserve(api::kBlobHeaderBytes + text.size());
  for (size_t i = 0; i < api::kBlobHeaderBytes; ++i) {
    out += static_cast<char>(static_cast<uint64_t>(text.size()) >> (8 * i));
  }
  out += text;
  return out;
}

std::string to_storage(const catalog::SqlTable& table, const catalog::SqlColumn& column,
                       const SqlValue& value, uint64_t row) {
  if (!column.is_json) return to_storage(column, value, row);
  try {
    return to_storage(column, value, row);
  } catch (const SqlException& e) {
    if (e.code() != 3140) throw;
    std::string message = e.what();
    const std::string named = "column '" + column.name + "'";
    if (const size_t at = message.rfind(named); at != std::string::npos) {
      message.replace(at, named.size(), "column '" + table.name + "." + column.name + "'");
    }
    throw SqlException(e.code(), e.sql_state(), message);
  }
}

std::string to_storage(const catalog::SqlColumn& column, const SqlValue& value, uint64_t row) {
  if (!column.enum_values.empty()) return enum_to_storage(column, value, row);
  if (column.is_year) return year_to_storage(column, value, row);
  if (column.bit_width > 0) return bit_to_storage(column, value, row);
  const storage::ColumnDef& def = column.storage;
  if (column.blob_bytes_max > 0) return blob_to_storage(column, value, row);
  if (storage::is_integer(def.type)) {
    int64_t i = 0;
    uint64_t u = 0;
    bool negative = false;
    switch (value.kind) {
      case SqlValue::Kind::kInt:
        i = value.i;
        negative = i < 0;
        u = static_cast<uint64_t>(i);
        break;
      case SqlValue::Kind::kUInt:
        u = value.u;
        i = static_cast<int64_t>(u);
        break;
      case SqlValue::Kind::kDouble:
      case SqlValue::Kind::kDecimal: {
        const double d = std::round(value.to_double());
        if (d < -9.3e18 || d > 1.85e19) out_of_range(column, row);
        negative = d < 0;
        if (negative)
          i = static_cast<int64_t>(d);
        else {
          u = static_cast<uint64_t>(d);
          i = static_cast<int64_t>(u);
        }
        break;
      }
      default: {
        Result<std::string> parsed = storage::parse_value(def, value.s);
        if (parsed.ok()) return std::move(parsed).value();
        if (parsed.status().is(ErrorCode::kOutOfRange)) out_of_range(column, row);
        bad_integer(column, value.s, has_number_prefix(value.s), row);
      }
    }
    if (def.is_unsigned) {
      if (negative || !storage::uint_fits(def, u)) out_of_range(column, row);
      return storage::encode_uint(def, u);
    }
    if ((!negative && value.kind == SqlValue::Kind::kUInt && u > INT64_MAX) ||
        !storage::int_fits(def, i)) {
      out_of_range(column, row);
    }
    return storage::encode_int(def, i);
  }
  const std::string text = value.to_text();
  if (column.char_length > 0 && utf8_length(text) > column.char_length) {
    throw SqlException(
        1406, "22001",
        "Data too long for column '" + column.name + "' at row " + std::to_string(row));
  }
  Result<std::string> parsed = storage::parse_value(def, text);
  if (parsed.ok()) return std::move(parsed).value();
  if (parsed.status().is(ErrorCode::kDataTooLong)) {
    throw SqlException(
        1406, "22001",
        "Data too long for column '" + column.name + "' at row " + std::to_string(row));
  }
  if (parsed.status().is(ErrorCode::kOutOfRange)) out_of_range(column, row);
  const bool temporal =
      def.type == storage::ColumnType::kDate || def.type == storage::ColumnType::kTime ||
      def.type == storage::ColumnType::kDatetime || def.type == storage::ColumnType::kTimestamp;
  if (temporal) {
    throw SqlException(1292, "22007",
                       "Incorrect " + value_type_name(def.type) + " value: '" + text +
                           "' for column '" + column.name + "' at row " + std::to_string(row));
  }
  throw SqlException(1366, "HY000",
                     "Incorrect " + value_type_name(def.type) + " value: '" + text +
                         "' for column '" + column.name + "' at row " + std::to_string(row));
}

namespace {

// A CHAR value without its trailing pad spaces (storage::format_value's rule), eight
// bytes at a time: a CHAR(n) of utf8mb4 is stored padded to 4n bytes, so a short value
// has hundreds of them.
std::string_view strip_char_padding(std::string_view value) {
  static constexpr char kSpaces[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
  while (value.size() >= 8 && std::memcmp(value.data() + value.size() - 8, kSpaces, 8) == 0) {
    value.remove_suffix(8);
  }
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  return value;
}

}  // namespace

SqlValue from_storage(const catalog::SqlColumn& column, std::string_view value) {
  const storage::ColumnDef& def = column.storage;
  if (def.type == storage::ColumnType::kChar && column.enum_values.empty()) {
    return SqlValue::of_string(std::string(strip_char_padding(value)));
  }
  if (storage::is_integer(def.type)) {
    return def.is_unsigned ? SqlValue::of_uint(storage::decode_uint(def, value))
                           : SqlValue::of_int(storage::decode_int(def, value));
  }
  if (def.type == storage::ColumnType::kFloat && value.size() == 4) {
    float f;
    std::memcpy(&f, value.data(), 4);
    // MySQL shows a FLOAT with at most 6 significant digits (0.1, not 0.100000001).
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.6g", static_cast<double>(f));
    return SqlValue::of_double(std::strtod(buffer, nullptr));
  }
  if (def.type == storage::ColumnType::kDouble && value.size() == 8) {
    double d;
    std::memcpy(&d, value.data(), 8);
    return SqlValue::of_double(d);
  }
  if (def.type == storage::ColumnType::kDecimal) {
    return SqlValue::of_decimal(storage::format_value(def, value));
  }
  switch (def.type) {
    case storage::ColumnType::kDate:
      return SqlValue::of_temporal(storage::format_value(def, value),
                                   SqlValue::TemporalType::kDate);
    case storage::ColumnType::kDatetime:
    case storage::ColumnType::kTimestamp:
      return SqlValue::of_temporal(storage::format_value(def, value),
                                   SqlValue::TemporalType::kDatetime);
    case storage::ColumnType::kTime:
      return SqlValue::of_temporal(storage::format_value(def, value),
                                   SqlValue::TemporalType::kTime);
    default:
      break;
  }
  SqlValue text = SqlValue::of_string(storage::format_value(def, value));
  text.is_json = column.is_json;
  if (!column.enum_values.empty()) {
    text.enum_number = true;
    text.u = enum_number(column, text.s);
  }
  return text;
}

namespace {

// The 0-based index of `label` among `labels` (matched as the collation compares), or
// labels.size().
size_t label_index(const std::vector<std::string>& labels, std::string_view label) {
  const SqlValue wanted = SqlValue::of_string(std::string(label));
  for (size_t k = 0; k < labels.size(); ++k) {
    if (compare(SqlValue::of_string(labels[k]), wanted) == 0) return k;
  }
  return labels.size();
}

}  // namespace

uint64_t enum_number(const catalog::SqlColumn& column, std::string_view label) {
  const std::vector<std::string>& labels = column.enum_values;
  if (!column.is_set) {
    const size_t k = label_index(labels, label);
    return k == labels.size() ? 0 : k + 1;
  }
  // Stored as its members joined by ',' (labels cannot contain ',': 1367).
  uint64_t bits = 0;
  size_t start = 0;
  while (start < label.size()) {
    const size_t comma = std::min(label.find(',', start), label.size());
    const size_t k = label_index(labels, label.substr(start, comma - start));
    if (k < labels.size()) bits |= uint64_t{1} << k;
    start = comma + 1;
  }
  return bits;
}

protocol::Value to_protocol(const SqlValue& value, protocol::FieldType type,
                            uint32_t column_length) {
  using protocol::FieldType;
  if (value.is_null()) return std::monostate{};
  switch (type) {
    case FieldType::kBit:
      // A BIT column's value is its bits; the client gets them as ceil(M/8) raw
      // big-endian bytes (M is the column length), as MySQL sends them.
      if (value.kind == SqlValue::Kind::kUInt) return bit_bytes(value.u, column_length);
      if (value.kind == SqlValue::Kind::kInt) {
        return bit_bytes(static_cast<uint64_t>(value.i), column_length);
      }
      return value.to_text();
    case FieldType::kTiny:
    case FieldType::kShort:
    case FieldType::kInt24:
    case FieldType::kLong:
    case FieldType::kLongLong:
    case FieldType::kYear:
      if (value.kind == SqlValue::Kind::kUInt) return value.u;
      return value.to_int();
    case FieldType::kFloat:
    case FieldType::kDouble:
      return value.to_double();
    case FieldType::kDate:
    case FieldType::kDateTime:
    case FieldType::kTimestamp:
    case FieldType::kTime: {
      protocol::MysqlTime t;
      if (parse_time_text(value.to_text(), type, &t)) return t;
      return value.to_text();
    }
    default:
      return value.to_text();
  }
}

SqlValue from_protocol(const protocol::Value& value, protocol::FieldType type) {
  (void)type;
  if (const auto* v = std::get_if<int64_t>(&value)) return SqlValue::of_int(*v);
  if (const auto* v = std::get_if<uint64_t>(&value)) return SqlValue::of_uint(*v);
  if (const auto* v = std::get_if<double>(&value)) return SqlValue::of_double(*v);
  if (const auto* v = std::get_if<std::string>(&value)) {
    if (type == protocol::FieldType::kNewDecimal || type == protocol::FieldType::kDecimal) {
      return SqlValue::of_decimal(*v);
    }
    return SqlValue::of_string(*v);
  }
  if (const auto* t = std::get_if<protocol::MysqlTime>(&value)) {
    char buffer[64];
    if (type == protocol::FieldType::kTime) {
      std::snprintf(buffer, sizeof(buffer), "%s%02u:%02u:%02u.%06u", t->negative ? "-" : "",
                    t->days * 24 + t->hour, t->minute, t->second, t->microsecond);
    } else if (type == protocol::FieldType::kDate ||
               (t->hour == 0 && t->minute == 0 && t->second == 0 && t->microsecond == 0)) {
      std::snprintf(buffer, sizeof(buffer), "%04u-%02u-%02u", t->year, t->month, t->day);
    } else {
      std::snprintf(buffer, sizeof(buffer), "%04u-%02u-%02u %02u:%02u:%02u", t->year, t->month,
                    t->day, t->hour, t->minute, t->second);
      if (t->microsecond != 0) {
        std::snprintf(buffer + std::strlen(buffer), 16, ".%06u", t->microsecond);
      }
    }
    return SqlValue::of_string(buffer);
  }
  return SqlValue::null();
}

}  // namespace duo::sql::executor
