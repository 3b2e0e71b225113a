// duo_sqld_prepared_client: the prepared-statement part of sqld_cluster_test.py — a
// libmariadb client that uses COM_STMT_PREPARE/EXECUTE with bound parameters of several
// types (integers, strings, a DOUBLE, a DATE, NULL) and reads binary result rows (also
// YEAR and BIT columns, with their metadata), and re-executes a prepared SELECT after
// schema, database and privilege changes, against a running duo_sqld. Prints one line
// per check and exits non-zero if any failed.
//
// Usage: duo_sqld_prepared_client PORT DATABASE
#include <mysql.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int g_failures = 0;

void expect(bool condition, const std::string& what) {
  std::printf("%s %s\n", condition ? "ok" : "FAILED", what.c_str());
  if (!condition) ++g_failures;
}

MYSQL_STMT* prepare(MYSQL* mysql, const char* sql) {
  MYSQL_STMT* stmt = mysql_stmt_init(mysql);
  if (mysql_stmt_prepare(stmt, sql, std::strlen(sql)) != 0) {
    std::printf("FAILED prepare %s: %s\n", sql, mysql_stmt_error(stmt));
    std::exit(1);
  }
  return stmt;
}

// Executes `stmt` (one BIGINT parameter) with `key` and returns its first column of its
// one row as text ("" for no row, "NULL"); on error, "error <errno>".
std::string execute_one(MYSQL_STMT* stmt, long long key) {
  MYSQL_BIND param{};
  param.buffer_type = MYSQL_TYPE_LONGLONG;
  param.buffer = &key;
  mysql_stmt_bind_param(stmt, &param);
  if (mysql_stmt_execute(stmt) != 0) return "error " + std::to_string(mysql_stmt_errno(stmt));
  char out[64] = {0};
  unsigned long length = 0;
  my_bool is_null = 0;
  MYSQL_BIND result{};
  result.buffer_type = MYSQL_TYPE_STRING;
  result.buffer = out;
  result.buffer_length = sizeof(out);
  result.length = &length;
  result.is_null = &is_null;
  mysql_stmt_bind_result(stmt, &result);
  const int fetched = mysql_stmt_fetch(stmt);
  std::string text = fetched == MYSQL_NO_DATA ? ""
                     : fetched != 0           ? "fetch error " + std::to_string(fetched)
                     : is_null                ? "NULL"
                                              : std::string(out, length);
  mysql_stmt_free_result(stmt);
  return text;
}

bool query(MYSQL* mysql, const std::string& sql) {
  if (mysql_query(mysql, sql.c_str()) == 0) return true;
  std::printf("FAILED %s: %s\n", sql.c_str(), mysql_error(mysql));
  return false;
}

// A prepared point SELECT keeps its plan across executions (prepared_plan.h): executed
// again after ALTER TABLE, DROP + CREATE of another shape, a change of the current
// database (COM_INIT_DB) to one with a same-named table, and REVOKE/GRANT, it answers
// what a statement prepared afresh would.
void plan_invalidation(MYSQL* mysql, const char* database, int port) {
  if (!query(mysql, "CREATE TABLE prep_plan (id BIGINT PRIMARY KEY, v VARCHAR(10))") ||
      !query(mysql, "INSERT INTO prep_plan VALUES (1, 'a'), (2, 'b')")) {
    ++g_failures;
    return;
  }
  MYSQL_STMT* one = prepare(mysql, "SELECT v FROM prep_plan WHERE id = ?");
  expect(execute_one(one, 1) == "a" && execute_one(one, 2) == "b" && execute_one(one, 3).empty(),
         "plan: point reads");
  query(mysql, "ALTER TABLE prep_plan ADD COLUMN w INT DEFAULT 7");
  expect(execute_one(one, 1) == "a", "plan: after ADD COLUMN");
  query(mysql, "ALTER TABLE prep_plan DROP COLUMN v");
  std::string result = execute_one(one, 1);
  expect(result == "error 1054", "plan: after DROP COLUMN: " + result);
  query(mysql, "DROP TABLE prep_plan");
  result = execute_one(one, 1);
  expect(result == "error 1146", "plan: after DROP TABLE: " + result);
  query(mysql, "CREATE TABLE prep_plan (v INT, id BIGINT PRIMARY KEY)");
  query(mysql, "INSERT INTO prep_plan VALUES (42, 1), (NULL, 2)");
  result = execute_one(one, 1);
  expect(result == "42", "plan: after DROP + CREATE with v INT: " + result);
  expect(execute_one(one, 2) == "NULL", "plan: NULL in the new shape");

  // COM_INIT_DB to a database with its own prep_plan, and back.
  query(mysql, "CREATE DATABASE prep_other");
  query(mysql, "CREATE TABLE prep_other.prep_plan (id BIGINT PRIMARY KEY, v VARCHAR(10))");
  query(mysql, "INSERT INTO prep_other.prep_plan VALUES (1, 'other')");
  expect(mysql_select_db(mysql, "prep_other") == 0, "plan: select_db prep_other");
  result = execute_one(one, 1);
  expect(result == "other", "plan: after changing database: " + result);
  expect(mysql_select_db(mysql, database) == 0, "plan: select_db back");
  result = execute_one(one, 1);
  expect(result == "42", "plan: back in the first database: " + result);
  query(mysql, "DROP DATABASE prep_other");

  // REVOKE / GRANT seen by the next execution of another account's statement.
  query(mysql, "CREATE USER prep_u IDENTIFIED BY 'pw'");
  query(mysql, std::string("GRANT SELECT ON ") + database + ".* TO prep_u");
  MYSQL* user = mysql_init(nullptr);
  if (!mysql_real_connect(user, "127.0.0.1", "prep_u", "pw", database, port, nullptr, 0)) {
    expect(false, std::string("plan: connect prep_u: ") + mysql_error(user));
  } else {
    MYSQL_STMT* theirs = prepare(user, "SELECT v FROM prep_plan WHERE id = ?");
    expect(execute_one(theirs, 1) == "42", "plan: prep_u reads");
    query(mysql, std::string("REVOKE SELECT ON ") + database + ".* FROM prep_u");
    result = execute_one(theirs, 1);
    expect(result == "error 1142", "plan: after REVOKE: " + result);
    query(mysql, std::string("GRANT SELECT ON ") + database + ".prep_plan TO prep_u");
    result = execute_one(theirs, 1);
    expect(result == "42", "plan: after GRANT: " + result);
    mysql_stmt_close(theirs);
  }
  mysql_close(user);
  query(mysql, "DROP USER prep_u");
  mysql_stmt_close(one);
  query(mysql, "DROP TABLE prep_plan");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PORT DATABASE\n", argv[0]);
    return 2;
  }
  MYSQL* mysql = mysql_init(nullptr);
  unsigned int timeout_s = 30;
  mysql_options(mysql, MYSQL_OPT_READ_TIMEOUT, &timeout_s);
  if (!mysql_real_connect(mysql, "127.0.0.1", "root", "", argv[2], std::atoi(argv[1]), nullptr,
                          0)) {
    std::printf("FAILED connect: %s\n", mysql_error(mysql));
    return 1;
  }
  if (mysql_query(mysql,
                  "CREATE TABLE prep (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(20),"
                  " score DOUBLE, born DATE, n INT NOT NULL DEFAULT 0)") != 0) {
    std::printf("FAILED create: %s\n", mysql_error(mysql));
    return 1;
  }

  // INSERT with five parameters, executed twice with different values (one NULL).
  MYSQL_STMT* insert =
      prepare(mysql, "INSERT INTO prep (id, name, score, born, n) VALUES (?, ?, ?, ?, ?)");
  expect(mysql_stmt_param_count(insert) == 5, "insert has 5 parameters");
  long long id = 0;
  char name[32];
  unsigned long name_length = 0;
  double score = 0;
  MYSQL_TIME born{};
  int n = 0;
  my_bool name_null = 0;
  MYSQL_BIND params[5]{};
  params[0].buffer_type = MYSQL_TYPE_LONGLONG;
  params[0].buffer = &id;
  params[1].buffer_type = MYSQL_TYPE_STRING;
  params[1].buffer = name;
  params[1].length = &name_length;
  params[1].is_null = &name_null;
  params[2].buffer_type = MYSQL_TYPE_DOUBLE;
  params[2].buffer = &score;
  params[3].buffer_type = MYSQL_TYPE_DATE;
  params[3].buffer = &born;
  params[4].buffer_type = MYSQL_TYPE_LONG;
  params[4].buffer = &n;
  mysql_stmt_bind_param(insert, params);
  for (int row = 1; row <= 2; ++row) {
    id = 1000 + row;
    std::snprintf(name, sizeof(name), "user%d", row);
    name_length = std::strlen(name);
    name_null = row == 2;
    score = row * 1.5;
    born.year = 1990 + row;
    born.month = 2;
    born.day = 28;
    born.time_type = MYSQL_TIMESTAMP_DATE;
    n = row * 10;
    expect(mysql_stmt_execute(insert) == 0,
           std::string("insert row ") + std::to_string(row) + " " + mysql_stmt_error(insert));
    expect(mysql_stmt_affected_rows(insert) == 1, "insert affected 1");
  }
  id = 1001;
  expect(mysql_stmt_execute(insert) != 0 && mysql_stmt_errno(insert) == 1062,
         "duplicate key via prepared insert: " + std::to_string(mysql_stmt_errno(insert)));
  mysql_stmt_close(insert);

  // UPDATE k = k + ? by key: the interpreted-update path with a parameter.
  MYSQL_STMT* update = prepare(mysql, "UPDATE prep SET n = n + 1 WHERE id = ?");
  MYSQL_BIND key{};
  long long key_value = 1002;
  key.buffer_type = MYSQL_TYPE_LONGLONG;
  key.buffer = &key_value;
  mysql_stmt_bind_param(update, &key);
  expect(mysql_stmt_execute(update) == 0 && mysql_stmt_affected_rows(update) == 1,
         "prepared increment");
  mysql_stmt_close(update);

  // SELECT by key with a parameter; binary result row.
  MYSQL_STMT* select = prepare(mysql, "SELECT id, name, score, born, n FROM prep WHERE id = ?");
  mysql_stmt_bind_param(select, &key);
  for (long long k : {1001LL, 1002LL}) {
    key_value = k;
    expect(mysql_stmt_execute(select) == 0, std::string("select ") + mysql_stmt_error(select));
    long long out_id = 0;
    char out_name[32] = {0};
    unsigned long out_name_length = 0;
    my_bool out_name_null = 0;
    double out_score = 0;
    MYSQL_TIME out_born{};
    int out_n = 0;
    MYSQL_BIND result[5]{};
    result[0].buffer_type = MYSQL_TYPE_LONGLONG;
    result[0].buffer = &out_id;
    result[1].buffer_type = MYSQL_TYPE_STRING;
    result[1].buffer = out_name;
    result[1].buffer_length = sizeof(out_name);
    result[1].length = &out_name_length;
    result[1].is_null = &out_name_null;
    result[2].buffer_type = MYSQL_TYPE_DOUBLE;
    result[2].buffer = &out_score;
    result[3].buffer_type = MYSQL_TYPE_DATE;
    result[3].buffer = &out_born;
    result[4].buffer_type = MYSQL_TYPE_LONG;
    result[4].buffer = &out_n;
    mysql_stmt_bind_result(select, result);
    expect(mysql_stmt_fetch(select) == 0, "fetch row " + std::to_string(k));
    const int row = static_cast<int>(k - 1000);
    expect(out_id == k, "id " + std::to_string(out_id));
    if (row == 1) {
      expect(!out_name_null && std::string(out_name, out_name_length) == "user1", "name user1");
    } else {
      expect(out_name_null, "name NULL");
    }
    expect(out_score == row * 1.5, "score " + std::to_string(out_score));
    expect(out_born.year == static_cast<unsigned>(1990 + row) && out_born.month == 2 &&
               out_born.day == 28,
           "born date");
    expect(out_n == row * 10 + (row == 2 ? 1 : 0), "n " + std::to_string(out_n));
    expect(mysql_stmt_fetch(select) == MYSQL_NO_DATA, "one row");
    mysql_stmt_free_result(select);
  }
  mysql_stmt_close(select);

  // SELECT * and a computed column: the prepare announces as many columns as execute
  // returns (libmariadb refuses a mismatch).
  MYSQL_STMT* star = prepare(mysql, "SELECT *, n * 2 FROM prep WHERE id IN (?, 1002)");
  expect(mysql_stmt_field_count(star) == 6, "SELECT * announces 6 columns");
  key_value = 1001;
  mysql_stmt_bind_param(star, &key);
  expect(mysql_stmt_execute(star) == 0, std::string("execute SELECT * ") + mysql_stmt_error(star));
  expect(mysql_stmt_store_result(star) == 0 && mysql_stmt_num_rows(star) == 2, "two rows");
  mysql_stmt_close(star);

  // YEAR and BIT(12): the column types and flags libmariadb sees, the binary row (YEAR
  // as a short, BIT as its 2 big-endian bytes) and the text row ("0000", raw bytes).
  if (mysql_query(mysql, "CREATE TABLE prep_types (id INT PRIMARY KEY, y YEAR, b BIT(12))") != 0 ||
      mysql_query(mysql, "INSERT INTO prep_types VALUES (1, 2024, b'101000000101'), (2, 0, 1)") !=
          0) {
    std::printf("FAILED prep_types: %s\n", mysql_error(mysql));
    return 1;
  }
  MYSQL_STMT* types = prepare(mysql, "SELECT y, b FROM prep_types WHERE id = ?");
  MYSQL_RES* metadata = mysql_stmt_result_metadata(types);
  expect(metadata != nullptr && mysql_num_fields(metadata) == 2, "YEAR/BIT metadata");
  if (metadata != nullptr) {
    const MYSQL_FIELD* fields = mysql_fetch_fields(metadata);
    expect(
        fields[0].type == MYSQL_TYPE_YEAR && fields[0].length == 4 &&
            (fields[0].flags & (UNSIGNED_FLAG | ZEROFILL_FLAG)) == (UNSIGNED_FLAG | ZEROFILL_FLAG),
        "YEAR column: type " + std::to_string(fields[0].type) + " flags " +
            std::to_string(fields[0].flags));
    expect(fields[1].type == MYSQL_TYPE_BIT && fields[1].length == 12 &&
               (fields[1].flags & UNSIGNED_FLAG) != 0,
           "BIT(12) column: type " + std::to_string(fields[1].type) + " length " +
               std::to_string(fields[1].length));
    mysql_free_result(metadata);
  }
  long long type_key = 1;
  MYSQL_BIND type_param{};
  type_param.buffer_type = MYSQL_TYPE_LONGLONG;
  type_param.buffer = &type_key;
  mysql_stmt_bind_param(types, &type_param);
  expect(mysql_stmt_execute(types) == 0,
         std::string("execute YEAR/BIT ") + mysql_stmt_error(types));
  unsigned short out_year = 0;
  unsigned char out_bits[8] = {0};
  unsigned long out_bits_length = 0;
  MYSQL_BIND type_result[2]{};
  type_result[0].buffer_type = MYSQL_TYPE_SHORT;
  type_result[0].buffer = &out_year;
  type_result[0].is_unsigned = 1;
  type_result[1].buffer_type = MYSQL_TYPE_BLOB;
  type_result[1].buffer = out_bits;
  type_result[1].buffer_length = sizeof(out_bits);
  type_result[1].length = &out_bits_length;
  mysql_stmt_bind_result(types, type_result);
  expect(mysql_stmt_fetch(types) == 0, "fetch YEAR/BIT row");
  expect(out_year == 2024, "YEAR 2024 in binary: " + std::to_string(out_year));
  expect(out_bits_length == 2 && out_bits[0] == 0x0A && out_bits[1] == 0x05,
         "BIT(12) as 2 big-endian bytes: " + std::to_string(out_bits_length));
  mysql_stmt_free_result(types);
  mysql_stmt_close(types);
  if (mysql_query(mysql, "SELECT y, b FROM prep_types WHERE id = 2") == 0) {
    MYSQL_RES* text = mysql_store_result(mysql);
    MYSQL_ROW row = text != nullptr ? mysql_fetch_row(text) : nullptr;
    const unsigned long* lengths = row != nullptr ? mysql_fetch_lengths(text) : nullptr;
    expect(row != nullptr && std::string(row[0]) == "0000", "YEAR 0 in text is 0000");
    expect(lengths != nullptr && lengths[1] == 2 && row[1][0] == 0 && row[1][1] == 1,
           "BIT(12) 1 in text is bytes 00 01");
    if (text != nullptr) mysql_free_result(text);
  } else {
    expect(false, std::string("text SELECT YEAR/BIT: ") + mysql_error(mysql));
  }

  plan_invalidation(mysql, argv[2], std::atoi(argv[1]));

  MYSQL_STMT* missing = mysql_stmt_init(mysql);
  const char* bad = "SELECT * FROM no_such_table WHERE id = ?";
  const int prepared = mysql_stmt_prepare(missing, bad, std::strlen(bad));
  const unsigned error = mysql_stmt_errno(missing);
  expect(prepared != 0 && error == 1146, "prepare of an unknown table: " + std::to_string(error));
  mysql_stmt_close(missing);
  mysql_close(mysql);
  std::printf("%s\n", g_failures == 0 ? "prepared client passed" : "prepared client FAILED");
  return g_failures == 0 ? 0 : 1;
}
