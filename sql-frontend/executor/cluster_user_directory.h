// ClusterUserDirectory: duo_sqld's UserDirectory — the accounts stored in the cluster
// (catalog/user_catalog.h), read at every login without a cache, so an account created,
// changed or dropped through any sqld is what the next login on every sqld sees.
//
// Thread-safety: find_user() runs on many session threads at once; each call uses its
// own api::Session.
#pragma once

#include "ndb-kernel/api/cluster_connection.h"
#include "sql-frontend/catalog/user_catalog.h"
#include "sql-frontend/server/user_directory.h"

namespace duo::sql::executor {

class ClusterUserDirectory : public server::UserDirectory {
 public:
  // `cluster` must outlive the directory.
  explicit ClusterUserDirectory(api::Cluster* cluster) : cluster_(cluster), users_(cluster) {}

  // The account `user` at `host` uses (user_record.h's match_account); nullopt also
  // when the cluster cannot be read (the login is then refused, never let through).
  std::optional<server::UserAccount> find_user(std::string_view user,
                                               std::string_view host) override;

 private:
  api::Cluster* const cluster_;
  catalog::UserCatalog users_;
};

// The plugin of an account record ("caching_sha2_password" or else native).
server::AuthPlugin auth_plugin_of(const std::string& plugin_name);
// The credential stored for `password` under `plugin`: empty for an empty password.
std::string credential_for(server::AuthPlugin plugin, std::string_view password);

}  // namespace duo::sql::executor
