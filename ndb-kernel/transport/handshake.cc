// Link handshake codec and policy; see handshake.h and docs/formats/transport.md.
#include "ndb-kernel/transport/handshake.h"

#include <algorithm>
#include <cstring>

#include "ndb-kernel/common/crc32c.h"
#include "ndb-kernel/transport/wire_bytes.h"

namespace duo::transport {
namespace {

using wire::load_u16;
using wire::load_u32;
using wire::store_u16;
using wire::store_u32;

constexpr size_t kOffsetMagic = 0;
constexpr size_t kOffsetVersion = 4;
constexpr size_t kOffsetFlags = 6;
constexpr size_t kOffsetNodeId = 8;
constexpr size_t kOffsetPeerNodeId = 10;
constexpr size_t kOffsetSecretLength = 12;
constexpr size_t kOffsetReserved = 14;
static_assert(kOffsetReserved + 2 == kHelloFixedBytes);

Status corruption(const std::string& what) {
  return Status(ErrorCode::kCorruption, what);
}

}  // namespace

Result<std::vector<uint8_t>> encode_hello(const Hello& hello) {
  if (hello.cluster_secret.size() > kClusterSecretBytesMax) {
    return Status(ErrorCode::kInvalidArgument,
                  "cluster secret of " + std::to_string(hello.cluster_secret.size()) +
                      " bytes is over the limit of " + std::to_string(kClusterSecretBytesMax));
  }
  const size_t secret_bytes = hello.cluster_secret.size();
  std::vector<uint8_t> bytes(kHelloFixedBytes + secret_bytes + 4);
  uint8_t* p = bytes.data();
  store_u32(p + kOffsetMagic, kHelloMagic);
  store_u16(p + kOffsetVersion, hello.protocol_version);
  store_u16(p + kOffsetFlags, 0);
  store_u16(p + kOffsetNodeId, hello.node_id);
  store_u16(p + kOffsetPeerNodeId, hello.peer_node_id);
  store_u16(p + kOffsetSecretLength, static_cast<uint16_t>(secret_bytes));
  store_u16(p + kOffsetReserved, 0);
  if (secret_bytes > 0)
    std::memcpy(p + kHelloFixedBytes, hello.cluster_secret.data(), secret_bytes);
  const size_t crc_offset = kHelloFixedBytes + secret_bytes;
  store_u32(p + crc_offset, crc32c_mask(crc32c(p, crc_offset)));
  return bytes;
}

Result<std::optional<Hello>> parse_hello(std::span<const uint8_t> bytes, size_t* consumed_bytes) {
  *consumed_bytes = 0;
  if (bytes.empty()) return std::optional<Hello>();
  uint8_t magic[4];
  store_u32(magic, kHelloMagic);
  if (std::memcmp(bytes.data(), magic, std::min<size_t>(bytes.size(), 4)) != 0) {
    return corruption("not a DuoDB transport hello (bad magic)");
  }
  if (bytes.size() < kOffsetVersion + 2) return std::optional<Hello>();
  const uint16_t version = load_u16(bytes.data() + kOffsetVersion);
  if (version != kTransportProtocolVersion) {
    return Status(ErrorCode::kNotSupported, "peer speaks transport protocol version " +
                                                std::to_string(version) + ", this node speaks " +
                                                std::to_string(kTransportProtocolVersion));
  }
  if (bytes.size() < kHelloFixedBytes) return std::optional<Hello>();
  const uint8_t* p = bytes.data();
  if (load_u16(p + kOffsetFlags) != 0 || load_u16(p + kOffsetReserved) != 0) {
    return corruption("non-zero reserved hello bits");
  }
  const size_t secret_bytes = load_u16(p + kOffsetSecretLength);
  if (secret_bytes > kClusterSecretBytesMax) {
    return corruption("hello cluster secret length " + std::to_string(secret_bytes) +
                      " over the limit of " + std::to_string(kClusterSecretBytesMax));
  }
  const size_t crc_offset = kHelloFixedBytes + secret_bytes;
  if (bytes.size() < crc_offset + 4) return std::optional<Hello>();
  if (load_u32(p + crc_offset) != crc32c_mask(crc32c(p, crc_offset))) {
    return corruption("hello CRC mismatch");
  }
  Hello hello;
  hello.protocol_version = version;
  hello.node_id = load_u16(p + kOffsetNodeId);
  hello.peer_node_id = load_u16(p + kOffsetPeerNodeId);
  hello.cluster_secret.assign(reinterpret_cast<const char*>(p + kHelloFixedBytes), secret_bytes);
  *consumed_bytes = crc_offset + 4;
  return std::optional<Hello>(std::move(hello));
}

Status check_peer_hello(const Hello& peer, const HelloExpectation& expectation) {
  if (peer.protocol_version != kTransportProtocolVersion) {
    return Status(ErrorCode::kInvalidArgument, "peer speaks transport protocol version " +
                                                   std::to_string(peer.protocol_version) +
                                                   ", this node speaks " +
                                                   std::to_string(kTransportProtocolVersion));
  }
  // The secret is compared before the node ids so that a node of another cluster is
  // reported as such, not as a confusing "unexpected node id".
  if (peer.cluster_secret != expectation.cluster_secret) {
    return Status(ErrorCode::kInvalidArgument,
                  "peer node " + std::to_string(peer.node_id) +
                      " belongs to another cluster (cluster secret mismatch)");
  }
  if (peer.node_id == 0 || peer.node_id == expectation.own_node_id) {
    return Status(ErrorCode::kInvalidArgument,
                  "peer claims node id " + std::to_string(peer.node_id) + ", which is " +
                      (peer.node_id == 0 ? "reserved" : "this node's own id"));
  }
  if (expectation.expected_peer_node_id != 0) {
    if (peer.node_id != expectation.expected_peer_node_id) {
      return Status(ErrorCode::kInvalidArgument,
                    "dialled node " + std::to_string(expectation.expected_peer_node_id) +
                        " but the peer is node " + std::to_string(peer.node_id));
    }
  } else if (std::find(expectation.allowed_peer_node_ids.begin(),
                       expectation.allowed_peer_node_ids.end(),
                       peer.node_id) == expectation.allowed_peer_node_ids.end()) {
    return Status(ErrorCode::kInvalidArgument, "unexpected node id " +
                                                   std::to_string(peer.node_id) +
                                                   " (not a peer that connects to this node)");
  }
  if (peer.peer_node_id != 0 && peer.peer_node_id != expectation.own_node_id) {
    return Status(ErrorCode::kInvalidArgument,
                  "peer node " + std::to_string(peer.node_id) + " wants node " +
                      std::to_string(peer.peer_node_id) + ", this is node " +
                      std::to_string(expectation.own_node_id));
  }
  return Status::OK();
}

}  // namespace duo::transport
