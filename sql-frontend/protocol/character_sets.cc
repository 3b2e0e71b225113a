// The character set and collation tables; see character_sets.h.
#include "sql-frontend/protocol/character_sets.h"

#include <cctype>
#include <stdexcept>

namespace duo::sql::protocol {

namespace {

constexpr CharacterSetInfo kCharacterSets[] = {
    {"ascii", "US ASCII", "ascii_general_ci", 1},
    {"binary", "Binary pseudo charset", "binary", 1},
    {"latin1", "cp1252 West European", "latin1_swedish_ci", 1},
    {"utf8mb3", "UTF-8 Unicode", "utf8mb3_general_ci", 3},
    {"utf8mb4", "UTF-8 Unicode", "utf8mb4_0900_ai_ci", 4},
};

constexpr CollationInfo kCollations[] = {
    {"ascii_bin", "ascii", 65, false, 1, false},
    {"ascii_general_ci", "ascii", 11, true, 1, false},
    {"binary", "binary", 63, true, 1, true},
    {"latin1_bin", "latin1", 47, false, 1, false},
    {"latin1_general_ci", "latin1", 48, false, 1, false},
    {"latin1_general_cs", "latin1", 49, false, 1, false},
    {"latin1_swedish_ci", "latin1", 8, true, 1, false},
    {"utf8mb3_bin", "utf8mb3", 83, false, 1, false},
    {"utf8mb3_general_ci", "utf8mb3", 33, true, 1, false},
    {"utf8mb3_unicode_ci", "utf8mb3", 192, false, 8, false},
    {"utf8mb4_0900_ai_ci", "utf8mb4", 255, true, 0, true},
    {"utf8mb4_0900_as_cs", "utf8mb4", 278, false, 0, true},
    {"utf8mb4_0900_bin", "utf8mb4", 309, false, 1, true},
    {"utf8mb4_bin", "utf8mb4", 46, false, 1, false},
    {"utf8mb4_general_ci", "utf8mb4", 45, false, 1, false},
    {"utf8mb4_unicode_520_ci", "utf8mb4", 246, false, 8, false},
    {"utf8mb4_unicode_ci", "utf8mb4", 224, false, 8, false},
};

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace

std::span<const CharacterSetInfo> character_sets() {
  return kCharacterSets;
}

std::span<const CollationInfo> collations() {
  return kCollations;
}

const CharacterSetInfo* find_character_set(std::string_view name) {
  for (const CharacterSetInfo& cs : kCharacterSets) {
    if (same_name(cs.name, name)) return &cs;
  }
  return nullptr;
}

const CollationInfo* find_collation(std::string_view name) {
  for (const CollationInfo& c : kCollations) {
    if (same_name(c.name, name)) return &c;
  }
  return nullptr;
}

const CollationInfo* find_collation(uint16_t id) {
  for (const CollationInfo& c : kCollations) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

const CollationInfo& default_collation_of(const CharacterSetInfo& character_set) {
  const CollationInfo* collation = find_collation(character_set.default_collation);
  if (collation == nullptr) throw std::logic_error("character set without its default collation");
  return *collation;
}

std::string_view unusable_client_charset(uint16_t id) {
  if (id == 35 || id == 90 || (id >= 128 && id <= 151) || id == 159) return "ucs2";
  if (id == 54 || id == 55 || (id >= 101 && id <= 124)) return "utf16";
  if (id == 56 || id == 62) return "utf16le";
  if (id == 60 || id == 61 || (id >= 160 && id <= 183)) return "utf32";
  return "";
}

}  // namespace duo::sql::protocol
