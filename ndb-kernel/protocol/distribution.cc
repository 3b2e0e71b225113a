#include "ndb-kernel/protocol/distribution.h"

#include <algorithm>
#include <map>

namespace duo::protocol {

namespace {
// Any constant other than the fragment hash index's seed (storage kHashSeed): with the
// same seed every row of fragment f would have hash % fragment_count == f, so each
// fragment's linear-hash index would use only 1/fragment_count of its buckets (long
// chains). Fixed forever: it places rows.
constexpr uint64_t kDistributionSeed = 0xC2B2AE3D27D4EB4Full;
}  // namespace

Result<ClusterTopology> ClusterTopology::from_config(const config::ClusterConfig& config) {
  ClusterTopology topology;
  std::map<uint64_t, std::vector<uint16_t>> groups;
  bool first = true;
  for (const config::ConfigSection* section : config.sections_of(config::SectionType::kDataNode)) {
    DUO_ASSIGN_OR_RETURN(uint64_t group, section->get_uint("Nodegroup"));
    if (group == config::kNoNodegroup) continue;  // configured but holds no data
    DUO_ASSIGN_OR_RETURN(uint64_t parts, section->get_uint("NoOfFragmentLogParts"));
    DUO_ASSIGN_OR_RETURN(uint64_t per_node, section->get_uint("PartitionsPerNode"));
    DUO_ASSIGN_OR_RETURN(bool classic, section->get_bool("ClassicFragmentation"));
    if (first) {
      topology.log_parts = static_cast<uint32_t>(parts);
      topology.partitions_per_node = static_cast<uint32_t>(per_node);
      topology.classic_fragmentation = classic;
      first = false;
    } else if (parts != topology.log_parts || per_node != topology.partitions_per_node ||
               classic != topology.classic_fragmentation) {
      // The parser refuses this already; a hand-built configuration may not.
      return Status(ErrorCode::kConfigError,
                    "NoOfFragmentLogParts, PartitionsPerNode or ClassicFragmentation differs "
                    "between data nodes; all data nodes must have the same");
    }
    groups[group].push_back(static_cast<uint16_t>(section->node_id()));
  }
  if (groups.empty()) return Status(ErrorCode::kConfigError, "no data nodes configured");
  for (auto& [group, nodes] : groups) {
    std::sort(nodes.begin(), nodes.end());
    topology.node_groups.push_back(std::move(nodes));
  }
  return topology;
}

std::vector<uint16_t> ClusterTopology::data_nodes() const {
  std::vector<uint16_t> nodes;
  for (const auto& group : node_groups) nodes.insert(nodes.end(), group.begin(), group.end());
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

FragmentPlacement place_fragment(const ClusterTopology& topology, uint32_t fragment,
                                 uint32_t fragment_count) {
  const uint32_t groups = static_cast<uint32_t>(topology.node_groups.size());
  FragmentPlacement placement;
  placement.node_group = fragment % groups;
  const uint32_t round = fragment / groups;
  const std::vector<uint16_t>& nodes = topology.node_groups[placement.node_group];
  const size_t rotate = round % nodes.size();
  // With rounds a multiple of replicas * log_parts (ClassicFragmentation's count and
  // its multiples), `replicas` consecutive rounds (whose primaries rotate) share a log
  // part: every log part of a node then holds primaries and backups alike, and reads
  // (served by primaries) spread over all of a node's LDM threads. Otherwise (a small
  // table: PartitionsPerNode, PARTITIONS n) rounds are dealt over the log parts one by
  // one, so its few fragments still spread over them.
  const uint32_t replicas = static_cast<uint32_t>(nodes.size());
  const uint32_t rounds = (std::max<uint32_t>(fragment_count, 1) + groups - 1) / groups;
  const uint32_t share = rounds % (replicas * topology.log_parts) == 0 ? replicas : 1;
  placement.log_part = static_cast<uint16_t>((round / share) % topology.log_parts);
  placement.replicas.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    placement.replicas.push_back(nodes[(i + rotate) % nodes.size()]);
  }
  return placement;
}

FragmentPlacement place_fragment_live(const ClusterTopology& topology, uint32_t fragment,
                                      uint32_t fragment_count,
                                      const std::vector<uint16_t>& dead_nodes,
                                      const std::vector<uint16_t>& starting_nodes) {
  FragmentPlacement placement = place_fragment(topology, fragment, fragment_count);
  if (dead_nodes.empty() && starting_nodes.empty()) return placement;
  const auto listed = [](const std::vector<uint16_t>& nodes, uint16_t node) {
    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
  };
  std::erase_if(placement.replicas, [&](uint16_t node) { return listed(dead_nodes, node); });
  // Starting replicas last, in their original order (stable_partition keeps it).
  const auto first_starting =
      std::stable_partition(placement.replicas.begin(), placement.replicas.end(),
                            [&](uint16_t node) { return !listed(starting_nodes, node); });
  if (first_starting == placement.replicas.begin()) placement.replicas.clear();
  return placement;
}

Result<uint32_t> distribution_hash(const storage::TableSchema& schema,
                                   const storage::AttrValues& key) {
  uint64_t h = kDistributionSeed;
  for (uint16_t column : schema.primary_key) {
    if (column >= schema.columns.size()) {
      return Status(ErrorCode::kInvalidArgument, "primary key names a column that does not exist");
    }
    const int i = key.find(column);
    if (i < 0 || key.entry(static_cast<size_t>(i)).is_null) {
      return Status(ErrorCode::kInvalidArgument,
                    "primary key column '" + schema.columns[column].name + "' missing");
    }
    h = storage::hash_value(schema.columns[column], key.value(static_cast<size_t>(i)), h);
  }
  return static_cast<uint32_t>(h ^ (h >> 32));
}

}  // namespace duo::protocol
