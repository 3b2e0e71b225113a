// See definition_escape.h.
#include "sql-frontend/catalog/definition_escape.h"

namespace duo::sql::catalog {

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '%':
        out += "%25";
        break;
      case '\t':
        out += "%09";
        break;
      case '\n':
        out += "%0A";
        break;
      case ',':
        out += "%2C";
        break;
      default:
        out += c;
    }
  }
  return out;
}

bool unescape(std::string_view s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      *out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return false;
    const std::string hex(s.substr(i + 1, 2));
    if (hex == "25")
      *out += '%';
    else if (hex == "09")
      *out += '\t';
    else if (hex == "0A")
      *out += '\n';
    else if (hex == "2C")
      *out += ',';
    else
      return false;
    i += 2;
  }
  return true;
}

}  // namespace duo::sql::catalog
