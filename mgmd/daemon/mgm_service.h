// MgmService: what duo_mgmd answers to each management protocol request — node id
// allocation, the served configuration, node status, the cluster-log filter, stop /
// restart / shutdown. The command set and replies are docs/formats/mgm-protocol.md.
//
// The service is the session state machine without the sockets: MgmServer (the event
// loop) hands it parsed requests and session open/close events and writes back the
// replies it returns. Keeping the two apart lets unit tests drive every command and
// error path with plain calls.
//
// Honesty rule: data nodes do not exist yet, so every data node is reported as not
// connected and stop/restart of one fail with "node N is not connected". Nothing here
// pretends an action happened.
//
// Thread-safety: thread-compatible; mgmd calls it from its single event-loop thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "mgmd/daemon/cluster_log.h"
#include "mgmd/daemon/config_cache.h"
#include "mgmd/daemon/node_id_allocator.h"
#include "mgmd/protocol/mgm_protocol.h"
#include "ndb-kernel/common/config/config_parser.h"

namespace duo::mgm {

// "0.1.0" and "DuoDB-0.1.0", from the CMake project version.
std::string_view duo_version();
std::string duo_version_string();
// major << 16 | minor << 8 | patch (NDB's version number layout).
uint32_t duo_version_number();

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
  Message handle_stop_or_restart(const Session& session, const Message& request, bool restart);
  Message handle_shutdown(const Session& session, const Message& request);
  Message handle_get_clusterlog(const Message& request);
  Message handle_set_clusterlog(const Message& request);
  Message clusterlog_reply(std::string_view command) const;

  ServedConfig config_;
  const uint32_t own_node_id_;
  NodeIdAllocator allocator_;
  ClusterLog* cluster_log_;
  std::map<uint64_t, Session> sessions_;
  bool shutdown_requested_ = false;
};

// Builds an error reply: head "<command> reply" and `result: <message>`.
Message error_reply(std::string_view command, std::string_view message);

}  // namespace duo::mgm
