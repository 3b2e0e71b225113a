// The dictionary's part of a node restart in the simulator: two data nodes with their
// real file system, dictionary, coordinator and local_query blocks, and in place of the
// distribution block a stand-in that sends what the real one would (DICT_LOCKREQ at the
// master, DICT_COPYREQ at the starting node, NODE_STARTINGREP / NODE_STARTEDREP) and
// keeps the answers. Node 2 dies, the schema changes without it (so its disk holds a
// stale schema), and it comes back: its dictionary must end with exactly the master's
// tables, in memory, in its local blocks and in its schema file; the master refuses
// schema changes with NDB 711 while locked and takes them again after the unlock.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/dictionary/dictionary_block.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/testing/sim_cluster.h"
#include "ndb-kernel/testing/stand_in_distribution.h"

namespace duo::testing {
namespace {

using kernel::BlockAddress;
using kernel::Signal;
using kernel::SignalId;
using protocol::DictMsg;

storage::TableSchema table_named(const std::string& name) {
  storage::TableSchema schema;
  schema.name = name;
  schema.columns = {{"id", storage::ColumnType::kBigInt, false, false},
                    {"v", storage::ColumnType::kVarchar, false, true, 100}};
  schema.primary_key = {0};
  return schema;
}

class DictionaryNodeRestartTest : public StandInDistributionTest {
 protected:
  DictionaryNodeRestartTest() : StandInDistributionTest(5) {
    sim_->run_for(0);
  }

  dictionary::DictionaryBlock* dictionary(uint16_t node) {
    return static_cast<dictionary::DictionaryBlock*>(
        sim_->find_block(SimCluster::dictionary(node)));
  }
  local_query::LocalQueryBlock* local_query(uint16_t node, uint16_t part) {
    return static_cast<local_query::LocalQueryBlock*>(
        sim_->find_block({node, protocol::kLocalQueryBlock, part}));
  }

  // Sends a client's schema request to `node` and returns its answer.
  Signal schema_request(uint16_t node, Signal request, SignalId conf, SignalId ref) {
    EXPECT_TRUE(client_->send(SimCluster::dictionary(node), std::move(request)).ok());
    EXPECT_TRUE(run_until([&] { return client_->has(conf) || client_->has(ref); }));
    return client_->take(client_->has(conf) ? conf : ref);
  }
  uint32_t create(const std::string& name) {
    Signal answer = schema_request(1, create_table_signal(next_request_++, table_named(name)),
                                   protocol::kCreateTableConf, protocol::kCreateTableRef);
    EXPECT_EQ(answer.id(), protocol::kCreateTableConf) << DictMsg::from_signal(answer).text;
    return DictMsg::from_signal(answer).a;
  }
  Signal drop_signal(uint32_t table_id) {
    return DictMsg{next_request_++, table_id, 0, 0, ""}.to_signal(protocol::kDropTableReq);
  }
  Signal alter_signal(uint32_t table_id) {
    protocol::TableDef def = dictionary(1)->tables().at(table_id);
    def.schema.ordered_indexes.push_back({"v_idx", {1}, false});
    Result<Signal> alter =
        protocol::TableMsg{next_request_++, 0, def}.to_signal(protocol::kAlterTableReq);
    EXPECT_TRUE(alter.ok());
    return std::move(alter).value();
  }

  void restart(uint16_t node, uint16_t survivor) {
    sim_->heal_link(node, survivor);
    sim_->heal_link(node, kClientNode);
    ASSERT_TRUE(sim_->restart_node(node).ok());
    sim_->run_for(kNanosPerMilli);
  }
  // Reads `node`'s schema file back (DICT_RESTOREREQ, as a system restart does).
  void restore_schema(uint16_t node) {
    from_distribution(node, SimCluster::dictionary(node), Signal(protocol::kDictRestoreReq));
    ASSERT_TRUE(run_until([&] { return distribution(node)->has(protocol::kDictRestoreConf); }));
    Signal conf = distribution(node)->take(protocol::kDictRestoreConf);
    ASSERT_EQ(conf.word(1), 0u) << "restore error";
  }
  // id -> (name, version) of `node`'s dictionary.
  std::map<uint32_t, std::pair<std::string, uint32_t>> schema_of(uint16_t node) {
    std::map<uint32_t, std::pair<std::string, uint32_t>> out;
    for (const auto& [id, def] : dictionary(node)->tables()) {
      out[id] = {def.schema.name, def.version};
    }
    return out;
  }
  // Drives DICT_COPYREQ{1} at node 2 and returns the answer.
  Signal copy_schema_to_2() {
    from_distribution(2, SimCluster::dictionary(2), Signal(protocol::kDictCopyReq, {1}));
    EXPECT_TRUE(run_until([&] {
      return distribution(2)->has(protocol::kDictCopyConf) ||
             distribution(2)->has(protocol::kDictCopyRef);
    }));
    return distribution(2)->take(distribution(2)->has(protocol::kDictCopyConf)
                                     ? protocol::kDictCopyConf
                                     : protocol::kDictCopyRef);
  }
  // Tables a, b, c on both nodes; node 2 dies; meanwhile a is dropped, b altered
  // (version 2), d created; node 2 comes back with its old schema file, read back here
  // so its blocks hold the stale tables the copy must replace.
  void make_node_2_stale() {
    a_ = create("d/def/a");
    b_ = create("d/def/b");
    c_ = create("d/def/c");
    ASSERT_EQ(schema_of(2), schema_of(1));
    crash(2, 1);
    ASSERT_EQ(
        schema_request(1, drop_signal(a_), protocol::kDropTableConf, protocol::kDropTableRef).id(),
        protocol::kDropTableConf);
    ASSERT_EQ(
        schema_request(1, alter_signal(b_), protocol::kAlterTableConf, protocol::kAlterTableRef)
            .id(),
        protocol::kAlterTableConf);
    const uint32_t d = create("d/def/d");
    expected_ = {{b_, {"d/def/b", 2}}, {c_, {"d/def/c", 1}}, {d, {"d/def/d", 1}}};
    ASSERT_EQ(schema_of(1), expected_);
    restart(2, 1);
    restore_schema(2);
    ASSERT_EQ(schema_of(2), (std::map<uint32_t, std::pair<std::string, uint32_t>>{
                                {a_, {"d/def/a", 1}}, {b_, {"d/def/b", 1}}, {c_, {"d/def/c", 1}}}));
    ASSERT_EQ(local_query(2, 0)->table_count(), 3u);
  }
  // As the distribution blocks begin a node restart of 2: the master locks the schema,
  // then every node hears that 2 is starting.
  void start_restart_of_2() {
    from_distribution(1, SimCluster::dictionary(1), Signal(protocol::kDictLockReq, {2}));
    ASSERT_TRUE(run_until([&] { return distribution(1)->has(protocol::kDictLockConf); }));
    EXPECT_EQ(distribution(1)->take(protocol::kDictLockConf).word(0), 2u);
    EXPECT_TRUE(dictionary(1)->schema_locked());
    for (uint16_t node : {1, 2}) {
      from_distribution(node, SimCluster::dictionary(node),
                        Signal(protocol::kNodeStartingRep, {2}));
      ASSERT_TRUE(run_until([&] { return distribution(node)->has(protocol::kNodeStartingConf); }));
      EXPECT_EQ(distribution(node)->take(protocol::kNodeStartingConf).word(0), 2u);
    }
  }
  void expect_refused_by_lock(Signal answer) {
    const DictMsg msg = DictMsg::from_signal(answer);
    EXPECT_EQ(static_cast<ErrorCode>(msg.a), ErrorCode::kTemporary);
    EXPECT_EQ(msg.text, dictionary::kNodeRestartBusyMessage);
  }

  uint32_t next_request_ = 1;
  uint32_t a_ = 0, b_ = 0, c_ = 0;
  std::map<uint32_t, std::pair<std::string, uint32_t>> expected_;
};

TEST_F(DictionaryNodeRestartTest, StartingNodeGetsExactlyTheMastersSchema) {
  ASSERT_NO_FATAL_FAILURE(make_node_2_stale());
  ASSERT_NO_FATAL_FAILURE(start_restart_of_2());
  Signal copied = copy_schema_to_2();
  ASSERT_EQ(copied.id(), protocol::kDictCopyConf)
      << std::string(copied.section().begin(), copied.section().end());
  EXPECT_EQ(copied.word(0), 3u) << "tables installed";
  EXPECT_EQ(schema_of(2), expected_);
  EXPECT_EQ(dictionary(2)->tables().at(b_).schema.ordered_indexes.size(), 1u)
      << "the altered definition";
  EXPECT_FALSE(dictionary(2)->is_master()) << "node 1 stays master";
  for (uint16_t part = 0; part < kLogParts; ++part) {
    EXPECT_EQ(local_query(2, part)->table_count(), 3u) << "part " << part;
    EXPECT_TRUE(local_query(2, part)->fragment_ids(a_).empty()) << "a is dropped";
  }
  // The copy is in node 2's schema file: read back after another crash it is the same.
  crash(2, 1);
  restart(2, 1);
  restore_schema(2);
  EXPECT_EQ(schema_of(2), expected_);
}

TEST_F(DictionaryNodeRestartTest, LockedMasterRefusesChangesUntilTheRestartEnds) {
  ASSERT_NO_FATAL_FAILURE(make_node_2_stale());
  ASSERT_NO_FATAL_FAILURE(start_restart_of_2());
  ASSERT_EQ(copy_schema_to_2().id(), protocol::kDictCopyConf);

  // Locked: every schema change is refused with NDB 711's text.
  expect_refused_by_lock(schema_request(1, create_table_signal(90, table_named("d/def/e")),
                                        protocol::kCreateTableConf, protocol::kCreateTableRef));
  expect_refused_by_lock(
      schema_request(1, drop_signal(c_), protocol::kDropTableConf, protocol::kDropTableRef));
  expect_refused_by_lock(
      schema_request(1, alter_signal(c_), protocol::kAlterTableConf, protocol::kAlterTableRef));
  EXPECT_EQ(schema_of(1), expected_);

  // Started and unlocked: changes run again, on both nodes.
  for (uint16_t node : {1, 2}) {
    from_distribution(node, SimCluster::dictionary(node),
                      Signal(protocol::kNodeStartedRep, {2, 10}));
    ASSERT_TRUE(run_until([&] { return distribution(node)->has(protocol::kNodeStartedConf); }));
    EXPECT_EQ(distribution(node)->take(protocol::kNodeStartedConf).word(0), 2u);
  }
  from_distribution(1, SimCluster::dictionary(1), Signal(protocol::kDictUnlockReq, {2}));
  sim_->run_for(kNanosPerMilli);
  EXPECT_FALSE(dictionary(1)->schema_locked());
  const uint32_t e = create("d/def/e");
  EXPECT_EQ(schema_of(2), schema_of(1)) << "node 2 takes part in schema transactions again";
  EXPECT_EQ(schema_of(2).count(e), 1u);
  EXPECT_TRUE(dictionary(1)->is_master());
  EXPECT_FALSE(dictionary(2)->is_master());
}

TEST_F(DictionaryNodeRestartTest, LockWaitsForTheRunningSchemaTransaction) {
  ASSERT_TRUE(
      client_->send(SimCluster::dictionary(1), create_table_signal(1, table_named("d/def/a")))
          .ok());
  // Queued behind it (not yet started when the lock comes): refused.
  ASSERT_TRUE(
      client_->send(SimCluster::dictionary(1), create_table_signal(2, table_named("d/def/b")))
          .ok());
  // Both arrive at 1 ms (the link's latency); the first one's prepare reaches node 2 at
  // 2 ms, so at 1.5 ms it is running and the second one queued.
  sim_->run_for(1'500'000);
  from_distribution(1, SimCluster::dictionary(1), Signal(protocol::kDictLockReq, {2}));
  sim_->run_for(0);
  EXPECT_FALSE(distribution(1)->has(protocol::kDictLockConf)) << "a schema transaction is running";
  ASSERT_TRUE(run_until([&] { return distribution(1)->has(protocol::kDictLockConf); }));
  EXPECT_EQ(dictionary(1)->tables().size(), 1u) << "the running one finished first";
  EXPECT_EQ(dictionary(2)->tables().size(), 1u);
  ASSERT_TRUE(run_until([&] { return client_->has(protocol::kCreateTableConf); }));
  EXPECT_EQ(DictMsg::from_signal(client_->take(protocol::kCreateTableConf)).request_id, 1u);
  ASSERT_TRUE(run_until([&] { return client_->has(protocol::kCreateTableRef); }));
  Signal refused = client_->take(protocol::kCreateTableRef);
  EXPECT_EQ(DictMsg::from_signal(refused).request_id, 2u);
  expect_refused_by_lock(std::move(refused));
  EXPECT_EQ(dictionary(1)->tables().size(), 1u);
  EXPECT_EQ(dictionary(2)->tables().size(), 1u);
}

TEST_F(DictionaryNodeRestartTest, FailureOfTheStartingNodeReleasesTheLock) {
  create("d/def/a");
  crash(2, 1);
  restart(2, 1);
  from_distribution(1, SimCluster::dictionary(1), Signal(protocol::kDictLockReq, {2}));
  ASSERT_TRUE(run_until([&] { return distribution(1)->has(protocol::kDictLockConf); }));
  expect_refused_by_lock(schema_request(1, create_table_signal(9, table_named("d/def/b")),
                                        protocol::kCreateTableConf, protocol::kCreateTableRef));
  // Node 2 dies again before it was ever reported starting (still dead at node 1).
  crash(2, 1);
  EXPECT_FALSE(dictionary(1)->schema_locked());
  create("d/def/b");
  EXPECT_EQ(dictionary(1)->tables().size(), 2u);
}

TEST_F(DictionaryNodeRestartTest, CopyFromAnUnusableSourceIsRefused) {
  create("d/def/a");
  from_distribution(2, SimCluster::dictionary(2), Signal(protocol::kDictCopyReq, {2}));
  ASSERT_TRUE(run_until([&] { return distribution(2)->has(protocol::kDictCopyRef); }));
  EXPECT_EQ(static_cast<ErrorCode>(distribution(2)->take(protocol::kDictCopyRef).word(0)),
            ErrorCode::kInvalidArgument);
  // The source dies: the copy fails with a temporary error (the restart is retried).
  sim_->cut_link(1, 2);
  from_distribution(2, SimCluster::dictionary(2), Signal(protocol::kDictCopyReq, {1}));
  sim_->run_for(5 * kNanosPerMilli);
  Signal fail(protocol::kNodeFailRep, {1});
  fail.set_sender({2, 0, 0});
  fail.set_receiver(SimCluster::dictionary(2));
  ASSERT_TRUE(sim_->inject(std::move(fail)).ok());
  ASSERT_TRUE(run_until([&] { return distribution(2)->has(protocol::kDictCopyRef); }));
  Signal ref = distribution(2)->take(protocol::kDictCopyRef);
  EXPECT_EQ(static_cast<ErrorCode>(ref.word(0)), ErrorCode::kTemporary);
  EXPECT_FALSE(distribution(2)->has(protocol::kDictCopyConf));
}

}  // namespace
}  // namespace duo::testing
