// Expression grammar with MySQL's operator precedence, lowest first:
//   OR ||  <  XOR  <  AND &&  <  NOT  <  comparison, IS, BETWEEN, IN, LIKE, REGEXP
//   <  |  <  &  <  << >>  <  + -  <  * / DIV % MOD  <  ^  <  unary - ~ !  <  COLLATE
// (MySQL's sql_yacc.yy: expr / bool_pri / predicate / bit_expr / simple_expr).
#include <cassert>

#include "sql-frontend/parser/grammar.h"

namespace duo::sql {
namespace {

ExprPtr make_binary(BinaryOp op, ExprPtr left, ExprPtr right) {
  auto e = std::make_unique<BinaryExpr>(left->pos);
  e->op = op;
  e->left = std::move(left);
  e->right = std::move(right);
  return e;
}

// Reserved words that are still function names when followed by '(' (MySQL gives them
// their own grammar rules).
bool reserved_function_name(Keyword k) {
  switch (k) {
    case Keyword::kIf:
    case Keyword::kDatabase:
    case Keyword::kSchema:
    case Keyword::kLeft:
    case Keyword::kRight:
    case Keyword::kReplace:
    case Keyword::kInsert:
    case Keyword::kMod:
    case Keyword::kChar:
    case Keyword::kRepeat:
    case Keyword::kCurrentDate:
    case Keyword::kCurrentTime:
    case Keyword::kCurrentTimestamp:
    case Keyword::kCurrentUser:
    case Keyword::kLocaltime:
    case Keyword::kLocaltimestamp:
    case Keyword::kUtcDate:
    case Keyword::kUtcTime:
    case Keyword::kUtcTimestamp:
    case Keyword::kInterval:
    case Keyword::kMatch:
    case Keyword::kDefault:
      return true;
    default:
      return false;
  }
}

// Niladic functions MySQL accepts without parentheses.
bool function_without_parens(Keyword k) {
  switch (k) {
    case Keyword::kCurrentDate:
    case Keyword::kCurrentTime:
    case Keyword::kCurrentTimestamp:
    case Keyword::kCurrentUser:
    case Keyword::kLocaltime:
    case Keyword::kLocaltimestamp:
    case Keyword::kUtcDate:
    case Keyword::kUtcTime:
    case Keyword::kUtcTimestamp:
      return true;
    default:
      return false;
  }
}

// Aggregates that take DISTINCT (and COUNT(*)).
bool is_aggregate_name(const std::string& upper) {
  return upper == "COUNT" || upper == "SUM" || upper == "AVG" || upper == "MIN" || upper == "MAX" ||
         upper == "GROUP_CONCAT" || upper == "BIT_AND" || upper == "BIT_OR" || upper == "BIT_XOR" ||
         upper == "STD" || upper == "STDDEV" || upper == "VARIANCE";
}

// Known charset introducers (_utf8mb4'x'). MySQL recognises every compiled charset;
// these are the ones clients send.
bool is_charset_introducer(std::string_view word) {
  static constexpr std::string_view kCharsets[] = {
      "_utf8mb4", "_utf8mb3", "_utf8",    "_latin1", "_binary", "_ascii",
      "_ucs2",    "_utf16",   "_utf16le", "_utf32",  "_cp1250", "_cp1251",
      "_cp1252",  "_gbk",     "_big5",    "_sjis",   "_euckr"};
  for (std::string_view cs : kCharsets) {
    if (word.size() != cs.size()) continue;
    bool same = true;
    for (size_t i = 0; i < cs.size() && same; ++i) {
      char c = word[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      same = c == cs[i];
    }
    if (same) return true;
  }
  return false;
}

}  // namespace

ExprPtr Parser::parse_expr() {
  DepthGuard guard(*this);
  return parse_or();
}

ExprPtr Parser::parse_or() {
  ExprPtr left = parse_xor();
  while (peek().is(Keyword::kOr) || peek().is(TokenKind::kOrOr)) {
    take();
    left = make_binary(BinaryOp::kOr, std::move(left), parse_xor());
  }
  return left;
}

ExprPtr Parser::parse_xor() {
  ExprPtr left = parse_and();
  while (accept(Keyword::kXor)) left = make_binary(BinaryOp::kXor, std::move(left), parse_and());
  return left;
}

ExprPtr Parser::parse_and() {
  ExprPtr left = parse_not();
  while (peek().is(Keyword::kAnd) || peek().is(TokenKind::kAndAnd)) {
    take();
    left = make_binary(BinaryOp::kAnd, std::move(left), parse_not());
  }
  return left;
}

ExprPtr Parser::parse_not() {
  if (peek().is(Keyword::kNot)) {
    DepthGuard guard(*this);
    SourcePos pos = here();
    take();
    auto e = std::make_unique<UnaryExpr>(pos);
    e->op = UnaryOp::kNot;
    e->operand = parse_not();
    return e;
  }
  return parse_boolean_primary();
}

ExprPtr Parser::parse_boolean_primary() {
  ExprPtr left = parse_predicate();
  for (;;) {
    if (peek().is(Keyword::kIs)) {
      take();
      auto e = std::make_unique<IsExpr>(left->pos);
      e->negated = accept(Keyword::kNot);
      if (accept(Keyword::kNull)) {
        e->what = IsWhat::kNull;
      } else if (accept(Keyword::kTrue)) {
        e->what = IsWhat::kTrue;
      } else if (accept(Keyword::kFalse)) {
        e->what = IsWhat::kFalse;
      } else if (accept(Keyword::kUnknown)) {
        e->what = IsWhat::kUnknown;
      } else {
        fail();
      }
      e->operand = std::move(left);
      left = std::move(e);
      continue;
    }
    BinaryOp op;
    switch (peek().kind) {
      case TokenKind::kEq:
        op = BinaryOp::kEq;
        break;
      case TokenKind::kNullSafeEq:
        op = BinaryOp::kNullSafeEq;
        break;
      case TokenKind::kNe:
        op = BinaryOp::kNe;
        break;
      case TokenKind::kLt:
        op = BinaryOp::kLt;
        break;
      case TokenKind::kLe:
        op = BinaryOp::kLe;
        break;
      case TokenKind::kGt:
        op = BinaryOp::kGt;
        break;
      case TokenKind::kGe:
        op = BinaryOp::kGe;
        break;
      default:
        return left;
    }
    take();
    left = make_binary(op, std::move(left), parse_predicate());
  }
}

ExprPtr Parser::parse_predicate() {
  ExprPtr left = parse_bit_or();
  size_t ahead = peek().is(Keyword::kNot) ? 1 : 0;
  const Token& op = peek(ahead);
  if (op.kind != TokenKind::kWord) return left;
  const bool negated = ahead == 1;
  switch (op.keyword) {
    case Keyword::kIn: {
      pos_ += ahead;
      take();
      expect(TokenKind::kLeftParen);
      if (peek().is(Keyword::kSelect) ||
          (peek().is(TokenKind::kLeftParen) && peek(1).is(Keyword::kSelect))) {
        auto e = std::make_unique<InSubqueryExpr>(left->pos);
        e->operand = std::move(left);
        e->negated = negated;
        e->query = parse_query_expr();
        expect(TokenKind::kRightParen);
        return e;
      }
      auto e = std::make_unique<InListExpr>(left->pos);
      e->operand = std::move(left);
      e->negated = negated;
      do {
        e->list.push_back(parse_expr());
      } while (accept(TokenKind::kComma));
      expect(TokenKind::kRightParen);
      return e;
    }
    case Keyword::kBetween: {
      pos_ += ahead;
      take();
      auto e = std::make_unique<BetweenExpr>(left->pos);
      e->operand = std::move(left);
      e->negated = negated;
      e->low = parse_bit_or();
      expect(Keyword::kAnd);
      e->high = parse_predicate();
      return e;
    }
    case Keyword::kLike: {
      pos_ += ahead;
      take();
      auto e = std::make_unique<LikeExpr>(left->pos);
      e->operand = std::move(left);
      e->negated = negated;
      e->pattern = parse_unary();
      if (accept(Keyword::kEscape)) e->escape = parse_unary();
      return e;
    }
    case Keyword::kRegexp:
    case Keyword::kRlike: {
      pos_ += ahead;
      take();
      auto e = std::make_unique<RegexpExpr>(left->pos);
      e->operand = std::move(left);
      e->negated = negated;
      e->pattern = parse_bit_or();
      return e;
    }
    default:
      return left;
  }
}

ExprPtr Parser::parse_bit_or() {
  ExprPtr left = parse_bit_and();
  while (accept(TokenKind::kPipe))
    left = make_binary(BinaryOp::kBitOr, std::move(left), parse_bit_and());
  return left;
}

ExprPtr Parser::parse_bit_and() {
  ExprPtr left = parse_shift();
  while (accept(TokenKind::kAmp))
    left = make_binary(BinaryOp::kBitAnd, std::move(left), parse_shift());
  return left;
}

ExprPtr Parser::parse_shift() {
  ExprPtr left = parse_additive();
  for (;;) {
    if (accept(TokenKind::kShiftLeft)) {
      left = make_binary(BinaryOp::kShiftLeft, std::move(left), parse_additive());
    } else if (accept(TokenKind::kShiftRight)) {
      left = make_binary(BinaryOp::kShiftRight, std::move(left), parse_additive());
    } else {
      return left;
    }
  }
}

ExprPtr Parser::parse_additive() {
  ExprPtr left = parse_multiplicative();
  for (;;) {
    if (accept(TokenKind::kPlus)) {
      left = make_binary(BinaryOp::kAdd, std::move(left), parse_multiplicative());
    } else if (accept(TokenKind::kMinus)) {
      left = make_binary(BinaryOp::kSub, std::move(left), parse_multiplicative());
    } else {
      return left;
    }
  }
}

ExprPtr Parser::parse_multiplicative() {
  ExprPtr left = parse_bit_xor();
  for (;;) {
    BinaryOp op;
    if (peek().is(TokenKind::kStar)) {
      op = BinaryOp::kMul;
    } else if (peek().is(TokenKind::kSlash)) {
      op = BinaryOp::kDiv;
    } else if (peek().is(Keyword::kDiv)) {
      op = BinaryOp::kIntDiv;
    } else if (peek().is(TokenKind::kPercent) || peek().is(Keyword::kMod)) {
      op = BinaryOp::kMod;
    } else {
      return left;
    }
    take();
    left = make_binary(op, std::move(left), parse_bit_xor());
  }
}

ExprPtr Parser::parse_bit_xor() {
  ExprPtr left = parse_unary();
  while (accept(TokenKind::kCaret))
    left = make_binary(BinaryOp::kBitXor, std::move(left), parse_unary());
  return left;
}

ExprPtr Parser::parse_unary() {
  DepthGuard guard(*this);
  const Token& t = peek();
  SourcePos pos = pos_of(t);
  if (t.is(TokenKind::kMinus) || t.is(TokenKind::kTilde) || t.is(TokenKind::kBang)) {
    take();
    auto e = std::make_unique<UnaryExpr>(pos);
    e->op = t.is(TokenKind::kMinus)   ? UnaryOp::kNegate
            : t.is(TokenKind::kTilde) ? UnaryOp::kBitNot
                                      : UnaryOp::kNot;
    e->operand = parse_unary();
    return e;
  }
  if (t.is(TokenKind::kPlus)) {  // unary plus is a no-op in MySQL
    take();
    return parse_unary();
  }
  if (t.is(Keyword::kBinary) && !peek(1).is(TokenKind::kLeftParen)) {
    // BINARY x is CAST(x AS BINARY).
    take();
    auto e = std::make_unique<CastExpr>(pos);
    e->type.name = TypeName::kBinary;
    e->operand = parse_unary();
    return e;
  }
  ExprPtr e = parse_json_arrows(parse_primary());
  while (accept(Keyword::kCollate)) {
    auto c = std::make_unique<CollateExpr>(e->pos);
    c->operand = std::move(e);
    c->collation = parse_name_or_string();
    e = std::move(c);
  }
  return e;
}

// MySQL's column->'path' and column->>'path': JSON_EXTRACT and JSON_UNQUOTE of it.
ExprPtr Parser::parse_json_arrows(ExprPtr e) {
  for (;;) {
    const bool unquote = peek().is(TokenKind::kJsonUnquoteExtract);
    if (!unquote && !peek().is(TokenKind::kJsonExtract)) return e;
    take();
    const SourcePos pos = e->pos;  // the column label starts at the column
    auto extract = std::make_unique<FunctionExpr>(pos);
    extract->name = "JSON_EXTRACT";
    extract->args.push_back(std::move(e));
    extract->args.push_back(parse_literal());
    e = std::move(extract);
    if (unquote) {
      auto outer = std::make_unique<FunctionExpr>(pos);
      outer->name = "JSON_UNQUOTE";
      outer->args.push_back(std::move(e));
      e = std::move(outer);
    }
  }
}

ExprPtr Parser::parse_literal() {
  const Token& t = peek();
  auto e = std::make_unique<LiteralExpr>(pos_of(t));
  e->text = std::string(t.text);
  switch (t.kind) {
    case TokenKind::kInteger:
      e->literal_kind = LiteralKind::kInteger;
      break;
    case TokenKind::kDecimal:
      e->literal_kind = LiteralKind::kDecimal;
      break;
    case TokenKind::kFloat:
      e->literal_kind = LiteralKind::kFloat;
      break;
    case TokenKind::kHex:
      e->literal_kind = LiteralKind::kHex;
      e->value = decode_hex_or_bit(t);
      take();
      return e;
    case TokenKind::kBit:
      e->literal_kind = LiteralKind::kBit;
      e->value = decode_hex_or_bit(t);
      take();
      return e;
    case TokenKind::kString: {
      e->literal_kind = LiteralKind::kString;
      if (t.national) e->charset = "utf8mb3";
      take();
      e->value = decode_string(t);
      while (peek().is(TokenKind::kString) && !peek().national) {
        const Token& more = take();
        e->text += ' ';
        e->text += more.text;
        e->value += decode_string(more);
      }
      return e;
    }
    default:
      fail();
  }
  e->value = e->text;
  take();
  return e;
}

ExprPtr Parser::parse_variable() {
  const Token& t = peek();
  SourcePos pos = pos_of(t);
  if (t.is(TokenKind::kUserVar) || t.is(TokenKind::kAt)) {
    std::string name;
    const bool quoted = t.is(TokenKind::kAt);
    if (!quoted) name = std::string(t.text.substr(1));
    take();
    if (quoted) {  // @'name' / @`name` / @"name"
      const Token& n = peek();
      if (n.kind != TokenKind::kString && n.kind != TokenKind::kQuotedIdent) fail();
      take();
      name = n.kind == TokenKind::kString ? decode_string(n) : decode_identifier(n);
    }
    if (accept(TokenKind::kAssign)) {
      // @name := expr: the right side is a whole expression (lowest precedence).
      DepthGuard guard(*this);
      auto e = std::make_unique<AssignUserVariableExpr>(pos);
      ++user_variable_assignments_;
      e->name = std::move(name);
      e->value = parse_expr();
      return e;
    }
    auto e = std::make_unique<UserVariableExpr>(pos);
    e->name = std::move(name);
    return e;
  }
  expect(TokenKind::kAtAt);
  auto e = std::make_unique<SystemVariableExpr>(pos);
  if ((peek().is(Keyword::kSession) || peek().is(Keyword::kGlobal) || peek().is(Keyword::kLocal)) &&
      peek(1).is(TokenKind::kDot)) {
    e->scope = peek().is(Keyword::kGlobal) ? VariableScope::kGlobal : VariableScope::kSession;
    take();
    take();
  }
  e->name = parse_identifier_after_dot().name;
  // Structured names (@@keycache.x) are rare; keep the dotted spelling.
  while (peek().is(TokenKind::kDot)) {
    take();
    e->name += '.';
    e->name += parse_identifier_after_dot().name;
  }
  return e;
}

ExprPtr Parser::parse_primary() {
  const Token& t = peek();
  SourcePos pos = pos_of(t);
  switch (t.kind) {
    case TokenKind::kInteger:
    case TokenKind::kDecimal:
    case TokenKind::kFloat:
    case TokenKind::kHex:
    case TokenKind::kBit:
    case TokenKind::kString:
      return parse_literal();
    case TokenKind::kParam: {
      take();
      auto e = std::make_unique<PlaceholderExpr>(pos);
      e->index = placeholder_count_++;
      return e;
    }
    case TokenKind::kUserVar:
    case TokenKind::kAt:
    case TokenKind::kAtAt:
      return parse_variable();
    case TokenKind::kLeftParen: {
      take();
      if (peek().is(Keyword::kSelect) ||
          (peek().is(TokenKind::kLeftParen) && peek(1).is(Keyword::kSelect))) {
        auto e = std::make_unique<SubqueryExpr>(pos);
        e->query = parse_query_expr();
        expect(TokenKind::kRightParen);
        return e;
      }
      ExprPtr first = parse_expr();
      if (!peek().is(TokenKind::kComma)) {
        expect(TokenKind::kRightParen);
        return first;  // parentheses only group: the tree keeps the grouping
      }
      auto row = std::make_unique<RowExpr>(pos);
      row->items.push_back(std::move(first));
      while (accept(TokenKind::kComma)) row->items.push_back(parse_expr());
      expect(TokenKind::kRightParen);
      return row;
    }
    case TokenKind::kWord:
    case TokenKind::kQuotedIdent:
      return parse_word_expr();
    default:
      fail();
  }
}

std::unique_ptr<ColumnExpr> Parser::parse_column_ref() {
  SourcePos pos = here();
  auto c = std::make_unique<ColumnExpr>(pos);
  Identifier a = parse_identifier();
  if (!accept(TokenKind::kDot)) {
    c->column = std::move(a);
    return c;
  }
  Identifier b = parse_identifier_after_dot();
  if (!accept(TokenKind::kDot)) {
    c->table = std::move(a);
    c->column = std::move(b);
    return c;
  }
  c->db = std::move(a);
  c->table = std::move(b);
  c->column = parse_identifier_after_dot();
  return c;
}

ExprPtr Parser::parse_word_expr() {
  const Token& t = peek();
  SourcePos pos = pos_of(t);
  const Keyword k = t.kind == TokenKind::kWord ? t.keyword : Keyword::kNone;
  const bool call = peek(1).is(TokenKind::kLeftParen);

  switch (k) {
    case Keyword::kNull:
    case Keyword::kTrue:
    case Keyword::kFalse: {
      take();
      auto e = std::make_unique<LiteralExpr>(pos);
      e->literal_kind = k == Keyword::kNull   ? LiteralKind::kNull
                        : k == Keyword::kTrue ? LiteralKind::kTrue
                                              : LiteralKind::kFalse;
      e->text = std::string(t.text);
      return e;
    }
    case Keyword::kExists: {
      take();
      expect(TokenKind::kLeftParen);
      auto e = std::make_unique<ExistsExpr>(pos);
      e->query = parse_query_expr();
      expect(TokenKind::kRightParen);
      return e;
    }
    case Keyword::kCase:
      return parse_case();
    case Keyword::kCast:
      if (call) return parse_cast_or_convert(false);
      break;
    case Keyword::kConvert:
      return parse_cast_or_convert(true);
    case Keyword::kInterval:
      return parse_interval();
    case Keyword::kExtract:
      if (call) {
        take();
        take();
        auto e = std::make_unique<ExtractExpr>(pos);
        e->unit = parse_interval_unit();
        expect(Keyword::kFrom);
        e->operand = parse_expr();
        expect(TokenKind::kRightParen);
        return e;
      }
      break;
    case Keyword::kDefault:
      if (!call) {
        take();
        return std::make_unique<DefaultExpr>(pos);
      }
      break;
    case Keyword::kValues: {
      // VALUES(col) in ON DUPLICATE KEY UPDATE.
      take();
      expect(TokenKind::kLeftParen);
      auto e = std::make_unique<InsertValueExpr>(pos);
      e->column = parse_column_ref();
      expect(TokenKind::kRightParen);
      return e;
    }
    default:
      break;
  }

  if (t.kind == TokenKind::kWord && peek(1).is(TokenKind::kString) && t.text.size() > 1 &&
      t.text[0] == '_' && is_charset_introducer(t.text)) {
    take();
    ExprPtr lit = parse_literal();
    lit->as<LiteralExpr>().charset = to_upper(t.text.substr(1)) == "BINARY"
                                         ? std::string("binary")
                                         : std::string(t.text.substr(1));
    lit->pos = pos;
    return lit;
  }
  if (t.kind == TokenKind::kWord && (peek(1).is(TokenKind::kHex) || peek(1).is(TokenKind::kBit)) &&
      t.text.size() > 1 && t.text[0] == '_' && is_charset_introducer(t.text)) {
    take();
    ExprPtr lit = parse_literal();
    lit->as<LiteralExpr>().charset = std::string(t.text.substr(1));
    lit->pos = pos;
    return lit;
  }

  if (t.kind == TokenKind::kWord && call && (!is_reserved(k) || reserved_function_name(k))) {
    take();
    return parse_function_call(to_upper(t.text), pos);
  }
  if (function_without_parens(k)) {
    take();
    auto f = std::make_unique<FunctionExpr>(pos);
    f->name = to_upper(t.text);
    f->no_parens = true;
    return f;
  }
  // Typed temporal literals: DATE '2024-01-01', TIME '..', TIMESTAMP '..'.
  if ((k == Keyword::kDate || k == Keyword::kTime || k == Keyword::kTimestamp) &&
      peek(1).is(TokenKind::kString)) {
    take();
    auto f = std::make_unique<FunctionExpr>(pos);
    f->name = to_upper(t.text);
    f->args.push_back(parse_literal());
    return f;
  }

  // A column reference, or t.* / db.t.*.
  if (!peek_identifier()) fail();
  if (peek(1).is(TokenKind::kDot) && peek(2).is(TokenKind::kStar)) {
    auto s = std::make_unique<StarExpr>(pos);
    s->table = parse_identifier();
    take();
    take();
    return s;
  }
  if (peek(1).is(TokenKind::kDot) && peek(3).is(TokenKind::kDot) && peek(4).is(TokenKind::kStar)) {
    auto s = std::make_unique<StarExpr>(pos);
    s->db = parse_identifier();
    take();
    s->table = parse_identifier_after_dot();
    take();
    take();
    return s;
  }
  return parse_column_ref();
}

ExprPtr Parser::parse_function_call(std::string name, SourcePos pos) {
  expect(TokenKind::kLeftParen);
  auto f = std::make_unique<FunctionExpr>(pos);
  f->name = std::move(name);
  if (accept(TokenKind::kRightParen)) return f;
  if (is_aggregate_name(f->name)) {
    if (f->name == "COUNT" && peek().is(TokenKind::kStar)) {
      take();
      f->star = true;
      expect(TokenKind::kRightParen);
      return f;
    }
    if (accept(Keyword::kDistinct)) {
      f->distinct = true;
    } else {
      accept(Keyword::kAll);
    }
  }
  if (f->name == "SUBSTRING" || f->name == "SUBSTR") {
    // SUBSTRING(s FROM pos [FOR len]) is SUBSTRING(s, pos[, len]).
    f->args.push_back(parse_expr());
    if (accept(Keyword::kFrom)) {
      f->args.push_back(parse_expr());
      if (accept(Keyword::kFor)) f->args.push_back(parse_expr());
      expect(TokenKind::kRightParen);
      return f;
    }
    while (accept(TokenKind::kComma)) f->args.push_back(parse_expr());
    expect(TokenKind::kRightParen);
    return f;
  }
  if (f->name == "TRIM") {
    // TRIM([LEADING | TRAILING | BOTH] [remstr] FROM s) and TRIM(remstr FROM s) become
    // the function "TRIM <side>" with arguments (s[, remstr]): a name no query can
    // spell, so a plain TRIM(s) call stays what it is.
    std::string side;
    if (accept(Keyword::kLeading)) {
      side = "LEADING";
    } else if (accept(Keyword::kTrailing)) {
      side = "TRAILING";
    } else if (accept(Keyword::kBoth)) {
      side = "BOTH";
    }
    if (!side.empty() && accept(Keyword::kFrom)) {
      f->name = "TRIM " + side;
      f->args.push_back(parse_expr());
      expect(TokenKind::kRightParen);
      return f;
    }
    ExprPtr first = parse_expr();
    if (!side.empty() || peek().is(Keyword::kFrom)) {
      expect(Keyword::kFrom);
      f->name = "TRIM " + (side.empty() ? std::string("BOTH") : side);
      f->args.push_back(parse_expr());
      f->args.push_back(std::move(first));
      expect(TokenKind::kRightParen);
      return f;
    }
    f->args.push_back(std::move(first));
    while (accept(TokenKind::kComma)) f->args.push_back(parse_expr());
    expect(TokenKind::kRightParen);
    return f;
  }
  if (f->name == "POSITION") {
    // POSITION(sub IN s) is LOCATE(sub, s). The operand must not swallow IN.
    f->name = "LOCATE";
    f->args.push_back(parse_bit_or());
    expect(Keyword::kIn);
    f->args.push_back(parse_expr());
    expect(TokenKind::kRightParen);
    return f;
  }
  do {
    f->args.push_back(parse_expr());
  } while (accept(TokenKind::kComma));
  if (f->name == "GROUP_CONCAT" && accept(Keyword::kSeparator)) {
    // Kept as a trailing string argument named by the binder.
    f->args.push_back(parse_literal());
  }
  expect(TokenKind::kRightParen);
  return f;
}

ExprPtr Parser::parse_case() {
  SourcePos pos = here();
  expect(Keyword::kCase);
  auto e = std::make_unique<CaseExpr>(pos);
  if (!peek().is(Keyword::kWhen)) e->operand = parse_expr();
  if (!peek().is(Keyword::kWhen)) fail();
  while (accept(Keyword::kWhen)) {
    ExprPtr when = parse_expr();
    expect(Keyword::kThen);
    e->whens.emplace_back(std::move(when), parse_expr());
  }
  if (accept(Keyword::kElse)) e->else_value = parse_expr();
  if (!accept_word("END")) fail();
  return e;
}

ExprPtr Parser::parse_cast_or_convert(bool convert) {
  SourcePos pos = here();
  take();
  expect(TokenKind::kLeftParen);
  ExprPtr operand = parse_expr();
  if (convert && accept(Keyword::kUsing)) {
    auto e = std::make_unique<ConvertUsingExpr>(pos);
    e->operand = std::move(operand);
    e->charset = parse_name_or_string();
    expect(TokenKind::kRightParen);
    return e;
  }
  if (convert) {
    expect(TokenKind::kComma);
  } else {
    expect(Keyword::kAs);
  }
  auto e = std::make_unique<CastExpr>(pos);
  e->operand = std::move(operand);
  e->type = parse_cast_type();
  expect(TokenKind::kRightParen);
  return e;
}

DataType Parser::parse_cast_type() {
  DataType type;
  if (accept(Keyword::kSigned)) {
    type.name = TypeName::kSigned;
    if (!accept(Keyword::kInt)) accept(Keyword::kInteger);
    return type;
  }
  if (accept(Keyword::kUnsigned)) {
    type.name = TypeName::kUnsigned;
    if (!accept(Keyword::kInt)) accept(Keyword::kInteger);
    return type;
  }
  switch (peek().keyword) {
    case Keyword::kChar:
    case Keyword::kBinary:
    case Keyword::kDecimal:
    case Keyword::kDate:
    case Keyword::kTime:
    case Keyword::kDatetime:
    case Keyword::kDouble:
    case Keyword::kFloat:
    case Keyword::kJson:
    case Keyword::kNchar:
    case Keyword::kReal:
    case Keyword::kYear:
      if (peek().kind == TokenKind::kWord) return parse_data_type();
      break;
    default:
      break;
  }
  fail();
}

bool Parser::peek_interval_unit() const {
  switch (peek().keyword) {
    case Keyword::kMicrosecond:
    case Keyword::kSecond:
    case Keyword::kMinute:
    case Keyword::kHour:
    case Keyword::kDay:
    case Keyword::kWeek:
    case Keyword::kMonth:
    case Keyword::kQuarter:
    case Keyword::kYear:
    case Keyword::kSecondMicrosecond:
    case Keyword::kMinuteMicrosecond:
    case Keyword::kMinuteSecond:
    case Keyword::kHourMicrosecond:
    case Keyword::kHourSecond:
    case Keyword::kHourMinute:
    case Keyword::kDayMicrosecond:
    case Keyword::kDaySecond:
    case Keyword::kDayMinute:
    case Keyword::kDayHour:
    case Keyword::kYearMonth:
      return peek().kind == TokenKind::kWord;
    default:
      return false;
  }
}

IntervalUnit Parser::parse_interval_unit() {
  if (!peek_interval_unit()) fail();
  Keyword k = take().keyword;
  switch (k) {
    case Keyword::kMicrosecond:
      return IntervalUnit::kMicrosecond;
    case Keyword::kSecond:
      return IntervalUnit::kSecond;
    case Keyword::kMinute:
      return IntervalUnit::kMinute;
    case Keyword::kHour:
      return IntervalUnit::kHour;
    case Keyword::kDay:
      return IntervalUnit::kDay;
    case Keyword::kWeek:
      return IntervalUnit::kWeek;
    case Keyword::kMonth:
      return IntervalUnit::kMonth;
    case Keyword::kQuarter:
      return IntervalUnit::kQuarter;
    case Keyword::kYear:
      return IntervalUnit::kYear;
    case Keyword::kSecondMicrosecond:
      return IntervalUnit::kSecondMicrosecond;
    case Keyword::kMinuteMicrosecond:
      return IntervalUnit::kMinuteMicrosecond;
    case Keyword::kMinuteSecond:
      return IntervalUnit::kMinuteSecond;
    case Keyword::kHourMicrosecond:
      return IntervalUnit::kHourMicrosecond;
    case Keyword::kHourSecond:
      return IntervalUnit::kHourSecond;
    case Keyword::kHourMinute:
      return IntervalUnit::kHourMinute;
    case Keyword::kDayMicrosecond:
      return IntervalUnit::kDayMicrosecond;
    case Keyword::kDaySecond:
      return IntervalUnit::kDaySecond;
    case Keyword::kDayMinute:
      return IntervalUnit::kDayMinute;
    case Keyword::kDayHour:
      return IntervalUnit::kDayHour;
    default:
      return IntervalUnit::kYearMonth;
  }
}

ExprPtr Parser::parse_interval() {
  SourcePos pos = here();
  expect(Keyword::kInterval);
  ExprPtr value = parse_expr();
  if (!peek_interval_unit() && value->kind == ExprKind::kRow) {
    // INTERVAL(n, n1, n2, ...) is a function, not a date interval.
    auto f = std::make_unique<FunctionExpr>(pos);
    f->name = "INTERVAL";
    f->args = std::move(value->as<RowExpr>().items);
    return f;
  }
  auto e = std::make_unique<IntervalExpr>(pos);
  e->value = std::move(value);
  e->unit = parse_interval_unit();
  return e;
}

ExprPtr Parser::parse_limit_value() {
  const Token& t = peek();
  if (t.is(TokenKind::kInteger)) return parse_literal();
  if (t.is(TokenKind::kParam)) return parse_primary();
  fail();
}

}  // namespace duo::sql
