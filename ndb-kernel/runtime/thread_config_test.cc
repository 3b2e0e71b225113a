#include "ndb-kernel/runtime/thread_config.h"

#include <gtest/gtest.h>

namespace duo::kernel {
namespace {

ThreadConfig parsed(std::string_view text) {
  Result<ThreadConfig> config = parse_thread_config(text);
  EXPECT_TRUE(config.ok()) << text << ": " << config.status().to_string();
  return config.ok() ? *config : ThreadConfig{};
}

std::string refusal(std::string_view text) {
  Result<ThreadConfig> config = parse_thread_config(text);
  EXPECT_FALSE(config.ok()) << text;
  EXPECT_TRUE(config.status().is(ErrorCode::kConfigError)) << text;
  return config.ok() ? "" : config.status().message();
}

TEST(ThreadConfig, NamedTypesAndNdbDefaultsForTheRest) {
  const ThreadConfig config = parsed("ldm={count=4},tc,send={count=1}");
  EXPECT_EQ(config.layout.ldm_threads, 4u);
  EXPECT_EQ(config.layout.tc_threads, 1u);
  EXPECT_EQ(config.layout.send_threads, 1u);
  EXPECT_EQ(config.layout.recv_threads, 1u);  // default
  EXPECT_FALSE(config.layout.main_runs_recv);  // a main thread by default
  EXPECT_EQ(config.layout.thread_names(),
            (std::vector<std::string>{"main", "recv0", "send0", "tc0", "ldm0", "ldm1", "ldm2",
                                      "ldm3"}));
  EXPECT_TRUE(config.ignored.empty());
}

TEST(ThreadConfig, ReceiveThreadOnlyLayout) {
  // NDB 8.0.23+: without main and rep threads the receive thread does their work, and
  // with ldm={count=0} the local query work too.
  const ThreadConfig config = parsed(" main={count=0}, rep={count=0}, recv={count=1}, ldm={count=0} ");
  EXPECT_TRUE(config.layout.main_runs_recv);
  EXPECT_EQ(config.layout.ldm_threads, 0u);
  EXPECT_EQ(config.layout.thread_count(), 1u);
  EXPECT_EQ(config.layout, automatic_thread_layout(2));
}

TEST(ThreadConfig, CpuBindingsFollowTheLayoutsThreadNumbering) {
  const ThreadConfig config =
      parsed("main={cpubind=0},recv={cpubind=1},ldm={count=3,cpubind=2,3-4,spintime=10},"
             "io={cpuset=5-6}");
  ASSERT_EQ(config.cpus.size(), config.layout.thread_count());
  EXPECT_EQ(config.cpus[config.layout.main_thread()], std::vector<uint32_t>{0});
  EXPECT_EQ(config.cpus[config.layout.recv_thread(0)], std::vector<uint32_t>{1});
  EXPECT_EQ(config.cpus[config.layout.ldm_thread(0)], std::vector<uint32_t>{2});
  EXPECT_EQ(config.cpus[config.layout.ldm_thread(2)], std::vector<uint32_t>{4});
  EXPECT_EQ(config.ignored, (std::vector<std::string>{"spintime of ldm", "CPUs of io"}));

  const ThreadConfig set = parsed("ldm={count=2,cpuset=1-3}");
  EXPECT_EQ(set.cpus[set.layout.ldm_thread(1)], (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_TRUE(set.cpus[set.layout.main_thread()].empty());
}

TEST(ThreadConfig, RefusesWhatItCannotRun) {
  EXPECT_NE(refusal("ldm={count=2},bogus").find("unknown thread type 'bogus'"), std::string::npos);
  EXPECT_NE(refusal("query={count=2}").find("not supported"), std::string::npos);
  EXPECT_NE(refusal("tc={count=2}").find("count of tc must be 0..1"), std::string::npos);
  EXPECT_NE(refusal("ldm={count=65}").find("count of ldm"), std::string::npos);
  EXPECT_NE(refusal("ldm={count=x}").find("bad count"), std::string::npos);
  EXPECT_NE(refusal("ldm={count=2,color=red}").find("unknown property 'color'"),
            std::string::npos);
  EXPECT_NE(refusal("ldm={count=2,cpubind=1}").find("lists 1 CPUs for 2 threads"),
            std::string::npos);
  EXPECT_NE(refusal("ldm={count=2,cpubind=1,2,cpuset=3}").find("both"), std::string::npos);
  EXPECT_NE(refusal("ldm={count=2").find("unbalanced"), std::string::npos);
  EXPECT_NE(refusal("ldm=2").find("expected ldm={...}"), std::string::npos);
  EXPECT_NE(refusal("ldm,ldm").find("given twice"), std::string::npos);
  EXPECT_NE(refusal("main={count=0},rep={count=0},recv={count=2}").find("exactly one recv"), std::string::npos);
  // With a rep thread left, there is a main thread: two recv threads are fine then.
  EXPECT_FALSE(parsed("main={count=0},recv={count=2}").layout.main_runs_recv);
  EXPECT_NE(refusal("ldm={cpubind=3-1}").find("bad CPU list item"), std::string::npos);
}

}  // namespace
}  // namespace duo::kernel
