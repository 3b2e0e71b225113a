// Test-only helpers for scan tests: a RowAccessor over a vector of optional encoded
// values, built from text with parse_value. Not thread-safe.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/row/attr_values.h"
#include "storage/row/column.h"
#include "storage/row/table_schema.h"

namespace duo::storage::testing {

using MaybeText = std::optional<std::string>;

// Storage encoding of `text` for `col`; aborts on a parse error (a broken test).
inline std::string encode_text(const ColumnDef& col, const std::string& text) {
  auto r = parse_value(col, text);
  if (!r.ok()) {
    std::fprintf(stderr, "test value '%s' for '%s': %s\n", text.c_str(), col.name.c_str(),
                 r.status().to_string().c_str());
    std::abort();
  }
  return std::move(r).value();
}

class TestRow : public RowAccessor {
 public:
  TestRow() = default;
  explicit TestRow(std::vector<std::optional<std::string>> values) : values_(std::move(values)) {}

  // One text (or nullopt for NULL) per column of `schema`; missing trailing columns are NULL.
  static TestRow from_text(const TableSchema& schema, const std::vector<MaybeText>& texts) {
    std::vector<std::optional<std::string>> values(schema.columns.size());
    for (size_t i = 0; i < texts.size() && i < values.size(); ++i) {
      if (texts[i]) values[i] = encode_text(schema.columns[i], *texts[i]);
    }
    return TestRow(std::move(values));
  }

  ColumnValue get(uint16_t column) const override {
    ++reads_;
    if (column >= values_.size() || !values_[column]) return ColumnValue{{}, true};
    return ColumnValue{*values_[column], false};
  }

  void set(uint16_t column, std::optional<std::string> value) {
    if (column >= values_.size()) values_.resize(column + 1);
    values_[column] = std::move(value);
  }
  // Writes the changes an update produced into this row.
  void apply(const AttrValues& changes) {
    for (size_t i = 0; i < changes.size(); ++i) {
      const auto& e = changes.entry(i);
      if (e.is_null) {
        set(e.column, std::nullopt);
      } else {
        set(e.column, std::string(changes.value(i)));
      }
    }
  }
  size_t reads() const { return reads_; }

 private:
  std::vector<std::optional<std::string>> values_;
  mutable size_t reads_ = 0;
};

}  // namespace duo::storage::testing
