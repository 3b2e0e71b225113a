// SQL keywords: the enumeration the lexer attaches to every word token, and the lookup
// from spelling to keyword. Keywords are case-insensitive; whether a word is reserved
// (may not be an unquoted identifier) follows MySQL 8.0 for the words listed in
// keyword_list.inc. Words that are not in the list are plain identifiers, so the list
// only needs the words this grammar gives a meaning to (plus reserved words to reject).
//
// Thread-safety: the table is constant; all functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace duo::sql {

enum class Keyword : uint16_t {
  kNone = 0,  // the word is not a keyword
#define X(enumerator, spelling, reserved) enumerator,
#include "sql-frontend/parser/keyword_list.inc"
#undef X
};

// The keyword spelled `word` (any case), or Keyword::kNone.
Keyword lookup_keyword(std::string_view word);

// True if `keyword` may not be used as an unquoted identifier. False for kNone.
bool is_reserved(Keyword keyword);

// The canonical (upper-case) spelling of `keyword`; "" for kNone.
std::string_view keyword_spelling(Keyword keyword);

}  // namespace duo::sql
