// MgmConnection: a client session of the management protocol — connect to duo_mgmd,
// send one request, wait for its reply. Used by duo_mgm; later by data and API nodes
// to fetch their node id and configuration.
//
// Blocking calls with deadlines (poll() on a non-blocking socket): a management
// client has nothing else to do while it waits, and a deadline makes an unresponsive
// mgmd an error instead of a hang.
//
// Thread-safety: thread-compatible (one request at a time per connection).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mgmd/protocol/mgm_protocol.h"
#include "ndb-kernel/common/status.h"

namespace duo::mgm {

struct ConnectString {
  std::string host = "localhost";
  uint16_t port = 1186;
};

// Parses NDB connect strings: "host", "host:port", "[v6addr]:port", and the
// comma-separated form "nodeid=4,host:port,host2:port" (the first host is used;
// "nodeid=" and "bind-address=" parts are skipped). kInvalidArgument when malformed.
Result<ConnectString> parse_connect_string(std::string_view text);

class MgmConnection {
 public:
  MgmConnection() = default;
  ~MgmConnection() { close(); }
  MgmConnection(const MgmConnection&) = delete;
  MgmConnection& operator=(const MgmConnection&) = delete;

  // Connects to `target` within `timeout_ms`. kIoError with the OS reason
  // ("Connection refused") when mgmd cannot be reached.
  Status connect(const ConnectString& target, uint64_t timeout_ms);
  bool connected() const { return fd_ >= 0; }
  void close();

  // Sends `request` and returns the reply. kIoError if the connection broke or the
  // reply did not arrive within `timeout_ms` (the connection is then closed, because
  // a late reply would be taken for the answer to the next request).
  Result<Message> call(const Message& request, uint64_t timeout_ms);

  // Asynchronous use, for a node that keeps its session (duo_datad): send requests
  // without waiting, and read whatever message comes next — a reply or an unsolicited
  // order such as `node stop`. Do not mix with call() while replies are outstanding.
  // send(): kIoError if the connection broke (then closed).
  Status send(const Message& request, uint64_t timeout_ms);
  // The next complete message, or nullopt if none arrived within `timeout_ms` (also
  // when a signal interrupted the wait). kIoError if the connection broke (then closed).
  Result<std::optional<Message>> receive(uint64_t timeout_ms);

 private:
  ReplyParser async_parser_;  // receive(): a message may arrive over several calls
  int fd_ = -1;
  std::string buffered_;  // bytes received after the last reply
};

// The `result` of a reply: OK for "Ok", else kInvalidArgument with the text.
Status reply_result(const Message& reply);

}  // namespace duo::mgm
