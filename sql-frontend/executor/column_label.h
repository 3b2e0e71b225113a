// The name MySQL gives a result column computed from an expression: the expression as
// the client wrote it (`SELECT 1+1` is named "1+1", `SELECT @@session.autocommit`
// "@@session.autocommit"), cut at the end of its select item — the ',' or the clause
// keyword that follows at nesting depth 0. Clients show these names as headers, and
// some look values up by them.
//
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace duo::sql::executor {

// The select item's source text starting at byte `offset` of `text` (the whole query
// text the parser's offsets refer to); empty if `offset` is outside it.
std::string select_item_label(std::string_view text, uint32_t offset);

}  // namespace duo::sql::executor
