// SocketTransport: the plain-TCP byte stream under a session's PacketEndpoint.
//
// Blocking I/O on a connected socket (the session runs on its own thread; see
// sql_server.h). Receive and send timeouts set on the socket (SO_RCVTIMEO /
// SO_SNDTIMEO) bound how long a silent or non-reading client holds its thread. Sends
// use MSG_NOSIGNAL so a vanished client yields EPIPE, not SIGPIPE.
//
// Thread-safety: thread-compatible. shutdown() (used by KILL) may be called from any
// thread: it only calls ::shutdown on the descriptor, which wakes a blocked recv.
#pragma once

#include "sql-frontend/protocol/packet_endpoint.h"

namespace duo::sql::server {

class SocketTransport : public protocol::Transport {
 public:
  // Takes ownership of the connected descriptor `fd`.
  explicit SocketTransport(int fd) : fd_(fd) {}
  ~SocketTransport() override;
  SocketTransport(const SocketTransport&) = delete;
  SocketTransport& operator=(const SocketTransport&) = delete;

  Result<size_t> read_some(char* out, size_t length) override;
  Status write_all(std::string_view bytes) override;

  // Sets the receive timeout (0: wait forever) and the send timeout.
  void set_timeouts(uint64_t receive_timeout_ms, uint64_t send_timeout_ms);
  // Ends both directions; blocked reads and writes return.
  void shutdown();
  int fd() const { return fd_; }

 private:
  int fd_;
};

}  // namespace duo::sql::server
