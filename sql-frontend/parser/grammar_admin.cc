// Administrative grammar: USE, transactions, SET, SHOW, DESCRIBE/EXPLAIN, KILL,
// CREATE/ALTER/DROP USER, GRANT/REVOKE, FLUSH.
#include "sql-frontend/parser/grammar.h"

namespace duo::sql {

StatementPtr Parser::parse_use() {
  auto stmt = std::make_unique<UseStatement>(here());
  expect(Keyword::kUse);
  stmt->db = parse_identifier();
  return stmt;
}

StatementPtr Parser::parse_transaction() {
  auto stmt = std::make_unique<TransactionStatement>(here());
  const Keyword k = take().keyword;
  switch (k) {
    case Keyword::kBegin:
      stmt->action = TransactionAction::kBegin;
      stmt->work = accept(Keyword::kWork);
      return stmt;
    case Keyword::kStart:
      expect(Keyword::kTransaction);
      stmt->action = TransactionAction::kBegin;
      stmt->start_transaction = true;
      if (at_end()) return stmt;
      do {
        if (accept(Keyword::kWith)) {
          expect(Keyword::kConsistent);
          expect(Keyword::kSnapshot);
          stmt->consistent_snapshot = true;
        } else {
          expect(Keyword::kRead);
          if (accept(Keyword::kOnly)) {
            stmt->access = AccessMode::kReadOnly;
          } else {
            expect(Keyword::kWrite);
            stmt->access = AccessMode::kReadWrite;
          }
        }
      } while (accept(TokenKind::kComma));
      return stmt;
    default:
      stmt->action =
          k == Keyword::kCommit ? TransactionAction::kCommit : TransactionAction::kRollback;
      stmt->work = accept(Keyword::kWork);
      return stmt;
  }
}

StatementPtr Parser::parse_set() {
  auto stmt = std::make_unique<SetStatement>(here());
  expect(Keyword::kSet);
  do {
    stmt->items.push_back(parse_set_item());
  } while (accept(TokenKind::kComma));
  return stmt;
}

void Parser::parse_transaction_characteristics(SetItem& item) {
  for (;;) {
    if (accept(Keyword::kIsolation)) {
      expect(Keyword::kLevel);
      if (accept(Keyword::kSerializable)) {
        item.isolation = IsolationLevel::kSerializable;
      } else if (accept(Keyword::kRepeatable)) {
        expect(Keyword::kRead);
        item.isolation = IsolationLevel::kRepeatableRead;
      } else {
        expect(Keyword::kRead);
        if (accept(Keyword::kCommitted)) {
          item.isolation = IsolationLevel::kReadCommitted;
        } else {
          expect(Keyword::kUncommitted);
          item.isolation = IsolationLevel::kReadUncommitted;
        }
      }
    } else {
      expect(Keyword::kRead);
      if (accept(Keyword::kOnly)) {
        item.access = AccessMode::kReadOnly;
      } else {
        expect(Keyword::kWrite);
        item.access = AccessMode::kReadWrite;
      }
    }
    // SET TRANSACTION a, b: a ',' continues the characteristics only when one follows.
    if (peek().is(TokenKind::kComma) &&
        (peek(1).is(Keyword::kIsolation) || peek(1).is(Keyword::kRead))) {
      take();
      continue;
    }
    return;
  }
}

SetItem Parser::parse_set_item() {
  SetItem item;
  // User variable: @x = v, @x := v, @'x' = v.
  if (peek().is(TokenKind::kUserVar) || peek().is(TokenKind::kAt)) {
    item.kind = SetKind::kUserVariable;
    ExprPtr var = parse_variable();
    if (var->kind == ExprKind::kAssignUserVariable) {
      // SET @x := v: parse_variable took the ':=' already; this is SET's own assignment,
      // not one inside an expression (no deprecation warning).
      --user_variable_assignments_;
      auto& assign = var->as<AssignUserVariableExpr>();
      item.name = assign.name;
      item.value = std::move(assign.value);
      return item;
    }
    item.name = var->as<UserVariableExpr>().name;
    expect(TokenKind::kEq);
    item.value = parse_expr();
    return item;
  }
  // Scope: GLOBAL x / SESSION x / LOCAL x / @@global.x / @@x.
  bool scoped_system = false;
  if (peek().is(TokenKind::kAtAt)) {
    ExprPtr var = parse_variable();
    item.kind = SetKind::kSystemVariable;
    item.scope = var->as<SystemVariableExpr>().scope;
    item.name = var->as<SystemVariableExpr>().name;
    scoped_system = true;
  } else if (peek().is(Keyword::kGlobal) || peek().is(Keyword::kSession) ||
             peek().is(Keyword::kLocal)) {
    item.scope = peek().is(Keyword::kGlobal) ? VariableScope::kGlobal : VariableScope::kSession;
    take();
  }
  if (!scoped_system) {
    if (peek().is(Keyword::kTransaction) && !peek(1).is(TokenKind::kEq)) {
      take();
      item.kind = SetKind::kTransaction;
      parse_transaction_characteristics(item);
      return item;
    }
    if (item.scope == VariableScope::kDefault) {
      if (peek().is(Keyword::kNames) && !peek(1).is(TokenKind::kEq)) {
        take();
        item.kind = SetKind::kNames;
        if (!accept(Keyword::kDefault)) item.name = parse_name_or_string();
        if (accept(Keyword::kCollate)) item.collate = parse_name_or_string();
        return item;
      }
      if ((peek().is(Keyword::kCharset) && !peek(1).is(TokenKind::kEq)) ||
          (peek().is(Keyword::kCharacter) && peek(1).is(Keyword::kSet))) {
        if (take().is(Keyword::kCharacter)) take();
        item.kind = SetKind::kCharacterSet;
        if (!accept(Keyword::kDefault)) item.name = parse_name_or_string();
        return item;
      }
      if (peek().is(Keyword::kPassword)) {
        take();
        item.kind = SetKind::kPassword;
        if (accept(Keyword::kFor)) item.user = parse_user_name();
        expect(TokenKind::kEq);
        item.password = parse_string();
        return item;
      }
    }
    item.kind = SetKind::kSystemVariable;
    const Token& t = peek();
    if (t.kind != TokenKind::kWord && t.kind != TokenKind::kQuotedIdent) fail();
    item.name = decode_identifier(take());
    while (accept(TokenKind::kDot)) {
      item.name += '.';
      item.name += parse_identifier_after_dot().name;
    }
  }
  if (!accept(TokenKind::kEq)) expect(TokenKind::kAssign);
  // Words MySQL accepts as values of system variables although they are reserved.
  const Token& v = peek();
  if ((v.is(Keyword::kOn) || v.is(Keyword::kAll) || v.is(Keyword::kBinary) ||
       v.is(Keyword::kRow)) &&
      (peek(1).is(TokenKind::kComma) || peek(1).kind == TokenKind::kEnd ||
       peek(1).kind == TokenKind::kSemicolon)) {
    auto c = std::make_unique<ColumnExpr>(pos_of(v));
    c->column = Identifier{std::string(keyword_spelling(v.keyword)), false, pos_of(v)};
    take();
    item.value = std::move(c);
    return item;
  }
  item.value = parse_expr();
  return item;
}

void Parser::parse_show_filter(ShowStatement& show, bool allow_where) {
  if (accept(Keyword::kLike)) {
    show.like = parse_string();
  } else if (allow_where && accept(Keyword::kWhere)) {
    show.where = parse_expr();
  }
}

StatementPtr Parser::parse_show() {
  auto stmt = std::make_unique<ShowStatement>(here());
  expect(Keyword::kShow);
  if (accept(Keyword::kFull)) stmt->full = true;
  if (peek().is(Keyword::kGlobal) || peek().is(Keyword::kSession) || peek().is(Keyword::kLocal)) {
    stmt->scope = take().is(Keyword::kGlobal) ? VariableScope::kGlobal : VariableScope::kSession;
    if (!peek().is(Keyword::kVariables) && !peek().is(Keyword::kStatus)) fail();
  }
  const Token& t = peek();
  if (t.kind != TokenKind::kWord) fail();
  auto from_db = [&] {
    if (accept(Keyword::kFrom) || accept(Keyword::kIn)) stmt->db = parse_identifier();
  };
  const bool full = stmt->full;
  switch (t.keyword) {
    case Keyword::kDatabases:
    case Keyword::kSchemas:
      if (full) fail();
      take();
      stmt->what = ShowKind::kDatabases;
      parse_show_filter(*stmt, true);
      return stmt;
    case Keyword::kTables:
      take();
      stmt->what = ShowKind::kTables;
      from_db();
      parse_show_filter(*stmt, true);
      return stmt;
    case Keyword::kTable:
      if (full) fail();
      take();
      expect(Keyword::kStatus);
      stmt->what = ShowKind::kTableStatus;
      from_db();
      parse_show_filter(*stmt, true);
      return stmt;
    case Keyword::kColumns:
    case Keyword::kFields:
      take();
      stmt->what = ShowKind::kColumns;
      if (!accept(Keyword::kFrom)) expect(Keyword::kIn);
      stmt->table = parse_object_name();
      from_db();
      parse_show_filter(*stmt, true);
      return stmt;
    case Keyword::kIndex:
    case Keyword::kIndexes:
    case Keyword::kKeys:
      if (full) fail();
      take();
      stmt->what = ShowKind::kIndex;
      if (!accept(Keyword::kFrom)) expect(Keyword::kIn);
      stmt->table = parse_object_name();
      from_db();
      if (accept(Keyword::kWhere)) stmt->where = parse_expr();
      return stmt;
    case Keyword::kCreate:
      if (full) fail();
      take();
      if (accept(Keyword::kTable)) {
        stmt->what = ShowKind::kCreateTable;
        stmt->table = parse_object_name();
        return stmt;
      }
      if (accept(Keyword::kView)) {
        stmt->what = ShowKind::kCreateView;
        stmt->table = parse_object_name();
        return stmt;
      }
      if (!accept(Keyword::kDatabase)) expect(Keyword::kSchema);
      stmt->what = ShowKind::kCreateDatabase;
      if (accept(Keyword::kIf)) {
        expect(Keyword::kNot);
        expect(Keyword::kExists);
        stmt->if_not_exists = true;
      }
      stmt->db = parse_identifier();
      return stmt;
    case Keyword::kVariables:
    case Keyword::kStatus:
      if (full) fail();
      stmt->what = take().is(Keyword::kVariables) ? ShowKind::kVariables : ShowKind::kStatus;
      parse_show_filter(*stmt, true);
      return stmt;
    case Keyword::kWarnings:
    case Keyword::kErrors:
      if (full) fail();
      stmt->what = take().is(Keyword::kWarnings) ? ShowKind::kWarnings : ShowKind::kErrors;
      if (peek().is(Keyword::kLimit)) stmt->limit = parse_limit();
      return stmt;
    case Keyword::kEngine:
      // SHOW ENGINE name {STATUS | MUTEX}: only STATUS has rows here.
      if (full) fail();
      take();
      stmt->what = ShowKind::kEngineStatus;
      stmt->engine = parse_name_or_string();
      expect(Keyword::kStatus);
      return stmt;
    case Keyword::kStorage:
    case Keyword::kEngines:
      if (full) fail();
      if (take().is(Keyword::kStorage)) expect(Keyword::kEngines);
      stmt->what = ShowKind::kEngines;
      return stmt;
    case Keyword::kProcesslist:
      take();
      stmt->what = ShowKind::kProcesslist;
      return stmt;
    case Keyword::kCollation:
      if (full) fail();
      take();
      stmt->what = ShowKind::kCollation;
      parse_show_filter(*stmt, true);
      return stmt;
    case Keyword::kCharset:
    case Keyword::kCharacter:
      if (full) fail();
      if (take().is(Keyword::kCharacter)) expect(Keyword::kSet);
      stmt->what = ShowKind::kCharset;
      parse_show_filter(*stmt, true);
      return stmt;
    case Keyword::kGrants:
      if (full) fail();
      take();
      stmt->what = ShowKind::kGrants;
      if (accept(Keyword::kFor)) stmt->user = parse_user_name();
      return stmt;
    default:
      fail();
  }
}

StatementPtr Parser::parse_describe_or_explain() {
  SourcePos pos = here();
  take();  // DESCRIBE / DESC / EXPLAIN: MySQL treats all three alike
  std::optional<std::string> format;
  const bool analyze = accept(Keyword::kAnalyze);
  if (peek().is(Keyword::kFormat) && peek(1).is(TokenKind::kEq)) {
    take();
    take();
    format = to_upper(parse_name_or_string());
  }
  const Token& t = peek();
  if (analyze || format || t.is(Keyword::kSelect) || t.is(TokenKind::kLeftParen) ||
      t.is(Keyword::kInsert) || t.is(Keyword::kReplace) || t.is(Keyword::kUpdate) ||
      t.is(Keyword::kDelete)) {
    auto stmt = std::make_unique<ExplainStatement>(pos);
    stmt->format = std::move(format);
    stmt->analyze = analyze;
    if (t.is(Keyword::kSelect) || t.is(TokenKind::kLeftParen)) {
      stmt->statement = parse_select_statement();
    } else if (t.is(Keyword::kInsert) || t.is(Keyword::kReplace)) {
      stmt->statement = parse_insert(t.is(Keyword::kReplace));
    } else if (t.is(Keyword::kUpdate)) {
      stmt->statement = parse_update();
    } else if (t.is(Keyword::kDelete)) {
      stmt->statement = parse_delete();
    } else {
      fail();
    }
    return stmt;
  }
  auto stmt = std::make_unique<DescribeStatement>(pos);
  stmt->table = parse_object_name();
  if (peek_identifier()) {
    stmt->column = parse_identifier();
  } else if (peek().is(TokenKind::kString)) {
    const Token& w = take();
    stmt->column = Identifier{decode_string(w), true, pos_of(w)};
  }
  return stmt;
}

StatementPtr Parser::parse_kill() {
  auto stmt = std::make_unique<KillStatement>(here());
  expect(Keyword::kKill);
  if (accept(Keyword::kQuery)) {
    stmt->query_only = true;
  } else {
    accept(Keyword::kConnection);
  }
  stmt->id = parse_expr();
  return stmt;
}

std::string Parser::parse_user_variable_name() {
  if (!peek().is(TokenKind::kUserVar)) fail();
  return std::string(take().text.substr(1));
}

StatementPtr Parser::parse_prepare() {
  auto stmt = std::make_unique<PrepareStatement>(here());
  take();  // PREPARE
  stmt->name = parse_identifier();
  if (!accept(Keyword::kFrom)) fail();
  if (peek().is(TokenKind::kUserVar)) {
    stmt->from_variable = parse_user_variable_name();
  } else {
    stmt->text = parse_string();
  }
  return stmt;
}

StatementPtr Parser::parse_execute() {
  auto stmt = std::make_unique<ExecuteStatement>(here());
  take();  // EXECUTE
  stmt->name = parse_identifier();
  if (accept(Keyword::kUsing)) {
    do {
      stmt->using_variables.push_back(parse_user_variable_name());
    } while (accept(TokenKind::kComma));
  }
  return stmt;
}

StatementPtr Parser::parse_deallocate_prepare() {
  auto stmt = std::make_unique<DeallocatePrepareStatement>(here());
  if (!accept_word("PREPARE")) fail();
  stmt->name = parse_identifier();
  return stmt;
}

StatementPtr Parser::parse_user_statement(StatementKind kind, SourcePos pos) {
  std::unique_ptr<UserStatement> stmt;
  if (kind == StatementKind::kCreateUser) {
    stmt = std::make_unique<CreateUserStatement>(pos);
  } else if (kind == StatementKind::kDropUser) {
    stmt = std::make_unique<DropUserStatement>(pos);
  } else {
    stmt = std::make_unique<AlterUserStatement>(pos);
  }
  if (accept(Keyword::kIf)) {
    if (kind == StatementKind::kCreateUser) {
      expect(Keyword::kNot);
      stmt->if_not_exists = true;
    } else {
      stmt->if_exists = true;
    }
    expect(Keyword::kExists);
  }
  do {
    UserSpec spec;
    spec.user = parse_user_name();
    if (kind != StatementKind::kDropUser && accept(Keyword::kIdentified)) {
      if (accept(Keyword::kWith)) spec.plugin = parse_name_or_string();
      if (accept(Keyword::kBy)) {
        spec.password = parse_string();
      } else if (!spec.plugin) {
        fail();
      }
    }
    stmt->users.push_back(std::move(spec));
  } while (accept(TokenKind::kComma));
  return stmt;
}

StatementPtr Parser::parse_grant(bool revoke) {
  auto stmt = std::make_unique<GrantStatement>(here());
  take();
  stmt->revoke = revoke;
  // Privileges: words up to ',' '(' or ON, joined by one space ("CREATE USER").
  do {
    Privilege p;
    if (peek().kind != TokenKind::kWord || peek().is(Keyword::kOn)) fail();
    while (peek().kind == TokenKind::kWord && !peek().is(Keyword::kOn)) {
      if (!p.name.empty()) p.name += ' ';
      p.name += to_upper(take().text);
    }
    if (p.name == "ALL PRIVILEGES") p.name = "ALL";
    if (peek().is(TokenKind::kLeftParen)) p.columns = parse_identifier_list();
    stmt->privileges.push_back(std::move(p));
  } while (accept(TokenKind::kComma));
  expect(Keyword::kOn);
  accept(Keyword::kTable);
  // Level: *, *.*, db.*, db.tbl, tbl.
  auto level_part = [&]() -> std::string {
    if (accept(TokenKind::kStar)) return "*";
    return parse_identifier().name;
  };
  std::string first = level_part();
  if (accept(TokenKind::kDot)) {
    stmt->db = first;
    stmt->table = peek().is(TokenKind::kStar) ? (take(), std::string("*"))
                                              : parse_identifier_after_dot().name;
  } else if (first == "*") {
    stmt->db = "";  // the current database
    stmt->table = "*";
  } else {
    stmt->db = "";
    stmt->table = first;
  }
  if (revoke) {
    expect(Keyword::kFrom);
  } else {
    expect(Keyword::kTo);
  }
  do {
    stmt->users.push_back(parse_user_name());
  } while (accept(TokenKind::kComma));
  if (!revoke && peek().is(Keyword::kWith)) {
    take();
    expect(Keyword::kGrant);
    expect(Keyword::kOption);
    stmt->with_grant_option = true;
  }
  return stmt;
}

StatementPtr Parser::parse_flush() {
  auto stmt = std::make_unique<FlushStatement>(here());
  expect(Keyword::kFlush);
  if (accept(Keyword::kLocal) || accept_word("NO_WRITE_TO_BINLOG")) stmt->local = true;
  do {
    const Token& t = peek();
    if (t.kind != TokenKind::kWord) fail();
    stmt->options.push_back(to_upper(take().text));
  } while (accept(TokenKind::kComma));
  return stmt;
}

}  // namespace duo::sql
