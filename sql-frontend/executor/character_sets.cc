// The character set and collation tables; see character_sets.h.
#include "sql-frontend/executor/character_sets.h"

namespace duo::sql::executor {

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

}  // namespace

std::span<const CharacterSetInfo> character_sets() {
  return kCharacterSets;
}

std::span<const CollationInfo> collations() {
  return kCollations;
}

}  // namespace duo::sql::executor
