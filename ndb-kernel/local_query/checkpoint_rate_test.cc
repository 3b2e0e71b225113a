// The checkpoint write-rate rule and budget (checkpoint_rate.h) on their own: which
// limit wins in every situation, and that the budget lets through exactly one slice's
// bytes per 100 ms over a long run, carrying a slice's excess into the next ones.
#include "ndb-kernel/local_query/checkpoint_rate.h"

#include <gtest/gtest.h>

namespace duo::local_query {
namespace {

constexpr uint64_t kMB = 1'000'000;

LcpWriteSpeeds node_speeds() {
  LcpWriteSpeeds speeds;
  speeds.normal_bytes_per_s = 20 * kMB;
  speeds.other_node_restart_bytes_per_s = 50 * kMB;
  speeds.own_restart_bytes_per_s = 200 * kMB;
  speeds.min_bytes_per_s = 10 * kMB;
  speeds.redo_raise_bytes = 64 * kMB;
  return speeds;
}

TEST(LcpWriteSpeed, NoLimitsConfiguredMeansUnlimited) {
  LcpSpeedInputs inputs;
  inputs.own_restart = true;
  const LcpSpeed speed = choose_lcp_write_speed(LcpWriteSpeeds{}, inputs);
  EXPECT_EQ(speed.bytes_per_s, 0u);
  EXPECT_EQ(speed.reason, LcpSpeedReason::kUnlimited);
}

TEST(LcpWriteSpeed, PrecedenceOfTheRules) {
  const LcpWriteSpeeds speeds = node_speeds();
  auto speed = [&](bool own, bool other, bool backlog, uint64_t redo) {
    LcpSpeedInputs inputs;
    inputs.own_restart = own;
    inputs.other_node_restart = other;
    inputs.redo_backlog = backlog;
    inputs.redo_bytes_since_start = redo;
    return choose_lcp_write_speed(speeds, inputs);
  };
  EXPECT_EQ(speed(false, false, false, 0).bytes_per_s, 20 * kMB);
  EXPECT_EQ(speed(false, false, false, 0).reason, LcpSpeedReason::kNormal);
  EXPECT_EQ(speed(false, false, true, 0).bytes_per_s, 10 * kMB);
  EXPECT_EQ(speed(false, false, true, 0).reason, LcpSpeedReason::kRedoBacklog);
  // A restart goes faster even with a redo backlog.
  EXPECT_EQ(speed(false, true, true, 0).bytes_per_s, 50 * kMB);
  EXPECT_EQ(speed(false, true, true, 0).reason, LcpSpeedReason::kOtherNodeRestart);
  EXPECT_EQ(speed(true, true, true, 0).bytes_per_s, 200 * kMB);
  EXPECT_EQ(speed(true, true, true, 0).reason, LcpSpeedReason::kOwnRestart);
  // The redo rules win: just below the threshold nothing changes, at it the fastest
  // limit applies, at twice it none.
  EXPECT_EQ(speed(false, false, true, 64 * kMB - 1).reason, LcpSpeedReason::kRedoBacklog);
  EXPECT_EQ(speed(false, false, true, 64 * kMB).bytes_per_s, 200 * kMB);
  EXPECT_EQ(speed(false, false, true, 64 * kMB).reason, LcpSpeedReason::kRedoFilling);
  EXPECT_EQ(speed(true, false, false, 128 * kMB - 1).reason, LcpSpeedReason::kRedoFilling);
  EXPECT_EQ(speed(true, false, false, 128 * kMB).bytes_per_s, 0u);
  EXPECT_EQ(speed(true, false, false, 128 * kMB).reason, LcpSpeedReason::kRedoOverflowing);
}

TEST(LcpWriteSpeed, RestartLimitsNeverSlowDownAndMinimumNeverSpeedsUp) {
  LcpWriteSpeeds speeds = node_speeds();
  speeds.own_restart_bytes_per_s = 5 * kMB;
  speeds.other_node_restart_bytes_per_s = 5 * kMB;
  speeds.min_bytes_per_s = 30 * kMB;
  LcpSpeedInputs inputs;
  inputs.own_restart = true;
  EXPECT_EQ(choose_lcp_write_speed(speeds, inputs).bytes_per_s, 20 * kMB);
  inputs.own_restart = false;
  inputs.other_node_restart = true;
  EXPECT_EQ(choose_lcp_write_speed(speeds, inputs).bytes_per_s, 20 * kMB);
  inputs.other_node_restart = false;
  inputs.redo_backlog = true;
  EXPECT_EQ(choose_lcp_write_speed(speeds, inputs).bytes_per_s, 20 * kMB);
}

TEST(LcpWriteSpeed, NoRedoRuleWithoutAThreshold) {
  LcpWriteSpeeds speeds = node_speeds();
  speeds.redo_raise_bytes = 0;
  LcpSpeedInputs inputs;
  inputs.redo_bytes_since_start = uint64_t{1} << 40;
  EXPECT_EQ(choose_lcp_write_speed(speeds, inputs).reason, LcpSpeedReason::kNormal);
}

TEST(LcpWriteBudget, OneSliceOfBytesPerSliceOfTime) {
  LcpWriteBudget budget;
  constexpr uint64_t kRate = 1 * kMB;  // 100,000 bytes per slice
  constexpr uint64_t kChunk = 30'000;
  uint64_t now = 5 * kLcpRateSliceNs + 1234;  // mid-slice start
  uint64_t written = 0;
  // Within the first slice: 4 chunks (0, 30k, 60k, 90k owed before each), the 5th waits.
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(budget.wait_ns(now, kRate), 0u) << i;
    budget.charge(kChunk);
    written += kChunk;
  }
  const uint64_t wait = budget.wait_ns(now, kRate);
  EXPECT_EQ(wait, 6 * kLcpRateSliceNs - now);  // the next slice's start
  // Over 10 s of slices, what was let through is the rate times the time, within one
  // slice and one chunk.
  while (now < 105 * kLcpRateSliceNs) {
    const uint64_t w = budget.wait_ns(now, kRate);
    if (w != 0) {
      now += w;
      continue;
    }
    budget.charge(kChunk);
    written += kChunk;
  }
  const uint64_t elapsed_slices = 105 - 5;
  EXPECT_GE(written, elapsed_slices * 100'000);
  EXPECT_LE(written, (elapsed_slices + 1) * 100'000 + kChunk);
}

TEST(LcpWriteBudget, ExcessIsCarriedAcrossSeveralSlices) {
  LcpWriteBudget budget;
  constexpr uint64_t kRate = 100'000;  // 10,000 bytes per slice
  ASSERT_EQ(budget.wait_ns(0, kRate), 0u);
  budget.charge(35'000);  // 3.5 slices' worth in one chunk
  // Owed 35k: paid down to 5k (< one slice) after 3 slices.
  EXPECT_EQ(budget.wait_ns(1, kRate), 3 * kLcpRateSliceNs - 1);
  EXPECT_NE(budget.wait_ns(3 * kLcpRateSliceNs - 1, kRate), 0u);
  EXPECT_EQ(budget.wait_ns(3 * kLcpRateSliceNs, kRate), 0u);
  EXPECT_EQ(budget.owed_bytes(), 5'000u);
  // A long pause pays everything (and does not overflow).
  EXPECT_EQ(budget.wait_ns(uint64_t{1} << 62, kRate), 0u);
  EXPECT_EQ(budget.owed_bytes(), 0u);
}

TEST(LcpWriteBudget, UnlimitedForgetsWhatWasOwed) {
  LcpWriteBudget budget;
  ASSERT_EQ(budget.wait_ns(0, 100'000), 0u);
  budget.charge(1'000'000);
  EXPECT_NE(budget.wait_ns(0, 100'000), 0u);
  EXPECT_EQ(budget.wait_ns(0, 0), 0u);
  EXPECT_EQ(budget.wait_ns(0, 100'000), 0u);
}

}  // namespace
}  // namespace duo::local_query
