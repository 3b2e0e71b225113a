// FilterProgram: a pushed-down scan filter, evaluated by the data node against every row
// a scan visits so that rejected rows never cross the network.
//
// Semantics are SQL's three-valued logic: a leaf is TRUE, FALSE or UNKNOWN (a NULL
// operand), AND/OR/NOT combine as SQL does, and a row passes only when the whole program
// is TRUE. Leaves: column <op> constant, column <op> column (same type), IS [NOT] NULL,
// LIKE (under the column's collation, '%', '_', an escape character), byte inequality
// with a constant and constants.
//
// Representation: a postfix instruction vector evaluated with a fixed-size stack.
// n-ary AND/OR compile to a chain "c1 [JUMP_IF_FALSE end] c2 AND [JUMP_IF_FALSE end] c3
// AND ..." so that evaluation short-circuits and the stack depth grows with the nesting
// depth of the condition, not with the number of operands (a 1000-term IN list needs two
// stack slots). Every program — built or decoded — passes one verifier that checks stack
// depth (<= kFilterStackDepthMax), jump targets (forward, in range, consistent depth) and
// limits, so evaluation needs no bounds checks.
//
// Lifecycle: build with FilterBuilder (or decode()), then bind() to the TableSchema the
// rows follow, then evaluate() per row. bind() keeps a pointer to the schema, which must
// outlive the program (schemas are immutable and shared by every fragment of a table).
//
// Thread-safety: a bound program is immutable; evaluate() may run concurrently from many
// threads. Building, decoding and binding need one owner.
//
// Wire format (encode()/decode(); all integers little-endian) — version 1:
//
//   u8  format version (= kFilterFormatVersion)
//   u16 instruction count N (1 .. kFilterInstructionsMax)
//   N instructions, each starting with a u8 opcode (FilterOpcode):
//     0x01 TRUE             —
//     0x02 FALSE            —
//     0x03 CMP_CONST        u8 cmp (CmpOp), u16 column, u32 size, size bytes of constant
//                           (the column's storage encoding, see column.h)
//     0x04 CMP_COLUMN       u8 cmp, u16 left column, u16 right column
//     0x05 IS_NULL          u16 column
//     0x06 IS_NOT_NULL      u16 column
//     0x07 LIKE             u8 escape byte, u16 column, u32 size, size bytes of pattern
//     0x08 NOT              —
//     0x09 AND              — (pops two, pushes one)
//     0x0A OR               —
//     0x0B JUMP_IF_FALSE    u16 target instruction index (jumps when the top is FALSE;
//                           the top stays on the stack)
//     0x0C JUMP_IF_TRUE     u16 target (jumps when the top is TRUE)
//     0x0D BYTES_DIFFER     u16 column, u32 size, size bytes of constant (the column's
//                           storage encoding): TRUE when the stored bytes differ from it
//                           (no collation: MySQL's "row changed" test), UNKNOWN for NULL
//   Nothing may follow the last instruction. Targets are instruction indexes, strictly
//   forward, at most N (N = end of program). The stack must hold exactly one value at the
//   end, never more than kFilterStackDepthMax, and must have the same depth at a jump
//   target on every path. Constants are at most kFilterConstantBytesMax bytes; the whole
//   encoding at most kFilterEncodedBytesMax.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/row/attr_values.h"
#include "storage/row/table_schema.h"

namespace duo::storage {

inline constexpr uint8_t kFilterFormatVersion = 1;
// Evaluation stack slots (one byte each, on the C stack of the scanning thread).
inline constexpr uint32_t kFilterStackDepthMax = 64;
// Builder tree depth; also bounds the builder's recursion when it emits code.
inline constexpr uint32_t kFilterNestingMax = 48;
// Per-row work is linear in the program size, so bound it.
inline constexpr uint32_t kFilterInstructionsMax = 16384;
// One constant or LIKE pattern: a TEXT/BLOB encoding (8 + 65535 inline bytes) fits.
inline constexpr uint32_t kFilterConstantBytesMax = 128 * 1024;
inline constexpr uint32_t kFilterEncodedBytesMax = 1024 * 1024;

// SQL truth values. A row passes a filter only on kTrue.
enum class Truth : uint8_t { kFalse = 0, kTrue = 1, kUnknown = 2 };

constexpr Truth truth_not(Truth a) {
  return a == Truth::kUnknown ? Truth::kUnknown : (a == Truth::kTrue ? Truth::kFalse : Truth::kTrue);
}
constexpr Truth truth_and(Truth a, Truth b) {
  if (a == Truth::kFalse || b == Truth::kFalse) return Truth::kFalse;
  if (a == Truth::kUnknown || b == Truth::kUnknown) return Truth::kUnknown;
  return Truth::kTrue;
}
constexpr Truth truth_or(Truth a, Truth b) {
  if (a == Truth::kTrue || b == Truth::kTrue) return Truth::kTrue;
  if (a == Truth::kUnknown || b == Truth::kUnknown) return Truth::kUnknown;
  return Truth::kFalse;
}

enum class CmpOp : uint8_t { kEq = 0, kNe = 1, kLt = 2, kLe = 3, kGt = 4, kGe = 5 };

enum class FilterOpcode : uint8_t {
  kTrue = 0x01,
  kFalse = 0x02,
  kCmpConst = 0x03,
  kCmpColumn = 0x04,
  kIsNull = 0x05,
  kIsNotNull = 0x06,
  kLike = 0x07,
  kNot = 0x08,
  kAnd = 0x09,
  kOr = 0x0A,
  kJumpIfFalse = 0x0B,
  kJumpIfTrue = 0x0C,
  kBytesDiffer = 0x0D,
};

// How a LIKE pattern is matched; chosen when the instruction is added, not per row.
enum class LikeMode : uint8_t {
  kGeneral,  // '%' and '_' anywhere
  kPrefix,   // 'abc%' (a literal, then only '%'): one prefix comparison
  kExact,    // no wildcard at all: one equality (LIKE does not pad, unlike '=')
};

// One decoded instruction (in-memory form; the wire form is the compact one above).
struct FilterInstruction {
  FilterOpcode opcode = FilterOpcode::kTrue;
  CmpOp cmp = CmpOp::kEq;
  LikeMode like_mode = LikeMode::kGeneral;
  char escape = '\\';
  uint16_t column = 0;
  uint16_t column2 = 0;             // CMP_COLUMN: right-hand column
  uint32_t target = 0;              // jumps: instruction index
  uint32_t constant_offset = 0;     // CMP_CONST value / LIKE pattern, in constants()
  uint32_t constant_size_bytes = 0;
  uint32_t literal_offset = 0;      // LIKE prefix/exact: the unescaped literal
  uint32_t literal_size_bytes = 0;
};

class FilterProgram {
 public:
  // An empty program is not valid; obtain programs from FilterBuilder::build or decode().
  FilterProgram() = default;

  // Checks column ids, constant sizes and type compatibility against `schema`.
  Status validate(const TableSchema& schema) const;
  // validate() and remember `schema` (which must outlive this program) for evaluate().
  Status bind(const TableSchema& schema);
  bool is_bound() const { return schema_ != nullptr; }

  // The SQL truth value of the program for one row. Requires bind().
  Truth evaluate_truth(const RowAccessor& row) const;
  // True when the row passes (the program is TRUE; FALSE and UNKNOWN reject).
  bool evaluate(const RowAccessor& row) const { return evaluate_truth(row) == Truth::kTrue; }

  // The wire format documented at the top of this file; decode() accepts any byte string
  // and returns kInvalidArgument for anything malformed. A decoded program is unbound.
  std::string encode() const;
  static Result<FilterProgram> decode(std::string_view bytes);

  // One line per instruction, for logs, EXPLAIN and test failures.
  std::string to_string() const;

  const std::vector<FilterInstruction>& instructions() const { return code_; }
  const std::string& constants() const { return constants_; }

 private:
  friend class FilterBuilder;

  // Appends an instruction, storing `constant` (CMP_CONST value or LIKE pattern). Checks
  // per-instruction limits; the whole-program checks are in verify().
  Status append(FilterInstruction instruction, std::string_view constant);
  // Stack depth, jump targets and size limits over the whole program.
  Status verify() const;
  std::string_view constant_of(const FilterInstruction& ins) const {
    return std::string_view(constants_).substr(ins.constant_offset, ins.constant_size_bytes);
  }
  std::string_view literal_of(const FilterInstruction& ins) const {
    return std::string_view(constants_).substr(ins.literal_offset, ins.literal_size_bytes);
  }
  Truth evaluate_leaf(const FilterInstruction& ins, const RowAccessor& row) const;

  std::vector<FilterInstruction> code_;
  std::string constants_;
  size_t encoded_size_bytes_ = 3;        // what encode() will produce; bounded by append()
  const TableSchema* schema_ = nullptr;  // set by bind()
};

// Builds a FilterProgram from a condition tree. Node handles are cheap values valid only
// for the builder that made them; a node may be used in several places. Errors (a bad
// handle, a too-deep tree, an invalid escape) are remembered and reported by build().
//
//   FilterBuilder b;
//   auto f = b.and_({b.cmp(kAge, CmpOp::kGe, encode_int(age_col, 18)),
//                    b.or_({b.is_null(kEmail), b.like(kEmail, "%@example.com")})});
//   DUO_ASSIGN_OR_RETURN(FilterProgram program, b.build(f));
//
// Not thread-safe.
class FilterBuilder {
 public:
  struct Node {
    uint32_t id = UINT32_MAX;
  };

  Node always_true();
  Node always_false();
  // column <op> constant; `value` in the column's storage encoding.
  Node cmp(uint16_t column, CmpOp op, std::string_view value);
  // column <op> other column (same type, signedness, collation; DECIMAL same p and s).
  Node cmp_columns(uint16_t left, CmpOp op, uint16_t right);
  Node is_null(uint16_t column);
  Node is_not_null(uint16_t column);
  // The column's stored bytes differ from `value` (its storage encoding): what MySQL
  // counts as a changed value, whatever the collation says (an interpreted update's
  // guard "the assignment changes the row").
  Node bytes_differ(uint16_t column, std::string_view value);
  // column LIKE pattern under the column's collation; `escape` may not be '%' or '_'.
  Node like(uint16_t column, std::string_view pattern, char escape = '\\');
  Node not_(Node child);
  // n-ary; and_({}) is TRUE and or_({}) is FALSE (the identities).
  Node and_(std::initializer_list<Node> children) { return combine(FilterOpcode::kAnd, children.begin(), children.size()); }
  Node and_(const std::vector<Node>& children) { return combine(FilterOpcode::kAnd, children.data(), children.size()); }
  Node or_(std::initializer_list<Node> children) { return combine(FilterOpcode::kOr, children.begin(), children.size()); }
  Node or_(const std::vector<Node>& children) { return combine(FilterOpcode::kOr, children.data(), children.size()); }

  // Compiles the tree under `root`. The result is unbound: call bind(schema) next.
  Result<FilterProgram> build(Node root) const;

 private:
  struct TreeNode {
    FilterInstruction leaf;          // opcode and leaf operands
    uint32_t constant_index = 0;     // into constants_ (leaves with a constant)
    std::vector<uint32_t> children;  // NOT / AND / OR
    uint32_t nesting = 1;
  };
  Node add_leaf(FilterInstruction leaf, std::string_view constant);
  Node combine(FilterOpcode op, const Node* children, size_t count);
  bool check_handle(Node node);
  Status emit(uint32_t id, FilterProgram* program) const;

  std::vector<TreeNode> nodes_;
  std::vector<std::string> constants_;  // CMP_CONST values and LIKE patterns
  std::string first_error_;             // a Status here would abort if never read
};

}  // namespace duo::storage
