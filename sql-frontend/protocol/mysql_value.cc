// Text and binary encodings of MySQL values; see mysql_value.h.
#include "sql-frontend/protocol/mysql_value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace duo::sql::protocol {

bool is_string_encoded(FieldType type) {
  switch (type) {
    case FieldType::kTiny:
    case FieldType::kShort:
    case FieldType::kYear:
    case FieldType::kLong:
    case FieldType::kInt24:
    case FieldType::kLongLong:
    case FieldType::kFloat:
    case FieldType::kDouble:
    case FieldType::kNull:
    case FieldType::kDate:
    case FieldType::kNewDate:
    case FieldType::kDateTime:
    case FieldType::kTimestamp:
    case FieldType::kTime:
    case FieldType::kDateTime2:
    case FieldType::kTimestamp2:
    case FieldType::kTime2:
      return false;
    default:
      return true;
  }
}

namespace {

bool is_date_type(FieldType type) {
  return type == FieldType::kDate || type == FieldType::kNewDate || type == FieldType::kDateTime ||
         type == FieldType::kTimestamp || type == FieldType::kDateTime2 ||
         type == FieldType::kTimestamp2;
}

bool is_time_type(FieldType type) {
  return type == FieldType::kTime || type == FieldType::kTime2;
}

std::string format_time(const MysqlTime& t, FieldType type, uint8_t decimals) {
  char buffer[64];
  int n;
  if (is_time_type(type)) {
    n = std::snprintf(buffer, sizeof buffer, "%s%02u:%02u:%02u", t.negative ? "-" : "",
                      t.days * 24 + t.hour, t.minute, t.second);
  } else if (type == FieldType::kDate || type == FieldType::kNewDate) {
    n = std::snprintf(buffer, sizeof buffer, "%04u-%02u-%02u", t.year, t.month, t.day);
  } else {
    n = std::snprintf(buffer, sizeof buffer, "%04u-%02u-%02u %02u:%02u:%02u", t.year, t.month,
                      t.day, t.hour, t.minute, t.second);
  }
  std::string out(buffer, static_cast<size_t>(n));
  if (type == FieldType::kDate || type == FieldType::kNewDate) return out;
  if (decimals <= 6) {
    if (decimals == 0) return out;
    n = std::snprintf(buffer, sizeof buffer, ".%06u", t.microsecond);
    out.append(buffer, static_cast<size_t>(1 + decimals));  // the point and `decimals` digits
    return out;
  }
  if (t.microsecond != 0) {
    n = std::snprintf(buffer, sizeof buffer, ".%06u", t.microsecond);
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

// my_gcvt's layout of `digits` (no trailing zeros) whose first digit is worth
// 10^exponent.
std::string gcvt_layout(const std::string& digits, int exponent, bool negative) {
  const int length = static_cast<int>(digits.size());
  const int point = exponent + 1;  // digits before the decimal point
  std::string out;
  if (point >= -14 && (point <= 15 || length > point)) {
    if (point <= 0) {
      out = "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    } else if (point >= length) {
      out = digits + std::string(static_cast<size_t>(point - length), '0');
    } else {
      out = digits.substr(0, static_cast<size_t>(point)) + "." +
            digits.substr(static_cast<size_t>(point));
    }
  } else {
    out = digits.substr(0, 1);
    if (length > 1) out += "." + digits.substr(1);
    out += "e" + std::to_string(exponent);
  }
  return negative ? "-" + out : out;
}

// The shortest "%e" form of `v` that `reads_back` accepts, laid out as my_gcvt does.
template <typename ReadsBack>
std::string gcvt_text(double v, int precision_max, ReadsBack reads_back) {
  if (v == 0 || !std::isfinite(v)) return "0";
  char buffer[64];
  for (int precision = 1; precision <= precision_max; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*e", precision - 1, v);
    if (reads_back(buffer)) break;
  }
  // buffer is "[-]d.ddde[+-]xx": split it into digits and the exponent.
  std::string text = buffer;
  const bool negative = text[0] == '-';
  if (negative) text.erase(0, 1);
  const size_t e = text.find('e');
  const int exponent = std::atoi(text.c_str() + e + 1);
  std::string digits;
  for (size_t k = 0; k < e; ++k) {
    if (text[k] != '.') digits += text[k];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  return gcvt_layout(digits, exponent, negative);
}

int64_t as_int64(const Value& value) {
  if (auto* v = std::get_if<int64_t>(&value)) return *v;
  if (auto* v = std::get_if<uint64_t>(&value)) return static_cast<int64_t>(*v);
  if (auto* v = std::get_if<double>(&value)) return static_cast<int64_t>(*v);
  throw std::invalid_argument("value is not a number");
}

double as_double(const Value& value) {
  if (auto* v = std::get_if<double>(&value)) return *v;
  if (auto* v = std::get_if<int64_t>(&value)) return static_cast<double>(*v);
  if (auto* v = std::get_if<uint64_t>(&value)) return static_cast<double>(*v);
  throw std::invalid_argument("value is not a number");
}

}  // namespace

std::string mysql_double_text(double v) {
  return gcvt_text(v, 17, [v](const char* text) { return std::strtod(text, nullptr) == v; });
}

std::string mysql_float_text(float v) {
  return gcvt_text(v, 9, [v](const char* text) { return std::strtof(text, nullptr) == v; });
}

std::string format_text_value(const Value& value, FieldType type, uint8_t decimals) {
  if (type == FieldType::kYear) {
    // YEAR is ZEROFILL with 4 digits: the zero year reads 0000, as MySQL sends it.
    char buffer[24];
    if (auto* v = std::get_if<int64_t>(&value)) {
      std::snprintf(buffer, sizeof buffer, "%04lld", static_cast<long long>(*v));
      return buffer;
    }
    if (auto* v = std::get_if<uint64_t>(&value)) {
      std::snprintf(buffer, sizeof buffer, "%04llu", static_cast<unsigned long long>(*v));
      return buffer;
    }
  }
  if (auto* v = std::get_if<int64_t>(&value)) return std::to_string(*v);
  if (auto* v = std::get_if<uint64_t>(&value)) return std::to_string(*v);
  if (auto* v = std::get_if<double>(&value)) {
    return type == FieldType::kFloat ? mysql_float_text(static_cast<float>(*v))
                                     : mysql_double_text(*v);
  }
  if (auto* v = std::get_if<std::string>(&value)) return *v;
  if (auto* v = std::get_if<MysqlTime>(&value)) return format_time(*v, type, decimals);
  throw std::invalid_argument("NULL has no text form");
}

void write_text_value(PacketWriter& writer, const Value& value, FieldType type, uint8_t decimals) {
  if (auto* s = std::get_if<std::string>(&value)) {
    writer.write_lenenc_string(*s);
    return;
  }
  if (type != FieldType::kYear) {
    char buffer[24];
    std::to_chars_result written{buffer, std::errc()};
    if (auto* v = std::get_if<int64_t>(&value)) {
      written = std::to_chars(buffer, buffer + sizeof buffer, *v);
    } else if (auto* u = std::get_if<uint64_t>(&value)) {
      written = std::to_chars(buffer, buffer + sizeof buffer, *u);
    }
    if (written.ptr != buffer) {
      writer.write_lenenc_string(std::string_view(buffer, written.ptr - buffer));
      return;
    }
  }
  writer.write_lenenc_string(format_text_value(value, type, decimals));
}

void write_binary_value(PacketWriter& writer, FieldType type, const Value& value) {
  if (is_null(value)) throw std::invalid_argument("NULL is sent in the NULL bitmap");
  switch (type) {
    case FieldType::kTiny:
      writer.write_u8(static_cast<uint8_t>(as_int64(value)));
      return;
    case FieldType::kShort:
    case FieldType::kYear:
      writer.write_u16(static_cast<uint16_t>(as_int64(value)));
      return;
    case FieldType::kLong:
    case FieldType::kInt24:
      writer.write_u32(static_cast<uint32_t>(as_int64(value)));
      return;
    case FieldType::kLongLong:
      writer.write_u64(static_cast<uint64_t>(as_int64(value)));
      return;
    case FieldType::kFloat:
      writer.write_float(static_cast<float>(as_double(value)));
      return;
    case FieldType::kDouble:
      writer.write_double(as_double(value));
      return;
    case FieldType::kNull:
      throw std::invalid_argument("a NULL-typed column holds only NULL");
    default:
      break;
  }
  if (is_date_type(type) || is_time_type(type)) {
    const MysqlTime* t = std::get_if<MysqlTime>(&value);
    if (t == nullptr) throw std::invalid_argument("temporal column needs a time value");
    if (is_time_type(type)) {
      // Shortest form: 0 (all zero), 8 (no fraction) or 12 bytes.
      bool zero =
          t->days == 0 && t->hour == 0 && t->minute == 0 && t->second == 0 && t->microsecond == 0;
      uint8_t length = zero ? 0 : (t->microsecond ? 12 : 8);
      writer.write_u8(length);
      if (length == 0) return;
      writer.write_u8(t->negative ? 1 : 0);
      writer.write_u32(t->days);
      writer.write_u8(t->hour);
      writer.write_u8(t->minute);
      writer.write_u8(t->second);
      if (length == 12) writer.write_u32(t->microsecond);
      return;
    }
    uint8_t length = 11;
    if (t->microsecond == 0) length = 7;
    if (length == 7 && t->hour == 0 && t->minute == 0 && t->second == 0) length = 4;
    if (length == 4 && t->year == 0 && t->month == 0 && t->day == 0) length = 0;
    writer.write_u8(length);
    if (length == 0) return;
    writer.write_u16(t->year);
    writer.write_u8(t->month);
    writer.write_u8(t->day);
    if (length == 4) return;
    writer.write_u8(t->hour);
    writer.write_u8(t->minute);
    writer.write_u8(t->second);
    if (length == 11) writer.write_u32(t->microsecond);
    return;
  }
  // Every other type travels as a length-encoded string; numbers and times are
  // rendered as text (e.g. a DECIMAL computed as an integer).
  if (auto* s = std::get_if<std::string>(&value)) {
    writer.write_lenenc_string(*s);
  } else {
    writer.write_lenenc_string(format_text_value(value, type));
  }
}

Value read_binary_value(PacketReader& reader, FieldType type, bool is_unsigned) {
  switch (type) {
    case FieldType::kTiny: {
      uint8_t v = reader.read_u8();
      return is_unsigned ? Value(uint64_t{v}) : Value(int64_t{static_cast<int8_t>(v)});
    }
    case FieldType::kShort:
    case FieldType::kYear: {
      uint16_t v = reader.read_u16();
      return is_unsigned ? Value(uint64_t{v}) : Value(int64_t{static_cast<int16_t>(v)});
    }
    case FieldType::kLong:
    case FieldType::kInt24: {
      uint32_t v = reader.read_u32();
      return is_unsigned ? Value(uint64_t{v}) : Value(int64_t{static_cast<int32_t>(v)});
    }
    case FieldType::kLongLong: {
      uint64_t v = reader.read_u64();
      return is_unsigned ? Value(v) : Value(static_cast<int64_t>(v));
    }
    case FieldType::kFloat:
      return Value(static_cast<double>(reader.read_float()));
    case FieldType::kDouble:
      return Value(reader.read_double());
    case FieldType::kNull:
      return Value();
    default:
      break;
  }
  if (is_time_type(type)) {
    MysqlTime t;
    uint8_t length = reader.read_u8();
    if (length != 0 && length != 8 && length != 12) {
      throw ProtocolError("malformed packet: TIME value of length " + std::to_string(length));
    }
    if (length >= 8) {
      uint8_t negative = reader.read_u8();
      if (negative > 1) throw ProtocolError("malformed packet: TIME sign byte");
      t.negative = negative == 1;
      t.days = reader.read_u32();
      t.hour = reader.read_u8();
      t.minute = reader.read_u8();
      t.second = reader.read_u8();
    }
    if (length == 12) t.microsecond = reader.read_u32();
    return Value(t);
  }
  if (is_date_type(type)) {
    MysqlTime t;
    uint8_t length = reader.read_u8();
    if (length != 0 && length != 4 && length != 7 && length != 11) {
      throw ProtocolError("malformed packet: DATETIME value of length " + std::to_string(length));
    }
    if (length >= 4) {
      t.year = reader.read_u16();
      t.month = reader.read_u8();
      t.day = reader.read_u8();
    }
    if (length >= 7) {
      t.hour = reader.read_u8();
      t.minute = reader.read_u8();
      t.second = reader.read_u8();
    }
    if (length == 11) t.microsecond = reader.read_u32();
    return Value(t);
  }
  if (!is_string_encoded(type)) throw ProtocolError("malformed packet: unknown parameter type");
  return Value(std::string(reader.read_lenenc_string()));
}

}  // namespace duo::sql::protocol
