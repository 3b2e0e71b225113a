// duo_sqld's QueryHandler; see sql_engine.h.
#include "sql-frontend/executor/sql_engine.h"

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/admin_statements.h"
#include "sql-frontend/executor/global_variables.h"
#include "sql-frontend/executor/privilege_check.h"
#include "sql-frontend/executor/session_registry.h"
#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/executor/statement_retry.h"
#include "sql-frontend/executor/system_variables.h"
#include "sql-frontend/executor/explain_executor.h"
#include "sql-frontend/executor/view_dml.h"
#include "sql-frontend/executor/view_executor.h"
#include "sql-frontend/parser/ascii_case.h"
#include "sql-frontend/parser/ast_printer.h"

namespace duo::sql::executor {

namespace {

server::SqlError to_error(const SqlException& e) {
  return server::SqlError{e.code(), e.sql_state(), e.what()};
}

server::SqlError parse_error(const ParsedStatement& parsed) {
  return server::SqlError{parsed.error->mysql_errno, parsed.error->sqlstate, parsed.error->message};
}

// Statements that read or write table data run in the connection's transaction.
bool is_data_statement(StatementKind kind) {
  return kind == StatementKind::kSelect || kind == StatementKind::kInsert ||
         kind == StatementKind::kUpdate || kind == StatementKind::kDelete ||
         kind == StatementKind::kLoadData;
}

// DDL commits the open transaction first, as in MySQL.
bool is_implicit_commit(StatementKind kind) {
  return kind == StatementKind::kCreateDatabase || kind == StatementKind::kDropDatabase ||
         kind == StatementKind::kCreateTable || kind == StatementKind::kDropTable ||
         kind == StatementKind::kCreateIndex || kind == StatementKind::kDropIndex ||
         kind == StatementKind::kAlterTable || kind == StatementKind::kRenameTable ||
         kind == StatementKind::kTruncateTable || kind == StatementKind::kCreateUser ||
         kind == StatementKind::kDropUser || kind == StatementKind::kAlterUser ||
         kind == StatementKind::kGrant || kind == StatementKind::kDiskObject ||
         kind == StatementKind::kView;
}

// MySQL 8.0's warning 1287 for each @x := expr inside an expression, given when the
// statement is parsed (once per occurrence, however many rows evaluate it).
constexpr const char* kAssignmentDeprecated =
    "Setting user variables within expressions is deprecated and will be removed in a future "
    "release. Consider alternatives: 'SET variable=expression, ...', or 'SELECT "
    "expression(s) INTO variables(s)'.";

}  // namespace

SqlEngine::SqlEngine(api::Cluster* cluster) : cluster_(cluster), catalog_(cluster) {}

SqlEngine::Connection& SqlEngine::connection(server::SessionState& session) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<Connection>& c = connections_[session.connection_id];
  if (!c) {
    std::unique_ptr<api::Session> api_session = cluster_->new_session();
    if (!api_session) {
      connections_.erase(session.connection_id);
      throw SqlException(1040, "08004", "Too many connections");
    }
    c = std::make_unique<Connection>();
    c->api_session = std::move(api_session);
    SessionRegistry::instance().connected(session);
  }
  return *c;
}

std::vector<server::StatementResult> SqlEngine::query(server::SessionState& session,
                                                      std::string_view sql, bool multi_statements) {
  std::vector<server::StatementResult> results;
  if (!multi_statements) {
    ParsedStatement parsed = parse_statement(sql);
    if (!parsed.ok()) return {parse_error(parsed)};
    results.push_back(run_statement(session, *parsed.statement, sql, {}));
    return results;
  }
  ScriptParser script(sql);
  while (script.has_next()) {
    ParsedStatement parsed = script.next();
    if (!parsed.ok()) {
      results.push_back(parse_error(parsed));
      break;
    }
    if (!results.empty() && parsed.statement->kind == StatementKind::kLoadData &&
        parsed.statement->as<LoadDataStatement>().local) {
      // The file request would reach the client before the earlier statements' results
      // (the session sends them when the whole text has run).
      results.push_back(to_error(SqlException(
          1235, "42000",
          "This version of DuoDB doesn't yet support 'LOAD DATA LOCAL INFILE after another "
          "statement of a multi-statement query'")));
      break;
    }
    results.push_back(run_statement(session, *parsed.statement, sql, {}));
    if (std::holds_alternative<server::SqlError>(results.back())) break;
  }
  return results;
}

server::StatementResult SqlEngine::run_statement(server::SessionState& session,
                                                 const Statement& statement,
                                                 std::string_view source,
                                                 const std::vector<SqlValue>& params,
                                                 Prepared* prepared) {
  Connection& c = connection(session);
  StatementActivity activity(session, statement.kind, source);
  // SHOW WARNINGS / SHOW ERRORS read the diagnostics area and leave it as it is.
  const bool keeps_diagnostics = statement.kind == StatementKind::kShow &&
                                 (statement.as<ShowStatement>().what == ShowKind::kWarnings ||
                                  statement.as<ShowStatement>().what == ShowKind::kErrors);
  // What the statement sees as the previous statement's diagnostics (SHOW WARNINGS,
  // @@warning_count), taken before the statement starts its own.
  const std::vector<StatementContext::Warning> previous = c.diagnostics;
  if (!keeps_diagnostics) c.diagnostics.clear();
  c.retry_auto_increment.reset();
  try {
    return run_with_retry(statement_retry_safe(statement, session), [&] {
      if (c.retry_auto_increment) c.retry_auto_increment->reusable = true;
      return dispatch(session, c, statement, source, params, previous, prepared);
    });
  } catch (const SqlException& e) {
    c.row_count = -1;
    if (!keeps_diagnostics) {
      c.diagnostics.clear();
      for (const auto& [code, message] : e.warnings()) {
        c.diagnostics.push_back(StatementContext::Warning{"Warning", code, message});
      }
      c.diagnostics.push_back(StatementContext::Warning{"Error", e.code(), e.what()});
    }
    // A cluster transaction that aborted is over: NDB rolls back the whole transaction
    // on an operation error, so the session leaves its transaction too.
    if (c.transaction) {
      const api::TxState state = c.transaction->state();
      if (state == api::TxState::kAborted || state == api::TxState::kCommitted) {
        c.transaction.reset();
        session.in_transaction = false;
      }
    }
    return to_error(e);
  }
}

server::StatementResult SqlEngine::dispatch(
    server::SessionState& session, Connection& c, const Statement& statement,
    std::string_view source, const std::vector<SqlValue>& params,
    const std::vector<StatementContext::Warning>& previous_diagnostics, Prepared* prepared) {
  if (statement.kind == StatementKind::kTransaction) {
    return transaction_statement(session, c, statement.as<TransactionStatement>());
  }
  switch (statement.kind) {
    case StatementKind::kPrepare:
      return prepare_sql(c, statement.as<PrepareStatement>());
    case StatementKind::kExecute:
      return execute_sql(session, c, statement.as<ExecuteStatement>(), previous_diagnostics);
    case StatementKind::kDeallocatePrepare:
      return deallocate_sql(c, statement.as<DeallocatePrepareStatement>());
    default:
      break;
  }
  if (statement.kind == StatementKind::kSet) {
    const auto& set = statement.as<SetStatement>();
    if (!set.items.empty() && set.items.front().kind == SetKind::kPassword) {
      StatementContext context{session, catalog_, *c.api_session, params};
      return execute_set_password(context, set.items.front());
    }
    server::StatementResult result =
        set_statement(session, c, statement.as<SetStatement>(), params);
    // SET @x := @y := 1: the inner assignment is one inside an expression.
    for (uint32_t k = 0; k < statement.user_variable_assignments; ++k) {
      c.diagnostics.push_back(StatementContext::Warning{"Warning", 1287, kAssignmentDeprecated});
    }
    if (auto* ok = std::get_if<server::OkResult>(&result)) {
      ok->warnings = static_cast<uint16_t>(statement.user_variable_assignments);
    }
    return result;
  }
  // CREATE/DROP TEMPORARY TABLE commit nothing, as in MySQL.
  const bool temporary_ddl =
      (statement.kind == StatementKind::kCreateTable &&
       statement.as<CreateTableStatement>().temporary) ||
      (statement.kind == StatementKind::kDropTable && statement.as<DropTableStatement>().temporary);
  if (is_implicit_commit(statement.kind) && !temporary_ddl && session.in_transaction) {
    end_transaction(session, c, /*commit=*/true);
  }
  StatementContext context{session, catalog_, *c.api_session, params};
  context.source_text = source;
  context.last_insert_id = c.last_insert_id;
  context.retry_auto_increment = &c.retry_auto_increment;
  context.user_variables = &c.user_variables;
  context.temporary_tables = &c.temporary_tables;
  context.previous_diagnostics = &previous_diagnostics;
  context.previous_row_count = c.row_count;
  context.previous_found_rows = c.found_rows;
  for (uint32_t k = 0; k < statement.user_variable_assignments; ++k) {
    context.add_warning(1287, kAssignmentDeprecated);
  }
  if (is_data_statement(statement.kind) && (session.in_transaction || !session.autocommit)) {
    // With autocommit=0 the first data statement opens the transaction.
    session.in_transaction = true;
    context.open_transaction = &c.transaction;
    context.autocommit_statement = false;
  }
  check_privileges(context, statement, prepared != nullptr ? &prepared->privileges : nullptr);
  // A session's temporary table shadows tables and views of its name.
  if (std::optional<server::StatementResult> written = write_temporary_table(context, statement)) {
    auto& ok = std::get<server::OkResult>(*written);
    c.row_count = static_cast<int64_t>(ok.affected_rows);
    c.last_insert_id = context.last_insert_id;
    if (!context.warnings.empty()) {
      c.diagnostics = context.warnings;
      ok.warnings = static_cast<uint16_t>(std::min<uint64_t>(context.warning_count, UINT16_MAX));
    }
    return *written;
  }
  // INSERT/UPDATE/DELETE through a view run as the statement on its table (view_dml.h).
  const std::optional<ViewDml> view_dml = rewrite_view_dml(context, statement);
  const Statement& target = view_dml ? view_dml->statement() : statement;
  if (view_dml) context.source_text = view_dml->text();
  server::StatementResult result;
  switch (statement.kind) {
    case StatementKind::kSelect: {
      const auto& select = statement.as<SelectStatement>();
      result =
          execute_select_planned(context, select, prepared != nullptr ? &prepared->plan : nullptr);
      // DO: the values were computed; the client gets an OK (with their warnings).
      if (select.discard_result && std::holds_alternative<server::ResultSet>(result)) {
        result = server::OkResult{};
      }
      break;
    }
    case StatementKind::kInsert:
      result = execute_insert(context, target.as<InsertStatement>());
      break;
    case StatementKind::kUpdate:
      result = execute_update(context, target.as<UpdateStatement>());
      break;
    case StatementKind::kDelete:
      result = execute_delete(context, target.as<DeleteStatement>());
      break;
    case StatementKind::kCreateTable:
      if (statement.as<CreateTableStatement>().temporary) {
        result = create_temporary_table(context, statement.as<CreateTableStatement>());
      } else if (statement.as<CreateTableStatement>().select) {
        throw_not_supported("CREATE TABLE ... SELECT (of a table that is not TEMPORARY)");
      } else {
        result = execute_admin(context, statement);
      }
      break;
    case StatementKind::kDropTable: {
      const auto& drop = statement.as<DropTableStatement>();
      std::vector<ObjectName> left = drop_temporary_tables(context, drop);
      if (left.size() == drop.tables.size()) {
        result = execute_admin(context, statement);
      } else if (left.empty()) {
        result = server::OkResult{};
      } else {
        // The names that were not temporary tables go to the cluster.
        DropTableStatement rest(drop.pos);
        rest.if_exists = drop.if_exists;
        rest.tables = std::move(left);
        result = execute_admin(context, rest);
      }
      break;
    }
    case StatementKind::kCreateDatabase:
    case StatementKind::kDropDatabase:
    case StatementKind::kUse:
    case StatementKind::kShow:
    case StatementKind::kDescribe:
    case StatementKind::kCreateUser:
    case StatementKind::kDropUser:
    case StatementKind::kAlterUser:
    case StatementKind::kGrant:
    case StatementKind::kKill:
      result = execute_admin(context, statement);
      break;
    case StatementKind::kCreateIndex:
    case StatementKind::kDropIndex:
    case StatementKind::kAlterTable:
    case StatementKind::kRenameTable:
    case StatementKind::kTruncateTable:
      result = execute_ddl(context, statement);
      break;
    case StatementKind::kDiskObject:
      result = execute_disk_object(context, statement.as<DiskObjectStatement>());
      break;
    case StatementKind::kLoadData:
      result = execute_load_data(context, statement.as<LoadDataStatement>());
      break;
    case StatementKind::kView:
      result = execute_view(context, statement.as<ViewStatement>());
      break;
    case StatementKind::kExplain:
      result = execute_explain(context, statement.as<ExplainStatement>());
      break;
    case StatementKind::kTableMaintenance:
      result = execute_table_maintenance(context, statement.as<TableMaintenanceStatement>());
      break;
    default:
      throw_not_supported("this statement");
  }
  c.last_insert_id = context.last_insert_id;
  if (const auto* ok = std::get_if<server::OkResult>(&result)) {
    c.row_count = static_cast<int64_t>(ok->affected_rows);
  } else if (const auto* rows = std::get_if<server::ResultSet>(&result)) {
    c.row_count = -1;
    c.found_rows = context.calc_found_rows.value_or(rows->rows.size());
  }
  if (!context.warnings.empty() || context.warning_count > 0) {
    c.diagnostics = context.warnings;
    const auto count = static_cast<uint16_t>(std::min<uint64_t>(context.warning_count, UINT16_MAX));
    if (auto* ok = std::get_if<server::OkResult>(&result); ok && ok->warnings == 0) {
      ok->warnings = count;
    } else if (auto* rows = std::get_if<server::ResultSet>(&result); rows && rows->warnings == 0) {
      rows->warnings = count;
    }
  }
  return result;
}

void SqlEngine::end_transaction(server::SessionState& session, Connection& c, bool commit) {
  std::unique_ptr<api::Transaction> tx = std::move(c.transaction);
  session.in_transaction = false;
  if (!tx) return;
  if (commit) {
    throw_if_aborted_meanwhile(*tx);
    check(tx->execute(api::ExecType::kCommit));
  } else if (tx->state() == api::TxState::kOpen) {
    // Best effort: destroying the transaction rolls it back at the coordinator anyway.
    tx->execute(api::ExecType::kRollback).ignore_error();
  }
}

server::StatementResult SqlEngine::transaction_statement(server::SessionState& session,
                                                         Connection& c,
                                                         const TransactionStatement& statement) {
  switch (statement.action) {
    case TransactionAction::kBegin:
      // BEGIN inside a transaction commits it first, as MySQL does.
      if (session.in_transaction) end_transaction(session, c, /*commit=*/true);
      session.in_transaction = true;
      break;
    case TransactionAction::kCommit:
      end_transaction(session, c, /*commit=*/true);
      break;
    case TransactionAction::kRollback:
      end_transaction(session, c, /*commit=*/false);
      break;
  }
  return server::OkResult{};
}

server::StatementResult SqlEngine::set_statement(server::SessionState& session, Connection& c,
                                                 const SetStatement& statement,
                                                 const std::vector<SqlValue>& params) {
  // ON / OFF / TRUE / FALSE / 1 / 0, as MySQL takes for a boolean variable; 1231 else.
  auto switch_value = [&](const SetItem& item, const std::string& name) {
    std::optional<bool> on;
    if (item.value->kind == ExprKind::kColumn) {
      std::string word = item.value->as<ColumnExpr>().column.name;
      for (char& ch : word) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      if (word == "ON") on = true;
      if (word == "OFF") on = false;
    } else {
      EvalContext eval;
      eval.params = &params;
      eval.session = &session;
      SqlValue v = evaluate(*item.value, eval);
      if (!v.is_null() && v.is_numeric() && (v.to_int() == 0 || v.to_int() == 1)) {
        on = v.to_int() == 1;
      }
    }
    if (!on) {
      throw SqlException(
          1231, "42000",
          "Variable '" + name + "' can't be set to the value of '" + to_sql(*item.value) + "'");
    }
    return *on;
  };
  for (const SetItem& item : statement.items) {
    if (item.kind == SetKind::kUserVariable) {
      StatementContext context{session, catalog_, *c.api_session, params};
      context.user_variables = &c.user_variables;
      c.user_variables[ascii_lower(item.name)] = evaluate(*item.value, context.eval());
      continue;
    }
    if (item.kind == SetKind::kNames) {
      set_names(session, item.name, item.collate);
      continue;
    }
    if (item.kind == SetKind::kCharacterSet) {
      set_character_set(session, item.name);
      continue;
    }
    if (item.kind != SetKind::kSystemVariable) continue;  // TRANSACTION: accepted
    const std::string name = ascii_lower(item.name);
    if (name == "ndb_read_backup") {
      // GLOBAL only, as in NDB: the default READ_BACKUP of tables created from now on.
      if (item.scope != VariableScope::kGlobal) {
        throw SqlException(1229, "HY000",
                           "Variable 'ndb_read_backup' is a GLOBAL variable and should be set "
                           "with SET GLOBAL");
      }
      GlobalVariables::instance().set_ndb_read_backup(switch_value(item, name));
      continue;
    }
    if (name == "autocommit") {
      if (item.scope == VariableScope::kGlobal) throw_not_supported("SET GLOBAL autocommit");
      const bool on = switch_value(item, name);
      // Turning autocommit on commits the open transaction.
      if (on && !session.autocommit && session.in_transaction) end_transaction(session, c, true);
      session.autocommit = on;
      continue;
    }
    // Every other variable: checked and kept (system_variables.h). A bare word (ON,
    // OFF, a mode list written without quotes) or DEFAULT is passed as a word.
    std::optional<std::string> word;
    SqlValue value;
    if (item.value->kind == ExprKind::kColumn) {
      word = item.value->as<ColumnExpr>().column.name;
    } else if (item.value->kind == ExprKind::kDefault) {
      word = "DEFAULT";
    } else {
      StatementContext context{session, catalog_, *c.api_session, params};
      context.user_variables = &c.user_variables;
      value = evaluate(*item.value, context.eval());
    }
    set_system_variable(session, item.scope, item.name, word, value);
  }
  return server::OkResult{};
}

std::variant<server::PreparedStatementInfo, server::SqlError> SqlEngine::prepare(
    server::SessionState& session, std::string_view sql) {
  Connection& c = connection(session);
  if (c.prepared.size() >= kPreparedStatementsMax) {
    return server::SqlError{1461, "42000",
                            "Can't create more than max_prepared_stmt_count statements (current "
                            "value: " +
                                std::to_string(kPreparedStatementsMax) + ")"};
  }
  Prepared prepared;
  prepared.text = std::string(sql);
  ParsedStatement parsed = parse_statement(prepared.text);
  if (!parsed.ok()) return parse_error(parsed);
  const StatementKind kind = parsed.statement->kind;
  if (kind == StatementKind::kPrepare || kind == StatementKind::kExecute ||
      kind == StatementKind::kDeallocatePrepare) {
    return server::SqlError{1295, "HY000",
                            "This command is not supported in the prepared statement protocol yet"};
  }
  prepared.statement = std::move(parsed.statement);
  server::PreparedStatementInfo info;
  info.handler_token = c.next_token++;
  info.param_count = static_cast<uint16_t>(prepared.statement->placeholder_count);
  // The result columns, so that clients size their result binds (libmariadb refuses an
  // execute whose column count differs from the prepare's). Computed columns are typed by
  // their values at each execute.
  if (prepared.statement->kind == StatementKind::kSelect &&
      !prepared.statement->as<SelectStatement>().discard_result) {
    try {
      const std::vector<SqlValue> no_params;
      StatementContext context{session, catalog_, *c.api_session, no_params};
      context.source_text = prepared.text;
      info.columns = describe_select(context, prepared.statement->as<SelectStatement>());
    } catch (const SqlException& e) {
      return to_error(e);
    }
  }
  c.prepared.emplace(info.handler_token, std::move(prepared));
  return info;
}

server::StatementResult SqlEngine::execute(server::SessionState& session, uint64_t handler_token,
                                           const std::vector<server::BoundParameter>& params) {
  Connection& c = connection(session);
  auto it = c.prepared.find(handler_token);
  if (it == c.prepared.end()) {
    return server::SqlError{1243, "HY000", "Unknown prepared statement handler given to EXECUTE"};
  }
  std::vector<SqlValue> values;
  values.reserve(params.size());
  for (const server::BoundParameter& p : params)
    values.push_back(from_protocol(p.value, p.type.type));
  Prepared& prepared = it->second;
  return run_statement(session, *prepared.statement, prepared.text, values, &prepared);
}

void SqlEngine::close_statement(server::SessionState& session, uint64_t handler_token) {
  connection(session).prepared.erase(handler_token);
}

std::optional<server::SqlError> SqlEngine::change_database(server::SessionState& session,
                                                           std::string_view database) {
  Connection& c = connection(session);
  try {
    const std::string db(database);
    if (!catalog_.database_exists(*c.api_session, db)) throw_unknown_database(db);
    const std::vector<SqlValue> no_params;
    StatementContext context{session, catalog_, *c.api_session, no_params};
    check_use_database(context, db);
  } catch (const SqlException& e) {
    return to_error(e);
  }
  return std::nullopt;
}

std::variant<std::vector<server::ColumnDefinition41>, server::SqlError> SqlEngine::field_list(
    server::SessionState& session, std::string_view table, std::string_view wildcard) {
  try {
    if (session.database.empty()) throw_no_database_selected();
    const catalog::BoundTable bound = catalog_.get_table(session.database, std::string(table));
    std::vector<server::ColumnDefinition41> columns;
    for (size_t i = 0; i < bound.sql.columns.size(); ++i) {
      if (!wildcard.empty() && !like_match(bound.sql.columns[i].name, wildcard, '\\')) continue;
      server::ColumnDefinition41 def =
          table_column_definition(bound.sql, static_cast<uint16_t>(i), bound.sql.columns[i].name);
      const catalog::SqlColumn& column = bound.sql.columns[i];
      def.default_value = column.default_value.value_or("");
      columns.push_back(std::move(def));
    }
    return columns;
  } catch (const SqlException& e) {
    return to_error(e);
  }
}

void SqlEngine::on_disconnect(server::SessionState& session) {
  std::unique_ptr<Connection> c;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = connections_.find(session.connection_id);
    if (it == connections_.end()) return;
    c = std::move(it->second);
    connections_.erase(it);
  }
  SessionRegistry::instance().disconnected(session.connection_id);
  // Destroying the transaction rolls it back; then the session goes.
  c->transaction.reset();
  c->api_session.reset();
}

}  // namespace duo::sql::executor
