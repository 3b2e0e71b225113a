// Aggregate accumulation; see aggregate.h.
#include "sql-frontend/executor/aggregate.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <utility>

#include "sql-frontend/catalog/sql_exception.h"

namespace duo::sql::executor {

namespace {

constexpr int kDecimalDigitsMax = 36;  // what an __int128 mantissa holds with room to add

[[noreturn]] void decimal_overflow() {
  throw SqlException(1690, "22003", "DECIMAL value is out of range in 'sum'");
}

__int128 power_of_ten(int exponent) {
  __int128 p = 1;
  for (int i = 0; i < exponent; ++i) p *= 10;
  return p;
}

// An exact value as mantissa and scale; false for a DECIMAL text it cannot hold.
bool to_exact(const SqlValue& v, __int128* mantissa, int* scale) {
  if (v.kind == SqlValue::Kind::kInt) {
    *mantissa = v.i;
    *scale = 0;
    return true;
  }
  if (v.kind == SqlValue::Kind::kUInt) {
    *mantissa = v.u;
    *scale = 0;
    return true;
  }
  const std::string& s = v.s;
  size_t i = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) ++i;
  __int128 m = 0;
  int digits = 0;
  int fraction = -1;
  for (; i < s.size(); ++i) {
    if (s[i] == '.' && fraction < 0) {
      fraction = 0;
      continue;
    }
    if (s[i] < '0' || s[i] > '9') return false;
    if (++digits > kDecimalDigitsMax) return false;
    m = m * 10 + (s[i] - '0');
    if (fraction >= 0) ++fraction;
  }
  *mantissa = negative ? -m : m;
  *scale = fraction < 0 ? 0 : fraction;
  return true;
}

}  // namespace

std::string decimal_text(__int128 mantissa, int scale) {
  const bool negative = mantissa < 0;
  unsigned __int128 m = negative ? static_cast<unsigned __int128>(-mantissa)
                                 : static_cast<unsigned __int128>(mantissa);
  // Written backwards: digits, '.', at least one integer digit, sign.
  char buffer[96];
  size_t n = 0;
  for (int i = 0; i < scale; ++i) {
    buffer[n++] = static_cast<char>('0' + static_cast<int>(m % 10));
    m /= 10;
  }
  if (scale > 0) buffer[n++] = '.';
  do {
    buffer[n++] = static_cast<char>('0' + static_cast<int>(m % 10));
    m /= 10;
  } while (m != 0);
  if (negative) buffer[n++] = '-';
  return std::string(std::reverse_iterator<char*>(buffer + n),
                     std::reverse_iterator<char*>(buffer));
}

int compare_nulls_first(const SqlValue& a, const SqlValue& b) {
  if (a.is_null() || b.is_null()) return a.is_null() == b.is_null() ? 0 : (a.is_null() ? -1 : 1);
  return compare(a, b);
}

bool ValuesLess::operator()(const std::vector<SqlValue>& a, const std::vector<SqlValue>& b) const {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const int c = compare_nulls_first(a[i], b[i]);
    if (c != 0) return c < 0;
  }
  return a.size() < b.size();
}

std::optional<std::string> group_concat_separator(const FunctionExpr& call,
                                                  std::string_view source_text) {
  if (call.name != "GROUP_CONCAT" || call.args.size() < 2) return std::nullopt;
  const Expr& last = *call.args.back();
  if (last.kind != ExprKind::kLiteral ||
      last.as<LiteralExpr>().literal_kind != LiteralKind::kString) {
    return std::nullopt;
  }
  size_t end = std::min<size_t>(last.pos.offset, source_text.size());
  while (end > 0 && std::isspace(static_cast<unsigned char>(source_text[end - 1]))) --end;
  constexpr std::string_view kWord = "SEPARATOR";
  if (end < kWord.size()) return std::nullopt;
  for (size_t i = 0; i < kWord.size(); ++i) {
    const char c = source_text[end - kWord.size() + i];
    if (std::toupper(static_cast<unsigned char>(c)) != kWord[i]) return std::nullopt;
  }
  return last.as<LiteralExpr>().value;
}

Aggregator::Aggregator(const FunctionExpr& call, std::string separator)
    : star_(call.star), distinct_(call.distinct), separator_(std::move(separator)) {
  const std::string& name = call.name;
  kind_ = name == "COUNT" ? Kind::kCount
          : name == "SUM" ? Kind::kSum
          : name == "AVG" ? Kind::kAvg
          : name == "MIN" ? Kind::kMin
          : name == "MAX" ? Kind::kMax
                          : Kind::kGroupConcat;
}

void Aggregator::add(std::vector<SqlValue> args) {
  if (star_) {
    ++count_;
    return;
  }
  for (const SqlValue& v : args) {
    if (v.is_null()) return;  // an aggregate skips rows where an argument is NULL
  }
  if (distinct_) {
    if (!seen_.emplace(args, true).second) return;
  }
  accumulate(args);
}

void Aggregator::accumulate(const std::vector<SqlValue>& args) {
  ++count_;
  const SqlValue& v = args.front();
  switch (kind_) {
    case Kind::kCount:
      return;
    case Kind::kSum:
    case Kind::kAvg: {
      sum_double_ += v.to_double();
      __int128 m = 0;
      int scale = 0;
      const bool exact = v.kind != SqlValue::Kind::kDouble && v.kind != SqlValue::Kind::kString;
      if (!exact_ || !exact || !to_exact(v, &m, &scale)) {
        exact_ = false;
        return;
      }
      if (scale > scale_) {
        if (__builtin_mul_overflow(mantissa_, power_of_ten(scale - scale_), &mantissa_)) {
          decimal_overflow();
        }
        scale_ = scale;
      } else if (scale < scale_) {
        m *= power_of_ten(scale_ - scale);
      }
      if (__builtin_add_overflow(mantissa_, m, &mantissa_)) decimal_overflow();
      return;
    }
    case Kind::kMin:
    case Kind::kMax:
      if (extreme_.is_null() ||
          (kind_ == Kind::kMin ? compare(v, extreme_) < 0 : compare(v, extreme_) > 0)) {
        extreme_ = v;
      }
      return;
    case Kind::kGroupConcat: {
      if (concat_full_) return;
      std::string item;
      for (const SqlValue& arg : args) item += arg.to_text();
      if (count_ > 1) concat_ += separator_;
      concat_ += item;
      if (concat_.size() >= kGroupConcatLengthMax) {
        concat_.resize(kGroupConcatLengthMax);
        concat_full_ = true;
      }
      return;
    }
  }
}

SqlValue Aggregator::result() const {
  switch (kind_) {
    case Kind::kCount:
      return SqlValue::of_int(count_);
    case Kind::kSum:
      if (count_ == 0) return SqlValue::null();
      if (!exact_) return SqlValue::of_double(sum_double_);
      return SqlValue::of_decimal(decimal_text(mantissa_, scale_));
    case Kind::kAvg: {
      if (count_ == 0) return SqlValue::null();
      if (!exact_) return SqlValue::of_double(sum_double_ / static_cast<double>(count_));
      // Four more decimals, rounded half away from zero.
      __int128 scaled = 0;
      if (__builtin_mul_overflow(mantissa_, static_cast<__int128>(100000), &scaled)) {
        decimal_overflow();
      }
      __int128 q = scaled / count_;
      q = q >= 0 ? (q + 5) / 10 : (q - 5) / 10;
      return SqlValue::of_decimal(decimal_text(q, scale_ + 4));
    }
    case Kind::kMin:
    case Kind::kMax:
      return extreme_;
    case Kind::kGroupConcat:
      return count_ == 0 ? SqlValue::null() : SqlValue::of_string(concat_);
  }
  return SqlValue::null();
}

}  // namespace duo::sql::executor
