// PacketReader and PacketWriter: the primitive encodings of the MySQL protocol —
// little-endian fixed-width integers, length-encoded integers and strings,
// NUL-terminated strings, and "rest of packet" strings — over one packet payload.
//
// Errors: a truncated or malformed payload makes a reader method throw ProtocolError.
// The SQL front-end may throw inside a command (STYLE.md "Errors"); here it means no
// decoder can forget to check a read, and the session turns the one catch per packet
// into an ERR packet (or a closed connection during the handshake). Nothing below the
// SQL layer sees these exceptions.
//
// A PacketWriter can be built in counting mode: it then stores nothing and only adds
// up sizes, which gives every packet type its size() from the same code as write(). It
// can also append to a string it does not own (a connection's output buffer, where a
// result row is encoded in place).
//
// Thread-safety: thread-compatible value types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace duo::sql::protocol {

// A payload that does not decode: truncated, an impossible value, or bytes left over.
// `mysql_errno` is what the peer is told (1835 ER_MALFORMED_PACKET unless said).
class ProtocolError : public std::runtime_error {
 public:
  explicit ProtocolError(const std::string& what, uint16_t mysql_errno = 1835)
      : std::runtime_error(what), mysql_errno_(mysql_errno) {}
  uint16_t mysql_errno() const { return mysql_errno_; }

 private:
  uint16_t mysql_errno_;
};

// Size of the length-encoded integer `value` on the wire: 1, 3, 4 or 9 bytes.
size_t lenenc_int_size(uint64_t value);

class PacketReader {
 public:
  explicit PacketReader(std::string_view payload) : data_(payload) {}
  // The reader keeps a view: refuse temporaries that would leave it dangling.
  explicit PacketReader(std::string&&) = delete;
  explicit PacketReader(const char* payload) : data_(payload) {}

  size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }
  size_t position() const { return pos_; }
  // Next byte without consuming it; throws at the end.
  uint8_t peek_u8() const;

  uint8_t read_u8();
  uint16_t read_u16();
  uint32_t read_u24();
  uint32_t read_u32();
  uint64_t read_u48();
  uint64_t read_u64();
  float read_float();
  double read_double();
  // Length-encoded integer. 0xfb (NULL marker) and 0xff are refused here; callers
  // that accept NULL check peek_u8() first.
  uint64_t read_lenenc_int();
  std::string_view read_lenenc_string();
  std::string_view read_bytes(size_t length);
  // Up to the next NUL, which is consumed and not returned; throws if there is none.
  std::string_view read_null_terminated();
  std::string_view read_rest();
  void skip(size_t length) { (void)read_bytes(length); }
  // Throws unless every byte was consumed: a packet not fully read is a protocol
  // error, because it means the peer and we disagree about its layout.
  void expect_end(const char* packet_name) const;

 private:
  void need(size_t length) const;

  std::string_view data_;
  size_t pos_ = 0;
};

class PacketWriter {
 public:
  enum Mode { kStore, kCountOnly };
  explicit PacketWriter(Mode mode = kStore) : count_only_(mode == kCountOnly) {}
  // Appends to `*target`, which must outlive the writer; the bytes already there are
  // kept and not counted. buffer() and take() are not for this mode.
  explicit PacketWriter(std::string* target)
      : count_only_(false), target_(target), target_base_(target->size()) {}

  // Bytes written (or counted) so far.
  size_t size() const {
    if (count_only_) return counted_;
    return target_ != nullptr ? target_->size() - target_base_ : buffer_.size();
  }
  const std::string& buffer() const { return buffer_; }
  std::string take() { return std::move(buffer_); }

  void write_u8(uint8_t value);
  void write_u16(uint16_t value);
  void write_u24(uint32_t value);
  void write_u32(uint32_t value);
  void write_u64(uint64_t value);
  void write_float(float value);
  void write_double(double value);
  void write_lenenc_int(uint64_t value);
  void write_lenenc_string(std::string_view value);
  void write_bytes(std::string_view value);
  void write_null_terminated(std::string_view value);
  void write_zeros(size_t count);

 private:
  void append(const void* data, size_t length);

  std::string& out() { return target_ != nullptr ? *target_ : buffer_; }

  bool count_only_;
  size_t counted_ = 0;
  std::string buffer_;
  std::string* target_ = nullptr;  // not owned; null: buffer_
  size_t target_base_ = 0;
};

}  // namespace duo::sql::protocol
