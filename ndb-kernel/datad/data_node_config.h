// DataNodeConfig: what one data node takes from the cluster configuration mgmd serves —
// its own section (HostName, ServerPort, DataDir, FileSystemPath, Nodegroup) and the
// other data nodes it must link to — plus the reading of mgmd's `get status` reply for
// the transporter ports peers reported (docs/formats/mgm-protocol.md).
//
// Pure functions over parsed data (no sockets, no files), so duo_datad's start logic is
// unit-testable. Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mgmd/protocol/mgm_protocol.h"
#include "ndb-kernel/common/config/config_parser.h"
#include "ndb-kernel/common/status.h"

namespace duo::datad {

struct PeerDataNode {
  uint16_t node_id = 0;
  std::string host_name;     // HostName from the configuration
  uint16_t server_port = 0;  // ServerPort from the configuration; 0 = dynamic
};

struct DataNodeConfig {
  uint16_t node_id = 0;
  std::string host_name;
  uint16_t server_port = 0;  // 0: the OS picks one and the node reports it to mgmd
  std::string data_dir;
  std::string file_system_path;
  uint64_t node_group = 0;
  uint32_t no_of_replicas = 0;
  std::vector<PeerDataNode> peers;  // every other configured data node, ascending id
};

// Extracts node `node_id`'s view. kConfigError if it is not a data node of `config`.
Result<DataNodeConfig> data_node_config(const config::ClusterConfig& config, uint32_t node_id);

// The transporter ports data nodes reported, from a `get status` reply: node id -> port,
// only for running data nodes that reported a port. kInvalidArgument for a reply that
// is not a successful `get status` reply.
Result<std::map<uint16_t, uint16_t>> reported_ports(const mgm::Message& status_reply);

// The start state machine of this increment: the node is started when its links to
// every other configured data node are up. Real start phases (restoring from
// checkpoints and redo, node recovery) come with durability.
enum class StartPhase : uint8_t {
  kConfigured = 0,   // phase 0: node id, configuration, DataDir and file system ready
  kRuntime = 1,      // phase 1: block threads running
  kTransporter = 2,  // phase 2: transporter listening, port reported to mgmd
  kLinks = 3,        // phase 3: links to all other data nodes up
};
inline constexpr uint32_t kLastStartPhase = 3;

// Peers (ids) whose links are not up, given the set that is up; empty = node can start.
std::vector<uint16_t> missing_links(const DataNodeConfig& config,
                                    const std::vector<uint16_t>& connected);

// "1 3" for {1, 3}; "none" when empty (log lines).
std::string format_ids(const std::vector<uint16_t>& ids);

}  // namespace duo::datad
