// The dictionary's schema transactions in the simulator: the master creates and drops
// tables on every node, refuses duplicates and unknown tables with the MySQL errors,
// non-masters redirect, subscribers hear about changes, and queued requests run in
// order.
#include <gtest/gtest.h>

#include "ndb-kernel/dictionary/dictionary_block.h"
#include "ndb-kernel/testing/sim_cluster.h"
#include "ndb-kernel/testing/value_bytes.h"

namespace duo::testing {
namespace {

using kernel::Signal;
using protocol::DictMsg;
using protocol::OpBody;

storage::TableSchema table_named(const std::string& name) {
  storage::TableSchema schema;
  schema.name = name;
  schema.columns = {{"id", storage::ColumnType::kBigInt, false, false},
                    {"v", storage::ColumnType::kVarchar, false, true, 100}};
  schema.primary_key = {0};
  return schema;
}

class DictionaryTest : public ::testing::Test {
 protected:
  DictionaryTest() : cluster_(SimClusterOptions{.node_groups = 2, .replicas = 2, .clients = 2}) {}

  Signal request(uint16_t node, Signal signal, protocol::SignalId answer_conf,
                 protocol::SignalId answer_ref, uint32_t client_index = 0) {
    ScriptClient& c = cluster_.client(client_index);
    EXPECT_TRUE(c.send(SimCluster::dictionary(node), std::move(signal)).ok());
    EXPECT_TRUE(cluster_.run_until([&] { return c.has(answer_conf) || c.has(answer_ref); }));
    return c.take(c.has(answer_conf) ? answer_conf : answer_ref);
  }

  SimCluster cluster_;
};

TEST_F(DictionaryTest, CreateInstallsEverywhereWithDefaultFragmentCount) {
  Signal conf = request(1, create_table_signal(7, table_named("d/def/t1")),
                        protocol::kCreateTableConf, protocol::kCreateTableRef);
  ASSERT_EQ(conf.id(), protocol::kCreateTableConf);
  DictMsg msg = DictMsg::from_signal(conf);
  EXPECT_EQ(msg.request_id, 7u);
  EXPECT_EQ(msg.b, 1u) << "first version";
  for (uint16_t node : cluster_.data_nodes()) {
    auto* dict = cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock);
    ASSERT_EQ(dict->tables().count(msg.a), 1u) << "node " << node;
    EXPECT_EQ(dict->tables().at(msg.a).fragment_count, 8u)
        << "2 node groups x 2 replicas x PartitionsPerNode (2)";
    EXPECT_EQ(dict->is_master(), node == 1);
  }
}

TEST_F(DictionaryTest, AGivenFragmentCountIsKeptUpToTheMaximum) {
  Signal conf = request(1, create_table_signal(7, table_named("d/def/t1"), 3),
                        protocol::kCreateTableConf, protocol::kCreateTableRef);
  ASSERT_EQ(conf.id(), protocol::kCreateTableConf);
  const DictMsg msg = DictMsg::from_signal(conf);
  for (uint16_t node : cluster_.data_nodes()) {
    auto* dict = cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock);
    EXPECT_EQ(dict->tables().at(msg.a).fragment_count, 3u) << "node " << node;
  }
  Signal ref =
      request(1, create_table_signal(8, table_named("d/def/t2"), protocol::kFragmentCountMax + 1),
              protocol::kCreateTableConf, protocol::kCreateTableRef);
  ASSERT_EQ(ref.id(), protocol::kCreateTableRef);
  EXPECT_NE(DictMsg::from_signal(ref).text.find("Too many partitions"), std::string::npos);
  // The refused table took no table id: the next one gets the id after t1's.
  Signal next = request(1, create_table_signal(9, table_named("d/def/t3")),
                        protocol::kCreateTableConf, protocol::kCreateTableRef);
  ASSERT_EQ(next.id(), protocol::kCreateTableConf);
  EXPECT_EQ(DictMsg::from_signal(next).a, msg.a + 1);
}

TEST_F(DictionaryTest, DuplicateNameIs1050AndUnknownDropIs1146) {
  ASSERT_EQ(request(1, create_table_signal(1, table_named("d/def/t1")), protocol::kCreateTableConf,
                    protocol::kCreateTableRef)
                .id(),
            protocol::kCreateTableConf);
  Signal ref = request(1, create_table_signal(2, table_named("d/def/t1")),
                       protocol::kCreateTableConf, protocol::kCreateTableRef);
  ASSERT_EQ(ref.id(), protocol::kCreateTableRef);
  DictMsg msg = DictMsg::from_signal(ref);
  EXPECT_EQ(error_info(static_cast<ErrorCode>(msg.a)).mysql_errno, 1050);
  EXPECT_EQ(msg.text, "Table 'd/def/t1' already exists");

  ref = request(1, DictMsg{3, 0, 0, 0, "d/def/nope"}.to_signal(protocol::kDropTableReq),
                protocol::kDropTableConf, protocol::kDropTableRef);
  ASSERT_EQ(ref.id(), protocol::kDropTableRef);
  EXPECT_EQ(error_info(static_cast<ErrorCode>(DictMsg::from_signal(ref).a)).mysql_errno, 1146);

  ref = request(2, DictMsg{4, 0, 0, 0, "d/def/nope"}.to_signal(protocol::kGetTableReq),
                protocol::kGetTableConf, protocol::kGetTableRef);
  ASSERT_EQ(ref.id(), protocol::kGetTableRef);
  EXPECT_EQ(static_cast<ErrorCode>(DictMsg::from_signal(ref).a), ErrorCode::kNoSuchTable);
}

TEST_F(DictionaryTest, InvalidSchemaIsRefusedAndNothingIsInstalled) {
  storage::TableSchema bad = table_named("d/def/bad");
  bad.primary_key = {1};  // nullable column as primary key
  Signal ref = request(1, create_table_signal(1, bad), protocol::kCreateTableConf,
                       protocol::kCreateTableRef);
  ASSERT_EQ(ref.id(), protocol::kCreateTableRef);
  for (uint16_t node : cluster_.data_nodes()) {
    EXPECT_TRUE(
        cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock)->tables().empty());
  }
}

TEST_F(DictionaryTest, NonMasterRedirectsSchemaChanges) {
  Signal ref = request(3, create_table_signal(1, table_named("d/def/t1")),
                       protocol::kCreateTableConf, protocol::kCreateTableRef);
  ASSERT_EQ(ref.id(), protocol::kCreateTableRef);
  DictMsg msg = DictMsg::from_signal(ref);
  EXPECT_EQ(static_cast<ErrorCode>(msg.a), ErrorCode::kTemporary);
  EXPECT_EQ(msg.b, 1u) << "names the master";
}

TEST_F(DictionaryTest, QueuedChangesRunInOrderAndSubscribersHearOfThem) {
  // Client 1 subscribes at node 4; client 0 fires three changes back to back.
  ASSERT_TRUE(cluster_.client(1)
                  .send(SimCluster::dictionary(4), Signal(protocol::kSubscribeSchemaReq))
                  .ok());
  ScriptClient& c = cluster_.client(0);
  ASSERT_TRUE(c.send(SimCluster::dictionary(1), create_table_signal(1, table_named("d/def/a"))).ok());
  ASSERT_TRUE(c.send(SimCluster::dictionary(1), create_table_signal(2, table_named("d/def/b"))).ok());
  ASSERT_TRUE(c.send(SimCluster::dictionary(1),
                     DictMsg{3, 0, 0, 0, "d/def/a"}.to_signal(protocol::kDropTableReq))
                  .ok());
  ASSERT_TRUE(cluster_.run_until([&] { return c.has(protocol::kDropTableConf); }));
  EXPECT_EQ(DictMsg::from_signal(c.take(protocol::kCreateTableConf)).request_id, 1u);
  EXPECT_EQ(DictMsg::from_signal(c.take(protocol::kCreateTableConf)).request_id, 2u);

  ASSERT_TRUE(cluster_.run_until([&] { return cluster_.client(1).inbox().size() >= 3; }));
  std::vector<std::pair<uint32_t, std::string>> events;
  for (Signal& s : cluster_.client(1).inbox()) {
    ASSERT_EQ(s.id(), protocol::kSchemaEvent);
    DictMsg event = DictMsg::from_signal(s);
    events.emplace_back(event.c, event.text);
  }
  EXPECT_EQ(events, (std::vector<std::pair<uint32_t, std::string>>{
                        {protocol::kSchemaCreate, "d/def/a"},
                        {protocol::kSchemaCreate, "d/def/b"},
                        {protocol::kSchemaDrop, "d/def/a"}}));

  Signal list = request(2, Signal(protocol::kListTablesReq, {9}), protocol::kListTablesConf,
                        protocol::kListTablesConf);
  Result<std::vector<protocol::TableListEntry>> tables = protocol::decode_table_list(list);
  ASSERT_TRUE(tables.ok());
  ASSERT_EQ(tables->size(), 1u);
  EXPECT_EQ((*tables)[0].name, "d/def/b");
}

// The master dies in the middle of a CREATE: its commit reached node 2 only (the links
// to nodes 3 and 4 are slow, and a crashed sender's signals in flight are lost). The new
// master (node 2) finds the transaction committed at itself and prepared at 3 and 4,
// and commits it there: every survivor has the table; the next CREATE runs. With the
// commit reaching nobody, the takeover aborts it everywhere instead.
class DictionaryTakeoverTest : public DictionaryTest,
                               public ::testing::WithParamInterface<bool> {
 protected:
  static bool has_table(const dictionary::DictionaryBlock& dict, const std::string& name) {
    for (const auto& [id, table] : dict.tables()) {
      if (table.schema.name == name) return true;
    }
    return false;
  }
};

TEST_P(DictionaryTakeoverTest, NewMasterFinishesTheDeadMastersTransaction) {
  const bool commit_reached_node_2 = GetParam();
  sim::Simulator& sim = cluster_.sim();
  for (uint16_t node : {3, 4}) sim.set_link_latency(1, node, 50 * kNanosPerMilli, 0);
  if (!commit_reached_node_2) sim.set_link_latency(1, 2, 50 * kNanosPerMilli, 0);
  bool crashed = false;
  sim.set_delivery_observer([&](uint64_t, const Signal& s) {
    if (crashed || s.id() != protocol::kSchemaCommitReq) return;
    if (commit_reached_node_2 && s.receiver().node_id != 2) return;
    // The commit at node 2 (or at node 1 itself, the first): node 1 crashes now.
    crashed = true;
    sim.schedule_action(0, [&] { ASSERT_TRUE(sim.crash_node(1).ok()); });
  });
  ScriptClient& c = cluster_.client(0);
  ASSERT_TRUE(c.send(SimCluster::dictionary(1), create_table_signal(1, table_named("d/def/t"))).ok());
  ASSERT_TRUE(cluster_.run_until([&] { return crashed; }));
  sim.run_for(1 * kNanosPerMilli);
  sim.set_delivery_observer(nullptr);
  for (uint16_t node : {2, 3, 4}) {
    Signal fail(protocol::kNodeFailRep, {1});
    fail.set_sender({node, 0, 0});
    fail.set_receiver(SimCluster::dictionary(node));
    ASSERT_TRUE(sim.inject(std::move(fail)).ok());
  }
  auto* master = cluster_.block<dictionary::DictionaryBlock>(2, protocol::kDictionaryBlock);
  ASSERT_TRUE(cluster_.run_until([&] { return master->takeovers_done() == 1; }));
  EXPECT_TRUE(master->is_master());
  for (uint16_t node : {2, 3, 4}) {
    auto* dict = cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock);
    EXPECT_EQ(has_table(*dict, "d/def/t"), commit_reached_node_2) << "node " << node;
  }
  // The new master runs the next schema transaction.
  Signal conf = request(2, create_table_signal(2, table_named("d/def/u")),
                        protocol::kCreateTableConf, protocol::kCreateTableRef, 1);
  EXPECT_EQ(conf.id(), protocol::kCreateTableConf);
  for (uint16_t node : {2, 3, 4}) {
    auto* dict = cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock);
    EXPECT_TRUE(has_table(*dict, "d/def/u")) << "node " << node;
  }
}

// The master dies in the middle of a CREATE as above; then the new master (node 2) dies
// in the middle of its own takeover: its commit (or abort) of node 1's transaction
// reached node 3 and not node 4. Node 3, master now, takes over every dead node (1 and
// 2): node 4 ends as node 3 did, nothing stays prepared anywhere, and the next CREATE
// runs. (Taking over only the last dead master, node 2, left node 4 holding node 1's
// transaction prepared: without the table that node 3 has.)
TEST_P(DictionaryTakeoverTest, NextMasterFinishesWhatADeadNewMasterLeft) {
  const bool commit_reached_node_2 = GetParam();
  sim::Simulator& sim = cluster_.sim();
  for (uint16_t node : {3, 4}) sim.set_link_latency(1, node, 50 * kNanosPerMilli, 0);
  if (!commit_reached_node_2) sim.set_link_latency(1, 2, 50 * kNanosPerMilli, 0);
  // Node 2's answers reach node 4 late: its takeover's decision reaches node 3 first.
  sim.set_link_latency(2, 4, 50 * kNanosPerMilli, 0);
  uint16_t crashed = 0;
  sim.set_delivery_observer([&](uint64_t, const Signal& s) {
    if (s.id() != protocol::kSchemaCommitReq) return;
    const uint16_t from = s.sender().node_id;
    const uint16_t to = s.receiver().node_id;
    const bool first_master_dies =
        crashed == 0 && from == 1 && (commit_reached_node_2 ? to == 2 : to == 1);
    const bool second_master_dies = crashed == 1 && from == 2 && to == 3;
    if (!first_master_dies && !second_master_dies) return;
    crashed = from;
    sim.schedule_action(0, [&sim, from] { ASSERT_TRUE(sim.crash_node(from).ok()); });
  });
  const auto report_failure = [&](uint16_t dead, std::vector<uint16_t> survivors) {
    for (uint16_t node : survivors) {
      Signal fail(protocol::kNodeFailRep, {dead});
      fail.set_sender({node, 0, 0});
      fail.set_receiver(SimCluster::dictionary(node));
      ASSERT_TRUE(sim.inject(std::move(fail)).ok());
    }
  };
  ScriptClient& c = cluster_.client(0);
  ASSERT_TRUE(
      c.send(SimCluster::dictionary(1), create_table_signal(1, table_named("d/def/t"))).ok());
  ASSERT_TRUE(cluster_.run_until([&] { return crashed == 1; }));
  sim.run_for(1 * kNanosPerMilli);
  report_failure(1, {2, 3, 4});
  ASSERT_TRUE(cluster_.run_until([&] { return crashed == 2; }))
      << "node 2's takeover never sent its decision to node 3";
  sim.run_for(1 * kNanosPerMilli);
  sim.set_delivery_observer(nullptr);
  report_failure(2, {3, 4});
  auto* master = cluster_.block<dictionary::DictionaryBlock>(3, protocol::kDictionaryBlock);
  ASSERT_TRUE(cluster_.run_until([&] { return master->takeovers_done() == 2; }))
      << "node 3 did not take over both dead nodes";
  EXPECT_TRUE(master->is_master());
  cluster_.sim().run_for(100 * kNanosPerMilli);
  for (uint16_t node : {3, 4}) {
    auto* dict = cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock);
    EXPECT_EQ(has_table(*dict, "d/def/t"), commit_reached_node_2) << "node " << node;
    EXPECT_EQ(dict->prepared_count(), 0u) << "node " << node << " holds a transaction prepared";
  }
  Signal conf = request(3, create_table_signal(2, table_named("d/def/u")),
                        protocol::kCreateTableConf, protocol::kCreateTableRef, 1);
  EXPECT_EQ(conf.id(), protocol::kCreateTableConf);
  for (uint16_t node : {3, 4}) {
    auto* dict = cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock);
    EXPECT_TRUE(has_table(*dict, "d/def/u")) << "node " << node;
  }
}

INSTANTIATE_TEST_SUITE_P(CommitReachedOrNot, DictionaryTakeoverTest, ::testing::Bool());

// An ALTER adding a UNIQUE index to a table with rows fails its index builds (the local
// builds cannot fill the hidden table) on the nodes holding rows; its master then runs
// the undo (back to the previous definition) — and dies:
//   kBeforeUndo    when the first commit answer reaches it (the undo not started),
//   kUndoCommitted when the undo's commit reached node 2 and not nodes 3 and 4,
//   kUndoPrepared  when the undo's commit reached nobody.
// The new master (node 2) must leave every live node on the previous definition: it
// commits an undo some node committed, and runs the undo itself otherwise. (Before the
// takeover knew of failed ALTERs, the first and the last left the failed definition
// installed on every survivor.)
enum class MasterDies { kBeforeUndo, kUndoCommitted, kUndoPrepared };

class FailedAlterTakeoverTest : public DictionaryTest,
                                public ::testing::WithParamInterface<MasterDies> {};

TEST_P(FailedAlterTakeoverTest, NewMasterLeavesEveryNodeOnThePreviousDefinition) {
  const MasterDies when = GetParam();
  sim::Simulator& sim = cluster_.sim();
  ScriptClient& c = cluster_.client(0);
  Signal created = request(1, create_table_signal(1, table_named("d/def/t")),
                           protocol::kCreateTableConf, protocol::kCreateTableRef);
  ASSERT_EQ(created.id(), protocol::kCreateTableConf);
  const uint32_t table_id = DictMsg::from_signal(created).a;
  auto* first = cluster_.block<dictionary::DictionaryBlock>(1, protocol::kDictionaryBlock);
  const protocol::TableDef before = first->tables().at(table_id);
  // Rows in (very likely) every fragment: the index builds fail where they are.
  for (int64_t id = 1; id <= 16; ++id) {
    OpBody row;
    row.key_or_row.add(0, i64(id));
    row.key_or_row.add(1, std::string("v") + std::to_string(id));
    ASSERT_TRUE(c.send(SimCluster::coordinator(1),
                       key_signal(static_cast<uint64_t>(id), 0, before, storage::OpType::kInsert,
                                  row, protocol::kOpExecute | protocol::kOpCommit))
                    .ok());
  }
  ASSERT_TRUE(cluster_.run_until([&] {
    size_t answers = 0;
    for (const Signal& s : c.inbox()) answers += s.id() == protocol::kTcKeyConf ? 1 : 0;
    return answers == 16;
  }));
  c.inbox().clear();

  if (when != MasterDies::kBeforeUndo) {
    for (uint16_t node : {3, 4}) sim.set_link_latency(1, node, 50 * kNanosPerMilli, 0);
    if (when == MasterDies::kUndoPrepared) sim.set_link_latency(1, 2, 50 * kNanosPerMilli, 0);
  }
  uint32_t prepares = 0;  // node 1's SCHEMA_PREPAREREQs at itself: the ALTER, then the undo
  bool crashed = false;
  sim.set_delivery_observer([&](uint64_t, const Signal& s) {
    if (crashed || s.sender().node_id != 1) return;
    if (s.id() == protocol::kSchemaPrepareReq && s.receiver().node_id == 1) ++prepares;
    bool dies = false;
    switch (when) {
      case MasterDies::kBeforeUndo:
        dies = s.id() == protocol::kSchemaCommitConf && s.receiver().node_id == 1;
        break;
      case MasterDies::kUndoCommitted:
        dies = prepares == 2 && s.id() == protocol::kSchemaCommitReq && s.receiver().node_id == 2;
        break;
      case MasterDies::kUndoPrepared:
        dies = prepares == 2 && s.id() == protocol::kSchemaCommitReq && s.receiver().node_id == 1;
        break;
    }
    if (!dies) return;
    crashed = true;
    sim.schedule_action(0, [&] { ASSERT_TRUE(sim.crash_node(1).ok()); });
  });
  protocol::TableDef with_unique = before;
  with_unique.schema.ordered_indexes.push_back({"uk", {1}, true});
  Result<Signal> alter = protocol::TableMsg{7, 0, with_unique}.to_signal(protocol::kAlterTableReq);
  ASSERT_TRUE(alter.ok());
  ASSERT_TRUE(c.send(SimCluster::dictionary(1), std::move(alter).value()).ok());
  ASSERT_TRUE(cluster_.run_until([&] { return crashed; })) << "the master never got that far";
  sim.run_for(1 * kNanosPerMilli);
  sim.set_delivery_observer(nullptr);
  for (uint16_t node : {2, 3, 4}) {
    Signal fail(protocol::kNodeFailRep, {1});
    fail.set_sender({node, 0, 0});
    fail.set_receiver(SimCluster::dictionary(node));
    ASSERT_TRUE(sim.inject(std::move(fail)).ok());
  }
  auto* master = cluster_.block<dictionary::DictionaryBlock>(2, protocol::kDictionaryBlock);
  ASSERT_TRUE(cluster_.run_until([&] { return master->takeovers_done() == 1; }));
  // The undo (if the takeover runs it) is the next schema transaction; then all is quiet.
  ASSERT_TRUE(cluster_.run_until(
      [&] {
        for (uint16_t node : {2, 3, 4}) {
          auto* dict =
              cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock);
          if (dict->prepared_count() != 0) return false;
        }
        return true;
      },
      2'000));
  sim.run_for(200 * kNanosPerMilli);
  uint32_t version = 0;
  for (uint16_t node : {2, 3, 4}) {
    auto* dict = cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock);
    const protocol::TableDef& now = dict->tables().at(table_id);
    EXPECT_EQ(now.schema.ordered_indexes.size(), before.schema.ordered_indexes.size())
        << "node " << node << " kept the failed ALTER's definition";
    if (version == 0) version = now.version;
    EXPECT_EQ(now.version, version) << "node " << node;
  }
  EXPECT_GT(version, before.version + 1) << "the undo is a version of its own";
  // The new master runs the next schema transaction.
  Signal conf = request(2, create_table_signal(2, table_named("d/def/u")),
                        protocol::kCreateTableConf, protocol::kCreateTableRef, 1);
  EXPECT_EQ(conf.id(), protocol::kCreateTableConf);
}

INSTANTIATE_TEST_SUITE_P(WhenTheMasterDies, FailedAlterTakeoverTest,
                         ::testing::Values(MasterDies::kBeforeUndo, MasterDies::kUndoCommitted,
                                           MasterDies::kUndoPrepared),
                         [](const ::testing::TestParamInfo<MasterDies>& info) {
                           switch (info.param) {
                             case MasterDies::kBeforeUndo:
                               return "BeforeUndo";
                             case MasterDies::kUndoCommitted:
                               return "UndoCommittedAtOneNode";
                             case MasterDies::kUndoPrepared:
                               return "UndoPreparedOnly";
                           }
                           return "Unknown";
                         });

}  // namespace
}  // namespace duo::testing
