// BlockAllocator: variable-size blocks (up to one page) from 32 KiB pages of one
// GlobalMemory area, by power-of-two size classes. Used for uncommitted row images in
// TransactionMemory, which must grow and shrink with the load: a page whose blocks are
// all free goes back to the area at once.
//
// Each page serves one size class and keeps its own free list in a small header, so
// freeing needs only the block address (the page is found by alignment). Blocks larger
// than the biggest class get a page to themselves. Thread-compatible: one owner.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ndb-kernel/common/status.h"
#include "storage/memory/global_memory.h"

namespace duo::storage {

class BlockAllocator {
 public:
  static constexpr size_t kMinBlock = 64;
  static constexpr size_t kMaxClassBlock = 8192;
  static constexpr size_t kPageHeader = 64;
  static constexpr size_t kMaxBlock = kPageSize - kPageHeader;

  BlockAllocator(GlobalMemory* memory, MemoryArea area);
  ~BlockAllocator();
  BlockAllocator(const BlockAllocator&) = delete;
  BlockAllocator& operator=(const BlockAllocator&) = delete;

  // A block of at least `size_bytes` (<= kMaxBlock), 8-byte aligned, or kTableFull.
  Result<void*> allocate(size_t size_bytes);
  void free(void* block);

  size_t memory_bytes() const { return pages_held_ * kPageSize; }

 private:
  struct PageHeader;
  static constexpr int kClasses = 8;  // 64 .. 8192
  static int class_of(size_t size_bytes);
  void unlink(PageHeader* page);

  GlobalMemory* const memory_;
  const MemoryArea area_;
  PageHeader* partial_[kClasses] = {};  // pages of each class with at least one free block
  size_t pages_held_ = 0;
};

}  // namespace duo::storage
