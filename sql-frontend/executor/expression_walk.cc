// Expression tree walking; see expression_walk.h.
#include "sql-frontend/executor/expression_walk.h"

#include "sql-frontend/executor/expression.h"

namespace duo::sql::executor {

void for_each_child(const Expr& expr, const std::function<void(const Expr&)>& visit) {
  auto visit_if = [&](const ExprPtr& child) {
    if (child) visit(*child);
  };
  switch (expr.kind) {
    case ExprKind::kUnary:
      visit_if(expr.as<UnaryExpr>().operand);
      break;
    case ExprKind::kBinary:
      visit_if(expr.as<BinaryExpr>().left);
      visit_if(expr.as<BinaryExpr>().right);
      break;
    case ExprKind::kIs:
      visit_if(expr.as<IsExpr>().operand);
      break;
    case ExprKind::kBetween:
      visit_if(expr.as<BetweenExpr>().operand);
      visit_if(expr.as<BetweenExpr>().low);
      visit_if(expr.as<BetweenExpr>().high);
      break;
    case ExprKind::kInList:
      visit_if(expr.as<InListExpr>().operand);
      for (const ExprPtr& item : expr.as<InListExpr>().list) visit_if(item);
      break;
    case ExprKind::kInSubquery:
      visit_if(expr.as<InSubqueryExpr>().operand);
      break;
    case ExprKind::kLike:
    case ExprKind::kRegexp: {
      const auto& pattern = static_cast<const PatternExpr&>(expr);
      visit_if(pattern.operand);
      visit_if(pattern.pattern);
      visit_if(pattern.escape);
      break;
    }
    case ExprKind::kFunction: {
      const auto& call = expr.as<FunctionExpr>();
      // TIMESTAMPDIFF(DAY, a, b), TIMESTAMPADD(MONTH, n, t): the unit is a bare word
      // the parser gives as a column reference; it is not one (no 1054 for it).
      const bool unit_first = !call.db && !call.args.empty() &&
                              (call.name == "TIMESTAMPDIFF" || call.name == "TIMESTAMPADD");
      for (size_t i = unit_first ? 1 : 0; i < call.args.size(); ++i) visit_if(call.args[i]);
      break;
    }
    case ExprKind::kCase: {
      const auto& c = expr.as<CaseExpr>();
      visit_if(c.operand);
      for (const auto& [when, then] : c.whens) {
        visit_if(when);
        visit_if(then);
      }
      visit_if(c.else_value);
      break;
    }
    case ExprKind::kCast:
      visit_if(expr.as<CastExpr>().operand);
      break;
    case ExprKind::kConvertUsing:
      visit_if(expr.as<ConvertUsingExpr>().operand);
      break;
    case ExprKind::kInterval:
      visit_if(expr.as<IntervalExpr>().value);
      break;
    case ExprKind::kExtract:
      visit_if(expr.as<ExtractExpr>().operand);
      break;
    case ExprKind::kCollate:
      visit_if(expr.as<CollateExpr>().operand);
      break;
    case ExprKind::kRow:
      for (const ExprPtr& item : expr.as<RowExpr>().items) visit_if(item);
      break;
    case ExprKind::kAssignUserVariable:
      visit_if(expr.as<AssignUserVariableExpr>().value);
      break;
    default:
      break;  // leaves, and subqueries whose blocks are not ours
  }
}

bool contains_aggregate(const Expr& expr) {
  if (is_aggregate_call(expr)) return true;
  bool found = false;
  for_each_child(expr, [&](const Expr& child) { found = found || contains_aggregate(child); });
  return found;
}

bool contains_assignment(const Expr& expr) {
  if (expr.kind == ExprKind::kAssignUserVariable) return true;
  bool found = false;
  for_each_child(expr, [&](const Expr& child) { found = found || contains_assignment(child); });
  return found;
}

bool contains_subquery(const Expr& expr) {
  if (expr.kind == ExprKind::kSubquery || expr.kind == ExprKind::kExists ||
      expr.kind == ExprKind::kInSubquery) {
    return true;
  }
  bool found = false;
  for_each_child(expr, [&](const Expr& child) { found = found || contains_subquery(child); });
  return found;
}

void collect_aggregates(const Expr& expr, std::vector<const Expr*>* out) {
  if (is_aggregate_call(expr)) {
    out->push_back(&expr);
    return;
  }
  for_each_child(expr, [&](const Expr& child) { collect_aggregates(child, out); });
}

void for_each_column(const Expr& expr, bool skip_aggregates,
                     const std::function<void(const ColumnExpr&)>& visit) {
  if (expr.kind == ExprKind::kColumn) {
    visit(expr.as<ColumnExpr>());
    return;
  }
  if (skip_aggregates && is_aggregate_call(expr)) return;
  for_each_child(expr, [&](const Expr& child) { for_each_column(child, skip_aggregates, visit); });
}

}  // namespace duo::sql::executor
