// TlsContext and TlsTransport: the optional TLS upgrade of a MySQL connection
// (client sends SSLRequest, then the TLS handshake runs on the same socket, then the
// rest of the conversation is encrypted). OpenSSL does the work.
//
// TlsContext loads the server certificate and key once at server start (a PEM
// certificate chain file and a PEM private key file) and is shared by all sessions;
// TLS 1.2 is the minimum. TlsTransport is one session's encrypted stream over the
// session's SocketTransport descriptor; the socket's timeouts still apply.
//
// SIGPIPE: OpenSSL writes with write(2), which raises SIGPIPE on a closed socket.
// The session thread blocks SIGPIPE (sql_server.cc) so such a write fails with EPIPE
// instead of killing the process, without touching process-wide signal handling.
//
// Thread-safety: TlsContext is immutable after load() and safe to share (OpenSSL
// SSL_CTX is thread-safe for creating SSL objects). A TlsTransport is
// thread-compatible.
#pragma once

#include <memory>
#include <string>

#include "sql-frontend/protocol/packet_endpoint.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace duo::sql::server {

class TlsContext {
 public:
  static Result<std::unique_ptr<TlsContext>> load(const std::string& cert_file,
                                                  const std::string& key_file);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  SSL_CTX* native() const { return ctx_; }

 private:
  explicit TlsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

class TlsTransport : public protocol::Transport {
 public:
  // Runs the server side of the TLS handshake on connected socket `fd` (not owned).
  static Result<std::unique_ptr<TlsTransport>> accept(const TlsContext& context, int fd);
  ~TlsTransport() override;
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;

  Result<size_t> read_some(char* out, size_t length) override;
  Status write_all(std::string_view bytes) override;

 private:
  explicit TlsTransport(SSL* ssl) : ssl_(ssl) {}
  SSL* ssl_;
};

// The last OpenSSL error as text (for logs and Status messages).
std::string openssl_error_text();

}  // namespace duo::sql::server
