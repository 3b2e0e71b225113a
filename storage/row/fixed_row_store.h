// FixedRowStore: the fixed-size parts of one fragment's rows, in fixed-size slots of
// 32 KiB DataMemory pages.
//
// A row is named by a 32-bit RowRef = page_id << 12 | slot. Rows never move, so a
// RowRef stays valid until the row is freed (indexes store RowRefs). Page ids are
// below 2^19 so that RowRefs stay below 2^31 (ordered indexes use the top bit for
// uncommitted images): at most 16 GiB of fixed parts per fragment. Pages with a free
// slot are kept on a list; a page whose last row is freed goes back to DataMemory.
//
// Page layout: [FixedPageHeader, 64 bytes][slot 0][slot 1]...; a free slot holds 0 in
// its flags word and the next free slot index in its second word.
// Thread-compatible: one owner (the fragment's LDM thread).
#pragma once

#include <cstdint>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/memory/global_memory.h"

namespace duo::storage {

using RowRef = uint32_t;
inline constexpr uint32_t kSlotBits = 12;
inline constexpr uint32_t kMaxPageId = (1u << 19) - 1;

class FixedRowStore {
 public:
  static constexpr uint32_t kPageHeaderBytes = 64;

  FixedRowStore(GlobalMemory* memory, uint32_t slot_size_bytes);
  ~FixedRowStore();
  FixedRowStore(const FixedRowStore&) = delete;
  FixedRowStore& operator=(const FixedRowStore&) = delete;

  // A zeroed slot, or kTableFull (DataMemory exhausted).
  Result<RowRef> allocate();
  void free(RowRef ref);

  uint8_t* row(RowRef ref) const {
    return pages_[ref >> kSlotBits] + kPageHeaderBytes + (ref & ((1u << kSlotBits) - 1)) * slot_size_;
  }
  // Iteration in RowRef order: the first allocated-or-not slot position at or after
  // `ref` on an existing page, or kEnd. Callers check the slot's flags word.
  static constexpr RowRef kEnd = 0xFFFFFFFFu;
  RowRef next_position(RowRef ref) const;

  uint32_t slot_size() const { return slot_size_; }
  uint32_t slots_per_page() const { return slots_per_page_; }
  size_t rows() const { return rows_; }
  size_t pages() const { return pages_held_; }

 private:
  struct PageHeader;
  PageHeader* header(uint32_t page_id) const {
    return reinterpret_cast<PageHeader*>(pages_[page_id]);
  }
  void unlink_free(PageHeader* h);

  GlobalMemory* const memory_;
  const uint32_t slot_size_;
  const uint32_t slots_per_page_;
  std::vector<uint8_t*> pages_;      // by page id; null for released ids
  std::vector<uint32_t> free_page_ids_;
  uint32_t free_list_head_;          // page id with a free slot, or kNone
  size_t rows_ = 0;
  size_t pages_held_ = 0;
};

}  // namespace duo::storage
