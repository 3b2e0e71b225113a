// AccessPlan: how one statement reaches the rows of its single table — primary-key
// reads when the WHERE fixes every primary-key column (`=`, or `IN (...)` giving a
// batch of keys), otherwise a full scan with the WHERE's pushable conjuncts compiled
// into a FilterProgram that the data nodes evaluate (rows that fail never cross the
// network). What is not used for the keys or pushed stays in `residual`, evaluated in
// sqld on every row that comes back.
//
// Pushable conjunct: `column op constant` (either side; op = <> < <= > >=) on an
// integer, string or temporal column with a constant that converts exactly to the
// column's storage encoding; `column IS [NOT] NULL`; `column LIKE 'constant'` on a
// string column. DECIMAL and floating-point columns are not pushed (their rounding on
// conversion would change the comparison's meaning), nor anything else.
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "sql-frontend/catalog/sql_table.h"
#include "sql-frontend/executor/expression.h"
#include "storage/row/attr_values.h"

namespace duo::sql::executor {

// At most this many keys from an IN list (or a product of them); beyond it: a scan.
inline constexpr size_t kKeyLookupsMax = 1000;

struct AccessPlan {
  enum class Kind : uint8_t { kKeyLookup, kScan };
  Kind kind = Kind::kScan;
  std::vector<storage::AttrValues> keys;  // kKeyLookup: distinct primary keys
  std::string filter;                     // kScan: FilterProgram::encode(); empty: all rows
  std::vector<const Expr*> residual;      // conjuncts to evaluate in sqld
  size_t pushed_conjuncts = 0;            // how many went into the filter
};

// `context` supplies parameters and the session for evaluating constants.
AccessPlan plan_access(const catalog::SqlTable& table, const Expr* where,
                       const EvalContext& context);

}  // namespace duo::sql::executor
