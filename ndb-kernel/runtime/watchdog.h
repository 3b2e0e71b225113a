// Watchdog: finds a block thread stuck in one signal handler, and a process that did not
// run at all for a while (NDB's WatchDog with TimeBetweenWatchDogCheck). Pure logic over
// samples of ThreadRuntime::thread_activity() taken every check interval by whoever
// owns the sampling thread (duo_datad's WatchdogThread); it reads no clock itself, so a
// test feeds it virtual times.
//
// Stuck thread: a handler is running (running_signal set) and handlers_started has not
// moved since the previous sample: that one handler has run at least since then. Once it
// has run report_after_ms the finding is reported (once per stuck handler); past
// stop_after_ms the node must stop itself (NDB: the watchdog kills a node whose thread
// is stuck): its peers may still hear its heartbeats from another thread while every
// transaction touching that thread's fragments waits — a gray failure that only the node
// itself can see. While the node is still starting the stop limit is
// stop_after_while_starting_ms (a start may legitimately run long handlers).
//
// Process stall: two samples further apart than stall_after_ms mean the sampling thread
// itself did not run — the process was frozen (SIGSTOP, a paused VM) or starved of CPU.
// Reported, never a reason to stop: whether the cluster went on without this node is the
// membership's to learn (a node declared dead meanwhile learns it and stops:
// membership_block.h "Shutdown"). What ran during the gap is not counted as stuck.
//
// Thread-safety: none; one sampling thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ndb-kernel/runtime/thread_runtime.h"

namespace duo::kernel {

struct WatchdogLimits {
  uint64_t check_interval_ms = 100;
  uint64_t report_after_ms = 1000;  // TimeBetweenWatchDogCheck
  uint64_t stop_after_ms = 3000;    // 3 x TimeBetweenWatchDogCheck
  uint64_t stop_after_while_starting_ms = 60'000;
  uint64_t stall_after_ms = 1000;  // a gap between samples this long is a process stall
};

struct WatchdogFinding {
  enum class Kind : uint8_t { kThreadStuck, kProcessStalled };
  Kind kind = Kind::kThreadStuck;
  bool stop = false;  // the node must stop itself now
  uint32_t thread_index = 0;
  std::string thread_name;
  SignalId signal = kNoSignal;
  uint16_t block = 0;
  uint64_t duration_ms = 0;  // how long the handler has run / the process did not run

  // One log line's text.
  std::string describe() const;
};

class Watchdog {
 public:
  explicit Watchdog(WatchdogLimits limits) : limits_(limits) {}

  // Takes one sample at `now_ns` (monotonic) and returns what it shows; `starting`: the
  // node has not started yet (the longer stop limit applies).
  std::vector<WatchdogFinding> observe(uint64_t now_ns, const std::vector<ThreadActivity>& threads,
                                       bool starting);
  const WatchdogLimits& limits() const { return limits_; }

 private:
  struct Watched {
    uint64_t handlers_started = 0;
    SignalId signal = kNoSignal;
    uint64_t stuck_since_ns = 0;  // 0: not stuck
    bool reported = false;
  };

  const WatchdogLimits limits_;
  std::vector<Watched> watched_;  // by thread index
  uint64_t last_sample_ns_ = 0;
};

}  // namespace duo::kernel
