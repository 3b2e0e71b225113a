// Watchdog: see watchdog.h.
#include "ndb-kernel/runtime/watchdog.h"

#include <sstream>

namespace duo::kernel {

std::string WatchdogFinding::describe() const {
  std::ostringstream out;
  if (kind == Kind::kProcessStalled) {
    out << "watchdog: the process did not run for " << duration_ms
        << " ms (frozen or starved of CPU)";
    return out.str();
  }
  out << "watchdog: thread " << thread_index << " (" << thread_name << ") stuck for " << duration_ms
      << " ms in " << signal_name(signal) << " of block " << block;
  if (stop) out << ": stopping the node";
  return out.str();
}

std::vector<WatchdogFinding> Watchdog::observe(uint64_t now_ns,
                                               const std::vector<ThreadActivity>& threads,
                                               bool starting) {
  std::vector<WatchdogFinding> findings;
  const uint64_t previous_ns = last_sample_ns_;
  last_sample_ns_ = now_ns;
  if (watched_.size() < threads.size()) watched_.resize(threads.size());
  const bool stalled =
      previous_ns != 0 && now_ns - previous_ns >= limits_.stall_after_ms * kNanosPerMilli;
  if (stalled) {
    WatchdogFinding finding;
    finding.kind = WatchdogFinding::Kind::kProcessStalled;
    finding.duration_ms = (now_ns - previous_ns) / kNanosPerMilli;
    findings.push_back(finding);
  }
  const uint64_t stop_after_ms =
      starting ? limits_.stop_after_while_starting_ms : limits_.stop_after_ms;
  for (size_t i = 0; i < threads.size(); ++i) {
    const ThreadActivity& now = threads[i];
    Watched& watched = watched_[i];
    const bool same_handler = previous_ns != 0 && now.running_signal != kNoSignal &&
                              now.handlers_started == watched.handlers_started &&
                              now.running_signal == watched.signal;
    watched.handlers_started = now.handlers_started;
    watched.signal = now.running_signal;
    // During a process stall nothing ran, the handler no more than the rest: it is
    // measured from this sample on.
    if (!same_handler || stalled) {
      watched.stuck_since_ns = same_handler ? now_ns : 0;
      watched.reported = false;
      continue;
    }
    if (watched.stuck_since_ns == 0) watched.stuck_since_ns = previous_ns;
    const uint64_t stuck_ms = (now_ns - watched.stuck_since_ns) / kNanosPerMilli;
    const bool stop = stuck_ms >= stop_after_ms;
    if (!stop && (watched.reported || stuck_ms < limits_.report_after_ms)) continue;
    watched.reported = true;
    WatchdogFinding finding;
    finding.stop = stop;
    finding.thread_index = now.thread_index;
    finding.thread_name = now.thread_name;
    finding.signal = now.running_signal;
    finding.block = now.running_block;
    finding.duration_ms = stuck_ms;
    findings.push_back(finding);
  }
  return findings;
}

}  // namespace duo::kernel
