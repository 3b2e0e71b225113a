// The membership block inside a whole simulated cluster (SimCluster with membership on:
// real distribution, dictionary, coordinator and local_query blocks beside it): a crashed
// data node is agreed dead by the survivors, with the arbitrator's grant where needed.
// What the other blocks then do with NODE_FAILREP (takeover) is tested with them.
#include <gtest/gtest.h>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/testing/sim_cluster.h"

namespace duo::membership {
namespace {

using testing::SimCluster;

constexpr uint64_t kMs = kNanosPerMilli;

class ClusterCrash : public ::testing::TestWithParam<uint64_t> {};

TEST_P(ClusterCrash, SurvivorAgreesWithArbitration) {
  set_log_level(LogLevel::kError);
  const uint64_t seed = GetParam();
  SCOPED_TRACE("replay: duo_membership_cluster_sim_test --gtest_filter='*/" +
               std::to_string(seed - 1) + "'");
  SimCluster cluster({.node_groups = 1, .replicas = 2, .seed = seed, .membership = true});
  cluster.sim().run_for((200 + seed * 53 % 700) * kMs);
  const uint16_t victim = seed % 2 == 0 ? 1 : 2;
  const uint16_t survivor = victim == 1 ? 2 : 1;
  ASSERT_TRUE(cluster.sim().crash_node(victim).ok());
  ASSERT_TRUE(cluster.run_until(
      [&] { return cluster.membership(survivor)->live_nodes() == NodeSet{survivor}; }, 2000));
  EXPECT_EQ(cluster.arbitrator()->rule().granted_count(), 1u);
  EXPECT_FALSE(cluster.membership(survivor)->shutdown_requested());
}

INSTANTIATE_TEST_SUITE_P(Seeds, ClusterCrash, ::testing::Range<uint64_t>(1, 21));

TEST(ClusterSplit, FourNodesAcrossGroupsOneSideContinues) {
  set_log_level(LogLevel::kError);
  SimCluster cluster({.node_groups = 2, .replicas = 2, .seed = 3, .membership = true});
  cluster.sim().run_for(300 * kMs);
  cluster.sim().partition({{1, 3, testing::kArbitratorNode, testing::kFirstClientNode}, {2, 4}});
  ASSERT_TRUE(cluster.run_until(
      [&] {
        return cluster.membership(1)->live_nodes() == NodeSet{1, 3} &&
               cluster.membership(2)->shutdown_requested() &&
               cluster.membership(4)->shutdown_requested();
      },
      5000));
  EXPECT_FALSE(cluster.membership(1)->shutdown_requested());
  EXPECT_FALSE(cluster.membership(3)->shutdown_requested());
}

}  // namespace
}  // namespace duo::membership
