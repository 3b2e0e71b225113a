// Frame codec: byte-level round trips at boundary sizes, every split point of a stream,
// each malformed-header rule, and seeded random mutation/garbage campaigns.
#include "ndb-kernel/transport/frame.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "ndb-kernel/common/crc32c.h"
#include "ndb-kernel/common/random.h"
#include "ndb-kernel/transport/wire_bytes.h"

namespace duo::transport {
namespace {

using kernel::BlockAddress;
using kernel::Signal;

Signal make_signal(size_t words, size_t section_bytes, uint32_t seed = 7) {
  Signal signal(static_cast<kernel::SignalId>(100 + seed % 50));
  signal.set_sender(BlockAddress{1, 245, 3});
  signal.set_receiver(BlockAddress{2, 247, static_cast<uint16_t>(seed)});
  for (size_t i = 0; i < words; ++i) signal.set_word(i, static_cast<uint32_t>(seed * 1000003u + i));
  std::vector<uint8_t> section(section_bytes);
  for (size_t i = 0; i < section_bytes; ++i) section[i] = static_cast<uint8_t>(seed + i * 31);
  signal.set_section(std::move(section));
  return signal;
}

void expect_same(const Signal& a, const Signal& b) {
  EXPECT_EQ(a.id(), b.id());
  EXPECT_EQ(a.sender(), b.sender());
  EXPECT_EQ(a.receiver(), b.receiver());
  ASSERT_EQ(a.length_words(), b.length_words());
  for (size_t i = 0; i < a.length_words(); ++i) EXPECT_EQ(a.word(i), b.word(i)) << i;
  EXPECT_EQ(a.section(), b.section());
}

std::vector<uint8_t> encode(const Signal& signal) {
  std::vector<uint8_t> bytes;
  const Status status = encode_frame(signal, &bytes);
  EXPECT_TRUE(status.ok()) << status.to_string();
  return bytes;
}

// Rewrites the CRC so a test can corrupt a header field without tripping the CRC first.
void fix_crc(std::vector<uint8_t>& frame) {
  const size_t crc_offset = frame.size() - kFrameTrailerBytes;
  wire::store_u32(frame.data() + crc_offset, crc32c_mask(crc32c(frame.data(), crc_offset)));
}

TEST(FrameTest, RoundTripAtBoundarySizes) {
  const size_t word_counts[] = {0, 1, 25};
  const size_t section_sizes[] = {0, 1, 127, 128, 255, 65535, kernel::kSectionBytesMax};
  for (size_t words : word_counts) {
    for (size_t section_bytes : section_sizes) {
      SCOPED_TRACE("words=" + std::to_string(words) + " section=" + std::to_string(section_bytes));
      const Signal signal = make_signal(words, section_bytes);
      const std::vector<uint8_t> bytes = encode(signal);
      EXPECT_EQ(bytes.size(), encoded_frame_size(signal));
      EXPECT_EQ(bytes.size(), kFrameHeaderBytes + 4 * words + section_bytes + kFrameTrailerBytes);
      Result<Signal> decoded = decode_frame(bytes);
      ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
      expect_same(signal, *decoded);

      FrameDecoder decoder;
      std::vector<Signal> out;
      ASSERT_TRUE(decoder.feed(bytes, &out).ok());
      ASSERT_EQ(out.size(), 1u);
      expect_same(signal, out[0]);
      EXPECT_EQ(decoder.buffered_bytes(), 0u);
    }
  }
}

TEST(FrameTest, LargestFrameIsTheLimit) {
  const Signal signal = make_signal(kernel::kSignalWordsMax, kernel::kSectionBytesMax);
  EXPECT_EQ(encode(signal).size(), kFrameBytesMax);
}

TEST(FrameTest, HeaderLayoutIsLittleEndianAsDocumented) {
  const Signal signal = make_signal(2, 3);
  const std::vector<uint8_t> bytes = encode(signal);
  EXPECT_EQ(std::memcmp(bytes.data(), "DUOF", 4), 0);
  EXPECT_EQ(bytes[4], kFrameFormatVersion);
  EXPECT_EQ(bytes[5], 0);  // flags
  EXPECT_EQ(bytes[6], 2);  // word count
  EXPECT_EQ(wire::load_u32(bytes.data() + 8), bytes.size());
  EXPECT_EQ(wire::load_u16(bytes.data() + 12), signal.id());
  EXPECT_EQ(wire::load_u16(bytes.data() + 14), 1);    // sender node
  EXPECT_EQ(wire::load_u16(bytes.data() + 16), 245);  // sender block
  EXPECT_EQ(wire::load_u16(bytes.data() + 20), 2);    // receiver node
  EXPECT_EQ(wire::load_u32(bytes.data() + 28), 3u);   // section length
  EXPECT_EQ(wire::load_u32(bytes.data() + 32), signal.word(0));
}

TEST(FrameTest, EncodeRefusesUnsendableSignals) {
  std::vector<uint8_t> bytes;
  Signal no_id;
  EXPECT_TRUE(encode_frame(no_id, &bytes).is(ErrorCode::kInvalidArgument));
  Signal too_big = make_signal(1, kernel::kSectionBytesMax + 1);
  EXPECT_TRUE(encode_frame(too_big, &bytes).is(ErrorCode::kInvalidArgument));
  EXPECT_TRUE(bytes.empty());
}

// Two and three pieces at every split point, and byte by byte, for small frames in a row.
TEST(FrameTest, PartialReadsAtEveryByteBoundary) {
  std::vector<Signal> expected;
  std::vector<uint8_t> stream;
  for (auto [words, section] : {std::pair<size_t, size_t>{0, 0}, {1, 1}, {3, 10}, {25, 0}}) {
    expected.push_back(make_signal(words, section, static_cast<uint32_t>(expected.size())));
    const std::vector<uint8_t> bytes = encode(expected.back());
    stream.insert(stream.end(), bytes.begin(), bytes.end());
  }
  auto check = [&](const std::vector<std::span<const uint8_t>>& pieces) {
    FrameDecoder decoder;
    std::vector<Signal> out;
    for (auto piece : pieces) {
      ASSERT_TRUE(decoder.feed(piece, &out).ok());
      EXPECT_LE(decoder.buffered_bytes(), kFrameBytesMax);
    }
    ASSERT_EQ(out.size(), expected.size());
    for (size_t i = 0; i < out.size(); ++i) expect_same(expected[i], out[i]);
    EXPECT_EQ(decoder.buffered_bytes(), 0u);
  };
  const std::span<const uint8_t> all(stream);
  for (size_t split = 0; split <= stream.size(); ++split) {
    SCOPED_TRACE("split=" + std::to_string(split));
    check({all.first(split), all.subspan(split)});
    const size_t second = split + (stream.size() - split) / 2;
    check({all.first(split), all.subspan(split, second - split), all.subspan(second)});
  }
  std::vector<std::span<const uint8_t>> bytewise;
  for (size_t i = 0; i < stream.size(); ++i) bytewise.push_back(all.subspan(i, 1));
  check(bytewise);
}

TEST(FrameTest, IncompleteFrameIsHeldNotDecoded) {
  const std::vector<uint8_t> bytes = encode(make_signal(5, 300));
  FrameDecoder decoder;
  std::vector<Signal> out;
  ASSERT_TRUE(decoder.feed(std::span(bytes).first(bytes.size() - 1), &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(decoder.buffered_bytes(), bytes.size() - 1);
  EXPECT_FALSE(decode_frame(std::span(bytes).first(bytes.size() - 1)).ok());
  ASSERT_TRUE(decoder.feed(std::span(bytes).last(1), &out).ok());
  EXPECT_EQ(out.size(), 1u);
}

// Each header rule, with the CRC fixed up so the header check itself must catch it.
TEST(FrameTest, MalformedHeadersAreDecodeErrors) {
  struct Case {
    const char* name;
    std::function<void(std::vector<uint8_t>&)> mutate;
  };
  const Case cases[] = {
      {"magic", [](auto& f) { f[0] = 'X'; }},
      {"version", [](auto& f) { f[4] = kFrameFormatVersion + 1; }},
      {"flags", [](auto& f) { f[5] = 0x80; }},
      {"reserved8", [](auto& f) { f[7] = 1; }},
      {"reserved16", [](auto& f) { f[26] = 1; }},
      {"word count over 25", [](auto& f) { f[6] = 26; }},
      {"word count mismatch", [](auto& f) { f[6] = 3; }},
      {"section over limit",
       [](auto& f) { wire::store_u32(f.data() + 28, kernel::kSectionBytesMax + 1); }},
      {"total length mismatch", [](auto& f) { wire::store_u32(f.data() + 8, f.size() + 4); }},
      {"oversized total length", [](auto& f) { wire::store_u32(f.data() + 8, 0xFFFFFFFFu); }},
      {"signal id 0", [](auto& f) { wire::store_u16(f.data() + 12, 0); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<uint8_t> frame = encode(make_signal(2, 5));
    c.mutate(frame);
    fix_crc(frame);
    EXPECT_TRUE(decode_frame(frame).status().is(ErrorCode::kCorruption));
    FrameDecoder decoder;
    std::vector<Signal> out;
    // The header alone is enough to refuse: nothing past it is needed or buffered.
    EXPECT_TRUE(
        decoder.feed(std::span(frame).first(kFrameHeaderBytes), &out).is(ErrorCode::kCorruption));
    EXPECT_TRUE(out.empty());
    EXPECT_TRUE(decoder.failed());
    EXPECT_EQ(decoder.buffered_bytes(), 0u);
    // A failed decoder stays failed, even for a good frame.
    EXPECT_TRUE(decoder.feed(encode(make_signal(1, 1)), &out).is(ErrorCode::kCorruption));
    EXPECT_TRUE(out.empty());
  }
}

TEST(FrameTest, BadMagicIsNoticedOnTheFirstByte) {
  FrameDecoder decoder;
  std::vector<Signal> out;
  const uint8_t garbage[] = {'G'};
  EXPECT_TRUE(decoder.feed(garbage, &out).is(ErrorCode::kCorruption));
  FrameDecoder second;
  const uint8_t d[] = {'D'};
  const uint8_t x[] = {'X'};
  EXPECT_TRUE(second.feed(d, &out).ok());
  EXPECT_TRUE(second.feed(x, &out).is(ErrorCode::kCorruption));
}

TEST(FrameTest, CrcMismatchIsADecodeError) {
  std::vector<uint8_t> frame = encode(make_signal(4, 100));
  frame[kFrameHeaderBytes + 20] ^= 0x01;  // one bit of the body
  Result<Signal> decoded = decode_frame(frame);
  ASSERT_FALSE(decoded.ok());
  EXPECT_TRUE(decoded.status().is(ErrorCode::kCorruption));
  EXPECT_NE(decoded.status().message().find("CRC"), std::string::npos);
}

TEST(FrameTest, FramesBeforeAGarbageTailAreDelivered) {
  std::vector<uint8_t> stream = encode(make_signal(1, 2));
  stream.push_back('?');
  FrameDecoder decoder;
  std::vector<Signal> out;
  EXPECT_TRUE(decoder.feed(stream, &out).is(ErrorCode::kCorruption));
  EXPECT_EQ(out.size(), 1u);
}

// Every single-byte change of a valid frame is detected (CRC or a header rule), fed whole
// or split; truncations are never decoded; random garbage never crashes or overbuffers.
TEST(FrameTest, RandomMutationsAndGarbage) {
  SeededRandom random(20240611);
  for (int round = 0; round < 400; ++round) {
    const size_t words = random.uniform(kernel::kSignalWordsMax + 1);
    const size_t section =
        random.bernoulli(0.1) ? random.uniform(kernel::kSectionBytesMax + 1) : random.uniform(600);
    const std::vector<uint8_t> good = encode(make_signal(words, section, round));
    std::vector<uint8_t> bad = good;
    const size_t position = random.uniform(bad.size());
    bad[position] ^= static_cast<uint8_t>(1 + random.uniform(255));
    const size_t split = random.uniform(bad.size() + 1);
    FrameDecoder decoder;
    std::vector<Signal> out;
    Status first = decoder.feed(std::span(bad).first(split), &out);
    Status status = first.ok() ? decoder.feed(std::span(bad).subspan(split), &out) : first;
    EXPECT_FALSE(status.ok()) << "round " << round << " byte " << position;
    EXPECT_TRUE(out.empty()) << "round " << round;

    // Truncated: never decoded, never an error (just incomplete), bounded buffer.
    FrameDecoder truncated;
    const size_t keep = random.uniform(good.size());
    EXPECT_TRUE(truncated.feed(std::span(good).first(keep), &out).ok());
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(truncated.buffered_bytes(), keep);

    // Garbage, possibly behind a valid magic so the header checks get exercised.
    std::vector<uint8_t> garbage(random.uniform(200));
    for (auto& byte : garbage) byte = static_cast<uint8_t>(random.next_u64());
    if (garbage.size() >= 5 && random.bernoulli(0.5)) {
      wire::store_u32(garbage.data(), kFrameMagic);
      garbage[4] = kFrameFormatVersion;
    }
    FrameDecoder noise;
    Status noise_status = noise.feed(garbage, &out);
    noise_status.ignore_error();
    EXPECT_TRUE(out.empty());
    EXPECT_LE(noise.buffered_bytes(), kFrameBytesMax);
  }
}

}  // namespace
}  // namespace duo::transport
