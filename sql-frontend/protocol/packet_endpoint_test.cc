// Tests of packet framing: round trips at boundary payload lengths (including the
// split at 2^24-1 bytes), sequence ids, max_allowed_packet and truncated streams.
#include "sql-frontend/protocol/packet_endpoint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sql-frontend/protocol/mysql_constants.h"
#include "sql-frontend/protocol/wire_buffer.h"

namespace duo::sql::protocol {
namespace {

// A transport over two strings: reads come from `input` in chunks of at most
// `chunk_bytes` (to exercise partial reads), writes go to `output`.
class MemoryTransport : public Transport {
 public:
  std::string input;
  size_t read_pos = 0;
  size_t chunk_bytes = 7;
  std::string output;

  Result<size_t> read_some(char* out, size_t length) override {
    if (read_pos == input.size()) return Status(ErrorCode::kIoError, "end of stream");
    size_t n = std::min({length, chunk_bytes, input.size() - read_pos});
    std::copy_n(input.data() + read_pos, n, out);
    read_pos += n;
    return n;
  }
  Status write_all(std::string_view bytes) override {
    output.append(bytes);
    return Status::OK();
  }
};

std::string pattern(size_t length) {
  std::string s(length, '\0');
  for (size_t i = 0; i < length; ++i) s[i] = static_cast<char>(i * 31 + 7);
  return s;
}

TEST(PacketEndpointTest, RoundTripAtBoundaryLengths) {
  const size_t lengths[] = {0,
                            1,
                            250,
                            251,
                            255,
                            256,
                            65535,
                            65536,
                            16777214,
                            16777215,
                            16777216,
                            2 * 16777215,
                            2 * 16777215 + 5};
  for (size_t length : lengths) {
    MemoryTransport out;
    PacketEndpoint writer(&out);
    std::string payload = pattern(length);
    ASSERT_TRUE(writer.write_packet(payload).ok());
    ASSERT_TRUE(writer.flush().ok());
    // Pieces: one per full 2^24-1 bytes, plus the last (possibly empty) one.
    size_t pieces = length / kPacketPayloadBytesMax + 1;
    EXPECT_EQ(out.output.size(), length + 4 * pieces) << length;
    EXPECT_EQ(writer.sequence_id(), pieces % 256);

    MemoryTransport in;
    in.input = out.output;
    in.chunk_bytes = 1 << 20;
    PacketEndpoint reader(&in);
    std::string got;
    ASSERT_EQ(reader.read_packet(&got, 64u << 20), PacketEndpoint::ReadResult::kOk) << length;
    EXPECT_EQ(got.size(), length);
    EXPECT_TRUE(got == payload) << length;
    EXPECT_EQ(reader.sequence_id(), pieces % 256);
  }
}

TEST(PacketEndpointTest, HeaderBytesAndSequence) {
  MemoryTransport out;
  PacketEndpoint endpoint(&out);
  endpoint.set_sequence(5);
  ASSERT_TRUE(endpoint.write_packet("abc").ok());
  ASSERT_TRUE(endpoint.write_packet("").ok());
  ASSERT_TRUE(endpoint.flush().ok());
  EXPECT_EQ(out.output, std::string("\x03\x00\x00\x05"
                                    "abc"
                                    "\x00\x00\x00\x06",
                                    11));
}

TEST(PacketEndpointTest, SmallReadsAndSeveralPackets) {
  MemoryTransport in;
  in.chunk_bytes = 1;
  in.input = std::string(
      "\x01\x00\x00\x00"
      "a"
      "\x02\x00\x00\x01"
      "bc",
      11);
  PacketEndpoint endpoint(&in);
  std::string got;
  ASSERT_EQ(endpoint.read_packet(&got, 100), PacketEndpoint::ReadResult::kOk);
  EXPECT_EQ(got, "a");
  ASSERT_EQ(endpoint.read_packet(&got, 100), PacketEndpoint::ReadResult::kOk);
  EXPECT_EQ(got, "bc");
  EXPECT_EQ(endpoint.read_packet(&got, 100), PacketEndpoint::ReadResult::kClosed);
}

TEST(PacketEndpointTest, WrongSequenceIdIsRefused) {
  MemoryTransport in;
  in.input = std::string(
      "\x01\x00\x00\x03"
      "a",
      5);
  PacketEndpoint endpoint(&in);
  std::string got;
  EXPECT_EQ(endpoint.read_packet(&got, 100), PacketEndpoint::ReadResult::kOutOfOrder);
}

TEST(PacketEndpointTest, TruncatedStreamIsClosed) {
  for (size_t cut : {1ul, 3ul, 4ul, 8ul}) {
    MemoryTransport in;
    in.input = std::string(
                   "\x05\x00\x00\x00"
                   "abcde",
                   9)
                   .substr(0, cut);
    PacketEndpoint endpoint(&in);
    std::string got;
    EXPECT_EQ(endpoint.read_packet(&got, 100), PacketEndpoint::ReadResult::kClosed) << cut;
  }
}

TEST(PacketEndpointTest, MaxAllowedPacketEnforcedAndRestDiscarded) {
  MemoryTransport out;
  PacketEndpoint writer(&out);
  ASSERT_TRUE(writer.write_packet(pattern(1000)).ok());
  ASSERT_TRUE(writer.write_packet("next").ok());
  ASSERT_TRUE(writer.flush().ok());
  MemoryTransport in;
  in.input = out.output;
  PacketEndpoint reader(&in);
  std::string got;
  EXPECT_EQ(reader.read_packet(&got, 999), PacketEndpoint::ReadResult::kTooLarge);
  EXPECT_TRUE(got.empty());
  // The oversized packet was consumed whole; the stream is still in step.
  ASSERT_EQ(reader.read_packet(&got, 999), PacketEndpoint::ReadResult::kOk);
  EXPECT_EQ(got, "next");
  // Exactly at the limit is allowed.
  MemoryTransport in2;
  in2.input = out.output;
  PacketEndpoint reader2(&in2);
  EXPECT_EQ(reader2.read_packet(&got, 1000), PacketEndpoint::ReadResult::kOk);
}

TEST(PacketEndpointTest, SplitPacketOverLimitDetectedOnLaterPiece) {
  MemoryTransport out;
  PacketEndpoint writer(&out);
  ASSERT_TRUE(writer.write_packet(pattern(kPacketPayloadBytesMax + 10)).ok());
  ASSERT_TRUE(writer.flush().ok());
  MemoryTransport in;
  in.input = out.output;
  in.chunk_bytes = 1 << 20;
  PacketEndpoint reader(&in);
  std::string got;
  EXPECT_EQ(reader.read_packet(&got, kPacketPayloadBytesMax + 9),
            PacketEndpoint::ReadResult::kTooLarge);
}

// Without read-ahead a packet's bytes are read and nothing behind them (the TLS
// ClientHello behind an SSLRequest); with it, what follows is buffered.
TEST(PacketEndpointTest, ReadAheadOffTakesOnlyThePacket) {
  MemoryTransport out;
  PacketEndpoint writer(&out);
  ASSERT_TRUE(writer.write_packet("first").ok());
  ASSERT_TRUE(writer.write_packet("second").ok());
  ASSERT_TRUE(writer.flush().ok());
  MemoryTransport in;
  in.input = out.output;
  in.chunk_bytes = 1 << 20;
  PacketEndpoint reader(&in);
  reader.set_read_ahead(false);
  std::string payload;
  ASSERT_EQ(reader.read_packet(&payload, 1024), PacketEndpoint::ReadResult::kOk);
  EXPECT_EQ(payload, "first");
  EXPECT_EQ(in.read_pos, 4 + 5u);
  EXPECT_EQ(reader.buffered_input_bytes(), 0u);
  reader.set_read_ahead(true);
  ASSERT_EQ(reader.read_packet(&payload, 1024), PacketEndpoint::ReadResult::kOk);
  EXPECT_EQ(payload, "second");
  EXPECT_EQ(reader.buffered_input_bytes(), 0u);
}

// The input buffer keeps its room between packets and takes a large packet and the
// small ones around it, in any chunking.
TEST(PacketEndpointTest, LargePacketBetweenSmallOnes) {
  const std::vector<size_t> lengths = {3, 2 << 20, 1, 0, 40000, 7, 5 << 20, 2};
  MemoryTransport out;
  PacketEndpoint writer(&out);
  for (size_t i = 0; i < lengths.size(); ++i) {
    writer.reset_sequence();
    ASSERT_TRUE(writer.write_packet(pattern(lengths[i] + i).substr(i)).ok());
  }
  ASSERT_TRUE(writer.flush().ok());
  for (size_t chunk : {size_t{5}, size_t{4096}, size_t{1} << 22}) {
    MemoryTransport in;
    in.input = out.output;
    in.chunk_bytes = chunk;
    PacketEndpoint reader(&in);
    std::string payload;
    for (size_t i = 0; i < lengths.size(); ++i) {
      reader.reset_sequence();
      ASSERT_EQ(reader.read_packet(&payload, 16u << 20), PacketEndpoint::ReadResult::kOk);
      EXPECT_EQ(payload, pattern(lengths[i] + i).substr(i)) << i << " chunk " << chunk;
    }
    EXPECT_EQ(reader.buffered_input_bytes(), 0u);
    EXPECT_EQ(reader.read_packet(&payload, 16u << 20), PacketEndpoint::ReadResult::kClosed);
  }
}

// A packet encoded in place gets the header write_packet() gives it; a result is held
// back (even past kFlushBytes) until it ends, and abandon_result() takes it back whole
// with its sequence ids.
TEST(PacketEndpointTest, InPlacePacketsAndResults) {
  MemoryTransport out;
  PacketEndpoint endpoint(&out);
  {
    std::string& buffer = endpoint.start_packet();
    PacketWriter writer(&buffer);
    writer.write_lenenc_string("abc");
    ASSERT_TRUE(endpoint.end_packet().ok());
  }
  ASSERT_TRUE(endpoint.write_packet("second").ok());
  ASSERT_TRUE(endpoint.flush().ok());
  MemoryTransport expected;
  PacketEndpoint reference(&expected);
  ASSERT_TRUE(reference
                  .write_packet(std::string("\x03"
                                            "abc"))
                  .ok());
  ASSERT_TRUE(reference.write_packet("second").ok());
  ASSERT_TRUE(reference.flush().ok());
  EXPECT_EQ(out.output, expected.output);

  // A result larger than kFlushBytes is not sent before it ends ...
  out.output.clear();
  endpoint.begin_result();
  const std::string row(1000, 'r');
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(endpoint.write_packet(row).ok());
  EXPECT_TRUE(out.output.empty());
  // ... and taken back whole, sequence ids included.
  const uint8_t sequence = endpoint.sequence_id();
  endpoint.abandon_result();
  EXPECT_EQ(endpoint.sequence_id(), static_cast<uint8_t>(sequence - 100));
  ASSERT_TRUE(endpoint.flush().ok());
  EXPECT_TRUE(out.output.empty());
  endpoint.begin_result();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(endpoint.write_packet(row).ok());
  ASSERT_TRUE(endpoint.end_result().ok());
  EXPECT_EQ(out.output.size(), 100 * (row.size() + 4));

  // An in-place payload of 2^24-1 bytes or more is split as write_packet() splits it.
  for (size_t length : {kPacketPayloadBytesMax - 1, kPacketPayloadBytesMax}) {
    MemoryTransport big;
    PacketEndpoint writer(&big);
    std::string& buffer = writer.start_packet();
    buffer.append(length, 'b');
    ASSERT_TRUE(writer.end_packet().ok());
    ASSERT_TRUE(writer.flush().ok());
    MemoryTransport in;
    in.input = big.output;
    in.chunk_bytes = 1 << 20;
    PacketEndpoint reader(&in);
    std::string payload;
    ASSERT_EQ(reader.read_packet(&payload, 32u << 20), PacketEndpoint::ReadResult::kOk);
    EXPECT_EQ(payload.size(), length);
    EXPECT_EQ(reader.buffered_input_bytes(), 0u);
  }
}

}  // namespace
}  // namespace duo::sql::protocol
