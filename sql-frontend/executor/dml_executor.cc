// SELECT, INSERT, UPDATE and DELETE over the cluster, and the transaction plumbing of
// StatementContext; see statement_context.h and access_plan.h.
//
// Every statement touches at most one table. Rows are fetched by the AccessPlan (key
// reads batched in one round trip, or one scan with a pushed filter), the residual
// WHERE is evaluated here, and writes are key operations in the statement's
// transaction: UPDATE/DELETE by scan collect the matching keys first and then update or
// delete them in the same transaction, so the statement commits (or fails) as a whole.
#include <algorithm>
#include <map>

#include "sql-frontend/catalog/auto_increment.h"
#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/access_plan.h"
#include "sql-frontend/executor/column_label.h"
#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/parser/ast_printer.h"

namespace duo::sql::executor {

namespace {

using Row = std::vector<SqlValue>;

// A row of `table` from the values a read or scan returned.
Row to_row(const catalog::SqlTable& table, const storage::AttrValues& values) {
  Row row(table.columns.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const storage::AttrValues::Entry& entry = values.entry(i);
    if (entry.column >= row.size() || entry.is_null) continue;
    row[entry.column] = from_storage(table.columns[entry.column], values.value(i));
  }
  return row;
}

storage::AttrValues key_of(const catalog::SqlTable& table, const Row& row) {
  storage::AttrValues key;
  for (uint16_t column : table.primary_key().columns) {
    key.add(column, to_storage(table.columns[column], row[column], 1));
  }
  return key;
}

// Keys read with a lock per round trip: bounds the operations in flight of one batch.
constexpr size_t kLockedReadBatch = 256;

// Reads `keys` (with `lock`) in batches and calls `visit(row)` for the rows found that
// pass `matches`, until `visit` returns false. Returns false when stopped early.
template <typename Matches, typename Visit>
bool read_keys(StatementContext& context, const catalog::BoundTable& bound,
               const std::vector<storage::AttrValues>& keys, storage::LockMode lock,
               Matches matches, Visit visit) {
  for (size_t begin = 0; begin < keys.size(); begin += kLockedReadBatch) {
    const size_t end = std::min(keys.size(), begin + kLockedReadBatch);
    api::Transaction& tx = context.transaction(bound.table_def.get(), &keys[begin]);
    std::vector<uint32_t> ops;
    for (size_t k = begin; k < end; ++k) {
      ops.push_back(check(
          tx.read(*bound.table_def, keys[k], {}, lock, api::OpOptions{.ignore_error = true})));
    }
    context.execute(false);
    for (uint32_t op : ops) {
      api::OpResult result = check(tx.result(op));
      if (result.status.is(ErrorCode::kNotFound)) continue;  // deleted meanwhile
      check(result.status);
      Row row = to_row(bound.sql, result.values);
      if (matches(row) && !visit(row)) return false;
    }
  }
  return true;
}

// Calls `visit(row)` for every row of `where`, until it returns false. With a lock
// (UPDATE, DELETE, SELECT ... FOR UPDATE / LOCK IN SHARE MODE) every row is read by key
// with that lock in the statement's transaction and the whole WHERE is evaluated again
// on the locked row: a scan reads committed rows without locks, so a row changed after
// the scan saw it must be judged by its current version (what NDB does with its scan
// lock takeover).
template <typename Visit>
void for_each_row(StatementContext& context, const catalog::BoundTable& bound, const Expr* where,
                  storage::LockMode lock, Visit visit) {
  const catalog::SqlTable& table = bound.sql;
  const EvalContext constants = context.eval(&table);
  const AccessPlan plan = plan_access(table, where, constants);
  auto passes_residual = [&](const Row& row) {
    EvalContext eval = context.eval(&table, &row);
    eval.clause = "where clause";
    for (const Expr* conjunct : plan.residual) {
      if (!passes(conjunct, eval)) return false;
    }
    return true;
  };
  if (plan.kind == AccessPlan::Kind::kKeyLookup) {
    read_keys(context, bound, plan.keys, lock, passes_residual, visit);
    return;
  }
  api::Transaction& tx = context.transaction();
  api::ScanSpec spec;
  spec.filter = plan.filter;
  auto cursor = check(tx.scan(*bound.table_def, spec));
  storage::AttrValues values;
  std::vector<storage::AttrValues> keys;  // locked reads: the candidates
  while (check(cursor->next(&values))) {
    if (context.session.killed != nullptr && context.session.killed->load()) {
      throw SqlException(1317, "70100", "Query execution was interrupted");
    }
    Row row = to_row(table, values);
    if (!passes_residual(row)) continue;
    if (lock == storage::LockMode::kCommittedRead) {
      if (!visit(row)) return;
      continue;
    }
    if (keys.size() >= kStatementRowsMax) {
      throw SqlException(1038, "HY001",
                         "Out of sort memory, consider increasing server sort buffer size");
    }
    keys.push_back(key_of(table, row));
  }
  cursor.reset();
  if (keys.empty()) return;
  auto passes_where = [&](const Row& row) {
    EvalContext eval = context.eval(&table, &row);
    eval.clause = "where clause";
    return passes(where, eval);
  };
  read_keys(context, bound, keys, lock, passes_where, visit);
}

uint64_t limit_value(const Expr* expr, const StatementContext& context) {
  if (expr == nullptr) return 0;
  SqlValue v = evaluate(*expr, context.eval());
  if (v.is_null() || (v.kind == SqlValue::Kind::kInt && v.i < 0)) {
    throw SqlException(1210, "HY000", "Incorrect arguments to LIMIT");
  }
  return v.kind == SqlValue::Kind::kUInt ? v.u : static_cast<uint64_t>(v.to_int());
}

bool is_aggregate(const Expr& expr) {
  if (expr.kind != ExprKind::kFunction) return false;
  const std::string& name = expr.as<FunctionExpr>().name;
  return name == "COUNT" || name == "MIN" || name == "MAX";
}

protocol::FieldType infer_type(const std::vector<Row>& rows, size_t column) {
  protocol::FieldType type = protocol::FieldType::kNull;
  for (const Row& row : rows) {
    switch (row[column].kind) {
      case SqlValue::Kind::kNull:
        continue;
      case SqlValue::Kind::kInt:
      case SqlValue::Kind::kUInt:
        if (type == protocol::FieldType::kNull) type = protocol::FieldType::kLongLong;
        break;
      case SqlValue::Kind::kDouble:
        if (type != protocol::FieldType::kVarString) type = protocol::FieldType::kDouble;
        break;
      case SqlValue::Kind::kDecimal:
        if (type == protocol::FieldType::kNull || type == protocol::FieldType::kLongLong) {
          type = protocol::FieldType::kNewDecimal;
        }
        break;
      case SqlValue::Kind::kString:
        type = protocol::FieldType::kVarString;
        break;
    }
  }
  return type;
}

// One output column of a SELECT: a table column (typed from the table) or an expression.
struct OutputColumn {
  const Expr* expr = nullptr;  // null for a column of `*`
  int table_column = -1;       // set for `*` columns and plain column references
  std::string label;
  bool aggregate = false;
};

[[noreturn]] void too_many_rows() {
  throw SqlException(1038, "HY001",
                     "Out of sort memory, consider increasing server sort buffer size");
}

}  // namespace

server::ColumnDefinition41 table_column_definition(const catalog::SqlTable& table, uint16_t column,
                                                   const std::string& label) {
  const catalog::SqlColumn& c = table.columns[column];
  server::ColumnDefinition41 def;
  def.schema = table.db;
  def.table = table.name;
  def.org_table = table.name;
  def.name = label;
  def.org_name = c.name;
  def.type = catalog::field_type(c);
  def.flags = catalog::column_flags(table, column);
  def.column_length = catalog::display_length(c);
  if (c.storage.collation == storage::Collation::kBinary) def.character_set = 63;
  if (c.storage.type == storage::ColumnType::kChar ||
      c.storage.type == storage::ColumnType::kVarchar) {
    def.column_length = c.char_length * 4;
  }
  def.decimals = c.storage.type == storage::ColumnType::kDecimal ? c.storage.scale
                 : (c.storage.type == storage::ColumnType::kFloat ||
                    c.storage.type == storage::ColumnType::kDouble)
                     ? 31
                     : c.storage.scale;
  return def;
}

server::ColumnDefinition41 computed_column_definition(const std::string& label,
                                                      protocol::FieldType type) {
  server::ColumnDefinition41 def;
  def.name = label;
  def.type = type;
  switch (type) {
    case protocol::FieldType::kLongLong:
      def.column_length = 21;
      def.character_set = 63;
      def.flags = protocol::kNumFlag | protocol::kBinaryFlag;
      break;
    case protocol::FieldType::kDouble:
      def.column_length = 22;
      def.decimals = 31;
      def.character_set = 63;
      def.flags = protocol::kNumFlag | protocol::kBinaryFlag;
      break;
    case protocol::FieldType::kNewDecimal:
      def.column_length = 67;
      def.decimals = 30;
      def.character_set = 63;
      def.flags = protocol::kNumFlag | protocol::kBinaryFlag;
      break;
    case protocol::FieldType::kNull:
      def.character_set = 63;
      def.flags = protocol::kBinaryFlag;
      break;
    default:
      def.column_length = 1024;
      break;
  }
  return def;
}

api::Transaction& StatementContext::transaction(const ::duo::protocol::TableDef* hint,
                                                const storage::AttrValues* hint_key) {
  if (open_transaction != nullptr) {
    if (!*open_transaction) *open_transaction = check(api_session.begin(hint, hint_key));
    return **open_transaction;
  }
  if (!own_) own_ = check(api_session.begin(hint, hint_key));
  return *own_;
}

void StatementContext::execute(bool last) {
  api::Transaction& tx = transaction();
  const bool commit = last && open_transaction == nullptr && autocommit_statement;
  check(tx.execute(commit ? api::ExecType::kCommit : api::ExecType::kNoCommit));
  if (commit) committed_ = true;
}

void StatementContext::finish() {
  if (own_ && !committed_) {
    check(own_->execute(api::ExecType::kCommit));
    committed_ = true;
  }
}

const std::string& StatementContext::current_database() const {
  if (session.database.empty()) throw_no_database_selected();
  return session.database;
}

std::string StatementContext::database_of(const ObjectName& name) const {
  if (name.db) return name.db->name;
  return current_database();
}

namespace {

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
      if (source.size() >= kStatementRowsMax) too_many_rows();
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

namespace {

// The first AUTO_INCREMENT value of a table whose counter does not exist yet: MAX(column)
// + 1, by a scan in a transaction of its own (rows inserted with explicit values count).
uint64_t auto_increment_seed(StatementContext& context, const catalog::BoundTable& bound,
                             uint16_t column) {
  uint64_t max_value = 0;
  auto tx = check(context.api_session.begin());
  api::ScanSpec spec;
  spec.columns = {column};
  auto cursor = check(tx->scan(*bound.table_def, spec));
  storage::AttrValues values;
  while (check(cursor->next(&values))) {
    if (values.size() == 0 || values.entry(0).is_null) continue;
    SqlValue v = from_storage(bound.sql.columns[column], values.value(0));
    const uint64_t u =
        v.kind == SqlValue::Kind::kUInt ? v.u : static_cast<uint64_t>(std::max<int64_t>(0, v.i));
    max_value = std::max(max_value, u);
  }
  cursor.reset();
  check(tx->execute(api::ExecType::kCommit));
  return max_value + 1;
}

bool needs_generated_value(const std::optional<SqlValue>& value) {
  return !value || value->is_null() || (value->kind == SqlValue::Kind::kInt && value->i == 0) ||
         (value->kind == SqlValue::Kind::kUInt && value->u == 0);
}

}  // namespace

server::StatementResult execute_insert(StatementContext& context,
                                       const InsertStatement& statement) {
  if (statement.select) throw_not_supported("INSERT ... SELECT");
  if (!statement.on_duplicate.empty()) throw_not_supported("ON DUPLICATE KEY UPDATE");
  if (statement.ignore) throw_not_supported("INSERT IGNORE");
  const std::string db = context.database_of(statement.table);
  if (!context.catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
  const catalog::BoundTable bound = context.catalog.get_table(db, statement.table.name.name);
  const catalog::SqlTable& table = bound.sql;

  // Target columns, and the value expressions of each row.
  std::vector<uint16_t> targets;
  std::vector<std::vector<const Expr*>> rows;
  if (!statement.set.empty()) {
    rows.emplace_back();
    for (const Assignment& a : statement.set) {
      targets.push_back(resolve_column(*a.column, table, "field list"));
      rows.back().push_back(a.value.get());
    }
  } else {
    if (statement.columns.empty()) {
      for (size_t c = 0; c < table.columns.size(); ++c) targets.push_back(static_cast<uint16_t>(c));
    } else {
      for (const Identifier& id : statement.columns) {
        const int c = table.find_column(id.name);
        if (c < 0) throw_unknown_column(id.name, "field list");
        targets.push_back(static_cast<uint16_t>(c));
      }
    }
    for (size_t r = 0; r < statement.rows.size(); ++r) {
      if (statement.rows[r].size() != targets.size()) {
        throw SqlException(
            1136, "21S01",
            "Column count doesn't match value count at row " + std::to_string(r + 1));
      }
      std::vector<const Expr*> exprs;
      for (const ExprPtr& e : statement.rows[r]) exprs.push_back(e.get());
      rows.push_back(std::move(exprs));
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    for (size_t j = i + 1; j < targets.size(); ++j) {
      if (targets[i] == targets[j]) {
        throw SqlException(1110, "42000",
                           "Column '" + table.columns[targets[i]].name + "' specified twice");
      }
    }
  }

  // Evaluate every row first: the AUTO_INCREMENT values are then reserved in one go.
  const EvalContext eval = context.eval();
  std::vector<std::vector<std::optional<SqlValue>>> row_values;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::optional<SqlValue>> values(table.columns.size());
    for (size_t i = 0; i < targets.size(); ++i) {
      const Expr* e = rows[r][i];
      if (e->kind == ExprKind::kDefault) continue;
      values[targets[i]] = evaluate(*e, eval);
    }
    row_values.push_back(std::move(values));
  }
  const int auto_column = table.auto_increment_column();
  uint64_t first_generated = 0;
  uint64_t explicit_max = 0;
  bool any_explicit = false;
  if (auto_column >= 0) {
    uint64_t needed = 0;
    for (const auto& values : row_values) needed += needs_generated_value(values[auto_column]);
    const std::string counter = catalog::cluster_table_name(table.db, table.name);
    if (needed > 0) {
      first_generated = catalog::reserve_auto_increment(
          context.catalog.cluster(), context.api_session, counter, needed, [&]() {
            return auto_increment_seed(context, bound, static_cast<uint16_t>(auto_column));
          });
    }
    uint64_t next = first_generated;
    for (auto& values : row_values) {
      std::optional<SqlValue>& value = values[auto_column];
      if (needs_generated_value(value)) {
        value = SqlValue::of_uint(next++);
      } else if (value->to_double() > 0) {
        any_explicit = true;
        explicit_max =
            std::max<uint64_t>(explicit_max, value->kind == SqlValue::Kind::kUInt
                                                 ? value->u
                                                 : static_cast<uint64_t>(value->to_int()));
      }
    }
  }
  std::vector<storage::AttrValues> encoded_rows;
  for (size_t r = 0; r < row_values.size(); ++r) {
    storage::AttrValues row;
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const catalog::SqlColumn& column = table.columns[c];
      std::optional<SqlValue>& value = row_values[r][c];
      if (!value) {
        if (column.has_default) {
          value =
              column.default_value ? SqlValue::of_string(*column.default_value) : SqlValue::null();
        } else if (column.nullable) {
          value = SqlValue::null();
        } else {
          throw SqlException(1364, "HY000",
                             "Field '" + column.name + "' doesn't have a default value");
        }
      }
      if (value->is_null()) {
        if (!column.nullable) {
          throw SqlException(1048, "23000", "Column '" + column.name + "' cannot be null");
        }
        row.add_null(static_cast<uint16_t>(c));
      } else {
        row.add(static_cast<uint16_t>(c), to_storage(column, *value, r + 1));
      }
    }
    encoded_rows.push_back(std::move(row));
  }
  if (encoded_rows.empty()) return server::OkResult{};
  storage::AttrValues hint_key;
  for (uint16_t c : table.primary_key().columns) {
    const int i = encoded_rows.front().find(c);
    hint_key.add(c, encoded_rows.front().value(i));
  }
  api::Transaction& tx = context.transaction(bound.table_def.get(), &hint_key);
  for (storage::AttrValues& row : encoded_rows) check(tx.insert(*bound.table_def, std::move(row)));
  context.execute(true);
  context.finish();
  if (any_explicit) {
    // Later generated values must not collide with the explicit ones.
    catalog::raise_auto_increment(context.catalog.cluster(), context.api_session,
                                  catalog::cluster_table_name(table.db, table.name), explicit_max);
  }
  server::OkResult ok;
  ok.affected_rows = encoded_rows.size();
  if (first_generated != 0) {
    ok.last_insert_id = first_generated;
    context.last_insert_id = first_generated;
  }
  if (rows.size() > 1) {
    ok.info = "Records: " + std::to_string(rows.size()) + "  Duplicates: 0  Warnings: 0";
  }
  return ok;
}

namespace {

// `SET k = k + n` / `k = k - n` / `k = n + k` on an integer non-key column: the delta.
std::optional<int64_t> increment_of(const Assignment& a, uint16_t column,
                                    const catalog::SqlTable& table, const EvalContext& eval) {
  if (!storage::is_integer(table.columns[column].storage.type) || table.is_key_column(column)) {
    return std::nullopt;
  }
  if (a.value->kind != ExprKind::kBinary) return std::nullopt;
  const auto& binary = a.value->as<BinaryExpr>();
  if (binary.op != BinaryOp::kAdd && binary.op != BinaryOp::kSub) return std::nullopt;
  const Expr* self = binary.left.get();
  const Expr* delta = binary.right.get();
  if (binary.op == BinaryOp::kAdd && self->kind != ExprKind::kColumn) std::swap(self, delta);
  if (self->kind != ExprKind::kColumn || !is_constant(*delta)) return std::nullopt;
  if (resolve_column(self->as<ColumnExpr>(), table, "field list") != column) return std::nullopt;
  SqlValue v = evaluate(*delta, eval);
  if (v.kind != SqlValue::Kind::kInt) return std::nullopt;
  if (binary.op == BinaryOp::kSub) {
    if (v.i == INT64_MIN) return std::nullopt;
    return -v.i;
  }
  return v.i;
}

}  // namespace

server::StatementResult execute_update(StatementContext& context,
                                       const UpdateStatement& statement) {
  if (statement.tables.size() != 1 || statement.tables[0]->kind != TableRefKind::kTable) {
    throw_not_supported("multi-table UPDATE");
  }
  if (!statement.order_by.empty() || statement.limit)
    throw_not_supported("UPDATE ... ORDER BY/LIMIT");
  const ObjectName& name = statement.tables[0]->table;
  const std::string db = context.database_of(name);
  if (!context.catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
  const catalog::BoundTable bound = context.catalog.get_table(db, name.name.name);
  const catalog::SqlTable& table = bound.sql;
  std::vector<uint16_t> targets;
  for (const Assignment& a : statement.set) {
    const uint16_t c = resolve_column(*a.column, table, "field list");
    if (table.is_key_column(c)) throw_not_supported("UPDATE of a primary key column");
    if (std::find(targets.begin(), targets.end(), c) != targets.end()) {
      throw_not_supported("assigning one column twice in UPDATE");
    }
    targets.push_back(c);
  }

  // `UPDATE t SET k = k + 1 WHERE <primary key> = ?`: one interpreted update per key,
  // applied on the data node without reading the row first.
  const EvalContext constants = context.eval(&table);
  const AccessPlan plan = plan_access(table, statement.where.get(), constants);
  if (plan.kind == AccessPlan::Kind::kKeyLookup && plan.residual.empty()) {
    storage::InterpretedUpdate program;
    bool interpretable = true;
    for (size_t i = 0; i < targets.size() && interpretable; ++i) {
      std::optional<int64_t> delta = increment_of(statement.set[i], targets[i], table, constants);
      if (!delta)
        interpretable = false;
      else
        program.add(targets[i], *delta);
    }
    if (interpretable) {
      if (plan.keys.empty()) {
        context.finish();
        return server::OkResult{0, 0, 0, "Rows matched: 0  Changed: 0  Warnings: 0"};
      }
      api::Transaction& tx = context.transaction(bound.table_def.get(), &plan.keys.front());
      std::vector<uint32_t> ops;
      for (const storage::AttrValues& key : plan.keys) {
        ops.push_back(check(tx.interpreted_update(*bound.table_def, key, program,
                                                  api::OpOptions{.ignore_error = true})));
      }
      context.execute(false);
      uint64_t changed = 0;
      for (uint32_t op : ops) {
        api::OpResult result = check(tx.result(op));
        if (result.status.is(ErrorCode::kNotFound)) continue;
        check(result.status);
        if (!result.filtered) ++changed;
      }
      context.finish();
      const std::string n = std::to_string(changed);
      return server::OkResult{changed, 0, 0,
                              "Rows matched: " + n + "  Changed: " + n + "  Warnings: 0"};
    }
  }

  // General case: read the matching rows, compute the new values here, update by key.
  struct Change {
    storage::AttrValues key;
    storage::AttrValues values;
  };
  std::vector<Change> changes;
  uint64_t matched = 0;
  for_each_row(context, bound, statement.where.get(), storage::LockMode::kExclusive, [&](Row& row) {
    ++matched;
    if (changes.size() >= kStatementRowsMax) too_many_rows();
    EvalContext eval = context.eval(&table, &row);
    Change change;
    bool differs = false;
    for (size_t i = 0; i < targets.size(); ++i) {
      const catalog::SqlColumn& column = table.columns[targets[i]];
      SqlValue v;
      if (statement.set[i].value->kind == ExprKind::kDefault) {
        v = column.has_default && column.default_value ? SqlValue::of_string(*column.default_value)
                                                       : SqlValue::null();
      } else {
        v = evaluate(*statement.set[i].value, eval);
      }
      if (v.is_null()) {
        if (!column.nullable) {
          throw SqlException(1048, "23000", "Column '" + column.name + "' cannot be null");
        }
        differs |= !row[targets[i]].is_null();
        change.values.add_null(targets[i]);
      } else {
        std::string bytes = to_storage(column, v, matched);
        differs |= row[targets[i]].is_null() ||
                   storage::compare_values(column.storage, bytes,
                                           to_storage(column, row[targets[i]], matched)) != 0 ||
                   from_storage(column, bytes).to_text() != row[targets[i]].to_text();
        change.values.add(targets[i], bytes);
      }
    }
    if (differs) {
      change.key = key_of(table, row);
      changes.push_back(std::move(change));
    }
    return true;
  });
  if (!changes.empty()) {
    api::Transaction& tx = context.transaction();
    for (Change& change : changes) {
      check(tx.update(*bound.table_def, std::move(change.key), std::move(change.values)));
    }
    context.execute(true);
  }
  context.finish();
  return server::OkResult{changes.size(), 0, 0,
                          "Rows matched: " + std::to_string(matched) +
                              "  Changed: " + std::to_string(changes.size()) + "  Warnings: 0"};
}

server::StatementResult execute_delete(StatementContext& context,
                                       const DeleteStatement& statement) {
  if (!statement.order_by.empty() || statement.limit)
    throw_not_supported("DELETE ... ORDER BY/LIMIT");
  const std::string db = context.database_of(statement.table);
  if (!context.catalog.database_exists(context.api_session, db)) throw_unknown_database(db);
  const catalog::BoundTable bound = context.catalog.get_table(db, statement.table.name.name);
  const catalog::SqlTable& table = bound.sql;

  const AccessPlan plan = plan_access(table, statement.where.get(), context.eval(&table));
  if (plan.kind == AccessPlan::Kind::kKeyLookup && plan.residual.empty()) {
    // By key: delete directly; a missing row is not an error, just not counted.
    if (plan.keys.empty()) {
      context.finish();
      return server::OkResult{};
    }
    api::Transaction& tx = context.transaction(bound.table_def.get(), &plan.keys.front());
    std::vector<uint32_t> ops;
    for (const storage::AttrValues& key : plan.keys) {
      ops.push_back(check(tx.remove(*bound.table_def, key, api::OpOptions{.ignore_error = true})));
    }
    context.execute(false);
    uint64_t deleted = 0;
    for (uint32_t op : ops) {
      api::OpResult result = check(tx.result(op));
      if (result.status.is(ErrorCode::kNotFound)) continue;
      check(result.status);
      ++deleted;
    }
    context.finish();
    return server::OkResult{deleted, 0, 0, ""};
  }
  std::vector<storage::AttrValues> keys;
  for_each_row(context, bound, statement.where.get(), storage::LockMode::kExclusive, [&](Row& row) {
    if (keys.size() >= kStatementRowsMax) too_many_rows();
    keys.push_back(key_of(table, row));
    return true;
  });
  if (!keys.empty()) {
    api::Transaction& tx = context.transaction();
    for (storage::AttrValues& key : keys) check(tx.remove(*bound.table_def, std::move(key)));
    context.execute(true);
  }
  context.finish();
  return server::OkResult{keys.size(), 0, 0, ""};
}

}  // namespace duo::sql::executor
