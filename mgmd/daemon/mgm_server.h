// MgmServer: duo_mgmd's TCP front — accepts management protocol sessions, frames
// requests with RequestParser, hands them to MgmService and writes the replies.
//
// Why plain POSIX sockets and poll() rather than Boost.Asio or threads: mgmd serves a
// few dozen long-lived, nearly idle sessions (one per node plus operators' clients);
// one thread with poll() over at most sessions_max + 2 descriptors is simple, needs no
// locking around the service and the node id table, and keeps the dependency set of
// the daemon at libc. The kernel transport (ndb-kernel/transport/) is where throughput
// matters; mgmd is not.
//
// Limits (STYLE.md "put a limit on everything"): sessions_max concurrent sessions (one
// more is answered "Too many sessions" and closed), request lines and argument counts
// (mgm_protocol.h), pending reply bytes per session (a peer that stops reading is
// dropped), and an idle timeout after which a session — and the node ids it holds —
// is closed. Any received byte, even a blank line, counts as activity.
//
// A fatal framing error (garbage bytes, an over-long line) is answered with an error
// reply, logged, and ends that session only; every other session carries on.
//
// Thread-safety: thread-compatible; run() is the event loop of the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "mgmd/daemon/mgm_service.h"
#include "mgmd/protocol/mgm_protocol.h"
#include "ndb-kernel/common/clock.h"
#include "ndb-kernel/common/status.h"

namespace duo::mgm {

struct ServerOptions {
  std::string bind_address = "0.0.0.0";  // numeric IPv4/IPv6 address or host name
  uint16_t port = 1186;                  // 0: the kernel picks a free port
  size_t sessions_max = 64;
  uint64_t session_idle_timeout_ms = 300000;
  // A reply waiting for a peer that does not read; two configurations' worth.
  size_t pending_reply_bytes_max = 2 * kReplyBodyBytesMax + 64 * 1024;
};

class MgmServer {
 public:
  MgmServer(MgmService* service, const Clock& clock, ServerOptions options);
  ~MgmServer();
  MgmServer(const MgmServer&) = delete;
  MgmServer& operator=(const MgmServer&) = delete;

  // Binds and listens. kIoError names the address and the OS reason.
  Status listen();
  // The bound port (the chosen one when options.port was 0).
  uint16_t port() const { return port_; }
  int listen_fd() const { return listen_fd_; }

  // Serves until the service asks for shutdown or `stop_fd` becomes readable (the
  // signal handler's self-pipe; -1 for none). Then flushes pending replies for at
  // most a second and closes every session.
  Status run(int stop_fd);

  size_t session_count() const { return sessions_.size(); }

 private:
  struct Session {
    int fd = -1;
    std::string peer;
    RequestParser parser;
    std::string out;       // reply bytes not yet written
    bool closing = false;  // close once `out` is flushed; read nothing more
    std::string close_reason;
    uint64_t last_activity_ns = 0;
    // Requests parsed but not answered yet: while a deferred reply is outstanding
    // (awaiting_deferred), later requests wait here so replies stay in request order.
    std::deque<RequestParser::Parsed> queued;
    bool awaiting_deferred = false;
    bool bye_seen = false;  // requests after `bye` are not answered
  };

  // Pipelined requests kept per session while a deferred reply is outstanding; more is
  // a client that does not wait for answers, and its session is closed.
  static constexpr size_t kQueuedRequestsMax = 64;

  void accept_sessions();
  void read_session(uint64_t id, Session& session);
  // Answers queued requests of `session` until one is deferred or none is left.
  void answer_queued(uint64_t id, Session& session);
  // Hands the service's queued deliveries to their sessions (and answers requests that
  // waited behind a deferred reply).
  void deliver_pending();
  // Writes what it can; false if the socket failed (the session must be dropped).
  bool flush_session(Session& session);
  // `reason` is taken by value: callers pass the session's own close_reason.
  void close_session(uint64_t id, std::string reason);
  void expire_idle_sessions();
  int poll_timeout_ms() const;

  MgmService* service_;
  const Clock& clock_;
  const ServerOptions options_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  uint64_t next_session_id_ = 1;  // 0 is NodeIdAllocator::kSelfOwner
  std::map<uint64_t, Session> sessions_;
};

}  // namespace duo::mgm
