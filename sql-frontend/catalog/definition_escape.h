// The escaping of free text (names, types, defaults, comments, view text) inside the
// tab-separated SQL definitions the catalog keeps in the dictionary (sql_table.cc's table
// definitions, sql_view.cc's view definitions): '%', tab, newline and ',' become %25,
// %09, %0A and %2C, so a field never holds a separator.
#pragma once

#include <string>
#include <string_view>

namespace duo::sql::catalog {

std::string escape(std::string_view s);
// False when `s` holds a '%' not followed by one of the four codes.
bool unescape(std::string_view s, std::string* out);

}  // namespace duo::sql::catalog
