// The system variable table and SET; see system_variables.h.
#include "sql-frontend/executor/system_variables.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <optional>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/expression.h"
#include "sql-frontend/executor/global_variables.h"
#include "sql-frontend/parser/ascii_case.h"
#include "sql-frontend/protocol/character_sets.h"

namespace duo::sql::executor {

namespace {

enum class Kind : uint8_t {
  kBoolean,  // ON/OFF; @@ gives 1/0
  kInteger,  // signed
  kUnsigned,
  kText,
  kSqlMode,
};
// Which scopes a variable has (VariableScope is what a statement names).
enum class VariableReach : uint8_t { kBoth, kGlobalOnly, kSessionOnly };

struct Definition {
  Kind kind;
  VariableReach scope;
  bool read_only;
  const char* default_value;  // as SHOW VARIABLES prints it; null: computed
};

constexpr const char* kOptimizerSwitch =
    "index_merge=on,index_merge_union=on,index_merge_sort_union=on,index_merge_intersection=on,"
    "engine_condition_pushdown=on,index_condition_pushdown=on,mrr=on,mrr_cost_based=on,"
    "block_nested_loop=on,batched_key_access=off,materialization=on,semijoin=on,loosescan=on,"
    "firstmatch=on,duplicateweedout=on,subquery_materialization_cost_based=on,"
    "use_index_extensions=on,condition_fanout_filter=on,derived_merge=on,"
    "use_invisible_indexes=off,skip_scan=on,hash_join=on,subquery_to_derived=off,"
    "prefer_ordering_index=on,hypergraph_optimizer=off,derived_condition_pushdown=on";

// MySQL 8.0's default without NO_ENGINE_SUBSTITUTION (system_variables.h says why).
constexpr const char* kDefaultSqlMode =
    "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
    "ERROR_FOR_DIVISION_BY_ZERO";

// The variables duo_sqld knows, with MySQL 8.0's defaults (DuoDB's where it differs:
// engines, isolation, versions).
const std::map<std::string, Definition>& definitions() {
  using K = Kind;
  using S = VariableReach;
  static const std::map<std::string, Definition> table = {
      {"activate_all_roles_on_login", {K::kBoolean, S::kGlobalOnly, false, "OFF"}},
      {"auto_increment_increment", {K::kUnsigned, S::kBoth, false, "1"}},
      {"auto_increment_offset", {K::kUnsigned, S::kBoth, false, "1"}},
      {"autocommit", {K::kBoolean, S::kBoth, false, nullptr}},
      {"big_tables", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"binlog_format", {K::kText, S::kBoth, false, "ROW"}},
      {"bulk_insert_buffer_size", {K::kUnsigned, S::kBoth, false, "8388608"}},
      {"character_set_client", {K::kText, S::kBoth, false, nullptr}},
      {"character_set_connection", {K::kText, S::kBoth, false, nullptr}},
      {"character_set_database", {K::kText, S::kBoth, false, "utf8mb4"}},
      {"character_set_filesystem", {K::kText, S::kBoth, false, "binary"}},
      {"character_set_results", {K::kText, S::kBoth, false, nullptr}},
      {"character_set_server", {K::kText, S::kBoth, false, "utf8mb4"}},
      {"character_set_system", {K::kText, S::kGlobalOnly, true, "utf8mb3"}},
      {"collation_connection", {K::kText, S::kBoth, false, nullptr}},
      {"collation_database", {K::kText, S::kBoth, false, "utf8mb4_0900_ai_ci"}},
      {"collation_server", {K::kText, S::kBoth, false, "utf8mb4_0900_ai_ci"}},
      {"completion_type", {K::kText, S::kBoth, false, "NO_CHAIN"}},
      {"connect_timeout", {K::kUnsigned, S::kGlobalOnly, false, "10"}},
      {"cte_max_recursion_depth", {K::kUnsigned, S::kBoth, false, "1000"}},
      {"default_authentication_plugin", {K::kText, S::kGlobalOnly, true, "mysql_native_password"}},
      {"default_collation_for_utf8mb4", {K::kText, S::kBoth, false, "utf8mb4_0900_ai_ci"}},
      {"default_password_lifetime", {K::kUnsigned, S::kGlobalOnly, false, "0"}},
      {"default_storage_engine", {K::kText, S::kBoth, false, "ndbcluster"}},
      {"default_tmp_storage_engine", {K::kText, S::kBoth, false, "ndbcluster"}},
      {"default_week_format", {K::kUnsigned, S::kBoth, false, "0"}},
      {"div_precision_increment", {K::kUnsigned, S::kBoth, false, "4"}},
      {"end_markers_in_json", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"enforce_gtid_consistency", {K::kText, S::kGlobalOnly, false, "OFF"}},
      {"eq_range_index_dive_limit", {K::kUnsigned, S::kBoth, false, "200"}},
      {"error_count", {K::kUnsigned, S::kSessionOnly, true, nullptr}},
      {"explicit_defaults_for_timestamp", {K::kBoolean, S::kBoth, false, "ON"}},
      {"foreign_key_checks", {K::kBoolean, S::kBoth, false, "ON"}},
      {"group_concat_max_len", {K::kUnsigned, S::kBoth, false, "1024"}},
      {"gtid_mode", {K::kText, S::kGlobalOnly, false, "OFF"}},
      {"have_ndbcluster", {K::kText, S::kGlobalOnly, true, "YES"}},
      {"have_openssl", {K::kText, S::kGlobalOnly, true, "DISABLED"}},
      {"have_ssl", {K::kText, S::kGlobalOnly, true, "DISABLED"}},
      {"hostname", {K::kText, S::kGlobalOnly, true, "localhost"}},
      {"identity", {K::kUnsigned, S::kSessionOnly, false, nullptr}},
      {"information_schema_stats_expiry", {K::kUnsigned, S::kBoth, false, "86400"}},
      {"init_connect", {K::kText, S::kGlobalOnly, false, ""}},
      {"innodb_autoinc_lock_mode", {K::kInteger, S::kGlobalOnly, true, "2"}},
      {"innodb_buffer_pool_size", {K::kUnsigned, S::kGlobalOnly, false, "134217728"}},
      {"innodb_default_row_format", {K::kText, S::kGlobalOnly, false, "dynamic"}},
      {"innodb_file_per_table", {K::kBoolean, S::kGlobalOnly, false, "ON"}},
      {"innodb_flush_log_at_trx_commit", {K::kUnsigned, S::kGlobalOnly, false, "1"}},
      {"innodb_lock_wait_timeout", {K::kUnsigned, S::kBoth, false, "50"}},
      {"innodb_page_size", {K::kUnsigned, S::kGlobalOnly, true, "16384"}},
      {"innodb_read_only", {K::kBoolean, S::kGlobalOnly, true, "OFF"}},
      {"innodb_stats_persistent", {K::kBoolean, S::kGlobalOnly, false, "ON"}},
      {"innodb_strict_mode", {K::kBoolean, S::kBoth, false, "ON"}},
      {"innodb_version", {K::kText, S::kGlobalOnly, true, "8.0.36"}},
      {"interactive_timeout", {K::kUnsigned, S::kBoth, false, "28800"}},
      {"join_buffer_size", {K::kUnsigned, S::kBoth, false, "262144"}},
      {"last_insert_id", {K::kUnsigned, S::kSessionOnly, false, nullptr}},
      {"lc_messages", {K::kText, S::kBoth, false, "en_US"}},
      {"lc_time_names", {K::kText, S::kBoth, false, "en_US"}},
      {"license", {K::kText, S::kGlobalOnly, true, "GPL"}},
      {"local_infile", {K::kBoolean, S::kGlobalOnly, false, "OFF"}},
      {"lock_wait_timeout", {K::kUnsigned, S::kBoth, false, "31536000"}},
      {"log_bin", {K::kBoolean, S::kGlobalOnly, true, "OFF"}},
      {"log_bin_trust_function_creators", {K::kBoolean, S::kGlobalOnly, false, "OFF"}},
      {"long_query_time", {K::kText, S::kBoth, false, "10.000000"}},
      {"low_priority_updates", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"lower_case_table_names", {K::kUnsigned, S::kGlobalOnly, true, "0"}},
      {"max_allowed_packet", {K::kUnsigned, S::kBoth, false, "67108864"}},
      {"max_connections", {K::kUnsigned, S::kGlobalOnly, false, "151"}},
      {"max_error_count", {K::kUnsigned, S::kBoth, false, "1024"}},
      {"max_execution_time", {K::kUnsigned, S::kBoth, false, "0"}},
      {"max_heap_table_size", {K::kUnsigned, S::kBoth, false, "16777216"}},
      {"max_join_size", {K::kUnsigned, S::kBoth, false, "18446744073709551615"}},
      {"max_length_for_sort_data", {K::kUnsigned, S::kBoth, false, "4096"}},
      {"max_prepared_stmt_count", {K::kUnsigned, S::kGlobalOnly, false, "16382"}},
      {"max_sort_length", {K::kUnsigned, S::kBoth, false, "1024"}},
      {"max_sp_recursion_depth", {K::kUnsigned, S::kBoth, false, "0"}},
      {"max_user_connections", {K::kUnsigned, S::kBoth, false, "0"}},
      {"ndb_autoincrement_prefetch_sz", {K::kUnsigned, S::kBoth, false, "512"}},
      {"ndb_batch_size", {K::kUnsigned, S::kBoth, false, "32768"}},
      {"ndb_join_pushdown", {K::kBoolean, S::kBoth, false, "ON"}},
      {"ndb_read_backup", {K::kBoolean, S::kGlobalOnly, false, nullptr}},
      {"ndb_use_exact_count", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"ndb_version_string", {K::kText, S::kGlobalOnly, true, "ndb-8.0.36"}},
      {"net_buffer_length", {K::kUnsigned, S::kBoth, false, "16384"}},
      {"net_read_timeout", {K::kUnsigned, S::kBoth, false, "30"}},
      {"net_retry_count", {K::kUnsigned, S::kBoth, false, "10"}},
      {"net_write_timeout", {K::kUnsigned, S::kBoth, false, "60"}},
      {"optimizer_prune_level", {K::kUnsigned, S::kBoth, false, "1"}},
      {"optimizer_search_depth", {K::kUnsigned, S::kBoth, false, "62"}},
      {"optimizer_switch", {K::kText, S::kBoth, false, kOptimizerSwitch}},
      {"performance_schema", {K::kBoolean, S::kGlobalOnly, true, "OFF"}},
      {"port", {K::kUnsigned, S::kGlobalOnly, true, nullptr}},
      {"profiling", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"protocol_version", {K::kUnsigned, S::kGlobalOnly, true, "10"}},
      {"pseudo_thread_id", {K::kUnsigned, S::kSessionOnly, false, nullptr}},
      {"query_cache_size", {K::kUnsigned, S::kGlobalOnly, false, "0"}},
      {"query_cache_type", {K::kUnsigned, S::kBoth, false, "0"}},
      {"read_buffer_size", {K::kUnsigned, S::kBoth, false, "131072"}},
      {"read_only", {K::kBoolean, S::kGlobalOnly, false, "OFF"}},
      {"read_rnd_buffer_size", {K::kUnsigned, S::kBoth, false, "262144"}},
      {"require_secure_transport", {K::kBoolean, S::kGlobalOnly, false, "OFF"}},
      {"server_id", {K::kUnsigned, S::kGlobalOnly, false, "1"}},
      {"session_track_schema", {K::kBoolean, S::kBoth, false, "ON"}},
      {"session_track_state_change", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"skip_name_resolve", {K::kBoolean, S::kGlobalOnly, true, "ON"}},
      {"skip_networking", {K::kBoolean, S::kGlobalOnly, true, "OFF"}},
      {"socket", {K::kText, S::kGlobalOnly, true, nullptr}},
      {"sort_buffer_size", {K::kUnsigned, S::kBoth, false, "262144"}},
      {"sql_auto_is_null", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"sql_big_selects", {K::kBoolean, S::kBoth, false, "ON"}},
      {"sql_buffer_result", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"sql_log_bin", {K::kBoolean, S::kSessionOnly, false, "ON"}},
      {"sql_mode", {K::kSqlMode, S::kBoth, false, kDefaultSqlMode}},
      {"sql_notes", {K::kBoolean, S::kBoth, false, "ON"}},
      {"sql_quote_show_create", {K::kBoolean, S::kBoth, false, "ON"}},
      {"sql_require_primary_key", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"sql_safe_updates", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"sql_select_limit", {K::kUnsigned, S::kBoth, false, "18446744073709551615"}},
      {"sql_warnings", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"storage_engine", {K::kText, S::kBoth, false, "ndbcluster"}},
      {"system_time_zone", {K::kText, S::kGlobalOnly, true, "UTC"}},
      {"table_definition_cache", {K::kUnsigned, S::kGlobalOnly, false, "2000"}},
      {"table_open_cache", {K::kUnsigned, S::kGlobalOnly, false, "4000"}},
      {"thread_stack", {K::kUnsigned, S::kGlobalOnly, true, "1048576"}},
      {"time_zone", {K::kText, S::kBoth, false, "SYSTEM"}},
      {"tmp_table_size", {K::kUnsigned, S::kBoth, false, "16777216"}},
      {"tmpdir", {K::kText, S::kGlobalOnly, true, "/tmp"}},
      {"transaction_alloc_block_size", {K::kUnsigned, S::kBoth, false, "8192"}},
      {"transaction_isolation", {K::kText, S::kBoth, false, "READ-COMMITTED"}},
      {"transaction_prealloc_size", {K::kUnsigned, S::kBoth, false, "4096"}},
      {"transaction_read_only", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"tx_isolation", {K::kText, S::kBoth, false, "READ-COMMITTED"}},
      {"tx_read_only", {K::kBoolean, S::kBoth, false, "OFF"}},
      {"unique_checks", {K::kBoolean, S::kBoth, false, "ON"}},
      {"updatable_views_with_limit", {K::kText, S::kBoth, false, "YES"}},
      {"version", {K::kText, S::kGlobalOnly, true, nullptr}},
      {"version_comment", {K::kText, S::kGlobalOnly, true, "DuoDB Server (GPL)"}},
      {"version_compile_machine", {K::kText, S::kGlobalOnly, true, "x86_64"}},
      {"version_compile_os", {K::kText, S::kGlobalOnly, true, "Linux"}},
      {"wait_timeout", {K::kUnsigned, S::kBoth, false, "28800"}},
      {"warning_count", {K::kUnsigned, S::kSessionOnly, true, nullptr}},
      {"windowing_use_high_precision", {K::kBoolean, S::kBoth, false, "ON"}},
  };
  return table;
}

// Not listed by SHOW VARIABLES (MySQL 8.0 removed them; old clients still read them).
bool is_alias_only(const std::string& name) {
  return name == "storage_engine" || name == "tx_isolation" || name == "tx_read_only" ||
         name == "identity" || name == "last_insert_id" || name == "warning_count" ||
         name == "error_count" || name == "pseudo_thread_id" || name == "query_cache_size" ||
         name == "query_cache_type";
}

// sql_mode names in MySQL's display order; ANSI and TRADITIONAL also set others.
constexpr const char* kSqlModes[] = {"REAL_AS_FLOAT",
                                     "PIPES_AS_CONCAT",
                                     "ANSI_QUOTES",
                                     "IGNORE_SPACE",
                                     "ONLY_FULL_GROUP_BY",
                                     "NO_UNSIGNED_SUBTRACTION",
                                     "NO_DIR_IN_CREATE",
                                     "ANSI",
                                     "NO_AUTO_VALUE_ON_ZERO",
                                     "NO_BACKSLASH_ESCAPES",
                                     "STRICT_TRANS_TABLES",
                                     "STRICT_ALL_TABLES",
                                     "NO_ZERO_IN_DATE",
                                     "NO_ZERO_DATE",
                                     "ALLOW_INVALID_DATES",
                                     "ERROR_FOR_DIVISION_BY_ZERO",
                                     "TRADITIONAL",
                                     "HIGH_NOT_PRECEDENCE",
                                     "NO_ENGINE_SUBSTITUTION",
                                     "PAD_CHAR_TO_FULL_LENGTH",
                                     "TIME_TRUNCATE_FRACTIONAL"};

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// The canonical text of a sql_mode value, or nullopt if a name is unknown.
std::optional<std::string> canonical_sql_mode(const std::string& text) {
  std::vector<std::string> names;
  size_t start = 0;
  const std::string value = upper(text);
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    std::string name = value.substr(start, comma - start);
    start = comma + 1;
    if (name.empty()) continue;
    if (std::find_if(std::begin(kSqlModes), std::end(kSqlModes),
                     [&](const char* m) { return name == m; }) == std::end(kSqlModes)) {
      return std::nullopt;
    }
    names.push_back(name);
    if (name == "ANSI") {
      for (const char* m : {"REAL_AS_FLOAT", "PIPES_AS_CONCAT", "ANSI_QUOTES", "IGNORE_SPACE",
                            "ONLY_FULL_GROUP_BY"})
        names.emplace_back(m);
    } else if (name == "TRADITIONAL") {
      for (const char* m : {"STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "NO_ZERO_IN_DATE",
                            "NO_ZERO_DATE", "ERROR_FOR_DIVISION_BY_ZERO", "NO_ENGINE_SUBSTITUTION"})
        names.emplace_back(m);
    }
  }
  std::string out;
  for (const char* mode : kSqlModes) {
    if (std::find(names.begin(), names.end(), mode) == names.end()) continue;
    if (!out.empty()) out += ',';
    out += mode;
  }
  return out;
}

struct Endpoints {
  std::mutex mutex;
  uint16_t port = 3306;
  std::string socket;
  std::map<std::string, std::string> global_values;  // GUARDED_BY(mutex): SET GLOBAL
};

Endpoints& server_state() {
  static Endpoints state;
  return state;
}

// The value of a computed variable as SHOW prints it; nullopt if not computed.
std::optional<std::string> computed_value(const std::string& name,
                                          const server::SessionState* session) {
  if (name == "autocommit") return (session == nullptr || session->autocommit) ? "ON" : "OFF";
  if (name == "version") return server_version();
  if (name == "ndb_read_backup")
    return GlobalVariables::instance().ndb_read_backup() ? "ON" : "OFF";
  if (name == "port" || name == "socket") {
    Endpoints& state = server_state();
    std::lock_guard lock(state.mutex);
    return name == "port" ? std::to_string(state.port) : state.socket;
  }
  if (name == "pseudo_thread_id") {
    return std::to_string(session == nullptr ? 0 : session->connection_id);
  }
  if (name == "identity" || name == "last_insert_id" || name == "warning_count" ||
      name == "error_count") {
    return "0";  // the statement context knows better (LAST_INSERT_ID(), diagnostics)
  }
  // The connection character set (SET NAMES, the handshake).
  auto charset_of = [](uint16_t id) -> std::string {
    const protocol::CollationInfo* c = protocol::find_collation(id);
    return c == nullptr ? "" : std::string(c->character_set);
  };
  const uint16_t default_id = protocol::kDefaultCollationId;
  if (name == "character_set_client") {
    return charset_of(session == nullptr ? default_id : session->client_collation);
  }
  if (name == "character_set_connection") {
    return charset_of(session == nullptr ? default_id : session->connection_collation);
  }
  if (name == "character_set_results") {
    return charset_of(session == nullptr ? default_id : session->results_collation);
  }
  if (name == "collation_connection") {
    const protocol::CollationInfo* c =
        protocol::find_collation(session == nullptr ? default_id : session->connection_collation);
    return c == nullptr ? "" : std::string(c->name);
  }
  return std::nullopt;
}

[[noreturn]] void throw_unknown(const std::string& name) {
  throw SqlException(1193, "HY000", "Unknown system variable '" + name + "'");
}

// The text value of `name` in `scope` (SHOW's spelling).
std::string text_value(const std::string& name, const Definition& definition,
                       const server::SessionState* session, bool global) {
  if (definition.default_value == nullptr) {
    if (std::optional<std::string> computed = computed_value(name, session)) return *computed;
  }
  if (!global && session != nullptr && definition.scope != VariableReach::kGlobalOnly) {
    auto it = session->system_variables.find(name);
    if (it != session->system_variables.end()) return it->second;
  }
  Endpoints& state = server_state();
  std::lock_guard lock(state.mutex);
  auto it = state.global_values.find(name);
  return it != state.global_values.end() ? it->second : definition.default_value;
}

SqlValue typed(const std::string& text, Kind kind) {
  switch (kind) {
    case Kind::kBoolean:
      return SqlValue::of_int(text == "ON" ? 1 : 0);
    case Kind::kInteger:
      return SqlValue::of_int(std::stoll(text));
    case Kind::kUnsigned:
      return SqlValue::of_uint(std::stoull(text));
    case Kind::kText:
    case Kind::kSqlMode:
      return SqlValue::of_string(text);
  }
  return SqlValue::of_string(text);
}

[[noreturn]] void throw_bad_value(const std::string& name, const std::string& shown) {
  throw SqlException(1231, "42000",
                     "Variable '" + name + "' can't be set to the value of '" + shown + "'");
}

// A character set named in SET NAMES / SET CHARACTER SET / SET character_set_*: listed
// (utf8 is utf8mb3, as in MySQL 8.0), else 1115; ucs2/utf16/utf32 cannot be a client
// character set (1231).
const protocol::CharacterSetInfo& client_character_set(const std::string& name,
                                                       const char* variable) {
  const std::string lower = ascii_lower(name);
  if (lower == "ucs2" || lower == "utf16" || lower == "utf16le" || lower == "utf32") {
    throw SqlException(
        1231, "42000",
        std::string("Variable '") + variable + "' can't be set to the value of '" + name + "'");
  }
  const protocol::CharacterSetInfo* cs =
      protocol::find_character_set(lower == "utf8" ? "utf8mb3" : lower);
  if (cs == nullptr) throw SqlException(1115, "42000", "Unknown character set: '" + name + "'");
  return *cs;
}

const protocol::CollationInfo& known_collation(const std::string& name) {
  const std::string lower = ascii_lower(name);
  const protocol::CollationInfo* c =
      protocol::find_collation(lower.starts_with("utf8_") ? "utf8mb3_" + lower.substr(5) : lower);
  if (c == nullptr) throw SqlException(1273, "HY000", "Unknown collation: '" + name + "'");
  return *c;
}

// SET [SESSION] character_set_client / _connection / _results / collation_connection:
// the session's collation ids. False for any other variable.
bool set_connection_charset_variable(server::SessionState& session, const std::string& name,
                                     const std::optional<std::string>& word,
                                     const SqlValue& value) {
  const bool is_default = word && upper(*word) == "DEFAULT";
  const std::string given = word ? *word : value.to_text();
  const uint16_t default_id = protocol::kDefaultCollationId;
  if (name == "character_set_client" || name == "character_set_connection" ||
      name == "character_set_results") {
    uint16_t id = default_id;
    if (name == "character_set_results" && !word && value.is_null()) {
      id = 0;  // NULL: results as stored
    } else if (!is_default) {
      if (!word && value.is_null()) throw_bad_value(name, "NULL");
      id = protocol::default_collation_of(client_character_set(given, name.c_str())).id;
    }
    (name == "character_set_client"       ? session.client_collation
     : name == "character_set_connection" ? session.connection_collation
                                          : session.results_collation) = id;
    return true;
  }
  if (name == "collation_connection") {
    if (!word && value.is_null()) throw_bad_value(name, "NULL");
    session.connection_collation = is_default ? default_id : known_collation(given).id;
    return true;
  }
  return false;
}

}  // namespace

void set_names(server::SessionState& session, const std::string& charset,
               const std::optional<std::string>& collate) {
  if (charset.empty()) {  // SET NAMES DEFAULT
    session.client_collation = session.connection_collation = session.results_collation =
        protocol::kDefaultCollationId;
    return;
  }
  const protocol::CharacterSetInfo& cs = client_character_set(charset, "character_set_client");
  uint16_t id = protocol::default_collation_of(cs).id;
  if (collate) {
    const protocol::CollationInfo& c = known_collation(*collate);
    if (c.character_set != cs.name) {
      throw SqlException(
          1253, "42000",
          "COLLATION '" + *collate + "' is not valid for CHARACTER SET '" + charset + "'");
    }
    id = c.id;
  }
  session.client_collation = session.connection_collation = session.results_collation = id;
}

void set_character_set(server::SessionState& session, const std::string& charset) {
  uint16_t id = protocol::kDefaultCollationId;
  if (!charset.empty()) {
    id = protocol::default_collation_of(client_character_set(charset, "character_set_client")).id;
  }
  session.client_collation = session.results_collation = id;
  // The connection's character set becomes the database's (always utf8mb4 here).
  session.connection_collation = protocol::kDefaultCollationId;
}

void set_server_endpoints(uint16_t port, std::string socket_path) {
  Endpoints& state = server_state();
  std::lock_guard lock(state.mutex);
  state.port = port;
  state.socket = std::move(socket_path);
}

SqlValue system_variable(const std::string& raw_name, const server::SessionState* session,
                         VariableScope scope) {
  const std::string name = ascii_lower(raw_name);
  auto it = definitions().find(name);
  if (it == definitions().end()) {
    // A variable this connection SET without knowing it (system_variables.h): kept.
    if (session != nullptr && scope != VariableScope::kGlobal) {
      auto set = session->system_variables.find(name);
      if (set != session->system_variables.end()) return SqlValue::of_string(set->second);
    }
    throw_unknown(raw_name);
  }
  const Definition& definition = it->second;
  if (scope == VariableScope::kSession && definition.scope == VariableReach::kGlobalOnly) {
    throw SqlException(1238, "HY000", "Variable '" + name + "' is a GLOBAL variable");
  }
  if (scope == VariableScope::kGlobal && definition.scope == VariableReach::kSessionOnly) {
    throw SqlException(1238, "HY000", "Variable '" + name + "' is a SESSION variable");
  }
  if (name == "character_set_results" && session != nullptr && session->results_collation == 0 &&
      scope != VariableScope::kGlobal) {
    return SqlValue::null();
  }
  return typed(text_value(name, definition, session, scope == VariableScope::kGlobal),
               definition.kind);
}

void set_system_variable(server::SessionState& session, VariableScope scope,
                         const std::string& raw_name, const std::optional<std::string>& word,
                         const SqlValue& value) {
  const std::string name = ascii_lower(raw_name);
  auto it = definitions().find(name);
  const bool global = scope == VariableScope::kGlobal;
  if (it == definitions().end()) {
    // Unknown to duo_sqld: a session keeps what it set (clients set variables of
    // other servers' versions and read them back); GLOBAL is refused as MySQL does.
    if (global) throw_unknown(raw_name);
    session.system_variables[name] = word ? *word : value.to_text();
    return;
  }
  const Definition& definition = it->second;
  if (definition.read_only) {
    throw SqlException(1238, "HY000", "Variable '" + name + "' is a read only variable");
  }
  if (global && definition.scope == VariableReach::kSessionOnly) {
    throw SqlException(1228, "HY000",
                       "Variable '" + name +
                           "' is a SESSION variable and can't be used with SET "
                           "GLOBAL");
  }
  if (!global && definition.scope == VariableReach::kGlobalOnly) {
    throw SqlException(1229, "HY000",
                       "Variable '" + name +
                           "' is a GLOBAL variable and should be set with SET "
                           "GLOBAL");
  }
  std::string text;
  const std::string shown = word ? *word : value.to_text();
  if (!global && set_connection_charset_variable(session, name, word, value)) return;
  if (word && upper(*word) == "DEFAULT") {
    // SESSION: back to the global value; GLOBAL: back to the compiled default.
    if (global) {
      Endpoints& state = server_state();
      std::lock_guard lock(state.mutex);
      state.global_values.erase(name);
    } else {
      session.system_variables.erase(name);
    }
    return;
  }
  switch (definition.kind) {
    case Kind::kBoolean: {
      const std::string w = upper(shown);
      if (word && (w == "ON" || w == "TRUE")) {
        text = "ON";
      } else if (word && (w == "OFF" || w == "FALSE")) {
        text = "OFF";
      } else if (!word && value.is_numeric() && (value.to_int() == 0 || value.to_int() == 1)) {
        text = value.to_int() == 1 ? "ON" : "OFF";
      } else if (!word && !value.is_null() && (w == "ON" || w == "OFF")) {
        text = w;
      } else {
        throw_bad_value(name, value.is_null() ? "NULL" : shown);
      }
      break;
    }
    case Kind::kInteger:
    case Kind::kUnsigned:
      if (word || value.is_null() || !value.is_numeric()) {
        throw SqlException(1232, "42000", "Incorrect argument type to variable '" + name + "'");
      }
      text = definition.kind == Kind::kUnsigned && value.to_int() < 0
                 ? "0"
                 : std::to_string(value.to_int());
      break;
    case Kind::kSqlMode: {
      std::optional<std::string> mode =
          value.is_null() && !word ? std::nullopt : canonical_sql_mode(shown);
      if (!mode) throw_bad_value(name, value.is_null() && !word ? "NULL" : shown);
      text = *mode;
      break;
    }
    case Kind::kText:
      if (!word && value.is_null()) throw_bad_value(name, "NULL");
      text = shown;
      break;
  }
  if (global) {
    Endpoints& state = server_state();
    std::lock_guard lock(state.mutex);
    state.global_values[name] = text;
  } else {
    session.system_variables[name] = text;
  }
}

std::vector<std::pair<std::string, std::string>> list_system_variables(
    const server::SessionState* session, bool global) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& [name, definition] : definitions()) {
    if (is_alias_only(name)) continue;
    if (global && definition.scope == VariableReach::kSessionOnly) continue;
    rows.emplace_back(name, text_value(name, definition, session, global));
  }
  return rows;
}

bool sql_mode_has(const server::SessionState& session, std::string_view mode) {
  const std::string modes =
      text_value("sql_mode", definitions().at("sql_mode"), &session, /*global=*/false);
  size_t start = 0;
  while (start <= modes.size()) {
    size_t comma = modes.find(',', start);
    if (comma == std::string::npos) comma = modes.size();
    if (std::string_view(modes).substr(start, comma - start) == mode) return true;
    start = comma + 1;
  }
  return false;
}

}  // namespace duo::sql::executor
