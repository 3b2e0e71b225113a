// Character sets and collations duo_sqld names: the one table behind the connection
// character set (the handshake's collation id, SET NAMES), SHOW CHARACTER SET, SHOW
// COLLATION and information_schema CHARACTER_SETS / COLLATIONS, with MySQL 8.0's names,
// ids (the collation id of the protocol), descriptions and attributes. Stored text is
// utf8mb4 whatever is listed here; the others are connection character sets clients ask
// for (utf8mb3, latin1, ascii, binary), converted by charset_conversion.h.
//
// Thread-safety: immutable tables.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace duo::sql::protocol {

struct CharacterSetInfo {
  std::string_view name;
  std::string_view description;
  std::string_view default_collation;
  uint32_t max_length_bytes;
};

struct CollationInfo {
  std::string_view name;
  std::string_view character_set;
  uint16_t id;
  bool is_default;
  uint32_t sort_length;
  bool no_pad;  // PAD_ATTRIBUTE: NO PAD (the 0900 collations) or PAD SPACE
};

// By name.
std::span<const CharacterSetInfo> character_sets();
// By name.
std::span<const CollationInfo> collations();

// Lookups (names case-insensitive); null when not listed.
const CharacterSetInfo* find_character_set(std::string_view name);
const CollationInfo* find_collation(std::string_view name);
const CollationInfo* find_collation(uint16_t id);
// The default collation of a listed character set.
const CollationInfo& default_collation_of(const CharacterSetInfo& character_set);
// The character set of a collation id of ucs2, utf16, utf16le or utf32 ("" for any
// other): MySQL cannot parse SQL in them and refuses them as a client character set
// (1231), in the handshake as in SET NAMES.
std::string_view unusable_client_charset(uint16_t id);
// The collation id utf8mb4_0900_ai_ci, the server's default.
inline constexpr uint16_t kDefaultCollationId = 255;

}  // namespace duo::sql::protocol
