// WatchdogThread: see watchdog_thread.h.
#include "ndb-kernel/datad/watchdog_thread.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "ndb-kernel/common/clock.h"
#include "ndb-kernel/common/logging.h"

namespace duo::datad {
namespace {
constexpr const char* kLog = "datad";
constexpr int kExitError = 1;  // as duo_datad's other abnormal stops
}  // namespace

WatchdogThread::WatchdogThread(const kernel::ThreadRuntime* runtime, kernel::WatchdogLimits limits,
                               uint16_t node_id, std::function<bool()> starting)
    : runtime_(runtime), node_id_(node_id), starting_(std::move(starting)), watchdog_(limits) {}

WatchdogThread::~WatchdogThread() {
  stop();
}

void WatchdogThread::start() {
  thread_ = std::thread([this] { run(); });
}

void WatchdogThread::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WatchdogThread::run() {
  const auto interval = std::chrono::milliseconds(watchdog_.limits().check_interval_ms);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, interval, [this] { return stop_requested_; })) {
    const uint64_t now_ns = real_clock().now_ns();
    for (const kernel::WatchdogFinding& finding :
         watchdog_.observe(now_ns, runtime_->thread_activity(), starting_())) {
      if (!finding.stop) {
        DUO_LOG(WARNING, kLog) << "Node " << node_id_ << ": " << finding.describe();
        continue;
      }
      // The stuck thread would never let a clean stop finish; what is committed is on
      // the other replicas and in the redo log, as after a crash.
      DUO_LOG(ERROR, kLog) << "Node " << node_id_ << ": " << finding.describe();
      std::fflush(nullptr);
      std::_Exit(kExitError);
    }
  }
}

}  // namespace duo::datad
