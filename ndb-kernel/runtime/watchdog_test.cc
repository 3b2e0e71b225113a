// Watchdog (watchdog.h) over hand-made samples on a virtual clock.
#include "ndb-kernel/runtime/watchdog.h"

#include <gtest/gtest.h>

namespace duo::kernel {
namespace {

constexpr uint64_t kMs = kNanosPerMilli;
constexpr SignalId kSomeSignal = 4242;

ThreadActivity running(uint64_t handlers_started, SignalId signal = kSomeSignal) {
  ThreadActivity activity;
  activity.thread_name = "main";
  activity.handlers_started = handlers_started;
  activity.running_signal = signal;
  activity.running_block = 7;
  return activity;
}

WatchdogLimits limits() {
  return WatchdogLimits{.check_interval_ms = 100,
                        .report_after_ms = 1000,
                        .stop_after_ms = 3000,
                        .stop_after_while_starting_ms = 10'000,
                        .stall_after_ms = 1000};
}

// Samples every 100 ms from `from_ms` to `to_ms` with `activity`; the findings.
std::vector<WatchdogFinding> sample(Watchdog& dog, uint64_t from_ms, uint64_t to_ms,
                                    const ThreadActivity& activity, bool starting = false) {
  std::vector<WatchdogFinding> all;
  for (uint64_t t = from_ms; t <= to_ms; t += 100) {
    for (WatchdogFinding& f : dog.observe(t * kMs, {activity}, starting)) all.push_back(f);
  }
  return all;
}

TEST(WatchdogTest, BusyThreadThatMakesProgressIsNeverReported) {
  Watchdog dog(limits());
  for (uint64_t t = 100; t <= 20'000; t += 100) {
    EXPECT_TRUE(dog.observe(t * kMs, {running(t)}, false).empty()) << t;
  }
}

TEST(WatchdogTest, IdleThreadIsNeverReported) {
  Watchdog dog(limits());
  EXPECT_TRUE(sample(dog, 100, 20'000, running(5, kNoSignal)).empty());
}

TEST(WatchdogTest, StuckHandlerIsReportedOnceThenStopsTheNode) {
  Watchdog dog(limits());
  // Stuck from the sample at 100 ms on: reported at 1100 ms (1000 ms), stop from 3100.
  std::vector<WatchdogFinding> found = sample(dog, 100, 1000, running(9));
  EXPECT_TRUE(found.empty());
  found = sample(dog, 1100, 1100, running(9));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].stop);
  EXPECT_EQ(found[0].kind, WatchdogFinding::Kind::kThreadStuck);
  EXPECT_EQ(found[0].duration_ms, 1000u);
  EXPECT_EQ(found[0].block, 7);
  EXPECT_EQ(found[0].signal, kSomeSignal);
  EXPECT_TRUE(sample(dog, 1200, 3000, running(9)).empty()) << "reported once only";
  found = sample(dog, 3100, 3100, running(9));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(found[0].stop);
  EXPECT_NE(found[0].describe().find("stopping the node"), std::string::npos);
}

TEST(WatchdogTest, HandlerThatEndsResetsTheCount) {
  Watchdog dog(limits());
  EXPECT_TRUE(sample(dog, 100, 900, running(9)).empty());
  // It ended and a new one started: counted afresh (reported 1000 ms after 1000).
  EXPECT_TRUE(sample(dog, 1000, 1900, running(10)).empty());
  EXPECT_EQ(sample(dog, 2000, 2000, running(10)).size(), 1u);
}

TEST(WatchdogTest, StartingNodeHasTheLongerStopLimit) {
  Watchdog dog(limits());
  std::vector<WatchdogFinding> found = sample(dog, 100, 9000, running(3), /*starting=*/true);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].stop);
  found = sample(dog, 9100, 10'100, running(3), /*starting=*/true);
  ASSERT_FALSE(found.empty());
  EXPECT_TRUE(found.back().stop);
}

TEST(WatchdogTest, ProcessStallIsReportedAndNotCountedAsAStuckHandler) {
  Watchdog dog(limits());
  EXPECT_TRUE(sample(dog, 100, 500, running(4)).empty());
  // Frozen for 10 s with the handler running: a stall, not 10 s of stuck handler.
  std::vector<WatchdogFinding> found = dog.observe(10'500 * kMs, {running(4)}, false);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, WatchdogFinding::Kind::kProcessStalled);
  EXPECT_FALSE(found[0].stop);
  EXPECT_EQ(found[0].duration_ms, 10'000u);
  // Still the same handler afterwards: measured from the end of the stall.
  EXPECT_TRUE(sample(dog, 10'600, 11'400, running(4)).empty());
  EXPECT_EQ(sample(dog, 11'500, 11'500, running(4)).size(), 1u);
}

}  // namespace
}  // namespace duo::kernel
