// The stand-in distribution harness; see stand_in_distribution.h.
#include "ndb-kernel/testing/stand_in_distribution.h"

#include <string>
#include <utility>
#include <vector>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/dictionary/dictionary_block.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "storage/memory/test_memory.h"

namespace duo::testing {

using kernel::BlockAddress;
using kernel::Signal;
using kernel::SignalId;

StandInDistribution::StandInDistribution()
    : Block("stand_in_distribution", protocol::kDistributionBlock) {
  for (SignalId id :
       {protocol::kDictLockConf, protocol::kDictCopyConf, protocol::kDictCopyRef,
        protocol::kDictRestoreConf, protocol::kNodeStartingConf, protocol::kNodeStartedConf,
        protocol::kTakeoverDoneRep, protocol::kGcpNoMoreTrans}) {
    on(id, &StandInDistribution::on_answer);
  }
}

bool StandInDistribution::has(SignalId id) const {
  for (const Signal& s : inbox_) {
    if (s.id() == id) return true;
  }
  return false;
}

Signal StandInDistribution::take(SignalId id) {
  for (auto it = inbox_.begin(); it != inbox_.end(); ++it) {
    if (it->id() == id) {
      Signal s = std::move(*it);
      inbox_.erase(it);
      return s;
    }
  }
  ADD_FAILURE() << "no " << kernel::signal_name(id);
  return Signal(id);
}

size_t StandInDistribution::count(SignalId id, uint32_t word0) const {
  size_t n = 0;
  for (const Signal& s : inbox_) n += s.id() == id && s.word(0) == word0 ? 1 : 0;
  return n;
}

StandInDistributionTest::StandInDistributionTest(uint64_t seed) {
  sim::SimulatorOptions options;
  options.seed = seed;
  sim_ = std::make_unique<sim::Simulator>(options);
  topology_.node_groups = {{1, 2}};
  topology_.log_parts = kLogParts;
  for (uint16_t node : {1, 2}) {
    memory_[node] = storage::make_test_memory(256);
    disk_[node] = std::make_unique<sim::SimDisk>(1000 + node);
    storage::GlobalMemory* memory = memory_[node].get();
    sim::SimDisk* disk = disk_[node].get();
    const protocol::ClusterTopology topology = topology_;
    EXPECT_TRUE(sim_->add_node(node,
                               [memory, disk, topology](sim::NodeId) {
                                 std::vector<std::unique_ptr<kernel::Block>> blocks;
                                 blocks.push_back(std::make_unique<sim::SimFileSystem>(*disk));
                                 blocks.push_back(std::make_unique<StandInDistribution>());
                                 blocks.push_back(
                                     std::make_unique<dictionary::DictionaryBlock>(topology));
                                 blocks.push_back(std::make_unique<coordinator::CoordinatorBlock>(
                                     topology, coordinator::CoordinatorOptions{}));
                                 for (uint16_t part = 0; part < kLogParts; ++part) {
                                   blocks.push_back(
                                       std::make_unique<local_query::LocalQueryBlock>(
                                           part, memory, topology,
                                           local_query::LocalQueryOptions{}));
                                 }
                                 return blocks;
                               })
                    .ok());
  }
  EXPECT_TRUE(sim_->add_node(kClientNode,
                             [this](sim::NodeId) {
                               std::vector<std::unique_ptr<kernel::Block>> blocks;
                               auto client = std::make_unique<ScriptClient>(sim_.get());
                               client_ = client.get();
                               blocks.push_back(std::move(client));
                               return blocks;
                             })
                  .ok());
}

StandInDistributionTest::~StandInDistributionTest() {
  sim_.reset();
}

StandInDistribution* StandInDistributionTest::distribution(uint16_t node) {
  return static_cast<StandInDistribution*>(
      sim_->find_block({node, protocol::kDistributionBlock, 0}));
}

void StandInDistributionTest::from_distribution(uint16_t node, const BlockAddress& to,
                                                Signal signal) {
  signal.set_sender({node, protocol::kDistributionBlock, 0});
  signal.set_receiver(to);
  ASSERT_TRUE(sim_->inject(std::move(signal)).ok());
}

void StandInDistributionTest::crash(uint16_t node, uint16_t survivor) {
  ASSERT_TRUE(sim_->crash_node(node).ok());
  disk_[node]->crash();
  sim_->cut_link(node, survivor);
  sim_->cut_link(node, kClientNode);
  std::vector<BlockAddress> targets{SimCluster::dictionary(survivor),
                                    SimCluster::coordinator(survivor)};
  for (uint16_t part = 0; part < kLogParts; ++part) {
    targets.push_back({survivor, protocol::kLocalQueryBlock, part});
  }
  for (const BlockAddress& target : targets) {
    Signal fail(protocol::kNodeFailRep, {node});
    fail.set_sender({survivor, 0, 0});
    fail.set_receiver(target);
    ASSERT_TRUE(sim_->inject(std::move(fail)).ok());
  }
  sim_->run_for(10 * kNanosPerMilli);
}

}  // namespace duo::testing
