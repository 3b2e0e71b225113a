// Primitive MySQL protocol encodings; see wire_buffer.h.
#include "sql-frontend/protocol/wire_buffer.h"

#include <cstring>

namespace duo::sql::protocol {

size_t lenenc_int_size(uint64_t value) {
  if (value < 251) return 1;
  if (value < (1u << 16)) return 3;
  if (value < (1u << 24)) return 4;
  return 9;
}

void PacketReader::need(size_t length) const {
  if (length > remaining()) {
    throw ProtocolError("malformed packet: need " + std::to_string(length) + " bytes at offset " +
                        std::to_string(pos_) + ", have " + std::to_string(remaining()));
  }
}

uint8_t PacketReader::peek_u8() const {
  need(1);
  return static_cast<uint8_t>(data_[pos_]);
}

uint8_t PacketReader::read_u8() {
  need(1);
  return static_cast<uint8_t>(data_[pos_++]);
}

namespace {
uint64_t load_le(const char* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}
}  // namespace

uint16_t PacketReader::read_u16() {
  return static_cast<uint16_t>(load_le(read_bytes(2).data(), 2));
}
uint32_t PacketReader::read_u24() {
  return static_cast<uint32_t>(load_le(read_bytes(3).data(), 3));
}
uint32_t PacketReader::read_u32() {
  return static_cast<uint32_t>(load_le(read_bytes(4).data(), 4));
}
uint64_t PacketReader::read_u48() {
  return load_le(read_bytes(6).data(), 6);
}
uint64_t PacketReader::read_u64() {
  return load_le(read_bytes(8).data(), 8);
}

float PacketReader::read_float() {
  uint32_t bits = read_u32();
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

double PacketReader::read_double() {
  uint64_t bits = read_u64();
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint64_t PacketReader::read_lenenc_int() {
  uint8_t first = read_u8();
  if (first < 0xfb) return first;
  switch (first) {
    case 0xfc:
      return read_u16();
    case 0xfd:
      return read_u24();
    case 0xfe:
      return read_u64();
    default:
      throw ProtocolError("malformed packet: bad length-encoded integer prefix " +
                          std::to_string(first));
  }
}

std::string_view PacketReader::read_lenenc_string() {
  uint64_t length = read_lenenc_int();
  if (length > remaining()) throw ProtocolError("malformed packet: string runs past the end");
  return read_bytes(static_cast<size_t>(length));
}

std::string_view PacketReader::read_bytes(size_t length) {
  need(length);
  std::string_view out = data_.substr(pos_, length);
  pos_ += length;
  return out;
}

std::string_view PacketReader::read_null_terminated() {
  size_t end = data_.find('\0', pos_);
  if (end == std::string_view::npos) throw ProtocolError("malformed packet: missing NUL");
  std::string_view out = data_.substr(pos_, end - pos_);
  pos_ = end + 1;
  return out;
}

std::string_view PacketReader::read_rest() {
  return read_bytes(remaining());
}

void PacketReader::expect_end(const char* packet_name) const {
  if (!at_end()) {
    throw ProtocolError(std::string("malformed packet: ") + std::to_string(remaining()) +
                        " unread bytes after " + packet_name);
  }
}

void PacketWriter::append(const void* data, size_t length) {
  if (count_only_) {
    counted_ += length;
  } else {
    out().append(static_cast<const char*>(data), length);
  }
}

namespace {
template <typename T>
void store_le(char* out, T value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i)
    out[i] = static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xff);
}
}  // namespace

void PacketWriter::write_u8(uint8_t value) {
  append(&value, 1);
}
void PacketWriter::write_u16(uint16_t value) {
  char b[2];
  store_le(b, value, 2);
  append(b, 2);
}
void PacketWriter::write_u24(uint32_t value) {
  char b[3];
  store_le(b, value, 3);
  append(b, 3);
}
void PacketWriter::write_u32(uint32_t value) {
  char b[4];
  store_le(b, value, 4);
  append(b, 4);
}
void PacketWriter::write_u64(uint64_t value) {
  char b[8];
  store_le(b, value, 8);
  append(b, 8);
}
void PacketWriter::write_float(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  write_u32(bits);
}
void PacketWriter::write_double(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  write_u64(bits);
}

void PacketWriter::write_lenenc_int(uint64_t value) {
  if (value < 251) {
    write_u8(static_cast<uint8_t>(value));
  } else if (value < (1u << 16)) {
    write_u8(0xfc);
    write_u16(static_cast<uint16_t>(value));
  } else if (value < (1u << 24)) {
    write_u8(0xfd);
    write_u24(static_cast<uint32_t>(value));
  } else {
    write_u8(0xfe);
    write_u64(value);
  }
}

void PacketWriter::write_lenenc_string(std::string_view value) {
  write_lenenc_int(value.size());
  append(value.data(), value.size());
}

void PacketWriter::write_bytes(std::string_view value) {
  append(value.data(), value.size());
}

void PacketWriter::write_null_terminated(std::string_view value) {
  append(value.data(), value.size());
  write_u8(0);
}

void PacketWriter::write_zeros(size_t count) {
  if (count_only_) {
    counted_ += count;
  } else {
    out().append(count, '\0');
  }
}

}  // namespace duo::sql::protocol
