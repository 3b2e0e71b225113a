// Nested-loop joins over row sources; see join_executor.h.
#include "sql-frontend/executor/join_executor.h"

#include "sql-frontend/catalog/sql_exception.h"

namespace duo::sql::executor {

JoinExecutor::JoinExecutor(StatementContext& context, BoundSelect& select, const EvalContext& base,
                           storage::LockMode lock)
    : context_(context), select_(select), base_(base), lock_(lock) {}

bool JoinExecutor::all_pass(const std::vector<const Expr*>& conditions, const char* clause) const {
  if (conditions.empty()) return true;
  EvalContext eval = base_;
  eval.clause = clause;
  for (const Expr* condition : conditions) {
    if (!passes(condition, eval)) return false;
  }
  return true;
}

void JoinExecutor::set_scopes(const Partial& partial) {
  for (size_t s = 0; s < select_.scopes.size(); ++s) {
    select_.scopes[s].row = s < partial.size() && !partial[s].empty() ? &partial[s] : nullptr;
  }
}

bool JoinExecutor::run(const std::function<bool()>& emit) {
  emit_ = &emit;
  std::vector<JoinLevel>& levels = select_.levels;
  if (levels.empty()) return emit();
  JoinLevel& first = levels[0];
  if (levels.size() == 1 && !select_.has_subquery && first.bound && first.equalities.empty()) {
    // The single-table path: rows go from the row source to `emit` without a copy.
    Scope& scope = select_.scopes[0];
    bool stopped = false;
    for_each_row(
        context_, *first.bound, first.pushed, lock_,
        [&](Row& row) {
          scope.row = &row;
          if (!all_pass(first.local, "where clause") || !all_pass(first.match, "where clause") ||
              !all_pass(first.after, "where clause")) {
            return true;
          }
          if (!emit()) stopped = true;
          return !stopped;
        },
        first.read_columns);
    scope.row = nullptr;
    return !stopped;
  }
  std::vector<Partial> start(1);
  return join_level(0, start);
}

const std::vector<Row>& JoinExecutor::level_rows(size_t index) {
  auto it = level_rows_.find(index);
  if (it != level_rows_.end()) return it->second;
  const JoinLevel& level = select_.levels[index];
  std::vector<Row>& rows = level_rows_[index];
  if (level.bound) {
    for_each_row(
        context_, *level.bound, level.pushed, lock_,
        [&](Row& row) {
          if (rows.size() >= kStatementRowsMax) throw_too_many_rows();
          rows.push_back(std::move(row));
          return true;
        },
        level.read_columns);
    return rows;
  }
  // In memory (system view, derived table): its own conditions evaluated here.
  std::vector<Scope> own{select_.scopes[index]};
  EvalContext eval = base_;
  eval.scopes = &own;
  eval.clause = level.left_join ? "on clause" : "where clause";
  for (const Row& row : level.memory_rows) {
    own[0].row = &row;
    if (level.pushed == nullptr || passes(level.pushed, eval)) rows.push_back(row);
  }
  return rows;
}

bool JoinExecutor::emit_batch(std::vector<Partial>& batch) {
  for (const Partial& partial : batch) {
    set_scopes(partial);
    if (!(*emit_)()) return false;
  }
  return true;
}

bool JoinExecutor::join_level(size_t index, std::vector<Partial>& batch) {
  if (index == select_.levels.size()) return emit_batch(batch);
  const JoinLevel& level = select_.levels[index];
  const char* clause = level.left_join ? "on clause" : "where clause";

  // The equalities' values per outer row; a NULL one matches nothing.
  std::vector<FixedColumns> sets;
  std::vector<size_t> set_owner;
  for (size_t b = 0; b < batch.size(); ++b) {
    set_scopes(batch[b]);
    FixedColumns fixed;
    bool possible = true;
    for (const JoinEquality& equality : level.equalities) {
      SqlValue value;
      if (equality.value != nullptr) {
        EvalContext eval = base_;
        eval.clause = "on clause";
        value = evaluate(*equality.value, eval);
      } else if (const Row* row = select_.scopes[equality.from_scope].row; row != nullptr) {
        value = (*row)[equality.from_column];
      }
      if (value.is_null()) {
        possible = false;
        break;
      }
      fixed.emplace_back(equality.column, std::move(value));
    }
    if (!possible) continue;
    sets.push_back(std::move(fixed));
    set_owner.push_back(b);
  }

  // Candidate rows of this level per outer row.
  std::vector<std::vector<Row>> candidates(batch.size());
  size_t held = 0;
  auto hold = [&](size_t owner, Row row) {
    if (++held > kStatementRowsMax) throw_too_many_rows();
    candidates[owner].push_back(std::move(row));
  };
  if (level.bound && !level.equalities.empty()) {
    if (!sets.empty()) {
      for_each_row_batched(
          context_, *level.bound, level.pushed, lock_, sets,
          [&](size_t set, Row& row) {
            hold(set_owner[set], std::move(row));
            return true;
          },
          level.read_columns);
    }
  } else {
    const std::vector<Row>& rows = level_rows(index);
    for (size_t s = 0; s < sets.size(); ++s) {
      for (const Row& row : rows) {
        bool equal = true;
        for (const auto& [column, value] : sets[s]) {
          if (row[column].is_null() || compare(row[column], value) != 0) {
            equal = false;
            break;
          }
        }
        if (equal) hold(set_owner[s], row);
      }
    }
  }

  // Join each outer row with its candidates that pass the remaining conditions.
  std::vector<Partial> next;
  auto push = [&](const Partial& outer, Row row) {
    Partial joined;
    joined.reserve(index + 1);
    joined = outer;
    joined.push_back(std::move(row));
    next.push_back(std::move(joined));
    if (next.size() < kJoinBatchRows) return true;
    const bool go_on = join_level(index + 1, next);
    next.clear();
    return go_on;
  };
  for (size_t b = 0; b < batch.size(); ++b) {
    bool matched = false;
    for (Row& row : candidates[b]) {
      set_scopes(batch[b]);
      select_.scopes[index].row = &row;
      if (!all_pass(level.local, clause) || !all_pass(level.match, clause)) continue;
      matched = true;
      if (!all_pass(level.after, "where clause")) continue;
      if (!push(batch[b], std::move(row))) return false;
    }
    if (!matched && level.left_join) {
      set_scopes(batch[b]);
      select_.scopes[index].row = nullptr;
      if (all_pass(level.after, "where clause") && !push(batch[b], Row{})) return false;
    }
  }
  if (next.empty()) return true;
  return join_level(index + 1, next);
}

}  // namespace duo::sql::executor
