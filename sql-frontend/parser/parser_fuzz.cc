// Seeded fuzz test: random token sequences and mutated valid statements. The parser
// must never crash (ASan build included) and must always return either a statement or
// an error with code 1064/1065 and a well-formed message; a statement that parses must
// print to a form that parses to the same tree. Deterministic: fixed seeds, bounded
// iteration counts (< 2 s in a Release build).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ndb-kernel/common/random.h"
#include "sql-frontend/parser/ast_printer.h"
#include "sql-frontend/parser/parser.h"

namespace duo::sql {
namespace {

const std::vector<std::string> kSeeds = {
    "SELECT c FROM sbtest1 WHERE id = ?",
    "SELECT a, COUNT(*) FROM t JOIN u ON t.x = u.x WHERE a IN (1, 2) GROUP BY a HAVING COUNT(*) > "
    "1 "
    "ORDER BY a DESC LIMIT 5, 10 FOR UPDATE",
    "INSERT INTO t (a, b) VALUES (1, 'x'), (2, NULL) ON DUPLICATE KEY UPDATE b = VALUES(b)",
    "UPDATE t SET k = k + 1 WHERE id BETWEEN 1 AND 10 ORDER BY id LIMIT 3",
    "DELETE FROM t WHERE NOT (a IS NULL OR b LIKE 'x%' ESCAPE '!')",
    "CREATE TABLE t (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, c VARCHAR(10) DEFAULT '', "
    "KEY k (c)) ENGINE=NDB COMMENT='NDB_TABLE=READ_BACKUP=1'",
    "ALTER TABLE t ADD COLUMN x INT AFTER c, DROP INDEX k",
    "SELECT CASE WHEN a > 0 THEN CAST(a AS CHAR(3)) ELSE CONVERT(b USING utf8mb4) END, "
    "d + INTERVAL 1 DAY, @x, @@session.sql_mode FROM (SELECT 1 AS a) AS d",
    "SET NAMES utf8mb4, @a := 1, GLOBAL x = ON",
    "SHOW FULL COLUMNS FROM t FROM db LIKE 'a%'",
    "GRANT SELECT, INSERT ON db.* TO 'u'@'%' WITH GRANT OPTION",
    "SELECT a FROM t UNION ALL (SELECT b FROM u) ORDER BY 1",
};

const std::vector<std::string> kFragments = {
    "SELECT", "FROM",      "WHERE",   "(",       ")",      ",",        ";",      "?",
    "1",      "1.5",       "1e3",     "'s'",     "\"d\"",  "`q`",      "a",      "t.b",
    "*",      "+",         "-",       "=",       "<=>",    "IN",       "NOT",    "AND",
    "OR",     "BETWEEN",   "LIKE",    "IS",      "NULL",   "CASE",     "WHEN",   "THEN",
    "END",    "JOIN",      "ON",      "USING",   "LIMIT",  "ORDER",    "BY",     "GROUP",
    "HAVING", "INSERT",    "INTO",    "VALUES",  "UPDATE", "SET",      "DELETE", "CREATE",
    "TABLE",  "INT",       "VARCHAR", "PRIMARY", "KEY",    "INTERVAL", "DAY",    "@x",
    "@@y",    "/*",        "*/",      "--",      "#",      "/*!40101", "0x1",    "X'",
    "'",      "`",         "\\",      "UNION",   "ALL",    "CAST",     "AS",     "CHAR",
    "SHOW",   "DATABASES", "EXISTS",  "COLLATE", "\n",     "é",        "\xff",   "DEFAULT",
    "ESCAPE", "FOR"};

void check(const std::string& text) {
  ScriptParser script(text);
  int statements = 0;
  while (script.has_next() && statements < 64) {
    ParsedStatement s = script.next();
    ++statements;
    if (!s.ok()) {
      ASSERT_TRUE(s.error.has_value()) << text;
      ASSERT_TRUE(s.error->mysql_errno == kErrParse || s.error->mysql_errno == kErrEmptyQuery)
          << text;
      ASSERT_EQ(s.error->sqlstate, "42000");
      ASSERT_LE(s.error->offset, text.size());
      continue;
    }
    std::string printed = to_sql(*s.statement);
    ParsedStatement again = parse_statement(printed);
    ASSERT_TRUE(again.ok()) << "from: " << text << "\nprinted: " << printed << "\n"
                            << again.error->message;
    ASSERT_EQ(to_sql(*again.statement), printed) << "from: " << text;
  }
}

TEST(ParserFuzzTest, RandomTokenSequences) {
  SeededRandom rng(0x5eed0001);
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    const uint64_t n = rng.uniform_range(1, 24);
    for (uint64_t k = 0; k < n; ++k) {
      text += kFragments[rng.uniform(kFragments.size())];
      if (rng.bernoulli(0.8)) text += ' ';
    }
    check(text);
    if (HasFatalFailure()) return;
  }
}

TEST(ParserFuzzTest, MutatedValidStatements) {
  SeededRandom rng(0x5eed0002);
  for (int i = 0; i < 30000; ++i) {
    std::string text = kSeeds[rng.uniform(kSeeds.size())];
    const uint64_t mutations = rng.uniform_range(1, 4);
    for (uint64_t m = 0; m < mutations && !text.empty(); ++m) {
      const size_t at = rng.uniform(text.size());
      switch (rng.uniform(5)) {
        case 0:
          text.erase(at, rng.uniform_range(1, 8));
          break;  // delete a span
        case 1:
          text.insert(at, kFragments[rng.uniform(kFragments.size())] + " ");
          break;
        case 2:
          text[at] = static_cast<char>(rng.uniform(256));
          break;  // flip a byte
        case 3:
          text.resize(at);
          break;    // truncate
        default: {  // duplicate a span
          size_t len = rng.uniform_range(1, 16);
          text.insert(at, text.substr(at, len));
          break;
        }
      }
    }
    check(text);
    if (HasFatalFailure()) return;
  }
}

TEST(ParserFuzzTest, SeedsParse) {
  for (const std::string& s : kSeeds) {
    ParsedStatement p = parse_statement(s);
    EXPECT_TRUE(p.ok()) << s << "\n" << (p.error ? p.error->message : "");
  }
}

}  // namespace
}  // namespace duo::sql
