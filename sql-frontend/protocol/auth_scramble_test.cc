// Tests of the authentication scrambles against vectors computed independently
// (Python hashlib) and MySQL's documented PASSWORD('password') value.
#include "sql-frontend/protocol/auth_scramble.h"

#include <gtest/gtest.h>

namespace duo::sql::protocol {
namespace {

constexpr const char* kNonce = "abcdefghijklmnopqrst";

TEST(AuthScrambleTest, NativeStage2MatchesMysqlPasswordFunction) {
  // MySQL: SELECT PASSWORD('password') = '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'.
  EXPECT_EQ(to_hex(native_password_stage2("password")), "2470c0c06dee42fd1618bb99005adca2ec9d1e19");
  EXPECT_EQ(native_password_stage2(""), "");
}

TEST(AuthScrambleTest, NativeScrambleKnownVector) {
  EXPECT_EQ(to_hex(native_password_scramble("secret", kNonce)),
            "8817c50fa779daef010ee7577825b0847df9842e");
}

TEST(AuthScrambleTest, NativeVerify) {
  std::string stage2 = native_password_stage2("secret");
  EXPECT_TRUE(native_password_verify(native_password_scramble("secret", kNonce), kNonce, stage2));
  EXPECT_FALSE(native_password_verify(native_password_scramble("Secret", kNonce), kNonce, stage2));
  EXPECT_FALSE(native_password_verify(native_password_scramble("secret", "abcdefghijklmnopqrsX"),
                                      kNonce, stage2));
  EXPECT_FALSE(native_password_verify("", kNonce, stage2));
  EXPECT_FALSE(native_password_verify("short", kNonce, stage2));
  // A password-less account accepts only the empty answer.
  EXPECT_TRUE(native_password_verify("", kNonce, ""));
  EXPECT_FALSE(native_password_verify(native_password_scramble("x", kNonce), kNonce, ""));
}

TEST(AuthScrambleTest, CachingSha2KnownVectors) {
  EXPECT_EQ(to_hex(caching_sha2_double_digest("secret")),
            "3881219d087dd9c634373fd33dfa33a2cb6bfc6c520b64b8bb60ef2ceb534ae7");
  EXPECT_EQ(to_hex(caching_sha2_scramble("secret", kNonce)),
            "c76e2898612a4cf042c77fa8c4702c4c64c0c2c557c53c4d75595aaa6abae809");
}

TEST(AuthScrambleTest, CachingSha2FastVerify) {
  std::string cached = caching_sha2_double_digest("secret");
  EXPECT_TRUE(caching_sha2_fast_verify(caching_sha2_scramble("secret", kNonce), kNonce, cached));
  EXPECT_FALSE(caching_sha2_fast_verify(caching_sha2_scramble("secreT", kNonce), kNonce, cached));
  EXPECT_FALSE(caching_sha2_fast_verify(std::string(31, 'a'), kNonce, cached));
}

TEST(AuthScrambleTest, StoredHashIsSaltedAndVerifies) {
  std::string a = caching_sha2_stored_hash("secret", "salt-one-16bytes");
  std::string b = caching_sha2_stored_hash("secret", "salt-two-16bytes");
  EXPECT_EQ(a.size(), 48u);
  EXPECT_NE(a, b);
  EXPECT_TRUE(caching_sha2_stored_verify("secret", a));
  EXPECT_TRUE(caching_sha2_stored_verify("secret", b));
  EXPECT_FALSE(caching_sha2_stored_verify("secret2", a));
  EXPECT_FALSE(caching_sha2_stored_verify("secret", a.substr(1)));
}

TEST(AuthScrambleTest, NonceIsPrintableWithoutDollar) {
  for (int i = 0; i < 100; ++i) {
    std::string nonce = generate_nonce();
    ASSERT_EQ(nonce.size(), 20u);
    for (char c : nonce) {
      EXPECT_GE(c, 0x21);
      EXPECT_LE(c, 0x7e);
      EXPECT_NE(c, '$');
    }
  }
  EXPECT_NE(generate_nonce(), generate_nonce());
}

}  // namespace
}  // namespace duo::sql::protocol
