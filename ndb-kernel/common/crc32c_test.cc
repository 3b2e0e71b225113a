#include "ndb-kernel/common/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ndb-kernel/common/random.h"

namespace duo {
namespace {

uint32_t crc_of(const std::string& text, uint32_t crc = 0) {
  return crc32c(text.data(), text.size(), crc);
}

TEST(Crc32c, StandardCheckValue) {
  EXPECT_EQ(crc_of("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c_portable("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c_hardware("123456789", 9), 0xE3069283u);
}

TEST(Crc32c, Rfc3720Vectors) {
  // iSCSI (RFC 3720, appendix B.4) test patterns.
  std::vector<uint8_t> buffer(32, 0);
  EXPECT_EQ(crc32c(buffer.data(), buffer.size()), 0x8A9136AAu);
  std::fill(buffer.begin(), buffer.end(), 0xFF);
  EXPECT_EQ(crc32c(buffer.data(), buffer.size()), 0x62A8AB43u);
  for (size_t i = 0; i < 32; ++i) buffer[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(crc32c(buffer.data(), buffer.size()), 0x46DD794Eu);
  for (size_t i = 0; i < 32; ++i) buffer[i] = static_cast<uint8_t>(31 - i);
  EXPECT_EQ(crc32c(buffer.data(), buffer.size()), 0x113FDB5Cu);
}

TEST(Crc32c, EmptyInputLeavesCrcUnchanged) {
  EXPECT_EQ(crc32c(nullptr, 0), 0u);
  EXPECT_EQ(crc32c(nullptr, 0, 0x12345678u), 0x12345678u);
  EXPECT_EQ(crc32c_portable(nullptr, 0, 0xE3069283u), 0xE3069283u);
}

TEST(Crc32c, IncrementalExtensionEqualsWholeBuffer) {
  const std::string a = "The quick brown fox ";
  const std::string b = "jumps over the lazy dog";
  EXPECT_EQ(crc_of(b, crc_of(a)), crc_of(a + b));
  // Every split point of a longer buffer, for both implementations.
  SeededRandom random(11);
  std::vector<uint8_t> data(300);
  for (uint8_t& byte : data) byte = static_cast<uint8_t>(random.next_u64());
  const uint32_t whole = crc32c(data.data(), data.size());
  for (size_t split = 0; split <= data.size(); ++split) {
    const uint32_t first = crc32c(data.data(), split);
    EXPECT_EQ(crc32c(data.data() + split, data.size() - split, first), whole) << split;
    const uint32_t first_portable = crc32c_portable(data.data(), split);
    EXPECT_EQ(crc32c_portable(data.data() + split, data.size() - split, first_portable), whole)
        << split;
  }
}

TEST(Crc32c, HardwareMatchesTableOnRandomBuffersLengthsAndAlignments) {
  if (!crc32c_hardware_available()) {
    GTEST_SKIP() << "no CRC32C instructions on this CPU; only the table path is in use";
  }
  SeededRandom random(12345);
  std::vector<uint8_t> storage(4096 + 16);
  for (uint8_t& byte : storage) byte = static_cast<uint8_t>(random.next_u64());
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 130; ++n) lengths.push_back(n);
  for (size_t n : {255u, 256u, 257u, 511u, 1000u, 1023u, 1024u, 4095u, 4096u}) {
    lengths.push_back(n);
  }
  for (size_t offset = 0; offset < 16; ++offset) {
    for (size_t n : lengths) {
      const uint8_t* p = storage.data() + offset;
      const uint32_t seed = static_cast<uint32_t>(random.next_u64());
      ASSERT_EQ(crc32c_hardware(p, n), crc32c_portable(p, n)) << "offset " << offset << " n " << n;
      ASSERT_EQ(crc32c_hardware(p, n, seed), crc32c_portable(p, n, seed))
          << "offset " << offset << " n " << n;
      ASSERT_EQ(crc32c(p, n), crc32c_portable(p, n));
    }
  }
}

TEST(Crc32c, ImplementationNameMatchesAvailability) {
  const std::string name = crc32c_implementation_name();
  if (crc32c_hardware_available()) {
    EXPECT_NE(name, "slicing-by-8");
  } else {
    EXPECT_EQ(name, "slicing-by-8");
  }
}

TEST(Crc32c, DetectsSingleBitFlips) {
  std::vector<uint8_t> data(64, 0x5A);
  const uint32_t clean = crc32c(data.data(), data.size());
  for (size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_NE(crc32c(data.data(), data.size()), clean) << bit;
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
}

TEST(Crc32cMask, RoundTripsAndDiffersFromPlain) {
  SeededRandom random(77);
  for (int i = 0; i < 1000; ++i) {
    const uint32_t crc = static_cast<uint32_t>(random.next_u64());
    EXPECT_EQ(crc32c_unmask(crc32c_mask(crc)), crc);
    EXPECT_NE(crc32c_mask(crc), crc);
    EXPECT_NE(crc32c_mask(crc32c_mask(crc)), crc);
  }
  static_assert(crc32c_unmask(crc32c_mask(0xE3069283u)) == 0xE3069283u);
}

TEST(Crc32cMask, MaskedCrcEmbeddedInDataStillDetectsChanges) {
  // A plain CRC appended to its own data gives the same CRC (the residue) for every
  // payload; a masked one does not, which is why stored CRCs are masked.
  auto with_trailer = [](const std::string& payload, bool masked) {
    std::string record = payload;
    uint32_t crc = crc32c(payload.data(), payload.size());
    if (masked) crc = crc32c_mask(crc);
    uint8_t trailer[4];
    for (int i = 0; i < 4; ++i) trailer[i] = static_cast<uint8_t>(crc >> (8 * i));
    record.append(reinterpret_cast<const char*>(trailer), 4);
    return crc32c(record.data(), record.size());
  };
  EXPECT_EQ(with_trailer("payload one", false), with_trailer("another payload", false));
  EXPECT_NE(with_trailer("payload one", true), with_trailer("another payload", true));
}

}  // namespace
}  // namespace duo
