// WatchdogThread: duo_datad's watchdog (NDB's WatchDog thread). Every check interval it
// samples the runtime's block threads (ThreadRuntime::thread_activity) and runs the
// kernel::Watchdog over them (ndb-kernel/runtime/watchdog.h): a handler stuck past
// TimeBetweenWatchDogCheck is logged (WARNING), one stuck past three times that (past a
// minute while the node starts) stops the process at once with exit code 1 — a clean
// stop would wait for the stuck thread — and a gap in its own sampling (the process was
// frozen or starved) is logged. Its own OS thread, so no block's work can delay it.
//
// Thread-safety: start() and stop() from the controlling thread; the sampling runs on
// the watchdog's own thread and only reads the runtime's atomics.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "ndb-kernel/runtime/thread_runtime.h"
#include "ndb-kernel/runtime/watchdog.h"

namespace duo::datad {

class WatchdogThread {
 public:
  // `starting` tells (from the watchdog's thread) whether the node is still starting.
  WatchdogThread(const kernel::ThreadRuntime* runtime, kernel::WatchdogLimits limits,
                 uint16_t node_id, std::function<bool()> starting);
  ~WatchdogThread();
  WatchdogThread(const WatchdogThread&) = delete;
  WatchdogThread& operator=(const WatchdogThread&) = delete;

  void start();
  // Ends the sampling and joins the thread. Idempotent.
  void stop();

 private:
  void run();

  // Constant after construction.
  const kernel::ThreadRuntime* const runtime_;
  const uint16_t node_id_;
  const std::function<bool()> starting_;

  kernel::Watchdog watchdog_;  // the watchdog thread only
  std::thread thread_;         // controlling thread only
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_requested_ = false;  // GUARDED_BY(mutex_)
};

}  // namespace duo::datad
