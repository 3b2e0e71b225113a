// The canonical SQL printer. See ast_printer.h.
#include "sql-frontend/parser/ast_printer.h"

#include "sql-frontend/parser/keywords.h"

namespace duo::sql {
namespace {

class Printer {
 public:
  std::string out;

  // Backquoted when it is not a plain word or is a reserved word: non-reserved
  // keywords (status, text, date) are valid identifiers as they are.
  void ident(const std::string& name) {
    bool plain = !name.empty() && !is_reserved(lookup_keyword(name));
    for (size_t i = 0; i < name.size() && plain; ++i) {
      char c = name[i];
      bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
      bool digit = c >= '0' && c <= '9';
      plain = letter || (digit && i > 0);
    }
    if (plain) {
      out += name;
      return;
    }
    out += '`';
    for (char c : name) {
      out += c;
      if (c == '`') out += '`';
    }
    out += '`';
  }
  void ident(const Identifier& id) { ident(id.name); }
  // Engine, charset, collation, plugin and option names: any word is accepted there
  // (even reserved ones such as BINARY), so a plain word prints bare, anything else as
  // a string.
  void name(const std::string& n) {
    bool plain = !n.empty();
    for (char c : n) {
      plain = plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '$');
    }
    if (plain) {
      out += n;
    } else {
      string(n);
    }
  }
  void object(const ObjectName& name) {
    if (name.db) {
      ident(*name.db);
      out += '.';
    }
    ident(name.name);
  }
  void string(const std::string& s) {
    out += '\'';
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      switch (c) {
        case '\'':
          out += "\\'";
          break;
        case '\0':
          out += "\\0";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\x1a':
          out += "\\Z";
          break;
        case '\\':
          // \% and \_ were kept verbatim by the lexer; print them back the same way.
          if (i + 1 < s.size() && (s[i + 1] == '%' || s[i + 1] == '_')) {
            out += '\\';
          } else {
            out += "\\\\";
          }
          break;
        default:
          out += c;
      }
    }
    out += '\'';
  }
  void user(const UserName& u) {
    if (u.current_user) {
      out += "CURRENT_USER";
      return;
    }
    string(u.user);
    out += '@';
    string(u.host);
  }

  void type(const DataType& t);
  void expr(const Expr& e);
  void exprs(const std::vector<ExprPtr>& list) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) out += ", ";
      expr(*list[i]);
    }
  }
  void query(const QueryExpr& q);
  void select(const SelectBlock& b);
  void table_ref(const TableRef& t);
  void order_by(const std::vector<OrderItem>& items) {
    if (items.empty()) return;
    out += " ORDER BY ";
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += ", ";
      expr(*items[i].expr);
      if (items[i].descending) out += " DESC";
    }
  }
  void limit(const std::optional<Limit>& l) {
    if (!l) return;
    out += " LIMIT ";
    expr(*l->count);
    if (l->offset) {
      out += " OFFSET ";
      expr(*l->offset);
    }
  }
  void assignments(const std::vector<Assignment>& list) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) out += ", ";
      expr(*list[i].column);
      out += " = ";
      expr(*list[i].value);
    }
  }
  void column_def(const ColumnDef& c);
  void index_def(const IndexDef& i);
  void table_options(const TableOptions& o);
  void statement(const Statement& s);
};

const char* binary_op(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr:
      return "OR";
    case BinaryOp::kXor:
      return "XOR";
    case BinaryOp::kAnd:
      return "AND";
    case BinaryOp::kEq:
      return "=";
    case BinaryOp::kNullSafeEq:
      return "<=>";
    case BinaryOp::kNe:
      return "<>";
    case BinaryOp::kLt:
      return "<";
    case BinaryOp::kLe:
      return "<=";
    case BinaryOp::kGt:
      return ">";
    case BinaryOp::kGe:
      return ">=";
    case BinaryOp::kBitOr:
      return "|";
    case BinaryOp::kBitAnd:
      return "&";
    case BinaryOp::kShiftLeft:
      return "<<";
    case BinaryOp::kShiftRight:
      return ">>";
    case BinaryOp::kAdd:
      return "+";
    case BinaryOp::kSub:
      return "-";
    case BinaryOp::kMul:
      return "*";
    case BinaryOp::kDiv:
      return "/";
    case BinaryOp::kIntDiv:
      return "DIV";
    case BinaryOp::kMod:
      return "%";
    case BinaryOp::kBitXor:
      return "^";
  }
  return "?";
}

const char* unit_name(IntervalUnit u) {
  switch (u) {
    case IntervalUnit::kMicrosecond:
      return "MICROSECOND";
    case IntervalUnit::kSecond:
      return "SECOND";
    case IntervalUnit::kMinute:
      return "MINUTE";
    case IntervalUnit::kHour:
      return "HOUR";
    case IntervalUnit::kDay:
      return "DAY";
    case IntervalUnit::kWeek:
      return "WEEK";
    case IntervalUnit::kMonth:
      return "MONTH";
    case IntervalUnit::kQuarter:
      return "QUARTER";
    case IntervalUnit::kYear:
      return "YEAR";
    case IntervalUnit::kSecondMicrosecond:
      return "SECOND_MICROSECOND";
    case IntervalUnit::kMinuteMicrosecond:
      return "MINUTE_MICROSECOND";
    case IntervalUnit::kMinuteSecond:
      return "MINUTE_SECOND";
    case IntervalUnit::kHourMicrosecond:
      return "HOUR_MICROSECOND";
    case IntervalUnit::kHourSecond:
      return "HOUR_SECOND";
    case IntervalUnit::kHourMinute:
      return "HOUR_MINUTE";
    case IntervalUnit::kDayMicrosecond:
      return "DAY_MICROSECOND";
    case IntervalUnit::kDaySecond:
      return "DAY_SECOND";
    case IntervalUnit::kDayMinute:
      return "DAY_MINUTE";
    case IntervalUnit::kDayHour:
      return "DAY_HOUR";
    case IntervalUnit::kYearMonth:
      return "YEAR_MONTH";
  }
  return "?";
}

const char* type_name(TypeName t) {
  switch (t) {
    case TypeName::kTinyInt:
      return "TINYINT";
    case TypeName::kSmallInt:
      return "SMALLINT";
    case TypeName::kMediumInt:
      return "MEDIUMINT";
    case TypeName::kInt:
      return "INT";
    case TypeName::kBigInt:
      return "BIGINT";
    case TypeName::kFloat:
      return "FLOAT";
    case TypeName::kDouble:
      return "DOUBLE";
    case TypeName::kDecimal:
      return "DECIMAL";
    case TypeName::kChar:
      return "CHAR";
    case TypeName::kVarchar:
      return "VARCHAR";
    case TypeName::kBinary:
      return "BINARY";
    case TypeName::kVarbinary:
      return "VARBINARY";
    case TypeName::kDate:
      return "DATE";
    case TypeName::kTime:
      return "TIME";
    case TypeName::kDatetime:
      return "DATETIME";
    case TypeName::kTimestamp:
      return "TIMESTAMP";
    case TypeName::kYear:
      return "YEAR";
    case TypeName::kBit:
      return "BIT";
    case TypeName::kTinyBlob:
      return "TINYBLOB";
    case TypeName::kBlob:
      return "BLOB";
    case TypeName::kMediumBlob:
      return "MEDIUMBLOB";
    case TypeName::kLongBlob:
      return "LONGBLOB";
    case TypeName::kTinyText:
      return "TINYTEXT";
    case TypeName::kText:
      return "TEXT";
    case TypeName::kMediumText:
      return "MEDIUMTEXT";
    case TypeName::kLongText:
      return "LONGTEXT";
    case TypeName::kJson:
      return "JSON";
    case TypeName::kSigned:
      return "SIGNED";
    case TypeName::kUnsigned:
      return "UNSIGNED";
    case TypeName::kEnum:
      return "ENUM";
    case TypeName::kSet:
      return "SET";
  }
  return "?";
}

void Printer::type(const DataType& t) {
  out += type_name(t.name);
  if (t.name == TypeName::kEnum || t.name == TypeName::kSet) {
    for (size_t k = 0; k < t.values.size(); ++k) {
      out += k == 0 ? "(" : ", ";
      string(t.values[k]);
    }
    out += ')';
  }
  if (t.length) {
    out += '(' + std::to_string(*t.length);
    if (t.scale) out += ", " + std::to_string(*t.scale);
    out += ')';
  }
  const bool numeric = t.name <= TypeName::kDecimal;
  if (numeric && t.is_unsigned && !t.zerofill) out += " UNSIGNED";
  if (t.zerofill) out += " ZEROFILL";
  if (t.charset) {
    out += " CHARACTER SET ";
    name(*t.charset);
  }
  if (t.collate) {
    out += " COLLATE ";
    name(*t.collate);
  }
}

void Printer::expr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kLiteral: {
      const auto& l = e.as<LiteralExpr>();
      if (l.charset) out += '_' + *l.charset + (l.literal_kind == LiteralKind::kString ? "" : " ");
      switch (l.literal_kind) {
        case LiteralKind::kNull:
          out += "NULL";
          break;
        case LiteralKind::kTrue:
          out += "TRUE";
          break;
        case LiteralKind::kFalse:
          out += "FALSE";
          break;
        case LiteralKind::kString:
          string(l.value);
          break;
        case LiteralKind::kHex:
        case LiteralKind::kBit:
        case LiteralKind::kInteger:
        case LiteralKind::kDecimal:
        case LiteralKind::kFloat:
          out += l.text;
          break;
      }
      return;
    }
    case ExprKind::kColumn: {
      const auto& c = e.as<ColumnExpr>();
      if (c.db) {
        ident(*c.db);
        out += '.';
      }
      if (c.table) {
        ident(*c.table);
        out += '.';
      }
      ident(c.column);
      return;
    }
    case ExprKind::kStar: {
      const auto& s = e.as<StarExpr>();
      if (s.db) {
        ident(*s.db);
        out += '.';
      }
      if (s.table) {
        ident(*s.table);
        out += '.';
      }
      out += '*';
      return;
    }
    case ExprKind::kPlaceholder:
      out += '?';
      return;
    case ExprKind::kUserVariable:
      out += '@';
      ident(e.as<UserVariableExpr>().name);
      return;
    case ExprKind::kSystemVariable: {
      const auto& v = e.as<SystemVariableExpr>();
      out += "@@";
      if (v.scope == VariableScope::kGlobal) out += "GLOBAL.";
      if (v.scope == VariableScope::kSession) out += "SESSION.";
      out += v.name;
      return;
    }
    case ExprKind::kUnary: {
      const auto& u = e.as<UnaryExpr>();
      if (u.op == UnaryOp::kNot) {
        // (NOT x): NOT binds looser than comparisons, so it needs its own parentheses
        // to print !a = b back as (NOT a) = b.
        out += "(NOT ";
        expr(*u.operand);
        out += ')';
        return;
      }
      out += u.op == UnaryOp::kNegate ? "-" : "~";
      out += '(';
      expr(*u.operand);
      out += ')';
      return;
    }
    case ExprKind::kBinary: {
      const auto& b = e.as<BinaryExpr>();
      out += '(';
      expr(*b.left);
      out += ' ';
      out += binary_op(b.op);
      out += ' ';
      expr(*b.right);
      out += ')';
      return;
    }
    case ExprKind::kIs: {
      const auto& i = e.as<IsExpr>();
      out += '(';
      expr(*i.operand);
      out += i.negated ? " IS NOT " : " IS ";
      out += i.what == IsWhat::kNull    ? "NULL"
             : i.what == IsWhat::kTrue  ? "TRUE"
             : i.what == IsWhat::kFalse ? "FALSE"
                                        : "UNKNOWN";
      out += ')';
      return;
    }
    case ExprKind::kBetween: {
      const auto& b = e.as<BetweenExpr>();
      out += '(';
      expr(*b.operand);
      out += b.negated ? " NOT BETWEEN " : " BETWEEN ";
      expr(*b.low);
      out += " AND ";
      expr(*b.high);
      out += ')';
      return;
    }
    case ExprKind::kInList: {
      const auto& i = e.as<InListExpr>();
      out += '(';
      expr(*i.operand);
      out += i.negated ? " NOT IN (" : " IN (";
      exprs(i.list);
      out += "))";
      return;
    }
    case ExprKind::kInSubquery: {
      const auto& i = e.as<InSubqueryExpr>();
      out += '(';
      expr(*i.operand);
      out += i.negated ? " NOT IN (" : " IN (";
      query(*i.query);
      out += "))";
      return;
    }
    case ExprKind::kExists:
      out += "EXISTS (";
      query(*e.as<ExistsExpr>().query);
      out += ')';
      return;
    case ExprKind::kSubquery:
      out += '(';
      query(*e.as<SubqueryExpr>().query);
      out += ')';
      return;
    case ExprKind::kLike:
    case ExprKind::kRegexp: {
      const auto& p = static_cast<const PatternExpr&>(e);
      out += '(';
      expr(*p.operand);
      if (p.negated) out += " NOT";
      out += e.kind == ExprKind::kLike ? " LIKE " : " REGEXP ";
      expr(*p.pattern);
      if (p.escape) {
        out += " ESCAPE ";
        expr(*p.escape);
      }
      out += ')';
      return;
    }
    case ExprKind::kFunction: {
      const auto& f = e.as<FunctionExpr>();
      if (f.name.starts_with("TRIM ")) {
        // TRIM(side [remstr] FROM s): args are s[, remstr] (see parse_function_call).
        out += "TRIM(" + f.name.substr(5) + ' ';
        if (f.args.size() > 1) {
          expr(*f.args[1]);
          out += ' ';
        }
        out += "FROM ";
        expr(*f.args[0]);
        out += ')';
        return;
      }
      out += f.name;
      if (f.no_parens) return;
      out += '(';
      if (f.distinct) out += "DISTINCT ";
      if (f.star) out += '*';
      exprs(f.args);
      out += ')';
      return;
    }
    case ExprKind::kCase: {
      const auto& c = e.as<CaseExpr>();
      out += "CASE";
      if (c.operand) {
        out += ' ';
        expr(*c.operand);
      }
      for (const auto& [when, then] : c.whens) {
        out += " WHEN ";
        expr(*when);
        out += " THEN ";
        expr(*then);
      }
      if (c.else_value) {
        out += " ELSE ";
        expr(*c.else_value);
      }
      out += " END";
      return;
    }
    case ExprKind::kCast: {
      const auto& c = e.as<CastExpr>();
      out += "CAST(";
      expr(*c.operand);
      out += " AS ";
      type(c.type);
      out += ')';
      return;
    }
    case ExprKind::kConvertUsing: {
      const auto& c = e.as<ConvertUsingExpr>();
      out += "CONVERT(";
      expr(*c.operand);
      out += " USING ";
      name(c.charset);
      out += ')';
      return;
    }
    case ExprKind::kInterval: {
      const auto& i = e.as<IntervalExpr>();
      out += "INTERVAL ";
      expr(*i.value);
      out += ' ';
      out += unit_name(i.unit);
      return;
    }
    case ExprKind::kExtract: {
      const auto& x = e.as<ExtractExpr>();
      out += "EXTRACT(";
      out += unit_name(x.unit);
      out += " FROM ";
      expr(*x.operand);
      out += ')';
      return;
    }
    case ExprKind::kCollate: {
      const auto& c = e.as<CollateExpr>();
      out += '(';
      expr(*c.operand);
      out += " COLLATE ";
      name(c.collation);
      out += ')';
      return;
    }
    case ExprKind::kRow:
      out += '(';
      exprs(e.as<RowExpr>().items);
      out += ')';
      return;
    case ExprKind::kDefault:
      out += "DEFAULT";
      return;
    case ExprKind::kInsertValue:
      out += "VALUES(";
      expr(*e.as<InsertValueExpr>().column);
      out += ')';
      return;
    case ExprKind::kAssignUserVariable: {
      const auto& a = e.as<AssignUserVariableExpr>();
      out += "(@";
      ident(a.name);
      out += " := ";
      expr(*a.value);
      out += ')';
      return;
    }
  }
}

void Printer::query(const QueryExpr& q) {
  if (q.parenthesized) out += '(';
  if (q.select) {
    select(*q.select);
  } else {
    query(*q.left);
    out += q.union_all ? " UNION ALL " : " UNION ";
    query(*q.right);
  }
  if (q.parenthesized) out += ')';
  order_by(q.order_by);
  limit(q.limit);
}

void Printer::select(const SelectBlock& b) {
  out += "SELECT ";
  if (b.distinct) out += "DISTINCT ";
  if (b.sql_calc_found_rows) out += "SQL_CALC_FOUND_ROWS ";
  for (size_t i = 0; i < b.items.size(); ++i) {
    if (i) out += ", ";
    expr(*b.items[i].expr);
    if (b.items[i].alias) {
      out += " AS ";
      ident(*b.items[i].alias);
    }
  }
  if (!b.from.empty()) {
    out += " FROM ";
    for (size_t i = 0; i < b.from.size(); ++i) {
      if (i) out += ", ";
      table_ref(*b.from[i]);
    }
  }
  if (b.where) {
    out += " WHERE ";
    expr(*b.where);
  }
  if (!b.group_by.empty()) {
    out += " GROUP BY ";
    exprs(b.group_by);
    if (b.with_rollup) out += " WITH ROLLUP";
  }
  if (b.having) {
    out += " HAVING ";
    expr(*b.having);
  }
  order_by(b.order_by);
  limit(b.limit);
  if (b.lock == LockMode::kForUpdate) out += " FOR UPDATE";
  if (b.lock == LockMode::kShare) out += " LOCK IN SHARE MODE";
}

void Printer::table_ref(const TableRef& t) {
  switch (t.kind) {
    case TableRefKind::kTable:
      object(t.table);
      if (t.alias) {
        out += " AS ";
        ident(*t.alias);
      }
      for (const IndexHint& h : t.index_hints) {
        out += h.kind == IndexHintKind::kUse     ? " USE INDEX ("
               : h.kind == IndexHintKind::kForce ? " FORCE INDEX ("
                                                 : " IGNORE INDEX (";
        for (size_t i = 0; i < h.indexes.size(); ++i) {
          if (i) out += ", ";
          if (h.indexes[i].name == "PRIMARY" && !h.indexes[i].quoted) {
            out += "PRIMARY";
          } else {
            ident(h.indexes[i]);
          }
        }
        out += ')';
      }
      return;
    case TableRefKind::kDerived:
      out += '(';
      query(*t.query);
      out += ')';
      if (t.alias) {
        out += " AS ";
        ident(*t.alias);
      }
      return;
    case TableRefKind::kJoin:
      // Left-deep chains print without parentheses (a JOIN b ON x JOIN c ON y); a join
      // nested on the right keeps them.
      table_ref(*t.left);
      if (t.natural) out += " NATURAL";
      out += t.join == JoinKind::kLeft       ? " LEFT JOIN "
             : t.join == JoinKind::kRight    ? " RIGHT JOIN "
             : t.join == JoinKind::kStraight ? " STRAIGHT_JOIN "
                                             : " JOIN ";
      if (t.right->kind == TableRefKind::kJoin) out += '(';
      table_ref(*t.right);
      if (t.right->kind == TableRefKind::kJoin) out += ')';
      if (t.on) {
        out += " ON ";
        expr(*t.on);
      }
      if (!t.using_.empty()) {
        out += " USING (";
        for (size_t i = 0; i < t.using_.size(); ++i) {
          if (i) out += ", ";
          ident(t.using_[i]);
        }
        out += ')';
      }
      return;
  }
}

void Printer::column_def(const ColumnDef& c) {
  ident(c.name);
  out += ' ';
  type(c.type);
  if (c.nullable) out += *c.nullable ? " NULL" : " NOT NULL";
  if (c.default_value) {
    out += " DEFAULT (";
    expr(*c.default_value);
    out += ')';
  }
  if (c.on_update) {
    out += " ON UPDATE ";
    expr(*c.on_update);
  }
  if (c.auto_increment) out += " AUTO_INCREMENT";
  if (c.primary_key) out += " PRIMARY KEY";
  if (c.unique) out += " UNIQUE";
  if (c.comment) {
    out += " COMMENT ";
    string(*c.comment);
  }
  if (c.storage == ColumnStorage::kDisk) out += " STORAGE DISK";
  if (c.storage == ColumnStorage::kMemory) out += " STORAGE MEMORY";
  if (c.format == ColumnFormat::kFixed) out += " COLUMN_FORMAT FIXED";
  if (c.format == ColumnFormat::kDynamic) out += " COLUMN_FORMAT DYNAMIC";
}

void Printer::index_def(const IndexDef& i) {
  if (i.constraint_name) {
    out += "CONSTRAINT ";
    ident(*i.constraint_name);
    out += ' ';
  }
  out += i.kind == IndexKind::kPrimary  ? "PRIMARY KEY"
         : i.kind == IndexKind::kUnique ? "UNIQUE KEY"
                                        : "KEY";
  if (i.name) {
    out += ' ';
    ident(*i.name);
  }
  out += " (";
  for (size_t k = 0; k < i.columns.size(); ++k) {
    if (k) out += ", ";
    ident(i.columns[k].name);
    if (i.columns[k].prefix_length) out += '(' + std::to_string(*i.columns[k].prefix_length) + ')';
    if (i.columns[k].descending) out += " DESC";
  }
  out += ')';
  if (i.algorithm == IndexAlgorithm::kHash) out += " USING HASH";
  if (i.algorithm == IndexAlgorithm::kBtree) out += " USING BTREE";
  if (i.comment) {
    out += " COMMENT ";
    string(*i.comment);
  }
}

void Printer::table_options(const TableOptions& o) {
  if (o.engine) {
    out += " ENGINE = ";
    name(*o.engine);
  }
  if (o.auto_increment) out += " AUTO_INCREMENT = " + std::to_string(*o.auto_increment);
  if (o.charset) {
    out += " DEFAULT CHARSET = ";
    name(*o.charset);
  }
  if (o.collate) {
    out += " COLLATE = ";
    name(*o.collate);
  }
  if (o.comment) {
    out += " COMMENT = ";
    string(*o.comment);
  }
  if (o.row_format) {
    out += " ROW_FORMAT = ";
    name(*o.row_format);
  }
  if (o.tablespace) {
    out += " TABLESPACE ";
    ident(*o.tablespace);
  }
  if (o.storage == ColumnStorage::kDisk) out += " STORAGE DISK";
  if (o.storage == ColumnStorage::kMemory) out += " STORAGE MEMORY";
}

const char* show_what(ShowKind k) {
  switch (k) {
    case ShowKind::kDatabases:
      return "DATABASES";
    case ShowKind::kTables:
      return "TABLES";
    case ShowKind::kColumns:
      return "COLUMNS";
    case ShowKind::kIndex:
      return "INDEX";
    case ShowKind::kCreateTable:
      return "CREATE TABLE";
    case ShowKind::kCreateView:
      return "CREATE VIEW";
    case ShowKind::kCreateDatabase:
      return "CREATE DATABASE";
    case ShowKind::kVariables:
      return "VARIABLES";
    case ShowKind::kStatus:
      return "STATUS";
    case ShowKind::kWarnings:
      return "WARNINGS";
    case ShowKind::kErrors:
      return "ERRORS";
    case ShowKind::kEngines:
      return "ENGINES";
    case ShowKind::kProcesslist:
      return "PROCESSLIST";
    case ShowKind::kCollation:
      return "COLLATION";
    case ShowKind::kCharset:
      return "CHARACTER SET";
    case ShowKind::kGrants:
      return "GRANTS";
    case ShowKind::kTableStatus:
      return "TABLE STATUS";
    case ShowKind::kEngineStatus:
      return "ENGINE";
  }
  return "?";
}

void Printer::statement(const Statement& s) {
  switch (s.kind) {
    case StatementKind::kSelect: {
      const auto& select = s.as<SelectStatement>();
      if (select.discard_result) {
        // DO: the items of its one block.
        const SelectBlock& b = *select.query->select;
        out += "DO ";
        for (size_t i = 0; i < b.items.size(); ++i) {
          if (i) out += ", ";
          expr(*b.items[i].expr);
          if (b.items[i].alias) {
            out += " AS ";
            ident(*b.items[i].alias);
          }
        }
        return;
      }
      query(*select.query);
      return;
    }
    case StatementKind::kInsert: {
      const auto& i = s.as<InsertStatement>();
      out += i.replace ? "REPLACE " : "INSERT ";
      if (i.ignore) out += "IGNORE ";
      out += "INTO ";
      object(i.table);
      if (!i.columns.empty() || (i.rows.size() == 1 && i.rows[0].empty())) {
        out += " (";
        for (size_t k = 0; k < i.columns.size(); ++k) {
          if (k) out += ", ";
          ident(i.columns[k]);
        }
        out += ')';
      }
      if (!i.rows.empty()) {
        out += " VALUES ";
        for (size_t r = 0; r < i.rows.size(); ++r) {
          if (r) out += ", ";
          out += '(';
          exprs(i.rows[r]);
          out += ')';
        }
      } else if (!i.set.empty()) {
        out += " SET ";
        assignments(i.set);
      } else if (i.select) {
        out += ' ';
        query(*i.select);
      }
      if (!i.on_duplicate.empty()) {
        out += " ON DUPLICATE KEY UPDATE ";
        assignments(i.on_duplicate);
      }
      return;
    }
    case StatementKind::kUpdate: {
      const auto& u = s.as<UpdateStatement>();
      out += "UPDATE ";
      if (u.ignore) out += "IGNORE ";
      const auto& tables = u.join ? u.join->from : u.tables;
      for (size_t k = 0; k < tables.size(); ++k) {
        if (k) out += ", ";
        table_ref(*tables[k]);
      }
      out += " SET ";
      assignments(u.set);
      if (const ExprPtr& where = u.join ? u.join->where : u.where) {
        out += " WHERE ";
        expr(*where);
      }
      order_by(u.order_by);
      limit(u.limit);
      return;
    }
    case StatementKind::kDelete: {
      const auto& d = s.as<DeleteStatement>();
      out += "DELETE ";
      if (d.quick) out += "QUICK ";
      if (d.ignore) out += "IGNORE ";
      if (d.join) {
        for (size_t k = 0; k < d.targets.size(); ++k) {
          if (k) out += ", ";
          object(d.targets[k]);
        }
        out += " FROM ";
        for (size_t k = 0; k < d.join->from.size(); ++k) {
          if (k) out += ", ";
          table_ref(*d.join->from[k]);
        }
        if (d.join->where) {
          out += " WHERE ";
          expr(*d.join->where);
        }
        return;
      }
      out += "FROM ";
      object(d.table);
      if (d.alias) {
        out += " AS ";
        ident(*d.alias);
      }
      if (d.where) {
        out += " WHERE ";
        expr(*d.where);
      }
      order_by(d.order_by);
      limit(d.limit);
      return;
    }
    case StatementKind::kCreateDatabase: {
      const auto& c = s.as<CreateDatabaseStatement>();
      out += "CREATE DATABASE ";
      if (c.if_not_exists) out += "IF NOT EXISTS ";
      ident(c.name);
      if (c.charset) {
        out += " CHARACTER SET ";
        name(*c.charset);
      }
      if (c.collate) {
        out += " COLLATE ";
        name(*c.collate);
      }
      return;
    }
    case StatementKind::kDropDatabase: {
      const auto& d = s.as<DropDatabaseStatement>();
      out += "DROP DATABASE ";
      if (d.if_exists) out += "IF EXISTS ";
      ident(d.name);
      return;
    }
    case StatementKind::kUse:
      out += "USE ";
      ident(s.as<UseStatement>().db);
      return;
    case StatementKind::kCreateTable: {
      const auto& c = s.as<CreateTableStatement>();
      out += c.temporary ? "CREATE TEMPORARY TABLE " : "CREATE TABLE ";
      if (c.if_not_exists) out += "IF NOT EXISTS ";
      object(c.table);
      if (c.like) {
        out += " LIKE ";
        object(*c.like);
        return;
      }
      if (c.select && c.columns.empty() && c.indexes.empty()) {
        out += " AS ";
        query(*c.select);
        return;
      }
      out += " (";
      bool first = true;
      for (const ColumnDef& col : c.columns) {
        if (!first) out += ", ";
        first = false;
        column_def(col);
      }
      for (const IndexDef& idx : c.indexes) {
        if (!first) out += ", ";
        first = false;
        index_def(idx);
      }
      out += ')';
      table_options(c.options);
      if (c.partition_by_key) out += " PARTITION BY KEY ()";
      if (c.partitions) out += " PARTITIONS " + std::to_string(*c.partitions);
      if (c.select) {
        out += " AS ";
        query(*c.select);
      }
      return;
    }
    case StatementKind::kDropTable: {
      const auto& d = s.as<DropTableStatement>();
      out += d.temporary ? "DROP TEMPORARY TABLE " : "DROP TABLE ";
      if (d.if_exists) out += "IF EXISTS ";
      for (size_t k = 0; k < d.tables.size(); ++k) {
        if (k) out += ", ";
        object(d.tables[k]);
      }
      return;
    }
    case StatementKind::kTruncateTable:
      out += "TRUNCATE TABLE ";
      object(s.as<TruncateTableStatement>().table);
      return;
    case StatementKind::kRenameTable: {
      out += "RENAME TABLE ";
      const auto& r = s.as<RenameTableStatement>();
      for (size_t k = 0; k < r.renames.size(); ++k) {
        if (k) out += ", ";
        object(r.renames[k].first);
        out += " TO ";
        object(r.renames[k].second);
      }
      return;
    }
    case StatementKind::kAlterTable: {
      const auto& a = s.as<AlterTableStatement>();
      out += "ALTER TABLE ";
      object(a.table);
      bool first = true;
      auto sep = [&] {
        out += first ? " " : ", ";
        first = false;
      };
      if (a.algorithm) {
        sep();
        out += "ALGORITHM = ";
        name(*a.algorithm);
      }
      for (const AlterAction& act : a.actions) {
        sep();
        switch (act.kind) {
          case AlterActionKind::kAddColumn:
          case AlterActionKind::kModifyColumn:
          case AlterActionKind::kChangeColumn:
            if (act.kind == AlterActionKind::kAddColumn) out += "ADD COLUMN ";
            if (act.kind == AlterActionKind::kModifyColumn) out += "MODIFY COLUMN ";
            if (act.kind == AlterActionKind::kChangeColumn) {
              out += "CHANGE COLUMN ";
              ident(act.name);
              out += ' ';
            }
            column_def(act.column);
            if (act.position == ColumnPosition::kFirst) out += " FIRST";
            if (act.position == ColumnPosition::kAfter) {
              out += " AFTER ";
              ident(*act.after);
            }
            break;
          case AlterActionKind::kRenameTable:
            out += "RENAME TO ";
            object(*act.new_name);
            break;
          case AlterActionKind::kSetDefault:
            out += "ALTER COLUMN ";
            ident(act.name);
            out += " SET DEFAULT (";
            expr(*act.default_value);
            out += ')';
            break;
          case AlterActionKind::kDropDefault:
            out += "ALTER COLUMN ";
            ident(act.name);
            out += " DROP DEFAULT";
            break;
          case AlterActionKind::kDropColumn:
            out += "DROP COLUMN ";
            ident(act.name);
            break;
          case AlterActionKind::kAddIndex:
            out += "ADD ";
            index_def(act.index);
            break;
          case AlterActionKind::kDropIndex:
            out += "DROP INDEX ";
            ident(act.name);
            break;
          case AlterActionKind::kDropPrimaryKey:
            out += "DROP PRIMARY KEY";
            break;
          case AlterActionKind::kTableOptions: {
            Printer options;
            options.table_options(act.options);
            out += options.out.substr(1);  // drop the leading space
            break;
          }
        }
      }
      return;
    }
    case StatementKind::kCreateIndex: {
      const auto& c = s.as<CreateIndexStatement>();
      out += c.index.kind == IndexKind::kUnique ? "CREATE UNIQUE INDEX " : "CREATE INDEX ";
      ident(*c.index.name);
      out += " ON ";
      object(c.table);
      out += " (";
      for (size_t k = 0; k < c.index.columns.size(); ++k) {
        if (k) out += ", ";
        ident(c.index.columns[k].name);
        if (c.index.columns[k].prefix_length) {
          out += '(' + std::to_string(*c.index.columns[k].prefix_length) + ')';
        }
        if (c.index.columns[k].descending) out += " DESC";
      }
      out += ')';
      if (c.index.algorithm == IndexAlgorithm::kHash) out += " USING HASH";
      if (c.index.algorithm == IndexAlgorithm::kBtree) out += " USING BTREE";
      if (c.index.comment) {
        out += " COMMENT ";
        string(*c.index.comment);
      }
      return;
    }
    case StatementKind::kDropIndex: {
      const auto& d = s.as<DropIndexStatement>();
      out += "DROP INDEX ";
      if (d.name.name == "PRIMARY" && !d.name.quoted) {
        out += "PRIMARY";
      } else {
        ident(d.name);
      }
      out += " ON ";
      object(d.table);
      return;
    }
    case StatementKind::kTransaction: {
      const auto& t = s.as<TransactionStatement>();
      if (t.action == TransactionAction::kCommit) out += "COMMIT";
      if (t.action == TransactionAction::kRollback) out += "ROLLBACK";
      if (t.action == TransactionAction::kBegin) {
        if (!t.start_transaction) {
          out += "BEGIN";
        } else {
          out += "START TRANSACTION";
          const char* sep = " ";
          if (t.consistent_snapshot) {
            out += " WITH CONSISTENT SNAPSHOT";
            sep = ", ";
          }
          if (t.access == AccessMode::kReadOnly) out += std::string(sep) + "READ ONLY";
          if (t.access == AccessMode::kReadWrite) out += std::string(sep) + "READ WRITE";
        }
      }
      if (t.work) out += " WORK";
      return;
    }
    case StatementKind::kSet: {
      const auto& set = s.as<SetStatement>();
      out += "SET ";
      for (size_t k = 0; k < set.items.size(); ++k) {
        if (k) out += ", ";
        const SetItem& it = set.items[k];
        const char* scope = it.scope == VariableScope::kGlobal    ? "GLOBAL "
                            : it.scope == VariableScope::kSession ? "SESSION "
                                                                  : "";
        switch (it.kind) {
          case SetKind::kSystemVariable:
            out += scope;
            if (it.scope == VariableScope::kDefault) out += "@@";
            out += it.name;
            out += " = ";
            expr(*it.value);
            break;
          case SetKind::kUserVariable:
            out += '@';
            ident(it.name);
            out += " = ";
            expr(*it.value);
            break;
          case SetKind::kNames:
            out += "NAMES ";
            if (it.name.empty()) {
              out += "DEFAULT";
            } else {
              name(it.name);
            }
            if (it.collate) {
              out += " COLLATE ";
              name(*it.collate);
            }
            break;
          case SetKind::kCharacterSet:
            out += "CHARACTER SET ";
            if (it.name.empty()) {
              out += "DEFAULT";
            } else {
              name(it.name);
            }
            break;
          case SetKind::kPassword:
            out += "PASSWORD ";
            if (it.user) {
              out += "FOR ";
              user(*it.user);
              out += ' ';
            }
            out += "= ";
            string(it.password);
            break;
          case SetKind::kTransaction: {
            out += scope;
            out += "TRANSACTION";
            const char* sep = " ";
            if (it.isolation != IsolationLevel::kUnset) {
              out += " ISOLATION LEVEL ";
              out += it.isolation == IsolationLevel::kReadUncommitted  ? "READ UNCOMMITTED"
                     : it.isolation == IsolationLevel::kReadCommitted  ? "READ COMMITTED"
                     : it.isolation == IsolationLevel::kRepeatableRead ? "REPEATABLE READ"
                                                                       : "SERIALIZABLE";
              sep = ", ";
            }
            if (it.access == AccessMode::kReadOnly) out += std::string(sep) + "READ ONLY";
            if (it.access == AccessMode::kReadWrite) out += std::string(sep) + "READ WRITE";
            break;
          }
        }
      }
      return;
    }
    case StatementKind::kShow: {
      const auto& sh = s.as<ShowStatement>();
      out += "SHOW ";
      if (sh.full) out += "FULL ";
      if (sh.scope == VariableScope::kGlobal) out += "GLOBAL ";
      if (sh.scope == VariableScope::kSession) out += "SESSION ";
      out += show_what(sh.what);
      if (sh.what == ShowKind::kEngineStatus) {
        out += ' ';
        name(sh.engine);
        out += " STATUS";
        return;
      }
      if (sh.what == ShowKind::kCreateDatabase) {
        out += ' ';
        if (sh.if_not_exists) out += "IF NOT EXISTS ";
        ident(*sh.db);
        return;
      }
      if (sh.table) {
        out += sh.what == ShowKind::kCreateTable || sh.what == ShowKind::kCreateView ? " "
                                                                                    : " FROM ";
        object(*sh.table);
      }
      if (sh.db) {
        out += " FROM ";
        ident(*sh.db);
      }
      if (sh.user) {
        out += " FOR ";
        user(*sh.user);
      }
      if (sh.like) {
        out += " LIKE ";
        string(*sh.like);
      }
      if (sh.where) {
        out += " WHERE ";
        expr(*sh.where);
      }
      if (sh.limit) limit(sh.limit);
      return;
    }
    case StatementKind::kDescribe: {
      const auto& d = s.as<DescribeStatement>();
      out += "DESCRIBE ";
      object(d.table);
      if (d.column) {
        out += ' ';
        ident(*d.column);
      }
      return;
    }
    case StatementKind::kExplain: {
      const auto& e = s.as<ExplainStatement>();
      out += "EXPLAIN ";
      if (e.analyze) out += "ANALYZE ";
      if (e.format) {
        out += "FORMAT = ";
        name(*e.format);
        out += ' ';
      }
      statement(*e.statement);
      return;
    }
    case StatementKind::kKill: {
      const auto& k = s.as<KillStatement>();
      out += k.query_only ? "KILL QUERY " : "KILL CONNECTION ";
      expr(*k.id);
      return;
    }
    case StatementKind::kCreateUser:
    case StatementKind::kDropUser:
    case StatementKind::kAlterUser: {
      const auto& u = static_cast<const UserStatement&>(s);
      out += s.kind == StatementKind::kCreateUser ? "CREATE USER "
             : s.kind == StatementKind::kDropUser ? "DROP USER "
                                                  : "ALTER USER ";
      if (u.if_exists) out += "IF EXISTS ";
      if (u.if_not_exists) out += "IF NOT EXISTS ";
      for (size_t k = 0; k < u.users.size(); ++k) {
        if (k) out += ", ";
        user(u.users[k].user);
        if (u.users[k].plugin || u.users[k].password) out += " IDENTIFIED";
        if (u.users[k].plugin) {
          out += " WITH ";
          name(*u.users[k].plugin);
        }
        if (u.users[k].password) {
          out += " BY ";
          string(*u.users[k].password);
        }
      }
      return;
    }
    case StatementKind::kGrant: {
      const auto& g = s.as<GrantStatement>();
      out += g.revoke ? "REVOKE " : "GRANT ";
      for (size_t k = 0; k < g.privileges.size(); ++k) {
        if (k) out += ", ";
        out += g.privileges[k].name;
        if (!g.privileges[k].columns.empty()) {
          out += " (";
          for (size_t c = 0; c < g.privileges[k].columns.size(); ++c) {
            if (c) out += ", ";
            ident(g.privileges[k].columns[c]);
          }
          out += ')';
        }
      }
      out += " ON ";
      if (!g.db.empty()) {
        if (g.db == "*") {
          out += '*';
        } else {
          ident(g.db);
        }
        out += '.';
      }
      if (g.table == "*") {
        out += '*';
      } else {
        ident(g.table);
      }
      out += g.revoke ? " FROM " : " TO ";
      for (size_t k = 0; k < g.users.size(); ++k) {
        if (k) out += ", ";
        user(g.users[k]);
      }
      if (g.with_grant_option) out += " WITH GRANT OPTION";
      return;
    }
    case StatementKind::kPrepare: {
      const auto& p = s.as<PrepareStatement>();
      out += "PREPARE ";
      ident(p.name.name);
      out += " FROM ";
      if (p.from_variable) {
        out += "@" + *p.from_variable;
      } else {
        string(*p.text);
      }
      return;
    }
    case StatementKind::kExecute: {
      const auto& e = s.as<ExecuteStatement>();
      out += "EXECUTE ";
      ident(e.name.name);
      for (size_t k = 0; k < e.using_variables.size(); ++k) {
        out += k == 0 ? " USING @" : ", @";
        out += e.using_variables[k];
      }
      return;
    }
    case StatementKind::kDeallocatePrepare:
      out += "DEALLOCATE PREPARE ";
      ident(s.as<DeallocatePrepareStatement>().name.name);
      return;
    case StatementKind::kFlush: {
      const auto& f = s.as<FlushStatement>();
      out += f.local ? "FLUSH LOCAL " : "FLUSH ";
      for (size_t k = 0; k < f.options.size(); ++k) {
        if (k) out += ", ";
        out += f.options[k];
      }
      return;
    }
    case StatementKind::kDiskObject: {
      const auto& d = s.as<DiskObjectStatement>();
      const bool group = d.action == DiskObjectAction::kCreateLogfileGroup ||
                         d.action == DiskObjectAction::kAddUndofile ||
                         d.action == DiskObjectAction::kDropLogfileGroup;
      switch (d.action) {
        case DiskObjectAction::kCreateLogfileGroup:
        case DiskObjectAction::kCreateTablespace:
          out += "CREATE ";
          break;
        case DiskObjectAction::kAddUndofile:
        case DiskObjectAction::kAddDatafile:
        case DiskObjectAction::kDropDatafile:
          out += "ALTER ";
          break;
        case DiskObjectAction::kDropLogfileGroup:
        case DiskObjectAction::kDropTablespace:
          out += "DROP ";
          break;
      }
      out += group ? "LOGFILE GROUP " : "TABLESPACE ";
      ident(d.name);
      if (d.action == DiskObjectAction::kDropDatafile) {
        out += " DROP DATAFILE ";
        string(d.file);
      } else if (d.action != DiskObjectAction::kDropLogfileGroup &&
                 d.action != DiskObjectAction::kDropTablespace) {
        out += group ? " ADD UNDOFILE " : " ADD DATAFILE ";
        string(d.file);
      }
      if (d.logfile_group) {
        out += " USE LOGFILE GROUP ";
        ident(*d.logfile_group);
      }
      const auto option = [&](const char* word, const std::optional<std::string>& value) {
        if (!value) return;
        out += " ";
        out += word;
        out += " ";
        out += *value;
      };
      option("INITIAL_SIZE", d.initial_size);
      option("UNDO_BUFFER_SIZE", d.undo_buffer_size);
      option("REDO_BUFFER_SIZE", d.redo_buffer_size);
      option("EXTENT_SIZE", d.extent_size);
      option("AUTOEXTEND_SIZE", d.autoextend_size);
      option("MAX_SIZE", d.max_size);
      if (d.wait) out += " WAIT";
      if (d.comment) {
        out += " COMMENT ";
        string(*d.comment);
      }
      if (d.engine) {
        out += " ENGINE ";
        out += *d.engine;
      }
      return;
    }
    case StatementKind::kLoadData: {
      const auto& l = s.as<LoadDataStatement>();
      out += l.local ? "LOAD DATA LOCAL INFILE " : "LOAD DATA INFILE ";
      string(l.file);
      if (l.replace) out += " REPLACE";
      if (l.ignore) out += " IGNORE";
      out += " INTO TABLE ";
      object(l.table);
      if (l.charset) {
        out += " CHARACTER SET ";
        out += *l.charset;
      }
      out += " FIELDS TERMINATED BY ";
      string(l.fields_terminated);
      out += l.optionally_enclosed ? " OPTIONALLY ENCLOSED BY " : " ENCLOSED BY ";
      string(l.fields_enclosed);
      out += " ESCAPED BY ";
      string(l.fields_escaped);
      out += " LINES STARTING BY ";
      string(l.lines_starting);
      out += " TERMINATED BY ";
      string(l.lines_terminated);
      if (l.ignore_lines > 0) out += " IGNORE " + std::to_string(l.ignore_lines) + " LINES";
      if (!l.targets.empty()) {
        out += " (";
        for (size_t k = 0; k < l.targets.size(); ++k) {
          if (k) out += ", ";
          if (l.targets[k].starts_with("@")) {
            out += l.targets[k];
          } else {
            ident(l.targets[k]);
          }
        }
        out += ")";
      }
      if (!l.set.empty()) {
        out += " SET ";
        assignments(l.set);
      }
      return;
    }
    case StatementKind::kTableMaintenance: {
      const auto& m = s.as<TableMaintenanceStatement>();
      out += m.operation == TableMaintenance::kAnalyze    ? "ANALYZE TABLE "
             : m.operation == TableMaintenance::kOptimize ? "OPTIMIZE TABLE "
                                                          : "CHECK TABLE ";
      for (size_t i = 0; i < m.tables.size(); ++i) {
        if (i > 0) out += ", ";
        object(m.tables[i]);
      }
      return;
    }
    case StatementKind::kView: {
      const auto& v = s.as<ViewStatement>();
      if (v.action == ViewAction::kDrop) {
        out += "DROP VIEW ";
        if (v.if_exists) out += "IF EXISTS ";
        for (size_t i = 0; i < v.names.size(); ++i) {
          if (i > 0) out += ", ";
          object(v.names[i]);
        }
        return;
      }
      out += v.action == ViewAction::kAlter ? "ALTER " : "CREATE ";
      if (v.or_replace) out += "OR REPLACE ";
      if (!v.algorithm.empty()) out += "ALGORITHM = " + v.algorithm + " ";
      if (v.definer) {
        out += "DEFINER = ";
        user(*v.definer);
        out += " ";
      }
      if (!v.security.empty()) out += "SQL SECURITY " + v.security + " ";
      out += "VIEW ";
      object(v.names.front());
      if (!v.columns.empty()) {
        out += " (";
        for (size_t i = 0; i < v.columns.size(); ++i) {
          if (i > 0) out += ", ";
          ident(v.columns[i]);
        }
        out += ")";
      }
      out += " AS ";
      query(*v.query);
      if (!v.check_option.empty()) out += " WITH " + v.check_option + " CHECK OPTION";
      return;
    }
  }
}

}  // namespace

std::string to_sql(const Statement& statement) {
  Printer p;
  p.statement(statement);
  return p.out;
}

std::string to_sql(const Expr& expr) {
  Printer p;
  p.expr(expr);
  return p.out;
}

std::string to_sql(const QueryExpr& query) {
  Printer p;
  p.query(query);
  return p.out;
}

std::string to_sql(const DataType& type) {
  Printer p;
  p.type(type);
  return p.out;
}

}  // namespace duo::sql
