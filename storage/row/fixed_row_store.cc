#include "storage/row/fixed_row_store.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace duo::storage {
namespace {
constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr uint32_t kMagic = 0xF1ED0A6E;
}  // namespace

struct FixedRowStore::PageHeader {
  uint32_t magic;
  uint32_t page_id;
  uint32_t used;
  uint32_t first_free;   // slot index, kNone when none
  uint32_t next_unused;  // slots below this have been handed out at least once
  uint32_t prev_free;    // page ids on the "has a free slot" list, kNone-terminated
  uint32_t next_free;
  uint32_t on_free_list;
};

FixedRowStore::FixedRowStore(GlobalMemory* memory, uint32_t slot_size_bytes)
    : memory_(memory),
      slot_size_(slot_size_bytes),
      slots_per_page_(static_cast<uint32_t>((kPageSize - kPageHeaderBytes) / slot_size_bytes)),
      free_list_head_(kNone) {
  if (slot_size_ < 8 || slots_per_page_ == 0 || slots_per_page_ > (1u << kSlotBits)) {
    std::fprintf(stderr, "FixedRowStore: bad slot size %u\n", slot_size_);
    std::abort();
  }
}

FixedRowStore::~FixedRowStore() {
  for (uint8_t* page : pages_) {
    if (page) memory_->free_page(MemoryArea::kDataMemory, page);
  }
}

void FixedRowStore::unlink_free(PageHeader* h) {
  static_assert(sizeof(PageHeader) <= kPageHeaderBytes);
  if (h->prev_free != kNone) header(h->prev_free)->next_free = h->next_free;
  else free_list_head_ = h->next_free;
  if (h->next_free != kNone) header(h->next_free)->prev_free = h->prev_free;
  h->prev_free = h->next_free = kNone;
  h->on_free_list = 0;
}

Result<RowRef> FixedRowStore::allocate() {
  if (free_list_head_ == kNone) {
    uint32_t page_id;
    if (!free_page_ids_.empty()) {
      page_id = free_page_ids_.back();
    } else if (pages_.size() <= kMaxPageId) {
      page_id = static_cast<uint32_t>(pages_.size());
    } else {
      return Status(ErrorCode::kTableFull, "fragment has reached its maximum number of pages");
    }
    DUO_ASSIGN_OR_RETURN(void* raw, memory_->allocate_page(MemoryArea::kDataMemory));
    if (page_id == pages_.size()) pages_.push_back(nullptr);
    else free_page_ids_.pop_back();
    pages_[page_id] = static_cast<uint8_t*>(raw);
    ++pages_held_;
    // Slot contents are zeroed on allocation; only the header needs setting here, but
    // zero the slot area's flags lazily through next_unused.
    *header(page_id) = PageHeader{kMagic, page_id, 0, kNone, 0, kNone, kNone, 1};
    free_list_head_ = page_id;
  }
  PageHeader* h = header(free_list_head_);
  uint32_t slot;
  if (h->first_free != kNone) {
    slot = h->first_free;
    uint32_t next;
    std::memcpy(&next, pages_[h->page_id] + kPageHeaderBytes + slot * slot_size_ + 4, 4);
    h->first_free = next;
  } else {
    slot = h->next_unused++;
  }
  ++h->used;
  const RowRef ref = h->page_id << kSlotBits | slot;
  if (h->used == slots_per_page_) unlink_free(h);
  std::memset(row(ref), 0, slot_size_);
  ++rows_;
  return ref;
}

void FixedRowStore::free(RowRef ref) {
  const uint32_t page_id = ref >> kSlotBits;
  const uint32_t slot = ref & ((1u << kSlotBits) - 1);
  if (page_id >= pages_.size() || pages_[page_id] == nullptr || header(page_id)->magic != kMagic ||
      slot >= header(page_id)->next_unused) {
    std::fprintf(stderr, "FixedRowStore::free: bad row ref %u\n", ref);
    std::abort();
  }
  PageHeader* h = header(page_id);
  uint8_t* r = row(ref);
  std::memset(r, 0, 4);  // flags = 0 marks the slot free for scans
  std::memcpy(r + 4, &h->first_free, 4);
  h->first_free = slot;
  --h->used;
  --rows_;
  if (h->used == 0) {
    // Whole page empty: return it so other tables (or areas) can use the memory.
    if (h->on_free_list) unlink_free(h);
    h->magic = 0;
    memory_->free_page(MemoryArea::kDataMemory, pages_[page_id]);
    pages_[page_id] = nullptr;
    free_page_ids_.push_back(page_id);
    --pages_held_;
    return;
  }
  if (!h->on_free_list) {
    h->on_free_list = 1;
    h->prev_free = kNone;
    h->next_free = free_list_head_;
    if (free_list_head_ != kNone) header(free_list_head_)->prev_free = page_id;
    free_list_head_ = page_id;
  }
}

RowRef FixedRowStore::next_position(RowRef ref) const {
  uint32_t page_id = ref >> kSlotBits;
  uint32_t slot = ref & ((1u << kSlotBits) - 1);
  while (page_id < pages_.size()) {
    if (pages_[page_id] != nullptr && slot < header(page_id)->next_unused) {
      return page_id << kSlotBits | slot;
    }
    ++page_id;
    slot = 0;
  }
  return kEnd;
}

}  // namespace duo::storage
