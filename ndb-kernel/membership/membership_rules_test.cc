#include "ndb-kernel/membership/membership_rules.h"

#include <gtest/gtest.h>

#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::membership {
namespace {

protocol::ClusterTopology topology(uint32_t groups, uint32_t replicas) {
  protocol::ClusterTopology t;
  uint16_t next = 1;
  for (uint32_t g = 0; g < groups; ++g) {
    t.node_groups.emplace_back();
    for (uint32_t r = 0; r < replicas; ++r) t.node_groups.back().push_back(next++);
  }
  return t;
}

TEST(RingTest, NeighboursWrapAround) {
  const NodeSet live = {2, 3, 7, 9};
  EXPECT_EQ(right_neighbour(live, 2), 3);
  EXPECT_EQ(right_neighbour(live, 7), 9);
  EXPECT_EQ(right_neighbour(live, 9), 2);
  EXPECT_EQ(left_neighbour(live, 2), 9);
  EXPECT_EQ(left_neighbour(live, 3), 2);
  EXPECT_EQ(left_neighbour(live, 9), 7);
}

TEST(RingTest, EveryNodeIsWatchedByExactlyOne) {
  const NodeSet live = {1, 4, 5, 6, 11};
  for (uint16_t node : live) {
    EXPECT_EQ(left_neighbour(live, right_neighbour(live, node)), node);
  }
}

TEST(RingTest, AloneOrAbsentHasNoNeighbour) {
  EXPECT_EQ(right_neighbour({4}, 4), 0);
  EXPECT_EQ(left_neighbour({4}, 4), 0);
  EXPECT_EQ(right_neighbour({1, 2}, 3), 0);
  EXPECT_EQ(right_neighbour({1, 2}, 1), 2);
  EXPECT_EQ(left_neighbour({1, 2}, 1), 2);
}

TEST(PresidentTest, LowestLiveNode) {
  EXPECT_EQ(president_of({3, 2, 8}), 2);
  EXPECT_EQ(president_of({}), 0);
}

TEST(ViabilityTest, TwoNodesOneGroupNeedArbitrationForAnyFailure) {
  const auto t = topology(1, 2);
  EXPECT_EQ(check_viability(t, {1, 2}, {1}).viability, Viability::kNeedArbitration);
  EXPECT_EQ(check_viability(t, {1, 2}, {2}).viability, Viability::kNeedArbitration);
  EXPECT_EQ(check_viability(t, {1, 2}, {1, 2}).viability, Viability::kContinue);
}

TEST(ViabilityTest, FourNodesTwoGroups) {
  const auto t = topology(2, 2);  // groups {1,2} {3,4}
  const NodeSet all = {1, 2, 3, 4};
  EXPECT_EQ(check_viability(t, all, {1, 2, 3}).viability, Viability::kContinue);
  EXPECT_EQ(check_viability(t, all, {1, 3}).viability, Viability::kNeedArbitration);
  EXPECT_EQ(check_viability(t, all, {2, 4}).viability, Viability::kNeedArbitration);
  const ViabilityVerdict lost = check_viability(t, all, {1, 2});
  EXPECT_EQ(lost.viability, Viability::kNodeGroupLost);
  EXPECT_EQ(lost.lost_node_group, 1u);
  EXPECT_EQ(check_viability(t, all, {3, 4}).lost_node_group, 0u);
  // After node 4 died, 3 of the remaining {1,2,3} lose group 1 when 3 dies.
  EXPECT_EQ(check_viability(t, {1, 2, 3}, {1, 2}).viability, Viability::kNodeGroupLost);
  // ... but {1,3} of {1,2,3} is a majority with both groups.
  EXPECT_EQ(check_viability(t, {1, 2, 3}, {1, 3}).viability, Viability::kContinue);
}

// Exhaustive over every split of 4 nodes: at most one side of a split continues on
// its own, and whenever neither does, both sides are ones that must ask the
// arbitrator or stop — so with the grant rule exactly one side can go on.
TEST(ViabilityTest, NoSplitLetsBothSidesContinueAlone) {
  const auto t = topology(2, 2);
  const NodeSet all = {1, 2, 3, 4};
  for (uint32_t mask = 0; mask < 16; ++mask) {
    NodeSet a, b;
    for (uint16_t node = 1; node <= 4; ++node) ((mask >> (node - 1)) & 1 ? a : b).insert(node);
    const bool a_alone = check_viability(t, all, a).viability == Viability::kContinue;
    const bool b_alone = check_viability(t, all, b).viability == Viability::kContinue;
    EXPECT_FALSE(a_alone && b_alone) << format_node_set(a) << " | " << format_node_set(b);
  }
}

TEST(NodeSetTest, RoundTripsThroughSignalWords) {
  const NodeSet nodes = {1, 31, 32, 63, 64, 144, kNodeSetIdMax};
  kernel::Signal signal(protocol::kPrepFailReq);
  put_node_set(signal, 2, nodes);
  EXPECT_EQ(get_node_set(signal, 2), nodes);
  EXPECT_EQ(format_node_set({1, 3}), "{1,3}");
  const FailRoundMsg msg{77, 3, {1, 2}};
  const FailRoundMsg back = FailRoundMsg::from_signal(msg.to_signal(protocol::kCommitFailReq));
  EXPECT_EQ(back.round, 77u);
  EXPECT_EQ(back.president, 3);
  EXPECT_EQ(back.failed, msg.failed);
  const ArbitReqMsg req{5, 2, {2, 4}, {1, 3}};
  const ArbitReqMsg req_back = ArbitReqMsg::from_signal(req.to_signal());
  EXPECT_EQ(req_back.round, 5u);
  EXPECT_EQ(req_back.president, 2);
  EXPECT_EQ(req_back.survivors, req.survivors);
  EXPECT_EQ(req_back.failed, req.failed);
}

}  // namespace
}  // namespace duo::membership
