// NodeIdAllocator: which configured node ids are free, and who holds the others.
//
// Every process of a cluster asks duo_mgmd for a node id before it joins (`get nodeid`,
// docs/formats/mgm-protocol.md). An id can be handed out only if it is configured for
// the asker's node type, is not held by anyone else, and the asker connects from an
// address the node's HostName allows. A holder is an opaque owner number (mgmd uses
// its session id); releasing an owner frees all it held, which is how a disconnect
// or a session timeout gives ids back. mgmd holds its own id with kSelfOwner.
//
// With "any id" requests, slots whose HostName names the asker's address are preferred
// over slots open to any host (NDB does the same), so that an API slot reserved for a
// particular machine is not taken by a stray client when a generic one is free.
//
// Pure logic: no sockets, no clock, no name resolution (addresses are resolved by the
// caller when the configuration is loaded). Thread-compatible: one owner at a time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/config/config_parser.h"
#include "ndb-kernel/common/status.h"

namespace duo::mgm {

// Node types as the protocol names them.
enum class NodeType : uint8_t { kData, kApi, kManagement };
// "ndbd", "api", "mgm" (protocol spelling).
std::string_view node_type_name(NodeType type);
// "ndbd(NDB)", "mysqld(API)", "ndb_mgmd(MGM)": NDB's spelling, used in messages.
std::string_view node_type_display(NodeType type);
// Accepts "ndbd"/"ndb"/"db"/"0", "api"/"mysqld"/"1", "mgm"/"ndb_mgmd"/"2" (NDB's
// numeric NODE_TYPE_* values), case-insensitively.
std::optional<NodeType> parse_node_type(std::string_view text);
NodeType node_type_of(config::SectionType section);

// One configured node as the allocator sees it.
struct NodeSlot {
  uint32_t node_id = 0;
  NodeType type = NodeType::kApi;
  std::string host_name;  // as configured; empty = any host
  // Addresses HostName resolved to (numeric strings, e.g. "127.0.0.1"). Empty together
  // with a non-empty host_name means it did not resolve: nobody may take the slot.
  std::vector<std::string> addresses;
};

// Builds the slots of a parsed configuration. `resolve` maps a HostName to its
// addresses (the daemon passes a getaddrinfo wrapper; tests a table).
template <typename Resolve>
std::vector<NodeSlot> slots_from_config(const config::ClusterConfig& config, Resolve resolve) {
  std::vector<NodeSlot> slots;
  for (const config::ConfigSection& section : config.sections()) {
    if (!config::is_node_section(section.type())) continue;
    NodeSlot slot;
    slot.node_id = section.node_id();
    slot.type = node_type_of(section.type());
    if (const config::ConfigValue* host = section.find("HostName")) {
      slot.host_name = host->string_value;
    }
    if (!slot.host_name.empty()) slot.addresses = resolve(slot.host_name);
    slots.push_back(std::move(slot));
  }
  return slots;
}

class NodeIdAllocator {
 public:
  static constexpr uint64_t kSelfOwner = 0;  // mgmd's own reservation

  struct Holder {
    uint64_t owner = 0;
    std::string peer_address;
    std::string peer_name;  // `name` argument of get nodeid, may be empty
    uint32_t peer_version = 0;
  };

  explicit NodeIdAllocator(std::vector<NodeSlot> slots);

  // Allocates `requested_id` (0 = any free id of `type`) to `holder.owner`, connecting
  // from `holder.peer_address`. Errors carry the reason for the peer:
  //   kNotFound        no node with that id in the configuration
  //   kInvalidArgument the id is configured as another type, or the address is not
  //                    the node's HostName
  //   kTemporary       the id is held by another owner, or no id of the type is free
  // An owner asking again for an id it already holds gets it again (idempotent).
  Result<uint32_t> allocate(NodeType type, uint32_t requested_id, const Holder& holder);

  // Records `holder` as the holder of configured `node_id` without type or host checks:
  // for mgmd's own id at start. Replaces any previous holder.
  void hold(uint32_t node_id, const Holder& holder) { holders_[node_id] = holder; }

  // Frees every id held by `owner`; returns them in ascending order.
  std::vector<uint32_t> release_owner(uint64_t owner);

  const std::vector<NodeSlot>& slots() const { return slots_; }
  const NodeSlot* find_slot(uint32_t node_id) const;
  // The holder of `node_id`, or nullptr if it is free.
  const Holder* holder(uint32_t node_id) const;
  size_t allocated_count() const { return holders_.size(); }

 private:
  // True if a peer at `address` may use `slot`.
  static bool host_allows(const NodeSlot& slot, std::string_view address);

  // Constant after construction; sorted by node id.
  std::vector<NodeSlot> slots_;
  std::map<uint32_t, Holder> holders_;  // node id -> holder
};

}  // namespace duo::mgm
