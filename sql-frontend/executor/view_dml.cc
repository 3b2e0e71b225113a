// Writes through updatable views; see view_dml.h.
#include "sql-frontend/executor/view_dml.h"

#include <functional>
#include <string>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/expression.h"
#include "sql-frontend/executor/system_views.h"
#include "sql-frontend/executor/view_executor.h"
#include "sql-frontend/parser/ascii_case.h"
#include "sql-frontend/parser/ast_printer.h"

namespace duo::sql::executor {

namespace {

// Views over views deeper than this are refused (a loop would be 1462 when read).
constexpr int kViewLevelsMax = 16;

// Calls `column` on every column reference of `expr` outside subqueries; a non-null
// result replaces the reference. Expression kinds it cannot walk are 1235.
void map_columns(ExprPtr& expr, const std::function<ExprPtr(ColumnExpr&)>& column) {
  if (expr == nullptr) return;
  switch (expr->kind) {
    case ExprKind::kColumn:
      if (ExprPtr replacement = column(expr->as<ColumnExpr>())) expr = std::move(replacement);
      return;
    case ExprKind::kLiteral:
    case ExprKind::kPlaceholder:
    case ExprKind::kUserVariable:
    case ExprKind::kSystemVariable:
    case ExprKind::kDefault:
    case ExprKind::kSubquery:
    case ExprKind::kExists:
      return;
    case ExprKind::kUnary:
      map_columns(expr->as<UnaryExpr>().operand, column);
      return;
    case ExprKind::kBinary:
      map_columns(expr->as<BinaryExpr>().left, column);
      map_columns(expr->as<BinaryExpr>().right, column);
      return;
    case ExprKind::kIs:
      map_columns(expr->as<IsExpr>().operand, column);
      return;
    case ExprKind::kBetween: {
      auto& between = expr->as<BetweenExpr>();
      map_columns(between.operand, column);
      map_columns(between.low, column);
      map_columns(between.high, column);
      return;
    }
    case ExprKind::kInList: {
      auto& in = expr->as<InListExpr>();
      map_columns(in.operand, column);
      for (ExprPtr& item : in.list) map_columns(item, column);
      return;
    }
    case ExprKind::kInSubquery:
      map_columns(expr->as<InSubqueryExpr>().operand, column);
      return;
    case ExprKind::kLike:
    case ExprKind::kRegexp: {
      auto& pattern = static_cast<PatternExpr&>(*expr);
      map_columns(pattern.operand, column);
      map_columns(pattern.pattern, column);
      map_columns(pattern.escape, column);
      return;
    }
    case ExprKind::kFunction:
      for (ExprPtr& arg : expr->as<FunctionExpr>().args) map_columns(arg, column);
      return;
    case ExprKind::kCase: {
      auto& c = expr->as<CaseExpr>();
      map_columns(c.operand, column);
      for (auto& [when, then] : c.whens) {
        map_columns(when, column);
        map_columns(then, column);
      }
      map_columns(c.else_value, column);
      return;
    }
    case ExprKind::kCast:
      map_columns(expr->as<CastExpr>().operand, column);
      return;
    case ExprKind::kCollate:
      map_columns(expr->as<CollateExpr>().operand, column);
      return;
    case ExprKind::kRow:
      for (ExprPtr& item : expr->as<RowExpr>().items) map_columns(item, column);
      return;
    default:
      throw_not_supported("this expression in a statement that writes through a view");
  }
}

// A copy of `expr` (ASTs are not copyable: printed and parsed again; placeholders are
// numbered anew).
ExprPtr clone(const Expr& expr) {
  ParsedStatement parsed = parse_statement("SELECT " + to_sql(expr));
  if (!parsed.ok()) throw_not_supported("this expression in a view");
  return std::move(parsed.statement->as<SelectStatement>().query->select->items.front().expr);
}

void strip_qualifier(ColumnExpr& column) {
  column.table.reset();
  column.db.reset();
}

// One level: the view, its query, its table and its columns.
struct ViewLevel {
  catalog::SqlView view;
  ParsedStatement query;  // the view's SELECT
  ObjectName base;        // its table, database-qualified
  struct Column {
    std::string name;           // the view's name for it
    std::string base_column;    // the table's column; empty when computed
    const Expr* expr = nullptr;  // the computed expression (in `query`)
  };
  std::vector<Column> columns;

  const SelectBlock& block() const {
    return *query.statement->as<SelectStatement>().query->select;
  }
  const Column* find(const std::string& name) const {
    const std::string wanted = ascii_lower(name);
    for (const Column& c : columns) {
      if (ascii_lower(c.name) == wanted) return &c;
    }
    return nullptr;
  }
};

ViewLevel open_level(StatementContext& context, catalog::SqlView view) {
  ViewLevel level;
  level.view = std::move(view);
  level.query = parse_statement(level.view.query);
  const SelectBlock& block = level.block();
  const TableRef& from = *block.from.front();
  level.base.db = Identifier{from.table.db ? from.table.db->name : level.view.db, true, {}};
  level.base.name = from.table.name;
  // The table's (or inner view's) column names, for `*`.
  std::vector<std::string> star_columns;
  const std::string base_db = level.base.db->name;
  if (context.catalog.table_exists(base_db, level.base.name.name)) {
    for (const catalog::SqlColumn& c :
         context.catalog.get_table(base_db, level.base.name.name).sql.columns) {
      star_columns.push_back(c.name);
    }
  } else if (std::optional<catalog::SqlView> inner =
                 find_view(context, base_db, level.base.name.name)) {
    ViewLevel inner_level = open_level(context, *inner);
    for (const ViewLevel::Column& c : inner_level.columns) star_columns.push_back(c.name);
  }
  for (const SelectItem& item : block.items) {
    if (item.expr->kind == ExprKind::kStar) {
      for (const std::string& c : star_columns) level.columns.push_back({c, c, nullptr});
    } else if (item.expr->kind == ExprKind::kColumn) {
      const auto& column = item.expr->as<ColumnExpr>();
      level.columns.push_back(
          {item.alias ? item.alias->name : column.column.name, column.column.name, nullptr});
    } else {
      level.columns.push_back({item.alias ? item.alias->name : to_sql(*item.expr), "", item.expr.get()});
    }
  }
  for (size_t i = 0; i < level.view.columns.size() && i < level.columns.size(); ++i) {
    level.columns[i].name = level.view.columns[i];
  }
  return level;
}

[[noreturn]] void throw_not_updatable_column(const std::string& name) {
  throw SqlException(1348, "HY000", "Column '" + name + "' is not updatable");
}

[[noreturn]] void throw_check_failed(const catalog::SqlView& view) {
  throw SqlException(1369, "HY000", "CHECK OPTION failed '" + view.db + "." + view.name + "'");
}

// The view's WHERE on its table's columns (qualifiers dropped: one table), or null.
ExprPtr view_condition(const ViewLevel& level) {
  if (level.block().where == nullptr) return nullptr;
  ExprPtr where = clone(*level.block().where);
  map_columns(where, [](ColumnExpr& c) -> ExprPtr {
    strip_qualifier(c);
    return nullptr;
  });
  return where;
}

ExprPtr conjunction(ExprPtr a, ExprPtr b) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  auto both = std::make_unique<BinaryExpr>(a->pos);
  both->op = BinaryOp::kAnd;
  both->left = std::move(a);
  both->right = std::move(b);
  return both;
}

// Maps the statement's references to view columns onto the table: a plain column is
// renamed, a computed one replaced by its expression. `names`: the view's name and the
// statement's alias for it (qualifiers that mean the view).
std::function<ExprPtr(ColumnExpr&)> to_base(const ViewLevel& level,
                                            std::vector<std::string> names) {
  return [&level, names = std::move(names)](ColumnExpr& c) -> ExprPtr {
    if (c.table) {
      bool ours = false;
      for (const std::string& n : names) ours = ours || ascii_lower(n) == ascii_lower(c.table->name);
      if (!ours) return nullptr;
    }
    const ViewLevel::Column* column = level.find(c.column.name);
    if (column == nullptr) return nullptr;  // binding the table reports it
    if (column->expr != nullptr) {
      ExprPtr computed = clone(*column->expr);
      map_columns(computed, [](ColumnExpr& inner) -> ExprPtr {
        strip_qualifier(inner);
        return nullptr;
      });
      return computed;
    }
    strip_qualifier(c);
    c.column.name = column->base_column;
    return nullptr;
  };
}

// The assigned column's name on the table (1348 for a computed view column).
void assign_to_base(const ViewLevel& level, ColumnExpr& target) {
  const ViewLevel::Column* column = level.find(target.column.name);
  if (column == nullptr) return;  // 1054 from the table
  if (column->expr != nullptr) throw_not_updatable_column(target.column.name);
  strip_qualifier(target);
  target.column.name = column->base_column;
}

// The table row an INSERT row becomes (listed columns evaluated, the others their
// DEFAULT or NULL), checked against the view's WHERE.
void check_insert_rows(StatementContext& context, const ViewLevel& level,
                       const InsertStatement& insert, const Expr& condition) {
  const std::string db = level.base.db->name;
  if (!context.catalog.table_exists(db, level.base.name.name)) {
    throw_not_supported("CHECK OPTION of a view over a view in INSERT");
  }
  const catalog::BoundTable table = context.catalog.get_table(db, level.base.name.name);
  const catalog::SqlTable& sql = table.sql;
  std::vector<SqlValue> defaults(sql.columns.size(), SqlValue::null());
  for (size_t i = 0; i < sql.columns.size(); ++i) {
    if (sql.columns[i].default_value) defaults[i] = SqlValue::of_string(*sql.columns[i].default_value);
  }
  const auto check_row = [&](const std::vector<std::pair<std::string, const Expr*>>& values) {
    std::vector<SqlValue> row = defaults;
    for (const auto& [name, value] : values) {
      const int at = sql.find_column(name);
      if (at < 0 || value->kind == ExprKind::kDefault) continue;
      row[at] = evaluate(*value, context.eval());
    }
    if (!passes(&condition, context.eval(&sql, &row))) throw_check_failed(level.view);
  };
  if (insert.select != nullptr) throw_not_supported("CHECK OPTION with INSERT ... SELECT");
  if (!insert.set.empty()) {
    std::vector<std::pair<std::string, const Expr*>> values;
    for (const Assignment& a : insert.set) values.emplace_back(a.column->column.name, a.value.get());
    check_row(values);
    return;
  }
  for (const std::vector<ExprPtr>& values_row : insert.rows) {
    std::vector<std::pair<std::string, const Expr*>> values;
    for (size_t i = 0; i < values_row.size(); ++i) {
      const std::string name = i < insert.columns.size() ? insert.columns[i].name
                               : i < sql.columns.size()  ? sql.columns[i].name
                                                          : std::string();
      values.emplace_back(name, values_row[i].get());
    }
    check_row(values);
  }
}

// 1369 when a row the UPDATE reaches would leave the view: a row matching `where` for
// which the view's condition, with the SET values in place of the columns they assign,
// is not true.
void check_update(StatementContext& context, const ViewLevel& level,
                  const UpdateStatement& update, const Expr& condition) {
  if (update.placeholder_count > 0) {
    throw_not_supported("placeholders in an UPDATE of a view WITH CHECK OPTION");
  }
  ExprPtr moved = clone(condition);
  map_columns(moved, [&](ColumnExpr& c) -> ExprPtr {
    for (const Assignment& a : update.set) {
      if (ascii_lower(a.column->column.name) == ascii_lower(c.column.name)) return clone(*a.value);
    }
    return nullptr;
  });
  const std::string text = "SELECT 1 FROM `" + level.base.db->name + "`.`" + level.base.name.name + "` WHERE (" +
         (update.where ? to_sql(*update.where) : std::string("TRUE")) + ") AND ((" +
         to_sql(*moved) + ") IS NOT TRUE) LIMIT 1";
  ParsedStatement check = parse_statement(text);
  if (!check.ok()) throw_not_supported("this UPDATE of a view WITH CHECK OPTION");
  const std::string_view source = context.source_text;
  context.source_text = text;
  server::StatementResult result;
  try {
    result = execute_select(context, check.statement->as<SelectStatement>());
  } catch (...) {
    context.source_text = source;
    throw;
  }
  context.source_text = source;
  const auto* rows = std::get_if<server::ResultSet>(&result);
  if (rows != nullptr && !rows->rows.empty()) throw_check_failed(level.view);
}

// Rewrites `statement` (a fresh parse, owned by `out`) one view level down. False when
// its target is not a view.
bool rewrite_level(StatementContext& context, Statement& statement, ViewDml* out) {
  ObjectName* target = nullptr;
  std::optional<Identifier> alias;
  const char* verb = nullptr;
  switch (statement.kind) {
    case StatementKind::kInsert:
      target = &statement.as<InsertStatement>().table;
      verb = "INSERT";
      break;
    case StatementKind::kUpdate: {
      auto& update = statement.as<UpdateStatement>();
      if (update.join || update.tables.size() != 1 ||
          update.tables.front()->kind != TableRefKind::kTable) {
        return false;
      }
      target = &update.tables.front()->table;
      alias = update.tables.front()->alias;
      verb = "UPDATE";
      break;
    }
    case StatementKind::kDelete: {
      auto& del = statement.as<DeleteStatement>();
      if (del.join) return false;
      target = &del.table;
      alias = del.alias;
      verb = "DELETE";
      break;
    }
    default:
      return false;
  }
  const std::string db = context.database_of(*target);
  std::optional<catalog::SqlView> view = find_view(context, db, target->name.name);
  if (!view) return false;
  if (!view_is_updatable(context, *view)) {
    if (statement.kind == StatementKind::kInsert) {
      throw SqlException(1471, "HY000",
                         "The target table " + view->name + " of the INSERT is not insertable-into");
    }
    throw SqlException(1288, "HY000",
                       "The target table " + view->name + " of the " + verb + " is not updatable");
  }
  ViewLevel level = open_level(context, *view);
  std::vector<std::string> names = {view->name};
  if (alias) names.push_back(alias->name);
  const auto rename = to_base(level, names);
  ExprPtr condition = view_condition(level);
  const bool check_option = view->check_option != "NONE" && condition != nullptr;
  *target = level.base;

  switch (statement.kind) {
    case StatementKind::kInsert: {
      auto& insert = statement.as<InsertStatement>();
      if (insert.columns.empty() && insert.set.empty()) {
        // All the view's columns, in its order.
        for (const ViewLevel::Column& c : level.columns) insert.columns.push_back(Identifier{c.name, true, {}});
      }
      for (Identifier& column : insert.columns) {
        const ViewLevel::Column* c = level.find(column.name);
        if (c == nullptr) throw_unknown_column(column.name, "field list");
        if (c->expr != nullptr) {
          // MySQL: a view with a computed output takes no INSERT.
          throw SqlException(1471, "HY000", "The target table " + view->name +
                                                " of the INSERT is not insertable-into");
        }
        column.name = c->base_column;
      }
      for (Assignment& a : insert.set) assign_to_base(level, *a.column);
      for (Assignment& a : insert.on_duplicate) {
        assign_to_base(level, *a.column);
        map_columns(a.value, rename);
      }
      if (check_option) check_insert_rows(context, level, insert, *condition);
      break;
    }
    case StatementKind::kUpdate: {
      auto& update = statement.as<UpdateStatement>();
      update.tables.front()->alias.reset();
      for (Assignment& a : update.set) {
        map_columns(a.value, rename);
        assign_to_base(level, *a.column);
      }
      map_columns(update.where, rename);
      for (OrderItem& item : update.order_by) map_columns(item.expr, rename);
      update.where = conjunction(view_condition(level), std::move(update.where));
      if (check_option) check_update(context, level, update, *condition);
      break;
    }
    case StatementKind::kDelete: {
      auto& del = statement.as<DeleteStatement>();
      del.alias.reset();
      map_columns(del.where, rename);
      for (OrderItem& item : del.order_by) map_columns(item.expr, rename);
      del.where = conjunction(view_condition(level), std::move(del.where));
      break;
    }
    default:
      break;
  }
  (void)out;
  return true;
}

}  // namespace

std::optional<ViewDml> rewrite_view_dml(StatementContext& context, const Statement& statement) {
  // The common case, a table, costs one lookup in the client library's table cache.
  const ObjectName* target = nullptr;
  if (statement.kind == StatementKind::kInsert) {
    target = &statement.as<InsertStatement>().table;
  } else if (statement.kind == StatementKind::kUpdate) {
    const auto& update = statement.as<UpdateStatement>();
    if (!update.join && update.tables.size() == 1 &&
        update.tables.front()->kind == TableRefKind::kTable) {
      target = &update.tables.front()->table;
    }
  } else if (statement.kind == StatementKind::kDelete) {
    if (!statement.as<DeleteStatement>().join) target = &statement.as<DeleteStatement>().table;
  }
  if (target == nullptr) return std::nullopt;
  const std::string db = context.database_of(*target);
  if (is_system_view_database(db) || context.catalog.table_exists(db, target->name.name)) {
    return std::nullopt;
  }
  // A fresh, mutable copy of the statement: printed and parsed again (the printer's
  // output parses to the same tree, placeholders in the same order).
  ViewDml dml;
  const Statement* current = &statement;
  for (int depth = 0;; ++depth) {
    dml.texts.push_back(to_sql(*current));
    ParsedStatement copy = parse_statement(dml.texts.back());
    if (!copy.ok()) return std::nullopt;
    if (!rewrite_level(context, *copy.statement, &dml)) {
      dml.texts.pop_back();
      break;
    }
    if (depth >= kViewLevelsMax) throw_not_supported("views this deep in INSERT/UPDATE/DELETE");
    dml.parses.push_back(std::move(copy));
    current = &dml.statement();
  }
  // The rewritten tree was changed after its parse: print it once more, so that its
  // source positions and text agree.
  if (!dml.parses.empty()) {
    dml.texts.push_back(to_sql(dml.statement()));
    ParsedStatement final_parse = parse_statement(dml.texts.back());
    if (!final_parse.ok()) throw_not_supported("this statement through a view");
    dml.parses.push_back(std::move(final_parse));
  }
  if (dml.parses.empty()) return std::nullopt;
  return dml;
}

}  // namespace duo::sql::executor
