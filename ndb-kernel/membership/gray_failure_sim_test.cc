// Gray failures in a whole simulated cluster (testing/sim_cluster.h, membership on, the
// production HeartbeatIntervalDbDb of 400 ms): bank transfers (testing/bank_transfers.h)
// run through every data node's coordinator while, per seed,
//   1. one node is frozen (SIGSTOP) three times for 100-1000 ms — shorter than the
//      detection (4 silent intervals): it must not be declared dead; transfers go on;
//   2. every link between data nodes turns slow (20-150 ms one way, with jitter) for 3 s
//      of virtual time: nobody may be declared dead, and transfers keep committing;
//   3. one node is frozen for 3-30 s: it must be declared dead by every survivor within
//      3 s of virtual time (the target is 2 s; the bound is generous), the survivors go
//      on committing without it, and once it resumes it must learn it was declared dead
//      and stop itself — never be taken back into any survivor's membership.
// Then: every acknowledged transfer present, no refused one, balances matching, the total
// constant, the live replicas agreeing row for row (BankTransfers::check_contents), and
// no split brain: no two nodes ever both counted themselves live members without each
// other (checked at every answer while the frozen node is away).
//
// DUO_GRAY_SEEDS=N runs N seeds per shape (CI: 3), from DUO_GRAY_FIRST_SEED (1); a
// failing seed prints the command that replays it.
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <set>

#include "ndb-kernel/distribution/distribution_block.h"
#include "ndb-kernel/membership/membership_block.h"
#include "ndb-kernel/testing/bank_accounts.h"
#include "ndb-kernel/testing/bank_transfers.h"
#include "ndb-kernel/testing/sim_cluster.h"

namespace duo::testing {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kHeartbeatMs = 400;  // the production default (config_params.cc)
constexpr uint64_t kJitterNs = 500'000;

class GrayFailureTest : public ::testing::TestWithParam<std::tuple<uint32_t, uint64_t>> {
 protected:
  GrayFailureTest()
      : node_groups_(std::get<0>(GetParam())),
        seed_(std::get<1>(GetParam())),
        cluster_(SimClusterOptions{.node_groups = node_groups_,
                                   .seed = seed_,
                                   // Every transfer inserts a log row: up to 30 s on one
                                   // replica outgrows the default 16 MiB.
                                   .memory_pages_per_node = 2048,
                                   .lock_wait_timeout_ms = 1200,
                                   .link_jitter_ns = kJitterNs,
                                   .gcp_interval_ms = 100,
                                   .membership = true,
                                   .heartbeat_interval_ms = kHeartbeatMs,
                                   .arbitration_timeout_ms = 7500}),
        random_(seed_ * 6151 + node_groups_),
        bank_(&cluster_, &random_, {.accounts = 30, .in_flight = 8}) {}

  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "replay: DUO_GRAY_FIRST_SEED=" << seed_
                << " DUO_GRAY_SEEDS=1 ./duo_gray_failure_sim_test\n";
    }
  }

  bool pump(const std::function<bool()>& done, uint64_t limit_ms) {
    return bank_.pump(done, limit_ms);
  }
  // Runs transfers for `ms` of virtual time.
  void pump_for(uint64_t ms) {
    const uint64_t until = cluster_.sim().now_ns() + ms * kMs;
    ASSERT_TRUE(pump([&] { return cluster_.sim().now_ns() >= until; }, ms + 1000));
  }
  uint64_t failures_committed() {
    uint64_t total = 0;
    for (uint16_t n : bank_.up_nodes()) total += cluster_.membership(n)->failures_committed();
    return total;
  }
  // Two running nodes that both count themselves live but not each other: split brain.
  void check_no_split_brain() {
    for (uint16_t a : cluster_.data_nodes()) {
      membership::MembershipBlock* ma = cluster_.membership(a);
      if (ma == nullptr || ma->shutdown_requested() || !ma->live_nodes().contains(a)) continue;
      for (uint16_t b : cluster_.data_nodes()) {
        membership::MembershipBlock* mb = cluster_.membership(b);
        if (b <= a || mb == nullptr || mb->shutdown_requested()) continue;
        if (!mb->live_nodes().contains(b)) continue;
        const bool apart = !ma->live_nodes().contains(b) && !mb->live_nodes().contains(a);
        // Both may only have left each other's membership if one of them is frozen (it
        // has not run since) — and a frozen node decides nothing.
        if (apart && !frozen_.contains(a) && !frozen_.contains(b)) {
          ADD_FAILURE() << "split brain: nodes " << a << " and " << b
                        << " are both live without each other";
        }
      }
    }
  }

  const uint32_t node_groups_;
  const uint64_t seed_;
  SimCluster cluster_;
  SeededRandom random_;
  BankTransfers bank_;
  std::set<uint16_t> frozen_;
};

TEST_P(GrayFailureTest, ShortPausesSlowLinksAndALongFreeze) {
  ASSERT_TRUE(cluster_.wait_started());
  bank_.create_and_load();
  if (HasFatalFailure()) return;
  const std::vector<uint16_t> nodes = cluster_.data_nodes();
  pump_for(200 + random_.uniform(300));
  if (HasFatalFailure()) return;

  // 1. Short pauses: no false positive.
  for (int round = 0; round < 3; ++round) {
    const uint16_t node = nodes[random_.uniform(nodes.size())];
    const uint64_t pause_ms = 100 + random_.uniform(901);
    ASSERT_TRUE(cluster_.sim().pause_node(node).ok());
    frozen_.insert(node);
    pump_for(pause_ms);
    if (HasFatalFailure()) return;
    ASSERT_TRUE(cluster_.sim().resume_node(node).ok());
    frozen_.erase(node);
    pump_for(1500);
    if (HasFatalFailure()) return;
    ASSERT_EQ(failures_committed(), 0u)
        << "node " << node << " paused for " << pause_ms << " ms was declared dead";
  }

  // 2. Slow links: no false positive, transfers go on.
  const size_t committed_before_slow = bank_.committed().size();
  for (uint16_t a : nodes) {
    for (uint16_t b : nodes) {
      if (a != b) {
        cluster_.sim().set_link_latency(a, b, (20 + random_.uniform(131)) * kMs, 20 * kMs);
      }
    }
  }
  pump_for(3000);
  if (HasFatalFailure()) return;
  for (uint16_t a : nodes) {
    for (uint16_t b : nodes) {
      if (a != b) cluster_.sim().set_link_latency(a, b, 1 * kMs, kJitterNs);
    }
  }
  pump_for(500);
  if (HasFatalFailure()) return;
  EXPECT_EQ(failures_committed(), 0u) << "a node was declared dead over slow links";
  EXPECT_GT(bank_.committed().size(), committed_before_slow + 10)
      << "transfers stopped over slow links";

  // 3. A long freeze: declared dead quickly, the survivors go on, and the resumed node
  // stops itself.
  const uint16_t victim = nodes[random_.uniform(nodes.size())];
  const uint64_t freeze_ms = 3000 + random_.uniform(27'001);
  const uint64_t frozen_at = cluster_.sim().now_ns();
  ASSERT_TRUE(cluster_.sim().pause_node(victim).ok());
  frozen_.insert(victim);
  bank_.give_up(victim);
  ASSERT_TRUE(pump(
      [&] {
        check_no_split_brain();
        return bank_.declared_dead_everywhere(victim);
      },
      3000))
      << "frozen node " << victim << " was not declared dead within 3 s of virtual time";
  const uint64_t detected_ms = (cluster_.sim().now_ns() - frozen_at) / kMs;
  EXPECT_GE(detected_ms, 3 * kHeartbeatMs) << "declared dead before 3 silent intervals";
  std::cout << "seed " << seed_ << ": node " << victim << " frozen for " << freeze_ms
            << " ms, declared dead after " << detected_ms << " ms\n";
  const size_t committed_at_detection = bank_.committed().size();
  const uint64_t resume_at = frozen_at + freeze_ms * kMs;
  ASSERT_TRUE(pump(
      [&] {
        check_no_split_brain();
        return cluster_.sim().now_ns() >= resume_at;
      },
      freeze_ms + 1000));
  EXPECT_GT(bank_.committed().size(), committed_at_detection)
      << "the survivors committed nothing while node " << victim << " was frozen";
  ASSERT_TRUE(cluster_.sim().resume_node(victim).ok());
  frozen_.erase(victim);
  ASSERT_TRUE(pump(
      [&] {
        for (uint16_t n : bank_.up_nodes()) {
          EXPECT_FALSE(cluster_.membership(n)->live_nodes().contains(victim))
              << "node " << n << " took the resumed node " << victim << " back";
        }
        return cluster_.membership(victim)->shutdown_requested();
      },
      5000))
      << "node " << victim << " resumed after its death but did not stop itself";
  ASSERT_TRUE(cluster_.sim().crash_node(victim).ok());  // duo_datad exits
  bank_.drain();
  if (HasFatalFailure()) return;
  bank_.check_contents(bank_.contents());
  std::cout << "seed " << seed_ << ": " << bank_.committed().size() << " transfers acknowledged\n";
}

std::vector<uint64_t> seeds() {
  const uint64_t first = env_u64("DUO_GRAY_FIRST_SEED", 1);
  const uint64_t count = env_u64("DUO_GRAY_SEEDS", 3);
  std::vector<uint64_t> out;
  for (uint64_t s = first; s < first + count; ++s) out.push_back(s);
  return out;
}
INSTANTIATE_TEST_SUITE_P(Seeds, GrayFailureTest,
                         ::testing::Combine(::testing::Values(1u, 2u),
                                            ::testing::ValuesIn(seeds())));

}  // namespace
}  // namespace duo::testing
