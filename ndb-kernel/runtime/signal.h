// Signal: the only way kernel blocks talk to each other (DESIGN.md §3).
//
// A signal is a value: a signal number (SignalId, NDB's "GSN"), the addresses of the
// sending and receiving block, a fixed inline payload of up to kSignalWordsMax 32-bit
// words (like NDB's SignalT<25>), and an optional variable-size byte section of at most
// kSectionBytesMax bytes for things that do not fit in words (keys, row images, names).
// Signals are moved, not copied: copying a section is an allocation, so it must be
// spelled out (clone()). The in-memory layout and the limits are documented in
// docs/formats/signal.md.
//
// Invariants: length_words() <= kSignalWordsMax, and every word at or past
// length_words() reads as zero. Handlers rely on the second one: a handler that reads a
// field a shorter (older) version of the signal did not carry sees 0, the NDB convention
// for adding fields to a signal without breaking older senders.
//
// Signal names: SignalIds are declared per block family (in each block's signals
// header); each family registers a human name per id with register_signal_name() so
// logs say "PING" rather than "gsn 17".
//
// Thread-safety: Signal and BlockAddress are thread-compatible values. The signal name
// registry is safe for concurrent use (it takes an internal mutex; only logging and
// registration touch it, never the delivery path).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/runtime/kernel_check.h"

namespace duo::kernel {

// Global signal number. Block families declare `enum class ...Signal : SignalId`-style
// constants; 0 is reserved as "no signal" so a default-constructed Signal is detectably
// unset.
using SignalId = uint16_t;
inline constexpr SignalId kNoSignal = 0;

// Fixed inline payload, in 32-bit words. 25 is NDB's limit: enough for every control
// signal, and small enough that a signal stays a couple of cache lines.
inline constexpr size_t kSignalWordsMax = 25;
// Largest variable-size section, in bytes. 64 KiB bounds the memory one signal can pin in
// a queue (queues are bounded in signals, so this bounds them in bytes too) and leaves
// room for the largest row (30000 bytes) plus its key. Sending more is a caller bug and
// send() refuses it with kInvalidArgument; bulk data (scans, restore, node recovery)
// is split into several signals.
inline constexpr size_t kSectionBytesMax = 64 * 1024;

// Where a block lives: (node, block number, instance). Block numbers are assigned per
// block kind (like NDB's DBTC=245, DBLQH=247); instance tells apart the copies of a block
// that run on several threads of one node (one local_query per LDM thread).
struct BlockAddress {
  uint16_t node_id = 0;
  uint16_t block = 0;
  uint16_t instance = 0;

  friend bool operator==(const BlockAddress&, const BlockAddress&) = default;
  friend auto operator<=>(const BlockAddress&, const BlockAddress&) = default;

  // "n1.b2.i0".
  std::string to_string() const;
  // (block, instance) packed into 32 bits: the key of a node-local routing table.
  uint32_t local_key() const { return (uint32_t{block} << 16) | instance; }
};

class Signal {
 public:
  Signal() = default;
  explicit Signal(SignalId id) : id_(id) {}
  // A signal with the given leading words. Aborts if more than kSignalWordsMax words
  // are given (a static bug in the caller: the payload size is known at the call site).
  Signal(SignalId id, std::initializer_list<uint32_t> words);

  Signal(Signal&& other) noexcept = default;
  Signal& operator=(Signal&& other) noexcept = default;
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;
  ~Signal() = default;

  // An explicit deep copy (words and section), for the rare sender that fans out.
  Signal clone() const;

  SignalId id() const { return id_; }
  void set_id(SignalId id) { id_ = id; }

  // Filled in by Block::send (sender) and the caller (receiver); runtimes deliver them
  // unchanged.
  const BlockAddress& sender() const { return sender_; }
  const BlockAddress& receiver() const { return receiver_; }
  void set_sender(const BlockAddress& sender) { sender_ = sender; }
  void set_receiver(const BlockAddress& receiver) { receiver_ = receiver; }

  // Inline payload.
  uint32_t length_words() const { return length_words_; }
  // Word `index`; 0 at or past length_words(). Aborts if index >= kSignalWordsMax.
  uint32_t word(size_t index) const {
    DUO_KERNEL_CHECK(index < kSignalWordsMax, "signal word index out of range");
    // Words past the length are kept zero (the file comment), so no branch.
    return words_[index];
  }
  // Sets word `index`, growing the length to index + 1 if needed (the words in between
  // stay 0). Aborts if index >= kSignalWordsMax.
  void set_word(size_t index, uint32_t value) {
    DUO_KERNEL_CHECK(index < kSignalWordsMax, "signal word index out of range");
    words_[index] = value;
    if (index >= length_words_) length_words_ = static_cast<uint8_t>(index + 1);
  }
  // Appends a word. Aborts if the payload is already kSignalWordsMax words long.
  void push_word(uint32_t value) { set_word(length_words_, value); }
  std::span<const uint32_t> words() const { return {words_.data(), length_words_}; }

  // Variable-size section. Its size is only checked at send (check_sendable), so a
  // builder may append freely and get one error at the end.
  const std::vector<uint8_t>& section() const { return section_; }
  std::vector<uint8_t>& mutable_section() { return section_; }
  void set_section(std::vector<uint8_t> bytes) { section_ = std::move(bytes); }
  // Moves the section out (the signal is left with an empty one): a handler that keeps
  // the bytes avoids a copy.
  std::vector<uint8_t> take_section() { return std::exchange(section_, {}); }

  // OK if the signal may be handed to a runtime: an id is set and the section is within
  // kSectionBytesMax. Every runtime calls this at send.
  Status check_sendable() const;

  // "PING n1.b1.i0->n2.b2.i0 [7 0] +0B", for logs and test failures.
  std::string describe() const;

 private:
  SignalId id_ = kNoSignal;
  uint8_t length_words_ = 0;
  BlockAddress sender_;
  BlockAddress receiver_;
  std::array<uint32_t, kSignalWordsMax> words_{};
  std::vector<uint8_t> section_;
};

// Registers the log name of `id`. Registering the same name again is a no-op (every
// instance of a block family may register its table); a different name for a registered
// id is kInvalidArgument, because two families sharing an id would misroute signals.
Status register_signal_name(SignalId id, std::string_view name);
// The registered name of `id`, or "GSN<id>" when none was registered.
std::string signal_name(SignalId id);

}  // namespace duo::kernel

template <>
struct std::hash<duo::kernel::BlockAddress> {
  size_t operator()(const duo::kernel::BlockAddress& a) const noexcept {
    return std::hash<uint64_t>()((uint64_t{a.node_id} << 32) | a.local_key());
  }
};
