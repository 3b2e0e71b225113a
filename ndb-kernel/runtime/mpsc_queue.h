// BoundedMpscQueue<T>: a fixed-capacity, lock-free, multi-producer single-consumer queue:
// the job buffer of a block thread in the real runtime (DESIGN.md §3: "cross-thread
// signals go through bounded lock-free queues").
//
// Algorithm (after Dmitry Vyukov's bounded MPMC queue, specialised to one consumer):
// a ring of `capacity` slots, capacity a power of two. Each slot carries a sequence
// number that says whose turn the slot is:
//   slot.sequence == pos          the slot is free for the producer that claims `pos`;
//   slot.sequence == pos + 1      the slot holds the value written for `pos`, ready for
//                                 the consumer;
//   slot.sequence == pos + cap    the consumer has emptied it; free for `pos + cap`.
// Producers claim a position with a CAS on enqueue_pos_, write the value, then publish
// it by storing pos + 1 into the slot's sequence. The single consumer owns
// dequeue_pos_ outright (no atomic RMW on the consumer side at all).
//
// Memory ordering (each pairing is a release store read by an acquire load):
//   - producer publish: `slot.sequence.store(pos + 1, release)` after writing the
//     value; the consumer's `slot.sequence.load(acquire)` that sees pos + 1 therefore
//     also sees the value.
//   - consumer release: `slot.sequence.store(pos + capacity, release)` after moving the
//     value out; the producer's `slot.sequence.load(acquire)` that sees that number
//     therefore cannot have its later write to the value race with the consumer's read.
//   - enqueue_pos_ is only a ticket dispenser: the CAS is relaxed, because its
//     atomicity alone guarantees each position is claimed by exactly one producer; no
//     data is published through it.
// Progress: try_push never blocks and fails only when the ring is full. A producer
// preempted between its claim and its publish delays the consumer at that slot (later
// slots wait behind it, preserving the order in which positions were claimed), which is
// the price of a bounded ring without per-slot locks.
//
// Order: two pushes by one producer thread are popped in push order (the second claim
// is a larger position); pushes from different producers interleave.
//
// Thread-safety: try_push may be called concurrently from any number of threads.
// try_pop and consumer_sees_empty must only be called by one thread at a time (the
// consumer). size_approx may be called from anywhere and is only a hint.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <utility>

#include "ndb-kernel/runtime/kernel_check.h"

namespace duo::kernel {

// Keeps the producers' and the consumer's hot words on different cache lines, so a
// producer's CAS does not keep invalidating the consumer's line.
inline constexpr size_t kCacheLineBytes = 64;

template <typename T>
class BoundedMpscQueue {
 public:
  // `capacity` must be a power of two >= 2 (a configuration value validated by the
  // owner; aborts otherwise). All slots are allocated here; pushes never allocate
  // queue memory.
  explicit BoundedMpscQueue(size_t capacity)
      : capacity_(capacity), mask_(capacity - 1), slots_(new Slot[capacity]) {
    DUO_KERNEL_CHECK(capacity >= 2 && (capacity & (capacity - 1)) == 0,
                     "queue capacity must be a power of two >= 2");
    for (size_t i = 0; i < capacity; ++i) slots_[i].sequence.store(i, std::memory_order_relaxed);
  }
  BoundedMpscQueue(const BoundedMpscQueue&) = delete;
  BoundedMpscQueue& operator=(const BoundedMpscQueue&) = delete;

  size_t capacity() const { return capacity_; }

  // Appends `value` (moved from on success only). Returns false when the queue is full:
  // the caller answers with an overload error rather than waiting.
  bool try_push(T& value) {
    size_t pos = enqueue_pos_.load(std::memory_order_relaxed);
    Slot* slot = nullptr;
    for (;;) {
      slot = &slots_[pos & mask_];
      const size_t sequence = slot->sequence.load(std::memory_order_acquire);
      const intptr_t diff = static_cast<intptr_t>(sequence) - static_cast<intptr_t>(pos);
      if (diff == 0) {
        // The slot is free for `pos`: try to claim `pos`. On failure `pos` is reloaded
        // with the current ticket and we look again.
        if (enqueue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed,
                                               std::memory_order_relaxed)) {
          break;
        }
      } else if (diff < 0) {
        // The slot still holds the value from one lap ago: the ring is full.
        return false;
      } else {
        // Another producer claimed `pos` and moved on; catch up.
        pos = enqueue_pos_.load(std::memory_order_relaxed);
      }
    }
    slot->value = std::move(value);
    slot->sequence.store(pos + 1, std::memory_order_release);
    return true;
  }
  bool try_push(T&& value) { return try_push(value); }

  // Removes the oldest published value into `out`. Returns false if there is none
  // (empty, or the next producer has claimed but not yet published). Consumer only.
  bool try_pop(T& out) {
    Slot& slot = slots_[dequeue_pos_ & mask_];
    const size_t sequence = slot.sequence.load(std::memory_order_acquire);
    if (sequence != dequeue_pos_ + 1) return false;
    out = std::move(slot.value);
    // Release the slot to the producer that will claim position dequeue_pos_ + capacity.
    slot.sequence.store(dequeue_pos_ + capacity_, std::memory_order_release);
    ++dequeue_pos_;
    return true;
  }

  // True if try_pop would find nothing right now. Consumer only. The load is acquire;
  // callers that pair this with a wake-up flag add their own seq_cst fence (see
  // ThreadRuntime's sleep protocol).
  bool consumer_sees_empty() const {
    return slots_[dequeue_pos_ & mask_].sequence.load(std::memory_order_acquire) !=
           dequeue_pos_ + 1;
  }

  // Claimed-but-not-consumed positions: exact when quiescent, a hint otherwise.
  size_t size_approx() const {
    const size_t enqueued = enqueue_pos_.load(std::memory_order_relaxed);
    const size_t dequeued = dequeue_pos_shadow_.load(std::memory_order_relaxed);
    return enqueued >= dequeued ? enqueued - dequeued : 0;
  }

  // Consumer only: publishes dequeue_pos_ for size_approx() (kept separate so try_pop
  // does not pay for an atomic store per item).
  void publish_consumer_position() {
    dequeue_pos_shadow_.store(dequeue_pos_, std::memory_order_relaxed);
  }

 private:
  struct alignas(kCacheLineBytes) Slot {
    std::atomic<size_t> sequence{0};
    T value{};
  };

  // Constant after construction.
  const size_t capacity_;
  const size_t mask_;
  const std::unique_ptr<Slot[]> slots_;

  alignas(kCacheLineBytes) std::atomic<size_t> enqueue_pos_{0};  // producers' ticket
  alignas(kCacheLineBytes) size_t dequeue_pos_ = 0;              // consumer-owned
  std::atomic<size_t> dequeue_pos_shadow_{0};                    // for size_approx
};

}  // namespace duo::kernel
