// SimApiBlock in the simulator: an API node talks to a stand-in coordinator on another
// simulated node over the simulated network. The stand-in answers every batch after its
// last operation (kOpExecute) with one TC_KEYCONF per operation, the last carrying
// kTcBatchDone (and kTcCommitted with kOpCommit); reads return the key as the row. This
// proves the core is hostable as a block, which whole-cluster simulator tests build on.
#include "ndb-kernel/api/sim_api_block.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "ndb-kernel/protocol/packed_signals.h"
#include "ndb-kernel/sim/simulator.h"
#include "storage/row/column.h"

namespace duo::api {
namespace {

using kernel::Signal;

class FakeCoordinator final : public kernel::Block {
 public:
  FakeCoordinator() : Block("coordinator", protocol::kCoordinatorBlock) {
    on(protocol::kTcKeyReq, &FakeCoordinator::on_key_req);
    on(protocol::kPackedSignals, &FakeCoordinator::on_packed);
  }
  uint64_t requests = 0;
  uint64_t packs = 0;

 private:
  // A batch arrives as one PACKED_SIGNALS of TC_KEYREQs.
  void on_packed(Signal& signal) {
    ++packs;
    Result<std::vector<Signal>> inner = protocol::unpack_signals(signal);
    ASSERT_TRUE(inner.ok());
    for (Signal& one : *inner) deliver(one);
  }

  void on_key_req(Signal& signal) {
    ++requests;
    const kernel::BlockAddress client = signal.sender();
    Result<protocol::TcKeyReq> req = protocol::TcKeyReq::from_signal(signal);
    ASSERT_TRUE(req.ok());
    Result<protocol::OpBody> body = protocol::OpBody::decode(protocol::as_view(req->body));
    ASSERT_TRUE(body.ok());
    pending_[req->api_tx].push_back({req->op_index, req->type, std::move(body->key_or_row)});
    if ((req->flags & protocol::kOpExecute) == 0) return;
    std::vector<Pending> batch = std::move(pending_[req->api_tx]);
    pending_.erase(req->api_tx);
    // One result per TC_KEYCONF: the client must gather them by op_index.
    for (size_t i = 0; i < batch.size(); ++i) {
      protocol::TcKeyConf conf;
      conf.api_tx = req->api_tx;
      protocol::OpResultMsg result;
      result.op_index = batch[i].op_index;
      if (batch[i].type == storage::OpType::kRead) {
        ASSERT_TRUE(protocol::encode_attr_values(batch[i].key, &result.data).ok());
      }
      conf.results.push_back(std::move(result));
      if (i + 1 == batch.size()) {
        conf.flags = protocol::kTcBatchDone;
        if (req->flags & protocol::kOpCommit) conf.flags |= protocol::kTcCommitted;
      }
      ASSERT_TRUE(send(client, std::move(conf).to_signal()).ok());
    }
  }

  struct Pending {
    uint32_t op_index;
    storage::OpType type;
    storage::AttrValues key;
  };
  std::map<uint64_t, std::vector<Pending>> pending_;
};

TEST(SimApiBlock, TransactionsRunAgainstACoordinatorInTheSimulator) {
  sim::SimulatorOptions options;
  options.seed = 7;
  options.link_latency_ns = 100 * kNanosPerMicro;
  options.link_jitter_ns = 50 * kNanosPerMicro;
  sim::Simulator sim(options);

  FakeCoordinator* coordinator = nullptr;
  ASSERT_TRUE(sim.add_node(1,
                           [&](sim::NodeId) {
                             auto block = std::make_unique<FakeCoordinator>();
                             coordinator = block.get();
                             std::vector<std::unique_ptr<kernel::Block>> blocks;
                             blocks.push_back(std::move(block));
                             return blocks;
                           })
                  .ok());
  SimApiBlock* api = nullptr;
  ASSERT_TRUE(sim.add_node(50,
                           [&](sim::NodeId node) {
                             SimApiBlockOptions api_options;
                             api_options.topology.node_groups = {{1}};
                             api_options.topology.log_parts = 1;
                             api_options.connected_nodes = {1};
                             auto block =
                                 std::make_unique<SimApiBlock>(node, std::move(api_options));
                             api = block.get();
                             std::vector<std::unique_ptr<kernel::Block>> blocks;
                             blocks.push_back(std::move(block));
                             return blocks;
                           })
                  .ok());
  sim.run_for(kNanosPerMilli);  // on_start: the core learns node 1 is reachable
  ASSERT_TRUE(api->core().node_connected(1));

  TableDef table;
  table.schema.table_id = 1;
  table.schema.name = "t";
  storage::ColumnDef id;
  id.name = "id";
  id.type = storage::ColumnType::kBigInt;
  id.nullable = false;
  table.schema.columns = {id};
  table.schema.primary_key = {0};
  table.fragment_count = 1;

  // 32 transactions in flight, each a batch of 3 reads, all committed.
  constexpr int kTransactions = 32;
  int completed = 0;
  std::map<uint64_t, int64_t> first_key;
  for (int t = 0; t < kTransactions; ++t) {
    ApiCore& core = api->core();
    const uint64_t tx = *core.begin();
    for (int op = 0; op < 3; ++op) {
      storage::AttrValues key;
      key.add(0, storage::encode_int(id, t * 10 + op));
      ASSERT_TRUE(core.read(tx, table, std::move(key), {}).ok());
    }
    first_key[tx] = t * 10;
    ASSERT_TRUE(core.execute(tx, ExecType::kCommit,
                             [&, tx](uint64_t done_tx, const Status& status) {
                               EXPECT_EQ(done_tx, tx);
                               EXPECT_TRUE(status.ok());
                               ++completed;
                             })
                    .ok());
  }
  ASSERT_TRUE(sim.run_until([&] { return completed == kTransactions; }, kNanosPerSecond));
  EXPECT_EQ(coordinator->requests, 3u * kTransactions);
  EXPECT_EQ(coordinator->packs, static_cast<uint64_t>(kTransactions));  // a pack per batch
  for (const auto& [tx, key] : first_key) {
    EXPECT_EQ(*api->core().state(tx), TxState::kCommitted);
    for (uint32_t op = 0; op < 3; ++op) {
      const OpResult* result = *api->core().op_result(tx, op);
      ASSERT_TRUE(result->status.ok());
      EXPECT_EQ(storage::decode_int(id, result->values.value(0)), key + op);
    }
  }
}

}  // namespace
}  // namespace duo::api
