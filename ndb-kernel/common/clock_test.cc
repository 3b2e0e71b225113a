#include "ndb-kernel/common/clock.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace duo {
namespace {

TEST(RealClock, MonotonicAndWallTimeIsPlausible) {
  Clock& clock = real_clock();
  uint64_t previous_ns = clock.now_ns();
  for (int i = 0; i < 1000; ++i) {
    const uint64_t now_ns = clock.now_ns();
    EXPECT_GE(now_ns, previous_ns);
    previous_ns = now_ns;
  }
  // Later than 2020-01-01: catches a wall clock returning a duration instead of a date.
  EXPECT_GT(clock.wall_time_ns(), ManualClock::kDefaultWallStartNs);
  EXPECT_EQ(&real_clock(), &real_clock());
}

TEST(ManualClock, MovesOnlyWhenTold) {
  ManualClock clock(1000);
  EXPECT_EQ(clock.now_ns(), 1000u);
  EXPECT_EQ(clock.now_ns(), 1000u);
  EXPECT_EQ(clock.wall_time_ns(), ManualClock::kDefaultWallStartNs);
  clock.advance_ns(500);
  EXPECT_EQ(clock.now_ns(), 1500u);
  clock.advance_ms(2);
  EXPECT_EQ(clock.now_ns(), 1500u + 2 * kNanosPerMilli);
  EXPECT_EQ(clock.now_ms(), 2u);
  clock.set_now_ns(10 * kNanosPerSecond);
  EXPECT_EQ(clock.now_ns(), 10 * kNanosPerSecond);
  // Wall time moves in step with monotonic time.
  EXPECT_EQ(clock.wall_time_ns(),
            ManualClock::kDefaultWallStartNs + static_cast<int64_t>(10 * kNanosPerSecond - 1000));
  clock.set_now_ns(10 * kNanosPerSecond);  // standing still is allowed
}

TEST(ManualClockDeathTest, SetBackwardsAborts) {
  EXPECT_DEATH(
      {
        ManualClock clock(100);
        clock.set_now_ns(99);
      },
      "time moved backwards");
}

TEST(PolledTimerService, RunsDueTimersInDeadlineOrder) {
  ManualClock clock;
  PolledTimerService timers(clock);
  std::vector<std::string> fired;
  timers.schedule_after_ms(30, [&] { fired.push_back("c"); });
  timers.schedule_after_ms(10, [&] { fired.push_back("a"); });
  timers.schedule_after_ms(20, [&] { fired.push_back("b"); });
  EXPECT_EQ(timers.pending_count(), 3u);
  EXPECT_EQ(timers.next_deadline_ns(), 10 * kNanosPerMilli);

  EXPECT_EQ(timers.run_due(), 0u);  // nothing due at t=0
  clock.advance_ms(9);
  EXPECT_EQ(timers.run_due(), 0u);
  clock.advance_ms(1);
  EXPECT_EQ(timers.run_due(), 1u);  // deadline == now is due
  EXPECT_EQ(fired, (std::vector<std::string>{"a"}));
  clock.advance_ms(100);
  EXPECT_EQ(timers.run_due(), 2u);
  EXPECT_EQ(fired, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(timers.pending_count(), 0u);
  EXPECT_FALSE(timers.next_deadline_ns().has_value());
}

TEST(PolledTimerService, EqualDeadlinesRunInScheduleOrder) {
  ManualClock clock;
  PolledTimerService timers(clock);
  std::vector<int> fired;
  for (int i = 0; i < 10; ++i) timers.schedule_after_ns(5, [&fired, i] { fired.push_back(i); });
  clock.advance_ns(5);
  EXPECT_EQ(timers.run_due(), 10u);
  EXPECT_EQ(fired, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(PolledTimerService, CancelPreventsRunAndReportsState) {
  ManualClock clock;
  PolledTimerService timers(clock);
  int fired = 0;
  const TimerId kept = timers.schedule_after_ns(10, [&] { ++fired; });
  const TimerId cancelled = timers.schedule_after_ns(10, [&] { fired += 100; });
  EXPECT_NE(kept, kNoTimer);
  EXPECT_NE(kept, cancelled);
  EXPECT_TRUE(timers.cancel(cancelled));
  EXPECT_FALSE(timers.cancel(cancelled));  // already cancelled
  EXPECT_FALSE(timers.cancel(kNoTimer));
  EXPECT_FALSE(timers.cancel(12345));  // never existed
  clock.advance_ns(10);
  EXPECT_EQ(timers.run_due(), 1u);
  EXPECT_EQ(fired, 1);
  EXPECT_FALSE(timers.cancel(kept));  // already ran
}

TEST(PolledTimerService, CallbackMayCancelALaterTimerOfTheSameBatch) {
  ManualClock clock;
  PolledTimerService timers(clock);
  std::vector<std::string> fired;
  TimerId second = kNoTimer;
  timers.schedule_after_ns(1, [&] {
    fired.push_back("first");
    EXPECT_TRUE(timers.cancel(second));
  });
  second = timers.schedule_after_ns(2, [&] { fired.push_back("second"); });
  clock.advance_ns(5);
  EXPECT_EQ(timers.run_due(), 1u);
  EXPECT_EQ(fired, (std::vector<std::string>{"first"}));
}

TEST(PolledTimerService, TimersScheduledByCallbacksWaitForTheNextCall) {
  ManualClock clock;
  PolledTimerService timers(clock);
  int runs = 0;
  // A zero-delay timer that reschedules itself must not spin inside one run_due().
  std::function<void()> again = [&] {
    ++runs;
    timers.schedule_after_ns(0, again);
  };
  timers.schedule_after_ns(0, again);
  EXPECT_EQ(timers.run_due(), 1u);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(timers.run_due(), 1u);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(timers.pending_count(), 1u);
}

TEST(PolledTimerService, HugeDelaySaturatesInsteadOfWrapping) {
  ManualClock clock(1000);
  PolledTimerService timers(clock);
  int fired = 0;
  timers.schedule_after_ns(UINT64_MAX, [&] { ++fired; });
  timers.schedule_after_ms(UINT64_MAX / 2, [&] { ++fired; });
  EXPECT_EQ(timers.next_deadline_ns(), UINT64_MAX);
  clock.advance_ns(kNanosPerSecond);
  EXPECT_EQ(timers.run_due(), 0u);
  EXPECT_EQ(fired, 0);
}

TEST(PolledTimerService, AbsoluteDeadlinesAndRealClock) {
  PolledTimerService timers(real_clock());
  int fired = 0;
  timers.schedule_at_ns(0, [&] { ++fired; });  // already in the past
  timers.schedule_after_ns(0, [&] { ++fired; });
  EXPECT_EQ(timers.run_due(), 2u);
  EXPECT_EQ(fired, 2);
}

TEST(PolledTimerService, ConcurrentScheduleAndCancel) {
  ManualClock clock;
  PolledTimerService timers(clock);
  std::atomic<int> fired{0};
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        const TimerId id = timers.schedule_after_ns(static_cast<uint64_t>(i % 7), [&] { ++fired; });
        if (i % 2 == 0) {
          EXPECT_TRUE(timers.cancel(id));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  clock.advance_ns(10);
  EXPECT_EQ(timers.run_due(), static_cast<size_t>(kThreads * kPerThread / 2));
  EXPECT_EQ(fired.load(), kThreads * kPerThread / 2);
}

}  // namespace
}  // namespace duo
