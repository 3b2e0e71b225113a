// HashIndex: the primary-key index of one fragment, linear hashing (Litwin) that grows one
// bucket split at a time, so a growing table never stalls on a rehash.
//
// The index stores (hash, ref) pairs only; it does not know keys. A lookup walks the
// entries whose stored hash matches and asks the caller's predicate to confirm the key
// (one row dereference in the common case). Buckets are cache-line sized and live in
// 32 KiB pages taken from a GlobalMemory area; running out of pages is kTableFull and
// leaves the index unchanged.
//
// Layout. A primary bucket is one 64-byte line: 7 hashes, 7 refs, and a link word holding
// the first overflow node's address with the entry count in its low 3 bits (lines are
// aligned, so those bits are free). Overflow nodes are half lines (32 bytes: 3 entries +
// link) chained from the primary. Primary buckets live in segments (one page = 512
// buckets), found through directory pages (4096 segment pointers each) named by a small
// array inside the object: finding a bucket is two loads from small, hot arrays and one
// load of the bucket. Overflow nodes come from pages of 1023 nodes plus a header.
//
// Why half-line overflow nodes: in linear hashing the buckets not yet split this round
// carry twice the load of the split ones, so overflow is structural, not rare; most
// overflowing buckets have only one to four extra entries. A 32-byte node wastes less on
// them than a 64-byte one: at the split fill below, about 11.8 bytes per entry and 1.3
// cache lines per successful lookup, where 64-byte overflow buckets need about 14 bytes
// per entry for the same lookup cost.
//
// Addressing. With 2^level + split primary buckets, a hash goes to `hash mod 2^level`,
// or `hash mod 2^(level+1)` when that is below `split`. Splitting bucket `split` moves
// the entries whose bit `level` is set to bucket split + 2^level; merging undoes the last
// split. One split happens per insert while the average exceeds kSplitFillPercent, one
// merge per erase while it is below kMergeFillPercent.
//
// Invariants (checked by check_consistency()):
//  - every entry sits in the chain of the primary bucket its hash addresses;
//  - chains are dense: every line of a chain except the last is full (7 entries in the
//    primary, 3 in a node), and an overflow node holds at least one entry;
//  - size() equals the number of entries in all chains;
//  - every page is held in exactly one role (segment, directory, overflow) and is
//    returned to the memory area in the destructor.
//
// Thread-compatible: one owner (the LDM thread owning the fragment); no internal locking.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ndb-kernel/common/status.h"
#include "storage/memory/global_memory.h"

namespace duo::storage {

inline constexpr uint32_t kNoRef = 0xFFFFFFFFu;

// A snapshot of the index shape, for tests, benchmarks and memory reports.
struct HashIndexStats {
  size_t entries = 0;
  size_t primary_buckets = 0;
  size_t overflow_nodes = 0;
  size_t segment_pages = 0;
  size_t directory_pages = 0;
  size_t overflow_pages = 0;
  size_t longest_chain_lines = 0;  // primary + overflow nodes of the longest chain
  size_t split_failures = 0;       // splits postponed: no page for a new segment
  size_t merge_failures = 0;       // merges postponed: no node (and no page for one)
};

class HashIndex {
 public:
  explicit HashIndex(GlobalMemory* memory, MemoryArea area = MemoryArea::kDataMemory);
  ~HashIndex();  // returns every page to the memory area
  HashIndex(const HashIndex&) = delete;
  HashIndex& operator=(const HashIndex&) = delete;

  // Adds (hash, ref); ref != kNoRef. The caller checks for duplicate keys first.
  Status insert(uint32_t hash, uint32_t ref);
  // The first ref stored with `hash` for which match(ref) is true, else kNoRef.
  template <typename Match>
  uint32_t find(uint32_t hash, Match&& match) const;
  // Starts loading the bucket for `hash` into cache, so a caller can overlap the miss
  // with other work before find()/insert().
  void prefetch(uint32_t hash) const {
    if (size_ != 0) __builtin_prefetch(bucket_at(address_of(hash)));
  }
  // Removes (hash, ref); false if it was not present.
  bool erase(uint32_t hash, uint32_t ref);

  size_t size() const;
  size_t memory_bytes() const;  // bytes of pages held
  // f(hash, ref) for every entry, in no particular order.
  template <typename F>
  void for_each(F&& f) const;

  // Additions beyond the fragment's needs: observability and test support.
  // Walks every chain: O(entries).
  HashIndexStats stats() const;
  // kCorruption naming the first broken invariant (see the file comment); O(entries).
  Status check_consistency() const;

  // Limits and tuning, documented here because they shape memory use.
  static constexpr uint32_t kSlotsPerBucket = 7;
  static constexpr uint32_t kSlotsPerNode = 3;
  static constexpr uint32_t kBucketsPerSegment = kPageSize / 64;                    // 512
  static constexpr uint32_t kSegmentsPerDirectoryPage = kPageSize / sizeof(void*);  // 4096
  // 64 directory pages * 4096 segments * 512 buckets = 2^27 primary buckets (about 980M
  // entries at the split fill). Beyond it the index stops splitting and chains lengthen.
  static constexpr uint32_t kDirectoryPagesMax = 64;
  static constexpr uint32_t kPrimaryBucketsMax =
      kDirectoryPagesMax * kSegmentsPerDirectoryPage * kBucketsPerSegment;
  // Split while entries exceed this percentage of the primary slots (7.35 entries per
  // primary bucket on average; the overflow nodes absorb the excess). Higher saves
  // primary buckets but lengthens chains; 90 costs ~12.4 bytes/entry and 1.20 lines per
  // hit, 105 ~11.8 bytes and 1.30 lines, 120 ~11.2 bytes and 1.42 lines (model of
  // Poisson bucket loads over a split round; the 1M-entry test measures 11.5).
  static constexpr uint32_t kSplitFillPercent = 105;
  // Merge below this fill; the gap to kSplitFillPercent keeps an insert/erase mix near a
  // boundary from splitting and merging the same bucket over and over.
  static constexpr uint32_t kMergeFillPercent = 50;
  // After a split or merge fails for lack of a page, wait this many inserts/erases before
  // asking GlobalMemory again (each refusal costs a mutex and an error message).
  static constexpr uint32_t kResizeRetryOperations = 64;

 private:
  // hash_index_test.cc: takes every free overflow node, to refuse merges on demand.
  friend class HashIndexTestPeer;

  static constexpr uintptr_t kCountMask = 7;  // low bits of a link word
  static_assert(sizeof(void*) == 8, "the line layout assumes 64-bit pointers");
  static_assert(kSlotsPerBucket <= kCountMask, "count must fit in the link's low bits");

  // A primary bucket: one cache line. `link` = first Node address | entry count.
  struct alignas(64) Bucket {
    uint32_t hashes[kSlotsPerBucket];
    uint32_t refs[kSlotsPerBucket];
    uintptr_t link;
  };
  static_assert(sizeof(Bucket) == 64, "a bucket is one cache line");
  // An overflow node: half a line, never straddling two. `link` = next Node | count.
  struct alignas(32) Node {
    uint32_t hashes[kSlotsPerNode];
    uint32_t refs[kSlotsPerNode];
    uintptr_t link;
  };
  static_assert(sizeof(Node) == 32, "a node is half a cache line");

  static Node* next_of(uintptr_t link) { return reinterpret_cast<Node*>(link & ~kCountMask); }
  static uint32_t count_of(uintptr_t link) { return static_cast<uint32_t>(link & kCountMask); }

  // Either kind of line, so chain edits (append, fill a hole) are written once.
  struct Line {
    uint32_t* hashes;
    uint32_t* refs;
    uintptr_t* link;
    uint32_t capacity;

    uint32_t count() const { return count_of(*link); }
    Node* next() const { return next_of(*link); }
    void set_count(uint32_t count) { *link = (*link & ~kCountMask) | count; }
    void set_next(Node* next) { *link = reinterpret_cast<uintptr_t>(next) | (*link & kCountMask); }
  };
  static Line line_of(Bucket* b) { return Line{b->hashes, b->refs, &b->link, kSlotsPerBucket}; }
  static Line line_of(Node* n) { return Line{n->hashes, n->refs, &n->link, kSlotsPerNode}; }

  // First 32 bytes of an overflow page; the other 1023 half lines are nodes.
  struct OverflowPage {
    OverflowPage* prev;  // in the page list: pages with a free node come first
    OverflowPage* next;
    Node* free_list;           // freed nodes, chained through link
    uint16_t used_nodes;       // handed out and not freed
    uint16_t untouched_begin;  // nodes [untouched_begin, 1023) were never handed out
  };
  static_assert(sizeof(OverflowPage) <= sizeof(Node), "the header takes the first node");
  static constexpr uint32_t kNodesPerOverflowPage = kPageSize / sizeof(Node) - 1;
  static constexpr uint32_t kSmallDirectorySegments = 8;

  Bucket* bucket_at(uint32_t index) const {
    return directory_[index / (kSegmentsPerDirectoryPage * kBucketsPerSegment)]
                     [(index / kBucketsPerSegment) % kSegmentsPerDirectoryPage] +
           index % kBucketsPerSegment;
  }
  uint32_t address_of(uint32_t hash) const {
    uint32_t index = hash & low_mask_;
    if (index < split_) index = hash & (low_mask_ * 2 + 1);
    return index;
  }
  uint32_t primary_bucket_count() const { return low_mask_ + 1 + split_; }

  // Appends (hash, ref) after *tail, taking a node from *spares when the tail is full.
  // Split and merge use it after proving the spares suffice.
  static void append_with_spares(Line* tail, Node** spares, uint32_t hash, uint32_t ref);
  // Moves every entry of the chain starting at `primary` through `place`, releasing the
  // chain's nodes to *spares as soon as they have been read, and empties the primary.
  template <typename Place>
  static void drain_chain(Bucket* primary, Node** spares, Place&& place);
  void free_spares(Node* spares);

  Status add_segment();
  void remove_last_segment();
  Result<Node*> allocate_node();
  void free_node(Node* node);
  void unlink_overflow_page(OverflowPage* page);
  void push_front_overflow_page(OverflowPage* page);
  void push_back_overflow_page(OverflowPage* page);

  void maybe_grow();
  void maybe_shrink();
  bool split_one();
  bool merge_one();
  void update_thresholds();

  // Constant after construction.
  GlobalMemory* const memory_;
  const MemoryArea area_;

  // Linear-hashing state: 2^level primary buckets (low_mask_ = 2^level - 1), of which the
  // first split_ have been split this round.
  uint32_t low_mask_ = 0;
  uint32_t split_ = 0;
  size_t size_ = 0;
  size_t split_above_size_ = 0;  // split while size_ exceeds this
  size_t merge_below_size_ = 0;  // merge while size_ is below this
  uint32_t resize_retry_countdown_ = 0;

  // directory_[d] points at a directory page (or, while the index has at most
  // kSmallDirectorySegments segments, at small_directory_, saving a page for small tables).
  Bucket** directory_[kDirectoryPagesMax] = {};
  Bucket* small_directory_[kSmallDirectorySegments] = {};
  uint32_t segment_count_ = 0;
  uint32_t directory_page_count_ = 0;  // pages from memory_ (small_directory_ excluded)

  OverflowPage* overflow_pages_ = nullptr;  // pages with a free node first
  OverflowPage* overflow_pages_back_ = nullptr;
  uint32_t overflow_page_count_ = 0;
  uint32_t empty_overflow_pages_ = 0;  // kept (at most one) so a boundary does not thrash
  size_t node_count_ = 0;

  size_t split_failures_ = 0;
  size_t merge_failures_ = 0;
};

// ---- Template definitions --------------------------------------------------------------

template <typename Match>
inline uint32_t HashIndex::find(uint32_t hash, Match&& match) const {
  if (size_ == 0) return kNoRef;  // also covers "no segment allocated yet"
  const Bucket* bucket = bucket_at(address_of(hash));
  const uintptr_t link = bucket->link;
  const uint32_t count = count_of(link);
  for (uint32_t i = 0; i < count; ++i) {
    // The stored hash filters out nearly all non-matching entries without touching rows.
    if (bucket->hashes[i] == hash && match(bucket->refs[i])) return bucket->refs[i];
  }
  for (const Node* node = next_of(link); node != nullptr; node = next_of(node->link)) {
    const uint32_t node_count = count_of(node->link);
    for (uint32_t i = 0; i < node_count; ++i) {
      if (node->hashes[i] == hash && match(node->refs[i])) return node->refs[i];
    }
  }
  return kNoRef;
}

template <typename F>
inline void HashIndex::for_each(F&& f) const {
  if (segment_count_ == 0) return;
  const uint32_t buckets = primary_bucket_count();
  for (uint32_t index = 0; index < buckets; ++index) {
    const Bucket* bucket = bucket_at(index);
    const uint32_t count = count_of(bucket->link);
    for (uint32_t i = 0; i < count; ++i) f(bucket->hashes[i], bucket->refs[i]);
    for (const Node* node = next_of(bucket->link); node != nullptr; node = next_of(node->link)) {
      const uint32_t node_count = count_of(node->link);
      for (uint32_t i = 0; i < node_count; ++i) f(node->hashes[i], node->refs[i]);
    }
  }
}

}  // namespace duo::storage
