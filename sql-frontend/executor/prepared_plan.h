// PreparedPlan: what binding and planning computed for a SELECT, kept across the
// executions of a prepared statement (COM_STMT_PREPARE, or SQL PREPARE) so that an
// execution only reads rows (issue 14): the bound block (its tables, scopes, outputs,
// where each condition is evaluated), the result metadata encoded once, and — for a
// point SELECT, `SELECT <columns> FROM t WHERE <each primary-key column> = <? or
// literal> [LIMIT ...]` without anything else — the key builder and the columns to
// read, so the row is fetched by one key read of just those columns, without planning.
//
// Validity: a plan is used only while what it was computed from holds: the session's
// current database, and the cluster TableDef of every table it bound (one client-library
// cache lookup each; the cache hands out a new definition after any schema change —
// ALTER, DROP + CREATE, RENAME, TRUNCATE — made through this sqld or another, as the
// dictionary's schema events arrive). Otherwise the statement is bound again, as at its
// first execution, with the errors that gives (1146 for a dropped table, 1054 for a
// dropped column). Privileges are checked before every execution, apart from the plan
// (privilege_check.h PrivilegeCheckCache).
//
// A point SELECT's key value that the planner would not use as a key (a string for an
// integer column, a fraction ...) runs the bound block the general way: the point path
// never answers what the planner would answer differently. Debug builds check every key
// it builds against plan_access().
//
// Not planned (bound at each execution, as before): UNION, derived tables, system views,
// and blocks with subqueries.
//
// Thread-safety: one session thread (the connection's prepared statement).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sql-frontend/executor/select_executor.h"

namespace duo::sql::executor {

class PreparedPlan {
 public:
  // Binds SELECT `statement` as its execution in `context` would. Throws as binding does.
  // The plan of a statement that is not planned (see above) only says so (planned()
  // false) and stays valid while the current database does.
  static std::unique_ptr<PreparedPlan> bind_select(StatementContext& context,
                                                   const SelectStatement& statement);

  PreparedPlan(const PreparedPlan&) = delete;
  PreparedPlan& operator=(const PreparedPlan&) = delete;

  bool planned() const { return select_ != nullptr; }
  // True while everything the plan was computed from holds for `context` (see above).
  bool still_valid(StatementContext& context) const;
  // Runs the statement: the SELECT executor's result (execute_select). planned() only.
  server::StatementResult execute(StatementContext& context);

 private:
  // A primary-key point SELECT (see above).
  struct Point {
    // The expression giving each primary-key column, in primary_key() order.
    std::vector<std::pair<uint16_t, const Expr*>> key;
    std::vector<uint16_t> read_columns;  // distinct, what the outputs need
    std::vector<uint16_t> outputs;       // table column of each output
    storage::LockMode lock = storage::LockMode::kCommittedRead;
  };

  PreparedPlan() = default;
  // The point form of the bound block, if it has one.
  static std::optional<Point> point_of(const BoundSelect& select);
  // Runs the point read; nullopt when a key value is not one the planner would use.
  std::optional<server::StatementResult> execute_point(StatementContext& context);

  std::string database_;  // the session's current database when bound
  // The cluster tables bound: cluster name and the definition bound against.
  std::vector<std::pair<std::string, api::TablePtr>> tables_;
  std::unique_ptr<BoundSelect> select_;  // null: not planned
  BoundOutputs outputs_;
  std::optional<Point> point_;
};

// Runs SELECT `statement` through `*plan`, binding it first when it is null or no
// longer valid; a statement that is not planned runs as execute_select(). With a null
// `plan` (a statement run once), a plan is made for this execution only.
server::StatementResult execute_select_planned(StatementContext& context,
                                               const SelectStatement& statement,
                                               std::unique_ptr<PreparedPlan>* plan);

}  // namespace duo::sql::executor
