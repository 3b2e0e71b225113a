// MemoryPageAccess: DiskPageAccess over pages held in process memory — the datafiles of
// a test or of the simulator, every page resident. A page reads as zeros until written,
// like a file created zero-filled at its INITIAL_SIZE. It remembers which pages were
// marked dirty since the last take_dirty(), so a test can play the page cache's fuzzy
// write-back. Thread-compatible.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "storage/disk/disk_page_access.h"

namespace duo::storage::disk {

class MemoryPageAccess final : public DiskPageAccess {
 public:
  using PageBytes = std::array<uint8_t, kPageSize>;

  // Declares file `file` of `pages` pages (all zero).
  void add_file(uint32_t file, uint32_t pages);

  uint8_t* page(DiskPageId id) override;
  void mark_dirty(DiskPageId id) override { dirty_.insert(id); }

  // Pages marked dirty since the last call (and forgets them).
  std::set<DiskPageId> take_dirty();
  // A copy of a page's bytes / replaces a page's bytes (a "disk" image in crash tests).
  PageBytes copy(DiskPageId id);
  void store(DiskPageId id, const PageBytes& bytes);
  // Pages ever touched (others are zero).
  std::vector<DiskPageId> touched_pages() const;

 private:
  std::map<uint32_t, uint32_t> file_pages_;
  std::map<DiskPageId, std::unique_ptr<PageBytes>> pages_;
  std::set<DiskPageId> dirty_;
};

}  // namespace duo::storage::disk
