// Link hello: codec round trip and partial parsing, malformed hellos, and the policy
// (version, cluster secret, node ids).
#include "ndb-kernel/transport/handshake.h"

#include <gtest/gtest.h>

#include <cstring>

#include "ndb-kernel/transport/wire_bytes.h"

namespace duo::transport {
namespace {

Hello sample_hello(std::string secret = "cluster-42") {
  Hello hello;
  hello.node_id = 3;
  hello.peer_node_id = 1;
  hello.cluster_secret = std::move(secret);
  return hello;
}

TEST(HandshakeTest, RoundTripAndEveryPrefixIsIncomplete) {
  for (const std::string& secret :
       {std::string(), std::string("s"), std::string(kClusterSecretBytesMax, 'x')}) {
    Result<std::vector<uint8_t>> bytes = encode_hello(sample_hello(secret));
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(bytes->size(), kHelloFixedBytes + secret.size() + 4);
    EXPECT_EQ(std::memcmp(bytes->data(), "DUOH", 4), 0);
    for (size_t prefix = 0; prefix < bytes->size(); ++prefix) {
      size_t consumed = 99;
      Result<std::optional<Hello>> parsed = parse_hello(std::span(*bytes).first(prefix), &consumed);
      ASSERT_TRUE(parsed.ok()) << prefix;
      EXPECT_FALSE(parsed->has_value()) << prefix;
      EXPECT_EQ(consumed, 0u);
    }
    std::vector<uint8_t> with_tail = *bytes;
    with_tail.push_back('F');  // the first frame byte right behind the hello
    size_t consumed = 0;
    Result<std::optional<Hello>> parsed = parse_hello(with_tail, &consumed);
    ASSERT_TRUE(parsed.ok());
    ASSERT_TRUE(parsed->has_value());
    EXPECT_EQ(**parsed, sample_hello(secret));
    EXPECT_EQ(consumed, bytes->size());
  }
}

TEST(HandshakeTest, SecretOverTheLimitIsRefused) {
  EXPECT_FALSE(encode_hello(sample_hello(std::string(kClusterSecretBytesMax + 1, 'x'))).ok());
}

TEST(HandshakeTest, MalformedHellosAreErrors) {
  const std::vector<uint8_t> good = encode_hello(sample_hello()).value();
  size_t consumed = 0;
  {
    const uint8_t http[] = {'G', 'E', 'T', ' '};
    EXPECT_TRUE(
        parse_hello(std::span(http).first(1), &consumed).status().is(ErrorCode::kCorruption));
  }
  {
    std::vector<uint8_t> bad = good;
    wire::store_u16(bad.data() + 4, kTransportProtocolVersion + 1);
    Result<std::optional<Hello>> parsed = parse_hello(std::span(bad).first(6), &consumed);
    ASSERT_FALSE(parsed.ok());
    EXPECT_TRUE(parsed.status().is(ErrorCode::kNotSupported));
    EXPECT_NE(parsed.status().message().find("version 2"), std::string::npos);
  }
  {
    std::vector<uint8_t> bad = good;
    bad[6] = 1;  // flags
    EXPECT_TRUE(parse_hello(bad, &consumed).status().is(ErrorCode::kCorruption));
  }
  {
    std::vector<uint8_t> bad = good;
    wire::store_u16(bad.data() + 12, kClusterSecretBytesMax + 1);
    EXPECT_TRUE(parse_hello(std::span(bad).first(kHelloFixedBytes), &consumed)
                    .status()
                    .is(ErrorCode::kCorruption));
  }
  for (size_t i = kHelloFixedBytes; i < good.size(); ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x20;
    EXPECT_TRUE(parse_hello(bad, &consumed).status().is(ErrorCode::kCorruption)) << i;
  }
}

TEST(HandshakeTest, PolicyChecksVersionSecretAndNodeIds) {
  HelloExpectation incoming;
  incoming.own_node_id = 1;
  incoming.cluster_secret = "cluster-42";
  incoming.allowed_peer_node_ids = {2, 3};
  EXPECT_TRUE(check_peer_hello(sample_hello(), incoming).ok());

  Hello hello = sample_hello("other-cluster");
  Status status = check_peer_hello(hello, incoming);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("another cluster"), std::string::npos);

  hello = sample_hello();
  hello.protocol_version = 9;
  status = check_peer_hello(hello, incoming);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("version 9"), std::string::npos);

  hello = sample_hello();
  hello.node_id = 7;
  status = check_peer_hello(hello, incoming);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("unexpected node id 7"), std::string::npos);

  hello = sample_hello();
  hello.node_id = 1;
  EXPECT_FALSE(check_peer_hello(hello, incoming).ok());
  hello.node_id = 0;
  EXPECT_FALSE(check_peer_hello(hello, incoming).ok());

  hello = sample_hello();
  hello.peer_node_id = 5;  // the peer thinks it dialled node 5
  EXPECT_FALSE(check_peer_hello(hello, incoming).ok());

  HelloExpectation outgoing;
  outgoing.own_node_id = 4;
  outgoing.cluster_secret = "cluster-42";
  outgoing.expected_peer_node_id = 2;
  hello = sample_hello();
  hello.peer_node_id = 0;
  status = check_peer_hello(hello, outgoing);  // node 3 answered where we dialled node 2
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("dialled node 2"), std::string::npos);
  hello.node_id = 2;
  EXPECT_TRUE(check_peer_hello(hello, outgoing).ok());
}

}  // namespace
}  // namespace duo::transport
