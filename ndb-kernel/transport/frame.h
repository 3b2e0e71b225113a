// Frame codec: the wire form of one kernel Signal on a TCP link between two nodes.
//
// A frame is a fixed 32-byte header (magic, format version, flags, total length, signal
// id, sender and receiver BlockAddress, word count, section length), the inline words,
// the section bytes, and a masked CRC32C over everything before it. All integers are
// little-endian. The layout and the limits are documented in docs/formats/transport.md.
//
// Decoding is strict because the bytes come from the network: anything that is not a
// well-formed frame (bad magic, unknown version or flags, non-zero reserved bits, a word
// count over kSignalWordsMax, a section over kSectionBytesMax, a total length that does
// not match the counts, signal id 0, a CRC mismatch) is a kCorruption Status, never an
// abort. The limits are checked as soon as the header is in, so a peer announcing a
// 4 GiB frame is refused after 32 bytes instead of being buffered. FrameDecoder keeps at
// most one incomplete frame (kFrameBytesMax bytes) between reads.
//
// Thread-safety: the free functions are pure and safe to call concurrently.
// FrameDecoder is thread-compatible (one per connection, used by the I/O thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/runtime/signal.h"

namespace duo::transport {

// "DUOF" read as bytes on the wire (little-endian u32 0x464F5544).
inline constexpr uint32_t kFrameMagic = 0x464F5544u;
// Bumped on any incompatible change of the frame layout; a frame of another version is
// refused (the hello already refused a peer speaking another protocol version, so this
// only trips on corruption or a bug).
inline constexpr uint8_t kFrameFormatVersion = 1;
inline constexpr size_t kFrameHeaderBytes = 32;
inline constexpr size_t kFrameTrailerBytes = 4;  // the masked CRC32C
// The largest frame: 25 words and a 64 KiB section. Every buffer limit of the decoder
// derives from it.
inline constexpr size_t kFrameBytesMax =
    kFrameHeaderBytes + 4 * kernel::kSignalWordsMax + kernel::kSectionBytesMax + kFrameTrailerBytes;

// Bytes `signal` takes on the wire.
size_t encoded_frame_size(const kernel::Signal& signal);

// Appends the frame of `signal` to `out`. kInvalidArgument if the signal is not sendable
// (Signal::check_sendable); `out` is then unchanged.
Status encode_frame(const kernel::Signal& signal, std::vector<uint8_t>* out);

// Decodes exactly one frame that fills `bytes`: kCorruption if it is malformed,
// incomplete, or followed by extra bytes.
Result<kernel::Signal> decode_frame(std::span<const uint8_t> bytes);

// Incremental decoder for one byte stream (one TCP connection).
class FrameDecoder {
 public:
  // Consumes all of `bytes`: appends every frame completed by them to `out`, in stream
  // order, and keeps an incomplete tail for the next call. On the first malformed frame
  // returns kCorruption (frames decoded before it in this call stay in `out`); the
  // decoder is then failed and every later call returns the same error, because a
  // byte stream cannot be resynchronised safely after garbage.
  Status feed(std::span<const uint8_t> bytes, std::vector<kernel::Signal>* out);

  // Bytes of an incomplete frame held between calls; never more than kFrameBytesMax.
  size_t buffered_bytes() const { return partial_.size(); }
  bool failed() const { return !error_.empty(); }

 private:
  // Validates the header at the start of `bytes` (at least kFrameHeaderBytes long) and
  // returns the frame's total length.
  Result<size_t> check_header(std::span<const uint8_t> bytes) const;
  Status fail(Status status);

  std::vector<uint8_t> partial_;    // an incomplete frame, capacity <= kFrameBytesMax
  size_t partial_total_bytes_ = 0;  // its total length once its header is in, else 0
  std::string error_;               // non-empty once failed
};

}  // namespace duo::transport
