#include "ndb-kernel/runtime/thread_layout.h"

#include <gtest/gtest.h>

#include <set>

namespace duo::kernel {
namespace {

TEST(AutomaticThreadLayout, SmallMachinesRunEverythingOnTheReceiveThread) {
  // Up to 4 cores: one thread receives, coordinates and executes (no hand-off).
  for (uint32_t cores : {0u, 1u, 2u, 3u, 4u}) {
    const ThreadLayout layout = automatic_thread_layout(cores);
    EXPECT_TRUE(layout.main_runs_recv) << cores;
    EXPECT_EQ(layout.ldm_threads, 0u) << cores;
    EXPECT_EQ(layout.thread_count(), 1u) << cores;
    EXPECT_EQ(layout.tc_thread(), layout.recv_thread(0));
    EXPECT_EQ(layout.ldm_thread_of_part(3), layout.recv_thread(0));
    EXPECT_EQ(layout.thread_names(), std::vector<std::string>{"main+recv+ldm"});
  }
}

TEST(AutomaticThreadLayout, MediumAndLargeMachines) {
  const ThreadLayout eight = automatic_thread_layout(8);
  EXPECT_FALSE(eight.main_runs_recv);
  EXPECT_EQ(eight.recv_threads, 1u);
  EXPECT_EQ(eight.send_threads, 0u);
  EXPECT_EQ(eight.ldm_threads, 6u);
  EXPECT_EQ(eight.describe(), "main, 1 recv, 6 ldm");
  // The coordinator runs on the receive thread: one hand-off less per request.
  EXPECT_EQ(eight.tc_thread(), eight.recv_thread(0));
  EXPECT_EQ(eight.ldm_thread_of_part(7), eight.ldm_thread(1));

  const ThreadLayout sixteen = automatic_thread_layout(16);
  EXPECT_EQ(sixteen.recv_threads, 2u);
  EXPECT_EQ(sixteen.send_threads, 1u);
  EXPECT_EQ(sixteen.ldm_threads, 12u);

  const ThreadLayout sixty_four = automatic_thread_layout(64);
  EXPECT_EQ(sixty_four.recv_threads, 8u);
  EXPECT_EQ(sixty_four.send_threads, 4u);
  EXPECT_EQ(sixty_four.ldm_threads, 51u);

  const ThreadLayout huge = automatic_thread_layout(512);
  EXPECT_EQ(huge.ldm_threads, kLdmThreadsMax);
  EXPECT_EQ(huge.recv_threads, kRecvThreadsMax);
  EXPECT_EQ(huge.send_threads, kSendThreadsMax);
}

TEST(AutomaticThreadLayout, InvariantsForEveryCoreCount) {
  for (uint32_t cores = 0; cores <= 1024; ++cores) {
    const ThreadLayout layout = automatic_thread_layout(cores);
    SCOPED_TRACE(cores);
    EXPECT_EQ(layout.validate(), "");
    // Never more threads than cores.
    EXPECT_LE(layout.thread_count(), std::max(cores, 1u));
    if (cores <= 4) {
      EXPECT_EQ(layout.thread_count(), 1u);
      continue;
    }
    // LDM threads hold at least half the threads from 5 cores on: they do the work.
    EXPECT_GE(2 * layout.ldm_threads, layout.thread_count());
    // Thread indexes are 0..count-1, each used once, names in the same order.
    std::set<uint32_t> indexes{layout.main_thread()};
    for (uint32_t i = layout.main_runs_recv ? 1 : 0; i < layout.recv_threads; ++i) {
      indexes.insert(layout.recv_thread(i));
    }
    for (uint32_t i = 0; i < layout.send_threads; ++i) indexes.insert(layout.send_thread(i));
    for (uint32_t i = 0; i < layout.ldm_threads; ++i) indexes.insert(layout.ldm_thread(i));
    EXPECT_EQ(indexes.size(), layout.thread_count());
    EXPECT_EQ(*indexes.rbegin(), layout.thread_count() - 1);
    const auto names = layout.thread_names();
    ASSERT_EQ(names.size(), layout.thread_count());
    EXPECT_EQ(names[layout.ldm_thread(0)], "ldm0");
  }
}

TEST(ThreadLayout, ValidateRejectsInconsistentLayouts) {
  EXPECT_EQ(ThreadLayout{.ldm_threads = 0}.validate(), "");
  EXPECT_NE(ThreadLayout{.ldm_threads = kLdmThreadsMax + 1}.validate(), "");
  EXPECT_NE((ThreadLayout{.ldm_threads = 1, .tc_threads = 2}.validate()), "");
  EXPECT_NE((ThreadLayout{.ldm_threads = 1, .recv_threads = 0}.validate()), "");
  EXPECT_NE((ThreadLayout{.ldm_threads = 1, .recv_threads = 2, .main_runs_recv = true}.validate()),
            "");
  EXPECT_EQ(
      (ThreadLayout{.ldm_threads = 2, .recv_threads = 2, .send_threads = 1, .main_runs_recv = false}
           .validate()),
      "");
  const ThreadLayout layout{
      .ldm_threads = 2, .recv_threads = 2, .send_threads = 1, .main_runs_recv = false};
  EXPECT_EQ(layout.thread_names(),
            (std::vector<std::string>{"main", "recv0", "recv1", "send0", "ldm0", "ldm1"}));
  EXPECT_EQ(layout.recv_thread(1), 2u);
  EXPECT_EQ(layout.send_thread(0), 3u);
  EXPECT_EQ(layout.ldm_thread(1), 5u);
  EXPECT_EQ(layout.tc_thread(), layout.recv_thread(0));

  const ThreadLayout with_tc{.ldm_threads = 2, .recv_threads = 1, .main_runs_recv = false,
                             .tc_threads = 1};
  EXPECT_EQ(with_tc.thread_names(),
            (std::vector<std::string>{"main", "recv0", "tc0", "ldm0", "ldm1"}));
  EXPECT_EQ(with_tc.tc_thread(), 2u);
  EXPECT_EQ(with_tc.ldm_thread(0), 3u);
}

TEST(ThreadLayout, AvailableCoresIsAtLeastOne) {
  EXPECT_GE(available_core_count(), 1u);
}

}  // namespace
}  // namespace duo::kernel
