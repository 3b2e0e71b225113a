// MySQL's date formats and week numbering for the temporal functions: DATE_FORMAT /
// TIME_FORMAT specifiers, STR_TO_DATE parsing, and WEEK()'s modes (calc_week).
//
// Thread-safety: pure functions over caller-owned inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sql-frontend/executor/temporal.h"

namespace duo::sql::executor {

// English day names, Monday first (index = weekday()), and month names, January first.
extern const char* const kDayNames[7];
extern const char* const kMonthNames[12];

// Week numbering flags (MySQL's calc_week).
inline constexpr unsigned kWeekMondayFirst = 1;   // weeks start on Monday (else Sunday)
inline constexpr unsigned kWeekYear = 2;          // week 0 belongs to the previous year (1..53)
inline constexpr unsigned kWeekFirstWeekday = 4;  // week 1 is the first with the first weekday

// WEEK()'s mode argument (0..7) as calc_week flags.
unsigned week_mode(int64_t mode);
// The week of date `t` under `flags`, and in *year the year that week belongs to.
int64_t calc_week(const Temporal& t, unsigned flags, int64_t* year);

// DATE_FORMAT / TIME_FORMAT: `t` written with MySQL's % specifiers.
std::string format_temporal(const Temporal& t, const std::string& format);
// STR_TO_DATE(text, format): a DATE, TIME or DATETIME (by the specifiers the format
// uses), or nullopt when the text does not match or is not a valid date.
std::optional<Temporal> parse_with_format(const std::string& text, const std::string& format);

}  // namespace duo::sql::executor
