// ThreadRuntime on real threads: the same test blocks as the simulator tests, plus the
// overload answer, timers on the steady clock, the transport hook and shutdown. Every
// wait is bounded (kWaitLimit); a test that times out fails instead of hanging.
#include "ndb-kernel/runtime/thread_runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/runtime/testing/test_blocks.h"

namespace duo::kernel {
namespace {

using namespace test_blocks;  // NOLINT(build/namespaces): the shared test blocks
using std::chrono::milliseconds;

constexpr milliseconds kWaitLimit{20'000};

// Polls `done` until it holds or `limit` passes. Tests may sleep; blocks may not.
bool wait_for(const std::function<bool()>& done, milliseconds limit = kWaitLimit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

// Main+recv thread (0) and `ldm` ldm threads (1..ldm).
ThreadLayout small_layout(uint32_t ldm) {
  return ThreadLayout{
      .ldm_threads = ldm, .recv_threads = 1, .send_threads = 0, .main_runs_recv = true};
}

std::unique_ptr<ThreadRuntime> make_runtime(ThreadLayout layout, size_t queue_capacity = 4096,
                                            uint64_t seed = 1, uint64_t idle_spin_ns = 0) {
  register_test_signal_names();
  ThreadRuntimeOptions options;
  options.node_id = 1;
  options.layout = layout;
  options.queue_capacity_signals = queue_capacity;
  options.seed = seed;
  options.idle_spin_ns = idle_spin_ns;
  auto runtime = ThreadRuntime::create(options);
  EXPECT_TRUE(runtime.ok()) << runtime.status().to_string();
  return std::move(runtime).value();
}

template <typename T>
T* add(ThreadRuntime& runtime, std::unique_ptr<T> block, uint32_t thread_index) {
  T* raw = block.get();
  const Status status = runtime.add_block(std::move(block), thread_index);
  EXPECT_TRUE(status.ok()) << status.to_string();
  return raw;
}

TEST(ThreadRuntime, PingPongAcrossTwoThreads) {
  constexpr uint32_t kRounds = 20'000;
  auto runtime = make_runtime(small_layout(1));
  const ThreadLayout& layout = runtime->layout();
  PongBlock* pong = add(*runtime, std::make_unique<PongBlock>(), layout.main_thread());
  PingBlock* ping =
      add(*runtime, std::make_unique<PingBlock>(BlockAddress{1, kPongBlockNumber, 0}, kRounds),
          layout.ldm_thread(0));
  ASSERT_TRUE(runtime->start().ok());
  ASSERT_TRUE(wait_for([&] { return ping->done(); })) << ping->rounds_done() << " rounds";
  runtime->stop();
  EXPECT_FALSE(runtime->running());
  EXPECT_EQ(ping->errors(), 0u);
  EXPECT_EQ(pong->pings(), kRounds);
  const ThreadRuntimeStats stats = runtime->stats();
  EXPECT_EQ(stats.delivered, 2u * kRounds);
  EXPECT_EQ(stats.refused_queue_full, 0u);
  EXPECT_EQ(stats.missed_wakes, 0u);
}

void run_ring(ThreadRuntime& runtime, uint16_t ring_size, uint32_t tokens, uint32_t laps) {
  std::vector<BlockAddress> ring;
  for (uint16_t i = 0; i < ring_size; ++i) ring.push_back({1, kRingBlockNumber, i});
  std::vector<RingBlock*> members;
  const uint32_t threads = runtime.layout().thread_count();
  for (uint16_t i = 0; i < ring_size; ++i) {
    // Spread neighbours over different threads so every hop crosses a queue.
    members.push_back(
        add(runtime, std::make_unique<RingBlock>(ring, i, tokens, laps), i % threads));
  }
  auto retired = [&] {
    uint32_t sum = 0;
    for (RingBlock* m : members) sum += m->tokens_retired();
    return sum;
  };
  ASSERT_TRUE(runtime.start().ok());
  ASSERT_TRUE(wait_for([&] { return retired() == tokens; })) << retired() << " tokens retired";
  runtime.stop();
  uint64_t hops = 0;
  for (RingBlock* m : members) {
    EXPECT_EQ(m->fifo_violations(), 0u) << m->address().to_string();
    EXPECT_EQ(m->corrupt_sections(), 0u) << m->address().to_string();
    EXPECT_EQ(m->send_errors(), 0u) << m->address().to_string();
    hops += m->hops_seen();
  }
  EXPECT_EQ(hops, uint64_t{tokens} * laps * ring_size);
  EXPECT_EQ(runtime.stats().missed_wakes, 0u);
}

TEST(ThreadRuntime, RingOfEightBlocksOverFourThreads) {
  auto runtime = make_runtime(small_layout(3));
  ASSERT_EQ(runtime->layout().thread_count(), 4u);
  run_ring(*runtime, 8, /*tokens=*/4, /*laps=*/500);
}

// SchedulerSpinTimer: idle threads spin a while before sleeping; nothing is lost or
// reordered either way.
TEST(ThreadRuntime, RingWithIdleSpinning) {
  auto runtime = make_runtime(small_layout(3), 4096, 1, /*idle_spin_ns=*/50'000);
  run_ring(*runtime, 8, /*tokens=*/2, /*laps=*/300);
}

TEST(ThreadRuntime, RingOnThisMachinesAutomaticLayout) {
  auto runtime = make_runtime(automatic_thread_layout(available_core_count()));
  const uint16_t ring_size = static_cast<uint16_t>(2 * runtime->layout().thread_count() + 1);
  run_ring(*runtime, ring_size, /*tokens=*/3, /*laps=*/200);
}

TEST(ThreadRuntime, DelayedSignalsFireInDeadlineOrderNoEarlierThanTheirDelay) {
  auto runtime = make_runtime(small_layout(1));
  auto* timers = add(*runtime,
                     std::make_unique<TimerBlock>(std::vector<std::pair<uint32_t, uint64_t>>{
                         {1, 120}, {2, 40}, {3, 80}, {4, 40}, {5, 0}}),
                     runtime->layout().ldm_thread_of_part(0));
  ASSERT_TRUE(runtime->start().ok());
  ASSERT_TRUE(wait_for([&] { return timers->fired_count() == 5; }));
  runtime->stop();
  ASSERT_EQ(timers->errors(), 0u);
  const auto& fired = timers->fired();
  ASSERT_EQ(fired.size(), 5u);
  const std::vector<uint32_t> expected_order{5, 2, 4, 3, 1};  // by delay, ties as armed
  const std::vector<uint64_t> delay_ms{0, 40, 40, 80, 120};
  for (size_t i = 0; i < fired.size(); ++i) {
    EXPECT_EQ(fired[i].tag, expected_order[i]) << i;
    EXPECT_GE(fired[i].fired_ns - fired[i].armed_ns, delay_ms[i] * kNanosPerMilli) << i;
  }
}

// Parks its thread inside a handler until released, so a test can fill its queue.
class StallBlock final : public Block {
 public:
  StallBlock() : Block("stall", 50) {
    on(kTick, &StallBlock::on_stall);
    on(kData, &StallBlock::on_data);
  }
  std::atomic<bool> stalled{false};
  std::atomic<bool> release{false};
  std::atomic<uint64_t> data{0};

 private:
  void on_stall(Signal&) {
    stalled.store(true);
    const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
    while (!release.load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(1));
    }
  }
  void on_data(Signal&) { data.fetch_add(1); }
};

Signal to_stall(SignalId id) {
  Signal signal(id);
  signal.set_receiver({1, 50, 0});
  return signal;
}

TEST(ThreadRuntime, FullQueueAnswersTemporaryWithoutBlocking) {
  auto runtime = make_runtime(small_layout(1), /*queue_capacity=*/4);
  StallBlock* stall =
      add(*runtime, std::make_unique<StallBlock>(), runtime->layout().ldm_thread_of_part(0));
  ASSERT_TRUE(runtime->start().ok());
  ASSERT_TRUE(runtime->send_from_outside(to_stall(kTick)).ok());
  ASSERT_TRUE(wait_for([&] { return stall->stalled.load(); }));
  int accepted = 0;
  int refused = 0;
  for (int i = 0; i < 10; ++i) {
    const Status status = runtime->send_from_outside(to_stall(kData));
    if (status.ok()) {
      ++accepted;
    } else {
      EXPECT_TRUE(status.is(ErrorCode::kTemporary)) << status.to_string();
      ++refused;
    }
  }
  EXPECT_EQ(accepted, 4);  // exactly the queue capacity
  EXPECT_EQ(refused, 6);
  EXPECT_EQ(runtime->stats().refused_queue_full, 6u);
  stall->release.store(true);
  ASSERT_TRUE(wait_for([&] { return stall->data.load() == 4; }));
  // Room again after the thread drained its queue.
  ASSERT_TRUE(runtime->send_from_outside(to_stall(kData)).ok());
  ASSERT_TRUE(wait_for([&] { return stall->data.load() == 5; }));
}

// try_send_from_outside keeps a refused signal (words and section) for a retry: the file
// system block's IO threads depend on it not to lose an answer.
TEST(ThreadRuntime, TrySendFromOutsideKeepsARefusedSignalForARetry) {
  auto runtime = make_runtime(small_layout(1), /*queue_capacity=*/4);
  StallBlock* stall =
      add(*runtime, std::make_unique<StallBlock>(), runtime->layout().ldm_thread_of_part(0));
  ASSERT_TRUE(runtime->start().ok());
  ASSERT_TRUE(runtime->send_from_outside(to_stall(kTick)).ok());
  ASSERT_TRUE(wait_for([&] { return stall->stalled.load(); }));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(runtime->send_from_outside(to_stall(kData)).ok());
  Signal kept = to_stall(kData);
  kept.set_word(3, 77);
  kept.set_section({1, 2, 3});
  const Status refused = runtime->try_send_from_outside(kept);
  EXPECT_TRUE(refused.is(ErrorCode::kTemporary)) << refused.to_string();
  EXPECT_EQ(kept.id(), kData);
  EXPECT_EQ(kept.word(3), 77u);
  EXPECT_EQ(kept.section(), (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(kept.receiver(), (BlockAddress{1, 50, 0}));
  stall->release.store(true);
  ASSERT_TRUE(wait_for([&] { return runtime->try_send_from_outside(kept).ok(); }));
  ASSERT_TRUE(wait_for([&] { return stall->data.load() == 5; }));
}

// Drops every signal from node 9 (a node "declared dead"); counts what it saw.
class DropNodeNine final : public RemoteSignalFilter {
 public:
  bool drops(const Signal& signal) override {
    seen.fetch_add(1, std::memory_order_relaxed);
    return signal.sender().node_id == 9;
  }
  std::atomic<uint64_t> seen{0};
};

// Installs `filter` at its start, as the membership block does; counts DATA per sender
// node.
class FilteringBlock final : public Block {
 public:
  explicit FilteringBlock(RemoteSignalFilter* filter) : Block("filtering", 52), filter_(filter) {
    on(kData, &FilteringBlock::on_data);
  }
  void on_start() override {
    set_remote_signal_filter(filter_);
    started.store(true, std::memory_order_release);
  }
  std::atomic<bool> started{false};
  std::atomic<uint64_t> from_own{0}, from_eight{0}, from_nine{0};

 private:
  void on_data(Signal& signal) {
    const uint16_t node = signal.sender().node_id;
    (node == 1 ? from_own : node == 8 ? from_eight : from_nine).fetch_add(1);
  }
  RemoteSignalFilter* const filter_;
};

TEST(ThreadRuntime, RemoteSignalFilterDropsBeforeDeliveryAndSeesOnlyOtherNodes) {
  auto runtime = make_runtime(small_layout(1));
  DropNodeNine filter;
  FilteringBlock* block =
      add(*runtime, std::make_unique<FilteringBlock>(&filter), runtime->layout().ldm_thread_of_part(0));
  ASSERT_TRUE(runtime->start().ok());
  ASSERT_TRUE(wait_for([&] { return block->started.load(); }));
  auto data_from = [](uint16_t node) {
    Signal signal(kData);
    signal.set_sender({node, 7, 0});
    signal.set_receiver({1, 52, 0});
    return signal;
  };
  for (uint16_t node : {9, 8, 1, 9, 8})
    ASSERT_TRUE(runtime->send_from_outside(data_from(node)).ok());
  ASSERT_TRUE(
      wait_for([&] { return block->from_eight.load() == 2 && block->from_own.load() == 1; }));
  runtime->stop();
  EXPECT_EQ(block->from_nine.load(), 0u);
  EXPECT_EQ(filter.seen.load(), 4u);  // never asked about a signal of its own node
  EXPECT_EQ(runtime->stats().delivered, 5u);
}

// On TICK, arms a delayed DATA to the stall block.
class ArmBlock final : public Block {
 public:
  ArmBlock() : Block("arm", 51) { on(kTick, &ArmBlock::on_tick); }
  std::atomic<bool> armed{false};

 private:
  void on_tick(Signal&) { armed.store(send_delayed({1, 50, 0}, Signal(kData), 10).ok()); }
};

TEST(ThreadRuntime, DelayedSignalIntoAFullQueueIsRetried) {
  auto runtime = make_runtime(small_layout(1), /*queue_capacity=*/2);
  StallBlock* stall =
      add(*runtime, std::make_unique<StallBlock>(), runtime->layout().ldm_thread_of_part(0));
  ArmBlock* arm = add(*runtime, std::make_unique<ArmBlock>(), runtime->layout().main_thread());
  ASSERT_TRUE(runtime->start().ok());
  ASSERT_TRUE(runtime->send_from_outside(to_stall(kTick)).ok());
  ASSERT_TRUE(wait_for([&] { return stall->stalled.load(); }));
  ASSERT_TRUE(runtime->send_from_outside(to_stall(kData)).ok());
  ASSERT_TRUE(runtime->send_from_outside(to_stall(kData)).ok());  // the queue is now full
  Signal tick(kTick);
  tick.set_receiver(arm->address());
  ASSERT_TRUE(runtime->send_from_outside(std::move(tick)).ok());
  ASSERT_TRUE(wait_for([&] { return runtime->stats().delayed_retried > 0; }));
  EXPECT_TRUE(arm->armed.load());
  stall->release.store(true);
  ASSERT_TRUE(wait_for([&] { return stall->data.load() == 3; }));  // the delayed one too
}

class RecordingRemoteSender final : public RemoteSender {
 public:
  Status send_remote(Signal signal) override {
    std::lock_guard<std::mutex> lock(mutex_);
    sent_.push_back(std::move(signal));
    return Status::OK();
  }
  std::vector<Signal> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(sent_, {});
  }

 private:
  std::mutex mutex_;
  std::vector<Signal> sent_;  // GUARDED_BY(mutex_)
};

TEST(ThreadRuntime, SignalsToOtherNodesNeedATransport) {
  {
    auto runtime = make_runtime(small_layout(1));
    Signal remote(kData);
    remote.set_receiver({2, kProbeBlockNumber, 0});
    EXPECT_TRUE(runtime->send_from_outside(std::move(remote)).is(ErrorCode::kNotSupported));
  }
  auto runtime = make_runtime(small_layout(1));
  RecordingRemoteSender transport;
  runtime->set_remote_sender(&transport);
  PingBlock* ping =
      add(*runtime, std::make_unique<PingBlock>(BlockAddress{2, kPongBlockNumber, 0}, 1), 1);
  ASSERT_TRUE(runtime->start().ok());
  std::vector<Signal> sent;
  ASSERT_TRUE(wait_for([&] {
    auto more = transport.take();
    for (auto& s : more) sent.push_back(std::move(s));
    return !sent.empty();
  }));
  runtime->stop();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].id(), kPing);
  EXPECT_EQ(sent[0].sender(), (BlockAddress{1, kPingBlockNumber, 0}));
  EXPECT_EQ(sent[0].receiver(), (BlockAddress{2, kPongBlockNumber, 0}));
  EXPECT_EQ(ping->errors(), 0u);
}

TEST(ThreadRuntime, SendErrorsAreStatusesNotCrashes) {
  auto runtime = make_runtime(small_layout(1));
  std::vector<ErrorCode> codes;
  ProbeBlock* probe =
      add(*runtime,
          std::make_unique<ProbeBlock>(
              0,
              [&codes](ProbeBlock& p) {
                const BlockAddress self = p.address();
                const BlockAddress missing{1, 77, 0};
                const BlockAddress remote{2, kProbeBlockNumber, 0};
                Signal big(kData);
                big.set_section(std::vector<uint8_t>(kSectionBytesMax + 1));
                codes.push_back(p.probe_send(self, std::move(big)).code());
                codes.push_back(p.probe_send(missing, Signal(kData)).code());
                codes.push_back(p.probe_send_delayed(missing, Signal(kData), 1).code());
                codes.push_back(p.probe_send_delayed(remote, Signal(kData), 1).code());
                codes.push_back(p.probe_send(remote, Signal(kData)).code());
                codes.push_back(p.probe_send(self, Signal()).code());  // no signal id
                codes.push_back(p.probe_send(self, Signal(kData)).code());
              }),
          1);
  ASSERT_TRUE(runtime->start().ok());
  ASSERT_TRUE(wait_for([&] { return probe->received() == 1; }));
  runtime->stop();
  EXPECT_EQ(codes, (std::vector<ErrorCode>{ErrorCode::kInvalidArgument, ErrorCode::kInvalidArgument,
                                           ErrorCode::kInvalidArgument, ErrorCode::kInvalidArgument,
                                           ErrorCode::kNotSupported, ErrorCode::kInvalidArgument,
                                           ErrorCode::kOk}));
}

TEST(ThreadRuntime, UnknownSignalIsLoggedNotFatal) {
  ScopedLogCapture capture(LogLevel::kError);
  auto runtime = make_runtime(small_layout(1));
  PongBlock* pong = add(*runtime, std::make_unique<PongBlock>(), 1);
  ProbeBlock* probe = add(*runtime, std::make_unique<ProbeBlock>(), 0);
  ASSERT_TRUE(runtime->start().ok());
  Signal stray(kUnknownToEveryone, {5});
  stray.set_receiver(pong->address());
  ASSERT_TRUE(runtime->send_from_outside(std::move(stray)).ok());
  // Then a signal the thread knows, to learn that the stray one was handled before it.
  Signal ping(kPing, {0});
  ping.set_sender(probe->address());
  ping.set_receiver(pong->address());
  ASSERT_TRUE(runtime->send_from_outside(std::move(ping)).ok());
  ASSERT_TRUE(wait_for([&] { return pong->pings() == 1; }));
  runtime->stop();
  EXPECT_EQ(pong->unknown_signal_count(), 1u);
  EXPECT_TRUE(capture.sink().contains("no handler for signal GSN199"));
}

TEST(ThreadRuntime, StopJoinsBusyThreadsAndDestructionStopsToo) {
  for (bool explicit_stop : {true, false}) {
    auto runtime = make_runtime(small_layout(2));
    // Endless ping-pong keeps both threads busy.
    PingBlock* ping = add(
        *runtime, std::make_unique<PingBlock>(BlockAddress{1, kPongBlockNumber, 0}, UINT32_MAX), 1);
    add(*runtime, std::make_unique<PongBlock>(), 2);
    ASSERT_TRUE(runtime->start().ok());
    ASSERT_TRUE(wait_for([&] { return ping->rounds_done() > 100; }));
    if (explicit_stop) {
      runtime->stop();
      runtime->stop();  // idempotent
      EXPECT_FALSE(runtime->running());
      EXPECT_GT(runtime->stats().delivered, 200u);
      EXPECT_LE(runtime->stats().dropped_at_stop, 1u);  // at most the ball in flight
    }
    runtime.reset();  // joins (if not stopped yet) and destroys the blocks
  }
}

TEST(ThreadRuntime, CreateAndAddBlockValidate) {
  ThreadRuntimeOptions options;
  options.layout = small_layout(1);
  options.queue_capacity_signals = 3;
  EXPECT_TRUE(ThreadRuntime::create(options).status().is(ErrorCode::kConfigError));
  options.queue_capacity_signals = 8;
  options.layout.tc_threads = 2;
  EXPECT_TRUE(ThreadRuntime::create(options).status().is(ErrorCode::kConfigError));
  options.layout = small_layout(1);
  options.node_id = 0;
  EXPECT_TRUE(ThreadRuntime::create(options).status().is(ErrorCode::kConfigError));

  auto runtime = make_runtime(small_layout(1));
  EXPECT_TRUE(runtime->add_block(std::make_unique<PongBlock>(), 2).is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(runtime->add_block(nullptr, 0).is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(runtime->add_block(std::make_unique<PongBlock>(), 0).ok());
  EXPECT_TRUE(runtime->add_block(std::make_unique<PongBlock>(), 1).is(ErrorCode::kInvalidArgument));
  ASSERT_TRUE(runtime->start().ok());
  EXPECT_TRUE(runtime->start().is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(
      runtime->add_block(std::make_unique<ProbeBlock>(), 0).is(ErrorCode::kInvalidArgument));
}

TEST(ThreadRuntime, BlockRandomStreamsFollowTheSeed) {
  auto first_draws = [](uint64_t seed) {
    auto runtime = make_runtime(small_layout(1), 4096, seed);
    std::vector<uint64_t> draws(2);
    ProbeBlock* a = add(*runtime,
                        std::make_unique<ProbeBlock>(
                            0, [&draws](ProbeBlock& p) { draws[0] = p.probe_random().next_u64(); }),
                        0);
    ProbeBlock* b = add(*runtime,
                        std::make_unique<ProbeBlock>(
                            1, [&draws](ProbeBlock& p) { draws[1] = p.probe_random().next_u64(); }),
                        1);
    EXPECT_TRUE(runtime->start().ok());
    EXPECT_TRUE(wait_for([&] { return a->started() && b->started(); }));
    runtime->stop();
    return draws;
  };
  const auto one = first_draws(7);
  EXPECT_EQ(one, first_draws(7));
  EXPECT_NE(one, first_draws(8));
  EXPECT_NE(one[0], one[1]);  // each block has its own stream
  // Seed 0 means "pick one": the runtime reports what it picked.
  ThreadRuntimeOptions options;
  options.layout = small_layout(1);
  auto picked = ThreadRuntime::create(options);
  ASSERT_TRUE(picked.ok());
  EXPECT_NE((*picked)->seed(), 0u);
}

// A stand-in for the transporter on the receive thread: "arriving" sequence numbers are
// delivered as DATA signals from inside poll(), on the polling thread, as the transporter
// does with what it reads.
class FakeNetworkPoller final : public ThreadPoller {
 public:
  FakeNetworkPoller(ThreadRuntime* runtime, BlockAddress receiver)
      : runtime_(runtime), receiver_(receiver) {}

  void arrive(uint32_t sequence) {
    std::lock_guard<std::mutex> lock(mutex_);
    inbox_.push_back(sequence);
    cv_.notify_one();
  }
  void poll(uint64_t max_wait_ns) override {
    polls_.fetch_add(1);
    poll_thread_ = std::this_thread::get_id();
    std::vector<uint32_t> arrived;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (max_wait_ns > 0) waits_.fetch_add(1);
      cv_.wait_for(lock, std::chrono::nanoseconds(max_wait_ns),
                   [this] { return !inbox_.empty() || woken_; });
      woken_ = false;
      arrived.swap(inbox_);
    }
    for (uint32_t sequence : arrived) {
      Signal signal(test_blocks::kData, {sequence});
      signal.set_sender(BlockAddress{1, 999, 0});
      signal.set_receiver(receiver_);
      if (!runtime_->send_from_outside(std::move(signal)).ok()) refused_.fetch_add(1);
    }
  }
  void wake() override {
    if (std::this_thread::get_id() == poll_thread_) own_thread_wakes_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex_);
    woken_ = true;
    cv_.notify_one();
  }

  uint64_t polls() const { return polls_.load(); }
  uint64_t waits() const { return waits_.load(); }
  uint64_t own_thread_wakes() const { return own_thread_wakes_.load(); }
  uint64_t refused() const { return refused_.load(); }

 private:
  ThreadRuntime* const runtime_;
  const BlockAddress receiver_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<uint32_t> inbox_;  // GUARDED_BY(mutex_)
  bool woken_ = false;           // GUARDED_BY(mutex_)
  std::atomic<std::thread::id> poll_thread_{};
  std::atomic<uint64_t> polls_{0};
  std::atomic<uint64_t> waits_{0};
  std::atomic<uint64_t> own_thread_wakes_{0};
  std::atomic<uint64_t> refused_{0};
};

// Signals from another thread reach a thread that waits in its poller: the producer
// wakes it through the poller, never through the condition variable it is not on.
TEST(ThreadRuntime, ThreadWaitingInItsPollerIsWokenBySignals) {
  constexpr uint32_t kRounds = 5'000;
  auto runtime = make_runtime(small_layout(1));
  FakeNetworkPoller poller(runtime.get(), BlockAddress{1, kSequenceCheckerBlockNumber, 0});
  ASSERT_TRUE(runtime->set_thread_poller(0, &poller).ok());
  EXPECT_TRUE(runtime->set_thread_poller(0, &poller).is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(runtime->set_thread_poller(9, &poller).is(ErrorCode::kInvalidArgument));
  PongBlock* pong = add(*runtime, std::make_unique<PongBlock>(), 0);
  PingBlock* ping = add(
      *runtime, std::make_unique<PingBlock>(BlockAddress{1, kPongBlockNumber, 0}, kRounds), 1);
  ASSERT_TRUE(runtime->start().ok());
  ASSERT_TRUE(wait_for([&] { return ping->done(); })) << ping->rounds_done() << " rounds";
  runtime->stop();
  EXPECT_EQ(ping->errors(), 0u);
  EXPECT_EQ(pong->pings(), kRounds);
  EXPECT_GT(poller.waits(), 0u);  // it did wait in the poller, and was woken from there
  EXPECT_EQ(runtime->set_thread_poller(0, &poller).code(), ErrorCode::kInvalidArgument);
}

// What the poller receives for blocks of its own thread is delivered in order, and the
// thread never wakes itself for it (no eventfd write per received signal).
TEST(ThreadRuntime, PollerDeliversToItsOwnThreadWithoutWakingItself) {
  constexpr uint32_t kSignals = 20'000;
  auto runtime = make_runtime(small_layout(0), /*queue_capacity=*/32768);
  ASSERT_EQ(runtime->layout().thread_count(), 1u);
  FakeNetworkPoller poller(runtime.get(), BlockAddress{1, kSequenceCheckerBlockNumber, 0});
  ASSERT_TRUE(runtime->set_thread_poller(0, &poller).ok());
  SequenceChecker* checker = add(*runtime, std::make_unique<SequenceChecker>(), 0);
  ASSERT_TRUE(runtime->start().ok());
  for (uint32_t i = 0; i < kSignals; ++i) {
    poller.arrive(i);
    if (i % 64 == 0) std::this_thread::yield();
  }
  ASSERT_TRUE(wait_for([&] { return runtime->stats().delivered == kSignals; }))
      << runtime->stats().delivered << " delivered";
  runtime->stop();
  EXPECT_EQ(checker->received(), kSignals);
  EXPECT_EQ(checker->order_violations(), 0u);
  EXPECT_EQ(checker->gaps(), 0u);
  EXPECT_EQ(poller.refused(), 0u);
  EXPECT_EQ(poller.own_thread_wakes(), 0u);
}

}  // namespace
}  // namespace duo::kernel
