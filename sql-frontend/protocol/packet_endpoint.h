// PacketEndpoint: MySQL packet framing over a byte stream — the 4-byte header (3-byte
// payload length, 1-byte sequence id), splitting of payloads of 2^24-1 bytes and more
// into several packets and joining them back, the sequence id, and the
// max_allowed_packet limit.
//
// The sequence id lives here and nowhere else (STYLE.md "The MySQL front-end"): every
// packet read must carry the expected id, every packet written takes the next one, and
// the session calls reset_sequence() when a new command starts. A reader that gets an
// out-of-order id or an oversized packet reports it rather than guessing, because
// after either the stream can no longer be trusted.
//
// When a logical packet exceeds the limit its remaining bytes are read and dropped (up
// to a bound) before reporting kTooLarge, so the ERR 1153 the session then writes is
// not lost in a TCP reset caused by closing a socket with unread data.
//
// Writes are buffered: write_packet() appends to an output buffer, which is sent when
// it grows past kFlushBytes or on flush(). The session flushes once per command, so a
// result set of many small rows costs few system calls. A packet can also be encoded in
// place (start_packet() / end_packet()), straight into that buffer. Between
// begin_result() and end_result() nothing is sent, so abandon_result() can take back a
// result that failed half-way (a value that does not encode): the peer never sees half
// a result set.
//
// Thread-safety: thread-compatible; one session thread owns an endpoint.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ndb-kernel/common/status.h"

namespace duo::sql::protocol {

// A bidirectional byte stream (a TCP socket, a TLS session, or a test buffer).
class Transport {
 public:
  virtual ~Transport() = default;
  // Reads at least one and at most `length` bytes into `out`. An error status
  // (kIoError) means the stream is closed or broken.
  virtual Result<size_t> read_some(char* out, size_t length) = 0;
  // Writes all of `bytes` or fails with kIoError.
  virtual Status write_all(std::string_view bytes) = 0;
};

class PacketEndpoint {
 public:
  // Output is sent once this much is buffered.
  static constexpr size_t kFlushBytes = 64 * 1024;
  // Bytes of an oversized packet read and dropped before answering ERR 1153; beyond
  // this the connection is simply closed.
  static constexpr size_t kDiscardBytesMax = 64 * 1024 * 1024;

  enum class ReadResult { kOk, kClosed, kOutOfOrder, kTooLarge };

  explicit PacketEndpoint(Transport* transport) : transport_(transport) {}
  PacketEndpoint(const PacketEndpoint&) = delete;
  PacketEndpoint& operator=(const PacketEndpoint&) = delete;

  // Switches the byte stream (after the TLS upgrade). Buffered input is discarded.
  void set_transport(Transport* transport);
  // Off: reads take exactly the bytes of the packet being read, nothing behind it. The
  // session reads the first client packet so: a client sends its TLS ClientHello right
  // behind its SSLRequest, and those bytes belong to the TLS session, not to us.
  void set_read_ahead(bool on) { read_ahead_ = on; }

  // Reads one logical packet into `payload` (joined if split). `payload_bytes_max`
  // is the limit for this packet (max_allowed_packet, or a smaller cap for
  // handshake-phase packets).
  ReadResult read_packet(std::string* payload, size_t payload_bytes_max);

  // Queues one logical packet, split as needed.
  Status write_packet(std::string_view payload);
  // A packet encoded in place: start_packet() returns the output buffer with room for
  // the header reserved; the caller appends the payload (PacketWriter(&buffer)), then
  // end_packet() writes the header (splitting a payload of 2^24-1 bytes or more as
  // write_packet() does). Nothing else may be queued in between.
  std::string& start_packet();
  Status end_packet();
  // The output from here on is one result: not sent before end_result(), dropped by
  // abandon_result() (which also takes back the sequence ids it used).
  void begin_result();
  Status end_result();
  void abandon_result();
  Status flush();

  // The next sequence id to read or write; a command starts at 0.
  uint8_t sequence_id() const { return sequence_id_; }
  void reset_sequence() { sequence_id_ = 0; }
  void set_sequence(uint8_t id) { sequence_id_ = id; }

  // Bytes received but not yet consumed by read_packet (for the TLS upgrade check).
  size_t buffered_input_bytes() const { return in_end_ - in_pos_; }

 private:
  // Ensures `length` unread bytes are buffered; false if the stream ended.
  bool fill(size_t length);
  std::string_view take(size_t length);

  Transport* transport_;
  uint8_t sequence_id_ = 0;
  // Input: bytes [in_pos_, in_end_) of in_ are received and not yet consumed; in_'s
  // size is the buffer's room, not what was received.
  std::string in_;
  size_t in_pos_ = 0;
  size_t in_end_ = 0;
  bool read_ahead_ = true;
  std::string out_;
  size_t packet_start_ = 0;  // where start_packet() put the header
  bool in_result_ = false;   // between begin_result() and end_result()
  size_t result_start_ = 0;  // out_'s size at begin_result()
  uint8_t result_sequence_ = 0;
};

}  // namespace duo::sql::protocol
