// Leveled logging for every DuoDB process: one process-wide level, one pluggable sink.
//
// Each line reads "2020-01-01T00:00:00.000000Z INFO [mgmd] message": UTC timestamp with
// microseconds, level, component tag, message. The timestamp comes from a Clock
// (set_log_clock), so under the simulator log lines carry virtual time and two runs
// with one seed produce identical logs. Two spellings:
//
//   DUO_LOG(INFO, "mgmd") << "node " << node_id << " connected";
//   DUO_LOGF(WARNING, "datad", "redo part %u is %u%% full", part, percent);
//
// Arguments are not evaluated when the level is disabled. Levels: ERROR (something
// failed and an operator should look), WARNING (degraded but coping), INFO (state
// changes an operator wants in the log), DEBUG (for developers; off by default).
//
// Thread-safety: everything here may be called from any thread. Emitting a line holds
// one process-wide mutex while the sink writes, so lines never interleave and sinks
// need no locking of their own for write(). The level check is a relaxed atomic load,
// cheap enough for hot paths.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"

namespace duo {

class Clock;

enum class LogLevel : uint8_t { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

// "ERROR", "WARNING", "INFO", "DEBUG".
const char* log_level_name(LogLevel level);
// Case-insensitive "error", "warning" (or "warn"), "info", "debug"; for --log-level.
Result<LogLevel> parse_log_level(std::string_view text);

// One log event as handed to a sink. The views are valid only during LogSink::write.
struct LogRecord {
  LogLevel level;
  int64_t wall_time_ns;  // from the log clock
  std::string_view component;
  std::string_view message;
  const char* file;  // __FILE__ of the call site
  int line;          // __LINE__ of the call site
};

// Where log lines go. write() is called with the logging mutex held (never
// concurrently), so it must not log itself (that would deadlock).
class LogSink {
 public:
  virtual ~LogSink() = default;
  // `formatted_line` is the complete line without a trailing newline.
  virtual void write(const LogRecord& record, std::string_view formatted_line) = 0;
};

// The default sink: one fwrite per line to stderr.
class StderrLogSink final : public LogSink {
 public:
  void write(const LogRecord& record, std::string_view formatted_line) override;
};

// Keeps every line in memory, for tests. Its accessors take their own mutex, so a test
// thread may read while other threads log.
class CapturingLogSink final : public LogSink {
 public:
  struct Entry {
    LogLevel level;
    std::string component;
    std::string message;
    std::string line;  // the formatted line
  };

  void write(const LogRecord& record, std::string_view formatted_line) override;

  std::vector<Entry> entries() const;
  std::vector<std::string> lines() const;
  // True if any formatted line contains `needle`.
  bool contains(std::string_view needle) const;
  size_t size() const;
  void clear();

 private:
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;  // GUARDED_BY(mutex_)
};

// Process-wide configuration. The defaults are: level INFO, StderrLogSink, real_clock().
void set_log_level(LogLevel level);
LogLevel log_level();
bool log_enabled(LogLevel level);
// Installs `sink` (nullptr restores the stderr sink) and returns the previous one.
std::shared_ptr<LogSink> set_log_sink(std::shared_ptr<LogSink> sink);
// Installs the clock for timestamps (nullptr restores real_clock()) and returns the
// previous one (never nullptr). The clock is not owned and must outlive its use here;
// it is read with the logging mutex held, so it must not log.
const Clock* set_log_clock(const Clock* clock);

// Emits one line if `level` is enabled. The macros below are the usual entry points.
void log_message(LogLevel level, std::string_view component, std::string_view message,
                 const char* file, int line);
void log_printf(LogLevel level, std::string_view component, const char* file, int line,
                const char* format, ...) __attribute__((format(printf, 5, 6)));

// Formats a line exactly as the logger does; exposed for sinks and tests.
std::string format_log_line(LogLevel level, int64_t wall_time_ns, std::string_view component,
                            std::string_view message);

// For tests: captures everything logged while alive (at `level` and above), then
// restores the previous sink and level.
class ScopedLogCapture {
 public:
  explicit ScopedLogCapture(LogLevel level = LogLevel::kDebug);
  ~ScopedLogCapture();
  ScopedLogCapture(const ScopedLogCapture&) = delete;
  ScopedLogCapture& operator=(const ScopedLogCapture&) = delete;

  CapturingLogSink& sink() { return *sink_; }

 private:
  std::shared_ptr<CapturingLogSink> sink_;
  std::shared_ptr<LogSink> previous_sink_;
  LogLevel previous_level_;
};

// Collects a streamed message and emits it when destroyed (end of the full expression).
class LogMessage {
 public:
  LogMessage(LogLevel level, std::string_view component, const char* file, int line)
      : level_(level), component_(component), file_(file), line_(line) {}
  ~LogMessage() { log_message(level_, component_, stream_.str(), file_, line_); }
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;

  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::string_view component_;
  const char* file_;
  int line_;
  std::ostringstream stream_;
};

}  // namespace duo

// Level tokens for the macros: DUO_LOG(INFO, ...) names DUO_LOG_LEVEL_INFO. Token
// pasting keeps a stray `#define INFO` elsewhere from breaking the macro.
#define DUO_LOG_LEVEL_ERROR ::duo::LogLevel::kError
#define DUO_LOG_LEVEL_WARNING ::duo::LogLevel::kWarning
#define DUO_LOG_LEVEL_INFO ::duo::LogLevel::kInfo
#define DUO_LOG_LEVEL_DEBUG ::duo::LogLevel::kDebug

// The if/else shape makes the macro one statement (safe inside an unbraced if/else)
// and skips evaluating the streamed operands when the level is off.
#define DUO_LOG(level, component)                   \
  if (!::duo::log_enabled(DUO_LOG_LEVEL_##level)) { \
  } else                                            \
    ::duo::LogMessage(DUO_LOG_LEVEL_##level, (component), __FILE__, __LINE__).stream()

#define DUO_LOGF(level, component, ...)                                                       \
  do {                                                                                        \
    if (::duo::log_enabled(DUO_LOG_LEVEL_##level)) {                                          \
      ::duo::log_printf(DUO_LOG_LEVEL_##level, (component), __FILE__, __LINE__, __VA_ARGS__); \
    }                                                                                         \
  } while (0)
