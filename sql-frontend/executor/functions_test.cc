// Tests of the built-in functions and special forms, evaluated without a cluster.
#include "sql-frontend/executor/functions.h"

#include <gtest/gtest.h>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/executor/function_family.h"
#include "sql-frontend/parser/parser.h"

namespace duo::sql::executor {
namespace {

// The text of the single select item of "SELECT <expr>".
std::string text(const std::string& expr) {
  ParsedStatement parsed = parse_statement("SELECT " + expr);
  EXPECT_TRUE(parsed.ok()) << expr;
  if (!parsed.ok()) return "<parse error>";
  server::SessionState session;
  session.database = "db1";
  session.user = "root";
  session.host = "localhost";
  EvalContext context;
  context.session = &session;
  return evaluate(*parsed.statement->as<SelectStatement>().query->select->items[0].expr, context)
      .to_text();
}

// The MySQL error number `expr` fails with (0 when it does not).
int error_of(const std::string& expr) {
  try {
    text(expr);
  } catch (const SqlException& e) {
    return e.code();
  }
  return 0;
}

TEST(FunctionsTest, ControlFlow) {
  EXPECT_EQ(text("IF(1 > 0, 'yes', 'no')"), "yes");
  EXPECT_EQ(text("IF(NULL, 1, 2)"), "2");
  EXPECT_EQ(text("IFNULL(NULL, 'x')"), "x");
  EXPECT_EQ(text("NULLIF(1, 1)"), "NULL");
  EXPECT_EQ(text("NULLIF(1, 2)"), "1");
  EXPECT_EQ(text("COALESCE(NULL, NULL, 3)"), "3");
  EXPECT_EQ(text("COALESCE(NULL)"), "NULL");
  EXPECT_EQ(text("GREATEST(1, 5, 3)"), "5");
  EXPECT_EQ(text("LEAST('b', 'a', 'c')"), "a");
  EXPECT_EQ(text("GREATEST(1, NULL)"), "NULL");
  EXPECT_EQ(text("CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' END"), "two");
  EXPECT_EQ(text("CASE NULL WHEN NULL THEN 'null' ELSE 'other' END"), "other");
  EXPECT_EQ(text("CASE WHEN 1 = 0 THEN 'a' WHEN 1 = 1 THEN 'b' END"), "b");
  EXPECT_EQ(text("CASE WHEN 0 THEN 1 END"), "NULL");
  EXPECT_EQ(text("INTERVAL(5, 1, 3, 7)"), "2");
  EXPECT_EQ(error_of("IFNULL(1)"), 1582);
  EXPECT_EQ(error_of("IF(1, 2)"), 1582);
}

TEST(FunctionsTest, Strings) {
  EXPECT_EQ(text("CONCAT('a', 1, 2.50)"), "a12.50");
  EXPECT_EQ(text("CONCAT('a', NULL)"), "NULL");
  EXPECT_EQ(text("CONCAT_WS(',', 'a', NULL, 'b')"), "a,b");
  EXPECT_EQ(text("LENGTH('h\xC3\xA9')"), "3");
  EXPECT_EQ(text("CHAR_LENGTH('h\xC3\xA9')"), "2");
  EXPECT_EQ(text("UPPER('abc')"), "ABC");
  EXPECT_EQ(text("SUBSTRING('Quadratically', 5)"), "ratically");
  EXPECT_EQ(text("SUBSTRING('Quadratically', 5, 6)"), "ratica");
  EXPECT_EQ(text("SUBSTRING('Sakila', -3)"), "ila");
  EXPECT_EQ(text("SUBSTRING('Sakila', -5, 3)"), "aki");
  EXPECT_EQ(text("SUBSTRING('Sakila' FROM 2 FOR 2)"), "ak");
  EXPECT_EQ(text("SUBSTRING('abc', 0)"), "");
  EXPECT_EQ(text("MID('abcdef', 2, 3)"), "bcd");
  EXPECT_EQ(text("MID('abcdef', 4)"), "def");
  EXPECT_EQ(text("SUBSTRING_INDEX('www.mysql.com', '.', 2)"), "www.mysql");
  EXPECT_EQ(text("SUBSTRING_INDEX('www.mysql.com', '.', -2)"), "mysql.com");
  EXPECT_EQ(text("LEFT('foobarbar', 5)"), "fooba");
  EXPECT_EQ(text("RIGHT('foobarbar', 4)"), "rbar");
  EXPECT_EQ(text("CONCAT('[', TRIM('  bar  '), ']')"), "[bar]");
  EXPECT_EQ(text("CONCAT('[', LTRIM('  bar  '), ']')"), "[bar  ]");
  EXPECT_EQ(text("CONCAT('[', RTRIM('  bar  '), ']')"), "[  bar]");
  EXPECT_EQ(text("REPLACE('www.mysql.com', 'w', 'Ww')"), "WwWwWw.mysql.com");
  EXPECT_EQ(text("REPEAT('ab', 3)"), "ababab");
  EXPECT_EQ(text("REVERSE('abc')"), "cba");
  EXPECT_EQ(text("LOCATE('bar', 'foobarbar')"), "4");
  EXPECT_EQ(text("LOCATE('bar', 'foobarbar', 5)"), "7");
  EXPECT_EQ(text("LOCATE('xbar', 'foobar')"), "0");
  EXPECT_EQ(text("INSTR('foobarbar', 'BAR')"), "4");
  EXPECT_EQ(text("POSITION('bar' IN 'foobarbar')"), "4");
  EXPECT_EQ(text("LPAD('hi', 4, '?!')"), "?!hi");
  EXPECT_EQ(text("LPAD('hi', 1, '?!')"), "h");
  EXPECT_EQ(text("RPAD('hi', 5, '?')"), "hi???");
  EXPECT_EQ(text("CONCAT('[', SPACE(3), ']')"), "[   ]");
  EXPECT_EQ(text("ASCII('dx')"), "100");
  EXPECT_EQ(text("ASCII('')"), "0");
  EXPECT_EQ(text("HEX('abc')"), "616263");
  EXPECT_EQ(text("HEX(255)"), "FF");
  EXPECT_EQ(text("HEX(-1)"), "FFFFFFFFFFFFFFFF");
  EXPECT_EQ(text("UNHEX('4D7953514C')"), "MySQL");
  EXPECT_EQ(text("UNHEX('GG')"), "NULL");
  EXPECT_EQ(text("MD5('testing')"), "ae2b1fca515949e5d54fb22b8ed95575");
  EXPECT_EQ(text("SHA1('abc')"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(text("SHA2('abc', 224)"), "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7");
  EXPECT_EQ(text("SHA2('abc', 1)"), "NULL");
  EXPECT_EQ(text("FORMAT(12332.123456, 4)"), "12,332.1235");
  EXPECT_EQ(text("FORMAT(12332.1, 4)"), "12,332.1000");
  EXPECT_EQ(text("FORMAT(12332.2, 0)"), "12,332");
  EXPECT_EQ(text("FORMAT(-1234567.891, 2)"), "-1,234,567.89");
  EXPECT_EQ(text("STRCMP('text', 'text2')"), "-1");
  EXPECT_EQ(text("STRCMP('text2', 'text')"), "1");
  EXPECT_EQ(text("STRCMP('text', 'TEXT')"), "0");
  EXPECT_EQ(text("FIELD('Bb', 'Aa', 'Bb', 'Cc')"), "2");
  EXPECT_EQ(text("FIELD('Gg', 'Aa', 'Bb')"), "0");
  EXPECT_EQ(text("ELT(1, 'Aa', 'Bb')"), "Aa");
  EXPECT_EQ(text("ELT(3, 'Aa', 'Bb')"), "NULL");
  EXPECT_EQ(text("FIND_IN_SET('b', 'a,b,c,d')"), "2");
  EXPECT_EQ(text("FIND_IN_SET('x', 'a,b')"), "0");
  EXPECT_EQ(text("FIND_IN_SET('b', NULL)"), "NULL");
  EXPECT_EQ(text("CHAR(77, 121, 83, 81, '76')"), "MySQL");
  EXPECT_EQ(text("HEX(CHAR(1, 0))"), "0100");
  EXPECT_EQ(text("HEX(CHAR(256))"), "0100");
  EXPECT_EQ(text("CHAR(77, NULL, 77)"), "MM");
  EXPECT_EQ(text("INSERT('Quadratic', 3, 4, 'What')"), "QuWhattic");
  EXPECT_EQ(text("INSERT('Quadratic', -1, 4, 'What')"), "Quadratic");
  EXPECT_EQ(text("INSERT('Quadratic', 3, 100, 'What')"), "QuWhat");
  EXPECT_EQ(error_of("LEFT('a')"), 1582);
}

TEST(FunctionsTest, Numbers) {
  EXPECT_EQ(text("ABS(-32)"), "32");
  EXPECT_EQ(text("ABS(-1.50)"), "1.50");
  EXPECT_EQ(text("CEIL(1.23)"), "2");
  EXPECT_EQ(text("CEILING(-1.23)"), "-1");
  EXPECT_EQ(text("FLOOR(-1.23)"), "-2");
  EXPECT_EQ(text("FLOOR(1.5e0)"), "1");
  EXPECT_EQ(text("ROUND(-1.23)"), "-1");
  EXPECT_EQ(text("ROUND(-1.58)"), "-2");
  EXPECT_EQ(text("ROUND(1.298, 1)"), "1.3");
  EXPECT_EQ(text("ROUND(1.298, 0)"), "1");
  EXPECT_EQ(text("ROUND(23.298, -1)"), "20");
  EXPECT_EQ(text("ROUND(2.5)"), "3");
  EXPECT_EQ(text("ROUND(25E-1)"), "2");
  EXPECT_EQ(text("ROUND(2.675, 2)"), "2.68");
  EXPECT_EQ(text("ROUND(1.23, 5)"), "1.23");
  EXPECT_EQ(text("ROUND(150, -2)"), "200");
  EXPECT_EQ(text("ROUND(-0.4)"), "0");
  EXPECT_EQ(text("ROUND(999.9)"), "1000");
  EXPECT_EQ(text("TRUNCATE(1.223, 1)"), "1.2");
  EXPECT_EQ(text("TRUNCATE(1.999, 0)"), "1");
  EXPECT_EQ(text("TRUNCATE(-1.999, 1)"), "-1.9");
  EXPECT_EQ(text("TRUNCATE(122, -2)"), "100");
  EXPECT_EQ(text("MOD(234, 10)"), "4");
  EXPECT_EQ(text("MOD(29, 9)"), "2");
  EXPECT_EQ(text("MOD(34.5, 3)"), "1.5");
  EXPECT_EQ(text("MOD(1, 0)"), "NULL");
  EXPECT_EQ(text("POW(2, 2)"), "4");
  EXPECT_EQ(text("POWER(2, -2)"), "0.25");
  EXPECT_EQ(text("SQRT(4)"), "2");
  EXPECT_EQ(text("SQRT(20)"), "4.47213595499958");
  EXPECT_EQ(text("SQRT(-16)"), "NULL");
  EXPECT_EQ(text("EXP(0)"), "1");
  EXPECT_EQ(text("LN(2)"), "0.6931471805599453");
  EXPECT_EQ(text("LN(0)"), "NULL");
  EXPECT_EQ(text("LOG(2, 65536)"), "16");
  EXPECT_EQ(text("LOG2(65536)"), "16");
  EXPECT_EQ(text("LOG10(100)"), "2");
  EXPECT_EQ(text("SIGN(-32)"), "-1");
  EXPECT_EQ(text("SIGN(0)"), "0");
  EXPECT_EQ(text("SIGN(234)"), "1");
  EXPECT_EQ(text("PI()"), "3.141593");
  EXPECT_EQ(text("RAND(3)"), "0.9057697559760601");
  EXPECT_EQ(text("CONV('a', 16, 2)"), "1010");
  EXPECT_EQ(text("CONV('6E', 18, 8)"), "172");
  EXPECT_EQ(text("CONV(-17, 10, -18)"), "-H");
  EXPECT_EQ(text("BIN(12)"), "1100");
  EXPECT_EQ(text("1e20"), "1e20");
  EXPECT_EQ(text("0.00001e0"), "0.00001");
  EXPECT_EQ(text("123456789012345e0"), "123456789012345");
  EXPECT_EQ(text("1e15"), "1e15");
  EXPECT_EQ(error_of("PI(1)"), 1582);
}

TEST(FunctionsTest, DatesAndTimes) {
  EXPECT_EQ(text("DATE('2003-12-31 01:02:03')"), "2003-12-31");
  EXPECT_EQ(text("TIME('2003-12-31 01:02:03')"), "01:02:03");
  EXPECT_EQ(text("TIME('10:05')"), "10:05:00");
  EXPECT_EQ(text("DATE('10:11:12')"), "NULL");
  EXPECT_EQ(text("DATE('2024/1/5 7:08')"), "2024-01-05");
  EXPECT_EQ(text("YEAR('1987-01-01')"), "1987");
  EXPECT_EQ(text("MONTH('2008-02-03')"), "2");
  EXPECT_EQ(text("DAY('2007-02-03')"), "3");
  EXPECT_EQ(text("HOUR('10:05:03')"), "10");
  EXPECT_EQ(text("HOUR('272:59:59')"), "272");
  EXPECT_EQ(text("MINUTE('2008-02-03 10:05:03')"), "5");
  EXPECT_EQ(text("SECOND('10:05:03')"), "3");
  EXPECT_EQ(text("DAYOFWEEK('2007-02-03')"), "7");
  EXPECT_EQ(text("WEEKDAY('2008-02-03 22:23:00')"), "6");
  EXPECT_EQ(text("DAYOFYEAR('2007-02-03')"), "34");
  EXPECT_EQ(text("DAYNAME('2007-02-03')"), "Saturday");
  EXPECT_EQ(text("MONTHNAME('2008-02-03')"), "February");
  EXPECT_EQ(text("QUARTER('2008-04-01')"), "2");
  EXPECT_EQ(text("LAST_DAY('2004-02-05')"), "2004-02-29");
  EXPECT_EQ(text("LAST_DAY('2003-03-32')"), "NULL");
  EXPECT_EQ(text("DATE_FORMAT('2009-10-04 22:23:00', '%W %M %Y')"), "Sunday October 2009");
  EXPECT_EQ(text("DATE_FORMAT('2007-10-04 22:23:00', '%H:%i:%s')"), "22:23:00");
  EXPECT_EQ(text("DATE_FORMAT('1900-10-04 22:23:00', '%D %y %a %d %m %b %j')"),
            "4th 00 Thu 04 10 Oct 277");
  EXPECT_EQ(text("STR_TO_DATE('01,5,2013', '%d,%m,%Y')"), "2013-05-01");
  EXPECT_EQ(text("STR_TO_DATE('May 1, 2013', '%M %d,%Y')"), "2013-05-01");
  EXPECT_EQ(text("STR_TO_DATE('a09:30:17', 'a%h:%i:%s')"), "09:30:17");
  EXPECT_EQ(text("STR_TO_DATE('09:30:17a', '%h:%i:%s')"), "09:30:17");
  EXPECT_EQ(text("STR_TO_DATE('2013-05-01 10:11:12', '%Y-%m-%d %H:%i:%s')"), "2013-05-01 10:11:12");
  EXPECT_EQ(text("STR_TO_DATE('abc', '%Y')"), "NULL");
  EXPECT_EQ(text("DATEDIFF('2007-12-31 23:59:59', '2007-12-30')"), "1");
  EXPECT_EQ(text("DATEDIFF('2010-11-30 23:59:59', '2010-12-31')"), "-31");
  EXPECT_EQ(text("TIMESTAMPDIFF(MONTH, '2003-02-01', '2003-05-01')"), "3");
  EXPECT_EQ(text("TIMESTAMPDIFF(YEAR, '2002-05-01', '2001-01-01')"), "-1");
  EXPECT_EQ(text("TIMESTAMPDIFF(MINUTE, '2003-02-01', '2003-05-01 12:05:55')"), "128885");
  EXPECT_EQ(text("TIMESTAMPDIFF(MONTH, '2024-01-31', '2024-02-29')"), "0");
  EXPECT_EQ(text("TIMESTAMPADD(MINUTE, 1, '2003-01-02')"), "2003-01-02 00:01:00");
  EXPECT_EQ(text("TIMESTAMPADD(WEEK, 1, '2003-01-02')"), "2003-01-09");
  EXPECT_EQ(text("DATE_ADD('2018-05-01', INTERVAL 1 DAY)"), "2018-05-02");
  EXPECT_EQ(text("DATE_SUB('2018-05-01', INTERVAL 1 YEAR)"), "2017-05-01");
  EXPECT_EQ(text("DATE_ADD('2020-12-31 23:59:59', INTERVAL 1 SECOND)"), "2021-01-01 00:00:00");
  EXPECT_EQ(text("DATE_ADD('2018-12-31 23:59:59', INTERVAL '1:1' MINUTE_SECOND)"),
            "2019-01-01 00:01:00");
  EXPECT_EQ(text("DATE_SUB('2025-01-01 00:00:00', INTERVAL '1 1:1:1' DAY_SECOND)"),
            "2024-12-30 22:58:59");
  EXPECT_EQ(text("DATE_ADD('1900-01-01 00:00:00', INTERVAL '-1 10' DAY_HOUR)"),
            "1899-12-30 14:00:00");
  EXPECT_EQ(text("DATE_SUB('1998-01-02', INTERVAL 31 DAY)"), "1997-12-02");
  EXPECT_EQ(text("DATE_ADD('1992-12-31 23:59:59.000002', INTERVAL '1.999999' SECOND_MICROSECOND)"),
            "1993-01-01 00:00:01.000001");
  EXPECT_EQ(text("DATE_ADD('2024-01-31', INTERVAL 1 MONTH)"), "2024-02-29");
  EXPECT_EQ(text("ADDDATE('2008-01-02', 31)"), "2008-02-02");
  EXPECT_EQ(text("DATE_ADD('2008-01-02', INTERVAL 1 HOUR)"), "2008-01-02 01:00:00");
  EXPECT_EQ(text("DATE_ADD('2008-01-02', INTERVAL 24 HOUR)"), "2008-01-03 00:00:00");
  EXPECT_EQ(text("DATE_ADD('2008-01-02', INTERVAL '1 0' DAY_HOUR)"), "2008-01-03 00:00:00");
  EXPECT_EQ(text("EXTRACT(YEAR FROM '2019-07-02')"), "2019");
  EXPECT_EQ(text("EXTRACT(YEAR_MONTH FROM '2019-07-02 01:02:03')"), "201907");
  EXPECT_EQ(text("EXTRACT(DAY_MINUTE FROM '2019-07-02 01:02:03')"), "20102");
  EXPECT_EQ(text("EXTRACT(MICROSECOND FROM '2003-01-02 10:30:00.000123')"), "123");
  EXPECT_EQ(text("UNIX_TIMESTAMP('2015-11-13 10:20:19')"), "1447410019");
  EXPECT_EQ(text("UNIX_TIMESTAMP('2015-11-13 10:20:19.012')"), "1447410019.012");
  EXPECT_EQ(text("FROM_UNIXTIME(1447430881)"), "2015-11-13 16:08:01");
  EXPECT_EQ(text("FROM_UNIXTIME(1447430881, '%Y %D %M %h:%i:%s')"), "2015 13th November 04:08:01");
  EXPECT_EQ(text("TIMEDIFF('2000-01-01 00:00:00', '2000-01-01 00:00:00.000001')"),
            "-00:00:00.000001");
  EXPECT_EQ(text("TIMEDIFF('2008-12-31 23:59:59.000001', '2008-12-30 01:01:01.000002')"),
            "46:58:57.999999");
  EXPECT_EQ(text("TIME_TO_SEC('22:23:00')"), "80580");
  EXPECT_EQ(text("ADDTIME('2007-12-31 23:59:59.999999', '1 1:1:1.000002')"),
            "2008-01-02 01:01:01.000001");
  EXPECT_EQ(text("ADDTIME('01:00:00.999999', '02:00:00.999998')"), "03:00:01.999997");
  EXPECT_EQ(text("SUBTIME('2007-12-31 23:59:59.999999', '1 1:1:1.000002')"),
            "2007-12-30 22:58:58.999997");
  EXPECT_EQ(text("SUBTIME('01:00:00.999999', '02:00:00.999998')"), "-00:59:59.999999");
  EXPECT_EQ(text("MAKETIME(12, 15, 30)"), "12:15:30");
  EXPECT_EQ(text("SEC_TO_TIME(2378)"), "00:39:38");
  EXPECT_EQ(text("TO_DAYS('2007-10-07')"), "733321");
  EXPECT_EQ(text("WEEK('2008-02-20')"), "7");
  EXPECT_EQ(text("WEEK('2008-02-20', 1)"), "8");
  EXPECT_EQ(text("WEEK('2008-12-31', 1)"), "53");
  EXPECT_EQ(text("WEEK('2000-01-01')"), "0");
  EXPECT_EQ(text("WEEK('2000-01-01', 2)"), "52");
  EXPECT_EQ(text("YEARWEEK('1987-01-01')"), "198652");
  EXPECT_EQ(text("WEEKOFYEAR('2008-02-20')"), "8");
  EXPECT_EQ(text("EXTRACT(WEEK FROM '2008-02-20')"), "7");
  EXPECT_EQ(text("DATE_FORMAT('2000-01-01', '%U %u %V %v %X %x')"), "00 00 52 52 1999 1999");
  EXPECT_EQ(text("DATE_FORMAT('1999-01-01', '%X %V')"), "1998 52");
  EXPECT_EQ(text("FROM_DAYS(730669)"), "2000-07-03");
  EXPECT_EQ(text("MAKEDATE(2011, 32)"), "2011-02-01");
  EXPECT_EQ(text("LENGTH(NOW())"), "19");
  EXPECT_EQ(text("LENGTH(NOW(3))"), "23");
  EXPECT_EQ(text("LENGTH(CURDATE())"), "10");
  EXPECT_EQ(text("LENGTH(CURRENT_TIME)"), "8");
  EXPECT_EQ(error_of("NOW(7)"), 1426);
  EXPECT_EQ(error_of("CURTIME(-1)"), 1426);
}

TEST(FunctionsTest, TemporalResultsCarryTheirType) {
  auto type_of = [](const std::string& expr) {
    ParsedStatement parsed = parse_statement("SELECT " + expr);
    EXPECT_TRUE(parsed.ok()) << expr;
    EvalContext context;
    return evaluate(*parsed.statement->as<SelectStatement>().query->select->items[0].expr, context)
        .temporal_type;
  };
  EXPECT_EQ(type_of("NOW()"), SqlValue::TemporalType::kDatetime);
  EXPECT_EQ(type_of("CURDATE()"), SqlValue::TemporalType::kDate);
  EXPECT_EQ(type_of("CAST('1:2:3' AS TIME)"), SqlValue::TemporalType::kTime);
  EXPECT_EQ(type_of("DATE_ADD('2024-01-01', INTERVAL 1 DAY)"), SqlValue::TemporalType::kDate);
  EXPECT_EQ(type_of("CONCAT(CURDATE())"), SqlValue::TemporalType::kNone);
}

TEST(FunctionsTest, Casts) {
  EXPECT_EQ(text("CAST('12abc' AS SIGNED)"), "12");
  EXPECT_EQ(text("CAST(-1 AS UNSIGNED)"), "18446744073709551615");
  EXPECT_EQ(text("CAST(18446744073709551615 AS SIGNED)"), "-1");
  EXPECT_EQ(text("CAST(1.5 AS SIGNED)"), "2");
  EXPECT_EQ(text("CAST(-1.5 AS SIGNED)"), "-2");
  EXPECT_EQ(text("CAST('1e3' AS SIGNED)"), "1000");
  EXPECT_EQ(text("CAST(1.6e0 AS UNSIGNED)"), "2");
  EXPECT_EQ(text("CAST(123 AS CHAR)"), "123");
  EXPECT_EQ(text("CAST('abcdef' AS CHAR(3))"), "abc");
  EXPECT_EQ(text("HEX(CAST('a' AS BINARY(3)))"), "610000");
  EXPECT_EQ(text("CAST(1.23456 AS DECIMAL(5, 2))"), "1.23");
  EXPECT_EQ(text("CAST(12345.6 AS DECIMAL(5, 2))"), "999.99");
  EXPECT_EQ(text("CAST('3.145' AS DECIMAL(4, 2))"), "3.15");
  EXPECT_EQ(text("CAST(5 AS DECIMAL)"), "5");
  EXPECT_EQ(text("CAST('1.5' AS DOUBLE)"), "1.5");
  EXPECT_EQ(text("CAST('2024-01-15 10:11:12' AS DATE)"), "2024-01-15");
  EXPECT_EQ(text("CAST('2024-01-15' AS DATETIME)"), "2024-01-15 00:00:00");
  EXPECT_EQ(text("CAST('2024-02-30' AS DATE)"), "NULL");
  EXPECT_EQ(text("CAST(20240115 AS DATE)"), "2024-01-15");
  EXPECT_EQ(text("CAST('10:11:12.5' AS TIME)"), "10:11:13");
  EXPECT_EQ(text("CAST('2024-01-15 10:11:12.123456' AS DATETIME(3))"), "2024-01-15 10:11:12.123");
  EXPECT_EQ(text("CAST('2024-12-31 23:59:59.6' AS DATETIME)"), "2025-01-01 00:00:00");
  EXPECT_EQ(text("CAST('10:11:12.5' AS TIME(1))"), "10:11:12.5");
  EXPECT_EQ(text("CONVERT('abc', CHAR(2))"), "ab");
  EXPECT_EQ(text("CONVERT('abc' USING utf8mb4)"), "abc");
  EXPECT_EQ(text("CAST(NULL AS SIGNED)"), "NULL");
  EXPECT_EQ(error_of("CAST('1' AS JSON)"), 1235);
}

TEST(FunctionsTest, IntervalOperators) {
  // expression.cc hands + and - with an INTERVAL operand to interval_arithmetic().
  auto interval = [](const std::string& expr) {
    ParsedStatement parsed = parse_statement("SELECT " + expr);
    EXPECT_TRUE(parsed.ok()) << expr;
    EvalContext context;
    const Expr& e = *parsed.statement->as<SelectStatement>().query->select->items[0].expr;
    return interval_arithmetic(e.as<BinaryExpr>(), context).to_text();
  };
  EXPECT_EQ(interval("'2024-01-31' + INTERVAL 1 MONTH"), "2024-02-29");
  EXPECT_EQ(interval("INTERVAL 1 DAY + '2008-12-31'"), "2009-01-01");
  EXPECT_EQ(interval("'2005-01-01' - INTERVAL 1 SECOND"), "2004-12-31 23:59:59");
  EXPECT_EQ(interval("NULL + INTERVAL 1 DAY"), "NULL");
  EXPECT_EQ(interval("'2024-03-01' - INTERVAL '1-1' YEAR_MONTH"), "2023-02-01");
}

TEST(FunctionsTest, PatternsAndInformation) {
  EXPECT_EQ(text("'abc' REGEXP '^A'"), "1");
  EXPECT_EQ(text("'abc' NOT REGEXP 'b.'"), "0");
  EXPECT_EQ(text("NULL REGEXP 'a'"), "NULL");
  EXPECT_EQ(text("'a' COLLATE utf8mb4_bin"), "a");
  EXPECT_EQ(text("DATABASE()"), "db1");
  EXPECT_EQ(text("USER()"), "root@localhost");
  EXPECT_EQ(text("CURRENT_USER()"), "root@%");
  EXPECT_EQ(text("LAST_INSERT_ID()"), "0");
  EXPECT_EQ(error_of("NO_SUCH_FUNCTION_XYZ(1)"), 1305);
}

TEST(FunctionsTest, TrimSidesAndHexNumbers) {
  EXPECT_EQ(text("TRIM(LEADING 'x' FROM 'xxaxx')"), "axx");
  EXPECT_EQ(text("TRIM(TRAILING 'x' FROM 'xxaxx')"), "xxa");
  EXPECT_EQ(text("TRIM(BOTH 'ab' FROM 'ababcab')"), "c");
  EXPECT_EQ(text("TRIM('x' FROM 'xax')"), "a");
  EXPECT_EQ(text("TRIM(LEADING FROM '  a ')"), "a ");
  EXPECT_EQ(text("TRIM(BOTH NULL FROM 'a')"), "NULL");
  EXPECT_EQ(text("TRIM(BOTH '' FROM ' a ')"), " a ");
  EXPECT_EQ(text("X'0a' + 0"), "10");
  EXPECT_EQ(text("0x0100 * 2"), "512");
  EXPECT_EQ(text("-0x0a"), "-10");
  EXPECT_EQ(text("0x0a = 10"), "1");
  EXPECT_EQ(text("0x41 = 'A'"), "1");
  EXPECT_EQ(text("CAST(0x41 AS UNSIGNED)"), "65");
  EXPECT_EQ(text("0x41"), "A");
}

TEST(FunctionsTest, DecimalRoundingIsExact) {
  using functions_internal::round_decimal_text;
  EXPECT_EQ(round_decimal_text("2.675", 2, false), "2.68");
  EXPECT_EQ(round_decimal_text("-2.675", 2, false), "-2.68");
  EXPECT_EQ(round_decimal_text("-0.004", 2, false), "0.00");
  EXPECT_EQ(round_decimal_text("9.995", 2, false), "10.00");
  EXPECT_EQ(round_decimal_text("1.5", 3, false), "1.500");
  EXPECT_EQ(round_decimal_text("555", -1, false), "560");
  EXPECT_EQ(round_decimal_text("555", -3, false), "1000");
  EXPECT_EQ(round_decimal_text("555", -4, false), "0");
  EXPECT_EQ(round_decimal_text("1.999", 1, true), "1.9");
  EXPECT_EQ(round_decimal_text("99999999999999999999.5", 0, false), "100000000000000000000");
}

}  // namespace
}  // namespace duo::sql::executor
