// The expression forms that behave like functions but have their own syntax: CASE,
// CAST/CONVERT, CONVERT ... USING, EXTRACT, COLLATE, REGEXP, and INTERVAL arithmetic;
// see functions.h.
//
// Thread-safety: pure functions over caller-owned inputs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/function_family.h"
#include "sql-frontend/executor/functions.h"
#include "sql-frontend/executor/temporal.h"
#include "sql-frontend/parser/ast_printer.h"

namespace duo::sql::executor {

namespace functions_internal {

namespace {

// The leading integer of `s` as MySQL reads a string in integer context ("12abc" is
// 12, "1.9" is 1, "1e3" is 1000 in 8.0), saturating at the int64 range.
int64_t string_to_int(const std::string& s) {
  const char* p = s.c_str();
  while (*p == ' ' || *p == '\t' || *p == '\n') ++p;
  char* end = nullptr;
  const double d = std::strtod(p, &end);
  if (end == p) return 0;
  // An exponent makes it a real number; plain digits are read exactly.
  const std::string_view number(p, static_cast<size_t>(end - p));
  if (number.find_first_of("eE") != std::string_view::npos) {
    if (d >= 9.2233720368547758e18) return INT64_MAX;
    if (d <= -9.2233720368547758e18) return INT64_MIN;
    return static_cast<int64_t>(std::trunc(d));
  }
  return std::strtoll(p, nullptr, 10);  // saturates at the int64 range
}

SqlValue cast_to_integer(const SqlValue& v, bool to_unsigned, const EvalContext& context) {
  if (v.is_null()) return v;
  switch (v.kind) {
    case SqlValue::Kind::kInt:
      if (to_unsigned && v.i < 0) {
        warn(context, 1105,
             "Cast to unsigned converted negative integer to it's positive complement", "Note");
      }
      return to_unsigned ? SqlValue::of_uint(static_cast<uint64_t>(v.i)) : v;
    case SqlValue::Kind::kUInt:
      if (!to_unsigned && v.u > static_cast<uint64_t>(INT64_MAX)) {
        warn(context, 1105,
             "Cast to signed converted positive out-of-range integer to it's negative complement",
             "Note");
      }
      return to_unsigned ? v : SqlValue::of_int(static_cast<int64_t>(v.u));
    case SqlValue::Kind::kDecimal:
    case SqlValue::Kind::kDouble: {
      // Rounded half away from zero (DECIMAL exactly, DOUBLE as the C library rounds).
      const std::string text =
          v.kind == SqlValue::Kind::kDecimal ? round_decimal_text(v.s, 0, false) : "";
      const double d =
          v.kind == SqlValue::Kind::kDecimal ? std::strtod(text.c_str(), nullptr) : std::round(v.d);
      if (to_unsigned) {
        if (d < 0) {
          if (d <= -9.2233720368547758e18) return SqlValue::of_uint(1ULL << 63);
          return SqlValue::of_uint(static_cast<uint64_t>(static_cast<int64_t>(d)));
        }
        if (d >= 1.8446744073709552e19) return SqlValue::of_uint(UINT64_MAX);
        if (!text.empty()) return SqlValue::of_uint(std::strtoull(text.c_str(), nullptr, 10));
        return SqlValue::of_uint(static_cast<uint64_t>(d));
      }
      if (d >= 9.2233720368547758e18) return SqlValue::of_int(INT64_MAX);
      if (d <= -9.2233720368547758e18) return SqlValue::of_int(INT64_MIN);
      if (!text.empty()) return SqlValue::of_int(std::strtoll(text.c_str(), nullptr, 10));
      return SqlValue::of_int(static_cast<int64_t>(d));
    }
    default: {
      // A string that is not wholly an integer is read up to where it stops being one.
      const size_t start = v.s.find_first_not_of(' ');
      const size_t end = v.s.find_last_not_of(' ');
      const bool clean = start != std::string::npos &&
                         v.s.find_first_not_of(
                             "0123456789", start + (v.s[start] == '-' || v.s[start] == '+')) > end;
      if (!clean) {
        warn(context, 1292, "Truncated incorrect INTEGER value: '" + v.s + "'");
      }
      if (to_unsigned) {
        const char* p = v.s.c_str();
        while (*p == ' ') ++p;
        if (*p != '-' && v.s.find_first_of("eE.") == std::string::npos) {
          return SqlValue::of_uint(std::strtoull(p, nullptr, 10));
        }
        return SqlValue::of_uint(static_cast<uint64_t>(string_to_int(v.s)));
      }
      return SqlValue::of_int(string_to_int(v.s));
    }
  }
}

// CAST(v AS DECIMAL(precision, scale)): rounded to `scale`, clamped to the largest
// value of the type when it does not fit (MySQL also warns 1264).
SqlValue cast_to_decimal(const SqlValue& v, int precision, int scale) {
  if (v.is_null()) return v;
  std::string text;
  if (v.kind == SqlValue::Kind::kDecimal || is_integer(v)) {
    text = v.to_text();
  } else {
    char buffer[400];
    std::snprintf(buffer, sizeof(buffer), "%.*f", std::min(scale + 6, 60), v.to_double());
    text = buffer;
  }
  std::string rounded = round_decimal_text(text, scale, /*truncate=*/false);
  const bool negative = rounded.starts_with("-");
  const std::string digits = negative ? rounded.substr(1) : rounded;
  const size_t int_digits =
      digits.find('.') == std::string::npos ? digits.size() : digits.find('.');
  const bool zero_int = digits.starts_with("0");
  if (!zero_int && static_cast<int>(int_digits) > precision - scale) {
    std::string max(static_cast<size_t>(precision - scale), '9');
    if (max.empty()) max = "0";
    if (scale > 0) max += "." + std::string(static_cast<size_t>(scale), '9');
    rounded = negative ? "-" + max : max;
  }
  return SqlValue::of_decimal(rounded);
}

// Microseconds rounded half up to `digits` fractional digits (MySQL rounds, not
// truncates, when a value loses precision: CAST('10:11:12.5' AS TIME) is 10:11:13).
int64_t round_microseconds(int64_t micros, int digits) {
  int64_t unit = 1;
  for (int k = digits; k < 6; ++k) unit *= 10;
  const int64_t magnitude = micros < 0 ? -micros : micros;
  const int64_t rounded = (magnitude + unit / 2) / unit * unit;
  return micros < 0 ? -rounded : rounded;
}

SqlValue cast_temporal(const SqlValue& v, TypeName type, std::optional<uint64_t> fsp,
                       const EvalContext& context) {
  if (v.is_null()) return v;
  const int digits = static_cast<int>(std::min<uint64_t>(fsp.value_or(0), 6));
  if (type == TypeName::kTime) {
    std::optional<Temporal> t = parse_time(v);
    if (!t) {
      warn(context, 1292, "Truncated incorrect time value: '" + v.to_text() + "'");
      return SqlValue::null();
    }
    return time_from_microseconds(round_microseconds(t->total_microseconds(), digits), digits)
        .to_value();
  }
  std::optional<Temporal> t = parse_datetime(v);
  if (!t) {
    warn(context, 1292, "Incorrect datetime value: '" + v.to_text() + "'");
    return SqlValue::null();
  }
  if (type == TypeName::kDate) {
    t->kind = Temporal::Kind::kDate;
    return t->to_value();
  }
  std::optional<Temporal> rounded =
      datetime_from_microseconds(round_microseconds(t->total_microseconds(), digits), digits);
  if (!rounded) return SqlValue::null();
  return rounded->to_value();
}

// REGEXP under the case-insensitive collation (ECMAScript syntax, close to ICU's for
// the common patterns).
bool regexp_match(const std::string& text, const std::string& pattern) {
  try {
    const std::regex re(pattern, std::regex::ECMAScript | std::regex::icase);
    return std::regex_search(text, re);
  } catch (const std::regex_error& e) {
    throw SqlException(3685, "HY000", "Illegal argument to a regular expression.");
  }
}

}  // namespace

SqlValue cast_value(const SqlValue& v, const DataType& type, const EvalContext& context) {
  switch (type.name) {
    case TypeName::kSigned:
    case TypeName::kTinyInt:
    case TypeName::kSmallInt:
    case TypeName::kMediumInt:
    case TypeName::kInt:
    case TypeName::kBigInt:
      return cast_to_integer(v, type.is_unsigned, context);
    case TypeName::kUnsigned:
      return cast_to_integer(v, true, context);
    case TypeName::kDecimal: {
      const int precision = static_cast<int>(std::min<uint64_t>(type.length.value_or(10), 65));
      const int scale = static_cast<int>(std::min<uint64_t>(type.scale.value_or(0), 30));
      if (scale > precision) {
        throw SqlException(1427, "42000",
                           "For float(M,D), double(M,D) or decimal(M,D), M must be >= D "
                           "(column '').");
      }
      return cast_to_decimal(v, precision, scale);
    }
    case TypeName::kDouble:
      if (v.is_null()) return v;
      return SqlValue::of_double(v.to_double());
    case TypeName::kFloat: {
      if (v.is_null()) return v;
      char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "%.6g",
                    static_cast<double>(static_cast<float>(v.to_double())));
      return SqlValue::of_double(std::strtod(buffer, nullptr));
    }
    case TypeName::kChar:
    case TypeName::kVarchar:
    case TypeName::kText:
    case TypeName::kBinary:
    case TypeName::kVarbinary:
    case TypeName::kBlob: {
      if (v.is_null()) return v;
      std::string s = v.to_text();
      const bool binary = type.name == TypeName::kBinary || type.name == TypeName::kVarbinary ||
                          type.name == TypeName::kBlob;
      if (type.length) {
        const size_t n = static_cast<size_t>(*type.length);
        if (binary) {
          // BINARY(n) pads with zero bytes to exactly n bytes.
          s.resize(n, '\0');
        } else {
          size_t chars = 0, k = 0;
          for (; k < s.size(); ++k) {
            if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80 && chars++ == n) break;
          }
          if (k < s.size()) {
            warn(context, 1292,
                 "Truncated incorrect CHAR(" + std::to_string(n) + ") value: '" + s + "'");
          }
          s.resize(k);
        }
      }
      return SqlValue::of_string(std::move(s));
    }
    case TypeName::kDate:
    case TypeName::kDatetime:
    case TypeName::kTimestamp:
    case TypeName::kTime:
      return cast_temporal(v, type.name == TypeName::kTimestamp ? TypeName::kDatetime : type.name,
                           type.length, context);
    case TypeName::kYear: {
      if (v.is_null()) return v;
      const int64_t y = v.to_int();
      if (y >= 1 && y <= 69) return SqlValue::of_int(2000 + y);
      if (y >= 70 && y <= 99) return SqlValue::of_int(1900 + y);
      if (y == 0 || (y >= 1901 && y <= 2155)) return SqlValue::of_int(y);
      return SqlValue::null();
    }
    default:
      throw_not_supported("CAST to this type");
  }
}

}  // namespace functions_internal

SqlValue interval_arithmetic(const BinaryExpr& binary, const EvalContext& context) {
  // d + INTERVAL n unit, INTERVAL n unit + d, d - INTERVAL n unit.
  const bool interval_left = binary.left->kind == ExprKind::kInterval;
  const Expr& date = interval_left ? *binary.right : *binary.left;
  const auto& interval = (interval_left ? *binary.left : *binary.right).as<IntervalExpr>();
  if (binary.op == BinaryOp::kSub && interval_left) {
    throw SqlException(1064, "42000",
                       "You have an error in your SQL syntax; check the manual that corresponds "
                       "to your MySQL server version for the right syntax to use near '" +
                           to_sql(binary) + "' at line 1");
  }
  return functions_internal::add_interval(evaluate(date, context),
                                          evaluate(*interval.value, context), interval.unit,
                                          binary.op == BinaryOp::kSub);
}

SqlValue evaluate_special_form(const Expr& expr, const EvalContext& context) {
  using namespace functions_internal;
  switch (expr.kind) {
    case ExprKind::kCase: {
      const auto& c = expr.as<CaseExpr>();
      if (c.operand) {
        // CASE x WHEN v ...: x = v, where NULL matches nothing.
        const SqlValue x = evaluate(*c.operand, context);
        for (const auto& [when, then] : c.whens) {
          const SqlValue v = evaluate(*when, context);
          if (!x.is_null() && !v.is_null() && compare(x, v) == 0) return evaluate(*then, context);
        }
      } else {
        for (const auto& [when, then] : c.whens) {
          if (truth(evaluate(*when, context)).value_or(false)) return evaluate(*then, context);
        }
      }
      return c.else_value ? evaluate(*c.else_value, context) : SqlValue::null();
    }
    case ExprKind::kCast: {
      const auto& cast = expr.as<CastExpr>();
      if (cast.type.name == TypeName::kJson) throw_not_supported("CAST to JSON");
      const bool to_number =
          cast.type.name == TypeName::kSigned || cast.type.name == TypeName::kUnsigned ||
          cast.type.name == TypeName::kDecimal || cast.type.name == TypeName::kDouble ||
          cast.type.name == TypeName::kFloat;
      if (std::optional<SqlValue> number = hex_literal_number(*cast.operand); number && to_number) {
        return cast_value(*number, cast.type, context);
      }
      return cast_value(evaluate(*cast.operand, context), cast.type, context);
    }
    case ExprKind::kConvertUsing: {
      // Every string is utf8mb4 in sqld: converting changes nothing for its text.
      SqlValue v = evaluate(*expr.as<ConvertUsingExpr>().operand, context);
      if (v.is_null()) return v;
      return SqlValue::of_string(v.to_text());
    }
    case ExprKind::kCollate:
      // Comparisons use the default case-insensitive collation whatever is named.
      return evaluate(*expr.as<CollateExpr>().operand, context);
    case ExprKind::kExtract: {
      const auto& extract = expr.as<ExtractExpr>();
      return extract_unit(extract.unit, evaluate(*extract.operand, context));
    }
    case ExprKind::kRegexp: {
      const auto& regexp = expr.as<RegexpExpr>();
      const SqlValue text = evaluate(*regexp.operand, context);
      const SqlValue pattern = evaluate(*regexp.pattern, context);
      if (text.is_null() || pattern.is_null()) return SqlValue::null();
      return SqlValue::of_int(regexp_match(text.to_text(), pattern.to_text()) != regexp.negated);
    }
    case ExprKind::kInterval:
      // An INTERVAL alone has no value; it is only an operand of + and - with a date.
      throw SqlException(1064, "42000",
                         "You have an error in your SQL syntax; check the manual that "
                         "corresponds to your MySQL server version for the right syntax to use "
                         "near '" +
                             to_sql(expr) + "' at line 1");
    default:
      throw_not_supported("expression '" + to_sql(expr) + "'");
  }
}

}  // namespace duo::sql::executor
