// HashIndex: the primary-key index of one fragment, linear hashing (Litwin) that grows one
// bucket split at a time, so a growing table never stalls on a rehash.
//
// The index stores (hash, ref) pairs only; it does not know keys. A lookup walks the
// entries whose stored hash matches and asks the caller's predicate to confirm the key
// (one row dereference in the common case). Buckets are cache-line sized and live in
// 32 KiB pages taken from a GlobalMemory area; running out of pages is kTableFull and
// leaves the index unchanged.
//
// Thread-compatible: one owner (the LDM thread owning the fragment); no internal locking.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ndb-kernel/common/status.h"
#include "storage/memory/global_memory.h"

namespace duo::storage {

inline constexpr uint32_t kNoRef = 0xFFFFFFFFu;

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
  // Removes (hash, ref); false if it was not present.
  bool erase(uint32_t hash, uint32_t ref);

  size_t size() const;
  size_t memory_bytes() const;  // bytes of pages held
  // f(hash, ref) for every entry, in no particular order.
  template <typename F>
  void for_each(F&& f) const;

  // (private layout: defined with the implementation)
 private:
};

}  // namespace duo::storage

// Template definitions follow the class (the implementation adds them here).
