// Auto-generated TLS files of duo_sqld; see server_certificate.h.
#include "sql-frontend/sqld/server_certificate.h"

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/common/small_files.h"
#include "ndb-kernel/transport/tls_authority.h"

namespace duo::sql::sqld {

namespace {
// MySQL's auto-generated certificates are valid for 10 years.
constexpr uint32_t kValidDays = 3650;
}  // namespace

Result<ServerTlsFiles> auto_generated_server_certificate(const std::string& datadir,
                                                         const std::string& version) {
  ServerTlsFiles files{datadir + "/server-cert.pem", datadir + "/server-key.pem"};
  const bool have_cert = file_exists(files.cert_file);
  const bool have_key = file_exists(files.key_file);
  if (have_cert && have_key) return files;
  if (have_cert || have_key) {
    return Status(ErrorCode::kConfigError,
                  "found " + (have_cert ? files.cert_file : files.key_file) + " but not " +
                      (have_cert ? files.key_file : files.cert_file) +
                      ": remove it to have a new pair generated, or give --ssl-cert and --ssl-key");
  }
  // An existing CA (the server pair was deleted to renew it) signs the new pair.
  const std::string prefix = "DuoDB_Server_" + version + "_Auto_Generated_";
  const std::string ca_cert = datadir + "/ca.pem";
  const std::string ca_key = datadir + "/ca-key.pem";
  transport::TlsKeyPair ca;
  if (file_exists(ca_cert) && file_exists(ca_key)) {
    DUO_ASSIGN_OR_RETURN(ca.cert_pem, read_small_file(ca_cert));
    DUO_ASSIGN_OR_RETURN(ca.key_pem, read_small_file(ca_key));
  } else {
    DUO_ASSIGN_OR_RETURN(ca, transport::create_cluster_ca(prefix + "CA_Certificate", kValidDays));
    if (!file_exists(ca_cert) && !file_exists(ca_key)) {
      DUO_RETURN_IF_ERROR(write_new_small_file(ca_key, ca.key_pem, 0600));
      DUO_RETURN_IF_ERROR(write_new_small_file(ca_cert, ca.cert_pem, 0644));
    }
  }
  DUO_ASSIGN_OR_RETURN(
      transport::TlsKeyPair server,
      transport::sign_node_key(ca, 0, kValidDays, prefix + "Server_Certificate"));
  DUO_RETURN_IF_ERROR(write_new_small_file(files.key_file, server.key_pem, 0600));
  DUO_RETURN_IF_ERROR(write_new_small_file(files.cert_file, server.cert_pem, 0644));
  DUO_LOG(INFO, "sqld") << "TLS: created a self-signed CA and server certificate in " << datadir
                        << " (as MySQL's auto_generate_certs)";
  return files;
}

}  // namespace duo::sql::sqld
