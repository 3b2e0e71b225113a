// Plans kept by prepared statements; see prepared_plan.h.
#include "sql-frontend/executor/prepared_plan.h"

#include <algorithm>
#include <cassert>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/access_plan.h"
#include "sql-frontend/executor/expression_walk.h"
#include "sql-frontend/executor/system_views.h"
#include "sql-frontend/executor/temporary_tables.h"

namespace duo::sql::executor {

namespace {

// Binding a derived table would read its rows: such statements are not planned.
const RunDerived kNoDerivedTables = [](const QueryExpr&) -> DerivedRows {
  throw std::logic_error("a planned SELECT has no derived table");
};

// Whether the tables `ref` names can be planned: cluster tables only (a derived table,
// a view or a system view is read while binding), and no subquery in an ON.
bool plannable_tables(StatementContext& context, const TableRef& ref) {
  switch (ref.kind) {
    case TableRefKind::kTable: {
      // A view is read while binding too (view_executor.h).
      const std::string db = context.database_of(ref.table);
      if (context.temporary_tables != nullptr &&
          context.temporary_tables->find(db, ref.table.name.name) != nullptr) {
        return false;  // a temporary table's rows are in the session
      }
      return !is_system_view_database(db) &&
             context.catalog.table_exists(db, ref.table.name.name);
    }
    case TableRefKind::kDerived:
      return false;
    case TableRefKind::kJoin:
      return (ref.on == nullptr || !contains_subquery(*ref.on)) &&
             plannable_tables(context, *ref.left) && plannable_tables(context, *ref.right);
  }
  return false;
}

// Whether `block` can be planned at all, decided before binding it: binding a block
// with a derived table or a system view reads rows, and a block with subqueries is
// bound at each execution anyway.
bool plannable(StatementContext& context, const SelectBlock& block) {
  for (const TableRefPtr& ref : block.from) {
    if (!plannable_tables(context, *ref)) return false;
  }
  auto has_subquery = [](const Expr* expr) { return expr != nullptr && contains_subquery(*expr); };
  if (has_subquery(block.where.get()) || has_subquery(block.having.get())) return false;
  for (const SelectItem& item : block.items) {
    if (has_subquery(item.expr.get())) return false;
  }
  for (const ExprPtr& expr : block.group_by) {
    if (has_subquery(expr.get())) return false;
  }
  for (const OrderItem& item : block.order_by) {
    if (has_subquery(item.expr.get())) return false;
  }
  return true;
}

#ifndef NDEBUG
// The reference a point read's key must agree with: what plan_access() makes of the
// same WHERE (the general path).
void check_key_against_planner(StatementContext& context, const catalog::SqlTable& table,
                               const Expr* where, const storage::AttrValues& key) {
  const AccessPlan plan = plan_access(table, where, context.eval(&table));
  assert(plan.kind == AccessPlan::Kind::kKeyLookup);
  assert(plan.residual.empty());
  assert(plan.keys.size() == 1);
  assert(plan.keys[0].entries().size() == key.entries().size());
  for (size_t i = 0; i < key.size(); ++i) {
    assert(plan.keys[0].entry(i).column == key.entry(i).column);
    assert(plan.keys[0].value(i) == key.value(i));
  }
}
#endif

}  // namespace

std::unique_ptr<PreparedPlan> PreparedPlan::bind_select(StatementContext& context,
                                                        const SelectStatement& statement) {
  std::unique_ptr<PreparedPlan> plan(new PreparedPlan());
  plan->database_ = context.session.database;
  const QueryExpr& query = *statement.query;
  if (query.is_union()) return plan;
  const SelectBlock& block = *query.select;
  if (!plannable(context, block)) return plan;
  auto select =
      std::make_unique<BoundSelect>(bind_select_block(context, block, nullptr, kNoDerivedTables));
  if (select->has_subquery) return plan;
  restrict_read_columns(*select);
  std::vector<std::pair<std::string, api::TablePtr>> tables;
  for (size_t l = 0; l < select->levels.size(); ++l) {
    const JoinLevel& level = select->levels[l];
    if (!level.bound) return plan;  // a system view: its rows are read at binding
    tables.emplace_back(catalog::cluster_table_name(select->scopes[l].db, level.real_name),
                        level.bound->table_def);
  }
  plan->tables_ = std::move(tables);
  plan->outputs_ = describe_bound_select(*select);
  plan->point_ = point_of(*select);
  plan->select_ = std::move(select);
  return plan;
}

std::optional<PreparedPlan::Point> PreparedPlan::point_of(const BoundSelect& select) {
  const SelectBlock& block = *select.block;
  if (select.levels.size() != 1 || select.grouped || !select.aggregates.empty() ||
      !select.order_by.empty() || !select.constant_conditions.empty() || block.distinct ||
      block.having || block.sql_calc_found_rows) {
    return std::nullopt;
  }
  const JoinLevel& level = select.levels[0];
  if (!level.bound || level.pushed == nullptr || !level.local.empty() || !level.match.empty() ||
      !level.after.empty() || !level.equalities.empty()) {
    return std::nullopt;
  }
  const catalog::SqlTable& table = level.bound->sql;
  Point point;
  point.lock = select_lock_mode(block);
  for (const OutputColumn& out : select.outputs) {
    if (out.table_column < 0 || out.scope != 0) return std::nullopt;
    const auto column = static_cast<uint16_t>(out.table_column);
    point.outputs.push_back(column);
    if (std::find(point.read_columns.begin(), point.read_columns.end(), column) ==
        point.read_columns.end()) {
      point.read_columns.push_back(column);
    }
  }
  // Every conjunct `key column = ? | literal` (either side, as the planner reads it),
  // each key column exactly once, nothing else.
  const std::vector<uint16_t>& key_columns = table.primary_key().columns;
  std::vector<const Expr*> key_values(key_columns.size(), nullptr);
  std::vector<const Expr*> conjuncts;
  split_conjuncts(level.pushed, &conjuncts);
  if (conjuncts.size() != key_columns.size()) return std::nullopt;
  for (const Expr* conjunct : conjuncts) {
    if (conjunct->kind != ExprKind::kBinary || conjunct->as<BinaryExpr>().op != BinaryOp::kEq) {
      return std::nullopt;
    }
    const auto& binary = conjunct->as<BinaryExpr>();
    const Expr* column = binary.left.get();
    const Expr* value = binary.right.get();
    if (column->kind != ExprKind::kColumn) std::swap(column, value);
    if (column->kind != ExprKind::kColumn ||
        (value->kind != ExprKind::kPlaceholder && value->kind != ExprKind::kLiteral)) {
      return std::nullopt;
    }
    const std::optional<uint16_t> id = planned_column(column->as<ColumnExpr>(), table);
    if (!id) return std::nullopt;
    const auto at = std::find(key_columns.begin(), key_columns.end(), *id);
    if (at == key_columns.end() || key_values[at - key_columns.begin()] != nullptr) {
      return std::nullopt;
    }
    key_values[at - key_columns.begin()] = value;
  }
  for (size_t k = 0; k < key_columns.size(); ++k) {
    point.key.emplace_back(key_columns[k], key_values[k]);
  }
  return point;
}

bool PreparedPlan::still_valid(StatementContext& context) const {
  if (context.session.database != database_) return false;
  for (const auto& [name, def] : tables_) {
    Result<api::TablePtr> current = context.catalog.cluster().get_table(name);
    if (!current.ok()) {
      current.status().ignore_error();
      return false;  // binding again reports it (1146, or the cluster's error)
    }
    if (*current != def) return false;
  }
  return true;
}

server::StatementResult PreparedPlan::execute(StatementContext& context) {
  assert(planned());
  if (point_) {
    std::optional<server::StatementResult> result = execute_point(context);
    if (result) return std::move(*result);
  }
  return execute_bound_select(context, *select_, outputs_);
}

std::optional<server::StatementResult> PreparedPlan::execute_point(StatementContext& context) {
  const JoinLevel& level = select_->levels[0];
  const catalog::BoundTable& bound = *level.bound;
  const catalog::SqlTable& table = bound.sql;
  // The key as the planner builds it (access_plan.cc gather_facts): each value converted
  // for its column; NULL matches nothing; a value without an exact key encoding is left
  // to the general path, which then scans — with the warnings of this attempt undone,
  // since it evaluates the values again.
  // LIMIT [offset,] count as the block runner takes it, before any row is read: one row
  // at most, so it is there with offset 0 and a count above 0.
  const std::optional<Limit>& limit = select_->block->limit;
  const bool limited_away = limit && (limit_value(limit->offset.get(), context) > 0 ||
                                      limit_value(limit->count.get(), context) == 0);
  const size_t warnings_before = context.warnings.size();
  const uint64_t warning_count_before = context.warning_count;
  const EvalContext eval = context.eval(&table);
  storage::AttrValues key;
  bool matches_nothing = false;
  for (const auto& [column, expr] : point_->key) {
    const SqlValue value = evaluate_for_column(*expr, eval, table.columns[column]);
    if (value.is_null()) {
      matches_nothing = true;
      continue;
    }
    std::string bytes;
    if (!exact_key_encoding(table.columns[column], value, &bytes)) {
      context.warnings.resize(warnings_before);
      context.warning_count = warning_count_before;
      return std::nullopt;
    }
    key.add(column, bytes);
  }
  server::ResultSet result;
  result.encoded_columns = outputs_.encoded;
  if (!matches_nothing && !limited_away) {
#ifndef NDEBUG
    check_key_against_planner(context, table, level.pushed, key);
#endif
    api::Transaction& tx = context.read_transaction(point_->lock, bound.table_def.get(), &key);
    const uint32_t op = check(tx.read(*bound.table_def, key, point_->read_columns, point_->lock,
                                      api::OpOptions{.ignore_error = true}));
    context.execute_reads();
    const api::OpResult read = check(tx.result(op));
    if (!read.status.is(ErrorCode::kNotFound)) {
      check(read.status);
      const std::vector<server::ColumnDefinition41>& defs = result.column_definitions();
      std::vector<server::Value> cells;
      cells.reserve(point_->outputs.size());
      for (size_t o = 0; o < point_->outputs.size(); ++o) {
        const uint16_t column = point_->outputs[o];
        const int at = read.values.find(column);
        if (at < 0 || read.values.entry(at).is_null) {
          cells.emplace_back();
          continue;
        }
        cells.push_back(to_protocol(from_storage(table.columns[column], read.values.value(at)),
                                    defs[o].type, defs[o].column_length));
      }
      result.rows.push_back(std::move(cells));
    }
  }
  context.finish();
  return server::StatementResult(std::move(result));
}

server::StatementResult execute_select_planned(StatementContext& context,
                                               const SelectStatement& statement,
                                               std::unique_ptr<PreparedPlan>* plan) {
  std::unique_ptr<PreparedPlan> once;
  if (plan == nullptr) plan = &once;
  if (*plan == nullptr || !(*plan)->still_valid(context)) {
    plan->reset();
    *plan = PreparedPlan::bind_select(context, statement);
  }
  if (!(*plan)->planned()) return execute_select(context, statement);
  return (*plan)->execute(context);
}

}  // namespace duo::sql::executor
