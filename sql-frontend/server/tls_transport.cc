// TLS upgrade with OpenSSL; see tls_transport.h.
#include "sql-frontend/server/tls_transport.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <climits>

namespace duo::sql::server {

std::string openssl_error_text() {
  unsigned long code = ERR_get_error();
  if (code == 0) return "no OpenSSL error";
  char buffer[256];
  ERR_error_string_n(code, buffer, sizeof buffer);
  ERR_clear_error();
  return buffer;
}

Result<std::unique_ptr<TlsContext>> TlsContext::load(const std::string& cert_file,
                                                     const std::string& key_file) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return Status(ErrorCode::kInternal, "SSL_CTX_new: " + openssl_error_text());
  std::unique_ptr<TlsContext> context(new TlsContext(ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return Status(ErrorCode::kConfigError,
                  "cannot load TLS certificate " + cert_file + ": " + openssl_error_text());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Status(ErrorCode::kConfigError,
                  "cannot load TLS key " + key_file + ": " + openssl_error_text());
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Status(ErrorCode::kConfigError, "TLS key does not match certificate " + cert_file);
  }
  return context;
}

TlsContext::~TlsContext() {
  SSL_CTX_free(ctx_);
}

Result<std::unique_ptr<TlsTransport>> TlsTransport::accept(const TlsContext& context, int fd) {
  SSL* ssl = SSL_new(context.native());
  if (ssl == nullptr) return Status(ErrorCode::kInternal, "SSL_new: " + openssl_error_text());
  std::unique_ptr<TlsTransport> transport(new TlsTransport(ssl));
  if (SSL_set_fd(ssl, fd) != 1) return Status(ErrorCode::kIoError, "SSL_set_fd failed");
  if (SSL_accept(ssl) != 1) {
    return Status(ErrorCode::kIoError, "TLS handshake failed: " + openssl_error_text());
  }
  return transport;
}

TlsTransport::~TlsTransport() {
  // A close_notify is polite but must not block on a dead peer; the socket
  // timeouts bound it.
  SSL_shutdown(ssl_);
  SSL_free(ssl_);
}

Result<size_t> TlsTransport::read_some(char* out, size_t length) {
  int want = static_cast<int>(std::min<size_t>(length, INT_MAX));
  int n = SSL_read(ssl_, out, want);
  if (n > 0) return static_cast<size_t>(n);
  ERR_clear_error();
  return Status(ErrorCode::kIoError, "TLS read failed or connection closed");
}

Status TlsTransport::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    int chunk = static_cast<int>(std::min<size_t>(bytes.size(), INT_MAX));
    int n = SSL_write(ssl_, bytes.data(), chunk);
    if (n <= 0) {
      ERR_clear_error();
      return Status(ErrorCode::kIoError, "TLS write failed");
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

}  // namespace duo::sql::server
