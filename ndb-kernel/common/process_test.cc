#include "ndb-kernel/common/process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace duo {
namespace {

std::vector<std::pair<std::string, std::string>> walk(std::vector<std::string> words) {
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  std::vector<std::pair<std::string, std::string>> out;
  for (ArgCursor args(static_cast<int>(argv.size()), argv.data()); args.next();) {
    std::string value;
    if (args.name().rfind("-", 0) == 0 && args.take_value(&value)) out.emplace_back(args.name(), value);
    else out.emplace_back(args.name(), "");
  }
  return out;
}

TEST(ArgCursor, SplitsInlineAndSeparateValues) {
  auto got = walk({"prog", "--config-file=/a/b=c", "-c", "host:1186", "show", "--port"});
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], std::make_pair(std::string("--config-file"), std::string("/a/b=c")));
  EXPECT_EQ(got[1], std::make_pair(std::string("-c"), std::string("host:1186")));
  EXPECT_EQ(got[2], std::make_pair(std::string("show"), std::string("")));
  EXPECT_EQ(got[3], std::make_pair(std::string("--port"), std::string("")));  // no value left
}

TEST(ArgCursor, TakesCountsAndRefusesWhatIsNotOne) {
  std::vector<std::string> words{"prog", "--rows=42", "--batch", "7", "--seed=-1", "--x=1e3",
                                 "--y="};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  ArgCursor args(static_cast<int>(argv.size()), argv.data());
  int64_t value = -5;
  ASSERT_TRUE(args.next());
  EXPECT_TRUE(args.take_count(&value));
  EXPECT_EQ(value, 42);
  ASSERT_TRUE(args.next());
  EXPECT_TRUE(args.take_count(&value));
  EXPECT_EQ(value, 7);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(args.next());
    EXPECT_FALSE(args.take_count(&value)) << args.name();
  }
  EXPECT_EQ(value, 7);
  EXPECT_FALSE(args.next());
}

TEST(PidFile, SecondLockIsRefusedWithTheHolderNamed) {
  char path[] = "/tmp/duo_pidfile_XXXXXX";
  const int tmp = ::mkstemp(path);
  ASSERT_GE(tmp, 0);
  ::close(tmp);
  Result<int> first = lock_pid_file(path, "another test holds it");
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  write_pid(*first);
  Result<int> second = lock_pid_file(path, "another test holds it");
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("another test holds it"), std::string::npos);
  FILE* f = std::fopen(path, "r");
  ASSERT_NE(f, nullptr);
  long pid = 0;
  ASSERT_EQ(std::fscanf(f, "%ld", &pid), 1);
  std::fclose(f);
  EXPECT_EQ(pid, static_cast<long>(::getpid()));
  ::close(*first);
  ::unlink(path);
}

}  // namespace
}  // namespace duo
