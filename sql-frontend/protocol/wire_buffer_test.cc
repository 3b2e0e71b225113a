// Tests of the primitive encodings: length-encoded integers at every width boundary,
// strings, and refusal of truncated input.
#include "sql-frontend/protocol/wire_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace duo::sql::protocol {
namespace {

TEST(WireBufferTest, LenencIntegerBoundaries) {
  const uint64_t values[] = {0,     1,        250,      251,        252,       65535,
                             65536, 16777215, 16777216, 1ull << 32, UINT64_MAX};
  const size_t sizes[] = {1, 1, 1, 3, 3, 3, 4, 4, 9, 9, 9};
  for (size_t i = 0; i < std::size(values); ++i) {
    PacketWriter writer;
    writer.write_lenenc_int(values[i]);
    EXPECT_EQ(writer.size(), sizes[i]) << values[i];
    EXPECT_EQ(lenenc_int_size(values[i]), sizes[i]);
    PacketReader reader(writer.buffer());
    EXPECT_EQ(reader.read_lenenc_int(), values[i]);
    EXPECT_TRUE(reader.at_end());
  }
}

TEST(WireBufferTest, LenencStringBoundaries) {
  for (size_t length : {0ul, 250ul, 251ul, 65535ul, 65536ul, 16777215ul, 16777216ul}) {
    std::string value(length, 'q');
    PacketWriter writer;
    writer.write_lenenc_string(value);
    EXPECT_EQ(writer.size(), lenenc_int_size(length) + length);
    PacketWriter counter(PacketWriter::kCountOnly);
    counter.write_lenenc_string(value);
    EXPECT_EQ(counter.size(), writer.size());
    EXPECT_TRUE(counter.buffer().empty());
    PacketReader reader(writer.buffer());
    EXPECT_EQ(reader.read_lenenc_string(), value);
    reader.expect_end("test");
  }
}

TEST(WireBufferTest, FixedIntegersAreLittleEndian) {
  PacketWriter writer;
  writer.write_u16(0x0102);
  writer.write_u24(0x030405);
  writer.write_u32(0x06070809);
  writer.write_u64(0x0a0b0c0d0e0f1011ull);
  EXPECT_EQ(writer.buffer(), std::string("\x02\x01\x05\x04\x03\x09\x08\x07\x06"
                                         "\x11\x10\x0f\x0e\x0d\x0c\x0b\x0a"));
  PacketReader reader(writer.buffer());
  EXPECT_EQ(reader.read_u16(), 0x0102);
  EXPECT_EQ(reader.read_u24(), 0x030405u);
  EXPECT_EQ(reader.read_u32(), 0x06070809u);
  EXPECT_EQ(reader.read_u64(), 0x0a0b0c0d0e0f1011ull);
}

TEST(WireBufferTest, TruncatedInputThrows) {
  EXPECT_THROW(PacketReader("").read_u8(), ProtocolError);
  EXPECT_THROW(PacketReader("\x01").read_u16(), ProtocolError);
  EXPECT_THROW(PacketReader("\xfc\x01").read_lenenc_int(), ProtocolError);
  EXPECT_THROW(PacketReader("\x05"
                            "abc")
                   .read_lenenc_string(),
               ProtocolError);
  EXPECT_THROW(PacketReader("abc").read_null_terminated(), ProtocolError);
  // 0xfb (NULL) and 0xff are not integers.
  EXPECT_THROW(PacketReader("\xfb").read_lenenc_int(), ProtocolError);
  EXPECT_THROW(PacketReader("\xff").read_lenenc_int(), ProtocolError);
  // A huge declared length must not be trusted.
  const std::string huge("\xfe\xff\xff\xff\xff\xff\xff\xff\x7f", 9);
  EXPECT_THROW(PacketReader(huge).read_lenenc_string(), ProtocolError);
  PacketReader leftover("ab");
  leftover.read_u8();
  EXPECT_THROW(leftover.expect_end("x"), ProtocolError);
}

}  // namespace
}  // namespace duo::sql::protocol
