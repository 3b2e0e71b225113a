// Small blocks for testing the runtimes: the same blocks run in the simulator
// (sim/simulator_test.cc) and on real threads (runtime/thread_runtime_test.cc), which is
// the point of the block model. They follow the block rules (no threads, no clocks but
// clock(), no randomness but random()), so the kernel tidy test scans this file too.
//
//   PingBlock / PongBlock   a request/response pair: `rounds` PINGs, each answered by a
//                           PONG; the pinger checks it gets back the round it sent.
//   RingBlock               one member of a ring passing tokens; checks per-link FIFO
//                           (each signal carries a per-link sequence number) and that a
//                           token's section survives every hop.
//   BurstSender / SequenceChecker  many signals in flight per link; the checker verifies
//                           per-sender order.
//   BeaconBlock             heartbeats to peers every period; counts beats per sender.
//   TimerBlock              arms delayed signals to itself and records when they fire.
//   ProbeBlock              exposes send()/send_delayed() so a test can provoke errors.
//
// Thread-safety: as every block, single-threaded; counters a test thread polls while the
// runtime runs are atomics. Non-atomic members are read by tests only after the runtime
// stopped (thread join) or in the single-threaded simulator.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ndb-kernel/runtime/block.h"

namespace duo::kernel::test_blocks {

// Test signal ids, far from the ids real block families will use.
enum TestSignal : SignalId {
  kPing = 101,
  kPong = 102,
  kToken = 103,
  kData = 104,
  kTick = 105,
  kBeat = 106,
  kTimer = 107,
  kUnknownToEveryone = 199,
};

enum TestBlockNumber : uint16_t {
  kPingBlockNumber = 1,
  kPongBlockNumber = 2,
  kRingBlockNumber = 3,
  kBurstSenderBlockNumber = 4,
  kSequenceCheckerBlockNumber = 5,
  kBeaconBlockNumber = 6,
  kTimerBlockNumber = 7,
  kProbeBlockNumber = 8,
};

// Names for logs; registering the same names again (every test does) never fails.
inline void register_test_signal_names() {
  static constexpr std::pair<SignalId, const char*> kNames[] = {
      {kPing, "PING"}, {kPong, "PONG"}, {kToken, "TOKEN"}, {kData, "DATA"},
      {kTick, "TICK"}, {kBeat, "BEAT"}, {kTimer, "TIMER"}};
  for (const auto& [id, name] : kNames) register_signal_name(id, name).ignore_error();
}

class PingBlock final : public Block {
 public:
  PingBlock(BlockAddress peer, uint32_t rounds)
      : Block("ping", kPingBlockNumber), peer_(peer), rounds_(rounds) {
    on(kPong, &PingBlock::on_pong);
  }
  void on_start() override { send_ping(0); }

  uint32_t rounds_done() const { return rounds_done_.load(std::memory_order_acquire); }
  bool done() const { return rounds_done() >= rounds_; }
  uint32_t errors() const { return errors_.load(std::memory_order_acquire); }

 private:
  void send_ping(uint32_t round) {
    if (!send(peer_, Signal(kPing, {round})).ok()) errors_.fetch_add(1);
  }
  void on_pong(Signal& signal) {
    const uint32_t round = signal.word(0);
    if (round != rounds_done_.load(std::memory_order_relaxed)) errors_.fetch_add(1);
    const uint32_t done = rounds_done_.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (done < rounds_) send_ping(done);
  }

  const BlockAddress peer_;
  const uint32_t rounds_;
  std::atomic<uint32_t> rounds_done_{0};
  std::atomic<uint32_t> errors_{0};
};

class PongBlock final : public Block {
 public:
  PongBlock() : Block("pong", kPongBlockNumber) { on(kPing, &PongBlock::on_ping); }
  uint32_t pings() const { return pings_.load(std::memory_order_acquire); }

 private:
  void on_ping(Signal& signal) {
    pings_.fetch_add(1, std::memory_order_acq_rel);
    // Reply on the same signal object, NDB style: no allocation for the answer.
    const BlockAddress sender = signal.sender();
    signal.set_id(kPong);
    send(sender, std::move(signal)).ignore_error();  // a lost pong stalls the test visibly
  }

  std::atomic<uint32_t> pings_{0};
};

// Ring member `index` of `ring.size()`. Members index < tokens start one token each.
// A token retires after laps * ring.size() hops; the member that retires it counts it.
class RingBlock final : public Block {
 public:
  RingBlock(std::vector<BlockAddress> ring, uint16_t index, uint32_t tokens, uint32_t laps)
      : Block("ring", kRingBlockNumber, index),
        ring_(std::move(ring)),
        index_(index),
        tokens_(tokens),
        hops_per_token_(laps * static_cast<uint32_t>(ring_.size())) {
    on(kToken, &RingBlock::on_token);
  }
  void on_start() override {
    if (index_ < tokens_) forward(/*token=*/index_, /*hops=*/0);
  }

  uint32_t tokens_retired() const { return tokens_retired_.load(std::memory_order_acquire); }
  uint32_t fifo_violations() const { return fifo_violations_.load(std::memory_order_acquire); }
  uint32_t corrupt_sections() const { return corrupt_sections_.load(std::memory_order_acquire); }
  uint32_t send_errors() const { return send_errors_.load(std::memory_order_acquire); }
  uint64_t hops_seen() const { return hops_seen_.load(std::memory_order_acquire); }

  // The section a token carries after `hops` hops: its size and bytes vary per hop, so
  // a section delivered with the wrong signal or torn in a queue is noticed.
  static std::vector<uint8_t> section_for(uint32_t token, uint32_t hops) {
    std::vector<uint8_t> bytes((hops % 5) * 37);
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<uint8_t>(token * 31 + hops + i);
    return bytes;
  }

 private:
  void forward(uint32_t token, uint32_t hops) {
    const BlockAddress& next = ring_[(index_ + 1) % ring_.size()];
    Signal signal(kToken, {token, hops, next_out_sequence_++});
    signal.set_section(section_for(token, hops));
    if (!send(next, std::move(signal)).ok()) send_errors_.fetch_add(1);
  }
  void on_token(Signal& signal) {
    const uint32_t token = signal.word(0);
    const uint32_t hops = signal.word(1);
    const uint32_t link_sequence = signal.word(2);
    hops_seen_.fetch_add(1, std::memory_order_acq_rel);
    const BlockAddress& previous = ring_[(index_ + ring_.size() - 1) % ring_.size()];
    if (signal.sender() != previous || link_sequence != next_in_sequence_) {
      fifo_violations_.fetch_add(1);
    }
    next_in_sequence_ = link_sequence + 1;
    if (signal.section() != section_for(token, hops)) corrupt_sections_.fetch_add(1);
    if (hops + 1 == hops_per_token_) {
      tokens_retired_.fetch_add(1, std::memory_order_acq_rel);
    } else {
      forward(token, hops + 1);
    }
  }

  const std::vector<BlockAddress> ring_;
  const uint16_t index_;
  const uint32_t tokens_;
  const uint32_t hops_per_token_;
  uint32_t next_out_sequence_ = 0;
  uint32_t next_in_sequence_ = 0;
  std::atomic<uint32_t> tokens_retired_{0};
  std::atomic<uint32_t> fifo_violations_{0};
  std::atomic<uint32_t> corrupt_sections_{0};
  std::atomic<uint32_t> send_errors_{0};
  std::atomic<uint64_t> hops_seen_{0};
};

// Every `interval_ms`, sends `burst` DATA signals to `target` until `total` are sent.
// DATA words: sequence, send time (ns, low and high words).
class BurstSender final : public Block {
 public:
  BurstSender(BlockAddress target, uint32_t total, uint32_t burst, uint64_t interval_ms)
      : Block("burst", kBurstSenderBlockNumber),
        target_(target),
        total_(total),
        burst_(burst),
        interval_ms_(interval_ms) {
    on(kTick, &BurstSender::on_tick);
  }
  void on_start() override {
    Signal tick(kTick);
    on_tick(tick);
  }
  uint32_t sent() const { return next_sequence_; }
  uint32_t errors() const { return errors_; }

 private:
  void on_tick(Signal&) {
    for (uint32_t i = 0; i < burst_ && next_sequence_ < total_; ++i) {
      const uint64_t now_ns = clock().now_ns();
      Signal data(kData, {next_sequence_++, static_cast<uint32_t>(now_ns),
                          static_cast<uint32_t>(now_ns >> 32)});
      if (!send(target_, std::move(data)).ok()) ++errors_;
    }
    if (next_sequence_ < total_) {
      if (!send_delayed(address(), Signal(kTick), interval_ms_).ok()) ++errors_;
    }
  }

  const BlockAddress target_;
  const uint32_t total_;
  const uint32_t burst_;
  const uint64_t interval_ms_;
  uint32_t next_sequence_ = 0;
  uint32_t errors_ = 0;
};

// Checks that DATA from each sender arrives in increasing sequence order (gaps are
// allowed: a cut link loses signals, it must not reorder them).
class SequenceChecker final : public Block {
 public:
  SequenceChecker() : Block("checker", kSequenceCheckerBlockNumber) {
    on(kData, &SequenceChecker::on_data);
  }
  uint64_t received() const { return received_; }
  uint64_t order_violations() const { return order_violations_; }
  uint64_t gaps() const { return gaps_; }
  uint64_t received_from(const BlockAddress& sender) const {
    auto it = per_sender_.find(sender);
    return it == per_sender_.end() ? 0 : it->second.received;
  }

 private:
  struct PerSender {
    int64_t last_sequence = -1;
    uint64_t received = 0;
  };
  void on_data(Signal& signal) {
    ++received_;
    PerSender& from = per_sender_[signal.sender()];
    const int64_t sequence = signal.word(0);
    if (sequence <= from.last_sequence) ++order_violations_;
    if (sequence > from.last_sequence + 1) ++gaps_;
    from.last_sequence = sequence;
    ++from.received;
  }

  std::map<BlockAddress, PerSender> per_sender_;
  uint64_t received_ = 0;
  uint64_t order_violations_ = 0;
  uint64_t gaps_ = 0;
};

// Sends a BEAT to the beacon of every peer node each `period_ms`; counts beats received
// per sending node.
class BeaconBlock final : public Block {
 public:
  BeaconBlock(std::vector<uint16_t> peers, uint64_t period_ms)
      : Block("beacon", kBeaconBlockNumber), peers_(std::move(peers)), period_ms_(period_ms) {
    on(kTick, &BeaconBlock::on_tick);
    on(kBeat, &BeaconBlock::on_beat);
  }
  void on_start() override { send_delayed(address(), Signal(kTick), period_ms_).ignore_error(); }

  uint64_t beats_from(uint16_t node_id) const {
    auto it = beats_.find(node_id);
    return it == beats_.end() ? 0 : it->second;
  }

 private:
  void on_tick(Signal&) {
    for (uint16_t peer : peers_) {
      if (peer == node_id()) continue;
      send(BlockAddress{peer, kBeaconBlockNumber, 0}, Signal(kBeat, {beat_number_}))
          .ignore_error();  // losses are what the tests measure, on the receiving side
    }
    ++beat_number_;
    send_delayed(address(), Signal(kTick), period_ms_).ignore_error();
  }
  void on_beat(Signal& signal) { ++beats_[signal.sender().node_id]; }

  const std::vector<uint16_t> peers_;
  const uint64_t period_ms_;
  uint32_t beat_number_ = 0;
  std::map<uint16_t, uint64_t> beats_;
};

// Arms one TIMER to itself per (tag, delay_ms) at start; records (tag, fire time).
class TimerBlock final : public Block {
 public:
  struct Fired {
    uint32_t tag;
    uint64_t armed_ns;
    uint64_t fired_ns;
  };
  explicit TimerBlock(std::vector<std::pair<uint32_t, uint64_t>> timers)
      : Block("timer", kTimerBlockNumber), timers_(std::move(timers)) {
    on(kTimer, &TimerBlock::on_timer);
  }
  void on_start() override {
    armed_ns_ = clock().now_ns();
    for (auto [tag, delay_ms] : timers_) {
      if (!send_delayed(address(), Signal(kTimer, {tag}), delay_ms).ok()) ++errors_;
    }
  }
  size_t fired_count() const { return fired_count_.load(std::memory_order_acquire); }
  // Read after the runtime stopped (or in the simulator).
  const std::vector<Fired>& fired() const { return fired_; }
  uint32_t errors() const { return errors_; }

 private:
  void on_timer(Signal& signal) {
    fired_.push_back(Fired{signal.word(0), armed_ns_, clock().now_ns()});
    fired_count_.fetch_add(1, std::memory_order_acq_rel);
  }

  const std::vector<std::pair<uint32_t, uint64_t>> timers_;
  uint64_t armed_ns_ = 0;
  std::vector<Fired> fired_;
  std::atomic<size_t> fired_count_{0};
  uint32_t errors_ = 0;
};

// A block whose send functions a test may call: directly in the simulator between
// events, or from `on_start_script`, which runs on the block's own thread in on_start()
// (the only safe place in the threaded runtime). Counts DATA it receives.
class ProbeBlock final : public Block {
 public:
  using Script = std::function<void(ProbeBlock&)>;
  explicit ProbeBlock(uint16_t instance = 0, Script on_start_script = nullptr)
      : Block("probe", kProbeBlockNumber, instance), on_start_script_(std::move(on_start_script)) {
    on(kData, &ProbeBlock::on_data);
  }
  void on_start() override {
    if (on_start_script_) on_start_script_(*this);
    started_.store(true, std::memory_order_release);
  }
  Status probe_send(const BlockAddress& receiver, Signal signal) {
    return send(receiver, std::move(signal));
  }
  Status probe_send_delayed(const BlockAddress& receiver, Signal signal, uint64_t delay_ms) {
    return send_delayed(receiver, std::move(signal), delay_ms);
  }
  Random& probe_random() { return random(); }
  bool started() const { return started_.load(std::memory_order_acquire); }
  uint64_t received() const { return received_.load(std::memory_order_acquire); }

 private:
  void on_data(Signal&) { received_.fetch_add(1, std::memory_order_acq_rel); }

  const Script on_start_script_;
  std::atomic<bool> started_{false};
  std::atomic<uint64_t> received_{0};
};

}  // namespace duo::kernel::test_blocks
