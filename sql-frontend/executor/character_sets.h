// Character sets and collations duo_sqld names: the one table behind SHOW CHARACTER SET,
// SHOW COLLATION and information_schema CHARACTER_SETS / COLLATIONS, with MySQL 8.0's
// names, ids (the collation id of the protocol), descriptions and attributes. Stored
// text is utf8mb4 whatever is listed here; the others are the connection character
// sets clients ask for (utf8mb3, latin1, ascii, binary).
//
// Thread-safety: immutable tables.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace duo::sql::executor {

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

}  // namespace duo::sql::executor
