// Internal to functions.cc (the dispatcher, control flow and information functions) and
// its family files (string_functions.cc, numeric_functions.cc, temporal_functions.cc,
// special_forms.cc): the argument helpers every family uses and the per-family entry
// points the dispatcher tries in turn.
//
// A family entry point returns nullopt when it does not know the function's name, so
// that the dispatcher can try the next family and finally throw 1235.
//
// Thread-safety: pure functions over caller-owned inputs.
#pragma once

#include <optional>
#include <string>

#include "sql-frontend/executor/expression.h"

namespace duo::sql::executor::functions_internal {

// Reports MySQL warning `code` (1292 truncated value, 1365 division by 0 ...) to the
// statement (EvalContext::statement; dropped outside one). In strict INSERT/UPDATE it
// throws the statement's error instead.
void warn(const EvalContext& context, uint16_t code, const std::string& message,
          const char* level = "Warning");

// One call's arguments, evaluated on demand (IF, CASE and COALESCE must not evaluate
// the branches they do not take).
class Args {
 public:
  Args(const FunctionExpr& f, const EvalContext& context) : f_(f), context_(context) {}

  const std::string& name() const { return f_.name; }
  size_t size() const { return f_.args.size(); }
  const Expr& expr(size_t i) const { return *f_.args.at(i); }
  SqlValue value(size_t i) const { return evaluate(*f_.args.at(i), context_); }
  const EvalContext& context() const { return context_; }
  void warn(uint16_t code, const std::string& message) const {
    functions_internal::warn(context_, code, message);
  }

  // 1582 unless the call has exactly `n` arguments (MySQL's check, before evaluation).
  void need(size_t n) const { need_between(n, n); }
  void need_between(size_t low, size_t high) const;
  void need_at_least(size_t low) const { need_between(low, SIZE_MAX); }

 private:
  const FunctionExpr& f_;
  const EvalContext& context_;
};

// 1582 Incorrect parameter count in the call to native function 'name'.
[[noreturn]] void throw_parameter_count(const std::string& name);

bool is_integer(const SqlValue& v);
// A DECIMAL's digits after the point (0 for other kinds).
int decimal_scale(const SqlValue& v);
// `v` (a DECIMAL or integer text "-12.345") rounded half away from zero to `scale`
// digits after the point (negative: to tens, hundreds ...), exactly, as text.
std::string round_decimal_text(const std::string& v, int scale, bool truncate);

std::optional<SqlValue> call_control_function(const Args& args);
std::optional<SqlValue> call_string_function(const Args& args);
std::optional<SqlValue> call_json_function(const Args& args);  // json_functions.cc
std::optional<SqlValue> call_numeric_function(const Args& args);
std::optional<SqlValue> call_temporal_function(const Args& args);
std::optional<SqlValue> call_information_function(const Args& args);

// CAST(v AS type) and CONVERT(v, type); conversion warnings go to `context`.
SqlValue cast_value(const SqlValue& v, const DataType& type, const EvalContext& context);
// EXTRACT(unit FROM v).
SqlValue extract_unit(IntervalUnit unit, const SqlValue& v);
// `v` +/- INTERVAL `amount` `unit` (DATE_ADD, DATE_SUB, + INTERVAL, - INTERVAL).
SqlValue add_interval(const SqlValue& v, const SqlValue& amount, IntervalUnit unit, bool subtract);

}  // namespace duo::sql::executor::functions_internal
