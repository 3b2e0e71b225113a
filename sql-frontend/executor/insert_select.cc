// INSERT ... SELECT source rows; see insert_select.h.
#include "sql-frontend/executor/insert_select.h"

#include <algorithm>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/row_order.h"

namespace duo::sql::executor {

namespace {

[[noreturn]] void unsupported() {
  throw_not_supported("INSERT ... SELECT other than one SELECT of one table");
}

bool has_aggregate(const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::kFunction: {
      const auto& function = expr.as<FunctionExpr>();
      if (function.star || function.name == "COUNT" || function.name == "SUM" ||
          function.name == "MIN" || function.name == "MAX" || function.name == "AVG" ||
          function.name == "GROUP_CONCAT") {
        return true;
      }
      for (const ExprPtr& arg : function.args) {
        if (has_aggregate(*arg)) return true;
      }
      return false;
    }
    case ExprKind::kUnary:
      return has_aggregate(*expr.as<UnaryExpr>().operand);
    case ExprKind::kBinary:
      return has_aggregate(*expr.as<BinaryExpr>().left) ||
             has_aggregate(*expr.as<BinaryExpr>().right);
    default:
      return false;
  }
}

}  // namespace

std::vector<Row> insert_select_rows(StatementContext& context, const QueryExpr& query) {
  if (query.is_union() || !query.order_by.empty() || query.limit) unsupported();
  const SelectBlock& block = *query.select;
  if (block.from.size() != 1 || block.from[0]->kind != TableRefKind::kTable || block.distinct ||
      !block.group_by.empty() || block.having || block.lock != LockMode::kNone) {
    unsupported();
  }
  const ObjectName& name = block.from[0]->table;
  const std::string db = context.database_of(name);
  const catalog::BoundTable bound = context.catalog.get_table(db, name.name.name);
  const catalog::SqlTable& table = bound.sql;

  // The select list: `*` expands to every column.
  std::vector<const Expr*> items;
  std::vector<int> star_columns;  // per output value: a column for `*`, else -1
  for (const SelectItem& item : block.items) {
    if (item.expr->kind == ExprKind::kStar) {
      for (size_t c = 0; c < table.columns.size(); ++c) {
        items.push_back(nullptr);
        star_columns.push_back(static_cast<int>(c));
      }
      continue;
    }
    if (has_aggregate(*item.expr)) unsupported();
    items.push_back(item.expr.get());
    star_columns.push_back(-1);
  }
  for (const OrderItem& order : block.order_by) {
    if (has_aggregate(*order.expr)) unsupported();
  }
  uint64_t limit = UINT64_MAX;
  uint64_t offset = 0;
  if (block.limit) {
    limit = limit_value(block.limit->count.get(), context);
    offset = limit_value(block.limit->offset.get(), context);
  }

  struct Source {
    Row values;
    Row order_keys;
  };
  std::vector<Source> rows;
  const bool can_stop_early = block.order_by.empty();
  for_each_row(context, bound, block.where.get(), storage::LockMode::kCommittedRead, [&](Row& row) {
    if (rows.size() >= kStatementRowsMax) throw_too_many_rows();
    EvalContext eval = context.eval(&table, &row);
    Source source;
    for (size_t i = 0; i < items.size(); ++i) {
      source.values.push_back(star_columns[i] >= 0 ? row[star_columns[i]]
                                                   : evaluate(*items[i], eval));
    }
    source.order_keys = order_keys(block.order_by, eval);
    rows.push_back(std::move(source));
    return !can_stop_early || limit == UINT64_MAX || rows.size() < offset + limit;
  });
  if (!block.order_by.empty()) {
    std::stable_sort(rows.begin(), rows.end(), [&](const Source& a, const Source& b) {
      return order_before(a.order_keys, b.order_keys, block.order_by);
    });
  }
  std::vector<Row> out;
  for (size_t r = offset; r < rows.size() && out.size() < limit; ++r) {
    out.push_back(std::move(rows[r].values));
  }
  return out;
}

}  // namespace duo::sql::executor
