// ON DUPLICATE KEY UPDATE: the assignments applied to the row an INSERT collided with,
// where VALUES(col) is the value the INSERT would have written.
//
// The assignments run left to right, each seeing the columns the earlier ones set (as
// MySQL does). Whether the row changed is decided on the stored bytes, as MySQL compares
// record images: 'a' -> 'A' is a change even under a case-insensitive collation.
//
// Thread-safety: pure functions over caller-owned inputs (evaluation reads the session).
#pragma once

#include <optional>
#include <vector>

#include "sql-frontend/executor/row_source.h"
#include "sql-frontend/executor/statement_context.h"

namespace duo::sql::executor {

// The changed columns (storage encoding) of `existing` after `assignments`, or nullopt
// when nothing changes. `inserted` is the completed row of the INSERT (by column id).
// Throws 1054 for unknown columns, 1048 for NULL into NOT NULL, 1235 for a change of a
// primary-key column and for VALUES() nested where it cannot be evaluated.
std::optional<storage::AttrValues> on_duplicate_changes(StatementContext& context,
                                                        const catalog::SqlTable& table,
                                                        const std::vector<Assignment>& assignments,
                                                        const Row& existing, const Row& inserted);

// How many VALUES(col) `expr` holds: MySQL 8.0 warns (1287, deprecated) once for each.
size_t count_insert_values(const Expr& expr);
inline constexpr const char* kValuesDeprecatedMessage =
    "'VALUES function' is deprecated and will be removed in a future release. Please use an "
    "alias (INSERT INTO ... VALUES (...) AS alias) and replace VALUES(col) in the ON "
    "DUPLICATE KEY UPDATE clause with alias.col instead";

// The value of `expr` for the row `context` holds, with VALUES(col) read from `inserted`.
SqlValue evaluate_with_insert_values(const Expr& expr, const EvalContext& context,
                                     const catalog::SqlTable& table, const Row& inserted);

}  // namespace duo::sql::executor
