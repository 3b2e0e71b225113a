// What each connection is doing; see session_registry.h.
#include "sql-frontend/executor/session_registry.h"

#include <algorithm>
#include <cctype>

namespace duo::sql::executor {

namespace {

// MySQL's Com_ counter of a statement kind (the ones clients look at).
const char* com_name(StatementKind kind) {
  switch (kind) {
    case StatementKind::kSelect:
      return "Com_select";
    case StatementKind::kInsert:
      return "Com_insert";
    case StatementKind::kUpdate:
      return "Com_update";
    case StatementKind::kDelete:
      return "Com_delete";
    case StatementKind::kCreateDatabase:
      return "Com_create_db";
    case StatementKind::kDropDatabase:
      return "Com_drop_db";
    case StatementKind::kUse:
      return "Com_change_db";
    case StatementKind::kCreateTable:
      return "Com_create_table";
    case StatementKind::kDropTable:
      return "Com_drop_table";
    case StatementKind::kTruncateTable:
      return "Com_truncate";
    case StatementKind::kRenameTable:
      return "Com_rename_table";
    case StatementKind::kAlterTable:
      return "Com_alter_table";
    case StatementKind::kCreateIndex:
      return "Com_create_index";
    case StatementKind::kDropIndex:
      return "Com_drop_index";
    case StatementKind::kTransaction:
      return "Com_begin";
    case StatementKind::kSet:
      return "Com_set_option";
    case StatementKind::kKill:
      return "Com_kill";
    case StatementKind::kCreateUser:
      return "Com_create_user";
    case StatementKind::kDropUser:
      return "Com_drop_user";
    case StatementKind::kAlterUser:
      return "Com_alter_user";
    case StatementKind::kGrant:
      return "Com_grant";
    case StatementKind::kFlush:
      return "Com_flush";
    case StatementKind::kPrepare:
      return "Com_prepare_sql";
    case StatementKind::kExecute:
      return "Com_execute_sql";
    case StatementKind::kDeallocatePrepare:
      return "Com_dealloc_sql";
    default:
      return nullptr;
  }
}

}  // namespace

SessionRegistry& SessionRegistry::instance() {
  static SessionRegistry registry;
  return registry;
}

void SessionRegistry::connected(const server::SessionState& session) {
  std::lock_guard lock(mutex_);
  Entry& entry = entries_[session.connection_id];
  entry.info.id = session.connection_id;
  entry.info.user = session.user;
  entry.info.host = session.host;
  entry.info.db = session.database;
  entry.connect_attributes = session.connect_attributes;
  entry.since = Clock::now();
  highest_connection_id_ = std::max(highest_connection_id_, session.connection_id);
}

void SessionRegistry::statement_started(const server::SessionState& session, StatementKind kind,
                                        std::string_view text) {
  std::lock_guard lock(mutex_);
  Entry& entry = entries_[session.connection_id];
  entry.info.id = session.connection_id;
  entry.info.user = session.user;
  entry.info.host = session.host;
  entry.info.db = session.database;
  entry.info.command = "Query";
  entry.info.state = "executing";
  entry.text.assign(text);
  entry.since = Clock::now();
  entry.running = true;
  ++questions_;
  highest_connection_id_ = std::max(highest_connection_id_, session.connection_id);
  ++statements_by_kind_[static_cast<uint8_t>(kind)];
}

void SessionRegistry::statement_finished(const server::SessionState& session) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(session.connection_id);
  if (it == entries_.end()) return;
  Entry& entry = it->second;
  entry.info.db = session.database;  // USE changes it
  entry.info.command = "Sleep";
  entry.info.state.clear();
  entry.since = Clock::now();
  entry.running = false;
}

void SessionRegistry::disconnected(uint32_t connection_id) {
  std::lock_guard lock(mutex_);
  entries_.erase(connection_id);
}

std::vector<std::pair<uint32_t, std::vector<std::pair<std::string, std::string>>>>
SessionRegistry::connect_attributes_of(const std::string& user) {
  std::vector<std::pair<uint32_t, std::vector<std::pair<std::string, std::string>>>> out;
  std::lock_guard lock(mutex_);
  for (const auto& [id, entry] : entries_) {
    if (entry.info.user == user) out.emplace_back(id, entry.connect_attributes);
  }
  return out;
}

std::optional<std::string> SessionRegistry::user_of(uint32_t connection_id) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(connection_id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.info.user;
}

std::vector<ProcessInfo> SessionRegistry::list(const server::SessionState& self,
                                               std::string_view self_text) {
  const Clock::time_point now = Clock::now();
  std::vector<ProcessInfo> out;
  std::lock_guard lock(mutex_);
  for (const auto& [id, entry] : entries_) {
    if (id == self.connection_id) continue;
    ProcessInfo info = entry.info;
    if (entry.running) info.info = entry.text;
    info.time_s = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::seconds>(now - entry.since).count());
    out.push_back(std::move(info));
  }
  ProcessInfo mine;
  mine.id = self.connection_id;
  mine.user = self.user;
  mine.host = self.host;
  mine.db = self.database;
  mine.command = "Query";
  mine.state = "init";
  mine.info = std::string(self_text);
  out.push_back(std::move(mine));
  std::sort(out.begin(), out.end(),
            [](const ProcessInfo& a, const ProcessInfo& b) { return a.id < b.id; });
  return out;
}

std::vector<std::pair<std::string, std::string>> SessionRegistry::status(
    const server::SessionState& self) {
  const Clock::time_point now = Clock::now();
  std::lock_guard lock(mutex_);
  size_t connected = entries_.size() + (entries_.count(self.connection_id) ? 0 : 1);
  size_t running = 1;  // this statement
  for (const auto& [id, entry] : entries_) running += entry.running && id != self.connection_id;
  std::vector<std::pair<std::string, std::string>> out;
  std::map<std::string, uint64_t> com_counters;  // the kinds run so far, by Com_ name
  for (size_t kind = 0; kind < statements_by_kind_.size(); ++kind) {
    const char* com = com_name(static_cast<StatementKind>(kind));
    if (statements_by_kind_[kind] != 0 && com != nullptr) {
      com_counters[com] += statements_by_kind_[kind];
    }
  }
  for (const auto& [name, count] : com_counters) out.emplace_back(name, std::to_string(count));
  const uint64_t uptime_s = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(now - started_).count());
  out.emplace_back("Connections",
                   std::to_string(std::max(highest_connection_id_, self.connection_id)));
  out.emplace_back("Queries", std::to_string(questions_));
  out.emplace_back("Questions", std::to_string(questions_));
  out.emplace_back("Threads_connected", std::to_string(connected));
  out.emplace_back("Threads_running", std::to_string(running));
  out.emplace_back("Uptime", std::to_string(uptime_s));
  out.emplace_back("Uptime_since_flush_status", std::to_string(uptime_s));
  // MySQL lists status variables case-insensitively by name.
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::lexicographical_compare(a.first.begin(), a.first.end(), b.first.begin(),
                                        b.first.end(), [](char x, char y) {
                                          return std::tolower(static_cast<unsigned char>(x)) <
                                                 std::tolower(static_cast<unsigned char>(y));
                                        });
  });
  return out;
}

}  // namespace duo::sql::executor
