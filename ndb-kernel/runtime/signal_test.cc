#include "ndb-kernel/runtime/signal.h"

#include <gtest/gtest.h>

#include <unordered_set>

namespace duo::kernel {
namespace {

TEST(Signal, DefaultIsEmptyAndUnsendable) {
  Signal signal;
  EXPECT_EQ(signal.id(), kNoSignal);
  EXPECT_EQ(signal.length_words(), 0u);
  EXPECT_TRUE(signal.section().empty());
  EXPECT_TRUE(signal.check_sendable().is(ErrorCode::kInvalidArgument));
}

TEST(Signal, WordsGrowAndUnsetWordsReadZero) {
  Signal signal(7, {1, 2, 3});
  EXPECT_EQ(signal.length_words(), 3u);
  EXPECT_EQ(signal.word(2), 3u);
  EXPECT_EQ(signal.word(3), 0u);  // past the length: zero, for older shorter senders
  EXPECT_EQ(signal.word(kSignalWordsMax - 1), 0u);
  signal.set_word(6, 60);
  EXPECT_EQ(signal.length_words(), 7u);
  EXPECT_EQ(signal.word(4), 0u);  // the gap stays zero
  EXPECT_EQ(signal.word(6), 60u);
  signal.set_word(0, 10);  // inside the length: the length stays
  EXPECT_EQ(signal.length_words(), 7u);
  signal.push_word(70);
  EXPECT_EQ(signal.length_words(), 8u);
  ASSERT_EQ(signal.words().size(), 8u);
  EXPECT_EQ(signal.words()[0], 10u);
  EXPECT_EQ(signal.words()[7], 70u);
}

TEST(Signal, HoldsExactlyTheMaximumWords) {
  Signal signal(1);
  for (uint32_t i = 0; i < kSignalWordsMax; ++i) signal.push_word(i * 3);
  EXPECT_EQ(signal.length_words(), kSignalWordsMax);
  EXPECT_EQ(signal.word(kSignalWordsMax - 1), (kSignalWordsMax - 1) * 3);
}

TEST(SignalDeathTest, WordPastTheInlinePayloadAborts) {
  EXPECT_DEATH(
      {
        Signal signal(1);
        signal.set_word(kSignalWordsMax, 1);
      },
      "signal word index out of range");
  EXPECT_DEATH(
      {
        Signal signal(1);
        for (uint32_t i = 0; i <= kSignalWordsMax; ++i) signal.push_word(i);
      },
      "out of range");
  EXPECT_DEATH(
      {
        const Signal signal(1);
        (void)signal.word(kSignalWordsMax);
      },
      "out of range");
}

TEST(Signal, SectionLimitIsCheckedAtSend) {
  Signal signal(5);
  signal.set_section(std::vector<uint8_t>(kSectionBytesMax, 0xab));
  EXPECT_TRUE(signal.check_sendable().ok());
  signal.mutable_section().push_back(1);
  const Status status = signal.check_sendable();
  EXPECT_TRUE(status.is(ErrorCode::kInvalidArgument));
  EXPECT_NE(status.message().find("65537"), std::string::npos) << status.message();
}

TEST(Signal, MoveAndCloneCarryEverything) {
  Signal original(9, {4, 5});
  original.set_sender({1, 2, 3});
  original.set_receiver({4, 5, 6});
  original.set_section({1, 2, 3});
  Signal copy = original.clone();
  EXPECT_EQ(copy.id(), 9);
  EXPECT_EQ(copy.sender(), (BlockAddress{1, 2, 3}));
  EXPECT_EQ(copy.receiver(), (BlockAddress{4, 5, 6}));
  EXPECT_EQ(copy.length_words(), 2u);
  EXPECT_EQ(copy.word(1), 5u);
  EXPECT_EQ(copy.section(), (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(original.section().size(), 3u);  // a clone leaves the original intact

  Signal moved = std::move(copy);
  EXPECT_EQ(moved.section(), (std::vector<uint8_t>{1, 2, 3}));
  std::vector<uint8_t> taken = moved.take_section();
  EXPECT_EQ(taken.size(), 3u);
  EXPECT_TRUE(moved.section().empty());
}

TEST(BlockAddress, OrderingHashAndText) {
  const BlockAddress a{1, 2, 3};
  const BlockAddress b{1, 2, 4};
  EXPECT_LT(a, b);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.to_string(), "n1.b2.i3");
  EXPECT_EQ(a.local_key(), (2u << 16) | 3u);
  std::unordered_set<BlockAddress> set{a, b, a};
  EXPECT_EQ(set.size(), 2u);
}

TEST(SignalNames, RegistryNamesSignalsInLogs) {
  EXPECT_EQ(signal_name(4242), "GSN4242");
  ASSERT_TRUE(register_signal_name(4242, "TEST_NAMED").ok());
  EXPECT_TRUE(register_signal_name(4242, "TEST_NAMED").ok());  // idempotent
  EXPECT_TRUE(register_signal_name(4242, "OTHER").is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(register_signal_name(kNoSignal, "ZERO").is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(register_signal_name(4243, "").is(ErrorCode::kInvalidArgument));
  EXPECT_EQ(signal_name(4242), "TEST_NAMED");

  Signal signal(4242, {7, 0});
  signal.set_sender({1, 1, 0});
  signal.set_receiver({2, 5, 1});
  signal.set_section({1, 2});
  EXPECT_EQ(signal.describe(), "TEST_NAMED n1.b1.i0->n2.b5.i1 [7 0] +2B");
}

}  // namespace
}  // namespace duo::kernel
