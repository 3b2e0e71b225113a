// ORDER BY in the statements that sort rows themselves (UPDATE/DELETE ... ORDER BY,
// INSERT ... SELECT): the sort keys of a row and their order as MySQL sorts them —
// NULL before any value ascending (after descending), values by compare() (sql_value.h).
//
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "sql-frontend/executor/row_source.h"

namespace duo::sql::executor {

// The values of `order`'s expressions for the row `context` holds.
Row order_keys(const std::vector<OrderItem>& order, const EvalContext& context);
// True when keys `a` sort before keys `b` under `order`.
bool order_before(const Row& a, const Row& b, const std::vector<OrderItem>& order);

}  // namespace duo::sql::executor
