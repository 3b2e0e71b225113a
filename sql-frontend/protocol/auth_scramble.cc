// Password scrambles of mysql_native_password and caching_sha2_password; see
// auth_scramble.h.
#include "sql-frontend/protocol/auth_scramble.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdlib>

namespace duo::sql::protocol {

namespace {

std::string digest(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // EVP_Digest fails only on allocation failure inside OpenSSL; there is no sane way
  // to carry on authenticating without a hash function.
  if (EVP_Digest(data.data(), data.size(), out, &length, md, nullptr) != 1) std::abort();
  return std::string(reinterpret_cast<char*>(out), length);
}

std::string xor_bytes(std::string_view a, std::string_view b) {
  std::string out(a);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(out[i] ^ b[i % b.size()]);
  return out;
}

bool equal_secret(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

constexpr size_t kSha2SaltBytes = 16;

}  // namespace

std::string sha1(std::string_view data) {
  return digest(EVP_sha1(), data);
}
std::string sha256(std::string_view data) {
  return digest(EVP_sha256(), data);
}

std::string generate_nonce() {
  unsigned char raw[20];
  if (RAND_bytes(raw, sizeof raw) != 1) std::abort();  // no entropy: refuse to run
  std::string nonce(sizeof raw, '\0');
  for (size_t i = 0; i < sizeof raw; ++i) {
    // 0x21..0x7e is 94 values; '$' (0x24) is replaced as MySQL does.
    char c = static_cast<char>(0x21 + raw[i] % 94);
    nonce[i] = c == '$' ? '%' : c;
  }
  return nonce;
}

std::string native_password_stage2(std::string_view password) {
  if (password.empty()) return "";
  return sha1(sha1(password));
}

std::string native_password_scramble(std::string_view password, std::string_view nonce) {
  if (password.empty()) return "";
  std::string stage1 = sha1(password);
  std::string stage2 = sha1(stage1);
  return xor_bytes(stage1, sha1(std::string(nonce) + stage2));
}

bool native_password_verify(std::string_view client_token, std::string_view nonce,
                            std::string_view stage2) {
  if (stage2.empty()) return client_token.empty();
  if (client_token.size() != 20 || stage2.size() != 20) return false;
  std::string stage1 = xor_bytes(client_token, sha1(std::string(nonce) + std::string(stage2)));
  return equal_secret(sha1(stage1), stage2);
}

std::string caching_sha2_double_digest(std::string_view password) {
  return sha256(sha256(password));
}

std::string caching_sha2_scramble(std::string_view password, std::string_view nonce) {
  if (password.empty()) return "";
  std::string stage1 = sha256(password);
  std::string stage2 = sha256(stage1);
  return xor_bytes(stage1, sha256(stage2 + std::string(nonce)));
}

bool caching_sha2_fast_verify(std::string_view client_token, std::string_view nonce,
                              std::string_view double_digest) {
  if (client_token.size() != 32 || double_digest.size() != 32) return false;
  std::string stage1 =
      xor_bytes(client_token, sha256(std::string(double_digest) + std::string(nonce)));
  return equal_secret(sha256(stage1), double_digest);
}

std::string caching_sha2_stored_hash(std::string_view password, std::string_view salt) {
  std::string salt16(salt.substr(0, kSha2SaltBytes));
  salt16.resize(kSha2SaltBytes, '\0');
  return salt16 + sha256(salt16 + std::string(password));
}

bool caching_sha2_stored_verify(std::string_view password, std::string_view stored_hash) {
  if (stored_hash.size() != kSha2SaltBytes + 32) return false;
  return equal_secret(caching_sha2_stored_hash(password, stored_hash.substr(0, kSha2SaltBytes)),
                      stored_hash);
}

std::string to_hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    out += kDigits[(static_cast<uint8_t>(c) >> 4) & 0xf];
    out += kDigits[static_cast<uint8_t>(c) & 0xf];
  }
  return out;
}

}  // namespace duo::sql::protocol
