// Transporter: epoll I/O thread, handshakes, per-link send buffers. See transporter.h.
//
// Who owns what:
//   PeerLink (one per configured peer, created in create(), never destroyed before the
//   transporter): `mutex` guards what senders share with the I/O thread (ready flag,
//   send buffer, dial address); the rest belongs to the I/O thread.
//   Connection (one per open socket): I/O thread only. A connection is outgoing (we
//   dialled) or incoming (accepted); it goes kConnecting → [kTls →] kHandshake → kReady
//   (kTls only with use_tls: the TLS handshake, after which all bytes go through
//   Connection::tls).
// The send path never touches a socket: send_remote() appends an encoded frame to the
// link's buffer and, when the buffer was empty, wakes the I/O thread through an
// eventfd. The I/O thread swaps the whole buffer out (two buffers ping-pong, so steady
// traffic allocates nothing) and writes it. One wake per batch, not per signal.
#include "ndb-kernel/transport/transporter.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>

#include "ndb-kernel/common/clock.h"
#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/runtime/kernel_check.h"
#include "ndb-kernel/transport/frame.h"
#include "ndb-kernel/transport/handshake.h"
#include "ndb-kernel/transport/tls_session.h"

namespace duo::transport {

using kernel::Signal;

namespace {

constexpr const char* kLogComponent = "transport";
constexpr size_t kReadBufferBytes = 64 * 1024;
// Reads per connection per loop turn: bounds how long one busy link can keep the I/O
// thread from the others (level-triggered epoll comes back for the rest).
constexpr int kReadsPerEventMax = 4;
constexpr int kEpollEventsMax = 64;
// Upper bound of one epoll_wait: nothing depends on it, it only limits the damage of a
// missed wake-up.
constexpr uint64_t kIdleWaitMaxMs = 200;
constexpr uint64_t kReconnectDelayMaxMs = 3600 * 1000;
// A link that was up at least this long resets the dialler's backoff when it drops. A
// shorter-lived one counts as a failed attempt, so a peer that accepts our hello and
// then hangs up (a configuration mismatch on its side) is retried with growing delays
// instead of flapping every reconnect_delay_min_ms.
constexpr uint64_t kStableLinkNs = 1000 * kNanosPerMilli;

std::string errno_text(int error) {
  return std::strerror(error);
}

std::string format_address(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
    return "[" + std::string(host) + "]:" + std::to_string(port);
  }
  return "?";
}

// Resolves host:port (numeric or a name) to the first usable address.
Result<sockaddr_storage> resolve(const std::string& host, uint16_t port, bool passive,
                                 socklen_t* length) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* results = nullptr;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &results);
  if (rc != 0 || results == nullptr) {
    return Status(ErrorCode::kIoError,
                  "cannot resolve " + host + ":" + service + ": " + gai_strerror(rc));
  }
  sockaddr_storage address{};
  std::memcpy(&address, results->ai_addr, results->ai_addrlen);
  *length = results->ai_addrlen;
  freeaddrinfo(results);
  return address;
}

void set_no_delay(int fd) {
  // Signals are small and latency-bound, and we batch them ourselves in the send
  // buffer; Nagle would only add delay.
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

const char* link_state_name(LinkState state) {
  switch (state) {
    case LinkState::kConnected:
      return "connected";
    case LinkState::kDisconnected:
      return "disconnected";
  }
  return "?";
}

ReceiveCallback deliver_to_runtime(kernel::ThreadRuntime& runtime) {
  // try_send_from_outside leaves a signal its receiver refused (kTemporary) intact, so
  // the transporter can keep it for the retry without copying every signal first.
  return [&runtime](Signal& signal) -> Status { return runtime.try_send_from_outside(signal); };
}

struct Transporter::Counters {
  std::atomic<uint64_t> frames_queued{0};
  std::atomic<uint64_t> frames_delivered{0};
  std::atomic<uint64_t> bytes_written{0};
  std::atomic<uint64_t> bytes_read{0};
  std::atomic<uint64_t> refused_not_connected{0};
  std::atomic<uint64_t> refused_buffer_full{0};
  std::atomic<uint64_t> connections_accepted{0};
  std::atomic<uint64_t> connections_closed_for_errors{0};
  std::atomic<uint64_t> connect_attempts{0};
  std::atomic<uint64_t> links_established{0};
  std::atomic<uint64_t> delivery_retries{0};
  std::atomic<uint64_t> dropped_undeliverable{0};
};

struct Transporter::PeerLink {
  PeerLink(uint16_t node_id_in, bool we_dial_in) : node_id(node_id_in), we_dial(we_dial_in) {}

  // Constant after create().
  const uint16_t node_id;
  const bool we_dial;

  mutable std::mutex mutex;
  bool ready = false;                // GUARDED_BY(mutex): frames may be queued
  std::vector<uint8_t> send_buffer;  // GUARDED_BY(mutex): encoded frames, in send order
  std::string dial_host;             // GUARDED_BY(mutex)
  uint16_t dial_port = 0;            // GUARDED_BY(mutex)
  bool dial_now = false;             // GUARDED_BY(mutex): address changed, skip backoff
  bool disconnect_now = false;       // GUARDED_BY(mutex): disconnect() asked to close it
  // Direct send (send_remote): the ready plain-TCP connection's socket, or -1 (not ready,
  // or TLS, whose session only the I/O thread may touch). The I/O thread sets it when
  // the link becomes ready and clears it before the socket can be closed.
  int direct_fd = -1;    // GUARDED_BY(mutex)
  // The I/O thread holds bytes of this link it has not finished writing: a direct send
  // now would overtake them.
  bool io_busy = false;  // GUARDED_BY(mutex)

  // I/O thread only.
  int connection_fd = -1;  // the link's connection in any phase, or -1
  uint32_t failed_attempts = 0;
  uint64_t next_attempt_ns = 0;
};

namespace {

// What one read or write on a connection did.
struct IoResult {
  enum class Kind : uint8_t { kBytes, kWouldBlock, kClosed, kFailed };
  Kind kind = Kind::kFailed;
  size_t bytes = 0;
  std::string error;  // kFailed: why
};

}  // namespace

struct Transporter::Connection {
  enum class Phase : uint8_t { kConnecting, kTls, kHandshake, kReady };

  int fd = -1;
  bool outgoing = false;
  Phase phase = Phase::kHandshake;
  std::string peer_address;
  PeerLink* link = nullptr;  // the dialled peer, or the hello's node once ready
  uint64_t handshake_deadline_ns = 0;
  uint64_t ready_since_ns = 0;
  // Bytes being written: our hello first, then batches swapped out of link->send_buffer.
  std::vector<uint8_t> out;
  size_t out_offset = 0;
  std::vector<uint8_t> hello_in;  // the peer's hello as it arrives
  FrameDecoder decoder;
  std::vector<Signal> decoded;     // scratch for decoder output
  std::deque<Signal> undelivered;  // refused by the receiver (kTemporary), in order
  uint64_t retry_delivery_ns = 0;
  bool logged_undeliverable = false;
  uint32_t epoll_mask = 0;  // what is registered with epoll
  // TLS (use_tls): the session, the epoll interest its handshake asked for, and the
  // crossings where a read needs the socket writable or a write needs it readable.
  std::unique_ptr<TlsSession> tls;
  uint32_t tls_handshake_interest = 0;
  bool tls_read_wants_write = false;
  bool tls_write_wants_read = false;
  // The last TLS read needed bytes from the socket: what OpenSSL holds is a partial
  // record, and only epoll can say when the rest is there.
  bool tls_read_needs_socket = false;

  // All byte I/O of a connection goes through these two: plain socket calls, or the
  // TLS session once there is one.
  IoResult read_bytes(uint8_t* buffer, size_t size_bytes) {
    IoResult result;
    if (tls != nullptr) {
      tls_read_wants_write = false;
      const TlsSession::Outcome outcome =
          tls->read(buffer, size_bytes, &result.bytes, &result.error);
      tls_read_needs_socket = outcome == TlsSession::Outcome::kWantRead;
      return from_tls(outcome, std::move(result), &tls_read_wants_write,
                      TlsSession::Outcome::kWantWrite);
    }
    const ssize_t n = ::recv(fd, buffer, size_bytes, 0);
    return from_socket(n, std::move(result));
  }
  IoResult write_bytes(const uint8_t* buffer, size_t size_bytes) {
    IoResult result;
    if (tls != nullptr) {
      tls_write_wants_read = false;
      const TlsSession::Outcome outcome =
          tls->write(buffer, size_bytes, &result.bytes, &result.error);
      return from_tls(outcome, std::move(result), &tls_write_wants_read,
                      TlsSession::Outcome::kWantRead);
    }
    const ssize_t n = ::send(fd, buffer, size_bytes, MSG_NOSIGNAL);
    return from_socket(n, std::move(result));
  }
  static IoResult from_socket(ssize_t n, IoResult result) {
    if (n > 0) {
      result.kind = IoResult::Kind::kBytes;
      result.bytes = static_cast<size_t>(n);
    } else if (n == 0) {
      result.kind = IoResult::Kind::kClosed;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      result.kind = IoResult::Kind::kWouldBlock;
    } else {
      result.kind = IoResult::Kind::kFailed;
      result.error = errno_text(errno);
    }
    return result;
  }
  // `crossing` is the want that points the other way (a read wanting to write, a write
  // wanting to read): it is noted in *crossed so that update_epoll asks for it.
  static IoResult from_tls(TlsSession::Outcome outcome, IoResult result, bool* crossed,
                           TlsSession::Outcome crossing) {
    switch (outcome) {
      case TlsSession::Outcome::kDone:
        result.kind = IoResult::Kind::kBytes;
        break;
      case TlsSession::Outcome::kWantRead:
      case TlsSession::Outcome::kWantWrite:
        result.kind = IoResult::Kind::kWouldBlock;
        *crossed = outcome == crossing;
        break;
      case TlsSession::Outcome::kClosed:
        result.kind = IoResult::Kind::kClosed;
        break;
      case TlsSession::Outcome::kFailed:
        result.kind = IoResult::Kind::kFailed;
        break;
    }
    return result;
  }

  std::string describe() const {
    if (link != nullptr && (outgoing || phase == Phase::kReady)) {
      return (outgoing ? "to node " : "from node ") + std::to_string(link->node_id) + " at " +
             peer_address;
    }
    return "from " + peer_address;
  }
};

// Everything the I/O thread owns, and the loop itself.
class Transporter::IoLoop {
 public:
  explicit IoLoop(Transporter& owner) : t_(owner), read_buffer_(kReadBufferBytes) {}

  // The transporter's own I/O thread (TransporterOptions::io_thread).
  void run() {
    while (!t_.stop_requested_.load(std::memory_order_acquire)) turn(UINT64_MAX);
    shutdown();
  }

  // One loop turn: waits in epoll at most `max_wait_ms` (and no longer than the loop's
  // own deadlines: dials, handshakes, delivery retries), then does everything due.
  void turn(uint64_t max_wait_ms) {
    epoll_event events[kEpollEventsMax];
    const int timeout_ms = static_cast<int>(std::min<uint64_t>(max_wait_ms, wait_timeout_ms()));
    const int count = epoll_wait(t_.epoll_fd_, events, kEpollEventsMax, timeout_ms);
    if (count < 0 && errno != EINTR) {
      DUO_LOG(ERROR, kLogComponent) << "node " << own() << ": epoll_wait: " << errno_text(errno);
    }
    for (int i = 0; i < count; ++i) {
      const int fd = events[i].data.fd;
      if (fd == t_.wake_fd_) {
        uint64_t value = 0;
        if (::read(t_.wake_fd_, &value, sizeof(value)) < 0) { /* nothing pending: fine */
        }
      } else if (fd == t_.listen_fd_) {
        accept_all();
      } else {
        on_connection_event(fd, events[i].events);
      }
    }
    close_disconnected_links();
    flush_ready_links();
    retry_deliveries();
    read_buffered_tls_input();
    expire_handshakes();
    dial_due_peers();
    close_retired_fds();
  }

  void shutdown() {
    std::vector<int> fds;
    for (auto& [fd, connection] : connections_) fds.push_back(fd);
    for (int fd : fds) {
      auto it = connections_.find(fd);
      if (it != connections_.end()) close_connection(*it->second, "transporter stopped", false);
    }
    close_retired_fds();
  }

 private:
  uint16_t own() const { return t_.options_.node_id; }
  uint64_t now_ns() const { return real_clock().now_ns(); }
  Counters& counters() { return *t_.counters_; }

  int wait_timeout_ms() {
    const uint64_t now = now_ns();
    uint64_t wait_ns = kIdleWaitMaxMs * kNanosPerMilli;
    auto consider = [&](uint64_t deadline_ns) {
      wait_ns = std::min(wait_ns, deadline_ns > now ? deadline_ns - now : 0);
    };
    for (auto& [node_id, link] : t_.links_) {
      if (link->we_dial && link->connection_fd < 0) consider(link->next_attempt_ns);
    }
    for (auto& [fd, connection] : connections_) {
      if (connection->phase != Connection::Phase::kReady) {
        consider(connection->handshake_deadline_ns);
      }
      if (!connection->undelivered.empty()) consider(connection->retry_delivery_ns);
      if (has_buffered_tls_input(*connection)) consider(now);
    }
    // Round up so a deadline 0.3 ms away does not become a busy 0 ms loop.
    return static_cast<int>((wait_ns + kNanosPerMilli - 1) / kNanosPerMilli);
  }

  // --- connection bookkeeping ------------------------------------------------------

  void update_epoll(Connection& c) {
    uint32_t mask = 0;
    const bool connecting = c.phase == Connection::Phase::kConnecting;
    if (c.phase == Connection::Phase::kTls) {
      mask = c.tls_handshake_interest;
    } else {
      if (!connecting && c.undelivered.empty()) mask |= EPOLLIN;
      if (connecting || c.out_offset < c.out.size()) mask |= EPOLLOUT;
      if (c.tls_read_wants_write && c.undelivered.empty()) mask |= EPOLLOUT;
      if (c.tls_write_wants_read) mask |= EPOLLIN;
    }
    if (mask == c.epoll_mask) return;
    epoll_event event{};
    event.events = mask;
    event.data.fd = c.fd;
    if (epoll_ctl(t_.epoll_fd_, EPOLL_CTL_MOD, c.fd, &event) != 0) {
      DUO_LOG(ERROR, kLogComponent) << "node " << own() << ": epoll_ctl: " << errno_text(errno);
    }
    c.epoll_mask = mask;
  }

  Connection& add_connection(int fd, bool outgoing, Connection::Phase phase,
                             std::string peer_address, PeerLink* link) {
    auto connection = std::make_unique<Connection>();
    connection->fd = fd;
    connection->outgoing = outgoing;
    connection->phase = phase;
    connection->peer_address = std::move(peer_address);
    connection->link = link;
    connection->handshake_deadline_ns =
        now_ns() + t_.options_.handshake_timeout_ms * kNanosPerMilli;
    epoll_event event{};
    event.events = 0;
    event.data.fd = fd;
    if (epoll_ctl(t_.epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
      DUO_LOG(ERROR, kLogComponent) << "node " << own() << ": epoll_ctl add: " << errno_text(errno);
    }
    Connection& ref = *connection;
    connections_[fd] = std::move(connection);
    return ref;
  }

  // Closes `c`. `error` marks a protocol/socket failure (logged as WARNING and counted);
  // orderly ends are INFO. The fd itself is closed at the end of the loop turn, so that
  // a stale event of this turn can never hit a new socket that reused the number.
  void close_connection(Connection& c, const std::string& reason, bool error) {
    const int fd = c.fd;
    PeerLink* link = c.link;
    const bool was_ready = c.phase == Connection::Phase::kReady;
    const bool was_stable = was_ready && now_ns() - c.ready_since_ns >= kStableLinkNs;
    if (error) {
      counters().connections_closed_for_errors.fetch_add(1, std::memory_order_relaxed);
      DUO_LOG(WARNING, kLogComponent)
          << "node " << own() << ": closing connection " << c.describe() << ": " << reason;
    } else {
      DUO_LOG(INFO, kLogComponent)
          << "node " << own() << ": connection " << c.describe() << " closed: " << reason;
    }
    const std::string peer_address = c.peer_address;
    epoll_ctl(t_.epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    retired_fds_.push_back(fd);
    connections_.erase(fd);  // `c` is gone from here on
    if (link != nullptr && link->connection_fd == fd) {
      link->connection_fd = -1;
      if (link->we_dial) schedule_redial(*link, /*after_success=*/was_stable);
    }
    if (was_ready && link != nullptr) {
      {
        std::lock_guard<std::mutex> lock(link->mutex);
        link->ready = false;
        link->direct_fd = -1;
        link->io_busy = false;
        // Queued signals die with the link: the kernel's contract is that signals to
        // another node may be lost, and failure handling is the membership block's job.
        link->send_buffer.clear();
      }
      if (t_.on_link_event_) {
        t_.on_link_event_(LinkEvent{link->node_id, LinkState::kDisconnected, peer_address, reason});
      }
    }
  }

  // Links disconnect() asked to close, in the loop turn its wake starts: nothing is read
  // from them after that turn.
  void close_disconnected_links() {
    for (auto& [node_id, link_ptr] : t_.links_) {
      PeerLink& link = *link_ptr;
      {
        std::lock_guard<std::mutex> lock(link.mutex);
        if (!link.disconnect_now) continue;
        link.disconnect_now = false;
      }
      auto it = connections_.find(link.connection_fd);
      if (link.connection_fd >= 0 && it != connections_.end()) {
        close_connection(*it->second, kDisconnectedByThisNode, false);
      }
    }
  }

  void close_retired_fds() {
    for (int fd : retired_fds_) ::close(fd);
    retired_fds_.clear();
  }

  void schedule_redial(PeerLink& link, bool after_success) {
    if (after_success) {
      link.failed_attempts = 0;
    } else {
      ++link.failed_attempts;
    }
    const uint32_t doublings = std::min<uint32_t>(link.failed_attempts, 20);
    const uint64_t delay_ms = std::min(t_.options_.reconnect_delay_max_ms,
                                       t_.options_.reconnect_delay_min_ms << doublings);
    link.next_attempt_ns = now_ns() + delay_ms * kNanosPerMilli;
  }

  // --- accepting and dialling ----------------------------------------------------

  size_t handshakes_in_flight() const {
    size_t count = 0;
    for (const auto& [fd, connection] : connections_) {
      if (connection->phase != Connection::Phase::kReady) ++count;
    }
    return count;
  }

  void accept_all() {
    for (;;) {
      sockaddr_storage address{};
      socklen_t length = sizeof(address);
      const int fd = accept4(t_.listen_fd_, reinterpret_cast<sockaddr*>(&address), &length,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          DUO_LOG(WARNING, kLogComponent) << "node " << own() << ": accept: " << errno_text(errno);
        }
        return;
      }
      const std::string peer = format_address(address);
      if (handshakes_in_flight() >= t_.options_.pending_connections_max) {
        counters().connections_closed_for_errors.fetch_add(1, std::memory_order_relaxed);
        DUO_LOG(WARNING, kLogComponent)
            << "node " << own() << ": refusing connection from " << peer << ": "
            << t_.options_.pending_connections_max << " handshakes already in flight";
        ::close(fd);
        continue;
      }
      counters().connections_accepted.fetch_add(1, std::memory_order_relaxed);
      set_no_delay(fd);
      // The accepting side stays silent until the dialler's hello is accepted (on_hello):
      // our hello is the answer "accepted", so a dialler that reads it knows the link is
      // up on both ends, and a stranger learns nothing about us.
      Connection& c =
          add_connection(fd, /*outgoing=*/false, Connection::Phase::kHandshake, peer, nullptr);
      if (t_.tls_ != nullptr) {
        begin_tls(c);  // the TLS server side; it too waits for the client's first flight
      } else {
        update_epoll(c);
      }
    }
  }

  void dial_due_peers() {
    const uint64_t now = now_ns();
    for (auto& [node_id, link_ptr] : t_.links_) {
      PeerLink& link = *link_ptr;
      if (!link.we_dial || link.connection_fd >= 0) continue;
      std::string host;
      uint16_t port = 0;
      {
        std::lock_guard<std::mutex> lock(link.mutex);
        if (link.dial_now) {
          link.dial_now = false;
          link.next_attempt_ns = now;
        }
        host = link.dial_host;
        port = link.dial_port;
      }
      if (port == 0) {
        // No address yet: nothing to wait for until set_peer_address() wakes us.
        link.next_attempt_ns = UINT64_MAX;
        continue;
      }
      if (now < link.next_attempt_ns) continue;
      dial(link, host, port);
    }
  }

  void dial(PeerLink& link, const std::string& host, uint16_t port) {
    counters().connect_attempts.fetch_add(1, std::memory_order_relaxed);
    const std::string where = host + ":" + std::to_string(port);
    socklen_t length = 0;
    Result<sockaddr_storage> address = resolve(host, port, /*passive=*/false, &length);
    if (!address.ok()) {
      log_dial_failure(link, where, address.status().message());
      schedule_redial(link, false);
      return;
    }
    const int fd = ::socket(address->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      log_dial_failure(link, where, "socket: " + errno_text(errno));
      schedule_redial(link, false);
      return;
    }
    set_no_delay(fd);
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address.value()), length);
    if (rc != 0 && errno != EINPROGRESS) {
      log_dial_failure(link, where, errno_text(errno));
      ::close(fd);
      schedule_redial(link, false);
      return;
    }
    link.connection_fd = fd;
    Connection& c = add_connection(
        fd, /*outgoing=*/true,
        rc == 0 ? Connection::Phase::kHandshake : Connection::Phase::kConnecting, where, &link);
    if (c.phase != Connection::Phase::kHandshake) {
      update_epoll(c);
    } else if (t_.tls_ != nullptr) {
      begin_tls(c);
    } else {
      begin_handshake(c);
    }
  }

  void log_dial_failure(const PeerLink& link, const std::string& where, const std::string& why) {
    // The first failure in a row is worth an operator's attention; the retries that
    // follow (every few seconds while a peer is down) are not.
    if (link.failed_attempts == 0) {
      DUO_LOG(INFO, kLogComponent)
          << "node " << own() << ": cannot connect to node " << link.node_id << " at " << where
          << ": " << why << " (retrying with backoff)";
    } else {
      DUO_LOG(DEBUG, kLogComponent) << "node " << own() << ": connect to node " << link.node_id
                                    << " at " << where << " failed again: " << why;
    }
  }

  // --- handshake -------------------------------------------------------------------

  // Puts our hello first in c.out (nothing else is queued on a connection before it).
  void queue_hello(Connection& c) {
    Hello hello;
    hello.node_id = own();
    hello.peer_node_id = c.outgoing ? c.link->node_id : 0;
    hello.cluster_secret = t_.options_.cluster_secret;
    Result<std::vector<uint8_t>> bytes = encode_hello(hello);  // secret size checked in create
    c.out = bytes.ok() ? std::move(bytes).value() : std::vector<uint8_t>();
    c.out_offset = 0;
  }

  // --- TLS ---------------------------------------------------------------------------

  // Starts the TLS handshake on a fresh TCP connection (client side when we dialled).
  void begin_tls(Connection& c) {
    Result<std::unique_ptr<TlsSession>> session = TlsSession::create(*t_.tls_, c.fd, c.outgoing);
    if (!session.ok()) {
      close_connection(c, session.status().message(), true);
      return;
    }
    c.tls = std::move(session).value();
    c.phase = Connection::Phase::kTls;
    drive_tls_handshake(c);
  }

  // Advances the TLS handshake; once done, the hello follows inside TLS.
  void drive_tls_handshake(Connection& c) {
    std::string error;
    switch (c.tls->handshake(&error)) {
      case TlsSession::Outcome::kWantRead:
        c.tls_handshake_interest = EPOLLIN;
        update_epoll(c);
        return;
      case TlsSession::Outcome::kWantWrite:
        c.tls_handshake_interest = EPOLLOUT;
        update_epoll(c);
        return;
      case TlsSession::Outcome::kClosed:
        // A TLS server that refuses our certificate, or a plaintext node, just hangs up.
        close_connection(c,
                         c.outgoing ? "peer closed the connection during the TLS handshake (its "
                                      "log says why; is it a plaintext node?)"
                                    : "closed by peer during the TLS handshake",
                         true);
        return;
      case TlsSession::Outcome::kFailed:
        close_connection(c, error, true);
        return;
      case TlsSession::Outcome::kDone:
        break;
    }
    DUO_LOG(DEBUG, kLogComponent) << "node " << own() << ": TLS established " << c.describe();
    if (c.outgoing) {
      begin_handshake(c);
    } else {
      c.phase = Connection::Phase::kHandshake;
      update_epoll(c);
    }
    // The peer's hello may already sit decrypted inside OpenSSL, where epoll cannot
    // see it; read_buffered_tls_input() picks it up in this loop turn.
  }

  static bool has_buffered_tls_input(const Connection& c) {
    return c.tls != nullptr && c.phase != Connection::Phase::kTls && c.undelivered.empty() &&
           !c.tls_read_needs_socket && c.tls->has_buffered_input();
  }

  // Reads what OpenSSL holds already (level-triggered epoll only sees the socket).
  void read_buffered_tls_input() {
    ready_fds_.clear();
    for (auto& [fd, connection] : connections_) {
      if (has_buffered_tls_input(*connection)) ready_fds_.push_back(fd);
    }
    for (int fd : ready_fds_) {
      auto it = connections_.find(fd);
      if (it != connections_.end()) read_available(*it->second);
    }
  }

  // The dialling side speaks first.
  void begin_handshake(Connection& c) {
    c.phase = Connection::Phase::kHandshake;
    queue_hello(c);
    if (write_pending(c)) update_epoll(c);
  }

  void on_connection_event(int fd, uint32_t events) {
    auto it = connections_.find(fd);
    if (it == connections_.end()) return;  // closed earlier in this turn
    Connection& c = *it->second;
    if (c.phase == Connection::Phase::kConnecting) {
      on_connect_done(c);
      return;
    }
    if (c.phase == Connection::Phase::kTls) {
      drive_tls_handshake(c);  // a hang-up or error shows there as a failed handshake
      return;
    }
    const bool readable = (events & EPOLLIN) != 0;
    const bool writable = (events & EPOLLOUT) != 0;
    if (writable || (readable && c.tls_write_wants_read)) {
      if (!write_pending(c)) return;
    }
    if ((readable || (writable && c.tls_read_wants_write)) && c.undelivered.empty()) {
      read_available(c);
      return;
    }
    if ((events & (EPOLLHUP | EPOLLERR)) != 0) {
      int error = 0;
      socklen_t length = sizeof(error);
      getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &error, &length);
      close_connection(c, error != 0 ? errno_text(error) : "connection hung up", true);
    }
  }

  void on_connect_done(Connection& c) {
    int error = 0;
    socklen_t length = sizeof(error);
    if (getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
    if (error != 0) {
      PeerLink& link = *c.link;
      log_dial_failure(link, c.peer_address, errno_text(error));
      const int fd = c.fd;
      epoll_ctl(t_.epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
      retired_fds_.push_back(fd);
      connections_.erase(fd);
      link.connection_fd = -1;
      schedule_redial(link, false);
      return;
    }
    if (t_.tls_ != nullptr) {
      begin_tls(c);
    } else {
      begin_handshake(c);
    }
  }

  // Reads what is available (bounded per turn) and processes it.
  void read_available(Connection& c) {
    const int fd = c.fd;
    for (int i = 0; i < kReadsPerEventMax; ++i) {
      IoResult read = c.read_bytes(read_buffer_.data(), read_buffer_.size());
      if (read.kind == IoResult::Kind::kWouldBlock) {
        update_epoll(c);  // a TLS read may need the socket writable (no-op otherwise)
        return;
      }
      if (read.kind == IoResult::Kind::kFailed) {
        close_connection(c, "read failed: " + read.error, true);
        return;
      }
      if (read.kind == IoResult::Kind::kClosed) {
        on_peer_closed(c);
        return;
      }
      const size_t n = read.bytes;
      counters().bytes_read.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
      if (!on_bytes(c, std::span<const uint8_t>(read_buffer_.data(), n))) {
        return;  // closed
      }
      if (!connections_.contains(fd) || !c.undelivered.empty()) return;
    }
  }

  void on_peer_closed(Connection& c) {
    if (c.phase != Connection::Phase::kReady) {
      close_connection(c,
                       !c.hello_in.empty() ? "closed by peer in the middle of its hello"
                       : c.outgoing        ? "peer refused our hello (its log says why)"
                                           : "closed by peer before its hello",
                       !c.outgoing || !c.hello_in.empty());
      return;
    }
    if (c.decoder.buffered_bytes() > 0) {
      close_connection(c,
                       "closed by peer in the middle of a frame (" +
                           std::to_string(c.decoder.buffered_bytes()) +
                           " bytes of a truncated frame)",
                       true);
      return;
    }
    close_connection(c, "closed by peer", false);
  }

  // Handles received bytes; false if the connection was closed.
  bool on_bytes(Connection& c, std::span<const uint8_t> bytes) {
    if (c.phase == Connection::Phase::kHandshake) {
      c.hello_in.insert(c.hello_in.end(), bytes.begin(), bytes.end());
      size_t consumed = 0;
      Result<std::optional<Hello>> hello = parse_hello(c.hello_in, &consumed);
      if (!hello.ok()) {
        close_connection(c, "handshake failed: " + hello.status().message(), true);
        return false;
      }
      if (!hello->has_value()) return true;  // wait for the rest
      if (!on_hello(c, **hello)) return false;
      // Frames the peer sent right behind its hello.
      std::vector<uint8_t> rest(c.hello_in.begin() + static_cast<ptrdiff_t>(consumed),
                                c.hello_in.end());
      c.hello_in.clear();
      c.hello_in.shrink_to_fit();
      if (rest.empty()) return true;
      return on_frames(c, rest);
    }
    return on_frames(c, bytes);
  }

  bool on_hello(Connection& c, const Hello& hello) {
    HelloExpectation expectation;
    expectation.own_node_id = own();
    expectation.cluster_secret = t_.options_.cluster_secret;
    expectation.expected_peer_node_id = c.outgoing ? c.link->node_id : 0;
    for (const auto& [node_id, link] : t_.links_) {
      if (!link->we_dial) expectation.allowed_peer_node_ids.push_back(node_id);
    }
    Status status = check_peer_hello(hello, expectation);
    // With TLS the hello's node id must be the one the CA-signed certificate names:
    // this is what makes node ids authenticated rather than claimed.
    if (status.ok() && c.tls != nullptr) status = c.tls->check_peer_names_node(hello.node_id);
    if (!status.ok()) {
      close_connection(c, "handshake failed: " + status.message(), true);
      return false;
    }
    PeerLink& link = *t_.links_.at(hello.node_id);
    if (!c.outgoing) {
      if (link.connection_fd >= 0 && link.connection_fd != c.fd) {
        auto old = connections_.find(link.connection_fd);
        if (old != connections_.end()) {
          close_connection(*old->second, "replaced by a new connection from the same node", false);
        }
      }
      c.link = &link;
      link.connection_fd = c.fd;
      queue_hello(c);  // the answer; frames follow it once the link is ready
    }
    c.phase = Connection::Phase::kReady;
    c.ready_since_ns = now_ns();
    {
      std::lock_guard<std::mutex> lock(link.mutex);
      link.ready = true;
      link.send_buffer.clear();
      link.direct_fd = t_.options_.send_from_caller && c.tls == nullptr ? c.fd : -1;
      link.io_busy = c.out_offset != c.out.size();  // an accepted link's hello may be pending
    }
    counters().links_established.fetch_add(1, std::memory_order_relaxed);
    DUO_LOG(INFO, kLogComponent) << "node " << own() << ": link " << c.describe() << " is up";
    if (t_.on_link_event_) {
      t_.on_link_event_(LinkEvent{link.node_id, LinkState::kConnected, c.peer_address, ""});
    }
    return write_pending(c);
  }

  // --- traffic ---------------------------------------------------------------------

  bool on_frames(Connection& c, std::span<const uint8_t> bytes) {
    c.decoded.clear();
    Status status = c.decoder.feed(bytes, &c.decoded);
    // Frames decoded before a bad one are still the peer's valid traffic: deliver them,
    // then close.
    for (Signal& signal : c.decoded) {
      if (signal.sender().node_id != c.link->node_id || signal.receiver().node_id != own()) {
        close_connection(c,
                         "frame " + signal.describe() + " is not from node " +
                             std::to_string(c.link->node_id) + " to node " + std::to_string(own()),
                         true);
        return false;
      }
      c.undelivered.push_back(std::move(signal));
    }
    c.decoded.clear();
    deliver_pending(c);
    if (!status.ok()) {
      close_connection(c, "bad frame: " + status.message(), true);
      return false;
    }
    update_epoll(c);
    return true;
  }

  // Hands undelivered signals to the receiver in order, stopping at the first kTemporary.
  void deliver_pending(Connection& c) {
    while (!c.undelivered.empty()) {
      Signal& signal = c.undelivered.front();
      Status status = t_.on_receive_(signal);
      if (status.is(ErrorCode::kTemporary)) {
        counters().delivery_retries.fetch_add(1, std::memory_order_relaxed);
        c.retry_delivery_ns = now_ns() + t_.options_.delivery_retry_delay_ms * kNanosPerMilli;
        return;
      }
      if (status.ok()) {
        counters().frames_delivered.fetch_add(1, std::memory_order_relaxed);
      } else {
        counters().dropped_undeliverable.fetch_add(1, std::memory_order_relaxed);
        if (!c.logged_undeliverable) {
          c.logged_undeliverable = true;
          DUO_LOG(WARNING, kLogComponent)
              << "node " << own() << ": dropping " << signal.describe() << " " << c.describe()
              << ": " << status.message() << " (further drops on this link are only counted)";
        }
      }
      c.undelivered.pop_front();
    }
  }

  void retry_deliveries() {
    const uint64_t now = now_ns();
    for (auto& [fd, connection] : connections_) {
      Connection& c = *connection;
      if (c.undelivered.empty() || now < c.retry_delivery_ns) continue;
      deliver_pending(c);
      update_epoll(c);  // resumes reading once drained
    }
  }

  // Writes as much of c.out as the socket takes; refills it from the link's buffer once
  // written. False if the connection was closed.
  bool write_pending(Connection& c) {
    for (;;) {
      if (c.out_offset == c.out.size()) {
        c.out.clear();
        c.out_offset = 0;
        if (c.phase != Connection::Phase::kReady) break;
        {
          std::lock_guard<std::mutex> lock(c.link->mutex);
          c.out.swap(c.link->send_buffer);
          c.link->io_busy = !c.out.empty();
        }
        if (c.out.empty()) break;
      }
      IoResult written = c.write_bytes(c.out.data() + c.out_offset, c.out.size() - c.out_offset);
      if (written.kind == IoResult::Kind::kWouldBlock) break;
      if (written.kind != IoResult::Kind::kBytes) {
        close_connection(c,
                         "write failed: " + (written.kind == IoResult::Kind::kClosed
                                                 ? std::string("connection closed by peer")
                                                 : written.error),
                         true);
        return false;
      }
      const size_t n = written.bytes;
      counters().bytes_written.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
      c.out_offset += n;
    }
    update_epoll(c);
    return true;
  }

  void flush_ready_links() {
    // Collect first: write_pending may close (erase) connections.
    ready_fds_.clear();
    for (auto& [fd, connection] : connections_) {
      if (connection->phase == Connection::Phase::kReady &&
          connection->out_offset == connection->out.size()) {
        ready_fds_.push_back(fd);
      }
    }
    for (int fd : ready_fds_) {
      auto it = connections_.find(fd);
      if (it != connections_.end()) write_pending(*it->second);
    }
  }

  void expire_handshakes() {
    const uint64_t now = now_ns();
    ready_fds_.clear();
    for (auto& [fd, connection] : connections_) {
      if (connection->phase != Connection::Phase::kReady &&
          now >= connection->handshake_deadline_ns) {
        ready_fds_.push_back(fd);
      }
    }
    for (int fd : ready_fds_) {
      auto it = connections_.find(fd);
      if (it == connections_.end()) continue;
      Connection& c = *it->second;
      if (c.phase == Connection::Phase::kConnecting) {
        PeerLink& link = *c.link;
        log_dial_failure(link, c.peer_address, "connect timed out");
        epoll_ctl(t_.epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
        retired_fds_.push_back(fd);
        connections_.erase(fd);
        link.connection_fd = -1;
        schedule_redial(link, false);
        continue;
      }
      close_connection(c,
                       "handshake not completed within " +
                           std::to_string(t_.options_.handshake_timeout_ms) + " ms",
                       true);
    }
  }

  Transporter& t_;
  std::vector<uint8_t> read_buffer_;
  std::unordered_map<int, std::unique_ptr<Connection>> connections_;  // key: fd
  std::vector<int> retired_fds_;
  std::vector<int> ready_fds_;  // scratch
};

// --- Transporter -------------------------------------------------------------------

Transporter::Transporter(TransporterOptions options, ReceiveCallback on_receive,
                         LinkEventCallback on_link_event)
    : options_(std::move(options)),
      on_receive_(std::move(on_receive)),
      on_link_event_(std::move(on_link_event)),
      counters_(std::make_unique<Counters>()) {}

Result<std::unique_ptr<Transporter>> Transporter::create(TransporterOptions options,
                                                         ReceiveCallback on_receive,
                                                         LinkEventCallback on_link_event) {
  auto config_error = [](const std::string& what) {
    return Status(ErrorCode::kConfigError, "transporter: " + what);
  };
  if (options.node_id == 0) return config_error("node id 0 is reserved");
  if (!on_receive) return config_error("no receive callback");
  if (options.cluster_secret.size() > kClusterSecretBytesMax) {
    return config_error("cluster secret longer than " + std::to_string(kClusterSecretBytesMax) +
                        " bytes");
  }
  if (options.send_buffer_bytes_max < kFrameBytesMax) {
    return config_error("send buffer of " + std::to_string(options.send_buffer_bytes_max) +
                        " bytes cannot hold the largest frame (" + std::to_string(kFrameBytesMax) +
                        " bytes)");
  }
  // The upper bound keeps the backoff's doubling (at most 2^20) far from overflow.
  if (options.reconnect_delay_min_ms == 0 ||
      options.reconnect_delay_max_ms < options.reconnect_delay_min_ms ||
      options.reconnect_delay_max_ms > kReconnectDelayMaxMs) {
    return config_error("reconnect delays must satisfy 0 < min <= max <= " +
                        std::to_string(kReconnectDelayMaxMs) + " ms");
  }
  if (options.handshake_timeout_ms == 0 || options.pending_connections_max == 0) {
    return config_error("handshake timeout and pending connection limit must be positive");
  }

  std::unique_ptr<Transporter> t(
      new Transporter(options, std::move(on_receive), std::move(on_link_event)));
  if (options.use_tls) {
    Result<std::unique_ptr<TlsContext>> tls = TlsContext::create(options.tls, options.node_id);
    if (!tls.ok()) return config_error(tls.status().message());
    t->tls_ = std::move(tls).value();
  }
  for (const PeerConfig& peer : options.peers) {
    if (peer.node_id == 0 || peer.node_id == options.node_id) {
      return config_error("peer node id " + std::to_string(peer.node_id) + " is invalid");
    }
    auto link = std::make_unique<PeerLink>(peer.node_id, dials(options.node_id, peer.node_id));
    link->dial_host = peer.host;
    link->dial_port = peer.port;
    if (!t->links_.emplace(peer.node_id, std::move(link)).second) {
      return config_error("peer node " + std::to_string(peer.node_id) + " listed twice");
    }
  }

  socklen_t length = 0;
  DUO_ASSIGN_OR_RETURN(sockaddr_storage address, resolve(options.listen_host, options.listen_port,
                                                         /*passive=*/true, &length));
  t->listen_fd_ = ::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (t->listen_fd_ < 0) return Status(ErrorCode::kIoError, "socket: " + errno_text(errno));
  // Lets a restarted node bind its port again while old connections sit in TIME_WAIT.
  const int one = 1;
  setsockopt(t->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const std::string where = options.listen_host + ":" + std::to_string(options.listen_port);
  if (::bind(t->listen_fd_, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    return Status(ErrorCode::kIoError, "cannot bind " + where + ": " + errno_text(errno));
  }
  if (::listen(t->listen_fd_, 128) != 0) {
    return Status(ErrorCode::kIoError, "cannot listen on " + where + ": " + errno_text(errno));
  }
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof(bound);
  if (getsockname(t->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &bound_length) != 0) {
    return Status(ErrorCode::kIoError, "getsockname: " + errno_text(errno));
  }
  t->listen_port_ = bound.ss_family == AF_INET6
                        ? ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port)
                        : ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);

  t->epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (t->epoll_fd_ < 0) return Status(ErrorCode::kIoError, "epoll_create1: " + errno_text(errno));
  t->wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (t->wake_fd_ < 0) return Status(ErrorCode::kIoError, "eventfd: " + errno_text(errno));
  for (int fd : {t->listen_fd_, t->wake_fd_}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (epoll_ctl(t->epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
      return Status(ErrorCode::kIoError, "epoll_ctl: " + errno_text(errno));
    }
  }
  t->io_loop_ = std::make_unique<IoLoop>(*t);
  DUO_LOG(INFO, kLogComponent) << "node " << options.node_id << ": listening on "
                               << format_address(bound) << " (" << options.peers.size() << " peers"
                               << (options.use_tls ? ", TLS" : "") << ")";
  return t;
}

Transporter::~Transporter() {
  stop();
  for (int fd : {listen_fd_, epoll_fd_, wake_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

Status Transporter::start() {
  if (started_) return Status(ErrorCode::kInvalidArgument, "transporter already started");
  started_ = true;
  if (options_.io_thread) io_thread_ = std::thread([this] { io_loop_->run(); });
  return Status::OK();
}

void Transporter::stop() {
  if (!started_ || stop_requested_.exchange(true, std::memory_order_acq_rel)) return;
  if (options_.io_thread) {
    wake_io_thread();
    io_thread_.join();
    return;
  }
  // Nobody polls any more (the owner's contract): close the links on this thread.
  DUO_KERNEL_CHECK(!polling_.load(std::memory_order_acquire), "Transporter::stop during poll()");
  io_loop_->shutdown();
}

Status Transporter::poll(uint64_t max_wait_ms) {
  DUO_KERNEL_CHECK(!options_.io_thread, "Transporter::poll with its own I/O thread");
  if (!started_ || stop_requested_.load(std::memory_order_acquire)) {
    return Status(ErrorCode::kInvalidArgument, "transporter not running");
  }
  // One poller at a time is the owner's rule (NDB's poll right); a second one would
  // corrupt the loop's state, so it stops the process rather than a link.
  DUO_KERNEL_CHECK(!polling_.exchange(true, std::memory_order_acquire),
                   "two threads in Transporter::poll");
  io_loop_->turn(max_wait_ms);
  polling_.store(false, std::memory_order_release);
  return Status::OK();
}

void Transporter::wake_poller() {
  wake_io_thread();
}

void Transporter::wake_io_thread() {
  const uint64_t one = 1;
  // Fails only when the counter would overflow, i.e. a wake is already pending.
  if (::write(wake_fd_, &one, sizeof(one)) < 0) { /* a wake is pending anyway */
  }
}

Status Transporter::set_peer_address(uint16_t node_id, std::string host, uint16_t port) {
  auto it = links_.find(node_id);
  if (it == links_.end()) {
    return Status(ErrorCode::kInvalidArgument,
                  "node " + std::to_string(node_id) + " is not a configured peer");
  }
  {
    std::lock_guard<std::mutex> lock(it->second->mutex);
    it->second->dial_host = std::move(host);
    it->second->dial_port = port;
    it->second->dial_now = true;
  }
  wake_io_thread();
  return Status::OK();
}

Status Transporter::disconnect(uint16_t node_id) {
  auto it = links_.find(node_id);
  if (it == links_.end()) {
    return Status(ErrorCode::kInvalidArgument,
                  "node " + std::to_string(node_id) + " is not a configured peer");
  }
  {
    std::lock_guard<std::mutex> lock(it->second->mutex);
    it->second->disconnect_now = true;
  }
  wake_io_thread();
  return Status::OK();
}

Status Transporter::send_remote(Signal signal) {
  const uint16_t node_id = signal.receiver().node_id;
  auto it = links_.find(node_id);
  if (it == links_.end()) {
    return Status(ErrorCode::kInvalidArgument,
                  node_id == options_.node_id
                      ? "send_remote to this node's own id " + std::to_string(node_id)
                      : "node " + std::to_string(node_id) + " is not a configured peer");
  }
  DUO_RETURN_IF_ERROR(signal.check_sendable());
  PeerLink& link = *it->second;
  const size_t frame_bytes = encoded_frame_size(signal);
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(link.mutex);
    if (!link.ready) {
      counters_->refused_not_connected.fetch_add(1, std::memory_order_relaxed);
      return Status(ErrorCode::kTemporary, "node " + std::to_string(node_id) + " not connected");
    }
    if (link.send_buffer.size() + frame_bytes > options_.send_buffer_bytes_max) {
      counters_->refused_buffer_full.fetch_add(1, std::memory_order_relaxed);
      return Status(ErrorCode::kTemporary,
                    "send buffer to node " + std::to_string(node_id) + " is full");
    }
    if (link.direct_fd >= 0 && !link.io_busy && link.send_buffer.empty()) {
      // send_from_caller and nothing of this link is waiting: the sender writes the
      // frame itself, sparing the I/O thread a wake-up and a write per frame (NDB sends
      // from the sending thread too). The lock keeps writers in order and the socket open. What the socket does
      // not take — or an error, which the I/O thread's next write meets and closes the
      // link on — goes to the buffer as usual.
      thread_local std::vector<uint8_t> frame;
      frame.clear();
      DUO_RETURN_IF_ERROR(encode_frame(signal, &frame));
      const ssize_t n = ::send(link.direct_fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      const size_t written = n > 0 ? static_cast<size_t>(n) : 0;
      counters_->frames_queued.fetch_add(1, std::memory_order_relaxed);
      counters_->bytes_written.fetch_add(written, std::memory_order_relaxed);
      if (written == frame.size()) return Status::OK();
      link.send_buffer.assign(frame.begin() + static_cast<ptrdiff_t>(written), frame.end());
      wake = true;
    } else {
      wake = link.send_buffer.empty();
      DUO_RETURN_IF_ERROR(encode_frame(signal, &link.send_buffer));
      counters_->frames_queued.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (wake) wake_io_thread();
  return Status::OK();
}

bool Transporter::is_connected(uint16_t node_id) const {
  auto it = links_.find(node_id);
  if (it == links_.end()) return false;
  std::lock_guard<std::mutex> lock(it->second->mutex);
  return it->second->ready;
}

TransporterStats Transporter::stats() const {
  const Counters& c = *counters_;
  auto get = [](const std::atomic<uint64_t>& v) { return v.load(std::memory_order_relaxed); };
  TransporterStats s;
  s.frames_queued = get(c.frames_queued);
  s.frames_delivered = get(c.frames_delivered);
  s.bytes_written = get(c.bytes_written);
  s.bytes_read = get(c.bytes_read);
  s.refused_not_connected = get(c.refused_not_connected);
  s.refused_buffer_full = get(c.refused_buffer_full);
  s.connections_accepted = get(c.connections_accepted);
  s.connections_closed_for_errors = get(c.connections_closed_for_errors);
  s.connect_attempts = get(c.connect_attempts);
  s.links_established = get(c.links_established);
  s.delivery_retries = get(c.delivery_retries);
  s.dropped_undeliverable = get(c.dropped_undeliverable);
  return s;
}

}  // namespace duo::transport
