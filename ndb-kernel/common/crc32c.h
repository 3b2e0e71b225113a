// CRC32C (Castagnoli, reflected polynomial 0x82F63B78): the checksum of every DuoDB page,
// redo record, checkpoint file and wire frame that needs one.
//
// crc32c() picks the fastest implementation once, at first use: SSE4.2 `crc32` on
// x86_64 CPUs that have it, the ARMv8 CRC32 instructions on aarch64 CPUs that have
// them, else a portable slicing-by-8 table. All three produce identical values, which
// the tests check on random buffers, so files written on one machine verify on another.
//
// The CRC value is "finalised" (pre- and post-inverted) as in iSCSI/ext4, and a finished
// CRC can be extended: crc32c(b, n_b, crc32c(a, n_a)) == crc32c(a ++ b). Store a CRC
// inside data that is itself checksummed only in masked form (crc32c_mask), because the
// CRC of a buffer that ends with its own plain CRC is a constant, which defeats the
// check.
//
// Thread-safety: all functions are pure and safe to call concurrently.
#pragma once

#include <cstddef>
#include <cstdint>

namespace duo {

// CRC32C of `size_bytes` bytes at `data`, extending `crc` (0 for a fresh checksum).
uint32_t crc32c(const void* data, size_t size_bytes, uint32_t crc = 0);

// The portable table implementation (always available); same contract as crc32c().
uint32_t crc32c_portable(const void* data, size_t size_bytes, uint32_t crc = 0);
// True if this CPU has CRC32C instructions this build can use.
bool crc32c_hardware_available();
// The instruction-based implementation; falls back to crc32c_portable() when
// crc32c_hardware_available() is false, so it is always safe to call.
uint32_t crc32c_hardware(const void* data, size_t size_bytes, uint32_t crc = 0);
// "sse4.2", "armv8-crc" or "slicing-by-8": what crc32c() uses, for startup logs.
const char* crc32c_implementation_name();

// A masked CRC is safe to store inside data that is checksummed again. Rotating and
// adding a constant means a buffer containing its own masked CRC no longer has the
// fixed residue a plain CRC would give it.
inline constexpr uint32_t kCrc32cMaskDelta = 0xa282ead8u;
constexpr uint32_t crc32c_mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + kCrc32cMaskDelta;
}
constexpr uint32_t crc32c_unmask(uint32_t masked_crc) {
  const uint32_t rotated = masked_crc - kCrc32cMaskDelta;
  return (rotated >> 17) | (rotated << 15);
}

}  // namespace duo
