// VarRowStore: the variable-size parts of one fragment's rows, in 32 KiB DataMemory
// pages with a slot directory (VarPage, the same layout disk row pages use).
//
// An entry is named by a 32-bit VarRef = page_id << 12 | directory index; the
// directory indirection lets a page compact its free space without changing refs.
// Pages are kept on free-space class lists so an allocation finds a page with room in
// O(classes). Growing an entry beyond its page's free space is the caller's move: it
// allocates elsewhere and frees the old entry (the row's var_ref is updated).
//
// Page layout: [store header 24 bytes: magic, page id, free-space list links][VarPage
// layout (var_page.h) from byte 24: 8-byte header, entries growing up, directory of
// (u16 offset, u16 size) growing down]. Thread-compatible: one owner.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/memory/global_memory.h"
#include "storage/row/var_page.h"

namespace duo::storage {

using VarRef = uint32_t;

class VarRowStore {
 public:
  static constexpr uint32_t kStoreHeaderBytes = 24;  // VarPage's layout starts here
  static constexpr uint32_t kPageHeaderBytes = kStoreHeaderBytes + VarPage::kHeaderBytes;
  static constexpr uint32_t kMaxEntryBytes = VarPage::max_entry_bytes(kStoreHeaderBytes);

  explicit VarRowStore(GlobalMemory* memory);
  ~VarRowStore();
  VarRowStore(const VarRowStore&) = delete;
  VarRowStore& operator=(const VarRowStore&) = delete;

  // An entry of `size_bytes` (<= kMaxEntryBytes; 0 allowed), contents undefined.
  Result<VarRef> allocate(uint32_t size_bytes);
  void free(VarRef ref);
  // Shrinks an entry in place (always succeeds).
  void shrink(VarRef ref, uint32_t new_size_bytes);
  // Grows in place when the page has room (may compact the page); false otherwise.
  bool try_grow(VarRef ref, uint32_t new_size_bytes);

  uint8_t* data(VarRef ref) const;
  uint32_t size(VarRef ref) const;
  size_t pages() const { return pages_held_; }
  size_t entries() const { return entries_; }

 private:
  struct PageHeader;
  static constexpr int kClasses = 12;
  PageHeader* header(uint32_t page_id) const {
    return reinterpret_cast<PageHeader*>(pages_[page_id]);
  }
  VarPage layout(uint32_t page_id) const { return VarPage(pages_[page_id], kStoreHeaderBytes); }
  static int class_of_free(uint32_t free_bytes);
  void relist(PageHeader* h);
  void unlist(PageHeader* h);

  GlobalMemory* const memory_;
  std::vector<uint8_t*> pages_;
  std::vector<uint32_t> free_page_ids_;
  uint32_t class_head_[kClasses];
  size_t pages_held_ = 0;
  size_t entries_ = 0;
};

}  // namespace duo::storage
