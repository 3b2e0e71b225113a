#include "storage/row/var_page.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace duo::storage {

struct VarPage::Header {
  uint16_t dir_count;   // directory slots in use or free-but-allocated
  uint16_t data_end;    // first byte after the entry area
  uint16_t free_bytes;  // gap + holes, not counting a new directory slot
  uint16_t live;        // entries in use
};

struct VarPage::Dir {
  uint16_t offset;  // 0 = free slot
  uint16_t size;
};

VarPage::Header* VarPage::header() const { return reinterpret_cast<Header*>(page_ + header_offset_); }

VarPage::Dir* VarPage::dir(uint32_t slot) const {
  return reinterpret_cast<Dir*>(page_ + kPageSize - kDirBytes * (slot + 1));
}

void VarPage::format() {
  static_assert(sizeof(Header) == kHeaderBytes);
  *header() = Header{0, static_cast<uint16_t>(data_start()),
                     static_cast<uint16_t>(empty_free_bytes(header_offset_)), 0};
}

uint32_t VarPage::dir_count() const { return header()->dir_count; }
uint32_t VarPage::free_bytes() const { return header()->free_bytes; }
uint32_t VarPage::live() const { return header()->live; }

bool VarPage::is_live(uint32_t slot) const { return slot < dir_count() && dir(slot)->offset != 0; }

uint8_t* VarPage::data(uint32_t slot) const { return page_ + dir(slot)->offset; }
uint32_t VarPage::size(uint32_t slot) const { return dir(slot)->size; }

uint32_t VarPage::contiguous_free() const {
  return static_cast<uint32_t>(kPageSize - kDirBytes * header()->dir_count) - header()->data_end;
}

void VarPage::compact() {
  // Slide live entries down to close holes, in offset order; slots are unchanged.
  Header* h = header();
  std::vector<uint32_t> order;
  order.reserve(h->dir_count);
  for (uint32_t i = 0; i < h->dir_count; ++i) {
    if (dir(i)->offset != 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return dir(a)->offset < dir(b)->offset; });
  uint32_t at = data_start();
  for (uint32_t i : order) {
    Dir* d = dir(i);
    if (d->offset != at) std::memmove(page_ + at, page_ + d->offset, d->size);
    d->offset = static_cast<uint16_t>(at);
    at += d->size;
  }
  h->data_end = static_cast<uint16_t>(at);
}

uint32_t VarPage::allocate(uint32_t size_bytes) {
  Header* h = header();
  // Reuse a free directory slot if there is one, else append a new slot.
  uint32_t slot = h->dir_count;
  for (uint32_t i = 0; i < h->dir_count; ++i) {
    if (dir(i)->offset == 0) {
      slot = i;
      break;
    }
  }
  allocate_at(slot, size_bytes);
  return slot;
}

void VarPage::allocate_at(uint32_t slot, uint32_t size_bytes) {
  Header* h = header();
  const uint32_t dir_growth = slot >= h->dir_count ? kDirBytes * (slot + 1 - h->dir_count) : 0;
  if (contiguous_free() < size_bytes + dir_growth) compact();
  for (uint32_t i = h->dir_count; i <= slot && dir_growth > 0; ++i) *dir(i) = Dir{0, 0};
  if (dir_growth > 0) h->dir_count = static_cast<uint16_t>(slot + 1);
  Dir* d = dir(slot);
  // A zero-size entry still has a nonzero offset, so it reads as "in use".
  d->offset = h->data_end;
  d->size = static_cast<uint16_t>(size_bytes);
  h->data_end = static_cast<uint16_t>(h->data_end + size_bytes);
  h->free_bytes = static_cast<uint16_t>(h->free_bytes - size_bytes - dir_growth);
  ++h->live;
}

void VarPage::free(uint32_t slot) {
  Header* h = header();
  Dir* d = dir(slot);
  h->free_bytes = static_cast<uint16_t>(h->free_bytes + d->size);
  if (d->offset + d->size == h->data_end) h->data_end = d->offset;  // cheap tail reclaim
  d->offset = 0;
  d->size = 0;
  // Trailing free directory slots are given back.
  while (h->dir_count > 0 && dir(h->dir_count - 1u)->offset == 0) {
    --h->dir_count;
    h->free_bytes = static_cast<uint16_t>(h->free_bytes + kDirBytes);
  }
  --h->live;
  if (h->live == 0) h->data_end = static_cast<uint16_t>(data_start());  // empty: no holes
}

void VarPage::shrink(uint32_t slot, uint32_t new_size_bytes) {
  Header* h = header();
  Dir* d = dir(slot);
  if (new_size_bytes >= d->size) return;
  h->free_bytes = static_cast<uint16_t>(h->free_bytes + d->size - new_size_bytes);
  if (d->offset + d->size == h->data_end) h->data_end = static_cast<uint16_t>(d->offset + new_size_bytes);
  d->size = static_cast<uint16_t>(new_size_bytes);
}

bool VarPage::try_grow(uint32_t slot, uint32_t new_size_bytes) {
  Header* h = header();
  Dir* d = dir(slot);
  if (new_size_bytes <= d->size) {
    shrink(slot, new_size_bytes);
    return true;
  }
  const uint32_t extra = new_size_bytes - d->size;
  if (h->free_bytes < extra) return false;
  if (d->offset + d->size == h->data_end && contiguous_free() >= extra) {
    h->data_end = static_cast<uint16_t>(h->data_end + extra);
  } else {
    // Move the entry to the end of the entry area (compacting first if needed);
    // contents are preserved.
    std::vector<uint8_t> saved(page_ + d->offset, page_ + d->offset + d->size);
    h->free_bytes = static_cast<uint16_t>(h->free_bytes + d->size);
    if (d->offset + d->size == h->data_end) h->data_end = d->offset;
    d->offset = 0;  // excluded from compaction
    const uint16_t old_size = d->size;
    d->size = 0;
    if (contiguous_free() < new_size_bytes) compact();
    d->offset = h->data_end;
    if (old_size > 0) std::memcpy(page_ + d->offset, saved.data(), old_size);
    d->size = old_size;
    h->data_end = static_cast<uint16_t>(h->data_end + new_size_bytes);
    h->free_bytes = static_cast<uint16_t>(h->free_bytes - old_size);
  }
  h->free_bytes = static_cast<uint16_t>(h->free_bytes - extra);
  d->size = static_cast<uint16_t>(new_size_bytes);
  return true;
}

}  // namespace duo::storage
