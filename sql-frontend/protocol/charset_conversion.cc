// Connection character set conversion; see charset_conversion.h.
#include "sql-frontend/protocol/charset_conversion.h"

#include <cstdint>

namespace duo::sql::protocol {

namespace {

// cp1252 0x80..0x9F (MySQL's latin1); the undefined ones map to the C1 control.
constexpr uint16_t kCp1252High[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

void append_utf8(std::string* out, uint32_t code_point) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

// Decodes one UTF-8 character at text[*i] and advances; UINT32_MAX for an invalid
// sequence (one byte is consumed).
uint32_t next_code_point(std::string_view text, size_t* i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t lead = byte(*i);
  size_t length = 0;
  uint32_t code_point = 0;
  if (lead < 0x80) {
    ++*i;
    return lead;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2;
    code_point = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    code_point = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    code_point = lead & 0x07;
  } else {
    ++*i;
    return UINT32_MAX;
  }
  if (*i + length > text.size()) {
    ++*i;
    return UINT32_MAX;
  }
  for (size_t k = 1; k < length; ++k) {
    if ((byte(*i + k) & 0xC0) != 0x80) {
      ++*i;
      return UINT32_MAX;
    }
    code_point = (code_point << 6) | (byte(*i + k) & 0x3F);
  }
  // Overlong forms and surrogates are not characters.
  constexpr uint32_t kMinimum[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (code_point < kMinimum[length] || code_point > 0x10FFFF ||
      (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    ++*i;
    return UINT32_MAX;
  }
  *i += length;
  return code_point;
}

char latin1_byte(uint32_t code_point) {
  if (code_point < 0x80 || (code_point >= 0xA0 && code_point <= 0xFF)) {
    return static_cast<char>(code_point);
  }
  for (size_t k = 0; k < 32; ++k) {
    if (kCp1252High[k] == code_point) return static_cast<char>(0x80 + k);
  }
  return '?';
}

}  // namespace

TextEncoding encoding_of_charset(std::string_view charset) {
  if (charset == "utf8mb3" || charset == "utf8") return TextEncoding::kUtf8mb3;
  if (charset == "latin1") return TextEncoding::kLatin1;
  if (charset == "ascii") return TextEncoding::kAscii;
  if (charset == "binary") return TextEncoding::kBinary;
  return TextEncoding::kUtf8mb4;
}

std::string to_utf8mb4(std::string_view text, TextEncoding encoding) {
  if (encoding == TextEncoding::kLatin1) {
    std::string out;
    out.reserve(text.size() + text.size() / 4);
    for (char c : text) {
      const auto byte = static_cast<uint8_t>(c);
      append_utf8(&out, byte >= 0x80 && byte < 0xA0 ? kCp1252High[byte - 0x80] : byte);
    }
    return out;
  }
  if (encoding == TextEncoding::kAscii) {
    std::string out(text);
    for (char& c : out) {
      if (static_cast<uint8_t>(c) >= 0x80) c = '?';
    }
    return out;
  }
  return std::string(text);  // utf8mb3 is a subset of utf8mb4; binary is taken as is
}

std::string from_utf8mb4(std::string_view text, TextEncoding encoding) {
  if (!needs_conversion(encoding)) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const uint32_t code_point = next_code_point(text, &i);
    if (code_point == UINT32_MAX) {
      out.push_back('?');
    } else if (encoding == TextEncoding::kLatin1) {
      out.push_back(latin1_byte(code_point));
    } else if (encoding == TextEncoding::kAscii) {
      out.push_back(code_point < 0x80 ? static_cast<char>(code_point) : '?');
    } else if (code_point > 0xFFFF) {  // utf8mb3
      out.push_back('?');
    } else {
      append_utf8(&out, code_point);
    }
  }
  return out;
}

}  // namespace duo::sql::protocol
