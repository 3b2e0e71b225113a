// Expression evaluation in sqld; see expression.h.
#include "sql-frontend/executor/expression.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/functions.h"
#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/executor/system_variables.h"
#include "sql-frontend/parser/ascii_case.h"
#include "sql-frontend/parser/ast_printer.h"
#include "storage/row/collation.h"

#ifndef DUO_VERSION
#define DUO_VERSION "0.0.0"
#endif

namespace duo::sql::executor {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

SqlValue of_bool(std::optional<bool> b) {
  if (!b) return SqlValue::null();
  return SqlValue::of_int(*b ? 1 : 0);
}

SqlValue literal_value(const LiteralExpr& literal) {
  switch (literal.literal_kind) {
    case LiteralKind::kNull:
      return SqlValue::null();
    case LiteralKind::kTrue:
      return SqlValue::of_int(1);
    case LiteralKind::kFalse:
      return SqlValue::of_int(0);
    case LiteralKind::kInteger: {
      errno = 0;
      const unsigned long long u = std::strtoull(literal.value.c_str(), nullptr, 10);
      if (errno == ERANGE) return SqlValue::of_decimal(literal.value);
      if (u > static_cast<unsigned long long>(INT64_MAX)) return SqlValue::of_uint(u);
      return SqlValue::of_int(static_cast<int64_t>(u));
    }
    case LiteralKind::kDecimal:
      return SqlValue::of_decimal(literal.value);
    case LiteralKind::kFloat:
      return SqlValue::of_double(std::strtod(literal.value.c_str(), nullptr));
    case LiteralKind::kString:
    case LiteralKind::kHex:
    case LiteralKind::kBit:
      return SqlValue::of_string(literal.value);
  }
  return SqlValue::null();
}

bool is_integer_kind(const SqlValue& v) {
  return v.kind == SqlValue::Kind::kInt || v.kind == SqlValue::Kind::kUInt;
}

[[noreturn]] void overflow(const Expr& expr) {
  throw SqlException(1690, "22003", "BIGINT value is out of range in '" + to_sql(expr) + "'");
}

// x / 0, x DIV 0, x % 0: NULL, with MySQL's warning 1365 (an error in strict INSERT
// and UPDATE).
SqlValue division_by_zero(const EvalContext& context) {
  if (context.statement) context.statement->expression_warning(1365, "Division by 0", "Warning");
  return SqlValue::null();
}

SqlValue arithmetic(BinaryOp op, const SqlValue& a, const SqlValue& b, const Expr& expr,
                    const EvalContext& context) {
  if (a.is_null() || b.is_null()) return SqlValue::null();
  // An ENUM/SET value is its position / bit set here, an integer (MySQL: e + 0).
  if (a.enum_number || b.enum_number) {
    auto number = [](const SqlValue& v) { return v.enum_number ? SqlValue::of_uint(v.u) : v; };
    return arithmetic(op, number(a), number(b), expr, context);
  }
  const bool integers = is_integer_kind(a) && is_integer_kind(b);
  const bool exact = (a.kind == SqlValue::Kind::kDecimal || is_integer_kind(a)) &&
                     (b.kind == SqlValue::Kind::kDecimal || is_integer_kind(b));
  if (integers && (op == BinaryOp::kAdd || op == BinaryOp::kSub || op == BinaryOp::kMul)) {
    const bool unsigned_result = a.kind == SqlValue::Kind::kUInt || b.kind == SqlValue::Kind::kUInt;
    if (!unsigned_result) {
      int64_t r = 0;
      const bool bad = op == BinaryOp::kAdd   ? __builtin_add_overflow(a.i, b.i, &r)
                       : op == BinaryOp::kSub ? __builtin_sub_overflow(a.i, b.i, &r)
                                              : __builtin_mul_overflow(a.i, b.i, &r);
      if (bad) overflow(expr);
      return SqlValue::of_int(r);
    }
    const __int128 x = a.kind == SqlValue::Kind::kUInt ? static_cast<__int128>(a.u) : a.i;
    const __int128 y = b.kind == SqlValue::Kind::kUInt ? static_cast<__int128>(b.u) : b.i;
    const __int128 r = op == BinaryOp::kAdd ? x + y : op == BinaryOp::kSub ? x - y : x * y;
    if (r < 0 || r > static_cast<__int128>(UINT64_MAX)) overflow(expr);
    return SqlValue::of_uint(static_cast<uint64_t>(r));
  }
  if (op == BinaryOp::kIntDiv || (integers && op == BinaryOp::kMod)) {
    const int64_t y = b.to_int();
    if (y == 0) return division_by_zero(context);
    const int64_t x = a.to_int();
    return SqlValue::of_int(op == BinaryOp::kIntDiv ? x / y : x % y);
  }
  const double x = a.to_double(), y = b.to_double();
  double r = 0;
  switch (op) {
    case BinaryOp::kAdd:
      r = x + y;
      break;
    case BinaryOp::kSub:
      r = x - y;
      break;
    case BinaryOp::kMul:
      r = x * y;
      break;
    case BinaryOp::kDiv:
      if (y == 0) return division_by_zero(context);
      r = x / y;
      break;
    case BinaryOp::kMod:
      if (y == 0) return division_by_zero(context);
      r = std::fmod(x, y);
      break;
    default:
      throw_not_supported("operator in '" + to_sql(expr) + "'");
  }
  if (exact) {
    // DECIMAL arithmetic shown with MySQL's scale: division adds 4 digits.
    auto scale_of = [](const SqlValue& v) -> int {
      if (v.kind != SqlValue::Kind::kDecimal) return 0;
      const size_t dot = v.s.find('.');
      return dot == std::string::npos ? 0 : static_cast<int>(v.s.size() - dot - 1);
    };
    int scale = op == BinaryOp::kMul   ? scale_of(a) + scale_of(b)
                : op == BinaryOp::kDiv ? scale_of(a) + 4
                                       : std::max(scale_of(a), scale_of(b));
    char buffer[128];
    std::snprintf(buffer, sizeof(buffer), "%.*f", scale, r);
    return SqlValue::of_decimal(buffer);
  }
  return SqlValue::of_double(r);
}

std::optional<bool> compare_op(BinaryOp op, const SqlValue& a, const SqlValue& b) {
  if (op == BinaryOp::kNullSafeEq) {
    if (a.is_null() || b.is_null()) return a.is_null() && b.is_null();
    return compare(a, b) == 0;
  }
  if (a.is_null() || b.is_null()) return std::nullopt;
  const int c = compare(a, b);
  switch (op) {
    case BinaryOp::kEq:
      return c == 0;
    case BinaryOp::kNe:
      return c != 0;
    case BinaryOp::kLt:
      return c < 0;
    case BinaryOp::kLe:
      return c <= 0;
    case BinaryOp::kGt:
      return c > 0;
    case BinaryOp::kGe:
      return c >= 0;
    default:
      return std::nullopt;
  }
}

const std::vector<std::vector<SqlValue>>& subquery_rows(const QueryExpr& query,
                                                        const EvalContext& context,
                                                        size_t rows_max) {
  if (context.subqueries == nullptr) throw_not_supported("subqueries in this statement");
  return context.subqueries->rows(query, context, rows_max);
}

bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && lower(a) == lower(b);
}

// The column as MySQL names it in 1054/1052: as written, qualifiers included.
std::string written_name(const ColumnExpr& column) {
  std::string name;
  if (column.db) name += column.db->name + ".";
  if (column.table) name += column.table->name + ".";
  return name + column.column.name;
}

// True when `value` reads differently as a YEAR: a number 1..99 or a string of one to
// three digits ('0' is 2000). Only then does a comparison with a YEAR column need the
// column, so the usual comparison does not pay for resolving it.
bool may_be_short_year(const SqlValue& value) {
  switch (value.kind) {
    case SqlValue::Kind::kInt:
      return value.i >= 1 && value.i <= 99;
    case SqlValue::Kind::kUInt:
      return value.u >= 1 && value.u <= 99;
    case SqlValue::Kind::kString:
      return !value.s.empty() && value.s.size() <= 3 &&
             value.s.find_first_not_of("0123456789") == std::string::npos;
    default:
      return false;
  }
}

}  // namespace

std::optional<SqlValue> hex_literal_number(const Expr& expr) {
  if (expr.kind != ExprKind::kLiteral) return std::nullopt;
  const auto& literal = expr.as<LiteralExpr>();
  if (literal.literal_kind != LiteralKind::kHex && literal.literal_kind != LiteralKind::kBit) {
    return std::nullopt;
  }
  if (literal.value.size() > 8) return std::nullopt;
  uint64_t v = 0;
  for (char byte : literal.value) v = (v << 8) | static_cast<unsigned char>(byte);
  return SqlValue::of_uint(v);
}

SqlValue evaluate_for_column(const Expr& expr, const EvalContext& context,
                             const catalog::SqlColumn& column) {
  const storage::ColumnType type = column.storage.type;
  const bool numeric = storage::is_integer(type) || type == storage::ColumnType::kDecimal ||
                       type == storage::ColumnType::kFloat || type == storage::ColumnType::kDouble;
  if (numeric) {
    if (std::optional<SqlValue> number = hex_literal_number(expr)) return std::move(*number);
  }
  SqlValue value = evaluate(expr, context);
  if (column.is_year && may_be_short_year(value)) {
    value = from_storage(column, to_storage(column, value, 1));  // 69 is 2069, as stored
  }
  return value;
}

bool is_aggregate_call(const Expr& expr) {
  if (expr.kind != ExprKind::kFunction) return false;
  const FunctionExpr& f = expr.as<FunctionExpr>();
  if (f.db) return false;
  const std::string& name = f.name;
  return name == "COUNT" || name == "SUM" || name == "AVG" || name == "MIN" || name == "MAX" ||
         name == "GROUP_CONCAT";
}

std::optional<ColumnRef> find_in_scopes(const ColumnExpr& column, const std::vector<Scope>& scopes,
                                        const char* clause) {
  std::optional<ColumnRef> found;
  for (size_t s = 0; s < scopes.size(); ++s) {
    const Scope& scope = scopes[s];
    // Table names and aliases are case-sensitive (lower_case_table_names=0).
    if (column.table && column.table->name != scope.name) continue;
    if (column.db && column.db->name != scope.db) continue;
    if (!column.table && !scope.using_hidden.empty() &&
        std::find(scope.using_hidden.begin(), scope.using_hidden.end(),
                  lower(column.column.name)) != scope.using_hidden.end()) {
      continue;
    }
    const int id = scope.table->find_column(column.column.name);
    if (id < 0) continue;
    if (found) {
      throw SqlException(1052, "23000",
                         "Column '" + written_name(column) + "' in " + clause + " is ambiguous");
    }
    found = ColumnRef{s, static_cast<uint16_t>(id), 0};
  }
  return found;
}

ColumnRef resolve(const ColumnExpr& column, const EvalContext& context) {
  size_t depth = 0;
  for (const EvalContext* c = &context; c != nullptr; c = c->outer, ++depth) {
    std::optional<ColumnRef> found;
    if (c->scopes != nullptr) {
      found = find_in_scopes(column, *c->scopes, context.clause);
    } else if (c->table != nullptr && c->row != nullptr) {
      const bool other_table = column.table && !same_name(column.table->name, c->table->name);
      const int id = other_table ? -1 : c->table->find_column(column.column.name);
      if (id >= 0) found = ColumnRef{0, static_cast<uint16_t>(id), 0};
    }
    if (found) {
      found->depth = depth;
      // Every subquery climbed out of depends on the outer row.
      const EvalContext* climbed = &context;
      for (size_t d = 0; d < depth; ++d, climbed = climbed->outer) {
        if (climbed->outer_referenced != nullptr) *climbed->outer_referenced = true;
      }
      return *found;
    }
  }
  throw_unknown_column(written_name(column), context.clause);
}

std::string server_version() {
  return std::string("8.0.35-DuoDB-") + DUO_VERSION;
}

std::optional<bool> truth(const SqlValue& value) {
  if (value.is_null()) return std::nullopt;
  if (value.kind == SqlValue::Kind::kInt) return value.i != 0;
  if (value.kind == SqlValue::Kind::kUInt) return value.u != 0;
  return value.to_double() != 0;
}

bool passes(const Expr* condition, const EvalContext& context) {
  if (condition == nullptr) return true;
  return truth(evaluate(*condition, context)).value_or(false);
}

uint16_t resolve_column(const ColumnExpr& column, const catalog::SqlTable& table,
                        const char* clause) {
  const bool other_table = column.table && lower(column.table->name) != lower(table.name);
  const int id = other_table ? -1 : table.find_column(column.column.name);
  if (id < 0) {
    std::string name =
        column.table ? column.table->name + "." + column.column.name : column.column.name;
    throw_unknown_column(name, clause);
  }
  return static_cast<uint16_t>(id);
}

bool is_constant(const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::kLiteral:
    case ExprKind::kPlaceholder:
    case ExprKind::kSystemVariable:
      return true;
    case ExprKind::kUnary:
      return is_constant(*expr.as<UnaryExpr>().operand);
    case ExprKind::kBinary:
      return is_constant(*expr.as<BinaryExpr>().left) && is_constant(*expr.as<BinaryExpr>().right);
    default:
      return false;
  }
}

void split_conjuncts(const Expr* condition, std::vector<const Expr*>* out) {
  if (condition == nullptr) return;
  if (condition->kind == ExprKind::kBinary && condition->as<BinaryExpr>().op == BinaryOp::kAnd) {
    split_conjuncts(condition->as<BinaryExpr>().left.get(), out);
    split_conjuncts(condition->as<BinaryExpr>().right.get(), out);
    return;
  }
  out->push_back(condition);
}

bool like_match(std::string_view text, std::string_view pattern, char escape) {
  return storage::like_matches(text, pattern, escape, /*case_insensitive=*/true);
}

namespace {

// @@warning_count and @@error_count: the previous statement's diagnostics (all its
// conditions, or its errors), as MySQL counts them; nullopt for other variables.
std::optional<SqlValue> diagnostics_count(const std::string& variable, const EvalContext& context) {
  const std::string name = lower(variable);
  if (name != "warning_count" && name != "error_count") return std::nullopt;
  const StatementContext* statement = context.statement;
  if (statement == nullptr || statement->previous_diagnostics == nullptr) {
    return SqlValue::of_int(0);
  }
  int64_t count = 0;
  for (const StatementContext::Warning& w : *statement->previous_diagnostics) {
    count += name == "warning_count" || w.level == "Error";
  }
  return SqlValue::of_int(count);
}

// MySQL compares a YEAR column with a constant as a YEAR: the constant is taken as it
// would be stored (WHERE y = 69 finds 2069, y = '5' finds 2005), which is also what the
// key lookups and pushed filters built from it (to_storage) look for.
void as_year_if_compared_with_year(const Expr& column_side, const Expr& constant_side,
                                   const EvalContext& context, SqlValue* constant) {
  if (column_side.kind != ExprKind::kColumn || !may_be_short_year(*constant) ||
      !is_constant(constant_side)) {
    return;
  }
  const catalog::SqlColumn* column = column_of(column_side.as<ColumnExpr>(), context);
  if (column == nullptr || !column->is_year) return;
  *constant = from_storage(*column, to_storage(*column, *constant, 1));  // cannot fail here
}

}  // namespace

const catalog::SqlColumn* column_of(const ColumnExpr& column, const EvalContext& context) {
  if (context.scopes == nullptr && context.outer == nullptr) {
    if (context.table == nullptr) return nullptr;
    return &context.table->columns[resolve_column(column, *context.table, context.clause)];
  }
  const ColumnRef ref = resolve(column, context);
  const EvalContext* owner = &context;
  for (size_t d = 0; d < ref.depth; ++d) owner = owner->outer;
  const catalog::SqlTable* table =
      owner->scopes == nullptr ? owner->table : (*owner->scopes)[ref.scope].table;
  return table == nullptr ? nullptr : &table->columns[ref.column];
}

SqlValue evaluate(const Expr& expr, const EvalContext& context) {
  switch (expr.kind) {
    case ExprKind::kLiteral:
      return literal_value(expr.as<LiteralExpr>());
    case ExprKind::kColumn: {
      const auto& column = expr.as<ColumnExpr>();
      if (context.scopes == nullptr && context.outer == nullptr) {
        // The single-table form (DML, row sources): its hot path stays one lookup.
        if (context.table == nullptr || context.row == nullptr) {
          throw_unknown_column(column.column.name, context.clause);
        }
        return (*context.row)[resolve_column(column, *context.table, context.clause)];
      }
      const ColumnRef ref = resolve(column, context);
      const EvalContext* owner = &context;
      for (size_t d = 0; d < ref.depth; ++d) owner = owner->outer;
      if (owner->scopes == nullptr) return (*owner->row)[ref.column];
      const Scope& scope = (*owner->scopes)[ref.scope];
      return scope.row == nullptr ? SqlValue::null() : (*scope.row)[ref.column];
    }
    case ExprKind::kPlaceholder: {
      const uint32_t index = expr.as<PlaceholderExpr>().index;
      if (context.params == nullptr || index >= context.params->size()) {
        throw SqlException(1210, "HY000", "Incorrect arguments to EXECUTE");
      }
      return (*context.params)[index];
    }
    case ExprKind::kSystemVariable: {
      const std::string& name = expr.as<SystemVariableExpr>().name;
      // warning_count / error_count are SESSION-only: @@global. of them is an error.
      if (expr.as<SystemVariableExpr>().scope != VariableScope::kGlobal) {
        if (std::optional<SqlValue> count = diagnostics_count(name, context)) return *count;
      }
      return system_variable(name, context.session, expr.as<SystemVariableExpr>().scope);
    }
    case ExprKind::kUserVariable: {
      // The connection's value; NULL when never set (MySQL).
      for (const EvalContext* c = &context; c != nullptr; c = c->outer) {
        if (c->statement == nullptr || c->statement->user_variables == nullptr) continue;
        const auto& variables = *c->statement->user_variables;
        auto it = variables.find(ascii_lower(expr.as<UserVariableExpr>().name));
        return it == variables.end() ? SqlValue::null() : it->second;
      }
      return SqlValue::null();
    }
    case ExprKind::kAssignUserVariable: {
      // @x := v: evaluated where it stands, once per row the expression is evaluated
      // for (MySQL's order: select list left to right, WHERE per row examined). The
      // variable lives in the connection; a subquery's context reaches it through
      // `outer`. Without a connection (unit tests) the value is only returned.
      const auto& assign = expr.as<AssignUserVariableExpr>();
      SqlValue value = evaluate(*assign.value, context);
      for (const EvalContext* c = &context; c != nullptr; c = c->outer) {
        if (c->statement == nullptr || c->statement->user_variables == nullptr) continue;
        (*c->statement->user_variables)[ascii_lower(assign.name)] = value;
        break;
      }
      return value;
    }
    case ExprKind::kUnary: {
      const auto& unary = expr.as<UnaryExpr>();
      std::optional<SqlValue> number;
      if (unary.op == UnaryOp::kNegate) number = hex_literal_number(*unary.operand);
      SqlValue v = number ? std::move(*number) : evaluate(*unary.operand, context);
      if (unary.op == UnaryOp::kNot) {
        std::optional<bool> t = truth(v);
        return of_bool(t ? std::optional<bool>(!*t) : std::nullopt);
      }
      if (unary.op == UnaryOp::kNegate) {
        if (v.is_null()) return v;
        if (v.kind == SqlValue::Kind::kInt) {
          if (v.i == INT64_MIN) overflow(expr);
          return SqlValue::of_int(-v.i);
        }
        if (v.kind == SqlValue::Kind::kUInt) {
          if (v.u > static_cast<uint64_t>(INT64_MAX) + 1) overflow(expr);
          return SqlValue::of_int(static_cast<int64_t>(0 - v.u));
        }
        if (v.kind == SqlValue::Kind::kDecimal) {
          return SqlValue::of_decimal(v.s.starts_with("-") ? v.s.substr(1) : "-" + v.s);
        }
        return SqlValue::of_double(-v.to_double());
      }
      throw_not_supported("operator ~");
    }
    case ExprKind::kBinary: {
      const auto& binary = expr.as<BinaryExpr>();
      if (binary.op == BinaryOp::kAnd || binary.op == BinaryOp::kOr ||
          binary.op == BinaryOp::kXor) {
        std::optional<bool> a = truth(evaluate(*binary.left, context));
        if (binary.op == BinaryOp::kAnd && a == false) return of_bool(false);
        if (binary.op == BinaryOp::kOr && a == true) return of_bool(true);
        std::optional<bool> b = truth(evaluate(*binary.right, context));
        if (binary.op == BinaryOp::kAnd) {
          if (b == false) return of_bool(false);
          return of_bool(a && b ? std::optional<bool>(true) : std::nullopt);
        }
        if (binary.op == BinaryOp::kOr) {
          if (b == true) return of_bool(true);
          return of_bool(a && b ? std::optional<bool>(false) : std::nullopt);
        }
        if (!a || !b) return SqlValue::null();
        return of_bool(*a != *b);
      }
      if ((binary.op == BinaryOp::kAdd || binary.op == BinaryOp::kSub) &&
          (binary.left->kind == ExprKind::kInterval || binary.right->kind == ExprKind::kInterval)) {
        return interval_arithmetic(binary, context);  // date +/- INTERVAL n unit
      }
      SqlValue a = evaluate(*binary.left, context);
      SqlValue b = evaluate(*binary.right, context);
      const bool comparison = binary.op == BinaryOp::kEq || binary.op == BinaryOp::kNullSafeEq ||
                              binary.op == BinaryOp::kNe || binary.op == BinaryOp::kLt ||
                              binary.op == BinaryOp::kLe || binary.op == BinaryOp::kGt ||
                              binary.op == BinaryOp::kGe;
      if (!comparison || b.is_numeric()) {
        if (std::optional<SqlValue> n = hex_literal_number(*binary.left)) a = std::move(*n);
      }
      if (!comparison || a.is_numeric()) {
        if (std::optional<SqlValue> n = hex_literal_number(*binary.right)) b = std::move(*n);
      }
      if (comparison) {
        as_year_if_compared_with_year(*binary.left, *binary.right, context, &b);
        as_year_if_compared_with_year(*binary.right, *binary.left, context, &a);
      }
      switch (binary.op) {
        case BinaryOp::kEq:
        case BinaryOp::kNullSafeEq:
        case BinaryOp::kNe:
        case BinaryOp::kLt:
        case BinaryOp::kLe:
        case BinaryOp::kGt:
        case BinaryOp::kGe:
          return of_bool(compare_op(binary.op, a, b));
        default:
          return arithmetic(binary.op, a, b, expr, context);
      }
    }
    case ExprKind::kIs: {
      const auto& is = expr.as<IsExpr>();
      SqlValue v = evaluate(*is.operand, context);
      bool result = false;
      switch (is.what) {
        case IsWhat::kNull:
        case IsWhat::kUnknown:
          result = v.is_null();
          break;
        case IsWhat::kTrue:
          result = truth(v) == true;
          break;
        case IsWhat::kFalse:
          result = truth(v) == false;
          break;
      }
      return of_bool(result != is.negated);
    }
    case ExprKind::kBetween: {
      const auto& between = expr.as<BetweenExpr>();
      SqlValue v = evaluate(*between.operand, context);
      SqlValue low_value = evaluate(*between.low, context);
      SqlValue high_value = evaluate(*between.high, context);
      as_year_if_compared_with_year(*between.operand, *between.low, context, &low_value);
      as_year_if_compared_with_year(*between.operand, *between.high, context, &high_value);
      std::optional<bool> low = compare_op(BinaryOp::kGe, v, low_value);
      std::optional<bool> high = compare_op(BinaryOp::kLe, v, high_value);
      std::optional<bool> result;
      if (low == false || high == false)
        result = false;
      else if (low && high)
        result = true;
      if (result && between.negated) result = !*result;
      return of_bool(result);
    }
    case ExprKind::kInList: {
      const auto& in = expr.as<InListExpr>();
      SqlValue v = evaluate(*in.operand, context);
      std::optional<bool> result = false;
      for (const ExprPtr& item : in.list) {
        SqlValue candidate = evaluate(*item, context);
        as_year_if_compared_with_year(*in.operand, *item, context, &candidate);
        std::optional<bool> eq = compare_op(BinaryOp::kEq, v, candidate);
        if (eq == true) {
          result = true;
          break;
        }
        if (!eq) result = std::nullopt;
      }
      if (result && in.negated) result = !*result;
      return of_bool(result);
    }
    case ExprKind::kLike: {
      const auto& like = expr.as<LikeExpr>();
      SqlValue v = evaluate(*like.operand, context);
      SqlValue p = evaluate(*like.pattern, context);
      if (v.is_null() || p.is_null()) return SqlValue::null();
      char escape = '\\';
      if (like.escape) {
        const std::string e = evaluate(*like.escape, context).to_text();
        escape = e.empty() ? '\\' : e[0];
      }
      return of_bool(like_match(v.to_text(), p.to_text(), escape) != like.negated);
    }
    case ExprKind::kFunction: {
      const auto& function = expr.as<FunctionExpr>();
      if (is_aggregate_call(expr)) {
        if (context.aggregates != nullptr) {
          for (const AggregateValue& aggregate : *context.aggregates) {
            if (aggregate.call == &expr) return aggregate.value;
          }
        }
        throw SqlException(1111, "HY000", "Invalid use of group function");
      }
      return call_function(function, context);
    }
    case ExprKind::kSubquery: {
      const auto& rows = subquery_rows(*expr.as<SubqueryExpr>().query, context, 2);
      if (rows.size() > 1) throw SqlException(1242, "21000", "Subquery returns more than 1 row");
      if (rows.empty()) return SqlValue::null();
      if (rows[0].size() != 1) {
        throw SqlException(1241, "21000", "Operand should contain 1 column(s)");
      }
      return rows[0][0];
    }
    case ExprKind::kExists:
      return of_bool(!subquery_rows(*expr.as<ExistsExpr>().query, context, 1).empty());
    case ExprKind::kInSubquery: {
      const auto& in = expr.as<InSubqueryExpr>();
      const SqlValue v = evaluate(*in.operand, context);
      const auto& rows = subquery_rows(*in.query, context, SIZE_MAX);
      // x IN (empty set) is FALSE even for a NULL x; otherwise NULL x is unknown.
      std::optional<bool> result = false;
      for (const std::vector<SqlValue>& row : rows) {
        if (row.size() != 1) {
          throw SqlException(1241, "21000", "Operand should contain 1 column(s)");
        }
        const std::optional<bool> eq = compare_op(BinaryOp::kEq, v, row[0]);
        if (eq == true) {
          result = true;
          break;
        }
        if (!eq) result = std::nullopt;
      }
      if (result && in.negated) result = !*result;
      return of_bool(result);
    }
    default:
      // CASE, CAST, CONVERT, INTERVAL, EXTRACT, COLLATE, REGEXP: functions.cc.
      return evaluate_special_form(expr, context);
  }
}

}  // namespace duo::sql::executor
