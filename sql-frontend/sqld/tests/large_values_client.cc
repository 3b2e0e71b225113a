// duo_sqld_large_values_client: the libmariadb part of large_values_test.py — stores a
// 16 MiB value with COM_STMT_SEND_LONG_DATA (mysql_stmt_send_long_data in 1 MiB pieces),
// reads it back through the binary protocol (mysql_stmt_fetch_column, in pieces) and
// the text protocol, and checks every byte; a long-data parameter beyond
// max_allowed_packet fails the execute with 1153. Prints one line per check and exits
// non-zero if any failed.
//
// Usage: duo_sqld_large_values_client PORT DATABASE
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

constexpr size_t kValueBytes = 16u << 20;
constexpr size_t kPieceBytes = 1u << 20;

// Every byte value, in an order that no shift of the value repeats soon.
std::string pattern(size_t size) {
  std::string out(size, '\0');
  uint32_t x = 12345;
  for (size_t i = 0; i < size; ++i) {
    x = x * 1103515245u + 12345u;
    out[i] = static_cast<char>(x >> 16);
  }
  return out;
}

MYSQL_STMT* prepare(MYSQL* mysql, const char* sql) {
  MYSQL_STMT* stmt = mysql_stmt_init(mysql);
  if (mysql_stmt_prepare(stmt, sql, std::strlen(sql)) != 0) {
    std::printf("FAILED prepare %s: %s\n", sql, mysql_stmt_error(stmt));
    std::exit(1);
  }
  return stmt;
}

// INSERT INTO big VALUES (id, <long data>) sending `value` in pieces; the execute's errno.
unsigned int insert_long_data(MYSQL* mysql, long long id, const std::string& value) {
  MYSQL_STMT* stmt = prepare(mysql, "INSERT INTO big (id, v) VALUES (?, ?)");
  MYSQL_BIND params[2]{};
  params[0].buffer_type = MYSQL_TYPE_LONGLONG;
  params[0].buffer = &id;
  params[1].buffer_type = MYSQL_TYPE_LONG_BLOB;
  mysql_stmt_bind_param(stmt, params);
  for (size_t at = 0; at < value.size(); at += kPieceBytes) {
    const size_t piece = std::min(kPieceBytes, value.size() - at);
    if (mysql_stmt_send_long_data(stmt, 1, value.data() + at, piece) != 0) {
      std::printf("FAILED send_long_data: %s\n", mysql_stmt_error(stmt));
      std::exit(1);
    }
  }
  const unsigned int error = mysql_stmt_execute(stmt) == 0 ? 0 : mysql_stmt_errno(stmt);
  mysql_stmt_close(stmt);
  return error;
}

// SELECT v FROM big WHERE id = ? through the binary protocol, fetched in pieces.
std::string select_binary(MYSQL* mysql, long long id) {
  MYSQL_STMT* stmt = prepare(mysql, "SELECT v FROM big WHERE id = ?");
  MYSQL_BIND param{};
  param.buffer_type = MYSQL_TYPE_LONGLONG;
  param.buffer = &id;
  mysql_stmt_bind_param(stmt, &param);
  if (mysql_stmt_execute(stmt) != 0) {
    std::printf("FAILED execute select: %s\n", mysql_stmt_error(stmt));
    std::exit(1);
  }
  unsigned long length = 0;
  my_bool is_null = 0;
  MYSQL_BIND result{};
  result.buffer_type = MYSQL_TYPE_LONG_BLOB;
  result.length = &length;
  result.is_null = &is_null;
  mysql_stmt_bind_result(stmt, &result);
  std::string value;
  const int fetched = mysql_stmt_fetch(stmt);
  if (fetched == 0 || fetched == MYSQL_DATA_TRUNCATED) {
    value.resize(length);
    for (size_t at = 0; at < length; at += kPieceBytes) {
      MYSQL_BIND piece{};
      piece.buffer_type = MYSQL_TYPE_LONG_BLOB;
      piece.buffer = value.data() + at;
      piece.buffer_length = std::min<unsigned long>(kPieceBytes, length - at);
      mysql_stmt_fetch_column(stmt, &piece, 0, at);
    }
  }
  mysql_stmt_free_result(stmt);
  mysql_stmt_close(stmt);
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PORT DATABASE\n", argv[0]);
    return 2;
  }
  MYSQL* mysql = mysql_init(nullptr);
  unsigned int timeout_s = 120;
  mysql_options(mysql, MYSQL_OPT_READ_TIMEOUT, &timeout_s);
  unsigned long packet_bytes = 1ul << 30;  // the client's own limit out of the way
  mysql_options(mysql, MYSQL_OPT_MAX_ALLOWED_PACKET, &packet_bytes);
  if (!mysql_real_connect(mysql, "127.0.0.1", "root", "", argv[2], std::atoi(argv[1]), nullptr,
                          0)) {
    std::printf("FAILED connect: %s\n", mysql_error(mysql));
    return 1;
  }
  if (mysql_query(mysql, "CREATE TABLE big (id BIGINT PRIMARY KEY, v LONGBLOB)") != 0) {
    std::printf("FAILED create: %s\n", mysql_error(mysql));
    return 1;
  }
  const std::string value = pattern(kValueBytes);
  expect(insert_long_data(mysql, 1, value) == 0, "16 MiB stored with COM_STMT_SEND_LONG_DATA");
  const std::string binary = select_binary(mysql, 1);
  expect(binary.size() == value.size(), "binary protocol: 16 MiB back (" +
                                            std::to_string(binary.size()) + " bytes)");
  expect(binary == value, "binary protocol: every byte as stored");

  if (mysql_query(mysql, "SELECT v, LENGTH(v) FROM big WHERE id = 1") != 0) {
    std::printf("FAILED text select: %s\n", mysql_error(mysql));
    return 1;
  }
  MYSQL_RES* result = mysql_store_result(mysql);
  MYSQL_ROW row = result ? mysql_fetch_row(result) : nullptr;
  unsigned long* lengths = row ? mysql_fetch_lengths(result) : nullptr;
  expect(row && lengths[0] == value.size() && std::memcmp(row[0], value.data(), value.size()) == 0,
         "text protocol: every byte as stored");
  expect(row && std::string(row[1]) == std::to_string(kValueBytes), "LENGTH(v) is 16 MiB");
  if (result) mysql_free_result(result);

  // Long data past max_allowed_packet (64 MiB): the execute fails with 1153 and the
  // connection goes on; nothing was stored.
  const std::string too_big = pattern((64u << 20) + kPieceBytes);
  expect(insert_long_data(mysql, 2, too_big) == 1153, "long data beyond max_allowed_packet: 1153");
  expect(mysql_query(mysql, "SELECT COUNT(*) FROM big") == 0, "connection still usable");
  result = mysql_store_result(mysql);
  row = result ? mysql_fetch_row(result) : nullptr;
  expect(row && std::string(row[0]) == "1", "only the first row stored");
  if (result) mysql_free_result(result);
  mysql_close(mysql);
  return g_failures == 0 ? 0 : 1;
}
