// Link handshake: the hello each side of a new TCP connection sends before any frame.
//
// Both ends send their hello as soon as the connection is open, then read the peer's.
// A hello carries a magic, the transport protocol version, the sender's node id, the
// node id the sender believes it is talking to (0 = "whoever you are", used by no one
// today but reserved for tools), and the cluster secret from the configuration (a plain
// equality check for now: it keeps nodes of two clusters on one host from linking by a
// port mix-up; it is not authentication — TLS is the seam for that). A masked CRC32C
// closes the hello so a hello torn or corrupted in transit is a clean error.
// Layout and limits: docs/formats/transport.md.
//
// check_peer_hello() is the policy both sides apply; a failure is a Status whose message
// goes into the log line that closes the connection.
//
// Thread-safety: pure functions and values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ndb-kernel/common/status.h"

namespace duo::transport {

// "DUOH" read as bytes on the wire.
inline constexpr uint32_t kHelloMagic = 0x484F5544u;
// The transport protocol version: hello, frame layout and connection rules together.
inline constexpr uint16_t kTransportProtocolVersion = 1;
inline constexpr size_t kHelloFixedBytes = 16;
// Longest cluster secret. Bounds the bytes a connecting stranger can make us buffer
// before we know who it is.
inline constexpr size_t kClusterSecretBytesMax = 256;
inline constexpr size_t kHelloBytesMax = kHelloFixedBytes + kClusterSecretBytesMax + 4;

struct Hello {
  uint16_t protocol_version = kTransportProtocolVersion;
  uint16_t node_id = 0;       // the sender
  uint16_t peer_node_id = 0;  // whom the sender believes it is talking to; 0 = unknown
  std::string cluster_secret;

  friend bool operator==(const Hello&, const Hello&) = default;
};

// The bytes of `hello`. kInvalidArgument if the secret is longer than
// kClusterSecretBytesMax.
Result<std::vector<uint8_t>> encode_hello(const Hello& hello);

// Parses a hello at the start of `bytes`. Returns nullopt while the bytes are a valid
// but incomplete prefix, the hello and its size in `*consumed_bytes` once complete, and
// kCorruption for anything malformed (bad magic — noticed from the first byte —,
// reserved bits, secret over the limit, CRC mismatch). Magic and version are the first
// six bytes in every protocol version, so a peer speaking another version is told
// apart from garbage: kNotSupported naming both versions, before the rest is read.
Result<std::optional<Hello>> parse_hello(std::span<const uint8_t> bytes, size_t* consumed_bytes);

// What a node knows when it judges a peer's hello.
struct HelloExpectation {
  uint16_t own_node_id = 0;
  std::string cluster_secret;
  // For an outgoing connection: the node we dialled. 0 for an incoming connection,
  // where any node in `allowed_peer_node_ids` may be on the other end.
  uint16_t expected_peer_node_id = 0;
  std::vector<uint16_t> allowed_peer_node_ids;
};

// OK if `peer` may use this link: same protocol version, same cluster secret, a node id
// we expect, and it believes it is talking to us. kInvalidArgument with a reason else.
Status check_peer_hello(const Hello& peer, const HelloExpectation& expectation);

}  // namespace duo::transport
