// LocalFileExchange: the server side of LOAD DATA LOCAL INFILE on one connection, as
// MySQL's protocol has it: in the middle of the statement's command the server sends a
// packet 0xFB + file name, the client answers with the file's bytes in packets (of any
// size up to max_allowed_packet) and an empty packet at its end, then the server sends
// the statement's result. Sequence ids run on through the whole exchange.
//
// Thread-compatible: used by the session thread only.
#pragma once

#include <cstdint>
#include <string>

#include "sql-frontend/protocol/packet_endpoint.h"
#include "sql-frontend/server/query_handler.h"

namespace duo::sql::server {

class LocalFileExchange : public LocalFileSource {
 public:
  // `client_capabilities`: read when asked (the handshake sets them after construction).
  LocalFileExchange(protocol::PacketEndpoint* endpoint, const uint32_t* client_capabilities,
                    size_t max_packet_bytes);

  bool client_can_send_files() const override;
  void request(const std::string& file_name) override;
  bool next_chunk(std::string* chunk) override;
  bool broken() const override { return broken_; }

 private:
  protocol::PacketEndpoint* const endpoint_;
  const uint32_t* const client_capabilities_;
  const size_t max_packet_bytes_;
  bool reading_ = false;  // requested, end not yet seen
  bool broken_ = false;
};

}  // namespace duo::sql::server
