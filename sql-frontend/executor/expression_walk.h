// Walking expression trees for the SELECT binder: the direct sub-expressions of a node,
// and the questions the binder asks of a whole tree (does it hold an aggregate, a
// subquery; which aggregate calls does it make).
//
// A subquery's own query block is not walked: its names belong to its own FROM, and
// the SELECT executor binds it when it runs.
//
// Thread-safety: pure functions over caller-owned ASTs.
#pragma once

#include <functional>
#include <vector>

#include "sql-frontend/parser/ast.h"

namespace duo::sql::executor {

// Calls `visit` for each direct sub-expression of `expr` (an IN subquery's operand, not
// its query).
void for_each_child(const Expr& expr, const std::function<void(const Expr&)>& visit);

// True when `expr` calls an aggregate outside any subquery.
bool contains_aggregate(const Expr& expr);
// True when `expr` holds a subquery (IN, EXISTS or scalar).
bool contains_subquery(const Expr& expr);
// True when `expr` assigns a user variable (@x := v): it has a side effect on every
// evaluation, so it is never evaluated once for all rows.
bool contains_assignment(const Expr& expr);
// Appends the aggregate calls in `expr` (outermost ones; an aggregate inside an
// aggregate's argument is 1111, reported when evaluated).
void collect_aggregates(const Expr& expr, std::vector<const Expr*>* out);
// Calls `visit` for each column reference in `expr` outside aggregate arguments (when
// `skip_aggregates`) and outside subqueries.
void for_each_column(const Expr& expr, bool skip_aggregates,
                     const std::function<void(const ColumnExpr&)>& visit);

}  // namespace duo::sql::executor
