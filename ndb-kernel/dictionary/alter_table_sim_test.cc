// Online ALTER in the simulator (ALTER_TABLEREQ: CREATE/DROP INDEX, RENAME): under
// several seeds a two-node cluster loads rows, adds an ordered index while clients keep
// inserting, and every replica's index must then hold exactly the fragment's rows, in
// key order. A UNIQUE index over duplicate keys is refused with MySQL 1062 and leaves
// every node on the previous definition; the index survives a system restart (rebuilt
// from the restored rows); DROP INDEX and RENAME bump the version like any change.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>

#include "ndb-kernel/dictionary/dictionary_block.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/testing/sim_cluster.h"
#include "ndb-kernel/testing/value_bytes.h"

namespace duo::testing {
namespace {

using kernel::Signal;
using protocol::DictMsg;
using protocol::OpBody;
using storage::ColumnType;
using storage::OpType;

constexpr const char* kName = "ddl/def/t";

storage::TableSchema items_schema() {
  storage::TableSchema schema;
  schema.name = kName;
  schema.columns = {{"id", ColumnType::kBigInt, false, false},
                    {"k", ColumnType::kBigInt, false, false},
                    {"pad", ColumnType::kVarchar, false, true, 40}};
  schema.primary_key = {0};
  return schema;
}

class AlterTableTest : public ::testing::TestWithParam<uint64_t> {
 protected:
  AlterTableTest()
      : cluster_(SimClusterOptions{
            .seed = GetParam(), .link_jitter_ns = 100'000, .gcp_interval_ms = 50}) {}

  ScriptClient& client() { return cluster_.client(); }
  dictionary::DictionaryBlock* dictionary(uint16_t node) {
    return cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock);
  }
  // The definition the master has installed now.
  const protocol::TableDef& current() { return dictionary(1)->tables().at(table_id_); }

  void create() {
    ASSERT_TRUE(
        client().send(SimCluster::dictionary(1), create_table_signal(1, items_schema())).ok());
    ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kCreateTableConf); }));
    table_id_ = DictMsg::from_signal(client().take(protocol::kCreateTableConf)).a;
  }

  // Sends ALTER_TABLEREQ and runs until its answer, inserting rows meanwhile when
  // `with_writes`. Returns the answer.
  Signal alter(const protocol::TableDef& def, bool with_writes) {
    Result<Signal> req = protocol::TableMsg{77, 0, def}.to_signal(protocol::kAlterTableReq);
    EXPECT_TRUE(req.ok());
    EXPECT_TRUE(client().send(SimCluster::dictionary(1), std::move(req).value()).ok());
    const auto answered = [&] {
      return client().has(protocol::kAlterTableConf) || client().has(protocol::kAlterTableRef);
    };
    const uint64_t deadline_ns = cluster_.sim().now_ns() + 30'000 * kNanosPerMilli;
    while (!answered()) {
      commit_executed(/*all=*/!with_writes);
      if (with_writes) {
        while (in_flight_.size() < 4) start_insert(/*hold=*/random_.uniform(2) == 0);
      }
      cluster_.run_until([&] { return answered() || client().has(protocol::kTcKeyConf); }, 20);
      if (cluster_.sim().now_ns() > deadline_ns) {
        ADD_FAILURE() << "no answer to ALTER_TABLEREQ";
        return Signal(protocol::kAlterTableRef);
      }
      collect();
    }
    return client().take(client().has(protocol::kAlterTableConf) ? protocol::kAlterTableConf
                                                                 : protocol::kAlterTableRef);
  }

  // Some transactions stay open across events, so an index build has to wait for them.
  // Each is committed with probability 1/8 per call (all of them when `all`).
  void commit_executed(bool all) {
    std::vector<uint64_t> later;
    for (uint64_t tx : executed_) {
      if (!all && random_.uniform(8) != 0) {
        later.push_back(tx);
        continue;
      }
      EXPECT_TRUE(client()
                      .send(SimCluster::coordinator(coordinator_of_.at(tx)),
                            protocol::api_transaction_signal(protocol::kTcCommitReq, tx))
                      .ok());
    }
    executed_ = std::move(later);
  }

  // `hold`: executed without commit; alter() commits it a little later.
  void start_insert(bool hold = false) {
    const uint64_t tx = next_tx_++;
    const int64_t id = next_id_++;
    OpBody row;
    row.key_or_row.add(0, i64(id));
    row.key_or_row.add(1, i64(static_cast<int64_t>(random_.uniform(50))));
    row.key_or_row.add(2, std::string(random_.uniform(40), 'x'));
    const uint16_t tc = static_cast<uint16_t>(1 + random_.uniform(2));
    ASSERT_TRUE(client()
                    .send(SimCluster::coordinator(tc),
                          key_signal(tx, 0, current(), OpType::kInsert, row,
                                     hold ? protocol::kOpExecute
                                          : protocol::kOpExecute | protocol::kOpCommit))
                    .ok());
    in_flight_[tx] = id;
    coordinator_of_[tx] = tc;
    if (hold) held_.insert(tx);
  }

  // Drains answers: committed inserts are remembered; refused ones (temporary while
  // the index builds, or a stale table version) are simply not.
  void collect() {
    while (client().has(protocol::kTcKeyConf)) {
      Signal signal = client().take(protocol::kTcKeyConf);
      Result<protocol::TcKeyConf> conf = protocol::TcKeyConf::from_signal(signal);
      ASSERT_TRUE(conf.ok());
      auto it = in_flight_.find(conf->api_tx);
      if (it == in_flight_.end() || (conf->flags & protocol::kTcBatchDone) == 0) continue;
      const bool ended = conf->flags & (protocol::kTcCommitted | protocol::kTcAborted);
      if (!ended && held_.erase(conf->api_tx) != 0) {
        executed_.push_back(conf->api_tx);
        continue;
      }
      if (conf->flags & protocol::kTcCommitted) {
        committed_.insert(it->second);
        max_gci_ = std::max(max_gci_, conf->gci);
      }
      in_flight_.erase(it);
    }
  }

  void load(int rows) {
    while (static_cast<int>(committed_.size()) < rows) {
      while (in_flight_.size() < 8) start_insert();
      ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kTcKeyConf); }));
      collect();
    }
  }

  void drain() {
    ASSERT_TRUE(cluster_.run_until([&] {
      collect();
      commit_executed(/*all=*/true);
      return in_flight_.empty();
    }));
  }

  // Every fragment replica on every node: the ordered index `index` returns exactly the
  // fragment's rows, in non-decreasing k; the whole table holds `committed_`.
  void check_index(int index) {
    for (uint16_t node : cluster_.data_nodes()) {
      std::set<int64_t> all;
      for (uint16_t part = 0; part < cluster_.topology().log_parts; ++part) {
        auto* lqh =
            cluster_.block<local_query::LocalQueryBlock>(node, protocol::kLocalQueryBlock, part);
        for (uint32_t f : lqh->fragment_ids(table_id_)) {
          auto* fragment = const_cast<storage::Fragment*>(lqh->fragment(table_id_, f));
          ASSERT_TRUE(fragment->check_consistency().ok()) << "node " << node << " fragment " << f;
          ASSERT_EQ(fragment->schema().ordered_indexes.size(),
                    current().schema.ordered_indexes.size());
          std::set<int64_t> full = scan(fragment, -1, nullptr);
          all.insert(full.begin(), full.end());
          if (index < 0) continue;
          std::vector<int64_t> keys;
          EXPECT_EQ(scan(fragment, index, &keys), full) << "node " << node << " fragment " << f;
          EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
        }
      }
      EXPECT_EQ(all, committed_) << "node " << node;
    }
  }

  static std::set<int64_t> scan(storage::Fragment* fragment, int index,
                                std::vector<int64_t>* keys) {
    storage::Fragment::ScanSpec spec;
    spec.index = index;
    auto opened = fragment->open_scan(std::move(spec));
    EXPECT_TRUE(opened.ok());
    std::set<int64_t> ids;
    storage::RowBatch batch;
    for (;;) {
      batch.clear();
      Result<size_t> n = (*opened)->next(256, &batch);
      if (!n.ok() || *n == 0) break;
      for (size_t r = 0; r < batch.rows(); ++r) {
        ids.insert(as_i64(batch.row(r).value(0)));
        if (keys != nullptr) keys->push_back(as_i64(batch.row(r).value(1)));
      }
    }
    return ids;
  }

  SimCluster cluster_;
  SeededRandom random_{GetParam() * 104729};
  uint32_t table_id_ = 0;
  uint64_t next_tx_ = 1;
  int64_t next_id_ = 1;
  uint32_t max_gci_ = 0;
  std::map<uint64_t, int64_t> in_flight_;  // api_tx -> id inserted
  std::map<uint64_t, uint16_t> coordinator_of_;
  std::set<uint64_t> held_;         // executed without commit, answer not in yet
  std::vector<uint64_t> executed_;  // executed, to be committed
  std::set<int64_t> committed_;
};

TEST_P(AlterTableTest, IndexBuiltUnderWritesRefusedOnDuplicatesKeptOverRestartAndDropped) {
  create();
  load(300);

  // CREATE INDEX k_1 ON t (k) while inserts keep coming.
  protocol::TableDef def = current();
  def.schema.ordered_indexes.push_back({"k_1", {1}, false});
  Signal answer = alter(def, /*with_writes=*/true);
  ASSERT_EQ(answer.id(), protocol::kAlterTableConf) << DictMsg::from_signal(answer).text;
  EXPECT_EQ(DictMsg::from_signal(answer).b, 2u) << "version bumped";
  drain();
  for (uint16_t node : cluster_.data_nodes()) {
    EXPECT_EQ(dictionary(node)->tables().at(table_id_).version, 2u);
  }
  check_index(0);

  // A UNIQUE index on a table with rows: its hidden table (protocol/unique_index.h)
  // cannot be filled by the local builds, so the ALTER is refused (1235) and every node
  // goes back to the previous indexes (the undo is one more version).
  def = current();
  def.schema.ordered_indexes.push_back({"uk", {1}, true});
  answer = alter(def, /*with_writes=*/false);
  ASSERT_EQ(answer.id(), protocol::kAlterTableRef);
  const DictMsg ref = DictMsg::from_signal(answer);
  EXPECT_EQ(static_cast<ErrorCode>(ref.a), ErrorCode::kNotSupported) << ref.text;
  EXPECT_NE(ref.text.find("ADD UNIQUE INDEX uk"), std::string::npos) << ref.text;
  ASSERT_TRUE(cluster_.run_until([&] { return current().version == 4; }));
  cluster_.sim().run_for(50 * kNanosPerMilli);
  for (uint16_t node : cluster_.data_nodes()) {
    EXPECT_EQ(dictionary(node)->tables().at(table_id_).schema.ordered_indexes.size(), 1u);
  }
  check_index(0);

  // A stale version is refused (another front-end changed the table meanwhile).
  answer = alter(def, /*with_writes=*/false);
  ASSERT_EQ(answer.id(), protocol::kAlterTableRef);
  EXPECT_EQ(static_cast<ErrorCode>(DictMsg::from_signal(answer).a), ErrorCode::kSchemaVersion);

  // The index is derived data: a system restart rebuilds it from the restored rows.
  ASSERT_TRUE(cluster_.run_until([&] { return cluster_.last_complete_gci() >= max_gci_; }));
  cluster_.crash_and_restart_all();
  client().inbox().clear();
  ASSERT_TRUE(cluster_.wait_started(30'000));
  EXPECT_EQ(current().version, 4u);
  check_index(0);

  // RENAME, then DROP INDEX.
  def = current();
  def.schema.name = "ddl/def/t2";
  answer = alter(def, /*with_writes=*/false);
  ASSERT_EQ(answer.id(), protocol::kAlterTableConf) << DictMsg::from_signal(answer).text;
  EXPECT_EQ(current().schema.name, "ddl/def/t2");
  def = current();
  def.schema.ordered_indexes.clear();
  answer = alter(def, /*with_writes=*/true);
  ASSERT_EQ(answer.id(), protocol::kAlterTableConf) << DictMsg::from_signal(answer).text;
  drain();
  EXPECT_EQ(current().version, 6u);
  check_index(-1);
}

TEST_P(AlterTableTest, AnIdleTransactionFailsAnIndexBuildButNotARename) {
  create();
  load(50);
  // A transaction that executed an insert and then idles.
  start_insert(/*hold=*/true);
  ASSERT_TRUE(cluster_.run_until([&] {
    collect();
    return !executed_.empty();
  }));
  const uint64_t idle = executed_.front();
  executed_.clear();

  // RENAME changes no index: installed at once, the transaction is not in the way.
  protocol::TableDef def = current();
  def.schema.name = "ddl/def/renamed";
  Signal answer = alter(def, /*with_writes=*/false);
  ASSERT_EQ(answer.id(), protocol::kAlterTableConf) << DictMsg::from_signal(answer).text;

  // An index must wait for it; after alter_wait_ms the ALTER is refused and undone.
  def = current();
  def.schema.ordered_indexes.push_back({"k_1", {1}, false});
  const uint64_t sent_ns = cluster_.sim().now_ns();
  answer = alter(def, /*with_writes=*/false);
  ASSERT_EQ(answer.id(), protocol::kAlterTableRef);
  const DictMsg ref = DictMsg::from_signal(answer);
  EXPECT_EQ(static_cast<ErrorCode>(ref.a), ErrorCode::kTemporary) << ref.text;
  EXPECT_NE(ref.text.find("table is busy"), std::string::npos) << ref.text;
  EXPECT_GE(cluster_.sim().now_ns() - sent_ns,
            local_query::LocalQueryOptions{}.alter_wait_ms * kNanosPerMilli);
  ASSERT_TRUE(cluster_.run_until([&] { return current().version == 4; }));
  cluster_.sim().run_for(50 * kNanosPerMilli);
  EXPECT_TRUE(current().schema.ordered_indexes.empty());

  // The idle transaction still commits, and everything is consistent.
  const int64_t idle_id = in_flight_.at(idle);
  ASSERT_TRUE(client()
                  .send(SimCluster::coordinator(coordinator_of_.at(idle)),
                        protocol::api_transaction_signal(protocol::kTcCommitReq, idle))
                  .ok());
  drain();
  EXPECT_EQ(committed_.count(idle_id), 1u);
  check_index(-1);
}

// The copy lock of a copying ALTER (protocol::kTableCopyLocked): taking it waits for
// the table's open transactions (an executed insert commits first), then writes are
// refused with a temporary error; the lock dies with the API node that holds it.
TEST_P(AlterTableTest, CopyLockKeepsWritersOutAndDiesWithItsOwner) {
  create();
  load(20);
  drain();
  const size_t loaded = committed_.size();
  start_insert(/*hold=*/true);
  ASSERT_TRUE(cluster_.run_until([&] {
    collect();
    return !executed_.empty();
  }));
  const uint16_t owner = kFirstClientNode;
  protocol::TableDef def = current();
  def.flags = protocol::with_copy_lock(def.flags, owner);
  // alter() commits the held insert while it waits for the answer.
  Signal answer = alter(def, /*with_writes=*/false);
  ASSERT_EQ(answer.id(), protocol::kAlterTableConf) << DictMsg::from_signal(answer).text;
  drain();
  EXPECT_EQ(committed_.size(), loaded + 1) << "the open insert committed before the lock";
  for (uint16_t node : cluster_.data_nodes()) {
    EXPECT_EQ(protocol::copy_lock_owner(dictionary(node)->tables().at(table_id_).flags), owner);
  }
  const size_t before = committed_.size();
  for (int i = 0; i < 4; ++i) start_insert();
  drain();
  EXPECT_EQ(committed_.size(), before) << "writes are refused while the lock is held";

  // The owner fails: the master lifts its lock, and writes go in again.
  for (uint16_t node : cluster_.data_nodes()) {
    Signal fail(protocol::kNodeFailRep, {owner});
    fail.set_sender({node, 0, 0});
    fail.set_receiver(SimCluster::dictionary(node));
    ASSERT_TRUE(cluster_.sim().inject(std::move(fail)).ok());
  }
  ASSERT_TRUE(cluster_.run_until([&] {
    for (uint16_t node : cluster_.data_nodes()) {
      if (protocol::copy_lock_owner(dictionary(node)->tables().at(table_id_).flags) != 0) {
        return false;
      }
    }
    return true;
  }));
  cluster_.sim().run_for(20 * kNanosPerMilli);
  for (int i = 0; i < 4; ++i) start_insert();
  drain();
  EXPECT_EQ(committed_.size(), before + 4);
  check_index(-1);
}

TEST_P(AlterTableTest, ColumnChangesAndNameClashesAreRefused) {
  create();
  protocol::TableDef def = current();
  def.schema.columns.push_back({"extra", ColumnType::kInt, false, true});
  Signal answer = alter(def, false);
  ASSERT_EQ(answer.id(), protocol::kAlterTableRef);
  EXPECT_EQ(static_cast<ErrorCode>(DictMsg::from_signal(answer).a), ErrorCode::kInvalidArgument);

  storage::TableSchema other = items_schema();
  other.name = "ddl/def/other";
  ASSERT_TRUE(client().send(SimCluster::dictionary(1), create_table_signal(2, other)).ok());
  ASSERT_TRUE(cluster_.run_until([&] { return client().has(protocol::kCreateTableConf); }));
  client().take(protocol::kCreateTableConf);
  def = current();
  def.schema.name = "ddl/def/other";
  answer = alter(def, false);
  ASSERT_EQ(answer.id(), protocol::kAlterTableRef);
  EXPECT_EQ(error_info(static_cast<ErrorCode>(DictMsg::from_signal(answer).a)).mysql_errno, 1050);
  EXPECT_EQ(current().version, 1u);
}

// READ_BACKUP is the one table option an ALTER changes in place (rows are untouched);
// other flags stay as they were.
TEST_P(AlterTableTest, ReadBackupChangesInPlace) {
  create();
  load(20);
  protocol::TableDef def = current();
  ASSERT_EQ(def.flags & protocol::kTableReadBackup, 0u);
  def.flags |= protocol::kTableReadBackup | 0x80;  // 0x80: no option an ALTER may set
  Signal answer = alter(def, /*with_writes=*/false);
  ASSERT_EQ(answer.id(), protocol::kAlterTableConf) << DictMsg::from_signal(answer).text;
  EXPECT_EQ(current().flags, protocol::kTableReadBackup);
  def = current();
  def.flags = 0;
  answer = alter(def, /*with_writes=*/false);
  ASSERT_EQ(answer.id(), protocol::kAlterTableConf) << DictMsg::from_signal(answer).text;
  EXPECT_EQ(current().flags, 0u);
  check_index(-1);
}

INSTANTIATE_TEST_SUITE_P(Seeds, AlterTableTest, ::testing::Range<uint64_t>(1, 6));

}  // namespace
}  // namespace duo::testing
