#include "storage/memory/block_allocator.h"

#include <cstdio>
#include <cstdlib>

namespace duo::storage {

struct BlockAllocator::PageHeader {
  uint32_t magic;
  int32_t size_class;   // -1: a whole-page block
  uint32_t block_size;
  uint32_t capacity;
  uint32_t used;
  uint32_t first_free;  // offset of the first free block, 0 = none
  uint32_t next_unused; // offset of the first never-used block (bump pointer)
  uint32_t pad;
  PageHeader* prev;
  PageHeader* next;
};

namespace {
constexpr uint32_t kMagic = 0xB10CA110;
}

BlockAllocator::BlockAllocator(GlobalMemory* memory, MemoryArea area)
    : memory_(memory), area_(area) {}

BlockAllocator::~BlockAllocator() {
  // Owners free their blocks first; a page still held here means a leak, which we still
  // return to the area so the budget is not lost.
  for (PageHeader*& head : partial_) {
    while (head) {
      PageHeader* p = head;
      head = p->next;
      memory_->free_page(area_, p);
    }
  }
}

int BlockAllocator::class_of(size_t size_bytes) {
  static_assert(sizeof(PageHeader) <= kPageHeader);
  int c = 0;
  size_t block = kMinBlock;
  while (block < size_bytes) {
    block <<= 1;
    ++c;
  }
  return c;
}

void BlockAllocator::unlink(PageHeader* page) {
  if (page->prev) page->prev->next = page->next;
  else partial_[page->size_class] = page->next;
  if (page->next) page->next->prev = page->prev;
  page->prev = page->next = nullptr;
}

Result<void*> BlockAllocator::allocate(size_t size_bytes) {
  if (size_bytes == 0 || size_bytes > kMaxBlock) {
    return Status(ErrorCode::kInvalidArgument, "block size out of range");
  }
  if (size_bytes > kMaxClassBlock) {
    DUO_ASSIGN_OR_RETURN(void* raw, memory_->allocate_page(area_));
    auto* page = new (raw) PageHeader{kMagic, -1, static_cast<uint32_t>(kMaxBlock), 1, 1, 0, 0, 0,
                                      nullptr, nullptr};
    ++pages_held_;
    return static_cast<void*>(reinterpret_cast<char*>(page) + kPageHeader);
  }
  const int c = class_of(size_bytes);
  PageHeader* page = partial_[c];
  if (page == nullptr) {
    DUO_ASSIGN_OR_RETURN(void* raw, memory_->allocate_page(area_));
    const uint32_t block = static_cast<uint32_t>(kMinBlock << c);
    page = new (raw) PageHeader{kMagic, c, block,
                                static_cast<uint32_t>((kPageSize - kPageHeader) / block), 0, 0,
                                static_cast<uint32_t>(kPageHeader), 0, nullptr, nullptr};
    partial_[c] = page;
    ++pages_held_;
  }
  char* base = reinterpret_cast<char*>(page);
  void* out;
  if (page->first_free != 0) {
    out = base + page->first_free;
    page->first_free = *static_cast<uint32_t*>(out);
  } else {
    out = base + page->next_unused;
    page->next_unused += page->block_size;
  }
  if (++page->used == page->capacity) unlink(page);
  return out;
}

void BlockAllocator::free(void* block) {
  auto* page = static_cast<PageHeader*>(GlobalMemory::page_of(block));
  if (page->magic != kMagic || page->used == 0) {
    std::fprintf(stderr, "BlockAllocator::free: %p is not a live block\n", block);
    std::abort();  // corruption must not spread
  }
  if (page->size_class < 0) {
    --pages_held_;
    page->magic = 0;
    memory_->free_page(area_, page);
    return;
  }
  const bool was_full = page->used == page->capacity;
  --page->used;
  if (page->used == 0) {
    // Whole page free: give it back so TransactionMemory shrinks after a load peak.
    if (!was_full) unlink(page);
    --pages_held_;
    page->magic = 0;
    memory_->free_page(area_, page);
    return;
  }
  *static_cast<uint32_t*>(block) = page->first_free;
  page->first_free = static_cast<uint32_t>(static_cast<char*>(block) - reinterpret_cast<char*>(page));
  if (was_full) {
    page->next = partial_[page->size_class];
    if (page->next) page->next->prev = page;
    partial_[page->size_class] = page;
  }
}

}  // namespace duo::storage
