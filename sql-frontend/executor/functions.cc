// Built-in functions; see functions.h. This file dispatches a call to its family
// (string_functions.cc, numeric_functions.cc, temporal_functions.cc, and the control
// flow and information functions below) and holds the helpers they share.
#include "sql-frontend/executor/functions.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <thread>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/function_family.h"
#include "sql-frontend/executor/statement_context.h"
#include "sql-frontend/parser/ast_printer.h"

namespace duo::sql::executor {

namespace functions_internal {

void throw_parameter_count(const std::string& name) {
  throw SqlException(1582, "42000",
                     "Incorrect parameter count in the call to native function '" + name + "'");
}

void warn(const EvalContext& context, uint16_t code, const std::string& message,
          const char* level) {
  if (context.statement) context.statement->expression_warning(code, message, level);
}

void Args::need_between(size_t low, size_t high) const {
  if (size() < low || size() > high) throw_parameter_count(name());
}

bool is_integer(const SqlValue& v) {
  return v.kind == SqlValue::Kind::kInt || v.kind == SqlValue::Kind::kUInt;
}

int decimal_scale(const SqlValue& v) {
  if (v.kind != SqlValue::Kind::kDecimal) return 0;
  const size_t dot = v.s.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(v.s.size() - dot - 1);
}

std::string round_decimal_text(const std::string& v, int scale, bool truncate) {
  // Works on the digits as a string so that DECIMAL stays exact (ROUND(2.675, 2) is
  // 2.68 in MySQL, where a binary double would give 2.67).
  const bool negative = !v.empty() && v[0] == '-';
  const std::string body = !v.empty() && (v[0] == '-' || v[0] == '+') ? v.substr(1) : v;
  const size_t dot = body.find('.');
  std::string int_part = dot == std::string::npos ? body : body.substr(0, dot);
  std::string frac_part = dot == std::string::npos ? "" : body.substr(dot + 1);
  if (int_part.empty()) int_part = "0";
  if (scale > static_cast<int>(frac_part.size())) frac_part.resize(static_cast<size_t>(scale), '0');
  const std::string digits = int_part + frac_part;
  const int keep = static_cast<int>(int_part.size()) + scale;  // digits kept from the left
  if (keep < 0) return "0";
  const char next =
      static_cast<size_t>(keep) < digits.size() ? digits[static_cast<size_t>(keep)] : '0';
  std::string kept = digits.substr(0, static_cast<size_t>(keep));
  if (!truncate && next >= '5') {
    size_t k = kept.size();
    while (k > 0 && kept[k - 1] == '9') kept[--k] = '0';
    if (k > 0) {
      ++kept[k - 1];
    } else {
      kept.insert(kept.begin(), '1');
    }
  }
  std::string int_out;
  std::string frac_out;
  if (scale >= 0) {
    const size_t int_digits = kept.size() - static_cast<size_t>(scale);
    int_out = kept.substr(0, int_digits);
    frac_out = kept.substr(int_digits);
  } else {
    int_out = kept + std::string(static_cast<size_t>(-scale), '0');
  }
  const size_t first = int_out.find_first_not_of('0');
  int_out = first == std::string::npos ? "0" : int_out.substr(first);
  std::string out = int_out + (scale > 0 ? "." + frac_out : "");
  const bool zero = out.find_first_not_of("0.") == std::string::npos;
  return negative && !zero ? "-" + out : out;
}

std::optional<SqlValue> call_information_function(const Args& args) {
  const std::string& name = args.name();
  const server::SessionState* session = args.context().session;
  if (name == "DATABASE" || name == "SCHEMA") {
    args.need(0);
    if (session == nullptr || session->database.empty()) return SqlValue::null();
    return SqlValue::of_string(session->database);
  }
  if (name == "VERSION") {
    args.need(0);
    return SqlValue::of_string(server_version());
  }
  if (name == "USER" || name == "CURRENT_USER" || name == "SESSION_USER" || name == "SYSTEM_USER") {
    args.need(0);
    if (session == nullptr) return SqlValue::of_string("root@localhost");
    // CURRENT_USER is the account matched (accounts are stored as user@'%').
    return SqlValue::of_string(session->user + "@" +
                               (name == "CURRENT_USER" ? std::string("%") : session->host));
  }
  if (name == "CONNECTION_ID") {
    args.need(0);
    return SqlValue::of_uint(session ? session->connection_id : 0);
  }
  if (name == "ROW_COUNT" || name == "FOUND_ROWS") {
    args.need(0);
    StatementContext* statement = args.context().statement;
    if (name == "ROW_COUNT") return SqlValue::of_int(statement ? statement->previous_row_count : -1);
    if (statement == nullptr) return SqlValue::of_uint(0);
    statement->add_warning(1287, "'FOUND_ROWS()' is deprecated and will be removed in a future "
                                 "release. Consider using COUNT(*) instead.");
    return SqlValue::of_uint(statement->previous_found_rows);
  }
  if (name == "SLEEP") {
    // 0 after the full time; 1 when KILL (QUERY) interrupts it, as MySQL does.
    args.need(1);
    const SqlValue seconds = args.value(0);
    if (seconds.is_null() || seconds.to_double() < 0) {
      throw SqlException(1210, "HY000", "Incorrect arguments to sleep");
    }
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(
                                                 std::min(seconds.to_double(), 1e7)));
    for (auto now = Clock::now(); now < deadline; now = Clock::now()) {
      if (session != nullptr && session->interrupted()) return SqlValue::of_int(1);
      std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(10),
                                                            deadline - now));
    }
    return SqlValue::of_int(0);
  }
  if (name == "LAST_INSERT_ID") {
    args.need_between(0, 1);
    if (args.size() == 0) return SqlValue::of_uint(args.context().last_insert_id);
    // LAST_INSERT_ID(expr) returns expr; remembering it for the next call needs the
    // session to carry it (not yet).
    SqlValue v = args.value(0);
    if (v.is_null()) return SqlValue::of_uint(0);
    return SqlValue::of_uint(static_cast<uint64_t>(v.to_int()));
  }
  return std::nullopt;
}

std::optional<SqlValue> call_control_function(const Args& args) {
  const std::string& name = args.name();
  if (name == "IFNULL") {
    args.need(2);
    SqlValue v = args.value(0);
    return v.is_null() ? args.value(1) : v;
  }
  if (name == "COALESCE") {
    args.need_at_least(1);
    for (size_t i = 0; i < args.size(); ++i) {
      SqlValue v = args.value(i);
      if (!v.is_null()) return v;
    }
    return SqlValue::null();
  }
  if (name == "IF") {
    args.need(3);
    return truth(args.value(0)).value_or(false) ? args.value(1) : args.value(2);
  }
  if (name == "NULLIF") {
    args.need(2);
    SqlValue a = args.value(0);
    SqlValue b = args.value(1);
    if (!a.is_null() && !b.is_null() && compare(a, b) == 0) return SqlValue::null();
    return a;
  }
  if (name == "GREATEST" || name == "LEAST") {
    args.need_at_least(2);
    std::vector<SqlValue> values;
    for (size_t i = 0; i < args.size(); ++i) {
      values.push_back(args.value(i));
      if (values.back().is_null()) return SqlValue::null();
    }
    // Numbers compare numerically when any argument is a number; all strings compare
    // as strings under the collation (compare() does both).
    const bool greatest = name == "GREATEST";
    size_t best = 0;
    for (size_t i = 1; i < values.size(); ++i) {
      const int c = compare(values[i], values[best]);
      if (greatest ? c > 0 : c < 0) best = i;
    }
    const bool any_string = std::any_of(values.begin(), values.end(),
                                        [](const SqlValue& v) { return !v.is_numeric(); });
    const bool any_number =
        std::any_of(values.begin(), values.end(), [](const SqlValue& v) { return v.is_numeric(); });
    if (any_string && any_number) {
      // Mixed: MySQL compares and returns as DOUBLE.
      return SqlValue::of_double(values[best].to_double());
    }
    return values[best];
  }
  if (name == "INTERVAL") {
    // INTERVAL(n, n1, n2, ...): the index of the last n_i <= n; -1 for a NULL n.
    args.need_at_least(2);
    SqlValue n = args.value(0);
    if (n.is_null()) return SqlValue::of_int(-1);
    int64_t index = 0;
    for (size_t i = 1; i < args.size(); ++i) {
      SqlValue bound = args.value(i);
      if (bound.is_null() || compare(n, bound) < 0) break;
      index = static_cast<int64_t>(i);
    }
    return SqlValue::of_int(index);
  }
  return std::nullopt;
}

// 1305 for a call no family knows: MySQL takes it for a stored function of the current
// database (1046 without one), named as written (the AST keeps it upper case).
[[noreturn]] void throw_unknown_function(const FunctionExpr& f, const EvalContext& context) {
  std::string name = f.name;
  if (const StatementContext* statement = context.statement) {
    const std::string_view text = statement->source_text;
    if (f.pos.offset + name.size() <= text.size()) {
      const std::string_view written = text.substr(f.pos.offset, name.size());
      const bool same =
          std::equal(written.begin(), written.end(), name.begin(), [](char a, char b) {
            return std::toupper(static_cast<unsigned char>(a)) == static_cast<unsigned char>(b);
          });
      if (same) name = written;
    }
  }
  if (f.db)
    throw SqlException(1305, "42000", "FUNCTION " + f.db->name + "." + name + " does not exist");
  if (context.session == nullptr || context.session->database.empty()) throw_no_database_selected();
  throw SqlException(1305, "42000",
                     "FUNCTION " + context.session->database + "." + name + " does not exist");
}

}  // namespace functions_internal

SqlValue call_function(const FunctionExpr& f, const EvalContext& context) {
  using namespace functions_internal;
  const Args args(f, context);
  if (std::optional<SqlValue> v = call_control_function(args)) return std::move(*v);
  if (std::optional<SqlValue> v = call_string_function(args)) return std::move(*v);
  if (std::optional<SqlValue> v = call_json_function(args)) return std::move(*v);
  if (std::optional<SqlValue> v = call_numeric_function(args)) return std::move(*v);
  if (std::optional<SqlValue> v = call_temporal_function(args)) return std::move(*v);
  if (std::optional<SqlValue> v = call_information_function(args)) return std::move(*v);
  throw_unknown_function(f, context);
}

}  // namespace duo::sql::executor
