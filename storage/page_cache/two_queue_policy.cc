#include "storage/page_cache/two_queue_policy.h"

#include <cassert>
#include <cstddef>

namespace duo::storage {

TwoQueuePolicy::TwoQueuePolicy(uint32_t frames, uint32_t recent_target, uint32_t ghosts_max,
                               uint64_t correlation_window)
    : recent_target_(recent_target),
      ghosts_max_(ghosts_max),
      correlation_window_(correlation_window),
      links_(frames) {}

void TwoQueuePolicy::push_head(Queue queue, uint32_t frame) {
  List& list = list_of(queue);
  Link& link = links_[frame];
  link.queue = queue;
  link.prev = kNone;
  link.next = list.head;
  if (list.head != kNone) links_[list.head].prev = frame;
  list.head = frame;
  if (list.tail == kNone) list.tail = frame;
  ++list.size;
}

void TwoQueuePolicy::unlink(uint32_t frame) {
  Link& link = links_[frame];
  assert(link.queue != Queue::kNone);
  List& list = list_of(link.queue);
  if (link.prev != kNone) {
    links_[link.prev].next = link.next;
  } else {
    list.head = link.next;
  }
  if (link.next != kNone) {
    links_[link.next].prev = link.prev;
  } else {
    list.tail = link.prev;
  }
  --list.size;
  link = Link{};
}

void TwoQueuePolicy::remember_ghost(uint64_t key) {
  if (ghosts_max_ == 0) return;
  const uint64_t seq = ghost_next_seq_++;
  ghost_seq_[key] = seq;
  ghost_fifo_.emplace_back(key, seq);
  // Stale FIFO entries (a key remembered twice) are skipped when they reach the front;
  // bound the FIFO too, so it cannot grow with them.
  while (ghost_seq_.size() > ghosts_max_ || ghost_fifo_.size() > 2 * std::size_t{ghosts_max_}) {
    const auto [old_key, old_seq] = ghost_fifo_.front();
    ghost_fifo_.pop_front();
    auto it = ghost_seq_.find(old_key);
    if (it != ghost_seq_.end() && it->second == old_seq) ghost_seq_.erase(it);
  }
}

void TwoQueuePolicy::on_load(uint32_t frame, uint64_t key) {
  ++clock_;
  auto ghost = ghost_seq_.find(key);
  if (ghost != ghost_seq_.end()) {
    ghost_seq_.erase(ghost);  // its FIFO entry is stale now
    push_head(Queue::kFrequent, frame);
  } else {
    push_head(Queue::kRecent, frame);
  }
  links_[frame].first_reference = clock_;
}

void TwoQueuePolicy::on_prefetch(uint32_t frame) {
  push_head(Queue::kRecent, frame);
  links_[frame].first_reference = 0;
}

void TwoQueuePolicy::on_access(uint32_t frame) {
  ++clock_;
  Link& link = links_[frame];
  if (link.queue == Queue::kFrequent) {
    unlink(frame);
    push_head(Queue::kFrequent, frame);
  } else if (link.queue == Queue::kRecent) {
    if (link.first_reference == 0) {
      link.first_reference = clock_;  // a read-ahead page's first request
    } else if (clock_ - link.first_reference >= correlation_window_) {
      unlink(frame);
      push_head(Queue::kFrequent, frame);
    }
  }
  // A probation page referenced inside its window stays where it is (correlated).
}

void TwoQueuePolicy::on_remove(uint32_t frame, uint64_t key, bool remember) {
  const bool was_recent = links_[frame].queue == Queue::kRecent;
  unlink(frame);
  if (remember && was_recent) remember_ghost(key);
}

}  // namespace duo::storage
