// MySQL's canonical text of a view's query; see view_text.h.
#include "sql-frontend/executor/view_text.h"

#include "sql-frontend/parser/ascii_case.h"

namespace duo::sql::executor {

namespace {

struct Unsupported {};

class CanonicalPrinter {
 public:
  explicit CanonicalPrinter(const ViewTextInput& input) : input_(input) {}

  std::string condition(const Expr& e) { return expr(e); }

  std::string query() {
    if (input_.query->is_union() || !input_.query->order_by.empty() || input_.query->limit) {
      throw Unsupported{};
    }
    const SelectBlock& block = *input_.query->select;
    if (block.with_rollup || block.lock != LockMode::kNone || block.sql_calc_found_rows) {
      throw Unsupported{};
    }
    std::string out = block.distinct ? "select distinct " : "select ";
    out += outputs(block);
    if (!block.from.empty()) {
      out += " from ";
      if (block.from.size() == 1) {
        out += table_ref(*block.from.front(), false);
      } else {
        // MySQL prints a comma list as joins.
        std::string from = table_ref(*block.from.front(), true);
        for (size_t i = 1; i < block.from.size(); ++i) {
          from = from + " join " + table_ref(*block.from[i], true);
        }
        out += from;
      }
    }
    if (block.where) out += " where " + expr(*block.where);
    if (!block.group_by.empty()) {
      out += " group by ";
      for (size_t i = 0; i < block.group_by.size(); ++i) {
        if (i > 0) out += ",";
        out += expr(*block.group_by[i]);
      }
    }
    if (block.having) out += " having " + expr(*block.having);
    if (!block.order_by.empty()) {
      out += " order by ";
      for (size_t i = 0; i < block.order_by.size(); ++i) {
        if (i > 0) out += ",";
        out += expr(*block.order_by[i].expr);
        if (block.order_by[i].descending) out += " desc";
      }
    }
    if (block.limit) {
      if (block.limit->offset) out += " limit " + expr(*block.limit->offset) + "," + expr(*block.limit->count);
      else out += " limit " + expr(*block.limit->count);
    }
    return out;
  }

 private:
  static std::string quoted(const std::string& name) {
    std::string out = "`";
    for (char c : name) {
      out += c;
      if (c == '`') out += '`';
    }
    return out + "`";
  }

  std::string outputs(const SelectBlock& block) {
    bool star = false;
    for (const SelectItem& item : block.items) star = star || item.expr->kind == ExprKind::kStar;
    if (star && block.items.size() != 1) throw Unsupported{};
    const size_t count = std::min(input_.columns.size(), input_.names.size());
    if (!star && count != block.items.size()) throw Unsupported{};
    std::string out;
    for (size_t i = 0; i < count; ++i) {
      if (i > 0) out += ",";
      const protocol::ColumnDefinition41& column = input_.columns[i];
      if (star) {
        out += quoted(column.table) + "." + quoted(column.org_name);
      } else {
        out += expr(*block.items[i].expr);
      }
      out += " AS " + quoted(input_.names[i]);
    }
    return out;
  }

  std::string table_ref(const TableRef& ref, bool nested) {
    switch (ref.kind) {
      case TableRefKind::kTable: {
        if (!ref.index_hints.empty()) throw Unsupported{};
        std::string out;
        if (ref.table.db && ref.table.db->name != input_.view_db) {
          out += quoted(ref.table.db->name) + ".";
        }
        out += quoted(ref.table.name.name);
        if (ref.alias) out += " " + quoted(ref.alias->name);
        return out;
      }
      case TableRefKind::kJoin: {
        if (ref.natural || !ref.using_.empty()) throw Unsupported{};
        const char* word = nullptr;
        switch (ref.join) {
          case JoinKind::kInner:
            word = " join ";
            break;
          case JoinKind::kLeft:
            word = " left join ";
            break;
          default:
            throw Unsupported{};
        }
        std::string out = table_ref(*ref.left, true) + word + table_ref(*ref.right, true);
        if (ref.on) out += " on(" + expr(*ref.on) + ")";
        return nested ? out : "(" + out + ")";
      }
      case TableRefKind::kDerived:
        break;
    }
    throw Unsupported{};
  }

  // The FROM table that has `column` (MySQL qualifies every column).
  std::string qualifier(const ColumnExpr& column) {
    if (column.db) throw Unsupported{};
    if (column.table) return column.table->name;
    if (input_.tables.size() == 1) return input_.tables.front().first;
    const std::string wanted = ascii_lower(column.column.name);
    for (const auto& [name, columns] : input_.tables) {
      for (const std::string& c : columns) {
        if (ascii_lower(c) == wanted) return name;
      }
    }
    throw Unsupported{};
  }

  std::string literal(const LiteralExpr& literal) {
    switch (literal.literal_kind) {
      case LiteralKind::kNull:
        return "NULL";
      case LiteralKind::kTrue:
        return "true";
      case LiteralKind::kFalse:
        return "false";
      case LiteralKind::kInteger:
      case LiteralKind::kDecimal:
      case LiteralKind::kFloat:
        return literal.value;
      case LiteralKind::kString: {
        std::string out =
            input_.column_db.empty()
                ? "_" + literal.charset.value_or(input_.character_set_client) + "'"
                : "'";
        for (char c : literal.value) {
          if (c == '\'') {
            out += "\\'";
          } else if (c == '\\') {
            out += "\\\\";
          } else {
            out += c;
          }
        }
        return out + "'";
      }
      default:
        throw Unsupported{};
    }
  }

  static const char* binary_operator(BinaryOp op) {
    switch (op) {
      case BinaryOp::kOr: return "or";
      case BinaryOp::kXor: return "xor";
      case BinaryOp::kAnd: return "and";
      case BinaryOp::kEq: return "=";
      case BinaryOp::kNullSafeEq: return "<=>";
      case BinaryOp::kNe: return "<>";
      case BinaryOp::kLt: return "<";
      case BinaryOp::kLe: return "<=";
      case BinaryOp::kGt: return ">";
      case BinaryOp::kGe: return ">=";
      case BinaryOp::kBitOr: return "|";
      case BinaryOp::kBitAnd: return "&";
      case BinaryOp::kShiftLeft: return "<<";
      case BinaryOp::kShiftRight: return ">>";
      case BinaryOp::kAdd: return "+";
      case BinaryOp::kSub: return "-";
      case BinaryOp::kMul: return "*";
      case BinaryOp::kDiv: return "/";
      case BinaryOp::kIntDiv: return "DIV";
      case BinaryOp::kMod: return "%";
      case BinaryOp::kBitXor: return "^";
    }
    return "?";
  }

  std::string expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kColumn: {
        const auto& column = e.as<ColumnExpr>();
        const std::string db = input_.column_db.empty() ? "" : quoted(input_.column_db) + ".";
        return db + quoted(qualifier(column)) + "." + quoted(column.column.name);
      }
      case ExprKind::kLiteral:
        return literal(e.as<LiteralExpr>());
      case ExprKind::kBinary: {
        const auto& binary = e.as<BinaryExpr>();
        return "(" + expr(*binary.left) + " " + binary_operator(binary.op) + " " +
               expr(*binary.right) + ")";
      }
      case ExprKind::kUnary: {
        const auto& unary = e.as<UnaryExpr>();
        if (unary.op == UnaryOp::kNegate) return "-(" + expr(*unary.operand) + ")";
        throw Unsupported{};
      }
      case ExprKind::kIs: {
        const auto& is = e.as<IsExpr>();
        if (is.what != IsWhat::kNull) throw Unsupported{};
        return "(" + expr(*is.operand) + (is.negated ? " is not null)" : " is null)");
      }
      case ExprKind::kBetween: {
        const auto& between = e.as<BetweenExpr>();
        return "(" + expr(*between.operand) + (between.negated ? " not between " : " between ") +
               expr(*between.low) + " and " + expr(*between.high) + ")";
      }
      case ExprKind::kInList: {
        const auto& in = e.as<InListExpr>();
        std::string out = "(" + expr(*in.operand) + (in.negated ? " not in (" : " in (");
        for (size_t i = 0; i < in.list.size(); ++i) {
          if (i > 0) out += ",";
          out += expr(*in.list[i]);
        }
        return out + "))";
      }
      case ExprKind::kLike: {
        const auto& like = e.as<LikeExpr>();
        if (like.escape) throw Unsupported{};
        return "(" + expr(*like.operand) + (like.negated ? " not like " : " like ") +
               expr(*like.pattern) + ")";
      }
      case ExprKind::kFunction: {
        const auto& function = e.as<FunctionExpr>();
        if (function.db || function.no_parens) throw Unsupported{};
        std::string out = ascii_lower(function.name) + "(";
        if (function.distinct) out += "distinct ";
        if (function.star) return out + "0)";  // count(*) is count(0)
        for (size_t i = 0; i < function.args.size(); ++i) {
          if (i > 0) out += ",";
          out += expr(*function.args[i]);
        }
        return out + ")";
      }
      default:
        throw Unsupported{};
    }
  }

  const ViewTextInput& input_;
};

}  // namespace

std::optional<std::string> canonical_view_text(const ViewTextInput& input) {
  try {
    return CanonicalPrinter(input).query();
  } catch (const Unsupported&) {
    return std::nullopt;
  }
}

std::optional<std::string> canonical_condition(const Expr& condition, const ViewTextInput& input) {
  try {
    return CanonicalPrinter(input).condition(condition);
  } catch (const Unsupported&) {
    return std::nullopt;
  }
}

}  // namespace duo::sql::executor
