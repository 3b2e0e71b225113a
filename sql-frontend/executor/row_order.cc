// ORDER BY keys and their comparison; see row_order.h.
#include "sql-frontend/executor/row_order.h"

namespace duo::sql::executor {

SqlValue enum_order_key(const catalog::SqlColumn* column, SqlValue value) {
  if (value.enum_number) return SqlValue::of_uint(value.u);  // read from the column
  if (column == nullptr || column->enum_values.empty() || value.is_null()) return value;
  return SqlValue::of_uint(enum_number(*column, value.to_text()));
}

SqlValue order_key(const Expr& expr, const EvalContext& context) {
  SqlValue value = evaluate(expr, context);
  if (expr.kind != ExprKind::kColumn) return value;
  return enum_order_key(column_of(expr.as<ColumnExpr>(), context), std::move(value));
}

Row order_keys(const std::vector<OrderItem>& order, const EvalContext& context) {
  EvalContext eval = context;
  eval.clause = "order clause";
  Row keys;
  for (const OrderItem& item : order) keys.push_back(order_key(*item.expr, eval));
  return keys;
}

bool order_before(const Row& a, const Row& b, const std::vector<OrderItem>& order) {
  for (size_t k = 0; k < order.size(); ++k) {
    const SqlValue& x = a[k];
    const SqlValue& y = b[k];
    int c = 0;
    if (x.is_null() || y.is_null()) {
      c = x.is_null() == y.is_null() ? 0 : (x.is_null() ? -1 : 1);
    } else {
      c = compare(x, y);
    }
    if (c != 0) return order[k].descending ? c > 0 : c < 0;
  }
  return false;
}

}  // namespace duo::sql::executor
