// The cluster certificate authority: creates the CA and signs node key pairs.
//
// Used by tools/tls/duo_tls_keys (operators) and by tests that need a whole set of keys
// without files. Keys are ECDSA P-256, signatures SHA-256; a node certificate names
// its node as node_certificate_name(id) in the CN and a DNS SAN and may serve as both
// TLS client and server (a node dials some peers and accepts others).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "ndb-kernel/common/status.h"

namespace duo::transport {

struct TlsKeyPair {
  std::string cert_pem;
  std::string key_pem;  // unencrypted PKCS#8 PEM
};

// A new self-signed cluster CA named `common_name`, valid for `valid_days`.
Result<TlsKeyPair> create_cluster_ca(const std::string& common_name, uint32_t valid_days);

// A new key for node `node_id` and its certificate signed by `ca`, valid for
// `valid_days`. `common_name_override` replaces the node's name (tests; duo_sqld's
// auto-generated server certificate).
Result<TlsKeyPair> sign_node_key(const TlsKeyPair& ca, uint16_t node_id, uint32_t valid_days,
                                 const std::string& common_name_override = "");

}  // namespace duo::transport
