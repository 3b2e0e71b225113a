// InMemoryUserDirectory; see user_directory.h.
#include "sql-frontend/server/user_directory.h"

#include "sql-frontend/protocol/auth_scramble.h"

namespace duo::sql::server {

const char* auth_plugin_name(AuthPlugin plugin) {
  return plugin == AuthPlugin::kNativePassword ? protocol::kNativePasswordPlugin
                                               : protocol::kCachingSha2PasswordPlugin;
}

void InMemoryUserDirectory::add_user(std::string user, std::string_view password,
                                     AuthPlugin plugin) {
  UserAccount account;
  account.user = user;
  account.plugin = plugin;
  if (!password.empty()) {
    account.credential = plugin == AuthPlugin::kNativePassword
                             ? protocol::native_password_stage2(password)
                             : protocol::caching_sha2_stored_hash(
                                   password, protocol::generate_nonce().substr(0, 16));
  }
  std::lock_guard lock(mutex_);
  accounts_[std::move(user)] = std::move(account);
}

std::optional<UserAccount> InMemoryUserDirectory::find_user(std::string_view user,
                                                            std::string_view /*host*/) {
  std::lock_guard lock(mutex_);
  auto it = accounts_.find(user);
  if (it == accounts_.end()) return std::nullopt;
  return it->second;
}

}  // namespace duo::sql::server
