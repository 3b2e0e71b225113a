// The duo_mgm command language (ndb_mgm's): parsing an operator's command line and
// presenting management protocol replies the way ndb_mgm does, so that operators and
// their scripts that grep `ndb_mgm -e show` output carry over.
//
// Parsing and formatting are pure functions (unit-tested); CommandRunner executes a
// parsed command over an MgmConnection.
//
// Thread-safety: the functions are pure; a CommandRunner is thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mgmd/client/mgm_connection.h"
#include "mgmd/protocol/mgm_protocol.h"
#include "ndb-kernel/common/status.h"

namespace duo::mgm {

struct Command {
  enum class Kind {
    kShow,
    kAllStatus,
    kNodeStatus,
    kNodeStop,
    kNodeRestart,
    kShutdown,
    kReportMemoryUsage,
    kClusterLog,
    kHelp,
    kQuit,
  };
  Kind kind = Kind::kHelp;
  uint32_t node_id = 0;                 // kNodeStatus, kNodeStop, kNodeRestart; 0 = ALL for reports
  bool initial = false;                 // RESTART -i
  std::string clusterlog_verb;          // "INFO", "ON", "OFF", "TOGGLE"
  std::vector<std::string> severities;  // upper-case names for ON/OFF/TOGGLE
};

// Parses one command line, case-insensitively. kInvalidArgument with a message that
// says what was expected for anything else.
Result<Command> parse_command(std::string_view line);

// One node of a `get status` reply.
struct NodeStatus {
  uint32_t node_id = 0;
  std::string type;  // "NDB", "MGM", "API"
  // "CONNECTED", "NO_CONTACT", "ALLOCATED"; data nodes also "NOT_STARTED",
  // "STARTING", "STARTED", "STOPPING" (what they report), and "NOT_RESPONDING" (its
  // session is open but its reports stopped: frozen, cut off or overloaded).
  std::string status;
  std::string host;     // configured HostName, empty = any host
  std::string address;  // peer address when the id is held
  uint32_t version = 0;
  std::optional<uint64_t> nodegroup;
  uint32_t start_phase = 0;  // data nodes: last completed start phase
  std::string start_info;    // data nodes starting: what they are doing (may be empty)
  uint16_t port = 0;         // data nodes: transporter port, 0 = not reported
  uint64_t silent_ms = 0;    // NOT_RESPONDING: time since its last report
  struct MemoryPages {
    uint64_t used = 0;   // 32 KiB pages in use
    uint64_t total = 0;  // pages the area may use
  };
  // Data nodes: node.<id>.<area>.used/.total by area ("datamemory", "transactionmemory" ...).
  std::map<std::string, MemoryPages> memory;
};

// True for the states of a running data node (it reports to mgmd).
bool is_running_data_node(const NodeStatus& node);

// Reads the node.<id>.* lines of a `get status` reply (ascending node id).
Result<std::vector<NodeStatus>> parse_status_reply(const Message& reply);

// "DuoDB-0.1.0" for a version number, "version unknown" for 0.
std::string format_version(uint32_t version);
// The SHOW listing (without the "Connected to ..." line).
std::string format_show(const std::vector<NodeStatus>& nodes);
// "Node 1: not connected" and the like.
std::string format_node_status(const NodeStatus& node);

// REPORT MEMORYUSAGE lines of one data node, ndb_mgm style:
//   Node 1: Data usage is 0%(0 32K pages of total 2560)
//   Node 1: Transaction memory usage is 1%(8 32K pages of total 640)
// "Node 1: not connected" for a data node that is not running, "Node 1: memory usage
// not reported yet" for one that has not reported it.
std::string format_memory_usage(const NodeStatus& node);

std::string help_text();

// Executes commands against one management server, reconnecting once per command if
// the connection was lost (after SHUTDOWN, or an mgmd restart).
class CommandRunner {
 public:
  CommandRunner(ConnectString target, uint64_t timeout_ms)
      : target_(std::move(target)), timeout_ms_(timeout_ms) {}

  Status connect();
  // Runs `command`, appending what the operator sees to `*out`. A non-OK Status means
  // the command failed (its message is already in *out); kIoError means mgmd could
  // not be reached.
  Status run(const Command& command, std::string* out);

  std::string target_text() const;

 private:
  Result<Message> call(const Message& request);
  Result<Message> call(const Message& request, uint64_t timeout_ms);

  // How long STOP and SHUTDOWN wait for their answer: mgmd replies when the data nodes
  // are gone, after at most 30 s (mgm_service.h kStopWaitMs), plus a margin.
  static constexpr uint64_t kStopCallMs = 35000;
  Result<std::vector<NodeStatus>> fetch_status();

  ConnectString target_;
  uint64_t timeout_ms_;
  MgmConnection connection_;
};

}  // namespace duo::mgm
