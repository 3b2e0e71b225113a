// Accounts from the cluster at login; see cluster_user_directory.h.
#include "sql-frontend/executor/cluster_user_directory.h"

#include "ndb-kernel/common/logging.h"
#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/protocol/auth_scramble.h"

namespace duo::sql::executor {

server::AuthPlugin auth_plugin_of(const std::string& plugin_name) {
  return plugin_name == protocol::kCachingSha2PasswordPlugin
             ? server::AuthPlugin::kCachingSha2Password
             : server::AuthPlugin::kNativePassword;
}

std::string credential_for(server::AuthPlugin plugin, std::string_view password) {
  if (password.empty()) return "";
  // caching_sha2_password keeps a 16-byte random salt before the digest.
  return plugin == server::AuthPlugin::kNativePassword
             ? protocol::native_password_stage2(password)
             : protocol::caching_sha2_stored_hash(password,
                                                  protocol::generate_nonce().substr(0, 16));
}

std::optional<server::UserAccount> ClusterUserDirectory::find_user(std::string_view user,
                                                                   std::string_view host) {
  std::vector<catalog::UserRecord> records;
  try {
    std::unique_ptr<api::Session> session = cluster_->new_session();
    records = users_.list(*session);
  } catch (const SqlException& e) {
    DUO_LOG(WARNING, "sqld") << "cannot read the accounts for a login of '" << user
                             << "': " << e.what();
    return std::nullopt;
  }
  const catalog::UserRecord* record = catalog::match_account(records, user, host);
  if (record == nullptr) return std::nullopt;
  server::UserAccount account;
  account.user = record->user;
  account.host = record->host;
  account.plugin = auth_plugin_of(record->plugin);
  account.credential = record->credential;
  return account;
}

}  // namespace duo::sql::executor
