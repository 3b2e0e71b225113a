// What the simulator's bank-transfer tests share (coordinator/takeover_sim_test.cc,
// distribution/node_restart_sim_test.cc, membership/dead_node_signals_sim_test.cc; their
// transfer workload is bank_transfers.h): the accounts table (id INT primary key,
// balance BIGINT, tag BIGINT UNIQUE), its operation bodies, a replica's committed rows
// read straight from a node's fragments, and "nothing is open anywhere".
//
// Thread-safety: none (the simulator is single-threaded; call between its steps).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/testing/sim_cluster.h"
#include "ndb-kernel/testing/value_bytes.h"
#include "storage/row/table_schema.h"

namespace duo::testing {

// A count from the environment (seed campaigns: DUO_..._SEEDS), else `fallback`.
uint64_t env_u64(const char* name, uint64_t fallback);

// bank/def/accounts (id INT PRIMARY KEY, balance BIGINT NOT NULL, tag BIGINT NOT NULL,
// UNIQUE KEY tag_uk (tag)); every row's tag is its id, so the unique index (a hidden
// table, protocol/unique_index.h) rides along every restart and copy the tests do.
inline constexpr const char* kTagIndex = "tag_uk";
storage::TableSchema bank_accounts_schema();
// The whole row (insert), and "balance += delta" as an interpreted update.
protocol::OpBody account_row(int32_t id, int64_t balance);
protocol::OpBody add_to_balance(int32_t id, int64_t delta);

// Every committed row of table `table_id` held by `node` (all its log parts): id ->
// balance. The node must be up.
std::map<int32_t, int64_t> replica_rows(SimCluster& cluster, uint16_t node, uint32_t table_id);
// The entries of the accounts table's tag_uk index held by `node`: tag -> id.
std::map<int32_t, int64_t> replica_tag_index(SimCluster& cluster, uint16_t node,
                                             uint32_t table_id);

// No coordinator of `nodes` holds a transaction or a pending takeover, and no
// local_query instance holds a transaction.
bool quiesced(SimCluster& cluster, const std::vector<uint16_t>& nodes);

}  // namespace duo::testing
