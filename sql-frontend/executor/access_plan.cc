// Key lookups and filter pushdown; see access_plan.h.
#include "sql-frontend/executor/access_plan.h"

#include <set>

#include "sql-frontend/catalog/sql_exception.h"
#include "storage/scan/filter.h"

namespace duo::sql::executor {

namespace {

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
  *column = resolve_column(left->as<ColumnExpr>(), table, "where clause");
  *constant = right;
  return true;
}

// The storage encoding of `value` for a key or filter on `column`, when it converts
// exactly (same class of value); false otherwise.
bool exact_encoding(const catalog::SqlColumn& column, const SqlValue& value, std::string* out) {
  const storage::ColumnType type = column.storage.type;
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
    const uint16_t column = resolve_column(is.operand->as<ColumnExpr>(), table, "where clause");
    nodes->push_back(is.negated ? builder->is_not_null(column) : builder->is_null(column));
    return true;
  }
  if (conjunct.kind == ExprKind::kLike) {
    const auto& like = conjunct.as<LikeExpr>();
    if (like.negated || like.escape || like.operand->kind != ExprKind::kColumn ||
        !is_constant(*like.pattern)) {
      return false;
    }
    const uint16_t column = resolve_column(like.operand->as<ColumnExpr>(), table, "where clause");
    const storage::ColumnType type = table.columns[column].storage.type;
    if (type != storage::ColumnType::kChar && type != storage::ColumnType::kVarchar &&
        type != storage::ColumnType::kText) {
      return false;
    }
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
  if (!exact_encoding(table.columns[column], evaluate(*constant, context), &encoded)) return false;
  nodes->push_back(builder->cmp(column, cmp_of(binary.op, flipped), encoded));
  return true;
}

}  // namespace

AccessPlan plan_access(const catalog::SqlTable& table, const Expr* where,
                       const EvalContext& context) {
  AccessPlan plan;
  std::vector<const Expr*> conjuncts;
  split_conjuncts(where, &conjuncts);

  // Key lookup: every primary-key column fixed by `=` or `IN`.
  const std::vector<uint16_t>& key_columns = table.primary_key().columns;
  std::vector<std::vector<std::string>> choices(key_columns.size());
  std::vector<bool> fixed(key_columns.size(), false);
  std::vector<bool> used(conjuncts.size(), false);
  bool impossible = false;  // a key column compared with NULL: no row matches
  for (size_t c = 0; c < conjuncts.size(); ++c) {
    const Expr& e = *conjuncts[c];
    uint16_t column = 0;
    std::vector<const Expr*> values;
    if (e.kind == ExprKind::kBinary && e.as<BinaryExpr>().op == BinaryOp::kEq) {
      const Expr* constant = nullptr;
      bool flipped = false;
      if (!column_vs_constant(e.as<BinaryExpr>(), table, &column, &constant, &flipped)) continue;
      values.push_back(constant);
    } else if (e.kind == ExprKind::kInList && !e.as<InListExpr>().negated &&
               e.as<InListExpr>().operand->kind == ExprKind::kColumn) {
      bool all_constant = true;
      for (const ExprPtr& item : e.as<InListExpr>().list) all_constant &= is_constant(*item);
      if (!all_constant) continue;
      column = resolve_column(e.as<InListExpr>().operand->as<ColumnExpr>(), table, "where clause");
      for (const ExprPtr& item : e.as<InListExpr>().list) values.push_back(item.get());
    } else {
      continue;
    }
    size_t k = 0;
    while (k < key_columns.size() && key_columns[k] != column) ++k;
    if (k == key_columns.size() || fixed[k]) continue;
    std::vector<std::string> encoded;
    bool exact = true;
    for (const Expr* value : values) {
      SqlValue v = evaluate(*value, context);
      if (v.is_null()) continue;  // `= NULL` never matches
      std::string bytes;
      if (!exact_encoding(table.columns[column], v, &bytes)) {
        exact = false;
        break;
      }
      encoded.push_back(std::move(bytes));
    }
    if (!exact) continue;
    if (encoded.empty()) impossible = true;
    fixed[k] = true;
    used[c] = true;
    choices[k] = std::move(encoded);
  }
  bool all_fixed = true;
  size_t combinations = 1;
  for (size_t k = 0; k < key_columns.size(); ++k) {
    all_fixed &= fixed[k];
    combinations *= std::max<size_t>(1, choices[k].size());
  }
  if (all_fixed && combinations <= kKeyLookupsMax) {
    plan.kind = AccessPlan::Kind::kKeyLookup;
    if (!impossible) {
      std::set<std::vector<std::string>> seen;
      std::vector<size_t> index(key_columns.size(), 0);
      for (size_t n = 0; n < combinations; ++n) {
        std::vector<std::string> key;
        size_t rest = n;
        for (size_t k = 0; k < key_columns.size(); ++k) {
          key.push_back(choices[k][rest % choices[k].size()]);
          rest /= choices[k].size();
        }
        // Case-insensitive keys that differ only in case are the same row: the data node
        // returns it once per lookup, so identical encodings are what we deduplicate.
        if (!seen.insert(key).second) continue;
        storage::AttrValues values;
        for (size_t k = 0; k < key_columns.size(); ++k) values.add(key_columns[k], key[k]);
        plan.keys.push_back(std::move(values));
      }
    }
    for (size_t c = 0; c < conjuncts.size(); ++c) {
      if (!used[c]) plan.residual.push_back(conjuncts[c]);
    }
    return plan;
  }

  plan.kind = AccessPlan::Kind::kScan;
  storage::FilterBuilder builder;
  std::vector<storage::FilterBuilder::Node> nodes;
  for (const Expr* conjunct : conjuncts) {
    if (push(*conjunct, table, context, &builder, &nodes)) {
      ++plan.pushed_conjuncts;
    } else {
      plan.residual.push_back(conjunct);
    }
  }
  if (!nodes.empty()) {
    Result<storage::FilterProgram> program = builder.build(builder.and_(nodes));
    if (program.ok()) {
      plan.filter = program->encode();
    } else {
      // Too large or too deep for the filter: evaluate everything in sqld instead.
      plan.pushed_conjuncts = 0;
      plan.residual = conjuncts;
    }
  }
  return plan;
}

}  // namespace duo::sql::executor
