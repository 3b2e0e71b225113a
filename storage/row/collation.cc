// The case- and accent-insensitive collation and LIKE; see collation.h.
#include "storage/row/collation.h"

#include <array>
#include <memory>

namespace duo::storage {
namespace {

struct WeightPair {
  uint16_t code_point;
  uint16_t weight;
};

// Generated: see the .inc's header and tools/gen_unicode_weights.py.
constexpr WeightPair kWeightPairs[] = {
#include "storage/row/unicode_weights.inc"
};

using WeightTable = std::array<uint16_t, 0x10000>;

// The BMP weights, expanded once from kWeightPairs (128 KiB; every other entry weighs
// its own code point).
const WeightTable& weight_table() {
  static const std::unique_ptr<const WeightTable> table = [] {
    auto t = std::make_unique<WeightTable>();
    for (uint32_t c = 0; c < t->size(); ++c) (*t)[c] = static_cast<uint16_t>(c);
    for (const WeightPair& p : kWeightPairs) (*t)[p.code_point] = p.weight;
    return std::unique_ptr<const WeightTable>(std::move(t));
  }();
  return *table;
}

bool is_continuation(uint8_t b) {
  return (b & 0xC0) == 0x80;
}

bool is_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<uint8_t>(c) >= 0x80) return false;
  }
  return true;
}

inline uint32_t ascii_weight(uint8_t c) {
  return c >= 'a' && c <= 'z' ? c - 32u : c;
}

std::string_view strip_trailing_spaces(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

uint32_t case_insensitive_weight(uint32_t code_point) {
  if (code_point < 0x80) return ascii_weight(static_cast<uint8_t>(code_point));
  if (code_point > 0xFFFF) return code_point;
  return weight_table()[code_point];
}

uint32_t next_character(std::string_view s, size_t* pos) {
  const uint8_t b0 = static_cast<uint8_t>(s[*pos]);
  if (b0 < 0x80) {
    ++*pos;
    return b0;
  }
  // Sequence length and the smallest code point it may encode (no overlong forms).
  size_t length = 0;
  uint32_t c = 0, minimum = 0;
  if ((b0 & 0xE0) == 0xC0) {
    length = 2;
    c = b0 & 0x1F;
    minimum = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    length = 3;
    c = b0 & 0x0F;
    minimum = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    length = 4;
    c = b0 & 0x07;
    minimum = 0x10000;
  }
  if (length == 0 || *pos + length > s.size()) {
    ++*pos;
    return kInvalidByteWeight + b0;
  }
  for (size_t k = 1; k < length; ++k) {
    const uint8_t b = static_cast<uint8_t>(s[*pos + k]);
    if (!is_continuation(b)) {
      ++*pos;
      return kInvalidByteWeight + b0;
    }
    c = (c << 6) | (b & 0x3F);
  }
  if (c < minimum || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
    ++*pos;
    return kInvalidByteWeight + b0;
  }
  *pos += length;
  return c;
}

int compare_case_insensitive(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const uint32_t wa = next_weight(a, &i);
    const uint32_t wb = next_weight(b, &j);
    if (wa != wb) return wa < wb ? -1 : 1;
  }
  // PAD SPACE: the rest of the longer string against spaces.
  while (i < a.size()) {
    const uint32_t w = next_weight(a, &i);
    if (w != kSpaceWeight) return w < kSpaceWeight ? -1 : 1;
  }
  while (j < b.size()) {
    const uint32_t w = next_weight(b, &j);
    if (w != kSpaceWeight) return w < kSpaceWeight ? 1 : -1;
  }
  return 0;
}

bool equal_case_insensitive(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (next_weight(a, &i) != next_weight(b, &j)) return false;
  }
  return i == a.size() && j == b.size();
}

std::string_view case_insensitive_key(std::string_view s, std::string* buffer) {
  s = strip_trailing_spaces(s);
  bool lower_case = false;
  if (is_ascii(s)) {
    for (char c : s) lower_case |= c >= 'a' && c <= 'z';
    if (!lower_case) return s;
  }
  buffer->clear();
  buffer->reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const uint32_t w = next_weight(s, &i);
    if (w < 0x80) {
      buffer->push_back(static_cast<char>(w));
    } else {
      buffer->push_back(static_cast<char>(0x80 + (w >> 16)));
      buffer->push_back(static_cast<char>((w >> 8) & 0xFF));
      buffer->push_back(static_cast<char>(w & 0xFF));
    }
  }
  return *buffer;
}

uint32_t case_insensitive_prefix(std::string_view s, bool* saturated) {
  *saturated = false;
  uint32_t prefix = 0;
  size_t i = 0;
  for (int k = 0; k < 4; ++k) {
    uint32_t byte = 0xFF;
    if (!*saturated) {
      const uint32_t w = i < s.size() ? next_weight(s, &i) : kSpaceWeight;
      if (w < 0xFF) {
        byte = w;
      } else {
        *saturated = true;
      }
    }
    prefix = (prefix << 8) | byte;
  }
  return prefix;
}

bool like_matches(std::string_view text, std::string_view pattern, char escape,
                  bool case_insensitive) {
  auto next = [case_insensitive](std::string_view s, size_t* pos) {
    return case_insensitive ? next_weight(s, pos) : next_character(s, pos);
  };
  // Greedy with one backtrack point, the last '%': a later '%' can absorb anything an
  // earlier one would have, so O(|text| * |pattern|) characters, no recursion.
  size_t t = 0, p = 0;
  size_t star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star_p = ++p;
      star_t = t;
      continue;
    }
    if (p < pattern.size()) {
      size_t after_p = p;
      bool wildcard = false;
      uint32_t wanted = 0;
      if (pattern[p] == escape && p + 1 < pattern.size()) {
        after_p = p + 1;
        wanted = next(pattern, &after_p);
      } else if (pattern[p] == '_') {
        wildcard = true;
        ++after_p;
      } else {
        wanted = next(pattern, &after_p);
      }
      size_t after_t = t;
      const uint32_t got = next(text, &after_t);
      if (wildcard || got == wanted) {
        p = after_p;
        t = after_t;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    // Retry with the '%' absorbing one more character.
    p = star_p;
    next_character(text, &star_t);
    t = star_t;
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

}  // namespace duo::storage
