// Authenticator: the server side of MySQL's authentication exchange, run by a session
// after it has read the client's HandshakeResponse41. It switches the client to the
// account's plugin if needed (AuthSwitchRequest), then checks the answer:
//
//   mysql_native_password: the SHA1 scramble against SHA1(SHA1(password)).
//   caching_sha2_password: fast authentication against the server's cache of
//     SHA256(SHA256(password)) (AuthMoreData 0x03 on a hit). On a miss the server asks
//     for full authentication (AuthMoreData 0x04). Over TLS the client then sends its
//     clear password, which is checked against the stored salted hash and, if right,
//     cached. Without TLS MySQL needs RSA keys to protect the password; duo_sqld has
//     none, so it does what MySQL does when no RSA key pair is configured: it reads the
//     client's next packet (a public-key request or an RSA-encrypted password), logs
//     "Authentication requires either RSA keys or SSL encryption" and refuses with
//     ER_ACCESS_DENIED_ERROR (1045). Clients that are not allowed to ask for the key
//     give up on their own ("Authentication requires secure connection", CR 2061).
//
// An unknown user goes through the same exchange with a plugin chosen from the
// client's and a credential nothing matches, so the packet flow does not reveal which
// user names exist. Refusals are always 1045 "Access denied for user 'u'@'h' (using
// password: YES|NO)", as MySQL words it.
//
// Thread-safety: an Authenticator is stateless apart from the shared
// Sha2FastAuthCache, which is internally synchronised; authenticate() may run on many
// session threads at once.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "sql-frontend/protocol/packet_endpoint.h"
#include "sql-frontend/protocol/packets.h"
#include "sql-frontend/server/query_handler.h"
#include "sql-frontend/server/user_directory.h"

namespace duo::sql::server {

// The caching_sha2_password cache: account (user, host and stored credential, so a
// password changed elsewhere misses) -> SHA256(SHA256(password)), filled by full
// authentications. Bounded: when full, it is emptied (users then re-authenticate
// fully once, which is correct, just slower).
class Sha2FastAuthCache {
 public:
  explicit Sha2FastAuthCache(size_t entries_max = 100000) : entries_max_(entries_max) {}
  std::optional<std::string> find(std::string_view key) const;
  void insert(std::string_view key, std::string double_digest);
  // Forgets every entry of `user` (its password changed or the account was dropped).
  void erase(std::string_view user);
  void clear();

 private:
  const size_t entries_max_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string, std::less<>> digests_;  // GUARDED_BY(mutex_)
};

class Authenticator {
 public:
  enum class Outcome { kAccepted, kDenied, kConnectionLost };
  struct Result {
    Outcome outcome = Outcome::kDenied;
    SqlError error;  // kDenied: what to send
  };

  // Packets an authentication exchange may carry (a clear password, an RSA
  // ciphertext, a scramble): far below any max_allowed_packet.
  static constexpr size_t kAuthPacketBytesMax = 16 * 1024;

  Authenticator(UserDirectory* directory, Sha2FastAuthCache* cache)
      : directory_(directory), cache_(cache) {}

  // Runs the exchange on `endpoint` (whose sequence id continues the handshake).
  // `nonce` is the one sent in HandshakeV10; `secure_transport` says whether TLS is on.
  Result authenticate(protocol::PacketEndpoint& endpoint,
                      const protocol::HandshakeResponse41& response, uint32_t client_capabilities,
                      const std::string& nonce, bool secure_transport, std::string_view host);

 private:
  UserDirectory* directory_;
  Sha2FastAuthCache* cache_;
};

// MySQL's wording: "Access denied for user 'u'@'h' (using password: YES)".
SqlError access_denied_error(std::string_view user, std::string_view host, bool using_password);

}  // namespace duo::sql::server
