// The process-wide logger: level, sink and clock, and the line format.
#include "ndb-kernel/common/logging.h"

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <ctime>

#include "ndb-kernel/common/clock.h"

namespace duo {
namespace {

// Constant-initialised, so logging works even during static initialisation.
std::atomic<uint8_t> g_level{static_cast<uint8_t>(LogLevel::kInfo)};

struct LoggerState {
  std::mutex mutex;
  std::shared_ptr<LogSink> sink;  // GUARDED_BY(mutex); null means the stderr sink
  const Clock* clock = nullptr;   // GUARDED_BY(mutex); null means real_clock()
};

LoggerState& logger_state() {
  // Deliberately leaked: threads may still log while static destructors run at exit.
  static LoggerState* state = new LoggerState;
  return *state;
}

LogSink& stderr_sink() {
  static StderrLogSink* sink = new StderrLogSink;  // leaked for the same reason
  return *sink;
}

// Longest message kept by log_printf; longer ones are truncated with a marker, so a
// runaway format cannot allocate without bound.
constexpr size_t kPrintfMessageBytesMax = 64 * 1024;

}  // namespace

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "ERROR";
    case LogLevel::kWarning:
      return "WARNING";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kDebug:
      return "DEBUG";
  }
  return "UNKNOWN";
}

Result<LogLevel> parse_log_level(std::string_view text) {
  std::string lower;
  for (char c : text) {
    lower.push_back(static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c));
  }
  if (lower == "error") return LogLevel::kError;
  if (lower == "warning" || lower == "warn") return LogLevel::kWarning;
  if (lower == "info") return LogLevel::kInfo;
  if (lower == "debug") return LogLevel::kDebug;
  return Status(ErrorCode::kInvalidArgument, "unknown log level '" + std::string(text) +
                                                 "' (expected error, warning, info or debug)");
}

void StderrLogSink::write(const LogRecord& /*record*/, std::string_view formatted_line) {
  // One fwrite for line and newline, so even other writers to stderr (outside the
  // logger) cannot split our line.
  std::string buffer;
  buffer.reserve(formatted_line.size() + 1);
  buffer.append(formatted_line);
  buffer.push_back('\n');
  std::fwrite(buffer.data(), 1, buffer.size(), stderr);
}

void CapturingLogSink::write(const LogRecord& record, std::string_view formatted_line) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_back(Entry{record.level, std::string(record.component), std::string(record.message),
                           std::string(formatted_line)});
}

std::vector<CapturingLogSink::Entry> CapturingLogSink::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_;
}

std::vector<std::string> CapturingLogSink::lines() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> lines;
  lines.reserve(entries_.size());
  for (const Entry& entry : entries_) lines.push_back(entry.line);
  return lines;
}

bool CapturingLogSink::contains(std::string_view needle) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Entry& entry : entries_) {
    if (entry.line.find(needle) != std::string::npos) return true;
  }
  return false;
}

size_t CapturingLogSink::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

void CapturingLogSink::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
}

void set_log_level(LogLevel level) {
  g_level.store(static_cast<uint8_t>(level), std::memory_order_relaxed);
}

LogLevel log_level() {
  return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed));
}

bool log_enabled(LogLevel level) {
  return static_cast<uint8_t>(level) <= g_level.load(std::memory_order_relaxed);
}

std::shared_ptr<LogSink> set_log_sink(std::shared_ptr<LogSink> sink) {
  LoggerState& state = logger_state();
  std::lock_guard<std::mutex> lock(state.mutex);
  std::shared_ptr<LogSink> previous = std::move(state.sink);
  state.sink = std::move(sink);
  return previous;
}

const Clock* set_log_clock(const Clock* clock) {
  LoggerState& state = logger_state();
  std::lock_guard<std::mutex> lock(state.mutex);
  const Clock* previous = state.clock ? state.clock : &real_clock();
  state.clock = clock;
  return previous;
}

std::string format_log_line(LogLevel level, int64_t wall_time_ns, std::string_view component,
                            std::string_view message) {
  // Floor division, so times before 1970 (only seen in odd tests) still format sanely.
  int64_t seconds = wall_time_ns / static_cast<int64_t>(kNanosPerSecond);
  int64_t remainder_ns = wall_time_ns % static_cast<int64_t>(kNanosPerSecond);
  if (remainder_ns < 0) {
    remainder_ns += static_cast<int64_t>(kNanosPerSecond);
    --seconds;
  }
  const std::time_t time_seconds = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&time_seconds, &utc);  // reentrant, and UTC needs no time-zone state
  char timestamp[64];
  std::snprintf(timestamp, sizeof(timestamp), "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
                utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                utc.tm_sec, static_cast<int>(remainder_ns / 1000));
  std::string line;
  line.reserve(48 + component.size() + message.size());
  line.append(timestamp);
  line.push_back(' ');
  line.append(log_level_name(level));
  line.append(" [");
  line.append(component);
  line.append("] ");
  line.append(message);
  return line;
}

void log_message(LogLevel level, std::string_view component, std::string_view message,
                 const char* file, int line) {
  if (!log_enabled(level)) return;
  LoggerState& state = logger_state();
  std::lock_guard<std::mutex> lock(state.mutex);
  // Reading the clock under the mutex keeps timestamps in the order lines are written.
  const Clock& clock = state.clock ? *state.clock : real_clock();
  const LogRecord record{level, clock.wall_time_ns(), component, message, file, line};
  const std::string formatted = format_log_line(level, record.wall_time_ns, component, message);
  LogSink& sink = state.sink ? *state.sink : stderr_sink();
  sink.write(record, formatted);
}

void log_printf(LogLevel level, std::string_view component, const char* file, int line,
                const char* format, ...) {
  if (!log_enabled(level)) return;
  char small[512];
  va_list args;
  va_start(args, format);
  va_list args_copy;
  va_copy(args_copy, args);
  const int needed = std::vsnprintf(small, sizeof(small), format, args);
  va_end(args);
  if (needed < 0) {
    va_end(args_copy);
    log_message(level, component, "(log format error)", file, line);
    return;
  }
  if (static_cast<size_t>(needed) < sizeof(small)) {
    va_end(args_copy);
    log_message(level, component, std::string_view(small, static_cast<size_t>(needed)), file, line);
    return;
  }
  const size_t kept = std::min(static_cast<size_t>(needed), kPrintfMessageBytesMax);
  std::string message(kept + 1, '\0');
  std::vsnprintf(message.data(), message.size(), format, args_copy);
  va_end(args_copy);
  message.resize(kept);
  if (kept < static_cast<size_t>(needed)) message.append("...(truncated)");
  log_message(level, component, message, file, line);
}

ScopedLogCapture::ScopedLogCapture(LogLevel level)
    : sink_(std::make_shared<CapturingLogSink>()), previous_level_(log_level()) {
  previous_sink_ = set_log_sink(sink_);
  set_log_level(level);
}

ScopedLogCapture::~ScopedLogCapture() {
  set_log_sink(std::move(previous_sink_));
  set_log_level(previous_level_);
}

}  // namespace duo
