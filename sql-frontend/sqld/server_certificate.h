// duo_sqld's TLS certificate when the operator gives none: as MySQL's
// auto_generate_certs, a CA and a server key pair signed by it are created in --datadir
// (ca.pem, ca-key.pem, server-cert.pem, server-key.pem; keys mode 0600) the first time,
// and reused afterwards. Clients that do not verify the server (MySQL's and MariaDB's
// default ssl-mode) then get TLS, which caching_sha2_password's full authentication
// needs (without TLS or RSA keys it is refused, as by MySQL).
//
// Thread-safety: call from main() before the server starts.
#pragma once

#include <string>

#include "ndb-kernel/common/status.h"

namespace duo::sql::sqld {

struct ServerTlsFiles {
  std::string cert_file;
  std::string key_file;
};

// The files in `datadir`, created first if neither server-cert.pem nor server-key.pem
// exists. kConfigError when only one of them does (a half-written pair is not guessed
// at). `version` names the certificates ("DuoDB_Server_<version>_Auto_Generated_...").
Result<ServerTlsFiles> auto_generated_server_certificate(const std::string& datadir,
                                                         const std::string& version);

}  // namespace duo::sql::sqld
