// OrderedIndex: an in-memory B+tree over the entries of one ordered index of a fragment.
//
// Entries are 32-bit refs (the fragment decides what a ref names: a row, or an
// uncommitted row image) kept in (key, tie) order, where tie = KeyComparator::tie_key(ref)
// (the ref itself unless the comparator says otherwise; always the ref when there is no
// comparator). Beside each ref the tree stores a 32-bit order-preserving prefix of the key,
// so most comparisons never touch the row; only prefix ties call back into the
// KeyComparator, and only key ties ask for tie_key.
//
// Precondition: two different refs with equal keys and equal tie_key never coexist in one
// tree (insert reports it as kInvalidArgument). This lets an entry change the ref it names
// in place (replace_ref) when the new ref has the same key and tie: e.g. an uncommitted
// row version sits exactly where the committed entry of its row will sit.
//
// Nodes are allocated from 32 KiB pages of a GlobalMemory area; exhaustion is kTableFull
// with the tree unchanged.
//
// Cursors walk in both directions. Any insert or erase invalidates cursors (replace_ref
// does not: it changes one ref in place, but it counts as a modification); scans that
// span modifications remember their last entry and seek again (see modification_count()).
//
// Invariants (check_invariants()): entries strictly increase in (key, tie) order along a
// doubly linked leaf chain; every separator in an inner node is exactly the first entry of
// its right subtree (so comparator callbacks only ever see live refs); every non-root node
// is at least a third full; all leaves are at the same depth.
//
// Memory: 512-byte nodes, 63 per page; leaves hold 61 entries at 8 bytes each. A full
// leaf shifts entries into a sibling before it splits, which keeps random inserts near
// 10.4 bytes per entry and sequential ones near 9.
//
// Speed: an insert (erase) whose entry falls inside the leaf of the previous insert
// (erase), and that changes only that leaf, skips the descent: ascending keys append to
// the last leaf, and clustered keys or a queue's oldest-first erases stay in one leaf. A
// descent fetches all of each node it visits at once (its prefixes, refs and children),
// and for an insert into a leaf known to be full also that leaf's siblings, which the
// shift reads.
//
// Thread-compatible: one owner (the LDM thread owning the fragment). Const methods and
// cursors only read, so concurrent readers without a writer are safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ndb-kernel/common/status.h"
#include "storage/memory/global_memory.h"

namespace duo::storage {

namespace ordered_index_detail {
// Node and page layouts; defined in ordered_index.cc.
struct Node;
struct Leaf;
struct Inner;
struct Page;
struct Path;
}  // namespace ordered_index_detail

// Supplied by the fragment: full key comparisons that the prefix cannot decide.
class KeyComparator {
 public:
  virtual ~KeyComparator() = default;
  // Sign of key(a) - key(b), ignoring refs.
  virtual int compare_entries(uint32_t ref_a, uint32_t ref_b) const = 0;
  // Orders entries with equal keys (unsigned order of the result). Must be a pure function
  // of the ref while the ref is in the tree, and resolvable for every ref in the tree and
  // every ref passed to insert/erase/replace_ref. Refs with equal keys and equal tie_key
  // must never be in one tree together (see OrderedIndex). Called only on key ties.
  virtual uint32_t tie_key(uint32_t ref) const { return ref; }
};

// A search key that is not (necessarily) an entry: e.g. the bound of a range scan, which
// may name only a leading subset of the index columns.
class SearchProbe {
 public:
  virtual ~SearchProbe() = default;
  // Order-preserving prefix of the probe (same function as for entries).
  virtual uint32_t prefix() const = 0;
  // True when equal prefixes imply equal keys (no callback needed).
  virtual bool prefix_exact() const { return false; }
  // Sign of key(ref) - probe, comparing only the columns the probe names.
  virtual int compare_to(uint32_t ref) const = 0;
};

class OrderedIndex {
 public:
  // `prefix_exact`: equal prefixes imply equal keys for every entry (single-column
  // integer index of at most 32 bits), so compare_entries is never needed.
  OrderedIndex(GlobalMemory* memory, const KeyComparator* comparator, bool prefix_exact,
               MemoryArea area = MemoryArea::kDataMemory);
  ~OrderedIndex();  // returns every page
  OrderedIndex(const OrderedIndex&) = delete;
  OrderedIndex& operator=(const OrderedIndex&) = delete;

  // Inserts (prefix, ref) at its (key, tie_key(ref)) position. The comparator must already
  // resolve ref's key and tie. kTableFull (node memory exhausted) leaves the tree
  // unchanged. A ref that is already present, or another ref with an equal key and equal
  // tie_key, is a caller bug, reported as kInvalidArgument (tree unchanged).
  Status insert(uint32_t prefix, uint32_t ref);
  // Removes the entry for ref, whose key (and prefix) and tie_key must be unchanged since
  // insert and still resolvable by the comparator. Never allocates, so it cannot fail for
  // memory. Returns false if absent (also when another ref holds ref's (key, tie) place).
  bool erase(uint32_t prefix, uint32_t ref);
  // Makes the entry for old_ref name new_ref instead, in place: nothing moves, nothing is
  // allocated (it cannot fail for memory), and cursors stay valid (a cursor on the entry
  // now reads new_ref). old_ref's key (and prefix) and tie must be unchanged since insert.
  // Precondition: key(new_ref) == key(old_ref) and tie_key(new_ref) == tie_key(old_ref),
  // so the order is unchanged (checked through the comparator in debug builds). Also
  // rewrites the inner-node separator that names old_ref, if any. Returns false (tree
  // unchanged) if old_ref is absent; otherwise increments modification_count().
  bool replace_ref(uint32_t prefix, uint32_t old_ref, uint32_t new_ref);

  class Cursor {
   public:
    bool valid() const { return node_ != nullptr; }
    uint32_t ref() const;
    void next();  // towards larger keys; becomes invalid past the end
    void prev();  // towards smaller keys; becomes invalid before the start
   private:
    friend class OrderedIndex;
    const void* node_ = nullptr;
    uint32_t slot_ = 0;
  };

  Cursor first() const;
  Cursor last() const;
  // First entry with key >= probe (inclusive) or key > probe (exclusive).
  Cursor lower_bound(const SearchProbe& probe, bool inclusive) const;
  // Last entry with key <= probe (inclusive) or key < probe (exclusive).
  Cursor upper_bound(const SearchProbe& probe, bool inclusive) const;
  // First entry strictly after (key(probe), tie) in (key, tie) order, whether or not such
  // an entry is still present. `tie` is a tie value (what tie_key returned), not a ref:
  // resuming a scan after modifications, the scan keeps a copy of the last key it returned
  // (as a full-key probe) and tie_key() of its entry, taken while that entry was live.
  Cursor seek_after(const SearchProbe& probe, uint32_t tie) const;
  // Last entry strictly before (key(probe), tie) in (key, tie) order.
  Cursor seek_before(const SearchProbe& probe, uint32_t tie) const;

  size_t size() const;  // entries
  // Bytes of pages held (whole pages, including free node slots); 0 when empty.
  size_t memory_bytes() const;
  // Incremented by every insert, erase or replace_ref that changed the tree (failed ones
  // do not).
  uint64_t modification_count() const;
  // Checks the B+tree invariants (ordering, fill, parent links); for tests.
  Status check_invariants() const;
  // Levels in the tree: 0 when empty, 1 when the root is a leaf.
  size_t height() const { return height_; }

 private:
  using Node = ordered_index_detail::Node;
  using Leaf = ordered_index_detail::Leaf;
  using Inner = ordered_index_detail::Inner;
  using Page = ordered_index_detail::Page;
  using Path = ordered_index_detail::Path;

  // What a descent is for, which decides what it fetches ahead: a read needs a node's
  // prefixes (and one child pointer or ref); a change also needs the leaf's refs (it
  // shifts entries); an insert into a leaf known to be full also needs the siblings.
  enum class Descent : uint8_t { kRead, kChange, kInsert };
  // The leaf slot of the first entry e with before(e) false, where before(e) holds for a
  // leading run of the (key, tie) order: prefix(e) < target_prefix, or equal prefixes and
  // tie_before(ref(e)). The slot may equal the leaf's count (answer is in the next leaf).
  template <Descent kDescent = Descent::kRead, typename TieBefore>
  Cursor find_first_not_before(uint32_t target_prefix, const TieBefore& tie_before,
                               Path* path) const;
  // That entry as a valid cursor (or invalid at the end).
  template <typename TieBefore>
  Cursor first_not_before(uint32_t target_prefix, const TieBefore& tie_before) const;
  // The entry just before it (or invalid at the start).
  template <typename TieBefore>
  Cursor last_before(uint32_t target_prefix, const TieBefore& tie_before) const;
  // Sign of (key_a, tie_a) - (key_b, tie_b).
  int compare_entries(uint32_t prefix_a, uint32_t ref_a, uint32_t prefix_b, uint32_t ref_b) const;
  // tie_key(ref): the ref itself without a comparator.
  uint32_t tie_of(uint32_t ref) const {
    return comparator_ == nullptr ? ref : comparator_->tie_key(ref);
  }
  // Descends to the first entry after (key(ref), tie_key(ref)), filling `path`; the entry
  // for ref, if present, is just before the slot found, in the same leaf. Sets
  // *other_with_equal_tie when an entry other than ref with ref's key and tie was seen
  // (one is always seen when present).
  template <Descent kDescent = Descent::kChange>
  Cursor find_entry(uint32_t prefix, uint32_t ref, Path* path,
                    bool* other_with_equal_tie = nullptr) const;

  // Insert and erase without a descent when the entry falls inside the hint leaf and only
  // that leaf changes (no separator, no split or merge). False: nothing was changed, and
  // the caller falls back to the descent (which also reports errors and absent refs).
  // When they return false having found the entry's slot in the first or the last leaf,
  // they set *edge_slot to it.
  bool try_insert_at_hint(uint32_t prefix, uint32_t ref, uint32_t* edge_slot);
  bool try_erase_at_hint(uint32_t prefix, uint32_t ref, uint32_t* edge_slot);
  void set_insert_hint(Leaf* leaf);
  // Fills `path` for the first or the last leaf without a search.
  void edge_path(const Leaf* leaf, Path* path) const;

  // These return the leaf that now holds the new entry (try_shift_into_sibling: null, and
  // nothing changed, when neither sibling has room).
  Leaf* try_shift_into_sibling(Path& path, Leaf* leaf, uint32_t slot, uint32_t prefix,
                               uint32_t ref);
  size_t nodes_needed_for_split(const Path& path) const;
  Leaf* split_and_insert(Path& path, Leaf* leaf, uint32_t slot, uint32_t prefix, uint32_t ref);
  void rebalance_leaf(Path& path, Leaf* leaf);
  void rebalance_inner(Path& path, size_t level);
  void shrink_root_if_single_child();
  void unlink_leaf(Leaf* leaf);

  // Node allocator: fixed-size node slots carved from kPageSize pages.
  Status reserve_nodes(size_t count);
  void* allocate_node();
  void free_node(void* node);
  void release_empty_pages(size_t keep_pages);
  void release_page(Page* page);  // an empty page, back to GlobalMemory

  // Constant after construction.
  GlobalMemory* const memory_;
  const KeyComparator* const comparator_;  // may be null when prefix_exact_
  const bool prefix_exact_;
  const MemoryArea area_;

  // Tree state.
  Node* root_ = nullptr;  // null when empty
  Leaf* first_leaf_ = nullptr;
  Leaf* last_leaf_ = nullptr;
  size_t height_ = 0;
  size_t size_ = 0;
  uint64_t modification_count_ = 0;
  // Leaves that the last insert and the last erase touched (null once freed): sequential
  // and clustered workloads hit them again, and then skip the descent. Any live leaf is a
  // correct hint, since the fast paths check that the entry belongs to it.
  Leaf* insert_hint_ = nullptr;
  Leaf* erase_hint_ = nullptr;
  // The prefixes insert_hint_ covered when it was set (from 0 for the first leaf, up to the
  // maximum for the last): inserts outside skip the hint without touching its leaf. Only a
  // filter (the leaf's contents decide), so it may go stale; empty when there is no hint.
  uint32_t insert_hint_low_ = 1;
  uint32_t insert_hint_high_ = 0;

  // Allocator state. Every page held is on all_pages_; pages with a free node slot are
  // also on free_pages_ (most recently freed first, so warm slots are reused).
  Page* all_pages_ = nullptr;
  Page* free_pages_ = nullptr;
  size_t page_count_ = 0;
  size_t free_slot_count_ = 0;
  size_t empty_page_count_ = 0;  // held pages with no node in use
};

}  // namespace duo::storage
