// The data path end to end in the simulator: real dictionary, coordinator and
// local_query blocks on two data nodes (one node group, two replicas), a scripted
// client speaking the protocol. Checks what a client is promised: committed rows are on
// both replicas, errors abort cleanly, lock waits time out with 1205, scans see every
// row once, a departed client's transactions are aborted, and under concurrent
// conflicting transfers (with deadlocks resolved by the lock timeout) money is
// conserved and the replicas stay identical.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "ndb-kernel/common/random.h"
#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/dictionary/dictionary_block.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/protocol/packed_signals.h"
#include "ndb-kernel/protocol/unique_index.h"
#include "ndb-kernel/testing/bank_accounts.h"
#include "ndb-kernel/testing/sim_cluster.h"
#include "ndb-kernel/testing/value_bytes.h"
#include "storage/scan/filter.h"
#include "storage/scan/interpreted_update.h"

namespace duo::testing {
namespace {

using kernel::Signal;
using protocol::OpBody;
using protocol::TableDef;
using storage::AttrValues;
using storage::ColumnType;
using storage::OpType;

// accounts(id INT PRIMARY KEY, balance BIGINT NOT NULL, note VARCHAR(20), KEY(balance))
storage::TableSchema accounts_schema() {
  storage::TableSchema schema;
  schema.name = "bank/def/accounts";
  schema.columns = {{"id", ColumnType::kInt, false, false},
                    {"balance", ColumnType::kBigInt, false, false},
                    {"note", ColumnType::kVarchar, false, true, 20}};
  schema.primary_key = {0};
  schema.ordered_indexes = {{"balance_idx", {1}, false}};
  return schema;
}

class DataPathTest : public ::testing::Test {
 protected:
  explicit DataPathTest(SimClusterOptions options = {}) : cluster_(options) {}

  ScriptClient& client() { return cluster_.client(); }

  TableDef create_accounts(storage::TableSchema schema = accounts_schema()) {
    // The definition fetched as a client would, from the other node.
    Result<TableDef> table = cluster_.create_table(create_table_signal(1, schema), 2);
    EXPECT_TRUE(table.ok()) << table.status().to_string();
    return table.ok() ? *table : TableDef{};
  }

  static OpBody row(int32_t id, int64_t balance) {
    OpBody body;
    body.key_or_row.add(0, i32(id));
    body.key_or_row.add(1, i64(balance));
    body.key_or_row.add_null(2);
    return body;
  }
  static OpBody key(int32_t id) {
    OpBody body;
    body.key_or_row.add(0, i32(id));
    return body;
  }
  static OpBody add_balance(int32_t id, int64_t delta) {
    OpBody body = key(id);
    storage::InterpretedUpdate program;
    program.add(1, delta);
    body.program = program.encode();
    return body;
  }

  void send_op(uint16_t tc, uint64_t api_tx, uint32_t op_index, OpType type, const OpBody& body,
               uint8_t flags, storage::LockMode lock = storage::LockMode::kCommittedRead) {
    ASSERT_TRUE(client()
                    .send(SimCluster::coordinator(tc),
                          key_signal(api_tx, op_index, table_, type, body, flags, lock))
                    .ok());
  }

  // Waits for the TC_KEYCONF(s) of api_tx up to kTcBatchDone; merges their results.
  protocol::TcKeyConf wait_conf(uint64_t api_tx, uint64_t limit_ms = 10'000) {
    protocol::TcKeyConf merged;
    merged.api_tx = api_tx;
    for (;;) {
      bool found = false;
      EXPECT_TRUE(cluster_.run_until(
          [&] {
            for (const Signal& s : client().inbox()) {
              if (s.id() == protocol::kTcKeyConf && protocol::transaction_of(s) == api_tx) {
                return found = true;
              }
            }
            return false;
          },
          limit_ms));
      if (!found) return merged;
      for (auto it = client().inbox().begin(); it != client().inbox().end(); ++it) {
        if (it->id() != protocol::kTcKeyConf || protocol::transaction_of(*it) != api_tx) continue;
        Result<protocol::TcKeyConf> conf = protocol::TcKeyConf::from_signal(*it);
        client().inbox().erase(it);
        EXPECT_TRUE(conf.ok());
        for (auto& r : conf->results) merged.results.push_back(std::move(r));
        merged.flags = conf->flags;
        merged.tx_error = conf->tx_error;
        merged.tx_message = conf->tx_message;
        break;
      }
      if ((merged.flags & protocol::kTcBatchDone) != 0) return merged;
    }
  }

  // Committed read of one account through coordinator `tc`; nullopt if absent.
  std::optional<int64_t> read_balance(uint16_t tc, int32_t id) {
    const uint64_t tx = next_tx_++;
    OpBody body = key(id);
    body.columns = {1};
    send_op(tc, tx, 0, OpType::kRead, body, protocol::kOpExecute | protocol::kOpCommit);
    protocol::TcKeyConf conf = wait_conf(tx);
    EXPECT_EQ(conf.results.size(), 1u);
    if (conf.results.empty() || conf.results[0].error != ErrorCode::kOk) return std::nullopt;
    protocol::ByteReader in(protocol::as_view(conf.results[0].data));
    AttrValues values;
    EXPECT_TRUE(protocol::decode_attr_values(&in, &values));
    EXPECT_EQ(values.size(), 1u);
    return as_i64(values.value(0));
  }

  // Every committed row of the table on `node`: id -> balance (both replicas must agree).
  std::map<int32_t, int64_t> replica_contents(uint16_t node) {
    return replica_rows(cluster_, node, table_.schema.table_id);
  }

  // Every committed row of `table_id` on `node` as column 0 -> column `value_column`
  // (raw bytes; "NULL" for NULL).
  std::map<std::string, std::string> raw_contents(uint16_t node, uint32_t table_id,
                                                  size_t value_column) {
    std::map<std::string, std::string> rows;
    EXPECT_TRUE(cluster_
                    .for_each_row(node, table_id,
                                  [&](const storage::RowBatch::Row& row) {
                                    rows[std::string(row.value(0))] =
                                        row.is_null(value_column)
                                            ? "NULL"
                                            : std::string(row.value(value_column));
                                  })
                    .ok());
    return rows;
  }

  SimCluster cluster_;
  TableDef table_;
  uint64_t next_tx_ = 1000;
};

TEST_F(DataPathTest, CreateTableReachesEveryNodeAndBlock) {
  table_ = create_accounts();
  EXPECT_EQ(table_.schema.name, "bank/def/accounts");
  EXPECT_EQ(table_.fragment_count, 4u);  // 1 node group x 2 replicas x PartitionsPerNode 2
  for (uint16_t node : {1, 2}) {
    auto* dict = cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock);
    EXPECT_EQ(dict->tables().count(table_.schema.table_id), 1u);
    size_t fragments = 0;
    for (uint16_t part = 0; part < 4; ++part) {
      const size_t here =
          cluster_.block<local_query::LocalQueryBlock>(node, protocol::kLocalQueryBlock, part)
              ->fragment_ids(table_.schema.table_id)
              .size();
      EXPECT_EQ(here, 1u) << "node " << node << " log part " << part
                          << ": the fragments spread over the log parts";
      fragments += here;
    }
    EXPECT_EQ(fragments, 4u) << "node " << node << " holds a replica of every fragment";
  }
}

TEST_F(DataPathTest, CommittedInsertsAreOnBothReplicasAndReadableThroughAnyCoordinator) {
  table_ = create_accounts();
  const uint64_t tx = next_tx_++;
  for (int32_t id = 0; id < 100; ++id) {
    send_op(2, tx, static_cast<uint32_t>(id), OpType::kInsert, row(id, 1000 + id),
            id == 99 ? protocol::kOpExecute | protocol::kOpCommit : 0);
  }
  protocol::TcKeyConf conf = wait_conf(tx);
  EXPECT_TRUE(conf.flags & protocol::kTcCommitted);
  ASSERT_EQ(conf.results.size(), 100u);
  std::set<uint32_t> seen;
  for (const auto& r : conf.results) {
    EXPECT_EQ(r.error, ErrorCode::kOk);
    seen.insert(r.op_index);
  }
  EXPECT_EQ(seen.size(), 100u);
  const auto on_1 = replica_contents(1);
  EXPECT_EQ(on_1.size(), 100u);
  EXPECT_EQ(on_1, replica_contents(2));
  EXPECT_EQ(read_balance(1, 42), 1042);
  EXPECT_EQ(read_balance(2, 99), 1099);
  EXPECT_EQ(read_balance(1, 100), std::nullopt);
}

// A batch sent as one PACKED_SIGNALS (as the client library does) travels packed from
// the coordinator to every replica and back, and means exactly what the single signals
// mean: every row on both replicas, every read answered, one error ignorable.
TEST_F(DataPathTest, PackedBatchesRunLikeSingleSignalsAcrossTheReplicaChain) {
  table_ = create_accounts();
  auto send_packed = [&](uint16_t tc, std::vector<Signal> signals) {
    ASSERT_TRUE(client().send(SimCluster::coordinator(tc), protocol::pack_signals(signals)).ok());
  };
  const uint64_t insert_tx = next_tx_++;
  std::vector<Signal> inserts;
  for (int32_t id = 0; id < 100; ++id) {
    inserts.push_back(key_signal(insert_tx, static_cast<uint32_t>(id), table_, OpType::kInsert,
                                 row(id, 1000 + id),
                                 id == 99 ? protocol::kOpExecute | protocol::kOpCommit : 0,
                                 storage::LockMode::kCommittedRead));
  }
  send_packed(2, std::move(inserts));
  protocol::TcKeyConf inserted = wait_conf(insert_tx);
  EXPECT_TRUE(inserted.flags & protocol::kTcCommitted);
  EXPECT_EQ(inserted.results.size(), 100u);
  const auto on_1 = replica_contents(1);
  EXPECT_EQ(on_1.size(), 100u);
  EXPECT_EQ(on_1, replica_contents(2));

  auto* tc = cluster_.block<coordinator::CoordinatorBlock>(2, protocol::kCoordinatorBlock, 0);
  EXPECT_GE(tc->stats().packs_received, 2u) << "the client's pack and packed answers";
  EXPECT_GE(tc->stats().packs_sent, 1u) << "LQH_KEYREQs leave packed";

  // Reads of 100 rows and a duplicate insert that may be ignored, in one pack.
  const uint64_t read_tx = next_tx_++;
  std::vector<Signal> reads;
  for (int32_t id = 0; id < 100; ++id) {
    OpBody body = key(id);
    body.columns = {1};
    reads.push_back(key_signal(read_tx, static_cast<uint32_t>(id), table_, OpType::kRead, body, 0,
                               storage::LockMode::kCommittedRead));
  }
  reads.push_back(key_signal(read_tx, 100, table_, OpType::kInsert, row(7, 1),
                             protocol::kOpIgnoreError | protocol::kOpExecute | protocol::kOpCommit,
                             storage::LockMode::kCommittedRead));
  send_packed(1, std::move(reads));
  protocol::TcKeyConf read = wait_conf(read_tx);
  EXPECT_TRUE(read.flags & protocol::kTcCommitted);
  ASSERT_EQ(read.results.size(), 101u);
  for (const auto& r : read.results) {
    if (r.op_index == 100) {
      EXPECT_EQ(r.error, ErrorCode::kDuplicateKey);
      continue;
    }
    ASSERT_EQ(r.error, ErrorCode::kOk);
    protocol::ByteReader in(protocol::as_view(r.data));
    AttrValues values;
    ASSERT_TRUE(protocol::decode_attr_values(&in, &values));
    EXPECT_EQ(as_i64(values.value(0)), 1000 + static_cast<int64_t>(r.op_index));
  }
  EXPECT_EQ(replica_contents(1), on_1);
  EXPECT_EQ(replica_contents(2), on_1);
}

TEST_F(DataPathTest, DuplicateKeyAbortsUnlessIgnored) {
  table_ = create_accounts();
  uint64_t tx = next_tx_++;
  send_op(1, tx, 0, OpType::kInsert, row(1, 10), protocol::kOpExecute | protocol::kOpCommit);
  ASSERT_TRUE(wait_conf(tx).flags & protocol::kTcCommitted);

  tx = next_tx_++;
  send_op(1, tx, 0, OpType::kInsert, row(2, 20), 0);
  send_op(1, tx, 1, OpType::kInsert, row(1, 99), protocol::kOpExecute | protocol::kOpCommit);
  protocol::TcKeyConf conf = wait_conf(tx);
  EXPECT_TRUE(conf.flags & protocol::kTcAborted);
  EXPECT_EQ(conf.tx_error, ErrorCode::kDuplicateKey);
  EXPECT_EQ(read_balance(2, 2), std::nullopt) << "the whole transaction aborted";
  EXPECT_EQ(read_balance(2, 1), 10);

  tx = next_tx_++;  // INSERT IGNORE: the duplicate is reported, the rest commits
  send_op(1, tx, 0, OpType::kInsert, row(3, 30), 0);
  send_op(1, tx, 1, OpType::kInsert, row(1, 99),
          protocol::kOpExecute | protocol::kOpCommit | protocol::kOpIgnoreError);
  conf = wait_conf(tx);
  EXPECT_TRUE(conf.flags & protocol::kTcCommitted);
  for (const auto& r : conf.results) {
    EXPECT_EQ(r.error, r.op_index == 1 ? ErrorCode::kDuplicateKey : ErrorCode::kOk);
  }
  EXPECT_EQ(read_balance(1, 3), 30);
  EXPECT_EQ(read_balance(1, 1), 10);
  EXPECT_EQ(replica_contents(1), replica_contents(2));
}

TEST_F(DataPathTest, InterpretedUpdateUpdateDeleteAndRollback) {
  table_ = create_accounts();
  uint64_t tx = next_tx_++;
  send_op(1, tx, 0, OpType::kInsert, row(7, 100), protocol::kOpExecute | protocol::kOpCommit);
  ASSERT_TRUE(wait_conf(tx).flags & protocol::kTcCommitted);

  tx = next_tx_++;
  send_op(2, tx, 0, OpType::kInterpretedUpdate, add_balance(7, 5),
          protocol::kOpExecute | protocol::kOpCommit);
  ASSERT_TRUE(wait_conf(tx).flags & protocol::kTcCommitted);
  EXPECT_EQ(read_balance(1, 7), 105);

  // Update then roll back: nothing changes anywhere.
  tx = next_tx_++;
  OpBody update = key(7);
  update.values.add(1, i64(1));
  send_op(1, tx, 0, OpType::kUpdate, update, protocol::kOpExecute);
  protocol::TcKeyConf conf = wait_conf(tx);
  EXPECT_EQ(conf.flags, protocol::kTcBatchDone) << "executed, not committed";
  ASSERT_TRUE(client().send(SimCluster::coordinator(1),
                            protocol::api_transaction_signal(protocol::kTcRollbackReq, tx)).ok());
  EXPECT_TRUE(wait_conf(tx).flags & protocol::kTcAborted);
  EXPECT_EQ(read_balance(2, 7), 105);

  tx = next_tx_++;
  send_op(2, tx, 0, OpType::kDelete, key(7), protocol::kOpExecute);
  ASSERT_EQ(wait_conf(tx).flags, protocol::kTcBatchDone);
  ASSERT_TRUE(client().send(SimCluster::coordinator(2),
                            protocol::api_transaction_signal(protocol::kTcCommitReq, tx)).ok());
  EXPECT_TRUE(wait_conf(tx).flags & protocol::kTcCommitted);
  EXPECT_EQ(read_balance(1, 7), std::nullopt);
  EXPECT_TRUE(replica_contents(1).empty());
  EXPECT_TRUE(replica_contents(2).empty());
}

TEST_F(DataPathTest, LockWaitTimesOutWith1205AndTheHolderCommits) {
  table_ = create_accounts();
  uint64_t tx = next_tx_++;
  send_op(1, tx, 0, OpType::kInsert, row(5, 50), protocol::kOpExecute | protocol::kOpCommit);
  ASSERT_TRUE(wait_conf(tx).flags & protocol::kTcCommitted);

  const uint64_t holder = next_tx_++;
  send_op(1, holder, 0, OpType::kInterpretedUpdate, add_balance(5, 1), protocol::kOpExecute);
  ASSERT_EQ(wait_conf(holder).flags, protocol::kTcBatchDone);

  const uint64_t waiter = next_tx_++;
  const uint64_t start = cluster_.sim().now_ns();
  send_op(2, waiter, 0, OpType::kInterpretedUpdate, add_balance(5, 100),
          protocol::kOpExecute | protocol::kOpCommit);
  protocol::TcKeyConf conf = wait_conf(waiter, 5000);
  EXPECT_TRUE(conf.flags & protocol::kTcAborted);
  EXPECT_EQ(conf.tx_error, ErrorCode::kLockWaitTimeout);
  EXPECT_EQ(error_info(conf.tx_error).mysql_errno, 1205);
  EXPECT_GE(cluster_.sim().now_ns() - start, 1200 * kNanosPerMilli);

  ASSERT_TRUE(client().send(SimCluster::coordinator(1),
                            protocol::api_transaction_signal(protocol::kTcCommitReq, holder)).ok());
  EXPECT_TRUE(wait_conf(holder).flags & protocol::kTcCommitted);
  EXPECT_EQ(read_balance(2, 5), 51);
}

TEST_F(DataPathTest, WaiterProceedsWhenTheHolderCommits) {
  table_ = create_accounts();
  uint64_t tx = next_tx_++;
  send_op(1, tx, 0, OpType::kInsert, row(5, 50), protocol::kOpExecute | protocol::kOpCommit);
  ASSERT_TRUE(wait_conf(tx).flags & protocol::kTcCommitted);
  const uint64_t holder = next_tx_++;
  send_op(1, holder, 0, OpType::kInterpretedUpdate, add_balance(5, 1), protocol::kOpExecute);
  ASSERT_EQ(wait_conf(holder).flags, protocol::kTcBatchDone);
  const uint64_t waiter = next_tx_++;
  send_op(2, waiter, 0, OpType::kInterpretedUpdate, add_balance(5, 10),
          protocol::kOpExecute | protocol::kOpCommit);
  cluster_.sim().run_for(100 * kNanosPerMilli);
  EXPECT_FALSE(client().has(protocol::kTcKeyConf)) << "the waiter waits";
  ASSERT_TRUE(client().send(SimCluster::coordinator(1),
                            protocol::api_transaction_signal(protocol::kTcCommitReq, holder)).ok());
  EXPECT_TRUE(wait_conf(holder).flags & protocol::kTcCommitted);
  EXPECT_TRUE(wait_conf(waiter).flags & protocol::kTcCommitted);
  EXPECT_EQ(read_balance(1, 5), 61);
  EXPECT_EQ(replica_contents(1), replica_contents(2));
}

TEST_F(DataPathTest, ScansReturnEveryRowOnceWithFilterAndIndexRange) {
  table_ = create_accounts();
  uint64_t tx = next_tx_++;
  for (int32_t id = 0; id < 300; ++id) {
    send_op(1, tx, static_cast<uint32_t>(id), OpType::kInsert, row(id, id * 10),
            id == 299 ? protocol::kOpExecute | protocol::kOpCommit : 0);
  }
  ASSERT_TRUE(wait_conf(tx).flags & protocol::kTcCommitted);

  // Runs a scan to completion through node 2's coordinator, as a client does.
  auto run_scan = [&](protocol::ScanTabReq req) {
    std::vector<int64_t> balances;
    Result<ScanOutcome> outcome = client().scan(SimCluster::coordinator(2), std::move(req));
    EXPECT_TRUE(outcome.ok()) << outcome.status().message();
    if (!outcome.ok()) return balances;
    for (const storage::RowBatch& rows : outcome->batches) {
      for (size_t r = 0; r < rows.rows(); ++r) {
        EXPECT_EQ(rows.row(r).size(), 1u) << "projection: balance only";
        balances.push_back(as_i64(rows.row(r).value(0)));
      }
    }
    return balances;
  };

  protocol::ScanBody body;
  body.columns = {1};
  storage::FilterBuilder b;
  const storage::ColumnDef& balance_col = table_.schema.columns[1];
  Result<storage::FilterProgram> filter =
      b.build(b.cmp(1, storage::CmpOp::kGe, storage::encode_int(balance_col, 1000)));
  ASSERT_TRUE(filter.ok());
  body.filter = filter->encode();
  protocol::ScanTabReq full;
  full.api_tx = next_tx_++;
  full.scan_id = 1;
  full.table_id = table_.schema.table_id;
  full.table_version = table_.version;
  full.batch_rows = 16;
  ASSERT_TRUE(body.encode(&full.body).ok());
  std::vector<int64_t> seen = run_scan(std::move(full));
  std::multiset<int64_t> got(seen.begin(), seen.end());
  EXPECT_EQ(got.size(), 200u);  // balances 1000..2990
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 200u) << "each row once";
  EXPECT_EQ(*got.begin(), 1000);

  // Ordered index range 100 <= balance < 200, per fragment ascending.
  protocol::ScanBody range;
  range.columns = {1};
  range.low.add(1, i64(100));
  range.high.add(1, i64(200));
  protocol::ScanTabReq ranged;
  ranged.api_tx = next_tx_++;
  ranged.scan_id = 2;
  ranged.table_id = table_.schema.table_id;
  ranged.table_version = table_.version;
  ranged.index = 0;
  ranged.flags = protocol::kScanLowInclusive;
  ASSERT_TRUE(range.encode(&ranged.body).ok());
  seen = run_scan(std::move(ranged));
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()),
            (std::set<int64_t>{100, 110, 120, 130, 140, 150, 160, 170, 180, 190}));
  EXPECT_EQ(cluster_.block<coordinator::CoordinatorBlock>(2, protocol::kCoordinatorBlock)->scan_count(),
            0u);
}

TEST_F(DataPathTest, DepartedClientsTransactionIsAbortedAndItsLocksReleased) {
  table_ = create_accounts();
  uint64_t tx = next_tx_++;
  send_op(1, tx, 0, OpType::kInsert, row(9, 90), protocol::kOpExecute | protocol::kOpCommit);
  ASSERT_TRUE(wait_conf(tx).flags & protocol::kTcCommitted);
  const uint64_t orphan = next_tx_++;
  send_op(1, orphan, 0, OpType::kInterpretedUpdate, add_balance(9, 1000), protocol::kOpExecute);
  ASSERT_EQ(wait_conf(orphan).flags, protocol::kTcBatchDone);
  // The client's link drops: the node's transport reports it.
  Signal fail(protocol::kNodeFailRep, {kFirstClientNode});
  fail.set_sender({1, 0, 0});
  fail.set_receiver(SimCluster::coordinator(1));
  ASSERT_TRUE(cluster_.sim().inject(std::move(fail)).ok());
  cluster_.sim().run_for(10 * kNanosPerMilli);
  EXPECT_EQ(cluster_.block<coordinator::CoordinatorBlock>(1, protocol::kCoordinatorBlock)
                ->transaction_count(),
            0u);
  // Its lock is gone: another transaction updates the row at once.
  tx = next_tx_++;
  send_op(2, tx, 0, OpType::kInterpretedUpdate, add_balance(9, 1),
          protocol::kOpExecute | protocol::kOpCommit);
  EXPECT_TRUE(wait_conf(tx, 500).flags & protocol::kTcCommitted);
  EXPECT_EQ(read_balance(1, 9), 91);
}

TEST_F(DataPathTest, DroppedTableRefusesOperations) {
  table_ = create_accounts();
  ASSERT_TRUE(client()
                  .send(SimCluster::dictionary(1),
                        protocol::DictMsg{5, table_.schema.table_id, 0, 0, ""}.to_signal(
                            protocol::kDropTableReq))
                  .ok());
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kDropTableConf); }));
  const uint64_t tx = next_tx_++;
  send_op(2, tx, 0, OpType::kInsert, row(1, 1), protocol::kOpExecute | protocol::kOpCommit);
  protocol::TcKeyConf conf = wait_conf(tx);
  EXPECT_TRUE(conf.flags & protocol::kTcAborted);
  EXPECT_EQ(conf.tx_error, ErrorCode::kNoSuchTable);
  // The name is free again.
  TableDef again = create_accounts();
  EXPECT_NE(again.schema.table_id, table_.schema.table_id);
}

// Concurrent transfers between random accounts through both coordinators; conflicting
// transfers deadlock now and then and are resolved by the lock wait timeout. Money is
// conserved, every committed transfer is applied once, and the replicas are identical.
class BankTransferTest : public DataPathTest, public ::testing::WithParamInterface<uint64_t> {
 protected:
  // Few accounts, many transfers in flight and jittery links: lock waits and deadlocks
  // (resolved by the 200 ms lock timeout) happen in most seeds.
  BankTransferTest()
      : DataPathTest(SimClusterOptions{
            .seed = GetParam(), .lock_wait_timeout_ms = 200, .link_jitter_ns = 2'000'000}) {}
};

TEST_P(BankTransferTest, MoneyIsConservedAndReplicasAgree) {
  constexpr int32_t kAccounts = 5;
  constexpr int64_t kInitial = 1000;
  constexpr int kTransfers = 60;
  constexpr int kInFlight = 8;
  table_ = create_accounts();
  uint64_t tx = next_tx_++;
  for (int32_t id = 0; id < kAccounts; ++id) {
    send_op(1, tx, static_cast<uint32_t>(id), OpType::kInsert, row(id, kInitial),
            id == kAccounts - 1 ? protocol::kOpExecute | protocol::kOpCommit : 0);
  }
  ASSERT_TRUE(wait_conf(tx).flags & protocol::kTcCommitted);

  uint64_t lock_timers = 0;
  cluster_.sim().set_delivery_observer([&](uint64_t, const Signal& s) {
    if (s.id() == protocol::kLqhLockTimeout) ++lock_timers;
  });
  SeededRandom random(GetParam());
  std::map<uint64_t, std::pair<int32_t, int32_t>> in_flight;
  std::map<int32_t, int64_t> expected;
  for (int32_t id = 0; id < kAccounts; ++id) expected[id] = kInitial;
  int started = 0, committed = 0, aborted = 0;
  auto start_transfer = [&]() {
    const int32_t from = static_cast<int32_t>(random.uniform(kAccounts));
    int32_t to = static_cast<int32_t>(random.uniform(kAccounts - 1));
    if (to >= from) ++to;
    const uint64_t t = next_tx_++;
    const uint16_t tc = static_cast<uint16_t>(1 + random.uniform(2));
    send_op(tc, t, 0, OpType::kInterpretedUpdate, add_balance(from, -7), 0);
    send_op(tc, t, 1, OpType::kInterpretedUpdate, add_balance(to, 7),
            protocol::kOpExecute | protocol::kOpCommit);
    in_flight[t] = {from, to};
    ++started;
  };
  while (started < kInFlight) start_transfer();
  while (!in_flight.empty()) {
    ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kTcKeyConf); }, 60'000));
    Signal s = client().take(protocol::kTcKeyConf);
    Result<protocol::TcKeyConf> conf = protocol::TcKeyConf::from_signal(s);
    ASSERT_TRUE(conf.ok());
    ASSERT_TRUE(conf->flags & protocol::kTcBatchDone) << "two small results fit one signal";
    auto it = in_flight.find(conf->api_tx);
    ASSERT_NE(it, in_flight.end());
    if (conf->flags & protocol::kTcCommitted) {
      expected[it->second.first] -= 7;
      expected[it->second.second] += 7;
      ++committed;
    } else {
      EXPECT_EQ(conf->tx_error, ErrorCode::kLockWaitTimeout) << conf->tx_message;
      ++aborted;
    }
    in_flight.erase(it);
    if (started < kTransfers) start_transfer();
  }
  EXPECT_EQ(committed + aborted, kTransfers);
  RecordProperty("aborted", aborted);
  RecordProperty("lock_timers", static_cast<int>(lock_timers));
  // Progress: deadlocks under this much contention abort many transfers (over 2000
  // seeds as few as 27 of 60 committed), but never most of them.
  EXPECT_GE(committed, kTransfers / 3);
  const auto on_1 = replica_contents(1);
  EXPECT_EQ(on_1, replica_contents(2));
  EXPECT_EQ(on_1, expected);
  int64_t total = 0;
  for (const auto& [id, balance] : on_1) total += balance;
  EXPECT_EQ(total, kAccounts * kInitial);
  for (uint16_t node : {1, 2}) {
    EXPECT_EQ(cluster_.block<coordinator::CoordinatorBlock>(node, protocol::kCoordinatorBlock)
                  ->transaction_count(),
              0u);
    for (uint16_t part = 0; part < 4; ++part) {
      EXPECT_EQ(cluster_.block<local_query::LocalQueryBlock>(node, protocol::kLocalQueryBlock, part)
                    ->transaction_count(),
                0u);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Unique indexes (protocol/unique_index.h): a UNIQUE index on `note` is a hidden table
// keyed by the note, kept by the coordinator in the writing transaction, so a duplicate
// is found wherever the two rows live.

storage::TableSchema accounts_with_unique_note() {
  storage::TableSchema schema = accounts_schema();
  schema.ordered_indexes.push_back({"note_uk", {2}, true});
  return schema;
}

OpBody noted(int32_t id, int64_t balance, std::optional<std::string> note) {
  OpBody body;
  body.key_or_row.add(0, i32(id));
  body.key_or_row.add(1, i64(balance));
  note ? body.key_or_row.add(2, *note) : body.key_or_row.add_null(2);
  return body;
}

OpBody set_note(int32_t id, std::optional<std::string> note) {
  OpBody body;
  body.key_or_row.add(0, i32(id));
  note ? body.values.add(2, *note) : body.values.add_null(2);
  return body;
}

class UniqueIndexTest : public DataPathTest {
 protected:
  explicit UniqueIndexTest(SimClusterOptions options = {}) : DataPathTest(options) {}

  uint32_t note_index_table() const {
    return protocol::unique_index_table_id(table_.schema.table_id, "note_uk");
  }
  // One operation in its own transaction through coordinator `tc`.
  protocol::TcKeyConf run(uint16_t tc, OpType type, const OpBody& body) {
    const uint64_t tx = next_tx_++;
    send_op(tc, tx, 0, type, body, protocol::kOpExecute | protocol::kOpCommit);
    return wait_conf(tx);
  }
  // The index on both replicas equals note -> id of the base rows with a note.
  void expect_index_matches_rows() {
    const auto base = raw_contents(1, table_.schema.table_id, 2);
    EXPECT_EQ(base, raw_contents(2, table_.schema.table_id, 2));
    std::map<std::string, std::string> expected;
    for (const auto& [id, note] : base) {
      if (note == "NULL") continue;
      EXPECT_TRUE(expected.emplace(note, id).second) << "two rows hold note '" << note << "'";
    }
    const auto index_1 = raw_contents(1, note_index_table(), 1);
    EXPECT_EQ(index_1, expected);
    EXPECT_EQ(index_1, raw_contents(2, note_index_table(), 1));
  }
};

TEST_F(UniqueIndexTest, DuplicatesAreRefusedAcrossFragmentsAndFreedValuesReused) {
  table_ = create_accounts(accounts_with_unique_note());
  uint64_t tx = next_tx_++;
  for (int32_t id = 0; id < 40; ++id) {
    send_op(1, tx, static_cast<uint32_t>(id), OpType::kInsert,
            noted(id, 100, id % 10 == 9 ? std::nullopt : std::optional("n" + std::to_string(id))),
            id == 39 ? protocol::kOpExecute | protocol::kOpCommit : 0);
  }
  ASSERT_TRUE(wait_conf(tx).flags & protocol::kTcCommitted);
  expect_index_matches_rows();

  // The same note under another key, through either coordinator: the whole transaction
  // aborts with the index named, even with kOpIgnoreError.
  for (uint16_t tc : {1, 2}) {
    tx = next_tx_++;
    send_op(tc, tx, 0, OpType::kInsert, noted(100, 1, "x"), 0);
    send_op(tc, tx, 1, OpType::kInsert, noted(101, 1, "n7"),
            protocol::kOpExecute | protocol::kOpCommit | protocol::kOpIgnoreError);
    const protocol::TcKeyConf conf = wait_conf(tx);
    EXPECT_TRUE(conf.flags & protocol::kTcAborted);
    EXPECT_EQ(conf.tx_error, ErrorCode::kDuplicateKey);
    EXPECT_NE(conf.tx_message.find("for key 'note_uk'"), std::string::npos) << conf.tx_message;
    EXPECT_EQ(read_balance(tc, 100), std::nullopt);
  }
  // NULLs never conflict.
  EXPECT_TRUE(run(1, OpType::kInsert, noted(102, 1, std::nullopt)).flags & protocol::kTcCommitted);
  // An update moves the value: the old one is free, the new one taken.
  EXPECT_TRUE(run(2, OpType::kUpdate, set_note(1, "moved")).flags & protocol::kTcCommitted);
  EXPECT_TRUE(run(1, OpType::kInsert, noted(103, 1, "n1")).flags & protocol::kTcCommitted);
  EXPECT_EQ(run(1, OpType::kInsert, noted(104, 1, "moved")).tx_error, ErrorCode::kDuplicateKey);
  // Delete frees it; write (upsert) and update to NULL too.
  EXPECT_TRUE(run(2, OpType::kDelete, key(2)).flags & protocol::kTcCommitted);
  EXPECT_TRUE(run(1, OpType::kWrite, noted(105, 1, "n2")).flags & protocol::kTcCommitted);
  EXPECT_TRUE(run(1, OpType::kUpdate, set_note(3, std::nullopt)).flags & protocol::kTcCommitted);
  EXPECT_TRUE(run(2, OpType::kWrite, noted(4, 1, "n3")).flags & protocol::kTcCommitted);
  EXPECT_EQ(run(2, OpType::kWrite, noted(5, 1, "n3")).tx_error, ErrorCode::kDuplicateKey);
  // Inside one transaction: free a value and take it again.
  tx = next_tx_++;
  send_op(1, tx, 0, OpType::kUpdate, set_note(6, "n6b"), protocol::kOpExecute);
  ASSERT_TRUE(wait_conf(tx).flags & protocol::kTcBatchDone);
  send_op(1, tx, 1, OpType::kInsert, noted(106, 1, "n6"), protocol::kOpExecute | protocol::kOpCommit);
  EXPECT_TRUE(wait_conf(tx).flags & protocol::kTcCommitted);
  // Clients cannot write the hidden table.
  TableDef hidden = table_;
  hidden.schema.table_id = note_index_table();
  tx = next_tx_++;
  ASSERT_TRUE(client()
                  .send(SimCluster::coordinator(1),
                        key_signal(tx, 0, hidden, OpType::kDelete, key(0),
                                   protocol::kOpExecute | protocol::kOpCommit,
                                   storage::LockMode::kCommittedRead))
                  .ok());
  EXPECT_EQ(wait_conf(tx).tx_error, ErrorCode::kInvalidArgument);
  expect_index_matches_rows();
}

TEST_F(UniqueIndexTest, SecondWriterOfAValueWaitsForTheFirstOutcome) {
  table_ = create_accounts(accounts_with_unique_note());
  // A holds "v" uncommitted; B's insert of "v" (another key, another coordinator) waits
  // on the index entry; A rolls back, so B commits. Then C waits on B's, and fails.
  const uint64_t a = next_tx_++;
  send_op(1, a, 0, OpType::kInsert, noted(1, 1, "v"), protocol::kOpExecute);
  ASSERT_EQ(wait_conf(a).results.at(0).error, ErrorCode::kOk);
  const uint64_t b = next_tx_++;
  send_op(2, b, 0, OpType::kInsert, noted(2, 1, "v"), protocol::kOpExecute);
  cluster_.sim().run_for(300'000'000);
  EXPECT_FALSE(client().has(protocol::kTcKeyConf)) << "B waits for A";
  ASSERT_TRUE(client().send(SimCluster::coordinator(1),
                            protocol::api_transaction_signal(protocol::kTcRollbackReq, a)).ok());
  EXPECT_TRUE(wait_conf(a).flags & protocol::kTcAborted);
  EXPECT_EQ(wait_conf(b).results.at(0).error, ErrorCode::kOk);
  const uint64_t c = next_tx_++;
  send_op(1, c, 0, OpType::kInsert, noted(3, 1, "v"), protocol::kOpExecute | protocol::kOpCommit);
  cluster_.sim().run_for(300'000'000);
  ASSERT_TRUE(client().send(SimCluster::coordinator(2),
                            protocol::api_transaction_signal(protocol::kTcCommitReq, b)).ok());
  EXPECT_TRUE(wait_conf(b).flags & protocol::kTcCommitted);
  EXPECT_EQ(wait_conf(c).tx_error, ErrorCode::kDuplicateKey);
  expect_index_matches_rows();
}

class UniqueIndexWorkloadTest : public UniqueIndexTest,
                                public ::testing::WithParamInterface<uint64_t> {
 protected:
  UniqueIndexWorkloadTest()
      : UniqueIndexTest(SimClusterOptions{
            .seed = GetParam(), .lock_wait_timeout_ms = 200, .link_jitter_ns = 2'000'000}) {}
};

// Random inserts, updates, writes and deletes of few keys and fewer notes, many in
// flight through both coordinators, some two-operation transactions: however they
// interleave, no two committed rows share a note and the index holds exactly the rows'
// notes, on both replicas.
TEST_P(UniqueIndexWorkloadTest, IndexAlwaysMatchesTheRows) {
  table_ = create_accounts(accounts_with_unique_note());
  SeededRandom random(GetParam() * 7919);
  auto some_note = [&]() -> std::optional<std::string> {
    const uint64_t n = random.uniform(7);
    if (n == 6) return std::nullopt;
    return "v" + std::to_string(n);
  };
  auto some_op = [&](uint16_t tc, uint64_t tx, uint32_t index, uint8_t flags) {
    const int32_t id = static_cast<int32_t>(random.uniform(12));
    switch (random.uniform(4)) {
      case 0: send_op(tc, tx, index, OpType::kInsert, noted(id, 1, some_note()), flags); break;
      case 1: send_op(tc, tx, index, OpType::kUpdate, set_note(id, some_note()), flags); break;
      case 2: send_op(tc, tx, index, OpType::kWrite, noted(id, 2, some_note()), flags); break;
      default: send_op(tc, tx, index, OpType::kDelete, key(id), flags); break;
    }
  };
  int committed = 0, duplicates = 0;
  for (int round = 0; round < 25; ++round) {
    std::vector<uint64_t> in_flight;
    for (int k = 0; k < 6; ++k) {
      const uint64_t tx = next_tx_++;
      const uint16_t tc = static_cast<uint16_t>(1 + random.uniform(2));
      if (random.uniform(3) == 0) {
        some_op(tc, tx, 0, 0);
        some_op(tc, tx, 1, protocol::kOpExecute | protocol::kOpCommit);
      } else {
        some_op(tc, tx, 0, protocol::kOpExecute | protocol::kOpCommit);
      }
      in_flight.push_back(tx);
    }
    for (uint64_t tx : in_flight) {
      const protocol::TcKeyConf conf = wait_conf(tx);
      if (conf.flags & protocol::kTcCommitted) ++committed;
      if (conf.tx_error == ErrorCode::kDuplicateKey) ++duplicates;
    }
  }
  // Most seeds commit about half and meet a few dozen duplicates.
  EXPECT_GT(committed, 0);
  EXPECT_GT(duplicates, 0);
  expect_index_matches_rows();
}

INSTANTIATE_TEST_SUITE_P(Seeds, UniqueIndexWorkloadTest, ::testing::Range<uint64_t>(1, 21));

// DUO_BANK_SEEDS=N runs a longer campaign (CI runs 40).
uint64_t bank_seed_count() {
  const char* text = std::getenv("DUO_BANK_SEEDS");
  return text != nullptr ? std::strtoull(text, nullptr, 10) : 40;
}

INSTANTIATE_TEST_SUITE_P(Seeds, BankTransferTest, ::testing::Range<uint64_t>(1, 1 + bank_seed_count()));

}  // namespace
}  // namespace duo::testing
