// OrderedIndex: an in-memory B+tree over the entries of one ordered index of a fragment.
//
// Entries are 32-bit refs (the fragment decides what a ref names: a row, or an
// uncommitted row image) kept in (key, ref) order. Beside each ref the tree stores a
// 32-bit order-preserving prefix of the key, so most comparisons never touch the row;
// only prefix ties call back into the KeyComparator. Nodes are allocated from 32 KiB
// pages of a GlobalMemory area; exhaustion is kTableFull with the tree unchanged.
//
// Cursors walk in both directions. Any insert or erase invalidates cursors; scans that
// span modifications remember their last entry and seek again (see modification_count()).
//
// Thread-compatible: one owner (the LDM thread owning the fragment).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ndb-kernel/common/status.h"
#include "storage/memory/global_memory.h"

namespace duo::storage {

// Supplied by the fragment: full key comparisons that the prefix cannot decide.
class KeyComparator {
 public:
  virtual ~KeyComparator() = default;
  // Sign of key(a) - key(b), ignoring refs.
  virtual int compare_entries(uint32_t ref_a, uint32_t ref_b) const = 0;
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

  // Inserts (prefix, ref) at its (key, ref) position. The same ref twice is a bug.
  Status insert(uint32_t prefix, uint32_t ref);
  // Removes the entry for ref, whose key (and prefix) must be unchanged since insert.
  // Returns false if absent.
  bool erase(uint32_t prefix, uint32_t ref);

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
  // First entry strictly after (key(probe), ref) in (key, ref) order, whether or not such an
  // entry is still present. Resumes a scan after modifications: the scan keeps a copy of
  // the last key it returned (as a full-key probe) and its ref.
  Cursor seek_after(const SearchProbe& probe, uint32_t ref) const;
  // Last entry strictly before (key(probe), ref) in (key, ref) order.
  Cursor seek_before(const SearchProbe& probe, uint32_t ref) const;

  size_t size() const;
  size_t memory_bytes() const;
  uint64_t modification_count() const;
  // Checks the B+tree invariants (ordering, fill, parent links); for tests.
  Status check_invariants() const;

 private:
  // (private layout: defined with the implementation)
};

}  // namespace duo::storage
