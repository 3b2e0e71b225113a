// Numeric functions (ABS, CEIL, FLOOR, ROUND, TRUNCATE, MOD, POW, SQRT, LN/LOG, SIGN,
// PI, RAND, CONV, trigonometry); see functions.h. Result types follow MySQL: integers
// stay integers, DECIMAL stays exact (rounded on its digits, not through a double),
// everything else is DOUBLE. Out-of-domain arguments (SQRT(-1), LN(0)) give NULL.
//
// Thread-safety: pure functions, except RAND() without a seed, which draws from a
// per-thread generator, and RAND(N), which keeps its sequence in the statement.
#include <algorithm>
#include <cmath>
#include <random>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/function_family.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor::functions_internal {

namespace {

constexpr double kPi = 3.141592653589793;

// MySQL's my_rnd (mysys/my_rnd.cc): RAND(N) must give the values MySQL gives, so
// applications that seed it see the same sequence.
struct MysqlRandom {
  static constexpr uint64_t kMax = 0x3FFFFFFFULL;
  uint64_t seed1;
  uint64_t seed2;
  explicit MysqlRandom(int64_t seed)
      : seed1((static_cast<uint64_t>(seed) * 0x10001ULL + 55555555ULL) % kMax),
        seed2((static_cast<uint64_t>(seed) * 0x10000001ULL) % kMax) {}
  MysqlRandom(uint64_t state1, uint64_t state2) : seed1(state1), seed2(state2) {}
  double next() {
    seed1 = (seed1 * 3 + seed2) % kMax;
    seed2 = (seed1 + seed2 + 33) % kMax;
    return static_cast<double>(seed1) / static_cast<double>(kMax);
  }
};

// A DECIMAL or integer result of an exact rounding, as the narrowest kind that holds it.
SqlValue exact_result(const std::string& text) {
  if (text.find('.') != std::string::npos) return SqlValue::of_decimal(text);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == 0 && *end == '\0') return SqlValue::of_int(v);
  return SqlValue::of_decimal(text);
}

// ROUND/TRUNCATE(v, places). MySQL keeps the argument's type: an integer stays an
// integer, a DECIMAL keeps min(places, its scale) digits, a DOUBLE is rounded with
// rint (half to even, as the C library does).
SqlValue round_value(const SqlValue& v, int64_t places, bool truncate) {
  places = std::clamp<int64_t>(places, -64, 30);
  if (is_integer(v)) {
    if (places >= 0) return v;
    const std::string text = round_decimal_text(v.to_text(), static_cast<int>(places), truncate);
    if (v.kind == SqlValue::Kind::kUInt) {
      return SqlValue::of_uint(std::strtoull(text.c_str(), nullptr, 10));
    }
    return exact_result(text);
  }
  if (v.kind == SqlValue::Kind::kDecimal) {
    if (places >= decimal_scale(v)) return v;
    return exact_result(round_decimal_text(v.s, static_cast<int>(places), truncate));
  }
  const double x = v.to_double();
  const double scale = std::pow(10.0, static_cast<double>(std::abs(places)));
  double r;
  if (places >= 0) {
    const double scaled = x * scale;
    if (!std::isfinite(scaled)) return SqlValue::of_double(x);
    r = (truncate ? std::trunc(scaled) : std::rint(scaled)) / scale;
  } else {
    const double scaled = x / scale;
    r = (truncate ? std::trunc(scaled) : std::rint(scaled)) * scale;
  }
  return SqlValue::of_double(r);
}

// CEIL/FLOOR: integers unchanged, DECIMAL to an exact integer, others to DOUBLE.
SqlValue ceil_floor(const SqlValue& v, bool ceil) {
  if (v.is_null() || is_integer(v)) return v;
  if (v.kind == SqlValue::Kind::kDecimal) {
    SqlValue whole = exact_result(round_decimal_text(v.s, 0, /*truncate=*/true));
    const size_t dot = v.s.find('.');
    const bool has_fraction =
        dot != std::string::npos && v.s.find_first_not_of('0', dot + 1) != std::string::npos;
    const bool negative = !v.s.empty() && v.s[0] == '-';
    // Truncation went toward zero; CEIL of a positive and FLOOR of a negative go one on.
    if (!has_fraction || ceil == negative) return whole;
    if (whole.kind != SqlValue::Kind::kInt) {
      return SqlValue::of_double(ceil ? std::ceil(v.to_double()) : std::floor(v.to_double()));
    }
    return SqlValue::of_int(whole.i + (ceil ? 1 : -1));
  }
  return SqlValue::of_double(ceil ? std::ceil(v.to_double()) : std::floor(v.to_double()));
}

// CONV(n, from_base, to_base): digits of n read in |from_base|, written in |to_base|
// (a negative to_base writes a signed value). NULL for bases outside 2..36.
SqlValue conv(const SqlValue& n, int64_t from_base, int64_t to_base) {
  const int64_t from = std::abs(from_base), to = std::abs(to_base);
  if (from < 2 || from > 36 || to < 2 || to > 36) return SqlValue::null();
  std::string text = n.kind == SqlValue::Kind::kDouble || n.kind == SqlValue::Kind::kDecimal
                         ? std::to_string(n.to_int())
                         : n.to_text();
  size_t k = text.find_first_not_of(' ');
  if (k == std::string::npos) return SqlValue::of_string("0");
  bool negative = false;
  if (text[k] == '-') {
    negative = true;
    ++k;
  }
  uint64_t value = 0;
  for (; k < text.size(); ++k) {
    const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(text[k])));
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'Z' ? c - 'A' + 10 : 99;
    if (digit >= from) break;
    if (value > (UINT64_MAX - static_cast<uint64_t>(digit)) / static_cast<uint64_t>(from)) {
      value = UINT64_MAX;
      break;
    }
    value = value * static_cast<uint64_t>(from) + static_cast<uint64_t>(digit);
  }
  if (negative) value = 0 - value;
  bool write_negative = false;
  if (to_base < 0 && static_cast<int64_t>(value) < 0) {
    write_negative = true;
    value = 0 - value;
  }
  std::string out;
  do {
    const int digit = static_cast<int>(value % static_cast<uint64_t>(to));
    out.insert(out.begin(), static_cast<char>(digit < 10 ? '0' + digit : 'A' + digit - 10));
    value /= static_cast<uint64_t>(to);
  } while (value > 0);
  return SqlValue::of_string(write_negative ? "-" + out : out);
}

// A DOUBLE function of one argument that is NULL outside its domain.
std::optional<SqlValue> unary_double(const std::string& name, double x) {
  double r;
  if (name == "SQRT") {
    if (x < 0) return SqlValue::null();
    r = std::sqrt(x);
  } else if (name == "EXP") {
    r = std::exp(x);
  } else if (name == "LN") {
    if (x <= 0) return SqlValue::null();
    r = std::log(x);
  } else if (name == "LOG2") {
    if (x <= 0) return SqlValue::null();
    r = std::log2(x);
  } else if (name == "LOG10") {
    if (x <= 0) return SqlValue::null();
    r = std::log10(x);
  } else if (name == "SIN") {
    r = std::sin(x);
  } else if (name == "COS") {
    r = std::cos(x);
  } else if (name == "TAN") {
    r = std::tan(x);
  } else if (name == "COT") {
    if (std::tan(x) == 0) return SqlValue::null();
    r = 1 / std::tan(x);
  } else if (name == "ASIN") {
    if (x < -1 || x > 1) return SqlValue::null();
    r = std::asin(x);
  } else if (name == "ACOS") {
    if (x < -1 || x > 1) return SqlValue::null();
    r = std::acos(x);
  } else if (name == "ATAN") {
    r = std::atan(x);
  } else if (name == "DEGREES") {
    r = x * 180 / kPi;
  } else if (name == "RADIANS") {
    r = x * kPi / 180;
  } else {
    return std::nullopt;
  }
  if (!std::isfinite(r)) return SqlValue::null();
  return SqlValue::of_double(r);
}

}  // namespace

std::optional<SqlValue> call_numeric_function(const Args& args) {
  const std::string& name = args.name();
  if (name == "ABS") {
    args.need(1);
    SqlValue v = args.value(0);
    if (v.is_null() || v.kind == SqlValue::Kind::kUInt) return v;
    if (v.kind == SqlValue::Kind::kInt) {
      if (v.i == INT64_MIN) {
        throw SqlException(1690, "22003",
                           "BIGINT value is out of range in 'abs(" + v.to_text() + ")'");
      }
      return SqlValue::of_int(v.i < 0 ? -v.i : v.i);
    }
    if (v.kind == SqlValue::Kind::kDecimal) {
      return SqlValue::of_decimal(v.s.starts_with("-") ? v.s.substr(1) : v.s);
    }
    return SqlValue::of_double(std::fabs(v.to_double()));
  }
  if (name == "CEIL" || name == "CEILING" || name == "FLOOR") {
    args.need(1);
    return ceil_floor(args.value(0), name != "FLOOR");
  }
  if (name == "ROUND" || name == "TRUNCATE") {
    if (name == "ROUND") {
      args.need_between(1, 2);
    } else {
      args.need(2);
    }
    SqlValue v = args.value(0);
    SqlValue places = args.size() == 2 ? args.value(1) : SqlValue::of_int(0);
    if (v.is_null() || places.is_null()) return SqlValue::null();
    if (v.kind == SqlValue::Kind::kString) v = SqlValue::of_double(v.to_double());
    return round_value(v, places.to_int(), name == "TRUNCATE");
  }
  if (name == "MOD") {
    args.need(2);
    SqlValue a = args.value(0), b = args.value(1);
    if (a.is_null() || b.is_null()) return SqlValue::null();
    if (b.to_double() == 0) {
      args.warn(1365, "Division by 0");
      return SqlValue::null();
    }
    if (is_integer(a) && is_integer(b)) {
      if (a.kind == SqlValue::Kind::kUInt || b.kind == SqlValue::Kind::kUInt) {
        if (a.kind == SqlValue::Kind::kUInt && b.kind == SqlValue::Kind::kUInt) {
          return SqlValue::of_uint(a.u % b.u);
        }
      }
      if (b.to_int() == -1) return SqlValue::of_int(0);
      return SqlValue::of_int(a.to_int() % b.to_int());
    }
    const double y = b.to_double();
    const double r = std::fmod(a.to_double(), y);
    const bool exact = (is_integer(a) || a.kind == SqlValue::Kind::kDecimal) &&
                       (is_integer(b) || b.kind == SqlValue::Kind::kDecimal);
    if (exact) {
      char buffer[128];
      std::snprintf(buffer, sizeof(buffer), "%.*f", std::max(decimal_scale(a), decimal_scale(b)),
                    r);
      return SqlValue::of_decimal(buffer);
    }
    return SqlValue::of_double(r);
  }
  if (name == "POW" || name == "POWER" || name == "ATAN2" || (name == "ATAN" && args.size() == 2)) {
    args.need(2);
    SqlValue a = args.value(0), b = args.value(1);
    if (a.is_null() || b.is_null()) return SqlValue::null();
    if (name == "ATAN2" || name == "ATAN") {
      return SqlValue::of_double(std::atan2(a.to_double(), b.to_double()));
    }
    const double r = std::pow(a.to_double(), b.to_double());
    if (!std::isfinite(r)) {
      if (std::isnan(r)) return SqlValue::null();
      throw SqlException(
          1690, "22003",
          "DOUBLE value is out of range in 'pow(" + a.to_text() + "," + b.to_text() + ")'");
    }
    return SqlValue::of_double(r);
  }
  if (name == "LOG") {
    args.need_between(1, 2);
    SqlValue a = args.value(0);
    if (a.is_null()) return a;
    if (args.size() == 1) {
      if (a.to_double() <= 0) args.warn(3020, "Invalid argument for logarithm");
      return unary_double("LN", a.to_double());
    }
    SqlValue b = args.value(1);
    if (b.is_null()) return b;
    const double base = a.to_double(), x = b.to_double();
    if (base <= 0 || base == 1 || x <= 0) {
      args.warn(3020, "Invalid argument for logarithm");
      return SqlValue::null();
    }
    return SqlValue::of_double(std::log(x) / std::log(base));
  }
  if (name == "SIGN") {
    args.need(1);
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    if (v.kind == SqlValue::Kind::kUInt) return SqlValue::of_int(v.u > 0);
    if (v.kind == SqlValue::Kind::kInt) return SqlValue::of_int((v.i > 0) - (v.i < 0));
    const double x = v.to_double();
    return SqlValue::of_int((x > 0) - (x < 0));
  }
  if (name == "PI") {
    args.need(0);
    // MySQL's PI() is a DOUBLE shown with 6 decimals; the protocol layer prints a
    // double's shortest text, so the value is given as the DECIMAL it shows.
    return SqlValue::of_decimal("3.141593");
  }
  if (name == "RAND") {
    args.need_between(0, 1);
    if (args.size() == 1) {
      // RAND(N): MySQL's sequence for seed N. A constant N seeds the call site once per
      // statement and the sequence goes on row by row; RAND(col) reseeds on every call.
      StatementContext* statement =
          args.expr(0).kind == ExprKind::kLiteral ? args.context().statement : nullptr;
      const Expr* site = &args.expr(0);
      if (statement) {
        if (auto at = statement->random_sequences.find(site);
            at != statement->random_sequences.end()) {
          MysqlRandom random(at->second.first, at->second.second);
          const double value = random.next();
          at->second = {random.seed1, random.seed2};
          return SqlValue::of_double(value);
        }
      }
      SqlValue seed = args.value(0);
      MysqlRandom random(seed.is_null() ? 0 : seed.to_int());
      const double value = random.next();
      if (statement) statement->random_sequences[site] = {random.seed1, random.seed2};
      return SqlValue::of_double(value);
    }
    thread_local std::mt19937_64 generator{std::random_device{}()};
    return SqlValue::of_double(std::uniform_real_distribution<double>(0.0, 1.0)(generator));
  }
  if (name == "CONV" || name == "BIN" || name == "OCT") {
    if (name == "CONV") {
      args.need(3);
    } else {
      args.need(1);
    }
    SqlValue n = args.value(0);
    if (n.is_null()) return n;
    if (name == "BIN") return conv(n, 10, 2);
    if (name == "OCT") return conv(n, 10, 8);
    SqlValue from = args.value(1), to = args.value(2);
    if (from.is_null() || to.is_null()) return SqlValue::null();
    return conv(n, from.to_int(), to.to_int());
  }
  if (name == "SQRT" || name == "EXP" || name == "LN" || name == "LOG2" || name == "LOG10" ||
      name == "SIN" || name == "COS" || name == "TAN" || name == "COT" || name == "ASIN" ||
      name == "ACOS" || name == "ATAN" || name == "DEGREES" || name == "RADIANS") {
    args.need(1);
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    const bool logarithm = name == "LN" || name == "LOG2" || name == "LOG10";
    if (logarithm && v.to_double() <= 0) args.warn(3020, "Invalid argument for logarithm");
    return unary_double(name, v.to_double());
  }
  return std::nullopt;
}

}  // namespace duo::sql::executor::functions_internal
