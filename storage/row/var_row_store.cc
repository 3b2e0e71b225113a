#include "storage/row/var_row_store.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace duo::storage {
namespace {
constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr uint32_t kMagic = 0xBA5E0A6E;
constexpr uint32_t kDirBytes = 4;
constexpr uint32_t kMaxDirEntries = 1u << 12;
}  // namespace

struct VarRowStore::PageHeader {
  uint32_t magic;
  uint32_t page_id;
  uint16_t dir_count;    // directory slots in use or free-but-allocated
  uint16_t data_end;     // first byte after the entry area
  uint16_t free_bytes;   // total free (gap + holes), not counting a new dir slot
  int16_t list_class;    // free-space class list it is on, -1 none
  uint32_t prev;
  uint32_t next;
  uint32_t live;         // entries in use
  uint32_t pad;
};

namespace {
struct Dir {
  uint16_t offset;  // 0 = free slot
  uint16_t size;
};
inline Dir* dir_at(uint8_t* page, uint32_t i) {
  return reinterpret_cast<Dir*>(page + kPageSize - kDirBytes * (i + 1));
}
}  // namespace

VarRowStore::VarRowStore(GlobalMemory* memory) : memory_(memory) {
  std::fill(std::begin(class_head_), std::end(class_head_), kNone);
}

VarRowStore::~VarRowStore() {
  for (uint8_t* page : pages_) {
    if (page) memory_->free_page(MemoryArea::kDataMemory, page);
  }
}

int VarRowStore::class_of_free(uint32_t free_bytes) {
  // Class c holds pages with at least 16 << c free bytes.
  int c = -1;
  for (uint32_t t = 16; c + 1 < kClasses && free_bytes >= t; t <<= 1) ++c;
  return c;
}

void VarRowStore::unlist(PageHeader* h) {
  static_assert(sizeof(PageHeader) == kPageHeaderBytes);
  if (h->list_class < 0) return;
  if (h->prev != kNone) header(h->prev)->next = h->next;
  else class_head_[h->list_class] = h->next;
  if (h->next != kNone) header(h->next)->prev = h->prev;
  h->prev = h->next = kNone;
  h->list_class = -1;
}

void VarRowStore::relist(PageHeader* h) {
  // A page with a full directory cannot take new entries, whatever its free bytes.
  const int c = h->dir_count >= kMaxDirEntries && h->live == h->dir_count
                    ? -1
                    : class_of_free(h->free_bytes > kDirBytes ? h->free_bytes - kDirBytes : 0);
  if (c == h->list_class) return;
  unlist(h);
  if (c < 0) return;
  h->list_class = static_cast<int16_t>(c);
  h->prev = kNone;
  h->next = class_head_[c];
  if (h->next != kNone) header(h->next)->prev = h->page_id;
  class_head_[c] = h->page_id;
}

uint32_t VarRowStore::contiguous_free(const PageHeader* h) const {
  return static_cast<uint32_t>(kPageSize - kDirBytes * h->dir_count) - h->data_end;
}

void VarRowStore::compact(PageHeader* h) {
  // Slide live entries down to close holes, in offset order; refs are unchanged.
  uint8_t* page = pages_[h->page_id];
  std::vector<uint32_t> order;
  order.reserve(h->dir_count);
  for (uint32_t i = 0; i < h->dir_count; ++i) {
    if (dir_at(page, i)->offset != 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return dir_at(page, a)->offset < dir_at(page, b)->offset; });
  uint32_t at = kPageHeaderBytes;
  for (uint32_t i : order) {
    Dir* d = dir_at(page, i);
    if (d->offset != at) std::memmove(page + at, page + d->offset, d->size);
    d->offset = static_cast<uint16_t>(at);
    at += d->size;
  }
  h->data_end = static_cast<uint16_t>(at);
}

Result<VarRef> VarRowStore::allocate(uint32_t size_bytes) {
  if (size_bytes > kMaxEntryBytes) {
    return Status(ErrorCode::kRowTooBig, "variable part of " + std::to_string(size_bytes) +
                                             " bytes exceeds one page");
  }
  const uint32_t need = size_bytes + kDirBytes;
  PageHeader* h = nullptr;
  // Classes above need's own class always fit (their threshold exceeds need); take the
  // smallest such page to keep big holes for big rows. In need's own class, look at a
  // few pages only, so allocation stays O(classes).
  const int c0 = class_of_free(need);
  for (int c = c0 + 1; c < kClasses && !h; ++c) {
    if (class_head_[c] != kNone) h = header(class_head_[c]);
  }
  if (!h && c0 >= 0) {
    int looked = 0;
    for (uint32_t id = class_head_[c0]; id != kNone && looked < 8; id = header(id)->next, ++looked) {
      if (header(id)->free_bytes >= need) {
        h = header(id);
        break;
      }
    }
  }
  if (h == nullptr) {
    uint32_t page_id;
    if (!free_page_ids_.empty()) page_id = free_page_ids_.back();
    else if (pages_.size() < (1u << 19)) page_id = static_cast<uint32_t>(pages_.size());
    else return Status(ErrorCode::kTableFull, "fragment has reached its maximum number of var pages");
    DUO_ASSIGN_OR_RETURN(void* raw, memory_->allocate_page(MemoryArea::kDataMemory));
    if (page_id == pages_.size()) pages_.push_back(nullptr);
    else free_page_ids_.pop_back();
    pages_[page_id] = static_cast<uint8_t*>(raw);
    ++pages_held_;
    h = header(page_id);
    *h = PageHeader{kMagic, page_id, 0, static_cast<uint16_t>(kPageHeaderBytes),
                    static_cast<uint16_t>(kPageSize - kPageHeaderBytes), -1, kNone, kNone, 0, 0};
  }
  uint8_t* page = pages_[h->page_id];
  // Reuse a free directory slot if there is one, else append a new slot.
  uint32_t slot = h->dir_count;
  for (uint32_t i = 0; i < h->dir_count; ++i) {
    if (dir_at(page, i)->offset == 0) {
      slot = i;
      break;
    }
  }
  const uint32_t dir_growth = slot == h->dir_count ? kDirBytes : 0;
  if (contiguous_free(h) < size_bytes + dir_growth) compact(h);
  if (slot == h->dir_count) ++h->dir_count;
  Dir* d = dir_at(page, slot);
  d->offset = h->data_end;
  d->size = static_cast<uint16_t>(size_bytes);
  // A zero-size entry still needs a nonzero offset to read as "in use".
  h->data_end = static_cast<uint16_t>(h->data_end + size_bytes);
  h->free_bytes = static_cast<uint16_t>(h->free_bytes - size_bytes - dir_growth);
  ++h->live;
  ++entries_;
  relist(h);
  return h->page_id << 12 | slot;
}

uint8_t* VarRowStore::data(VarRef ref) const {
  uint8_t* page = pages_[ref >> 12];
  return page + dir_at(page, ref & 0xFFF)->offset;
}

uint32_t VarRowStore::size(VarRef ref) const {
  return dir_at(pages_[ref >> 12], ref & 0xFFF)->size;
}

void VarRowStore::free(VarRef ref) {
  const uint32_t page_id = ref >> 12;
  if (page_id >= pages_.size() || pages_[page_id] == nullptr || header(page_id)->magic != kMagic ||
      (ref & 0xFFF) >= header(page_id)->dir_count || dir_at(pages_[page_id], ref & 0xFFF)->offset == 0) {
    std::fprintf(stderr, "VarRowStore::free: bad var ref %u\n", ref);
    std::abort();
  }
  uint8_t* page = pages_[page_id];
  PageHeader* h = header(page_id);
  Dir* d = dir_at(page, ref & 0xFFF);
  h->free_bytes = static_cast<uint16_t>(h->free_bytes + d->size);
  if (d->offset + d->size == h->data_end) h->data_end = d->offset;  // cheap tail reclaim
  d->offset = 0;
  d->size = 0;
  // Trailing free directory slots are given back.
  while (h->dir_count > 0 && dir_at(page, h->dir_count - 1u)->offset == 0) {
    --h->dir_count;
    h->free_bytes = static_cast<uint16_t>(h->free_bytes + kDirBytes);
  }
  --h->live;
  --entries_;
  if (h->live == 0) {
    unlist(h);
    h->magic = 0;
    memory_->free_page(MemoryArea::kDataMemory, page);
    pages_[page_id] = nullptr;
    free_page_ids_.push_back(page_id);
    --pages_held_;
    return;
  }
  relist(h);
}

void VarRowStore::shrink(VarRef ref, uint32_t new_size_bytes) {
  PageHeader* h = header(ref >> 12);
  Dir* d = dir_at(pages_[ref >> 12], ref & 0xFFF);
  if (new_size_bytes >= d->size) return;
  h->free_bytes = static_cast<uint16_t>(h->free_bytes + d->size - new_size_bytes);
  if (d->offset + d->size == h->data_end) h->data_end = static_cast<uint16_t>(d->offset + new_size_bytes);
  d->size = static_cast<uint16_t>(new_size_bytes);
  relist(h);
}

bool VarRowStore::try_grow(VarRef ref, uint32_t new_size_bytes) {
  PageHeader* h = header(ref >> 12);
  uint8_t* page = pages_[ref >> 12];
  Dir* d = dir_at(page, ref & 0xFFF);
  if (new_size_bytes <= d->size) {
    shrink(ref, new_size_bytes);
    return true;
  }
  const uint32_t extra = new_size_bytes - d->size;
  if (h->free_bytes < extra) return false;
  if (d->offset + d->size == h->data_end && contiguous_free(h) >= extra) {
    h->data_end = static_cast<uint16_t>(h->data_end + extra);
  } else {
    // Move the entry to the end of the entry area (compacting first if needed);
    // contents are preserved.
    std::vector<uint8_t> saved(page + d->offset, page + d->offset + d->size);
    h->free_bytes = static_cast<uint16_t>(h->free_bytes + d->size);
    if (d->offset + d->size == h->data_end) h->data_end = d->offset;
    d->offset = 0;  // excluded from compaction
    const uint16_t old_size = d->size;
    d->size = 0;
    if (contiguous_free(h) < new_size_bytes) compact(h);
    d->offset = h->data_end;
    if (old_size > 0) std::memcpy(page + d->offset, saved.data(), old_size);
    d->size = static_cast<uint16_t>(old_size);
    h->data_end = static_cast<uint16_t>(h->data_end + new_size_bytes);
    h->free_bytes = static_cast<uint16_t>(h->free_bytes - old_size);
  }
  h->free_bytes = static_cast<uint16_t>(h->free_bytes - extra);
  d->size = static_cast<uint16_t>(new_size_bytes);
  relist(h);
  return true;
}

}  // namespace duo::storage
