// Built-in SQL functions of duo_sqld (string, numeric, date and time, control flow,
// information functions) and the special expression forms that behave like functions
// (CASE, CAST/CONVERT, INTERVAL arithmetic, EXTRACT, COLLATE, REGEXP). Aggregates are
// not here: the SELECT executor computes them.
//
// Semantics follow MySQL 8.0; errors are thrown as SqlException (1582 wrong argument
// count, 1235 not supported ...). The families live in their own files: control flow
// and information functions in functions.cc, string_functions.cc,
// numeric_functions.cc, temporal_functions.cc (on temporal.h), and special_forms.cc.
//
// Thread-safety: pure functions over caller-owned inputs.
#pragma once

#include "sql-frontend/executor/expression.h"

namespace duo::sql::executor {

// The value of scalar function call `f` (not an aggregate).
SqlValue call_function(const FunctionExpr& f, const EvalContext& context);
// The value of a CASE, CAST, CONVERT, INTERVAL, EXTRACT, COLLATE or REGEXP expression;
// 1235 for an expression kind it does not know.
SqlValue evaluate_special_form(const Expr& expr, const EvalContext& context);
// `binary` is date + INTERVAL n unit, INTERVAL n unit + date or date - INTERVAL n unit
// (either operand of a + or - is an IntervalExpr): the date moved by the interval.
SqlValue interval_arithmetic(const BinaryExpr& binary, const EvalContext& context);

}  // namespace duo::sql::executor
