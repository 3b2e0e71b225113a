// ViewBuilder and value helpers shared by the files that compute system views
// (system_views.cc: from the catalog and the cluster; server_views.cc: from this
// server's variables, counters, character sets and connections).
//
// Thread-safety: a builder is used by one thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sql-frontend/catalog/sql_table.h"
#include "sql-frontend/executor/system_views.h"

namespace duo::sql::executor {

// Builds a view's columns; `type` is a declared type ("varchar(64)", "bigint unsigned").
class ViewBuilder {
 public:
  ViewBuilder(const std::string& db, const std::string& name) {
    view_.table.db = db;
    view_.table.name = name;
  }
  ViewBuilder& column(const std::string& name, const std::string& type, bool nullable = false) {
    catalog::SqlColumn column;
    column.name = name;
    column.declared_type = type;
    column.nullable = nullable;
    catalog::derive_storage(&column);
    view_.table.columns.push_back(std::move(column));
    return *this;
  }
  // Rows held in sqld are bounded like a statement's (1038 beyond kStatementRowsMax).
  void row(std::vector<SqlValue> values) {
    if (view_.rows.size() >= kStatementRowsMax) throw_too_many_rows();
    view_.rows.push_back(std::move(values));
  }
  SystemView done() { return std::move(view_); }

 private:
  SystemView view_;
};

inline SqlValue text(std::string value) {
  return SqlValue::of_string(std::move(value));
}
inline SqlValue number(uint64_t value) {
  return SqlValue::of_uint(value);
}
inline SqlValue nullable_text(const std::optional<std::string>& value) {
  return value ? text(*value) : SqlValue::null();
}

}  // namespace duo::sql::executor
