// ASCII case folding for SQL names that MySQL compares case-insensitively (columns,
// variables, prepared statement names). Identifiers beyond ASCII compare as bytes.
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace duo::sql {

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline bool ascii_iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace duo::sql
