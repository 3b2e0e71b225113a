// Cluster CA and node certificates with OpenSSL. See tls_authority.h.
#include "ndb-kernel/transport/tls_authority.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "ndb-kernel/transport/tls_context.h"

namespace duo::transport {

namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Free>;
using CertPtr = std::unique_ptr<X509, Free>;
using BioPtr = std::unique_ptr<BIO, Free>;

Status openssl_error(const std::string& what) {
  return Status(ErrorCode::kInternal, "TLS keys: " + what + ": " + take_openssl_errors("failed"));
}

Result<std::string> bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  if (size <= 0 || data == nullptr) return openssl_error("empty PEM output");
  return std::string(data, static_cast<size_t>(size));
}

Result<std::string> key_pem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return openssl_error("PEM_write_bio_PrivateKey");
  }
  return bio_text(bio.get());
}

Result<std::string> cert_pem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return openssl_error("PEM_write_bio_X509");
  return bio_text(bio.get());
}

Status add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return openssl_error("extension " + value);
  const int added = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (added != 1) return openssl_error("X509_add_ext");
  return Status::OK();
}

// A certificate for `key` named `common_name`, not yet signed.
Result<CertPtr> new_certificate(EVP_PKEY* key, const std::string& common_name,
                                uint32_t valid_days) {
  CertPtr cert(X509_new());
  if (!cert) return openssl_error("X509_new");
  X509_set_version(cert.get(), 2);  // v3
  // A random 64-bit serial: unique per CA without keeping a serial file.
  unsigned char serial_bytes[8];
  if (RAND_bytes(serial_bytes, sizeof(serial_bytes)) != 1) return openssl_error("RAND_bytes");
  serial_bytes[0] &= 0x7f;  // positive
  BIGNUM* serial = BN_bin2bn(serial_bytes, sizeof(serial_bytes), nullptr);
  if (serial == nullptr ||
      BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert.get())) == nullptr) {
    BN_free(serial);
    return openssl_error("serial number");
  }
  BN_free(serial);
  // Valid from an hour ago, so nodes whose clocks are a little behind accept it.
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(valid_days) * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("DuoDB cluster"), -1, -1, 0);
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                 -1, 0) != 1) {
    return openssl_error("subject name");
  }
  return cert;
}

}  // namespace

Result<TlsKeyPair> create_cluster_ca(const std::string& common_name, uint32_t valid_days) {
  ERR_clear_error();
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return openssl_error("EC key generation");
  DUO_ASSIGN_OR_RETURN(CertPtr cert, new_certificate(key.get(), common_name, valid_days));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  DUO_RETURN_IF_ERROR(
      add_extension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
  DUO_RETURN_IF_ERROR(
      add_extension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign"));
  DUO_RETURN_IF_ERROR(add_extension(cert.get(), cert.get(), NID_subject_key_identifier, "hash"));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return openssl_error("X509_sign");
  TlsKeyPair pair;
  DUO_ASSIGN_OR_RETURN(pair.cert_pem, cert_pem(cert.get()));
  DUO_ASSIGN_OR_RETURN(pair.key_pem, key_pem(key.get()));
  return pair;
}

Result<TlsKeyPair> sign_node_key(const TlsKeyPair& ca, uint16_t node_id, uint32_t valid_days,
                                 const std::string& common_name_override) {
  ERR_clear_error();
  BioPtr ca_cert_bio(BIO_new_mem_buf(ca.cert_pem.data(), static_cast<int>(ca.cert_pem.size())));
  CertPtr ca_cert(PEM_read_bio_X509(ca_cert_bio.get(), nullptr, nullptr, nullptr));
  if (!ca_cert) return openssl_error("cannot read the CA certificate");
  BioPtr ca_key_bio(BIO_new_mem_buf(ca.key_pem.data(), static_cast<int>(ca.key_pem.size())));
  KeyPtr ca_key(PEM_read_bio_PrivateKey(ca_key_bio.get(), nullptr, nullptr, nullptr));
  if (!ca_key) return openssl_error("cannot read the CA private key");

  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return openssl_error("EC key generation");
  const std::string name =
      common_name_override.empty() ? node_certificate_name(node_id) : common_name_override;
  DUO_ASSIGN_OR_RETURN(CertPtr cert, new_certificate(key.get(), name, valid_days));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  DUO_RETURN_IF_ERROR(add_extension(cert.get(), ca_cert.get(), NID_basic_constraints, "CA:FALSE"));
  DUO_RETURN_IF_ERROR(
      add_extension(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature"));
  DUO_RETURN_IF_ERROR(
      add_extension(cert.get(), ca_cert.get(), NID_ext_key_usage, "serverAuth,clientAuth"));
  DUO_RETURN_IF_ERROR(
      add_extension(cert.get(), ca_cert.get(), NID_subject_alt_name, "DNS:" + name));
  DUO_RETURN_IF_ERROR(
      add_extension(cert.get(), ca_cert.get(), NID_authority_key_identifier, "keyid:always"));
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) return openssl_error("X509_sign");
  TlsKeyPair pair;
  DUO_ASSIGN_OR_RETURN(pair.cert_pem, cert_pem(cert.get()));
  DUO_ASSIGN_OR_RETURN(pair.key_pem, key_pem(key.get()));
  return pair;
}

}  // namespace duo::transport
