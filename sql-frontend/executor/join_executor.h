// Nested-loop join of a bound SELECT block (select_binding.h): produces the joined rows
// of its FROM clause that pass WHERE and ON, setting the block's Scopes to each in turn.
//
// Each level after the first reads its table for a batch of outer rows at once
// (kJoinBatchRows): the level's equalities become FixedColumns per outer row and one
// for_each_row_batched call serves the batch, so key lookups (by primary key, or by a
// UNIQUE key through its hidden table) share round trips. A level
// without equalities reads its table once per statement (conditions on that table alone
// pushed) and keeps the rows. LEFT JOIN: an outer row whose candidates all fail the ON
// is joined with a NULL-extended row (Scope::row null).
//
// A single table without subqueries streams rows straight from its row source, so LIMIT
// stops the scan early and a primary-key read costs no copy. Otherwise the rows of a
// level are read completely before the next level's reads start: a row source's scan is
// never open while another read (or a subquery) runs in the same transaction.
//
// Memory: at most kStatementRowsMax rows of one level, and of one batch's candidates,
// are held (1038 beyond).
//
// Thread-safety: one session thread (the StatementContext's).
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "sql-frontend/executor/select_binding.h"

namespace duo::sql::executor {

// Outer rows per batched read of an inner table.
inline constexpr size_t kJoinBatchRows = 256;

class JoinExecutor {
 public:
  // `base` evaluates conditions: its `scopes` must be `&select.scopes`.
  JoinExecutor(StatementContext& context, BoundSelect& select, const EvalContext& base,
               storage::LockMode lock);

  // Calls `emit()` for every joined row (the scopes' rows set) until it returns false.
  // Returns false when stopped that way.
  bool run(const std::function<bool()>& emit);

 private:
  // Rows of levels 0..i-1 of one partial joined row; an empty Row is NULL-extended.
  using Partial = std::vector<Row>;

  bool join_level(size_t level, std::vector<Partial>& batch);
  bool emit_batch(std::vector<Partial>& batch);
  void set_scopes(const Partial& partial);
  bool all_pass(const std::vector<const Expr*>& conditions, const char* clause) const;
  // The rows of `level` selected by its own conditions, read once.
  const std::vector<Row>& level_rows(size_t level);

  StatementContext& context_;
  BoundSelect& select_;
  const EvalContext& base_;
  storage::LockMode lock_;
  const std::function<bool()>* emit_ = nullptr;
  std::map<size_t, std::vector<Row>> level_rows_;  // levels read once
};

}  // namespace duo::sql::executor
