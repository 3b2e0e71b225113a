// The shared harness of the local_query simulator tests (see lqh_sim_harness.h).
// Test-only; not thread-safe.
#include "ndb-kernel/local_query/lqh_sim_harness.h"

#include <cstddef>
#include <utility>

#include "ndb-kernel/common/clock.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "storage/memory/test_memory.h"

namespace duo::local_query {

using kernel::BlockAddress;
using kernel::Signal;
using kernel::SignalId;

BlockAddress lqh_instance(uint16_t node, uint16_t part) {
  return BlockAddress{node, protocol::kLocalQueryBlock, part};
}

std::optional<Signal> take_answer(sim::Simulator& sim, const AnswersOf& answers,
                                  const SignalMatch& match, uint64_t limit_ns) {
  std::optional<size_t> found;
  auto scan = [&] {
    std::vector<Signal>& kept = answers();
    for (size_t i = 0; i < kept.size(); ++i) {
      if (match(kept[i])) {
        found = i;
        return true;
      }
    }
    return false;
  };
  if (!sim.run_until(scan, limit_ns)) return std::nullopt;
  std::vector<Signal>& kept = answers();
  Signal out = std::move(kept[*found]);
  kept.erase(kept.begin() + static_cast<ptrdiff_t>(*found));
  return out;
}

Signal must_take_answer(sim::Simulator& sim, const AnswersOf& answers, SignalId id,
                        const SignalMatch& match) {
  auto got = take_answer(
      sim, answers, [&](const Signal& s) { return s.id() == id && (!match || match(s)); },
      30 * kNanosPerSecond);
  if (!got) {
    ADD_FAILURE() << "no " << kernel::signal_name(id);
    return Signal();
  }
  return std::move(*got);
}

Result<protocol::LqhKeyReq> make_key_req(const protocol::ClusterTopology& topology, KeyOp op) {
  const protocol::FragmentPlacement placement = protocol::place_fragment(
      topology, op.fragment,
      op.fragment_count != 0 ? op.fragment_count : topology.default_fragment_count());
  protocol::LqhKeyReq req;
  req.transid = op.transid;
  req.tc_op = op.tc_op;
  req.table_id = op.table_id;
  req.table_version = op.table_version;
  req.fragment = op.fragment;
  req.log_part = placement.log_part;
  req.type = op.type;
  req.lock = op.lock;
  req.coordinator = op.coordinator;
  req.chain = placement.replicas;
  protocol::OpBody body;
  body.key_or_row = std::move(op.key_or_row);
  DUO_RETURN_IF_ERROR(body.encode(&req.body));
  return req;
}

Result<uint32_t> fragment_of_key(const storage::TableSchema& schema, const storage::AttrValues& key,
                                 uint32_t fragment_count) {
  DUO_ASSIGN_OR_RETURN(const uint32_t hash, protocol::distribution_hash(schema, key));
  return hash % fragment_count;
}

LqhSimDriver::LqhSimDriver() : Block("test_driver", protocol::kCoordinatorBlock, 0) {
  for (SignalId id : {protocol::kLqhKeyConf, protocol::kLqhKeyRef, protocol::kLqhCommitConf,
                      protocol::kLqhAbortConf, protocol::kScanFragConf, protocol::kScanFragRef,
                      protocol::kTableAddConf, protocol::kGcpSaveConf, protocol::kLcpStartConf,
                      protocol::kLqhRestoreConf, protocol::kNodeStartingConf}) {
    on(id, &LqhSimDriver::on_answer);
  }
}

void LqhSimDriver::on_answer(Signal& signal) {
  answers_.push_back(signal.clone());
}

void SingleNodeLqhTest::start_node(const LocalQueryOptions& options, uint64_t seed,
                                   uint64_t disk_seed,
                                   const sim::SimFileSystemOptions& fs_options) {
  sim_.reset();
  disk_ = std::make_unique<sim::SimDisk>(disk_seed);
  sim::SimulatorOptions sim_options;
  sim_options.seed = seed;
  sim_ = std::make_unique<sim::Simulator>(sim_options);
  topology_.node_groups = {{kNode}};
  topology_.log_parts = kLogParts;
  auto factory = [this, options, fs_options](sim::NodeId) {
    // A new incarnation gets fresh memory: the old blocks are gone.
    memory_ = storage::make_test_memory(memory_pages_);
    std::vector<std::unique_ptr<kernel::Block>> blocks;
    blocks.push_back(std::make_unique<sim::SimFileSystem>(*disk_, fs_options));
    for (uint16_t part = 0; part < kLogParts; ++part) {
      auto block = std::make_unique<LocalQueryBlock>(part, memory_.get(), topology_, options);
      lqh_[part] = block.get();
      blocks.push_back(std::move(block));
    }
    auto driver = std::make_unique<LqhSimDriver>();
    driver_ = driver.get();
    blocks.push_back(std::move(driver));
    return blocks;
  };
  ASSERT_TRUE(sim_->add_node(kNode, factory).ok());
  sim_->run_for(1 * kNanosPerMilli);
}

void SingleNodeLqhTest::crash_and_restart() {
  ASSERT_TRUE(sim_->crash_node(kNode).ok());
  disk_->crash();
  ASSERT_TRUE(sim_->restart_node(kNode).ok());
  sim_->run_for(1 * kNanosPerMilli);
  add_table();
}

void SingleNodeLqhTest::send_to(const BlockAddress& to, Signal signal) {
  ASSERT_TRUE(driver_->request(to, std::move(signal)).ok());
}

std::optional<Signal> SingleNodeLqhTest::wait_for(const SignalMatch& match, uint64_t limit_ns) {
  return take_answer(
      *sim_, [this]() -> std::vector<Signal>& { return driver_->answers(); }, match, limit_ns);
}

Signal SingleNodeLqhTest::must_wait_for(SignalId id, const SignalMatch& match) {
  return must_take_answer(
      *sim_, [this]() -> std::vector<Signal>& { return driver_->answers(); }, id, match);
}

bool SingleNodeLqhTest::answered(SignalId id, const SignalMatch& match) {
  return wait_for([&](const Signal& s) { return s.id() == id && (!match || match(s)); })
      .has_value();
}

void SingleNodeLqhTest::add_table() {
  const uint32_t request_id = ++next_request_;
  for (uint16_t part = 0; part < kLogParts; ++part) {
    protocol::TableMsg msg;
    msg.request_id = request_id;
    msg.table = table_def();
    auto signal = msg.to_signal(protocol::kTableAddReq);
    ASSERT_TRUE(signal.ok());
    send_to(lqh_address(part), std::move(signal).value());
  }
  for (uint16_t part = 0; part < kLogParts; ++part) {
    Signal conf = must_wait_for(protocol::kTableAddConf,
                                [&](const Signal& s) { return s.word(0) == request_id; });
    EXPECT_EQ(protocol::DictMsg::from_signal(conf).c, 0u);
  }
}

std::optional<protocol::LqhKeyReq> SingleNodeLqhTest::key_req(uint64_t transid, uint32_t fragment,
                                                              storage::OpType type,
                                                              storage::AttrValues key_or_row) {
  const protocol::TableDef def = table_def();
  KeyOp op;
  op.transid = transid;
  op.tc_op = ++next_tc_op_;
  op.table_id = def.schema.table_id;
  op.table_version = def.version;
  op.fragment = fragment;
  op.type = type;
  op.coordinator = driver_address();
  op.key_or_row = std::move(key_or_row);
  auto req = make_key_req(topology_, std::move(op));
  EXPECT_TRUE(req.ok()) << req.status().to_string();
  if (!req.ok()) return std::nullopt;
  return std::move(req).value();
}

void SingleNodeLqhTest::send_key_req(protocol::LqhKeyReq req) {
  const BlockAddress to = lqh_address(req.log_part);
  send_to(to, std::move(req).to_signal());
}

void SingleNodeLqhTest::commit(uint64_t transid, uint32_t gci) {
  for (uint16_t part = 0; part < kLogParts; ++part) {
    Signal req = protocol::transaction_signal(protocol::kLqhCommitReq, transid);
    req.set_word(2, gci);
    send_to(lqh_address(part), std::move(req));
  }
  for (uint16_t part = 0; part < kLogParts; ++part) {
    must_wait_for(protocol::kLqhCommitConf,
                  [&](const Signal& s) { return protocol::transaction_of(s) == transid; });
  }
}

bool SingleNodeLqhTest::gcp_save(uint32_t g, uint64_t limit_ns) {
  for (uint16_t part = 0; part < kLogParts; ++part) {
    send_to(lqh_address(part), Signal(protocol::kGcpSaveReq, {g}));
  }
  for (uint16_t part = 0; part < kLogParts; ++part) {
    if (!wait_for(
            [&](const Signal& s) { return s.id() == protocol::kGcpSaveConf && s.word(0) == g; },
            limit_ns)) {
      return false;
    }
  }
  return true;
}

}  // namespace duo::local_query
