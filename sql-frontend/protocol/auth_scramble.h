// The password scrambles of MySQL's two authentication plugins, for both sides of the
// handshake (the server verifies, tests and tools compute the client's answer):
//
//   mysql_native_password: the server stores SHA1(SHA1(password)) ("stage 2"); the
//     client answers SHA1(password) XOR SHA1(nonce || stage2).
//   caching_sha2_password fast path: the server's cache holds SHA256(SHA256(password));
//     the client answers SHA256(password) XOR SHA256(SHA256(SHA256(password)) || nonce).
//     Full authentication sends the clear password over TLS, which the server checks
//     against its stored, salted hash (caching_sha2_stored_hash) and then caches the
//     double digest, as MySQL's server does.
//
// Comparisons of secrets are constant-time (CRYPTO_memcmp) so a timing probe learns
// nothing about how many bytes matched. Hashes come from OpenSSL's EVP interface.
//
// Thread-safety: pure functions; generate_nonce uses OpenSSL's thread-safe RAND.
#pragma once

#include <string>
#include <string_view>

namespace duo::sql::protocol {

inline constexpr const char* kNativePasswordPlugin = "mysql_native_password";
inline constexpr const char* kCachingSha2PasswordPlugin = "caching_sha2_password";

// caching_sha2_password's AuthMoreData status bytes.
inline constexpr char kSha2FastAuthSuccess = 0x03;
inline constexpr char kSha2PerformFullAuthentication = 0x04;
// The client's "send me your RSA public key" request.
inline constexpr char kSha2RequestPublicKey = 0x02;

std::string sha1(std::string_view data);
std::string sha256(std::string_view data);

// A 20-byte handshake nonce of printable ASCII without '$' (MySQL's
// generate_user_salt does the same: some clients treat the nonce as a C string).
std::string generate_nonce();

// mysql_native_password.
std::string native_password_stage2(std::string_view password);
std::string native_password_scramble(std::string_view password, std::string_view nonce);
// True when `client_token` proves knowledge of the password whose stage2 is given.
// An empty token matches only an empty stored stage2 (a password-less account).
bool native_password_verify(std::string_view client_token, std::string_view nonce,
                            std::string_view stage2);

// caching_sha2_password.
std::string caching_sha2_double_digest(std::string_view password);
std::string caching_sha2_scramble(std::string_view password, std::string_view nonce);
bool caching_sha2_fast_verify(std::string_view client_token, std::string_view nonce,
                              std::string_view double_digest);
// The at-rest form of a caching_sha2_password: salt || SHA256(salt || password),
// 16 + 32 bytes. The salt defeats precomputed tables; the cache above makes the
// common reconnect cheap, so the stored form is only checked on full authentication.
std::string caching_sha2_stored_hash(std::string_view password, std::string_view salt);
bool caching_sha2_stored_verify(std::string_view password, std::string_view stored_hash);

std::string to_hex(std::string_view bytes);

}  // namespace duo::sql::protocol
