// OrderedIndex implementation: a B+tree of 512-byte nodes carved from 32 KiB pages.
//
// Layout. A leaf holds up to kLeafCapacity entries as two parallel arrays (prefixes, then
// refs), so a search scans 4-byte prefixes that share few cache lines and touches a ref
// only on a prefix tie. An inner node holds up to kInnerMaxKeys separators (prefix, ref)
// and one more child pointer. Each page keeps its own header in slot 0 and hands out the
// other kNodesPerPage slots.
//
// Invariants (verified by check_invariants()):
//  1. All leaves are at level 0 and at the same depth; a node's level is its height - 1.
//  2. Entries are strictly increasing in (key, tie) order (tie = tie_key(ref)) within a
//     leaf and along the leaf chain; the chain is doubly linked and first_leaf_/last_leaf_
//     are its ends.
//  3. Separator i of an inner node is exactly the first entry (prefix and ref) of the
//     subtree of child i + 1. So every separator names a live entry, and a comparator
//     callback on a separator never reads a row that has been erased (and replace_ref
//     rewrites the one separator that names the replaced ref).
//  4. Fill: a non-root leaf holds [kLeafMinEntries, kLeafCapacity] entries; a non-root
//     inner node [kInnerMinKeys, kInnerMaxKeys] separators; an inner root at least one;
//     a leaf root at least one entry (an empty tree has no root and no nodes).
//  5. Every allocated node slot is reachable from the root (no leaks).
//
// Failure atomicity: insert computes how many nodes its split chain needs and reserves
// them before changing anything, so kTableFull leaves the tree exactly as it was. Erase
// and replace_ref never allocate.
//
// Thread-compatible: one owner; no internal locking (GlobalMemory locks page calls).
#include "storage/ordered_index/ordered_index.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace duo::storage {
namespace {

constexpr size_t kNodeSizeBytes = 512;
// Slot 0 of each page holds the page header; a node slot is the unit of allocation.
constexpr size_t kNodesPerPage = kPageSize / kNodeSizeBytes - 1;
static_assert(kNodesPerPage < 64, "free slots are tracked in one 64-bit mask");

constexpr uint32_t kLeafCapacity = 61;  // (512 - 24 header bytes) / 8 bytes per entry
// A third, not a half: a merged leaf is then at most 2/3 full, so inserts right after a
// merge do not split it again (no merge/split ping-pong at the boundary).
constexpr uint32_t kLeafMinEntries = kLeafCapacity / 3;
constexpr uint32_t kInnerMaxKeys = 31;  // 8 bytes per separator + 8 per child pointer
constexpr uint32_t kInnerMinKeys = kInnerMaxKeys / 3;
// With at least kLeafMinEntries per leaf and kInnerMinKeys + 1 children per inner node,
// 2^32 entries need fewer than 10 levels.
constexpr size_t kMaxHeight = 16;

[[noreturn]] void fail_invariant(const char* condition, int line) {
  std::fprintf(stderr, "ordered_index.cc:%d: invariant violated: %s\n", line, condition);
  std::abort();
}
// Always on: a broken tree must stop the node rather than return wrong rows.
#define ORDERED_INDEX_CHECK(condition) \
  do {                                 \
    if (!(condition)) fail_invariant(#condition, __LINE__); \
  } while (0)

}  // namespace

namespace ordered_index_detail {

struct Node {
  uint16_t count;  // leaf: entries; inner: separators (children = count + 1)
  uint8_t level;   // 0 for leaves
};

struct Leaf : Node {
  Leaf* prev;
  Leaf* next;
  uint32_t prefixes[kLeafCapacity];
  uint32_t refs[kLeafCapacity];
};

struct Inner : Node {
  uint32_t prefixes[kInnerMaxKeys];
  uint32_t refs[kInnerMaxKeys];
  // In a level-1 node (children are leaves), a hint: bit i set when child i was full when
  // last changed through this node, so an insert into it will shift entries into a
  // sibling and the descent fetches the siblings along with it. Never needed for
  // correctness (the fast paths change leaves without updating it); 0 at other levels.
  // Fills what would be padding before the children.
  uint32_t full_leaves;
  Node* children[kInnerMaxKeys + 1];
};

struct Page {
  Page* prev_all;
  Page* next_all;
  Page* prev_free;
  Page* next_free;
  uint64_t free_mask;  // bit i set: node slot i is free (i in 1..kNodesPerPage)
  uint32_t used_count;
};

// The inner nodes visited by one descent: nodes[level] and the child taken there.
struct Path {
  Inner* nodes[kMaxHeight];
  uint32_t child_index[kMaxHeight];
};

}  // namespace ordered_index_detail

namespace {

using ordered_index_detail::Inner;
using ordered_index_detail::Leaf;
using ordered_index_detail::Node;
using ordered_index_detail::Page;

static_assert(sizeof(Leaf) == kNodeSizeBytes, "leaf must fill its node slot exactly");
static_assert(sizeof(Inner) == kNodeSizeBytes, "inner node must fill its node slot exactly");
static_assert(sizeof(Page) <= kNodeSizeBytes, "page header must fit in slot 0");
static_assert(kInnerMaxKeys + 1 <= 32, "full_leaves has one bit per child");
// Where the prefix arrays end (the bytes a read's bisection needs): a leaf's refs fill its
// tail; an inner node's prefixes follow the 4-byte Node header.
constexpr size_t kLeafPrefixEndBytes = kNodeSizeBytes - kLeafCapacity * sizeof(uint32_t);
constexpr size_t kInnerPrefixEndBytes = sizeof(Node) + kInnerMaxKeys * sizeof(uint32_t);
// No edge slot (see try_insert_at_hint and try_erase_at_hint).
constexpr uint32_t kNoEdge = ~uint32_t{0};

constexpr uint64_t kAllSlotsFree = ((uint64_t{1} << kNodesPerPage) - 1) << 1;

// First slot in [0, count) whose entry is not before the target (see
// find_first_not_before). The prefix array narrows the range; refs are read only for the
// run of slots whose prefix equals the target's.
template <typename TieBefore>
[[gnu::always_inline]] inline uint32_t first_slot_not_before(const uint32_t* prefixes,
                                                             const uint32_t* refs, uint32_t count,
                                                             uint32_t target_prefix,
                                                             const TieBefore& tie_before) {
  // First slot with prefix >= target: branch-free bisection, since the outcome of each
  // step is a coin flip the branch predictor cannot learn.
  if (count == 0) return 0;
  const uint32_t* base = prefixes;
  uint32_t length = count;
  while (length > 1) {
    const uint32_t half = length / 2;
    base = base[half] < target_prefix ? base + half : base;
    length -= half;
  }
  uint32_t low = static_cast<uint32_t>(base - prefixes) + (*base < target_prefix ? 1u : 0u);
  if (low == count || prefixes[low] != target_prefix) return low;
  uint32_t high = low + 1;  // end of the equal-prefix run (usually short: scan rather than bisect)
  while (high < count && prefixes[high] == target_prefix) ++high;
  while (low < high) {
    const uint32_t mid = (low + high) / 2;
    if (tie_before(refs[mid])) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return low;
}

// Asks for every cache line of a node: the search reads the prefixes, then a child
// pointer or (on prefix ties, and to shift entries) the refs, so without this each of
// those would be a second miss after the first.
[[gnu::always_inline]] inline void prefetch_node(const void* node) {
  for (size_t offset = 0; offset < kNodeSizeBytes; offset += 64) {
    __builtin_prefetch(static_cast<const uint8_t*>(node) + offset);
  }
}

// The position of one entry (prefix, ref) in (key, tie) order, compared against entries of
// the tree. tie_key(ref) is asked for once, on the first key tie.
class EntryTarget {
 public:
  EntryTarget(const KeyComparator* comparator, bool prefix_exact, uint32_t prefix, uint32_t ref)
      : comparator_(comparator), prefix_exact_(prefix_exact), prefix_(prefix), ref_(ref) {}

  // For an entry whose prefix equals the target's: is it at or before the target? Notes a
  // clash (another ref with an equal key and tie).
  bool at_or_before(uint32_t entry_ref) {
    if (entry_ref == ref_) return true;
    if (!prefix_exact_) {
      const int c = comparator_->compare_entries(entry_ref, ref_);
      if (c != 0) return c < 0;
    }
    const uint32_t entry_tie = tie_of(entry_ref);
    clash_ |= entry_tie == tie();
    return entry_tie <= tie();
  }
  // Sign of entry - target in (key, tie) order: 0 for the target's own ref or a clash.
  int compare(uint32_t entry_prefix, uint32_t entry_ref) {
    if (entry_prefix != prefix_) return entry_prefix < prefix_ ? -1 : 1;
    if (entry_ref == ref_) return 0;
    if (!prefix_exact_) {
      const int c = comparator_->compare_entries(entry_ref, ref_);
      if (c != 0) return c < 0 ? -1 : 1;
    }
    const uint32_t entry_tie = tie_of(entry_ref);
    if (entry_tie == tie()) {
      clash_ = true;
      return 0;
    }
    return entry_tie < tie() ? -1 : 1;
  }
  bool clash() const { return clash_; }

 private:
  uint32_t tie_of(uint32_t ref) const {
    return comparator_ == nullptr ? ref : comparator_->tie_key(ref);
  }
  uint32_t tie() {
    if (!tie_known_) {
      tie_ = tie_of(ref_);
      tie_known_ = true;
    }
    return tie_;
  }

  const KeyComparator* const comparator_;
  const bool prefix_exact_;
  const uint32_t prefix_;
  const uint32_t ref_;
  uint32_t tie_ = 0;
  bool tie_known_ = false;
  bool clash_ = false;
};

inline Leaf* as_leaf(Node* node) { return static_cast<Leaf*>(node); }
inline Inner* as_inner(Node* node) { return static_cast<Inner*>(node); }

// Copies `count` leaf entries (both arrays); ranges may overlap.
inline void move_leaf_entries(Leaf* to, uint32_t to_slot, const Leaf* from, uint32_t from_slot,
                              uint32_t count) {
  std::memmove(&to->prefixes[to_slot], &from->prefixes[from_slot], count * sizeof(uint32_t));
  std::memmove(&to->refs[to_slot], &from->refs[from_slot], count * sizeof(uint32_t));
}

inline void insert_into_leaf(Leaf* leaf, uint32_t slot, uint32_t prefix, uint32_t ref) {
  if (slot < leaf->count) move_leaf_entries(leaf, slot + 1, leaf, slot, leaf->count - slot);
  leaf->prefixes[slot] = prefix;
  leaf->refs[slot] = ref;
  ++leaf->count;
}

inline void set_separator(Inner* inner, uint32_t index, const Leaf* first_entry_of) {
  inner->prefixes[index] = first_entry_of->prefixes[0];
  inner->refs[index] = first_entry_of->refs[0];
}

// Sets or clears the full_leaves bit of `parent`'s child `index`, which is `leaf`. Stores
// only a change, so most inserts leave the parent's cache line clean.
inline void note_leaf_fill(Inner* parent, uint32_t index, const Leaf* leaf) {
  const uint32_t bit = uint32_t{1} << index;
  const uint32_t full_leaves =
      leaf->count == kLeafCapacity ? parent->full_leaves | bit : parent->full_leaves & ~bit;
  if (full_leaves != parent->full_leaves) parent->full_leaves = full_leaves;
}

// `mask` with a zero bit inserted at `index` (bits from index on move up one), and with
// bit `index` removed (bits above it move down one); bits are children.
inline uint64_t insert_child_bit(uint64_t mask, uint32_t index) {
  const uint64_t below = (uint64_t{1} << index) - 1;
  return (mask & below) | ((mask & ~below) << 1);
}
inline uint32_t remove_child_bit(uint32_t mask, uint32_t index) {
  const uint32_t below = (uint32_t{1} << index) - 1;
  return (mask & below) | ((mask >> 1) & ~below);
}

// Removes separator `key_index` and child `child_index` (key_index or key_index + 1).
void remove_key_and_child(Inner* inner, uint32_t key_index, uint32_t child_index) {
  inner->full_leaves = remove_child_bit(inner->full_leaves, child_index);
  const uint32_t keys_after = inner->count - key_index - 1;
  std::memmove(&inner->prefixes[key_index], &inner->prefixes[key_index + 1],
               keys_after * sizeof(uint32_t));
  std::memmove(&inner->refs[key_index], &inner->refs[key_index + 1],
               keys_after * sizeof(uint32_t));
  std::memmove(&inner->children[child_index], &inner->children[child_index + 1],
               (inner->count - child_index) * sizeof(Node*));
  --inner->count;
}

// A sequence of (prefix, ref) entries or separators assembled from up to two nodes plus
// one new item, then cut into nodes again: splits and shifts all work this way.
struct EntryRun {
  uint32_t prefixes[2 * kLeafCapacity + 1];
  uint32_t refs[2 * kLeafCapacity + 1];
  Node* children[2 * kLeafCapacity + 2];  // inner runs only
  uint32_t count = 0;

  void append_leaf(const Leaf* leaf, uint32_t from, uint32_t to) {
    std::memcpy(&prefixes[count], &leaf->prefixes[from], (to - from) * sizeof(uint32_t));
    std::memcpy(&refs[count], &leaf->refs[from], (to - from) * sizeof(uint32_t));
    count += to - from;
  }
  void append(uint32_t prefix, uint32_t ref) {
    prefixes[count] = prefix;
    refs[count] = ref;
    ++count;
  }
  void store_leaf(Leaf* leaf, uint32_t from, uint32_t to) const {
    std::memcpy(leaf->prefixes, &prefixes[from], (to - from) * sizeof(uint32_t));
    std::memcpy(leaf->refs, &refs[from], (to - from) * sizeof(uint32_t));
    leaf->count = static_cast<uint16_t>(to - from);
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------
// Cursor

uint32_t OrderedIndex::Cursor::ref() const {
  const Leaf* leaf = static_cast<const Leaf*>(node_);
  return leaf->refs[slot_];
}

void OrderedIndex::Cursor::next() {
  const Leaf* leaf = static_cast<const Leaf*>(node_);
  if (++slot_ < leaf->count) return;
  leaf = leaf->next;
  node_ = leaf;
  slot_ = 0;
  // Scans usually go on: start loading the leaf after this one.
  if (leaf != nullptr && leaf->next != nullptr) {
    for (size_t offset = 0; offset < kNodeSizeBytes; offset += 64) {
      __builtin_prefetch(reinterpret_cast<const uint8_t*>(leaf->next) + offset);
    }
  }
}

void OrderedIndex::Cursor::prev() {
  if (slot_ > 0) {
    --slot_;
    return;
  }
  const Leaf* leaf = static_cast<const Leaf*>(node_)->prev;
  node_ = leaf;
  slot_ = leaf != nullptr ? leaf->count - 1u : 0u;
}

// ---------------------------------------------------------------------------------------
// Construction and accessors

OrderedIndex::OrderedIndex(GlobalMemory* memory, const KeyComparator* comparator,
                           bool prefix_exact, MemoryArea area)
    : memory_(memory), comparator_(comparator), prefix_exact_(prefix_exact), area_(area) {
  ORDERED_INDEX_CHECK(memory != nullptr);
  ORDERED_INDEX_CHECK(comparator != nullptr || prefix_exact);
}

OrderedIndex::~OrderedIndex() {
  Page* page = all_pages_;
  while (page != nullptr) {
    Page* next = page->next_all;
    memory_->free_page(area_, page);
    page = next;
  }
}

size_t OrderedIndex::size() const { return size_; }
size_t OrderedIndex::memory_bytes() const { return page_count_ * kPageSize; }
uint64_t OrderedIndex::modification_count() const { return modification_count_; }

int OrderedIndex::compare_entries(uint32_t prefix_a, uint32_t ref_a, uint32_t prefix_b,
                                  uint32_t ref_b) const {
  if (prefix_a != prefix_b) return prefix_a < prefix_b ? -1 : 1;
  if (ref_a == ref_b) return 0;
  if (!prefix_exact_) {
    const int c = comparator_->compare_entries(ref_a, ref_b);
    if (c != 0) return c < 0 ? -1 : 1;
  }
  const uint32_t tie_a = tie_of(ref_a);
  const uint32_t tie_b = tie_of(ref_b);
  if (tie_a == tie_b) return 0;
  return tie_a < tie_b ? -1 : 1;
}

// ---------------------------------------------------------------------------------------
// Search

template <OrderedIndex::Descent kDescent, typename TieBefore>
OrderedIndex::Cursor OrderedIndex::find_first_not_before(uint32_t target_prefix,
                                                         const TieBefore& tie_before,
                                                         Path* path) const {
  Cursor cursor;
  if (root_ == nullptr) return cursor;
  Node* node = root_;
  // Separators are first entries of their right subtrees, so the first child whose
  // separator is not before the target holds the answer, or the answer is that
  // separator itself (slot == count in the leaf reached).
  for (size_t level = height_ - 1; level > 0; --level) {
    Inner* inner = as_inner(node);
    const uint32_t child =
        first_slot_not_before(inner->prefixes, inner->refs, inner->count, target_prefix,
                              tie_before);
    if (path != nullptr) {
      path->nodes[level] = inner;
      path->child_index[level] = child;
    }
    node = inner->children[child];
    // The bisection reads the whole prefix array of the next node, then a child pointer
    // (or refs), and a change shifts the leaf's entries: ask for those cache lines now,
    // so their misses overlap instead of following one another. (Reads ask only for the
    // prefixes: whole nodes measured slower for back-to-back lookups, which overlap.)
    if (kDescent != Descent::kRead) {
      prefetch_node(node);
    } else {
      const size_t prefix_end_bytes = level == 1 ? kLeafPrefixEndBytes : kInnerPrefixEndBytes;
      for (size_t offset = 0; offset < prefix_end_bytes; offset += 64) {
        __builtin_prefetch(reinterpret_cast<const uint8_t*>(node) + offset);
      }
    }
    if (kDescent == Descent::kInsert && level == 1 && (inner->full_leaves >> child & 1u) != 0) {
      // The leaf is (probably) full, so the insert will shift entries into a sibling
      // (try_shift_into_sibling reads both): fetch them while the leaf is on its way.
      if (child > 0) prefetch_node(inner->children[child - 1]);
      if (child < inner->count) prefetch_node(inner->children[child + 1]);
    }
  }
  const Leaf* leaf = as_leaf(node);
  cursor.node_ = leaf;
  cursor.slot_ =
      first_slot_not_before(leaf->prefixes, leaf->refs, leaf->count, target_prefix, tie_before);
  return cursor;
}

template <typename TieBefore>
OrderedIndex::Cursor OrderedIndex::first_not_before(uint32_t target_prefix,
                                                    const TieBefore& tie_before) const {
  Cursor cursor = find_first_not_before(target_prefix, tie_before, nullptr);
  if (cursor.node_ != nullptr) {
    const Leaf* leaf = static_cast<const Leaf*>(cursor.node_);
    if (cursor.slot_ == leaf->count) {
      cursor.node_ = leaf->next;
      cursor.slot_ = 0;
    }
  }
  return cursor;
}

template <typename TieBefore>
OrderedIndex::Cursor OrderedIndex::last_before(uint32_t target_prefix,
                                               const TieBefore& tie_before) const {
  Cursor cursor = find_first_not_before(target_prefix, tie_before, nullptr);
  if (cursor.node_ != nullptr) cursor.prev();
  return cursor;
}

OrderedIndex::Cursor OrderedIndex::first() const {
  Cursor cursor;
  cursor.node_ = first_leaf_;
  return cursor;
}

OrderedIndex::Cursor OrderedIndex::last() const {
  Cursor cursor;
  cursor.node_ = last_leaf_;
  if (last_leaf_ != nullptr) cursor.slot_ = last_leaf_->count - 1u;
  return cursor;
}

// The probe's prefix decides every comparison except ties; on a tie the probe's own
// compare_to() decides unless equal prefixes are known to mean equal keys.
OrderedIndex::Cursor OrderedIndex::lower_bound(const SearchProbe& probe, bool inclusive) const {
  const bool exact = prefix_exact_ || probe.prefix_exact();
  if (inclusive) {  // before: key(e) < probe
    return first_not_before(probe.prefix(), [&](uint32_t ref) {
      return !exact && probe.compare_to(ref) < 0;
    });
  }
  return first_not_before(probe.prefix(), [&](uint32_t ref) {  // before: key(e) <= probe
    return exact || probe.compare_to(ref) <= 0;
  });
}

OrderedIndex::Cursor OrderedIndex::upper_bound(const SearchProbe& probe, bool inclusive) const {
  const bool exact = prefix_exact_ || probe.prefix_exact();
  if (inclusive) {  // the last entry with key(e) <= probe
    return last_before(probe.prefix(), [&](uint32_t ref) {
      return exact || probe.compare_to(ref) <= 0;
    });
  }
  return last_before(probe.prefix(), [&](uint32_t ref) {  // the last with key(e) < probe
    return !exact && probe.compare_to(ref) < 0;
  });
}

OrderedIndex::Cursor OrderedIndex::seek_after(const SearchProbe& probe, uint32_t tie) const {
  const bool exact = prefix_exact_ || probe.prefix_exact();
  return first_not_before(probe.prefix(), [&](uint32_t entry_ref) {
    const int c = exact ? 0 : probe.compare_to(entry_ref);
    return c < 0 || (c == 0 && tie_of(entry_ref) <= tie);
  });
}

OrderedIndex::Cursor OrderedIndex::seek_before(const SearchProbe& probe, uint32_t tie) const {
  const bool exact = prefix_exact_ || probe.prefix_exact();
  return last_before(probe.prefix(), [&](uint32_t entry_ref) {
    const int c = exact ? 0 : probe.compare_to(entry_ref);
    return c < 0 || (c == 0 && tie_of(entry_ref) < tie);
  });
}

// Descends to the first entry after (key(ref), tie_key(ref)): the entry for ref, if
// present, is then the one just before the slot found, in the same leaf (a leaf's first
// entry is its separator's, and separators at or before the target are passed to the
// right, so only the leftmost leaf can end the search at slot 0).
//
// An entry e other than ref with equal key and tie is always evaluated if present: it is
// the last one at or before the target, so it lies in the leaf's equal-prefix run just
// before the slot found, and a bisection that raises its low end to slot s evaluated s - 1.
template <OrderedIndex::Descent kDescent>
OrderedIndex::Cursor OrderedIndex::find_entry(uint32_t prefix, uint32_t ref, Path* path,
                                              bool* other_with_equal_tie) const {
  EntryTarget target(comparator_, prefix_exact_, prefix, ref);
  const Cursor cursor = find_first_not_before<kDescent>(
      prefix, [&](uint32_t entry_ref) { return target.at_or_before(entry_ref); }, path);
  if (other_with_equal_tie != nullptr) *other_with_equal_tie = target.clash();
  return cursor;
}

// ---------------------------------------------------------------------------------------
// Insert

// The hint leaf takes the entry without a descent when the entry sorts strictly after
// the leaf's first entry (so it does not become a separator) or the leaf is the first one,
// and strictly before its last entry or the leaf is the last one; and when the leaf has
// room. The last leaf and an entry after all others is the append of ascending keys.
// When that leaf is full and it is the first or the last leaf, *edge_slot tells insert
// where the entry goes, and insert needs no search to reach that leaf.
bool OrderedIndex::try_insert_at_hint(uint32_t prefix, uint32_t ref, uint32_t* edge_slot) {
  // Random keys almost never fall in the hint leaf: rule that out without touching the
  // leaf, with one branch the predictor learns (the exact checks below branch on coin
  // flips). The range is empty when there is no hint.
  if ((prefix < insert_hint_low_) | (prefix > insert_hint_high_)) return false;
  Leaf* leaf = insert_hint_;
  const uint32_t count = leaf->count;
  EntryTarget target(comparator_, prefix_exact_, prefix, ref);
  uint32_t slot;
  const int last_vs_target = target.compare(leaf->prefixes[count - 1], leaf->refs[count - 1]);
  if (last_vs_target < 0) {
    if (leaf->next != nullptr) return false;  // may belong to the next leaf
    slot = count;
  } else {
    // Equal (the ref is present, or a clash): the descent reports it.
    if (last_vs_target == 0) return false;
    const int first_vs_target = target.compare(leaf->prefixes[0], leaf->refs[0]);
    if (first_vs_target > 0) {
      if (leaf->prev != nullptr) return false;  // belongs before this leaf
      slot = 0;
    } else {
      if (first_vs_target == 0) return false;
      // A full leaf needs its path (for a shift or split): known without a search only for
      // the first and the last leaf.
      if (count == kLeafCapacity && leaf->prev != nullptr && leaf->next != nullptr) return false;
      slot =
          first_slot_not_before(leaf->prefixes, leaf->refs, count, prefix,
                                [&](uint32_t entry_ref) { return target.at_or_before(entry_ref); });
      // An entry equal to the target would be just before the slot (see find_entry).
      if (target.clash() || (slot > 0 && leaf->refs[slot - 1] == ref)) return false;
    }
  }
  if (count == kLeafCapacity) {
    *edge_slot = slot;  // the leaf is the first or the last
    return false;
  }
  insert_into_leaf(leaf, slot, prefix, ref);
  ++size_;
  ++modification_count_;
  return true;
}

void OrderedIndex::set_insert_hint(Leaf* leaf) {
  insert_hint_ = leaf;
  if (leaf == nullptr) {
    insert_hint_low_ = 1;
    insert_hint_high_ = 0;
  } else {
    insert_hint_low_ = leaf->prev == nullptr ? 0u : leaf->prefixes[0];
    insert_hint_high_ = leaf->next == nullptr ? ~uint32_t{0} : leaf->prefixes[leaf->count - 1];
  }
}

Status OrderedIndex::insert(uint32_t prefix, uint32_t ref) {
  uint32_t edge_slot = kNoEdge;
  if (try_insert_at_hint(prefix, ref, &edge_slot)) return Status::OK();
  if (root_ == nullptr) {
    DUO_RETURN_IF_ERROR(reserve_nodes(1));
    Leaf* leaf = new (allocate_node()) Leaf;
    leaf->count = 0;
    leaf->level = 0;
    leaf->prev = nullptr;
    leaf->next = nullptr;
    root_ = leaf;
    first_leaf_ = leaf;
    last_leaf_ = leaf;
    height_ = 1;
  }
  Path path;
  Leaf* leaf;
  uint32_t slot;
  if (edge_slot != kNoEdge) {  // into the full first or last leaf, which needs no search
    leaf = insert_hint_;
    slot = edge_slot;
    edge_path(leaf, &path);
  } else {
    // The slot after every entry at or before (key, tie): an entry equal to it, if any, is
    // just before the slot, in the same leaf.
    bool other_with_equal_tie = false;
    const Cursor position = find_entry<Descent::kInsert>(prefix, ref, &path, &other_with_equal_tie);
    leaf = const_cast<Leaf*>(static_cast<const Leaf*>(position.node_));
    slot = position.slot_;
    if (slot > 0 && leaf->refs[slot - 1] == ref) {
      return Status(ErrorCode::kInvalidArgument, "ref is already in the ordered index");
    }
    if (other_with_equal_tie) {
      return Status(ErrorCode::kInvalidArgument,
                    "another ref with an equal key and tie is in the ordered index");
    }
  }
  if (leaf->count < kLeafCapacity) {
    insert_into_leaf(leaf, slot, prefix, ref);
    if (height_ > 1) note_leaf_fill(path.nodes[1], path.child_index[1], leaf);
    set_insert_hint(leaf);
  } else if (Leaf* holder = try_shift_into_sibling(path, leaf, slot, prefix, ref)) {
    set_insert_hint(holder);
  } else {
    // Reserve before touching anything: a failed split chain half way up could not be
    // undone.
    DUO_RETURN_IF_ERROR(reserve_nodes(nodes_needed_for_split(path)));
    set_insert_hint(split_and_insert(path, leaf, slot, prefix, ref));
  }
  ++size_;
  ++modification_count_;
  return Status::OK();
}

// A full leaf first offers entries to a sibling under the same parent: this raises the
// steady-state fill under random inserts well above the ~69% of plain splitting.
OrderedIndex::Leaf* OrderedIndex::try_shift_into_sibling(Path& path, Leaf* leaf, uint32_t slot,
                                                         uint32_t prefix, uint32_t ref) {
  if (height_ < 2) return nullptr;
  Inner* parent = path.nodes[1];
  const uint32_t index = path.child_index[1];
  Leaf* left = index > 0 ? as_leaf(parent->children[index - 1]) : nullptr;
  Leaf* right = index < parent->count ? as_leaf(parent->children[index + 1]) : nullptr;
  const uint32_t left_room = left != nullptr ? kLeafCapacity - left->count : 0;
  const uint32_t right_room = right != nullptr ? kLeafCapacity - right->count : 0;
  if (left_room == 0 && right_room == 0) return nullptr;
  // Ascending (descending) key inserts arrive at the end (start) of the last (first)
  // leaf, whose only sibling is then on the left (right): fill that sibling completely,
  // so such leaves end up full rather than half full. The donor keeps at least the
  // sibling's old count + 1 >= kLeafMinEntries entries.
  const bool appending = leaf->next == nullptr && slot == leaf->count;
  const bool prepending = leaf->prev == nullptr && slot == 0;
  EntryRun run;
  if (left_room > 0 && left_room >= right_room) {
    run.append_leaf(left, 0, left->count);
    run.append_leaf(leaf, 0, slot);
    const uint32_t new_entry = run.count;
    run.append(prefix, ref);
    run.append_leaf(leaf, slot, leaf->count);
    const uint32_t left_count = appending ? kLeafCapacity : run.count / 2;
    run.store_leaf(left, 0, left_count);
    run.store_leaf(leaf, left_count, run.count);
    set_separator(parent, index - 1, leaf);
    note_leaf_fill(parent, index - 1, left);
    note_leaf_fill(parent, index, leaf);
    return new_entry < left_count ? left : leaf;
  } else {
    run.append_leaf(leaf, 0, slot);
    run.append(prefix, ref);
    run.append_leaf(leaf, slot, leaf->count);
    run.append_leaf(right, 0, right->count);
    const uint32_t leaf_count = prepending ? run.count - kLeafCapacity : run.count / 2;
    run.store_leaf(leaf, 0, leaf_count);
    run.store_leaf(right, leaf_count, run.count);
    set_separator(parent, index, right);
    note_leaf_fill(parent, index, leaf);
    note_leaf_fill(parent, index + 1, right);
    return slot < leaf_count ? leaf : right;
  }
}

// One node for the leaf, one per full ancestor, and a new root if all of them are full.
size_t OrderedIndex::nodes_needed_for_split(const Path& path) const {
  size_t needed = 1;
  for (size_t level = 1; level < height_; ++level) {
    if (path.nodes[level]->count < kInnerMaxKeys) return needed;
    ++needed;
  }
  return needed + 1;
}

OrderedIndex::Leaf* OrderedIndex::split_and_insert(Path& path, Leaf* leaf, uint32_t slot,
                                                   uint32_t prefix, uint32_t ref) {
  EntryRun run;
  run.append_leaf(leaf, 0, slot);
  run.append(prefix, ref);
  run.append_leaf(leaf, slot, leaf->count);
  // Sequential inserts leave the old leaf full and start the new one at the minimum.
  uint32_t left_count = run.count / 2;
  if (leaf->next == nullptr && slot == leaf->count) left_count = run.count - kLeafMinEntries;
  if (leaf->prev == nullptr && slot == 0) left_count = kLeafMinEntries;

  Leaf* right = new (allocate_node()) Leaf;
  right->level = 0;
  run.store_leaf(leaf, 0, left_count);
  run.store_leaf(right, left_count, run.count);
  right->prev = leaf;
  right->next = leaf->next;
  if (leaf->next != nullptr) {
    leaf->next->prev = right;
  } else {
    last_leaf_ = right;
  }
  leaf->next = right;
  Leaf* const holder = slot < left_count ? leaf : right;

  // Push (separator, new right node) up the path while nodes are full.
  uint32_t separator_prefix = right->prefixes[0];
  uint32_t separator_ref = right->refs[0];
  Node* new_child = right;
  bool rightmost = leaf->next == right && right->next == nullptr;
  bool leftmost = leaf->prev == nullptr;
  for (size_t level = 1; level < height_; ++level) {
    Inner* inner = path.nodes[level];
    const uint32_t index = path.child_index[level];  // new separator goes at `index`
    // The children's full bits (level 1 only), with the new child's inserted at index + 1;
    // neither half of a split leaf is full.
    uint64_t full_leaves = 0;
    if (level == 1) {
      full_leaves = insert_child_bit(inner->full_leaves, index + 1) & ~(uint64_t{1} << index);
    }
    if (inner->count < kInnerMaxKeys) {
      inner->full_leaves = static_cast<uint32_t>(full_leaves);
      const uint32_t keys_after = inner->count - index;
      std::memmove(&inner->prefixes[index + 1], &inner->prefixes[index],
                   keys_after * sizeof(uint32_t));
      std::memmove(&inner->refs[index + 1], &inner->refs[index], keys_after * sizeof(uint32_t));
      std::memmove(&inner->children[index + 2], &inner->children[index + 1],
                   keys_after * sizeof(Node*));
      inner->prefixes[index] = separator_prefix;
      inner->refs[index] = separator_ref;
      inner->children[index + 1] = new_child;
      ++inner->count;
      return holder;
    }
    EntryRun keys;
    for (uint32_t i = 0; i < index; ++i) keys.append(inner->prefixes[i], inner->refs[i]);
    keys.append(separator_prefix, separator_ref);
    for (uint32_t i = index; i < inner->count; ++i) {
      keys.append(inner->prefixes[i], inner->refs[i]);
    }
    std::memcpy(keys.children, inner->children, (index + 1) * sizeof(Node*));
    keys.children[index + 1] = new_child;
    std::memcpy(&keys.children[index + 2], &inner->children[index + 1],
                (inner->count - index) * sizeof(Node*));
    // keys.count == kInnerMaxKeys + 1; the separator at `up` moves to the parent.
    const bool appending = rightmost && index == inner->count;
    const bool prepending = leftmost && index == 0;
    rightmost = rightmost && index == inner->count;
    leftmost = leftmost && index == 0;
    uint32_t up = keys.count / 2;
    if (appending) up = keys.count - kInnerMinKeys - 1;
    if (prepending) up = kInnerMinKeys;

    Inner* sibling = new (allocate_node()) Inner;
    sibling->level = inner->level;
    inner->full_leaves = static_cast<uint32_t>(full_leaves & ((uint64_t{1} << (up + 1)) - 1));
    sibling->full_leaves = static_cast<uint32_t>(full_leaves >> (up + 1));
    inner->count = static_cast<uint16_t>(up);
    std::memcpy(inner->prefixes, keys.prefixes, up * sizeof(uint32_t));
    std::memcpy(inner->refs, keys.refs, up * sizeof(uint32_t));
    std::memcpy(inner->children, keys.children, (up + 1) * sizeof(Node*));
    sibling->count = static_cast<uint16_t>(keys.count - up - 1);
    std::memcpy(sibling->prefixes, &keys.prefixes[up + 1], sibling->count * sizeof(uint32_t));
    std::memcpy(sibling->refs, &keys.refs[up + 1], sibling->count * sizeof(uint32_t));
    std::memcpy(sibling->children, &keys.children[up + 1], (sibling->count + 1) * sizeof(Node*));
    separator_prefix = keys.prefixes[up];
    separator_ref = keys.refs[up];
    new_child = sibling;
  }
  ORDERED_INDEX_CHECK(height_ < kMaxHeight);
  Inner* root = new (allocate_node()) Inner;
  root->level = static_cast<uint8_t>(height_);
  root->count = 1;
  root->full_leaves = 0;  // a level-1 root's two leaves are the halves of a split
  root->prefixes[0] = separator_prefix;
  root->refs[0] = separator_ref;
  root->children[0] = root_;
  root->children[1] = new_child;
  root_ = root;
  ++height_;
  return holder;
}

// ---------------------------------------------------------------------------------------
// Erase

// The hint leaf loses the entry without a descent when the entry lies inside it, is not its
// first entry (a separator) unless the leaf is the first one, and the leaf stays above its
// minimum fill. Otherwise, when the entry is found in the first or last leaf, *edge_slot
// tells erase where, and erase needs no search to reach that leaf.
bool OrderedIndex::try_erase_at_hint(uint32_t prefix, uint32_t ref, uint32_t* edge_slot) {
  Leaf* leaf = erase_hint_;
  if (leaf == nullptr) return false;
  const uint32_t count = leaf->count;
  // As for insert: one predictable branch rules out most entries.
  const bool may_hold = ((prefix >= leaf->prefixes[0]) | (leaf->prev == nullptr)) &
                        (prefix <= leaf->prefixes[count - 1]);
  if (!may_hold) return false;
  EntryTarget target(comparator_, prefix_exact_, prefix, ref);
  const int last_vs_target = target.compare(leaf->prefixes[count - 1], leaf->refs[count - 1]);
  if (last_vs_target < 0) return false;
  const int first_vs_target = target.compare(leaf->prefixes[0], leaf->refs[0]);
  if (first_vs_target > 0) return false;
  uint32_t slot;  // the slot after the entry's
  if (first_vs_target == 0 && leaf->refs[0] == ref) {  // oldest first (a queue)
    slot = 1;
  } else if (last_vs_target == 0 && leaf->refs[count - 1] == ref) {  // newest first
    slot = count;
  } else {
    slot =
        first_slot_not_before(leaf->prefixes, leaf->refs, count, prefix,
                              [&](uint32_t entry_ref) { return target.at_or_before(entry_ref); });
  }
  // The entry, if present, is just before the slot (see find_entry); else the descent
  // would reach this same leaf and slot and report it absent.
  if (slot == 0 || leaf->refs[slot - 1] != ref || leaf->prefixes[slot - 1] != prefix) {
    return false;
  }
  const uint32_t minimum = height_ == 1 ? 1u : kLeafMinEntries;
  if (count <= minimum || (slot == 1 && leaf->prev != nullptr)) {
    // A merge or a separator to update.
    if (leaf->prev == nullptr || leaf->next == nullptr) *edge_slot = slot - 1;
    return false;
  }
  move_leaf_entries(leaf, slot - 1, leaf, slot, count - slot);
  --leaf->count;
  --size_;
  ++modification_count_;
  return true;
}

bool OrderedIndex::erase(uint32_t prefix, uint32_t ref) {
  if (root_ == nullptr) return false;
  uint32_t edge_slot = kNoEdge;
  if (try_erase_at_hint(prefix, ref, &edge_slot)) return true;
  Path path;
  Leaf* leaf;
  uint32_t slot;
  if (edge_slot != kNoEdge) {
    leaf = erase_hint_;
    slot = edge_slot;
    edge_path(leaf, &path);
  } else {
    const Cursor position = find_entry(prefix, ref, &path);
    leaf = const_cast<Leaf*>(static_cast<const Leaf*>(position.node_));
    // A ref stored under another prefix is a caller bug (its key changed); it is reported
    // as absent rather than erasing an entry the caller did not describe.
    if (position.slot_ == 0) return false;
    slot = position.slot_ - 1;
    if (leaf->refs[slot] != ref || leaf->prefixes[slot] != prefix) return false;
  }
  move_leaf_entries(leaf, slot, leaf, slot + 1, leaf->count - slot - 1);
  --leaf->count;
  --size_;
  ++modification_count_;
  erase_hint_ = leaf;  // cleared again if a merge below frees the leaf

  if (height_ == 1) {
    if (leaf->count == 0) {
      free_node(leaf);
      root_ = nullptr;
      first_leaf_ = nullptr;
      last_leaf_ = nullptr;
      height_ = 0;
      release_empty_pages(0);  // an empty index holds no memory
    }
    return true;
  }
  note_leaf_fill(path.nodes[1], path.child_index[1], leaf);
  if (slot == 0) {
    // The erased entry was a separator in the lowest ancestor where the path turned
    // right; it must name the leaf's new first entry (invariant 3).
    for (size_t level = 1; level < height_; ++level) {
      const uint32_t index = path.child_index[level];
      if (index > 0) {
        set_separator(path.nodes[level], index - 1, leaf);
        break;
      }
    }
  }
  if (leaf->count < kLeafMinEntries) rebalance_leaf(path, leaf);
  return true;
}

// The path to the first or the last leaf, without a search: child 0 (the last child) at
// every level.
void OrderedIndex::edge_path(const Leaf* leaf, Path* path) const {
  const bool last = leaf->next == nullptr;
  ORDERED_INDEX_CHECK(last || leaf->prev == nullptr);
  Node* node = root_;
  for (size_t level = height_ - 1; level > 0; --level) {
    Inner* inner = as_inner(node);
    const uint32_t child = last ? inner->count : 0u;
    path->nodes[level] = inner;
    path->child_index[level] = child;
    node = inner->children[child];
  }
  ORDERED_INDEX_CHECK(node == leaf);
}

bool OrderedIndex::replace_ref(uint32_t prefix, uint32_t old_ref, uint32_t new_ref) {
  if (root_ == nullptr) return false;
  Path path;
  const Cursor position = find_entry(prefix, old_ref, &path);
  Leaf* leaf = const_cast<Leaf*>(static_cast<const Leaf*>(position.node_));
  if (position.slot_ == 0) return false;
  const uint32_t slot = position.slot_ - 1;
  if (leaf->refs[slot] != old_ref || leaf->prefixes[slot] != prefix) return false;
#ifndef NDEBUG
  // The order must not change: same key (the prefix is the caller's) and same tie.
  if (comparator_ != nullptr && old_ref != new_ref) {
    ORDERED_INDEX_CHECK(comparator_->tie_key(new_ref) == comparator_->tie_key(old_ref));
    ORDERED_INDEX_CHECK(prefix_exact_ || comparator_->compare_entries(new_ref, old_ref) == 0);
  }
#endif
  leaf->refs[slot] = new_ref;
  if (slot == 0) {
    // A leaf's first entry is the separator in the lowest ancestor where the path turned
    // right (none for the first leaf of the tree), as in erase.
    for (size_t level = 1; level < height_; ++level) {
      const uint32_t index = path.child_index[level];
      if (index > 0) {
        Inner* inner = path.nodes[level];
        ORDERED_INDEX_CHECK(inner->refs[index - 1] == old_ref);
        inner->refs[index - 1] = new_ref;
        break;
      }
    }
  }
  ++modification_count_;
  return true;
}

void OrderedIndex::unlink_leaf(Leaf* leaf) {
  if (leaf->prev != nullptr) {
    leaf->prev->next = leaf->next;
  } else {
    first_leaf_ = leaf->next;
  }
  if (leaf->next != nullptr) {
    leaf->next->prev = leaf->prev;
  } else {
    last_leaf_ = leaf->prev;
  }
}

void OrderedIndex::rebalance_leaf(Path& path, Leaf* leaf) {
  Inner* parent = path.nodes[1];
  const uint32_t index = path.child_index[1];
  Leaf* left = index > 0 ? as_leaf(parent->children[index - 1]) : nullptr;
  Leaf* right = index < parent->count ? as_leaf(parent->children[index + 1]) : nullptr;
  if (left != nullptr && left->count + leaf->count <= kLeafCapacity) {
    move_leaf_entries(left, left->count, leaf, 0, leaf->count);
    left->count = static_cast<uint16_t>(left->count + leaf->count);
    unlink_leaf(leaf);
    remove_key_and_child(parent, index - 1, index);
    note_leaf_fill(parent, index - 1, left);
    free_node(leaf);
  } else if (right != nullptr && leaf->count + right->count <= kLeafCapacity) {
    move_leaf_entries(leaf, leaf->count, right, 0, right->count);
    leaf->count = static_cast<uint16_t>(leaf->count + right->count);
    unlink_leaf(right);
    remove_key_and_child(parent, index, index + 1);
    note_leaf_fill(parent, index, leaf);
    free_node(right);
  } else if (left != nullptr) {
    // No merge fits, so the pair holds more than a full leaf: halves stay above minimum.
    const uint32_t moved = (left->count + leaf->count) / 2 - leaf->count;
    move_leaf_entries(leaf, moved, leaf, 0, leaf->count);
    move_leaf_entries(leaf, 0, left, left->count - moved, moved);
    leaf->count = static_cast<uint16_t>(leaf->count + moved);
    left->count = static_cast<uint16_t>(left->count - moved);
    set_separator(parent, index - 1, leaf);
    note_leaf_fill(parent, index - 1, left);
    note_leaf_fill(parent, index, leaf);
    return;
  } else {
    ORDERED_INDEX_CHECK(right != nullptr);
    const uint32_t moved = (leaf->count + right->count) / 2 - leaf->count;
    move_leaf_entries(leaf, leaf->count, right, 0, moved);
    move_leaf_entries(right, 0, right, moved, right->count - moved);
    leaf->count = static_cast<uint16_t>(leaf->count + moved);
    right->count = static_cast<uint16_t>(right->count - moved);
    set_separator(parent, index, right);
    note_leaf_fill(parent, index, leaf);
    note_leaf_fill(parent, index + 1, right);
    return;
  }
  // A merge removed a separator from the parent.
  if (height_ == 2) {
    shrink_root_if_single_child();
  } else if (parent->count < kInnerMinKeys) {
    rebalance_inner(path, 1);
  }
}

void OrderedIndex::rebalance_inner(Path& path, size_t level) {
  Inner* node = path.nodes[level];
  Inner* parent = path.nodes[level + 1];
  const uint32_t index = path.child_index[level + 1];
  Inner* left = index > 0 ? as_inner(parent->children[index - 1]) : nullptr;
  Inner* right = index < parent->count ? as_inner(parent->children[index + 1]) : nullptr;

  // Appends parent separator `key_index` and all of `from` to `to`.
  auto merge = [&](Inner* to, Inner* from, uint32_t key_index) {
    uint32_t n = to->count;
    to->prefixes[n] = parent->prefixes[key_index];
    to->refs[n] = parent->refs[key_index];
    std::memcpy(&to->prefixes[n + 1], from->prefixes, from->count * sizeof(uint32_t));
    std::memcpy(&to->refs[n + 1], from->refs, from->count * sizeof(uint32_t));
    std::memcpy(&to->children[n + 1], from->children, (from->count + 1) * sizeof(Node*));
    to->full_leaves |= from->full_leaves << (n + 1);  // n + 1 < 32: from has a child
    to->count = static_cast<uint16_t>(n + 1 + from->count);
    remove_key_and_child(parent, key_index, key_index + 1);
    free_node(from);
  };

  if (left != nullptr && left->count + node->count + 1u <= kInnerMaxKeys) {
    merge(left, node, index - 1);
  } else if (right != nullptr && node->count + right->count + 1u <= kInnerMaxKeys) {
    merge(node, right, index);
  } else if (left != nullptr) {
    // Rotate `moved` children from the end of left through the parent separator. (The
    // full_leaves hints of both are dropped rather than rotated: rare, and only hints.)
    left->full_leaves = 0;
    node->full_leaves = 0;
    const uint32_t moved = (left->count + node->count) / 2 - node->count;
    const uint32_t n = node->count;
    std::memmove(&node->prefixes[moved], node->prefixes, n * sizeof(uint32_t));
    std::memmove(&node->refs[moved], node->refs, n * sizeof(uint32_t));
    std::memmove(&node->children[moved], node->children, (n + 1) * sizeof(Node*));
    const uint32_t from = left->count - moved + 1;  // first key of left that moves over
    std::memcpy(node->prefixes, &left->prefixes[from], (moved - 1) * sizeof(uint32_t));
    std::memcpy(node->refs, &left->refs[from], (moved - 1) * sizeof(uint32_t));
    node->prefixes[moved - 1] = parent->prefixes[index - 1];
    node->refs[moved - 1] = parent->refs[index - 1];
    std::memcpy(node->children, &left->children[from], moved * sizeof(Node*));
    parent->prefixes[index - 1] = left->prefixes[from - 1];
    parent->refs[index - 1] = left->refs[from - 1];
    left->count = static_cast<uint16_t>(left->count - moved);
    node->count = static_cast<uint16_t>(n + moved);
    return;
  } else {
    ORDERED_INDEX_CHECK(right != nullptr);
    right->full_leaves = 0;
    node->full_leaves = 0;
    const uint32_t moved = (node->count + right->count) / 2 - node->count;
    const uint32_t n = node->count;
    node->prefixes[n] = parent->prefixes[index];
    node->refs[n] = parent->refs[index];
    std::memcpy(&node->prefixes[n + 1], right->prefixes, (moved - 1) * sizeof(uint32_t));
    std::memcpy(&node->refs[n + 1], right->refs, (moved - 1) * sizeof(uint32_t));
    std::memcpy(&node->children[n + 1], right->children, moved * sizeof(Node*));
    parent->prefixes[index] = right->prefixes[moved - 1];
    parent->refs[index] = right->refs[moved - 1];
    const uint32_t remaining = right->count - moved;
    std::memmove(right->prefixes, &right->prefixes[moved], remaining * sizeof(uint32_t));
    std::memmove(right->refs, &right->refs[moved], remaining * sizeof(uint32_t));
    std::memmove(right->children, &right->children[moved], (remaining + 1) * sizeof(Node*));
    right->count = static_cast<uint16_t>(remaining);
    node->count = static_cast<uint16_t>(n + moved);
    return;
  }
  if (level + 2 == height_) {
    shrink_root_if_single_child();
  } else if (parent->count < kInnerMinKeys) {
    rebalance_inner(path, level + 1);
  }
}

void OrderedIndex::shrink_root_if_single_child() {
  Inner* root = as_inner(root_);
  if (root->count > 0) return;
  root_ = root->children[0];
  free_node(root);
  --height_;
}

// ---------------------------------------------------------------------------------------
// Node allocator

Status OrderedIndex::reserve_nodes(size_t count) {
  while (free_slot_count_ < count) {
    Result<void*> allocated = memory_->allocate_page(area_);
    if (!allocated.ok()) {
      release_empty_pages(1);
      return allocated.take_status();
    }
    Page* page = static_cast<Page*>(allocated.value());
    page->free_mask = kAllSlotsFree;
    page->used_count = 0;
    page->prev_all = nullptr;
    page->next_all = all_pages_;
    if (all_pages_ != nullptr) all_pages_->prev_all = page;
    all_pages_ = page;
    page->prev_free = nullptr;
    page->next_free = free_pages_;
    if (free_pages_ != nullptr) free_pages_->prev_free = page;
    free_pages_ = page;
    ++page_count_;
    ++empty_page_count_;
    free_slot_count_ += kNodesPerPage;
  }
  return Status::OK();
}

void* OrderedIndex::allocate_node() {
  Page* page = free_pages_;
  ORDERED_INDEX_CHECK(page != nullptr);  // callers reserve first
  const int slot = std::countr_zero(page->free_mask);
  page->free_mask &= ~(uint64_t{1} << slot);
  if (page->used_count++ == 0) --empty_page_count_;
  --free_slot_count_;
  if (page->free_mask == 0) {  // full: off the free list
    free_pages_ = page->next_free;
    if (free_pages_ != nullptr) free_pages_->prev_free = nullptr;
  }
  return reinterpret_cast<uint8_t*>(page) + static_cast<size_t>(slot) * kNodeSizeBytes;
}

void OrderedIndex::free_node(void* node) {
  Page* page = static_cast<Page*>(GlobalMemory::page_of(node));
  const size_t offset = static_cast<size_t>(static_cast<uint8_t*>(node) -
                                            reinterpret_cast<uint8_t*>(page));
  const size_t slot = offset / kNodeSizeBytes;
  ORDERED_INDEX_CHECK(offset % kNodeSizeBytes == 0);
  ORDERED_INDEX_CHECK(slot >= 1 && slot <= kNodesPerPage);
  ORDERED_INDEX_CHECK((page->free_mask & (uint64_t{1} << slot)) == 0);
  if (node == insert_hint_) set_insert_hint(nullptr);
  if (node == erase_hint_) erase_hint_ = nullptr;
#ifndef NDEBUG
  std::memset(node, 0xDB, kNodeSizeBytes);  // make use-after-free loud in tests
#endif
  if (page->free_mask == 0) {  // was full: back on the free list, at the front
    page->prev_free = nullptr;
    page->next_free = free_pages_;
    if (free_pages_ != nullptr) free_pages_->prev_free = page;
    free_pages_ = page;
  }
  page->free_mask |= uint64_t{1} << slot;
  ++free_slot_count_;
  if (--page->used_count == 0) {
    // Keep one empty page so a merge followed by a split does not bounce a page through
    // GlobalMemory's lock; give back any further one.
    ++empty_page_count_;
    if (empty_page_count_ > 1) release_page(page);
  }
}

void OrderedIndex::release_page(Page* page) {
  ORDERED_INDEX_CHECK(page->used_count == 0);
  if (page->prev_free != nullptr) {
    page->prev_free->next_free = page->next_free;
  } else {
    free_pages_ = page->next_free;
  }
  if (page->next_free != nullptr) page->next_free->prev_free = page->prev_free;
  if (page->prev_all != nullptr) {
    page->prev_all->next_all = page->next_all;
  } else {
    all_pages_ = page->next_all;
  }
  if (page->next_all != nullptr) page->next_all->prev_all = page->prev_all;
  --page_count_;
  --empty_page_count_;
  free_slot_count_ -= kNodesPerPage;
  memory_->free_page(area_, page);
}

void OrderedIndex::release_empty_pages(size_t keep_pages) {
  Page* page = free_pages_;
  while (page != nullptr && empty_page_count_ > keep_pages) {
    Page* next = page->next_free;
    if (page->used_count == 0) release_page(page);
    page = next;
  }
}

// ---------------------------------------------------------------------------------------
// Invariant checking

namespace {

struct SubtreeFacts {
  uint32_t min_prefix, min_ref;
  uint32_t max_prefix, max_ref;
};

}  // namespace

Status OrderedIndex::check_invariants() const {
  auto corrupt = [](const std::string& what) {
    return Status(ErrorCode::kCorruption, "ordered index: " + what);
  };
  if (root_ == nullptr) {
    if (size_ != 0 || height_ != 0 || first_leaf_ != nullptr || last_leaf_ != nullptr) {
      return corrupt("empty root with entries, height or leaves");
    }
  } else if (height_ == 0 || height_ > kMaxHeight || root_->level != height_ - 1) {
    return corrupt("height " + std::to_string(height_) + " disagrees with root level");
  }

  size_t entries = 0;
  size_t nodes = 0;
  const Leaf* previous_leaf = nullptr;
  bool insert_hint_seen = insert_hint_ == nullptr;
  bool erase_hint_seen = erase_hint_ == nullptr;
  // Entries of a leaf/separators of an inner node, strictly increasing; also checks that
  // the prefix order agrees with the comparator (the fragment's prefix contract).
  auto check_sorted = [&](const uint32_t* prefixes, const uint32_t* refs,
                          uint32_t count) -> Status {
    for (uint32_t i = 1; i < count; ++i) {
      if (compare_entries(prefixes[i - 1], refs[i - 1], prefixes[i], refs[i]) >= 0) {
        return corrupt("entries out of order at slot " + std::to_string(i));
      }
      if (comparator_ != nullptr && prefixes[i - 1] != prefixes[i] &&
          comparator_->compare_entries(refs[i - 1], refs[i]) >= 0) {
        return corrupt("prefix order disagrees with key order at slot " + std::to_string(i));
      }
    }
    return Status::OK();
  };

  // Recursive walk; returns the first and last entry of the subtree in `facts`.
  auto walk = [&](auto& self, const Node* node, size_t level, bool is_root,
                  SubtreeFacts* facts) -> Status {
    ++nodes;
    if (node->level != level) return corrupt("node level mismatch");
    if (level == 0) {
      const Leaf* leaf = static_cast<const Leaf*>(node);
      const uint32_t minimum = is_root ? 1 : kLeafMinEntries;
      if (leaf->count < minimum || leaf->count > kLeafCapacity) {
        return corrupt("leaf fill " + std::to_string(leaf->count) + " out of bounds");
      }
      DUO_RETURN_IF_ERROR(check_sorted(leaf->prefixes, leaf->refs, leaf->count));
      if (leaf->prev != previous_leaf) return corrupt("leaf prev link broken");
      if (previous_leaf == nullptr) {
        if (first_leaf_ != leaf) return corrupt("first_leaf_ is not the leftmost leaf");
      } else {
        if (previous_leaf->next != leaf) return corrupt("leaf next link broken");
        const uint32_t last = previous_leaf->count - 1u;
        if (compare_entries(previous_leaf->prefixes[last], previous_leaf->refs[last],
                            leaf->prefixes[0], leaf->refs[0]) >= 0) {
          return corrupt("entries out of order across leaves");
        }
      }
      previous_leaf = leaf;
      entries += leaf->count;
      insert_hint_seen |= leaf == insert_hint_;
      erase_hint_seen |= leaf == erase_hint_;
      *facts = {leaf->prefixes[0], leaf->refs[0], leaf->prefixes[leaf->count - 1u],
                leaf->refs[leaf->count - 1u]};
      return Status::OK();
    }
    const Inner* inner = static_cast<const Inner*>(node);
    const uint32_t minimum = is_root ? 1 : kInnerMinKeys;
    if (inner->count < minimum || inner->count > kInnerMaxKeys) {
      return corrupt("inner fill " + std::to_string(inner->count) + " out of bounds");
    }
    DUO_RETURN_IF_ERROR(check_sorted(inner->prefixes, inner->refs, inner->count));
    for (uint32_t i = 0; i <= inner->count; ++i) {
      SubtreeFacts child{};
      DUO_RETURN_IF_ERROR(self(self, inner->children[i], level - 1, false, &child));
      if (i > 0 && (child.min_prefix != inner->prefixes[i - 1] ||
                    child.min_ref != inner->refs[i - 1])) {
        return corrupt("separator is not the first entry of its right subtree");
      }
      if (i < inner->count && compare_entries(child.max_prefix, child.max_ref,
                                              inner->prefixes[i], inner->refs[i]) >= 0) {
        return corrupt("subtree entry not below its right separator");
      }
      if (i == 0) {
        facts->min_prefix = child.min_prefix;
        facts->min_ref = child.min_ref;
      }
      if (i == inner->count) {
        facts->max_prefix = child.max_prefix;
        facts->max_ref = child.max_ref;
      }
    }
    return Status::OK();
  };

  if (root_ != nullptr) {
    SubtreeFacts facts{};
    DUO_RETURN_IF_ERROR(walk(walk, root_, height_ - 1, true, &facts));
    if (last_leaf_ != previous_leaf || previous_leaf->next != nullptr) {
      return corrupt("last_leaf_ is not the rightmost leaf");
    }
  }
  if (!insert_hint_seen || !erase_hint_seen) return corrupt("hint is not a live leaf");
  if (entries != size_) {
    return corrupt("size " + std::to_string(size_) + " but " + std::to_string(entries) +
                   " entries in leaves");
  }

  // Allocator accounting: every used slot is a reachable node.
  size_t used = 0;
  size_t pages = 0;
  size_t empty = 0;
  for (const Page* page = all_pages_; page != nullptr; page = page->next_all) {
    ++pages;
    if (static_cast<size_t>(std::popcount(page->free_mask)) + page->used_count !=
        kNodesPerPage) {
      return corrupt("page free mask disagrees with its used count");
    }
    used += page->used_count;
    if (page->used_count == 0) ++empty;
  }
  if (pages != page_count_ || empty != empty_page_count_ ||
      pages * kNodesPerPage - used != free_slot_count_) {
    return corrupt("page accounting mismatch");
  }
  if (used != nodes) {
    return corrupt(std::to_string(used) + " node slots in use but " + std::to_string(nodes) +
                   " nodes reachable");
  }
  size_t on_free_list = 0;
  for (const Page* page = free_pages_; page != nullptr; page = page->next_free) {
    if (page->free_mask == 0) return corrupt("full page on the free list");
    ++on_free_list;
  }
  size_t with_free_slots = 0;
  for (const Page* page = all_pages_; page != nullptr; page = page->next_all) {
    if (page->free_mask != 0) ++with_free_slots;
  }
  if (on_free_list != with_free_slots) return corrupt("free page list incomplete");
  return Status::OK();
}

}  // namespace duo::storage
