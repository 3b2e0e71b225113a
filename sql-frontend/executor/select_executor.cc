// SELECT over one table (or none): rows from the table's row source (row_source.h),
// ORDER BY, aggregates without GROUP BY, projection and LIMIT in sqld.
#include <algorithm>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/column_label.h"
#include "sql-frontend/executor/row_source.h"
#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/parser/ast_printer.h"

namespace duo::sql::executor {

namespace {

bool is_aggregate(const Expr& expr) {
  if (expr.kind != ExprKind::kFunction) return false;
  const std::string& name = expr.as<FunctionExpr>().name;
  return name == "COUNT" || name == "MIN" || name == "MAX";
}

// One output column of a SELECT: a table column (typed from the table) or an expression.
struct OutputColumn {
  const Expr* expr = nullptr;  // null for a column of `*`
  int table_column = -1;       // set for `*` columns and plain column references
  std::string label;
  bool aggregate = false;
};

// A SELECT bound to its table: the table (if any) and the output columns.
struct BoundSelect {
  std::optional<catalog::BoundTable> bound;
  std::vector<OutputColumn> outputs;
  bool any_aggregate = false;
  const catalog::SqlTable* table() const { return bound ? &bound->sql : nullptr; }
};

BoundSelect bind_select(StatementContext& context, const SelectStatement& statement) {
  if (statement.query->is_union()) throw_not_supported("UNION");
  const SelectBlock& select = *statement.query->select;
  if (select.from.size() > 1 ||
      (!select.from.empty() && select.from[0]->kind != TableRefKind::kTable)) {
    throw_not_supported("joins and derived tables");
  }
  if (!select.group_by.empty() || select.having) throw_not_supported("GROUP BY and HAVING");
  if (select.distinct) throw_not_supported("SELECT DISTINCT");

  BoundSelect result;
  if (!select.from.empty()) {
    const ObjectName& name = select.from[0]->table;
    const std::string db = context.database_of(name);
    if (!context.catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
    result.bound = context.catalog.get_table(db, name.name.name);
  }
  const catalog::SqlTable* table = result.table();
  std::vector<OutputColumn>& outputs = result.outputs;
  for (const SelectItem& item : select.items) {
    if (item.expr->kind == ExprKind::kStar) {
      if (table == nullptr) throw SqlException(1096, "HY000", "No tables used");
      for (size_t c = 0; c < table->columns.size(); ++c) {
        outputs.push_back(
            OutputColumn{nullptr, static_cast<int>(c), table->columns[c].name, false});
      }
      continue;
    }
    OutputColumn out;
    out.expr = item.expr.get();
    out.aggregate = is_aggregate(*item.expr);
    result.any_aggregate |= out.aggregate;
    if (item.expr->kind == ExprKind::kColumn && table != nullptr) {
      out.table_column = resolve_column(item.expr->as<ColumnExpr>(), *table, "field list");
      out.label = item.expr->as<ColumnExpr>().column.name;
    } else if (item.expr->kind == ExprKind::kLiteral &&
               item.expr->as<LiteralExpr>().literal_kind == LiteralKind::kString) {
      out.label = item.expr->as<LiteralExpr>().value;  // MySQL names 'abc' "abc"
    } else {
      out.label = select_item_label(context.source_text, item.expr->pos.offset);
      if (out.label.empty()) out.label = to_sql(*item.expr);
    }
    if (item.alias) out.label = item.alias->name;
    outputs.push_back(std::move(out));
  }
  if (result.any_aggregate) {
    for (const OutputColumn& out : outputs) {
      if (!out.aggregate) {
        throw SqlException(1140, "42000",
                           "In aggregated query without GROUP BY, expression #1 of SELECT list "
                           "contains nonaggregated column; this is incompatible with "
                           "sql_mode=only_full_group_by");
      }
    }
  }
  return result;
}

server::ColumnDefinition41 output_definition(const BoundSelect& select, size_t column,
                                             protocol::FieldType computed_type) {
  const OutputColumn& out = select.outputs[column];
  if (out.table_column >= 0 && select.table() != nullptr) {
    return table_column_definition(*select.table(), static_cast<uint16_t>(out.table_column),
                                   out.label);
  }
  return computed_column_definition(out.label, computed_type);
}

}  // namespace

std::vector<server::ColumnDefinition41> describe_select(StatementContext& context,
                                                        const SelectStatement& statement) {
  const BoundSelect select = bind_select(context, statement);
  std::vector<server::ColumnDefinition41> columns;
  for (size_t c = 0; c < select.outputs.size(); ++c) {
    // Computed columns are typed by their values at execution; announce them as strings.
    columns.push_back(output_definition(select, c, protocol::FieldType::kVarString));
  }
  return columns;
}

server::StatementResult execute_select(StatementContext& context,
                                       const SelectStatement& statement) {
  const SelectBlock& select = *statement.query->select;
  BoundSelect bound_select = bind_select(context, statement);
  std::optional<catalog::BoundTable>& bound = bound_select.bound;
  const catalog::SqlTable* table = bound_select.table();
  const std::vector<OutputColumn>& outputs = bound_select.outputs;
  const bool any_aggregate = bound_select.any_aggregate;

  const uint64_t offset = select.limit ? limit_value(select.limit->offset.get(), context) : 0;
  const bool has_count = select.limit.has_value();
  const uint64_t count_value = has_count ? limit_value(select.limit->count.get(), context) : 0;

  const storage::LockMode select_lock =
      select.lock == LockMode::kForUpdate ? storage::LockMode::kExclusive
      : select.lock == LockMode::kShare   ? storage::LockMode::kShared
                                          : storage::LockMode::kCommittedRead;
  // Source rows: from the table, or one empty row for SELECT without FROM.
  std::vector<Row> source;
  // Without ORDER BY or aggregates the scan may stop once LIMIT is satisfied.
  const bool can_stop_early = select.order_by.empty() && !any_aggregate && has_count;
  if (table != nullptr) {
    for_each_row(context, *bound, select.where.get(), select_lock, [&](Row& row) {
      if (source.size() >= kStatementRowsMax) throw_too_many_rows();
      source.push_back(std::move(row));
      return !(can_stop_early && source.size() >= offset && source.size() - offset >= count_value);
    });
  } else {
    if (!passes(select.where.get(), context.eval())) {
      // SELECT 1 WHERE 0: no row.
    } else {
      source.emplace_back();
    }
  }

  // ORDER BY: by expression, select alias or position.
  if (!select.order_by.empty() && !any_aggregate) {
    std::vector<std::pair<std::vector<SqlValue>, size_t>> keyed;
    keyed.reserve(source.size());
    for (size_t r = 0; r < source.size(); ++r) {
      EvalContext eval = context.eval(table, &source[r]);
      eval.clause = "order clause";
      std::vector<SqlValue> keys;
      for (const OrderItem& item : select.order_by) {
        const Expr* expr = item.expr.get();
        if (expr->kind == ExprKind::kLiteral &&
            expr->as<LiteralExpr>().literal_kind == LiteralKind::kInteger) {
          const int64_t position = std::strtoll(expr->as<LiteralExpr>().value.c_str(), nullptr, 10);
          if (position < 1 || static_cast<size_t>(position) > outputs.size()) {
            throw SqlException(
                1054, "42S22",
                "Unknown column '" + std::to_string(position) + "' in 'order clause'");
          }
          const OutputColumn& out = outputs[position - 1];
          keys.push_back(out.expr ? evaluate(*out.expr, eval) : source[r][out.table_column]);
          continue;
        }
        const Expr* alias_expr = nullptr;
        if (expr->kind == ExprKind::kColumn && !expr->as<ColumnExpr>().table) {
          for (const OutputColumn& out : outputs) {
            if (out.expr != nullptr && out.label == expr->as<ColumnExpr>().column.name &&
                (table == nullptr || table->find_column(out.label) < 0)) {
              alias_expr = out.expr;
            }
          }
        }
        keys.push_back(evaluate(alias_expr ? *alias_expr : *expr, eval));
      }
      keyed.emplace_back(std::move(keys), r);
    }
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
      for (size_t k = 0; k < select.order_by.size(); ++k) {
        const SqlValue& x = a.first[k];
        const SqlValue& y = b.first[k];
        int c = 0;
        if (x.is_null() || y.is_null())
          c = x.is_null() == y.is_null() ? 0 : (x.is_null() ? -1 : 1);
        else
          c = compare(x, y);
        if (select.order_by[k].descending) c = -c;
        if (c != 0) return c < 0;
      }
      return false;
    });
    std::vector<Row> sorted;
    sorted.reserve(source.size());
    for (auto& [keys, r] : keyed) sorted.push_back(std::move(source[r]));
    source = std::move(sorted);
  }

  // Project.
  std::vector<Row> rows;
  if (any_aggregate) {
    Row result;
    for (const OutputColumn& out : outputs) {
      const auto& function = out.expr->as<FunctionExpr>();
      if (function.distinct) throw_not_supported("aggregates with DISTINCT");
      SqlValue acc = function.name == "COUNT" ? SqlValue::of_int(0) : SqlValue::null();
      for (const Row& row : source) {
        EvalContext eval = context.eval(table, &row);
        if (function.star) {
          ++acc.i;
          continue;
        }
        if (function.args.size() != 1) {
          throw SqlException(1064, "42000", "Wrong number of arguments to " + function.name);
        }
        SqlValue v = evaluate(*function.args[0], eval);
        if (v.is_null()) continue;
        if (function.name == "COUNT") {
          ++acc.i;
        } else if (acc.is_null() ||
                   (function.name == "MIN" ? compare(v, acc) < 0 : compare(v, acc) > 0)) {
          acc = std::move(v);
        }
      }
      result.push_back(std::move(acc));
    }
    rows.push_back(std::move(result));
  } else {
    for (const Row& row : source) {
      EvalContext eval = context.eval(table, &row);
      Row out_row;
      for (const OutputColumn& out : outputs) {
        if (out.table_column >= 0) {
          out_row.push_back(row[out.table_column]);
        } else {
          out_row.push_back(evaluate(*out.expr, eval));
        }
      }
      rows.push_back(std::move(out_row));
    }
  }
  // LIMIT.
  if (offset > 0 || has_count) {
    const size_t begin = std::min<size_t>(offset, rows.size());
    const size_t end =
        has_count ? begin + std::min<uint64_t>(rows.size() - begin, count_value) : rows.size();
    rows = std::vector<Row>(std::make_move_iterator(rows.begin() + begin),
                            std::make_move_iterator(rows.begin() + end));
  }
  context.finish();

  server::ResultSet result;
  for (size_t c = 0; c < outputs.size(); ++c) {
    result.columns.push_back(output_definition(bound_select, c, infer_type(rows, c)));
  }
  for (const Row& row : rows) {
    std::vector<server::Value> cells;
    for (size_t c = 0; c < row.size(); ++c)
      cells.push_back(to_protocol(row[c], result.columns[c].type));
    result.rows.push_back(std::move(cells));
  }
  return result;
}
}  // namespace duo::sql::executor
