// Binding of a SELECT block; see select_binding.h.
#include "sql-frontend/executor/select_binding.h"

#include <algorithm>
#include <map>
#include <set>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/column_label.h"
#include "sql-frontend/executor/expression_walk.h"
#include "sql-frontend/executor/system_views.h"
#include "sql-frontend/executor/temporary_tables.h"
#include "sql-frontend/executor/view_executor.h"
#include "sql-frontend/parser/ast_printer.h"

namespace duo::sql::executor {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// True when `column` names something in `outer`'s chain (a correlated reference).
bool resolves_outside(const ColumnExpr& column, const EvalContext* outer, const char* clause) {
  for (const EvalContext* c = outer; c != nullptr; c = c->outer) {
    if (c->scopes != nullptr) {
      if (find_in_scopes(column, *c->scopes, clause)) return true;
    } else if (c->table != nullptr) {
      if ((!column.table || lower(column.table->name) == lower(c->table->name)) &&
          c->table->find_column(column.column.name) >= 0) {
        return true;
      }
    }
  }
  return false;
}

// The column names a query could read (lower case is not needed: SqlTable::find_column
// matches as names match); `*all` when it cannot be told by names (`*`, NATURAL JOIN).
// Over-approximates: a name is collected wherever it appears, in whatever scope.
void collect_query_names(const QueryExpr& query, std::set<std::string>* names, bool* all);

void collect_names(const Expr& expr, std::set<std::string>* names, bool* all) {
  switch (expr.kind) {
    case ExprKind::kColumn:
      names->insert(expr.as<ColumnExpr>().column.name);
      return;
    case ExprKind::kStar:
      *all = true;
      return;
    case ExprKind::kInSubquery:
      collect_query_names(*expr.as<InSubqueryExpr>().query, names, all);
      break;
    case ExprKind::kExists:
      collect_query_names(*expr.as<ExistsExpr>().query, names, all);
      return;
    case ExprKind::kSubquery:
      collect_query_names(*expr.as<SubqueryExpr>().query, names, all);
      return;
    default:
      break;
  }
  for_each_child(expr, [&](const Expr& child) { collect_names(child, names, all); });
}

void collect_ref_names(const TableRef& ref, std::set<std::string>* names, bool* all) {
  if (ref.kind == TableRefKind::kDerived) {
    collect_query_names(*ref.query, names, all);
  } else if (ref.kind == TableRefKind::kJoin) {
    collect_ref_names(*ref.left, names, all);
    collect_ref_names(*ref.right, names, all);
    if (ref.on) collect_names(*ref.on, names, all);
    for (const Identifier& name : ref.using_) names->insert(name.name);
    if (ref.natural) *all = true;
  }
}

void collect_block_names(const SelectBlock& block, std::set<std::string>* names, bool* all) {
  auto walk = [&](const Expr* expr) {
    if (expr != nullptr) collect_names(*expr, names, all);
  };
  for (const SelectItem& item : block.items) walk(item.expr.get());
  for (const TableRefPtr& ref : block.from) collect_ref_names(*ref, names, all);
  walk(block.where.get());
  for (const ExprPtr& expr : block.group_by) walk(expr.get());
  walk(block.having.get());
  for (const OrderItem& item : block.order_by) walk(item.expr.get());
}

void collect_query_names(const QueryExpr& query, std::set<std::string>* names, bool* all) {
  if (query.is_union()) {
    collect_query_names(*query.left, names, all);
    collect_query_names(*query.right, names, all);
  } else {
    collect_block_names(*query.select, names, all);
  }
  for (const OrderItem& item : query.order_by) collect_names(*item.expr, names, all);
}

// A condition from WHERE or ON, with what it reads.
struct Condition {
  const Expr* expr = nullptr;
  const char* clause = "where clause";
  int left_join_level = -1;  // an ON of this LEFT JOIN level; -1: WHERE or inner ON
  int max_level = -1;        // the last level it reads (-1: none)
  bool single_level = true;  // reads at most one level, nothing outer, no subquery
  bool outer = false;        // reads the enclosing query
};

class Binder {
 public:
  Binder(StatementContext& context, const SelectBlock& select, const EvalContext* outer,
         const RunDerived& run_derived)
      : context_(context), select_(select), outer_(outer), run_derived_(run_derived) {
    result_.block = &select;
  }

  BoundSelect bind() {
    for (const TableRefPtr& ref : select_.from) add_ref(*ref);
    // Scopes point into the levels' tables: fixed once every level exists.
    for (size_t l = 0; l < result_.levels.size(); ++l) {
      result_.scopes[l].table = &result_.levels[l].table();
    }
    if (select_.where) add_conditions(select_.where.get(), "where clause", -1);
    for (auto& [expr, level] : on_roots_) add_conditions(expr, "on clause", level);
    place_conditions();
    bind_outputs();
    bind_grouping();
    bind_order();
    check_full_group_by();
    return std::move(result_);
  }

 private:
  // --- FROM ---

  void add_ref(const TableRef& ref) {
    if (ref.kind != TableRefKind::kJoin) {
      add_level(ref);
      return;
    }
    if (ref.join == JoinKind::kRight) {
      add_right_join(ref);
      return;
    }
    const size_t left_begin = result_.levels.size();
    add_ref(*ref.left);
    if (ref.right->kind == TableRefKind::kJoin) throw_not_supported("nested join on the right");
    const size_t level = result_.levels.size();
    add_level(*ref.right);
    const bool left = ref.join == JoinKind::kLeft;
    result_.levels[level].left_join = left;
    if (ref.on) on_roots_.emplace_back(ref.on.get(), left ? static_cast<int>(level) : -1);
    std::vector<std::string> using_names;
    for (const Identifier& name : ref.using_) using_names.push_back(name.name);
    if (ref.natural) {
      // NATURAL: the columns the right table shares with the left side.
      const catalog::SqlTable& right = result_.levels[level].table();
      for (const catalog::SqlColumn& column : right.columns) {
        for (size_t l = left_begin; l < level; ++l) {
          if (result_.levels[l].table().find_column(column.name) >= 0) {
            using_names.push_back(column.name);
            break;
          }
        }
      }
    }
    for (const std::string& name : using_names) add_using(name, left_begin, level);
  }

  // `a RIGHT JOIN b ON c` reads as `b LEFT JOIN a ON c`; `*` still shows a's columns
  // first. Only between two tables, and with ON: MySQL coalesces a RIGHT JOIN's USING
  // columns from the right table, which the scope rules here do not express.
  void add_right_join(const TableRef& ref) {
    if (ref.left->kind == TableRefKind::kJoin || ref.right->kind == TableRefKind::kJoin ||
        ref.natural || !ref.using_.empty()) {
      throw_not_supported("RIGHT JOIN with USING, NATURAL or a nested join");
    }
    const size_t preserved = result_.levels.size();
    add_level(*ref.right);
    add_level(*ref.left);
    result_.levels[preserved + 1].left_join = true;
    std::swap(result_.star_order[preserved], result_.star_order[preserved + 1]);
    if (ref.on) on_roots_.emplace_back(ref.on.get(), static_cast<int>(preserved + 1));
  }

  void add_using(const std::string& name, size_t left_begin, size_t level) {
    JoinLevel& right = result_.levels[level];
    const int right_column = right.table().find_column(name);
    int from_scope = -1;
    int from_column = -1;
    for (size_t l = left_begin; l < level; ++l) {
      const int c = result_.levels[l].table().find_column(name);
      if (c < 0 || is_hidden(result_.scopes[l], name)) continue;
      if (from_scope >= 0) {
        throw SqlException(1052, "23000", "Column '" + name + "' in from clause is ambiguous");
      }
      from_scope = static_cast<int>(l);
      from_column = c;
    }
    if (right_column < 0 || from_scope < 0) throw_unknown_column(name, "from clause");
    right.equalities.push_back(JoinEquality{static_cast<uint16_t>(right_column), nullptr,
                                            static_cast<size_t>(from_scope),
                                            static_cast<uint16_t>(from_column)});
    result_.scopes[level].using_hidden.push_back(lower(name));
  }

  static bool is_hidden(const Scope& scope, const std::string& name) {
    const std::string wanted = lower(name);
    return std::find(scope.using_hidden.begin(), scope.using_hidden.end(), wanted) !=
           scope.using_hidden.end();
  }

  // The table a derived table's (or view's) rows are read as, named `name`.
  static std::shared_ptr<catalog::SqlTable> derived_table(const std::string& name,
                                                          const DerivedRows& derived) {
    auto table = std::make_shared<catalog::SqlTable>();
    table->name = name;
    for (size_t c = 0; c < derived.names.size(); ++c) {
      const std::string& column_name = derived.names[c];
      if (table->find_column(column_name) >= 0) {
        throw SqlException(1060, "42S21", "Duplicate column name '" + column_name + "'");
      }
      catalog::SqlColumn column;
      column.name = column_name;
      // Its values are BIT(M)'s numbers; the width makes the outer query send bytes.
      if (c < derived.columns.size() && derived.columns[c] &&
          derived.columns[c]->type == protocol::FieldType::kBit) {
        column.bit_width = static_cast<uint8_t>(derived.columns[c]->column_length);
        column.storage.type = storage::ColumnType::kBigInt;
        column.storage.is_unsigned = true;
      }
      table->columns.push_back(std::move(column));
    }
    return table;
  }

  void add_level(const TableRef& ref) {
    JoinLevel level;
    Scope scope;
    if (ref.kind == TableRefKind::kDerived) {
      DerivedRows derived = run_derived_(*ref.query);
      level.memory_table = derived_table(ref.alias->name, derived);
      level.memory_rows = std::move(derived.rows);
      level.computed_columns = true;
      level.real_name = ref.alias->name;
      scope.name = ref.alias->name;
    } else {
      const std::string db = context_.database_of(ref.table);
      const std::string& name = ref.table.name.name;
      scope.db = db;
      scope.name = ref.alias ? ref.alias->name : name;
      level.real_name = name;
      TemporaryTable* temporary = context_.temporary_tables != nullptr
                                      ? context_.temporary_tables->find(db, name)
                                      : nullptr;
      if (temporary != nullptr) {
        // The session's temporary table: its rows as they are now.
        level.memory_table = std::make_shared<catalog::SqlTable>(temporary->sql);
        level.memory_table->name = scope.name;
        level.memory_rows = temporary->rows;
      } else if (is_system_view_database(db)) {
        std::optional<SystemView> view = read_system_view(context_, db, name);
        level.memory_table = std::make_shared<catalog::SqlTable>(std::move(view->table));
        level.memory_table->name = scope.name;
        level.memory_rows = std::move(view->rows);
      } else if (std::optional<catalog::SqlView> view = find_view(context_, db, name)) {
        // A view: its query's rows, as a derived table's (view_executor.h).
        DerivedRows derived = read_view(context_, *view, run_derived_);
        level.memory_table = derived_table(scope.name, derived);
        level.memory_rows = std::move(derived.rows);
        level.computed_columns = true;
      } else {
        // A table of a missing database is 1146, as in MySQL: no database lookup.
        level.bound = context_.catalog.get_table(db, name);
        // Pushed conditions are evaluated by the row source against sql.name.
        if (scope.name != level.bound->sql.name) level.bound->sql.name = scope.name;
      }
    }
    for (const Scope& other : result_.scopes) {
      if (other.name == scope.name && other.db == scope.db) {
        throw SqlException(1066, "42000", "Not unique table/alias: '" + scope.name + "'");
      }
    }
    result_.star_order.push_back(result_.levels.size());
    result_.levels.push_back(std::move(level));
    result_.scopes.push_back(std::move(scope));
  }

  // --- conditions ---

  void add_conditions(const Expr* root, const char* clause, int left_join_level) {
    roots_.push_back(Root{root, left_join_level});
    std::vector<const Expr*> conjuncts;
    split_conjuncts(root, &conjuncts);
    for (const Expr* conjunct : conjuncts) {
      Condition c;
      c.expr = conjunct;
      c.clause = clause;
      c.left_join_level = left_join_level;
      std::set<size_t> levels;
      if (contains_subquery(*conjunct)) {
        c.single_level = false;
        c.max_level = static_cast<int>(result_.levels.size()) - 1;
        result_.has_subquery = true;
      }
      if (contains_assignment(*conjunct)) {
        // WHERE (@n := @n + 1) > 0 counts the rows examined, as in MySQL: evaluated
        // per row of the last table, never once as a constant condition.
        c.single_level = false;
        c.max_level = static_cast<int>(result_.levels.size()) - 1;
      }
      if (contains_aggregate(*conjunct)) c.single_level = false;  // 1111 when evaluated
      for_each_column(*conjunct, false, [&](const ColumnExpr& column) {
        std::optional<ColumnRef> ref = find_in_scopes(column, result_.scopes, clause);
        if (ref) {
          levels.insert(ref->scope);
          c.max_level = std::max(c.max_level, static_cast<int>(ref->scope));
          return;
        }
        if (!resolves_outside(column, outer_, clause)) {
          std::string name;
          if (column.db) name += column.db->name + ".";
          if (column.table) name += column.table->name + ".";
          throw_unknown_column(name + column.column.name, clause);
        }
        c.outer = true;
      });
      if (levels.size() > 1 || c.outer) c.single_level = false;
      conditions_[conjunct] = c;
    }
  }

  // Is `expr` `column = value` with the column of `level` and the value over earlier
  // levels (or the enclosing query)? Fills `equality`.
  bool as_equality(const Expr* expr, size_t level, JoinEquality* equality) {
    if (expr->kind != ExprKind::kBinary || expr->as<BinaryExpr>().op != BinaryOp::kEq) return false;
    const auto& binary = expr->as<BinaryExpr>();
    for (int side = 0; side < 2; ++side) {
      const Expr& column = side == 0 ? *binary.left : *binary.right;
      const Expr& value = side == 0 ? *binary.right : *binary.left;
      if (column.kind != ExprKind::kColumn) continue;
      std::optional<ColumnRef> ref =
          find_in_scopes(column.as<ColumnExpr>(), result_.scopes, "on clause");
      if (!ref || ref->scope != level) continue;
      if (contains_subquery(value) || contains_aggregate(value) || is_constant(value)) continue;
      bool earlier = true;
      bool reads_anything = false;
      for_each_column(value, false, [&](const ColumnExpr& c) {
        std::optional<ColumnRef> r = find_in_scopes(c, result_.scopes, "on clause");
        if (r && r->scope >= level) earlier = false;
        reads_anything = true;
      });
      if (!earlier || !reads_anything) continue;
      *equality = JoinEquality{ref->column, &value, 0, 0};
      return true;
    }
    return false;
  }

  // The largest AND subtree of `node` whose conjuncts are all single-level conditions
  // of one level: `pushed_candidates_` gets (level, subtree, conjunct count).
  struct Local {
    int level = -1;  // -1: not local to one level
    size_t count = 0;
  };
  Local find_local(const Expr* node, int left_join_level) {
    if (node->kind == ExprKind::kBinary && node->as<BinaryExpr>().op == BinaryOp::kAnd) {
      const Local a = find_local(node->as<BinaryExpr>().left.get(), left_join_level);
      const Local b = find_local(node->as<BinaryExpr>().right.get(), left_join_level);
      if (a.level >= 0 && a.level == b.level) return Local{a.level, a.count + b.count};
      record(node->as<BinaryExpr>().left.get(), a);
      record(node->as<BinaryExpr>().right.get(), b);
      return Local{};
    }
    const Condition& c = conditions_.at(node);
    const int level = c.max_level;
    if (!c.single_level || level < 0) return Local{};
    // WHERE conditions on a LEFT JOIN's table apply after NULL extension, and a LEFT
    // JOIN's ON never filters the tables before it: neither is pushed.
    if (result_.levels[level].left_join && c.left_join_level != level) return Local{};
    if (left_join_level >= 0 && left_join_level != level) return Local{};
    return Local{level, 1};
  }
  void record(const Expr* node, Local local) {
    if (local.level < 0) return;
    Candidate& best = best_push_[local.level];
    if (local.count > best.count) best = Candidate{node, local.count};
  }

  void place_conditions() {
    std::vector<JoinLevel>& levels = result_.levels;
    for (const Root& root : roots_) record(root.expr, find_local(root.expr, root.left_join_level));
    std::set<const Expr*> pushed;
    for (auto& [level, candidate] : best_push_) {
      levels[level].pushed = candidate.node;
      std::vector<const Expr*> conjuncts;
      split_conjuncts(candidate.node, &conjuncts);
      pushed.insert(conjuncts.begin(), conjuncts.end());
    }
    for (const Root& root : roots_) {
      std::vector<const Expr*> conjuncts;
      split_conjuncts(root.expr, &conjuncts);
      for (const Expr* conjunct : conjuncts) {
        if (pushed.count(conjunct) != 0) continue;
        const Condition& c = conditions_.at(conjunct);
        if (c.max_level < 0 && !c.outer && !levels.empty() && c.left_join_level < 0) {
          result_.constant_conditions.push_back(conjunct);
          continue;
        }
        if (levels.empty()) {
          result_.constant_conditions.push_back(conjunct);
          continue;
        }
        const size_t level = c.left_join_level >= 0 ? static_cast<size_t>(c.left_join_level)
                                                    : static_cast<size_t>(std::max(c.max_level, 0));
        JoinLevel& target = levels[level];
        const bool on_of_level = c.left_join_level >= 0;
        if (target.left_join && !on_of_level) {
          target.after.push_back(conjunct);
          continue;
        }
        if (c.single_level && c.max_level == static_cast<int>(level)) {
          target.local.push_back(conjunct);
          continue;
        }
        JoinEquality equality;
        if (as_equality(conjunct, level, &equality)) {
          target.equalities.push_back(equality);
          continue;
        }
        target.match.push_back(conjunct);
      }
    }
  }

  // --- outputs, GROUP BY, ORDER BY ---

  void check_columns(const Expr& expr, const char* clause, bool allow_aliases) {
    for_each_column(expr, false, [&](const ColumnExpr& column) {
      if (find_in_scopes(column, result_.scopes, clause)) return;
      if (resolves_outside(column, outer_, clause)) return;
      if (allow_aliases && !column.table && output_by_label(column.column.name) >= 0) return;
      std::string name;
      if (column.db) name += column.db->name + ".";
      if (column.table) name += column.table->name + ".";
      throw_unknown_column(name + column.column.name, clause);
    });
  }

  int output_by_label(const std::string& name) const {
    const std::string wanted = lower(name);
    for (size_t o = 0; o < result_.outputs.size(); ++o) {
      if (lower(result_.outputs[o].label) == wanted) return static_cast<int>(o);
    }
    return -1;
  }

  // 1052 when another output has the same name but is not the same column (MySQL's
  // ambiguity rule for ORDER BY names that the select list answers).
  void check_unique_label(int output) const {
    const OutputColumn& first = result_.outputs[output];
    const std::string wanted = lower(first.label);
    for (size_t o = output + 1; o < result_.outputs.size(); ++o) {
      const OutputColumn& other = result_.outputs[o];
      if (lower(other.label) != wanted) continue;
      const bool same_column = first.table_column >= 0 &&
                               other.table_column == first.table_column &&
                               other.scope == first.scope;
      if (!same_column) {
        throw SqlException(1052, "23000",
                           "Column '" + first.label + "' in order clause is ambiguous");
      }
    }
  }

  void add_star(const StarExpr& star) {
    if (result_.scopes.empty()) throw SqlException(1096, "HY000", "No tables used");
    bool found = false;
    for (size_t s : result_.star_order) {
      const Scope& scope = result_.scopes[s];
      if (star.table &&
          (star.table->name != scope.name || (star.db && star.db->name != scope.db))) {
        continue;
      }
      found = true;
      const catalog::SqlTable& table = *scope.table;
      // `*` shows a USING column once, first, as the left table's (MySQL's coalescing).
      std::vector<uint16_t> order;
      if (!star.table) {
        for (size_t later = s + 1; later < result_.levels.size(); ++later) {
          for (const JoinEquality& e : result_.levels[later].equalities) {
            if (e.value == nullptr && e.from_scope == s &&
                std::find(order.begin(), order.end(), e.from_column) == order.end()) {
              order.push_back(e.from_column);
            }
          }
        }
      }
      for (uint16_t c = 0; c < table.columns.size(); ++c) {
        if (std::find(order.begin(), order.end(), c) == order.end()) order.push_back(c);
      }
      for (uint16_t c : order) {
        if (!star.table && is_hidden(scope, table.columns[c].name)) continue;
        OutputColumn out;
        out.scope = static_cast<int>(s);
        out.table_column = c;
        out.label = table.columns[c].name;
        result_.outputs.push_back(std::move(out));
      }
    }
    if (!found) {
      throw SqlException(1051, "42S02", "Unknown table '" + star.table->name + "'");
    }
  }

  void bind_outputs() {
    for (const SelectItem& item : select_.items) {
      const Expr& expr = *item.expr;
      if (expr.kind == ExprKind::kStar) {
        add_star(expr.as<StarExpr>());
        continue;
      }
      check_columns(expr, "field list", false);
      if (contains_subquery(expr)) result_.has_subquery = true;
      OutputColumn out;
      out.expr = &expr;
      if (expr.kind == ExprKind::kColumn) {
        std::optional<ColumnRef> ref =
            find_in_scopes(expr.as<ColumnExpr>(), result_.scopes, "field list");
        if (ref) {
          out.scope = static_cast<int>(ref->scope);
          out.table_column = ref->column;
        }
        out.label = expr.as<ColumnExpr>().column.name;
      } else if (expr.kind == ExprKind::kLiteral &&
                 expr.as<LiteralExpr>().literal_kind == LiteralKind::kString) {
        out.label = expr.as<LiteralExpr>().value;  // MySQL names 'abc' "abc"
      } else {
        out.label = select_item_label(context_.source_text, expr.pos.offset);
        if (out.label.empty()) out.label = to_sql(expr);
      }
      if (item.alias) out.label = item.alias->name;
      collect_aggregates(expr, &result_.aggregates);
      result_.outputs.push_back(std::move(out));
    }
  }

  // An integer literal in GROUP BY / ORDER BY: the output column it numbers.
  int position_of(const Expr& expr, const char* clause) const {
    if (expr.kind != ExprKind::kLiteral ||
        expr.as<LiteralExpr>().literal_kind != LiteralKind::kInteger) {
      return -1;
    }
    const std::string& digits = expr.as<LiteralExpr>().value;
    const long long position = std::strtoll(digits.c_str(), nullptr, 10);
    if (position < 1 || static_cast<size_t>(position) > result_.outputs.size()) {
      throw SqlException(1054, "42S22",
                         "Unknown column '" + digits + "' in '" + std::string(clause) + "'");
    }
    return static_cast<int>(position - 1);
  }

  void bind_grouping() {
    if (select_.with_rollup) throw_not_supported("WITH ROLLUP");
    for (const ExprPtr& item : select_.group_by) {
      SortItem group;
      const int position = position_of(*item, "group statement");
      if (position >= 0) {
        group.output = position;
        group.expr = result_.outputs[position].expr;
      } else {
        group.expr = item.get();
        // A name FROM does not have may be a select alias (MySQL: FROM first).
        if (item->kind == ExprKind::kColumn && !item->as<ColumnExpr>().table &&
            !find_in_scopes(item->as<ColumnExpr>(), result_.scopes, "group statement") &&
            !resolves_outside(item->as<ColumnExpr>(), outer_, "group statement")) {
          const int alias = output_by_label(item->as<ColumnExpr>().column.name);
          if (alias >= 0) {
            group.output = alias;
            group.expr = result_.outputs[alias].expr;
          }
        }
        if (group.output < 0) check_columns(*item, "group statement", false);
      }
      if (group.expr != nullptr && contains_aggregate(*group.expr)) {
        // Naming an aggregate of the select list is 1056; writing one is 1111.
        if (group.output < 0) throw SqlException(1111, "HY000", "Invalid use of group function");
        throw SqlException(1056, "42000",
                           "Can't group on '" + result_.outputs[group.output].label + "'");
      }
      if (group.expr != nullptr && contains_subquery(*group.expr)) result_.has_subquery = true;
      result_.group_by.push_back(group);
    }
    if (select_.having) {
      check_columns(*select_.having, "having clause", true);
      collect_aggregates(*select_.having, &result_.aggregates);
      if (contains_subquery(*select_.having)) result_.has_subquery = true;
    }
  }

  void bind_order() {
    for (const OrderItem& item : select_.order_by) {
      SortItem order;
      order.descending = item.descending;
      const Expr& expr = *item.expr;
      order.output = position_of(expr, "order clause");
      if (order.output < 0 && expr.kind == ExprKind::kColumn && !expr.as<ColumnExpr>().table) {
        // ORDER BY prefers a select-list name (an alias) to a column of FROM.
        order.output = output_by_label(expr.as<ColumnExpr>().column.name);
        if (order.output >= 0) check_unique_label(order.output);
      }
      if (order.output < 0) {
        order.expr = &expr;
        check_columns(expr, "order clause", true);
        collect_aggregates(expr, &result_.aggregates);
        if (contains_subquery(expr)) result_.has_subquery = true;
      }
      result_.order_by.push_back(order);
    }
    result_.grouped = !result_.group_by.empty() || !result_.aggregates.empty();
  }

  // --- only_full_group_by ---

  std::string full_name(const ColumnRef& ref) const {
    const Scope& scope = result_.scopes[ref.scope];
    std::string name = scope.db.empty() ? std::string() : scope.db + ".";
    return name + scope.name + "." + scope.table->columns[ref.column].name;
  }

  // The first column of `expr` (outside aggregates) that GROUP BY does not determine.
  std::optional<ColumnRef> ungrouped_column(const Expr* expr, const OutputColumn* star) const {
    if (expr != nullptr) {
      const std::string text = to_sql(*expr);
      for (const std::string& group : group_texts_) {
        if (group == text) return std::nullopt;
      }
    }
    std::optional<ColumnRef> bad;
    auto check = [&](const ColumnRef& ref) {
      if (bad || grouped_columns_.count({ref.scope, ref.column}) != 0) return;
      // Functionally dependent: the table's whole primary key is grouped.
      const JoinLevel& level = result_.levels[ref.scope];
      if (level.bound) {
        bool all = true;
        for (uint16_t key : level.table().primary_key().columns) {
          all = all && grouped_columns_.count({ref.scope, key}) != 0;
        }
        if (all) return;
      }
      bad = ref;
    };
    if (expr == nullptr) {
      check(ColumnRef{static_cast<size_t>(star->scope), static_cast<uint16_t>(star->table_column),
                      0});
      return bad;
    }
    for_each_column(*expr, true, [&](const ColumnExpr& column) {
      std::optional<ColumnRef> ref = find_in_scopes(column, result_.scopes, "field list");
      if (ref) check(*ref);  // otherwise an outer reference: fixed per execution
    });
    return bad;
  }

  void check_full_group_by() {
    if (!result_.grouped) return;
    for (const SortItem& group : result_.group_by) {
      if (group.output >= 0 && result_.outputs[group.output].table_column >= 0) {
        const OutputColumn& out = result_.outputs[group.output];
        grouped_columns_.insert(
            {static_cast<size_t>(out.scope), static_cast<uint16_t>(out.table_column)});
      }
      if (group.expr == nullptr) continue;
      group_texts_.push_back(to_sql(*group.expr));
      if (group.expr->kind == ExprKind::kColumn) {
        std::optional<ColumnRef> ref =
            find_in_scopes(group.expr->as<ColumnExpr>(), result_.scopes, "group statement");
        if (ref) grouped_columns_.insert({ref->scope, ref->column});
      }
    }
    for (size_t o = 0; o < result_.outputs.size(); ++o) {
      const OutputColumn& out = result_.outputs[o];
      if (out.expr == nullptr && out.table_column < 0) continue;
      std::optional<ColumnRef> bad = ungrouped_column(out.expr, &out);
      if (!bad) continue;
      const std::string position = std::to_string(o + 1);
      if (select_.group_by.empty()) {
        throw SqlException(1140, "42000",
                           "In aggregated query without GROUP BY, expression #" + position +
                               " of SELECT list contains nonaggregated column '" + full_name(*bad) +
                               "'; this is incompatible with sql_mode=only_full_group_by");
      }
      throw SqlException(1055, "42000",
                         "Expression #" + position +
                             " of SELECT list is not in GROUP BY clause and contains "
                             "nonaggregated column '" +
                             full_name(*bad) +
                             "' which is not functionally dependent on columns in GROUP BY "
                             "clause; this is incompatible with sql_mode=only_full_group_by");
    }
    for (size_t i = 0; i < result_.order_by.size(); ++i) {
      const SortItem& order = result_.order_by[i];
      if (order.expr == nullptr) continue;
      std::optional<ColumnRef> bad = ungrouped_column(order.expr, nullptr);
      if (!bad) continue;
      if (select_.group_by.empty()) {
        throw SqlException(
            1140, "42000",
            "In aggregated query without GROUP BY, expression #" + std::to_string(i + 1) +
                " of ORDER BY clause contains nonaggregated column '" + full_name(*bad) +
                "'; this is incompatible with sql_mode=only_full_group_by");
      }
      throw SqlException(1055, "42000",
                         "Expression #" + std::to_string(i + 1) +
                             " of ORDER BY clause is not in GROUP BY clause and contains "
                             "nonaggregated column '" +
                             full_name(*bad) +
                             "' which is not functionally dependent on columns in GROUP BY "
                             "clause; this is incompatible with sql_mode=only_full_group_by");
    }
  }

  struct Root {
    const Expr* expr;
    int left_join_level;
  };
  struct Candidate {
    const Expr* node = nullptr;
    size_t count = 0;
  };

  StatementContext& context_;
  const SelectBlock& select_;
  const EvalContext* outer_;
  const RunDerived& run_derived_;
  BoundSelect result_;
  std::vector<std::pair<const Expr*, int>> on_roots_;  // (ON, its LEFT JOIN level or -1)
  std::vector<Root> roots_;
  std::map<const Expr*, Condition> conditions_;
  std::map<int, Candidate> best_push_;
  std::vector<std::string> group_texts_;
  std::set<std::pair<size_t, uint16_t>> grouped_columns_;
};

}  // namespace

void restrict_read_columns(BoundSelect& select) {
  std::set<std::string> names;
  bool all = false;
  collect_block_names(*select.block, &names, &all);
  if (all) return;
  for (JoinLevel& level : select.levels) {
    if (!level.bound) continue;
    const catalog::SqlTable& table = level.bound->sql;
    std::vector<bool> read(table.columns.size(), false);
    for (const catalog::SqlIndex& index : table.indexes) {
      if (index.kind == catalog::SqlIndexKind::kKey) continue;  // no row source needs it
      for (uint16_t column : index.columns) {
        if (column < read.size()) read[column] = true;
      }
    }
    for (const std::string& name : names) {
      const int column = table.find_column(name);
      if (column >= 0) read[column] = true;
    }
    std::vector<uint16_t> columns;
    for (uint16_t c = 0; c < read.size(); ++c) {
      if (read[c]) columns.push_back(c);
    }
    if (columns.size() < table.columns.size()) level.read_columns = std::move(columns);
  }
}

BoundSelect bind_select_block(StatementContext& context, const SelectBlock& select,
                              const EvalContext* outer, const RunDerived& run_derived) {
  return Binder(context, select, outer, run_derived).bind();
}

}  // namespace duo::sql::executor
