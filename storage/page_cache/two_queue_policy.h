// TwoQueuePolicy: the replacement policy of the page cache — 2Q (Johnson & Shasha, VLDB
// 1994) with a correlated-reference window, over frame numbers.
//
// Why 2Q and not LRU: a scan touches each page once (or a few times in a burst, one
// pin per row), and under LRU it would push the whole hot working set out. 2Q keeps new
// pages on probation in a FIFO (the "recent" queue, A1in); a page reaches the LRU of
// frequent pages (Am) only when it is referenced again after a quiet interval: either
// it was evicted from probation and is asked for again while its id is still in the
// ghost list (A1out), or it is referenced while on probation at least
// `correlation_window` page-cache requests after its first reference (InnoDB's
// innodb_old_blocks_time idea, counted in requests instead of time so it stays
// deterministic). A burst of references from one scan falls inside the window and
// promotes nothing. Eviction takes the oldest probation page while probation holds more
// than `recent_target` frames, else the least recently used frequent page.
// Why not LIRS (RonDB's PGMAN uses a LIRS-like stack): 2Q gives the same scan
// resistance for this access pattern with O(1) work per reference and far less state;
// LIRS is worth it only if 2Q measurably loses on real traces.
//
// The policy only orders frames; the cache decides which candidate may go (pins, IO,
// dirtiness) by walking for_each_candidate().
//
// Thread-safety: none; owned by one PageCache (one LDM thread).
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

namespace duo::storage {

class TwoQueuePolicy {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // `frames` frames numbered 0..frames-1; `recent_target` (Kin) frames of probation
  // before eviction prefers it; `ghosts_max` (Kout) ids remembered; `correlation_window`
  // requests a probation page must wait before a reference promotes it.
  TwoQueuePolicy(uint32_t frames, uint32_t recent_target, uint32_t ghosts_max,
                 uint64_t correlation_window);

  // Page `key` was placed in `frame` for a request (a miss): probation, or frequent when
  // `key` is a ghost (it was evicted from probation recently and is wanted again).
  void on_load(uint32_t frame, uint64_t key);
  // Page `key` was placed in `frame` by read-ahead: probation, and not yet referenced
  // (its correlation window starts at its first request).
  void on_prefetch(uint32_t frame);
  // A request hit the page in `frame`.
  void on_access(uint32_t frame);
  // The page `key` leaves `frame`; `remember` keeps a probation page's id as a ghost
  // (eviction), false forgets it (a failed read, a dropped file).
  void on_remove(uint32_t frame, uint64_t key, bool remember);

  // Calls visit(frame) on the frames in eviction order until it returns true; returns
  // that frame, or kNone.
  template <typename Visit>
  uint32_t for_each_candidate(Visit&& visit) const {
    const bool recent_first = recent_.size > recent_target_ || frequent_.size == 0;
    const List* order[2] = {recent_first ? &recent_ : &frequent_,
                            recent_first ? &frequent_ : &recent_};
    for (const List* list : order) {
      // Oldest (probation) or least recently used (frequent) first: from the tail.
      for (uint32_t frame = list->tail; frame != kNone; frame = links_[frame].prev) {
        if (visit(frame)) return frame;
      }
    }
    return kNone;
  }

  uint32_t recent_size() const { return recent_.size; }
  uint32_t frequent_size() const { return frequent_.size; }
  uint32_t ghost_size() const { return static_cast<uint32_t>(ghost_seq_.size()); }
  bool is_frequent(uint32_t frame) const { return links_[frame].queue == Queue::kFrequent; }

 private:
  enum class Queue : uint8_t { kNone, kRecent, kFrequent };
  struct Link {
    uint32_t prev = kNone;  // towards the head (newest / most recently used)
    uint32_t next = kNone;  // towards the tail
    Queue queue = Queue::kNone;
    uint64_t first_reference = 0;  // request clock of its first reference; 0: none yet
  };
  struct List {
    uint32_t head = kNone;
    uint32_t tail = kNone;
    uint32_t size = 0;
  };

  List& list_of(Queue queue) { return queue == Queue::kRecent ? recent_ : frequent_; }
  void push_head(Queue queue, uint32_t frame);
  void unlink(uint32_t frame);
  void remember_ghost(uint64_t key);

  const uint32_t recent_target_;
  const uint32_t ghosts_max_;
  const uint64_t correlation_window_;
  std::vector<Link> links_;
  List recent_;
  List frequent_;
  uint64_t clock_ = 0;  // page-cache references seen (loads and hits)
  // Ghosts: FIFO of (key, sequence); a key is a ghost while ghost_seq_ maps it to the
  // sequence of its newest entry (older entries for the same key are stale).
  std::deque<std::pair<uint64_t, uint64_t>> ghost_fifo_;
  std::unordered_map<uint64_t, uint64_t> ghost_seq_;
  uint64_t ghost_next_seq_ = 0;
};

}  // namespace duo::storage
