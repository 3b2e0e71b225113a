// Clock and TimerService: the only ways kernel code may learn the time or wait for it.
//
// Blocks never read std::chrono clocks, sleep, or start threads to wait (DESIGN.md §3):
// they are handed a Clock and a TimerService, so the deterministic simulator can run a
// whole cluster in one thread on virtual time and a seed reproduces a run bit for bit.
// RealClock reads the OS clocks (the one place in the kernel allowed to); ManualClock
// only moves when told, for tests and the simulator. PolledTimerService keeps a timer
// queue against any Clock and runs due callbacks only when its owner calls run_due(),
// so it never needs a thread of its own.
//
// Thread-safety: RealClock and ManualClock are safe for concurrent use (ManualClock's
// time is atomic; advancing it from several threads is allowed but rarely meaningful).
// PolledTimerService is safe for concurrent schedule/cancel/run_due; callbacks run on
// the thread that calls run_due(), without the internal lock held, so a callback may
// schedule or cancel timers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace duo {

inline constexpr uint64_t kNanosPerMicro = 1000;
inline constexpr uint64_t kNanosPerMilli = 1000 * 1000;
inline constexpr uint64_t kNanosPerSecond = 1000 * 1000 * 1000;

// A source of time. Monotonic time is for measuring intervals and deadlines; wall time
// is only for humans (log lines, file names) and may jump, so never compute with it.
class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic nanoseconds since an unspecified origin; never decreases.
  virtual uint64_t now_ns() const = 0;
  // Nanoseconds since the Unix epoch (UTC), for log timestamps only.
  virtual int64_t wall_time_ns() const = 0;

  uint64_t now_ms() const { return now_ns() / kNanosPerMilli; }
};

// Clock backed by std::chrono::steady_clock and system_clock.
class RealClock final : public Clock {
 public:
  uint64_t now_ns() const override;
  int64_t wall_time_ns() const override;
};

// The process-wide RealClock: the default for logging and for the real runtime.
Clock& real_clock();

// A clock whose time moves only through advance_*() / set_now_ns(). Wall time moves in
// step with monotonic time from a fixed start, so log lines in tests are reproducible.
class ManualClock final : public Clock {
 public:
  // 2020-01-01T00:00:00Z: a fixed, recognisable wall time for simulated runs.
  static constexpr int64_t kDefaultWallStartNs = int64_t{1577836800} * int64_t{kNanosPerSecond};

  explicit ManualClock(uint64_t start_ns = 0, int64_t wall_start_ns = kDefaultWallStartNs)
      : start_ns_(start_ns), wall_start_ns_(wall_start_ns), now_ns_(start_ns) {}

  uint64_t now_ns() const override { return now_ns_.load(std::memory_order_acquire); }
  int64_t wall_time_ns() const override {
    return wall_start_ns_ + static_cast<int64_t>(now_ns() - start_ns_);
  }

  void advance_ns(uint64_t delta_ns) { now_ns_.fetch_add(delta_ns, std::memory_order_acq_rel); }
  void advance_ms(uint64_t delta_ms) { advance_ns(delta_ms * kNanosPerMilli); }
  // Jump to an absolute time. Aborts if `now_ns` is earlier than the current time,
  // because a monotonic clock going backwards would break every deadline computation.
  void set_now_ns(uint64_t now_ns);

 private:
  // Constant after construction.
  const uint64_t start_ns_;
  const int64_t wall_start_ns_;
  std::atomic<uint64_t> now_ns_;
};

// Identifies a scheduled timer. kNoTimer is never returned by schedule_*.
using TimerId = uint64_t;
inline constexpr TimerId kNoTimer = 0;
using TimerCallback = std::function<void()>;

// Schedules callbacks after a delay on the owner's clock. The real runtime and the
// simulator each provide one; blocks only see this interface.
class TimerService {
 public:
  virtual ~TimerService() = default;
  // Runs `callback` once, no earlier than `delay_ns` from now. Returns the timer's id.
  virtual TimerId schedule_after_ns(uint64_t delay_ns, TimerCallback callback) = 0;
  // Prevents a pending timer from running. True if it was pending; false if it already
  // ran, was already cancelled, or never existed (cancelling late is not an error,
  // because a timer and its cancellation race naturally in message-driven code).
  virtual bool cancel(TimerId id) = 0;

  TimerId schedule_after_ms(uint64_t delay_ms, TimerCallback callback) {
    return schedule_after_ns(saturating_mul(delay_ms, kNanosPerMilli), std::move(callback));
  }

 protected:
  static uint64_t saturating_mul(uint64_t a, uint64_t b) {
    uint64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
  }
};

// A timer queue on any Clock, driven by explicit run_due() calls from its owner's loop
// (the runtime's event loop, or the simulator after it advances a ManualClock).
// Timers with equal deadlines run in the order they were scheduled, so runs are
// deterministic.
class PolledTimerService final : public TimerService {
 public:
  explicit PolledTimerService(const Clock& clock) : clock_(clock) {}
  PolledTimerService(const PolledTimerService&) = delete;
  PolledTimerService& operator=(const PolledTimerService&) = delete;

  TimerId schedule_after_ns(uint64_t delay_ns, TimerCallback callback) override;
  // Runs `callback` once the clock reaches `deadline_ns` (absolute, Clock::now_ns()).
  TimerId schedule_at_ns(uint64_t deadline_ns, TimerCallback callback);
  bool cancel(TimerId id) override;

  // Runs every timer whose deadline is <= now (read once at entry), earliest first, and
  // returns how many ran. Timers scheduled by those callbacks wait for the next call
  // even if already due: this bounds one call's work and stops a zero-delay timer that
  // reschedules itself from looping forever.
  size_t run_due();

  // Deadline of the earliest pending timer, if any: the owner sleeps (or the simulator
  // jumps its clock) until then.
  std::optional<uint64_t> next_deadline_ns() const;
  size_t pending_count() const;

 private:
  using Key = std::pair<uint64_t, TimerId>;  // (deadline_ns, id): id breaks ties FIFO.

  // Constant after construction.
  const Clock& clock_;

  mutable std::mutex mutex_;
  TimerId next_id_ = 1;                                // GUARDED_BY(mutex_)
  std::map<Key, TimerCallback> queue_;                 // GUARDED_BY(mutex_)
  std::unordered_map<TimerId, uint64_t> deadline_of_;  // GUARDED_BY(mutex_)
};

}  // namespace duo
