// The dictionary's schema transactions in the simulator: the master creates and drops
// tables on every node, refuses duplicates and unknown tables with the MySQL errors,
// non-masters redirect, subscribers hear about changes, and queued requests run in
// order.
#include <gtest/gtest.h>

#include "ndb-kernel/dictionary/dictionary_block.h"
#include "ndb-kernel/testing/sim_cluster.h"

namespace duo::testing {
namespace {

using kernel::Signal;
using protocol::DictMsg;

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
    EXPECT_EQ(dict->tables().at(msg.a).fragment_count, 16u) << "2 node groups x 2 replicas x 4 log parts";
    EXPECT_EQ(dict->is_master(), node == 1);
  }
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

INSTANTIATE_TEST_SUITE_P(CommitReachedOrNot, DictionaryTakeoverTest, ::testing::Bool());

}  // namespace
}  // namespace duo::testing
