// Date and time functions (NOW, CURDATE, DATE_FORMAT, STR_TO_DATE, DATEDIFF,
// TIMESTAMPDIFF, DATE_ADD, WEEK ...), EXTRACT and INTERVAL arithmetic; see functions.h.
// Values are parsed with temporal.h; formats and week numbers are temporal_format.h's.
// Invalid dates give NULL (and MySQL's warning 1292 through warn()). The server's time
// zone is UTC.
//
// Thread-safety: pure functions, except that SYSDATE() reads the clock (NOW() and
// friends read the statement's start time, EvalContext::statement).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/function_family.h"
#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/executor/temporal.h"
#include "sql-frontend/executor/temporal_format.h"
#include "sql-frontend/parser/ast_printer.h"

namespace duo::sql::executor::functions_internal {

namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;

SqlValue text_of(const Temporal& t) {
  return t.to_value();
}

std::string lower_name(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// Fractional-second digits asked for by NOW(fsp) and friends; 1426 above 6.
int fsp_argument(const Args& args) {
  args.need_between(0, 1);
  if (args.size() == 0) return 0;
  const int64_t fsp = args.value(0).to_int();
  if (fsp < 0 || fsp > 6) {
    // MySQL names the item, not the spelling: CURRENT_TIMESTAMP(7) reports 'now'.
    const std::string& n = args.name();
    const std::string item = n == "SYSDATE" || n == "UTC_TIMESTAMP" || n == "UTC_TIME"
                                 ? lower_name(n)
                             : n == "CURTIME" || n == "CURRENT_TIME" ? "curtime"
                                                                     : "now";
    throw SqlException(1426, "42000",
                       "Too-big precision " + std::to_string(fsp) + " specified for '" + item +
                           "'. Maximum is 6.");
  }
  return static_cast<int>(fsp);
}

// NOW() and friends: the statement's start time, the same on every row (MySQL); the
// clock when evaluated outside a statement.
Temporal current_datetime(const Args& args, int fraction_digits) {
  const StatementContext* statement = args.context().statement;
  return datetime_at(statement ? statement->start_time_us : wall_clock_us(), fraction_digits);
}

// The unit named by TIMESTAMPDIFF/TIMESTAMPADD's first argument (written as a bare
// word, which the parser gives as a column reference; the SELECT binder must not
// resolve it as one).
std::optional<IntervalUnit> unit_argument(const Expr& expr) {
  std::string name;
  if (expr.kind == ExprKind::kColumn && !expr.as<ColumnExpr>().table) {
    name = expr.as<ColumnExpr>().column.name;
  } else if (expr.kind == ExprKind::kLiteral &&
             expr.as<LiteralExpr>().literal_kind == LiteralKind::kString) {
    name = expr.as<LiteralExpr>().value;  // should the parser give the unit as a word
  } else {
    return std::nullopt;
  }
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name.starts_with("SQL_TSI_")) name = name.substr(8);
  if (name == "MICROSECOND" || name == "FRAC_SECOND") return IntervalUnit::kMicrosecond;
  if (name == "SECOND") return IntervalUnit::kSecond;
  if (name == "MINUTE") return IntervalUnit::kMinute;
  if (name == "HOUR") return IntervalUnit::kHour;
  if (name == "DAY") return IntervalUnit::kDay;
  if (name == "WEEK") return IntervalUnit::kWeek;
  if (name == "MONTH") return IntervalUnit::kMonth;
  if (name == "QUARTER") return IntervalUnit::kQuarter;
  if (name == "YEAR") return IntervalUnit::kYear;
  return std::nullopt;
}

// Whole `unit`s from `a` to `b` (TIMESTAMPDIFF): months count only completed months.
int64_t timestamp_difference(IntervalUnit unit, const Temporal& a, const Temporal& b) {
  const int64_t micros = b.total_microseconds() - a.total_microseconds();
  switch (unit) {
    case IntervalUnit::kMicrosecond:
      return micros;
    case IntervalUnit::kSecond:
      return micros / kMicrosPerSecond;
    case IntervalUnit::kMinute:
      return micros / (60 * kMicrosPerSecond);
    case IntervalUnit::kHour:
      return micros / (3600 * kMicrosPerSecond);
    case IntervalUnit::kDay:
      return micros / (86400 * kMicrosPerSecond);
    case IntervalUnit::kWeek:
      return micros / (7 * 86400 * kMicrosPerSecond);
    default:
      break;
  }
  const bool backwards = micros < 0;
  const Temporal& from = backwards ? b : a;
  const Temporal& to = backwards ? a : b;
  int64_t months = (to.year - from.year) * 12 + (to.month - from.month);
  // The last month is complete only if `to`'s day and time reach `from`'s.
  const int64_t from_rest =
      ((from.day * 24 + from.hour) * 3600 + from.minute * 60 + from.second) * kMicrosPerSecond +
      from.microsecond;
  const int64_t to_rest =
      ((to.day * 24 + to.hour) * 3600 + to.minute * 60 + to.second) * kMicrosPerSecond +
      to.microsecond;
  if (to_rest < from_rest) --months;
  if (unit == IntervalUnit::kQuarter) months /= 3;
  if (unit == IntervalUnit::kYear) months /= 12;
  return backwards ? -months : months;
}

// Argument `i` as a DATE/DATETIME, or nullopt (a NULL result) when it is NULL or not a
// valid date (MySQL's warning 1292).
std::optional<Temporal> datetime_arg(const Args& args, size_t i) {
  const SqlValue v = args.value(i);
  std::optional<Temporal> t = parse_datetime(v);
  if (!t && !v.is_null()) args.warn(1292, "Incorrect datetime value: '" + v.to_text() + "'");
  return t;
}

}  // namespace

SqlValue extract_unit(IntervalUnit unit, const SqlValue& v) {
  if (v.is_null()) return v;
  const bool time_unit =
      unit == IntervalUnit::kHour || unit == IntervalUnit::kMinute ||
      unit == IntervalUnit::kSecond || unit == IntervalUnit::kMicrosecond ||
      unit == IntervalUnit::kHourMinute || unit == IntervalUnit::kHourSecond ||
      unit == IntervalUnit::kMinuteSecond || unit == IntervalUnit::kSecondMicrosecond ||
      unit == IntervalUnit::kMinuteMicrosecond || unit == IntervalUnit::kHourMicrosecond;
  std::optional<Temporal> t = parse_datetime(v);
  if (!t && time_unit) t = parse_time(v);
  if (!t) return SqlValue::null();
  const int64_t sign = t->negative ? -1 : 1;
  const int64_t hms = t->hour * 10000 + t->minute * 100 + t->second;
  switch (unit) {
    case IntervalUnit::kYear:
      return SqlValue::of_int(t->year);
    case IntervalUnit::kQuarter:
      return SqlValue::of_int((t->month + 2) / 3);
    case IntervalUnit::kMonth:
      return SqlValue::of_int(t->month);
    case IntervalUnit::kDay:
      return SqlValue::of_int(t->day);
    case IntervalUnit::kHour:
      return SqlValue::of_int(sign * t->hour);
    case IntervalUnit::kMinute:
      return SqlValue::of_int(sign * t->minute);
    case IntervalUnit::kSecond:
      return SqlValue::of_int(sign * t->second);
    case IntervalUnit::kMicrosecond:
      return SqlValue::of_int(sign * t->microsecond);
    case IntervalUnit::kYearMonth:
      return SqlValue::of_int(t->year * 100 + t->month);
    case IntervalUnit::kDayHour:
      return SqlValue::of_int(t->day * 100 + t->hour);
    case IntervalUnit::kDayMinute:
      return SqlValue::of_int((t->day * 100 + t->hour) * 100 + t->minute);
    case IntervalUnit::kDaySecond:
      return SqlValue::of_int(t->day * 1000000 + hms);
    case IntervalUnit::kDayMicrosecond:
      return SqlValue::of_int((t->day * 1000000 + hms) * kMicrosPerSecond + t->microsecond);
    case IntervalUnit::kHourMinute:
      return SqlValue::of_int(sign * (t->hour * 100 + t->minute));
    case IntervalUnit::kHourSecond:
      return SqlValue::of_int(sign * hms);
    case IntervalUnit::kMinuteSecond:
      return SqlValue::of_int(sign * (t->minute * 100 + t->second));
    case IntervalUnit::kHourMicrosecond:
      return SqlValue::of_int(sign * (hms * kMicrosPerSecond + t->microsecond));
    case IntervalUnit::kMinuteMicrosecond:
      return SqlValue::of_int(sign *
                              ((t->minute * 100 + t->second) * kMicrosPerSecond + t->microsecond));
    case IntervalUnit::kSecondMicrosecond:
      return SqlValue::of_int(sign * (t->second * kMicrosPerSecond + t->microsecond));
    case IntervalUnit::kWeek: {
      int64_t year = 0;
      return SqlValue::of_int(calc_week(*t, week_mode(0), &year));
    }
  }
  return SqlValue::null();
}

SqlValue add_interval(const SqlValue& v, const SqlValue& amount, IntervalUnit unit, bool subtract) {
  if (v.is_null() || amount.is_null()) return SqlValue::null();
  std::optional<Temporal> t = parse_datetime(v);
  if (!t) return SqlValue::null();
  // The interval as (months, microseconds), read from a number or from the fields of
  // a compound string like '1 10:30:05.5' for DAY_MICROSECOND.
  int64_t months = 0, micros = 0;
  const int64_t second = kMicrosPerSecond;
  // Units of the fields of a compound interval, largest first, in microseconds.
  std::vector<int64_t> fields;
  bool month_unit = false;
  int fraction_digits = 0;
  switch (unit) {
    case IntervalUnit::kYear:
    case IntervalUnit::kQuarter:
    case IntervalUnit::kMonth:
    case IntervalUnit::kYearMonth:
      month_unit = true;
      break;
    default:
      break;
  }
  if (unit == IntervalUnit::kYearMonth) {
    fields = {12, 1};
  } else if (unit == IntervalUnit::kDayHour) {
    fields = {86400 * second, 3600 * second};
  } else if (unit == IntervalUnit::kDayMinute) {
    fields = {86400 * second, 3600 * second, 60 * second};
  } else if (unit == IntervalUnit::kDaySecond) {
    fields = {86400 * second, 3600 * second, 60 * second, second};
  } else if (unit == IntervalUnit::kDayMicrosecond) {
    fields = {86400 * second, 3600 * second, 60 * second, second, 1};
  } else if (unit == IntervalUnit::kHourMinute) {
    fields = {3600 * second, 60 * second};
  } else if (unit == IntervalUnit::kHourSecond) {
    fields = {3600 * second, 60 * second, second};
  } else if (unit == IntervalUnit::kHourMicrosecond) {
    fields = {3600 * second, 60 * second, second, 1};
  } else if (unit == IntervalUnit::kMinuteSecond) {
    fields = {60 * second, second};
  } else if (unit == IntervalUnit::kMinuteMicrosecond) {
    fields = {60 * second, second, 1};
  } else if (unit == IntervalUnit::kSecondMicrosecond) {
    fields = {second, 1};
  }
  bool negative = false;
  if (!fields.empty()) {
    // Compound: the digit groups fill the fields from the right (MySQL: '1:30'
    // HOUR_SECOND is 1 minute 30 seconds).
    const std::string text = amount.to_text();
    negative = text.find('-') != std::string::npos && text.find('-') == text.find_first_not_of(' ');
    std::vector<std::string> numbers;
    std::string current;
    for (char c : text + " ") {
      if (std::isdigit(static_cast<unsigned char>(c))) {
        current += c;
      } else if (!current.empty()) {
        numbers.push_back(current.substr(0, 18));
        current.clear();
      }
    }
    if (numbers.size() > fields.size()) return SqlValue::null();
    const size_t offset = fields.size() - numbers.size();
    for (size_t k = 0; k < numbers.size(); ++k) {
      int64_t n = std::stoll(numbers[k]);
      if (month_unit) {
        months += n * fields[offset + k];
        continue;
      }
      if (fields[offset + k] == 1) {
        // Microseconds are written as a fraction: '1.5' SECOND_MICROSECOND is 1.5 s.
        for (size_t digits = numbers[k].size(); digits < 6; ++digits) n *= 10;
        fraction_digits = 6;
      }
      micros += n * fields[offset + k];
    }
  } else {
    // A single unit: the amount rounded to an integer (MICROSECOND keeps digits).
    const double d = amount.to_double();
    const int64_t n = amount.kind == SqlValue::Kind::kInt ? amount.i : std::llround(d);
    negative = n < 0;
    const int64_t magnitude = n < 0 ? -n : n;
    switch (unit) {
      case IntervalUnit::kYear:
        months = magnitude * 12;
        break;
      case IntervalUnit::kQuarter:
        months = magnitude * 3;
        break;
      case IntervalUnit::kMonth:
        months = magnitude;
        break;
      case IntervalUnit::kWeek:
        micros = magnitude * 7 * 86400 * second;
        break;
      case IntervalUnit::kDay:
        micros = magnitude * 86400 * second;
        break;
      case IntervalUnit::kHour:
        micros = magnitude * 3600 * second;
        break;
      case IntervalUnit::kMinute:
        micros = magnitude * 60 * second;
        break;
      case IntervalUnit::kSecond:
        micros = magnitude * second;
        break;
      case IntervalUnit::kMicrosecond:
        micros = magnitude;
        fraction_digits = 6;
        break;
      default:
        break;
    }
  }
  if (negative != subtract) {
    months = -months;
    micros = -micros;
  }
  // A DATE stays a DATE under a unit of whole days or more (INTERVAL 24 HOUR makes a
  // DATETIME even though it is a whole day).
  const bool day_unit = unit == IntervalUnit::kDay || unit == IntervalUnit::kWeek ||
                        unit == IntervalUnit::kMonth || unit == IntervalUnit::kQuarter ||
                        unit == IntervalUnit::kYear || unit == IntervalUnit::kYearMonth;
  const bool date_result = t->kind == Temporal::Kind::kDate && day_unit;
  if (months != 0) {
    int64_t index = t->year * 12 + (t->month - 1) + months;
    if (index < 12 || index >= 10000 * 12) return SqlValue::null();
    t->year = index / 12;
    t->month = index % 12 + 1;
    t->day = std::min(t->day, days_in_month(t->year, t->month));
  }
  std::optional<Temporal> r = datetime_from_microseconds(
      t->total_microseconds() + micros, std::max(t->fraction_digits, fraction_digits));
  if (!r) return SqlValue::null();
  if (date_result) r->kind = Temporal::Kind::kDate;
  return text_of(*r);
}

std::optional<SqlValue> call_temporal_function(const Args& args) {
  const std::string& name = args.name();
  if (name == "SYSDATE") return text_of(datetime_at(wall_clock_us(), fsp_argument(args)));
  if (name == "NOW" || name == "CURRENT_TIMESTAMP" || name == "LOCALTIME" ||
      name == "LOCALTIMESTAMP" || name == "UTC_TIMESTAMP") {
    return text_of(current_datetime(args, fsp_argument(args)));
  }
  if (name == "CURDATE" || name == "CURRENT_DATE" || name == "UTC_DATE") {
    args.need(0);
    Temporal t = current_datetime(args, 0);
    t.kind = Temporal::Kind::kDate;
    return text_of(t);
  }
  if (name == "CURTIME" || name == "CURRENT_TIME" || name == "UTC_TIME") {
    Temporal t = current_datetime(args, fsp_argument(args));
    t.kind = Temporal::Kind::kTime;
    return text_of(t);
  }
  if (name == "UNIX_TIMESTAMP") {
    args.need_between(0, 1);
    if (args.size() == 0) {
      const Temporal now = current_datetime(args, 0);
      return SqlValue::of_int(now.total_microseconds() / kMicrosPerSecond -
                              Temporal{Temporal::Kind::kDate, 1970, 1, 1}.day_number() * 86400);
    }
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    std::optional<Temporal> t = parse_datetime(v);
    if (!t) return SqlValue::null();
    const int64_t epoch_micros = Temporal{Temporal::Kind::kDate, 1970, 1, 1}.total_microseconds();
    const int64_t micros = t->total_microseconds() - epoch_micros;
    // Outside 1970-01-01 00:00:01 .. 2038 MySQL gives 0.
    if (micros < 0) return SqlValue::of_int(0);
    if (t->fraction_digits == 0) return SqlValue::of_int(micros / kMicrosPerSecond);
    char buffer[48];
    std::snprintf(buffer, sizeof(buffer), "%lld.%06lld",
                  static_cast<long long>(micros / kMicrosPerSecond),
                  static_cast<long long>(micros % kMicrosPerSecond));
    std::string text = buffer;
    text.resize(text.size() - static_cast<size_t>(6 - t->fraction_digits));
    return SqlValue::of_decimal(text);
  }
  if (name == "FROM_UNIXTIME") {
    args.need_between(1, 2);
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    const int digits = std::min(6, decimal_scale(v) + (v.kind == SqlValue::Kind::kDouble ? 6 : 0));
    const double seconds = v.to_double();
    if (seconds < 0 || seconds > 32536771199.0) return SqlValue::null();
    const int64_t epoch_micros = Temporal{Temporal::Kind::kDate, 1970, 1, 1}.total_microseconds();
    const int64_t micros =
        v.kind == SqlValue::Kind::kInt
            ? v.i * kMicrosPerSecond
            : static_cast<int64_t>(std::llround(seconds * static_cast<double>(kMicrosPerSecond)));
    std::optional<Temporal> t = datetime_from_microseconds(epoch_micros + micros, digits);
    if (!t) return SqlValue::null();
    if (args.size() == 2) {
      SqlValue format = args.value(1);
      if (format.is_null()) return format;
      return SqlValue::of_string(format_temporal(*t, format.to_text()));
    }
    return text_of(*t);
  }
  if (name == "DATE" || name == "TIMESTAMP") {
    args.need(1);
    std::optional<Temporal> t = datetime_arg(args, 0);
    if (!t) return SqlValue::null();
    if (name == "DATE") {
      t->kind = Temporal::Kind::kDate;
    } else {
      t->kind = Temporal::Kind::kDatetime;
    }
    return text_of(*t);
  }
  if (name == "TIME") {
    args.need(1);
    std::optional<Temporal> t = parse_time(args.value(0));
    return t ? text_of(*t) : SqlValue::null();
  }
  if (name == "YEAR" || name == "MONTH" || name == "DAY" || name == "DAYOFMONTH" ||
      name == "QUARTER") {
    args.need(1);
    return extract_unit(name == "YEAR"      ? IntervalUnit::kYear
                        : name == "MONTH"   ? IntervalUnit::kMonth
                        : name == "QUARTER" ? IntervalUnit::kQuarter
                                            : IntervalUnit::kDay,
                        args.value(0));
  }
  if (name == "HOUR" || name == "MINUTE" || name == "SECOND" || name == "MICROSECOND") {
    args.need(1);
    std::optional<Temporal> t = parse_time(args.value(0));
    if (!t) return SqlValue::null();
    const int64_t v = name == "HOUR"     ? t->hour
                      : name == "MINUTE" ? t->minute
                      : name == "SECOND" ? t->second
                                         : t->microsecond;
    return SqlValue::of_int(v);
  }
  if (name == "DAYOFWEEK" || name == "WEEKDAY" || name == "DAYOFYEAR" || name == "DAYNAME" ||
      name == "MONTHNAME" || name == "TO_DAYS" || name == "LAST_DAY") {
    args.need(1);
    std::optional<Temporal> t = datetime_arg(args, 0);
    if (!t) return SqlValue::null();
    if (name == "DAYOFWEEK") return SqlValue::of_int((weekday(*t) + 1) % 7 + 1);
    if (name == "WEEKDAY") return SqlValue::of_int(weekday(*t));
    if (name == "DAYNAME") return SqlValue::of_string(kDayNames[weekday(*t)]);
    if (name == "MONTHNAME") return SqlValue::of_string(kMonthNames[t->month - 1]);
    if (name == "TO_DAYS") return SqlValue::of_int(t->day_number());
    if (name == "LAST_DAY") {
      t->kind = Temporal::Kind::kDate;
      t->day = days_in_month(t->year, t->month);
      return text_of(*t);
    }
    return SqlValue::of_int(t->day_number() -
                            Temporal{Temporal::Kind::kDate, t->year, 1, 1}.day_number() + 1);
  }
  if (name == "WEEK" || name == "YEARWEEK" || name == "WEEKOFYEAR") {
    if (name == "WEEKOFYEAR") {
      args.need(1);
    } else {
      args.need_between(1, 2);
    }
    std::optional<Temporal> t = datetime_arg(args, 0);
    if (!t) return SqlValue::null();
    // The default mode is default_week_format (0); WEEKOFYEAR is mode 3.
    int64_t mode = name == "WEEKOFYEAR" ? 3 : 0;
    if (args.size() == 2) {
      SqlValue m = args.value(1);
      if (m.is_null()) return SqlValue::null();
      mode = m.to_int();
    }
    int64_t year = 0;
    if (name == "YEARWEEK") {
      const int64_t week = calc_week(*t, week_mode(mode) | kWeekYear, &year);
      return SqlValue::of_int(year * 100 + week);
    }
    return SqlValue::of_int(calc_week(*t, week_mode(mode), &year));
  }
  if (name == "FROM_DAYS") {
    args.need(1);
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    std::optional<Temporal> t = date_from_day_number(v.to_int());
    return t ? text_of(*t) : SqlValue::of_string("0000-00-00");
  }
  if (name == "MAKEDATE") {
    args.need(2);
    SqlValue year = args.value(0), day = args.value(1);
    if (year.is_null() || day.is_null() || day.to_int() < 1) return SqlValue::null();
    int64_t y = year.to_int();
    if (y < 100) y += y < 70 ? 2000 : 1900;
    std::optional<Temporal> t = date_from_day_number(
        Temporal{Temporal::Kind::kDate, y, 1, 1}.day_number() + day.to_int() - 1);
    return t ? text_of(*t) : SqlValue::null();
  }
  if (name == "DATE_FORMAT" || name == "TIME_FORMAT") {
    args.need(2);
    SqlValue v = args.value(0), format = args.value(1);
    if (v.is_null() || format.is_null()) return SqlValue::null();
    std::optional<Temporal> t = name == "DATE_FORMAT" ? parse_datetime(v) : parse_time(v);
    if (!t && name == "DATE_FORMAT") {
      // DATE_FORMAT of a TIME value formats today's date with that time in MySQL; a
      // bare TIME string is rare here, so it is treated as invalid.
      return SqlValue::null();
    }
    if (!t) return SqlValue::null();
    return SqlValue::of_string(format_temporal(*t, format.to_text()));
  }
  if (name == "STR_TO_DATE") {
    args.need(2);
    SqlValue v = args.value(0), format = args.value(1);
    if (v.is_null() || format.is_null()) return SqlValue::null();
    std::optional<Temporal> t = parse_with_format(v.to_text(), format.to_text());
    return t ? text_of(*t) : SqlValue::null();
  }
  if (name == "DATEDIFF") {
    args.need(2);
    std::optional<Temporal> a = datetime_arg(args, 0);
    std::optional<Temporal> b = datetime_arg(args, 1);
    if (!a || !b) return SqlValue::null();
    return SqlValue::of_int(a->day_number() - b->day_number());
  }
  if (name == "TIMEDIFF") {
    args.need(2);
    SqlValue x = args.value(0), y = args.value(1);
    std::optional<Temporal> a = parse_datetime(x), b = parse_datetime(y);
    if (!a || a->kind == Temporal::Kind::kDate) a = parse_time(x);
    if (!b || b->kind == Temporal::Kind::kDate) b = parse_time(y);
    if (!a || !b || (a->kind == Temporal::Kind::kTime) != (b->kind == Temporal::Kind::kTime)) {
      return SqlValue::null();
    }
    return text_of(time_from_microseconds(a->total_microseconds() - b->total_microseconds(),
                                          std::max(a->fraction_digits, b->fraction_digits)));
  }
  if (name == "ADDTIME" || name == "SUBTIME") {
    // ADDTIME(datetime_or_time, time): the first argument's type, moved by the time.
    args.need(2);
    SqlValue x = args.value(0), y = args.value(1);
    if (x.is_null() || y.is_null()) return SqlValue::null();
    std::optional<Temporal> base = parse_datetime(x);
    if (!base || base->kind == Temporal::Kind::kDate) base = parse_time(x);
    std::optional<Temporal> delta = parse_time(y);
    if (!base || !delta) return SqlValue::null();
    const int64_t micros =
        name == "ADDTIME" ? delta->total_microseconds() : -delta->total_microseconds();
    const int digits = std::max(base->fraction_digits, delta->fraction_digits);
    if (base->kind == Temporal::Kind::kTime) {
      return text_of(time_from_microseconds(base->total_microseconds() + micros, digits));
    }
    std::optional<Temporal> r =
        datetime_from_microseconds(base->total_microseconds() + micros, digits);
    return r ? text_of(*r) : SqlValue::null();
  }
  if (name == "MAKETIME") {
    args.need(3);
    SqlValue h = args.value(0), m = args.value(1), sec = args.value(2);
    if (h.is_null() || m.is_null() || sec.is_null()) return SqlValue::null();
    const int64_t minute = m.to_int(), second = sec.to_int();
    if (minute < 0 || minute > 59 || second < 0 || second > 59) return SqlValue::null();
    const int64_t hour = h.to_int();
    const int64_t magnitude = ((hour < 0 ? -hour : hour) * 3600 + minute * 60 + second);
    return text_of(
        time_from_microseconds((hour < 0 ? -magnitude : magnitude) * kMicrosPerSecond, 0));
  }
  if (name == "TIME_TO_SEC") {
    args.need(1);
    std::optional<Temporal> t = parse_time(args.value(0));
    if (!t) return SqlValue::null();
    return SqlValue::of_int(t->total_microseconds() / kMicrosPerSecond);
  }
  if (name == "SEC_TO_TIME") {
    args.need(1);
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    return text_of(time_from_microseconds(v.to_int() * kMicrosPerSecond, 0));
  }
  if (name == "TIMESTAMPDIFF") {
    args.need(3);
    std::optional<IntervalUnit> unit = unit_argument(args.expr(0));
    if (!unit) throw_not_supported("TIMESTAMPDIFF unit '" + to_sql(args.expr(0)) + "'");
    std::optional<Temporal> a = datetime_arg(args, 1);
    std::optional<Temporal> b = datetime_arg(args, 2);
    if (!a || !b) return SqlValue::null();
    return SqlValue::of_int(timestamp_difference(*unit, *a, *b));
  }
  if (name == "TIMESTAMPADD") {
    args.need(3);
    std::optional<IntervalUnit> unit = unit_argument(args.expr(0));
    if (!unit) throw_not_supported("TIMESTAMPADD unit '" + to_sql(args.expr(0)) + "'");
    return add_interval(args.value(2), args.value(1), *unit, /*subtract=*/false);
  }
  if (name == "DATE_ADD" || name == "DATE_SUB" || name == "ADDDATE" || name == "SUBDATE") {
    args.need(2);
    const bool subtract = name == "DATE_SUB" || name == "SUBDATE";
    const Expr& interval = args.expr(1);
    if (interval.kind == ExprKind::kInterval) {
      const auto& i = interval.as<IntervalExpr>();
      return add_interval(args.value(0), evaluate(*i.value, args.context()), i.unit, subtract);
    }
    // ADDDATE(d, n) / SUBDATE(d, n): n days.
    return add_interval(args.value(0), args.value(1), IntervalUnit::kDay, subtract);
  }
  return std::nullopt;
}

}  // namespace duo::sql::executor::functions_internal
