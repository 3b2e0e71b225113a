#include "mgmd/daemon/node_id_allocator.h"

#include <algorithm>

namespace duo::mgm {

std::string_view node_type_name(NodeType type) {
  switch (type) {
    case NodeType::kData:
      return "ndbd";
    case NodeType::kApi:
      return "api";
    case NodeType::kManagement:
      return "mgm";
  }
  return "?";
}

std::string_view node_type_display(NodeType type) {
  switch (type) {
    case NodeType::kData:
      return "ndbd(NDB)";
    case NodeType::kApi:
      return "mysqld(API)";
    case NodeType::kManagement:
      return "ndb_mgmd(MGM)";
  }
  return "?";
}

std::optional<NodeType> parse_node_type(std::string_view text) {
  using config::iequals;
  if (iequals(text, "ndbd") || iequals(text, "ndb") || iequals(text, "db") || text == "0") {
    return NodeType::kData;
  }
  if (iequals(text, "api") || iequals(text, "mysqld") || text == "1") return NodeType::kApi;
  if (iequals(text, "mgm") || iequals(text, "ndb_mgmd") || text == "2") {
    return NodeType::kManagement;
  }
  return std::nullopt;
}

NodeType node_type_of(config::SectionType section) {
  switch (section) {
    case config::SectionType::kDataNode:
      return NodeType::kData;
    case config::SectionType::kManagementNode:
      return NodeType::kManagement;
    default:
      return NodeType::kApi;
  }
}

NodeIdAllocator::NodeIdAllocator(std::vector<NodeSlot> slots) : slots_(std::move(slots)) {
  std::sort(slots_.begin(), slots_.end(),
            [](const NodeSlot& a, const NodeSlot& b) { return a.node_id < b.node_id; });
}

const NodeSlot* NodeIdAllocator::find_slot(uint32_t node_id) const {
  auto it = std::lower_bound(slots_.begin(), slots_.end(), node_id,
                             [](const NodeSlot& s, uint32_t id) { return s.node_id < id; });
  return it != slots_.end() && it->node_id == node_id ? &*it : nullptr;
}

const NodeIdAllocator::Holder* NodeIdAllocator::holder(uint32_t node_id) const {
  auto it = holders_.find(node_id);
  return it == holders_.end() ? nullptr : &it->second;
}

bool NodeIdAllocator::host_allows(const NodeSlot& slot, std::string_view address) {
  if (slot.host_name.empty()) return true;
  return std::find(slot.addresses.begin(), slot.addresses.end(), address) != slot.addresses.end();
}

Result<uint32_t> NodeIdAllocator::allocate(NodeType type, uint32_t requested_id,
                                           const Holder& holder) {
  if (requested_id != 0) {
    const NodeSlot* slot = find_slot(requested_id);
    if (slot == nullptr) {
      return Status(ErrorCode::kNotFound,
                    "No node defined with id=" + std::to_string(requested_id) + " in config file.");
    }
    if (slot->type != type) {
      return Status(ErrorCode::kInvalidArgument,
                    "Id " + std::to_string(requested_id) + " configured as " +
                        std::string(node_type_display(slot->type)) + ", connect attempted as " +
                        std::string(node_type_display(type)) + ".");
    }
    if (const Holder* current = this->holder(requested_id)) {
      if (current->owner == holder.owner) return requested_id;
      return Status(ErrorCode::kTemporary,
                    "Id " + std::to_string(requested_id) + " already allocated by another node" +
                        (current->peer_address.empty() ? "" : " at " + current->peer_address) +
                        ".");
    }
    if (!host_allows(*slot, holder.peer_address)) {
      return Status(ErrorCode::kInvalidArgument, "Id " + std::to_string(requested_id) +
                                                     " is configured for host '" + slot->host_name +
                                                     "'; connection done from wrong host ip " +
                                                     holder.peer_address + ".");
    }
    holders_[requested_id] = holder;
    return requested_id;
  }

  // Any id: first the slots naming this host, then the open ones, lowest id first.
  for (const bool exact_pass : {true, false}) {
    for (const NodeSlot& slot : slots_) {
      if (slot.type != type || holders_.count(slot.node_id) != 0) continue;
      if (slot.host_name.empty() == exact_pass) continue;
      if (!host_allows(slot, holder.peer_address)) continue;
      holders_[slot.node_id] = holder;
      return slot.node_id;
    }
  }
  return Status(ErrorCode::kTemporary,
                "No free node id found for " + std::string(node_type_display(type)) + ".");
}

std::vector<uint32_t> NodeIdAllocator::release_owner(uint64_t owner) {
  std::vector<uint32_t> freed;
  for (auto it = holders_.begin(); it != holders_.end();) {
    if (it->second.owner == owner) {
      freed.push_back(it->first);
      it = holders_.erase(it);
    } else {
      ++it;
    }
  }
  return freed;
}

}  // namespace duo::mgm
