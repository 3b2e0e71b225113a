// Block dispatch and the block-side send path, against a recording BlockContext.
#include "ndb-kernel/runtime/block.h"

#include <gtest/gtest.h>

#include <vector>

#include "ndb-kernel/common/logging.h"

namespace duo::kernel {
namespace {

constexpr SignalId kHello = 11;
constexpr SignalId kBye = 12;

// Records what a block sends; answers with `next_status`.
class RecordingContext final : public BlockContext {
 public:
  struct Sent {
    Signal signal;
    bool delayed;
    uint64_t delay_ms;
  };
  Status send(Signal signal) override {
    sent.push_back(Sent{std::move(signal), false, 0});
    return next_status;
  }
  Status send_delayed(Signal signal, uint64_t delay_ms) override {
    sent.push_back(Sent{std::move(signal), true, delay_ms});
    return next_status;
  }
  const Clock& clock() const override { return clock_; }
  Random& random() override { return random_; }
  uint16_t node_id() const override { return 3; }
  void set_remote_signal_filter(RemoteSignalFilter* filter) override { remote_filter = filter; }

  std::vector<Sent> sent;
  RemoteSignalFilter* remote_filter = nullptr;
  Status next_status;
  ManualClock clock_{42};
  SeededRandom random_{7};
};

class Greeter final : public Block {
 public:
  Greeter() : Block("greeter", 20, 2) {
    on(kHello, &Greeter::on_hello);
    on(kBye, &Greeter::on_bye);
  }
  using Block::clock;
  using Block::local_address;
  using Block::random;
  using Block::send_delayed;

  int hellos = 0;
  int byes = 0;
  std::vector<uint8_t> kept_section;
  Status last_send_status;

 private:
  void on_hello(Signal& signal) {
    ++hellos;
    kept_section = signal.take_section();
    last_send_status = send(signal.sender(), Signal(kBye, {signal.word(0) + 1}));
  }
  void on_bye(Signal&) { ++byes; }
};

TEST(Block, AddressAndTagComeFromAttach) {
  Greeter block;
  EXPECT_FALSE(block.attached());
  EXPECT_EQ(block.address(), (BlockAddress{0, 20, 2}));
  RecordingContext context;
  block.attach(context);
  EXPECT_TRUE(block.attached());
  EXPECT_EQ(block.address(), (BlockAddress{3, 20, 2}));
  EXPECT_EQ(block.local_address(7, 1), (BlockAddress{3, 7, 1}));
  EXPECT_EQ(block.name(), "greeter");
  EXPECT_EQ(block.clock().now_ns(), 42u);
  EXPECT_EQ(&block.random(), &context.random_);
}

TEST(Block, DispatchesByIdAndSendsWithItsAddress) {
  Greeter block;
  RecordingContext context;
  block.attach(context);
  Signal hello(kHello, {41});
  hello.set_sender({9, 1, 0});
  hello.set_receiver(block.address());
  hello.set_section({1, 2, 3});
  block.deliver(hello);
  EXPECT_EQ(block.hellos, 1);
  EXPECT_EQ(block.kept_section, (std::vector<uint8_t>{1, 2, 3}));
  ASSERT_EQ(context.sent.size(), 1u);
  const Signal& reply = context.sent[0].signal;
  EXPECT_EQ(reply.id(), kBye);
  EXPECT_EQ(reply.word(0), 42u);
  EXPECT_EQ(reply.sender(), (BlockAddress{3, 20, 2}));
  EXPECT_EQ(reply.receiver(), (BlockAddress{9, 1, 0}));
  EXPECT_FALSE(context.sent[0].delayed);
  EXPECT_TRUE(block.last_send_status.ok());

  Signal bye(kBye);
  block.deliver(bye);
  EXPECT_EQ(block.byes, 1);
}

TEST(Block, SendErrorsReachTheBlock) {
  Greeter block;
  RecordingContext context;
  context.next_status = Status(ErrorCode::kTemporary, "queue full");
  block.attach(context);
  Signal hello(kHello);
  block.deliver(hello);
  EXPECT_TRUE(block.last_send_status.is(ErrorCode::kTemporary));
  context.next_status.ignore_error();
}

TEST(Block, DelayedSendCarriesTheDelay) {
  Greeter block;
  RecordingContext context;
  block.attach(context);
  ASSERT_TRUE(block.send_delayed(block.address(), Signal(kBye), 250).ok());
  ASSERT_EQ(context.sent.size(), 1u);
  EXPECT_TRUE(context.sent[0].delayed);
  EXPECT_EQ(context.sent[0].delay_ms, 250u);
  EXPECT_EQ(context.sent[0].signal.receiver(), block.address());
}

TEST(Block, UnknownSignalIsLoggedAndCountedNotFatal) {
  ScopedLogCapture capture(LogLevel::kError);
  Greeter block;
  RecordingContext context;
  block.attach(context);
  Signal stray(999, {1});
  block.deliver(stray);
  Signal zero;  // id 0 (never registered) takes the same path
  block.deliver(zero);
  EXPECT_EQ(block.unknown_signal_count(), 2u);
  EXPECT_EQ(block.hellos + block.byes, 0);
  EXPECT_TRUE(capture.sink().contains("no handler for signal GSN999"));
  EXPECT_TRUE(capture.sink().contains("greeter.2@n3"));
}

class DoubleHandler final : public Block {
 public:
  DoubleHandler() : Block("double", 1) {
    on(kHello, &DoubleHandler::handle);
    on(kHello, &DoubleHandler::handle);
  }

 private:
  void handle(Signal&) {}
};

TEST(BlockDeathTest, ProgrammingErrorsAbort) {
  EXPECT_DEATH({ DoubleHandler block; }, "two handlers for one signal id");
  EXPECT_DEATH(
      {
        Greeter block;
        (void)block.send_delayed(block.address(), Signal(kBye), 1);
      },
      "block used before it was attached");
  EXPECT_DEATH(
      {
        Greeter block;
        RecordingContext a;
        RecordingContext b;
        block.attach(a);
        block.attach(b);
      },
      "block attached twice");
}

}  // namespace
}  // namespace duo::kernel
