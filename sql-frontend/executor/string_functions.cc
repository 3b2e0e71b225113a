// String functions (CONCAT, SUBSTRING, LOCATE, LPAD, HEX, MD5, FORMAT ...); see
// functions.h. Strings are utf8mb4: lengths and positions count characters, not bytes
// (except LENGTH, HEX and the hashes, which are about bytes). Comparisons inside
// LOCATE/INSTR/FIELD/FIND_IN_SET/STRCMP follow the default case-insensitive collation;
// REPLACE is byte-exact, as in MySQL.
//
// Thread-safety: pure functions over caller-owned inputs.
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/function_family.h"

namespace duo::sql::executor::functions_internal {

namespace {

// Longest string a function may build (MySQL's max_allowed_packet: beyond it the result
// is NULL, with a warning in MySQL).
constexpr size_t kStringResultBytesMax = 64 * 1024 * 1024;

// The NULL a function returns for a result beyond kStringResultBytesMax, with MySQL's
// warning 1301 (ER_WARN_ALLOWED_PACKET_OVERFLOWED).
SqlValue packet_overflow(const Args& args) {
  std::string name = args.name();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  args.warn(1301, "Result of " + name + "() was larger than max_allowed_packet (" +
                      std::to_string(kStringResultBytesMax) + ") - truncated");
  return SqlValue::null();
}

// Byte offsets where each character of UTF-8 `s` starts, plus s.size() at the end.
std::vector<size_t> char_starts(std::string_view s) {
  std::vector<size_t> starts;
  for (size_t k = 0; k < s.size(); ++k) {
    if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80) starts.push_back(k);
  }
  starts.push_back(s.size());
  return starts;
}

int64_t char_count(std::string_view s) {
  return static_cast<int64_t>(char_starts(s).size()) - 1;
}

// Characters [from, from + count) of `s` (0-based, clamped).
std::string char_slice(const std::string& s, int64_t from, int64_t count) {
  const std::vector<size_t> starts = char_starts(s);
  const int64_t n = static_cast<int64_t>(starts.size()) - 1;
  from = std::clamp<int64_t>(from, 0, n);
  const int64_t to = count < 0 ? n : std::clamp<int64_t>(from + std::min(count, n), from, n);
  return s.substr(starts[static_cast<size_t>(from)],
                  starts[static_cast<size_t>(to)] - starts[static_cast<size_t>(from)]);
}

std::string lower_ascii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// 1-based character position of `needle` in `haystack` at or after character `from`
// (1-based), case-insensitively; 0 when absent.
int64_t locate(const std::string& needle, const std::string& haystack, int64_t from) {
  const std::vector<size_t> starts = char_starts(haystack);
  const int64_t n = static_cast<int64_t>(starts.size()) - 1;
  if (from < 1 || from > n + 1) return 0;
  if (needle.empty()) return from;
  const std::string h = lower_ascii(haystack);
  const std::string x = lower_ascii(needle);
  const size_t at = h.find(x, starts[static_cast<size_t>(from - 1)]);
  if (at == std::string::npos) return 0;
  return static_cast<int64_t>(std::lower_bound(starts.begin(), starts.end(), at) - starts.begin()) +
         1;
}

std::string hex_of_bytes(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    out += kDigits[static_cast<unsigned char>(c) >> 4];
    out += kDigits[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

std::optional<std::string> digest(const EVP_MD* md, std::string_view bytes) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out, &size, md, nullptr) != 1) return std::nullopt;
  std::string hex = hex_of_bytes(std::string_view(reinterpret_cast<const char*>(out), size));
  return lower_ascii(std::move(hex));
}

// FORMAT(x, d): x rounded to d decimals with ',' every three integer digits (en_US).
std::string format_number(const SqlValue& x, int64_t decimals) {
  decimals = std::clamp<int64_t>(decimals, 0, 30);
  std::string text;
  if (x.kind == SqlValue::Kind::kDouble || x.kind == SqlValue::Kind::kString) {
    char buffer[512];
    std::snprintf(buffer, sizeof(buffer), "%.*f", static_cast<int>(decimals), x.to_double());
    text = buffer;
  } else {
    text = round_decimal_text(x.to_text(), static_cast<int>(decimals), /*truncate=*/false);
  }
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.erase(0, 1);
  const size_t dot = text.find('.');
  std::string int_part = text.substr(0, dot);
  std::string grouped;
  for (size_t k = 0; k < int_part.size(); ++k) {
    if (k > 0 && (int_part.size() - k) % 3 == 0) grouped += ',';
    grouped += int_part[k];
  }
  if (dot != std::string::npos) grouped += text.substr(dot);
  return negative ? "-" + grouped : grouped;
}

SqlValue pad(const Args& args, bool left) {
  args.need(3);
  SqlValue s = args.value(0), length = args.value(1), filler = args.value(2);
  if (s.is_null() || length.is_null() || filler.is_null()) return SqlValue::null();
  const int64_t n = length.to_int();
  if (n < 0) return SqlValue::null();
  const std::string text = s.to_text();
  const int64_t have = char_count(text);
  if (n <= have) return SqlValue::of_string(char_slice(text, 0, n));
  const std::string fill = filler.to_text();
  if (fill.empty()) return SqlValue::null();
  if (static_cast<size_t>(n) > kStringResultBytesMax) return packet_overflow(args);
  std::string padding;
  const int64_t fill_chars = char_count(fill);
  for (int64_t need = n - have; need > 0; need -= fill_chars) {
    padding += char_slice(fill, 0, std::min(need, fill_chars));
  }
  return SqlValue::of_string(left ? padding + text : text + padding);
}

SqlValue hex(const SqlValue& v) {
  if (v.is_null()) return v;
  if (v.kind == SqlValue::Kind::kString) return SqlValue::of_string(hex_of_bytes(v.s));
  // A number: the hex digits of its (rounded) 64-bit integer value.
  uint64_t u = 0;
  if (v.kind == SqlValue::Kind::kUInt) {
    u = v.u;
  } else if (v.kind == SqlValue::Kind::kInt) {
    u = static_cast<uint64_t>(v.i);
  } else {
    const double d = std::round(v.to_double());
    u = d < 0                         ? static_cast<uint64_t>(static_cast<int64_t>(d))
        : d >= 18446744073709551615.0 ? UINT64_MAX
                                      : static_cast<uint64_t>(d);
  }
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%llX", static_cast<unsigned long long>(u));
  return SqlValue::of_string(buffer);
}

SqlValue unhex(const SqlValue& v) {
  if (v.is_null()) return v;
  std::string digits = v.to_text();
  if (digits.size() % 2 != 0) digits.insert(digits.begin(), '0');
  std::string out;
  for (size_t k = 0; k < digits.size(); k += 2) {
    auto nibble = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    const int hi = nibble(digits[k]), lo = nibble(digits[k + 1]);
    if (hi < 0 || lo < 0) return SqlValue::null();
    out += static_cast<char>(hi * 16 + lo);
  }
  return SqlValue::of_string(std::move(out));
}

}  // namespace

std::optional<SqlValue> call_string_function(const Args& args) {
  const std::string& name = args.name();
  // Most string functions return NULL when any argument is NULL.
  auto values = [&](std::vector<SqlValue>* out) {
    for (size_t i = 0; i < args.size(); ++i) {
      out->push_back(args.value(i));
      if (out->back().is_null()) return false;
    }
    return true;
  };
  if (name == "CONCAT") {
    args.need_at_least(1);
    std::string out;
    for (size_t i = 0; i < args.size(); ++i) {
      SqlValue v = args.value(i);
      if (v.is_null()) return SqlValue::null();
      out += v.to_text();
    }
    return SqlValue::of_string(std::move(out));
  }
  if (name == "CONCAT_WS") {
    args.need_at_least(2);
    SqlValue separator = args.value(0);
    if (separator.is_null()) return SqlValue::null();
    std::string out;
    bool first = true;
    for (size_t i = 1; i < args.size(); ++i) {
      SqlValue v = args.value(i);
      if (v.is_null()) continue;  // CONCAT_WS skips NULLs
      if (!first) out += separator.to_text();
      out += v.to_text();
      first = false;
    }
    return SqlValue::of_string(std::move(out));
  }
  if (name == "LENGTH" || name == "OCTET_LENGTH" || name == "CHAR_LENGTH" ||
      name == "CHARACTER_LENGTH" || name == "BIT_LENGTH") {
    args.need(1);
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    const std::string s = v.to_text();
    if (name == "LENGTH" || name == "OCTET_LENGTH") {
      return SqlValue::of_int(static_cast<int64_t>(s.size()));
    }
    if (name == "BIT_LENGTH") return SqlValue::of_int(static_cast<int64_t>(s.size() * 8));
    return SqlValue::of_int(char_count(s));
  }
  if (name == "LOWER" || name == "LCASE" || name == "UPPER" || name == "UCASE") {
    args.need(1);
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    std::string s = v.to_text();
    const bool up = name == "UPPER" || name == "UCASE";
    for (char& c : s) {
      c = static_cast<char>(up ? std::toupper(static_cast<unsigned char>(c))
                               : std::tolower(static_cast<unsigned char>(c)));
    }
    return SqlValue::of_string(std::move(s));
  }
  if (name == "SUBSTRING" || name == "SUBSTR" || name == "MID") {
    args.need_between(2, 3);
    std::vector<SqlValue> v;
    if (!values(&v)) return SqlValue::null();
    const std::string s = v[0].to_text();
    const int64_t n = char_count(s);
    int64_t pos = v[1].to_int();
    const int64_t length = v.size() == 3 ? v[2].to_int() : n;
    // Position 0 or beyond either end gives ''; a negative position counts from the end.
    if (pos == 0 || length <= 0 || pos > n || -pos > n) return SqlValue::of_string("");
    const int64_t from = pos > 0 ? pos - 1 : n + pos;
    return SqlValue::of_string(char_slice(s, from, length));
  }
  if (name == "SUBSTRING_INDEX") {
    args.need(3);
    std::vector<SqlValue> v;
    if (!values(&v)) return SqlValue::null();
    const std::string s = v[0].to_text(), delimiter = v[1].to_text();
    int64_t count = v[2].to_int();
    if (delimiter.empty() || count == 0) return SqlValue::of_string("");
    if (count > 0) {
      size_t at = 0;
      while (count-- > 0) {
        at = s.find(delimiter, at);
        if (at == std::string::npos) return SqlValue::of_string(s);
        if (count > 0) at += delimiter.size();
      }
      return SqlValue::of_string(s.substr(0, at));
    }
    size_t at = s.size();
    while (count++ < 0) {
      if (at < delimiter.size()) return SqlValue::of_string(s);
      at = s.rfind(delimiter, at - delimiter.size());
      if (at == std::string::npos) return SqlValue::of_string(s);
    }
    return SqlValue::of_string(s.substr(at + delimiter.size()));
  }
  if (name == "LEFT" || name == "RIGHT") {
    args.need(2);
    std::vector<SqlValue> v;
    if (!values(&v)) return SqlValue::null();
    const std::string s = v[0].to_text();
    const int64_t length = v[1].to_int();
    if (length <= 0) return SqlValue::of_string("");
    if (name == "LEFT") return SqlValue::of_string(char_slice(s, 0, length));
    const int64_t n = char_count(s);
    return SqlValue::of_string(char_slice(s, std::max<int64_t>(0, n - length), length));
  }
  if (name == "TRIM" || name == "LTRIM" || name == "RTRIM") {
    args.need(1);
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    std::string s = v.to_text();
    if (name != "RTRIM") s.erase(0, std::min(s.find_first_not_of(' '), s.size()));
    if (name != "LTRIM") s.erase(s.find_last_not_of(' ') + 1);
    return SqlValue::of_string(std::move(s));
  }
  if (name == "TRIM LEADING" || name == "TRIM TRAILING" || name == "TRIM BOTH") {
    // TRIM(side [remstr] FROM s): whole copies of remstr (default ' ') come off, compared
    // byte by byte as MySQL does.
    args.need_between(1, 2);
    std::vector<SqlValue> v;
    if (!values(&v)) return SqlValue::null();
    std::string s = v[0].to_text();
    const std::string cut = v.size() > 1 ? v[1].to_text() : std::string(" ");
    if (cut.empty()) return SqlValue::of_string(std::move(s));
    size_t begin = 0, end = s.size();
    if (name != "TRIM TRAILING") {
      while (end - begin >= cut.size() && s.compare(begin, cut.size(), cut) == 0)
        begin += cut.size();
    }
    if (name != "TRIM LEADING") {
      while (end - begin >= cut.size() && s.compare(end - cut.size(), cut.size(), cut) == 0) {
        end -= cut.size();
      }
    }
    return SqlValue::of_string(s.substr(begin, end - begin));
  }
  if (name == "REPLACE") {
    args.need(3);
    std::vector<SqlValue> v;
    if (!values(&v)) return SqlValue::null();
    std::string s = v[0].to_text();
    const std::string from = v[1].to_text(), to = v[2].to_text();
    if (from.empty()) return SqlValue::of_string(std::move(s));
    std::string out;
    size_t at = 0;
    for (size_t hit; (hit = s.find(from, at)) != std::string::npos; at = hit + from.size()) {
      out.append(s, at, hit - at);
      out += to;
      if (out.size() > kStringResultBytesMax) return packet_overflow(args);
    }
    out.append(s, at);
    return SqlValue::of_string(std::move(out));
  }
  if (name == "REPEAT") {
    args.need(2);
    std::vector<SqlValue> v;
    if (!values(&v)) return SqlValue::null();
    const std::string s = v[0].to_text();
    const int64_t times = v[1].to_int();
    if (times <= 0 || s.empty()) return SqlValue::of_string("");
    if (static_cast<uint64_t>(times) > kStringResultBytesMax / s.size()) {
      return packet_overflow(args);
    }
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(times));
    for (int64_t k = 0; k < times; ++k) out += s;
    return SqlValue::of_string(std::move(out));
  }
  if (name == "SPACE") {
    args.need(1);
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    const int64_t n = v.to_int();
    if (n <= 0) return SqlValue::of_string("");
    if (static_cast<uint64_t>(n) > kStringResultBytesMax) return packet_overflow(args);
    return SqlValue::of_string(std::string(static_cast<size_t>(n), ' '));
  }
  if (name == "REVERSE") {
    args.need(1);
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    const std::string s = v.to_text();
    const std::vector<size_t> starts = char_starts(s);
    std::string out;
    for (size_t k = starts.size() - 1; k > 0; --k) {
      out.append(s, starts[k - 1], starts[k] - starts[k - 1]);
    }
    return SqlValue::of_string(std::move(out));
  }
  if (name == "LOCATE" || name == "INSTR") {
    if (name == "INSTR") {
      args.need(2);
    } else {
      args.need_between(2, 3);
    }
    std::vector<SqlValue> v;
    if (!values(&v)) return SqlValue::null();
    if (name == "INSTR") return SqlValue::of_int(locate(v[1].to_text(), v[0].to_text(), 1));
    const int64_t from = v.size() == 3 ? v[2].to_int() : 1;
    return SqlValue::of_int(locate(v[0].to_text(), v[1].to_text(), from));
  }
  if (name == "LPAD" || name == "RPAD") return pad(args, name == "LPAD");
  if (name == "CHAR") {
    // CHAR(n, ...): the bytes of each integer, big-endian without leading zero bytes;
    // NULL arguments are skipped.
    args.need_at_least(1);
    std::string out;
    for (size_t i = 0; i < args.size(); ++i) {
      SqlValue v = args.value(i);
      if (v.is_null()) continue;
      uint64_t code = v.kind == SqlValue::Kind::kUInt ? v.u : static_cast<uint64_t>(v.to_int());
      code &= 0xFFFFFFFFULL;  // MySQL takes the value as a 32-bit unsigned integer
      std::string bytes;
      do {
        bytes.insert(bytes.begin(), static_cast<char>(code & 0xFF));
        code >>= 8;
      } while (code != 0);
      out += bytes;
    }
    return SqlValue::of_string(std::move(out));
  }
  if (name == "INSERT") {
    // INSERT(s, pos, len, new): s with `len` characters at `pos` replaced by `new`;
    // s unchanged when pos is outside it.
    args.need(4);
    std::vector<SqlValue> v;
    if (!values(&v)) return SqlValue::null();
    const std::string s = v[0].to_text();
    const int64_t n = char_count(s);
    const int64_t pos = v[1].to_int();
    int64_t length = v[2].to_int();
    if (pos < 1 || pos > n) return SqlValue::of_string(s);
    if (length < 0 || length > n - pos + 1) length = n - pos + 1;
    return SqlValue::of_string(char_slice(s, 0, pos - 1) + v[3].to_text() +
                               char_slice(s, pos - 1 + length, -1));
  }
  if (name == "ASCII" || name == "ORD") {
    args.need(1);
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    const std::string s = v.to_text();
    if (s.empty()) return SqlValue::of_int(0);
    if (name == "ASCII") return SqlValue::of_int(static_cast<unsigned char>(s[0]));
    // ORD: a multi-byte character's bytes as one big-endian number.
    const size_t bytes = char_starts(s)[1];
    int64_t code = 0;
    for (size_t k = 0; k < bytes; ++k) code = code * 256 + static_cast<unsigned char>(s[k]);
    return SqlValue::of_int(code);
  }
  if (name == "HEX") {
    args.need(1);
    return hex(args.value(0));
  }
  if (name == "UNHEX") {
    args.need(1);
    return unhex(args.value(0));
  }
  if (name == "MD5" || name == "SHA1" || name == "SHA") {
    args.need(1);
    SqlValue v = args.value(0);
    if (v.is_null()) return v;
    std::optional<std::string> d = digest(name == "MD5" ? EVP_md5() : EVP_sha1(), v.to_text());
    return d ? SqlValue::of_string(std::move(*d)) : SqlValue::null();
  }
  if (name == "SHA2") {
    args.need(2);
    std::vector<SqlValue> v;
    if (!values(&v)) return SqlValue::null();
    const int64_t bits = v[1].to_int();
    const EVP_MD* md = bits == 224                ? EVP_sha224()
                       : bits == 256 || bits == 0 ? EVP_sha256()
                       : bits == 384              ? EVP_sha384()
                       : bits == 512              ? EVP_sha512()
                                                  : nullptr;
    if (md == nullptr) return SqlValue::null();
    std::optional<std::string> d = digest(md, v[0].to_text());
    return d ? SqlValue::of_string(std::move(*d)) : SqlValue::null();
  }
  if (name == "FORMAT") {
    args.need_between(2, 3);
    SqlValue x = args.value(0), d = args.value(1);
    if (x.is_null() || d.is_null()) return SqlValue::null();
    return SqlValue::of_string(format_number(x, d.to_int()));
  }
  if (name == "STRCMP") {
    args.need(2);
    std::vector<SqlValue> v;
    if (!values(&v)) return SqlValue::null();
    return SqlValue::of_int(
        compare(SqlValue::of_string(v[0].to_text()), SqlValue::of_string(v[1].to_text())));
  }
  if (name == "FIELD") {
    args.need_at_least(2);
    SqlValue needle = args.value(0);
    if (needle.is_null()) return SqlValue::of_int(0);
    for (size_t i = 1; i < args.size(); ++i) {
      SqlValue v = args.value(i);
      if (!v.is_null() && compare(needle, v) == 0) return SqlValue::of_int(static_cast<int64_t>(i));
    }
    return SqlValue::of_int(0);
  }
  if (name == "ELT") {
    args.need_at_least(2);
    SqlValue n = args.value(0);
    if (n.is_null()) return n;
    const int64_t index = n.to_int();
    if (index < 1 || index >= static_cast<int64_t>(args.size())) return SqlValue::null();
    SqlValue v = args.value(static_cast<size_t>(index));
    if (v.is_null()) return v;
    return SqlValue::of_string(v.to_text());
  }
  if (name == "FIND_IN_SET") {
    args.need(2);
    std::vector<SqlValue> v;
    if (!values(&v)) return SqlValue::null();
    const std::string needle = v[0].to_text(), list = v[1].to_text();
    if (needle.find(',') != std::string::npos) return SqlValue::of_int(0);
    int64_t index = 1;
    size_t at = 0;
    while (true) {
      const size_t comma = list.find(',', at);
      const std::string item = list.substr(at, comma == std::string::npos ? comma : comma - at);
      if (!list.empty() && compare(SqlValue::of_string(item), SqlValue::of_string(needle)) == 0) {
        return SqlValue::of_int(index);
      }
      if (comma == std::string::npos) return SqlValue::of_int(0);
      at = comma + 1;
      ++index;
    }
  }
  return std::nullopt;
}

}  // namespace duo::sql::executor::functions_internal
