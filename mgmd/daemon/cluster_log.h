// ClusterLog: the operator's record of cluster events that duo_mgmd keeps in
// <configdir>/ndb_<id>_cluster.log (ndb_mgmd's cluster log), with NDB's severity filter.
//
// A line reads "2024-05-01 10:00:00.123 [MgmtSrvr] INFO     -- message" (UTC). Events
// have one of NDB's severities; the filter (`CLUSTERLOG ON|OFF|TOGGLE [severity...]`
// in duo_mgm, `set clusterlog` on the wire) decides which reach the file. The filter
// has a global switch and one switch per severity; the default writes everything but
// DEBUG, like NDB. Every event also goes to the process log (DUO_LOG, stderr in the
// foreground) whatever the filter says, so turning the cluster log off never hides an
// error from the process log.
//
// Each line is flushed when written: events are rare and an operator tails the file.
// A write failure is reported once to the process log and the event dropped — losing
// a log line must not stop the management server.
//
// Thread-safety: thread-compatible (mgmd's single event-loop thread owns it).
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "ndb-kernel/common/clock.h"
#include "ndb-kernel/common/status.h"

namespace duo::mgm {

enum class Severity : uint8_t { kAlert, kCritical, kError, kWarning, kInfo, kDebug };
inline constexpr size_t kSeverityCount = 6;
// "ALERT", "CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG".
std::string_view severity_name(Severity severity);
// Case-insensitive severity name; nullopt if unknown.
std::optional<Severity> parse_severity(std::string_view text);

struct ClusterLogFilter {
  bool enabled = true;
  std::array<bool, kSeverityCount> severity_on = {true, true, true, true, true, false};

  bool passes(Severity severity) const {
    return enabled && severity_on[static_cast<size_t>(severity)];
  }
};

class ClusterLog {
 public:
  explicit ClusterLog(const Clock& clock) : clock_(clock) {}
  ~ClusterLog();
  ClusterLog(const ClusterLog&) = delete;
  ClusterLog& operator=(const ClusterLog&) = delete;

  // Opens (appending to) `path`. Until then events go only to the process log.
  Status open(const std::string& path);
  void close();

  // Records one event.
  void event(Severity severity, std::string_view message);

  const ClusterLogFilter& filter() const { return filter_; }
  void set_filter(const ClusterLogFilter& filter) { filter_ = filter; }
  const std::string& path() const { return path_; }

  // The file line for an event, without the newline; exposed for tests.
  static std::string format_line(int64_t wall_time_ns, Severity severity, std::string_view message);

 private:
  const Clock& clock_;
  std::string path_;
  std::FILE* file_ = nullptr;
  bool write_failed_ = false;  // reported once
  ClusterLogFilter filter_;
};

}  // namespace duo::mgm
