// Built-in functions; see functions.h.
#include "sql-frontend/executor/functions.h"

#include <cctype>
#include <cmath>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/parser/ast_printer.h"

namespace duo::sql::executor {

SqlValue call_function(const FunctionExpr& f, const EvalContext& context) {
  const std::string& name = f.name;
  auto arg = [&](size_t i) { return evaluate(*f.args.at(i), context); };
  auto need = [&](size_t n) {
    if (f.args.size() != n) {
      throw SqlException(1582, "42000",
                         "Incorrect parameter count in the call to native function '" + name + "'");
    }
  };
  if (name == "DATABASE" || name == "SCHEMA") {
    if (context.session == nullptr || context.session->database.empty()) return SqlValue::null();
    return SqlValue::of_string(context.session->database);
  }
  if (name == "VERSION") return SqlValue::of_string(server_version());
  if (name == "USER" || name == "CURRENT_USER" || name == "SESSION_USER" || name == "SYSTEM_USER") {
    if (context.session == nullptr) return SqlValue::of_string("root@localhost");
    return SqlValue::of_string(context.session->user + "@" +
                               (name == "CURRENT_USER" ? std::string("%") : context.session->host));
  }
  if (name == "CONNECTION_ID") {
    return SqlValue::of_uint(context.session ? context.session->connection_id : 0);
  }
  if (name == "LAST_INSERT_ID" && f.args.empty()) return SqlValue::of_uint(context.last_insert_id);
  if (name == "CONCAT") {
    std::string out;
    for (size_t i = 0; i < f.args.size(); ++i) {
      SqlValue v = arg(i);
      if (v.is_null()) return SqlValue::null();
      out += v.to_text();
    }
    return SqlValue::of_string(std::move(out));
  }
  if (name == "IFNULL" || name == "COALESCE") {
    if (name == "IFNULL") need(2);
    for (size_t i = 0; i < f.args.size(); ++i) {
      SqlValue v = arg(i);
      if (!v.is_null()) return v;
    }
    return SqlValue::null();
  }
  if (name == "IF") {
    need(3);
    return truth(arg(0)).value_or(false) ? arg(1) : arg(2);
  }
  if (name == "LOWER" || name == "LCASE" || name == "UPPER" || name == "UCASE") {
    need(1);
    SqlValue v = arg(0);
    if (v.is_null()) return v;
    std::string s = v.to_text();
    const bool up = name == "UPPER" || name == "UCASE";
    for (char& c : s)
      c = static_cast<char>(up ? std::toupper(static_cast<unsigned char>(c))
                               : std::tolower(static_cast<unsigned char>(c)));
    return SqlValue::of_string(std::move(s));
  }
  if (name == "LENGTH" || name == "CHAR_LENGTH" || name == "CHARACTER_LENGTH") {
    need(1);
    SqlValue v = arg(0);
    if (v.is_null()) return v;
    const std::string s = v.to_text();
    if (name == "LENGTH") return SqlValue::of_int(static_cast<int64_t>(s.size()));
    int64_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return SqlValue::of_int(n);
  }
  if (name == "ABS") {
    need(1);
    SqlValue v = arg(0);
    if (v.is_null() || v.kind == SqlValue::Kind::kUInt) return v;
    if (v.kind == SqlValue::Kind::kInt) return SqlValue::of_int(v.i < 0 ? -v.i : v.i);
    return SqlValue::of_double(std::fabs(v.to_double()));
  }
  throw_not_supported("function " + name);
}

SqlValue evaluate_special_form(const Expr& expr, const EvalContext& /*context*/) {
  throw_not_supported("expression '" + to_sql(expr) + "'");
}

}  // namespace duo::sql::executor
