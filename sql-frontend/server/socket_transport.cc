// Plain TCP transport; see socket_transport.h.
#include "sql-frontend/server/socket_transport.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace duo::sql::server {

SocketTransport::~SocketTransport() {
  ::close(fd_);
}

Result<size_t> SocketTransport::read_some(char* out, size_t length) {
  for (;;) {
    ssize_t n = ::recv(fd_, out, length, 0);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) return Status(ErrorCode::kIoError, "connection closed by peer");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Status(ErrorCode::kIoError, "read timeout");
    return Status(ErrorCode::kIoError, std::string("recv: ") + std::strerror(errno));
  }
}

Status SocketTransport::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return Status(ErrorCode::kIoError, "write timeout");
    }
    return Status(ErrorCode::kIoError, std::string("send: ") + std::strerror(errno));
  }
  return Status::OK();
}

void SocketTransport::set_timeouts(uint64_t receive_timeout_ms, uint64_t send_timeout_ms) {
  auto set = [this](int option, uint64_t ms) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(ms / 1000);
    tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
    ::setsockopt(fd_, SOL_SOCKET, option, &tv, sizeof tv);
  };
  set(SO_RCVTIMEO, receive_timeout_ms);
  set(SO_SNDTIMEO, send_timeout_ms);
}

void SocketTransport::shutdown() {
  ::shutdown(fd_, SHUT_RDWR);
}

}  // namespace duo::sql::server
