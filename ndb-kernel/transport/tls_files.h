// Where a node finds its TLS key material: file names and the search path.
//
// Files are named like NDB 8.3's (ndb_sign_keys) so operators recognise them:
//   NDB-Cluster-cert          the cluster CA certificate (every node needs it)
//   NDB-Cluster-private-key   the CA's key (only the signing tool; keep it off nodes)
//   NDB-Node-<id>.cert        node <id>'s certificate, signed by the CA
//   NDB-Node-<id>.key         node <id>'s private key (unencrypted PEM, mode 0600)
// A search path is one or more directories separated by ':' (NDB's
// --ndb-tls-search-path); each file is taken from the first directory that has it.
//
// Thread-safety: pure functions (they read files).
#pragma once

#include <cstdint>
#include <string>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/transport/tls_context.h"

namespace duo::transport {

inline constexpr const char* kTlsCaCertFile = "NDB-Cluster-cert";
inline constexpr const char* kTlsCaKeyFile = "NDB-Cluster-private-key";
std::string tls_node_cert_file(uint16_t node_id);  // "NDB-Node-<id>.cert"
std::string tls_node_key_file(uint16_t node_id);   // "NDB-Node-<id>.key"

// Reads the CA certificate and node `node_id`'s certificate and key from `search_path`.
// kConfigError naming the missing or unreadable file and the path searched.
Result<TlsMaterial> load_tls_material(const std::string& search_path, uint16_t node_id);

}  // namespace duo::transport
