// ThreadRuntime: the real kernel runtime of one data node — blocks on a small set of
// OS threads, signals through bounded lock-free queues, timers on the steady clock.
//
// Each thread (see ThreadLayout) owns a fixed set of blocks and one BoundedMpscQueue of
// signals addressed to them. A block's handlers only ever run on its thread, so a block
// needs no locks. A thread loops: fire due delayed signals, deliver up to a batch of
// queued signals, and when there is nothing to do spin briefly (yielding) and then sleep
// until the next timer or until a sender wakes it.
//
// Overload answer: when a receiver's queue is full, send() returns kTemporary at once
// rather than blocking the sender. Blocking would let two threads that each fill the
// other's queue wait on each other forever (a deadlock cycle no bound can prevent), and
// it would stall every other block of the sending thread behind one slow receiver. A
// kTemporary is the kernel's defined overload answer (DESIGN.md §3 "bounded
// everything"): the sending block refuses its own request (the client retries) or sets a
// timer and tries again. Delayed signals that fire into a full queue are the one place
// the runtime retries itself (after kDelayedRetryDelayNs), because the timer's owner
// cannot be told.
//
// Signals to other nodes go to the RemoteSender (the transport, a later increment);
// without one, send() to another node returns kNotSupported.
//
// A thread may have a ThreadPoller (thread_poller.h; the transporter on the receive
// thread): it then waits in the poller instead of on its condition variable, and its
// producers wake it through the poller.
//
// Signals from other nodes pass the node's RemoteSignalFilter (if a block installed one)
// on the receiving block's thread, right before delivery: the same point at which the
// simulator filters, so both drop the same signals.
//
// Lifecycle: create() → add_block()... → start() → stop() (or destruction). Blocks are
// added before start and live until the runtime is destroyed, after every thread has
// been joined. Signals still queued at stop are dropped and counted.
//
// Thread-safety: create/add_block/set_remote_sender/start/stop are for one controlling
// thread. send_from_outside() and stats() are safe from any thread once started. Blocks'
// BlockContexts are used only on their own thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ndb-kernel/common/clock.h"
#include "ndb-kernel/common/status.h"
#include "ndb-kernel/runtime/block.h"
#include "ndb-kernel/runtime/signal.h"
#include "ndb-kernel/runtime/thread_layout.h"
#include "ndb-kernel/runtime/thread_poller.h"

namespace duo::kernel {

// The transport hook: hands a signal addressed to another node to whatever connects the
// nodes. Called concurrently from every block thread, so implementations must be
// thread-safe. Returning kTemporary (send buffer full) is the usual overload answer.
class RemoteSender {
 public:
  virtual ~RemoteSender() = default;
  virtual Status send_remote(Signal signal) = 0;
};

struct ThreadRuntimeOptions {
  uint16_t node_id = 1;
  ThreadLayout layout;
  // CPUs each thread may run on, by thread index (ThreadConfig's cpubind/cpuset); empty
  // or missing: any. start() fails with kConfigError when the OS refuses a binding.
  std::vector<std::vector<uint32_t>> thread_cpus;
  // Per-thread queue capacity in signals; a power of two. Each slot is 192 bytes (a
  // 144-byte Signal and its sequence number, cache-line aligned), so 4096 signals are
  // 768 KiB per thread, allocated at create(). Sections live outside the slots and are
  // bounded per signal by kSectionBytesMax.
  size_t queue_capacity_signals = 4096;
  // Pending delayed signals per thread; send_delayed beyond it is kTemporary.
  size_t delayed_signals_per_thread_max = 16 * 1024;
  // Signals delivered per loop turn before the thread looks at its timers again, so a
  // busy queue cannot starve timers (heartbeats).
  size_t signals_per_batch_max = 256;
  // A thread with a poller that keeps finding signals queued still polls it (without
  // waiting) at least this often, so a busy queue cannot hold up the network.
  uint64_t busy_poll_interval_ns = 50 * kNanosPerMicro;
  // How long a thread whose queue ran empty keeps looking for a signal (yielding the
  // core in between; a thread with a poller polls it without waiting instead) before it
  // sleeps: NDB's SchedulerSpinTimer. 0 (NDB's default):
  // sleep at once. Spinning saves the sleep/wake trip per signal when cores are spare,
  // and costs throughput when they are not (2-core machines running clients too).
  uint64_t idle_spin_ns = 0;
  // Seed for the blocks' random streams; 0 picks one from the clock and logs it, so a
  // production run can still be replayed in a test.
  uint64_t seed = 0;
  // Time source for timers and blocks; null means real_clock() (the steady clock).
  const Clock* clock = nullptr;
};

struct ThreadRuntimeStats {
  uint64_t delivered = 0;
  uint64_t refused_queue_full = 0;   // send() answered kTemporary (queue full)
  uint64_t refused_timers_full = 0;  // send_delayed() answered kTemporary
  uint64_t delayed_retried = 0;      // a due delayed signal met a full queue
  uint64_t dropped_at_stop = 0;      // still queued when the runtime stopped
  // Idle sleeps that ran into kIdleSleepMaxNs with signals waiting: a lost wake-up.
  // 0 unless the sleep/wake protocol is broken (the tests assert it), except in the
  // harmless case of a signal arriving in the very nanoseconds the sleep times out.
  uint64_t missed_wakes = 0;
};

// One block thread as the watchdog samples it (watchdog.h): a handler that started and
// has not ended shows as running_signal; handlers_started not moving between two
// samples while one runs means that one handler has run the whole time.
struct ThreadActivity {
  uint32_t thread_index = 0;
  std::string thread_name;
  uint64_t handlers_started = 0;
  SignalId running_signal = kNoSignal;  // kNoSignal: between handlers (or idle)
  uint16_t running_block = 0;           // the running handler's block number
};

class ThreadRuntime {
 public:
  // How long a due delayed signal waits before retrying a full queue.
  static constexpr uint64_t kDelayedRetryDelayNs = 1 * kNanosPerMilli;
  // Longest a thread sleeps without being woken. Correctness never depends on it (the
  // wake protocol is exact); it only bounds the damage of a missed-wake bug.
  static constexpr uint64_t kIdleSleepMaxNs = 50 * kNanosPerMilli;

  // Validates `options` (kInvalidArgument / kConfigError) and allocates every queue.
  static Result<std::unique_ptr<ThreadRuntime>> create(ThreadRuntimeOptions options);
  // Stops (if running) and joins every thread, then destroys the blocks.
  ~ThreadRuntime();
  ThreadRuntime(const ThreadRuntime&) = delete;
  ThreadRuntime& operator=(const ThreadRuntime&) = delete;

  // Gives `block` to thread `thread_index` and attaches it. Only before start().
  // kInvalidArgument for a bad thread index or a (block, instance) already present.
  Status add_block(std::unique_ptr<Block> block, uint32_t thread_index);
  // Installs the transport hook (not owned; must outlive the runtime). Before start().
  void set_remote_sender(RemoteSender* sender);
  // Thread `thread_index` waits in `poller` (not owned; must outlive the runtime's
  // threads) instead of on its condition variable. Before start(). kInvalidArgument for
  // a bad index or a thread that has one already.
  Status set_thread_poller(uint32_t thread_index, ThreadPoller* poller);

  // Starts the threads; each runs its blocks' on_start() and then its loop.
  Status start();
  // Asks every thread to stop after its current signal and joins them. Idempotent.
  // Never call from a block (a thread cannot join itself).
  void stop();
  bool running() const { return started_ && !stopped_; }

  // Sends a signal from outside any block (test harness; later the receive path). Same
  // errors as BlockContext::send. The signal is consumed whatever the outcome.
  Status send_from_outside(Signal signal);
  // As send_from_outside, but a signal refused with kTemporary (the receiver's queue is
  // full) is left intact in `signal`, so a producer thread that must not lose it (the
  // file system block's IO threads delivering answers) can pause and retry. Moved from
  // when accepted, and when handed to the RemoteSender (whose answer decides its fate).
  Status try_send_from_outside(Signal& signal);

  ThreadRuntimeStats stats() const;
  // Every block thread's activity now (any thread; relaxed reads: a sample may mix two
  // moments of a thread, which the watchdog's two-sample rule tolerates).
  std::vector<ThreadActivity> thread_activity() const;
  const ThreadLayout& layout() const { return options_.layout; }
  uint16_t node_id() const { return options_.node_id; }
  uint64_t seed() const { return seed_; }

 private:
  class BlockThread;
  class Context;
  struct Route {
    Block* block;
    uint32_t thread_index;
  };

  explicit ThreadRuntime(ThreadRuntimeOptions options, uint64_t seed);

  // Validates and routes `signal` to the queue of its receiver's thread (or the
  // RemoteSender). The send path of every block and of send_from_outside. Leaves
  // `signal` intact when its receiver's queue is full (kTemporary).
  Status route(Signal& signal);
  // True if `signal` comes from another node and the node's filter drops it.
  bool filtered_out(const Signal& signal) const;
  // Arms a delayed signal on `thread_index`, the calling block's own thread.
  Status schedule_delayed(uint32_t thread_index, Signal signal, uint64_t delay_ms);
  // Pushes onto thread `thread_index`'s queue and wakes it if asleep. On failure
  // `signal` is left untouched.
  bool push(uint32_t thread_index, Signal& signal);
  void run_thread(BlockThread& thread);
  void fire_due_timers(BlockThread& thread);
  // True if a signal (or stop) turned up within options_.idle_spin_ns.
  bool spin_for_work(BlockThread& thread);
  void sleep_until_work(BlockThread& thread);
  // Wakes `thread` if it sleeps (on its condition variable or in its poller).
  void wake(BlockThread& thread);

  // Constant after create().
  const ThreadRuntimeOptions options_;
  const Clock& clock_;
  const uint64_t seed_;
  std::vector<std::unique_ptr<BlockThread>> threads_;

  // Constant after start(): written only by the controlling thread before the threads
  // exist, then read concurrently without locks.
  std::vector<std::unique_ptr<Block>> blocks_;
  std::vector<std::unique_ptr<Context>> contexts_;
  std::unordered_map<uint32_t, Route> routes_;  // key: BlockAddress::local_key()
  RemoteSender* remote_sender_ = nullptr;
  SeededRandom seed_source_;

  // Controlling thread only.
  bool started_ = false;
  bool stopped_ = false;

  // Installed by a block (its BlockContext) on its own thread, read by every block
  // thread: the filter object itself is thread-safe (remote_signal_filter.h).
  std::atomic<RemoteSignalFilter*> remote_filter_{nullptr};
  std::atomic<bool> stop_requested_{false};
  std::atomic<uint64_t> refused_queue_full_{0};
  std::atomic<uint64_t> refused_timers_full_{0};
};

}  // namespace duo::kernel
