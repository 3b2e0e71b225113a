// Packed signals (NDB's PACKED_SIGNAL): several small signals from one block to one
// block carried as one kPackedSignals signal, so a batch of key operations costs one
// queue push, one transport frame and at most one wake-up instead of one per operation.
//
// Layout (docs/formats/kernel-protocol.md "PACKED_SIGNALS"): word 0 = the number of
// inner signals; the section holds them back to back, each as
//   u16 signal id, u8 word count, u8 reserved (0), u32 section length,
//   words (u32 each), section bytes.
// Inner signals share the packed signal's sender and receiver, and are delivered in
// order. Packs never nest. A pack is never needed for correctness: every inner signal
// means exactly what it means when sent alone, so a receiver just unpacks and handles
// each one with its usual handler.
//
// SignalPacker is the sending side of a block: while the block handles a packed signal
// it collects what it sends to pack-aware receivers per receiver, and sends the
// collection as packs once the handler is done (a pack of one goes as the plain signal).
// So batching travels through the whole data path (client -> coordinator -> primary ->
// backup -> coordinator) without any handler knowing about it.
//
// Thread-safety: functions are pure; a SignalPacker belongs to one block (one thread).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/runtime/signal.h"

namespace duo::protocol {

// Bytes of an inner signal's header inside a pack.
inline constexpr size_t kPackedHeaderBytes = 8;

// Bytes `signal` takes inside a pack.
size_t packed_size(const kernel::Signal& signal);
// One kPackedSignals signal holding `signals` in order (copied; the originals stay
// intact). The caller keeps the sum of packed_size() within kSectionBytesMax and sets
// the receiver.
kernel::Signal pack_signals(std::span<const kernel::Signal> signals);
// The inner signals of `packed`, with its sender and receiver. kInvalidArgument when the
// pack is malformed (truncated entries, trailing bytes, a count that does not match, an
// inner kPackedSignals or signal id 0, more than kSignalWordsMax words).
Result<std::vector<kernel::Signal>> unpack_signals(const kernel::Signal& packed);

class SignalPacker {
 public:
  // Where flush() sends (normally Block::send) and what it reports for every signal it
  // could not send: a copy of the signal's id and words (its section is gone) and the
  // send error, so the block can fail what that signal stood for.
  using SendFn = std::function<Status(const kernel::BlockAddress& receiver, kernel::Signal)>;
  using UnsentFn = std::function<void(const kernel::Signal& header, const Status& why)>;

  // Starts collecting. Only while nothing is collected (packs do not nest).
  void begin();
  bool active() const { return active_; }
  // Collects `signal` for `receiver`. Only while active(). Signals to one receiver keep
  // their order; a pack that would pass kSectionBytesMax is closed and a new one begun.
  void add(const kernel::BlockAddress& receiver, kernel::Signal signal);
  // Stops collecting, then sends every pack in the order its first signal was added.
  // Stopping first lets `on_unsent` send directly (what it sends is not collected).
  void flush(const SendFn& send, const UnsentFn& on_unsent);

  // Packs sent (two or more signals) and signals sent inside them, since construction.
  uint64_t packs_sent() const { return packs_sent_; }
  uint64_t signals_packed() const { return signals_packed_; }

 private:
  struct Pack {
    kernel::BlockAddress receiver;
    std::vector<kernel::Signal> signals;
    size_t bytes = 0;
    bool closed = false;
  };

  bool active_ = false;
  std::vector<Pack> packs_;  // in the order of their first signal
  uint64_t packs_sent_ = 0;
  uint64_t signals_packed_ = 0;
};

}  // namespace duo::protocol
