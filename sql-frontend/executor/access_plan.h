// AccessPlan: how one statement reaches the rows of its single table, best first:
//   1. primary-key reads when the WHERE fixes every primary-key column (`=`, or `IN (...)`
//      giving a batch of keys);
//   2. a unique-index lookup when `=`/`IN` fix every column of a UNIQUE index: key reads
//      on the index's hidden table (protocol/unique_index.h; one per distinct value
//      combination, a NULL in any column giving none) return the base rows' primary
//      keys, then key reads on the base table return the rows — two round trips, as
//      NDB reads through its unique hash indexes, instead of a scan of every fragment
//      (row_source.h runs it, and re-checks the index columns on the base row: the entry
//      and the row are two reads). Among unique indexes the fewest values wins, then the
//      first declared;
//   3. an ordered-index range scan: equalities (`=`, `IN`) on the index's leading columns,
//      then one range (`<`, `<=`, `>`, `>=`, BETWEEN) on the next column; among indexes
//      the longest equality prefix wins, then one with a range, then the first declared;
//   4. otherwise a full scan.
// Scans (3-4) carry the WHERE's pushable conjuncts compiled into a FilterProgram that
// the data nodes evaluate (rows that fail never cross the network). What is not used for
// the keys or pushed stays in `residual`, evaluated in sqld on every row that comes back;
// lookups (1-2) push nothing: their residual is every conjunct but the key equalities.
//
// Index bounds only narrow a scan: every conjunct a bound came from is still pushed (or
// residual), so a bound must never be narrower than its condition but may be wider. A
// constant that does not convert exactly to the column's storage encoding gives no bound
// (the scan is widened, never a row lost); equalities deduplicate values the column's
// collation compares equal ('a' and 'A'), so IN ranges never overlap.
//
// Pushable conjunct: `column op constant` (either side; op = <> < <= > >=) on an
// integer, string or temporal column with a constant that converts exactly to the
// column's storage encoding; `column IS [NOT] NULL`; `column LIKE 'constant'` on a
// string column. DECIMAL and floating-point columns are not pushed (their rounding on
// conversion would change the comparison's meaning), nor anything else.
//
// Order: an ordered-index scan returns each fragment's rows in index order, but the API
// hands out fragment batches as they arrive (no merge across fragments), so a plan never
// promises ORDER BY order; sqld sorts.
//
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sql-frontend/catalog/sql_table.h"
#include "sql-frontend/executor/expression.h"
#include "storage/row/attr_values.h"
#include "storage/row/table_schema.h"

namespace duo::sql::executor {

// At most this many keys from an IN list (or a product of them), for the primary key or
// a unique index; beyond it: a scan.
inline constexpr size_t kKeyLookupsMax = 1000;
// At most this many index ranges (IN lists on index columns multiply); beyond it the
// equality prefix is shortened until the product fits.
inline constexpr size_t kIndexRangesMax = 64;

// Equalities known from outside the WHERE (a join's outer row): column = value.
using FixedColumns = std::vector<std::pair<uint16_t, SqlValue>>;

// One range of an ordered index: bound prefixes in index column order (storage
// encoding; empty = unbounded on that side).
struct IndexRange {
  storage::AttrValues low, high;
  bool low_inclusive = true;
  bool high_inclusive = true;
};

struct AccessPlan {
  enum class Kind : uint8_t { kKeyLookup, kUniqueLookup, kIndexScan, kScan };
  Kind kind = Kind::kScan;
  // kKeyLookup: distinct primary keys (by column id). kUniqueLookup: distinct values of
  // the unique index, each the key of its hidden table (hidden column i = the index's
  // column i); none when a NULL was asked for, no row can match.
  std::vector<storage::AttrValues> keys;
  // kUniqueLookup, kIndexScan: number in the table's ordered_indexes. kIndexScan: the
  // ranges to scan (none: an equality with NULL, no row can match).
  int32_t index = -1;
  std::vector<IndexRange> ranges;
  size_t equality_columns = 0;        // kIndexScan: leading index columns fixed by = / IN
  bool has_range = false;             // kIndexScan: a range bound on the next column
  std::string filter;                 // scans: FilterProgram::encode(); empty: all rows
  std::vector<const Expr*> residual;  // conjuncts to evaluate in sqld
  size_t pushed_conjuncts = 0;        // how many went into the filter
};

// The planner's reading of one condition, for callers that build keys themselves (a
// prepared point SELECT, prepared_plan.h) and must agree with plan_access():
// the column `column` names in `table`, nullopt when it is qualified with another table's
// name (throws 1054 for an unknown column of this table) ...
std::optional<uint16_t> planned_column(const ColumnExpr& column, const catalog::SqlTable& table);
// ... and the storage encoding of `value` as a key of `column` when it converts exactly
// (false: the planner gives no key for it, and scans).
bool exact_key_encoding(const catalog::SqlColumn& column, const SqlValue& value, std::string* out);

// `context` supplies parameters and the session for evaluating constants;
// `ordered_indexes` are the table's (bound.table_def->schema.ordered_indexes), empty for
// key lookups and full scans only; `fixed` adds equalities that are not in `where` (they
// are used for keys, bounds and the filter, but the caller still checks them).
// A caller that passes `ordered_indexes` must run kUniqueLookup (row_source.h does).
AccessPlan plan_access(const catalog::SqlTable& table, const Expr* where,
                       const EvalContext& context,
                       const std::vector<storage::IndexDef>& ordered_indexes = {},
                       const FixedColumns& fixed = {});

}  // namespace duo::sql::executor
