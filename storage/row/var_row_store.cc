#include "storage/row/var_row_store.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace duo::storage {
namespace {
constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr uint32_t kMagic = 0xBA5E0A6E;
constexpr uint32_t kDirBytes = VarPage::kDirBytes;
}  // namespace

// The store's own part of a page; VarPage's layout follows it.
struct VarRowStore::PageHeader {
  uint32_t magic;
  uint32_t page_id;
  int16_t list_class;  // free-space class list it is on, -1 none
  uint16_t pad;
  uint32_t prev;
  uint32_t next;
  uint32_t pad2;
};

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
  static_assert(sizeof(PageHeader) == kStoreHeaderBytes);
  if (h->list_class < 0) return;
  if (h->prev != kNone) header(h->prev)->next = h->next;
  else class_head_[h->list_class] = h->next;
  if (h->next != kNone) header(h->next)->prev = h->prev;
  h->prev = h->next = kNone;
  h->list_class = -1;
}

void VarRowStore::relist(PageHeader* h) {
  // A page with a full directory cannot take new entries, whatever its free bytes.
  const VarPage page = layout(h->page_id);
  const uint32_t free_bytes = page.free_bytes();
  const int c = page.directory_full() ? -1 : class_of_free(free_bytes > kDirBytes ? free_bytes - kDirBytes : 0);
  if (c == h->list_class) return;
  unlist(h);
  if (c < 0) return;
  h->list_class = static_cast<int16_t>(c);
  h->prev = kNone;
  h->next = class_head_[c];
  if (h->next != kNone) header(h->next)->prev = h->page_id;
  class_head_[c] = h->page_id;
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
      if (layout(id).free_bytes() >= need) {
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
    *h = PageHeader{kMagic, page_id, -1, 0, kNone, kNone, 0};
    layout(page_id).format();
  }
  const uint32_t slot = layout(h->page_id).allocate(size_bytes);
  ++entries_;
  relist(h);
  return h->page_id << 12 | slot;
}

uint8_t* VarRowStore::data(VarRef ref) const { return layout(ref >> 12).data(ref & 0xFFF); }

uint32_t VarRowStore::size(VarRef ref) const { return layout(ref >> 12).size(ref & 0xFFF); }

void VarRowStore::free(VarRef ref) {
  const uint32_t page_id = ref >> 12;
  if (page_id >= pages_.size() || pages_[page_id] == nullptr || header(page_id)->magic != kMagic ||
      !layout(page_id).is_live(ref & 0xFFF)) {
    std::fprintf(stderr, "VarRowStore::free: bad var ref %u\n", ref);
    std::abort();
  }
  PageHeader* h = header(page_id);
  VarPage page = layout(page_id);
  page.free(ref & 0xFFF);
  --entries_;
  if (page.live() == 0) {
    unlist(h);
    h->magic = 0;
    memory_->free_page(MemoryArea::kDataMemory, pages_[page_id]);
    pages_[page_id] = nullptr;
    free_page_ids_.push_back(page_id);
    --pages_held_;
    return;
  }
  relist(h);
}

void VarRowStore::shrink(VarRef ref, uint32_t new_size_bytes) {
  layout(ref >> 12).shrink(ref & 0xFFF, new_size_bytes);
  relist(header(ref >> 12));
}

bool VarRowStore::try_grow(VarRef ref, uint32_t new_size_bytes) {
  if (!layout(ref >> 12).try_grow(ref & 0xFFF, new_size_bytes)) return false;
  relist(header(ref >> 12));
  return true;
}

}  // namespace duo::storage
