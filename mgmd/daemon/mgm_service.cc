#include "mgmd/daemon/mgm_service.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>

#include "ndb-kernel/common/crc32c.h"
#include "ndb-kernel/membership/node_set.h"

#ifndef DUO_VERSION
#define DUO_VERSION "0.0.0"
#endif

namespace duo::mgm {
namespace {

// A command and the argument names it accepts. Unknown arguments are refused rather
// than ignored, so that a typo ("nodeide: 3") is an error and not a silent "any id".
struct CommandSpec {
  std::string_view name;
  std::initializer_list<std::string_view> required;
  std::initializer_list<std::string_view> optional;
};

constexpr std::string_view kGetNodeid = "get nodeid";
constexpr std::string_view kGetConfig = "get config";
constexpr std::string_view kGetStatus = "get status";
constexpr std::string_view kShow = "show";
constexpr std::string_view kGetVersion = "get version";
constexpr std::string_view kStop = "stop";
constexpr std::string_view kRestart = "restart";
constexpr std::string_view kShutdown = "shutdown";
constexpr std::string_view kGetClusterlog = "get clusterlog";
constexpr std::string_view kSetClusterlog = "set clusterlog";
constexpr std::string_view kBye = "bye";
constexpr std::string_view kReportStatus = "report status";
constexpr std::string_view kArbitrate = "arbitrate";
constexpr std::string_view kReportEvent = "report event";
// Longest event text a data node may report: one cluster log line.
constexpr size_t kEventTextMax = 1000;
// mgmd -> data node, unsolicited: stop now (no reply expected).
constexpr std::string_view kNodeStop = "node stop";

const CommandSpec kCommands[] = {
    // user, password, public key, log_event, timeout: sent by NDB's mgmapi; accepted
    // and ignored so that NDB-style clients need no change.
    {kGetNodeid,
     {"nodetype"},
     {"nodeid", "endian", "name", "version", "user", "password", "public key", "log_event",
      "timeout"}},
    {kGetConfig, {}, {"version", "nodetype", "node", "from_node"}},
    {kGetStatus, {}, {}},
    {kShow, {}, {}},
    {kGetVersion, {}, {}},
    {kStop, {"node"}, {"abort"}},
    {kRestart, {"node"}, {"initialstart", "nostart", "abort"}},
    {kShutdown, {}, {}},
    {kGetClusterlog, {}, {}},
    {kSetClusterlog, {}, {"enabled", "severities", "action"}},
    {kBye, {}, {}},
    {kReportStatus,
     {"nodeid", "state"},
     {"startphase", "startinfo", "port", "datamemory.used", "datamemory.total",
      "diskpagebuffer.used", "diskpagebuffer.total", "transactionmemory.used",
      "transactionmemory.total", "schemamemory.used", "schemamemory.total"}},
    {kArbitrate, {"nodeid", "survivors", "failed"}, {"round"}},
    {kReportEvent, {"nodeid", "text"}, {"severity"}},
};

const CommandSpec* find_command(std::string_view name) {
  for (const CommandSpec& spec : kCommands) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

// Empty if `request` has every required argument and no unknown one.
std::string check_args(const CommandSpec& spec, const Message& request) {
  for (std::string_view name : spec.required) {
    if (request.find(name) == nullptr) {
      return "missing argument '" + std::string(name) + "' for '" + std::string(spec.name) + "'";
    }
  }
  for (const auto& [name, value] : request.args) {
    const bool known =
        std::find(spec.required.begin(), spec.required.end(), name) != spec.required.end() ||
        std::find(spec.optional.begin(), spec.optional.end(), name) != spec.optional.end();
    if (!known) {
      return "unknown argument '" + name + "' for '" + std::string(spec.name) + "'";
    }
  }
  return {};
}

Message ok_reply(std::string_view command) {
  Message reply;
  reply.head = reply_head(command);
  reply.add("result", "Ok");
  return reply;
}

std::string_view status_type_name(NodeType type) {
  switch (type) {
    case NodeType::kData:
      return "NDB";
    case NodeType::kApi:
      return "API";
    case NodeType::kManagement:
      return "MGM";
  }
  return "?";
}

std::optional<bool> parse_on_off(std::string_view text) {
  if (config::iequals(text, "on") || text == "1" || config::iequals(text, "true")) return true;
  if (config::iequals(text, "off") || text == "0" || config::iequals(text, "false")) return false;
  return std::nullopt;
}

std::string hex32(uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", value);
  return buf;
}

}  // namespace

std::string_view duo_version() {
  return DUO_VERSION;
}
std::string duo_version_string() {
  return "DuoDB-" + std::string(duo_version());
}
uint32_t duo_version_number() {
  unsigned major = 0, minor = 0, patch = 0;
  std::sscanf(DUO_VERSION, "%u.%u.%u", &major, &minor, &patch);
  return (major << 16) | (minor << 8) | patch;
}

Message error_reply(std::string_view command, std::string_view message) {
  Message reply;
  reply.head = reply_head(command);
  reply.add("result", std::string(message));
  return reply;
}

std::string_view data_node_state_name(DataNodeState state) {
  switch (state) {
    case DataNodeState::kNotStarted:
      return "NOT_STARTED";
    case DataNodeState::kStarting:
      return "STARTING";
    case DataNodeState::kStarted:
      return "STARTED";
    case DataNodeState::kStopping:
      return "STOPPING";
  }
  return "?";
}

std::optional<DataNodeState> parse_data_node_state(std::string_view text) {
  std::string name(text);
  for (char& c : name) {
    if (c == ' ') c = '_';
  }
  for (DataNodeState state : {DataNodeState::kNotStarted, DataNodeState::kStarting,
                              DataNodeState::kStarted, DataNodeState::kStopping}) {
    if (config::iequals(name, data_node_state_name(state))) return state;
  }
  return std::nullopt;
}

MgmService::MgmService(ServedConfig config, uint32_t own_node_id, std::vector<NodeSlot> slots,
                       ClusterLog* cluster_log)
    : config_(std::move(config)),
      own_node_id_(own_node_id),
      allocator_(std::move(slots)),
      cluster_log_(cluster_log) {
  NodeIdAllocator::Holder self;
  self.owner = NodeIdAllocator::kSelfOwner;
  self.peer_name = "duo_mgmd";
  self.peer_version = duo_version_number();
  // mgmd's own id is its own whatever its HostName resolves to: the host check guards
  // against other processes taking an id, not against the server that owns it.
  const NodeSlot* slot = allocator_.find_slot(own_node_id);
  self.peer_address = slot != nullptr && !slot->addresses.empty() ? slot->addresses.front() : "";
  allocator_.hold(own_node_id, self);
}

void MgmService::on_session_open(uint64_t session_id, std::string peer, std::string peer_address) {
  cluster_log_->event(Severity::kInfo, "Management client connected from " + peer + " (session " +
                                           std::to_string(session_id) + ")");
  sessions_[session_id] = Session{std::move(peer), std::move(peer_address)};
}

void MgmService::on_session_closed(uint64_t session_id, std::string_view reason) {
  auto it = sessions_.find(session_id);
  const std::string peer = it == sessions_.end() ? std::string("?") : it->second.peer;
  for (uint32_t id : allocator_.release_owner(session_id)) {
    cluster_log_->event(Severity::kInfo, "Node " + std::to_string(id) +
                                             ": node id released (session " +
                                             std::to_string(session_id) + " from " + peer +
                                             " ended: " + std::string(reason) + ")");
  }
  cluster_log_->event(Severity::kInfo, "Management client " + peer + " disconnected (session " +
                                           std::to_string(session_id) + ": " + std::string(reason) +
                                           ")");
  if (it != sessions_.end()) sessions_.erase(it);
  // A data node's state lives as long as its session: a closed session is a node that
  // stopped or died (its id was released above).
  for (auto node = data_nodes_.begin(); node != data_nodes_.end();) {
    if (node->second.session_id != session_id) {
      ++node;
      continue;
    }
    const uint32_t node_id = node->first;
    const bool ordered = node->second.stop_ordered;
    cluster_log_->event(
        ordered ? Severity::kInfo : Severity::kAlert,
        "Node " + std::to_string(node_id) + ": data node " +
            (ordered ? "stopped"
                     : "lost (was " + std::string(data_node_state_name(node->second.state)) + ")") +
            ": session ended: " + std::string(reason));
    node = data_nodes_.erase(node);
    for (PendingStop& pending : pending_stops_) {
      auto waiting = std::find(pending.waiting.begin(), pending.waiting.end(), node_id);
      if (waiting == pending.waiting.end()) continue;
      pending.waiting.erase(waiting);
      ++pending.stopped;
    }
  }
  for (PendingStop& pending : pending_stops_) {
    if (pending.requester == session_id) pending.requester = 0;
  }
  for (size_t i = 0; i < pending_stops_.size();) {
    if (pending_stops_[i].waiting.empty()) {
      complete(pending_stops_[i], false);
      pending_stops_.erase(pending_stops_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void MgmService::tick(uint64_t now_ms) {
  now_ms_ = now_ms;
  for (auto& [node_id, report] : data_nodes_) {
    if (report.silent || report.stop_ordered || now_ms_ < report.last_report_ms ||
        now_ms_ - report.last_report_ms < kDataNodeSilenceMs) {
      continue;
    }
    report.silent = true;
    cluster_log_->event(
        Severity::kAlert,
        "Node " + std::to_string(node_id) + ": data node not responding: no report for " +
            std::to_string(now_ms_ - report.last_report_ms) + " ms (was " +
            std::string(data_node_state_name(report.state)) + "; frozen, cut off or overloaded)");
  }
  for (size_t i = 0; i < pending_stops_.size();) {
    if (now_ms_ >= pending_stops_[i].deadline_ms) {
      complete(pending_stops_[i], true);
      pending_stops_.erase(pending_stops_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

std::vector<MgmService::Delivery> MgmService::take_deliveries() {
  std::vector<Delivery> out;
  out.swap(deliveries_);
  return out;
}

const MgmService::DataNodeReport* MgmService::data_node(uint32_t node_id) const {
  auto it = data_nodes_.find(node_id);
  return it == data_nodes_.end() ? nullptr : &it->second;
}

void MgmService::order_stop(uint32_t node_id, const std::string& initiator, bool restart,
                            bool initial) {
  DataNodeReport& report = data_nodes_.at(node_id);
  report.stop_ordered = true;
  Message order;
  order.head = std::string(kNodeStop);
  order.add("nodeid", node_id);
  order.add("initiator", initiator);
  if (restart) {
    order.add("restart", "1");
    order.add("initialstart", initial ? "1" : "0");
  }
  deliveries_.push_back({report.session_id, std::move(order), false});
  cluster_log_->event(
      Severity::kInfo,
      "Node " + std::to_string(node_id) + ": " +
          (restart ? std::string(initial ? "initial restart" : "restart") : std::string("stop")) +
          " ordered (requested by " + initiator + ")");
}

void MgmService::complete(PendingStop& pending, bool expired) {
  std::string not_stopped;
  for (uint32_t id : pending.waiting) {
    not_stopped += (not_stopped.empty() ? "" : " ") + std::to_string(id);
  }
  if (expired) {
    cluster_log_->event(Severity::kWarning, "Data node(s) " + not_stopped +
                                                " did not stop within " +
                                                std::to_string(kStopWaitMs) + " ms");
  }
  Message reply;
  if (pending.shutdown) {
    // The management server goes down whatever the data nodes did: that is what the
    // operator asked for, and a node that hangs must not keep mgmd alive.
    shutdown_requested_ = true;
    cluster_log_->event(Severity::kInfo, std::to_string(pending.stopped) +
                                             " data node(s) stopped; management server "
                                             "shutting down");
    reply = expired
                ? error_reply(kShutdown, "data node(s) " + not_stopped + " did not stop within " +
                                             std::to_string(kStopWaitMs) +
                                             " ms; management server shutting down")
                : ok_reply(kShutdown);
    reply.add("data nodes stopped", pending.stopped);
    reply.add("management servers stopped", uint64_t{1});
  } else if (expired) {
    reply = error_reply(
        pending.restart ? kRestart : kStop,
        "node " + not_stopped + " did not stop within " + std::to_string(kStopWaitMs) + " ms");
  } else {
    reply = ok_reply(pending.restart ? kRestart : kStop);
    reply.add("stopped", pending.stopped);
  }
  if (pending.requester != 0) {
    deliveries_.push_back({pending.requester, std::move(reply), true});
  }
}

MgmService::Outcome MgmService::handle(uint64_t session_id, const RequestParser::Parsed& parsed) {
  const Message& request = parsed.request;
  auto session_it = sessions_.find(session_id);
  const Session session = session_it == sessions_.end() ? Session{"?", ""} : session_it->second;
  const CommandSpec* spec = find_command(request.head);
  if (spec == nullptr) {
    cluster_log_->event(Severity::kWarning, "Session " + std::to_string(session_id) + " from " +
                                                session.peer + ": unknown command '" +
                                                request.head + "'");
    return {error_reply(request.head, "Unknown command, '" + request.head + "'"), false};
  }
  if (parsed.error) return {error_reply(spec->name, *parsed.error), false};
  if (std::string problem = check_args(*spec, request); !problem.empty()) {
    return {error_reply(spec->name, problem), false};
  }
  const std::string_view name = spec->name;
  if (name == kGetNodeid) return {handle_get_nodeid(session_id, session, request), false};
  if (name == kGetConfig) return {handle_get_config(request), false};
  if (name == kGetStatus || name == kShow) return {handle_get_status(request), false};
  if (name == kGetVersion) return {handle_get_version(request), false};
  if (name == kStop) return handle_stop_or_restart(session_id, session, request, false);
  if (name == kRestart) return handle_stop_or_restart(session_id, session, request, true);
  if (name == kShutdown) return handle_shutdown(session_id, session, request);
  if (name == kReportStatus) return {handle_report_status(session_id, request), false};
  if (name == kArbitrate) return {handle_arbitrate(session_id, request), false};
  if (name == kReportEvent) return {handle_report_event(session_id, request), false};
  if (name == kGetClusterlog) return {handle_get_clusterlog(request), false};
  if (name == kSetClusterlog) return {handle_set_clusterlog(request), false};
  return {ok_reply(kBye), true};  // kBye
}

Message MgmService::handle_get_nodeid(uint64_t session_id, const Session& session,
                                      const Message& request) {
  const std::optional<NodeType> type = parse_node_type(*request.find("nodetype"));
  if (!type) {
    return error_reply(
        kGetNodeid, "bad nodetype '" + *request.find("nodetype") + "': expected ndbd, api or mgm");
  }
  uint32_t requested = 0;
  if (const std::string* text = request.find("nodeid")) {
    auto id = parse_uint_arg(*text, config::kNodeIdMax);
    if (!id) {
      return error_reply(kGetNodeid, "bad nodeid '" + *text + "': expected 0.." +
                                         std::to_string(config::kNodeIdMax));
    }
    requested = static_cast<uint32_t>(*id);
  }
  if (const std::string* endian = request.find("endian")) {
    // The text protocol carries no binary data today; the check keeps NDB's contract
    // so that a later binary config format cannot be misread by a big-endian node.
    if (*endian != "little" && *endian != "big") {
      return error_reply(kGetNodeid, "bad endian '" + *endian + "': expected little or big");
    }
  }
  NodeIdAllocator::Holder holder;
  holder.owner = session_id;
  holder.peer_address = session.peer_address;
  if (const std::string* peer_name = request.find("name")) holder.peer_name = *peer_name;
  if (const std::string* version = request.find("version")) {
    holder.peer_version = static_cast<uint32_t>(parse_uint_arg(*version, UINT32_MAX).value_or(0));
  }
  Result<uint32_t> id = allocator_.allocate(*type, requested, holder);
  if (!id.ok()) {
    cluster_log_->event(Severity::kWarning,
                        "Node id allocation for " + std::string(node_type_display(*type)) +
                            " from " + session.peer + " (requested " +
                            (requested == 0 ? std::string("any") : std::to_string(requested)) +
                            ") refused: " + id.status().message());
    return error_reply(kGetNodeid, id.status().message());
  }
  cluster_log_->event(Severity::kInfo,
                      "Node " + std::to_string(*id) + ": node id allocated to " +
                          std::string(node_type_display(*type)) + " at " + session.peer +
                          (holder.peer_name.empty() ? "" : " name '" + holder.peer_name + "'") +
                          " (session " + std::to_string(session_id) + ")");
  Message reply = ok_reply(kGetNodeid);
  reply.add("nodeid", *id);
  return reply;
}

Message MgmService::handle_get_config(const Message& /*request*/) {
  Message reply = ok_reply(kGetConfig);
  reply.add("generation", config_.cache.generation);
  reply.add("node", own_node_id_);
  reply.add("checksum", hex32(crc32c(config_.cache.text.data(), config_.cache.text.size())));
  reply.add("Content-Type", "text/x-duo-config-ini");
  reply.body = config_.cache.text;
  return reply;
}

Message MgmService::handle_get_status(const Message& /*request*/) {
  Message reply = ok_reply(kGetStatus);
  reply.add("nodes", allocator_.slots().size());
  for (const NodeSlot& slot : allocator_.slots()) {
    const std::string prefix = "node." + std::to_string(slot.node_id) + ".";
    const NodeIdAllocator::Holder* holder = allocator_.holder(slot.node_id);
    // A data node counts as connected only when it runs and talks to mgmd, which no
    // data node does yet; an allocated id alone is reported as ALLOCATED.
    std::string status = "NO_CONTACT";
    if (holder != nullptr) status = slot.type == NodeType::kData ? "ALLOCATED" : "CONNECTED";
    const DataNodeReport* report = holder != nullptr ? data_node(slot.node_id) : nullptr;
    if (report != nullptr) {
      status = report->stop_ordered ? "STOPPING" : std::string(data_node_state_name(report->state));
      if (report->silent && !report->stop_ordered) status = "NOT_RESPONDING";
    }
    reply.add(prefix + "type", std::string(status_type_name(slot.type)));
    reply.add(prefix + "status", status);
    reply.add(prefix + "host", slot.host_name);
    if (holder != nullptr) {
      reply.add(prefix + "address", holder->peer_address);
      reply.add(prefix + "version", holder->peer_version);
      reply.add(prefix + "name", holder->peer_name);
    }
    if (report != nullptr) {
      reply.add(prefix + "startphase", report->start_phase);
      if (report->state == DataNodeState::kStarting && !report->start_info.empty()) {
        reply.add(prefix + "startinfo", report->start_info);
      }
      if (report->port != 0) reply.add(prefix + "port", report->port);
      if (report->silent) reply.add(prefix + "silent_ms", now_ms_ - report->last_report_ms);
      for (std::string_view key : kMemoryAreaKeys) {
        auto pages = report->memory.find(key);
        if (pages == report->memory.end()) continue;
        reply.add(prefix + std::string(key) + ".used", pages->second.used);
        reply.add(prefix + std::string(key) + ".total", pages->second.total);
      }
    }
    if (slot.type == NodeType::kData) {
      if (const config::ConfigSection* section = config_.parsed.find_node(slot.node_id)) {
        if (const config::ConfigValue* group = section->find("Nodegroup")) {
          reply.add(prefix + "nodegroup", group->uint_value);
        }
      }
    }
  }
  return reply;
}

Message MgmService::handle_get_version(const Message& /*request*/) {
  Message reply = ok_reply(kGetVersion);
  const uint32_t number = duo_version_number();
  reply.add("id", number);
  reply.add("major", number >> 16);
  reply.add("minor", (number >> 8) & 0xff);
  reply.add("build", number & 0xff);
  reply.add("string", duo_version_string());
  return reply;
}

MgmService::Outcome MgmService::handle_stop_or_restart(uint64_t session_id, const Session& session,
                                                       const Message& request, bool restart) {
  const std::string_view command = restart ? kRestart : kStop;
  const std::string& text = *request.find("node");
  auto id = parse_uint_arg(text, config::kNodeIdMax);
  if (!id || *id == 0) {
    return {error_reply(command, "bad node '" + text + "': expected a node id 1.." +
                                     std::to_string(config::kNodeIdMax)),
            false};
  }
  const auto node_id = static_cast<uint32_t>(*id);
  const std::string node = "node " + std::to_string(node_id);
  const NodeSlot* slot = allocator_.find_slot(node_id);
  if (slot == nullptr) return {error_reply(command, node + " is not configured"), false};
  Message reply;
  const DataNodeReport* report = data_node(node_id);
  if (slot->type == NodeType::kApi) {
    reply = error_reply(command, node +
                                     " is an API node; only data nodes and management "
                                     "servers can be stopped or restarted");
  } else if (node_id == own_node_id_) {
    if (restart) {
      reply = error_reply(command,
                          "restarting the management server is not supported yet; "
                          "stop it and start it again");
    } else {
      cluster_log_->event(Severity::kInfo, "Node " + std::to_string(node_id) +
                                               ": stop requested by " + session.peer +
                                               "; management server shutting down");
      shutdown_requested_ = true;
      reply = ok_reply(command);
      reply.add("stopped", node_id);
      reply.add("shutting down", "yes");
    }
  } else if (slot->type == NodeType::kManagement && allocator_.holder(node_id) != nullptr) {
    reply = error_reply(command,
                        "stopping or restarting another management server is not "
                        "supported yet");
  } else if (slot->type == NodeType::kData && report != nullptr) {
    if (report->stop_ordered) {
      reply = error_reply(command, node + " is already stopping");
    } else {
      // A restart: the node stops cleanly, then starts again by itself (duo_datad
      // re-executes itself) and rejoins by a node restart.
      const std::string* initial = request.find("initialstart");
      order_stop(node_id, session.peer, restart, initial != nullptr && *initial == "1");
      PendingStop pending;
      pending.requester = session_id;
      pending.restart = restart;
      pending.waiting.push_back(node_id);
      pending.deadline_ms = now_ms_ + kStopWaitMs;
      pending_stops_.push_back(std::move(pending));
      return {Message{}, false, true};
    }
  } else {
    // Not running (or only holding its id without reporting): nothing to order.
    reply = error_reply(command, node + " is not connected");
  }
  if (reply.find("result") != nullptr && *reply.find("result") != "Ok") {
    cluster_log_->event(Severity::kWarning, std::string(command) + " of " + node + " from " +
                                                session.peer + " failed: " + *reply.find("result"));
  }
  return {reply, false};
}

MgmService::Outcome MgmService::handle_shutdown(uint64_t session_id, const Session& session,
                                                const Message& /*request*/) {
  PendingStop pending;
  pending.requester = session_id;
  pending.shutdown = true;
  pending.deadline_ms = now_ms_ + kStopWaitMs;
  for (auto& [node_id, report] : data_nodes_) {
    if (!report.stop_ordered) order_stop(node_id, session.peer + " (shutdown)");
    pending.waiting.push_back(node_id);
  }
  cluster_log_->event(Severity::kInfo, "Shutdown requested by " + session.peer + ": " +
                                           std::to_string(pending.waiting.size()) +
                                           " data node(s) to stop first");
  if (pending.waiting.empty()) {
    complete(pending, false);
    // No data node to wait for: answer now (the delivery just queued is this reply).
    Delivery own = std::move(deliveries_.back());
    deliveries_.pop_back();
    return {std::move(own.message), false};
  }
  pending_stops_.push_back(std::move(pending));
  return {Message{}, false, true};
}

Message MgmService::handle_report_status(uint64_t session_id, const Message& request) {
  const std::string& id_text = *request.find("nodeid");
  auto id = parse_uint_arg(id_text, config::kDataNodeIdMax);
  if (!id || *id == 0) {
    return error_reply(kReportStatus, "bad nodeid '" + id_text + "': expected 1.." +
                                          std::to_string(config::kDataNodeIdMax));
  }
  const auto node_id = static_cast<uint32_t>(*id);
  const NodeSlot* slot = allocator_.find_slot(node_id);
  const NodeIdAllocator::Holder* holder = allocator_.holder(node_id);
  if (slot == nullptr || slot->type != NodeType::kData || holder == nullptr ||
      holder->owner != session_id) {
    return error_reply(kReportStatus, "node " + std::to_string(node_id) +
                                          " is not a data node id allocated to this session "
                                          "(get nodeid first)");
  }
  const std::optional<DataNodeState> state = parse_data_node_state(*request.find("state"));
  if (!state) {
    return error_reply(kReportStatus, "bad state '" + *request.find("state") +
                                          "': expected NOT_STARTED, STARTING, STARTED or STOPPING");
  }
  uint32_t phase = 0;
  if (const std::string* text = request.find("startphase")) {
    auto value = parse_uint_arg(*text, 255);
    if (!value)
      return error_reply(kReportStatus, "bad startphase '" + *text + "': expected 0..255");
    phase = static_cast<uint32_t>(*value);
  }
  uint16_t port = 0;
  if (const std::string* text = request.find("port")) {
    auto value = parse_uint_arg(*text, 65535);
    if (!value) return error_reply(kReportStatus, "bad port '" + *text + "': expected 0..65535");
    port = static_cast<uint16_t>(*value);
  }
  std::map<std::string, DataNodeReport::MemoryPages, std::less<>> memory;
  for (std::string_view key : kMemoryAreaKeys) {
    const std::string used_name = std::string(key) + ".used";
    const std::string total_name = std::string(key) + ".total";
    const std::string* used_text = request.find(used_name);
    const std::string* total_text = request.find(total_name);
    if (used_text == nullptr && total_text == nullptr) continue;
    if (used_text == nullptr || total_text == nullptr) {
      return error_reply(kReportStatus, "'" + used_name + "' and '" + total_name +
                                            "' must be reported together");
    }
    auto used = parse_uint_arg(*used_text, UINT32_MAX);
    auto total = parse_uint_arg(*total_text, UINT32_MAX);
    if (!used || !total || *used > *total) {
      return error_reply(kReportStatus, "bad " + std::string(key) + " usage '" + *used_text +
                                            "' of '" + *total_text +
                                            "': expected used <= total pages");
    }
    memory[std::string(key)] = {*used, *total};
  }
  auto [it, fresh] = data_nodes_.try_emplace(node_id);
  DataNodeReport& report = it->second;
  const std::string who = "Node " + std::to_string(node_id) + ": ";
  if (fresh) {
    report.session_id = session_id;
    // A data node starting again has restarted (a running node that reconnects reports
    // STARTED): it may take part in arbitration again.
    if (*state == DataNodeState::kStarting && arbitration_.failed().contains(node_id)) {
      arbitration_.node_rejoined(static_cast<uint16_t>(node_id));
      cluster_log_->event(Severity::kInfo,
                          who + "restarted: no longer marked failed by arbitration");
    }
    cluster_log_->event(Severity::kInfo, who + "data node connected from " + holder->peer_address +
                                             " (transporter port " + std::to_string(port) + ")");
  }
  if (*state == DataNodeState::kStarting && (fresh || phase != report.start_phase)) {
    cluster_log_->event(Severity::kInfo,
                        who + "Start phase " + std::to_string(phase) + " completed");
  } else if (*state != report.state || fresh) {
    cluster_log_->event(Severity::kInfo,
                        who + "data node " + std::string(data_node_state_name(*state)) +
                            (*state == DataNodeState::kStarted ? " (" + duo_version_string() + ")"
                                                               : std::string()));
  }
  if (report.silent) {
    cluster_log_->event(Severity::kInfo, who + "data node responding again after " +
                                             std::to_string(now_ms_ - report.last_report_ms) +
                                             " ms without a report");
    report.silent = false;
  }
  report.last_report_ms = now_ms_;
  report.state = *state;
  report.start_phase = phase;
  if (const std::string* info = request.find("startinfo")) {
    if (*info != report.start_info && *state == DataNodeState::kStarting && !info->empty()) {
      cluster_log_->event(Severity::kInfo, who + *info);
    }
    report.start_info = *info;
  } else {
    report.start_info.clear();
  }
  if (port != 0) report.port = port;
  if (!memory.empty()) report.memory = std::move(memory);
  return ok_reply(kReportStatus);
}

Message MgmService::handle_get_clusterlog(const Message& /*request*/) {
  return clusterlog_reply(kGetClusterlog);
}

Message MgmService::clusterlog_reply(std::string_view command) const {
  Message reply = ok_reply(command);
  const ClusterLogFilter& filter = cluster_log_->filter();
  reply.add("enabled", filter.enabled ? "on" : "off");
  for (size_t i = 0; i < kSeverityCount; ++i) {
    std::string name(severity_name(static_cast<Severity>(i)));
    for (char& c : name) c = static_cast<char>(c - 'A' + 'a');
    reply.add(name, filter.severity_on[i] ? "on" : "off");
  }
  return reply;
}

Message MgmService::handle_set_clusterlog(const Message& request) {
  ClusterLogFilter filter = cluster_log_->filter();
  const std::string* enabled = request.find("enabled");
  const std::string* severities = request.find("severities");
  const std::string* action = request.find("action");
  if (enabled == nullptr && severities == nullptr) {
    return error_reply(kSetClusterlog, "give 'enabled' and/or 'severities' with 'action'");
  }
  if (enabled != nullptr) {
    auto on = parse_on_off(*enabled);
    if (!on) return error_reply(kSetClusterlog, "bad enabled '" + *enabled + "': on or off");
    filter.enabled = *on;
  }
  if (severities != nullptr) {
    if (action == nullptr) return error_reply(kSetClusterlog, "missing argument 'action'");
    const bool toggle = config::iequals(*action, "toggle");
    auto on = parse_on_off(*action);
    if (!toggle && !on) {
      return error_reply(kSetClusterlog, "bad action '" + *action + "': on, off or toggle");
    }
    // Comma- or space-separated names; "all" means every severity.
    std::string list = *severities;
    std::replace(list.begin(), list.end(), ',', ' ');
    size_t pos = 0;
    size_t named = 0;
    while (pos < list.size()) {
      const size_t end = std::min(list.find(' ', pos), list.size());
      const std::string word = list.substr(pos, end - pos);
      pos = end + 1;
      if (word.empty()) continue;
      ++named;
      std::vector<size_t> targets;
      if (config::iequals(word, "all")) {
        for (size_t i = 0; i < kSeverityCount; ++i) targets.push_back(i);
      } else if (auto severity = parse_severity(word)) {
        targets.push_back(static_cast<size_t>(*severity));
      } else {
        return error_reply(
            kSetClusterlog,
            "unknown severity '" + word + "': ALERT, CRITICAL, ERROR, WARNING, INFO, DEBUG or ALL");
      }
      for (size_t i : targets) filter.severity_on[i] = toggle ? !filter.severity_on[i] : *on;
    }
    if (named == 0) return error_reply(kSetClusterlog, "empty severities list");
  } else if (action != nullptr) {
    return error_reply(kSetClusterlog, "'action' needs 'severities'");
  }
  // Recorded under the old filter, and again under the new one if only that one lets
  // it through, so that both switching the log off and switching it on are in it.
  const bool old_passes = cluster_log_->filter().passes(Severity::kInfo);
  cluster_log_->event(Severity::kInfo, "Cluster log filter changed");
  cluster_log_->set_filter(filter);
  if (!old_passes) cluster_log_->event(Severity::kInfo, "Cluster log filter changed");
  return clusterlog_reply(kSetClusterlog);
}

}  // namespace duo::mgm

namespace duo::mgm {
namespace {

// "1,3,4" -> {1, 3, 4}; "" -> {}. nullopt on anything that is not a data node id.
std::optional<membership::NodeSet> parse_node_list(std::string_view text) {
  membership::NodeSet nodes;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    auto id = parse_uint_arg(std::string(item), config::kDataNodeIdMax);
    if (!id || *id == 0) return std::nullopt;
    nodes.insert(static_cast<uint16_t>(*id));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return nodes;
}

}  // namespace

Message MgmService::handle_report_event(uint64_t session_id, const Message& request) {
  const std::string& id_text = *request.find("nodeid");
  auto id = parse_uint_arg(id_text, config::kDataNodeIdMax);
  const NodeIdAllocator::Holder* holder =
      id && *id != 0 ? allocator_.holder(static_cast<uint32_t>(*id)) : nullptr;
  if (holder == nullptr || holder->owner != session_id) {
    return error_reply(kReportEvent, "node " + id_text +
                                         " is not a node id allocated to this session "
                                         "(get nodeid first)");
  }
  const std::string* severity_text = request.find("severity");
  const std::optional<Severity> severity =
      severity_text != nullptr ? parse_severity(*severity_text) : Severity::kInfo;
  if (!severity) {
    return error_reply(kReportEvent, "bad severity '" + *severity_text +
                                         "': expected alert, critical, error, warning, info "
                                         "or debug");
  }
  const std::string& text = *request.find("text");
  if (text.size() > kEventTextMax) {
    return error_reply(kReportEvent,
                       "event text longer than " + std::to_string(kEventTextMax) + " bytes");
  }
  cluster_log_->event(*severity, "Node " + std::to_string(*id) + ": " + text);
  return ok_reply(kReportEvent);
}

Message MgmService::handle_arbitrate(uint64_t session_id, const Message& request) {
  const std::string& id_text = *request.find("nodeid");
  auto id = parse_uint_arg(id_text, config::kDataNodeIdMax);
  const NodeIdAllocator::Holder* holder =
      id && *id != 0 ? allocator_.holder(static_cast<uint32_t>(*id)) : nullptr;
  const NodeSlot* slot = id ? allocator_.find_slot(static_cast<uint32_t>(*id)) : nullptr;
  if (holder == nullptr || slot == nullptr || slot->type != NodeType::kData ||
      holder->owner != session_id) {
    return error_reply(kArbitrate, "node " + id_text +
                                       " is not a data node id allocated to this session "
                                       "(get nodeid first)");
  }
  const config::ConfigSection* own = config_.parsed.find_node(own_node_id_);
  Result<uint64_t> rank = own != nullptr ? own->get_uint("ArbitrationRank") : Result<uint64_t>(0);
  if (!rank.ok() || *rank == 0) {
    return error_reply(kArbitrate, "management node " + std::to_string(own_node_id_) +
                                       " is not an arbitrator (ArbitrationRank=0)");
  }
  const std::optional<membership::NodeSet> survivors = parse_node_list(*request.find("survivors"));
  const std::optional<membership::NodeSet> failed = parse_node_list(*request.find("failed"));
  if (!survivors || !failed) {
    return error_reply(kArbitrate, "bad node list: expected data node ids separated by ','");
  }
  const auto president = static_cast<uint16_t>(*id);
  const membership::ArbitrationDecision decision =
      arbitration_.request(president, *survivors, *failed);
  const std::string who = "Node " + std::to_string(president) + ": ";
  if (decision.granted) {
    cluster_log_->event(Severity::kWarning, who + "Arbitration granted: data nodes " +
                                                membership::format_node_set(*survivors) +
                                                " continue without " +
                                                membership::format_node_set(*failed));
  } else {
    cluster_log_->event(Severity::kWarning, who + "Arbitration refused for data nodes " +
                                                membership::format_node_set(*survivors) + ": " +
                                                decision.reason);
  }
  Message reply = ok_reply(kArbitrate);
  const std::string* round = request.find("round");
  reply.add("round", round != nullptr ? *round : std::string("0"));
  reply.add("decision", decision.granted ? "granted" : "refused");
  if (!decision.granted) reply.add("reason", decision.reason);
  return reply;
}

}  // namespace duo::mgm
