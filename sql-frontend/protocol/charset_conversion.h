// Text conversion between the connection character set and utf8mb4, the character set
// duo_sqld keeps everything in: what a client sends (SQL text, string parameters) is
// converted to utf8mb4 before parsing, and text results to character_set_results
// before they are sent. Characters the target cannot hold become '?', as MySQL's
// conversion does; bytes that are not UTF-8 in utf8mb4 text also become '?'.
//
// latin1 is MySQL's latin1, which is Windows cp1252 (0x80..0x9F are €, ‚, ƒ ...; the
// five bytes cp1252 leaves undefined map to U+0081, U+008D, U+008F, U+0090, U+009D).
// utf8mb3 cannot hold characters beyond U+FFFF. binary and utf8mb4 are not converted.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace duo::sql::protocol {

enum class TextEncoding : uint8_t { kUtf8mb4, kUtf8mb3, kLatin1, kAscii, kBinary };

// The encoding of a listed character set name (character_sets.h); kUtf8mb4 otherwise.
TextEncoding encoding_of_charset(std::string_view charset);
// Whether text in `encoding` must be converted to or from utf8mb4.
inline bool needs_conversion(TextEncoding encoding) {
  return encoding != TextEncoding::kUtf8mb4 && encoding != TextEncoding::kBinary;
}

// `text` in `encoding` as utf8mb4.
std::string to_utf8mb4(std::string_view text, TextEncoding encoding);
// utf8mb4 `text` in `encoding`.
std::string from_utf8mb4(std::string_view text, TextEncoding encoding);

}  // namespace duo::sql::protocol
