#include "mgmd/client/mgm_commands.h"

#include <algorithm>
#include <map>

#include "ndb-kernel/common/config/config_parser.h"

namespace duo::mgm {
namespace {

using config::iequals;

std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    size_t end = pos;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (end > pos) words.emplace_back(line.substr(pos, end - pos));
    pos = end;
  }
  return words;
}

std::string upper(std::string text) {
  for (char& c : text) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return text;
}

Status bad(const std::string& message) {
  return Status(ErrorCode::kInvalidArgument, message);
}

bool is_severity(std::string_view word) {
  for (std::string_view name : {"ALERT", "CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "ALL"}) {
    if (iequals(word, name)) return true;
  }
  return false;
}

// Reads "Severities enabled: ..." from a clusterlog reply.
std::string format_clusterlog(const Message& reply) {
  const std::string* enabled = reply.find("enabled");
  std::string out = enabled != nullptr && *enabled == "on" ? "Cluster logging is enabled.\n"
                                                           : "Cluster logging is disabled.\n";
  std::string on;
  for (std::string_view name : {"alert", "critical", "error", "warning", "info", "debug"}) {
    const std::string* value = reply.find(std::string(name));
    if (value != nullptr && *value == "on") {
      if (!on.empty()) on += ' ';
      on += upper(std::string(name));
    }
  }
  out += "Severities enabled: " + (on.empty() ? std::string("none") : on) + "\n";
  return out;
}

}  // namespace

Result<Command> parse_command(std::string_view line) {
  const std::vector<std::string> words = split_words(line);
  Command command;
  if (words.empty()) return bad("empty command");
  const std::string& first = words[0];
  auto only = [&](size_t count, Command::Kind kind) -> Result<Command> {
    if (words.size() != count) return bad("unexpected text after '" + std::string(line) + "'");
    command.kind = kind;
    return command;
  };
  if (iequals(first, "show")) return only(1, Command::Kind::kShow);
  if (iequals(first, "help") || first == "?") return only(1, Command::Kind::kHelp);
  if (iequals(first, "quit") || iequals(first, "exit")) return only(1, Command::Kind::kQuit);
  if (iequals(first, "shutdown")) return only(1, Command::Kind::kShutdown);
  if (iequals(first, "clusterlog")) {
    if (words.size() < 2) return bad("CLUSTERLOG needs ON, OFF, TOGGLE or INFO");
    command.kind = Command::Kind::kClusterLog;
    command.clusterlog_verb = upper(words[1]);
    const std::string& verb = command.clusterlog_verb;
    if (verb == "INFO") return only(2, Command::Kind::kClusterLog);
    if (verb != "ON" && verb != "OFF" && verb != "TOGGLE") {
      return bad("CLUSTERLOG needs ON, OFF, TOGGLE or INFO, not '" + words[1] + "'");
    }
    for (size_t i = 2; i < words.size(); ++i) {
      if (!is_severity(words[i])) {
        return bad("unknown severity '" + words[i] +
                   "': ALERT, CRITICAL, ERROR, WARNING, INFO, DEBUG or ALL");
      }
      command.severities.push_back(upper(words[i]));
    }
    if (verb == "TOGGLE" && command.severities.empty()) {
      return bad("CLUSTERLOG TOGGLE needs severities");
    }
    return command;
  }
  // "ALL STATUS", "ALL REPORT MEMORYUSAGE", "<id> STATUS|STOP|RESTART [-i]|REPORT ...".
  const bool all = iequals(first, "all");
  uint32_t node_id = 0;
  if (!all) {
    auto id = parse_uint_arg(first, config::kNodeIdMax);
    if (!id || *id == 0) return bad("unknown command '" + first + "' (try HELP)");
    node_id = static_cast<uint32_t>(*id);
  }
  if (words.size() < 2) return bad("'" + first + "' needs a command (STATUS, STOP, RESTART ...)");
  const std::string& verb = words[1];
  command.node_id = node_id;
  if (iequals(verb, "status")) {
    return only(2, all ? Command::Kind::kAllStatus : Command::Kind::kNodeStatus);
  }
  if (iequals(verb, "report")) {
    if (words.size() != 3 || (!iequals(words[2], "memoryusage") && !iequals(words[2], "memory"))) {
      return bad("REPORT supports MEMORYUSAGE");
    }
    command.kind = Command::Kind::kReportMemoryUsage;
    return command;
  }
  if (all) return bad("ALL supports STATUS and REPORT MEMORYUSAGE");
  if (iequals(verb, "stop")) return only(2, Command::Kind::kNodeStop);
  if (iequals(verb, "restart")) {
    command.kind = Command::Kind::kNodeRestart;
    for (size_t i = 2; i < words.size(); ++i) {
      if (iequals(words[i], "-i") || iequals(words[i], "--initial")) {
        command.initial = true;
      } else {
        return bad("RESTART takes only -i, not '" + words[i] + "'");
      }
    }
    return command;
  }
  return bad("unknown node command '" + verb + "' (try HELP)");
}

Result<std::vector<NodeStatus>> parse_status_reply(const Message& reply) {
  std::map<uint32_t, NodeStatus> nodes;
  for (const auto& [name, value] : reply.args) {
    if (name.rfind("node.", 0) != 0) continue;
    const size_t dot = name.find('.', 5);
    if (dot == std::string::npos) return bad("malformed status line '" + name + "'");
    auto id = parse_uint_arg(std::string_view(name).substr(5, dot - 5), config::kNodeIdMax);
    if (!id) return bad("malformed status line '" + name + "'");
    NodeStatus& node = nodes[static_cast<uint32_t>(*id)];
    node.node_id = static_cast<uint32_t>(*id);
    const std::string field = name.substr(dot + 1);
    if (field == "type")
      node.type = value;
    else if (field == "status")
      node.status = value;
    else if (field == "host")
      node.host = value;
    else if (field == "address")
      node.address = value;
    else if (field == "version")
      node.version = static_cast<uint32_t>(parse_uint_arg(value, UINT32_MAX).value_or(0));
    else if (field == "nodegroup")
      node.nodegroup = parse_uint_arg(value, UINT64_MAX);
    else if (field == "startphase")
      node.start_phase = static_cast<uint32_t>(parse_uint_arg(value, 255).value_or(0));
    else if (field == "startinfo")
      node.start_info = value;
    else if (field == "port")
      node.port = static_cast<uint16_t>(parse_uint_arg(value, 65535).value_or(0));
    else if (field == "silent_ms")
      node.silent_ms = parse_uint_arg(value, UINT64_MAX).value_or(0);
    else if (const size_t sub = field.rfind('.'); sub != std::string::npos && sub > 0) {
      // <area>.used / <area>.total
      const std::string part = field.substr(sub + 1);
      if (part != "used" && part != "total") continue;
      auto pages = parse_uint_arg(value, UINT64_MAX);
      if (!pages) return bad("malformed status line '" + name + ": " + value + "'");
      NodeStatus::MemoryPages& area = node.memory[field.substr(0, sub)];
      (part == "used" ? area.used : area.total) = *pages;
    }
  }
  std::vector<NodeStatus> out;
  for (auto& [id, node] : nodes) out.push_back(std::move(node));
  return out;
}

std::string format_version(uint32_t version) {
  if (version == 0) return "version unknown";
  return "DuoDB-" + std::to_string(version >> 16) + "." + std::to_string((version >> 8) & 0xff) +
         "." + std::to_string(version & 0xff);
}

bool is_running_data_node(const NodeStatus& node) {
  return node.type == "NDB" && (node.status == "NOT_STARTED" || node.status == "STARTING" ||
                                node.status == "STARTED" || node.status == "STOPPING");
}

namespace {
// "starting", "not started": the lower-case state as ndb_mgm prints it.
std::string state_words(const std::string& status) {
  std::string words = status;
  for (char& c : words) {
    if (c == '_') c = ' ';
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return words;
}
}  // namespace

std::string format_show(const std::vector<NodeStatus>& nodes) {
  std::string out = "Cluster Configuration\n---------------------\n";
  struct Group {
    std::string_view type;
    std::string_view title;
  };
  const Group groups[] = {
      {"NDB", "[ndbd(NDB)]"}, {"MGM", "[ndb_mgmd(MGM)]"}, {"API", "[mysqld(API)]"}};
  bool first_group = true;
  for (const Group& group : groups) {
    std::vector<const NodeStatus*> members;
    for (const NodeStatus& node : nodes) {
      if (node.type == group.type) members.push_back(&node);
    }
    if (!first_group) out += "\n";
    first_group = false;
    out += std::string(group.title) + "\t" + std::to_string(members.size()) + " node(s)\n";
    for (const NodeStatus* node : members) {
      out += "id=" + std::to_string(node->node_id);
      const std::string from = node->host.empty() ? "any host" : node->host;
      if (is_running_data_node(*node)) {
        // ndb_mgm: "id=2 @127.0.0.1  (mysql-8.0 ndb-8.0, starting, Nodegroup: 0)"; a
        // started node shows no state word.
        out += "\t@" + node->address + "  (" + format_version(node->version);
        if (node->status != "STARTED") out += ", " + state_words(node->status);
        if (node->nodegroup) out += ", Nodegroup: " + std::to_string(*node->nodegroup);
        out += ")\n";
      } else if (node->status == "NOT_RESPONDING") {
        out += "\t@" + node->address + "  (" + format_version(node->version) +
               ", not responding for " + std::to_string(node->silent_ms / 1000) + " s";
        if (node->nodegroup) out += ", Nodegroup: " + std::to_string(*node->nodegroup);
        out += ")\n";
      } else if (node->status == "CONNECTED") {
        out += "\t@" + node->address + "  (" + format_version(node->version) + ")\n";
      } else if (node->status == "ALLOCATED") {
        out += " (not connected, node id allocated to " + node->address + ")\n";
      } else {
        out += " (not connected, accepting connect from " + from + ")\n";
      }
    }
  }
  return out;
}

std::string format_node_status(const NodeStatus& node) {
  const std::string head = "Node " + std::to_string(node.node_id) + ": ";
  if (node.status == "CONNECTED") return head + "connected (" + format_version(node.version) + ")";
  if (node.status == "STARTING") {
    return head + "starting (Last completed phase " + std::to_string(node.start_phase) + ") (" +
           format_version(node.version) + ")" +
           (node.start_info.empty() ? std::string() : " " + node.start_info);
  }
  if (is_running_data_node(node)) {
    return head + state_words(node.status) + " (" + format_version(node.version) + ")";
  }
  if (node.status == "NOT_RESPONDING") {
    return head + "not responding: no report for " + std::to_string(node.silent_ms / 1000) +
           " s (frozen, cut off or overloaded) (" + format_version(node.version) + ")";
  }
  if (node.status == "ALLOCATED") {
    return head + "not connected (node id allocated to " + node.address + ")";
  }
  return head + "not connected";
}

std::string format_memory_usage(const NodeStatus& node) {
  const std::string head = "Node " + std::to_string(node.node_id) + ": ";
  if (!is_running_data_node(node)) return head + "not connected\n";
  struct Line {
    const char* key;
    const char* title;
  };
  constexpr Line kLines[] = {{"datamemory", "Data usage"},
                             {"transactionmemory", "Transaction memory usage"}};
  std::string out;
  for (const Line& line : kLines) {
    auto it = node.memory.find(line.key);
    if (it == node.memory.end()) continue;
    const NodeStatus::MemoryPages& pages = it->second;
    const uint64_t percent = pages.total == 0 ? 0 : pages.used * 100 / pages.total;
    out += head + line.title + " is " + std::to_string(percent) + "%(" +
           std::to_string(pages.used) + " 32K pages of total " + std::to_string(pages.total) +
           ")\n";
  }
  if (out.empty()) out = head + "memory usage not reported yet\n";
  return out;
}

std::string help_text() {
  return "---------------------------------------------------------------------------\n"
         " DuoDB -- Management Client -- Help\n"
         "---------------------------------------------------------------------------\n"
         "HELP                                   Print help text\n"
         "SHOW                                   Print information about cluster\n"
         "ALL STATUS                             Print status of all data nodes\n"
         "<id> STATUS                            Print status of a node\n"
         "<id> STOP                              Stop a data node or management server\n"
         "<id> RESTART [-i]                      Restart a data node (-i: initial)\n"
         "SHUTDOWN                               Shut down all data nodes and the\n"
         "                                       management server\n"
         "ALL REPORT MEMORYUSAGE                 Report memory usage of data nodes\n"
         "<id> REPORT MEMORYUSAGE                Report memory usage of one data node\n"
         "CLUSTERLOG ON [<severity>] ...         Enable cluster logging (or severities)\n"
         "CLUSTERLOG OFF [<severity>] ...        Disable cluster logging (or severities)\n"
         "CLUSTERLOG TOGGLE <severity> ...       Toggle severities\n"
         "CLUSTERLOG INFO                        Print cluster log information\n"
         "QUIT, EXIT                             Quit management client\n"
         "\n"
         "<severity> = ALERT | CRITICAL | ERROR | WARNING | INFO | DEBUG | ALL\n"
         "A restarted data node copies its rows from the live replica while the\n"
         "cluster keeps serving (node restart).\n";
}

std::string CommandRunner::target_text() const {
  const bool v6 = target_.host.find(':') != std::string::npos;
  return (v6 ? "[" + target_.host + "]" : target_.host) + ":" + std::to_string(target_.port);
}

Status CommandRunner::connect() {
  return connection_.connect(target_, timeout_ms_);
}

Result<Message> CommandRunner::call(const Message& request) {
  return call(request, timeout_ms_);
}

Result<Message> CommandRunner::call(const Message& request, uint64_t timeout_ms) {
  if (!connection_.connected()) DUO_RETURN_IF_ERROR(connect());
  return connection_.call(request, timeout_ms);
}

Result<std::vector<NodeStatus>> CommandRunner::fetch_status() {
  Message request;
  request.head = "get status";
  DUO_ASSIGN_OR_RETURN(Message reply, call(request));
  DUO_RETURN_IF_ERROR(reply_result(reply));
  return parse_status_reply(reply);
}

Status CommandRunner::run(const Command& command, std::string* out) {
  auto failed = [out](Status status, const std::string& prefix) {
    *out += prefix + status.message() + "\n";
    return status;
  };
  switch (command.kind) {
    case Command::Kind::kHelp:
      *out += help_text();
      return Status::OK();
    case Command::Kind::kQuit:
      return Status::OK();
    case Command::Kind::kShow: {
      Result<std::vector<NodeStatus>> nodes = fetch_status();
      if (!nodes.ok()) return failed(nodes.take_status(), "SHOW failed: ");
      *out += "Connected to Management Server at: " + target_text() + "\n";
      *out += format_show(*nodes);
      return Status::OK();
    }
    case Command::Kind::kAllStatus:
    case Command::Kind::kNodeStatus: {
      Result<std::vector<NodeStatus>> nodes = fetch_status();
      if (!nodes.ok()) return failed(nodes.take_status(), "STATUS failed: ");
      bool found = false;
      for (const NodeStatus& node : *nodes) {
        const bool wanted = command.kind == Command::Kind::kAllStatus
                                ? node.type == "NDB"
                                : node.node_id == command.node_id;
        if (!wanted) continue;
        found = true;
        *out += format_node_status(node) + "\n";
      }
      if (!found) {
        const std::string message =
            command.kind == Command::Kind::kAllStatus
                ? "no data nodes configured"
                : "Node " + std::to_string(command.node_id) + ": not configured";
        return failed(Status(ErrorCode::kNotFound, message), "");
      }
      return Status::OK();
    }
    case Command::Kind::kReportMemoryUsage: {
      Result<std::vector<NodeStatus>> nodes = fetch_status();
      if (!nodes.ok()) return failed(nodes.take_status(), "REPORT failed: ");
      // ALL: every configured data node, if any runs. N: that node, which must be a
      // configured data node; not running is "Node N: not connected" (rc 1).
      const bool any = std::any_of(nodes->begin(), nodes->end(), [&](const NodeStatus& n) {
        return is_running_data_node(n) && (command.node_id == 0 || n.node_id == command.node_id);
      });
      if (command.node_id == 0) {
        if (!any) return failed(Status(ErrorCode::kNotFound, "no data nodes connected"), "");
        for (const NodeStatus& node : *nodes) {
          if (node.type == "NDB") *out += format_memory_usage(node);
        }
        return Status::OK();
      }
      const std::string who = "Node " + std::to_string(command.node_id);
      auto node = std::find_if(nodes->begin(), nodes->end(),
                               [&](const NodeStatus& n) { return n.node_id == command.node_id; });
      if (node == nodes->end()) {
        return failed(Status(ErrorCode::kNotFound, who + ": not configured"), "");
      }
      if (node->type != "NDB") {
        return failed(Status(ErrorCode::kInvalidArgument, who + ": not a data node"), "");
      }
      if (!any) return failed(Status(ErrorCode::kNotFound, who + ": not connected"), "");
      *out += format_memory_usage(*node);
      return Status::OK();
    }
    case Command::Kind::kNodeStop:
    case Command::Kind::kNodeRestart: {
      const bool restart = command.kind == Command::Kind::kNodeRestart;
      Message request;
      request.head = restart ? "restart" : "stop";
      request.add("node", command.node_id);
      if (restart) request.add("initialstart", command.initial ? "1" : "0");
      const std::string what = "Node " + std::to_string(command.node_id) + ": " +
                               (restart ? "restart" : "stop") + " failed: ";
      // mgmd answers a data node's stop only once the node is gone (at most kStopWaitMs).
      Result<Message> reply = call(request, std::max<uint64_t>(timeout_ms_, kStopCallMs));
      if (!reply.ok()) return failed(reply.take_status(), what);
      if (Status result = reply_result(*reply); !result.ok())
        return failed(std::move(result), what);
      *out += "Node " + std::to_string(command.node_id) +
              (restart ? ": Node is being restarted\n" : " has shutdown.\n");
      if (reply->find("shutting down") != nullptr) {
        *out += "Disconnecting to allow the management server to shutdown.\n";
        connection_.close();
      }
      return Status::OK();
    }
    case Command::Kind::kShutdown: {
      Message request;
      request.head = "shutdown";
      Result<Message> reply = call(request, std::max<uint64_t>(timeout_ms_, kStopCallMs));
      if (!reply.ok()) return failed(reply.take_status(), "SHUTDOWN failed: ");
      if (Status result = reply_result(*reply); !result.ok()) {
        return failed(std::move(result), "SHUTDOWN failed: ");
      }
      const std::string* data_nodes = reply->find("data nodes stopped");
      *out += (data_nodes != nullptr ? *data_nodes : std::string("0")) +
              " DuoDB data node(s) have shutdown.\n"
              "Disconnecting to allow the management server to shutdown.\n";
      connection_.close();
      return Status::OK();
    }
    case Command::Kind::kClusterLog: {
      Message request;
      if (command.clusterlog_verb == "INFO") {
        request.head = "get clusterlog";
      } else {
        request.head = "set clusterlog";
        if (command.severities.empty()) {
          request.add("enabled", command.clusterlog_verb == "ON" ? "on" : "off");
        } else {
          std::string list;
          for (const std::string& s : command.severities) list += (list.empty() ? "" : ",") + s;
          request.add("severities", list);
          std::string action = command.clusterlog_verb;
          for (char& c : action) c = static_cast<char>(c - 'A' + 'a');
          request.add("action", action);
        }
      }
      Result<Message> reply = call(request);
      if (!reply.ok()) return failed(reply.take_status(), "CLUSTERLOG failed: ");
      if (Status result = reply_result(*reply); !result.ok()) {
        return failed(std::move(result), "CLUSTERLOG failed: ");
      }
      *out += format_clusterlog(*reply);
      return Status::OK();
    }
  }
  return Status::OK();
}

}  // namespace duo::mgm
