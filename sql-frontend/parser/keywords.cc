// Keyword table and lookup. See keywords.h.
#include "sql-frontend/parser/keywords.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace duo::sql {
namespace {

struct KeywordEntry {
  std::string_view spelling;
  Keyword keyword;
  bool reserved;
};

constexpr KeywordEntry kKeywords[] = {
#define X(enumerator, spelling, reserved) {spelling, Keyword::enumerator, reserved},
#include "sql-frontend/parser/keyword_list.inc"
#undef X
};
constexpr size_t kKeywordCount = sizeof(kKeywords) / sizeof(kKeywords[0]);

// Longest keyword spelling ("SQL_CALC_FOUND_ROWS"); longer words are never keywords,
// which bounds the stack buffer used for upper-casing.
constexpr size_t kKeywordBytesMax = 24;

constexpr bool table_is_sorted() {
  for (size_t i = 1; i < kKeywordCount; ++i) {
    if (!(kKeywords[i - 1].spelling < kKeywords[i].spelling)) return false;
  }
  return true;
}
static_assert(table_is_sorted(), "keyword_list.inc must be sorted by spelling");

constexpr bool enum_matches_index() {
  for (size_t i = 0; i < kKeywordCount; ++i) {
    if (static_cast<size_t>(kKeywords[i].keyword) != i + 1) return false;
    if (kKeywords[i].spelling.size() > kKeywordBytesMax) return false;
  }
  return true;
}
static_assert(enum_matches_index(), "Keyword enumerators follow the table order");

// Every word the lexer reads is looked up: an open-addressing hash table over the
// spellings, built at compile time, answers in one or two probes (a binary search over
// the ~300 spellings took nine string comparisons).
constexpr size_t kHashSlots = 1024;  // a power of two, over three times kKeywordCount
static_assert(kHashSlots >= 3 * kKeywordCount);

// FNV-1a of upper-case bytes.
constexpr uint32_t hash_step(uint32_t hash, char c) {
  return (hash ^ static_cast<uint8_t>(c)) * 16777619u;
}
constexpr uint32_t kHashSeed = 2166136261u;

constexpr std::array<uint16_t, kHashSlots> make_hash_slots() {
  std::array<uint16_t, kHashSlots> slots{};  // keyword index + 1; 0 = empty
  for (size_t i = 0; i < kKeywordCount; ++i) {
    uint32_t hash = kHashSeed;
    for (char c : kKeywords[i].spelling) hash = hash_step(hash, c);
    size_t slot = hash & (kHashSlots - 1);
    while (slots[slot] != 0) slot = (slot + 1) & (kHashSlots - 1);
    slots[slot] = static_cast<uint16_t>(i + 1);
  }
  return slots;
}
constexpr std::array<uint16_t, kHashSlots> kHashTable = make_hash_slots();

}  // namespace

Keyword lookup_keyword(std::string_view word) {
  if (word.empty() || word.size() > kKeywordBytesMax) return Keyword::kNone;
  char upper[kKeywordBytesMax];
  uint32_t hash = kHashSeed;
  for (size_t i = 0; i < word.size(); ++i) {
    char c = word[i];
    upper[i] = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    hash = hash_step(hash, upper[i]);
  }
  const std::string_view key(upper, word.size());
  for (size_t slot = hash & (kHashSlots - 1);; slot = (slot + 1) & (kHashSlots - 1)) {
    const uint16_t entry = kHashTable[slot];
    if (entry == 0) return Keyword::kNone;
    if (kKeywords[entry - 1].spelling == key) return kKeywords[entry - 1].keyword;
  }
}

bool is_reserved(Keyword keyword) {
  if (keyword == Keyword::kNone) return false;
  return kKeywords[static_cast<size_t>(keyword) - 1].reserved;
}

std::string_view keyword_spelling(Keyword keyword) {
  if (keyword == Keyword::kNone) return {};
  return kKeywords[static_cast<size_t>(keyword) - 1].spelling;
}

}  // namespace duo::sql
