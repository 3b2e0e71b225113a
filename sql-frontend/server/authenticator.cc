// MySQL authentication exchange; see authenticator.h.
#include "sql-frontend/server/authenticator.h"

#include "ndb-kernel/common/logging.h"
#include "sql-frontend/protocol/auth_scramble.h"

namespace duo::sql::server {

using protocol::AuthMoreData;
using protocol::AuthSwitchRequest;
using protocol::PacketEndpoint;

std::optional<std::string> Sha2FastAuthCache::find(std::string_view user) const {
  std::lock_guard lock(mutex_);
  auto it = digests_.find(user);
  if (it == digests_.end()) return std::nullopt;
  return it->second;
}

void Sha2FastAuthCache::insert(std::string_view user, std::string double_digest) {
  std::lock_guard lock(mutex_);
  if (digests_.size() >= entries_max_) digests_.clear();
  digests_[std::string(user)] = std::move(double_digest);
}

void Sha2FastAuthCache::erase(std::string_view user) {
  std::lock_guard lock(mutex_);
  // Entries are keyed "user\0host\0credential" (fast_auth_key below).
  const std::string prefix = std::string(user) + '\0';
  for (auto it = digests_.lower_bound(prefix);
       it != digests_.end() && it->first.starts_with(prefix);) {
    it = digests_.erase(it);
  }
}

void Sha2FastAuthCache::clear() {
  std::lock_guard lock(mutex_);
  digests_.clear();
}

SqlError access_denied_error(std::string_view user, std::string_view host, bool using_password) {
  SqlError error;
  error.code = protocol::kErAccessDenied;
  error.sql_state = "28000";
  error.message = "Access denied for user '" + std::string(user) + "'@'" + std::string(host) +
                  "' (using password: " + (using_password ? "YES" : "NO") + ")";
  return error;
}

namespace {

Status write_and_flush(PacketEndpoint& endpoint, const std::string& payload) {
  DUO_RETURN_IF_ERROR(endpoint.write_packet(payload));
  return endpoint.flush();
}

// Reads the client's next authentication packet; false if the connection is gone
// or the client sent something out of step.
bool read_auth_packet(PacketEndpoint& endpoint, std::string* payload) {
  return endpoint.read_packet(payload, Authenticator::kAuthPacketBytesMax) ==
         PacketEndpoint::ReadResult::kOk;
}

// The fast-auth cache entry of an account: keyed by its credential too, so that a
// password changed through any sqld (the accounts live in the cluster) makes the old
// entry unreachable here without an explicit erase.
std::string fast_auth_key(const UserAccount& account) {
  return account.user + '\0' + account.host + '\0' + account.credential;
}

bool is_empty_answer(std::string_view token) {
  return token.empty() || (token.size() == 1 && token[0] == '\0');
}

}  // namespace

Authenticator::Result Authenticator::authenticate(PacketEndpoint& endpoint,
                                                  const protocol::HandshakeResponse41& response,
                                                  uint32_t client_capabilities,
                                                  const std::string& nonce, bool secure_transport,
                                                  std::string_view host) {
  Result lost{Outcome::kConnectionLost, {}};
  std::optional<UserAccount> found = directory_->find_user(response.username, host);
  bool known = found.has_value();
  UserAccount account;
  if (known) {
    account = *found;
  } else {
    // A stand-in that no answer matches, with the plugin the client chose.
    account.user = response.username;
    account.plugin = response.auth_plugin_name == protocol::kCachingSha2PasswordPlugin
                         ? AuthPlugin::kCachingSha2Password
                         : AuthPlugin::kNativePassword;
    account.credential = std::string(48, '\xff');
  }

  std::string token = response.auth_response;
  const char* plugin = auth_plugin_name(account.plugin);
  bool plugin_auth = (client_capabilities & protocol::kClientPluginAuth) != 0;
  if (plugin_auth && response.auth_plugin_name != plugin) {
    // The answer was computed for another plugin: ask again with the account's, over
    // the same nonce (as MySQL does).
    AuthSwitchRequest request{plugin, nonce + std::string(1, '\0')};
    if (!write_and_flush(endpoint, protocol::encode(request)).ok()) return lost;
    if (!read_auth_packet(endpoint, &token)) return lost;
  } else if (!plugin_auth && account.plugin != AuthPlugin::kNativePassword) {
    // A pre-4.1-plugin client can only do native passwords.
    return {Outcome::kDenied, access_denied_error(response.username, host, !token.empty())};
  }

  bool using_password = !is_empty_answer(token);
  auto denied = [&] {
    return Result{Outcome::kDenied, access_denied_error(response.username, host, using_password)};
  };

  if (account.plugin == AuthPlugin::kNativePassword) {
    if (!using_password) token.clear();
    if (known && protocol::native_password_verify(token, nonce, account.credential)) {
      return {Outcome::kAccepted, {}};
    }
    return denied();
  }

  // caching_sha2_password.
  if (!using_password) {
    return known && account.credential.empty() ? Result{Outcome::kAccepted, {}} : denied();
  }
  if (token.size() != 32 || (known && account.credential.empty())) return denied();
  std::optional<std::string> cached = known ? cache_->find(fast_auth_key(account)) : std::nullopt;
  if (cached && protocol::caching_sha2_fast_verify(token, nonce, *cached)) {
    AuthMoreData success{std::string(1, protocol::kSha2FastAuthSuccess)};
    if (!write_and_flush(endpoint, protocol::encode(success)).ok()) return lost;
    return {Outcome::kAccepted, {}};
  }
  AuthMoreData full{std::string(1, protocol::kSha2PerformFullAuthentication)};
  if (!write_and_flush(endpoint, protocol::encode(full)).ok()) return lost;
  std::string answer;
  if (!read_auth_packet(endpoint, &answer)) return lost;
  if (!secure_transport) {
    DUO_LOG(WARNING, "sqld") << "caching_sha2_password full authentication of '"
                             << response.username
                             << "': Authentication requires either RSA keys or SSL encryption";
    return denied();
  }
  // Over TLS the answer is the clear password followed by a NUL.
  if (answer.empty() || answer.back() != '\0') return denied();
  answer.pop_back();
  if (known && protocol::caching_sha2_stored_verify(answer, account.credential)) {
    cache_->insert(fast_auth_key(account), protocol::caching_sha2_double_digest(answer));
    return {Outcome::kAccepted, {}};
  }
  return denied();
}

}  // namespace duo::sql::server
