// Tests of the system variable table: defaults, SET SESSION kept per connection and
// SET GLOBAL for new ones, DEFAULT, value checks per kind, scope errors with MySQL's
// numbers, sql_mode canonical form (ANSI / TRADITIONAL expanded), and the list SHOW
// VARIABLES prints.
#include "sql-frontend/executor/system_variables.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "sql-frontend/catalog/sql_exception.h"

namespace duo::sql::executor {
namespace {

const std::optional<std::string> kNoWord;

uint16_t error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const SqlException& e) {
    return e.code();
  }
  return 0;
}

std::string read(const server::SessionState& s, const std::string& name,
                 VariableScope scope = VariableScope::kDefault) {
  return system_variable(name, &s, scope).to_text();
}

TEST(SystemVariablesTest, DefaultsAreMysqlsAndSessionSetsStayInTheirConnection) {
  server::SessionState a, b;
  EXPECT_EQ(read(a, "sql_notes"), "1");
  EXPECT_EQ(read(a, "lower_case_table_names"), "0");
  EXPECT_EQ(read(a, "default_storage_engine"), "ndbcluster");
  EXPECT_EQ(read(a, "max_allowed_packet"), "67108864");
  EXPECT_EQ(read(a, "sql_select_limit"), "18446744073709551615");
  EXPECT_EQ(read(a, "character_set_system"), "utf8mb3");
  EXPECT_EQ(read(a, "character_set_client"), "utf8mb4");
  set_system_variable(a, VariableScope::kSession, "SQL_NOTES", std::string("OFF"), SqlValue());
  EXPECT_EQ(read(a, "sql_notes"), "0");
  EXPECT_EQ(read(a, "sql_notes", VariableScope::kGlobal), "1");
  EXPECT_EQ(read(b, "sql_notes"), "1");
  set_system_variable(a, VariableScope::kDefault, "sql_notes", std::string("DEFAULT"), SqlValue());
  EXPECT_EQ(read(a, "sql_notes"), "1");
  set_system_variable(a, VariableScope::kSession, "group_concat_max_len", kNoWord,
                      SqlValue::of_int(4096));
  EXPECT_EQ(system_variable("group_concat_max_len", &a).kind, SqlValue::Kind::kUInt);
  EXPECT_EQ(read(a, "group_concat_max_len"), "4096");
  EXPECT_EQ(read(b, "group_concat_max_len"), "1024");
}

TEST(SystemVariablesTest, GlobalSetIsSeenByConnectionsWithoutTheirOwnValue) {
  server::SessionState a, b;
  set_system_variable(a, VariableScope::kSession, "div_precision_increment", kNoWord,
                      SqlValue::of_int(6));
  set_system_variable(a, VariableScope::kGlobal, "div_precision_increment", kNoWord,
                      SqlValue::of_int(9));
  EXPECT_EQ(read(a, "div_precision_increment"), "6");
  EXPECT_EQ(read(b, "div_precision_increment"), "9");
  set_system_variable(a, VariableScope::kGlobal, "div_precision_increment", std::string("DEFAULT"),
                      SqlValue());
  EXPECT_EQ(read(b, "div_precision_increment"), "4");
}

TEST(SystemVariablesTest, ScopeAndValueErrorsAreMysqls) {
  server::SessionState s;
  EXPECT_EQ(error_of([&] { read(s, "no_such_variable"); }), 1193);
  EXPECT_EQ(error_of([&] { read(s, "max_connections", VariableScope::kSession); }), 1238);
  EXPECT_EQ(error_of([&] { read(s, "warning_count", VariableScope::kGlobal); }), 1238);
  EXPECT_EQ(error_of([&] {
              set_system_variable(s, VariableScope::kDefault, "version", std::nullopt,
                                  SqlValue::of_string("x"));
            }),
            1238);
  EXPECT_EQ(error_of([&] {
              set_system_variable(s, VariableScope::kSession, "max_connections", std::nullopt,
                                  SqlValue::of_int(5));
            }),
            1229);
  EXPECT_EQ(error_of([&] {
              set_system_variable(s, VariableScope::kGlobal, "sql_log_bin", std::string("OFF"),
                                  SqlValue());
            }),
            1228);
  EXPECT_EQ(error_of([&] {
              set_system_variable(s, VariableScope::kSession, "sql_notes", std::nullopt,
                                  SqlValue::of_int(2));
            }),
            1231);
  EXPECT_EQ(error_of([&] {
              set_system_variable(s, VariableScope::kSession, "sort_buffer_size", std::nullopt,
                                  SqlValue::of_string("big"));
            }),
            1232);
  EXPECT_EQ(error_of([&] {
              set_system_variable(s, VariableScope::kSession, "sql_mode", std::nullopt,
                                  SqlValue::of_string("NO_SUCH_MODE"));
            }),
            1231);
  EXPECT_EQ(error_of([&] {
              set_system_variable(s, VariableScope::kGlobal, "not_a_variable", std::nullopt,
                                  SqlValue::of_int(1));
            }),
            1193);
  // Unknown at session scope: kept, and read back.
  set_system_variable(s, VariableScope::kSession, "some_other_servers_variable", std::nullopt,
                      SqlValue::of_int(3));
  EXPECT_EQ(read(s, "some_other_servers_variable"), "3");
}

TEST(SystemVariablesTest, SqlModeIsCanonicalAndDecidesEngineSubstitution) {
  server::SessionState s;
  EXPECT_EQ(read(s, "sql_mode"),
            "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
            "ERROR_FOR_DIVISION_BY_ZERO");
  EXPECT_FALSE(sql_mode_has(s, "NO_ENGINE_SUBSTITUTION"));
  EXPECT_TRUE(sql_mode_has(s, "STRICT_TRANS_TABLES"));
  set_system_variable(s, VariableScope::kSession, "sql_mode", std::nullopt,
                      SqlValue::of_string("no_engine_substitution,,strict_all_tables"));
  EXPECT_EQ(read(s, "sql_mode"), "STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION");
  EXPECT_TRUE(sql_mode_has(s, "NO_ENGINE_SUBSTITUTION"));
  EXPECT_FALSE(sql_mode_has(s, "STRICT"));  // whole names only
  set_system_variable(s, VariableScope::kSession, "sql_mode", std::nullopt,
                      SqlValue::of_string("TRADITIONAL"));
  EXPECT_EQ(read(s, "sql_mode"),
            "STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
            "ERROR_FOR_DIVISION_BY_ZERO,TRADITIONAL,NO_ENGINE_SUBSTITUTION");
  set_system_variable(s, VariableScope::kSession, "sql_mode", std::nullopt,
                      SqlValue::of_string("ANSI"));
  EXPECT_EQ(read(s, "sql_mode"),
            "REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY,ANSI");
  set_system_variable(s, VariableScope::kSession, "sql_mode", std::nullopt,
                      SqlValue::of_string(""));
  EXPECT_EQ(read(s, "sql_mode"), "");
}

TEST(SystemVariablesTest, ListIsSortedWithBooleansAsOnOffAndNoSessionOnlyInGlobal) {
  server::SessionState s;
  s.autocommit = false;
  const auto session = list_system_variables(&s, /*global=*/false);
  const auto global = list_system_variables(&s, /*global=*/true);
  EXPECT_TRUE(std::is_sorted(session.begin(), session.end()));
  auto value_of = [](const auto& rows, const std::string& name) -> std::optional<std::string> {
    for (const auto& [n, v] : rows)
      if (n == name) return v;
    return std::nullopt;
  };
  EXPECT_EQ(value_of(session, "autocommit"), "OFF");
  EXPECT_EQ(value_of(session, "foreign_key_checks"), "ON");
  EXPECT_EQ(value_of(session, "sql_log_bin"), "ON");
  EXPECT_EQ(value_of(global, "sql_log_bin"), std::nullopt);
  EXPECT_EQ(value_of(session, "tx_isolation"), std::nullopt);  // removed in 8.0: @@ only
  EXPECT_EQ(read(s, "tx_isolation"), "READ-COMMITTED");
}

}  // namespace
}  // namespace duo::sql::executor
