#include "ndb-kernel/protocol/packed_signals.h"

#include <cstring>
#include <string>
#include <utility>

#include "ndb-kernel/protocol/wire_codec.h"
#include "ndb-kernel/runtime/kernel_check.h"

namespace duo::protocol {

using kernel::BlockAddress;
using kernel::Signal;

namespace {

uint32_t read_u32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
void write_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void write_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

Status malformed_pack(const Signal& packed, const std::string& why) {
  return Status(ErrorCode::kInvalidArgument, "malformed " + packed.describe() + ": " + why);
}

// A copy of `signal` without its section: what SignalPacker reports for an unsent one.
Signal header_of(const Signal& signal) {
  Signal header(signal.id());
  const std::span<const uint32_t> words = signal.words();
  for (size_t i = 0; i < words.size(); ++i) header.set_word(i, words[i]);
  header.set_sender(signal.sender());
  header.set_receiver(signal.receiver());
  return header;
}

}  // namespace

size_t packed_size(const Signal& signal) {
  return kPackedHeaderBytes + 4 * size_t{signal.length_words()} + signal.section().size();
}

Signal pack_signals(std::span<const Signal> signals) {
  Signal packed(kPackedSignals, {static_cast<uint32_t>(signals.size())});
  size_t bytes = 0;
  for (const Signal& signal : signals) bytes += packed_size(signal);
  // Sized once and written through a pointer: packing is on every batch's path.
  Bytes section(bytes);
  uint8_t* p = section.data();
  for (const Signal& signal : signals) {
    write_u16(p, signal.id());
    p[2] = static_cast<uint8_t>(signal.length_words());
    p[3] = 0;
    write_u32(p + 4, static_cast<uint32_t>(signal.section().size()));
    p += kPackedHeaderBytes;
    for (uint32_t word : signal.words()) {
      write_u32(p, word);
      p += 4;
    }
    if (!signal.section().empty()) {
      std::memcpy(p, signal.section().data(), signal.section().size());
      p += signal.section().size();
    }
  }
  packed.set_section(std::move(section));
  return packed;
}

Result<std::vector<Signal>> unpack_signals(const Signal& packed) {
  const uint32_t count = packed.word(0);
  const std::vector<uint8_t>& bytes = packed.section();
  // Every entry takes at least its header: bounds the reservation by the real size.
  if (count == 0 || count > bytes.size() / kPackedHeaderBytes) {
    return malformed_pack(packed, "count " + std::to_string(count) + " for " +
                                      std::to_string(bytes.size()) + " bytes");
  }
  std::vector<Signal> signals;
  signals.reserve(count);
  size_t offset = 0;
  for (uint32_t i = 0; i < count; ++i) {
    if (bytes.size() - offset < kPackedHeaderBytes) {
      return malformed_pack(packed, "entry " + std::to_string(i) + " is truncated");
    }
    const uint8_t* header = bytes.data() + offset;
    const kernel::SignalId id = static_cast<kernel::SignalId>(header[0] | (header[1] << 8));
    const uint32_t words = header[2];
    const uint32_t section_bytes = read_u32(header + 4);
    if (id == 0 || id == kPackedSignals || words > kernel::kSignalWordsMax || header[3] != 0) {
      return malformed_pack(packed, "entry " + std::to_string(i) + " has a bad header");
    }
    offset += kPackedHeaderBytes;
    const size_t body = 4 * size_t{words} + section_bytes;
    if (bytes.size() - offset < body) {
      return malformed_pack(packed, "entry " + std::to_string(i) + " is truncated");
    }
    Signal& signal = signals.emplace_back(id);  // built in place: a Signal is ~150 bytes
    for (uint32_t w = 0; w < words; ++w) signal.set_word(w, read_u32(bytes.data() + offset + 4 * w));
    offset += 4 * size_t{words};
    signal.set_section(std::vector<uint8_t>(bytes.begin() + static_cast<ptrdiff_t>(offset),
                                            bytes.begin() +
                                                static_cast<ptrdiff_t>(offset + section_bytes)));
    offset += section_bytes;
    signal.set_sender(packed.sender());
    signal.set_receiver(packed.receiver());
  }
  if (offset != bytes.size()) {
    return malformed_pack(packed, std::to_string(bytes.size() - offset) + " trailing bytes");
  }
  return signals;
}

void SignalPacker::begin() {
  DUO_KERNEL_CHECK(!active_ && packs_.empty(), "SignalPacker::begin while collecting");
  active_ = true;
}

void SignalPacker::add(const BlockAddress& receiver, Signal signal) {
  DUO_KERNEL_CHECK(active_, "SignalPacker::add while not collecting");
  const size_t bytes = packed_size(signal);
  Pack* open = nullptr;
  for (auto it = packs_.rbegin(); it != packs_.rend(); ++it) {
    if (it->receiver == receiver && !it->closed) {
      open = &*it;
      break;
    }
  }
  if (open != nullptr && open->bytes + bytes > kernel::kSectionBytesMax) {
    open->closed = true;
    open = nullptr;
  }
  if (open == nullptr) {
    packs_.push_back(Pack{receiver, {}, 0, false});
    open = &packs_.back();
  }
  open->bytes += bytes;
  open->signals.push_back(std::move(signal));
}

void SignalPacker::flush(const SendFn& send, const UnsentFn& on_unsent) {
  active_ = false;
  std::vector<Pack> packs = std::move(packs_);
  packs_.clear();
  for (Pack& pack : packs) {
    if (pack.signals.size() == 1) {
      // Alone, a signal goes as itself: nothing to gain from the envelope. The header
      // copy is what the block needs to fail it if the send is refused.
      Signal header = header_of(pack.signals.front());
      Status sent = send(pack.receiver, std::move(pack.signals.front()));
      if (!sent.ok()) on_unsent(header, sent);
      continue;
    }
    Signal packed = pack_signals(pack.signals);
    Status sent = send(pack.receiver, std::move(packed));
    if (sent.ok()) {
      ++packs_sent_;
      signals_packed_ += pack.signals.size();
      continue;
    }
    for (const Signal& signal : pack.signals) on_unsent(header_of(signal), sent);
  }
}

}  // namespace duo::protocol
