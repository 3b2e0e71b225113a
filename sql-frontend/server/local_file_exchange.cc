// LocalFileExchange: see local_file_exchange.h.
#include "sql-frontend/server/local_file_exchange.h"

#include "sql-frontend/protocol/mysql_constants.h"

namespace duo::sql::server {

LocalFileExchange::LocalFileExchange(protocol::PacketEndpoint* endpoint,
                                     const uint32_t* client_capabilities,
                                     size_t max_packet_bytes)
    : endpoint_(endpoint),
      client_capabilities_(client_capabilities),
      max_packet_bytes_(max_packet_bytes) {}

bool LocalFileExchange::client_can_send_files() const {
  return (*client_capabilities_ & protocol::kClientLocalFiles) != 0;
}

void LocalFileExchange::request(const std::string& file_name) {
  std::string packet;
  packet.reserve(1 + file_name.size());
  packet.push_back(static_cast<char>(0xFB));
  packet += file_name;
  reading_ = true;
  if (!endpoint_->write_packet(packet).ok() || !endpoint_->flush().ok()) {
    broken_ = true;
    reading_ = false;
  }
}

bool LocalFileExchange::next_chunk(std::string* chunk) {
  if (!reading_) return false;
  const protocol::PacketEndpoint::ReadResult read = endpoint_->read_packet(chunk, max_packet_bytes_);
  if (read != protocol::PacketEndpoint::ReadResult::kOk) {
    broken_ = true;
    reading_ = false;
    return false;
  }
  if (chunk->empty()) {  // the end of the file
    reading_ = false;
    return false;
  }
  return true;
}

}  // namespace duo::sql::server
