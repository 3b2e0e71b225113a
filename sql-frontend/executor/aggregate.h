// Aggregate functions of a grouped SELECT: COUNT(*), COUNT(expr), COUNT(DISTINCT ...),
// SUM, AVG, MIN, MAX (each also with DISTINCT) and GROUP_CONCAT, accumulated one row at a
// time in sqld.
//
// Result types are MySQL's: COUNT is a BIGINT; SUM of exact values (integers, DECIMAL)
// is an exact DECIMAL with the inputs' largest scale, of anything else a DOUBLE; AVG of
// exact values is a DECIMAL with 4 more decimals (rounded half away from zero), else a
// DOUBLE; MIN/MAX keep their argument's value. NULL arguments are skipped; with no
// non-NULL argument COUNT is 0 and the others NULL. GROUP_CONCAT joins the texts with
// ',' (or its SEPARATOR) and stops at group_concat_max_len (1024) bytes, as MySQL's default.
//
// Memory: DISTINCT keeps every distinct argument of its group; the caller bounds the
// groups (kStatementRowsMax), and the distinct values are bounded by the rows read.
//
// Thread-safety: value type; one statement's thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sql-frontend/executor/sql_value.h"
#include "sql-frontend/parser/ast.h"

namespace duo::sql::executor {

// Orders values as GROUP BY and DISTINCT compare them: NULLs equal to each other and
// first, then compare() (case-insensitive strings, numbers by value).
struct ValuesLess {
  bool operator()(const std::vector<SqlValue>& a, const std::vector<SqlValue>& b) const;
};
// Three-way comparison with NULL first (ORDER BY's ascending order).
int compare_nulls_first(const SqlValue& a, const SqlValue& b);

// group_concat_max_len's default: longer results are cut there.
inline constexpr size_t kGroupConcatLengthMax = 1024;

class Aggregator {
 public:
  // `call` is an aggregate FunctionExpr (is_aggregate_call); 1064-style argument errors
  // are the parser's. `separator`: GROUP_CONCAT's.
  explicit Aggregator(const FunctionExpr& call, std::string separator = ",");

  // Adds one row: `args` are the call's evaluated arguments (none for COUNT(*)).
  void add(std::vector<SqlValue> args);
  // The aggregate's value over the rows added so far.
  SqlValue result() const;

 private:
  enum class Kind : uint8_t { kCount, kSum, kAvg, kMin, kMax, kGroupConcat };
  void accumulate(const std::vector<SqlValue>& args);

  Kind kind_;
  bool star_;
  bool distinct_;
  std::map<std::vector<SqlValue>, bool, ValuesLess> seen_;  // DISTINCT: arguments seen
  int64_t count_ = 0;                                       // non-NULL arguments accumulated
  bool exact_ = true;                                       // every argument an integer or DECIMAL
  __int128 mantissa_ = 0;                                   // exact sum = mantissa_ / 10^scale_
  int scale_ = 0;
  double sum_double_ = 0;
  SqlValue extreme_;       // MIN/MAX
  std::string separator_;  // GROUP_CONCAT
  std::string concat_;
  bool concat_full_ = false;
};

// GROUP_CONCAT(... SEPARATOR 's'): the parser keeps 's' as the call's last argument; it
// is the separator (not a value to concatenate) when `source_text` (the query text the
// positions refer to) has the word SEPARATOR just before it.
std::optional<std::string> group_concat_separator(const FunctionExpr& call,
                                                  std::string_view source_text);

// Decimal text of mantissa / 10^scale ("-12.50" for -1250, 2).
std::string decimal_text(__int128 mantissa, int scale);

}  // namespace duo::sql::executor
