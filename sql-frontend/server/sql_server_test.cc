// Real-client tests of the MySQL front-end: libmariadb (and the mariadb CLI, if
// installed) against an in-process SqlServer with the EchoQueryHandler. Covers both
// authentication plugins, refusals, text results, multi-statements, prepared
// statements with every parameter type, TLS, packets over 16 MiB, max_allowed_packet,
// KILL, max_connections, and the Unix socket (both plugins over it, a stale socket taken
// over, one in use left alone, unusable paths leaving TCP serving).
#include "sql-frontend/server/sql_server.h"

#include <gtest/gtest.h>
#include <mysql.h>
#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "sql-frontend/server/sql_server_test_util.h"

namespace duo::sql::server {
namespace {

using testing::Client;
using testing::ConnectOptions;
using testing::TestServer;

class SqlServerTest : public ::testing::Test {
 protected:
  static SqlServerOptions options() {
    SqlServerOptions o;
    o.session.max_allowed_packet = 32u << 20;
    return o;
  }
  TestServer server_{options()};
};

TEST_F(SqlServerTest, NativePasswordLoginAndSelect) {
  Client client(server_.port(), "native_user", "npass");
  ASSERT_TRUE(client.connected) << client.error;
  EXPECT_EQ(client.scalar("SELECT 1"), "1");
  EXPECT_NE(std::string(mysql_get_server_info(client.mysql)).find("DuoDB"), std::string::npos);
  EXPECT_EQ(client.scalar("SELECT CONNECTION_ID()"), std::to_string(mysql_thread_id(client.mysql)));
  Client root(server_.port(), "root", "");
  ASSERT_TRUE(root.connected) << root.error;
  EXPECT_EQ(root.scalar("select 1"), "1");
}

TEST_F(SqlServerTest, WrongPasswordsAreRefusedWith1045) {
  Client wrong(server_.port(), "native_user", "nope");
  EXPECT_FALSE(wrong.connected);
  EXPECT_EQ(wrong.error_code, 1045u);
  EXPECT_EQ(wrong.error, "Access denied for user 'native_user'@'127.0.0.1' (using password: YES)");
  EXPECT_STREQ(mysql_sqlstate(wrong.mysql), "28000");

  Client empty(server_.port(), "native_user", "");
  EXPECT_EQ(empty.error_code, 1045u);
  EXPECT_NE(empty.error.find("(using password: NO)"), std::string::npos);

  Client unknown(server_.port(), "nobody", "x");
  EXPECT_EQ(unknown.error_code, 1045u);
  Client root_with_password(server_.port(), "root", "x");
  EXPECT_EQ(root_with_password.error_code, 1045u);
  Client sha2_wrong_tls(server_.port(), "sha2_user", "wrong", ConnectOptions{.tls = true});
  EXPECT_EQ(sha2_wrong_tls.error_code, 1045u);
}

TEST_F(SqlServerTest, CachingSha2NeedsTlsOnceThenFastAuth) {
  ASSERT_FALSE(testing::tls_files_dir().empty());
  // Cold cache, no TLS, no RSA keys: refused as MySQL refuses.
  {
    Client plain(server_.port(), "sha2_user", "spass");
    EXPECT_FALSE(plain.connected);
    EXPECT_TRUE(plain.error_code == 1045u || plain.error_code == 2061u)
        << plain.error_code << " " << plain.error;
  }
  // Full authentication over TLS fills the cache.
  {
    Client tls(server_.port(), "sha2_user", "spass", ConnectOptions{.tls = true});
    ASSERT_TRUE(tls.connected) << tls.error;
    EXPECT_NE(mysql_get_ssl_cipher(tls.mysql), nullptr);
    EXPECT_EQ(tls.scalar("SELECT 'sha2'"), "sha2");
  }
  // Now the SHA256 scramble passes over plain TCP (fast authentication).
  {
    Client plain(server_.port(), "sha2_user", "spass");
    ASSERT_TRUE(plain.connected) << plain.error;
    EXPECT_EQ(mysql_get_ssl_cipher(plain.mysql), nullptr);
    EXPECT_EQ(plain.scalar("SELECT 2"), "2");
  }
  // A wrong password still fails, cache or not.
  Client wrong(server_.port(), "sha2_user", "spasS");
  EXPECT_FALSE(wrong.connected);
  EXPECT_TRUE(wrong.error_code == 1045u || wrong.error_code == 2061u) << wrong.error;
  // Dropping the cache entry (password change) forces TLS again.
  server_.server->sha2_cache().erase("sha2_user");
  Client again(server_.port(), "sha2_user", "spass");
  EXPECT_FALSE(again.connected);
}

TEST_F(SqlServerTest, TlsConnectionWithNativePassword) {
  ASSERT_FALSE(testing::tls_files_dir().empty());
  Client client(server_.port(), "native_user", "npass", ConnectOptions{.tls = true});
  ASSERT_TRUE(client.connected) << client.error;
  EXPECT_NE(mysql_get_ssl_cipher(client.mysql), nullptr);
  EXPECT_EQ(client.scalar("SELECT ROWS(3)"), "0");
  EXPECT_EQ(mysql_ping(client.mysql), 0);
}

// A client may send its TLS ClientHello right behind the SSLRequest (PyMySQL often does:
// both arrive in one read). The server must leave those bytes to the TLS session. Here
// both go out in one send(), so the case is hit every time.
TEST_F(SqlServerTest, TlsClientHelloRightBehindTheSslRequest) {
  ASSERT_FALSE(testing::tls_files_dir().empty());
  testing::RawClient raw(server_.port());
  ASSERT_TRUE(raw.read_greeting());
  ASSERT_TRUE(raw.greeting.capabilities & protocol::kClientSsl);
  // The SSLRequest packet (sequence 1), framed by hand so it is not sent yet.
  const std::string request = protocol::encode(protocol::SslRequest{
      protocol::kClientProtocol41 | protocol::kClientSsl | protocol::kClientSecureConnection |
          protocol::kClientPluginAuth,
      1 << 24, 45});
  std::string bytes{static_cast<char>(request.size()), 0, 0, 1};
  bytes += request;
  // The ClientHello: the client's first TLS flight, taken from memory BIOs.
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ASSERT_NE(ctx, nullptr);
  SSL* ssl = SSL_new(ctx);
  SSL_set_bio(ssl, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
  ASSERT_EQ(SSL_connect(ssl), -1);  // wants the server's answer
  char hello[16384];
  const int hello_bytes = BIO_read(SSL_get_wbio(ssl), hello, sizeof hello);
  ASSERT_GT(hello_bytes, 0);
  bytes.append(hello, static_cast<size_t>(hello_bytes));
  ASSERT_EQ(::send(raw.socket->fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(bytes.size()));
  // The rest of the handshake over the socket itself.
  BIO* socket_bio = BIO_new_socket(raw.socket->fd(), BIO_NOCLOSE);
  SSL_set_bio(ssl, socket_bio, socket_bio);
  EXPECT_EQ(SSL_connect(ssl), 1) << "the server did not complete the TLS handshake";
  SSL_free(ssl);
  SSL_CTX_free(ctx);
}

TEST_F(SqlServerTest, TextResultSets) {
  Client client(server_.port(), "root", "");
  ASSERT_TRUE(client.connected) << client.error;
  ASSERT_EQ(mysql_query(client.mysql, "SELECT 'x', NULL, -7, 1.25"), 0);
  MYSQL_RES* result = mysql_store_result(client.mysql);
  ASSERT_NE(result, nullptr);
  ASSERT_EQ(mysql_num_fields(result), 4u);
  MYSQL_FIELD* fields = mysql_fetch_fields(result);
  EXPECT_EQ(fields[0].type, MYSQL_TYPE_VAR_STRING);
  EXPECT_EQ(fields[1].type, MYSQL_TYPE_NULL);
  EXPECT_EQ(fields[2].type, MYSQL_TYPE_LONGLONG);
  EXPECT_EQ(fields[3].type, MYSQL_TYPE_NEWDECIMAL);
  MYSQL_ROW row = mysql_fetch_row(result);
  ASSERT_NE(row, nullptr);
  EXPECT_STREQ(row[0], "x");
  EXPECT_EQ(row[1], nullptr);
  EXPECT_STREQ(row[2], "-7");
  EXPECT_STREQ(row[3], "1.25");
  EXPECT_EQ(mysql_fetch_row(result), nullptr);
  mysql_free_result(result);

  // Many rows: several flushes of the output buffer.
  ASSERT_EQ(mysql_query(client.mysql, "SELECT ROWS(5000)"), 0);
  result = mysql_store_result(client.mysql);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(mysql_num_rows(result), 5000u);
  mysql_data_seek(result, 4999);
  row = mysql_fetch_row(result);
  EXPECT_STREQ(row[0], "4999");
  EXPECT_STREQ(row[1], "row 4999");
  mysql_free_result(result);

  // OK packets.
  ASSERT_EQ(mysql_query(client.mysql, "INSERT INTO t VALUES (1)"), 0);
  EXPECT_EQ(mysql_affected_rows(client.mysql), 1u);
  EXPECT_EQ(mysql_insert_id(client.mysql), 42u);
  ASSERT_EQ(mysql_query(client.mysql, "UPDATE t SET a = 1"), 0);
  EXPECT_EQ(mysql_affected_rows(client.mysql), 3u);
  EXPECT_EQ(mysql_warning_count(client.mysql), 1u);
  EXPECT_STREQ(mysql_info(client.mysql), "Rows matched: 3  Changed: 3  Warnings: 1");

  // Errors with SQLSTATE; the connection carries on.
  EXPECT_NE(mysql_query(client.mysql, "SELECT * FROM missing"), 0);
  EXPECT_EQ(mysql_errno(client.mysql), 1146u);
  EXPECT_STREQ(mysql_sqlstate(client.mysql), "42S02");
  EXPECT_NE(mysql_query(client.mysql, "GARBAGE"), 0);
  EXPECT_EQ(mysql_errno(client.mysql), 1064u);
  EXPECT_NE(mysql_query(client.mysql, "THROW"), 0);
  EXPECT_EQ(mysql_errno(client.mysql), 1105u);
  EXPECT_STREQ(mysql_error(client.mysql), "echo handler exploded");
  EXPECT_EQ(client.scalar("SELECT 'still alive'"), "still alive");
}

TEST_F(SqlServerTest, SessionStatePingInitDbAndAutocommit) {
  Client client(server_.port(), "root", "", ConnectOptions{.database = "db1"});
  ASSERT_TRUE(client.connected) << client.error;
  EXPECT_EQ(client.scalar("SELECT DATABASE()"), "db1");
  EXPECT_EQ(mysql_ping(client.mysql), 0);
  EXPECT_EQ(mysql_select_db(client.mysql, "db2"), 0);
  EXPECT_EQ(client.scalar("SELECT DATABASE()"), "db2");
  EXPECT_NE(mysql_select_db(client.mysql, "nosuchdb"), 0);
  EXPECT_EQ(mysql_errno(client.mysql), 1049u);
  EXPECT_EQ(client.scalar("SELECT DATABASE()"), "db2");
  ASSERT_EQ(mysql_query(client.mysql, "USE db3"), 0);
  EXPECT_EQ(client.scalar("SELECT DATABASE()"), "db3");

  EXPECT_TRUE(client.mysql->server_status & SERVER_STATUS_AUTOCOMMIT);
  ASSERT_EQ(mysql_autocommit(client.mysql, 0), 0);
  EXPECT_FALSE(client.mysql->server_status & SERVER_STATUS_AUTOCOMMIT);
  ASSERT_EQ(mysql_query(client.mysql, "BEGIN"), 0);
  EXPECT_TRUE(client.mysql->server_status & SERVER_STATUS_IN_TRANS);
  ASSERT_EQ(mysql_commit(client.mysql), 0);
  EXPECT_FALSE(client.mysql->server_status & SERVER_STATUS_IN_TRANS);

  Client bad_db(server_.port(), "root", "", ConnectOptions{.database = "nosuchdb"});
  EXPECT_FALSE(bad_db.connected);
  EXPECT_EQ(bad_db.error_code, 1049u);
}

TEST_F(SqlServerTest, FieldList) {
  Client client(server_.port(), "root", "", ConnectOptions{.database = "db"});
  ASSERT_TRUE(client.connected) << client.error;
  MYSQL_RES* result = mysql_list_fields(client.mysql, "t1", nullptr);
  ASSERT_NE(result, nullptr) << mysql_error(client.mysql);
  ASSERT_EQ(mysql_num_fields(result), 2u);
  EXPECT_STREQ(mysql_fetch_fields(result)[0].name, "id");
  EXPECT_STREQ(mysql_fetch_fields(result)[1].name, "name");
  mysql_free_result(result);
  EXPECT_EQ(mysql_list_fields(client.mysql, "nope", nullptr), nullptr);
  EXPECT_EQ(mysql_errno(client.mysql), 1146u);
  EXPECT_EQ(client.scalar("SELECT 5"), "5");
}

TEST_F(SqlServerTest, MultiStatements) {
  Client client(server_.port(), "root", "", ConnectOptions{.flags = CLIENT_MULTI_STATEMENTS});
  ASSERT_TRUE(client.connected) << client.error;
  ASSERT_EQ(mysql_query(client.mysql, "SELECT 1; SELECT 'a', 'b'; INSERT INTO t VALUES (2)"), 0);
  MYSQL_RES* result = mysql_store_result(client.mysql);
  ASSERT_NE(result, nullptr);
  EXPECT_STREQ(mysql_fetch_row(result)[0], "1");
  mysql_free_result(result);
  EXPECT_TRUE(mysql_more_results(client.mysql));
  ASSERT_EQ(mysql_next_result(client.mysql), 0);
  result = mysql_store_result(client.mysql);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(mysql_num_fields(result), 2u);
  EXPECT_STREQ(mysql_fetch_row(result)[1], "b");
  mysql_free_result(result);
  ASSERT_EQ(mysql_next_result(client.mysql), 0);
  EXPECT_EQ(mysql_store_result(client.mysql), nullptr);
  EXPECT_EQ(mysql_affected_rows(client.mysql), 1u);
  EXPECT_EQ(mysql_next_result(client.mysql), -1);  // no more

  // An error stops the batch.
  ASSERT_EQ(mysql_query(client.mysql, "SELECT 1; SELECT * FROM missing; SELECT 2"), 0);
  mysql_free_result(mysql_store_result(client.mysql));
  EXPECT_GT(mysql_next_result(client.mysql), 0);
  EXPECT_EQ(mysql_errno(client.mysql), 1146u);
  EXPECT_EQ(client.scalar("SELECT 3"), "3");

  // Without CLIENT_MULTI_STATEMENTS the text is one (bad) statement...
  Client single(server_.port(), "root", "");
  ASSERT_TRUE(single.connected);
  EXPECT_EQ(single.scalar("SELECT 1; SELECT 2"), "ERR 1064");
  // ... until the client turns the option on.
  ASSERT_EQ(mysql_set_server_option(single.mysql, MYSQL_OPTION_MULTI_STATEMENTS_ON), 0);
  ASSERT_EQ(mysql_query(single.mysql, "SELECT 1; SELECT 2"), 0);
  mysql_free_result(mysql_store_result(single.mysql));
  ASSERT_EQ(mysql_next_result(single.mysql), 0);
  result = mysql_store_result(single.mysql);
  EXPECT_STREQ(mysql_fetch_row(result)[0], "2");
  mysql_free_result(result);
}

// Every parameter type through mysql_stmt_*: the handler echoes each parameter back
// as a column of the bound type, decoded here from the binary result row.
TEST_F(SqlServerTest, PreparedStatementsEchoEveryParameterType) {
  Client client(server_.port(), "root", "");
  ASSERT_TRUE(client.connected) << client.error;
  constexpr int kParams = 20;
  std::string sql = "SELECT ?";
  for (int i = 1; i < kParams; ++i) sql += ", ?";
  MYSQL_STMT* stmt = mysql_stmt_init(client.mysql);
  ASSERT_EQ(mysql_stmt_prepare(stmt, sql.data(), sql.size()), 0) << mysql_stmt_error(stmt);
  ASSERT_EQ(mysql_stmt_param_count(stmt), static_cast<unsigned long>(kParams));

  signed char tiny = -100;
  unsigned char utiny = 250;
  short small = -30000;
  unsigned short usmall = 65000;
  int int32 = -2000000000;
  unsigned int uint32 = 4000000000u;
  long long int64 = -9000000000000000000ll;
  unsigned long long uint64 = 18000000000000000000ull;
  float f = 1.5f;
  double d = -2.75e100;
  char decimal[] = "12345.678";
  char str[] = "hello";
  char varstr[] = "a 'quoted' string";
  char blob[] = {'\0', '\1', '\2', '\xff'};
  MYSQL_TIME date{}, datetime{}, timestamp{}, time{};
  date.year = 2024;
  date.month = 2;
  date.day = 29;
  date.time_type = MYSQL_TIMESTAMP_DATE;
  datetime.year = 1999;
  datetime.month = 12;
  datetime.day = 31;
  datetime.hour = 23;
  datetime.minute = 59;
  datetime.second = 58;
  datetime.second_part = 123456;
  datetime.time_type = MYSQL_TIMESTAMP_DATETIME;
  timestamp = datetime;
  timestamp.second_part = 0;
  time.neg = 1;
  time.day = 0;
  time.hour = 100;
  time.minute = 2;
  time.second = 3;
  time.time_type = MYSQL_TIMESTAMP_TIME;
  my_bool is_null = 1;
  short year = 2024;

  MYSQL_BIND params[kParams];
  std::memset(params, 0, sizeof params);
  auto bind = [&](int i, enum_field_types type, void* buffer, unsigned long length,
                  bool is_unsigned) {
    params[i].buffer_type = type;
    params[i].buffer = buffer;
    params[i].buffer_length = length;
    params[i].is_unsigned = is_unsigned;
  };
  unsigned long decimal_length = std::strlen(decimal), str_length = std::strlen(str),
                varstr_length = std::strlen(varstr), blob_length = sizeof blob;
  bind(0, MYSQL_TYPE_TINY, &tiny, 0, false);
  bind(1, MYSQL_TYPE_TINY, &utiny, 0, true);
  bind(2, MYSQL_TYPE_SHORT, &small, 0, false);
  bind(3, MYSQL_TYPE_SHORT, &usmall, 0, true);
  bind(4, MYSQL_TYPE_LONG, &int32, 0, false);
  bind(5, MYSQL_TYPE_LONG, &uint32, 0, true);
  bind(6, MYSQL_TYPE_LONGLONG, &int64, 0, false);
  bind(7, MYSQL_TYPE_LONGLONG, &uint64, 0, true);
  bind(8, MYSQL_TYPE_FLOAT, &f, 0, false);
  bind(9, MYSQL_TYPE_DOUBLE, &d, 0, false);
  bind(10, MYSQL_TYPE_NEWDECIMAL, decimal, decimal_length, false);
  params[10].length = &decimal_length;
  bind(11, MYSQL_TYPE_STRING, str, str_length, false);
  params[11].length = &str_length;
  bind(12, MYSQL_TYPE_VAR_STRING, varstr, varstr_length, false);
  params[12].length = &varstr_length;
  bind(13, MYSQL_TYPE_BLOB, blob, blob_length, false);
  params[13].length = &blob_length;
  bind(14, MYSQL_TYPE_DATE, &date, sizeof date, false);
  bind(15, MYSQL_TYPE_DATETIME, &datetime, sizeof datetime, false);
  bind(16, MYSQL_TYPE_TIMESTAMP, &timestamp, sizeof timestamp, false);
  bind(17, MYSQL_TYPE_TIME, &time, sizeof time, false);
  bind(18, MYSQL_TYPE_LONG, &int32, 0, false);
  params[18].is_null = &is_null;
  bind(19, MYSQL_TYPE_YEAR, &year, 0, false);
  ASSERT_EQ(mysql_stmt_bind_param(stmt, params), 0) << mysql_stmt_error(stmt);

  for (int round = 0; round < 2; ++round) {
    // The second round changes values only: libmariadb then omits the types.
    if (round == 1) {
      int32 = 17;
      tiny = 5;
      std::strcpy(str, "world");
    }
    ASSERT_EQ(mysql_stmt_execute(stmt), 0) << mysql_stmt_error(stmt);
    ASSERT_EQ(mysql_stmt_field_count(stmt), static_cast<unsigned>(kParams));
    MYSQL_RES* meta = mysql_stmt_result_metadata(stmt);
    ASSERT_NE(meta, nullptr);
    MYSQL_FIELD* fields = mysql_fetch_fields(meta);
    EXPECT_EQ(fields[0].type, MYSQL_TYPE_TINY);
    EXPECT_EQ(fields[7].type, MYSQL_TYPE_LONGLONG);
    EXPECT_TRUE(fields[7].flags & UNSIGNED_FLAG);
    EXPECT_EQ(fields[17].type, MYSQL_TYPE_TIME);
    mysql_free_result(meta);

    signed char o_tiny;
    unsigned char o_utiny;
    short o_small;
    unsigned short o_usmall;
    int o_int32;
    unsigned int o_uint32;
    long long o_int64;
    unsigned long long o_uint64;
    float o_f;
    double o_d;
    char o_decimal[64], o_str[64], o_varstr[64], o_blob[64];
    MYSQL_TIME o_date, o_datetime, o_timestamp, o_time;
    int o_null_int;
    short o_year;
    unsigned long lengths[kParams];
    my_bool nulls[kParams];
    MYSQL_BIND out[kParams];
    std::memset(out, 0, sizeof out);
    void* buffers[kParams] = {&o_tiny,     &o_utiny,     &o_small,  &o_usmall,   &o_int32,
                              &o_uint32,   &o_int64,     &o_uint64, &o_f,        &o_d,
                              o_decimal,   o_str,        o_varstr,  o_blob,      &o_date,
                              &o_datetime, &o_timestamp, &o_time,   &o_null_int, &o_year};
    for (int i = 0; i < kParams; ++i) {
      out[i].buffer_type = params[i].buffer_type;
      out[i].buffer = buffers[i];
      out[i].buffer_length = 64;
      out[i].is_unsigned = params[i].is_unsigned;
      out[i].length = &lengths[i];
      out[i].is_null = &nulls[i];
    }
    out[10].buffer_type = MYSQL_TYPE_STRING;
    ASSERT_EQ(mysql_stmt_bind_result(stmt, out), 0) << mysql_stmt_error(stmt);
    ASSERT_EQ(mysql_stmt_fetch(stmt), 0) << mysql_stmt_error(stmt);
    EXPECT_EQ(o_tiny, tiny);
    EXPECT_EQ(o_utiny, utiny);
    EXPECT_EQ(o_small, small);
    EXPECT_EQ(o_usmall, usmall);
    EXPECT_EQ(o_int32, int32);
    EXPECT_EQ(o_uint32, uint32);
    EXPECT_EQ(o_int64, int64);
    EXPECT_EQ(o_uint64, uint64);
    EXPECT_EQ(o_f, f);
    EXPECT_EQ(o_d, d);
    EXPECT_EQ(std::string(o_decimal, lengths[10]), decimal);
    EXPECT_EQ(std::string(o_str, lengths[11]), str);
    EXPECT_EQ(std::string(o_varstr, lengths[12]), varstr);
    EXPECT_EQ(std::string(o_blob, lengths[13]), std::string(blob, sizeof blob));
    EXPECT_EQ(o_date.year, 2024u);
    EXPECT_EQ(o_date.month, 2u);
    EXPECT_EQ(o_date.day, 29u);
    EXPECT_EQ(o_datetime.hour, 23u);
    EXPECT_EQ(o_datetime.second, 58u);
    EXPECT_EQ(o_datetime.second_part, 123456u);
    EXPECT_EQ(o_timestamp.minute, 59u);
    EXPECT_EQ(o_timestamp.second_part, 0u);
    EXPECT_TRUE(o_time.neg);
    EXPECT_EQ(o_time.hour, 100u);
    EXPECT_EQ(o_time.minute, 2u);
    EXPECT_EQ(o_time.second, 3u);
    EXPECT_TRUE(nulls[18]);
    EXPECT_EQ(o_year, 2024);
    for (int i = 0; i < kParams; ++i) {
      if (i != 18) {
        EXPECT_FALSE(nulls[i]) << i;
      }
    }
    EXPECT_EQ(mysql_stmt_fetch(stmt), MYSQL_NO_DATA);
    mysql_stmt_free_result(stmt);
  }
  EXPECT_EQ(mysql_stmt_close(stmt), 0);
  EXPECT_EQ(client.scalar("SELECT 'after'"), "after");
}

TEST_F(SqlServerTest, PreparedStatementsLongDataResetCloseAndOk) {
  Client client(server_.port(), "root", "");
  ASSERT_TRUE(client.connected) << client.error;
  MYSQL_STMT* stmt = mysql_stmt_init(client.mysql);
  ASSERT_EQ(mysql_stmt_prepare(stmt, "SELECT ?", 8), 0);
  MYSQL_BIND param{};
  param.buffer_type = MYSQL_TYPE_BLOB;
  ASSERT_EQ(mysql_stmt_bind_param(stmt, &param), 0);
  std::string expected;
  for (int chunk = 0; chunk < 3; ++chunk) {
    std::string piece(100000, static_cast<char>('a' + chunk));
    expected += piece;
    ASSERT_EQ(mysql_stmt_send_long_data(stmt, 0, piece.data(), piece.size()), 0);
  }
  ASSERT_EQ(mysql_stmt_execute(stmt), 0) << mysql_stmt_error(stmt);
  std::string buffer(expected.size() + 10, '\0');
  unsigned long length = 0;
  MYSQL_BIND out{};
  out.buffer_type = MYSQL_TYPE_BLOB;
  out.buffer = buffer.data();
  out.buffer_length = buffer.size();
  out.length = &length;
  ASSERT_EQ(mysql_stmt_bind_result(stmt, &out), 0);
  ASSERT_EQ(mysql_stmt_fetch(stmt), 0);
  EXPECT_EQ(length, expected.size());
  EXPECT_TRUE(buffer.compare(0, length, expected) == 0);
  mysql_stmt_free_result(stmt);
  EXPECT_EQ(mysql_stmt_reset(stmt), 0) << mysql_stmt_error(stmt);
  EXPECT_EQ(mysql_stmt_close(stmt), 0);

  // A statement without result set answers OK with affected rows.
  MYSQL_STMT* insert = mysql_stmt_init(client.mysql);
  ASSERT_EQ(mysql_stmt_prepare(insert, "INSERT INTO t VALUES (?, ?)", 27), 0);
  EXPECT_EQ(mysql_stmt_field_count(insert), 0u);
  long long a = 1, b = 2;
  MYSQL_BIND two[2] = {};
  two[0].buffer_type = two[1].buffer_type = MYSQL_TYPE_LONGLONG;
  two[0].buffer = &a;
  two[1].buffer = &b;
  ASSERT_EQ(mysql_stmt_bind_param(insert, two), 0);
  ASSERT_EQ(mysql_stmt_execute(insert), 0) << mysql_stmt_error(insert);
  EXPECT_EQ(mysql_stmt_affected_rows(insert), 2u);
  EXPECT_EQ(mysql_stmt_close(insert), 0);

  // A statement without markers runs as a query.
  MYSQL_STMT* plain = mysql_stmt_init(client.mysql);
  ASSERT_EQ(mysql_stmt_prepare(plain, "SELECT ROWS(10)", 15), 0);
  EXPECT_EQ(mysql_stmt_field_count(plain), 2u);
  ASSERT_EQ(mysql_stmt_execute(plain), 0);
  ASSERT_EQ(mysql_stmt_store_result(plain), 0);
  EXPECT_EQ(mysql_stmt_num_rows(plain), 10u);
  EXPECT_EQ(mysql_stmt_close(plain), 0);

  // Prepare errors come back as errors.
  MYSQL_STMT* bad = mysql_stmt_init(client.mysql);
  EXPECT_NE(mysql_stmt_prepare(bad, "DELETE ?", 8), 0);
  EXPECT_EQ(mysql_stmt_errno(bad), 1064u);
  mysql_stmt_close(bad);
  EXPECT_EQ(client.scalar("SELECT 1"), "1");
  EXPECT_EQ(server_.handler.open_statements(), 0u);
}

TEST_F(SqlServerTest, LargePacketsAreSplitAndJoined) {
  Client client(server_.port(), "root", "", ConnectOptions{.max_allowed_packet = 64ul << 20});
  ASSERT_TRUE(client.connected) << client.error;
  // 20 MiB one way (query) and back (row): both cross the 2^24-1 split.
  std::string big(20u << 20, 'b');
  for (size_t i = 0; i < big.size(); i += 4099) big[i] = static_cast<char>('a' + i % 26);
  std::string sql = "SELECT '" + big + "'";
  ASSERT_EQ(mysql_real_query(client.mysql, sql.data(), sql.size()), 0) << mysql_error(client.mysql);
  MYSQL_RES* result = mysql_store_result(client.mysql);
  ASSERT_NE(result, nullptr) << mysql_error(client.mysql);
  MYSQL_ROW row = mysql_fetch_row(result);
  unsigned long* lengths = mysql_fetch_lengths(result);
  ASSERT_EQ(lengths[0], big.size());
  EXPECT_TRUE(std::memcmp(row[0], big.data(), big.size()) == 0);
  mysql_free_result(result);
  // Exactly 2^24-1 payload bytes: the split then ends with an empty packet.
  std::string exact = "SELECT '" + std::string((1u << 24) - 1 - 1 - 9, 'e') + "'";
  ASSERT_EQ(exact.size() + 1, (1u << 24) - 1);
  ASSERT_EQ(mysql_real_query(client.mysql, exact.data(), exact.size()), 0)
      << mysql_error(client.mysql);
  result = mysql_store_result(client.mysql);
  ASSERT_NE(result, nullptr);
  mysql_free_result(result);
  EXPECT_EQ(client.scalar("SELECT 1"), "1");
}

TEST_F(SqlServerTest, MaxAllowedPacketIsEnforced) {
  Client client(server_.port(), "root", "", ConnectOptions{.max_allowed_packet = 128ul << 20});
  ASSERT_TRUE(client.connected) << client.error;
  std::string sql = "SELECT '" + std::string(33u << 20, 'x') + "'";
  EXPECT_NE(mysql_real_query(client.mysql, sql.data(), sql.size()), 0);
  EXPECT_EQ(mysql_errno(client.mysql), 1153u) << mysql_error(client.mysql);
  EXPECT_STREQ(mysql_error(client.mysql), "Got a packet bigger than 'max_allowed_packet' bytes");
  // The server closed that connection; others are unaffected.
  Client other(server_.port(), "root", "");
  ASSERT_TRUE(other.connected);
  EXPECT_EQ(other.scalar("SELECT 1"), "1");
}

TEST_F(SqlServerTest, KillEndsAnotherConnection) {
  Client victim(server_.port(), "root", "");
  Client killer(server_.port(), "root", "");
  ASSERT_TRUE(victim.connected && killer.connected);
  unsigned long victim_id = mysql_thread_id(victim.mysql);
  uint64_t disconnects_before = server_.handler.disconnects();
  std::thread sleeper([&] { EXPECT_NE(mysql_query(victim.mysql, "SLEEP"), 0); });
  // Give the victim a moment to be inside the command; the kill works either way.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(mysql_query(killer.mysql, ("KILL " + std::to_string(victim_id)).c_str()), 0);
  sleeper.join();
  EXPECT_NE(mysql_query(victim.mysql, "SELECT 1"), 0);
  EXPECT_EQ(killer.scalar("KILL 999999"), "ERR 1094");
  EXPECT_EQ(killer.scalar("SELECT 1"), "1");
  for (int i = 0; i < 500 && server_.handler.disconnects() == disconnects_before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(server_.handler.disconnects(), disconnects_before);
}

TEST(SqlServerLimitsTest, MaxConnections) {
  SqlServerOptions options;
  options.max_connections = 2;
  TestServer server(options, /*with_tls=*/false);
  Client a(server.port(), "root", "");
  Client b(server.port(), "root", "");
  ASSERT_TRUE(a.connected && b.connected);
  Client c(server.port(), "root", "");
  EXPECT_FALSE(c.connected);
  EXPECT_EQ(c.error_code, 1040u) << c.error;
  mysql_close(a.mysql);
  a.mysql = mysql_init(nullptr);
  for (int i = 0; i < 500 && server.server->connection_count() > 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Client d(server.port(), "root", "");
  EXPECT_TRUE(d.connected) << d.error;
}

TEST(SqlServerLimitsTest, NoTlsConfiguredRefusesTlsClients) {
  TestServer server(SqlServerOptions{}, /*with_tls=*/false);
  // CLIENT_SSL is not offered, so no client gets TLS (the server-side refusal of an
  // SSLRequest is in session_fuzz_test.cc).
  Client tls(server.port(), "root", "", ConnectOptions{.tls = true});
  if (tls.connected) {
    EXPECT_EQ(mysql_get_ssl_cipher(tls.mysql), nullptr);
  }
  Client plain(server.port(), "root", "");
  EXPECT_TRUE(plain.connected) << plain.error;
}

TEST(SqlServerLimitsTest, StopEndsOpenSessions) {
  auto server = std::make_unique<TestServer>();
  Client client(server->port(), "root", "");
  ASSERT_TRUE(client.connected);
  server->server->stop();
  EXPECT_NE(mysql_query(client.mysql, "SELECT 1"), 0);
  EXPECT_EQ(server->server->connection_count(), 0u);
}

#ifdef DUO_MARIADB_CLI
TEST_F(SqlServerTest, MariadbCliBatchMode) {
  std::string command = std::string(DUO_MARIADB_CLI) + " --no-defaults -h127.0.0.1 -P" +
                        std::to_string(server_.port()) + " -uroot --batch -e 'select 1' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  int status = ::pclose(pipe);
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output, "1\n1\n");
}
#endif

// --- Unix socket -----------------------------------------------------------------------

namespace {

// A fresh directory for sockets, removed with the object.
struct SocketDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("duo_sock_" + std::to_string(::getpid()) + "_" +
                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  SocketDir() { std::filesystem::remove_all(path); }
  ~SocketDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

SqlServerOptions with_socket(const std::string& socket_path) {
  SqlServerOptions o;
  o.socket_path = socket_path;
  return o;
}

// libmariadb over the Unix socket: no host, no port.
MYSQL* connect_over_socket(const std::string& path, const char* user, const char* password) {
  MYSQL* mysql = mysql_init(nullptr);
  unsigned timeout_s = 30;
  mysql_options(mysql, MYSQL_OPT_CONNECT_TIMEOUT, &timeout_s);
  if (mysql_real_connect(mysql, nullptr, user, password, nullptr, 0, path.c_str(), 0) ==
      nullptr) {
    ADD_FAILURE() << "socket connect as " << user << ": " << mysql_error(mysql);
    mysql_close(mysql);
    return nullptr;
  }
  return mysql;
}

}  // namespace

TEST(SqlServerUnixSocketTest, LibmariadbLogsInOverTheSocketWithBothPlugins) {
  SocketDir dir;
  const std::string path = (dir.path / "run" / "mysqld.sock").string();  // "run" is created
  TestServer server(with_socket(path));
  ASSERT_EQ(server.server->socket_path(), path);
  MYSQL* native = connect_over_socket(path, "native_user", "npass");
  ASSERT_NE(native, nullptr);
  EXPECT_NE(std::string(mysql_get_host_info(native)).find("socket"), std::string::npos)
      << mysql_get_host_info(native);
  ASSERT_EQ(mysql_query(native, "SELECT 7"), 0);
  MYSQL_RES* result = mysql_store_result(native);
  ASSERT_NE(result, nullptr);
  MYSQL_ROW row = mysql_fetch_row(result);
  ASSERT_NE(row, nullptr);
  EXPECT_STREQ(row[0], "7");
  mysql_free_result(result);
  mysql_close(native);
  // caching_sha2_password with a cold cache and no TLS: the socket is a secure
  // transport, so the full authentication (clear password) is allowed, as in MySQL.
  MYSQL* sha2 = connect_over_socket(path, "sha2_user", "spass");
  ASSERT_NE(sha2, nullptr);
  EXPECT_EQ(mysql_get_ssl_cipher(sha2), nullptr);
  mysql_close(sha2);
  // A wrong password is refused over the socket too, naming the host localhost.
  MYSQL* wrong = mysql_init(nullptr);
  EXPECT_EQ(mysql_real_connect(wrong, nullptr, "native_user", "nope", nullptr, 0, path.c_str(), 0),
            nullptr);
  EXPECT_EQ(mysql_errno(wrong), 1045u);
  EXPECT_EQ(std::string(mysql_error(wrong)),
            "Access denied for user 'native_user'@'localhost' (using password: YES)");
  mysql_close(wrong);
  // TCP still serves.
  Client tcp(server.port(), "native_user", "npass");
  EXPECT_TRUE(tcp.connected) << tcp.error;
  server.server->stop();
  EXPECT_FALSE(std::filesystem::exists(path)) << "the socket file outlived the server";
}

TEST(SqlServerUnixSocketTest, StaleSocketIsTakenOverLiveOneIsLeftAlone) {
  SocketDir dir;
  std::filesystem::create_directories(dir.path);
  const std::string path = (dir.path / "mysqld.sock").string();
  // A socket file whose server is gone (bound, never listened, closed).
  {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    ::close(fd);
    ASSERT_TRUE(std::filesystem::exists(path));
  }
  TestServer first(with_socket(path));
  EXPECT_EQ(first.server->socket_path(), path);
  // The path is in use now: a second server serves TCP only and leaves it alone.
  TestServer second(with_socket(path));
  EXPECT_EQ(second.server->socket_path(), "");
  Client tcp(second.port(), "root", "");
  EXPECT_TRUE(tcp.connected) << tcp.error;
  second.server->stop();
  ASSERT_TRUE(std::filesystem::exists(path));
  MYSQL* still = connect_over_socket(path, "root", "");
  ASSERT_NE(still, nullptr);
  mysql_close(still);
}

TEST(SqlServerUnixSocketTest, UnusablePathsLeaveTcpServing) {
  SocketDir dir;
  std::filesystem::create_directories(dir.path);
  // Longer than sun_path holds.
  TestServer long_path(with_socket((dir.path / std::string(120, 'x')).string()));
  EXPECT_EQ(long_path.server->socket_path(), "");
  Client a(long_path.port(), "root", "");
  EXPECT_TRUE(a.connected) << a.error;
  // A regular file in the way is never removed.
  const std::filesystem::path file = dir.path / "not_a_socket";
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  TestServer blocked(with_socket(file.string()));
  EXPECT_EQ(blocked.server->socket_path(), "");
  EXPECT_TRUE(std::filesystem::is_regular_file(file));
  Client b(blocked.port(), "root", "");
  EXPECT_TRUE(b.connected) << b.error;
}

// --- Connection character set ----------------------------------------------------------

// Text the client sends is converted from its character set to utf8mb4, results back to
// it, and text columns are described in it (the EchoQueryHandler returns the literal it
// was given, as utf8mb4).
TEST_F(SqlServerTest, ConnectionCharacterSetConvertsTextBothWays) {
  // The character set goes in the handshake (the EchoQueryHandler knows no SET NAMES).
  struct Connection {
    MYSQL* mysql = mysql_init(nullptr);
    ~Connection() { mysql_close(mysql); }
  };
  auto connect_with = [&](const char* charset) {
    auto client = std::make_unique<Connection>();
    mysql_options(client->mysql, MYSQL_SET_CHARSET_NAME, charset);
    EXPECT_NE(mysql_real_connect(client->mysql, "127.0.0.1", "root", "", nullptr,
                                 server_.port(), nullptr, 0),
              nullptr)
        << mysql_error(client->mysql);
    return client;
  };
  auto first_cell = [](Connection& client, const std::string& sql, unsigned* charsetnr) {
    EXPECT_EQ(mysql_real_query(client.mysql, sql.data(), sql.size()), 0)
        << mysql_error(client.mysql);
    MYSQL_RES* result = mysql_store_result(client.mysql);
    if (result == nullptr) return std::string("NO RESULT");
    *charsetnr = mysql_fetch_field(result)->charsetnr;
    MYSQL_ROW row = mysql_fetch_row(result);
    unsigned long* lengths = mysql_fetch_lengths(result);
    std::string out(row[0], lengths[0]);
    mysql_free_result(result);
    return out;
  };
  unsigned charsetnr = 0;
  // utf8mb4 (the default): nothing converted.
  auto utf8mb4 = connect_with("utf8mb4");
  EXPECT_EQ(first_cell(*utf8mb4, "SELECT 'caf\xc3\xa9 \xf0\x9f\x98\x80'", &charsetnr),
            "caf\xc3\xa9 \xf0\x9f\x98\x80");
  // ascii: a byte above 0x7F the client sends is no ASCII character: '?'.
  auto ascii = connect_with("ascii");
  EXPECT_EQ(first_cell(*ascii, "SELECT 'caf\xe9'", &charsetnr), "caf?");
  EXPECT_EQ(charsetnr, 11u);
  // utf8mb3: the 4-byte character cannot be sent back: '?'.
  auto utf8mb3 = connect_with("utf8mb3");
  EXPECT_EQ(first_cell(*utf8mb3, "SELECT 'caf\xc3\xa9 \xf0\x9f\x98\x80'", &charsetnr),
            "caf\xc3\xa9 ?");
  EXPECT_EQ(charsetnr, 33u);
  // latin1 (cp1252): 0xE9 and 0x80 travel as U+00E9 and U+20AC and come back.
  auto latin1 = connect_with("latin1");
  EXPECT_EQ(first_cell(*latin1, "SELECT 'caf\xe9 \x80'", &charsetnr), "caf\xe9 \x80");
  EXPECT_EQ(charsetnr, 8u);
  // Numbers stay binary (63).
  first_cell(*latin1, "SELECT 42", &charsetnr);
  EXPECT_EQ(charsetnr, 63u);
}

}  // namespace
}  // namespace duo::sql::server
