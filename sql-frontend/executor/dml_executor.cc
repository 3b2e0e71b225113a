// UPDATE and DELETE over the cluster; see statement_context.h (INSERT and REPLACE are in
// insert_executor.cc).
//
// Every statement here touches one table (the multi-table forms are in
// multi_table_dml.cc). Rows are found by the table's row source
// (row_source.h) under an exclusive lock; writes are key operations in the statement's
// transaction: the matching rows are collected first (sorted by ORDER BY, cut by LIMIT)
// and then updated or deleted in the same transaction, so the statement commits (or
// fails) as a whole.
//
// Fast paths without reading rows in sqld, when the WHERE is a primary-key lookup with
// nothing left to check, and there is no ORDER BY / LIMIT:
//   DELETE   one delete per key (ignore_error: a missing key is just not counted);
//   UPDATE   `SET c = <constant>` or `c = NULL` on any non-key column, and `c = c + n`,
//            `c = c - n` on integer ones: one interpreted update per key, applied by the
//            data node (no read round trip; in autocommit it carries its commit). Its guard
//            is "some assignment changes the row's stored bytes", so a row it would not
//            change comes back filtered: found-but-filtered counts as matched, applied as
//            changed — MySQL's "Rows matched / Changed".
//
// UPDATE of a primary-key column moves the row: the old key is deleted and the new row
// inserted in the same transaction, all deletes before all inserts, so keys shifted
// within the set (`SET id = id + 10`) do not collide with each other; a new key that
// collides with a row the statement does not move fails with 1062. (MySQL/InnoDB checks
// row by row and can fail on such shifts unless ORDER BY walks them the other way.)
#include <algorithm>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/access_plan.h"
#include "sql-frontend/executor/duplicate_key.h"
#include "sql-frontend/executor/row_order.h"
#include "sql-frontend/executor/row_source.h"
#include "sql-frontend/executor/statement_context.h"
#include "storage/scan/filter.h"

namespace duo::sql::executor {

namespace {

// One interpreted action for assignment `a` to `column`, when the data node can apply it
// exactly: false otherwise (the general path then evaluates it in sqld).
bool add_interpreted_action(const Assignment& a, uint16_t column, const catalog::SqlTable& table,
                            const EvalContext& eval, storage::InterpretedUpdate* program,
                            storage::FilterBuilder* guard,
                            std::vector<storage::FilterBuilder::Node>* changes) {
  const catalog::SqlColumn& def = table.columns[column];
  if (table.is_key_column(column)) return false;
  // A BLOB/TEXT value with parts changes rows of its parts table too (the client
  // library's write path), which an interpreted update does not reach.
  if (def.blob_part_bytes > 0 || def.is_json) return false;
  const bool integer = storage::is_integer(def.storage.type);
  const Expr& value = *a.value;
  if (value.kind == ExprKind::kDefault) return false;
  if (is_constant(value)) {
    // `c = <constant>` / `c = NULL`: changes the row unless it already holds exactly those
    // bytes (MySQL's "Changed" compares the stored value, not by collation: 'abc' to
    // 'ABC' is a change in a case-insensitive column too).
    const SqlValue v = evaluate_for_column(value, eval, def);
    if (v.is_null()) {
      if (!def.nullable) return false;  // the general path raises 1048
      program->set_null(column);
      changes->push_back(guard->is_not_null(column));
      return true;
    }
    if (integer && v.kind != SqlValue::Kind::kInt && v.kind != SqlValue::Kind::kUInt) return false;
    const std::string bytes = to_storage(def, v, 1);
    program->set(column, bytes);
    changes->push_back(guard->is_null(column));
    changes->push_back(guard->bytes_differ(column, bytes));
    return true;
  }
  if (!integer || value.kind != ExprKind::kBinary) return false;
  const auto& binary = value.as<BinaryExpr>();
  if (binary.op != BinaryOp::kAdd && binary.op != BinaryOp::kSub) return false;
  const Expr* self = binary.left.get();
  const Expr* delta = binary.right.get();
  if (binary.op == BinaryOp::kAdd && self->kind != ExprKind::kColumn) std::swap(self, delta);
  if (self->kind != ExprKind::kColumn || !is_constant(*delta)) return false;
  if (resolve_column(self->as<ColumnExpr>(), table, "field list") != column) return false;
  const SqlValue v = evaluate(*delta, eval);
  if (v.kind != SqlValue::Kind::kInt) return false;
  if (binary.op == BinaryOp::kSub) {
    if (v.i == INT64_MIN) return false;
    program->sub(column, v.i);
  } else {
    program->add(column, v.i);
  }
  // NULL + n stays NULL, and + 0 changes nothing.
  if (v.i != 0) changes->push_back(guard->is_not_null(column));
  return true;
}

// An interpreted update's failure as MySQL reports the same UPDATE: the data node only
// knows that the column's range was left, MySQL distinguishes the BIGINT arithmetic
// overflowing (1690, naming `db`.`table`.`column`) from a result that does not fit the
// column (1264).
[[noreturn]] void throw_interpreted_error(const Status& status, const catalog::SqlTable& table) {
  if (!status.is(ErrorCode::kOutOfRange)) throw_status(status);
  const std::string& message = status.message();
  const size_t open = message.find("(`");
  const size_t close = open == std::string::npos ? open : message.find("` ", open + 2);
  const int c = close == std::string::npos
                    ? -1
                    : table.find_column(message.substr(open + 2, close - open - 2));
  if (c < 0) throw_status(status);
  const storage::ColumnDef& def = table.columns[c].storage;
  const bool subtracting = message.compare(close + 2, 1, "-") == 0;
  const bool bigint = def.type == storage::ColumnType::kBigInt;
  if (bigint || (def.is_unsigned && subtracting)) {
    // MySQL computes the expression in BIGINT [UNSIGNED] before storing it.
    throw SqlException(1690, "22003",
                       std::string(def.is_unsigned ? "BIGINT UNSIGNED" : "BIGINT") +
                           " value is out of range in '(`" + table.db + "`.`" + table.name + "`.`" +
                           message.substr(close - (close - open - 2)));
  }
  throw SqlException(1264, "22003",
                     "Out of range value for column '" + table.columns[c].name + "' at row 1");
}

}  // namespace

server::StatementResult execute_update(StatementContext& context,
                                       const UpdateStatement& statement) {
  // Strict mode: a function's warning (1292 ...) fails the UPDATE unless IGNORE.
  context.warnings_are_errors = !statement.ignore;
  if (statement.join) return execute_multi_table_update(context, statement);
  const ObjectName& name = statement.tables[0]->table;
  const std::string db = context.database_of(name);
  const catalog::BoundTable bound = context.catalog.get_table(db, name.name.name);
  const catalog::SqlTable& table = bound.sql;
  std::vector<uint16_t> targets;
  for (const Assignment& a : statement.set) {
    const uint16_t c = resolve_column(*a.column, table, "field list");
    if (std::find(targets.begin(), targets.end(), c) != targets.end()) {
      throw_not_supported("assigning one column twice in UPDATE");
    }
    targets.push_back(c);
  }
  const bool ordered = !statement.order_by.empty();
  const uint64_t limit =
      statement.limit ? limit_value(statement.limit->count.get(), context) : UINT64_MAX;

  // Interpreted updates by key: see the top of this file.
  const EvalContext constants = context.eval(&table);
  const AccessPlan plan = plan_access(table, statement.where.get(), constants);
  // Inside an open transaction a failing key (overflow) must not leave the others
  // applied, and ignore_error would: only one key then.
  if (plan.kind == AccessPlan::Kind::kKeyLookup && plan.residual.empty() && !ordered &&
      !statement.limit && (context.open_transaction == nullptr || plan.keys.size() <= 1)) {
    storage::InterpretedUpdate program;
    storage::FilterBuilder guard;
    std::vector<storage::FilterBuilder::Node> changes;
    bool interpretable = true;
    for (size_t i = 0; i < targets.size() && interpretable; ++i) {
      interpretable = add_interpreted_action(statement.set[i], targets[i], table, constants,
                                             &program, &guard, &changes);
    }
    Result<storage::FilterProgram> condition =
        guard.build(changes.empty() ? guard.always_false() : guard.or_(changes));
    if (interpretable && condition.ok()) {
      program.guard(std::move(condition).value());
      if (plan.keys.empty()) {
        context.finish();
        return server::OkResult{0, 0, 0, "Rows matched: 0  Changed: 0  Warnings: 0"};
      }
      api::Transaction& tx = context.transaction(bound.table_def.get(), &plan.keys.front());
      std::vector<uint32_t> ops;
      for (const storage::AttrValues& key : plan.keys) {
        ops.push_back(check(tx.interpreted_update(*bound.table_def, key, program,
                                                  api::OpOptions{.ignore_error = true})));
      }
      uint64_t matched = 0;
      uint64_t changed = 0;
      try {
        // One key: nothing else can be left half done, so commit in the same round trip.
        context.execute(/*last=*/plan.keys.size() == 1);
        for (uint32_t op : ops) {
          api::OpResult result = check(tx.result(op));
          if (result.status.is(ErrorCode::kNotFound)) continue;
          if (!result.status.ok()) throw_interpreted_error(result.status, table);
          ++matched;
          if (!result.filtered) ++changed;
        }
      } catch (const SqlException& e) {
        rethrow_with_table(e, table);  // a UNIQUE duplicate names 'table.key', as MySQL does
      }
      context.finish();
      return server::OkResult{changed, 0, 0,
                              "Rows matched: " + std::to_string(matched) +
                                  "  Changed: " + std::to_string(changed) + "  Warnings: 0"};
    }
    if (!condition.ok()) condition.status().ignore_error();
  }

  // General case: read the matching rows, compute the new values here, write by key.
  struct Match {
    Row row;
    Row order;
  };
  std::vector<Match> matches;
  for_each_row(context, bound, statement.where.get(), storage::LockMode::kExclusive, [&](Row& row) {
    if (matches.size() >= kStatementRowsMax) throw_too_many_rows();
    Match match;
    if (ordered) match.order = order_keys(statement.order_by, context.eval(&table, &row));
    match.row = std::move(row);
    matches.push_back(std::move(match));
    return ordered || matches.size() < limit;
  });
  if (ordered) {
    std::stable_sort(matches.begin(), matches.end(), [&](const Match& a, const Match& b) {
      return order_before(a.order, b.order, statement.order_by);
    });
  }
  if (matches.size() > limit) matches.resize(limit);

  struct Change {
    storage::AttrValues key;
    storage::AttrValues values;  // changed columns; the whole new row when `moves`
    bool moves = false;          // a primary-key column changes
  };
  std::vector<Change> changes;
  uint64_t row_number = 0;
  for (Match& match : matches) {
    ++row_number;
    const Row& old_row = match.row;
    Row row = old_row;  // assignments run left to right, each seeing the earlier ones
    for (size_t i = 0; i < targets.size(); ++i) {
      const catalog::SqlColumn& column = table.columns[targets[i]];
      SqlValue v;
      if (statement.set[i].value->kind == ExprKind::kDefault) {
        v = column.has_default && column.default_value ? SqlValue::of_string(*column.default_value)
                                                       : SqlValue::null();
      } else {
        v = evaluate_for_column(*statement.set[i].value, context.eval(&table, &row), column);
      }
      if (v.is_null()) {
        if (!column.nullable) {
          throw SqlException(1048, "23000", "Column '" + column.name + "' cannot be null");
        }
        row[targets[i]] = SqlValue::null();
      } else {
        row[targets[i]] = from_storage(column, to_storage(table, column, v, row_number));
      }
    }
    Change change;
    for (uint16_t c : targets) {
      const catalog::SqlColumn& column = table.columns[c];
      // Changed as MySQL decides it: on the stored bytes.
      const bool same = row[c].is_null() ? old_row[c].is_null()
                                         : !old_row[c].is_null() &&
                                               to_storage(column, row[c], row_number) ==
                                                   to_storage(column, old_row[c], row_number);
      if (same) continue;
      change.moves |= table.is_key_column(c);
      if (row[c].is_null()) {
        change.values.add_null(c);
      } else {
        change.values.add(c, to_storage(column, row[c], row_number));
      }
    }
    if (change.values.empty()) continue;
    change.key = key_of(table, old_row);
    if (change.moves) {
      change.values.clear();
      for (size_t c = 0; c < table.columns.size(); ++c) {
        if (row[c].is_null()) {
          change.values.add_null(static_cast<uint16_t>(c));
        } else {
          change.values.add(static_cast<uint16_t>(c),
                            to_storage(table.columns[c], row[c], row_number));
        }
      }
    }
    changes.push_back(std::move(change));
  }
  if (!changes.empty()) {
    api::Transaction& tx = context.transaction();
    bool any_moves = false;
    for (Change& change : changes) {
      if (change.moves) {
        check(tx.remove(*bound.table_def, change.key));
        any_moves = true;
      } else {
        check(tx.update(*bound.table_def, change.key, std::move(change.values)));
      }
    }
    try {
      if (any_moves) {
        // Every old key is gone before any new one is written (see the top of this file).
        context.execute(false);
        for (Change& change : changes) {
          if (change.moves) check(tx.insert(*bound.table_def, std::move(change.values)));
        }
      }
      context.execute(true);
    } catch (const SqlException& e) {
      rethrow_with_table(e, table);
    }
  }
  context.finish();
  return server::OkResult{changes.size(), 0, 0,
                          "Rows matched: " + std::to_string(matches.size()) +
                              "  Changed: " + std::to_string(changes.size()) + "  Warnings: 0"};
}

server::StatementResult execute_delete(StatementContext& context,
                                       const DeleteStatement& statement) {
  if (statement.join) return execute_multi_table_delete(context, statement);
  const std::string db = context.database_of(statement.table);
  const catalog::BoundTable bound = context.catalog.get_table(db, statement.table.name.name);
  const catalog::SqlTable& table = bound.sql;
  const bool ordered = !statement.order_by.empty();
  const uint64_t limit =
      statement.limit ? limit_value(statement.limit->count.get(), context) : UINT64_MAX;

  const AccessPlan plan = plan_access(table, statement.where.get(), context.eval(&table));
  if (plan.kind == AccessPlan::Kind::kKeyLookup && plan.residual.empty() && !ordered &&
      !statement.limit) {
    // By key: delete directly; a missing row is not an error, just not counted.
    if (plan.keys.empty()) {
      context.finish();
      return server::OkResult{};
    }
    api::Transaction& tx = context.transaction(bound.table_def.get(), &plan.keys.front());
    std::vector<uint32_t> ops;
    for (const storage::AttrValues& key : plan.keys) {
      ops.push_back(check(tx.remove(*bound.table_def, key, api::OpOptions{.ignore_error = true})));
    }
    // One key: commit in the same round trip (a missing row leaves nothing to undo).
    context.execute(/*last=*/plan.keys.size() == 1);
    uint64_t deleted = 0;
    for (uint32_t op : ops) {
      api::OpResult result = check(tx.result(op));
      if (result.status.is(ErrorCode::kNotFound)) continue;
      check(result.status);
      ++deleted;
    }
    context.finish();
    return server::OkResult{deleted, 0, 0, ""};
  }
  struct Match {
    storage::AttrValues key;
    Row order;
  };
  std::vector<Match> matches;
  if (limit > 0) {
    for_each_row(context, bound, statement.where.get(), storage::LockMode::kExclusive,
                 [&](Row& row) {
                   if (matches.size() >= kStatementRowsMax) throw_too_many_rows();
                   Match match;
                   if (ordered)
                     match.order = order_keys(statement.order_by, context.eval(&table, &row));
                   match.key = key_of(table, row);
                   matches.push_back(std::move(match));
                   return ordered || matches.size() < limit;
                 });
  }
  if (ordered) {
    std::stable_sort(matches.begin(), matches.end(), [&](const Match& a, const Match& b) {
      return order_before(a.order, b.order, statement.order_by);
    });
  }
  if (matches.size() > limit) matches.resize(limit);
  if (!matches.empty()) {
    api::Transaction& tx = context.transaction();
    for (Match& match : matches) check(tx.remove(*bound.table_def, std::move(match.key)));
    context.execute(true);
  }
  context.finish();
  return server::OkResult{matches.size(), 0, 0, ""};
}

}  // namespace duo::sql::executor
