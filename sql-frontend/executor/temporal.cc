// Temporal value parsing and calendar arithmetic; see temporal.h.
#include "sql-frontend/executor/temporal.h"

#include <cstdio>
#include <vector>

#include "ndb-kernel/common/clock.h"

namespace duo::sql::executor {

namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;
// MySQL's TIME range is -838:59:59 .. 838:59:59.
constexpr int64_t kTimeMicrosMax = (838 * 3600 + 59 * 60 + 59) * kMicrosPerSecond;

// Howard Hinnant's days_from_civil: days since 1970-01-01 of a proleptic Gregorian date.
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void civil_from_days(int64_t z, int64_t* y, int64_t* m, int64_t* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp + (mp < 10 ? 3 : -9);
  *y = yoe + era * 400 + (*m <= 2);
}

// TO_DAYS('1970-01-01') in MySQL.
constexpr int64_t kUnixEpochDayNumber = 719528;

// The runs of digits in `s`, with the fraction digits after a '.' kept as written.
struct Groups {
  std::vector<std::string> numbers;
  bool negative = false;
};

Groups digit_groups(std::string_view s) {
  Groups g;
  size_t k = 0;
  while (k < s.size() && s[k] == ' ') ++k;
  if (k < s.size() && s[k] == '-') {
    g.negative = true;
    ++k;
  }
  std::string current;
  for (; k < s.size(); ++k) {
    if (s[k] >= '0' && s[k] <= '9') {
      current += s[k];
    } else if (!current.empty()) {
      g.numbers.push_back(current);
      current.clear();
    }
  }
  if (!current.empty()) g.numbers.push_back(current);
  return g;
}

int64_t number(const std::string& digits) {
  return digits.empty() || digits.size() > 18 ? 0 : std::stoll(digits);
}

int64_t expand_year(const std::string& digits) {
  const int64_t y = number(digits);
  if (digits.size() > 2) return y;
  return y < 70 ? 2000 + y : 1900 + y;
}

void set_fraction(Temporal* t, std::string digits) {
  t->fraction_digits = static_cast<int>(std::min<size_t>(digits.size(), 6));
  digits.resize(6, '0');
  t->microsecond = number(digits);
}

bool valid_date(const Temporal& t) {
  return t.year >= 1 && t.year <= 9999 && t.month >= 1 && t.month <= 12 && t.day >= 1 &&
         t.day <= days_in_month(t.year, t.month);
}

bool valid_clock(const Temporal& t) {
  return t.hour <= 23 && t.minute <= 59 && t.second <= 59;
}

}  // namespace

int64_t days_in_month(int64_t year, int64_t month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month == 2 && ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0)) return 29;
  return month >= 1 && month <= 12 ? kDays[month - 1] : 0;
}

std::string Temporal::to_text() const {
  char buffer[64];
  if (kind == Kind::kDate) {
    std::snprintf(buffer, sizeof(buffer), "%04lld-%02lld-%02lld", static_cast<long long>(year),
                  static_cast<long long>(month), static_cast<long long>(day));
    return buffer;
  }
  if (kind == Kind::kTime) {
    std::snprintf(buffer, sizeof(buffer), "%s%02lld:%02lld:%02lld", negative ? "-" : "",
                  static_cast<long long>(hour), static_cast<long long>(minute),
                  static_cast<long long>(second));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%04lld-%02lld-%02lld %02lld:%02lld:%02lld",
                  static_cast<long long>(year), static_cast<long long>(month),
                  static_cast<long long>(day), static_cast<long long>(hour),
                  static_cast<long long>(minute), static_cast<long long>(second));
  }
  std::string out = buffer;
  if (fraction_digits > 0) {
    std::snprintf(buffer, sizeof(buffer), "%06lld", static_cast<long long>(microsecond));
    out += "." + std::string(buffer, static_cast<size_t>(fraction_digits));
  }
  return out;
}

SqlValue Temporal::to_value() const {
  const SqlValue::TemporalType type = kind == Kind::kDate   ? SqlValue::TemporalType::kDate
                                      : kind == Kind::kTime ? SqlValue::TemporalType::kTime
                                                            : SqlValue::TemporalType::kDatetime;
  return SqlValue::of_temporal(to_text(), type);
}

int64_t Temporal::day_number() const {
  return days_from_civil(year, month, day) + kUnixEpochDayNumber;
}

int64_t Temporal::total_microseconds() const {
  const int64_t clock = ((hour * 60 + minute) * 60 + second) * kMicrosPerSecond + microsecond;
  if (kind == Kind::kTime) return negative ? -clock : clock;
  return day_number() * kMicrosPerDay + clock;
}

std::optional<Temporal> date_from_day_number(int64_t days) {
  Temporal t;
  t.kind = Temporal::Kind::kDate;
  civil_from_days(days - kUnixEpochDayNumber, &t.year, &t.month, &t.day);
  if (t.year < 1 || t.year > 9999) return std::nullopt;
  return t;
}

std::optional<Temporal> datetime_from_microseconds(int64_t micros, int fraction_digits) {
  int64_t days = micros / kMicrosPerDay;
  int64_t rest = micros % kMicrosPerDay;
  if (rest < 0) {
    rest += kMicrosPerDay;
    --days;
  }
  std::optional<Temporal> t = date_from_day_number(days);
  if (!t) return std::nullopt;
  t->kind = Temporal::Kind::kDatetime;
  t->microsecond = rest % kMicrosPerSecond;
  rest /= kMicrosPerSecond;
  t->second = rest % 60;
  t->minute = rest / 60 % 60;
  t->hour = rest / 3600;
  t->fraction_digits = fraction_digits;
  return t;
}

Temporal time_from_microseconds(int64_t micros, int fraction_digits) {
  Temporal t;
  t.kind = Temporal::Kind::kTime;
  t.negative = micros < 0;
  int64_t m = micros < 0 ? -micros : micros;
  if (m > kTimeMicrosMax) m = kTimeMicrosMax;
  t.microsecond = m % kMicrosPerSecond;
  m /= kMicrosPerSecond;
  t.second = m % 60;
  t.minute = m / 60 % 60;
  t.hour = m / 3600;
  t.fraction_digits = fraction_digits;
  return t;
}

int64_t weekday(const Temporal& date) {
  // Day number 1 (0001-01-01) was a Monday in MySQL's proleptic calendar.
  return (date.day_number() + 5) % 7;
}

std::optional<Temporal> parse_datetime(const SqlValue& v) {
  if (v.is_null()) return std::nullopt;
  Temporal t;
  std::vector<std::string> parts;
  std::string fraction;
  if (v.kind == SqlValue::Kind::kString) {
    Groups g = digit_groups(v.s);
    if (g.negative) return std::nullopt;
    // A date starts with year, month, day: text whose first number ends at ':' or a
    // space is a time ('10:11:12', '1 10:00:00'), not a date.
    const size_t first_digit = v.s.find_first_of("0123456789");
    const size_t first_end = first_digit == std::string::npos
                                 ? first_digit
                                 : v.s.find_first_not_of("0123456789", first_digit);
    if (g.numbers.size() > 1 && first_end != std::string::npos &&
        (v.s[first_end] == ':' || v.s[first_end] == ' ')) {
      return std::nullopt;
    }
    parts = std::move(g.numbers);
    // A fraction is the group after the seconds when the text had a '.' there.
    if (parts.size() == 7 || (parts.size() == 2 && v.s.find('.') != std::string::npos)) {
      fraction = parts.back();
      parts.pop_back();
    }
  } else {
    // A number: YYYYMMDD, YYMMDD, YYYYMMDDHHMMSS[.f], YYMMDDHHMMSS.
    std::string text = v.kind == SqlValue::Kind::kDouble ? std::to_string(v.to_int()) : v.to_text();
    const size_t dot = text.find('.');
    if (dot != std::string::npos) {
      fraction = text.substr(dot + 1);
      text.resize(dot);
    }
    if (text.empty() || text[0] == '-') return std::nullopt;
    parts = {text};
  }
  if (parts.size() == 1) {
    // Packed digits (a copy: `parts` is reassigned below).
    const std::string p = parts[0];
    if (p.size() == 8 || p.size() == 14) {
      parts = {p.substr(0, 4), p.substr(4, 2), p.substr(6, 2)};
      if (p.size() == 14) {
        parts.insert(parts.end(), {p.substr(8, 2), p.substr(10, 2), p.substr(12, 2)});
      }
    } else if (p.size() == 6 || p.size() == 12 || p.size() == 5 || p.size() == 7) {
      const std::string padded = p.size() % 2 == 1 ? "0" + p : p;
      parts = {padded.substr(0, 2), padded.substr(2, 2), padded.substr(4, 2)};
      if (padded.size() == 12) {
        parts.insert(parts.end(), {padded.substr(6, 2), padded.substr(8, 2), padded.substr(10, 2)});
      }
    } else {
      return std::nullopt;
    }
  }
  if (parts.size() != 3 && parts.size() != 5 && parts.size() != 6) return std::nullopt;
  t.year = expand_year(parts[0]);
  t.month = number(parts[1]);
  t.day = number(parts[2]);
  if (parts.size() == 3) {
    t.kind = Temporal::Kind::kDate;
  } else {
    t.kind = Temporal::Kind::kDatetime;
    t.hour = number(parts[3]);
    t.minute = number(parts[4]);
    t.second = parts.size() == 6 ? number(parts[5]) : 0;
    if (!fraction.empty()) set_fraction(&t, fraction);
  }
  if (!valid_date(t) || !valid_clock(t)) return std::nullopt;
  return t;
}

std::optional<Temporal> parse_time(const SqlValue& v) {
  if (v.is_null()) return std::nullopt;
  Temporal t;
  t.kind = Temporal::Kind::kTime;
  if (v.kind == SqlValue::Kind::kString) {
    // A datetime's time part.
    if (std::optional<Temporal> dt = parse_datetime(v);
        dt && dt->kind == Temporal::Kind::kDatetime) {
      dt->kind = Temporal::Kind::kTime;
      return dt;
    }
    Groups g = digit_groups(v.s);
    std::vector<std::string>& parts = g.numbers;
    t.negative = g.negative;
    const bool has_colon = v.s.find(':') != std::string::npos;
    const size_t dot = v.s.find('.');
    std::string fraction;
    if (dot != std::string::npos && !parts.empty()) {
      fraction = parts.back();
      parts.pop_back();
    }
    const bool has_days = v.s.find(' ') != std::string::npos &&
                          v.s.find_first_not_of(' ') < v.s.find(' ') && has_colon;
    int64_t days = 0;
    if (has_days && !parts.empty()) {
      days = number(parts.front());
      parts.erase(parts.begin());
    }
    if (parts.empty()) return std::nullopt;
    if (has_colon) {
      if (parts.size() > 3) return std::nullopt;
      t.hour = number(parts[0]) + days * 24;
      t.minute = parts.size() > 1 ? number(parts[1]) : 0;
      t.second = parts.size() > 2 ? number(parts[2]) : 0;
    } else {
      if (parts.size() != 1) return std::nullopt;
      const int64_t n = number(parts[0]);
      t.hour = n / 10000;
      t.minute = n / 100 % 100;
      t.second = n % 100;
    }
    if (!fraction.empty()) set_fraction(&t, fraction);
  } else {
    std::string text = v.kind == SqlValue::Kind::kDouble ? std::to_string(v.to_int()) : v.to_text();
    if (!text.empty() && text[0] == '-') {
      t.negative = true;
      text.erase(0, 1);
    }
    const size_t dot = text.find('.');
    if (dot != std::string::npos) {
      set_fraction(&t, text.substr(dot + 1));
      text.resize(dot);
    }
    const int64_t n = number(text);
    t.hour = n / 10000;
    t.minute = n / 100 % 100;
    t.second = n % 100;
  }
  if (t.minute > 59 || t.second > 59) return std::nullopt;
  if (t.total_microseconds() > kTimeMicrosMax || t.total_microseconds() < -kTimeMicrosMax) {
    return time_from_microseconds(t.negative ? -kTimeMicrosMax : kTimeMicrosMax, 0);
  }
  return t;
}

int64_t wall_clock_us() {
  return real_clock().wall_time_ns() / 1000;
}

Temporal datetime_at(int64_t epoch_us, int fraction_digits) {
  int64_t shown = epoch_us;
  if (fraction_digits < 6) {
    int64_t unit = 1;
    for (int k = fraction_digits; k < 6; ++k) unit *= 10;
    shown -= epoch_us % unit;
  }
  std::optional<Temporal> t =
      datetime_from_microseconds(shown + kUnixEpochDayNumber * kMicrosPerDay, fraction_digits);
  return t.value_or(Temporal{});
}

}  // namespace duo::sql::executor
