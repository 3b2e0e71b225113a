// Little-endian byte reading and writing for the scan programs' wire formats (filters,
// interpreted updates). The reader never reads past its input: every accessor checks the
// remaining size and returns false instead, so decoders of untrusted bytes stay simple.
// Not thread-safe; one owner per object.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace duo::storage::scan_codec {

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}

  bool u8(uint8_t* v) { return fixed(v, 1); }
  bool u16(uint16_t* v) { return fixed(v, 2); }
  bool u32(uint32_t* v) { return fixed(v, 4); }
  bool u64(uint64_t* v) { return fixed(v, 8); }
  // A view of the next `size_bytes` bytes (into the input).
  bool take(uint64_t size_bytes, std::string_view* out) {
    if (remaining() < size_bytes) return false;
    *out = bytes_.substr(pos_, static_cast<size_t>(size_bytes));
    pos_ += static_cast<size_t>(size_bytes);
    return true;
  }
  size_t remaining() const { return bytes_.size() - pos_; }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  template <typename T>
  bool fixed(T* v, size_t width_bytes) {
    if (remaining() < width_bytes) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < width_bytes; ++i) {
      x |= uint64_t{static_cast<uint8_t>(bytes_[pos_ + i])} << (8 * i);
    }
    *v = static_cast<T>(x);
    pos_ += width_bytes;
    return true;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
};

inline void put_le(std::string* out, uint64_t v, size_t width_bytes) {
  for (size_t i = 0; i < width_bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
inline void put_u8(std::string* out, uint8_t v) { out->push_back(static_cast<char>(v)); }
inline void put_u16(std::string* out, uint16_t v) { put_le(out, v, 2); }
inline void put_u32(std::string* out, uint32_t v) { put_le(out, v, 4); }
inline void put_u64(std::string* out, uint64_t v) { put_le(out, v, 8); }

}  // namespace duo::storage::scan_codec
