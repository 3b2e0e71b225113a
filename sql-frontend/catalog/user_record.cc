// Accounts and privileges, pure logic; see user_record.h.
#include "sql-frontend/catalog/user_record.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace duo::sql::catalog {

namespace {

constexpr std::string_view kGrantsMagic = "duo-grants 1";

// MySQL 8.0's static privileges in the order SHOW GRANTS lists them; bit i is entry i.
constexpr std::array<std::string_view, 30> kPrivilegeNames = {"SELECT",
                                                              "INSERT",
                                                              "UPDATE",
                                                              "DELETE",
                                                              "CREATE",
                                                              "DROP",
                                                              "RELOAD",
                                                              "SHUTDOWN",
                                                              "PROCESS",
                                                              "FILE",
                                                              "REFERENCES",
                                                              "INDEX",
                                                              "ALTER",
                                                              "SHOW DATABASES",
                                                              "SUPER",
                                                              "CREATE TEMPORARY TABLES",
                                                              "LOCK TABLES",
                                                              "EXECUTE",
                                                              "REPLICATION SLAVE",
                                                              "REPLICATION CLIENT",
                                                              "CREATE VIEW",
                                                              "SHOW VIEW",
                                                              "CREATE ROUTINE",
                                                              "ALTER ROUTINE",
                                                              "CREATE USER",
                                                              "EVENT",
                                                              "TRIGGER",
                                                              "CREATE TABLESPACE",
                                                              "CREATE ROLE",
                                                              "DROP ROLE"};

PrivilegeSet bits_of(std::initializer_list<std::string_view> names) {
  PrivilegeSet set = 0;
  for (std::string_view name : names) set |= privilege_bit(name);
  return set;
}

std::string escape_field(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '%')
      out += "%25";
    else if (c == '\t')
      out += "%09";
    else if (c == '\n')
      out += "%0A";
    else
      out += c;
  }
  return out;
}

std::optional<std::string> unescape_field(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const std::string_view code = text.substr(i + 1, 2);
    if (code == "25")
      out += '%';
    else if (code == "09")
      out += '\t';
    else if (code == "0A")
      out += '\n';
    else
      return std::nullopt;
    i += 2;
  }
  return out;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// LIKE with '%' and '_' and no escape character, case-insensitive (host names are).
bool wildcard_match(std::string_view pattern, std::string_view text) {
  if (pattern.empty()) return text.empty();
  if (pattern[0] == '%') {
    for (size_t skip = 0; skip <= text.size(); ++skip) {
      if (wildcard_match(pattern.substr(1), text.substr(skip))) return true;
    }
    return false;
  }
  if (text.empty()) return false;
  const auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  if (pattern[0] != '_' && lower(pattern[0]) != lower(text[0])) return false;
  return wildcard_match(pattern.substr(1), text.substr(1));
}

bool is_loopback(std::string_view host) {
  return host == "127.0.0.1" || host == "::1" || host == "localhost" || host == "::ffff:127.0.0.1";
}

// MySQL's account order: a higher rank is tried first. Hosts without wildcards first,
// then patterns by the length of their literal prefix, '%' last.
size_t host_rank(std::string_view pattern) {
  const size_t wildcard = pattern.find_first_of("%_");
  if (wildcard == std::string_view::npos) return SIZE_MAX;
  return wildcard;
}

std::string quoted_account(const UserRecord& record) {
  return "`" + record.user + "`@`" + record.host + "`";
}

std::string privilege_list(PrivilegeSet privileges, PrivilegeLevel level) {
  if (level != PrivilegeLevel::kGlobal && privileges == all_privileges(level)) {
    return "ALL PRIVILEGES";
  }
  std::string out;
  for (size_t i = 0; i < kPrivilegeNames.size(); ++i) {
    if ((privileges & (PrivilegeSet{1} << i)) == 0) continue;
    if (!out.empty()) out += ", ";
    out += kPrivilegeNames[i];
  }
  return out.empty() ? "USAGE" : out;
}

}  // namespace

PrivilegeSet privilege_bit(std::string_view name) {
  for (size_t i = 0; i < kPrivilegeNames.size(); ++i) {
    if (kPrivilegeNames[i] == name) return PrivilegeSet{1} << i;
  }
  return 0;
}

std::string privilege_name(PrivilegeSet bit) {
  for (size_t i = 0; i < kPrivilegeNames.size(); ++i) {
    if (bit == (PrivilegeSet{1} << i)) return std::string(kPrivilegeNames[i]);
  }
  return "";
}

PrivilegeSet all_privileges(PrivilegeLevel level) {
  switch (level) {
    case PrivilegeLevel::kGlobal:
      return (PrivilegeSet{1} << kPrivilegeNames.size()) - 1;
    case PrivilegeLevel::kDatabase:
      return bits_of({"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "REFERENCES",
                      "INDEX", "ALTER", "CREATE TEMPORARY TABLES", "LOCK TABLES", "EXECUTE",
                      "CREATE VIEW", "SHOW VIEW", "CREATE ROUTINE", "ALTER ROUTINE", "EVENT",
                      "TRIGGER"});
    case PrivilegeLevel::kTable:
      return bits_of({"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "REFERENCES",
                      "INDEX", "ALTER", "CREATE VIEW", "SHOW VIEW", "TRIGGER"});
  }
  return 0;
}

PrivilegeSet UserRecord::privileges_on(std::string_view db, std::string_view table) const {
  PrivilegeSet set = 0;
  for (const Grant& grant : grants) {
    if (grant.db == "*" || (grant.db == db && (grant.table == "*" || grant.table == table))) {
      set |= grant.privileges;
    }
  }
  return set;
}

bool UserRecord::has_any_privilege_in(std::string_view db) const {
  for (const Grant& grant : grants) {
    if (grant.privileges == 0 && !grant.grant_option) continue;
    if (grant.db == "*" || grant.db == db) return true;
  }
  return false;
}

bool UserRecord::has_global(PrivilegeSet privileges) const {
  return (privileges_on("", "") & privileges) == privileges;
}

void UserRecord::grant(const std::string& db, const std::string& table, PrivilegeSet privileges,
                       bool with_grant_option) {
  for (Grant& g : grants) {
    if (g.db == db && g.table == table) {
      g.privileges |= privileges;
      g.grant_option |= with_grant_option;
      return;
    }
  }
  grants.push_back(Grant{db, table, privileges, with_grant_option});
  // Global first, then databases, then tables, each by name: SHOW GRANTS's order.
  std::stable_sort(grants.begin(), grants.end(), [](const Grant& a, const Grant& b) {
    if (a.level() != b.level()) return a.level() < b.level();
    if (a.db != b.db) return a.db < b.db;
    return a.table < b.table;
  });
}

void UserRecord::revoke(const std::string& db, const std::string& table, PrivilegeSet privileges,
                        bool grant_option) {
  for (auto it = grants.begin(); it != grants.end(); ++it) {
    if (it->db != db || it->table != table) continue;
    it->privileges &= ~privileges;
    if (grant_option) it->grant_option = false;
    if (it->privileges == 0 && !it->grant_option && it->level() != PrivilegeLevel::kGlobal) {
      grants.erase(it);
    }
    return;
  }
}

std::string account_text(std::string_view user, std::string_view host) {
  return "'" + std::string(user) + "'@'" + std::string(host) + "'";
}

std::string encode_grants(const std::vector<Grant>& grants) {
  std::string out(kGrantsMagic);
  out += '\n';
  for (const Grant& g : grants) {
    out += "grant\t" + escape_field(g.db) + "\t" + escape_field(g.table) + "\t" +
           std::to_string(g.privileges) + "\t" + (g.grant_option ? "1" : "0") + "\n";
  }
  return out;
}

Result<std::vector<Grant>> decode_grants(std::string_view text) {
  // Made only when returned: an unchecked Status aborts debug builds.
  const auto corrupt = [] {
    return Status(ErrorCode::kCorruption, "malformed grants of an account");
  };
  std::vector<std::string_view> lines = split(text, '\n');
  if (lines.empty() || lines.front() != kGrantsMagic) return corrupt();
  std::vector<Grant> grants;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    std::vector<std::string_view> fields = split(lines[i], '\t');
    if (fields.size() != 5 || fields[0] != "grant") return corrupt();
    std::optional<std::string> db = unescape_field(fields[1]);
    std::optional<std::string> table = unescape_field(fields[2]);
    if (!db || !table || fields[3].empty() || (fields[4] != "0" && fields[4] != "1")) {
      return corrupt();
    }
    Grant grant;
    grant.db = *db;
    grant.table = *table;
    for (char c : fields[3]) {
      if (c < '0' || c > '9') return corrupt();
      grant.privileges = grant.privileges * 10 + static_cast<PrivilegeSet>(c - '0');
    }
    grant.grant_option = fields[4] == "1";
    grants.push_back(std::move(grant));
  }
  return grants;
}

bool host_matches(std::string_view pattern, std::string_view client_host) {
  if (pattern == "localhost" && is_loopback(client_host)) return true;
  return wildcard_match(pattern, client_host);
}

const UserRecord* match_account(const std::vector<UserRecord>& records, std::string_view user,
                                std::string_view client_host) {
  const UserRecord* best = nullptr;
  for (const UserRecord& record : records) {
    if (record.user != user || !host_matches(record.host, client_host)) continue;
    if (best == nullptr || host_rank(record.host) > host_rank(best->host)) best = &record;
  }
  return best;
}

std::vector<std::string> show_grants_lines(const UserRecord& record) {
  std::vector<std::string> lines;
  const std::string to = " TO " + quoted_account(record);
  bool global_shown = false;
  for (const Grant& g : record.grants) {
    const PrivilegeLevel level = g.level();
    std::string on;
    if (level == PrivilegeLevel::kGlobal) {
      on = "*.*";
      global_shown = true;
    } else if (level == PrivilegeLevel::kDatabase) {
      on = "`" + g.db + "`.*";
    } else {
      on = "`" + g.db + "`.`" + g.table + "`";
    }
    if (level != PrivilegeLevel::kGlobal && g.privileges == 0 && !g.grant_option) continue;
    lines.push_back("GRANT " + privilege_list(g.privileges, level) + " ON " + on + to +
                    (g.grant_option ? " WITH GRANT OPTION" : ""));
  }
  if (!global_shown) lines.insert(lines.begin(), "GRANT USAGE ON *.*" + to);
  return lines;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int high = digit(hex[i]);
    const int low = digit(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
  }
  return out;
}

}  // namespace duo::sql::catalog
