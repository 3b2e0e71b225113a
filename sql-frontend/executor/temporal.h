// Temporal values for the date and time functions: parsing MySQL's many spellings of a
// date, datetime or time (strings with any punctuation, YYYYMMDD numbers ...) into
// fields, calendar arithmetic, and the canonical text SqlValue carries them as
// ("2024-01-31", "2024-01-31 10:00:00.5", "-838:59:59").
//
// Why text: SqlValue keeps temporal values in the canonical text form, which sorts as
// the value does and is what the storage layer parses and the protocol sends; the
// functions parse it into a Temporal when they need its fields.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sql-frontend/executor/sql_value.h"

namespace duo::sql::executor {

struct Temporal {
  enum class Kind : uint8_t { kDate, kDatetime, kTime };
  Kind kind = Kind::kDatetime;
  int64_t year = 0, month = 0, day = 0;
  int64_t hour = 0, minute = 0, second = 0, microsecond = 0;  // TIME: hour may exceed 23
  bool negative = false;                                      // TIME only
  int fraction_digits = 0;                                    // digits of the fraction shown (0..6)

  // The canonical text of the value for its kind.
  std::string to_text() const;
  // The value as a SqlValue (its text, tagged with its temporal type).
  SqlValue to_value() const;
  // Days since 0000-00-00 as MySQL's TO_DAYS counts them (dates only).
  int64_t day_number() const;
  // Microseconds since day_number 0 (DATE/DATETIME) or of the signed TIME.
  int64_t total_microseconds() const;
};

// A DATE or DATETIME from `v` (strings in any of MySQL's delimited or packed forms,
// integers YYYYMMDD[HHMMSS]); nullopt when it is not a valid date.
std::optional<Temporal> parse_datetime(const SqlValue& v);
// A TIME from `v` ("[-][D ]HH:MM[:SS[.f]]", HHMMSS numbers, or a datetime's time part).
std::optional<Temporal> parse_time(const SqlValue& v);
// The date of day number `days` (inverse of day_number), nullopt outside 0001..9999.
std::optional<Temporal> date_from_day_number(int64_t days);
// A DATETIME of microseconds since day 0, nullopt outside 0001..9999.
std::optional<Temporal> datetime_from_microseconds(int64_t micros, int fraction_digits);
// A TIME of signed microseconds, clamped to MySQL's +-838:59:59.
Temporal time_from_microseconds(int64_t micros, int fraction_digits);
int64_t days_in_month(int64_t year, int64_t month);
// 0 = Monday ... 6 = Sunday.
int64_t weekday(const Temporal& date);

// The process's real clock: microseconds since the Unix epoch (UTC, the server's time
// zone).
int64_t wall_clock_us();
// The datetime `epoch_us` microseconds after the Unix epoch, with `fraction_digits`
// shown (the rest truncated, as NOW(fsp)).
Temporal datetime_at(int64_t epoch_us, int fraction_digits);

}  // namespace duo::sql::executor
