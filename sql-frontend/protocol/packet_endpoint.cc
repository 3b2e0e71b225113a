// MySQL packet framing; see packet_endpoint.h.
#include "sql-frontend/protocol/packet_endpoint.h"

#include <algorithm>
#include <cstring>

#include "sql-frontend/protocol/mysql_constants.h"

namespace duo::sql::protocol {

namespace {
// Read granularity: big enough that headers and small packets come in one recv().
constexpr size_t kReadChunkBytes = 16 * 1024;
// An input buffer grown beyond this for one large packet is given back once drained.
constexpr size_t kInputKeepBytesMax = 1024 * 1024;
}  // namespace

void PacketEndpoint::set_transport(Transport* transport) {
  transport_ = transport;
  in_pos_ = 0;
  in_end_ = 0;
}

bool PacketEndpoint::fill(size_t length) {
  if (in_end_ - in_pos_ >= length) return true;
  // Compact before growing so a long-lived session does not keep consumed bytes.
  if (in_pos_ > 0) {
    std::memmove(in_.data(), in_.data() + in_pos_, in_end_ - in_pos_);
    in_end_ -= in_pos_;
    in_pos_ = 0;
  }
  // The buffer keeps its size between reads: only growth writes (zeroes) new bytes,
  // not every read, which used to clear 16 KiB per packet.
  const size_t wanted_size = std::max(length, read_ahead_ ? kReadChunkBytes : size_t{0});
  if (in_.size() > kInputKeepBytesMax && wanted_size <= kReadChunkBytes &&
      in_end_ <= kReadChunkBytes) {
    in_.resize(kReadChunkBytes);
    in_.shrink_to_fit();
  }
  if (in_.size() < wanted_size) in_.resize(wanted_size);
  while (in_end_ < length) {
    const size_t want = read_ahead_ ? in_.size() - in_end_ : length - in_end_;
    Result<size_t> got = transport_->read_some(in_.data() + in_end_, want);
    if (!got.ok()) return false;
    in_end_ += *got;
  }
  return true;
}

std::string_view PacketEndpoint::take(size_t length) {
  std::string_view out(in_.data() + in_pos_, length);
  in_pos_ += length;
  return out;
}

PacketEndpoint::ReadResult PacketEndpoint::read_packet(std::string* payload,
                                                       size_t payload_bytes_max) {
  payload->clear();
  bool too_large = false;
  size_t discarded_bytes = 0;
  for (;;) {
    if (!fill(kPacketHeaderBytes)) return ReadResult::kClosed;
    std::string_view header = take(kPacketHeaderBytes);
    size_t length = static_cast<uint8_t>(header[0]) | (static_cast<uint8_t>(header[1]) << 8) |
                    (static_cast<size_t>(static_cast<uint8_t>(header[2])) << 16);
    uint8_t sequence = static_cast<uint8_t>(header[3]);
    if (sequence != sequence_id_) return ReadResult::kOutOfOrder;
    ++sequence_id_;
    if (!too_large && payload->size() + length > payload_bytes_max) {
      too_large = true;
      payload->clear();
      payload->shrink_to_fit();
    }
    if (too_large) {
      // Drop this piece without buffering it whole.
      discarded_bytes += length;
      if (discarded_bytes > kDiscardBytesMax) return ReadResult::kClosed;
      size_t left = length;
      while (left > 0) {
        size_t step = std::min(left, kReadChunkBytes);
        if (!fill(step)) return ReadResult::kClosed;
        take(step);
        left -= step;
      }
    } else {
      if (!fill(length)) return ReadResult::kClosed;
      payload->append(take(length));
    }
    if (length < kPacketPayloadBytesMax) break;
  }
  return too_large ? ReadResult::kTooLarge : ReadResult::kOk;
}

Status PacketEndpoint::write_packet(std::string_view payload) {
  size_t offset = 0;
  for (;;) {
    size_t length = std::min(payload.size() - offset, kPacketPayloadBytesMax);
    char header[kPacketHeaderBytes] = {
        static_cast<char>(length & 0xff), static_cast<char>((length >> 8) & 0xff),
        static_cast<char>((length >> 16) & 0xff), static_cast<char>(sequence_id_++)};
    out_.append(header, kPacketHeaderBytes);
    out_.append(payload.substr(offset, length));
    offset += length;
    if (out_.size() >= kFlushBytes && !in_result_) DUO_RETURN_IF_ERROR(flush());
    // A piece of exactly the maximum length says "more follows", so a payload that
    // is a multiple of it ends with an empty packet.
    if (length < kPacketPayloadBytesMax) break;
  }
  return Status::OK();
}

std::string& PacketEndpoint::start_packet() {
  packet_start_ = out_.size();
  out_.append(kPacketHeaderBytes, '\0');
  return out_;
}

Status PacketEndpoint::end_packet() {
  const size_t length = out_.size() - packet_start_ - kPacketHeaderBytes;
  if (length >= kPacketPayloadBytesMax) {
    // Rare (a row of 16 MiB): split it as any payload.
    std::string payload = out_.substr(packet_start_ + kPacketHeaderBytes);
    out_.resize(packet_start_);
    return write_packet(payload);
  }
  char* header = out_.data() + packet_start_;
  header[0] = static_cast<char>(length & 0xff);
  header[1] = static_cast<char>((length >> 8) & 0xff);
  header[2] = static_cast<char>((length >> 16) & 0xff);
  header[3] = static_cast<char>(sequence_id_++);
  if (out_.size() >= kFlushBytes && !in_result_) return flush();
  return Status::OK();
}

void PacketEndpoint::begin_result() {
  in_result_ = true;
  result_start_ = out_.size();
  result_sequence_ = sequence_id_;
}

Status PacketEndpoint::end_result() {
  in_result_ = false;
  if (out_.size() >= kFlushBytes) return flush();
  return Status::OK();
}

void PacketEndpoint::abandon_result() {
  in_result_ = false;
  out_.resize(result_start_);
  sequence_id_ = result_sequence_;
}

Status PacketEndpoint::flush() {
  if (out_.empty()) return Status::OK();
  Status status = transport_->write_all(out_);
  out_.clear();
  if (out_.capacity() > 4 * kFlushBytes) out_.shrink_to_fit();
  return status;
}

}  // namespace duo::sql::protocol
