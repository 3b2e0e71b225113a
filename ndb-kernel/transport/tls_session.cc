// TlsSession: non-blocking TLS over a socket through a MSG_NOSIGNAL BIO. See
// tls_session.h.
#include "ndb-kernel/transport/tls_session.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace duo::transport {

namespace {

int fd_of(BIO* bio) {
  return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio)));
}

bool would_block(int error) {
  return error == EAGAIN || error == EWOULDBLOCK || error == EINTR;
}

int socket_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::send(fd_of(bio), data, static_cast<size_t>(size), MSG_NOSIGNAL);
  if (n < 0 && would_block(errno)) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

int socket_read(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::recv(fd_of(bio), data, static_cast<size_t>(size), 0);
  if (n < 0 && would_block(errno)) BIO_set_retry_read(bio);
  return static_cast<int>(n);
}

long socket_ctrl(BIO*, int command, long, void*) {
  // Writes go straight to the socket, so there is never anything to flush; every other
  // control (kTLS, datagram, ...) is "not supported".
  return command == BIO_CTRL_FLUSH ? 1 : 0;
}

int socket_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

// The BIO method, made once per process (function-local static: thread-safe init) and
// never freed, as OpenSSL's own methods are.
const BIO_METHOD* socket_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "duo socket");
    if (m != nullptr) {
      BIO_meth_set_write(m, socket_write);
      BIO_meth_set_read(m, socket_read);
      BIO_meth_set_ctrl(m, socket_ctrl);
      BIO_meth_set_create(m, socket_create);
    }
    return m;
  }();
  return method;
}

}  // namespace

Result<std::unique_ptr<TlsSession>> TlsSession::create(const TlsContext& context, int fd,
                                                       bool client) {
  ERR_clear_error();
  const BIO_METHOD* method = socket_method();
  if (method == nullptr) return Status(ErrorCode::kInternal, "TLS: cannot create the socket BIO");
  SSL* ssl = SSL_new(context.ssl_context());
  if (ssl == nullptr) {
    return Status(ErrorCode::kInternal, "TLS: SSL_new: " + take_openssl_errors("failed"));
  }
  std::unique_ptr<TlsSession> session(new TlsSession(ssl));
  BIO* bio = BIO_new(method);
  if (bio == nullptr) {
    return Status(ErrorCode::kInternal, "TLS: BIO_new: " + take_openssl_errors("failed"));
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
  SSL_set_bio(ssl, bio, bio);  // the SSL owns the BIO from here on (one reference)
  if (client) {
    SSL_set_connect_state(ssl);
  } else {
    SSL_set_accept_state(ssl);
  }
  return session;
}

TlsSession::~TlsSession() {
  SSL_free(ssl_);
}

TlsSession::Outcome TlsSession::outcome_of(int rc, const char* operation, std::string* error) {
  const int saved_errno = errno;
  switch (SSL_get_error(ssl_, rc)) {
    case SSL_ERROR_WANT_READ:
      return Outcome::kWantRead;
    case SSL_ERROR_WANT_WRITE:
      return Outcome::kWantWrite;
    case SSL_ERROR_ZERO_RETURN:
      return Outcome::kClosed;
    case SSL_ERROR_SYSCALL: {
      const std::string queued = take_openssl_errors("");
      if (!queued.empty()) {
        *error = std::string(operation) + ": " + queued;
      } else if (saved_errno != 0) {
        *error = std::string(operation) + ": " + std::strerror(saved_errno);
      } else {
        return Outcome::kClosed;  // EOF (SSL_OP_IGNORE_UNEXPECTED_EOF covers most)
      }
      return Outcome::kFailed;
    }
    default: {
      std::string text = take_openssl_errors("error");
      const long verify = SSL_get_verify_result(ssl_);
      if (verify != X509_V_OK) {
        text += " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
      }
      *error = std::string(operation) + ": " + text;
      return Outcome::kFailed;
    }
  }
}

TlsSession::Outcome TlsSession::handshake(std::string* error) {
  ERR_clear_error();
  errno = 0;
  const int rc = SSL_do_handshake(ssl_);
  if (rc == 1) return Outcome::kDone;
  return outcome_of(rc, "TLS handshake", error);
}

TlsSession::Outcome TlsSession::read(uint8_t* buffer, size_t size_bytes, size_t* bytes,
                                     std::string* error) {
  ERR_clear_error();
  errno = 0;
  *bytes = 0;
  const int rc = SSL_read(ssl_, buffer, static_cast<int>(std::min<size_t>(size_bytes, INT_MAX)));
  if (rc > 0) {
    *bytes = static_cast<size_t>(rc);
    return Outcome::kDone;
  }
  return outcome_of(rc, "TLS read", error);
}

TlsSession::Outcome TlsSession::write(const uint8_t* buffer, size_t size_bytes, size_t* bytes,
                                      std::string* error) {
  ERR_clear_error();
  errno = 0;
  *bytes = 0;
  const int rc = SSL_write(ssl_, buffer, static_cast<int>(std::min<size_t>(size_bytes, INT_MAX)));
  if (rc > 0) {
    *bytes = static_cast<size_t>(rc);
    return Outcome::kDone;
  }
  return outcome_of(rc, "TLS write", error);
}

bool TlsSession::has_buffered_input() const {
  return SSL_has_pending(ssl_) == 1;
}

Status TlsSession::check_peer_names_node(uint16_t node_id) const {
  X509* peer = SSL_get0_peer_certificate(ssl_);
  if (peer == nullptr) {
    return Status(ErrorCode::kInvalidArgument, "peer presented no TLS certificate");
  }
  return check_certificate_names_node(peer, node_id);
}

}  // namespace duo::transport
