// ON DUPLICATE KEY UPDATE assignments; see on_duplicate.h.
#include "sql-frontend/executor/on_duplicate.h"

#include "sql-frontend/catalog/sql_exception.h"

namespace duo::sql::executor {

namespace {

std::unique_ptr<PlaceholderExpr> placeholder(SourcePos pos, uint32_t index) {
  auto p = std::make_unique<PlaceholderExpr>(pos);
  p->index = index;
  return p;
}

}  // namespace

size_t count_insert_values(const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::kInsertValue:
      return 1;
    case ExprKind::kUnary:
      return count_insert_values(*expr.as<UnaryExpr>().operand);
    case ExprKind::kBinary:
      return count_insert_values(*expr.as<BinaryExpr>().left) +
             count_insert_values(*expr.as<BinaryExpr>().right);
    case ExprKind::kFunction: {
      size_t n = 0;
      for (const ExprPtr& arg : expr.as<FunctionExpr>().args) n += count_insert_values(*arg);
      return n;
    }
    default:
      return 0;
  }
}

SqlValue evaluate_with_insert_values(const Expr& expr, const EvalContext& context,
                                     const catalog::SqlTable& table, const Row& inserted) {
  if (expr.kind == ExprKind::kInsertValue) {
    return inserted[resolve_column(*expr.as<InsertValueExpr>().column, table, "field list")];
  }
  if (count_insert_values(expr) == 0) return evaluate(expr, context);
  // The expression evaluator does not know VALUES(): evaluate the operands here and the
  // operator itself on a copy whose operands are placeholders bound to those values, so
  // the operator's semantics stay the evaluator's.
  std::vector<SqlValue> operands;
  EvalContext shell = context;
  shell.params = &operands;
  switch (expr.kind) {
    case ExprKind::kUnary: {
      const auto& unary = expr.as<UnaryExpr>();
      operands.push_back(evaluate_with_insert_values(*unary.operand, context, table, inserted));
      UnaryExpr copy(expr.pos);
      copy.op = unary.op;
      copy.operand = placeholder(expr.pos, 0);
      return evaluate(copy, shell);
    }
    case ExprKind::kBinary: {
      const auto& binary = expr.as<BinaryExpr>();
      operands.push_back(evaluate_with_insert_values(*binary.left, context, table, inserted));
      operands.push_back(evaluate_with_insert_values(*binary.right, context, table, inserted));
      BinaryExpr copy(expr.pos);
      copy.op = binary.op;
      copy.left = placeholder(expr.pos, 0);
      copy.right = placeholder(expr.pos, 1);
      return evaluate(copy, shell);
    }
    case ExprKind::kFunction: {
      const auto& function = expr.as<FunctionExpr>();
      FunctionExpr copy(expr.pos);
      copy.name = function.name;
      copy.db = function.db;
      copy.distinct = function.distinct;
      copy.no_parens = function.no_parens;
      for (const ExprPtr& arg : function.args) {
        operands.push_back(evaluate_with_insert_values(*arg, context, table, inserted));
        copy.args.push_back(placeholder(expr.pos, static_cast<uint32_t>(operands.size() - 1)));
      }
      return evaluate(copy, shell);
    }
    default:
      throw_not_supported("VALUES() in this expression");
  }
}

std::optional<storage::AttrValues> on_duplicate_changes(StatementContext& context,
                                                        const catalog::SqlTable& table,
                                                        const std::vector<Assignment>& assignments,
                                                        const Row& existing, const Row& inserted) {
  Row row = existing;
  std::vector<bool> assigned(table.columns.size(), false);
  for (const Assignment& a : assignments) {
    const uint16_t c = resolve_column(*a.column, table, "field list");
    const catalog::SqlColumn& column = table.columns[c];
    EvalContext eval = context.eval(&table, &row);
    SqlValue v;
    if (a.value->kind == ExprKind::kDefault) {
      v = column.has_default && column.default_value ? SqlValue::of_string(*column.default_value)
                                                     : SqlValue::null();
    } else {
      v = evaluate_with_insert_values(*a.value, eval, table, inserted);
    }
    if (v.is_null()) {
      if (!column.nullable) {
        throw SqlException(1048, "23000", "Column '" + column.name + "' cannot be null");
      }
      row[c] = SqlValue::null();
    } else {
      row[c] = from_storage(column, to_storage(column, v, 1));
    }
    assigned[c] = true;
  }
  storage::AttrValues changes;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (!assigned[c]) continue;
    const catalog::SqlColumn& column = table.columns[c];
    const bool was_null = existing[c].is_null();
    if (row[c].is_null()) {
      if (!was_null) changes.add_null(static_cast<uint16_t>(c));
      continue;
    }
    const std::string bytes = to_storage(column, row[c], 1);
    if (!was_null && bytes == to_storage(column, existing[c], 1)) continue;
    if (table.is_key_column(static_cast<uint16_t>(c))) {
      throw_not_supported("changing a primary-key column in ON DUPLICATE KEY UPDATE");
    }
    changes.add(static_cast<uint16_t>(c), bytes);
  }
  if (changes.empty()) return std::nullopt;
  return changes;
}

}  // namespace duo::sql::executor
