// Tests of sqld's expression evaluation and value conversions.
#include "sql-frontend/executor/expression.h"

#include <gtest/gtest.h>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/expression_walk.h"
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

// Two tables in scope, as a join of t1 (a, b) and t2 (b, c) sees them.
class ScopesTest : public ::testing::Test {
 protected:
  ScopesTest() {
    for (const char* name : {"a", "b"}) t1_.columns.push_back(named(name));
    for (const char* name : {"b", "c"}) t2_.columns.push_back(named(name));
    t1_.name = "t1";
    t2_.name = "t2";
    scopes_.push_back(Scope{&t1_, "t1", "db1", &row1_, {}});
    scopes_.push_back(Scope{&t2_, "x", "db1", &row2_, {}});
    context_.scopes = &scopes_;
    context_.session = &session_;
  }
  static catalog::SqlColumn named(const char* name) {
    catalog::SqlColumn c;
    c.name = name;
    return c;
  }
  SqlValue eval(const std::string& expr, const EvalContext& context) {
    parsed_.push_back(parse_statement("SELECT " + expr));
    EXPECT_TRUE(parsed_.back().ok()) << expr;
    return evaluate(*parsed_.back().statement->as<SelectStatement>().query->select->items[0].expr,
                    context);
  }
  uint16_t error(const std::string& expr, const EvalContext& context, std::string* message) {
    try {
      eval(expr, context);
    } catch (const SqlException& e) {
      *message = e.what();
      return e.code();
    }
    return 0;
  }

  catalog::SqlTable t1_, t2_;
  std::vector<SqlValue> row1_{SqlValue::of_int(1), SqlValue::of_int(2)};
  std::vector<SqlValue> row2_{SqlValue::of_int(20), SqlValue::of_int(30)};
  std::vector<Scope> scopes_;
  server::SessionState session_;
  EvalContext context_;
  std::vector<ParsedStatement> parsed_;
};

TEST_F(ScopesTest, NamesResolveAcrossScopesByQualifier) {
  EXPECT_EQ(eval("a + c", context_).to_text(), "31");
  EXPECT_EQ(eval("t1.b * 100 + x.b", context_).to_text(), "220");
  EXPECT_EQ(eval("db1.x.c", context_).to_text(), "30");
  std::string message;
  EXPECT_EQ(error("b", context_, &message), 1052);
  EXPECT_EQ(message, "Column 'b' in field list is ambiguous");
  EXPECT_EQ(error("t2.c", context_, &message), 1054);  // the alias hides the table name
  EXPECT_EQ(message, "Unknown column 't2.c' in 'field list'");
  EvalContext where = context_;
  where.clause = "where clause";
  EXPECT_EQ(error("db2.x.c", where, &message), 1054);
  EXPECT_EQ(message, "Unknown column 'db2.x.c' in 'where clause'");
}

TEST_F(ScopesTest, UsingColumnsAndNullExtendedRows) {
  scopes_[1].using_hidden.push_back("b");  // t1 JOIN t2 USING (b): `b` is t1's
  EXPECT_EQ(eval("b", context_).to_text(), "2");
  EXPECT_EQ(eval("x.b", context_).to_text(), "20");
  scopes_[1].row = nullptr;  // LEFT JOIN found no row
  EXPECT_TRUE(eval("c", context_).is_null());
  EXPECT_EQ(eval("a", context_).to_text(), "1");
}

TEST_F(ScopesTest, OuterScopesServeCorrelatedReferences) {
  std::vector<Scope> inner{Scope{&t2_, "t2", "db1", &row2_, {}}};
  bool correlated = false;
  EvalContext sub;
  sub.scopes = &inner;
  sub.outer = &context_;
  sub.outer_referenced = &correlated;
  EXPECT_EQ(eval("c", sub).to_text(), "30");  // its own scope
  EXPECT_FALSE(correlated);
  EXPECT_EQ(eval("b", sub).to_text(), "20");  // its own scope shadows the outer ones
  EXPECT_FALSE(correlated);
  EXPECT_EQ(eval("t1.a + c", sub).to_text(), "31");
  EXPECT_TRUE(correlated);
  const ColumnRef ref = resolve(parse_statement("SELECT t1.a")
                                    .statement->as<SelectStatement>()
                                    .query->select->items[0]
                                    .expr->as<ColumnExpr>(),
                                sub);
  EXPECT_EQ(ref.depth, 1u);
  EXPECT_EQ(ref.scope, 0u);
}

// Serves every subquery from a fixed set of rows.
class FixedRows final : public SubqueryRunner {
 public:
  explicit FixedRows(std::vector<std::vector<SqlValue>> rows) : rows_(std::move(rows)) {}
  const std::vector<std::vector<SqlValue>>& rows(const QueryExpr&, const EvalContext&,
                                                 size_t rows_max) override {
    last_rows_max = rows_max;
    return rows_;
  }
  size_t last_rows_max = 0;

 private:
  std::vector<std::vector<SqlValue>> rows_;
};

TEST_F(ScopesTest, SubqueriesFollowMysqlSemantics) {
  FixedRows values({{SqlValue::of_int(1)}, {SqlValue::null()}});
  context_.subqueries = &values;
  EXPECT_EQ(eval("a IN (SELECT 1)", context_).to_text(), "1");
  EXPECT_EQ(eval("c IN (SELECT 1)", context_).to_text(), "NULL");  // NULL in the set
  EXPECT_EQ(eval("c NOT IN (SELECT 1)", context_).to_text(), "NULL");
  EXPECT_EQ(eval("EXISTS (SELECT 1)", context_).to_text(), "1");
  EXPECT_EQ(values.last_rows_max, 1u);
  std::string message;
  EXPECT_EQ(error("(SELECT 1) + 1", context_, &message), 1242);
  EXPECT_EQ(message, "Subquery returns more than 1 row");

  FixedRows none({});
  context_.subqueries = &none;
  EXPECT_EQ(eval("NULL IN (SELECT 1)", context_).to_text(), "0");  // empty set: FALSE
  EXPECT_EQ(eval("NOT EXISTS (SELECT 1)", context_).to_text(), "1");
  EXPECT_TRUE(eval("(SELECT 1)", context_).is_null());

  context_.subqueries = nullptr;
  EXPECT_EQ(error("EXISTS (SELECT 1)", context_, &message), 1235);
}

TEST_F(ScopesTest, AggregatesReadTheGroupsValues) {
  parsed_.push_back(parse_statement("SELECT COUNT(*) + 1"));
  const Expr& sum = *parsed_.back().statement->as<SelectStatement>().query->select->items[0].expr;
  std::string message;
  EXPECT_EQ(error("COUNT(*)", context_, &message), 1111);
  std::vector<AggregateValue> values{
      AggregateValue{sum.as<BinaryExpr>().left.get(), SqlValue::of_int(41)}};
  EvalContext group = context_;
  group.aggregates = &values;
  EXPECT_EQ(evaluate(sum, group).to_text(), "42");
}

TEST(ExpressionWalkTest, FindsAggregatesSubqueriesAndColumns) {
  ParsedStatement parsed = parse_statement(
      "SELECT a + SUM(b * c) - COUNT(*), CASE WHEN d THEN e END, x IN (SELECT y FROM t), "
      "COALESCE(f, MAX(g))");
  ASSERT_TRUE(parsed.ok());
  const auto& items = parsed.statement->as<SelectStatement>().query->select->items;
  std::vector<const Expr*> aggregates;
  collect_aggregates(*items[0].expr, &aggregates);
  ASSERT_EQ(aggregates.size(), 2u);
  EXPECT_EQ(aggregates[0]->as<FunctionExpr>().name, "SUM");
  EXPECT_EQ(aggregates[1]->as<FunctionExpr>().name, "COUNT");
  EXPECT_TRUE(contains_aggregate(*items[3].expr));
  EXPECT_FALSE(contains_aggregate(*items[1].expr));
  EXPECT_FALSE(contains_subquery(*items[0].expr));
  EXPECT_TRUE(contains_subquery(*items[2].expr));
  auto columns = [](const Expr& expr, bool skip_aggregates) {
    std::string names;
    for_each_column(expr, skip_aggregates, [&](const ColumnExpr& c) { names += c.column.name; });
    return names;
  };
  EXPECT_EQ(columns(*items[0].expr, false), "abc");
  EXPECT_EQ(columns(*items[0].expr, true), "a");
  EXPECT_EQ(columns(*items[1].expr, false), "de");
  EXPECT_EQ(columns(*items[2].expr, false), "x");  // not the subquery's own columns
  EXPECT_EQ(columns(*items[3].expr, true), "f");
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

// A CHAR value comes back without its pad spaces, as storage::format_value gives it,
// whatever the padding (sqld strips it eight bytes at a time).
TEST(SqlValueTest, CharValuesLoseExactlyTheirPadding) {
  const catalog::SqlColumn c = column("char(30)");
  for (const std::string text : {"", "a", "ab cd", " lead", "x       y", "12345678", "é ü"}) {
    const std::string stored = to_storage(c, SqlValue::of_string(text), 1);
    EXPECT_EQ(from_storage(c, stored).s, storage::format_value(c.storage, stored)) << text;
    EXPECT_EQ(from_storage(c, stored).s, text) << text;
    for (size_t pad = 0; pad <= 17; ++pad) {
      const std::string padded = text + std::string(pad, ' ');
      EXPECT_EQ(from_storage(c, padded).s, storage::format_value(c.storage, padded))
          << text << " + " << pad;
    }
  }
  EXPECT_EQ(from_storage(c, std::string(40, ' ')).s, "");
}

// YEAR as MySQL's Field_year::store: numbers 0..69 / 70..99 map to 2000s / 1900s but 0
// stays 0000; strings of 1..3 digits map '0' to 2000; 4 digits are taken as they are.
TEST(SqlValueTest, YearValuesMapAsMysqlStoresThem) {
  const catalog::SqlColumn c = column("year");
  ASSERT_TRUE(c.is_year);
  const auto stored = [&](const SqlValue& v) {
    return from_storage(c, to_storage(c, v, 1)).to_text();
  };
  EXPECT_EQ(stored(SqlValue::of_int(0)), "0");
  EXPECT_EQ(stored(SqlValue::of_int(1)), "2001");
  EXPECT_EQ(stored(SqlValue::of_int(69)), "2069");
  EXPECT_EQ(stored(SqlValue::of_int(70)), "1970");
  EXPECT_EQ(stored(SqlValue::of_uint(99)), "1999");
  EXPECT_EQ(stored(SqlValue::of_int(1901)), "1901");
  EXPECT_EQ(stored(SqlValue::of_int(2155)), "2155");
  EXPECT_EQ(stored(SqlValue::of_string("0")), "2000");
  EXPECT_EQ(stored(SqlValue::of_string("00")), "2000");
  EXPECT_EQ(stored(SqlValue::of_string("0000")), "0");
  EXPECT_EQ(stored(SqlValue::of_string("02000")), "2000");
  EXPECT_EQ(stored(SqlValue::of_string("7")), "2007");
  EXPECT_EQ(stored(SqlValue::of_double(1999.6)), "2000");
  EXPECT_EQ(stored(SqlValue::of_temporal("2031-05-06", SqlValue::TemporalType::kDate)), "2031");
  for (const SqlValue& bad :
       {SqlValue::of_int(-1), SqlValue::of_int(100), SqlValue::of_int(1900), SqlValue::of_int(2156),
        SqlValue::of_string("3000"), SqlValue::of_uint(UINT64_MAX)}) {
    EXPECT_EQ(storage_error(c, bad), 1264) << bad.to_text();
  }
  EXPECT_EQ(storage_error(c, SqlValue::of_string("abc")), 1366);
  EXPECT_EQ(storage_error(c, SqlValue::of_string("12x")), 1265);
}

// BIT(M): numbers are their bits (negative ones their 64-bit two's complement), strings
// their big-endian bytes; more than M significant bits is 1406.
TEST(SqlValueTest, BitValuesKeepTheirBitsAndRefuseMore) {
  const catalog::SqlColumn b5 = column("bit(5)");
  ASSERT_EQ(b5.bit_width, 5);
  const auto stored = [](const catalog::SqlColumn& c, const SqlValue& v) {
    return from_storage(c, to_storage(c, v, 1)).to_text();
  };
  EXPECT_EQ(stored(b5, SqlValue::of_int(31)), "31");
  EXPECT_EQ(stored(b5, SqlValue::of_string(std::string("\x00\x05", 2))), "5");
  EXPECT_EQ(stored(b5, SqlValue::of_double(4.6)), "5");
  EXPECT_EQ(storage_error(b5, SqlValue::of_int(32)), 1406);
  EXPECT_EQ(storage_error(b5, SqlValue::of_int(-1)), 1406);
  EXPECT_EQ(storage_error(b5, SqlValue::of_string("a")), 1406) << "0x61 needs 7 bits";
  const catalog::SqlColumn b64 = column("bit(64)");
  EXPECT_EQ(stored(b64, SqlValue::of_int(-1)), "18446744073709551615");
  EXPECT_EQ(stored(b64, SqlValue::of_string("abcdefgh")), "7017280452245743464");
  EXPECT_EQ(storage_error(b64, SqlValue::of_string("abcdefghi")), 1406);
  EXPECT_EQ(stored(column("bit(16)"), SqlValue::of_string("a")), "97");

  EXPECT_EQ(bit_bytes(5, 5), std::string("\x05", 1));
  EXPECT_EQ(bit_bytes(0x0A05, 12), std::string("\x0A\x05", 2));
  EXPECT_EQ(bit_bytes(1, 9), std::string("\x00\x01", 2));
  EXPECT_EQ(bit_bytes(UINT64_MAX, 64), std::string(8, '\xFF'));
  protocol::Value cell = to_protocol(SqlValue::of_uint(1), protocol::FieldType::kBit, 16);
  ASSERT_TRUE(std::holds_alternative<std::string>(cell));
  EXPECT_EQ(std::get<std::string>(cell), std::string("\x00\x01", 2));
}

// A constant compared with a YEAR column is read as a YEAR (MySQL converts it as it would
// store it), in sqld's own evaluation as in key lookups.
TEST(ExpressionTest, ConstantsComparedWithYearColumnsAreYears) {
  catalog::SqlTable table;
  table.name = "t";
  table.columns.push_back(column("year"));
  table.columns.push_back(column("int"));
  table.columns[1].name = "n";
  const std::vector<SqlValue> row{SqlValue::of_uint(2069), SqlValue::of_int(69)};
  EvalContext context;
  context.table = &table;
  context.row = &row;
  std::vector<ParsedStatement> parsed;
  const auto truth_of = [&](const std::string& condition) {
    parsed.push_back(parse_statement("SELECT 1 FROM t WHERE " + condition));
    EXPECT_TRUE(parsed.back().ok()) << condition;
    return evaluate(*parsed.back().statement->as<SelectStatement>().query->select->where, context)
        .to_text();
  };
  EXPECT_EQ(truth_of("c = 69"), "1");
  EXPECT_EQ(truth_of("69 = c"), "1");
  EXPECT_EQ(truth_of("c = '69'"), "1");
  EXPECT_EQ(truth_of("c IN (1, 69)"), "1");
  EXPECT_EQ(truth_of("c BETWEEN 50 AND 70"), "0") << "2050 .. 1970";
  EXPECT_EQ(truth_of("c > 0"), "1");
  EXPECT_EQ(truth_of("c + 0 = 69"), "0") << "an expression is a number, not a YEAR";
  EXPECT_EQ(truth_of("n = 69"), "1") << "other columns compare as they are";
  EXPECT_EQ(evaluate_for_column(*parse_statement("SELECT 5")
                                     .statement->as<SelectStatement>()
                                     .query->select->items[0]
                                     .expr,
                                context, table.columns[0])
                .to_text(),
            "2005");
}

TEST(ExpressionTest, UserVariableAssignmentGivesItsValue) {
  EXPECT_EQ(text("@a := 1 + 2"), "3") << "the right side is a whole expression";
  EXPECT_EQ(text("(@a := 5) * 2"), "10");
  EXPECT_EQ(text("@a := NULL"), "NULL");
  ParsedStatement parsed = parse_statement("SELECT 1 FROM t WHERE (@n := @n + 1) > 0 AND a = 1");
  ASSERT_TRUE(parsed.ok());
  std::vector<const Expr*> conjuncts;
  split_conjuncts(parsed.statement->as<SelectStatement>().query->select->where.get(), &conjuncts);
  ASSERT_EQ(conjuncts.size(), 2u);
  EXPECT_TRUE(contains_assignment(*conjuncts[0]));
  EXPECT_FALSE(contains_assignment(*conjuncts[1]));
  EXPECT_FALSE(is_constant(*conjuncts[0])) << "never folded: it runs once per row";
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
