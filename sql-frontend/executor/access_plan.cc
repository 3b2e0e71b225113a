// Key lookups, index lookups and ranges, and filter pushdown; see access_plan.h.
#include "sql-frontend/executor/access_plan.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "sql-frontend/catalog/sql_exception.h"
#include "storage/scan/filter.h"

namespace duo::sql::executor {

namespace {

// The column `column` names in `table`, or nullopt when it is qualified with another
// table's name (an outer query's column, or an alias): such a conjunct is not planned
// on, only evaluated. An unknown column of this table throws 1054 at once, even when no
// row would be read (as MySQL resolves names before reading).
std::optional<uint16_t> plan_column(const ColumnExpr& column, const catalog::SqlTable& table) {
  if (column.db || column.table) {
    if (column.db && column.db->name != table.db) return std::nullopt;
    if (column.table && column.table->name.size() == table.name.size()) {
      for (size_t i = 0; i < table.name.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(column.table->name[i])) !=
            std::tolower(static_cast<unsigned char>(table.name[i]))) {
          return std::nullopt;
        }
      }
    } else if (column.table) {
      return std::nullopt;
    }
  }
  return resolve_column(column, table, "where clause");
}

// The column and constant of `column = constant` (either side), or false.
bool column_vs_constant(const BinaryExpr& binary, const catalog::SqlTable& table, uint16_t* column,
                        const Expr** constant, bool* flipped) {
  const Expr* left = binary.left.get();
  const Expr* right = binary.right.get();
  *flipped = false;
  if (left->kind != ExprKind::kColumn) {
    std::swap(left, right);
    *flipped = true;
  }
  if (left->kind != ExprKind::kColumn || !is_constant(*right)) return false;
  const std::optional<uint16_t> id = plan_column(left->as<ColumnExpr>(), table);
  if (!id) return false;
  *column = *id;
  *constant = right;
  return true;
}

// The storage encoding of `value` for a key or filter on `column`, when it converts
// exactly (same class of value); false otherwise.
bool exact_encoding(const catalog::SqlColumn& column, const SqlValue& value, std::string* out) {
  const storage::ColumnType type = column.storage.type;
  // A value beyond the row's head is not in the row the data node filters: sqld
  // compares BLOB/TEXT values with parts (and JSON) once it has them whole.
  if (column.blob_part_bytes > 0 || column.is_json) return false;
  const bool integer_value =
      value.kind == SqlValue::Kind::kInt || value.kind == SqlValue::Kind::kUInt;
  if (storage::is_integer(type)) {
    if (!integer_value) return false;
  } else if (type == storage::ColumnType::kChar || type == storage::ColumnType::kVarchar ||
             type == storage::ColumnType::kBinary || type == storage::ColumnType::kVarbinary ||
             type == storage::ColumnType::kText || type == storage::ColumnType::kBlob ||
             type == storage::ColumnType::kDate || type == storage::ColumnType::kDatetime ||
             type == storage::ColumnType::kTimestamp || type == storage::ColumnType::kTime) {
    if (value.kind != SqlValue::Kind::kString) return false;
  } else {
    return false;
  }
  try {
    *out = to_storage(column, value, 1);
  } catch (const SqlException&) {
    return false;  // out of range / too long: the comparison is left to sqld
  }
  // A temporal or binary string that the column would pad or normalise no longer means
  // the same comparison; only accept values that read back as written.
  if (!storage::is_integer(type) && type != storage::ColumnType::kChar &&
      type != storage::ColumnType::kVarchar && type != storage::ColumnType::kText) {
    if (storage::format_value(column.storage, *out) != value.s) return false;
  }
  return true;
}

storage::CmpOp cmp_of(BinaryOp op, bool flipped) {
  switch (op) {
    case BinaryOp::kEq:
      return storage::CmpOp::kEq;
    case BinaryOp::kNe:
      return storage::CmpOp::kNe;
    case BinaryOp::kLt:
      return flipped ? storage::CmpOp::kGt : storage::CmpOp::kLt;
    case BinaryOp::kLe:
      return flipped ? storage::CmpOp::kGe : storage::CmpOp::kLe;
    case BinaryOp::kGt:
      return flipped ? storage::CmpOp::kLt : storage::CmpOp::kGt;
    default:
      return flipped ? storage::CmpOp::kLe : storage::CmpOp::kGe;
  }
}

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::kEq || op == BinaryOp::kNe || op == BinaryOp::kLt || op == BinaryOp::kLe ||
         op == BinaryOp::kGt || op == BinaryOp::kGe;
}

// Adds `conjunct` to the filter when it is pushable.
bool push(const Expr& conjunct, const catalog::SqlTable& table, const EvalContext& context,
          storage::FilterBuilder* builder, std::vector<storage::FilterBuilder::Node>* nodes) {
  if (conjunct.kind == ExprKind::kIs) {
    const auto& is = conjunct.as<IsExpr>();
    if (is.what != IsWhat::kNull || is.operand->kind != ExprKind::kColumn) return false;
    const std::optional<uint16_t> id = plan_column(is.operand->as<ColumnExpr>(), table);
    if (!id) return false;
    const uint16_t column = *id;
    nodes->push_back(is.negated ? builder->is_not_null(column) : builder->is_null(column));
    return true;
  }
  if (conjunct.kind == ExprKind::kLike) {
    const auto& like = conjunct.as<LikeExpr>();
    if (like.negated || like.escape || like.operand->kind != ExprKind::kColumn ||
        !is_constant(*like.pattern)) {
      return false;
    }
    const std::optional<uint16_t> id = plan_column(like.operand->as<ColumnExpr>(), table);
    if (!id) return false;
    const uint16_t column = *id;
    const storage::ColumnType type = table.columns[column].storage.type;
    if (type != storage::ColumnType::kChar && type != storage::ColumnType::kVarchar &&
        type != storage::ColumnType::kText) {
      return false;
    }
    if (table.columns[column].blob_part_bytes > 0) return false;  // see exact_encoding
    const SqlValue pattern = evaluate(*like.pattern, context);
    if (pattern.kind != SqlValue::Kind::kString) return false;
    nodes->push_back(builder->like(column, pattern.s));
    return true;
  }
  if (conjunct.kind != ExprKind::kBinary) return false;
  const auto& binary = conjunct.as<BinaryExpr>();
  if (!is_comparison(binary.op)) return false;
  uint16_t column = 0;
  const Expr* constant = nullptr;
  bool flipped = false;
  if (!column_vs_constant(binary, table, &column, &constant, &flipped)) return false;
  std::string encoded;
  if (!exact_encoding(table.columns[column],
                      evaluate_for_column(*constant, context, table.columns[column]), &encoded)) {
    return false;
  }
  nodes->push_back(builder->cmp(column, cmp_of(binary.op, flipped), encoded));
  return true;
}

// An inclusive or exclusive bound value in storage encoding.
struct Bound {
  std::string value;
  bool inclusive = true;
};

// What the conjuncts (and the fixed columns) say about one column.
struct ColumnFacts {
  // `=` or `IN`: the values, distinct under the column's collation. Empty with
  // has_equality: only NULLs were given, nothing matches.
  bool has_equality = false;
  std::vector<std::string> equal;
  std::optional<size_t> equality_conjunct;  // which conjunct, if not from `fixed`
  std::optional<Bound> low, high;           // the tightest exact range bounds
};

// Adds `bytes` to `values` unless the column's collation finds it equal to one there.
void add_distinct(const catalog::SqlColumn& column, std::string bytes,
                  std::vector<std::string>* values) {
  for (const std::string& v : *values) {
    if (storage::compare_values(column.storage, v, bytes) == 0) return;
  }
  values->push_back(std::move(bytes));
}

// Keeps the tighter of `*current` and `candidate`: for a low bound the greater value
// (exclusive on a tie), for a high bound the smaller.
void tighten(const catalog::SqlColumn& column, Bound candidate, bool is_low,
             std::optional<Bound>* current) {
  if (!*current) {
    *current = std::move(candidate);
    return;
  }
  const int c = storage::compare_values(column.storage, candidate.value, (*current)->value);
  if ((is_low ? c > 0 : c < 0) || (c == 0 && !candidate.inclusive)) *current = std::move(candidate);
}

// Records `column op constant` as a range bound when the constant converts exactly.
void add_range(const catalog::SqlTable& table, uint16_t column, storage::CmpOp op,
               const SqlValue& value, ColumnFacts* facts) {
  if (value.is_null()) return;  // never true: the filter or residual rejects every row
  std::string bytes;
  if (!exact_encoding(table.columns[column], value, &bytes)) return;
  switch (op) {
    case storage::CmpOp::kGt:
    case storage::CmpOp::kGe:
      tighten(table.columns[column], Bound{std::move(bytes), op == storage::CmpOp::kGe}, true,
              &facts->low);
      break;
    case storage::CmpOp::kLt:
    case storage::CmpOp::kLe:
      tighten(table.columns[column], Bound{std::move(bytes), op == storage::CmpOp::kLe}, false,
              &facts->high);
      break;
    default:
      break;
  }
}

// Records the equality `column IN values` unless the column already has one (the later
// conjunct then only filters). False when a value does not convert exactly.
bool add_equality(const catalog::SqlTable& table, uint16_t column,
                  const std::vector<SqlValue>& values, std::optional<size_t> conjunct,
                  ColumnFacts* facts) {
  if (facts->has_equality) return false;
  std::vector<std::string> encoded;
  for (const SqlValue& v : values) {
    if (v.is_null()) continue;  // `= NULL` never matches
    std::string bytes;
    if (!exact_encoding(table.columns[column], v, &bytes)) return false;
    add_distinct(table.columns[column], std::move(bytes), &encoded);
  }
  facts->has_equality = true;
  facts->equal = std::move(encoded);
  facts->equality_conjunct = conjunct;
  return true;
}

// Gathers the facts of every column from the conjuncts and the fixed columns.
std::vector<ColumnFacts> gather_facts(const catalog::SqlTable& table,
                                      const std::vector<const Expr*>& conjuncts,
                                      const EvalContext& context, const FixedColumns& fixed) {
  std::vector<ColumnFacts> facts(table.columns.size());
  for (const auto& [column, value] : fixed) {
    if (column < facts.size()) add_equality(table, column, {value}, std::nullopt, &facts[column]);
  }
  for (size_t c = 0; c < conjuncts.size(); ++c) {
    const Expr& e = *conjuncts[c];
    if (e.kind == ExprKind::kBinary && is_comparison(e.as<BinaryExpr>().op)) {
      const auto& binary = e.as<BinaryExpr>();
      uint16_t column = 0;
      const Expr* constant = nullptr;
      bool flipped = false;
      if (!column_vs_constant(binary, table, &column, &constant, &flipped)) continue;
      const SqlValue value = evaluate_for_column(*constant, context, table.columns[column]);
      if (binary.op == BinaryOp::kEq) {
        add_equality(table, column, {value}, c, &facts[column]);
      } else {
        add_range(table, column, cmp_of(binary.op, flipped), value, &facts[column]);
      }
    } else if (e.kind == ExprKind::kInList && !e.as<InListExpr>().negated &&
               e.as<InListExpr>().operand->kind == ExprKind::kColumn) {
      const auto& in = e.as<InListExpr>();
      bool all_constant = true;
      for (const ExprPtr& item : in.list) all_constant &= is_constant(*item);
      if (!all_constant) continue;
      const std::optional<uint16_t> column = plan_column(in.operand->as<ColumnExpr>(), table);
      if (!column) continue;
      std::vector<SqlValue> values;
      for (const ExprPtr& item : in.list) {
        values.push_back(evaluate_for_column(*item, context, table.columns[*column]));
      }
      add_equality(table, *column, values, c, &facts[*column]);
    } else if (e.kind == ExprKind::kBetween && !e.as<BetweenExpr>().negated &&
               e.as<BetweenExpr>().operand->kind == ExprKind::kColumn &&
               is_constant(*e.as<BetweenExpr>().low) && is_constant(*e.as<BetweenExpr>().high)) {
      const auto& between = e.as<BetweenExpr>();
      const std::optional<uint16_t> id = plan_column(between.operand->as<ColumnExpr>(), table);
      if (!id) continue;
      const uint16_t column = *id;
      add_range(table, column, storage::CmpOp::kGe,
                evaluate_for_column(*between.low, context, table.columns[column]), &facts[column]);
      add_range(table, column, storage::CmpOp::kLe,
                evaluate_for_column(*between.high, context, table.columns[column]), &facts[column]);
    }
  }
  return facts;
}

// Every combination of the equality values of `columns` (in order), or none when a
// column has no value; `*count` receives the number of combinations.
std::vector<std::vector<std::string>> combinations(const std::vector<uint16_t>& columns,
                                                   const std::vector<ColumnFacts>& facts) {
  size_t count = 1;
  for (uint16_t c : columns) count *= facts[c].equal.size();
  std::vector<std::vector<std::string>> out;
  for (size_t n = 0; n < count; ++n) {
    std::vector<std::string> values;
    size_t rest = n;
    for (uint16_t c : columns) {
      values.push_back(facts[c].equal[rest % facts[c].equal.size()]);
      rest /= facts[c].equal.size();
    }
    out.push_back(std::move(values));
  }
  return out;
}

// The conjuncts of a lookup left to evaluate in sqld: all but the equalities that fixed
// `columns` (an equality from `fixed` is the caller's to check).
std::vector<const Expr*> residual_of_lookup(const std::vector<uint16_t>& columns,
                                            const std::vector<ColumnFacts>& facts,
                                            const std::vector<const Expr*>& conjuncts) {
  std::vector<bool> used(conjuncts.size(), false);
  for (uint16_t c : columns) {
    if (facts[c].equality_conjunct) used[*facts[c].equality_conjunct] = true;
  }
  std::vector<const Expr*> residual;
  for (size_t c = 0; c < conjuncts.size(); ++c) {
    if (!used[c]) residual.push_back(conjuncts[c]);
  }
  return residual;
}

// The UNIQUE index whose every column `=`/`IN` fix with the fewest value combinations
// (at most kKeyLookupsMax), the first declared on a tie; -1 when there is none.
int32_t choose_unique_index(const std::vector<storage::IndexDef>& indexes,
                            const std::vector<ColumnFacts>& facts) {
  int32_t best = -1;
  size_t best_count = 0;
  for (size_t i = 0; i < indexes.size(); ++i) {
    const storage::IndexDef& def = indexes[i];
    if (!def.unique || def.columns.empty()) continue;
    bool all_fixed = true;
    size_t count = 1;
    for (uint16_t column : def.columns) {
      // A column the SQL definition does not describe: do not use the index.
      if (column >= facts.size() || !facts[column].has_equality) {
        all_fixed = false;
        break;
      }
      count *= std::max<size_t>(1, facts[column].equal.size());
      if (count > kKeyLookupsMax) {
        all_fixed = false;
        break;
      }
    }
    if (!all_fixed) continue;
    if (best < 0 || count < best_count) {
      best = static_cast<int32_t>(i);
      best_count = count;
    }
  }
  return best;
}

// How good an index is for a scan: the longest equality prefix, then a range on the next
// column. (A fully fixed UNIQUE index was a unique lookup already.)
struct IndexChoice {
  int32_t index = -1;
  size_t equality_columns = 0;
  bool has_range = false;

  bool better_than(const IndexChoice& other) const {
    if (equality_columns != other.equality_columns) {
      return equality_columns > other.equality_columns;
    }
    return has_range && !other.has_range;
  }
};

IndexChoice choose_index(const std::vector<storage::IndexDef>& indexes,
                         const std::vector<ColumnFacts>& facts) {
  IndexChoice best;
  for (size_t i = 0; i < indexes.size(); ++i) {
    const storage::IndexDef& def = indexes[i];
    IndexChoice choice;
    choice.index = static_cast<int32_t>(i);
    size_t ranges = 1;
    bool valid = true;
    while (choice.equality_columns < def.columns.size()) {
      const uint16_t column = def.columns[choice.equality_columns];
      if (column >= facts.size()) {
        valid = false;  // a schema the SQL definition does not describe: do not use it
        break;
      }
      if (!facts[column].has_equality) break;
      const size_t values = std::max<size_t>(1, facts[column].equal.size());
      if (ranges * values > kIndexRangesMax) break;
      ranges *= values;
      ++choice.equality_columns;
    }
    if (!valid) continue;
    if (choice.equality_columns < def.columns.size()) {
      const ColumnFacts& next = facts[def.columns[choice.equality_columns]];
      choice.has_range = next.low.has_value() || next.high.has_value();
    }
    if (choice.equality_columns == 0 && !choice.has_range) continue;
    if (best.index < 0 || choice.better_than(best)) best = choice;
  }
  return best;
}

// The ranges of `choice` over `def`: one per combination of the equality values.
std::vector<IndexRange> index_ranges(const storage::IndexDef& def, const IndexChoice& choice,
                                     const std::vector<ColumnFacts>& facts) {
  const std::vector<uint16_t> prefix(def.columns.begin(),
                                     def.columns.begin() + choice.equality_columns);
  std::vector<IndexRange> ranges;
  for (const std::vector<std::string>& values : combinations(prefix, facts)) {
    IndexRange range;
    for (size_t k = 0; k < prefix.size(); ++k) {
      range.low.add(prefix[k], values[k]);
      range.high.add(prefix[k], values[k]);
    }
    if (choice.has_range) {
      const uint16_t column = def.columns[choice.equality_columns];
      if (facts[column].low) {
        range.low.add(column, facts[column].low->value);
        range.low_inclusive = facts[column].low->inclusive;
      }
      if (facts[column].high) {
        range.high.add(column, facts[column].high->value);
        range.high_inclusive = facts[column].high->inclusive;
      }
    }
    ranges.push_back(std::move(range));
  }
  return ranges;
}

// The filter of a scan: the pushable conjuncts and exact fixed columns; the rest residual.
void plan_filter(const catalog::SqlTable& table, const std::vector<const Expr*>& conjuncts,
                 const EvalContext& context, const FixedColumns& fixed, AccessPlan* plan) {
  storage::FilterBuilder builder;
  std::vector<storage::FilterBuilder::Node> nodes;
  for (const Expr* conjunct : conjuncts) {
    if (push(*conjunct, table, context, &builder, &nodes)) {
      ++plan->pushed_conjuncts;
    } else {
      plan->residual.push_back(conjunct);
    }
  }
  for (const auto& [column, value] : fixed) {
    std::string bytes;
    if (column < table.columns.size() && !value.is_null() &&
        exact_encoding(table.columns[column], value, &bytes)) {
      nodes.push_back(builder.cmp(column, storage::CmpOp::kEq, bytes));
    }
  }
  if (nodes.empty()) return;
  Result<storage::FilterProgram> program = builder.build(builder.and_(nodes));
  if (program.ok()) {
    plan->filter = program->encode();
  } else {
    // Too large or too deep for the filter: evaluate everything in sqld instead.
    program.status().ignore_error();
    plan->pushed_conjuncts = 0;
    plan->residual = conjuncts;
  }
}

}  // namespace

std::optional<uint16_t> planned_column(const ColumnExpr& column, const catalog::SqlTable& table) {
  return plan_column(column, table);
}

bool exact_key_encoding(const catalog::SqlColumn& column, const SqlValue& value, std::string* out) {
  return exact_encoding(column, value, out);
}

AccessPlan plan_access(const catalog::SqlTable& table, const Expr* where,
                       const EvalContext& context,
                       const std::vector<storage::IndexDef>& ordered_indexes,
                       const FixedColumns& fixed) {
  AccessPlan plan;
  std::vector<const Expr*> conjuncts;
  split_conjuncts(where, &conjuncts);
  const std::vector<ColumnFacts> facts = gather_facts(table, conjuncts, context, fixed);

  // Key lookup: every primary-key column fixed by `=` or `IN`.
  const std::vector<uint16_t>& key_columns = table.primary_key().columns;
  bool all_fixed = true;
  size_t key_count = 1;
  for (uint16_t c : key_columns) {
    all_fixed &= facts[c].has_equality;
    key_count *= std::max<size_t>(1, facts[c].equal.size());
  }
  if (all_fixed && key_count <= kKeyLookupsMax) {
    plan.kind = AccessPlan::Kind::kKeyLookup;
    // Values are distinct per column, so the combinations are distinct keys.
    for (const std::vector<std::string>& key : combinations(key_columns, facts)) {
      storage::AttrValues values;
      for (size_t k = 0; k < key_columns.size(); ++k) values.add(key_columns[k], key[k]);
      plan.keys.push_back(std::move(values));
    }
    plan.residual = residual_of_lookup(key_columns, facts, conjuncts);
    return plan;
  }

  // Unique-index lookup: every column of a UNIQUE index fixed; the keys are the hidden
  // table's (its column k is the index's column k).
  const int32_t unique = choose_unique_index(ordered_indexes, facts);
  if (unique >= 0) {
    plan.kind = AccessPlan::Kind::kUniqueLookup;
    plan.index = unique;
    const std::vector<uint16_t>& index_columns = ordered_indexes[unique].columns;
    for (const std::vector<std::string>& value : combinations(index_columns, facts)) {
      storage::AttrValues key;
      for (size_t k = 0; k < index_columns.size(); ++k) {
        key.add(static_cast<uint16_t>(k), value[k]);
      }
      plan.keys.push_back(std::move(key));
    }
    plan.residual = residual_of_lookup(index_columns, facts, conjuncts);
    return plan;
  }

  const IndexChoice choice = choose_index(ordered_indexes, facts);
  if (choice.index >= 0) {
    plan.kind = AccessPlan::Kind::kIndexScan;
    plan.index = choice.index;
    plan.equality_columns = choice.equality_columns;
    plan.has_range = choice.has_range;
    plan.ranges = index_ranges(ordered_indexes[choice.index], choice, facts);
  } else {
    plan.kind = AccessPlan::Kind::kScan;
  }
  plan_filter(table, conjuncts, context, fixed, &plan);
  return plan;
}

}  // namespace duo::sql::executor
