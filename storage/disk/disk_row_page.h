// A disk row page: the common 64-byte disk page header, then the same slot-directory
// layout as in-memory var pages (storage/row/var_page.h), from byte 64. A disk row part
// is one entry, named by (file, page, slot) — a DiskRef, which fits the 8-byte disk
// reference of a row's fixed part.
//
// Free-space classes (4 bits per page, kept in extent headers): 0 = the page holds no
// entry; k = 1..14 = at least (32768 >> k) bytes are usable for a new entry (its bytes
// plus a directory slot); 15 = less than that. The class of a page is a function of its
// committed content only; uncommitted reservations live in memory (DiskRowSpace).
// Pure functions; thread-compatible.
#pragma once

#include <cstdint>

#include "storage/disk/disk_page_header.h"
#include "storage/row/var_page.h"

namespace duo::storage::disk {

inline constexpr uint32_t kRowPageLayoutOffset = kDiskPageHeaderBytes;
// Row parts are at least 8 bytes (the disk part's own header makes them so), which
// keeps a page's directory below its 4096-slot limit.
inline constexpr uint32_t kMinDiskPartBytes = 8;
inline constexpr uint32_t kMaxDiskPartBytes = VarPage::max_entry_bytes(kRowPageLayoutOffset);
// Bytes of an empty page usable for new entries.
inline constexpr uint32_t kEmptyPageUsableBytes = kMaxDiskPartBytes;
inline constexpr uint8_t kEmptyPageClass = 0;
inline constexpr uint8_t kFullPageClass = 15;

inline VarPage row_page(uint8_t* page) { return VarPage(page, kRowPageLayoutOffset); }

// A DiskRef: where a disk row part lives. Encodes into the row's u64 disk reference as
// file << 48 | page << 16 | slot; all ones is "no disk part".
struct DiskRef {
  uint16_t file = 0xFFFF;
  uint16_t slot = 0xFFFF;
  uint32_t page = 0xFFFFFFFFu;
  bool valid() const { return file != 0xFFFF; }
  DiskPageId page_id() const { return {file, page}; }
  uint64_t encode() const { return uint64_t{file} << 48 | uint64_t{page} << 16 | slot; }
  static DiskRef decode(uint64_t v) {
    return {static_cast<uint16_t>(v >> 48), static_cast<uint16_t>(v & 0xFFFF), static_cast<uint32_t>(v >> 16)};
  }
  friend bool operator==(const DiskRef&, const DiskRef&) = default;
  friend auto operator<=>(const DiskRef&, const DiskRef&) = default;
};
inline constexpr DiskRef kNoDiskRef{};

// Bytes usable for one new entry on a page whose layout reports these numbers.
inline uint32_t usable_bytes(const VarPage& page) {
  if (page.directory_full() || page.free_bytes() < VarPage::kDirBytes) return 0;
  return page.free_bytes() - VarPage::kDirBytes;
}

// Class of a page with `usable` bytes free for a new entry and `live` entries.
inline uint8_t free_space_class(uint32_t usable, uint32_t live) {
  if (live == 0) return kEmptyPageClass;
  for (uint8_t k = 1; k < kFullPageClass; ++k) {
    if (usable >= (32768u >> k)) return k;
  }
  return kFullPageClass;
}

// The fewest usable bytes a page of class `cls` is known to have.
inline uint32_t class_min_usable(uint8_t cls) {
  if (cls == kEmptyPageClass) return kEmptyPageUsableBytes;
  if (cls >= kFullPageClass) return 0;
  return 32768u >> cls;
}

// Class of a page from its bytes (a page never formatted reads as empty).
inline uint8_t page_free_class(uint8_t* page) {
  if (page_kind(page) != DiskPageKind::kRowPage) return kEmptyPageClass;
  const VarPage layout = row_page(page);
  return free_space_class(usable_bytes(layout), layout.live());
}

}  // namespace duo::storage::disk
