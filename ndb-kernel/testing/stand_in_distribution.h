// Test support for the node-restart pieces of the dictionary, coordinator and
// local_query: two data nodes (one node group {1, 2}, four log parts) with their real
// file system, dictionary, coordinator and local_query blocks, and in place of the
// distribution block a stand-in that keeps every answer the local blocks send it, so
// a test plays the distribution block's part by hand; plus a ScriptClient node.
//
// Thread-safety: simulator tests, single-threaded.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>

#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/runtime/block.h"
#include "ndb-kernel/sim/sim_file_system.h"
#include "ndb-kernel/sim/simulator.h"
#include "ndb-kernel/testing/sim_cluster.h"
#include "storage/memory/global_memory.h"

namespace duo::testing {

// Stands in for a node's distribution block: keeps every answer the local blocks send it.
class StandInDistribution final : public kernel::Block {
 public:
  StandInDistribution();
  std::deque<kernel::Signal>& inbox() { return inbox_; }
  bool has(kernel::SignalId id) const;
  // The first kept signal `id` (a test failure and an empty one if there is none).
  kernel::Signal take(kernel::SignalId id);
  // How many kept signals `id` carry `word0`.
  size_t count(kernel::SignalId id, uint32_t word0) const;

 private:
  void on_answer(kernel::Signal& signal) { inbox_.push_back(std::move(signal)); }
  std::deque<kernel::Signal> inbox_;
};

class StandInDistributionTest : public ::testing::Test {
 protected:
  static constexpr uint16_t kLogParts = 4;
  static constexpr uint16_t kClientNode = kFirstClientNode;

  explicit StandInDistributionTest(uint64_t seed);
  ~StandInDistributionTest() override;  // blocks before their memory

  StandInDistribution* distribution(uint16_t node);
  bool run_until(const std::function<bool()>& predicate, uint64_t limit_ms = 5'000) {
    return sim_->run_until(predicate, limit_ms * kNanosPerMilli);
  }
  // A signal from `node`'s distribution block (as the real one sends it).
  void from_distribution(uint16_t node, const kernel::BlockAddress& to, kernel::Signal signal);
  // The node dies: its blocks are gone, its links cut, and the survivor's blocks hear
  // NODE_FAILREP (what membership delivers).
  void crash(uint16_t node, uint16_t survivor);

  protocol::ClusterTopology topology_;
  std::map<uint16_t, std::unique_ptr<storage::GlobalMemory>> memory_;
  std::map<uint16_t, std::unique_ptr<sim::SimDisk>> disk_;
  std::unique_ptr<sim::Simulator> sim_;
  ScriptClient* client_ = nullptr;
};

}  // namespace duo::testing
