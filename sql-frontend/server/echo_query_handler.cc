// The protocol tests' QueryHandler; see echo_query_handler.h.
#include "sql-frontend/server/echo_query_handler.h"

#include <cctype>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace duo::sql::server {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.back())) || s.back() == ';')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool starts_with(const std::string& upper_text, std::string_view prefix) {
  return upper_text.compare(0, prefix.size(), prefix) == 0;
}

// Splits on ';' outside single quotes.
std::vector<std::string_view> split_statements(std::string_view sql) {
  std::vector<std::string_view> out;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] == '\\' && quoted) {
      ++i;
    } else if (sql[i] == '\'') {
      quoted = !quoted;
    } else if (sql[i] == ';' && !quoted) {
      out.push_back(sql.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(sql.substr(start));
  while (out.size() > 1 && trim(out.back()).empty()) out.pop_back();
  return out;
}

size_t count_markers(std::string_view sql) {
  size_t count = 0;
  bool quoted = false;
  for (size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] == '\\' && quoted) {
      ++i;
    } else if (sql[i] == '\'') {
      quoted = !quoted;
    } else if (sql[i] == '?' && !quoted) {
      ++count;
    }
  }
  return count;
}

SqlError syntax_error(std::string_view near) {
  return SqlError{1064, "42000",
                  "You have an error in your SQL syntax; check the manual that corresponds to "
                  "your MySQL server version for the right syntax to use near '" +
                      std::string(near.substr(0, 80)) + "' at line 1"};
}

ColumnDefinition41 column(std::string name, FieldType type, uint16_t flags = 0) {
  ColumnDefinition41 c;
  c.name = name;
  c.org_name = std::move(name);
  c.type = type;
  c.flags = flags;
  // Display lengths as MySQL reports them; clients check binary values against them.
  switch (type) {
    case FieldType::kTiny:
      c.column_length = 4;
      break;
    case FieldType::kShort:
      c.column_length = 6;
      break;
    case FieldType::kYear:
      c.column_length = 4;
      break;
    case FieldType::kInt24:
      c.column_length = 9;
      break;
    case FieldType::kLong:
      c.column_length = 11;
      break;
    case FieldType::kLongLong:
      c.column_length = 20;
      break;
    case FieldType::kFloat:
      c.column_length = 12;
      c.decimals = 31;
      break;
    case FieldType::kDouble:
      c.column_length = 22;
      c.decimals = 31;
      break;
    case FieldType::kDate:
      c.column_length = 10;
      break;
    case FieldType::kTime:
      c.column_length = 17;
      c.decimals = 6;
      break;
    case FieldType::kDateTime:
    case FieldType::kTimestamp:
      c.column_length = 26;
      c.decimals = 6;
      break;
    case FieldType::kNull:
      c.column_length = 0;
      break;
    case FieldType::kDecimal:
    case FieldType::kNewDecimal:
      c.column_length = 67;
      c.decimals = 30;
      break;
    default:
      c.column_length = 16u << 20;
      break;
  }
  if (!protocol::is_string_encoded(type) || type == FieldType::kNull) {
    c.character_set = protocol::kCharsetBinary;
    c.flags |= protocol::kBinaryFlag;
    if (type != FieldType::kNull) c.flags |= protocol::kNumFlag;
  }
  return c;
}

// SELECT <literal>, <literal>, ... -> one row; nullopt if not such a list.
std::optional<ResultSet> literal_row(std::string_view list) {
  ResultSet set;
  std::vector<Value> row;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < list.size() && std::isspace(static_cast<unsigned char>(list[i]))) ++i;
  };
  for (;;) {
    skip_space();
    if (i >= list.size()) return std::nullopt;
    size_t start = i;
    if (list[i] == '\'') {
      std::string text;
      ++i;
      for (;;) {
        if (i >= list.size()) return std::nullopt;
        if (list[i] == '\\' && i + 1 < list.size()) {
          text += list[i + 1];
          i += 2;
        } else if (list[i] == '\'' && i + 1 < list.size() && list[i + 1] == '\'') {
          text += '\'';
          i += 2;
        } else if (list[i] == '\'') {
          ++i;
          break;
        } else {
          text += list[i++];
        }
      }
      // MySQL names a string column after its (capped) text.
      set.columns.push_back(column(text.substr(0, 64), FieldType::kVarString));
      row.emplace_back(std::move(text));
    } else {
      while (i < list.size() && list[i] != ',' &&
             !std::isspace(static_cast<unsigned char>(list[i]))) {
        ++i;
      }
      std::string token(list.substr(start, i - start));
      std::string upper_token = upper(token);
      if (upper_token == "NULL") {
        set.columns.push_back(column("NULL", FieldType::kNull));
        row.emplace_back();
      } else if (!token.empty() && token.find_first_not_of("-0123456789") == std::string::npos) {
        try {
          row.emplace_back(int64_t{std::stoll(token)});
        } catch (const std::out_of_range&) {
          return std::nullopt;
        } catch (const std::invalid_argument&) {
          return std::nullopt;
        }
        set.columns.push_back(column(token, FieldType::kLongLong));
      } else if (!token.empty() && token.find_first_not_of("-0123456789.") == std::string::npos) {
        set.columns.push_back(column(token, FieldType::kNewDecimal));
        row.emplace_back(token);
      } else {
        return std::nullopt;
      }
    }
    skip_space();
    if (i == list.size()) break;
    if (list[i] != ',') return std::nullopt;
    ++i;
  }
  set.rows.push_back(std::move(row));
  return set;
}

ResultSet single_value(std::string name, FieldType type, Value value, uint16_t flags = 0) {
  ResultSet set;
  set.columns.push_back(column(std::move(name), type, flags));
  set.rows.push_back({std::move(value)});
  return set;
}

}  // namespace

std::vector<StatementResult> EchoQueryHandler::query(SessionState& session, std::string_view sql,
                                                     bool multi_statements) {
  std::vector<std::string_view> statements = split_statements(sql);
  std::vector<StatementResult> results;
  if (statements.size() > 1 && !multi_statements) {
    results.emplace_back(syntax_error(statements[1]));
    return results;
  }
  for (std::string_view statement : statements) {
    results.push_back(run_one(session, statement));
    if (std::holds_alternative<SqlError>(results.back())) break;
  }
  return results;
}

StatementResult EchoQueryHandler::run_one(SessionState& session, std::string_view statement) {
  std::string_view text = trim(statement);
  std::string key = upper(text);
  if (key == "SELECT CONNECTION_ID()") {
    return single_value("CONNECTION_ID()", FieldType::kLongLong,
                        Value(uint64_t{session.connection_id}), protocol::kUnsignedFlag);
  }
  if (key == "SELECT DATABASE()") {
    return single_value("DATABASE()", FieldType::kVarString,
                        session.database.empty() ? Value() : Value(session.database));
  }
  if (key == "SELECT @@VERSION_COMMENT LIMIT 1" || key == "SELECT @@VERSION_COMMENT") {
    return single_value("@@version_comment", FieldType::kVarString, Value(std::string("DuoDB")));
  }
  if (key == "SELECT * FROM MISSING") {
    return SqlError{1146, "42S02", "Table '" + session.database + ".missing' doesn't exist"};
  }
  if (key == "SELECT ENCODED") {
    ResultSet set;
    set.encoded_columns =
        EncodedColumns::of({column("i", FieldType::kLongLong), column("s", FieldType::kVarString)});
    set.rows.push_back({Value(int64_t{7}), Value(std::string("seven"))});
    return set;
  }
  if (starts_with(key, "SELECT BADROWS(") && key.back() == ')') {
    uint64_t count = std::stoull(key.substr(15, key.size() - 16));
    ResultSet set;
    set.columns = {column("i", FieldType::kLongLong), column("s", FieldType::kVarString)};
    for (uint64_t i = 0; i < count; ++i) {
      set.rows.push_back({Value(static_cast<int64_t>(i)), Value(std::string(100, 'x'))});
    }
    // A string in a BIGINT column: the binary protocol cannot encode it.
    set.rows.push_back({Value(std::string("not a number")), Value(std::string("y"))});
    return set;
  }
  if (starts_with(key, "SELECT ROWS(") && key.back() == ')') {
    uint64_t count = std::stoull(key.substr(12, key.size() - 13));
    ResultSet set;
    set.columns = {column("i", FieldType::kLongLong), column("s", FieldType::kVarString)};
    for (uint64_t i = 0; i < count; ++i) {
      set.rows.push_back({Value(static_cast<int64_t>(i)), Value("row " + std::to_string(i))});
    }
    return set;
  }
  if (starts_with(key, "SELECT ")) {
    std::optional<ResultSet> row = literal_row(text.substr(7));
    if (row) return *row;
    return syntax_error(text.substr(7));
  }
  if (starts_with(key, "INSERT")) return OkResult{1, 42, 0, ""};
  if (starts_with(key, "UPDATE"))
    return OkResult{3, 0, 1, "Rows matched: 3  Changed: 3  Warnings: 1"};
  if (starts_with(key, "USE ")) {
    std::string database(trim(text.substr(4)));
    std::optional<SqlError> error = change_database(session, database);
    if (error) return *error;
    session.database = database;
    return OkResult{};
  }
  if (key == "SET AUTOCOMMIT=0" || key == "SET AUTOCOMMIT=1") {
    session.autocommit = key.back() == '1';
    return OkResult{};
  }
  if (key == "BEGIN" || key == "START TRANSACTION") {
    session.in_transaction = true;
    return OkResult{};
  }
  if (key == "COMMIT" || key == "ROLLBACK") {
    session.in_transaction = false;
    return OkResult{};
  }
  if (starts_with(key, "KILL ")) {
    uint32_t id = static_cast<uint32_t>(std::stoul(key.substr(5)));
    if (session.server != nullptr && session.server->kill_connection(id)) return OkResult{};
    return SqlError{1094, "HY000", "Unknown thread id: " + std::to_string(id)};
  }
  if (key == "THROW") throw std::runtime_error("echo handler exploded");
  if (key == "SLEEP") {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!session.killed->load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return SqlError{protocol::kErQueryInterrupted, "70100", "Query execution was interrupted"};
  }
  return syntax_error(text);
}

std::variant<PreparedStatementInfo, SqlError> EchoQueryHandler::prepare(SessionState& session,
                                                                        std::string_view sql) {
  size_t markers = count_markers(sql);
  if (markers > 65535)
    return SqlError{1390, "HY000", "Prepared statement contains too many placeholders"};
  PreparedStatementInfo info;
  info.param_count = static_cast<uint16_t>(markers);
  std::string key = upper(trim(sql));
  if (markers == 0) {
    StatementResult preview = run_one(session, sql);
    if (auto* error = std::get_if<SqlError>(&preview)) return *error;
    if (auto* set = std::get_if<ResultSet>(&preview)) info.columns = set->columns;
  } else if (starts_with(key, "SELECT")) {
    for (size_t i = 0; i < markers; ++i) {
      info.columns.push_back(column("p" + std::to_string(i), FieldType::kVarString));
    }
  } else if (!starts_with(key, "INSERT")) {
    return syntax_error(sql);
  }
  std::lock_guard lock(mutex_);
  info.handler_token = next_token_++;
  prepared_[info.handler_token] = Prepared{std::string(sql), info.param_count};
  return info;
}

StatementResult EchoQueryHandler::execute(SessionState& session, uint64_t handler_token,
                                          const std::vector<BoundParameter>& params) {
  Prepared prepared;
  {
    std::lock_guard lock(mutex_);
    auto it = prepared_.find(handler_token);
    if (it == prepared_.end()) throw std::logic_error("execute of an unknown statement token");
    prepared = it->second;
  }
  if (params.size() != prepared.param_count) throw std::logic_error("parameter count mismatch");
  if (prepared.param_count == 0) return run_one(session, prepared.sql);
  if (starts_with(upper(trim(prepared.sql)), "INSERT")) return OkResult{params.size(), 0, 0, ""};
  ResultSet set;
  std::vector<Value> row;
  for (size_t i = 0; i < params.size(); ++i) {
    FieldType type = params[i].type.type;
    ColumnDefinition41 c = column("p" + std::to_string(i), type,
                                  params[i].type.is_unsigned ? protocol::kUnsignedFlag : 0);
    if (protocol::is_string_encoded(type) && type != FieldType::kNewDecimal &&
        type != FieldType::kDecimal) {
      c.character_set = protocol::kCharsetBinary;
      c.flags |= protocol::kBinaryFlag;
    }
    set.columns.push_back(c);
    row.push_back(params[i].value);
  }
  set.rows.push_back(std::move(row));
  return set;
}

void EchoQueryHandler::close_statement(SessionState& /*session*/, uint64_t handler_token) {
  std::lock_guard lock(mutex_);
  prepared_.erase(handler_token);
}

std::optional<SqlError> EchoQueryHandler::change_database(SessionState& /*session*/,
                                                          std::string_view database) {
  if (database == "nosuchdb") {
    return SqlError{protocol::kErBadDb, "42000",
                    "Unknown database '" + std::string(database) + "'"};
  }
  return std::nullopt;
}

std::variant<std::vector<ColumnDefinition41>, SqlError> EchoQueryHandler::field_list(
    SessionState& session, std::string_view table, std::string_view /*wildcard*/) {
  if (table != "t1") {
    return SqlError{1146, "42S02",
                    "Table '" + session.database + "." + std::string(table) + "' doesn't exist"};
  }
  ColumnDefinition41 id =
      column("id", FieldType::kLongLong, protocol::kNotNullFlag | protocol::kPriKeyFlag);
  ColumnDefinition41 name = column("name", FieldType::kVarString);
  id.table = id.org_table = name.table = name.org_table = "t1";
  id.schema = name.schema = session.database;
  return std::vector<ColumnDefinition41>{id, name};
}

void EchoQueryHandler::on_disconnect(SessionState& /*session*/) {
  ++disconnects_;
}

size_t EchoQueryHandler::open_statements() const {
  std::lock_guard lock(mutex_);
  return prepared_.size();
}

}  // namespace duo::sql::server
