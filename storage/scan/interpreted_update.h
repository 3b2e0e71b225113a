// InterpretedUpdate: an update program the data node applies to a row in place, the basis
// of `UPDATE t SET k = k + 1` without reading the row back to the client first.
//
// Actions: SET column = constant, SET column = NULL, ADD column, delta and SUB column,
// delta (a signed 64-bit delta, on any integer column, signed or unsigned). Each action
// reads the row's current value; NULL + delta is NULL, as in SQL. A result outside the
// column's range fails the whole update with kOutOfRange and MySQL's message, e.g.
// "BIGINT UNSIGNED value is out of range in '(`k` + 1)'". An optional guard (a
// FilterProgram) is evaluated first; unless it is TRUE the row is left alone and apply()
// reports kGuardNotMet (not an error), which is how conditional updates skip rows.
//
// A column may be the target of at most one action (SQL's `SET k = k + 1, k = k + 2`
// must be folded by the SQL layer), and never a primary-key column (changing the key
// moves the row: delete + insert, not an in-place update).
//
// Lifecycle: build with the set()/add()/... chain or decode(), bind(schema) (the schema
// must outlive the program), then apply() per row.
// Thread-safety: a bound program is immutable; apply() may run concurrently.
//
// Wire format (encode()/decode(); integers little-endian) — version 1:
//
//   u8  format version (= kUpdateFormatVersion)
//   u8  flags: bit 0 = a guard follows the actions; other bits must be zero
//   u16 action count (1 .. kUpdateActionsMax)
//   actions, each: u8 kind (UpdateActionKind), u16 column, then
//     SET       u32 size, size bytes (the column's storage encoding)
//     SET_NULL  —
//     ADD, SUB  i64 delta (two's complement)
//   if flags bit 0: u32 size, size bytes of a FilterProgram encoding (filter.h)
//   Nothing may follow. The whole encoding is at most kUpdateEncodedBytesMax bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/row/attr_values.h"
#include "storage/row/table_schema.h"
#include "storage/scan/filter.h"

namespace duo::storage {

inline constexpr uint8_t kUpdateFormatVersion = 1;
// One action per column at most, so the column limit bounds the action count.
inline constexpr uint32_t kUpdateActionsMax = kMaxColumns;
// SET values of a full row plus a maximal guard.
inline constexpr uint32_t kUpdateEncodedBytesMax = 2 * 1024 * 1024;

enum class UpdateActionKind : uint8_t { kSet = 1, kSetNull = 2, kAdd = 3, kSub = 4 };

struct UpdateAction {
  UpdateActionKind kind = UpdateActionKind::kSet;
  uint16_t column = 0;
  int64_t delta = 0;              // ADD / SUB
  uint32_t value_offset = 0;      // SET: into InterpretedUpdate::values()
  uint32_t value_size_bytes = 0;
};

enum class UpdateOutcome : uint8_t {
  kApplied,      // *out holds the new values of the updated columns
  kGuardNotMet,  // the guard was FALSE or UNKNOWN; the row stays as it is
};

class InterpretedUpdate {
 public:
  // Builders; problems (unknown columns, duplicates, too many actions) are reported by
  // validate()/bind(). `value` is in the column's storage encoding.
  InterpretedUpdate& set(uint16_t column, std::string_view value);
  InterpretedUpdate& set_null(uint16_t column);
  InterpretedUpdate& add(uint16_t column, int64_t delta);
  InterpretedUpdate& sub(uint16_t column, int64_t delta);
  // Apply only to rows for which `filter` is TRUE.
  InterpretedUpdate& guard(FilterProgram filter);

  // Checks the actions (and the guard) against `schema`: columns exist, no primary-key
  // columns, ADD/SUB only on integer columns, SET NULL only on nullable columns
  // (kNotNullViolation), SET values of the column's size (longer: kDataTooLong).
  Status validate(const TableSchema& schema) const;
  // validate() and remember `schema` (which must outlive this program) for apply().
  Status bind(const TableSchema& schema);
  bool is_bound() const { return schema_ != nullptr; }

  // Evaluates the guard, then the actions against the current `row`. Clears *out and, on
  // kApplied, fills it with (column, new value or NULL) for every action's column, in
  // action order. Errors: kOutOfRange (arithmetic leaves the column's range), kCorruption
  // (a stored integer of the wrong size), kInternal (not bound).
  Result<UpdateOutcome> apply(const RowAccessor& row, AttrValues* out) const;

  // Wire format at the top of this file; decode() rejects malformed input with
  // kInvalidArgument and returns an unbound program.
  std::string encode() const;
  static Result<InterpretedUpdate> decode(std::string_view bytes);

  const std::vector<UpdateAction>& actions() const { return actions_; }
  const std::string& values() const { return values_; }
  bool has_guard() const { return guard_.has_value(); }
  const FilterProgram* guard_program() const { return guard_ ? &*guard_ : nullptr; }

 private:
  std::string_view value_of(const UpdateAction& a) const {
    return std::string_view(values_).substr(a.value_offset, a.value_size_bytes);
  }
  Status arithmetic(const UpdateAction& action, const ColumnDef& col, ColumnValue current,
                    AttrValues* out) const;

  std::vector<UpdateAction> actions_;
  std::string values_;                  // SET constants, back to back
  std::optional<FilterProgram> guard_;
  const TableSchema* schema_ = nullptr;  // set by bind()
};

}  // namespace duo::storage
