// TLS for node-to-node links: the key material of one node, the OpenSSL context built
// from it, and the rule that ties a certificate to a node id.
//
// A DuoDB cluster is one realm of trust (as in NDB 8.3): one cluster CA signs a
// certificate per node id, and every link uses TLS 1.3 with mutual authentication — both
// ends present their node certificate and verify the peer's against the cluster CA. A
// node certificate names its node as "duodb-node-<id>" (subject CN and a DNS SAN), so
// after the TLS handshake the transporter checks that the node id the peer's hello
// claims is the one its certificate names: the hello is then authenticated, not just
// a matching cluster secret. Wire rules: docs/formats/transport.md, section TLS.
//
// Thread-safety: a TlsContext is immutable after create() and may be shared by the
// sessions of one transporter (OpenSSL's SSL_CTX is safe for that once configured).
#pragma once

#include <openssl/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "ndb-kernel/common/status.h"

namespace duo::transport {

// PEM text of what one node needs for TLS links (files: tls_files.h).
struct TlsMaterial {
  std::string ca_cert_pem;    // the cluster CA certificate(s): the trust anchor
  std::string node_cert_pem;  // this node's certificate, signed by the CA
  std::string node_key_pem;   // this node's private key (unencrypted PEM)
};

// "duodb-node-<id>": the name a node certificate must carry (CN and DNS SAN).
std::string node_certificate_name(uint16_t node_id);

// The text of OpenSSL's error queue for this thread ("a; b"), emptied; `fallback` when
// the queue holds nothing.
std::string take_openssl_errors(const std::string& fallback);

class TlsContext {
 public:
  // Builds the TLS 1.3 context for node `own_node_id`: loads the CA and the node's key
  // pair, checks that key and certificate match, that the certificate verifies against
  // the CA and that it names `own_node_id`. kConfigError naming what is wrong.
  static Result<std::unique_ptr<TlsContext>> create(const TlsMaterial& material,
                                                    uint16_t own_node_id);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* ssl_context() const { return context_; }

 private:
  explicit TlsContext(SSL_CTX* context) : context_(context) {}
  SSL_CTX* const context_;
};

// OK if `certificate` names node `node_id` (node_certificate_name in a DNS SAN, or in
// the CN when it has no DNS SAN); kInvalidArgument saying which name it carries else.
Status check_certificate_names_node(X509* certificate, uint16_t node_id);

}  // namespace duo::transport
