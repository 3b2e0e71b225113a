#include "mgmd/daemon/mgm_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "ndb-kernel/common/logging.h"

namespace duo::mgm {
namespace {

// Bytes read per recv(); requests are small, so one read usually holds several.
constexpr size_t kReadChunkBytes = 16 * 1024;
// How long shutdown waits for peers to take their last replies.
constexpr uint64_t kShutdownFlushMs = 1000;

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// "127.0.0.1" and "127.0.0.1:5432" (or "[::1]:5432") for a peer; IPv4-mapped IPv6
// addresses are shown as IPv4 so that HostName=127.0.0.1 matches them.
std::pair<std::string, std::string> describe_peer(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
    return {host, std::string(host) + ":" + std::to_string(port)};
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
  port = ntohs(in6->sin6_port);
  if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
    ::inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], host, sizeof host);
    return {host, std::string(host) + ":" + std::to_string(port)};
  }
  ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
  return {host, "[" + std::string(host) + "]:" + std::to_string(port)};
}

}  // namespace

MgmServer::MgmServer(MgmService* service, const Clock& clock, ServerOptions options)
    : service_(service), clock_(clock), options_(std::move(options)) {}

MgmServer::~MgmServer() {
  for (auto& [id, session] : sessions_) ::close(session.fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

Status MgmServer::listen() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port_text = std::to_string(options_.port);
  const int rc = ::getaddrinfo(options_.bind_address.c_str(), port_text.c_str(), &hints, &found);
  if (rc != 0) {
    return Status(ErrorCode::kIoError, "cannot resolve bind address '" + options_.bind_address +
                                           "': " + ::gai_strerror(rc));
  }
  std::string last_error = "no address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    // Restarting mgmd must not wait for TIME_WAIT sessions of the previous process.
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
      last_error = std::strerror(errno);
      ::close(fd);
      continue;
    }
    set_nonblocking(fd);
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = bound.ss_family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port)
                                       : ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    listen_fd_ = fd;
    break;
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return Status(ErrorCode::kIoError, "cannot listen on " + options_.bind_address + ":" +
                                           port_text + ": " + last_error);
  }
  return Status::OK();
}

int MgmServer::poll_timeout_ms() const {
  if (options_.session_idle_timeout_ms == 0 || sessions_.empty()) return 1000;
  const uint64_t now_ns = clock_.now_ns();
  uint64_t earliest_ns = UINT64_MAX;
  for (const auto& [id, session] : sessions_) {
    earliest_ns = std::min(
        earliest_ns, session.last_activity_ns + options_.session_idle_timeout_ms * kNanosPerMilli);
  }
  if (earliest_ns <= now_ns) return 0;
  return static_cast<int>(std::min<uint64_t>((earliest_ns - now_ns) / kNanosPerMilli + 1, 1000));
}

Status MgmServer::run(int stop_fd) {
  if (listen_fd_ < 0) return Status(ErrorCode::kInternal, "run() before listen()");
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;
  while (!service_->shutdown_requested()) {
    service_->tick(clock_.now_ns() / kNanosPerMilli);
    deliver_pending();
    if (service_->shutdown_requested()) break;
    fds.clear();
    ids.clear();
    fds.push_back({listen_fd_, POLLIN, 0});
    fds.push_back({stop_fd, POLLIN, 0});  // poll ignores negative descriptors
    for (const auto& [id, session] : sessions_) {
      short events = session.closing ? 0 : POLLIN;
      if (!session.out.empty()) events |= POLLOUT;
      fds.push_back({session.fd, events, 0});
      ids.push_back(id);
    }
    const int ready = ::poll(fds.data(), fds.size(), poll_timeout_ms());
    if (ready < 0) {
      if (errno == EINTR) continue;
      return Status(ErrorCode::kIoError, std::string("poll: ") + std::strerror(errno));
    }
    if (fds[1].revents != 0) {
      DUO_LOG(INFO, "mgmd") << "stop signal received";
      break;
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      const short revents = fds[i + 2].revents;
      if (revents == 0) continue;
      auto it = sessions_.find(ids[i]);
      if (it == sessions_.end()) continue;
      Session& session = it->second;
      if ((revents & POLLOUT) != 0 && !flush_session(session)) {
        close_session(ids[i], "connection reset while writing");
        continue;
      }
      if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !session.closing) {
        read_session(ids[i], session);
        it = sessions_.find(ids[i]);
        if (it == sessions_.end()) continue;
      }
      if (it->second.closing && it->second.out.empty() && !it->second.awaiting_deferred) {
        close_session(ids[i], it->second.close_reason);
      } else if ((revents & (POLLHUP | POLLERR)) != 0 && it->second.closing) {
        close_session(ids[i], it->second.close_reason);
      }
    }
    if ((fds[0].revents & POLLIN) != 0) accept_sessions();
    expire_idle_sessions();
    deliver_pending();
  }

  // Give peers their last replies (the `shutdown` answer in particular), then close.
  const uint64_t deadline_ns = clock_.now_ns() + kShutdownFlushMs * kNanosPerMilli;
  while (clock_.now_ns() < deadline_ns) {
    fds.clear();
    ids.clear();
    for (auto& [id, session] : sessions_) {
      if (session.out.empty()) continue;
      fds.push_back({session.fd, POLLOUT, 0});
      ids.push_back(id);
    }
    if (fds.empty()) break;
    if (::poll(fds.data(), fds.size(), 50) < 0 && errno != EINTR) break;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Session& session = sessions_[ids[i]];
      if (!flush_session(session)) session.out.clear();
    }
  }
  std::vector<uint64_t> remaining;
  for (const auto& [id, session] : sessions_) remaining.push_back(id);
  for (uint64_t id : remaining) close_session(id, "management server shutting down");
  return Status::OK();
}

void MgmServer::accept_sessions() {
  // Accept everything pending: a burst of connecting nodes should not wait a poll round each.
  for (;;) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        DUO_LOG(WARNING, "mgmd") << "accept: " << std::strerror(errno);
      }
      return;
    }
    auto [address, peer] = describe_peer(addr);
    if (sessions_.size() >= options_.sessions_max) {
      const std::string refusal = encode_message(error_reply(
          "session", "Too many sessions (max " + std::to_string(options_.sessions_max) + ")"));
      // Best effort: the socket buffer of a fresh connection takes this small reply.
      [[maybe_unused]] ssize_t n = ::send(fd, refusal.data(), refusal.size(), MSG_NOSIGNAL);
      ::close(fd);
      service_->cluster_log().event(
          Severity::kWarning, "Management client " + peer + " refused: too many sessions (max " +
                                  std::to_string(options_.sessions_max) + ")");
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // Detects peers that vanished without a FIN (a crashed host) holding node ids.
    ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    const uint64_t id = next_session_id_++;
    Session& session = sessions_[id];
    session.fd = fd;
    session.peer = peer;
    session.last_activity_ns = clock_.now_ns();
    service_->on_session_open(id, peer, address);
  }
}

void MgmServer::read_session(uint64_t id, Session& session) {
  char buffer[kReadChunkBytes];
  const ssize_t n = ::recv(session.fd, buffer, sizeof buffer, 0);
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return;
    close_session(id, std::string("read error: ") + std::strerror(errno));
    return;
  }
  if (n == 0) {
    // The peer finished sending (`nc -N` closes its write side after the request);
    // it may still read the replies already queued.
    session.closing = true;
    session.close_reason = session.parser.in_request() ? "peer closed in the middle of a request"
                                                       : "peer closed the connection";
    return;
  }
  session.last_activity_ns = clock_.now_ns();
  std::vector<RequestParser::Parsed> requests;
  Status framing = session.parser.feed(std::string_view(buffer, static_cast<size_t>(n)), &requests);
  for (RequestParser::Parsed& parsed : requests) session.queued.push_back(std::move(parsed));
  if (session.queued.size() > kQueuedRequestsMax) {
    close_session(id, "more than " + std::to_string(kQueuedRequestsMax) +
                          " requests pipelined behind an unanswered one");
    return;
  }
  answer_queued(id, session);
  if (!framing.ok() && !session.closing) {
    service_->cluster_log().event(Severity::kWarning, "Session " + std::to_string(id) + " from " +
                                                          session.peer + ": " + framing.message() +
                                                          "; closing the session");
    session.out += encode_message(error_reply("error", framing.message()));
    session.closing = true;
    session.close_reason = "protocol error";
  }
  if (session.out.size() > options_.pending_reply_bytes_max) {
    close_session(id, "peer does not read its replies");
    return;
  }
  if (!session.out.empty() && !flush_session(session)) {
    close_session(id, "connection reset while writing");
  }
}

void MgmServer::answer_queued(uint64_t id, Session& session) {
  while (!session.queued.empty() && !session.awaiting_deferred) {
    RequestParser::Parsed parsed = std::move(session.queued.front());
    session.queued.pop_front();
    if (session.bye_seen) continue;  // after `bye`, later requests are not answered
    MgmService::Outcome outcome = service_->handle(id, parsed);
    if (outcome.deferred) {
      session.awaiting_deferred = true;
      break;
    }
    session.out += encode_message(outcome.reply);
    if (outcome.close_session) {
      session.bye_seen = true;
      session.closing = true;
      session.close_reason = "bye";
    }
  }
}

void MgmServer::deliver_pending() {
  // Delivering can answer queued requests, which can queue more deliveries.
  for (int round = 0; round < 8; ++round) {
    std::vector<MgmService::Delivery> deliveries = service_->take_deliveries();
    if (deliveries.empty()) return;
    for (MgmService::Delivery& delivery : deliveries) {
      auto it = sessions_.find(delivery.session_id);
      if (it == sessions_.end()) continue;  // the session went away meanwhile
      Session& session = it->second;
      session.out += encode_message(delivery.message);
      if (delivery.completes_deferred) {
        session.awaiting_deferred = false;
        answer_queued(delivery.session_id, session);
      }
      if (!flush_session(session)) {
        close_session(delivery.session_id, "connection reset while writing");
      } else if (session.closing && session.out.empty() && !session.awaiting_deferred) {
        close_session(delivery.session_id, session.close_reason);
      }
    }
  }
}

bool MgmServer::flush_session(Session& session) {
  while (!session.out.empty()) {
    const ssize_t n = ::send(session.fd, session.out.data(), session.out.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
    session.out.erase(0, static_cast<size_t>(n));
  }
  return true;
}

void MgmServer::close_session(uint64_t id, std::string reason) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  ::close(it->second.fd);
  sessions_.erase(it);
  service_->on_session_closed(id, reason);
}

void MgmServer::expire_idle_sessions() {
  if (options_.session_idle_timeout_ms == 0) return;
  const uint64_t now_ns = clock_.now_ns();
  std::vector<uint64_t> expired;
  for (const auto& [id, session] : sessions_) {
    if (now_ns - session.last_activity_ns >= options_.session_idle_timeout_ms * kNanosPerMilli) {
      expired.push_back(id);
    }
  }
  for (uint64_t id : expired) {
    close_session(id,
                  "idle for more than " + std::to_string(options_.session_idle_timeout_ms) + " ms");
  }
}

}  // namespace duo::mgm
