#include "mgmd/daemon/cluster_log.h"

#include <cerrno>
#include <cstring>
#include <ctime>

#include "ndb-kernel/common/config/config_params.h"
#include "ndb-kernel/common/logging.h"

namespace duo::mgm {

std::string_view severity_name(Severity severity) {
  static constexpr std::string_view kNames[kSeverityCount] = {"ALERT",   "CRITICAL", "ERROR",
                                                              "WARNING", "INFO",     "DEBUG"};
  return kNames[static_cast<size_t>(severity)];
}

std::optional<Severity> parse_severity(std::string_view text) {
  for (size_t i = 0; i < kSeverityCount; ++i) {
    const auto severity = static_cast<Severity>(i);
    if (config::iequals(text, severity_name(severity))) return severity;
  }
  return std::nullopt;
}

ClusterLog::~ClusterLog() {
  close();
}

Status ClusterLog::open(const std::string& path) {
  close();
  file_ = std::fopen(path.c_str(), "ae");
  if (file_ == nullptr) {
    return Status(ErrorCode::kIoError,
                  "cannot open cluster log '" + path + "': " + std::strerror(errno));
  }
  path_ = path;
  write_failed_ = false;
  return Status::OK();
}

void ClusterLog::close() {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
}

std::string ClusterLog::format_line(int64_t wall_time_ns, Severity severity,
                                    std::string_view message) {
  const time_t seconds = static_cast<time_t>(wall_time_ns / 1000000000);
  const int millis = static_cast<int>((wall_time_ns / 1000000) % 1000);
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02d %02d:%02d:%02d.%03d", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
  char level[16];
  std::snprintf(level, sizeof level, "%-8s", std::string(severity_name(severity)).c_str());
  std::string line = stamp;
  line += " [MgmtSrvr] ";
  line += level;
  line += " -- ";
  line += message;
  return line;
}

void ClusterLog::event(Severity severity, std::string_view message) {
  switch (severity) {
    case Severity::kAlert:
    case Severity::kCritical:
    case Severity::kError:
      DUO_LOG(ERROR, "mgmd") << message;
      break;
    case Severity::kWarning:
      DUO_LOG(WARNING, "mgmd") << message;
      break;
    case Severity::kInfo:
      DUO_LOG(INFO, "mgmd") << message;
      break;
    case Severity::kDebug:
      DUO_LOG(DEBUG, "mgmd") << message;
      break;
  }
  if (file_ == nullptr || !filter_.passes(severity)) return;
  std::string line = format_line(clock_.wall_time_ns(), severity, message);
  line.push_back('\n');
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    if (!write_failed_) {
      write_failed_ = true;
      DUO_LOG(ERROR, "mgmd") << "cannot write cluster log '" << path_
                             << "': " << std::strerror(errno) << "; events are dropped";
    }
  }
}

}  // namespace duo::mgm
