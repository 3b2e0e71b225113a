#include "ndb-kernel/membership/arbitration_rule.h"

#include <gtest/gtest.h>

namespace duo::membership {
namespace {

TEST(ArbitrationRuleTest, SplitOneOneFirstAskerWins) {
  ArbitrationRule rule;
  EXPECT_TRUE(rule.request(2, {2}, {1}).granted);
  const ArbitrationDecision second = rule.request(1, {1}, {2});
  EXPECT_FALSE(second.granted);
  EXPECT_NE(second.reason.find("node 1"), std::string::npos);
  EXPECT_EQ(rule.granted_count(), 1u);
  EXPECT_EQ(rule.refused_count(), 1u);
}

TEST(ArbitrationRuleTest, SplitTwoTwoFirstAskerWins) {
  ArbitrationRule rule;
  EXPECT_TRUE(rule.request(1, {1, 3}, {2, 4}).granted);
  EXPECT_FALSE(rule.request(2, {2, 4}, {1, 3}).granted);
}

TEST(ArbitrationRuleTest, WinnersMayAskAgain) {
  ArbitrationRule rule;
  EXPECT_TRUE(rule.request(1, {1, 3}, {2, 4}).granted);
  // The president's round restarted, or one more winner died later.
  EXPECT_TRUE(rule.request(1, {1, 3}, {2, 4}).granted);
  EXPECT_TRUE(rule.request(1, {1}, {2, 3, 4}).granted);
  EXPECT_FALSE(rule.request(3, {3}, {1}).granted);
}

TEST(ArbitrationRuleTest, PresidentCountsAsSurvivor) {
  ArbitrationRule rule;
  EXPECT_TRUE(rule.request(1, {1}, {2}).granted);
  EXPECT_FALSE(rule.request(2, {}, {1}).granted);
}

TEST(ArbitrationRuleTest, RejoinClearsTheMark) {
  ArbitrationRule rule;
  EXPECT_TRUE(rule.request(1, {1}, {2}).granted);
  EXPECT_EQ(rule.failed(), (NodeSet{2}));
  rule.node_rejoined(2);
  EXPECT_TRUE(rule.failed().empty());
  // Next time node 2's side may win (node 1 is the one that died now).
  EXPECT_TRUE(rule.request(2, {2}, {1}).granted);
  EXPECT_FALSE(rule.request(1, {1}, {2}).granted);
}

}  // namespace
}  // namespace duo::membership
