// Column values as the storage layer's bytes, for tests: little-endian INT / BIGINT.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace duo::testing {

inline std::string i32(int32_t v) {
  return std::string(reinterpret_cast<const char*>(&v), 4);
}
inline std::string i64(int64_t v) {
  return std::string(reinterpret_cast<const char*>(&v), 8);
}
// 0 unless `bytes` holds 8 bytes.
inline int64_t as_i64(std::string_view bytes) {
  int64_t v = 0;
  if (bytes.size() == 8) std::memcpy(&v, bytes.data(), 8);
  return v;
}

}  // namespace duo::testing
