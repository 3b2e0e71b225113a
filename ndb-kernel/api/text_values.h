// Text <-> storage values for one table: what the C API (and tools) use to turn
// column-name/value text pairs into the AttrValues of key operations, and read results
// back into text. Values are parsed and printed as MySQL does (storage::parse_value /
// format_value).
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/wire_codec.h"
#include "storage/row/attr_values.h"

namespace duo::api {

// A column given by name with a text value; nullopt is SQL NULL.
struct TextValue {
  std::string column;
  std::optional<std::string> value;
};

// The columns of a key operation, split: primary key columns into *key, the others
// into *values (either may be null to refuse non-key / require only key columns).
// Errors: kInvalidArgument for an unknown or repeated column, a NULL key value, a
// non-key column where none is allowed, or a missing key column; parse_value's errors
// (kDataTooLong, kOutOfRange, kInvalidArgument) name the column.
Status values_from_text(const protocol::TableDef& table, const std::vector<TextValue>& text,
                        storage::AttrValues* key, storage::AttrValues* values);

// The values as text pairs, in the order given.
std::vector<TextValue> values_to_text(const protocol::TableDef& table,
                                      const storage::AttrValues& values);

}  // namespace duo::api
