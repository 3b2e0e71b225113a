// Tests of the session registry behind SHOW PROCESSLIST and SHOW STATUS: statements
// start and finish, connections leave, the asking connection is always listed, and
// the Com_* and Questions counters count.
#include "sql-frontend/executor/session_registry.h"

#include <gtest/gtest.h>

namespace duo::sql::executor {
namespace {

server::SessionState state(uint32_t id, const std::string& user) {
  server::SessionState s;
  s.connection_id = id;
  s.user = user;
  s.host = "127.0.0.1";
  s.database = "test";
  return s;
}

std::string status_value(SessionRegistry& registry, const server::SessionState& self,
                         const std::string& name) {
  for (const auto& [key, value] : registry.status(self)) {
    if (key == name) return value;
  }
  return "";
}

TEST(SessionRegistryTest, ListsRunningAndIdleConnections) {
  SessionRegistry& registry = SessionRegistry::instance();
  server::SessionState a = state(9001, "amy");
  server::SessionState b = state(9002, "bob");
  {
    StatementActivity running(a, StatementKind::kSelect, "SELECT 1");
    registry.statement_started(b, StatementKind::kInsert, "INSERT INTO t VALUES (1)");
    registry.statement_finished(b);
    std::vector<ProcessInfo> list = registry.list(b, "SHOW PROCESSLIST");
    const ProcessInfo* amy = nullptr;
    const ProcessInfo* bob = nullptr;
    for (const ProcessInfo& p : list) {
      if (p.id == a.connection_id) amy = &p;
      if (p.id == b.connection_id) bob = &p;
    }
    ASSERT_NE(amy, nullptr);
    ASSERT_NE(bob, nullptr);
    EXPECT_EQ(amy->command, "Query");
    EXPECT_EQ(amy->info, "SELECT 1");
    EXPECT_EQ(amy->user, "amy");
    // The asking connection shows its own statement.
    EXPECT_EQ(bob->command, "Query");
    EXPECT_EQ(bob->info, "SHOW PROCESSLIST");
    for (size_t i = 1; i < list.size(); ++i) EXPECT_LT(list[i - 1].id, list[i].id);
  }
  std::vector<ProcessInfo> after = registry.list(b, "SHOW PROCESSLIST");
  for (const ProcessInfo& p : after) {
    if (p.id == a.connection_id) {
      EXPECT_EQ(p.command, "Sleep");
      EXPECT_FALSE(p.info.has_value());
    }
  }
  registry.disconnected(a.connection_id);
  registry.disconnected(b.connection_id);
  for (const ProcessInfo& p : registry.list(b, "x")) EXPECT_NE(p.id, a.connection_id);
}

TEST(SessionRegistryTest, CountsStatements) {
  SessionRegistry& registry = SessionRegistry::instance();
  server::SessionState a = state(9101, "amy");
  const uint64_t questions = std::stoull(status_value(registry, a, "Questions"));
  const std::string before = status_value(registry, a, "Com_delete");
  const uint64_t deletes = before.empty() ? 0 : std::stoull(before);
  { StatementActivity one(a, StatementKind::kDelete, "DELETE FROM t"); }
  { StatementActivity two(a, StatementKind::kDelete, "DELETE FROM t"); }
  EXPECT_EQ(std::stoull(status_value(registry, a, "Questions")), questions + 2);
  EXPECT_EQ(std::stoull(status_value(registry, a, "Com_delete")), deletes + 2);
  EXPECT_FALSE(status_value(registry, a, "Uptime").empty());
  EXPECT_GE(std::stoull(status_value(registry, a, "Threads_connected")), 1u);
  registry.disconnected(a.connection_id);
}

}  // namespace
}  // namespace duo::sql::executor
