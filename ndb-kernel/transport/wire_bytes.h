// Little-endian integer access for the transport's wire formats (frames and hellos).
//
// Written byte by byte rather than by memcpy of host integers so the encoding is the
// same on any host byte order; the compiler turns these into single loads and stores on
// little-endian machines. Private to ndb-kernel/transport.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

namespace duo::transport::wire {

inline uint16_t load_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
inline uint32_t load_u32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
inline void store_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
inline void store_u32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}

}  // namespace duo::transport::wire
