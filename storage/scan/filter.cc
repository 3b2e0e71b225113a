// FilterProgram and FilterBuilder: verification, binding, per-row evaluation, LIKE
// matching and the wire codec. See filter.h for the semantics and the byte format.
//
// Thread-safety: see filter.h (a bound program is immutable and shareable).
#include "storage/scan/filter.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

#include "storage/row/collation.h"
#include "storage/scan/byte_codec.h"

namespace duo::storage {
namespace {

using scan_codec::ByteReader;
using scan_codec::put_u16;
using scan_codec::put_u32;
using scan_codec::put_u8;

constexpr size_t kLobHeaderBytes = 8;     // BLOB/TEXT encoding: u64 length, inline bytes
constexpr size_t kBuilderNodesMax = 4 * kFilterInstructionsMax;

Status malformed(const std::string& what) {
  return Status(ErrorCode::kInvalidArgument, "malformed filter program: " + what);
}
Status invalid(const std::string& what) {
  return Status(ErrorCode::kInvalidArgument, "invalid filter: " + what);
}

bool is_leaf(FilterOpcode op) {
  switch (op) {
    case FilterOpcode::kTrue:
    case FilterOpcode::kFalse:
    case FilterOpcode::kCmpConst:
    case FilterOpcode::kCmpColumn:
    case FilterOpcode::kIsNull:
    case FilterOpcode::kIsNotNull:
    case FilterOpcode::kLike:
    case FilterOpcode::kBytesDiffer:
      return true;
    default:
      return false;
  }
}

bool has_constant(FilterOpcode op) {
  return op == FilterOpcode::kCmpConst || op == FilterOpcode::kLike ||
         op == FilterOpcode::kBytesDiffer;
}

// Bytes one instruction takes in the wire format.
size_t wire_size_bytes(const FilterInstruction& ins) {
  switch (ins.opcode) {
    case FilterOpcode::kCmpConst:
    case FilterOpcode::kLike:
      return 8 + ins.constant_size_bytes;
    case FilterOpcode::kBytesDiffer:
      return 7 + ins.constant_size_bytes;
    case FilterOpcode::kCmpColumn: return 6;
    case FilterOpcode::kIsNull:
    case FilterOpcode::kIsNotNull:
    case FilterOpcode::kJumpIfFalse:
    case FilterOpcode::kJumpIfTrue:
      return 3;
    default: return 1;
  }
}

const char* opcode_name(FilterOpcode op) {
  switch (op) {
    case FilterOpcode::kTrue: return "TRUE";
    case FilterOpcode::kFalse: return "FALSE";
    case FilterOpcode::kCmpConst: return "CMP_CONST";
    case FilterOpcode::kCmpColumn: return "CMP_COLUMN";
    case FilterOpcode::kIsNull: return "IS_NULL";
    case FilterOpcode::kIsNotNull: return "IS_NOT_NULL";
    case FilterOpcode::kLike: return "LIKE";
    case FilterOpcode::kNot: return "NOT";
    case FilterOpcode::kAnd: return "AND";
    case FilterOpcode::kOr: return "OR";
    case FilterOpcode::kJumpIfFalse: return "JUMP_IF_FALSE";
    case FilterOpcode::kJumpIfTrue: return "JUMP_IF_TRUE";
    case FilterOpcode::kBytesDiffer: return "BYTES_DIFFER";
  }
  return "?";
}

const char* cmp_name(CmpOp op) {
  static constexpr const char* kNames[] = {"=", "<>", "<", "<=", ">", ">="};
  return kNames[static_cast<uint8_t>(op)];
}

bool cmp_holds(CmpOp op, int c) {
  switch (op) {
    case CmpOp::kEq: return c == 0;
    case CmpOp::kNe: return c != 0;
    case CmpOp::kLt: return c < 0;
    case CmpOp::kLe: return c <= 0;
    case CmpOp::kGt: return c > 0;
    case CmpOp::kGe: return c >= 0;
  }
  return false;
}

// ---------------------------------------------------------------------------------------
// LIKE

// Binary collation: byte equality. Case-insensitive columns compare by weights instead
// (storage/row/collation.h, the collation compare_values uses).
bool same_text(std::string_view a, std::string_view b, bool fold) {
  if (fold) return equal_case_insensitive(a, b);
  return a == b;
}

// True when `s` starts with `literal` (by weights when `fold`: 'été' starts with 'ET',
// though the byte lengths differ).
bool starts_with(std::string_view s, std::string_view literal, bool fold) {
  if (!fold) return s.substr(0, literal.size()) == literal;
  size_t i = 0, j = 0;
  while (j < literal.size()) {
    if (i >= s.size() || next_weight(s, &i) != next_weight(literal, &j)) return false;
  }
  return true;
}

// Classifies a pattern once, so the common 'abc%' and wildcard-free cases cost one
// comparison per row. `literal` receives the unescaped literal for kPrefix / kExact.
LikeMode analyze_like(std::string_view pattern, char escape, std::string* literal) {
  literal->clear();
  size_t i = 0;
  while (i < pattern.size()) {
    const char c = pattern[i];
    if (c == '%') break;
    if (c == '_') return LikeMode::kGeneral;
    if (c == escape && i + 1 < pattern.size()) {
      literal->push_back(pattern[i + 1]);
      i += 2;
    } else {
      literal->push_back(c);  // includes a trailing escape, which MySQL takes literally
      ++i;
    }
  }
  if (i == pattern.size()) return LikeMode::kExact;
  for (size_t j = i; j < pattern.size(); ++j) {
    if (pattern[j] != '%') return LikeMode::kGeneral;
  }
  return LikeMode::kPrefix;
}

// '%' matches any run of bytes, '_' exactly one byte (binary collation) or character
// (case-insensitive: collation.h like_matches), `escape` makes the next pattern byte
// literal. Greedy with backtracking to the last '%' only: sufficient because a later '%'
// can absorb anything an earlier one would have, so the worst case is
// O(|subject| * |pattern|) with no recursion.
bool like_general(std::string_view s, std::string_view p, char escape, bool fold) {
  if (fold) return like_matches(s, p, escape, true);
  size_t si = 0, pi = 0;
  size_t star_pi = std::string_view::npos, star_si = 0;
  while (si < s.size()) {
    if (pi < p.size()) {
      const char c = p[pi];
      if (c == '%') {
        star_pi = ++pi;
        star_si = si;
        continue;
      }
      if (c == '_') {
        ++pi;
        ++si;
        continue;
      }
      char literal = c;
      size_t width = 1;
      if (c == escape && pi + 1 < p.size()) {
        literal = p[pi + 1];
        width = 2;
      }
      if (literal == s[si]) {
        pi += width;
        ++si;
        continue;
      }
    }
    if (star_pi == std::string_view::npos) return false;
    pi = star_pi;
    si = ++star_si;
  }
  while (pi < p.size() && p[pi] == '%') ++pi;
  return pi == p.size();
}

// What LIKE sees of a stored value: CHAR without its pad spaces (as MySQL returns CHAR),
// BLOB/TEXT their inline bytes, anything else the bytes as stored.
std::string_view like_subject(const ColumnDef& col, std::string_view v) {
  switch (col.type) {
    case ColumnType::kChar:
      while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
      return v;
    case ColumnType::kText:
    case ColumnType::kBlob: {
      if (v.size() < kLobHeaderBytes) return {};
      uint64_t total_bytes = 0;
      for (size_t i = 0; i < kLobHeaderBytes; ++i) {
        total_bytes |= uint64_t{static_cast<uint8_t>(v[i])} << (8 * i);
      }
      v.remove_prefix(kLobHeaderBytes);
      return v.substr(0, std::min<uint64_t>(total_bytes, v.size()));
    }
    default:
      return v;
  }
}

// ---------------------------------------------------------------------------------------
// Validation helpers

bool is_fixed_scalar(ColumnType type) {
  return !is_string(type);  // numbers and temporals have exactly one encoded size
}

Status check_constant(const ColumnDef& col, std::string_view value) {
  if (is_fixed_scalar(col.type)) {
    if (value.size() != column_max_size(col)) {
      return invalid("constant for column '" + col.name + "' has " + std::to_string(value.size()) +
                     " bytes, expected " + std::to_string(column_max_size(col)));
    }
    return Status::OK();
  }
  if (col.type == ColumnType::kText || col.type == ColumnType::kBlob) {
    uint64_t total_bytes = 0;
    for (size_t i = 0; i < kLobHeaderBytes && i < value.size(); ++i) {
      total_bytes |= uint64_t{static_cast<uint8_t>(value[i])} << (8 * i);
    }
    if (value.size() < kLobHeaderBytes || total_bytes != value.size() - kLobHeaderBytes) {
      return invalid("constant for BLOB/TEXT column '" + col.name +
                     "' is not in the column's encoding (8-byte length, then the bytes)");
    }
  }
  // CHAR/VARCHAR/BINARY/VARBINARY: any length compares meaningfully (PAD SPACE or
  // byte order), e.g. a constant longer than the column simply never matches.
  return Status::OK();
}

Status check_comparable(const ColumnDef& a, const ColumnDef& b) {
  const bool same = a.type == b.type && a.is_unsigned == b.is_unsigned &&
                    a.collation == b.collation &&
                    (a.type != ColumnType::kDecimal ||
                     (a.precision == b.precision && a.scale == b.scale));
  if (!same) {
    return invalid("columns '" + a.name + "' and '" + b.name +
                   "' have different types and cannot be compared in a pushed filter");
  }
  return Status::OK();
}

}  // namespace

// =========================================================================================
// FilterProgram

Status FilterProgram::append(FilterInstruction ins, std::string_view constant) {
  if (code_.size() >= kFilterInstructionsMax) {
    return invalid("more than " + std::to_string(kFilterInstructionsMax) + " instructions");
  }
  switch (ins.opcode) {
    case FilterOpcode::kCmpConst:
    case FilterOpcode::kCmpColumn:
      if (static_cast<uint8_t>(ins.cmp) > static_cast<uint8_t>(CmpOp::kGe)) {
        return malformed("unknown comparison " + std::to_string(static_cast<int>(ins.cmp)));
      }
      break;
    case FilterOpcode::kLike:
      if (ins.escape == '%' || ins.escape == '_') {
        return invalid("LIKE escape character may not be '%' or '_'");
      }
      break;
    case FilterOpcode::kTrue:
    case FilterOpcode::kFalse:
    case FilterOpcode::kIsNull:
    case FilterOpcode::kIsNotNull:
    case FilterOpcode::kNot:
    case FilterOpcode::kAnd:
    case FilterOpcode::kOr:
    case FilterOpcode::kJumpIfFalse:
    case FilterOpcode::kJumpIfTrue:
    case FilterOpcode::kBytesDiffer:
      break;
    default:
      return malformed("unknown opcode " + std::to_string(static_cast<int>(ins.opcode)));
  }
  ins.constant_offset = 0;
  ins.constant_size_bytes = 0;
  ins.literal_offset = 0;
  ins.literal_size_bytes = 0;
  if (has_constant(ins.opcode)) {
    if (constant.size() > kFilterConstantBytesMax) {
      return invalid("constant of " + std::to_string(constant.size()) + " bytes (max " +
                     std::to_string(kFilterConstantBytesMax) + ")");
    }
    ins.constant_size_bytes = static_cast<uint32_t>(constant.size());
  }
  const size_t size_bytes = encoded_size_bytes_ + wire_size_bytes(ins);
  if (size_bytes > kFilterEncodedBytesMax) {
    return invalid("encoded program larger than " + std::to_string(kFilterEncodedBytesMax) +
                   " bytes");
  }
  encoded_size_bytes_ = size_bytes;
  if (has_constant(ins.opcode)) {
    ins.constant_offset = static_cast<uint32_t>(constants_.size());
    constants_.append(constant);
  }
  if (ins.opcode == FilterOpcode::kLike) {
    std::string literal;
    ins.like_mode = analyze_like(constant, ins.escape, &literal);
    if (ins.like_mode != LikeMode::kGeneral) {
      ins.literal_offset = static_cast<uint32_t>(constants_.size());
      ins.literal_size_bytes = static_cast<uint32_t>(literal.size());
      constants_.append(literal);
    }
  } else {
    ins.like_mode = LikeMode::kGeneral;
  }
  code_.push_back(ins);
  return Status::OK();
}

Status FilterProgram::verify() const {
  const size_t n = code_.size();
  if (n == 0) return malformed("no instructions");
  if (n > kFilterInstructionsMax) return malformed("too many instructions");
  // Expected stack depth at each instruction reached by a jump (-1: no jump lands there).
  // All jumps go forward, so one pass sees every jump before its target.
  std::vector<int32_t> depth_at_target(n + 1, -1);
  int32_t depth = 0;
  for (size_t i = 0; i < n; ++i) {
    if (depth_at_target[i] >= 0 && depth_at_target[i] != depth) {
      return malformed("stack depth differs between paths at instruction " + std::to_string(i));
    }
    const FilterInstruction& ins = code_[i];
    if (is_leaf(ins.opcode)) {
      ++depth;
    } else {
      switch (ins.opcode) {
        case FilterOpcode::kNot:
          if (depth < 1) return malformed("NOT without operand at instruction " + std::to_string(i));
          break;
        case FilterOpcode::kAnd:
        case FilterOpcode::kOr:
          if (depth < 2) {
            return malformed("AND/OR without two operands at instruction " + std::to_string(i));
          }
          --depth;
          break;
        case FilterOpcode::kJumpIfFalse:
        case FilterOpcode::kJumpIfTrue:
          if (depth < 1) return malformed("jump without operand at instruction " + std::to_string(i));
          if (ins.target <= i || ins.target > n) {
            return malformed("jump target " + std::to_string(ins.target) + " at instruction " +
                             std::to_string(i) + " is not forward within the program");
          }
          if (depth_at_target[ins.target] >= 0 && depth_at_target[ins.target] != depth) {
            return malformed("stack depth differs between paths at instruction " +
                             std::to_string(ins.target));
          }
          depth_at_target[ins.target] = depth;
          break;
        default:
          return malformed("unknown opcode at instruction " + std::to_string(i));
      }
    }
    if (depth > static_cast<int32_t>(kFilterStackDepthMax)) {
      return malformed("needs more than " + std::to_string(kFilterStackDepthMax) +
                       " stack slots (condition nested too deeply)");
    }
  }
  if (depth_at_target[n] >= 0 && depth_at_target[n] != depth) {
    return malformed("stack depth differs between paths at the end");
  }
  if (depth != 1) return malformed("leaves " + std::to_string(depth) + " values on the stack");
  return Status::OK();
}

Status FilterProgram::validate(const TableSchema& schema) const {
  DUO_RETURN_IF_ERROR(verify());
  const size_t columns = schema.columns.size();
  for (const FilterInstruction& ins : code_) {
    if (!is_leaf(ins.opcode) || ins.opcode == FilterOpcode::kTrue ||
        ins.opcode == FilterOpcode::kFalse) {
      continue;
    }
    if (ins.column >= columns) return invalid("unknown column " + std::to_string(ins.column));
    const ColumnDef& col = schema.columns[ins.column];
    switch (ins.opcode) {
      case FilterOpcode::kCmpConst:
      case FilterOpcode::kBytesDiffer:
        DUO_RETURN_IF_ERROR(check_constant(col, constant_of(ins)));
        break;
      case FilterOpcode::kCmpColumn:
        if (ins.column2 >= columns) return invalid("unknown column " + std::to_string(ins.column2));
        DUO_RETURN_IF_ERROR(check_comparable(col, schema.columns[ins.column2]));
        break;
      case FilterOpcode::kLike:
        if (!is_string(col.type)) {
          return invalid("LIKE on non-string column '" + col.name + "' cannot be pushed down");
        }
        break;
      default:
        break;
    }
  }
  return Status::OK();
}

Status FilterProgram::bind(const TableSchema& schema) {
  DUO_RETURN_IF_ERROR(validate(schema));
  schema_ = &schema;
  return Status::OK();
}

Truth FilterProgram::evaluate_leaf(const FilterInstruction& ins, const RowAccessor& row) const {
  switch (ins.opcode) {
    case FilterOpcode::kTrue: return Truth::kTrue;
    case FilterOpcode::kFalse: return Truth::kFalse;
    case FilterOpcode::kIsNull: return row.get(ins.column).is_null ? Truth::kTrue : Truth::kFalse;
    case FilterOpcode::kIsNotNull:
      return row.get(ins.column).is_null ? Truth::kFalse : Truth::kTrue;
    case FilterOpcode::kCmpConst: {
      const ColumnValue v = row.get(ins.column);
      if (v.is_null) return Truth::kUnknown;
      const int c = compare_values(schema_->columns[ins.column], v.data, constant_of(ins));
      return cmp_holds(ins.cmp, c) ? Truth::kTrue : Truth::kFalse;
    }
    case FilterOpcode::kBytesDiffer: {
      const ColumnValue v = row.get(ins.column);
      if (v.is_null) return Truth::kUnknown;
      return v.data != constant_of(ins) ? Truth::kTrue : Truth::kFalse;
    }
    case FilterOpcode::kCmpColumn: {
      const ColumnValue a = row.get(ins.column);
      if (a.is_null) return Truth::kUnknown;
      const ColumnValue b = row.get(ins.column2);
      if (b.is_null) return Truth::kUnknown;
      const int c = compare_values(schema_->columns[ins.column], a.data, b.data);
      return cmp_holds(ins.cmp, c) ? Truth::kTrue : Truth::kFalse;
    }
    case FilterOpcode::kLike: {
      const ColumnValue v = row.get(ins.column);
      if (v.is_null) return Truth::kUnknown;
      const ColumnDef& col = schema_->columns[ins.column];
      const bool fold = col.collation == Collation::kCaseInsensitive;
      const std::string_view s = like_subject(col, v.data);
      bool match = false;
      switch (ins.like_mode) {
        case LikeMode::kExact:
          match = same_text(s, literal_of(ins), fold);
          break;
        case LikeMode::kPrefix: {
          const std::string_view literal = literal_of(ins);
          match = starts_with(s, literal, fold);
          break;
        }
        case LikeMode::kGeneral:
          match = like_general(s, constant_of(ins), ins.escape, fold);
          break;
      }
      return match ? Truth::kTrue : Truth::kFalse;
    }
    default:
      return Truth::kUnknown;  // unreachable: verify() admits only known opcodes
  }
}

Truth FilterProgram::evaluate_truth(const RowAccessor& row) const {
  if (schema_ == nullptr) {
    // A caller bug, not bad input: evaluating without a schema cannot mean anything.
    std::fprintf(stderr, "FilterProgram::evaluate on an unbound program\n");
    std::abort();
  }
  // verify() proved every access below stays within [0, kFilterStackDepthMax).
  std::array<Truth, kFilterStackDepthMax> stack;
  stack[0] = Truth::kFalse;
  uint32_t depth = 0;
  const size_t n = code_.size();
  size_t pc = 0;
  while (pc < n) {
    const FilterInstruction& ins = code_[pc];
    switch (ins.opcode) {
      case FilterOpcode::kNot:
        stack[depth - 1] = truth_not(stack[depth - 1]);
        break;
      case FilterOpcode::kAnd:
        --depth;
        stack[depth - 1] = truth_and(stack[depth - 1], stack[depth]);
        break;
      case FilterOpcode::kOr:
        --depth;
        stack[depth - 1] = truth_or(stack[depth - 1], stack[depth]);
        break;
      case FilterOpcode::kJumpIfFalse:
        if (stack[depth - 1] == Truth::kFalse) {
          pc = ins.target;
          continue;
        }
        break;
      case FilterOpcode::kJumpIfTrue:
        if (stack[depth - 1] == Truth::kTrue) {
          pc = ins.target;
          continue;
        }
        break;
      default:
        stack[depth++] = evaluate_leaf(ins, row);
        break;
    }
    ++pc;
  }
  return stack[0];
}

std::string FilterProgram::encode() const {
  std::string out;
  out.reserve(encoded_size_bytes_);
  out.push_back(static_cast<char>(kFilterFormatVersion));
  put_u16(&out, static_cast<uint16_t>(code_.size()));
  for (const FilterInstruction& ins : code_) {
    out.push_back(static_cast<char>(ins.opcode));
    switch (ins.opcode) {
      case FilterOpcode::kCmpConst:
        out.push_back(static_cast<char>(ins.cmp));
        put_u16(&out, ins.column);
        put_u32(&out, ins.constant_size_bytes);
        out.append(constant_of(ins));
        break;
      case FilterOpcode::kCmpColumn:
        out.push_back(static_cast<char>(ins.cmp));
        put_u16(&out, ins.column);
        put_u16(&out, ins.column2);
        break;
      case FilterOpcode::kIsNull:
      case FilterOpcode::kIsNotNull:
        put_u16(&out, ins.column);
        break;
      case FilterOpcode::kLike:
        out.push_back(ins.escape);
        put_u16(&out, ins.column);
        put_u32(&out, ins.constant_size_bytes);
        out.append(constant_of(ins));
        break;
      case FilterOpcode::kBytesDiffer:
        put_u16(&out, ins.column);
        put_u32(&out, ins.constant_size_bytes);
        out.append(constant_of(ins));
        break;
      case FilterOpcode::kJumpIfFalse:
      case FilterOpcode::kJumpIfTrue:
        put_u16(&out, static_cast<uint16_t>(ins.target));
        break;
      default:
        break;
    }
  }
  return out;
}

Result<FilterProgram> FilterProgram::decode(std::string_view bytes) {
  if (bytes.size() > kFilterEncodedBytesMax) return malformed("larger than the size limit");
  ByteReader r(bytes);
  uint8_t version = 0;
  uint16_t count = 0;
  if (!r.u8(&version) || !r.u16(&count)) return malformed("truncated header");
  if (version != kFilterFormatVersion) {
    return malformed("unsupported format version " + std::to_string(version));
  }
  if (count == 0 || count > kFilterInstructionsMax) {
    return malformed("instruction count " + std::to_string(count) + " out of range");
  }
  FilterProgram program;
  program.code_.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t opcode = 0;
    if (!r.u8(&opcode)) return malformed("truncated at instruction " + std::to_string(i));
    FilterInstruction ins;
    ins.opcode = static_cast<FilterOpcode>(opcode);
    std::string_view constant;
    bool ok = true;
    switch (ins.opcode) {
      case FilterOpcode::kTrue:
      case FilterOpcode::kFalse:
      case FilterOpcode::kNot:
      case FilterOpcode::kAnd:
      case FilterOpcode::kOr:
        break;
      case FilterOpcode::kCmpConst: {
        uint8_t cmp = 0;
        uint32_t size = 0;
        ok = r.u8(&cmp) && r.u16(&ins.column) && r.u32(&size) && r.take(size, &constant);
        ins.cmp = static_cast<CmpOp>(cmp);
        break;
      }
      case FilterOpcode::kCmpColumn: {
        uint8_t cmp = 0;
        ok = r.u8(&cmp) && r.u16(&ins.column) && r.u16(&ins.column2);
        ins.cmp = static_cast<CmpOp>(cmp);
        break;
      }
      case FilterOpcode::kIsNull:
      case FilterOpcode::kIsNotNull:
        ok = r.u16(&ins.column);
        break;
      case FilterOpcode::kLike: {
        uint8_t escape = 0;
        uint32_t size = 0;
        ok = r.u8(&escape) && r.u16(&ins.column) && r.u32(&size) && r.take(size, &constant);
        ins.escape = static_cast<char>(escape);
        break;
      }
      case FilterOpcode::kJumpIfFalse:
      case FilterOpcode::kJumpIfTrue: {
        uint16_t target = 0;
        ok = r.u16(&target);
        ins.target = target;
        break;
      }
      case FilterOpcode::kBytesDiffer: {
        uint32_t size = 0;
        ok = r.u16(&ins.column) && r.u32(&size) && r.take(size, &constant);
        break;
      }
      default:
        return malformed("unknown opcode " + std::to_string(opcode) + " at instruction " +
                         std::to_string(i));
    }
    if (!ok) return malformed("truncated at instruction " + std::to_string(i));
    DUO_RETURN_IF_ERROR(program.append(ins, constant));
  }
  if (!r.done()) return malformed("trailing bytes after the last instruction");
  DUO_RETURN_IF_ERROR(program.verify());
  return program;
}

std::string FilterProgram::to_string() const {
  std::string out;
  char buf[64];
  for (size_t i = 0; i < code_.size(); ++i) {
    const FilterInstruction& ins = code_[i];
    out += std::to_string(i) + ": " + opcode_name(ins.opcode);
    switch (ins.opcode) {
      case FilterOpcode::kCmpConst: {
        out += " c" + std::to_string(ins.column) + " " + cmp_name(ins.cmp) + " 0x";
        for (char c : constant_of(ins)) {
          std::snprintf(buf, sizeof buf, "%02x", static_cast<uint8_t>(c));
          out += buf;
        }
        break;
      }
      case FilterOpcode::kCmpColumn:
        out += " c" + std::to_string(ins.column) + " " + cmp_name(ins.cmp) + " c" +
               std::to_string(ins.column2);
        break;
      case FilterOpcode::kIsNull:
      case FilterOpcode::kIsNotNull:
        out += " c" + std::to_string(ins.column);
        break;
      case FilterOpcode::kLike:
        out += " c" + std::to_string(ins.column) + " '" + std::string(constant_of(ins)) + "'";
        break;
      case FilterOpcode::kBytesDiffer:
        out += " c" + std::to_string(ins.column) + " 0x";
        for (char c : constant_of(ins)) {
          std::snprintf(buf, sizeof buf, "%02x", static_cast<uint8_t>(c));
          out += buf;
        }
        break;
      case FilterOpcode::kJumpIfFalse:
      case FilterOpcode::kJumpIfTrue:
        out += " -> " + std::to_string(ins.target);
        break;
      default:
        break;
    }
    out += "\n";
  }
  return out;
}

// =========================================================================================
// FilterBuilder

bool FilterBuilder::check_handle(Node node) {
  if (node.id < nodes_.size()) return true;
  if (first_error_.empty()) first_error_ = "invalid filter node handle";
  return false;
}

FilterBuilder::Node FilterBuilder::add_leaf(FilterInstruction leaf, std::string_view constant) {
  if (nodes_.size() >= kBuilderNodesMax) {
    if (first_error_.empty()) first_error_ = "too many filter nodes";
    return Node{};
  }
  TreeNode node;
  node.leaf = leaf;
  if (has_constant(leaf.opcode)) {
    node.constant_index = static_cast<uint32_t>(constants_.size());
    constants_.emplace_back(constant);
  }
  nodes_.push_back(std::move(node));
  return Node{static_cast<uint32_t>(nodes_.size() - 1)};
}

FilterBuilder::Node FilterBuilder::always_true() {
  FilterInstruction ins;
  ins.opcode = FilterOpcode::kTrue;
  return add_leaf(ins, {});
}

FilterBuilder::Node FilterBuilder::always_false() {
  FilterInstruction ins;
  ins.opcode = FilterOpcode::kFalse;
  return add_leaf(ins, {});
}

FilterBuilder::Node FilterBuilder::cmp(uint16_t column, CmpOp op, std::string_view value) {
  FilterInstruction ins;
  ins.opcode = FilterOpcode::kCmpConst;
  ins.cmp = op;
  ins.column = column;
  return add_leaf(ins, value);
}

FilterBuilder::Node FilterBuilder::cmp_columns(uint16_t left, CmpOp op, uint16_t right) {
  FilterInstruction ins;
  ins.opcode = FilterOpcode::kCmpColumn;
  ins.cmp = op;
  ins.column = left;
  ins.column2 = right;
  return add_leaf(ins, {});
}

FilterBuilder::Node FilterBuilder::is_null(uint16_t column) {
  FilterInstruction ins;
  ins.opcode = FilterOpcode::kIsNull;
  ins.column = column;
  return add_leaf(ins, {});
}

FilterBuilder::Node FilterBuilder::is_not_null(uint16_t column) {
  FilterInstruction ins;
  ins.opcode = FilterOpcode::kIsNotNull;
  ins.column = column;
  return add_leaf(ins, {});
}

FilterBuilder::Node FilterBuilder::bytes_differ(uint16_t column, std::string_view value) {
  FilterInstruction ins;
  ins.opcode = FilterOpcode::kBytesDiffer;
  ins.column = column;
  return add_leaf(ins, value);
}

FilterBuilder::Node FilterBuilder::like(uint16_t column, std::string_view pattern, char escape) {
  FilterInstruction ins;
  ins.opcode = FilterOpcode::kLike;
  ins.column = column;
  ins.escape = escape;
  return add_leaf(ins, pattern);
}

FilterBuilder::Node FilterBuilder::not_(Node child) { return combine(FilterOpcode::kNot, &child, 1); }

FilterBuilder::Node FilterBuilder::combine(FilterOpcode op, const Node* children, size_t count) {
  TreeNode node;
  node.leaf.opcode = op;
  uint32_t nesting = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!check_handle(children[i])) return Node{};
    node.children.push_back(children[i].id);
    nesting = std::max(nesting, nodes_[children[i].id].nesting);
  }
  node.nesting = nesting + 1;
  if (node.nesting > kFilterNestingMax) {
    if (first_error_.empty()) {
      first_error_ = "condition nested deeper than " + std::to_string(kFilterNestingMax) + " levels";
    }
    return Node{};
  }
  if (nodes_.size() >= kBuilderNodesMax) {
    if (first_error_.empty()) first_error_ = "too many filter nodes";
    return Node{};
  }
  nodes_.push_back(std::move(node));
  return Node{static_cast<uint32_t>(nodes_.size() - 1)};
}

Status FilterBuilder::emit(uint32_t id, FilterProgram* program) const {
  // Recursion depth is bounded by kFilterNestingMax (checked when nodes are made).
  const TreeNode& node = nodes_[id];
  const FilterOpcode op = node.leaf.opcode;
  if (op == FilterOpcode::kNot) {
    DUO_RETURN_IF_ERROR(emit(node.children[0], program));
    FilterInstruction ins;
    ins.opcode = FilterOpcode::kNot;
    return program->append(ins, {});
  }
  if (op == FilterOpcode::kAnd || op == FilterOpcode::kOr) {
    const bool is_and = op == FilterOpcode::kAnd;
    FilterInstruction ins;
    if (node.children.empty()) {
      ins.opcode = is_and ? FilterOpcode::kTrue : FilterOpcode::kFalse;
      return program->append(ins, {});
    }
    // c1 [JUMP end] c2 OP [JUMP end] c3 OP ...: a FALSE (AND) or TRUE (OR) partial result
    // already decides the group, and it sits where the group's result belongs.
    std::vector<size_t> jumps;
    DUO_RETURN_IF_ERROR(emit(node.children[0], program));
    for (size_t i = 1; i < node.children.size(); ++i) {
      jumps.push_back(program->code_.size());
      ins.opcode = is_and ? FilterOpcode::kJumpIfFalse : FilterOpcode::kJumpIfTrue;
      DUO_RETURN_IF_ERROR(program->append(ins, {}));
      DUO_RETURN_IF_ERROR(emit(node.children[i], program));
      ins.opcode = op;
      DUO_RETURN_IF_ERROR(program->append(ins, {}));
    }
    for (size_t j : jumps) program->code_[j].target = static_cast<uint32_t>(program->code_.size());
    return Status::OK();
  }
  const std::string_view constant =
      has_constant(op) ? std::string_view(constants_[node.constant_index]) : std::string_view();
  return program->append(node.leaf, constant);
}

Result<FilterProgram> FilterBuilder::build(Node root) const {
  if (!first_error_.empty()) return invalid(first_error_);
  if (root.id >= nodes_.size()) return invalid("invalid filter node handle");
  FilterProgram program;
  DUO_RETURN_IF_ERROR(emit(root.id, &program));
  DUO_RETURN_IF_ERROR(program.verify());
  return program;
}

}  // namespace duo::storage
