// RealClock, ManualClock and PolledTimerService. This file is the one place in the
// kernel allowed to read the OS clocks; everything else goes through Clock.
#include "ndb-kernel/common/clock.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace duo {

uint64_t RealClock::now_ns() const {
  auto since_origin = std::chrono::steady_clock::now().time_since_epoch();
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(since_origin).count());
}

int64_t RealClock::wall_time_ns() const {
  auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<int64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count());
}

Clock& real_clock() {
  // Function-local static: constructed on first use, so logging during static
  // initialisation of other translation units still finds a clock.
  static RealClock clock;
  return clock;
}

void ManualClock::set_now_ns(uint64_t now_ns) {
  uint64_t current_ns = now_ns_.load(std::memory_order_acquire);
  do {
    if (now_ns < current_ns) {
      std::fprintf(stderr, "ManualClock::set_now_ns: time moved backwards (%llu < %llu)\n",
                   static_cast<unsigned long long>(now_ns),
                   static_cast<unsigned long long>(current_ns));
      std::abort();
    }
  } while (!now_ns_.compare_exchange_weak(current_ns, now_ns, std::memory_order_acq_rel));
}

TimerId PolledTimerService::schedule_after_ns(uint64_t delay_ns, TimerCallback callback) {
  uint64_t deadline_ns = 0;
  // A huge delay means "effectively never"; saturate instead of wrapping to the past.
  if (__builtin_add_overflow(clock_.now_ns(), delay_ns, &deadline_ns)) deadline_ns = UINT64_MAX;
  return schedule_at_ns(deadline_ns, std::move(callback));
}

TimerId PolledTimerService::schedule_at_ns(uint64_t deadline_ns, TimerCallback callback) {
  std::lock_guard<std::mutex> lock(mutex_);
  TimerId id = next_id_++;
  queue_.emplace(Key{deadline_ns, id}, std::move(callback));
  deadline_of_.emplace(id, deadline_ns);
  return id;
}

bool PolledTimerService::cancel(TimerId id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = deadline_of_.find(id);
  if (it == deadline_of_.end()) return false;
  queue_.erase(Key{it->second, id});
  deadline_of_.erase(it);
  return true;
}

size_t PolledTimerService::run_due() {
  const uint64_t now_ns = clock_.now_ns();
  // Snapshot the due keys first; each is re-checked before running because an earlier
  // callback in this batch may have cancelled it.
  std::vector<Key> due;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = queue_.begin(); it != queue_.end() && it->first.first <= now_ns; ++it) {
      due.push_back(it->first);
    }
  }
  size_t ran = 0;
  for (const Key& key : due) {
    TimerCallback callback;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = queue_.find(key);
      if (it == queue_.end()) continue;  // cancelled by an earlier callback
      callback = std::move(it->second);
      queue_.erase(it);
      deadline_of_.erase(key.second);
    }
    // Run without the lock: the callback may schedule or cancel timers.
    if (callback) callback();
    ++ran;
  }
  return ran;
}

std::optional<uint64_t> PolledTimerService::next_deadline_ns() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (queue_.empty()) return std::nullopt;
  return queue_.begin()->first.first;
}

size_t PolledTimerService::pending_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

}  // namespace duo
