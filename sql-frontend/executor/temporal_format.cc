// Date formats and week numbering; see temporal_format.h.
#include "sql-frontend/executor/temporal_format.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace duo::sql::executor {

const char* const kDayNames[7] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                  "Friday", "Saturday", "Sunday"};
const char* const kMonthNames[12] = {"January",   "February", "March",    "April",
                                     "May",       "June",     "July",     "August",
                                     "September", "October",  "November", "December"};

namespace {

int64_t days_in_year(int64_t year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 366 : 365;
}

std::string two_digits(int64_t v) {
  char buffer[24];
  std::snprintf(buffer, sizeof(buffer), "%02lld", static_cast<long long>(v));
  return buffer;
}

std::string ordinal_suffix(int64_t day) {
  if (day % 100 >= 11 && day % 100 <= 13) return "th";
  switch (day % 10) {
    case 1:
      return "st";
    case 2:
      return "nd";
    case 3:
      return "rd";
    default:
      return "th";
  }
}
}  // namespace

unsigned week_mode(int64_t mode) {
  unsigned flags = static_cast<unsigned>(mode & 7);
  if ((flags & kWeekMondayFirst) == 0) flags ^= kWeekFirstWeekday;
  return flags;
}

int64_t calc_week(const Temporal& t, unsigned flags, int64_t* year) {
  const int64_t day_number = t.day_number();
  int64_t first_day_number = Temporal{Temporal::Kind::kDate, t.year, 1, 1}.day_number();
  const bool monday_first = (flags & kWeekMondayFirst) != 0;
  bool week_year = (flags & kWeekYear) != 0;
  const bool first_weekday = (flags & kWeekFirstWeekday) != 0;
  // 0 = the first day of the week (Monday or Sunday).
  int64_t weekday = (first_day_number + 5 + (monday_first ? 0 : 1)) % 7;
  *year = t.year;
  if (t.month == 1 && t.day <= 7 - weekday) {
    if (!week_year && ((first_weekday && weekday != 0) || (!first_weekday && weekday >= 4))) {
      return 0;
    }
    week_year = true;
    --*year;
    const int64_t days = days_in_year(*year);
    first_day_number -= days;
    weekday = (weekday + 53 * 7 - days) % 7;
  }
  int64_t days;
  if ((first_weekday && weekday != 0) || (!first_weekday && weekday >= 4)) {
    days = day_number - (first_day_number + (7 - weekday));
  } else {
    days = day_number - (first_day_number - weekday);
  }
  if (week_year && days >= 52 * 7) {
    weekday = (weekday + days_in_year(*year)) % 7;
    if ((!first_weekday && weekday < 4) || (first_weekday && weekday == 0)) {
      ++*year;
      return 1;
    }
  }
  return days / 7 + 1;
}
std::string format_temporal(const Temporal& t, const std::string& format) {
  std::string out;
  const int64_t hour12 = t.hour % 12 == 0 ? 12 : t.hour % 12;
  const bool has_date = t.kind != Temporal::Kind::kTime;
  for (size_t k = 0; k < format.size(); ++k) {
    if (format[k] != '%' || k + 1 == format.size()) {
      out += format[k];
      continue;
    }
    const char spec = format[++k];
    char buffer[32];
    switch (spec) {
      case 'Y':
        std::snprintf(buffer, sizeof(buffer), "%04lld", static_cast<long long>(t.year));
        out += buffer;
        break;
      case 'y':
        out += two_digits(t.year % 100);
        break;
      case 'm':
        out += two_digits(t.month);
        break;
      case 'c':
        out += std::to_string(t.month);
        break;
      case 'd':
        out += two_digits(t.day);
        break;
      case 'e':
        out += std::to_string(t.day);
        break;
      case 'D':
        out += std::to_string(t.day) + ordinal_suffix(t.day);
        break;
      case 'H':
        out += two_digits(t.hour);
        break;
      case 'k':
        out += std::to_string(t.hour);
        break;
      case 'h':
      case 'I':
        out += two_digits(hour12);
        break;
      case 'l':
        out += std::to_string(hour12);
        break;
      case 'i':
        out += two_digits(t.minute);
        break;
      case 's':
      case 'S':
        out += two_digits(t.second);
        break;
      case 'f':
        std::snprintf(buffer, sizeof(buffer), "%06lld", static_cast<long long>(t.microsecond));
        out += buffer;
        break;
      case 'p':
        out += t.hour % 24 < 12 ? "AM" : "PM";
        break;
      case 'r':
        out += two_digits(hour12) + ":" + two_digits(t.minute) + ":" + two_digits(t.second) +
               (t.hour % 24 < 12 ? " AM" : " PM");
        break;
      case 'T':
        out += two_digits(t.hour) + ":" + two_digits(t.minute) + ":" + two_digits(t.second);
        break;
      case 'W':
        if (has_date) out += kDayNames[weekday(t)];
        break;
      case 'a':
        if (has_date) out += std::string(kDayNames[weekday(t)]).substr(0, 3);
        break;
      case 'w':
        if (has_date) out += std::to_string((weekday(t) + 1) % 7);
        break;
      case 'M':
        if (t.month >= 1) out += kMonthNames[t.month - 1];
        break;
      case 'b':
        if (t.month >= 1) out += std::string(kMonthNames[t.month - 1]).substr(0, 3);
        break;
      case 'j':
        if (has_date) {
          std::snprintf(
              buffer, sizeof(buffer), "%03lld",
              static_cast<long long>(
                  t.day_number() - Temporal{Temporal::Kind::kDate, t.year, 1, 1}.day_number() + 1));
          out += buffer;
        }
        break;
      case 'U':
      case 'u':
      case 'V':
      case 'v':
        if (has_date) {
          int64_t year = 0;
          const unsigned flags = spec == 'U'   ? kWeekFirstWeekday
                                 : spec == 'u' ? kWeekMondayFirst
                                 : spec == 'V' ? kWeekYear | kWeekFirstWeekday
                                               : kWeekYear | kWeekMondayFirst;
          out += two_digits(calc_week(t, flags, &year));
        }
        break;
      case 'X':
      case 'x':
        if (has_date) {
          int64_t year = 0;
          calc_week(t, spec == 'X' ? kWeekYear | kWeekFirstWeekday : kWeekYear | kWeekMondayFirst,
                    &year);
          std::snprintf(buffer, sizeof(buffer), "%04lld", static_cast<long long>(year));
          out += buffer;
        }
        break;
      default:
        out += spec;  // %% and unknown specifiers print the character itself
        break;
    }
  }
  return out;
}

std::optional<Temporal> parse_with_format(const std::string& text, const std::string& format) {
  Temporal t;
  bool date_part = false, time_part = false, pm = false, twelve_hour = false;
  t.year = 0;
  size_t at = 0;
  auto skip_spaces = [&] {
    while (at < text.size() && text[at] == ' ') ++at;
  };
  auto read_number = [&](size_t max_digits, int64_t* out) {
    skip_spaces();
    size_t n = 0;
    int64_t v = 0;
    while (at < text.size() && n < max_digits &&
           std::isdigit(static_cast<unsigned char>(text[at]))) {
      v = v * 10 + (text[at++] - '0');
      ++n;
    }
    *out = v;
    return n > 0;
  };
  auto read_name = [&](const char* const* names, size_t count, bool abbreviated, int64_t* index) {
    for (size_t i = 0; i < count; ++i) {
      const std::string name = abbreviated ? std::string(names[i]).substr(0, 3) : names[i];
      if (text.size() - at >= name.size() &&
          std::equal(name.begin(), name.end(), text.begin() + static_cast<std::ptrdiff_t>(at),
                     [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
        at += name.size();
        *index = static_cast<int64_t>(i);
        return true;
      }
    }
    return false;
  };
  for (size_t k = 0; k < format.size(); ++k) {
    if (format[k] != '%' || k + 1 == format.size()) {
      if (format[k] == ' ') {
        skip_spaces();
        continue;
      }
      if (at >= text.size() || text[at] != format[k]) return std::nullopt;
      ++at;
      continue;
    }
    const char spec = format[++k];
    int64_t v = 0;
    bool ok = true;
    switch (spec) {
      case 'Y':
        ok = read_number(4, &t.year);
        date_part = true;
        break;
      case 'y':
        ok = read_number(2, &v);
        t.year = v < 70 ? 2000 + v : 1900 + v;
        date_part = true;
        break;
      case 'm':
      case 'c':
        ok = read_number(2, &t.month);
        date_part = true;
        break;
      case 'd':
      case 'e':
        ok = read_number(2, &t.day);
        date_part = true;
        break;
      case 'H':
      case 'k':
        ok = read_number(2, &t.hour);
        time_part = true;
        break;
      case 'h':
      case 'I':
      case 'l':
        ok = read_number(2, &t.hour);
        twelve_hour = true;
        time_part = true;
        break;
      case 'i':
        ok = read_number(2, &t.minute);
        time_part = true;
        break;
      case 's':
      case 'S':
        ok = read_number(2, &t.second);
        time_part = true;
        break;
      case 'f': {
        const size_t start = at;
        ok = read_number(6, &v);
        std::string digits = text.substr(start, at - start);
        digits.resize(6, '0');
        t.microsecond = std::stoll(digits);
        t.fraction_digits = 6;
        time_part = true;
        break;
      }
      case 'p':
        skip_spaces();
        if (text.size() - at >= 2 &&
            (std::toupper(text[at]) == 'A' || std::toupper(text[at]) == 'P') &&
            std::toupper(text[at + 1]) == 'M') {
          pm = std::toupper(text[at]) == 'P';
          at += 2;
        } else {
          ok = false;
        }
        break;
      case 'T':
        ok = read_number(2, &t.hour) && at < text.size() && text[at++] == ':' &&
             read_number(2, &t.minute) && at < text.size() && text[at++] == ':' &&
             read_number(2, &t.second);
        time_part = true;
        break;
      case 'M':
      case 'b':
        ok = read_name(kMonthNames, 12, spec == 'b', &v);
        t.month = v + 1;
        date_part = true;
        break;
      case 'W':
      case 'a':
        ok = read_name(kDayNames, 7, spec == 'a', &v);
        break;
      case '%':
        ok = at < text.size() && text[at++] == '%';
        break;
      default:
        return std::nullopt;
    }
    if (!ok) return std::nullopt;
  }
  if (twelve_hour) {
    if (t.hour < 1 || t.hour > 12) return std::nullopt;
    t.hour = t.hour % 12 + (pm ? 12 : 0);
  }
  if (t.hour > 23 || t.minute > 59 || t.second > 59) return std::nullopt;
  if (date_part) {
    // MySQL accepts zero month/day parts here only outside NO_ZERO_IN_DATE; a missing
    // part is an incomplete date, which the strict default rejects.
    if (t.month < 1 || t.month > 12 || t.day < 1 || t.day > days_in_month(t.year, t.month) ||
        t.year < 1 || t.year > 9999) {
      return std::nullopt;
    }
    t.kind = time_part ? Temporal::Kind::kDatetime : Temporal::Kind::kDate;
  } else {
    t.kind = Temporal::Kind::kTime;
  }
  return t;
}
}  // namespace duo::sql::executor
