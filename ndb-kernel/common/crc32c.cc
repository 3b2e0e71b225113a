// CRC32C implementations: slicing-by-8 tables (portable), SSE4.2 (x86_64) and ARMv8
// CRC32 (aarch64), with a one-time runtime choice.
//
// The hardware paths are compiled with a per-function target attribute, so the rest of
// the binary needs no -msse4.2 / -march=armv8-a+crc and still runs on CPUs without
// the instructions; they are only called after the CPU has been asked.
#include "ndb-kernel/common/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#define DUO_CRC32C_X86 1
#elif defined(__aarch64__)
#include <arm_acle.h>
#if defined(__ARM_FEATURE_CRC32)
// The compiler may assume the CRC instructions everywhere (e.g. -march=armv8.1-a).
#define DUO_CRC32C_ARM_ALWAYS 1
#elif defined(__linux__) && __has_include(<sys/auxv.h>)
#include <sys/auxv.h>
#define DUO_CRC32C_ARM_RUNTIME 1
#endif
#endif

namespace duo {
namespace {

constexpr uint32_t kPolynomialReflected = 0x82F63B78u;

using SliceTables = std::array<std::array<uint32_t, 256>, 8>;

// tables[0] is the classic byte-at-a-time table; tables[k][b] is the CRC contribution
// of byte b followed by k zero bytes, which lets the loop fold 8 bytes per step with 8
// independent lookups instead of a serial chain of 8.
constexpr SliceTables make_slice_tables() {
  SliceTables tables{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1) ? (crc >> 1) ^ kPolynomialReflected : crc >> 1;
    }
    tables[0][byte] = crc;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t byte = 0; byte < 256; ++byte) {
      const uint32_t previous = tables[k - 1][byte];
      tables[k][byte] = (previous >> 8) ^ tables[0][previous & 0xFF];
    }
  }
  return tables;
}

constexpr SliceTables kTables = make_slice_tables();
static_assert(kTables[0][1] == 0xF26B8303u, "CRC32C table sanity");

// Little-endian load independent of host byte order, so the table path is portable.
inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// Works on the inverted ("raw") register value; callers do the pre/post inversion.
uint32_t crc32c_slicing8_raw(uint32_t crc, const uint8_t* p, size_t n) {
  // Align to 8 bytes first: aligned loads are cheaper on some cores, and the result
  // does not depend on it.
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc = (crc >> 8) ^ kTables[0][(crc ^ *p) & 0xFF];
    ++p;
    --n;
  }
  while (n >= 8) {
    const uint32_t low = crc ^ load_le32(p);
    const uint32_t high = load_le32(p + 4);
    crc = kTables[7][low & 0xFF] ^ kTables[6][(low >> 8) & 0xFF] ^ kTables[5][(low >> 16) & 0xFF] ^
          kTables[4][low >> 24] ^ kTables[3][high & 0xFF] ^ kTables[2][(high >> 8) & 0xFF] ^
          kTables[1][(high >> 16) & 0xFF] ^ kTables[0][high >> 24];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    crc = (crc >> 8) ^ kTables[0][(crc ^ *p) & 0xFF];
    ++p;
    --n;
  }
  return crc;
}

#if defined(DUO_CRC32C_X86)

__attribute__((target("sse4.2"))) uint32_t crc32c_sse42_raw(uint32_t crc, const uint8_t* p,
                                                            size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc = _mm_crc32_u8(crc, *p);
    ++p;
    --n;
  }
  uint64_t crc64 = crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));  // x86 is little-endian, as the instruction expects
    crc64 = _mm_crc32_u64(crc64, word);
    p += 8;
    n -= 8;
  }
  crc = static_cast<uint32_t>(crc64);
  while (n > 0) {
    crc = _mm_crc32_u8(crc, *p);
    ++p;
    --n;
  }
  return crc;
}

bool cpu_has_crc_instructions() {
  __builtin_cpu_init();  // needed if we are called before the runtime's own init ran
  return __builtin_cpu_supports("sse4.2");
}

constexpr const char* kHardwareName = "sse4.2";
#define DUO_CRC32C_HW_RAW crc32c_sse42_raw

#elif defined(DUO_CRC32C_ARM_ALWAYS) || defined(DUO_CRC32C_ARM_RUNTIME)

#if defined(DUO_CRC32C_ARM_ALWAYS)
#define DUO_CRC32C_ARM_TARGET
#else
#define DUO_CRC32C_ARM_TARGET __attribute__((target("+crc")))
#endif

DUO_CRC32C_ARM_TARGET uint32_t crc32c_armv8_raw(uint32_t crc, const uint8_t* p, size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc = __crc32cb(crc, *p);
    ++p;
    --n;
  }
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));  // aarch64 Linux is little-endian
    crc = __crc32cd(crc, word);
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    crc = __crc32cb(crc, *p);
    ++p;
    --n;
  }
  return crc;
}

bool cpu_has_crc_instructions() {
#if defined(DUO_CRC32C_ARM_ALWAYS)
  return true;
#else
  return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}

constexpr const char* kHardwareName = "armv8-crc";
#define DUO_CRC32C_HW_RAW crc32c_armv8_raw

#else

bool cpu_has_crc_instructions() {
  return false;
}

#endif

using RawCrcFunction = uint32_t (*)(uint32_t, const uint8_t*, size_t);

// Decided once: the CPU does not change under a running process.
RawCrcFunction chosen_raw_function() {
  static const RawCrcFunction chosen = []() -> RawCrcFunction {
#if defined(DUO_CRC32C_HW_RAW)
    if (cpu_has_crc_instructions()) return &DUO_CRC32C_HW_RAW;
#endif
    return &crc32c_slicing8_raw;
  }();
  return chosen;
}

}  // namespace

uint32_t crc32c(const void* data, size_t size_bytes, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  return ~chosen_raw_function()(~crc, p, size_bytes);
}

uint32_t crc32c_portable(const void* data, size_t size_bytes, uint32_t crc) {
  return ~crc32c_slicing8_raw(~crc, static_cast<const uint8_t*>(data), size_bytes);
}

bool crc32c_hardware_available() {
  static const bool available = cpu_has_crc_instructions();
  return available;
}

uint32_t crc32c_hardware(const void* data, size_t size_bytes, uint32_t crc) {
#if defined(DUO_CRC32C_HW_RAW)
  if (crc32c_hardware_available()) {
    return ~DUO_CRC32C_HW_RAW(~crc, static_cast<const uint8_t*>(data), size_bytes);
  }
#endif
  return crc32c_portable(data, size_bytes, crc);
}

const char* crc32c_implementation_name() {
#if defined(DUO_CRC32C_HW_RAW)
  if (crc32c_hardware_available()) return kHardwareName;
#endif
  return "slicing-by-8";
}

}  // namespace duo
