#include "ndb-kernel/testing/bank_accounts.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/protocol/unique_index.h"
#include "storage/scan/interpreted_update.h"

namespace duo::testing {

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr ? std::strtoull(text, nullptr, 10) : fallback;
}

storage::TableSchema bank_accounts_schema() {
  storage::TableSchema schema;
  schema.name = "bank/def/accounts";
  schema.columns = {{"id", storage::ColumnType::kInt, false, false},
                    {"balance", storage::ColumnType::kBigInt, false, false},
                    {"tag", storage::ColumnType::kBigInt, false, false}};
  schema.primary_key = {0};
  schema.ordered_indexes = {{kTagIndex, {2}, true}};
  return schema;
}

protocol::OpBody account_row(int32_t id, int64_t balance) {
  protocol::OpBody body;
  body.key_or_row.add(0, i32(id));
  body.key_or_row.add(1, i64(balance));
  body.key_or_row.add(2, i64(id));
  return body;
}

protocol::OpBody add_to_balance(int32_t id, int64_t delta) {
  protocol::OpBody body;
  body.key_or_row.add(0, i32(id));
  storage::InterpretedUpdate program;
  program.add(1, delta);
  body.program = program.encode();
  return body;
}


std::map<int32_t, int64_t> replica_rows(SimCluster& cluster, uint16_t node, uint32_t table_id) {
  std::map<int32_t, int64_t> rows;
  EXPECT_TRUE(cluster
                  .for_each_row(node, table_id,
                                [&](const storage::RowBatch::Row& row) {
                                  int32_t id = 0;
                                  std::memcpy(&id, row.value(0).data(), 4);
                                  rows[id] = as_i64(row.value(1));
                                })
                  .ok());
  return rows;
}

std::map<int32_t, int64_t> replica_tag_index(SimCluster& cluster, uint16_t node,
                                             uint32_t table_id) {
  std::map<int32_t, int64_t> entries;
  EXPECT_TRUE(cluster
                  .for_each_row(node, protocol::unique_index_table_id(table_id, kTagIndex),
                                [&](const storage::RowBatch::Row& row) {
                                  int32_t id = 0;
                                  std::memcpy(&id, row.value(1).data(), 4);
                                  entries[static_cast<int32_t>(as_i64(row.value(0)))] = id;
                                })
                  .ok());
  return entries;
}

bool quiesced(SimCluster& cluster, const std::vector<uint16_t>& nodes) {
  for (uint16_t node : nodes) {
    auto* tc = cluster.block<coordinator::CoordinatorBlock>(node, protocol::kCoordinatorBlock);
    if (tc->transaction_count() != 0 || tc->takeover_pending()) return false;
    for (uint16_t part = 0; part < cluster.topology().log_parts; ++part) {
      if (cluster.block<local_query::LocalQueryBlock>(node, protocol::kLocalQueryBlock, part)
              ->transaction_count() != 0) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace duo::testing
