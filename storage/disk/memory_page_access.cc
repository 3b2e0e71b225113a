#include "storage/disk/memory_page_access.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace duo::storage::disk {

void MemoryPageAccess::add_file(uint32_t file, uint32_t pages) { file_pages_[file] = pages; }

uint8_t* MemoryPageAccess::page(DiskPageId id) {
  auto f = file_pages_.find(id.file_no);
  if (f == file_pages_.end() || id.page_no >= f->second) {
    std::fprintf(stderr, "MemoryPageAccess: no page %u of file %u\n", id.page_no, id.file_no);
    std::abort();  // a caller named a page outside every file: a bug
  }
  std::unique_ptr<PageBytes>& slot = pages_[id];
  if (!slot) slot = std::make_unique<PageBytes>(PageBytes{});
  return slot->data();
}

std::set<DiskPageId> MemoryPageAccess::take_dirty() {
  std::set<DiskPageId> out;
  out.swap(dirty_);
  return out;
}

MemoryPageAccess::PageBytes MemoryPageAccess::copy(DiskPageId id) {
  PageBytes out;
  const uint8_t* p = page(id);
  std::copy(p, p + kPageSize, out.begin());
  return out;
}

void MemoryPageAccess::store(DiskPageId id, const PageBytes& bytes) {
  uint8_t* p = page(id);
  std::copy(bytes.begin(), bytes.end(), p);
}

std::vector<DiskPageId> MemoryPageAccess::touched_pages() const {
  std::vector<DiskPageId> out;
  for (const auto& [id, bytes] : pages_) out.push_back(id);
  return out;
}

}  // namespace duo::storage::disk
