// MgmService: what duo_mgmd answers to each management protocol request — node id
// allocation, the served configuration, node status, the cluster-log filter, stop /
// restart / shutdown. The command set and replies are docs/formats/mgm-protocol.md.
//
// The service is the session state machine without the sockets: MgmServer (the event
// loop) hands it parsed requests and session open/close events and writes back the
// replies it returns. Keeping the two apart lets unit tests drive every command and
// error path with plain calls.
//
// Data nodes: a duo_datad holds its node id with `get nodeid` and then keeps its session
// open, sending `report status` (state, start phase, transporter port, memory pages per area) periodically.
// The service tracks each reporting data node's state for `get status`, and forwards
// `stop` / `shutdown` to the node as an unsolicited `node stop` message on that session.
// The answer to the operator is deferred until the node's session has ended (the node
// really stopped) or kStopWaitMs passed: nothing here pretends an action happened.
// Deferred replies and messages to other sessions leave through take_deliveries().
//
// Thread-safety: thread-compatible; mgmd calls it from its single event-loop thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mgmd/daemon/cluster_log.h"
#include "mgmd/daemon/config_cache.h"
#include "mgmd/daemon/node_id_allocator.h"
#include "mgmd/protocol/mgm_protocol.h"
#include "ndb-kernel/common/config/config_parser.h"
#include "ndb-kernel/membership/arbitration_rule.h"

namespace duo::mgm {

// "0.1.0" and "DuoDB-0.1.0", from the CMake project version.
std::string_view duo_version();
std::string duo_version_string();
// major << 16 | minor << 8 | patch (NDB's version number layout).
uint32_t duo_version_number();

// The state a data node reports (`report status`). A data node whose id is held but
// that has not reported yet is shown as ALLOCATED in `get status`.
enum class DataNodeState : uint8_t { kNotStarted, kStarting, kStarted, kStopping };
// "NOT_STARTED", "STARTING", "STARTED", "STOPPING" (the `get status` spelling).
std::string_view data_node_state_name(DataNodeState state);
// Accepts the names above case-insensitively, with '_' or ' ' ("not started").
std::optional<DataNodeState> parse_data_node_state(std::string_view text);

// The memory areas a data node reports (`report status` arguments <area>.used and
// <area>.total, in 32 KiB pages), in the order `get status` lists them.
inline constexpr std::string_view kMemoryAreaKeys[] = {"datamemory", "diskpagebuffer",
                                                       "transactionmemory", "schemamemory"};

// How long `stop` / `shutdown` wait for data nodes to end their sessions before the
// operator gets an error (a node that does not stop must not hang the client forever).
inline constexpr uint64_t kStopWaitMs = 30000;

// The configuration mgmd serves: the persisted generation and its parsed form.
struct ServedConfig {
  CachedConfig cache;
  config::ClusterConfig parsed;
};

class MgmService {
 public:
  struct Outcome {
    Message reply;
    bool close_session = false;  // `bye`: send the reply, then close
    // No reply now: it comes later through take_deliveries() (stop of a data node,
    // shutdown with data nodes). The server answers nothing else on the session until then.
    bool deferred = false;
  };

  // A message for a session other than the one a handle() call answers: a `node stop`
  // order to a data node, or a deferred reply (completes_deferred).
  struct Delivery {
    uint64_t session_id = 0;
    Message message;
    bool completes_deferred = false;
  };

  // What a data node reported last (held while its session lives).
  struct DataNodeReport {
    uint64_t session_id = 0;
    DataNodeState state = DataNodeState::kNotStarted;
    uint32_t start_phase = 0;   // last completed start phase
    std::string start_info;     // what the starting node is doing (e.g. its node restart)
    uint16_t port = 0;          // transporter port; 0 = not reported
    bool stop_ordered = false;  // `node stop` sent: shown as STOPPING
    // When its last report came (the service's steady ms), and whether it has been silent
    // for kDataNodeSilenceMs since: a frozen or silently cut-off node keeps its session
    // open (nothing closes the socket), so without this it would show as started until
    // the session's idle timeout, minutes later. Shown as NOT_RESPONDING meanwhile.
    uint64_t last_report_ms = 0;
    bool silent = false;
    struct MemoryPages {
      uint64_t used = 0;   // 32 KiB pages in use
      uint64_t total = 0;  // pages the area may use (its effective cap)
    };
    // Last reported memory usage by area key (kMemoryAreaKeys); empty = not reported.
    std::map<std::string, MemoryPages, std::less<>> memory;
  };

  // `own_node_id` must be a management node of `config`; the service holds it for
  // itself at once. `slots` are the config's nodes with resolved host addresses.
  MgmService(ServedConfig config, uint32_t own_node_id, std::vector<NodeSlot> slots,
             ClusterLog* cluster_log);

  // A client connected from `peer` ("127.0.0.1:53422"); `peer_address` is the IP.
  void on_session_open(uint64_t session_id, std::string peer, std::string peer_address);
  // The session is gone (closed by the peer, timed out, or dropped after an error);
  // frees its node ids. `reason` goes to the cluster log.
  void on_session_closed(uint64_t session_id, std::string_view reason);
  // Answers one request of an open session.
  Outcome handle(uint64_t session_id, const RequestParser::Parsed& parsed);

  // A data node reports every second (duo_datad's kReportIntervalMs): this long without
  // a report, it is shown NOT_RESPONDING (and the cluster log says so once) until it
  // reports again or its session ends.
  static constexpr uint64_t kDataNodeSilenceMs = 3000;

  // Advances the service's notion of time (steady ms); expires waits for stopping data
  // nodes and marks silent data nodes. The server calls it every loop turn, before
  // handle().
  void tick(uint64_t now_ms);
  // Messages queued for sessions by handle(), on_session_closed() and tick().
  std::vector<Delivery> take_deliveries();

  // The report of data node `node_id`, or nullptr when it is not reporting.
  const DataNodeReport* data_node(uint32_t node_id) const;

  // Set by `shutdown` (or `stop` of mgmd's own id): the server stops after flushing.
  bool shutdown_requested() const { return shutdown_requested_; }

  uint32_t own_node_id() const { return own_node_id_; }
  const ServedConfig& config() const { return config_; }
  const NodeIdAllocator& allocator() const { return allocator_; }
  ClusterLog& cluster_log() { return *cluster_log_; }

 private:
  struct Session {
    std::string peer;          // address:port, for logs
    std::string peer_address;  // address only, for HostName checks
  };

  Message handle_get_nodeid(uint64_t session_id, const Session& session, const Message& request);
  Message handle_get_config(const Message& request);
  Message handle_get_status(const Message& request);
  Message handle_get_version(const Message& request);
  Outcome handle_stop_or_restart(uint64_t session_id, const Session& session,
                                 const Message& request, bool restart);
  Outcome handle_shutdown(uint64_t session_id, const Session& session, const Message& request);
  Message handle_report_status(uint64_t session_id, const Message& request);
  // `arbitrate`: the arbitrator's decision for a data node president (ArbitrationRule).
  Message handle_arbitrate(uint64_t session_id, const Message& request);
  // `report event`: a line from a node for the cluster log ("Node 2: Node 1 declared dead").
  Message handle_report_event(uint64_t session_id, const Message& request);
  // Sends `node stop` to data node `node_id` and marks it stopping.
  // `restart`: the node starts again by itself once stopped (`N RESTART`), `initial`
  // with its file system cleared.
  void order_stop(uint32_t node_id, const std::string& initiator, bool restart = false,
                  bool initial = false);
  // Replies to a finished (or expired) wait and forgets it.
  struct PendingStop;
  void complete(PendingStop& pending, bool expired);
  Message handle_get_clusterlog(const Message& request);
  Message handle_set_clusterlog(const Message& request);
  Message clusterlog_reply(std::string_view command) const;

  ServedConfig config_;
  const uint32_t own_node_id_;
  NodeIdAllocator allocator_;
  ClusterLog* cluster_log_;
  std::map<uint64_t, Session> sessions_;
  std::map<uint32_t, DataNodeReport> data_nodes_;  // reporting data nodes by id
  // The arbitrator's memory of granted requests (nodes they declared failed).
  membership::ArbitrationRule arbitration_;

  // An operator's `stop` or `shutdown` waiting for data nodes to end their sessions.
  struct PendingStop {
    uint64_t requester = 0;  // session to answer; 0 once it has gone
    bool shutdown = false;
    bool restart = false;           // `restart`: answered as such (the node comes back by itself)
    std::vector<uint32_t> waiting;  // data nodes still running
    size_t stopped = 0;
    uint64_t deadline_ms = 0;
  };
  std::vector<PendingStop> pending_stops_;
  std::vector<Delivery> deliveries_;
  uint64_t now_ms_ = 0;
  bool shutdown_requested_ = false;
};

// Builds an error reply: head "<command> reply" and `result: <message>`.
Message error_reply(std::string_view command, std::string_view message);

}  // namespace duo::mgm
