// Column encodings: validation, text parse/format, comparison, hashing and normalized
// prefixes for every ColumnType. The byte layouts are documented in column.h; this file
// is the single implementation of them, so the row layer, the indexes, the scan filters
// and the client library all agree on order, equality and hash.
//
// Thread-safety: every function here is pure (no shared state); safe from any thread.
//
// Robustness: stored values are trusted to have the right size, but a short or long value
// (corruption, a bad constant) must never read out of bounds, so every load is bounded by
// the value's size and missing bytes read as zero.
#include "storage/row/column.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>

#include "storage/row/collation.h"

namespace duo::storage {
namespace {

using uint128 = unsigned __int128;  // g++ extension; integer parsing headroom

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kSecondsPerDay = 86'400;
constexpr uint32_t kLobHeaderBytes = 8;  // BLOB/TEXT: little-endian total length

// MySQL limits (DECIMAL precision/scale, fractional seconds) and our byte limits.
constexpr uint8_t kDecimalPrecisionMax = 65;
constexpr uint8_t kDecimalScaleMax = 30;
constexpr uint8_t kFractionalDigitsMax = 6;
constexpr uint32_t kCharLengthBytesMax = 1020;    // CHAR(255) in a 4-byte character set
constexpr uint32_t kBinaryLengthBytesMax = 255;   // BINARY(255)
constexpr uint32_t kVarLengthBytesMax = 65535;    // VARCHAR/VARBINARY/BLOB inline part
constexpr size_t kIdentifierLengthMax = 64;       // MySQL identifier limit

// TIME range: MySQL allows exactly -838:59:59 .. 838:59:59 (no fraction at the ends).
constexpr int64_t kTimeSecondsMax = 838 * 3600 + 59 * 60 + 59;
// TIMESTAMP range: 1970-01-01 00:00:01 .. 2038-01-19 03:14:07.999999 UTC.
constexpr int64_t kTimestampMicrosMin = 1 * kMicrosPerSecond;
constexpr int64_t kTimestampMicrosMax =
    int64_t{std::numeric_limits<int32_t>::max()} * kMicrosPerSecond + 999'999;

// DATETIME bit fields (see column.h).
constexpr int kDatetimeDateShift = 37;
constexpr int kDatetimeHourShift = 32;
constexpr int kDatetimeMinuteShift = 26;
constexpr int kDatetimeSecondShift = 20;

// ---------------------------------------------------------------------------------------
// Byte helpers

// Little-endian load of up to `width_bytes` bytes; bytes past the end of `v` read as 0.
uint64_t load_le(std::string_view v, size_t width_bytes) {
  uint64_t x = 0;
  const size_t n = std::min(v.size(), width_bytes);
  for (size_t i = 0; i < n; ++i) x |= uint64_t{static_cast<uint8_t>(v[i])} << (8 * i);
  return x;
}

void store_le(std::string* out, uint64_t x, size_t width_bytes) {
  for (size_t i = 0; i < width_bytes; ++i) out->push_back(static_cast<char>(x >> (8 * i)));
}

uint32_t int_width_bytes(ColumnType type) {
  switch (type) {
    case ColumnType::kTinyInt: return 1;
    case ColumnType::kSmallInt: return 2;
    case ColumnType::kMediumInt: return 3;
    case ColumnType::kInt: return 4;
    case ColumnType::kBigInt: return 8;
    default: return 0;
  }
}

int64_t signed_min(uint32_t width_bytes) {
  return width_bytes >= 8 ? std::numeric_limits<int64_t>::min()
                          : -(int64_t{1} << (8 * width_bytes - 1));
}
int64_t signed_max(uint32_t width_bytes) {
  return width_bytes >= 8 ? std::numeric_limits<int64_t>::max()
                          : (int64_t{1} << (8 * width_bytes - 1)) - 1;
}
uint64_t unsigned_max(uint32_t width_bytes) {
  return width_bytes >= 8 ? std::numeric_limits<uint64_t>::max()
                          : (uint64_t{1} << (8 * width_bytes)) - 1;
}

int sign_of(int64_t a, int64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }
int sign_of_u(uint64_t a, uint64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

// memcmp order, shorter-is-smaller on a common prefix. Guards n == 0 because memcmp with
// a null string_view pointer is undefined even for zero bytes.
int compare_exact(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  if (n > 0) {
    const int c = std::memcmp(a.data(), b.data(), n);
    if (c != 0) return c < 0 ? -1 : 1;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// PAD SPACE: compare as if the shorter string were padded with spaces to the longer's
// length. Not the same as stripping trailing spaces: "a\x01" < "a" because 0x01 < ' '.
// Case-insensitive columns compare by weights (collation.h), which pad the same way.
int compare_pad_space(std::string_view a, std::string_view b, bool fold) {
  if (fold) return compare_case_insensitive(a, b);
  const size_t n = std::min(a.size(), b.size());
  if (n > 0) {
    const int c = std::memcmp(a.data(), b.data(), n);
    if (c != 0) return c < 0 ? -1 : 1;
  }
  for (size_t i = n; i < a.size(); ++i) {
    const uint8_t c = static_cast<uint8_t>(a[i]);
    if (c != ' ') return c < ' ' ? -1 : 1;
  }
  for (size_t i = n; i < b.size(); ++i) {
    const uint8_t c = static_cast<uint8_t>(b[i]);
    if (c != ' ') return c < ' ' ? 1 : -1;
  }
  return 0;
}

std::string_view strip_trailing_spaces(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// BLOB/TEXT: the inline bytes of the value (its whole value until parts exist).
std::string_view lob_inline(std::string_view v) {
  if (v.size() < kLobHeaderBytes) return {};
  const uint64_t total_bytes = load_le(v, kLobHeaderBytes);
  std::string_view rest = v.substr(kLobHeaderBytes);
  return rest.substr(0, std::min<uint64_t>(total_bytes, rest.size()));
}

// Types compared with PAD SPACE (trailing spaces insignificant). TEXT included: MySQL's
// PAD SPACE collations (including *_bin ones such as latin1_bin) ignore trailing spaces
// for TEXT as well.
bool is_pad_space_type(ColumnType type) {
  return type == ColumnType::kChar || type == ColumnType::kVarchar || type == ColumnType::kText;
}
bool folds_case(const ColumnDef& col) {
  return col.collation == Collation::kCaseInsensitive && is_pad_space_type(col.type);
}
// The bytes a string comparison looks at.
std::string_view string_payload(const ColumnDef& col, std::string_view v) {
  return (col.type == ColumnType::kText || col.type == ColumnType::kBlob) ? lob_inline(v) : v;
}

// ---------------------------------------------------------------------------------------
// Floating point: order-preserving unsigned keys. -0.0 is canonicalised to +0.0 so that
// compare, hash and prefix agree with SQL equality (-0 = 0).

uint32_t float_key(std::string_view v) {
  uint32_t bits = static_cast<uint32_t>(load_le(v, 4));
  if (bits == 0x8000'0000u) bits = 0;
  return (bits & 0x8000'0000u) ? ~bits : (bits | 0x8000'0000u);
}
uint64_t double_key(std::string_view v) {
  uint64_t bits = load_le(v, 8);
  if (bits == 0x8000'0000'0000'0000ull) bits = 0;
  return (bits & 0x8000'0000'0000'0000ull) ? ~bits : (bits | 0x8000'0000'0000'0000ull);
}
float load_float(std::string_view v) {
  const uint32_t bits = static_cast<uint32_t>(load_le(v, 4));
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
double load_double(std::string_view v) {
  const uint64_t bits = load_le(v, 8);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// ---------------------------------------------------------------------------------------
// Hash. DuoHash64 — STABLE: it decides which fragment and node own a row, so changing any
// constant or step below relocates every row of every table. Do not change it.
//
//   h = seed ^ (size_bytes * K1)
//   for each 8-byte little-endian word w of the input (the last one zero-padded):
//       h = mix((h ^ w) + K2)
//   return mix(h + K3)
//
// mix() is the splitmix64 finaliser (xor-shift / multiply, a bijection with full
// avalanche). The size enters the initial state, so zero padding cannot collide with
// real zero bytes. Multi-column keys chain: hash(col2, v2, hash(col1, v1, seed)).

constexpr uint64_t kHashK1 = 0x9E37'79B9'7F4A'7C15ull;
constexpr uint64_t kHashK2 = 0xD6E8'FEB8'6659'FD93ull;
constexpr uint64_t kHashK3 = 0xA076'1D64'78BD'642Full;

inline uint64_t hash_mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58'476D'1CE4'E5B9ull;
  x ^= x >> 27;
  x *= 0x94D0'49BB'1331'11EBull;
  x ^= x >> 31;
  return x;
}

uint64_t hash_bytes(std::string_view s, uint64_t seed) {
  uint64_t h = seed ^ (static_cast<uint64_t>(s.size()) * kHashK1);
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = std::min<size_t>(8, s.size() - i);
    uint64_t w = 0;
    for (size_t k = 0; k < n; ++k) w |= uint64_t{static_cast<uint8_t>(s[i + k])} << (8 * k);
    h = hash_mix((h ^ w) + kHashK2);
    i += n;
  }
  return hash_mix(h + kHashK3);
}

// ---------------------------------------------------------------------------------------
// DECIMAL: MySQL's binary format. The digits split into the integer part and the
// fraction; each part is stored in groups of 9 decimal digits in 4 big-endian bytes. The
// leftover integer digits (the most significant ones) come first in a short group, the
// leftover fraction digits (the least significant) last; a short group of k digits takes
// kDigitBytes[k] bytes. Negative values have every byte inverted; finally the top bit of
// the first byte is flipped, so memcmp order is numeric order.

constexpr int kDigitsPerGroup = 9;
constexpr uint8_t kDigitBytes[kDigitsPerGroup + 1] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};

// A decimal as sign + exactly p digits (p - s integer digits, then s fraction digits).
struct DecimalDigits {
  bool negative = false;
  std::string digits;
};

void put_digit_group(std::string* out, std::string_view digits) {
  uint32_t v = 0;
  for (char c : digits) v = v * 10 + static_cast<uint32_t>(c - '0');
  const int bytes = kDigitBytes[digits.size()];
  for (int b = bytes - 1; b >= 0; --b) out->push_back(static_cast<char>(v >> (8 * b)));
}

std::string encode_decimal(uint8_t precision, uint8_t scale, const DecimalDigits& d) {
  const int intg = precision - scale;
  std::string out;
  out.reserve(decimal_bin_size(precision, scale));
  std::string_view digits = d.digits;
  size_t pos = 0;
  auto put = [&](size_t count) {
    put_digit_group(&out, digits.substr(pos, count));
    pos += count;
  };
  if (intg % kDigitsPerGroup != 0) put(intg % kDigitsPerGroup);
  for (int g = 0; g < intg / kDigitsPerGroup; ++g) put(kDigitsPerGroup);
  for (int g = 0; g < scale / kDigitsPerGroup; ++g) put(kDigitsPerGroup);
  if (scale % kDigitsPerGroup != 0) put(scale % kDigitsPerGroup);
  if (d.negative) {
    for (char& c : out) c = static_cast<char>(~c);
  }
  if (!out.empty()) out[0] = static_cast<char>(out[0] ^ 0x80);
  return out;
}

// Reads one group of `count` digits; a corrupt group larger than its digits allow is
// printed in full rather than truncated (never crashes, and makes corruption visible).
void get_digit_group(std::string_view bytes, size_t* offset, size_t count, std::string* out) {
  const int nbytes = kDigitBytes[count];
  uint32_t v = 0;
  for (int b = 0; b < nbytes; ++b) v = (v << 8) | static_cast<uint8_t>(bytes[*offset + b]);
  *offset += static_cast<size_t>(nbytes);
  char buf[16];
  const int n = std::snprintf(buf, sizeof buf, "%0*u", static_cast<int>(count), v);
  out->append(buf, static_cast<size_t>(n));
}

// False when the size does not match the column.
bool decode_decimal(uint8_t precision, uint8_t scale, std::string_view value,
                    std::string* int_digits, std::string* frac_digits, bool* negative) {
  if (precision < scale || value.size() != decimal_bin_size(precision, scale) || value.empty()) {
    return false;
  }
  std::string bytes(value);
  *negative = (static_cast<uint8_t>(bytes[0]) & 0x80) == 0;
  bytes[0] = static_cast<char>(bytes[0] ^ 0x80);
  if (*negative) {
    for (char& c : bytes) c = static_cast<char>(~c);
  }
  const int intg = precision - scale;
  size_t offset = 0;
  if (intg % kDigitsPerGroup != 0) get_digit_group(bytes, &offset, intg % kDigitsPerGroup, int_digits);
  for (int g = 0; g < intg / kDigitsPerGroup; ++g) get_digit_group(bytes, &offset, kDigitsPerGroup, int_digits);
  for (int g = 0; g < scale / kDigitsPerGroup; ++g) get_digit_group(bytes, &offset, kDigitsPerGroup, frac_digits);
  if (scale % kDigitsPerGroup != 0) get_digit_group(bytes, &offset, scale % kDigitsPerGroup, frac_digits);
  return true;
}

// ---------------------------------------------------------------------------------------
// Numeric text: [+|-] digits [. digits] [e|E [+|-] digits], surrounded by optional
// whitespace (MySQL ignores leading and trailing spaces in numbers).

struct NumberText {
  bool negative = false;
  std::string digits;    // significant digits without leading or trailing zeros; "" = 0
  int64_t exponent = 0;  // value = digits * 10^exponent
};

std::string_view trim_spaces(std::string_view s) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Exponents are clamped far beyond any representable value so arithmetic never overflows.
constexpr int64_t kExponentClamp = 1'000'000;

bool parse_number_text(std::string_view text, NumberText* out) {
  std::string_view s = trim_spaces(text);
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    out->negative = s[i] == '-';
    ++i;
  }
  std::string mantissa;
  int64_t fraction_digits = 0;
  bool any_digit = false;
  while (i < s.size() && is_digit(s[i])) {
    mantissa.push_back(s[i++]);
    any_digit = true;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) {
      mantissa.push_back(s[i++]);
      ++fraction_digits;
      any_digit = true;
    }
  }
  if (!any_digit) return false;
  int64_t exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
      exp_negative = s[i] == '-';
      ++i;
    }
    if (i >= s.size() || !is_digit(s[i])) return false;
    while (i < s.size() && is_digit(s[i])) {
      exponent = std::min(exponent * 10 + (s[i] - '0'), kExponentClamp);
      ++i;
    }
    if (exp_negative) exponent = -exponent;
  }
  if (i != s.size()) return false;
  exponent -= fraction_digits;
  size_t first = mantissa.find_first_not_of('0');
  if (first == std::string::npos) {
    out->digits.clear();
    out->exponent = 0;
    return true;
  }
  size_t last = mantissa.find_last_not_of('0');
  exponent += static_cast<int64_t>(mantissa.size() - 1 - last);
  out->digits = mantissa.substr(first, last - first + 1);
  out->exponent = exponent;
  return true;
}

// Number of digits before the decimal point (may be <= 0 for values below 1).
int64_t integer_digit_count(const NumberText& n) {
  return static_cast<int64_t>(n.digits.size()) + n.exponent;
}

// Rounds half away from zero to an integer magnitude; false when it exceeds 2^64 - 1.
bool number_to_magnitude(const NumberText& n, uint128* magnitude) {
  *magnitude = 0;
  if (n.digits.empty()) return true;
  const int64_t int_len = integer_digit_count(n);
  if (int_len > 20) return false;
  uint128 m = 0;
  for (int64_t i = 0; i < int_len; ++i) {
    const int d = i < static_cast<int64_t>(n.digits.size()) ? n.digits[i] - '0' : 0;
    m = m * 10 + static_cast<unsigned>(d);
  }
  if (int_len >= 0 && int_len < static_cast<int64_t>(n.digits.size()) && n.digits[int_len] >= '5') {
    ++m;
  }
  if (m > std::numeric_limits<uint64_t>::max()) return false;
  *magnitude = m;
  return true;
}

// Rounds half away from zero to `scale` fraction digits; false when more than
// precision - scale integer digits remain.
bool number_to_decimal(const NumberText& n, uint8_t precision, uint8_t scale, DecimalDigits* out) {
  const int64_t intg = precision - scale;
  out->digits.assign(static_cast<size_t>(precision), '0');
  out->negative = n.negative;
  if (n.digits.empty()) {
    out->negative = false;
    return true;
  }
  const int64_t int_len = integer_digit_count(n);
  if (int_len > intg) return false;
  // digits[j] has weight 10^(int_len - 1 - j); slot i of out->digits has weight
  // 10^(intg - 1 - i), so slot = j + (intg - int_len).
  const int64_t offset = intg - int_len;
  bool round_up = false;
  for (size_t j = 0; j < n.digits.size(); ++j) {
    const int64_t slot = static_cast<int64_t>(j) + offset;
    if (slot < precision) {
      out->digits[static_cast<size_t>(slot)] = n.digits[j];
    } else {
      round_up = slot == precision && n.digits[j] >= '5';
      break;
    }
  }
  if (round_up) {
    int64_t i = precision - 1;
    for (; i >= 0; --i) {
      if (out->digits[i] == '9') {
        out->digits[i] = '0';
      } else {
        ++out->digits[i];
        break;
      }
    }
    if (i < 0) return false;  // 99.99 -> 100.00 no longer fits
  }
  if (out->digits.find_first_not_of('0') == std::string::npos) out->negative = false;
  return true;
}

// ---------------------------------------------------------------------------------------
// Messages (MySQL wording; the SQL layer may append " at row N").

std::string quoted_input(std::string_view text) {
  constexpr size_t kShownBytesMax = 64;
  std::string s(text.substr(0, kShownBytesMax));
  if (text.size() > kShownBytesMax) s += "...";
  return s;
}

Status incorrect_value(const ColumnDef& col, const char* what, std::string_view text) {
  return Status(ErrorCode::kInvalidArgument, std::string("Incorrect ") + what + " value: '" +
                                                 quoted_input(text) + "' for column '" +
                                                 col.name + "'");
}
Status out_of_range(const ColumnDef& col) {
  return Status(ErrorCode::kOutOfRange, "Out of range value for column '" + col.name + "'");
}
Status data_too_long(const ColumnDef& col) {
  return Status(ErrorCode::kDataTooLong, "Data too long for column '" + col.name + "'");
}

// ---------------------------------------------------------------------------------------
// Calendar helpers (proleptic Gregorian, as MySQL).

bool is_leap_year(int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int days_in_month(int64_t year, int64_t month) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap_year(year) ? 29 : kDays[month - 1];
}

bool valid_date(int64_t year, int64_t month, int64_t day) {
  return year >= 0 && year <= 9999 && month >= 1 && month <= 12 && day >= 1 &&
         day <= days_in_month(year, month);
}

int64_t days_from_civil(int64_t year, int64_t month, int64_t day) {
  const std::chrono::sys_days d{std::chrono::year{static_cast<int>(year)} /
                   std::chrono::month{static_cast<unsigned>(month)} /
                   std::chrono::day{static_cast<unsigned>(day)}};
  return d.time_since_epoch().count();
}

void civil_from_days(int64_t days, int64_t* year, int64_t* month, int64_t* day) {
  using namespace std::chrono;
  const year_month_day ymd{sys_days{std::chrono::days{days}}};
  *year = static_cast<int>(ymd.year());
  *month = static_cast<unsigned>(ymd.month());
  *day = static_cast<unsigned>(ymd.day());
}

uint32_t pack_date(int64_t year, int64_t month, int64_t day) {
  return static_cast<uint32_t>(year * 512 + month * 32 + day);
}

struct Cursor {
  std::string_view s;
  size_t pos = 0;

  bool done() const { return pos == s.size(); }
  bool eat(char c) {
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  // Reads min_count..max_count digits.
  bool number(int min_count, int max_count, int64_t* value) {
    int count = 0;
    int64_t v = 0;
    while (count < max_count && pos < s.size() && is_digit(s[pos])) {
      v = v * 10 + (s[pos++] - '0');
      ++count;
    }
    *value = v;
    return count >= min_count;
  }
  // Reads a run of at least one digit.
  bool digit_run(std::string_view* run) {
    const size_t start = pos;
    while (pos < s.size() && is_digit(s[pos])) ++pos;
    *run = s.substr(start, pos - start);
    return pos > start;
  }
};

// Rounds fraction digits to `scale` digits (half up, as MySQL does by default); returns
// the microseconds and whether the rounding carried into the next second.
void round_fraction(std::string_view digits, uint8_t scale, int64_t* micros, bool* carry) {
  int64_t units = 0;
  for (size_t i = 0; i < scale; ++i) units = units * 10 + (i < digits.size() ? digits[i] - '0' : 0);
  if (scale < digits.size() && digits[scale] >= '5') ++units;
  int64_t units_per_second = 1;
  for (size_t i = 0; i < scale; ++i) units_per_second *= 10;
  *carry = units == units_per_second;
  if (*carry) units = 0;
  *micros = units * (kMicrosPerSecond / units_per_second);
}

// "[.digits]" at the cursor.
bool parse_fraction(Cursor* c, uint8_t scale, int64_t* micros, bool* carry) {
  *micros = 0;
  *carry = false;
  if (!c->eat('.')) return true;
  std::string_view run;
  if (!c->digit_run(&run)) return false;
  round_fraction(run, scale, micros, carry);
  return true;
}

struct DateTimeParts {
  int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, micros = 0;
};

// "YYYY-MM-DD[( |T)HH:MM:SS[.fraction]]", rounded to `scale` fraction digits. Rejects
// invalid dates (incl. 0000-00-00 and 2023-02-29) and times.
bool parse_datetime_text(std::string_view text, uint8_t scale, bool allow_time,
                         DateTimeParts* out) {
  Cursor c{trim_spaces(text)};
  if (!c.number(4, 4, &out->year) || !c.eat('-') || !c.number(1, 2, &out->month) ||
      !c.eat('-') || !c.number(1, 2, &out->day)) {
    return false;
  }
  if (!valid_date(out->year, out->month, out->day)) return false;
  if (c.done()) return true;
  if (!allow_time || !(c.eat(' ') || c.eat('T'))) return false;
  bool carry = false;
  if (!c.number(1, 2, &out->hour) || !c.eat(':') || !c.number(1, 2, &out->minute) ||
      !c.eat(':') || !c.number(1, 2, &out->second) ||
      !parse_fraction(&c, scale, &out->micros, &carry) || !c.done()) {
    return false;
  }
  if (out->hour > 23 || out->minute > 59 || out->second > 59) return false;
  if (carry) {
    // 23:59:59.9999996 rounds into the next day (and maybe month and year).
    int64_t seconds = days_from_civil(out->year, out->month, out->day) * kSecondsPerDay +
                      out->hour * 3600 + out->minute * 60 + out->second + 1;
    int64_t days = seconds / kSecondsPerDay;
    int64_t sod = seconds % kSecondsPerDay;
    civil_from_days(days, &out->year, &out->month, &out->day);
    out->hour = sod / 3600;
    out->minute = sod / 60 % 60;
    out->second = sod % 60;
    if (out->year > 9999) return false;
  }
  return true;
}

uint64_t pack_datetime(const DateTimeParts& p) {
  return uint64_t{pack_date(p.year, p.month, p.day)} << kDatetimeDateShift |
         static_cast<uint64_t>(p.hour) << kDatetimeHourShift |
         static_cast<uint64_t>(p.minute) << kDatetimeMinuteShift |
         static_cast<uint64_t>(p.second) << kDatetimeSecondShift |
         static_cast<uint64_t>(p.micros);
}

void append_fraction(std::string* out, int64_t micros, uint8_t scale) {
  if (scale == 0) return;
  char buf[8];
  std::snprintf(buf, sizeof buf, "%06lld", static_cast<long long>(micros % kMicrosPerSecond));
  out->push_back('.');
  out->append(buf, std::min<size_t>(scale, kFractionalDigitsMax));
}

std::string format_date_parts(int64_t year, int64_t month, int64_t day) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lld", static_cast<long long>(year),
                static_cast<long long>(month), static_cast<long long>(day));
  return buf;
}

std::string format_datetime_parts(const DateTimeParts& p, uint8_t scale) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lld %02lld:%02lld:%02lld",
                static_cast<long long>(p.year), static_cast<long long>(p.month),
                static_cast<long long>(p.day), static_cast<long long>(p.hour),
                static_cast<long long>(p.minute), static_cast<long long>(p.second));
  std::string s = buf;
  append_fraction(&s, p.micros, scale);
  return s;
}

// ---------------------------------------------------------------------------------------
// FLOAT / DOUBLE text

// Lays out shortest round-trip digits the way MySQL prints doubles: plain notation for
// decimal exponents -5 < e < 15 ("100000", "0.0001"), else "1.5e20" / "1e-7" (no '+',
// no leading exponent zeros).
template <typename T>
std::string format_floating(T value) {
  if (value == 0) return "0";  // also prints -0.0 as MySQL does: "0"
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));
  std::string out;
  if (!sci.empty() && sci[0] == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  const size_t e_pos = sci.find('e');
  if (e_pos == std::string_view::npos) return std::string(buf, r.ptr);  // inf / nan
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  const auto exponent_result = std::from_chars(
      sci.data() + e_pos + 1 + (sci[e_pos + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exponent);
  if (exponent_result.ec != std::errc()) return std::string(buf, r.ptr);
  if (exponent > -5 && exponent < 15) {
    if (exponent >= 0) {
      const size_t int_len = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
      } else {
        out += digits.substr(0, int_len);
        out.push_back('.');
        out += digits.substr(int_len);
      }
    } else {
      out += "0.";
      out.append(static_cast<size_t>(-exponent - 1), '0');
      out += digits;
    }
    return out;
  }
  out.push_back(digits[0]);
  if (digits.size() > 1) {
    out.push_back('.');
    out += digits.substr(1);
  }
  out.push_back('e');
  out += std::to_string(exponent);
  return out;
}

template <typename T>
Result<std::string> parse_floating(const ColumnDef& col, std::string_view text) {
  NumberText n;
  if (!parse_number_text(text, &n)) return incorrect_value(col, col.type == ColumnType::kFloat ? "float" : "double", text);
  // The syntax is checked above (which excludes inf, nan and hex floats); from_chars does
  // the correctly rounded conversion. It takes no leading '+', so drop it.
  std::string_view s = trim_spaces(text);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  T value{};
  auto r = std::from_chars(s.data(), s.data() + s.size(), value, std::chars_format::general);
  if (r.ec == std::errc::result_out_of_range) {
    // Either too large (an error) or too small to represent (MySQL stores 0).
    if (integer_digit_count(n) > 0) return out_of_range(col);
    value = 0;
  } else if (r.ec != std::errc() || r.ptr != s.data() + s.size()) {
    return incorrect_value(col, col.type == ColumnType::kFloat ? "float" : "double", text);
  }
  if (value == 0) value = 0;  // canonical +0
  if (col.is_unsigned && value < 0) return out_of_range(col);
  std::string out;
  if constexpr (sizeof(T) == 4) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    store_le(&out, bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    store_le(&out, bits, 8);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Strings

// MySQL stores a too-long CHAR/VARCHAR/TEXT value when only spaces are cut (with a note);
// anything else is "Data too long".
Result<std::string_view> fit_text(const ColumnDef& col, std::string_view text, bool pad_space) {
  if (text.size() <= col.length) return text;
  if (pad_space && text.find_first_not_of(' ', col.length) == std::string_view::npos) {
    return text.substr(0, col.length);
  }
  return data_too_long(col);
}

}  // namespace

// =========================================================================================
// Public functions

bool is_var_sized(const ColumnDef& col) {
  switch (col.type) {
    case ColumnType::kVarchar:
    case ColumnType::kVarbinary:
    case ColumnType::kBlob:
    case ColumnType::kText:
      return true;
    default:
      return false;
  }
}

uint32_t decimal_bin_size(uint8_t precision, uint8_t scale) {
  if (scale > precision) return 0;
  const int intg = precision - scale;
  return static_cast<uint32_t>(intg / kDigitsPerGroup * 4 + kDigitBytes[intg % kDigitsPerGroup] +
                               scale / kDigitsPerGroup * 4 + kDigitBytes[scale % kDigitsPerGroup]);
}

uint32_t column_max_size(const ColumnDef& col) {
  switch (col.type) {
    case ColumnType::kTinyInt:
    case ColumnType::kSmallInt:
    case ColumnType::kMediumInt:
    case ColumnType::kInt:
    case ColumnType::kBigInt:
      return int_width_bytes(col.type);
    case ColumnType::kFloat: return 4;
    case ColumnType::kDouble: return 8;
    case ColumnType::kDecimal: return decimal_bin_size(col.precision, col.scale);
    case ColumnType::kChar:
    case ColumnType::kBinary:
    case ColumnType::kVarchar:
    case ColumnType::kVarbinary:
      return col.length;
    case ColumnType::kDate: return 3;
    case ColumnType::kTime:
    case ColumnType::kDatetime:
    case ColumnType::kTimestamp:
      return 8;
    case ColumnType::kBlob:
    case ColumnType::kText:
      return kLobHeaderBytes + col.length;
  }
  return 0;
}

bool is_integer(ColumnType type) { return int_width_bytes(type) != 0; }

bool is_string(ColumnType type) {
  switch (type) {
    case ColumnType::kChar:
    case ColumnType::kVarchar:
    case ColumnType::kBinary:
    case ColumnType::kVarbinary:
    case ColumnType::kBlob:
    case ColumnType::kText:
      return true;
    default:
      return false;
  }
}

Status validate_column(const ColumnDef& col) {
  if (col.name.empty()) return Status(ErrorCode::kInvalidArgument, "Incorrect column name ''");
  if (col.name.size() > kIdentifierLengthMax) {
    return Status(ErrorCode::kInvalidArgument, "Identifier name '" + col.name + "' is too long");
  }
  const bool numeric = is_integer(col.type) || col.type == ColumnType::kFloat ||
                       col.type == ColumnType::kDouble || col.type == ColumnType::kDecimal;
  if (col.is_unsigned && !numeric) {
    return Status(ErrorCode::kInvalidArgument,
                  "UNSIGNED is only valid for numeric column '" + col.name + "'");
  }
  if (col.collation == Collation::kCaseInsensitive && !is_pad_space_type(col.type)) {
    // BINARY/VARBINARY/BLOB are binary strings by definition; numbers have no collation.
    return Status(ErrorCode::kInvalidArgument,
                  "Case-insensitive collation is only valid for CHAR/VARCHAR/TEXT column '" +
                      col.name + "'");
  }
  auto too_long = [&](uint32_t max) {
    return Status(ErrorCode::kInvalidArgument, "Column length too big for column '" + col.name +
                                                   "' (max = " + std::to_string(max) +
                                                   "); use BLOB or TEXT instead");
  };
  switch (col.type) {
    case ColumnType::kDecimal:
      if (col.precision < 1 || col.precision > kDecimalPrecisionMax) {
        return Status(ErrorCode::kInvalidArgument,
                      "Too big precision " + std::to_string(col.precision) +
                          " specified for column '" + col.name + "'. Maximum is 65.");
      }
      if (col.scale > kDecimalScaleMax) {
        return Status(ErrorCode::kInvalidArgument, "Too big scale " + std::to_string(col.scale) +
                                                       " specified for column '" + col.name +
                                                       "'. Maximum is 30.");
      }
      if (col.scale > col.precision) {
        return Status(ErrorCode::kInvalidArgument,
                      "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '" +
                          col.name + "').");
      }
      return Status::OK();
    case ColumnType::kChar:
      return col.length > kCharLengthBytesMax ? too_long(kCharLengthBytesMax) : Status::OK();
    case ColumnType::kBinary:
      return col.length > kBinaryLengthBytesMax ? too_long(kBinaryLengthBytesMax) : Status::OK();
    case ColumnType::kVarchar:
    case ColumnType::kVarbinary:
    case ColumnType::kBlob:
    case ColumnType::kText:
      return col.length > kVarLengthBytesMax ? too_long(kVarLengthBytesMax) : Status::OK();
    case ColumnType::kTime:
    case ColumnType::kDatetime:
    case ColumnType::kTimestamp:
      if (col.scale > kFractionalDigitsMax) {
        return Status(ErrorCode::kInvalidArgument, "Too big precision " +
                                                       std::to_string(col.scale) +
                                                       " specified for column '" + col.name +
                                                       "'. Maximum is 6.");
      }
      return Status::OK();
    default:
      // Integers: length is a display width, ignored. FLOAT/DOUBLE/DATE: nothing to check.
      return Status::OK();
  }
}

int compare_values(const ColumnDef& col, std::string_view a, std::string_view b) {
  switch (col.type) {
    case ColumnType::kTinyInt:
    case ColumnType::kSmallInt:
    case ColumnType::kMediumInt:
    case ColumnType::kInt:
    case ColumnType::kBigInt:
      return col.is_unsigned ? sign_of_u(decode_uint(col, a), decode_uint(col, b))
                             : sign_of(decode_int(col, a), decode_int(col, b));
    case ColumnType::kFloat:
      return sign_of_u(float_key(a), float_key(b));
    case ColumnType::kDouble:
      return sign_of_u(double_key(a), double_key(b));
    case ColumnType::kDecimal:
    case ColumnType::kBinary:
    case ColumnType::kVarbinary:
      return compare_exact(a, b);
    case ColumnType::kBlob:
      return compare_exact(lob_inline(a), lob_inline(b));
    case ColumnType::kChar:
    case ColumnType::kVarchar:
      return compare_pad_space(a, b, folds_case(col));
    case ColumnType::kText:
      return compare_pad_space(lob_inline(a), lob_inline(b), folds_case(col));
    case ColumnType::kDate:
      return sign_of_u(load_le(a, 3), load_le(b, 3));
    case ColumnType::kTime:
    case ColumnType::kTimestamp:
      return sign_of(static_cast<int64_t>(load_le(a, 8)), static_cast<int64_t>(load_le(b, 8)));
    case ColumnType::kDatetime:
      return sign_of_u(load_le(a, 8), load_le(b, 8));
  }
  return 0;
}

uint64_t hash_value(const ColumnDef& col, std::string_view value, uint64_t seed) {
  switch (col.type) {
    case ColumnType::kFloat: {
      if (load_le(value, 4) == 0x8000'0000u) {
        return hash_bytes(std::string_view("\0\0\0\0", 4), seed);
      }
      return hash_bytes(value, seed);
    }
    case ColumnType::kDouble: {
      if (load_le(value, 8) == 0x8000'0000'0000'0000ull) {
        return hash_bytes(std::string_view("\0\0\0\0\0\0\0\0", 8), seed);
      }
      return hash_bytes(value, seed);
    }
    case ColumnType::kChar:
    case ColumnType::kVarchar:
    case ColumnType::kText: {
      // PAD SPACE: values equal up to trailing spaces must hash equal; case-insensitive
      // ones hash their weights (the same bytes as before for ASCII text).
      if (!folds_case(col)) {
        return hash_bytes(strip_trailing_spaces(string_payload(col, value)), seed);
      }
      std::string buffer;
      return hash_bytes(case_insensitive_key(string_payload(col, value), &buffer), seed);
    }
    case ColumnType::kBlob:
      return hash_bytes(lob_inline(value), seed);
    default:
      // Every other encoding is canonical: equal values have equal bytes.
      return hash_bytes(value, seed);
  }
}

uint32_t normalized_prefix(const ColumnDef& col, std::string_view value, bool* exact) {
  *exact = false;
  auto string_prefix = [&](std::string_view s, uint8_t pad) {
    uint32_t p = 0;
    for (size_t i = 0; i < 4; ++i) p = (p << 8) | (i < s.size() ? static_cast<uint8_t>(s[i]) : pad);
    return p;
  };
  switch (col.type) {
    case ColumnType::kTinyInt:
    case ColumnType::kSmallInt:
    case ColumnType::kMediumInt:
    case ColumnType::kInt: {
      // The whole value fits: bias signed values so that unsigned order is numeric order.
      const uint32_t width_bytes = int_width_bytes(col.type);
      *exact = true;
      if (col.is_unsigned) return static_cast<uint32_t>(decode_uint(col, value));
      return static_cast<uint32_t>(decode_int(col, value) - signed_min(width_bytes));
    }
    case ColumnType::kBigInt: {
      const uint64_t biased = col.is_unsigned
                                  ? decode_uint(col, value)
                                  : static_cast<uint64_t>(decode_int(col, value)) ^ (1ull << 63);
      return static_cast<uint32_t>(biased >> 32);
    }
    case ColumnType::kFloat:
      *exact = true;  // the key is a bijection of the canonical value
      return float_key(value);
    case ColumnType::kDouble:
      return static_cast<uint32_t>(double_key(value) >> 32);
    case ColumnType::kDecimal:
      *exact = decimal_bin_size(col.precision, col.scale) <= 4;  // the prefix is the whole value
      return string_prefix(value, 0);
    case ColumnType::kChar:
    case ColumnType::kVarchar:
    case ColumnType::kText: {
      // The prefix of the value padded with spaces to infinity: PAD SPACE order is the
      // lexicographic order of those padded strings, so prefixes keep it, and values equal
      // under the collation have equal padded (folded) strings. Case-insensitive: the
      // same over weights (collation.h), exact unless a weight saturated the prefix.
      *exact = col.type != ColumnType::kText && col.length <= 4;
      if (!folds_case(col)) return string_prefix(string_payload(col, value), ' ');
      bool saturated = false;
      const uint32_t prefix = case_insensitive_prefix(string_payload(col, value), &saturated);
      *exact = *exact && !saturated;
      return prefix;
    }
    case ColumnType::kBinary:
      *exact = col.length <= 4;  // all values have the same length
      return string_prefix(value, 0);
    case ColumnType::kVarbinary:
      // 0x00 padding sorts a proper prefix first; "a" and "a\0" share a prefix (not exact).
      return string_prefix(value, 0);
    case ColumnType::kBlob:
      return string_prefix(lob_inline(value), 0);
    case ColumnType::kDate:
      *exact = true;
      return static_cast<uint32_t>(load_le(value, 3));
    case ColumnType::kTime: {
      // |TIME| < 2^42 us; clamp (monotone) then bias and keep the top 32 of 43 bits.
      constexpr int64_t kBound = int64_t{1} << 42;
      const int64_t v = std::clamp(static_cast<int64_t>(load_le(value, 8)), -kBound, kBound - 1);
      return static_cast<uint32_t>(static_cast<uint64_t>(v + kBound) >> 11);
    }
    case ColumnType::kDatetime: {
      // 60 significant bits: keep the top 32 (date, hour, minute, 2 bits of second).
      const uint64_t v = std::min<uint64_t>(load_le(value, 8), (uint64_t{1} << 60) - 1);
      return static_cast<uint32_t>(v >> 28);
    }
    case ColumnType::kTimestamp: {
      // Whole seconds fit in 32 bits over the TIMESTAMP range; clamp keeps it monotone.
      constexpr int64_t kMaxMicros = int64_t{0xFFFF'FFFF} * kMicrosPerSecond;
      const int64_t v = std::clamp<int64_t>(static_cast<int64_t>(load_le(value, 8)), 0, kMaxMicros);
      return static_cast<uint32_t>(v / kMicrosPerSecond);
    }
  }
  return 0;
}

std::string encode_int(const ColumnDef& col, int64_t value) {
  std::string out;
  store_le(&out, static_cast<uint64_t>(value), int_width_bytes(col.type));
  return out;
}

std::string encode_uint(const ColumnDef& col, uint64_t value) {
  std::string out;
  store_le(&out, value, int_width_bytes(col.type));
  return out;
}

int64_t decode_int(const ColumnDef& col, std::string_view value) {
  const uint32_t width_bytes = int_width_bytes(col.type);
  if (width_bytes == 0) return 0;
  const uint64_t raw = load_le(value, width_bytes);
  if (col.is_unsigned || width_bytes == 8) return static_cast<int64_t>(raw);
  const int shift = 64 - 8 * static_cast<int>(width_bytes);
  return static_cast<int64_t>(raw << shift) >> shift;  // sign extension
}

uint64_t decode_uint(const ColumnDef& col, std::string_view value) {
  const uint32_t width_bytes = int_width_bytes(col.type);
  if (width_bytes == 0) return 0;
  if (!col.is_unsigned) return static_cast<uint64_t>(decode_int(col, value));
  return load_le(value, width_bytes);
}

bool int_fits(const ColumnDef& col, int64_t value) {
  const uint32_t width_bytes = int_width_bytes(col.type);
  if (width_bytes == 0) return false;
  if (col.is_unsigned) return value >= 0 && static_cast<uint64_t>(value) <= unsigned_max(width_bytes);
  return value >= signed_min(width_bytes) && value <= signed_max(width_bytes);
}

bool uint_fits(const ColumnDef& col, uint64_t value) {
  const uint32_t width_bytes = int_width_bytes(col.type);
  if (width_bytes == 0) return false;
  if (col.is_unsigned) return value <= unsigned_max(width_bytes);
  return value <= static_cast<uint64_t>(signed_max(width_bytes));
}

Result<std::string> parse_value(const ColumnDef& col, std::string_view text) {
  switch (col.type) {
    case ColumnType::kTinyInt:
    case ColumnType::kSmallInt:
    case ColumnType::kMediumInt:
    case ColumnType::kInt:
    case ColumnType::kBigInt: {
      // MySQL accepts "12.5" (rounds to 13) and "1e3" in integer columns.
      NumberText n;
      if (!parse_number_text(text, &n)) return incorrect_value(col, "integer", text);
      uint128 magnitude = 0;
      if (!number_to_magnitude(n, &magnitude)) return out_of_range(col);
      if (n.negative && magnitude != 0) {
        if (magnitude > (uint128{1} << 63)) return out_of_range(col);
        const int64_t v = magnitude == (uint128{1} << 63)
                              ? std::numeric_limits<int64_t>::min()
                              : -static_cast<int64_t>(magnitude);
        if (!int_fits(col, v)) return out_of_range(col);
        return encode_int(col, v);
      }
      if (!uint_fits(col, static_cast<uint64_t>(magnitude))) return out_of_range(col);
      return encode_uint(col, static_cast<uint64_t>(magnitude));
    }
    case ColumnType::kFloat:
      return parse_floating<float>(col, text);
    case ColumnType::kDouble:
      return parse_floating<double>(col, text);
    case ColumnType::kDecimal: {
      if (col.precision < 1 || col.scale > col.precision) {
        return Status(ErrorCode::kInvalidArgument, "invalid DECIMAL column '" + col.name + "'");
      }
      NumberText n;
      if (!parse_number_text(text, &n)) return incorrect_value(col, "decimal", text);
      DecimalDigits d;
      if (!number_to_decimal(n, col.precision, col.scale, &d)) return out_of_range(col);
      if (d.negative && col.is_unsigned) return out_of_range(col);
      return encode_decimal(col.precision, col.scale, d);
    }
    case ColumnType::kChar: {
      DUO_ASSIGN_OR_RETURN(std::string_view fitted, fit_text(col, text, true));
      std::string out(fitted);
      out.resize(col.length, ' ');
      return out;
    }
    case ColumnType::kBinary: {
      DUO_ASSIGN_OR_RETURN(std::string_view fitted, fit_text(col, text, false));
      std::string out(fitted);
      out.resize(col.length, '\0');
      return out;
    }
    case ColumnType::kVarchar: {
      DUO_ASSIGN_OR_RETURN(std::string_view fitted, fit_text(col, text, true));
      return std::string(fitted);
    }
    case ColumnType::kVarbinary: {
      DUO_ASSIGN_OR_RETURN(std::string_view fitted, fit_text(col, text, false));
      return std::string(fitted);
    }
    case ColumnType::kBlob:
    case ColumnType::kText: {
      // Values beyond the inline part need blob parts (a later issue): too long for now.
      DUO_ASSIGN_OR_RETURN(std::string_view fitted,
                           fit_text(col, text, col.type == ColumnType::kText));
      std::string out;
      out.reserve(kLobHeaderBytes + fitted.size());
      store_le(&out, fitted.size(), kLobHeaderBytes);
      out.append(fitted);
      return out;
    }
    case ColumnType::kDate: {
      DateTimeParts p;
      if (!parse_datetime_text(text, 0, false, &p)) return incorrect_value(col, "date", text);
      std::string out;
      store_le(&out, pack_date(p.year, p.month, p.day), 3);
      return out;
    }
    case ColumnType::kTime: {
      Cursor c{trim_spaces(text)};
      const bool negative = c.eat('-');
      int64_t hour = 0, minute = 0, second = 0, micros = 0;
      bool carry = false;
      if (!c.number(1, 3, &hour) || !c.eat(':') || !c.number(1, 2, &minute) || !c.eat(':') ||
          !c.number(1, 2, &second) || !parse_fraction(&c, col.scale, &micros, &carry) ||
          !c.done() || minute > 59 || second > 59) {
        return incorrect_value(col, "time", text);
      }
      const int64_t seconds = hour * 3600 + minute * 60 + second + (carry ? 1 : 0);
      if (seconds > kTimeSecondsMax || (seconds == kTimeSecondsMax && micros > 0)) {
        return out_of_range(col);
      }
      int64_t total_micros = seconds * kMicrosPerSecond + micros;
      if (negative) total_micros = -total_micros;  // "-00:00:00" stays canonical 0
      std::string out;
      store_le(&out, static_cast<uint64_t>(total_micros), 8);
      return out;
    }
    case ColumnType::kDatetime: {
      DateTimeParts p;
      if (!parse_datetime_text(text, col.scale, true, &p)) {
        return incorrect_value(col, "datetime", text);
      }
      std::string out;
      store_le(&out, pack_datetime(p), 8);
      return out;
    }
    case ColumnType::kTimestamp: {
      DateTimeParts p;
      if (!parse_datetime_text(text, col.scale, true, &p)) {
        return incorrect_value(col, "datetime", text);
      }
      const int64_t seconds = days_from_civil(p.year, p.month, p.day) * kSecondsPerDay +
                              p.hour * 3600 + p.minute * 60 + p.second;
      // |seconds| < 2^39 for years 0..9999, so this cannot overflow.
      const int64_t micros = seconds * kMicrosPerSecond + p.micros;
      if (micros < kTimestampMicrosMin || micros > kTimestampMicrosMax) return out_of_range(col);
      std::string out;
      store_le(&out, static_cast<uint64_t>(micros), 8);
      return out;
    }
  }
  return Status(ErrorCode::kInternal, "unknown column type");
}

std::string format_value(const ColumnDef& col, std::string_view value) {
  switch (col.type) {
    case ColumnType::kTinyInt:
    case ColumnType::kSmallInt:
    case ColumnType::kMediumInt:
    case ColumnType::kInt:
    case ColumnType::kBigInt:
      return col.is_unsigned ? std::to_string(decode_uint(col, value))
                             : std::to_string(decode_int(col, value));
    case ColumnType::kFloat:
      return format_floating(load_float(value));
    case ColumnType::kDouble:
      return format_floating(load_double(value));
    case ColumnType::kDecimal: {
      std::string int_digits, frac_digits;
      bool negative = false;
      if (!decode_decimal(col.precision, col.scale, value, &int_digits, &frac_digits, &negative)) {
        return std::string();  // wrong size: not a value of this column
      }
      const size_t first = int_digits.find_first_not_of('0');
      std::string out = negative ? "-" : "";
      out += first == std::string::npos ? "0" : int_digits.substr(first);
      if (col.scale > 0) {
        out.push_back('.');
        out += frac_digits;
      }
      return out;
    }
    case ColumnType::kChar:
      // MySQL returns CHAR values without their trailing pad spaces.
      return std::string(strip_trailing_spaces(value));
    case ColumnType::kBinary:
    case ColumnType::kVarchar:
    case ColumnType::kVarbinary:
      return std::string(value);
    case ColumnType::kBlob:
    case ColumnType::kText:
      return std::string(lob_inline(value));
    case ColumnType::kDate: {
      const uint64_t packed = load_le(value, 3);
      return format_date_parts(static_cast<int64_t>(packed / 512),
                               static_cast<int64_t>(packed / 32 % 16),
                               static_cast<int64_t>(packed % 32));
    }
    case ColumnType::kTime: {
      const int64_t micros = static_cast<int64_t>(load_le(value, 8));
      // Magnitude as unsigned: INT64_MIN (corrupt) must not overflow on negation.
      const uint64_t magnitude =
          micros < 0 ? 0 - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
      const uint64_t seconds = magnitude / kMicrosPerSecond;
      char buf[48];
      std::snprintf(buf, sizeof buf, "%s%02llu:%02llu:%02llu", micros < 0 ? "-" : "",
                    static_cast<unsigned long long>(seconds / 3600),
                    static_cast<unsigned long long>(seconds / 60 % 60),
                    static_cast<unsigned long long>(seconds % 60));
      std::string out = buf;
      append_fraction(&out, static_cast<int64_t>(magnitude % kMicrosPerSecond), col.scale);
      return out;
    }
    case ColumnType::kDatetime: {
      const uint64_t v = load_le(value, 8);
      const uint64_t date = v >> kDatetimeDateShift;
      DateTimeParts p;
      p.year = static_cast<int64_t>(date / 512);
      p.month = static_cast<int64_t>(date / 32 % 16);
      p.day = static_cast<int64_t>(date % 32);
      p.hour = static_cast<int64_t>(v >> kDatetimeHourShift & 0x1F);
      p.minute = static_cast<int64_t>(v >> kDatetimeMinuteShift & 0x3F);
      p.second = static_cast<int64_t>(v >> kDatetimeSecondShift & 0x3F);
      p.micros = static_cast<int64_t>(v & 0xF'FFFF);
      return format_datetime_parts(p, col.scale);
    }
    case ColumnType::kTimestamp: {
      // Clamp so a corrupt value cannot overflow the calendar conversion.
      constexpr int64_t kYear9999EndMicros = int64_t{253'402'300'799} * kMicrosPerSecond + 999'999;
      const int64_t micros = std::clamp<int64_t>(static_cast<int64_t>(load_le(value, 8)), 0,
                                                 kYear9999EndMicros);
      const int64_t seconds = micros / kMicrosPerSecond;
      DateTimeParts p;
      civil_from_days(seconds / kSecondsPerDay, &p.year, &p.month, &p.day);
      const int64_t sod = seconds % kSecondsPerDay;
      p.hour = sod / 3600;
      p.minute = sod / 60 % 60;
      p.second = sod % 60;
      p.micros = micros % kMicrosPerSecond;
      return format_datetime_parts(p, col.scale);
    }
  }
  return std::string();
}

}  // namespace duo::storage
