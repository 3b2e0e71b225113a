// Frame codec; see frame.h and docs/formats/transport.md for the layout.
#include "ndb-kernel/transport/frame.h"

#include <algorithm>
#include <cstring>

#include "ndb-kernel/common/crc32c.h"
#include "ndb-kernel/transport/wire_bytes.h"

namespace duo::transport {
namespace {

using kernel::BlockAddress;
using kernel::Signal;
using wire::load_u16;
using wire::load_u32;
using wire::store_u16;
using wire::store_u32;

// Header field offsets (docs/formats/transport.md).
constexpr size_t kOffsetMagic = 0;
constexpr size_t kOffsetVersion = 4;
constexpr size_t kOffsetFlags = 5;
constexpr size_t kOffsetWordCount = 6;
constexpr size_t kOffsetReserved8 = 7;
constexpr size_t kOffsetTotalLength = 8;
constexpr size_t kOffsetSignalId = 12;
constexpr size_t kOffsetSender = 14;
constexpr size_t kOffsetReceiver = 20;
constexpr size_t kOffsetReserved16 = 26;
constexpr size_t kOffsetSectionLength = 28;
static_assert(kOffsetSectionLength + 4 == kFrameHeaderBytes);

// No flags are defined yet. A set bit is refused rather than ignored, so that a future
// flag that changes the meaning of the body (compression, say) can never be misread by
// a node that does not know it.
constexpr uint8_t kKnownFlags = 0;

size_t frame_size(size_t words, size_t section_bytes) {
  return kFrameHeaderBytes + 4 * words + section_bytes + kFrameTrailerBytes;
}

void store_address(uint8_t* p, const BlockAddress& address) {
  store_u16(p, address.node_id);
  store_u16(p + 2, address.block);
  store_u16(p + 4, address.instance);
}
BlockAddress load_address(const uint8_t* p) {
  return BlockAddress{load_u16(p), load_u16(p + 2), load_u16(p + 4)};
}

Status corruption(const std::string& what) {
  return Status(ErrorCode::kCorruption, what);
}

// The first min(size, 4) bytes of `bytes` agree with the magic: lets a decoder refuse a
// stream that starts with garbage on its first byte instead of waiting for a header.
bool magic_prefix_matches(std::span<const uint8_t> bytes) {
  uint8_t magic[4];
  store_u32(magic, kFrameMagic);
  const size_t n = std::min<size_t>(bytes.size(), 4);
  return std::memcmp(bytes.data(), magic, n) == 0;
}

// Validates a header (bytes.size() >= kFrameHeaderBytes) and returns the frame length.
Result<size_t> check_frame_header(std::span<const uint8_t> bytes) {
  const uint8_t* h = bytes.data();
  const uint32_t magic = load_u32(h + kOffsetMagic);
  if (magic != kFrameMagic) {
    char text[64];
    std::snprintf(text, sizeof(text), "bad frame magic 0x%08x", magic);
    return corruption(text);
  }
  if (h[kOffsetVersion] != kFrameFormatVersion) {
    return corruption("unknown frame format version " + std::to_string(h[kOffsetVersion]));
  }
  if ((h[kOffsetFlags] & ~kKnownFlags) != 0) {
    return corruption("unknown frame flags " + std::to_string(h[kOffsetFlags]));
  }
  if (h[kOffsetReserved8] != 0 || load_u16(h + kOffsetReserved16) != 0) {
    return corruption("non-zero reserved frame header bits");
  }
  const size_t words = h[kOffsetWordCount];
  if (words > kernel::kSignalWordsMax) {
    return corruption("frame word count " + std::to_string(words) + " over the limit of " +
                      std::to_string(kernel::kSignalWordsMax));
  }
  const size_t section_bytes = load_u32(h + kOffsetSectionLength);
  if (section_bytes > kernel::kSectionBytesMax) {
    return corruption("frame section length " + std::to_string(section_bytes) +
                      " over the limit of " + std::to_string(kernel::kSectionBytesMax));
  }
  const size_t total_bytes = load_u32(h + kOffsetTotalLength);
  if (total_bytes != frame_size(words, section_bytes)) {
    return corruption("frame length " + std::to_string(total_bytes) +
                      " does not match its word count and section length (expected " +
                      std::to_string(frame_size(words, section_bytes)) + ")");
  }
  if (load_u16(h + kOffsetSignalId) == kernel::kNoSignal) {
    return corruption("frame carries signal id 0");
  }
  return total_bytes;
}

// Builds the signal of a complete frame whose header check_frame_header() accepted.
Result<Signal> decode_checked_frame(std::span<const uint8_t> frame) {
  const uint8_t* h = frame.data();
  const size_t crc_offset = frame.size() - kFrameTrailerBytes;
  const uint32_t stored_crc = load_u32(h + crc_offset);
  const uint32_t actual_crc = crc32c_mask(crc32c(h, crc_offset));
  if (stored_crc != actual_crc) {
    char text[80];
    std::snprintf(text, sizeof(text), "frame CRC mismatch (stored 0x%08x, computed 0x%08x)",
                  stored_crc, actual_crc);
    return corruption(text);
  }
  Signal signal(load_u16(h + kOffsetSignalId));
  signal.set_sender(load_address(h + kOffsetSender));
  signal.set_receiver(load_address(h + kOffsetReceiver));
  const size_t words = h[kOffsetWordCount];
  const uint8_t* p = h + kFrameHeaderBytes;
  for (size_t i = 0; i < words; ++i, p += 4) signal.set_word(i, load_u32(p));
  const size_t section_bytes = load_u32(h + kOffsetSectionLength);
  if (section_bytes > 0) signal.set_section(std::vector<uint8_t>(p, p + section_bytes));
  return signal;
}

}  // namespace

size_t encoded_frame_size(const Signal& signal) {
  return frame_size(signal.length_words(), signal.section().size());
}

Status encode_frame(const Signal& signal, std::vector<uint8_t>* out) {
  DUO_RETURN_IF_ERROR(signal.check_sendable());
  const size_t words = signal.length_words();
  const size_t section_bytes = signal.section().size();
  const size_t total_bytes = frame_size(words, section_bytes);
  const size_t start = out->size();
  out->resize(start + total_bytes);
  uint8_t* h = out->data() + start;
  store_u32(h + kOffsetMagic, kFrameMagic);
  h[kOffsetVersion] = kFrameFormatVersion;
  h[kOffsetFlags] = 0;
  h[kOffsetWordCount] = static_cast<uint8_t>(words);
  h[kOffsetReserved8] = 0;
  store_u32(h + kOffsetTotalLength, static_cast<uint32_t>(total_bytes));
  store_u16(h + kOffsetSignalId, signal.id());
  store_address(h + kOffsetSender, signal.sender());
  store_address(h + kOffsetReceiver, signal.receiver());
  store_u16(h + kOffsetReserved16, 0);
  store_u32(h + kOffsetSectionLength, static_cast<uint32_t>(section_bytes));
  uint8_t* p = h + kFrameHeaderBytes;
  for (uint32_t word : signal.words()) {
    store_u32(p, word);
    p += 4;
  }
  if (section_bytes > 0) std::memcpy(p, signal.section().data(), section_bytes);
  const size_t crc_offset = total_bytes - kFrameTrailerBytes;
  store_u32(h + crc_offset, crc32c_mask(crc32c(h, crc_offset)));
  return Status::OK();
}

Result<Signal> decode_frame(std::span<const uint8_t> bytes) {
  if (bytes.size() < kFrameHeaderBytes) {
    return corruption("frame of " + std::to_string(bytes.size()) + " bytes is shorter than " +
                      "its header");
  }
  DUO_ASSIGN_OR_RETURN(const size_t total_bytes, check_frame_header(bytes));
  if (bytes.size() != total_bytes) {
    return corruption("frame length " + std::to_string(total_bytes) + " but " +
                      std::to_string(bytes.size()) + " bytes given");
  }
  return decode_checked_frame(bytes);
}

Status FrameDecoder::fail(Status status) {
  error_ = status.message();
  partial_.clear();
  partial_.shrink_to_fit();
  partial_total_bytes_ = 0;
  return status;
}

Result<size_t> FrameDecoder::check_header(std::span<const uint8_t> bytes) const {
  return check_frame_header(bytes);
}

Status FrameDecoder::feed(std::span<const uint8_t> bytes, std::vector<Signal>* out) {
  if (failed()) return corruption(error_);
  size_t pos = 0;
  while (pos < bytes.size()) {
    std::span<const uint8_t> rest = bytes.subspan(pos);
    if (partial_.empty()) {
      // Fast path: whole frames straight from the caller's buffer, no copy.
      if (!magic_prefix_matches(rest)) return fail(corruption("bad frame magic"));
      if (rest.size() < kFrameHeaderBytes) {
        partial_.assign(rest.begin(), rest.end());
        return Status::OK();
      }
      Result<size_t> total = check_header(rest);
      if (!total.ok()) return fail(total.take_status());
      if (rest.size() < *total) {
        partial_total_bytes_ = *total;
        partial_.reserve(*total);
        partial_.assign(rest.begin(), rest.end());
        return Status::OK();
      }
      Result<Signal> signal = decode_checked_frame(rest.first(*total));
      if (!signal.ok()) return fail(signal.take_status());
      out->push_back(std::move(signal).value());
      pos += *total;
      continue;
    }
    // Completing a frame held from an earlier call: first its header, then its body.
    if (partial_total_bytes_ == 0) {
      const size_t take = std::min(kFrameHeaderBytes - partial_.size(), rest.size());
      partial_.insert(partial_.end(), rest.begin(), rest.begin() + take);
      pos += take;
      if (!magic_prefix_matches(partial_)) return fail(corruption("bad frame magic"));
      if (partial_.size() < kFrameHeaderBytes) continue;
      Result<size_t> total = check_header(partial_);
      if (!total.ok()) return fail(total.take_status());
      partial_total_bytes_ = *total;
      partial_.reserve(*total);
      continue;
    }
    const size_t take = std::min(partial_total_bytes_ - partial_.size(), rest.size());
    partial_.insert(partial_.end(), rest.begin(), rest.begin() + take);
    pos += take;
    if (partial_.size() < partial_total_bytes_) continue;
    Result<Signal> signal = decode_checked_frame(partial_);
    if (!signal.ok()) return fail(signal.take_status());
    out->push_back(std::move(signal).value());
    partial_.clear();
    partial_total_bytes_ = 0;
  }
  return Status::OK();
}

}  // namespace duo::transport
