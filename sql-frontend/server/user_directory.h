// UserDirectory: where the session looks up accounts at login. duo_sqld's directory
// reads the accounts stored in the cluster (executor/cluster_user_directory.h), so every
// sqld authenticates alike; this file has the interface and InMemoryUserDirectory, used
// by tests.
//
// An account keeps no clear password: mysql_native_password accounts keep
// SHA1(SHA1(password)); caching_sha2_password accounts keep a salted SHA-256 (see
// protocol/auth_scramble.h). An empty credential means "no password".
//
// Thread-safety: find_user() is called concurrently from session threads; the
// in-memory directory guards its map with a mutex.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace duo::sql::server {

enum class AuthPlugin { kNativePassword, kCachingSha2Password };

// "mysql_native_password" / "caching_sha2_password".
const char* auth_plugin_name(AuthPlugin plugin);

struct UserAccount {
  std::string user;
  std::string host = "%";  // the account's host pattern the client matched
  AuthPlugin plugin = AuthPlugin::kNativePassword;
  // kNativePassword: SHA1(SHA1(password)), 20 bytes. kCachingSha2Password: salt ||
  // SHA256(salt || password), 48 bytes. Empty: the account has no password.
  std::string credential;
};

class UserDirectory {
 public:
  virtual ~UserDirectory() = default;
  // The account `user` connecting from `host`, or nullopt.
  virtual std::optional<UserAccount> find_user(std::string_view user, std::string_view host) = 0;
};

class InMemoryUserDirectory : public UserDirectory {
 public:
  // Adds or replaces an account, hashing `password` for `plugin`.
  void add_user(std::string user, std::string_view password, AuthPlugin plugin);
  std::optional<UserAccount> find_user(std::string_view user, std::string_view host) override;

 private:
  std::mutex mutex_;
  std::map<std::string, UserAccount, std::less<>> accounts_;  // GUARDED_BY(mutex_)
};

}  // namespace duo::sql::server
