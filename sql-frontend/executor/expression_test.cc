// Tests of sqld's expression evaluation and value conversions.
#include "sql-frontend/executor/expression.h"

#include <gtest/gtest.h>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/parser/parser.h"

namespace duo::sql::executor {
namespace {

// Evaluates the single select item of "SELECT <expr>".
SqlValue eval(const std::string& expr, const std::vector<SqlValue>& params = {}) {
  static std::vector<ParsedStatement> keep;  // ASTs outlive the views of their text
  ParsedStatement parsed = parse_statement("SELECT " + expr);
  EXPECT_TRUE(parsed.ok()) << expr;
  server::SessionState session;
  session.database = "db1";
  session.user = "root";
  EvalContext context;
  context.params = &params;
  context.session = &session;
  return evaluate(*parsed.statement->as<SelectStatement>().query->select->items[0].expr, context);
}

std::string text(const std::string& expr) {
  return eval(expr).to_text();
}

TEST(ExpressionTest, ArithmeticFollowsMysqlTypes) {
  EXPECT_EQ(text("1 + 2 * 3"), "7");
  EXPECT_EQ(text("7 DIV 2"), "3");
  EXPECT_EQ(text("7 % 3"), "1");
  EXPECT_EQ(text("1 / 0"), "NULL");
  EXPECT_EQ(text("1.5 + 1"), "2.5");
  EXPECT_EQ(text("-(3)"), "-3");
  EXPECT_EQ(text("NULL + 1"), "NULL");
  try {
    eval("9223372036854775807 + 1");
    ADD_FAILURE() << "overflow not detected";
  } catch (const SqlException& e) {
    EXPECT_EQ(e.code(), 1690);
  }
}

TEST(ExpressionTest, ThreeValuedLogicAndComparisons) {
  EXPECT_EQ(text("NULL AND 0"), "0");
  EXPECT_EQ(text("NULL OR 1"), "1");
  EXPECT_EQ(text("NULL AND 1"), "NULL");
  EXPECT_EQ(text("NOT NULL"), "NULL");
  EXPECT_EQ(text("NULL <=> NULL"), "1");
  EXPECT_EQ(text("NULL = NULL"), "NULL");
  EXPECT_EQ(text("'abc' = 'ABC '"), "1");  // case-insensitive, PAD SPACE
  EXPECT_EQ(text("'10' = 10"), "1");
  EXPECT_EQ(text("2 BETWEEN 1 AND 3"), "1");
  EXPECT_EQ(text("2 IN (1, NULL)"), "NULL");
  EXPECT_EQ(text("2 NOT IN (1, 3)"), "1");
  EXPECT_EQ(text("'hello' LIKE 'h%x_'"), "0");
  EXPECT_EQ(text("'hello' LIKE 'H%L_O'"), "1");
  EXPECT_EQ(text("'a%b' LIKE 'a\\%b'"), "1");
  EXPECT_EQ(text("NULL IS NULL"), "1");
}

TEST(ExpressionTest, FunctionsVariablesAndParameters) {
  EXPECT_EQ(text("DATABASE()"), "db1");
  EXPECT_EQ(text("@@version_comment"), "DuoDB Server (GPL)");
  EXPECT_EQ(text("@@session.autocommit"), "1");
  EXPECT_EQ(text("@@max_allowed_packet"), "67108864");
  EXPECT_EQ(text("CONCAT('a', 1, 'b')"), "a1b");
  EXPECT_EQ(text("IFNULL(NULL, 'x')"), "x");
  EXPECT_EQ(eval("? + 1", {SqlValue::of_int(41)}).to_text(), "42");
  try {
    eval("@@no_such_variable");
    ADD_FAILURE();
  } catch (const SqlException& e) {
    EXPECT_EQ(e.code(), 1193);
  }
  try {
    eval("some_column");
    ADD_FAILURE();
  } catch (const SqlException& e) {
    EXPECT_EQ(e.code(), 1054);
  }
}

catalog::SqlColumn column(const std::string& type, bool nullable = true) {
  catalog::SqlColumn c;
  c.name = "c";
  c.declared_type = type;
  c.nullable = nullable;
  catalog::derive_storage(&c);
  return c;
}

uint16_t storage_error(const catalog::SqlColumn& c, const SqlValue& v) {
  try {
    to_storage(c, v, 1);
  } catch (const SqlException& e) {
    return e.code();
  }
  return 0;
}

TEST(SqlValueTest, StorageConversionsAreStrict) {
  EXPECT_EQ(storage_error(column("tinyint"), SqlValue::of_int(300)), 1264);
  EXPECT_EQ(storage_error(column("int unsigned"), SqlValue::of_int(-1)), 1264);
  EXPECT_EQ(storage_error(column("int"), SqlValue::of_string("abc")), 1366);
  EXPECT_EQ(storage_error(column("varchar(3)"), SqlValue::of_string("abcd")), 1406);
  EXPECT_EQ(storage_error(column("varchar(3)"), SqlValue::of_string("\xc3\xa9\xc3\xa9\xc3\xa9")),
            0);
  EXPECT_EQ(storage_error(column("date"), SqlValue::of_string("2024-02-30")), 1292);
  for (const auto& [type, value] : std::vector<std::pair<std::string, SqlValue>>{
           {"int", SqlValue::of_int(-7)},
           {"bigint unsigned", SqlValue::of_uint(UINT64_MAX)},
           {"decimal(10,2)", SqlValue::of_decimal("12.50")},
           {"varchar(10)", SqlValue::of_string("hi")},
           {"date", SqlValue::of_string("2024-02-29")},
           {"double", SqlValue::of_double(0.5)}}) {
    const catalog::SqlColumn c = column(type);
    SqlValue back = from_storage(c, to_storage(c, value, 1));
    EXPECT_EQ(back.to_text(), value.to_text()) << type;
  }
}

TEST(SqlValueTest, ProtocolValuesAreTyped) {
  EXPECT_TRUE(std::holds_alternative<int64_t>(
      to_protocol(SqlValue::of_int(5), protocol::FieldType::kLong)));
  protocol::Value date = to_protocol(SqlValue::of_string("2024-02-29"), protocol::FieldType::kDate);
  ASSERT_TRUE(std::holds_alternative<protocol::MysqlTime>(date));
  EXPECT_EQ(std::get<protocol::MysqlTime>(date).day, 29);
  EXPECT_TRUE(protocol::is_null(to_protocol(SqlValue::null(), protocol::FieldType::kLong)));
}

}  // namespace
}  // namespace duo::sql::executor
