// The sysbench table shape used by the storage benchmarks and the storage demo:
//   CREATE TABLE sbtest1 (id INT NOT NULL, k INT NOT NULL DEFAULT 0,
//     c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '',
//     PRIMARY KEY (id), KEY k_1 (k))
// As in NDB, the primary key has a hash index plus an ordered index (for ranges).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/row/attr_values.h"
#include "storage/row/table_schema.h"

namespace duo::storage {

// `ordered_indexes` false: only the hash index (PRIMARY KEY ... USING HASH).
inline TableSchema sysbench_table_schema(bool ordered_indexes = true) {
  TableSchema schema;
  schema.name = "sbtest1";
  schema.columns = {{"id", ColumnType::kInt, false, false},
                    {"k", ColumnType::kInt, false, false},
                    {"c", ColumnType::kChar, false, false, 120},
                    {"pad", ColumnType::kChar, false, false, 60}};
  schema.primary_key = {0};
  if (ordered_indexes) schema.ordered_indexes = {{"pk_ordered", {0}, false}, {"k_1", {1}, false}};
  return schema;
}

// Fills *row (cleared first) with one sysbench row; INT is 4 bytes little-endian.
inline void fill_sysbench_row(AttrValues* row, int32_t id, int32_t k, std::string_view c,
                              std::string_view pad) {
  row->clear();
  row->add(0, std::string_view(reinterpret_cast<const char*>(&id), 4));
  row->add(1, std::string_view(reinterpret_cast<const char*>(&k), 4));
  row->add(2, c);
  row->add(3, pad);
}

}  // namespace duo::storage
