// The SELECT pipeline (statement_context.h, select_executor.h): binds each query block
// (select_binding.h), joins its tables (join_executor.h), groups and aggregates (aggregate.h),
// applies HAVING, DISTINCT, ORDER BY and LIMIT, and combines UNION [ALL] branches. Subqueries run
// through the same pipeline (QueryRunner): uncorrelated ones once per statement, correlated ones
// once per outer row. Derived tables are read into memory first.
//
// Memory: rows, groups and distinct values held are bounded by kStatementRowsMax
// (1038 beyond).
//
// Thread-safety: one session thread (the StatementContext's).
#include <algorithm>
#include <map>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/aggregate.h"
#include "sql-frontend/executor/join_executor.h"
#include "sql-frontend/executor/row_order.h"
#include "sql-frontend/executor/select_binding.h"
#include "sql-frontend/executor/select_executor.h"

namespace duo::sql::executor {

namespace {

// The rows of a query and, when asked for, its result columns (a table column's
// metadata, or none for a computed one, typed later by its values).
struct QueryResult {
  std::vector<std::string> labels;
  std::vector<std::optional<server::ColumnDefinition41>> table_columns;
  std::vector<Row> rows;
};

storage::LockMode lock_of(const SelectBlock& select) {
  return select_lock_mode(select);
}

// A derived table's BIT(M) column (select_binding.h DerivedRows) stays BIT, as its
// table column is sent: M, UNSIGNED, binary (a derived table has no keys, and its
// columns may be NULL).
server::ColumnDefinition41 derived_bit_definition(const catalog::SqlColumn& column,
                                                  const std::string& label) {
  server::ColumnDefinition41 def;
  def.name = label;
  def.type = protocol::FieldType::kBit;
  def.column_length = column.bit_width;
  def.character_set = 63;
  def.flags = protocol::kUnsignedFlag;
  return def;
}

// MIN(c) / MAX(c) of a YEAR or BIT column keep the column's type, as in MySQL (the year
// 0 reads 0000, bits are sent as bytes); other computed columns are typed by their
// values. Returns the metadata, or nullopt.
std::optional<server::ColumnDefinition41> min_max_definition(const BoundSelect& select,
                                                             const OutputColumn& out) {
  if (out.expr == nullptr || out.expr->kind != ExprKind::kFunction) return std::nullopt;
  const auto& call = out.expr->as<FunctionExpr>();
  if ((call.name != "MIN" && call.name != "MAX") || call.db || call.args.size() != 1 ||
      call.args[0]->kind != ExprKind::kColumn) {
    return std::nullopt;
  }
  std::optional<ColumnRef> ref =
      find_in_scopes(call.args[0]->as<ColumnExpr>(), select.scopes, "field list");
  if (!ref || ref->scope >= select.levels.size()) return std::nullopt;
  const JoinLevel& level = select.levels[ref->scope];
  const catalog::SqlColumn& column = level.table().columns[ref->column];
  if (!column.is_year && column.bit_width == 0) return std::nullopt;
  // A system view has no such column; a derived table's BIT column is one (DerivedRows).
  if (level.memory_table && !level.computed_columns) return std::nullopt;
  if (level.computed_columns) return derived_bit_definition(column, out.label);
  server::ColumnDefinition41 def = table_column_definition(level.table(), ref->column, out.label);
  def.schema.clear();
  def.table.clear();
  def.org_table.clear();
  def.org_name.clear();
  // An aggregate is NULL over no rows and belongs to no key.
  def.flags &= static_cast<uint16_t>(~(protocol::kNotNullFlag | protocol::kPriKeyFlag |
                                       protocol::kUniqueKeyFlag | protocol::kMultipleKeyFlag |
                                       protocol::kAutoIncrementFlag));
  return def;
}

// Metadata of `select`'s output columns that come straight from a cluster table.
void describe_outputs(const BoundSelect& select, QueryResult* result) {
  for (const OutputColumn& out : select.outputs) {
    result->labels.push_back(out.label);
    std::optional<server::ColumnDefinition41> def;
    if (out.table_column >= 0 && !select.levels[out.scope].computed_columns &&
        !select.levels[out.scope].memory_table) {
      const JoinLevel& level = select.levels[out.scope];
      def = table_column_definition(level.table(), static_cast<uint16_t>(out.table_column),
                                    out.label);
      def->org_table = level.real_name;  // `table` is the alias, as MySQL reports it
    } else if (out.table_column >= 0 && select.levels[out.scope].computed_columns &&
               select.levels[out.scope].table().columns[out.table_column].bit_width > 0) {
      def = derived_bit_definition(select.levels[out.scope].table().columns[out.table_column],
                                   out.label);
    } else {
      def = min_max_definition(select, out);
    }
    result->table_columns.push_back(std::move(def));
  }
}

// The metadata of a UNION's column from its branches' (`left` becomes the result): a
// column keeps the table metadata only when both branches agree it is that column; BIT
// columns of different tables stay BIT, of the larger width (MySQL's type merge: BIT
// with BIT is BIT, Item_type_holder keeps the longer length); anything else is typed by
// its values.
void merge_union_column(const std::optional<server::ColumnDefinition41>& right,
                        std::optional<server::ColumnDefinition41>* left) {
  if (!right || !*left) {
    left->reset();
    return;
  }
  server::ColumnDefinition41& merged = **left;
  if (right->org_name == merged.org_name && right->org_table == merged.org_table) return;
  if (right->type != protocol::FieldType::kBit || merged.type != protocol::FieldType::kBit) {
    left->reset();
    return;
  }
  merged.column_length = std::max(merged.column_length, right->column_length);
  merged.schema.clear();
  merged.table.clear();
  merged.org_table.clear();
  merged.org_name.clear();
  // NOT NULL only when no branch can be NULL; a union's column belongs to no key.
  const uint16_t not_null = merged.flags & right->flags & protocol::kNotNullFlag;
  merged.flags &= static_cast<uint16_t>(~(protocol::kNotNullFlag | protocol::kPriKeyFlag |
                                          protocol::kUniqueKeyFlag | protocol::kMultipleKeyFlag |
                                          protocol::kAutoIncrementFlag));
  merged.flags |= not_null;
}

// Rows ordered by their sort keys, then the values output.
struct KeyedRow {
  Row keys;
  Row values;
};

void sort_rows(std::vector<KeyedRow>* rows, const std::vector<SortItem>& order) {
  if (order.empty()) return;
  std::stable_sort(rows->begin(), rows->end(), [&](const KeyedRow& a, const KeyedRow& b) {
    for (size_t k = 0; k < order.size(); ++k) {
      int c = compare_nulls_first(a.keys[k], b.keys[k]);
      if (order[k].descending) c = -c;
      if (c != 0) return c < 0;
    }
    return false;
  });
}

class QueryRunner final : public SubqueryRunner {
 public:
  explicit QueryRunner(StatementContext& context) : context_(context) {}

  const std::vector<Row>& rows(const QueryExpr& query, const EvalContext& outer,
                               size_t rows_max) override {
    auto cached = uncorrelated_.find(&query);
    if (cached != uncorrelated_.end()) return cached->second;
    bool correlated = false;
    QueryResult result = run(query, &outer, rows_max, &correlated);
    std::vector<Row>& slot = correlated ? correlated_[&query] : uncorrelated_[&query];
    slot = std::move(result.rows);
    return slot;
  }

  // The rows of `query`; `outer` is the enclosing row's context (null at top level),
  // `correlated` is set when the query read it.
  QueryResult run(const QueryExpr& query, const EvalContext* outer, size_t rows_max,
                  bool* correlated) {
    if (!query.is_union()) return run_block(*query.select, outer, rows_max, correlated);
    QueryResult left = run(*query.left, outer, SIZE_MAX, correlated);
    QueryResult right = run(*query.right, outer, SIZE_MAX, correlated);
    if (left.labels.size() != right.labels.size()) {
      throw SqlException(1222, "21000",
                         "The used SELECT statements have a different number of columns");
    }
    for (size_t c = 0; c < left.table_columns.size(); ++c) {
      merge_union_column(right.table_columns[c], &left.table_columns[c]);
    }
    std::vector<Row>& rows = left.rows;
    if (rows.size() + right.rows.size() > kStatementRowsMax) throw_too_many_rows();
    for (Row& row : right.rows) rows.push_back(std::move(row));
    if (!query.union_all) {
      std::map<Row, bool, ValuesLess> seen;
      std::vector<Row> distinct;
      for (Row& row : rows) {
        if (seen.emplace(row, true).second) distinct.push_back(std::move(row));
      }
      rows = std::move(distinct);
    }
    if (!query.order_by.empty()) {
      std::vector<KeyedRow> keyed;
      std::vector<SortItem> order;
      for (const OrderItem& item : query.order_by) order.push_back(union_order(item, left));
      for (Row& row : rows) {
        KeyedRow k;
        for (const SortItem& item : order) k.keys.push_back(row[item.output]);
        k.values = std::move(row);
        keyed.push_back(std::move(k));
      }
      sort_rows(&keyed, order);
      rows.clear();
      for (KeyedRow& k : keyed) rows.push_back(std::move(k.values));
    }
    apply_limit(query.limit, &rows);
    if (rows.size() > rows_max) rows.resize(rows_max);
    return left;
  }

 private:
  // A UNION's ORDER BY item: a position or the name of a result column.
  SortItem union_order(const OrderItem& item, const QueryResult& result) const {
    SortItem order;
    order.descending = item.descending;
    const Expr& expr = *item.expr;
    std::string name;
    if (expr.kind == ExprKind::kLiteral &&
        expr.as<LiteralExpr>().literal_kind == LiteralKind::kInteger) {
      const long long position = std::strtoll(expr.as<LiteralExpr>().value.c_str(), nullptr, 10);
      if (position >= 1 && static_cast<size_t>(position) <= result.labels.size()) {
        order.output = static_cast<int>(position - 1);
        return order;
      }
      name = expr.as<LiteralExpr>().value;
    } else if (expr.kind == ExprKind::kColumn && !expr.as<ColumnExpr>().table) {
      name = expr.as<ColumnExpr>().column.name;
      for (size_t c = 0; c < result.labels.size(); ++c) {
        if (compare(SqlValue::of_string(result.labels[c]), SqlValue::of_string(name)) == 0) {
          order.output = static_cast<int>(c);
          return order;
        }
      }
    } else {
      throw_not_supported("expressions in a UNION's ORDER BY");
    }
    throw_unknown_column(name, "order clause");
  }

  void apply_limit(const std::optional<Limit>& limit, std::vector<Row>* rows) const {
    if (!limit) return;
    const uint64_t offset = limit_value(limit->offset.get(), context_);
    const uint64_t count = limit_value(limit->count.get(), context_);
    const size_t begin = std::min<uint64_t>(offset, rows->size());
    const size_t end = begin + std::min<uint64_t>(rows->size() - begin, count);
    if (begin == 0 && end == rows->size()) return;
    *rows = std::vector<Row>(std::make_move_iterator(rows->begin() + begin),
                             std::make_move_iterator(rows->begin() + end));
  }

  QueryResult run_block(const SelectBlock& block, const EvalContext* outer, size_t rows_max,
                        bool* correlated);

  StatementContext& context_;
  std::map<const QueryExpr*, std::vector<Row>> uncorrelated_;  // valid for the statement
  std::map<const QueryExpr*, std::vector<Row>> correlated_;    // the latest outer row's
};

// Executes one bound block.
class BlockRunner {
 public:
  BlockRunner(StatementContext& context, QueryRunner& runner, BoundSelect& select,
              const EvalContext* outer, bool* correlated)
      : context_(context), select_(select), block_(*select.block) {
    base_ = context.eval();
    base_.scopes = &select_.scopes;
    base_.outer = outer;
    base_.outer_referenced = correlated;
    base_.subqueries = &runner;
    // HAVING and ORDER BY see the select list's aliases as an enclosing scope: names of
    // FROM come first, as MySQL resolves HAVING.
    for (const OutputColumn& out : select_.outputs) {
      catalog::SqlColumn column;
      column.name = out.label;
      alias_table_.columns.push_back(std::move(column));
    }
    alias_scopes_.push_back(Scope{&alias_table_, "", "", nullptr, {}});
    alias_context_ = base_;
    alias_context_.scopes = &alias_scopes_;
    with_aliases_ = base_;
    with_aliases_.outer = &alias_context_;
    with_aliases_.outer_referenced = nullptr;
  }

  std::vector<Row> run(size_t rows_max) {
    const bool has_limit = block_.limit.has_value();
    const uint64_t offset = has_limit ? limit_value(block_.limit->offset.get(), context_) : 0;
    const uint64_t count =
        has_limit ? limit_value(block_.limit->count.get(), context_) : UINT64_MAX;
    const uint64_t wanted = std::min<uint64_t>(count, rows_max);

    std::vector<KeyedRow> rows;
    bool no_rows = false;
    for (const Expr* condition : select_.constant_conditions) {
      EvalContext eval = base_;
      eval.clause = "where clause";
      if (!passes(condition, eval)) no_rows = true;
    }
    JoinExecutor join(context_, select_, base_, lock_of(block_));
    if (!select_.grouped) {
      // Plain rows: projected as they come; LIMIT stops the join once satisfied.
      const bool can_stop = block_.order_by.empty() && !block_.sql_calc_found_rows;
      std::map<Row, bool, ValuesLess> seen;
      if (!no_rows && (wanted > 0 || block_.sql_calc_found_rows)) {
        join.run([&]() {
          Row values = project();
          if (block_.having && !passes_having(values)) return true;
          if (block_.distinct && !seen.emplace(values, true).second) return true;
          if (rows.size() >= kStatementRowsMax) throw_too_many_rows();
          rows.push_back(KeyedRow{order_keys(values), std::move(values)});
          return !(can_stop && rows.size() >= offset && rows.size() - offset >= wanted);
        });
      }
    } else {
      group_rows(join, no_rows, &rows);
    }
    sort_rows(&rows, select_.order_by);
    if (block_.sql_calc_found_rows) {
      context_.calc_found_rows = rows.size();
      context_.add_warning(1287,
                           "SQL_CALC_FOUND_ROWS is deprecated and will be removed in a future "
                           "release. Consider using two separate queries instead.");
    }
    std::vector<Row> out;
    const size_t begin = std::min<uint64_t>(offset, rows.size());
    const size_t end = begin + std::min<uint64_t>(rows.size() - begin, wanted);
    out.reserve(end - begin);
    for (size_t r = begin; r < end; ++r) out.push_back(std::move(rows[r].values));
    return out;
  }

 private:
  // One group: a row of its input (for the grouped columns) and its aggregates.
  struct Group {
    std::vector<Row> rows;  // per scope; empty: NULL
    std::vector<Aggregator> aggregates;
  };

  void group_rows(JoinExecutor& join, bool no_rows, std::vector<KeyedRow>* out) {
    std::map<Row, size_t, ValuesLess> index;
    std::vector<Group> groups;
    std::vector<std::optional<std::string>> separators;
    for (const Expr* call : select_.aggregates) {
      separators.push_back(group_concat_separator(call->as<FunctionExpr>(), context_.source_text));
    }
    auto new_group = [&]() {
      Group group;
      for (size_t a = 0; a < select_.aggregates.size(); ++a) {
        group.aggregates.emplace_back(select_.aggregates[a]->as<FunctionExpr>(),
                                      separators[a].value_or(","));
      }
      return group;
    };
    if (!no_rows) {
      join.run([&]() {
        EvalContext eval = base_;
        eval.clause = "group statement";
        Row key;
        key.reserve(select_.group_by.size());
        for (const SortItem& item : select_.group_by) {
          key.push_back(item.expr != nullptr ? evaluate(*item.expr, eval)
                                             : column_value(select_.outputs[item.output]));
        }
        auto [it, inserted] = index.emplace(std::move(key), groups.size());
        if (inserted) {
          if (groups.size() >= kStatementRowsMax) throw_too_many_rows();
          Group group = new_group();
          for (const Scope& scope : select_.scopes) {
            group.rows.push_back(scope.row != nullptr ? *scope.row : Row{});
          }
          groups.push_back(std::move(group));
        }
        Group& group = groups[it->second];
        eval.clause = "field list";
        for (size_t a = 0; a < select_.aggregates.size(); ++a) {
          const auto& call = select_.aggregates[a]->as<FunctionExpr>();
          std::vector<SqlValue> args;
          if (!call.star) {
            const size_t values = call.args.size() - (separators[a] ? 1 : 0);
            for (size_t i = 0; i < values; ++i) args.push_back(evaluate(*call.args[i], eval));
          }
          group.aggregates[a].add(std::move(args));
        }
        return true;
      });
    }
    // Aggregates without GROUP BY: one row even for no input.
    if (groups.empty() && select_.group_by.empty()) {
      Group group = new_group();
      group.rows.resize(select_.scopes.size());
      groups.push_back(std::move(group));
    }
    std::vector<AggregateValue> values(select_.aggregates.size());
    base_.aggregates = &values;
    with_aliases_.aggregates = &values;
    alias_context_.aggregates = &values;
    // Groups in the order of their keys (MySQL promises no order without ORDER BY).
    std::vector<size_t> order;
    order.reserve(groups.size());
    for (const auto& [key, g] : index) order.push_back(g);
    if (index.empty() && !groups.empty()) order.push_back(0);
    std::map<Row, bool, ValuesLess> seen;
    for (size_t g : order) {
      Group& group = groups[g];
      for (size_t s = 0; s < select_.scopes.size(); ++s) {
        select_.scopes[s].row = group.rows[s].empty() ? nullptr : &group.rows[s];
      }
      for (size_t a = 0; a < select_.aggregates.size(); ++a) {
        values[a] = AggregateValue{select_.aggregates[a], group.aggregates[a].result()};
      }
      Row row = project();
      if (block_.having && !passes_having(row)) continue;
      if (block_.distinct && !seen.emplace(row, true).second) continue;
      out->push_back(KeyedRow{order_keys(row), std::move(row)});
    }
  }

  bool passes_having(const Row& values) {
    alias_scopes_[0].row = &values;
    EvalContext eval = with_aliases_;
    eval.clause = "having clause";
    const bool pass = passes(block_.having.get(), eval);
    alias_scopes_[0].row = nullptr;
    return pass;
  }

  SqlValue column_value(const OutputColumn& out) const {
    const Row* row = select_.scopes[out.scope].row;
    return row == nullptr ? SqlValue::null() : (*row)[out.table_column];
  }

  Row project() const {
    Row values;
    values.reserve(select_.outputs.size());
    for (const OutputColumn& out : select_.outputs) {
      if (out.table_column >= 0) {
        values.push_back(column_value(out));
      } else {
        values.push_back(evaluate(*out.expr, base_));
      }
    }
    return values;
  }

  // The sort key of output `output`'s value: a column's through enum_order_key (an
  // ENUM/SET sorts by its number, also from a derived table), a computed one's as is.
  SqlValue output_order_key(int output, const SqlValue& value) const {
    const OutputColumn& out = select_.outputs[output];
    if (out.table_column < 0) return value;
    const JoinLevel& level = select_.levels[out.scope];
    return enum_order_key(
        level.computed_columns ? nullptr : &level.table().columns[out.table_column], value);
  }

  Row order_keys(const Row& values) {
    Row keys;
    if (select_.order_by.empty()) return keys;
    keys.reserve(select_.order_by.size());
    alias_scopes_[0].row = &values;
    EvalContext eval = with_aliases_;
    eval.clause = "order clause";
    for (const SortItem& item : select_.order_by) {
      keys.push_back(item.output >= 0 ? output_order_key(item.output, values[item.output])
                                      : order_key(*item.expr, eval));
    }
    alias_scopes_[0].row = nullptr;
    return keys;
  }

  StatementContext& context_;
  BoundSelect& select_;
  const SelectBlock& block_;
  EvalContext base_;
  catalog::SqlTable alias_table_;
  std::vector<Scope> alias_scopes_;
  EvalContext alias_context_;
  EvalContext with_aliases_;
};

QueryResult QueryRunner::run_block(const SelectBlock& block, const EvalContext* outer,
                                   size_t rows_max, bool* correlated) {
  const RunDerived run_derived = [&](const QueryExpr& query) {
    QueryResult derived = run(query, nullptr, SIZE_MAX, nullptr);
    return DerivedRows{std::move(derived.labels), std::move(derived.rows),
                       std::move(derived.table_columns)};
  };
  BoundSelect select = bind_select_block(context_, block, outer, run_derived);
  restrict_read_columns(select);
  QueryResult result;
  describe_outputs(select, &result);
  result.rows = BlockRunner(context_, *this, select, outer, correlated).run(rows_max);
  return result;
}

// Result columns without reading rows: derived tables are bound, not read.
QueryResult describe_query(StatementContext& context, const QueryExpr& query) {
  if (query.is_union()) return describe_query(context, *query.left);
  const RunDerived run_derived = [&](const QueryExpr& derived) {
    QueryResult described = describe_query(context, derived);
    return DerivedRows{std::move(described.labels), {}, std::move(described.table_columns)};
  };
  BoundSelect select = bind_select_block(context, *query.select, nullptr, run_derived);
  QueryResult result;
  describe_outputs(select, &result);
  return result;
}

// The result set of `rows` under outputs `labels` / `table_columns` (`encoded`: their
// metadata when every output is a table column).
server::ResultSet result_set(const std::vector<std::string>& labels,
                             const std::vector<std::optional<server::ColumnDefinition41>>& columns,
                             const std::shared_ptr<const server::EncodedColumns>& encoded,
                             const std::vector<Row>& rows) {
  server::ResultSet result;
  if (encoded != nullptr) {
    result.encoded_columns = encoded;
  } else {
    for (size_t c = 0; c < labels.size(); ++c) {
      result.columns.push_back(
          columns[c] ? *columns[c] : computed_column_definition(labels[c], infer_type(rows, c)));
    }
  }
  const std::vector<server::ColumnDefinition41>& defs = result.column_definitions();
  result.rows.reserve(rows.size());
  for (const Row& row : rows) {
    std::vector<server::Value> cells;
    cells.reserve(row.size());
    for (size_t c = 0; c < row.size(); ++c) {
      cells.push_back(to_protocol(row[c], defs[c].type, defs[c].column_length));
    }
    result.rows.push_back(std::move(cells));
  }
  return result;
}

}  // namespace

storage::LockMode select_lock_mode(const SelectBlock& block) {
  return block.lock == LockMode::kForUpdate ? storage::LockMode::kExclusive
         : block.lock == LockMode::kShare   ? storage::LockMode::kShared
                                            : storage::LockMode::kCommittedRead;
}

BoundOutputs describe_bound_select(const BoundSelect& select) {
  QueryResult described;
  describe_outputs(select, &described);
  BoundOutputs outputs;
  outputs.labels = std::move(described.labels);
  outputs.table_columns = std::move(described.table_columns);
  bool all_table_columns = true;
  std::vector<server::ColumnDefinition41> columns;
  for (const auto& column : outputs.table_columns) {
    if (!column) {
      all_table_columns = false;
      break;
    }
    columns.push_back(*column);
  }
  if (all_table_columns) outputs.encoded = server::EncodedColumns::of(std::move(columns));
  return outputs;
}

server::StatementResult execute_bound_select(StatementContext& context, BoundSelect& select,
                                             const BoundOutputs& outputs) {
  // A previous execution (or its failure) may have left rows set in the scopes.
  for (Scope& scope : select.scopes) scope.row = nullptr;
  QueryRunner runner(context);
  const std::vector<Row> rows =
      BlockRunner(context, runner, select, nullptr, nullptr).run(SIZE_MAX);
  context.finish();
  return result_set(outputs.labels, outputs.table_columns, outputs.encoded, rows);
}

std::vector<server::ColumnDefinition41> describe_select(StatementContext& context,
                                                        const SelectStatement& statement) {
  const QueryResult described = describe_query(context, *statement.query);
  std::vector<server::ColumnDefinition41> columns;
  for (size_t c = 0; c < described.labels.size(); ++c) {
    // Computed columns are typed by their values at execution; announce them as strings.
    columns.push_back(
        described.table_columns[c]
            ? *described.table_columns[c]
            : computed_column_definition(described.labels[c], protocol::FieldType::kVarString));
  }
  return columns;
}

std::vector<Row> query_rows(StatementContext& context, const QueryExpr& query) {
  QueryRunner runner(context);
  return runner.run(query, nullptr, SIZE_MAX, nullptr).rows;
}

std::unique_ptr<SubqueryRunner> make_subquery_runner(StatementContext& context) {
  return std::make_unique<QueryRunner>(context);
}

server::StatementResult execute_select(StatementContext& context,
                                       const SelectStatement& statement) {
  QueryRunner runner(context);
  QueryResult query = runner.run(*statement.query, nullptr, SIZE_MAX, nullptr);
  context.finish();
  return result_set(query.labels, query.table_columns, nullptr, query.rows);
}

DerivedRows describe_derived(StatementContext& context, const QueryExpr& query) {
  QueryResult described = describe_query(context, query);
  return DerivedRows{std::move(described.labels), {}, std::move(described.table_columns)};
}

}  // namespace duo::sql::executor
