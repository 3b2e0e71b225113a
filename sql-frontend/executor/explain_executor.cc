// EXPLAIN and ANALYZE / OPTIMIZE / CHECK TABLE; see explain_executor.h.
#include "sql-frontend/executor/explain_executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/access_plan.h"
#include "sql-frontend/executor/admin_statements.h"
#include "sql-frontend/executor/row_source.h"
#include "sql-frontend/executor/select_binding.h"
#include "sql-frontend/executor/select_executor.h"
#include "sql-frontend/executor/sql_value.h"
#include "sql-frontend/executor/view_text.h"
#include "sql-frontend/parser/ast_printer.h"

namespace duo::sql::executor {

namespace {

// --- row counts (ANALYZE TABLE's, else counted once per table version)

struct TableStatistics {
  api::TablePtr table_def;  // the version they were taken of
  uint64_t rows = 0;
  std::map<std::string, uint64_t> cardinality;  // per index name
};

std::mutex g_statistics_mutex;
std::map<std::string, TableStatistics>& statistics_by_table() {
  static std::map<std::string, TableStatistics> statistics;  // GUARDED_BY(g_statistics_mutex)
  return statistics;
}

std::string statistics_key(const catalog::BoundTable& bound) {
  return bound.table_def->schema.name;
}

// Every row of `bound` (all columns).
std::vector<Row> all_rows(StatementContext& context, const catalog::BoundTable& bound) {
  std::vector<Row> rows;
  for_each_row(context, bound, nullptr, storage::LockMode::kCommittedRead, [&](Row& row) {
    if (rows.size() >= kStatementRowsMax) throw_too_many_rows();
    rows.push_back(std::move(row));
    return true;
  });
  return rows;
}

TableStatistics collect_statistics(StatementContext& context, const catalog::BoundTable& bound) {
  const std::vector<Row> rows = all_rows(context, bound);
  TableStatistics stats;
  stats.table_def = bound.table_def;
  stats.rows = rows.size();
  for (const catalog::SqlIndex& index : bound.sql.indexes) {
    std::set<std::string> distinct;
    for (const Row& row : rows) {
      std::string key;
      for (uint16_t c : index.columns) key += (row[c].is_null() ? "\\N" : row[c].to_text()) + '\0';
      distinct.insert(std::move(key));
    }
    stats.cardinality[index.name] = distinct.size();
  }
  std::lock_guard lock(g_statistics_mutex);
  statistics_by_table()[statistics_key(bound)] = stats;
  return stats;
}

uint64_t table_rows(StatementContext& context, const catalog::BoundTable& bound) {
  {
    std::lock_guard lock(g_statistics_mutex);
    auto it = statistics_by_table().find(statistics_key(bound));
    if (it != statistics_by_table().end() && it->second.table_def == bound.table_def) {
      return it->second.rows;
    }
  }
  return collect_statistics(context, bound).rows;
}

// --- one table's line of the plan

struct TablePlan {
  std::string table;
  std::string partitions;
  std::string type;
  std::string key;  // empty: NULL
  uint64_t key_len = 0;
  std::string ref;  // empty: NULL
  uint64_t rows = 0;
  std::vector<std::string> extra;
  std::string pushed;    // the pushed condition's text, if any
  std::string attached;  // the conditions checked in sqld, if any
  std::string tree;      // FORMAT=TREE's access line
  std::vector<std::pair<std::string, std::string>> key_values;  // key column = value
  bool left_join = false;
};


// A value of `column`'s type that encodes exactly as a key: an inner level's join
// equalities fix columns whose values come from outer rows, so planning needs one.
SqlValue sample_key_value(const catalog::SqlColumn& column) {
  if (storage::is_integer(column.storage.type)) return SqlValue::of_int(1);
  switch (column.storage.type) {
    case storage::ColumnType::kDecimal:
      return SqlValue::of_decimal("1");
    case storage::ColumnType::kFloat:
    case storage::ColumnType::kDouble:
      return SqlValue::of_double(1);
    case storage::ColumnType::kDate:
      return SqlValue::of_string("2000-01-01");
    case storage::ColumnType::kTime:
      return SqlValue::of_string("00:00:00");
    case storage::ColumnType::kDatetime:
    case storage::ColumnType::kTimestamp:
      return SqlValue::of_string("2000-01-01 00:00:00");
    default:
      return SqlValue::of_string("1");
  }
}

std::string condition_text(const Expr& condition, const std::string& db,
                           const std::string& table) {
  ViewTextInput input;
  input.tables = {{table, {}}};
  input.column_db = db;
  return canonical_condition(condition, input).value_or(to_sql(condition));
}

std::string conjunction_text(const std::vector<const Expr*>& conjuncts, const std::string& db,
                             const std::string& table) {
  std::string out;
  for (const Expr* c : conjuncts) {
    if (!out.empty()) out += " and ";
    out += condition_text(*c, db, table);
  }
  return conjuncts.size() > 1 ? "(" + out + ")" : out;
}

TablePlan plan_level(StatementContext& context, const BoundSelect& select, size_t index) {
  const JoinLevel& level = select.levels[index];
  const Scope& scope = select.scopes[index];
  TablePlan out;
  out.table = scope.name;
  out.left_join = level.left_join;
  const bool has_local = !level.local.empty() || !level.match.empty() || !level.after.empty();
  if (!level.bound) {
    out.type = "ALL";
    out.rows = level.memory_rows.size();
    out.tree = "Table scan on " + scope.name;
    if (level.pushed != nullptr || has_local) out.extra.push_back("Using where");
    return out;
  }
  const catalog::BoundTable& bound = *level.bound;
  const catalog::SqlTable& table = bound.sql;
  const std::string& db = table.db;
  const uint32_t fragments = bound.table_def->fragment_count;
  for (uint32_t f = 0; f < fragments; ++f) out.partitions += (f ? ",p" : "p") + std::to_string(f);

  FixedColumns fixed;
  std::map<uint16_t, std::string> fixed_refs;  // column -> the outer column it equals
  for (const JoinEquality& equality : level.equalities) {
    fixed.emplace_back(equality.column, sample_key_value(table.columns[equality.column]));
    if (equality.value != nullptr) {
      // An ON's `t1.a = t2.a` names the outer column; anything else is MySQL's "func".
      std::string ref = "func";
      if (equality.value->kind == ExprKind::kColumn) {
        const auto& column = equality.value->as<ColumnExpr>();
        if (column.table) {
          ref = (column.db ? column.db->name : db) + "." + column.table->name + "." +
                column.column.name;
        }
      }
      fixed_refs[equality.column] = ref;
    } else {
      const JoinLevel& from = select.levels[equality.from_scope];
      const Scope& from_scope = select.scopes[equality.from_scope];
      fixed_refs[equality.column] = (from_scope.db.empty() ? "" : from_scope.db + ".") +
                                    from_scope.name + "." +
                                    from.table().columns[equality.from_column].name;
    }
  }
  const AccessPlan plan = plan_access(table, level.pushed, context.eval(&table),
                                      bound.table_def->schema.ordered_indexes, fixed);
  const auto& ordered = bound.table_def->schema.ordered_indexes;
  std::vector<uint16_t> key_columns;
  const auto ref_of = [&](uint16_t column) {
    auto it = fixed_refs.find(column);
    return it != fixed_refs.end() ? it->second : std::string("const");
  };
  const bool join_lookup = !fixed.empty();
  switch (plan.kind) {
    case AccessPlan::Kind::kKeyLookup:
    case AccessPlan::Kind::kUniqueLookup: {
      if (plan.kind == AccessPlan::Kind::kKeyLookup) {
        out.key = "PRIMARY";
        key_columns = table.primary_key().columns;
      } else {
        out.key = ordered[plan.index].name;
        key_columns = ordered[plan.index].columns;
      }
      const size_t keys = plan.keys.size();
      out.type = join_lookup ? "eq_ref" : keys == 1 ? "const" : "range";
      out.rows = join_lookup ? 1 : keys;
      if (out.type != "range") {
        for (uint16_t c : key_columns) {
          if (!out.ref.empty()) out.ref += ",";
          out.ref += ref_of(c);
          out.key_values.emplace_back(table.columns[c].name, ref_of(c));
        }
      }
      out.tree = (out.type == "range" ? "Index range scan on " : "Single-row index lookup on ") +
                 scope.name + " using " + out.key;
      break;
    }
    case AccessPlan::Kind::kIndexScan: {
      const storage::IndexDef& def = ordered[plan.index];
      out.key = def.name == catalog::kPrimaryOrderedIndex ? "PRIMARY" : def.name;
      const size_t used = std::min(def.columns.size(),
                                   plan.equality_columns + (plan.has_range ? 1 : 0));
      key_columns.assign(def.columns.begin(), def.columns.begin() + used);
      const bool ref = !plan.has_range && plan.equality_columns > 0 && plan.ranges.size() <= 1;
      out.type = ref ? "ref" : "range";
      if (ref) {
        for (uint16_t c : key_columns) {
          if (!out.ref.empty()) out.ref += ",";
          out.ref += ref_of(c);
          out.key_values.emplace_back(table.columns[c].name, ref_of(c));
        }
      }
      out.rows = table_rows(context, bound);
      if (ref) {
        // ANALYZE TABLE's distinct keys of the index: rows per key.
        std::lock_guard lock(g_statistics_mutex);
        auto it = statistics_by_table().find(statistics_key(bound));
        if (it != statistics_by_table().end()) {
          auto card = it->second.cardinality.find(out.key);
          if (card != it->second.cardinality.end() && card->second > 0 &&
              used == def.columns.size()) {
            out.rows = std::max<uint64_t>(1, out.rows / card->second);
          }
        }
      }
      out.tree = (ref ? "Index lookup on " : "Index range scan on ") + scope.name + " using " +
                 out.key;
      break;
    }
    case AccessPlan::Kind::kScan:
      out.type = "ALL";
      out.rows = table_rows(context, bound);
      out.tree = "Table scan on " + scope.name;
      break;
  }
  for (uint16_t c : key_columns) {
    out.key_len += storage::column_max_size(table.columns[c].storage) +
                   (table.columns[c].nullable ? 1 : 0);
  }
  if (!out.key_values.empty()) {
    std::string values;
    for (const auto& [column, value] : out.key_values) {
      if (!values.empty()) values += ", ";
      values += column + "=" + value;
    }
    out.tree += " (" + values + ")";
  }
  // What went to the data nodes, and what sqld checks.
  std::vector<const Expr*> conjuncts;
  split_conjuncts(level.pushed, &conjuncts);
  std::vector<const Expr*> pushed;
  for (const Expr* c : conjuncts) {
    if (std::find(plan.residual.begin(), plan.residual.end(), c) == plan.residual.end() &&
        plan.pushed_conjuncts > 0) {
      pushed.push_back(c);
    }
  }
  std::vector<const Expr*> attached = plan.residual;
  for (const std::vector<const Expr*>* more : {&level.local, &level.match, &level.after}) {
    attached.insert(attached.end(), more->begin(), more->end());
  }
  if (!attached.empty()) {
    out.extra.push_back("Using where");
    out.attached = conjunction_text(attached, db, scope.name);
  }
  if (!pushed.empty()) {
    out.pushed = conjunction_text(pushed, db, scope.name);
    out.extra.push_back("Using pushed condition " + out.pushed);
    out.tree += ", with pushed condition: " + out.pushed;
  }
  return out;
}

std::vector<TablePlan> plan_select(StatementContext& context, const SelectStatement& select,
                                   BoundSelect* bound_out) {
  const QueryExpr& query = *select.query;
  if (query.is_union()) throw_not_supported("EXPLAIN of a UNION");
  // Derived tables and views are described, not read: EXPLAIN reads no rows of them.
  const RunDerived describe_only = [&](const QueryExpr& derived) {
    return describe_derived(context, derived);
  };
  *bound_out = bind_select_block(context, *query.select, nullptr, describe_only);
  std::vector<TablePlan> plans;
  for (size_t i = 0; i < bound_out->levels.size(); ++i) {
    plans.push_back(plan_level(context, *bound_out, i));
  }
  return plans;
}

bool same_primary_key(const catalog::SqlTable& table, const Row& a, const Row& b) {
  for (uint16_t c : table.primary_key().columns) {
    if (a[c].is_null() || b[c].is_null() || compare(a[c], b[c]) != 0) return false;
  }
  return true;
}

std::string primary_key_text(const catalog::SqlTable& table, const Row& row) {
  std::string out;
  for (uint16_t c : table.primary_key().columns) out += (out.empty() ? "" : "-") + row[c].to_text();
  return "'" + out + "'";
}

std::string fixed2(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string json_table(const TablePlan& plan, const std::string& indent) {
  std::string out = indent + "\"table\": {\n";
  const std::string in = indent + "  ";
  std::vector<std::string> fields;
  fields.push_back(in + "\"table_name\": " + json_string(plan.table));
  if (!plan.partitions.empty()) {
    std::string parts = in + "\"partitions\": [";
    size_t start = 0;
    bool first = true;
    while (start <= plan.partitions.size()) {
      const size_t comma = plan.partitions.find(',', start);
      const std::string p = plan.partitions.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      parts += (first ? "" : ", ") + json_string(p);
      first = false;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    fields.push_back(parts + "]");
  }
  fields.push_back(in + "\"access_type\": " + json_string(plan.type));
  if (!plan.key.empty()) {
    fields.push_back(in + "\"possible_keys\": [" + json_string(plan.key) + "]");
    fields.push_back(in + "\"key\": " + json_string(plan.key));
    fields.push_back(in + "\"key_length\": " + json_string(std::to_string(plan.key_len)));
  }
  if (!plan.ref.empty()) fields.push_back(in + "\"ref\": [" + json_string(plan.ref) + "]");
  fields.push_back(in + "\"rows_examined_per_scan\": " + std::to_string(plan.rows));
  fields.push_back(in + "\"filtered\": \"100.00\"");
  if (!plan.pushed.empty()) fields.push_back(in + "\"pushed_condition\": " + json_string(plan.pushed));
  if (!plan.attached.empty()) {
    fields.push_back(in + "\"attached_condition\": " + json_string(plan.attached));
  }
  for (size_t i = 0; i < fields.size(); ++i) out += fields[i] + (i + 1 < fields.size() ? ",\n" : "\n");
  return out + indent + "}";
}

std::string json_plan(const std::vector<TablePlan>& plans) {
  std::string out = "{\n  \"query_block\": {\n    \"select_id\": 1,\n";
  if (plans.size() == 1) {
    out += json_table(plans.front(), "    ") + "\n";
  } else if (!plans.empty()) {
    out += "    \"nested_loop\": [\n";
    for (size_t i = 0; i < plans.size(); ++i) {
      out += "      {\n" + json_table(plans[i], "        ") + "\n      }" +
             (i + 1 < plans.size() ? ",\n" : "\n");
    }
    out += "    ]\n";
  } else {
    out += "    \"message\": \"No tables used\"\n";
  }
  return out + "  }\n}";
}

// FORMAT=TREE: the joins as nested loops in join order, each access under its filter.
std::string tree_plan(const std::vector<TablePlan>& plans, const std::string& top_suffix) {
  std::vector<std::string> lines;
  const auto access = [&](const TablePlan& plan, size_t depth) {
    const std::string pad(depth * 4, ' ');
    if (!plan.attached.empty()) {
      lines.push_back(pad + "-> Filter: " + plan.attached);
      lines.push_back(pad + "    -> " + plan.tree);
    } else {
      lines.push_back(pad + "-> " + plan.tree);
    }
  };
  if (plans.empty()) {
    lines.push_back("-> Rows fetched before execution");
  } else {
    // Left-deep: the last table joined is the outermost loop's inner side.
    for (size_t i = plans.size(); i-- > 1;) {
      const size_t depth = plans.size() - 1 - i;
      lines.push_back(std::string(depth * 4, ' ') +
                      (plans[i].left_join ? "-> Nested loop left join" : "-> Nested loop inner join"));
    }
    access(plans.front(), plans.size() - 1);
    for (size_t i = 1; i < plans.size(); ++i) access(plans[i], plans.size() - i);
  }
  lines.front() += top_suffix;
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

}  // namespace

// A single-table UPDATE or DELETE: its one table, planned with its WHERE as the
// executor plans it (a key lookup, else the row source's plan with the ordered indexes).
std::vector<TablePlan> plan_single_table_write(StatementContext& context,
                                               const ObjectName& name, const Expr* where) {
  const std::string db = context.database_of(name);
  BoundSelect single;
  JoinLevel level;
  level.bound = context.catalog.get_table(db, name.name.name);
  level.pushed = where;
  single.levels.push_back(std::move(level));
  Scope scope;
  scope.db = db;
  scope.name = name.name.name;
  single.scopes.push_back(std::move(scope));
  return {plan_level(context, single, 0)};
}

server::StatementResult execute_explain(StatementContext& context,
                                        const ExplainStatement& statement) {
  const std::string format = statement.format.value_or(statement.analyze ? "TREE" : "TRADITIONAL");
  std::string select_type = "SIMPLE";
  std::vector<TablePlan> write_plans;
  switch (statement.statement->kind) {
    case StatementKind::kSelect:
      break;
    case StatementKind::kUpdate: {
      const auto& update = statement.statement->as<UpdateStatement>();
      if (update.join || update.tables.size() != 1 ||
          update.tables.front()->kind != TableRefKind::kTable) {
        throw_not_supported("EXPLAIN of a multi-table UPDATE");
      }
      select_type = "UPDATE";
      write_plans = plan_single_table_write(context, update.tables.front()->table, update.where.get());
      break;
    }
    case StatementKind::kDelete: {
      const auto& del = statement.statement->as<DeleteStatement>();
      if (del.join) throw_not_supported("EXPLAIN of a multi-table DELETE");
      select_type = "DELETE";
      write_plans = plan_single_table_write(context, del.table, del.where.get());
      break;
    }
    default:
      throw_not_supported("EXPLAIN of INSERT or REPLACE");
  }
  if (select_type != "SIMPLE" && (format != "TRADITIONAL" || statement.analyze)) {
    throw_not_supported("EXPLAIN FORMAT=" + format + " of UPDATE or DELETE");
  }
  if (select_type != "SIMPLE") {
    std::vector<TextRow> rows;
    for (const TablePlan& plan : write_plans) {
      std::string extra;
      for (const std::string& e : plan.extra) extra += (extra.empty() ? "" : "; ") + e;
      const auto or_null = [](const std::string& s) -> std::optional<std::string> {
        if (s.empty()) return std::nullopt;
        return s;
      };
      rows.push_back({std::string("1"), select_type, plan.table, or_null(plan.partitions),
                      plan.type, or_null(plan.key), or_null(plan.key),
                      plan.key.empty() ? std::nullopt
                                       : std::optional<std::string>(std::to_string(plan.key_len)),
                      or_null(plan.ref), std::to_string(plan.rows), std::string("100.00"),
                      or_null(extra)});
    }
    return text_result({"id", "select_type", "table", "partitions", "type", "possible_keys",
                        "key", "key_len", "ref", "rows", "filtered", "Extra"},
                       rows);
  }
  const auto& select = statement.statement->as<SelectStatement>();
  if (format != "TRADITIONAL" && format != "TREE" && format != "JSON") {
    throw SqlException(1235, "42000",
                       "This version of DuoDB doesn't yet support 'EXPLAIN FORMAT=" + format + "'");
  }
  if (statement.analyze && format != "TREE") {
    throw SqlException(1235, "42000",
                       "This version of MySQL doesn't yet support 'EXPLAIN ANALYZE with JSON format'");
  }
  BoundSelect bound;
  const std::vector<TablePlan> plans = plan_select(context, select, &bound);
  if (format == "TREE") {
    std::string suffix;
    if (statement.analyze) {
      const auto start = std::chrono::steady_clock::now();
      server::StatementResult result = execute_select(context, select);
      const double ms = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count();
      const auto* rows = std::get_if<server::ResultSet>(&result);
      suffix = "  (actual time=0.000.." + fixed2(ms) +
               " rows=" + std::to_string(rows != nullptr ? rows->rows.size() : 0) + " loops=1)";
    }
    return text_result({"EXPLAIN"}, {{tree_plan(plans, suffix)}});
  }
  if (format == "JSON") return text_result({"EXPLAIN"}, {{json_plan(plans)}});
  std::vector<TextRow> rows;
  for (const TablePlan& plan : plans) {
    std::string extra;
    for (const std::string& e : plan.extra) extra += (extra.empty() ? "" : "; ") + e;
    const auto or_null = [](const std::string& s) -> std::optional<std::string> {
      if (s.empty()) return std::nullopt;
      return s;
    };
    rows.push_back({std::string("1"), std::string("SIMPLE"), plan.table, or_null(plan.partitions),
                    plan.type, or_null(plan.key), or_null(plan.key),
                    plan.key.empty() ? std::nullopt : std::optional<std::string>(std::to_string(plan.key_len)),
                    or_null(plan.ref), std::to_string(plan.rows), std::string("100.00"),
                    or_null(extra)});
  }
  if (plans.empty()) {
    rows.push_back({std::string("1"), std::string("SIMPLE"), std::nullopt, std::nullopt,
                    std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                    std::nullopt, std::nullopt, std::string("No tables used")});
  }
  return text_result({"id", "select_type", "table", "partitions", "type", "possible_keys", "key",
                      "key_len", "ref", "rows", "filtered", "Extra"},
                     rows);
}

server::StatementResult execute_table_maintenance(StatementContext& context,
                                                  const TableMaintenanceStatement& statement) {
  const char* op = statement.operation == TableMaintenance::kAnalyze    ? "analyze"
                   : statement.operation == TableMaintenance::kOptimize ? "optimize"
                                                                        : "check";
  std::vector<TextRow> rows;
  for (const ObjectName& name : statement.tables) {
    const std::string db = context.database_of(name);
    const std::string shown = db + "." + name.name.name;
    const auto row = [&](const std::string& type, const std::string& text) {
      rows.push_back({shown, std::string(op), type, text});
    };
    catalog::BoundTable bound;
    try {
      bound = context.catalog.get_table(db, name.name.name);
    } catch (const SqlException& e) {
      // MySQL reports a missing table in the result, then "Operation failed".
      row("Error", e.what());
      row("error", "Operation failed");
      continue;
    }
    switch (statement.operation) {
      case TableMaintenance::kAnalyze:
        collect_statistics(context, bound);
        row("status", "OK");
        break;
      case TableMaintenance::kOptimize:
        // NDB: nothing to rebuild; the data nodes keep the rows in memory.
        row("status", "OK");
        break;
      case TableMaintenance::kCheck: {
        const std::vector<Row> scanned = all_rows(context, bound);
        // Each row again by its primary key, and by each UNIQUE index's entry.
        std::string problem;
        for (const catalog::SqlIndex& index : bound.sql.indexes) {
          if (index.kind == catalog::SqlIndexKind::kKey) continue;
          std::vector<FixedColumns> sets;
          std::vector<size_t> owners;
          for (size_t r = 0; r < scanned.size(); ++r) {
            FixedColumns fixed;
            bool has_null = false;
            for (uint16_t c : index.columns) {
              has_null = has_null || scanned[r][c].is_null();
              fixed.emplace_back(c, scanned[r][c]);
            }
            if (has_null) continue;  // NULLs have no unique entry
            sets.push_back(std::move(fixed));
            owners.push_back(r);
          }
          std::vector<size_t> found(sets.size(), 0);
          if (!sets.empty()) {
            for_each_row_batched(context, bound, nullptr, storage::LockMode::kCommittedRead, sets,
                                 [&](size_t set, Row& row) {
                                   if (same_primary_key(bound.sql, row, scanned[owners[set]])) {
                                     ++found[set];
                                   }
                                   return true;
                                 });
          }
          for (size_t s = 0; s < sets.size() && problem.empty(); ++s) {
            if (found[s] != 1) {
              problem = "Row with primary key " + primary_key_text(bound.sql, scanned[owners[s]]) +
                        " not found through index '" + index.name + "'";
            }
          }
        }
        if (problem.empty()) {
          row("status", "OK");
        } else {
          row("error", problem);
          row("error", "Corrupt");
        }
        break;
      }
    }
  }
  return text_result({"Table", "Op", "Msg_type", "Msg_text"}, rows);
}

}  // namespace duo::sql::executor
