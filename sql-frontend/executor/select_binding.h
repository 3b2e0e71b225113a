// Binding of one SELECT block: its FROM clause flattened into the join's levels (one
// table each, in the order written), the names expressions see (Scopes), the output
// columns (`*` and `t.*` expanded), and where each WHERE/ON conjunct is evaluated —
// pushed to a table's row source, turned into a key equality per outer row (FixedColumns),
// or checked in sqld on the joined row at the first level where all its tables are read.
// Also GROUP BY / ORDER BY items (positions, select aliases) and MySQL's
// only_full_group_by check.
//
// Join order: as written (a RIGHT JOIN mirrored). A LEFT JOIN's right table must come
// after its left side, and an inner join keeps the user's order too: no cost model is
// worth its risk until the row sources report index statistics; the equalities still
// make every inner table a keyed lookup per batch of outer rows.
//
// Errors (MySQL's): 1066 duplicate table/alias, 1054 unknown column (with the clause),
// 1052 ambiguous column, 1096 `*` without tables, 1140/1055 only_full_group_by, 1056
// GROUP BY on an aggregate, 1235 for a join tree on the right of a join and for RIGHT
// JOIN other than `table RIGHT JOIN table ON ...` (read as the mirrored LEFT JOIN).
//
// Thread-safety: one session thread (the StatementContext's).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sql-frontend/executor/row_source.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

// An equality that fixes a column of a level's table per outer row: the column equals
// `value` (an expression over earlier levels or the enclosing query), or the column
// `from_column` of earlier scope `from_scope` (USING / NATURAL).
struct JoinEquality {
  uint16_t column = 0;
  const Expr* value = nullptr;
  size_t from_scope = 0;
  uint16_t from_column = 0;
};

// One table of the FROM clause and how the join reads it.
struct JoinLevel {
  // The cluster table (its sql.name is the alias, so qualified names in pushed
  // conditions resolve), or the rows of an in-memory table (system view, derived table).
  std::optional<catalog::BoundTable> bound;
  std::shared_ptr<catalog::SqlTable> memory_table;
  std::vector<Row> memory_rows;
  std::string real_name;          // the table's own name (result metadata's org_table)
  bool computed_columns = false;  // a derived table: columns typed by their values
  bool left_join = false;         // NULL-extended when no row matches its ON
  // Given to the row source: conditions on this table alone (null: none).
  const Expr* pushed = nullptr;
  // Conditions on this table alone not in `pushed`, checked on each candidate row.
  std::vector<const Expr*> local;
  std::vector<JoinEquality> equalities;
  // Checked on the joined row before NULL extension (a LEFT JOIN's ON; any inner
  // condition placed at this level).
  std::vector<const Expr*> match;
  // Checked after NULL extension (WHERE conditions on a LEFT JOIN's table).
  std::vector<const Expr*> after;
  // The columns of `bound` its row source reads (restrict_read_columns()); empty: every
  // column. The others stay NULL in the rows.
  std::vector<uint16_t> read_columns;

  const catalog::SqlTable& table() const { return bound ? bound->sql : *memory_table; }
};

// One output column of the SELECT.
struct OutputColumn {
  const Expr* expr = nullptr;  // null for a column of `*` / `t.*`
  int scope = -1;              // a plain table column: its scope ...
  int table_column = -1;       // ... and column id
  std::string label;
};

// A GROUP BY or ORDER BY item: an output column, or an expression over the row.
struct SortItem {
  int output = -1;             // the output column it names (position or alias)
  const Expr* expr = nullptr;  // otherwise this
  bool descending = false;
};

struct BoundSelect {
  const SelectBlock* block = nullptr;
  std::vector<JoinLevel> levels;
  std::vector<Scope> scopes;       // one per level; rows set while executing
  std::vector<size_t> star_order;  // scopes in the order written (`*`; RIGHT JOIN swaps)
  std::vector<OutputColumn> outputs;
  // Conditions evaluated once, before any table is read (constant WHERE conjuncts).
  std::vector<const Expr*> constant_conditions;
  bool has_subquery = false;  // anywhere in the block: rows are collected before use
  bool grouped = false;       // GROUP BY or an aggregate
  std::vector<SortItem> group_by;
  std::vector<SortItem> order_by;
  std::vector<const Expr*> aggregates;  // every aggregate call of items/HAVING/ORDER BY
};

// The rows of a derived table's query, with its column names and, per column, its
// result metadata when the query gives one (a table's column; nullopt when computed).
// A BIT column stays BIT through the derived table, as in MySQL.
struct DerivedRows {
  std::vector<std::string> names;
  std::vector<Row> rows;
  std::vector<std::optional<server::ColumnDefinition41>> columns;
};
using RunDerived = std::function<DerivedRows(const QueryExpr& query)>;

// Binds `select`. `outer` (null for a top-level SELECT) is the enclosing query's
// context, so a correlated reference binds to it; `run_derived` reads a derived table.
// Every level reads every column of its table.
BoundSelect bind_select_block(StatementContext& context, const SelectBlock& select,
                              const EvalContext* outer, const RunDerived& run_derived);

// For a block whose rows nothing but the block itself looks at (a SELECT's outputs,
// conditions, grouping, ordering and subqueries — not a multi-table UPDATE's SET):
// its levels read only the columns a name anywhere in the block (its subqueries
// included) could mean, and every primary-key and UNIQUE column (the row sources'
// locking re-reads by key and unique re-checks); every column when `*` or NATURAL JOIN
// is used. Reading fewer columns saves
// the data nodes' and sqld's work on rows of wide tables (a range SELECT of one column).
void restrict_read_columns(BoundSelect& select);

}  // namespace duo::sql::executor
