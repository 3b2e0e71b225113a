#include "ndb-kernel/common/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace duo {

Result<int> lock_pid_file(const std::string& path, const std::string& holder) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status(ErrorCode::kIoError, "cannot open '" + path + "': " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return Status(ErrorCode::kIoError, "'" + path + "' is locked: " + holder);
  }
  return fd;
}

void write_pid(int fd) {
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] ssize_t n = ::pwrite(fd, pid.data(), pid.size(), 0);
  }
}

bool daemonize(const std::string& out_log) {
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid > 0) std::_Exit(0);  // fork keeps only the calling thread: call before threads
  ::setsid();
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int log_fd = ::open(out_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
  if (log_fd >= 0) {
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
  }
  return true;
}

bool ArgCursor::next() {
  if (++index_ >= argc_) return false;
  name_ = argv_[index_];
  inline_value_.clear();
  has_inline_value_ = false;
  if (const size_t eq = name_.find('='); name_.rfind("--", 0) == 0 && eq != std::string::npos) {
    inline_value_ = name_.substr(eq + 1);
    name_.resize(eq);
    has_inline_value_ = true;
  }
  return true;
}

bool ArgCursor::take_value(std::string* value) {
  if (has_inline_value_) {
    *value = inline_value_;
    return true;
  }
  if (index_ + 1 >= argc_) return false;
  *value = argv_[++index_];
  return true;
}

bool ArgCursor::take_count(int64_t* value) {
  std::string text;
  if (!take_value(&text) || text.empty() || text.size() > 18) return false;
  int64_t number = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    number = number * 10 + (c - '0');
  }
  *value = number;
  return true;
}

namespace {
std::atomic<bool> g_stop_requested{false};
extern "C" void record_stop_request(int) {
  g_stop_requested.store(true);
}
}  // namespace

void install_stop_handler(void (*on_stop)(int), bool foreground) {
  struct sigaction action {};
  action.sa_handler = on_stop;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  if (!foreground) ::signal(SIGHUP, SIG_IGN);
}

void install_stop_flag(bool foreground) {
  install_stop_handler(record_stop_request, foreground);
}

bool stop_requested() {
  return g_stop_requested.load();
}

}  // namespace duo
