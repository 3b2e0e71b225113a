// Query and DML grammar: SELECT blocks, UNION, table references and joins, ORDER BY,
// LIMIT, locking clauses; INSERT/REPLACE, UPDATE, DELETE.
#include "sql-frontend/parser/grammar.h"

namespace duo::sql {

StatementPtr Parser::parse_select_statement() {
  auto stmt = std::make_unique<SelectStatement>(here());
  stmt->query = parse_query_expr();
  return stmt;
}

StatementPtr Parser::parse_do() {
  auto stmt = std::make_unique<SelectStatement>(here());
  expect(Keyword::kDo);
  stmt->discard_result = true;
  stmt->query = std::make_unique<QueryExpr>();
  stmt->query->pos = here();
  stmt->query->select = std::make_unique<SelectBlock>();
  stmt->query->select->pos = here();
  do {
    if (peek().is(TokenKind::kStar)) fail();  // DO takes expressions only
    parse_select_item(*stmt->query->select);
  } while (accept(TokenKind::kComma));
  return stmt;
}

QueryPtr Parser::parse_query_expr() {
  DepthGuard guard(*this);
  QueryPtr left = parse_query_term();
  while (peek().is(Keyword::kUnion)) {
    // An unparenthesised block before UNION may not have its own ORDER BY / LIMIT /
    // locking clause (MySQL: "Incorrect usage of UNION and ORDER BY" is a 1221, but its
    // grammar already refuses it at the UNION token).
    if (left->select && !left->parenthesized &&
        (!left->select->order_by.empty() || left->select->limit ||
         left->select->lock != LockMode::kNone)) {
      fail();
    }
    take();
    auto u = std::make_unique<QueryExpr>();
    u->pos = left->pos;
    if (accept(Keyword::kAll)) {
      u->union_all = true;
    } else {
      accept(Keyword::kDistinct);
    }
    u->left = std::move(left);
    u->right = parse_query_term();
    left = std::move(u);
  }
  if (left->is_union()) {
    // ORDER BY / LIMIT after the last unparenthesised block belong to the whole union.
    QueryExpr* last = left->right.get();
    if (last->select && !last->parenthesized) {
      left->order_by = std::move(last->select->order_by);
      last->select->order_by.clear();
      left->limit = std::move(last->select->limit);
      last->select->limit.reset();
    }
    if (left->order_by.empty() && peek().is(Keyword::kOrder)) left->order_by = parse_order_by();
    if (!left->limit && peek().is(Keyword::kLimit)) left->limit = parse_limit();
  } else if (left->parenthesized) {
    // (SELECT ...) ORDER BY ... LIMIT ...
    if (peek().is(Keyword::kOrder)) left->order_by = parse_order_by();
    if (peek().is(Keyword::kLimit)) left->limit = parse_limit();
  }
  return left;
}

QueryPtr Parser::parse_query_term() {
  if (peek().is(TokenKind::kLeftParen)) {
    take();
    QueryPtr inner = parse_query_expr();
    expect(TokenKind::kRightParen);
    if (inner->parenthesized) {
      // ((SELECT ...)): one level of grouping is enough to keep.
      return inner;
    }
    inner->parenthesized = true;
    return inner;
  }
  auto q = std::make_unique<QueryExpr>();
  q->pos = here();
  q->select = parse_select_block();
  return q;
}

std::unique_ptr<SelectBlock> Parser::parse_select_block() {
  auto block = std::make_unique<SelectBlock>();
  block->pos = here();
  expect(Keyword::kSelect);
  for (;;) {
    if (accept(Keyword::kDistinct) || accept(Keyword::kDistinctrow)) {
      block->distinct = true;
    } else if (accept(Keyword::kAll) || accept(Keyword::kHighPriority) ||
               accept(Keyword::kStraightJoin) || accept(Keyword::kSqlNoCache) ||
               accept(Keyword::kSqlCache)) {
      // Accepted and without effect here (no query cache; join order is the planner's).
    } else if (accept(Keyword::kSqlCalcFoundRows)) {
      block->sql_calc_found_rows = true;
    } else {
      break;
    }
  }
  do {
    parse_select_item(*block);
  } while (accept(TokenKind::kComma));
  if (accept(Keyword::kFrom)) {
    if (!accept(Keyword::kDual)) block->from = parse_table_ref_list();
  }
  if (accept(Keyword::kWhere)) block->where = parse_expr();
  if (peek().is(Keyword::kGroup)) {
    take();
    expect(Keyword::kBy);
    do {
      block->group_by.push_back(parse_expr());
      // GROUP BY a ASC/DESC was removed in MySQL 8.0: not accepted.
    } while (accept(TokenKind::kComma));
    if (peek().is(Keyword::kWith) && peek(1).is(Keyword::kRollup)) {
      take();
      take();
      block->with_rollup = true;
    }
  }
  if (accept(Keyword::kHaving)) block->having = parse_expr();
  if (peek().is(Keyword::kOrder)) block->order_by = parse_order_by();
  if (peek().is(Keyword::kLimit)) block->limit = parse_limit();
  if (peek().is(Keyword::kFor)) {
    take();
    if (accept(Keyword::kUpdate)) {
      block->lock = LockMode::kForUpdate;
    } else if (accept(Keyword::kShare)) {
      block->lock = LockMode::kShare;
    } else {
      fail();
    }
  } else if (peek().is(Keyword::kLock)) {
    take();
    expect(Keyword::kIn);
    expect(Keyword::kShare);
    expect(Keyword::kMode);
    block->lock = LockMode::kShare;
  }
  return block;
}

void Parser::parse_select_item(SelectBlock& block) {
  SelectItem item;
  if (peek().is(TokenKind::kStar)) {
    item.expr = std::make_unique<StarExpr>(here());
    take();
    block.items.push_back(std::move(item));
    return;
  }
  item.expr = parse_expr();
  item.alias = parse_optional_alias(/*allow_string=*/true);
  block.items.push_back(std::move(item));
}

std::optional<Identifier> Parser::parse_optional_alias(bool allow_string) {
  const bool as = accept(Keyword::kAs);
  const Token& t = peek();
  if (allow_string && t.is(TokenKind::kString)) {
    take();
    return Identifier{decode_string(t), true, pos_of(t)};
  }
  if (peek_identifier()) return parse_identifier();
  if (as) fail();
  return std::nullopt;
}

std::vector<TableRefPtr> Parser::parse_table_ref_list() {
  std::vector<TableRefPtr> list;
  do {
    list.push_back(parse_table_ref());
  } while (accept(TokenKind::kComma));
  return list;
}

TableRefPtr Parser::parse_table_ref() {
  TableRefPtr left = parse_table_factor();
  for (;;) {
    JoinKind kind;
    bool natural = false;
    bool condition_required = false;
    if (peek().is(Keyword::kJoin) || peek().is(Keyword::kInner) || peek().is(Keyword::kCross)) {
      if (!peek().is(Keyword::kJoin)) take();
      expect(Keyword::kJoin);
      kind = JoinKind::kInner;
    } else if (peek().is(Keyword::kStraightJoin)) {
      take();
      kind = JoinKind::kStraight;
    } else if (peek().is(Keyword::kLeft) || peek().is(Keyword::kRight)) {
      kind = take().is(Keyword::kLeft) ? JoinKind::kLeft : JoinKind::kRight;
      accept(Keyword::kOuter);
      expect(Keyword::kJoin);
      condition_required = true;
    } else if (peek().is(Keyword::kNatural)) {
      take();
      natural = true;
      kind = JoinKind::kInner;
      if (peek().is(Keyword::kLeft) || peek().is(Keyword::kRight)) {
        kind = take().is(Keyword::kLeft) ? JoinKind::kLeft : JoinKind::kRight;
        accept(Keyword::kOuter);
      } else {
        accept(Keyword::kInner);
      }
      expect(Keyword::kJoin);
    } else {
      return left;
    }
    auto join = std::make_unique<TableRef>();
    join->kind = TableRefKind::kJoin;
    join->pos = left->pos;
    join->join = kind;
    join->natural = natural;
    join->left = std::move(left);
    join->right = parse_table_factor();
    if (!natural) {
      if (accept(Keyword::kOn)) {
        join->on = parse_expr();
      } else if (accept(Keyword::kUsing)) {
        join->using_ = parse_identifier_list();
      } else if (condition_required) {
        fail();
      }
    }
    left = std::move(join);
  }
}

TableRefPtr Parser::parse_table_factor() {
  DepthGuard guard(*this);
  auto ref = std::make_unique<TableRef>();
  ref->pos = here();
  if (peek().is(TokenKind::kLeftParen)) {
    if (peek(1).is(Keyword::kSelect) ||
        (peek(1).is(TokenKind::kLeftParen) && peek(2).is(Keyword::kSelect))) {
      // A derived table: (SELECT ...) [AS] alias, or ((SELECT ...) UNION ...) alias.
      take();
      ref->kind = TableRefKind::kDerived;
      ref->query = parse_query_expr();
      expect(TokenKind::kRightParen);
      ref->alias = parse_optional_alias(false);
      return ref;
    }
    // A parenthesised join: (t1 JOIN t2 ON ...) or (t1, t2).
    take();
    std::vector<TableRefPtr> list = parse_table_ref_list();
    expect(TokenKind::kRightParen);
    TableRefPtr result = std::move(list[0]);
    for (size_t i = 1; i < list.size(); ++i) {
      auto join = std::make_unique<TableRef>();
      join->kind = TableRefKind::kJoin;
      join->pos = result->pos;
      join->left = std::move(result);
      join->right = std::move(list[i]);
      result = std::move(join);
    }
    return result;
  }
  ref->kind = TableRefKind::kTable;
  ref->table = parse_object_name();
  ref->alias = parse_optional_alias(false);
  while (peek().is(Keyword::kUse) || peek().is(Keyword::kForce) || peek().is(Keyword::kIgnore)) {
    IndexHint hint;
    Keyword k = take().keyword;
    hint.kind = k == Keyword::kUse     ? IndexHintKind::kUse
                : k == Keyword::kForce ? IndexHintKind::kForce
                                       : IndexHintKind::kIgnore;
    if (!accept(Keyword::kIndex)) expect(Keyword::kKey);
    expect(TokenKind::kLeftParen);
    if (!peek().is(TokenKind::kRightParen)) {
      do {
        if (peek().is(Keyword::kPrimary)) {
          hint.indexes.push_back(Identifier{"PRIMARY", false, here()});
          take();
        } else {
          hint.indexes.push_back(parse_identifier());
        }
      } while (accept(TokenKind::kComma));
    }
    expect(TokenKind::kRightParen);
    ref->index_hints.push_back(std::move(hint));
  }
  return ref;
}

std::vector<OrderItem> Parser::parse_order_by() {
  expect(Keyword::kOrder);
  expect(Keyword::kBy);
  std::vector<OrderItem> items;
  do {
    OrderItem item;
    item.expr = parse_expr();
    if (accept(Keyword::kDesc)) {
      item.descending = true;
    } else {
      accept(Keyword::kAsc);
    }
    items.push_back(std::move(item));
  } while (accept(TokenKind::kComma));
  return items;
}

Limit Parser::parse_limit() {
  expect(Keyword::kLimit);
  Limit limit;
  limit.count = parse_limit_value();
  if (accept(TokenKind::kComma)) {
    // LIMIT offset, count
    limit.offset = std::move(limit.count);
    limit.count = parse_limit_value();
  } else if (accept(Keyword::kOffset)) {
    limit.offset = parse_limit_value();
  }
  return limit;
}

std::vector<Assignment> Parser::parse_assignments() {
  std::vector<Assignment> list;
  do {
    Assignment a;
    a.column = parse_column_ref();
    // MySQL accepts := as well as = in SET lists.
    if (!accept(TokenKind::kEq)) expect(TokenKind::kAssign);
    a.value = parse_expr();
    list.push_back(std::move(a));
  } while (accept(TokenKind::kComma));
  return list;
}

StatementPtr Parser::parse_insert(bool replace) {
  auto stmt = std::make_unique<InsertStatement>(here());
  take();
  stmt->replace = replace;
  if (!accept(Keyword::kLowPriority) && !accept(Keyword::kDelayed)) accept(Keyword::kHighPriority);
  if (accept(Keyword::kIgnore)) stmt->ignore = true;
  accept(Keyword::kInto);
  stmt->table = parse_object_name();
  // (a, b) column list, possibly empty; but "(SELECT" starts a query instead.
  if (peek().is(TokenKind::kLeftParen) && !peek(1).is(Keyword::kSelect) &&
      !peek(1).is(TokenKind::kLeftParen)) {
    take();
    if (!peek().is(TokenKind::kRightParen)) {
      do {
        stmt->columns.push_back(parse_column_ref()->column);
      } while (accept(TokenKind::kComma));
    }
    expect(TokenKind::kRightParen);
  }
  if (accept(Keyword::kValues) || accept(Keyword::kValue)) {
    do {
      expect(TokenKind::kLeftParen);
      std::vector<ExprPtr> row;
      if (!peek().is(TokenKind::kRightParen)) {
        do {
          row.push_back(parse_expr());
        } while (accept(TokenKind::kComma));
      }
      expect(TokenKind::kRightParen);
      stmt->rows.push_back(std::move(row));
    } while (accept(TokenKind::kComma));
  } else if (peek().is(Keyword::kSet) && stmt->columns.empty()) {
    take();
    stmt->set = parse_assignments();
  } else if (peek().is(Keyword::kSelect) || peek().is(TokenKind::kLeftParen)) {
    stmt->select = parse_query_expr();
  } else {
    fail();
  }
  if (peek().is(Keyword::kOn)) {
    take();
    expect(Keyword::kDuplicate);
    expect(Keyword::kKey);
    expect(Keyword::kUpdate);
    stmt->on_duplicate = parse_assignments();
  }
  return stmt;
}

StatementPtr Parser::parse_update() {
  auto stmt = std::make_unique<UpdateStatement>(here());
  expect(Keyword::kUpdate);
  accept(Keyword::kLowPriority);
  if (accept(Keyword::kIgnore)) stmt->ignore = true;
  stmt->tables = parse_table_ref_list();
  expect(Keyword::kSet);
  stmt->set = parse_assignments();
  if (accept(Keyword::kWhere)) stmt->where = parse_expr();
  if (stmt->tables.size() > 1 || stmt->tables.front()->kind != TableRefKind::kTable) {
    // Multi-table: no ORDER BY / LIMIT (MySQL's grammar has none there either).
    stmt->join = std::make_unique<SelectBlock>();
    stmt->join->pos = stmt->pos;
    stmt->join->from = std::move(stmt->tables);
    stmt->join->where = std::move(stmt->where);
    stmt->join->lock = LockMode::kForUpdate;
    stmt->tables.clear();
    return stmt;
  }
  if (peek().is(Keyword::kOrder)) stmt->order_by = parse_order_by();
  if (peek().is(Keyword::kLimit)) {
    take();
    stmt->limit.emplace();
    stmt->limit->count = parse_limit_value();
  }
  return stmt;
}

StatementPtr Parser::parse_delete() {
  auto stmt = std::make_unique<DeleteStatement>(here());
  expect(Keyword::kDelete);
  for (;;) {
    if (accept(Keyword::kLowPriority)) continue;
    if (accept(Keyword::kQuick)) {
      stmt->quick = true;
      continue;
    }
    if (accept(Keyword::kIgnore)) {
      stmt->ignore = true;
      continue;
    }
    break;
  }
  // `t[.*]` of the multi-table forms.
  auto target = [this] {
    ObjectName name;
    name.name = parse_identifier();
    const auto star = [this] {
      if (!peek().is(TokenKind::kDot) || !peek(1).is(TokenKind::kStar)) return false;
      take();
      take();
      return true;
    };
    if (star() || !accept(TokenKind::kDot)) return name;
    name.db = std::move(name.name);
    name.name = parse_identifier_after_dot();
    star();
    return name;
  };
  const bool targets_first = !peek().is(Keyword::kFrom);
  if (!targets_first) take();  // FROM
  stmt->targets.push_back(target());
  if (targets_first || peek().is(TokenKind::kComma) || peek().is(Keyword::kUsing)) {
    while (accept(TokenKind::kComma)) stmt->targets.push_back(target());
    expect(targets_first ? Keyword::kFrom : Keyword::kUsing);
    stmt->join = std::make_unique<SelectBlock>();
    stmt->join->pos = stmt->pos;
    stmt->join->from = parse_table_ref_list();
    if (accept(Keyword::kWhere)) stmt->join->where = parse_expr();
    stmt->join->lock = LockMode::kForUpdate;
    return stmt;
  }
  stmt->table = std::move(stmt->targets.front());
  stmt->targets.clear();
  stmt->alias = parse_optional_alias(false);
  if (accept(Keyword::kWhere)) stmt->where = parse_expr();
  if (peek().is(Keyword::kOrder)) stmt->order_by = parse_order_by();
  if (peek().is(Keyword::kLimit)) {
    take();
    stmt->limit.emplace();
    stmt->limit->count = parse_limit_value();
  }
  return stmt;
}

}  // namespace duo::sql
