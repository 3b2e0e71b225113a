// The MySQL listener and its connection threads; see sql_server.h.
#include "sql-frontend/server/sql_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ndb-kernel/common/logging.h"
#include "sql-frontend/protocol/packets.h"

namespace duo::sql::server {

namespace {
// Pending connections the kernel queues per listening socket.
constexpr int kListenBacklog = 128;
}  // namespace

SqlServer::SqlServer(QueryHandler* handler, UserDirectory* directory, SqlServerOptions options)
    : handler_(handler), options_(std::move(options)), authenticator_(directory, &sha2_cache_) {}

SqlServer::~SqlServer() {
  stop();
}

Status SqlServer::start() {
  if (!options_.tls_cert_file.empty() || !options_.tls_key_file.empty()) {
    DUO_ASSIGN_OR_RETURN(tls_context_,
                         TlsContext::load(options_.tls_cert_file, options_.tls_key_file));
  }
  // The Unix socket first: once the TCP port answers, both are there (duo up looks).
  if (!options_.socket_path.empty()) {
    Status unix_socket = unix_listener_.open(options_.socket_path, kListenBacklog);
    if (!unix_socket.ok()) {
      DUO_LOG(WARNING, "sqld") << "cannot listen on Unix socket " << options_.socket_path << ": "
                               << unix_socket.message() << "; serving TCP only";
    }
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  std::string port_text = std::to_string(options_.port);
  int rc = ::getaddrinfo(options_.bind_address.c_str(), port_text.c_str(), &hints, &addresses);
  if (rc != 0) {
    return Status(ErrorCode::kConfigError,
                  "bad bind address " + options_.bind_address + ": " + ::gai_strerror(rc));
  }
  int fd = ::socket(addresses->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    ::freeaddrinfo(addresses);
    return Status(ErrorCode::kIoError, std::string("socket: ") + std::strerror(errno));
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, addresses->ai_addr, addresses->ai_addrlen) != 0 ||
      ::listen(fd, kListenBacklog) != 0) {
    std::string error = std::strerror(errno);
    ::freeaddrinfo(addresses);
    ::close(fd);
    return Status(ErrorCode::kIoError,
                  "cannot listen on " + options_.bind_address + ":" + port_text + ": " + error);
  }
  ::freeaddrinfo(addresses);
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  listen_fd_ = fd;
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC);
  if (wake_fd_ < 0) return Status(ErrorCode::kIoError, "eventfd failed");
  accept_thread_ = std::thread([this] { accept_loop(); });
  DUO_LOG(INFO, "sqld") << "MySQL protocol listening on " << options_.bind_address << ":" << port_
                        << (unix_listener_.is_open() ? " and Unix socket " + unix_listener_.path()
                                                     : std::string())
                        << (tls_context_ ? " (TLS available)" : "");
  return Status::OK();
}

void SqlServer::stop() {
  if (stopping_.exchange(true)) return;
  if (accept_thread_.joinable()) {
    uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
    accept_thread_.join();
  }
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, connection] : connections_) {
      if (connection.session) connection.session->kill();
      threads.push_back(std::move(connection.thread));
    }
    connections_.clear();
    finished_.clear();
  }
  for (std::thread& thread : threads) thread.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  unix_listener_.close();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
}

size_t SqlServer::connection_count() const {
  std::lock_guard lock(mutex_);
  return connections_.size() - finished_.size();
}

bool SqlServer::kill_connection(uint32_t connection_id) {
  std::lock_guard lock(mutex_);
  auto it = connections_.find(connection_id);
  if (it == connections_.end() || it->second.session == nullptr) return false;
  it->second.session->kill();
  return true;
}

bool SqlServer::kill_query(uint32_t connection_id) {
  std::lock_guard lock(mutex_);
  auto it = connections_.find(connection_id);
  if (it == connections_.end() || it->second.session == nullptr) return false;
  it->second.session->kill_query();
  return true;
}

void SqlServer::reap_finished() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    for (uint32_t id : finished_) {
      auto it = connections_.find(id);
      if (it == connections_.end()) continue;
      threads.push_back(std::move(it->second.thread));
      connections_.erase(it);
    }
    finished_.clear();
  }
  for (std::thread& thread : threads) thread.join();
}

namespace {

std::string peer_host_of(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "unknown";
  if (address.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr, text,
                sizeof text);
  } else if (address.ss_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr, text,
                sizeof text);
  }
  return text;
}

// The greeting-time refusal of a connection over max_connections.
void refuse_too_many(int fd) {
  protocol::ErrPacket error{protocol::kErConCount, "08004", "Too many connections"};
  std::string payload = protocol::encode(error);
  std::string packet = {static_cast<char>(payload.size()), 0, 0, 0};
  packet += payload;
  (void)!::send(fd, packet.data(), packet.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(fd);
}

}  // namespace

void SqlServer::accept_loop() {
  while (!stopping_.load()) {
    pollfd fds[3] = {
        {wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}, {unix_listener_.fd(), POLLIN, 0}};
    const nfds_t count = unix_listener_.is_open() ? 3 : 2;
    int ready = ::poll(fds, count, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      DUO_LOG(ERROR, "sqld") << "poll: " << std::strerror(errno);
      return;
    }
    if (fds[0].revents != 0 || stopping_.load()) return;
    reap_finished();
    if (fds[1].revents != 0) accept_one(listen_fd_, /*unix_socket=*/false);
    if (count == 3 && fds[2].revents != 0) accept_one(unix_listener_.fd(), /*unix_socket=*/true);
  }
}

void SqlServer::accept_one(int listen_fd, bool unix_socket) {
  sockaddr_storage peer{};
  socklen_t peer_length = sizeof peer;
  int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &peer_length, SOCK_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    if (error != EINTR && error != EAGAIN && error != ECONNABORTED) {
      DUO_LOG(WARNING, "sqld") << "accept: " << std::strerror(error);
    }
    if (error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM) {
      // Out of descriptors or memory: the pending connection stays readable, so
      // back off (while still listening for stop()) instead of spinning.
      pollfd wake{wake_fd_, POLLIN, 0};
      ::poll(&wake, 1, 100);
    }
    return;
  }
  if (!unix_socket) {
    int one = 1;
    // Request/response traffic: never wait to coalesce a reply.
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  std::lock_guard lock(mutex_);
  if (connections_.size() - finished_.size() >= options_.max_connections) {
    refuse_too_many(fd);
    return;
  }
  uint32_t id = next_connection_id_++;
  Connection& connection = connections_[id];
  // MySQL names a Unix-socket client's host "localhost".
  std::string host = unix_socket ? std::string("localhost") : peer_host_of(peer);
  connection.thread = std::thread([this, id, fd, host = std::move(host), unix_socket]() mutable {
    run_connection(id, fd, std::move(host), unix_socket);
  });
}

void SqlServer::run_connection(uint32_t connection_id, int fd, std::string peer_host,
                               bool unix_socket) {
  // OpenSSL writes with write(2); a peer that vanished must yield EPIPE on this
  // thread, not a process-killing SIGPIPE. Blocking it here leaves the process's
  // signal disposition alone.
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &block, nullptr);

  auto session = std::make_unique<Session>(connection_id, std::make_unique<SocketTransport>(fd),
                                           std::move(peer_host), unix_socket, options_.session,
                                           handler_, &authenticator_, tls_context_.get(), this);
  bool run = false;
  {
    std::lock_guard lock(mutex_);
    auto it = connections_.find(connection_id);
    if (it != connections_.end() && !stopping_.load()) {
      it->second.session = session.get();
      run = true;
    }
  }
  if (run) session->run();
  {
    std::lock_guard lock(mutex_);
    auto it = connections_.find(connection_id);
    if (it != connections_.end()) {
      it->second.session = nullptr;
      finished_.push_back(connection_id);
    }
  }
  // Destroyed outside the lock: closing a TLS session may take a round trip.
  session.reset();
}

}  // namespace duo::sql::server
