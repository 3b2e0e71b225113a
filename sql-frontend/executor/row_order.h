// ORDER BY in the statements that sort rows themselves (UPDATE/DELETE ... ORDER BY,
// INSERT ... SELECT): the sort keys of a row and their order as MySQL sorts them —
// NULL before any value ascending (after descending), values by compare() (sql_value.h).
// An ENUM column sorts by its value's position in the declaration and a SET column by
// its bit set, as in MySQL (which stores those numbers; DuoDB stores the labels, see
// sql_table.h), so a bare ENUM/SET column's key is that number (enum_order_key).
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

// The sort key of `value` read from `column` (null: not a declared column, such as a
// derived table's): an ENUM's 1-based position (0 for a label it does not declare), a
// SET's bit set — the value's enum_number when it carries one (sql_value.h) — else
// `value` itself. NULL stays NULL.
SqlValue enum_order_key(const catalog::SqlColumn* column, SqlValue value);
// The sort key of ORDER BY item `expr` for the row `context` holds: its value, through
// enum_order_key when it is a bare column.
SqlValue order_key(const Expr& expr, const EvalContext& context);

}  // namespace duo::sql::executor
