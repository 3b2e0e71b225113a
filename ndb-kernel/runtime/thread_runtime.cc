// ThreadRuntime: block threads, their queues, timer heaps and the sleep/wake protocol.
//
// The sleep/wake protocol (why a sleeping thread never misses a signal):
//   consumer                                  producer
//   sleeping = true                           queue.try_push(signal)  (release publish)
//   fence(seq_cst)                            fence(seq_cst)
//   if queue non-empty: don't sleep           if sleeping: lock; wake_pending = true;
//   else lock; wait for wake_pending                        notify
// This is the store-buffering pattern: with a seq_cst fence between each side's store
// and its load, at least one side sees the other's store. Either the consumer sees the
// new signal and stays awake, or the producer sees `sleeping` and wakes it (the
// wake_pending flag under the mutex covers a notify that lands before the wait). The
// mutex is only touched when the consumer is idle, so the busy path is lock-free.
//
// A thread with a ThreadPoller runs the same protocol with the poller in place of the
// mutex and condition variable: it waits in poller->poll() (epoll, for the
// transporter), and the producer that turns `sleeping` off calls poller->wake() (an
// eventfd write), which makes that wait return. A wake-up that arrives before the wait
// starts is not lost either: the eventfd stays readable until the poll reads it.
#include "ndb-kernel/runtime/thread_runtime.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/common/random.h"
#include "ndb-kernel/runtime/kernel_check.h"
#include "ndb-kernel/runtime/mpsc_queue.h"

namespace duo::kernel {
namespace {

constexpr const char* kLogComponent = "runtime";

struct DelayedSignal {
  uint64_t deadline_ns;
  uint64_t sequence;  // ties on deadline fire in scheduling order
  Signal signal;
};

// std::push_heap builds a max-heap; "greater" puts the earliest deadline on top.
struct FiresLater {
  bool operator()(const DelayedSignal& a, const DelayedSignal& b) const {
    if (a.deadline_ns != b.deadline_ns) return a.deadline_ns > b.deadline_ns;
    return a.sequence > b.sequence;
  }
};

uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

// The block thread running on this OS thread (null elsewhere): a thread that pushes onto
// its own queue never wakes itself — it drains the queue as soon as it returns to its
// loop (what its poller receives while it waits in it lands there).
thread_local const void* t_current_block_thread = nullptr;

}  // namespace

class ThreadRuntime::BlockThread {
 public:
  BlockThread(uint32_t index, std::string name, size_t queue_capacity)
      : index(index), name(std::move(name)), queue(queue_capacity) {}

  // Constant after construction.
  const uint32_t index;
  const std::string name;

  BoundedMpscQueue<Signal> queue;  // producers: any thread; consumer: this thread
  std::vector<Block*> blocks;      // constant after start()
  ThreadPoller* poller = nullptr;  // constant after start()
  uint64_t last_poll_ns = 0;       // this thread only
  std::thread os_thread;           // controlling thread only

  // Owned by this thread (only its blocks arm timers, from their handlers).
  std::vector<DelayedSignal> timer_heap;
  uint64_t next_timer_sequence = 0;

  // Sleep/wake protocol; see the top of this file.
  std::atomic<bool> sleeping{false};
  std::mutex wake_mutex;
  std::condition_variable wake_cv;
  bool wake_pending = false;  // GUARDED_BY(wake_mutex)

  // What the watchdog samples (watchdog.h), relaxed: signals whose handler started, and
  // the one running now (kNoSignal when none) with its receiving block.
  std::atomic<uint64_t> handlers_started{0};
  std::atomic<SignalId> running_signal{kNoSignal};
  std::atomic<uint16_t> running_block{0};

  // Statistics, relaxed: only read for reporting.
  std::atomic<uint64_t> delivered{0};
  std::atomic<uint64_t> delayed_retried{0};
  std::atomic<uint64_t> dropped_at_stop{0};
  std::atomic<uint64_t> missed_wakes{0};
};

class ThreadRuntime::Context final : public BlockContext {
 public:
  Context(ThreadRuntime& runtime, uint32_t thread_index, uint64_t seed)
      : runtime_(runtime), thread_index_(thread_index), random_(seed) {}

  Status send(Signal signal) override { return runtime_.route(signal); }
  Status send_delayed(Signal signal, uint64_t delay_ms) override {
    return runtime_.schedule_delayed(thread_index_, std::move(signal), delay_ms);
  }
  const Clock& clock() const override { return runtime_.clock_; }
  Random& random() override { return random_; }
  uint16_t node_id() const override { return runtime_.options_.node_id; }
  void set_remote_signal_filter(RemoteSignalFilter* filter) override {
    runtime_.remote_filter_.store(filter, std::memory_order_release);
  }

 private:
  ThreadRuntime& runtime_;
  const uint32_t thread_index_;
  SeededRandom random_;
};

Result<std::unique_ptr<ThreadRuntime>> ThreadRuntime::create(ThreadRuntimeOptions options) {
  const std::string layout_error = options.layout.validate();
  if (!layout_error.empty()) return Status(ErrorCode::kConfigError, layout_error);
  const size_t capacity = options.queue_capacity_signals;
  if (capacity < 2 || (capacity & (capacity - 1)) != 0) {
    return Status(ErrorCode::kConfigError,
                  "queue capacity must be a power of two >= 2, not " + std::to_string(capacity));
  }
  if (options.delayed_signals_per_thread_max == 0 || options.signals_per_batch_max == 0) {
    return Status(ErrorCode::kConfigError, "timer and batch limits must be positive");
  }
  if (options.node_id == 0) return Status(ErrorCode::kConfigError, "node id 0 is reserved");
  const Clock& clock = options.clock ? *options.clock : real_clock();
  uint64_t seed = options.seed;
  if (seed == 0) {
    // The runtime (not a block) may look at the clock; the value is logged so the run's
    // random choices can be replayed.
    seed = clock.now_ns() ^ static_cast<uint64_t>(clock.wall_time_ns());
    if (seed == 0) seed = 1;
  }
  DUO_LOG(INFO, kLogComponent) << "node " << options.node_id << ": threads "
                               << options.layout.describe() << ", seed " << seed;
  return std::unique_ptr<ThreadRuntime>(new ThreadRuntime(std::move(options), seed));
}

ThreadRuntime::ThreadRuntime(ThreadRuntimeOptions options, uint64_t seed)
    : options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : real_clock()),
      seed_(seed),
      seed_source_(seed) {
  const std::vector<std::string> names = options_.layout.thread_names();
  for (uint32_t i = 0; i < names.size(); ++i) {
    threads_.push_back(std::make_unique<BlockThread>(i, names[i], options_.queue_capacity_signals));
  }
}

ThreadRuntime::~ThreadRuntime() {
  stop();
  // Blocks go before their contexts (a block's destructor may still look at its address,
  // never at the context), and both after every thread has been joined.
  blocks_.clear();
  contexts_.clear();
}

Status ThreadRuntime::add_block(std::unique_ptr<Block> block, uint32_t thread_index) {
  if (started_) return Status(ErrorCode::kInvalidArgument, "add_block after start()");
  if (block == nullptr) return Status(ErrorCode::kInvalidArgument, "null block");
  if (thread_index >= threads_.size()) {
    return Status(ErrorCode::kInvalidArgument, "thread index " + std::to_string(thread_index) +
                                                   " out of range (" +
                                                   std::to_string(threads_.size()) + " threads)");
  }
  const uint32_t key = block->address().local_key();
  if (routes_.contains(key)) {
    return Status(ErrorCode::kInvalidArgument,
                  "block " + std::to_string(block->address().block) + " instance " +
                      std::to_string(block->address().instance) + " added twice");
  }
  auto context = std::make_unique<Context>(*this, thread_index, seed_source_.fork().next_u64());
  block->attach(*context);
  routes_.emplace(key, Route{block.get(), thread_index});
  threads_[thread_index]->blocks.push_back(block.get());
  contexts_.push_back(std::move(context));
  blocks_.push_back(std::move(block));
  return Status::OK();
}

void ThreadRuntime::set_remote_sender(RemoteSender* sender) {
  DUO_KERNEL_CHECK(!started_, "set_remote_sender after start()");
  remote_sender_ = sender;
}

Status ThreadRuntime::set_thread_poller(uint32_t thread_index, ThreadPoller* poller) {
  if (started_) return Status(ErrorCode::kInvalidArgument, "set_thread_poller after start()");
  if (thread_index >= threads_.size() || poller == nullptr) {
    return Status(ErrorCode::kInvalidArgument,
                  "no thread " + std::to_string(thread_index) + " for a poller");
  }
  if (threads_[thread_index]->poller != nullptr) {
    return Status(ErrorCode::kInvalidArgument,
                  "thread " + threads_[thread_index]->name + " has a poller already");
  }
  threads_[thread_index]->poller = poller;
  return Status::OK();
}

Status ThreadRuntime::start() {
  if (started_) return Status(ErrorCode::kInvalidArgument, "ThreadRuntime started twice");
  started_ = true;
  for (auto& thread : threads_) {
    BlockThread* t = thread.get();
    // std::thread reports failure to create a thread (out of resources) by exception;
    // this is the one place the runtime converts one into a Status.
    try {
      t->os_thread = std::thread([this, t] { run_thread(*t); });
    } catch (const std::system_error& e) {
      stop();
      return Status(ErrorCode::kInternal, "cannot start thread " + t->name + ": " + e.what());
    }
    // Thread names show in top/gdb/perf; Linux caps them at 15 characters.
    const std::string os_name = ("duo-" + t->name).substr(0, 15);
    pthread_setname_np(t->os_thread.native_handle(), os_name.c_str());
    if (t->index < options_.thread_cpus.size() && !options_.thread_cpus[t->index].empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      std::string list;
      for (uint32_t cpu : options_.thread_cpus[t->index]) {
        if (cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
        list += (list.empty() ? "" : ",") + std::to_string(cpu);
      }
      const int rc = pthread_setaffinity_np(t->os_thread.native_handle(), sizeof(set), &set);
      if (rc != 0) {
        stop();
        return Status(ErrorCode::kConfigError, "cannot bind thread " + t->name + " to CPU(s) " +
                                                   list + ": " + std::strerror(rc));
      }
    }
  }
  return Status::OK();
}

void ThreadRuntime::stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  stop_requested_.store(true, std::memory_order_release);
  for (auto& thread : threads_) {
    {
      std::lock_guard<std::mutex> lock(thread->wake_mutex);
      thread->wake_pending = true;
      thread->wake_cv.notify_one();
    }
    if (thread->poller != nullptr) thread->poller->wake();
  }
  for (auto& thread : threads_) {
    if (thread->os_thread.joinable()) thread->os_thread.join();
  }
  // Every thread is gone: count what producers left behind after their receiver exited.
  Signal leftover;
  for (auto& thread : threads_) {
    uint64_t dropped = 0;
    while (thread->queue.try_pop(leftover)) ++dropped;
    dropped += thread->timer_heap.size();
    thread->timer_heap.clear();
    thread->dropped_at_stop.fetch_add(dropped, std::memory_order_relaxed);
  }
}

Status ThreadRuntime::send_from_outside(Signal signal) {
  return route(signal);
}

Status ThreadRuntime::try_send_from_outside(Signal& signal) {
  return route(signal);
}

Status ThreadRuntime::route(Signal& signal) {
  DUO_RETURN_IF_ERROR(signal.check_sendable());
  const BlockAddress& receiver = signal.receiver();
  if (receiver.node_id != options_.node_id) {
    if (remote_sender_ == nullptr) {
      return Status(ErrorCode::kNotSupported,
                    "no transport: cannot send " + signal.describe() + " to another node");
    }
    return remote_sender_->send_remote(std::move(signal));
  }
  auto it = routes_.find(receiver.local_key());
  if (it == routes_.end()) {
    return Status(ErrorCode::kInvalidArgument,
                  "no block " + receiver.to_string() + " for " + signal_name(signal.id()));
  }
  if (!push(it->second.thread_index, signal)) {
    refused_queue_full_.fetch_add(1, std::memory_order_relaxed);
    return Status(ErrorCode::kTemporary,
                  "signal queue of thread " + threads_[it->second.thread_index]->name + " is full");
  }
  return Status::OK();
}

Status ThreadRuntime::schedule_delayed(uint32_t thread_index, Signal signal, uint64_t delay_ms) {
  DUO_RETURN_IF_ERROR(signal.check_sendable());
  const BlockAddress& receiver = signal.receiver();
  if (receiver.node_id != options_.node_id) {
    return Status(ErrorCode::kInvalidArgument, "delayed signals must stay on their node");
  }
  if (!routes_.contains(receiver.local_key())) {
    return Status(ErrorCode::kInvalidArgument,
                  "no block " + receiver.to_string() + " for " + signal_name(signal.id()));
  }
  BlockThread& thread = *threads_[thread_index];
  if (thread.timer_heap.size() >= options_.delayed_signals_per_thread_max) {
    refused_timers_full_.fetch_add(1, std::memory_order_relaxed);
    return Status(ErrorCode::kTemporary, "delayed signals of thread " + thread.name + " full");
  }
  const uint64_t delay_ns =
      delay_ms > UINT64_MAX / kNanosPerMilli ? UINT64_MAX : delay_ms * kNanosPerMilli;
  thread.timer_heap.push_back(DelayedSignal{saturating_add(clock_.now_ns(), delay_ns),
                                            thread.next_timer_sequence++, std::move(signal)});
  std::push_heap(thread.timer_heap.begin(), thread.timer_heap.end(), FiresLater{});
  return Status::OK();
}

bool ThreadRuntime::push(uint32_t thread_index, Signal& signal) {
  BlockThread& thread = *threads_[thread_index];
  if (!thread.queue.try_push(signal)) return false;
  if (t_current_block_thread == &thread) return true;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Only the producer that turns `sleeping` off pays for the lock and the futex wake;
  // the others see the thread already being woken. (The consumer clears the flag itself
  // once awake, so a stale true costs at most one spurious loop turn.)
  if (thread.sleeping.load(std::memory_order_relaxed) &&
      thread.sleeping.exchange(false, std::memory_order_relaxed)) {
    wake(thread);
  }
  return true;
}

void ThreadRuntime::wake(BlockThread& thread) {
  if (thread.poller != nullptr) return thread.poller->wake();
  std::lock_guard<std::mutex> lock(thread.wake_mutex);
  thread.wake_pending = true;
  thread.wake_cv.notify_one();
}

void ThreadRuntime::run_thread(BlockThread& thread) {
  t_current_block_thread = &thread;
  for (Block* block : thread.blocks) block->on_start();
  Signal signal;
  while (!stop_requested_.load(std::memory_order_acquire)) {
    const size_t timers_before = thread.timer_heap.size();
    fire_due_timers(thread);
    bool did_work = thread.timer_heap.size() != timers_before;

    size_t delivered = 0;
    while (delivered < options_.signals_per_batch_max && thread.queue.try_pop(signal)) {
      const Route& route = routes_.at(signal.receiver().local_key());
      DUO_KERNEL_CHECK(route.thread_index == thread.index, "signal on the wrong thread");
      if (!filtered_out(signal)) {
        thread.running_block.store(signal.receiver().block, std::memory_order_relaxed);
        thread.running_signal.store(signal.id(), std::memory_order_relaxed);
        thread.handlers_started.fetch_add(1, std::memory_order_relaxed);
        route.block->deliver(signal);
        thread.running_signal.store(kNoSignal, std::memory_order_relaxed);
      }
      ++delivered;
    }
    if (delivered > 0) {
      thread.queue.publish_consumer_position();
      thread.delivered.fetch_add(delivered, std::memory_order_relaxed);
      did_work = true;
    }
    if (did_work) {
      // Busy: look at the network now and then without waiting. What it delivers to
      // this thread's blocks lands on the queue drained by the next turn.
      if (thread.poller != nullptr) {
        const uint64_t now_ns = clock_.now_ns();
        if (now_ns - thread.last_poll_ns >= options_.busy_poll_interval_ns) {
          thread.last_poll_ns = now_ns;
          thread.poller->poll(0);
        }
      }
      continue;
    }
    if (!spin_for_work(thread)) sleep_until_work(thread);
  }
}

bool ThreadRuntime::filtered_out(const Signal& signal) const {
  if (signal.sender().node_id == options_.node_id) return false;
  RemoteSignalFilter* filter = remote_filter_.load(std::memory_order_acquire);
  return filter != nullptr && filter->drops(signal);
}

void ThreadRuntime::fire_due_timers(BlockThread& thread) {
  if (thread.timer_heap.empty()) return;
  const uint64_t now_ns = clock_.now_ns();
  auto& heap = thread.timer_heap;
  while (!heap.empty() && heap.front().deadline_ns <= now_ns) {
    std::pop_heap(heap.begin(), heap.end(), FiresLater{});
    DelayedSignal due = std::move(heap.back());
    heap.pop_back();
    const Route& route = routes_.at(due.signal.receiver().local_key());
    if (!push(route.thread_index, due.signal)) {
      // The receiver is overloaded; nobody can be told, so try again shortly. The new
      // deadline is in the future, so this loop still ends.
      due.deadline_ns = saturating_add(now_ns, kDelayedRetryDelayNs);
      due.sequence = thread.next_timer_sequence++;
      heap.push_back(std::move(due));
      std::push_heap(heap.begin(), heap.end(), FiresLater{});
      thread.delayed_retried.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

bool ThreadRuntime::spin_for_work(BlockThread& thread) {
  // A signal usually follows the last one within microseconds under load (the answer to
  // what this thread just sent). Sleeping costs a futex wait here and a futex wake in
  // the producer, so with SchedulerSpinTimer set look again for that long first,
  // yielding the core to any other runnable thread in between.
  if (options_.idle_spin_ns == 0) return false;
  const uint64_t until_ns = saturating_add(clock_.now_ns(), options_.idle_spin_ns);
  do {
    // The receive thread looks at the network too (what arrives lands on its queue).
    if (thread.poller != nullptr) {
      thread.poller->poll(0);
    } else {
      std::this_thread::yield();
    }
    if (!thread.queue.consumer_sees_empty()) return true;
    if (stop_requested_.load(std::memory_order_acquire)) return true;
  } while (clock_.now_ns() < until_ns);
  return false;
}

void ThreadRuntime::sleep_until_work(BlockThread& thread) {
  thread.sleeping.store(true, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!thread.queue.consumer_sees_empty() || stop_requested_.load(std::memory_order_acquire)) {
    thread.sleeping.store(false, std::memory_order_relaxed);
    return;
  }
  uint64_t wait_ns = kIdleSleepMaxNs;
  if (!thread.timer_heap.empty()) {
    const uint64_t now_ns = clock_.now_ns();
    const uint64_t deadline_ns = thread.timer_heap.front().deadline_ns;
    wait_ns = std::min(wait_ns, deadline_ns > now_ns ? deadline_ns - now_ns : 0);
  }
  if (thread.poller != nullptr) {
    // Waits in epoll (the transporter); a producer's wake() or arriving bytes end it.
    thread.last_poll_ns = clock_.now_ns();
    thread.poller->poll(wait_ns);
  } else if (wait_ns > 0) {
    std::unique_lock<std::mutex> lock(thread.wake_mutex);
    const bool woken = thread.wake_cv.wait_for(lock, std::chrono::nanoseconds(wait_ns),
                                               [&thread] { return thread.wake_pending; });
    thread.wake_pending = false;
    if (!woken && wait_ns == kIdleSleepMaxNs && !thread.queue.consumer_sees_empty()) {
      thread.missed_wakes.fetch_add(1, std::memory_order_relaxed);
    }
  }
  thread.sleeping.store(false, std::memory_order_relaxed);
}

std::vector<ThreadActivity> ThreadRuntime::thread_activity() const {
  std::vector<ThreadActivity> activity;
  activity.reserve(threads_.size());
  for (const auto& thread : threads_) {
    ThreadActivity one;
    one.thread_index = thread->index;
    one.thread_name = thread->name;
    one.handlers_started = thread->handlers_started.load(std::memory_order_relaxed);
    one.running_signal = thread->running_signal.load(std::memory_order_relaxed);
    one.running_block = thread->running_block.load(std::memory_order_relaxed);
    activity.push_back(std::move(one));
  }
  return activity;
}

ThreadRuntimeStats ThreadRuntime::stats() const {
  ThreadRuntimeStats stats;
  for (const auto& thread : threads_) {
    stats.delivered += thread->delivered.load(std::memory_order_relaxed);
    stats.delayed_retried += thread->delayed_retried.load(std::memory_order_relaxed);
    stats.dropped_at_stop += thread->dropped_at_stop.load(std::memory_order_relaxed);
    stats.missed_wakes += thread->missed_wakes.load(std::memory_order_relaxed);
  }
  stats.refused_queue_full = refused_queue_full_.load(std::memory_order_relaxed);
  stats.refused_timers_full = refused_timers_full_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace duo::kernel
