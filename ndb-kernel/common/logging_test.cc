#include "ndb-kernel/common/logging.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "ndb-kernel/common/clock.h"

namespace duo {
namespace {

// Routes timestamps to a ManualClock for the test and restores the previous clock.
class LoggingTest : public ::testing::Test {
 protected:
  void SetUp() override { previous_clock_ = set_log_clock(&clock_); }
  void TearDown() override { set_log_clock(previous_clock_); }

  ManualClock clock_;
  const Clock* previous_clock_ = nullptr;
};

TEST_F(LoggingTest, StreamStyleLineHasTimestampLevelAndComponent) {
  ScopedLogCapture capture;
  DUO_LOG(INFO, "mgmd") << "node " << 3 << " connected";
  clock_.advance_ns(1500123456);  // 1.500123456 s: microseconds are shown, truncated
  DUO_LOG(ERROR, "datad") << "redo part " << 2 << " full";
  const std::vector<std::string> lines = capture.sink().lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "2020-01-01T00:00:00.000000Z INFO [mgmd] node 3 connected");
  EXPECT_EQ(lines[1], "2020-01-01T00:00:01.500123Z ERROR [datad] redo part 2 full");
  const auto entries = capture.sink().entries();
  EXPECT_EQ(entries[1].level, LogLevel::kError);
  EXPECT_EQ(entries[1].component, "datad");
  EXPECT_EQ(entries[1].message, "redo part 2 full");
}

TEST_F(LoggingTest, PrintfStyle) {
  ScopedLogCapture capture;
  DUO_LOGF(WARNING, "sqld", "connection %u from %s refused", 17u, "10.0.0.1");
  ASSERT_EQ(capture.sink().size(), 1u);
  EXPECT_EQ(capture.sink().lines()[0],
            "2020-01-01T00:00:00.000000Z WARNING [sqld] connection 17 from 10.0.0.1 refused");
}

TEST_F(LoggingTest, LongPrintfMessagesAreKeptUpToTheLimit) {
  ScopedLogCapture capture;
  const std::string medium(2000, 'm');
  DUO_LOGF(INFO, "test", "%s", medium.c_str());
  const std::string huge(100 * 1024, 'h');
  DUO_LOGF(INFO, "test", "%s", huge.c_str());
  const auto entries = capture.sink().entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].message, medium);
  EXPECT_EQ(entries[1].message.size(), 64u * 1024 + std::string("...(truncated)").size());
  EXPECT_TRUE(entries[1].message.ends_with("...(truncated)"));
}

TEST_F(LoggingTest, LevelFilterSkipsDisabledLevelsWithoutEvaluatingArguments) {
  ScopedLogCapture capture(LogLevel::kWarning);
  int evaluated = 0;
  auto expensive = [&evaluated] {
    ++evaluated;
    return 42;
  };
  DUO_LOG(DEBUG, "t") << expensive();
  DUO_LOG(INFO, "t") << expensive();
  DUO_LOGF(INFO, "t", "%d", expensive());
  EXPECT_EQ(evaluated, 0);
  DUO_LOG(WARNING, "t") << expensive();
  DUO_LOG(ERROR, "t") << expensive();
  EXPECT_EQ(evaluated, 2);
  EXPECT_EQ(capture.sink().size(), 2u);
  EXPECT_FALSE(log_enabled(LogLevel::kInfo));
  EXPECT_TRUE(log_enabled(LogLevel::kError));
}

TEST_F(LoggingTest, ScopedCaptureRestoresLevel) {
  const LogLevel before = log_level();
  {
    ScopedLogCapture capture(LogLevel::kDebug);
    EXPECT_EQ(log_level(), LogLevel::kDebug);
    DUO_LOG(DEBUG, "t") << "visible";
    EXPECT_TRUE(capture.sink().contains("DEBUG [t] visible"));
  }
  EXPECT_EQ(log_level(), before);
}

TEST_F(LoggingTest, MacroIsASingleStatement) {
  ScopedLogCapture capture;
  bool condition = false;
  // Would not compile, or would attach the else to the macro's if, if the macro were
  // not one statement.
  if (condition)
    DUO_LOG(INFO, "t") << "then";
  else
    DUO_LOG(INFO, "t") << "else";
  ASSERT_EQ(capture.sink().size(), 1u);
  EXPECT_EQ(capture.sink().entries()[0].message, "else");
}

TEST_F(LoggingTest, DefaultSinkWritesToStderr) {
  ScopedLogCapture capture;  // to restore the sink and level afterwards
  set_log_sink(nullptr);     // back to the default stderr sink
  testing::internal::CaptureStderr();
  DUO_LOG(INFO, "mgmd") << "to stderr";
  const std::string written = testing::internal::GetCapturedStderr();
  EXPECT_EQ(written, "2020-01-01T00:00:00.000000Z INFO [mgmd] to stderr\n");
  EXPECT_EQ(capture.sink().size(), 0u);
}

TEST_F(LoggingTest, ConcurrentLoggingKeepsLinesWhole) {
  ScopedLogCapture capture;
  constexpr int kThreads = 4;
  constexpr int kLinesPerThread = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kLinesPerThread; ++i) {
        DUO_LOG(INFO, "thread") << "t=" << t << " i=" << i << " end";
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const auto entries = capture.sink().entries();
  ASSERT_EQ(entries.size(), static_cast<size_t>(kThreads * kLinesPerThread));
  std::vector<int> next_i(kThreads, 0);
  for (const auto& entry : entries) {
    int t = -1, i = -1;
    ASSERT_EQ(std::sscanf(entry.message.c_str(), "t=%d i=%d end", &t, &i), 2) << entry.message;
    ASSERT_GE(t, 0);
    ASSERT_LT(t, kThreads);
    EXPECT_EQ(i, next_i[t]++);  // each thread's lines arrive in its own order
  }
}

TEST(LogFormat, Levels) {
  EXPECT_STREQ(log_level_name(LogLevel::kError), "ERROR");
  EXPECT_STREQ(log_level_name(LogLevel::kWarning), "WARNING");
  EXPECT_STREQ(log_level_name(LogLevel::kInfo), "INFO");
  EXPECT_STREQ(log_level_name(LogLevel::kDebug), "DEBUG");
  EXPECT_EQ(*parse_log_level("error"), LogLevel::kError);
  EXPECT_EQ(*parse_log_level("WARN"), LogLevel::kWarning);
  EXPECT_EQ(*parse_log_level("Warning"), LogLevel::kWarning);
  EXPECT_EQ(*parse_log_level("info"), LogLevel::kInfo);
  EXPECT_EQ(*parse_log_level("DEBUG"), LogLevel::kDebug);
  Result<LogLevel> bad = parse_log_level("verbose");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("verbose"), std::string::npos);
}

TEST(LogFormat, TimestampFormatting) {
  // 2024-02-29T23:59:59.999999Z: a leap day, just before midnight.
  const int64_t leap_ns = int64_t{1709251199} * 1000000000 + 999999999;
  EXPECT_EQ(format_log_line(LogLevel::kInfo, leap_ns, "c", "m"),
            "2024-02-29T23:59:59.999999Z INFO [c] m");
  EXPECT_EQ(format_log_line(LogLevel::kDebug, -1000, "c", ""),
            "1969-12-31T23:59:59.999999Z DEBUG [c] ");
}

}  // namespace
}  // namespace duo
