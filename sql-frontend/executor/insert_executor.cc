// INSERT, INSERT IGNORE, INSERT ... ON DUPLICATE KEY UPDATE, REPLACE and INSERT ... SELECT
// over the cluster; see statement_context.h.
//
// Rows are completed in sqld (defaults, AUTO_INCREMENT, NOT NULL) and written as insert
// operations in the statement's transaction. A duplicate key is handled per mode:
//   INSERT      the statement fails with 1062. Inside an open transaction the inserts
//               run with ignore_error and, on any failure, the rows this statement did
//               insert are deleted again: only the statement rolls back (see
//               statement_context.h). In autocommit the whole batch commits or aborts.
//   IGNORE      inserts run with ignore_error in one batch; a duplicate becomes warning
//               1062 and its row is skipped.
//   ON DUPLICATE KEY UPDATE, REPLACE
//               row by row, because a later row may meet a row an earlier one wrote:
//               insert with ignore_error; on a duplicate, find the conflicting rows (by
//               primary key, then by each UNIQUE index) under an exclusive lock, then
//               update the first (ON DUP) or delete them all and insert again (REPLACE).
// Affected rows as MySQL: 1 per inserted row; ON DUP 2 per changed row and 0 for an
// unchanged one; REPLACE 1 plus the rows it deleted.
//
// Thread-safety: one session thread.
#include <algorithm>
#include <optional>

#include "sql-frontend/catalog/auto_increment.h"
#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/duplicate_key.h"
#include "sql-frontend/executor/insert_select.h"
#include "sql-frontend/executor/on_duplicate.h"
#include "sql-frontend/executor/row_source.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

namespace {

// Statement-level retries of an ON DUP / REPLACE row whose conflicting row vanished
// between the failed insert and the lookup (deleted by another transaction meanwhile).
constexpr int kConflictRetriesMax = 3;

// The first AUTO_INCREMENT value of a table whose counter does not exist yet: MAX(column)
// + 1, by a scan in a transaction of its own (rows inserted with explicit values count).
uint64_t auto_increment_seed(StatementContext& context, const catalog::BoundTable& bound,
                             uint16_t column) {
  uint64_t max_value = 0;
  auto tx = check(context.api_session.begin());
  api::ScanSpec spec;
  spec.columns = {column};
  auto cursor = check(tx->scan(*bound.table_def, spec));
  storage::AttrValues values;
  while (check(cursor->next(&values))) {
    if (values.size() == 0 || values.entry(0).is_null) continue;
    SqlValue v = from_storage(bound.sql.columns[column], values.value(0));
    const uint64_t u =
        v.kind == SqlValue::Kind::kUInt ? v.u : static_cast<uint64_t>(std::max<int64_t>(0, v.i));
    max_value = std::max(max_value, u);
  }
  cursor.reset();
  check(tx->execute(api::ExecType::kCommit));
  return max_value + 1;
}

bool needs_generated_value(const std::optional<SqlValue>& value) {
  return !value || value->is_null() || (value->kind == SqlValue::Kind::kInt && value->i == 0) ||
         (value->kind == SqlValue::Kind::kUInt && value->u == 0);
}

// One row to insert: its SQL values by column id (for VALUES() and messages) and its
// storage encoding.
struct NewRow {
  Row values;
  storage::AttrValues encoded;
};

// Completes `values` (defaults, NULL checks) and encodes it; `row_number` is 1-based.
NewRow complete_row(const catalog::SqlTable& table, std::vector<std::optional<SqlValue>>& values,
                    uint64_t row_number) {
  NewRow out;
  out.values.resize(table.columns.size());
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const catalog::SqlColumn& column = table.columns[c];
    std::optional<SqlValue>& value = values[c];
    if (!value) {
      if (column.has_default) {
        value =
            column.default_value ? SqlValue::of_string(*column.default_value) : SqlValue::null();
      } else if (column.nullable) {
        value = SqlValue::null();
      } else {
        throw SqlException(1364, "HY000",
                           "Field '" + column.name + "' doesn't have a default value");
      }
    }
    if (value->is_null()) {
      if (!column.nullable) {
        throw SqlException(1048, "23000", "Column '" + column.name + "' cannot be null");
      }
      out.encoded.add_null(static_cast<uint16_t>(c));
    } else {
      std::string bytes = to_storage(table, column, *value, row_number);
      // What the row holds is the stored value (padded, truncated, normalised).
      out.values[c] = from_storage(column, bytes);
      out.encoded.add(static_cast<uint16_t>(c), bytes);
    }
  }
  return out;
}

storage::AttrValues primary_key_of(const catalog::SqlTable& table, const storage::AttrValues& row) {
  storage::AttrValues key;
  for (uint16_t c : table.primary_key().columns) key.add(c, row.value(row.find(c)));
  return key;
}

// MySQL's 1062 text for `index` (a SqlIndex of `table`) and the row's values.
std::string duplicate_message(const catalog::SqlTable& table, const catalog::SqlIndex& index,
                              const Row& values) {
  std::string key_text;
  for (size_t i = 0; i < index.columns.size(); ++i) {
    if (i > 0) key_text += '-';
    key_text += values[index.columns[i]].to_text();
  }
  return "Duplicate entry '" + key_text + "' for key '" + table.name + "." + index.name + "'";
}

// The rows `row` collides with — by primary key first, then by each UNIQUE index in
// declaration order (through its hidden table) — read under an exclusive lock, each once.
std::vector<Row> find_conflicts(StatementContext& context, const catalog::BoundTable& bound,
                                const NewRow& row) {
  const catalog::SqlTable& table = bound.sql;
  std::vector<Row> conflicts;
  std::vector<storage::AttrValues> keys;
  auto add = [&](Row found) {
    storage::AttrValues key = key_of(table, found);
    for (const storage::AttrValues& k : keys) {
      if (k.data() == key.data()) return;
    }
    keys.push_back(std::move(key));
    conflicts.push_back(std::move(found));
  };
  // One set per key: for_each_row_batched reads them all in two round trips (the unique
  // values' hidden-table entries, then every row by primary key) and visits in set order.
  std::vector<FixedColumns> sets(1);
  for (uint16_t c : table.primary_key().columns) sets[0].emplace_back(c, row.values[c]);
  for (const catalog::SqlIndex& index : table.indexes) {
    if (index.kind != catalog::SqlIndexKind::kUnique) continue;
    FixedColumns fixed;
    bool has_null = false;
    for (uint16_t c : index.columns) {
      has_null |= row.values[c].is_null();  // NULLs never conflict
      fixed.emplace_back(c, row.values[c]);
    }
    if (!has_null) sets.push_back(std::move(fixed));
  }
  for_each_row_batched(context, bound, nullptr, storage::LockMode::kExclusive, sets,
                       [&](size_t, Row& found) {
                         add(std::move(found));
                         return true;
                       });
  return conflicts;
}

// A UNIQUE index besides the primary key. The kernel checks it in a hidden table, and a
// duplicate there aborts the whole transaction (as NDB does, error 893), so statements
// that go on after a duplicate (IGNORE, ON DUPLICATE KEY UPDATE, REPLACE) look for the
// conflicting rows before they insert.
bool has_unique_secondary(const catalog::SqlTable& table) {
  return std::any_of(table.indexes.begin(), table.indexes.end(), [](const catalog::SqlIndex& index) {
    return index.kind == catalog::SqlIndexKind::kUnique;
  });
}

// The index the first of `conflicts` (non-empty, or a duplicate primary key) shares with
// `row`, for the 1062 message.
const catalog::SqlIndex& conflict_index(const catalog::SqlTable& table, const NewRow& row,
                                        const std::vector<Row>& conflicts) {
  if (conflicts.empty()) return table.primary_key();
  for (const catalog::SqlIndex& index : table.indexes) {
    if (index.kind != catalog::SqlIndexKind::kPrimary &&
        index.kind != catalog::SqlIndexKind::kUnique) {
      continue;
    }
    bool same = true;
    for (uint16_t c : index.columns) {
      same &= !row.values[c].is_null() && row.values[c].to_text() == conflicts.front()[c].to_text();
    }
    if (same) return index;
  }
  return table.primary_key();
}

// Inserts `row` with ignore_error and runs it: OK, or the operation's error.
Status try_insert(StatementContext& context, const catalog::BoundTable& bound, const NewRow& row) {
  const storage::AttrValues key = primary_key_of(bound.sql, row.encoded);
  api::Transaction& tx = context.transaction(bound.table_def.get(), &key);
  const uint32_t op =
      check(tx.insert(*bound.table_def, row.encoded, api::OpOptions{.ignore_error = true}));
  context.execute(false);
  return check(tx.result(op)).status;
}

struct WriteCounts {
  uint64_t affected = 0;
  uint64_t duplicates = 0;  // the info's "Duplicates:"
  uint64_t inserted = 0;
};

// The storage encoding of a whole row held in sqld.
storage::AttrValues encode_row(const catalog::SqlTable& table, const Row& row) {
  storage::AttrValues out;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (row[c].is_null()) {
      out.add_null(static_cast<uint16_t>(c));
    } else {
      out.add(static_cast<uint16_t>(c), to_storage(table.columns[c], row[c], 1));
    }
  }
  return out;
}

// What undoes one write of an ON DUP / REPLACE statement inside an open transaction.
struct UndoStep {
  enum class Kind : uint8_t { kRemove, kInsert, kUpdate };
  Kind kind = Kind::kRemove;
  storage::AttrValues key;     // kRemove, kUpdate
  storage::AttrValues values;  // kInsert: the whole row; kUpdate: the old values
};

// ON DUPLICATE KEY UPDATE and REPLACE, row by row (see the top of this file). Inside an
// open transaction, a failure that leaves the transaction open (an error raised in sqld,
// such as 1048 from an assignment) undoes the statement's earlier writes first, so only
// the statement rolls back.
WriteCounts write_resolving(StatementContext& context, const catalog::BoundTable& bound,
                            const InsertStatement& statement, std::vector<NewRow>& rows) {
  const catalog::SqlTable& table = bound.sql;
  WriteCounts counts;
  const bool keep_undo = context.open_transaction != nullptr;
  std::vector<UndoStep> undo;
  auto remember = [&](UndoStep step) {
    if (keep_undo) undo.push_back(std::move(step));
  };
  try {
    const bool look_first = has_unique_secondary(table);
    for (NewRow& row : rows) {
      for (int attempt = 0;; ++attempt) {
        std::vector<Row> conflicts;
        if (look_first) conflicts = find_conflicts(context, bound, row);
        if (conflicts.empty()) {
          Status status = try_insert(context, bound, row);
          if (status.ok()) {
            remember(UndoStep{UndoStep::Kind::kRemove, primary_key_of(table, row.encoded), {}});
            ++counts.affected;
            ++counts.inserted;
            break;
          }
          if (!status.is(ErrorCode::kDuplicateKey)) throw_status(status);
          status.ignore_error();
          conflicts = find_conflicts(context, bound, row);
        }
        if (conflicts.empty()) {
          if (attempt + 1 < kConflictRetriesMax) continue;  // it vanished: insert again
          throw SqlException(1062, "23000",
                             duplicate_message(table, table.primary_key(), row.values));
        }
        api::Transaction& tx = context.transaction();
        if (statement.replace) {
          for (const Row& conflict : conflicts) {
            check(tx.remove(*bound.table_def, key_of(table, conflict)));
          }
          // The deletes first: their unique-index entries must be gone before the
          // insert's are added (one batch would run them in any order).
          if (look_first) context.execute(false);
          check(tx.insert(*bound.table_def, row.encoded));
          context.execute(false);
          for (const Row& conflict : conflicts) {
            remember(UndoStep{UndoStep::Kind::kInsert, {}, encode_row(table, conflict)});
          }
          remember(UndoStep{UndoStep::Kind::kRemove, primary_key_of(table, row.encoded), {}});
          counts.affected += 1 + conflicts.size();
          counts.duplicates += conflicts.size();
          ++counts.inserted;
          break;
        }
        const Row& existing = conflicts.front();
        std::optional<storage::AttrValues> changes =
            on_duplicate_changes(context, table, statement.on_duplicate, existing, row.values);
        if (changes) {
          storage::AttrValues old_values;
          const storage::AttrValues all = encode_row(table, existing);
          for (size_t i = 0; i < changes->size(); ++i) {
            const int at = all.find(changes->entry(i).column);
            if (all.entry(at).is_null) {
              old_values.add_null(changes->entry(i).column);
            } else {
              old_values.add(changes->entry(i).column, all.value(at));
            }
          }
          check(tx.update(*bound.table_def, key_of(table, existing), std::move(*changes)));
          context.execute(false);
          remember(UndoStep{UndoStep::Kind::kUpdate, key_of(table, existing), old_values});
          counts.affected += 2;
          ++counts.duplicates;
        }
        break;
      }
    }
  } catch (const SqlException& e) {
    // An operation error without ignore_error has aborted the transaction: nothing to
    // undo then (SqlEngine leaves it).
    if (!undo.empty() && context.transaction().state() == api::TxState::kOpen) {
      api::Transaction& tx = context.transaction();
      for (auto step = undo.rbegin(); step != undo.rend(); ++step) {
        switch (step->kind) {
          case UndoStep::Kind::kRemove:
            check(tx.remove(*bound.table_def, step->key));
            break;
          case UndoStep::Kind::kInsert:
            check(tx.insert(*bound.table_def, step->values));
            break;
          case UndoStep::Kind::kUpdate:
            check(tx.update(*bound.table_def, step->key, step->values));
            break;
        }
      }
      context.execute(false);
    }
    rethrow_with_table(e, table);
  }
  return counts;
}

// INSERT IGNORE: one batch with ignore_error; duplicates become warnings. With a UNIQUE
// index besides the primary key, row by row, each looked for first.
WriteCounts write_ignoring(StatementContext& context, const catalog::BoundTable& bound,
                           std::vector<NewRow>& rows) {
  const catalog::SqlTable& table = bound.sql;
  WriteCounts counts;
  if (has_unique_secondary(table)) {
    for (const NewRow& row : rows) {
      std::vector<Row> conflicts = find_conflicts(context, bound, row);
      Status status = conflicts.empty() ? try_insert(context, bound, row)
                                        : Status(ErrorCode::kDuplicateKey, "");
      if (status.is(ErrorCode::kDuplicateKey)) {
        status.ignore_error();
        context.add_warning(1062, duplicate_message(table, conflict_index(table, row, conflicts),
                                                    row.values));
        ++counts.duplicates;
        continue;
      }
      check(status);
      ++counts.affected;
      ++counts.inserted;
    }
    return counts;
  }
  const storage::AttrValues hint = primary_key_of(table, rows.front().encoded);
  api::Transaction& tx = context.transaction(bound.table_def.get(), &hint);
  std::vector<uint32_t> ops;
  for (const NewRow& row : rows) {
    ops.push_back(
        check(tx.insert(*bound.table_def, row.encoded, api::OpOptions{.ignore_error = true})));
  }
  context.execute(false);
  for (size_t r = 0; r < ops.size(); ++r) {
    api::OpResult result = check(tx.result(ops[r]));
    if (result.status.is(ErrorCode::kDuplicateKey)) {
      // Which key: the PRIMARY one unless a committed row with this key is absent, the
      // kernel's message names the index it hit.
      const std::string& message = result.status.message();
      const catalog::SqlIndex* index = &table.primary_key();
      for (const catalog::SqlIndex& candidate : table.indexes) {
        if (message.find("for key '" + candidate.name + "'") != std::string::npos)
          index = &candidate;
      }
      context.add_warning(1062, duplicate_message(table, *index, rows[r].values));
      ++counts.duplicates;
      continue;
    }
    check(result.status);
    ++counts.affected;
    ++counts.inserted;
  }
  return counts;
}

// Plain INSERT inside an open transaction: all rows or none, without aborting the
// transaction on a failed row (see the top of this file).
WriteCounts write_statement_atomic(StatementContext& context, const catalog::BoundTable& bound,
                                   std::vector<NewRow>& rows) {
  const catalog::SqlTable& table = bound.sql;
  const storage::AttrValues hint = primary_key_of(table, rows.front().encoded);
  api::Transaction& tx = context.transaction(bound.table_def.get(), &hint);
  std::vector<uint32_t> ops;
  for (const NewRow& row : rows) {
    ops.push_back(
        check(tx.insert(*bound.table_def, row.encoded, api::OpOptions{.ignore_error = true})));
  }
  try {
    context.execute(false);  // a UNIQUE-index duplicate aborts the transaction here
  } catch (const SqlException& e) {
    rethrow_with_table(e, table);
  }
  std::optional<Status> first_error;
  std::vector<size_t> inserted;
  for (size_t r = 0; r < ops.size(); ++r) {
    api::OpResult result = check(tx.result(ops[r]));
    if (result.status.ok()) {
      inserted.push_back(r);
    } else if (!first_error) {
      first_error = result.status;
    } else {
      result.status.ignore_error();
    }
  }
  if (first_error) {
    for (size_t r : inserted)
      check(tx.remove(*bound.table_def, primary_key_of(table, rows[r].encoded)));
    if (!inserted.empty()) context.execute(false);
    try {
      throw_status(*first_error);
    } catch (const SqlException& e) {
      rethrow_with_table(e, table);
    }
  }
  return WriteCounts{rows.size(), 0, rows.size()};
}

}  // namespace

server::StatementResult execute_insert(StatementContext& context,
                                       const InsertStatement& statement) {
  // Strict mode: a function's warning (1292 ...) fails the INSERT unless IGNORE.
  context.warnings_are_errors = !statement.ignore;
  const std::string db = context.database_of(statement.table);
  const catalog::BoundTable bound = context.catalog.get_table(db, statement.table.name.name);
  const catalog::SqlTable& table = bound.sql;

  // Target columns, and the values of each row.
  std::vector<uint16_t> targets;
  if (!statement.set.empty()) {
    for (const Assignment& a : statement.set) {
      targets.push_back(resolve_column(*a.column, table, "field list"));
    }
  } else if (statement.columns.empty()) {
    for (size_t c = 0; c < table.columns.size(); ++c) targets.push_back(static_cast<uint16_t>(c));
  } else {
    for (const Identifier& id : statement.columns) {
      const int c = table.find_column(id.name);
      if (c < 0) throw_unknown_column(id.name, "field list");
      targets.push_back(static_cast<uint16_t>(c));
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    for (size_t j = i + 1; j < targets.size(); ++j) {
      if (targets[i] == targets[j]) {
        throw SqlException(1110, "42000",
                           "Column '" + table.columns[targets[i]].name + "' specified twice");
      }
    }
  }
  std::vector<std::vector<std::optional<SqlValue>>> row_values;
  const EvalContext eval = context.eval();
  auto add_row = [&](const std::vector<const Expr*>& exprs, const Row* values) {
    std::vector<std::optional<SqlValue>> row(table.columns.size());
    for (size_t i = 0; i < targets.size(); ++i) {
      if (values != nullptr) {
        row[targets[i]] = (*values)[i];
      } else if (exprs[i]->kind != ExprKind::kDefault) {
        row[targets[i]] = evaluate_for_column(*exprs[i], eval, table.columns[targets[i]]);
      }
    }
    row_values.push_back(std::move(row));
  };
  if (statement.select) {
    for (const Row& values : insert_select_rows(context, *statement.select)) {
      if (values.size() != targets.size()) {
        throw SqlException(1136, "21S01", "Column count doesn't match value count at row 1");
      }
      add_row({}, &values);
    }
  } else if (!statement.set.empty()) {
    std::vector<const Expr*> exprs;
    for (const Assignment& a : statement.set) exprs.push_back(a.value.get());
    add_row(exprs, nullptr);
  } else {
    for (size_t r = 0; r < statement.rows.size(); ++r) {
      if (statement.rows[r].size() != targets.size()) {
        throw SqlException(
            1136, "21S01",
            "Column count doesn't match value count at row " + std::to_string(r + 1));
      }
      std::vector<const Expr*> exprs;
      for (const ExprPtr& e : statement.rows[r]) exprs.push_back(e.get());
      add_row(exprs, nullptr);
    }
  }

  // AUTO_INCREMENT values are reserved in one go for every row that needs one.
  const int auto_column = table.auto_increment_column();
  uint64_t first_generated = 0;
  uint64_t explicit_max = 0;
  bool any_explicit = false;
  if (auto_column >= 0) {
    uint64_t needed = 0;
    for (const auto& values : row_values) needed += needs_generated_value(values[auto_column]);
    const std::string counter = catalog::cluster_table_name(table.db, table.name);
    auto* earlier = context.retry_auto_increment;
    if (needed > 0 && earlier != nullptr && earlier->has_value() && (*earlier)->reusable &&
        (*earlier)->counter == counter && (*earlier)->count == needed) {
      first_generated = (*earlier)->first;  // a retry: the failed attempt's values
      (*earlier)->reusable = false;
    } else if (needed > 0) {
      first_generated = catalog::reserve_auto_increment(
          context.catalog.cluster(), context.api_session, counter, needed, [&]() {
            return auto_increment_seed(context, bound, static_cast<uint16_t>(auto_column));
          });
      if (earlier != nullptr) {
        *earlier = StatementContext::ReservedAutoIncrement{counter, first_generated, needed};
      }
      // The counter hands out only values past this reservation now.
      context.catalog.auto_increment_floors().learn(
          bound.table_def->schema.table_id, bound.table_def->version, first_generated + needed - 1);
    }
    uint64_t next = first_generated;
    for (auto& values : row_values) {
      std::optional<SqlValue>& value = values[auto_column];
      if (needs_generated_value(value)) {
        value = SqlValue::of_uint(next++);
      } else if (value->to_double() > 0) {
        any_explicit = true;
        explicit_max =
            std::max<uint64_t>(explicit_max, value->kind == SqlValue::Kind::kUInt
                                                 ? value->u
                                                 : static_cast<uint64_t>(value->to_int()));
      }
    }
  }
  std::vector<NewRow> rows;
  for (size_t r = 0; r < row_values.size(); ++r)
    rows.push_back(complete_row(table, row_values[r], r + 1));

  for (const Assignment& a : statement.on_duplicate) {
    for (size_t n = count_insert_values(*a.value); n > 0; --n) {
      context.add_warning(1287, kValuesDeprecatedMessage);
    }
  }
  WriteCounts counts;
  if (!rows.empty()) {
    if (statement.replace || !statement.on_duplicate.empty()) {
      counts = write_resolving(context, bound, statement, rows);
    } else if (statement.ignore) {
      counts = write_ignoring(context, bound, rows);
    } else if (context.open_transaction != nullptr) {
      counts = write_statement_atomic(context, bound, rows);
    } else {
      // Autocommit: one batch that also commits; any failed row aborts it all.
      const storage::AttrValues hint = primary_key_of(table, rows.front().encoded);
      api::Transaction& tx = context.transaction(bound.table_def.get(), &hint);
      for (NewRow& row : rows) check(tx.insert(*bound.table_def, std::move(row.encoded)));
      try {
        context.execute(true);
      } catch (const SqlException& e) {
        rethrow_with_table(e, table);
      }
      counts = WriteCounts{rows.size(), 0, rows.size()};
    }
  }
  context.finish();
  const uint32_t table_id = bound.table_def->schema.table_id;
  const uint32_t table_version = bound.table_def->version;
  catalog::AutoIncrementFloors& floors = context.catalog.auto_increment_floors();
  if (any_explicit && !floors.covers(table_id, table_version, explicit_max)) {
    // Later generated values must not collide with the explicit ones.
    if (catalog::raise_auto_increment(context.catalog.cluster(), context.api_session,
                                      catalog::cluster_table_name(table.db, table.name),
                                      explicit_max)) {
      floors.learn(table_id, table_version, explicit_max);
    }
  }
  server::OkResult ok;
  ok.affected_rows = counts.affected;
  ok.warnings = static_cast<uint16_t>(std::min<uint64_t>(context.warning_count, UINT16_MAX));
  if (first_generated != 0 && counts.inserted > 0) {
    ok.last_insert_id = first_generated;
    context.last_insert_id = first_generated;
  }
  if (row_values.size() > 1 || statement.select) {
    ok.info = "Records: " + std::to_string(row_values.size()) +
              "  Duplicates: " + std::to_string(counts.duplicates) +
              "  Warnings: " + std::to_string(context.warning_count);
  }
  return ok;
}

}  // namespace duo::sql::executor
