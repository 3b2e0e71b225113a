// TlsContext: the OpenSSL context of a node's TLS links. See tls_context.h.
#include "ndb-kernel/transport/tls_context.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

namespace duo::transport {

namespace {

// Longest chain of trust we accept: node certificate, at most one intermediate, root.
constexpr int kVerifyDepthMax = 3;

Status config_error(const std::string& what) {
  return Status(ErrorCode::kConfigError, "TLS: " + what);
}

// The subject CN, or "" when there is none.
std::string common_name(X509* certificate) {
  char name[256] = "";
  X509_NAME* subject = X509_get_subject_name(certificate);
  if (subject == nullptr ||
      X509_NAME_get_text_by_NID(subject, NID_commonName, name, sizeof(name)) < 0) {
    return "";
  }
  return name;
}

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

BioPtr memory_bio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

}  // namespace

std::string node_certificate_name(uint16_t node_id) {
  return "duodb-node-" + std::to_string(node_id);
}

std::string take_openssl_errors(const std::string& fallback) {
  std::string text;
  for (unsigned long error = ERR_get_error(); error != 0; error = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(error);
    if (!text.empty()) text += "; ";
    text += reason != nullptr ? reason : "OpenSSL error " + std::to_string(error);
  }
  return text.empty() ? fallback : text;
}

Status check_certificate_names_node(X509* certificate, uint16_t node_id) {
  const std::string expected = node_certificate_name(node_id);
  // X509_check_host compares the DNS SANs, and the CN only when there is no DNS SAN —
  // the usual rule, so a certificate cannot name one node in its CN and another in
  // its SAN.
  if (X509_check_host(certificate, expected.data(), expected.size(), X509_CHECK_FLAG_NO_WILDCARDS,
                      nullptr) == 1) {
    return Status::OK();
  }
  return Status(ErrorCode::kInvalidArgument, "certificate of '" + common_name(certificate) +
                                                 "' does not name node " + std::to_string(node_id) +
                                                 " ('" + expected + "')");
}

Result<std::unique_ptr<TlsContext>> TlsContext::create(const TlsMaterial& material,
                                                       uint16_t own_node_id) {
  ERR_clear_error();
  SSL_CTX* raw = SSL_CTX_new(TLS_method());
  if (raw == nullptr) return config_error(take_openssl_errors("SSL_CTX_new failed"));
  std::unique_ptr<TlsContext> context(new TlsContext(raw));
  SSL_CTX* ctx = raw;
  // TLS 1.3 only: every node runs this code, so there is no older peer to talk to.
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  // Links are long-lived and re-handshake in full after a reconnect: no resumption, so
  // the server never writes session tickets behind the transporter's back.
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  // A TCP EOF without close_notify is a closed link, not an error: frames are
  // self-delimiting and checksummed, so truncation is noticed by the frame decoder.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
  // The transporter retries a write from where its buffer stands; partial writes let
  // one SSL_write take what fits instead of all or nothing.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // Mutual authentication: both ends must present a certificate the cluster CA signed.
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  SSL_CTX_set_verify_depth(ctx, kVerifyDepthMax);

  // The CA certificates (a bundle may hold several, e.g. during a CA rotation).
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  BioPtr ca_bio = memory_bio(material.ca_cert_pem);
  int ca_count = 0;
  for (;;) {
    X509* ca = PEM_read_bio_X509(ca_bio.get(), nullptr, nullptr, nullptr);
    if (ca == nullptr) break;
    const int added = X509_STORE_add_cert(store, ca);
    X509_free(ca);
    if (added != 1)
      return config_error("cannot use the CA certificate: " + take_openssl_errors(""));
    ++ca_count;
  }
  ERR_clear_error();  // the loop ends on "no start line"
  if (ca_count == 0) return config_error("no PEM certificate in the CA certificate");

  BioPtr cert_bio = memory_bio(material.node_cert_pem);
  X509* certificate = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr);
  if (certificate == nullptr) {
    return config_error("cannot read the node certificate: " + take_openssl_errors("not PEM"));
  }
  const int used = SSL_CTX_use_certificate(ctx, certificate);
  Status names = check_certificate_names_node(certificate, own_node_id);
  // Verify our own certificate now: a node with a certificate from another CA would
  // otherwise start and then fail every link, one log line per peer.
  X509_STORE_CTX* verify = X509_STORE_CTX_new();
  int verified = 0;
  std::string verify_error;
  if (verify != nullptr && X509_STORE_CTX_init(verify, store, certificate, nullptr) == 1) {
    verified = X509_verify_cert(verify);
    if (verified != 1) {
      verify_error = X509_verify_cert_error_string(X509_STORE_CTX_get_error(verify));
    }
  }
  X509_STORE_CTX_free(verify);
  X509_free(certificate);
  if (used != 1) return config_error("cannot use the node certificate: " + take_openssl_errors(""));
  if (!names.ok())
    return config_error("node " + std::to_string(own_node_id) + ": " + names.message());
  if (verified != 1) {
    ERR_clear_error();
    return config_error("the node certificate does not verify against the CA certificate (" +
                        verify_error + ")");
  }

  BioPtr key_bio = memory_bio(material.node_key_pem);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr);
  if (key == nullptr) {
    return config_error("cannot read the node private key: " + take_openssl_errors("not PEM"));
  }
  const int key_used = SSL_CTX_use_PrivateKey(ctx, key);
  EVP_PKEY_free(key);
  if (key_used != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    return config_error("the node private key does not match the node certificate: " +
                        take_openssl_errors(""));
  }
  return context;
}

TlsContext::~TlsContext() {
  SSL_CTX_free(context_);
}

}  // namespace duo::transport
