#include "ndb-kernel/datad/data_node_config.h"

#include <algorithm>

namespace duo::datad {

Result<DataNodeConfig> data_node_config(const config::ClusterConfig& config, uint32_t node_id) {
  const config::ConfigSection* own = config.find_node(node_id);
  if (own == nullptr || own->type() != config::SectionType::kDataNode) {
    return Status(ErrorCode::kConfigError, "node " + std::to_string(node_id) +
                                               " is not a data node ([ndbd]) in " +
                                               config.file_name());
  }
  DataNodeConfig out;
  out.node_id = static_cast<uint16_t>(node_id);
  out.no_of_replicas = config.no_of_replicas();
  if (Result<std::string> host = own->get_string("HostName"); host.ok()) out.host_name = *host;
  if (out.host_name.empty()) out.host_name = "localhost";
  if (Result<uint64_t> port = own->get_uint("ServerPort"); port.ok()) {
    out.server_port = static_cast<uint16_t>(*port);
  }
  if (Result<std::string> dir = own->get_string("DataDir"); dir.ok()) out.data_dir = *dir;
  if (out.data_dir.empty()) out.data_dir = ".";
  if (Result<std::string> fs = own->get_string("FileSystemPath"); fs.ok()) {
    out.file_system_path = *fs;
  }
  if (out.file_system_path.empty()) out.file_system_path = out.data_dir;
  if (Result<uint64_t> group = own->get_uint("Nodegroup"); group.ok()) out.node_group = *group;
  for (const config::ConfigSection* section : config.sections_of(config::SectionType::kDataNode)) {
    if (section->node_id() == node_id) continue;
    PeerDataNode peer;
    peer.node_id = static_cast<uint16_t>(section->node_id());
    if (Result<std::string> host = section->get_string("HostName"); host.ok()) {
      peer.host_name = *host;
    }
    if (peer.host_name.empty()) peer.host_name = "localhost";
    if (Result<uint64_t> port = section->get_uint("ServerPort"); port.ok()) {
      peer.server_port = static_cast<uint16_t>(*port);
    }
    out.peers.push_back(std::move(peer));
  }
  std::sort(out.peers.begin(), out.peers.end(),
            [](const PeerDataNode& a, const PeerDataNode& b) { return a.node_id < b.node_id; });
  return out;
}

Result<std::map<uint16_t, uint16_t>> reported_ports(const mgm::Message& status_reply) {
  const std::string* result = status_reply.find("result");
  if (status_reply.head != "get status reply" || result == nullptr || *result != "Ok") {
    return Status(ErrorCode::kInvalidArgument,
                  "not a successful get status reply: '" + status_reply.head + "'");
  }
  std::map<uint16_t, uint16_t> ports;
  for (const auto& [name, value] : status_reply.args) {
    // node.<id>.port
    if (name.rfind("node.", 0) != 0 || name.size() < 10 ||
        name.compare(name.size() - 5, 5, ".port") != 0) {
      continue;
    }
    auto id = mgm::parse_uint_arg(std::string_view(name).substr(5, name.size() - 10),
                                  config::kDataNodeIdMax);
    auto port = mgm::parse_uint_arg(value, 65535);
    if (!id || *id == 0 || !port || *port == 0) {
      return Status(ErrorCode::kInvalidArgument,
                    "malformed status line '" + name + ": " + value + "'");
    }
    ports[static_cast<uint16_t>(*id)] = static_cast<uint16_t>(*port);
  }
  return ports;
}

std::vector<uint16_t> missing_links(const DataNodeConfig& config,
                                    const std::vector<uint16_t>& connected) {
  std::vector<uint16_t> missing;
  for (const PeerDataNode& peer : config.peers) {
    if (std::find(connected.begin(), connected.end(), peer.node_id) == connected.end()) {
      missing.push_back(peer.node_id);
    }
  }
  return missing;
}

std::string format_ids(const std::vector<uint16_t>& ids) {
  if (ids.empty()) return "none";
  std::string out;
  for (uint16_t id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
  return out;
}

}  // namespace duo::datad
