#include "mgmd/client/mgm_connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace duo::mgm {
namespace {

// The client measures its own deadlines; it is a tool, not kernel code.
uint64_t monotonic_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

int remaining_ms(uint64_t deadline_ms) {
  const uint64_t now = monotonic_ms();
  return now >= deadline_ms ? 0 : static_cast<int>(deadline_ms - now);
}

}  // namespace

Result<ConnectString> parse_connect_string(std::string_view text) {
  std::string_view chosen;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (part.empty() || part.rfind("nodeid=", 0) == 0 || part.rfind("bind-address=", 0) == 0) {
      continue;
    }
    if (chosen.empty()) chosen = part;
  }
  if (chosen.empty()) return Status(ErrorCode::kInvalidArgument, "connect string names no host");
  ConnectString target;
  std::string_view port_text;
  if (chosen.front() == '[') {
    const size_t close = chosen.find(']');
    if (close == std::string_view::npos) {
      return Status(ErrorCode::kInvalidArgument, "unterminated '[' in connect string");
    }
    target.host = std::string(chosen.substr(1, close - 1));
    std::string_view rest = chosen.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Status(ErrorCode::kInvalidArgument, "bad connect string");
      port_text = rest.substr(1);
    }
  } else {
    const size_t colon = chosen.find(':');
    target.host = std::string(chosen.substr(0, colon));
    if (colon != std::string_view::npos) port_text = chosen.substr(colon + 1);
  }
  if (target.host.empty())
    return Status(ErrorCode::kInvalidArgument, "empty host in connect string");
  if (!port_text.empty() || chosen.back() == ':') {
    auto port = parse_uint_arg(port_text, 65535);
    if (!port || *port == 0) {
      return Status(ErrorCode::kInvalidArgument,
                    "bad port '" + std::string(port_text) + "' in connect string");
    }
    target.port = static_cast<uint16_t>(*port);
  }
  return target;
}

void MgmConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffered_.clear();
  async_parser_.reset();
}

Status MgmConnection::send(const Message& request, uint64_t timeout_ms) {
  if (fd_ < 0) return Status(ErrorCode::kIoError, "not connected to the management server");
  const uint64_t deadline_ms = monotonic_ms() + timeout_ms;
  const std::string bytes = encode_message(request);
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd pfd{fd_, POLLOUT, 0};
      if (::poll(&pfd, 1, remaining_ms(deadline_ms)) <= 0) {
        close();
        return Status(ErrorCode::kIoError, "timed out sending to the management server");
      }
      continue;
    }
    const std::string why = std::strerror(errno);
    close();
    return Status(ErrorCode::kIoError, "lost connection to the management server: " + why);
  }
  return Status::OK();
}

Result<std::optional<Message>> MgmConnection::receive(uint64_t timeout_ms) {
  if (fd_ < 0) return Status(ErrorCode::kIoError, "not connected to the management server");
  auto fail = [this](const std::string& why) {
    close();
    return Status(ErrorCode::kIoError, why);
  };
  // Bytes left over from the previous message first.
  auto take = [&](std::string_view data) -> Result<std::optional<Message>> {
    bool done = false;
    Result<size_t> used = async_parser_.feed(data, &done);
    if (!used.ok()) return fail(used.status().message());
    buffered_ = std::string(data.substr(*used));
    if (!done) return std::optional<Message>();
    Message message = async_parser_.reply();
    async_parser_.reset();
    return std::optional<Message>(std::move(message));
  };
  if (!buffered_.empty()) {
    const std::string pending = std::move(buffered_);
    buffered_.clear();
    DUO_ASSIGN_OR_RETURN(std::optional<Message> message, take(pending));
    if (message) return message;
  }
  const uint64_t deadline_ms = monotonic_ms() + timeout_ms;
  char chunk[16 * 1024];
  for (;;) {
    pollfd pfd{fd_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, remaining_ms(deadline_ms));
    if (ready < 0 && errno == EINTR) return std::optional<Message>();
    if (ready < 0) return fail(std::string("poll: ") + std::strerror(errno));
    if (ready == 0) return std::optional<Message>();
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n == 0) return fail("the management server closed the connection");
    if (n < 0) {
      return fail(std::string("lost connection to the management server: ") + std::strerror(errno));
    }
    DUO_ASSIGN_OR_RETURN(std::optional<Message> message,
                         take(std::string_view(chunk, static_cast<size_t>(n))));
    if (message) return message;
  }
}

Status MgmConnection::connect(const ConnectString& target, uint64_t timeout_ms) {
  close();
  const uint64_t deadline_ms = monotonic_ms() + timeout_ms;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(target.port);
  const int rc = ::getaddrinfo(target.host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    return Status(ErrorCode::kIoError,
                  "cannot resolve '" + target.host + "': " + ::gai_strerror(rc));
  }
  std::string last_error = "no address";
  for (addrinfo* ai = found; ai != nullptr && fd_ < 0; ai = ai->ai_next) {
    const int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    int error = 0;
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        error = errno;
      } else {
        pollfd pfd{fd, POLLOUT, 0};
        const int ready = ::poll(&pfd, 1, remaining_ms(deadline_ms));
        socklen_t len = sizeof error;
        if (ready == 0) {
          error = ETIMEDOUT;
        } else if (ready < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) {
          error = errno;
        }
      }
    }
    if (error != 0) {
      last_error = std::strerror(error);
      ::close(fd);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fd_ = fd;
  }
  ::freeaddrinfo(found);
  if (fd_ < 0) {
    return Status(ErrorCode::kIoError,
                  "cannot connect to " + target.host + ":" + port + ": " + last_error);
  }
  return Status::OK();
}

Result<Message> MgmConnection::call(const Message& request, uint64_t timeout_ms) {
  // A request/reply pair is send() followed by receive() until the whole reply is in.
  const uint64_t deadline_ms = monotonic_ms() + timeout_ms;
  DUO_RETURN_IF_ERROR(send(request, timeout_ms));
  for (;;) {
    const uint64_t now_ms = monotonic_ms();
    if (now_ms >= deadline_ms) {
      close();
      return Status(ErrorCode::kIoError, "timed out waiting for the management server's reply");
    }
    DUO_ASSIGN_OR_RETURN(std::optional<Message> reply, receive(deadline_ms - now_ms));
    if (reply) return std::move(*reply);
  }
}

Status reply_result(const Message& reply) {
  const std::string* result = reply.find("result");
  if (result == nullptr) return Status(ErrorCode::kInvalidArgument, "reply has no result");
  if (*result == "Ok") return Status::OK();
  return Status(ErrorCode::kInvalidArgument, *result);
}

}  // namespace duo::mgm
