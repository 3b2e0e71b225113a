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

}  // namespace

Keyword lookup_keyword(std::string_view word) {
  if (word.empty() || word.size() > kKeywordBytesMax) return Keyword::kNone;
  char upper[kKeywordBytesMax];
  for (size_t i = 0; i < word.size(); ++i) {
    char c = word[i];
    upper[i] = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  }
  std::string_view key(upper, word.size());
  const KeywordEntry* end = kKeywords + kKeywordCount;
  const KeywordEntry* it =
      std::lower_bound(kKeywords, end, key,
                       [](const KeywordEntry& e, std::string_view k) { return e.spelling < k; });
  if (it == end || it->spelling != key) return Keyword::kNone;
  return it->keyword;
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
