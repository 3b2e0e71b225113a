// InterpretedUpdate: building, validation against a schema, application to a row, and the
// wire codec. See interpreted_update.h for semantics and the byte format.
//
// Thread-safety: see interpreted_update.h (a bound program is immutable and shareable).
#include "storage/scan/interpreted_update.h"

#include <limits>

#include "storage/scan/byte_codec.h"

namespace duo::storage {
namespace {

using scan_codec::ByteReader;
using int128 = __int128;  // g++ extension: headroom for 64-bit value +/- 64-bit delta

constexpr size_t kLobHeaderBytes = 8;

Status invalid(const std::string& what) {
  return Status(ErrorCode::kInvalidArgument, "invalid update: " + what);
}
Status malformed(const std::string& what) {
  return Status(ErrorCode::kInvalidArgument, "malformed update program: " + what);
}

const char* int_type_name(ColumnType type) {
  switch (type) {
    case ColumnType::kTinyInt: return "TINYINT";
    case ColumnType::kSmallInt: return "SMALLINT";
    case ColumnType::kMediumInt: return "MEDIUMINT";
    case ColumnType::kInt: return "INT";
    case ColumnType::kBigInt: return "BIGINT";
    default: return "?";
  }
}

bool valid_kind(uint8_t kind) {
  return kind >= static_cast<uint8_t>(UpdateActionKind::kSet) &&
         kind <= static_cast<uint8_t>(UpdateActionKind::kSub);
}

// A SET value must be exactly what the row layer stores for the column.
Status check_set_value(const ColumnDef& col, std::string_view value) {
  const uint32_t max_bytes = column_max_size(col);
  if (!is_var_sized(col)) {
    // Fixed-size columns, including CHAR/BINARY (stored padded to their length).
    if (value.size() != max_bytes) {
      return invalid("value for column '" + col.name + "' has " + std::to_string(value.size()) +
                     " bytes, expected " + std::to_string(max_bytes));
    }
    return Status::OK();
  }
  if (value.size() > max_bytes) {
    return Status(ErrorCode::kDataTooLong, "Data too long for column '" + col.name + "'");
  }
  if (col.type == ColumnType::kText || col.type == ColumnType::kBlob) {
    uint64_t total_bytes = 0;
    for (size_t i = 0; i < kLobHeaderBytes && i < value.size(); ++i) {
      total_bytes |= uint64_t{static_cast<uint8_t>(value[i])} << (8 * i);
    }
    if (value.size() < kLobHeaderBytes || total_bytes != value.size() - kLobHeaderBytes) {
      return invalid("value for BLOB/TEXT column '" + col.name +
                     "' is not in the column's encoding (8-byte length, then the bytes)");
    }
  }
  return Status::OK();
}

}  // namespace

InterpretedUpdate& InterpretedUpdate::set(uint16_t column, std::string_view value) {
  UpdateAction a;
  a.kind = UpdateActionKind::kSet;
  a.column = column;
  // Offsets are 32-bit; a program this large is rejected by validate() anyway, so keep
  // the offset in range by not storing more.
  if (values_.size() + value.size() <= kUpdateEncodedBytesMax) {
    a.value_offset = static_cast<uint32_t>(values_.size());
    a.value_size_bytes = static_cast<uint32_t>(value.size());
    values_.append(value);
  } else {
    a.value_offset = 0;
    a.value_size_bytes = UINT32_MAX;  // marks the action as oversized for validate()
  }
  actions_.push_back(a);
  return *this;
}

InterpretedUpdate& InterpretedUpdate::set_null(uint16_t column) {
  UpdateAction a;
  a.kind = UpdateActionKind::kSetNull;
  a.column = column;
  actions_.push_back(a);
  return *this;
}

InterpretedUpdate& InterpretedUpdate::add(uint16_t column, int64_t delta) {
  UpdateAction a;
  a.kind = UpdateActionKind::kAdd;
  a.column = column;
  a.delta = delta;
  actions_.push_back(a);
  return *this;
}

InterpretedUpdate& InterpretedUpdate::sub(uint16_t column, int64_t delta) {
  UpdateAction a;
  a.kind = UpdateActionKind::kSub;
  a.column = column;
  a.delta = delta;
  actions_.push_back(a);
  return *this;
}

InterpretedUpdate& InterpretedUpdate::guard(FilterProgram filter) {
  guard_ = std::move(filter);
  return *this;
}

Status InterpretedUpdate::validate(const TableSchema& schema) const {
  if (actions_.empty()) return invalid("no actions");
  if (actions_.size() > kUpdateActionsMax) {
    return invalid("more than " + std::to_string(kUpdateActionsMax) + " actions");
  }
  std::vector<bool> is_key(schema.columns.size(), false);
  for (uint16_t id : schema.primary_key) {
    if (id < is_key.size()) is_key[id] = true;
  }
  std::vector<bool> seen(schema.columns.size(), false);
  for (const UpdateAction& a : actions_) {
    if (a.column >= schema.columns.size()) return invalid("unknown column " + std::to_string(a.column));
    const ColumnDef& col = schema.columns[a.column];
    if (seen[a.column]) return invalid("column '" + col.name + "' is updated twice");
    seen[a.column] = true;
    if (is_key[a.column]) {
      return invalid("primary key column '" + col.name + "' cannot be updated in place");
    }
    switch (a.kind) {
      case UpdateActionKind::kSet:
        if (a.value_size_bytes == UINT32_MAX) {
          return invalid("SET values larger than " + std::to_string(kUpdateEncodedBytesMax) + " bytes");
        }
        DUO_RETURN_IF_ERROR(check_set_value(col, value_of(a)));
        break;
      case UpdateActionKind::kSetNull:
        if (!col.nullable) {
          return Status(ErrorCode::kNotNullViolation, "Column '" + col.name + "' cannot be null");
        }
        break;
      case UpdateActionKind::kAdd:
      case UpdateActionKind::kSub:
        if (!is_integer(col.type)) {
          return invalid("ADD/SUB needs an integer column, '" + col.name + "' is not one");
        }
        break;
      default:
        return invalid("unknown action kind");
    }
  }
  if (guard_) DUO_RETURN_IF_ERROR(guard_->validate(schema));
  return Status::OK();
}

Status InterpretedUpdate::bind(const TableSchema& schema) {
  DUO_RETURN_IF_ERROR(validate(schema));
  if (guard_) DUO_RETURN_IF_ERROR(guard_->bind(schema));
  schema_ = &schema;
  return Status::OK();
}

Status InterpretedUpdate::arithmetic(const UpdateAction& action, const ColumnDef& col,
                                     ColumnValue current, AttrValues* out) const {
  if (current.is_null) {
    out->add_null(action.column);  // NULL + 1 is NULL
    return Status::OK();
  }
  if (current.data.size() != column_max_size(col)) {
    return Status(ErrorCode::kCorruption, "stored value of column '" + col.name + "' has " +
                                              std::to_string(current.data.size()) + " bytes");
  }
  const int128 old_value = col.is_unsigned ? int128{decode_uint(col, current.data)}
                                           : int128{decode_int(col, current.data)};
  const bool is_add = action.kind == UpdateActionKind::kAdd;
  const int128 new_value = is_add ? old_value + action.delta : old_value - action.delta;
  bool fits;
  if (new_value < 0) {
    fits = new_value >= std::numeric_limits<int64_t>::min() &&
           int_fits(col, static_cast<int64_t>(new_value));
  } else {
    fits = new_value <= std::numeric_limits<uint64_t>::max() &&
           uint_fits(col, static_cast<uint64_t>(new_value));
  }
  if (!fits) {
    return Status(ErrorCode::kOutOfRange,
                  std::string(int_type_name(col.type)) + (col.is_unsigned ? " UNSIGNED" : "") +
                      " value is out of range in '(`" + col.name + "` " + (is_add ? "+" : "-") +
                      " " + std::to_string(action.delta) + ")'");
  }
  out->add(action.column, new_value < 0 ? encode_int(col, static_cast<int64_t>(new_value))
                                        : encode_uint(col, static_cast<uint64_t>(new_value)));
  return Status::OK();
}

Result<UpdateOutcome> InterpretedUpdate::apply(const RowAccessor& row, AttrValues* out) const {
  if (schema_ == nullptr) return Status(ErrorCode::kInternal, "interpreted update is not bound");
  out->clear();
  if (guard_ && !guard_->evaluate(row)) return UpdateOutcome::kGuardNotMet;
  for (const UpdateAction& a : actions_) {
    switch (a.kind) {
      case UpdateActionKind::kSet:
        out->add(a.column, value_of(a));
        break;
      case UpdateActionKind::kSetNull:
        out->add_null(a.column);
        break;
      case UpdateActionKind::kAdd:
      case UpdateActionKind::kSub: {
        Status s = arithmetic(a, schema_->columns[a.column], row.get(a.column), out);
        if (!s.ok()) {
          out->clear();  // all or nothing: no half-applied update escapes
          return s;
        }
        break;
      }
    }
  }
  return UpdateOutcome::kApplied;
}

std::string InterpretedUpdate::encode() const {
  using namespace scan_codec;
  std::string out;
  put_u8(&out, kUpdateFormatVersion);
  put_u8(&out, guard_ ? 1 : 0);
  put_u16(&out, static_cast<uint16_t>(actions_.size()));
  for (const UpdateAction& a : actions_) {
    put_u8(&out, static_cast<uint8_t>(a.kind));
    put_u16(&out, a.column);
    switch (a.kind) {
      case UpdateActionKind::kSet: {
        // An oversized SET (rejected by validate) encodes as empty rather than overrun.
        const std::string_view v = a.value_size_bytes == UINT32_MAX ? std::string_view() : value_of(a);
        put_u32(&out, static_cast<uint32_t>(v.size()));
        out.append(v);
        break;
      }
      case UpdateActionKind::kSetNull:
        break;
      case UpdateActionKind::kAdd:
      case UpdateActionKind::kSub:
        put_u64(&out, static_cast<uint64_t>(a.delta));
        break;
    }
  }
  if (guard_) {
    const std::string g = guard_->encode();
    put_u32(&out, static_cast<uint32_t>(g.size()));
    out.append(g);
  }
  return out;
}

Result<InterpretedUpdate> InterpretedUpdate::decode(std::string_view bytes) {
  if (bytes.size() > kUpdateEncodedBytesMax) return malformed("larger than the size limit");
  ByteReader r(bytes);
  uint8_t version = 0, flags = 0;
  uint16_t count = 0;
  if (!r.u8(&version) || !r.u8(&flags) || !r.u16(&count)) return malformed("truncated header");
  if (version != kUpdateFormatVersion) {
    return malformed("unsupported format version " + std::to_string(version));
  }
  if ((flags & ~1u) != 0) return malformed("unknown flags");
  if (count == 0 || count > kUpdateActionsMax) {
    return malformed("action count " + std::to_string(count) + " out of range");
  }
  InterpretedUpdate update;
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t kind = 0;
    uint16_t column = 0;
    if (!r.u8(&kind) || !r.u16(&column)) return malformed("truncated at action " + std::to_string(i));
    if (!valid_kind(kind)) return malformed("unknown action kind " + std::to_string(kind));
    switch (static_cast<UpdateActionKind>(kind)) {
      case UpdateActionKind::kSet: {
        uint32_t size = 0;
        std::string_view value;
        if (!r.u32(&size) || !r.take(size, &value)) {
          return malformed("truncated at action " + std::to_string(i));
        }
        update.set(column, value);
        break;
      }
      case UpdateActionKind::kSetNull:
        update.set_null(column);
        break;
      case UpdateActionKind::kAdd:
      case UpdateActionKind::kSub: {
        uint64_t delta = 0;
        if (!r.u64(&delta)) return malformed("truncated at action " + std::to_string(i));
        if (static_cast<UpdateActionKind>(kind) == UpdateActionKind::kAdd) {
          update.add(column, static_cast<int64_t>(delta));
        } else {
          update.sub(column, static_cast<int64_t>(delta));
        }
        break;
      }
    }
  }
  if (flags & 1u) {
    uint32_t size = 0;
    std::string_view guard_bytes;
    if (!r.u32(&size) || !r.take(size, &guard_bytes)) return malformed("truncated guard");
    DUO_ASSIGN_OR_RETURN(FilterProgram guard_program, FilterProgram::decode(guard_bytes));
    update.guard(std::move(guard_program));
  }
  if (!r.done()) return malformed("trailing bytes");
  return update;
}

}  // namespace duo::storage
