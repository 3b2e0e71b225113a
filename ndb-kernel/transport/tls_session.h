// TlsSession: TLS on one non-blocking socket of the transporter.
//
// Nothing here blocks or waits: every call does what the socket allows now and says
// what it needs next (kWantRead / kWantWrite), which the transporter turns into epoll
// interest — including the TLS-typical crossings, a read that needs the socket writable
// and a write that needs it readable. The socket I/O under OpenSSL goes through our own
// BIO using send(MSG_NOSIGNAL)/recv, so a peer that resets the connection can never
// raise SIGPIPE in a process that did not ignore it (the client library runs inside
// applications).
//
// Thread-safety: one session belongs to one thread (the transporter's I/O thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/transport/tls_context.h"

namespace duo::transport {

class TlsSession {
 public:
  enum class Outcome : uint8_t {
    kDone,       // handshake complete / bytes moved (see *bytes)
    kWantRead,   // try again once the socket is readable
    kWantWrite,  // try again once the socket is writable
    kClosed,     // the peer closed the connection (TCP EOF or close_notify)
    kFailed,     // TLS or socket error; *error says why
  };

  // A session on connected socket `fd` (not owned: the caller closes it after the
  // session is gone). `client`: we dialled, so we start the handshake.
  static Result<std::unique_ptr<TlsSession>> create(const TlsContext& context, int fd, bool client);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Advances the handshake. kDone once it is complete (the peer's certificate verified
  // against the CA).
  Outcome handshake(std::string* error);
  // Reads up to `size_bytes` decrypted bytes into `buffer`; *bytes > 0 with kDone.
  Outcome read(uint8_t* buffer, size_t size_bytes, size_t* bytes, std::string* error);
  // Writes up to `size_bytes` from `buffer` (partial writes allowed); *bytes with kDone.
  // After kWantRead/kWantWrite the same bytes must be offered again.
  Outcome write(const uint8_t* buffer, size_t size_bytes, size_t* bytes, std::string* error);
  // True if decrypted or undecrypted bytes wait inside OpenSSL, where epoll cannot see
  // them: the caller must read again without waiting for the socket.
  bool has_buffered_input() const;
  // OK if the verified peer certificate names node `node_id` (tls_context.h).
  Status check_peer_names_node(uint16_t node_id) const;

 private:
  explicit TlsSession(SSL* ssl) : ssl_(ssl) {}
  Outcome outcome_of(int rc, const char* operation, std::string* error);

  SSL* const ssl_;
};

}  // namespace duo::transport
