// The common header of every disk page (tablespace data pages, and any other page that
// goes through the page cache): the first kPageHeaderBytes of each 32 KiB page. The
// page cache owns it — it sets the checksum before a page is written and verifies it
// (and the page's own name) after it is read; the disk page layout of storage/disk
// starts at kPageHeaderBytes. Byte layout: docs/formats/disk-page.md.
//
//   offset  size  field
//        0     4  crc32c of bytes 4 .. kPageSize-1 (plain CRC: it does not cover itself)
//        4     4  page kind (low 16 bits) and flags (high 16 bits), owned by storage/disk
//        8     8  LSN of the newest undo record that changed the page (write-ahead rule)
//       16     4  file number
//       20     4  page number within the file
//       24    40  reserved, zero
//
// All fields are little-endian. A page whose 32 KiB are all zero is an unformatted page
// (allocated in the file, never written): it verifies as valid with kind 0.
//
// Thread-safety: pure functions over caller-owned memory.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "ndb-kernel/common/status.h"
#include "storage/memory/global_memory.h"

namespace duo::storage {

inline constexpr size_t kPageHeaderBytes = 64;
inline constexpr size_t kPageHeaderCrcOffset = 0;
inline constexpr size_t kPageHeaderKindOffset = 4;
inline constexpr size_t kPageHeaderLsnOffset = 8;
inline constexpr size_t kPageHeaderFileOffset = 16;
inline constexpr size_t kPageHeaderPageOffset = 20;
inline constexpr size_t kPageHeaderReservedOffset = 24;
// The checksummed range: everything after the CRC word.
inline constexpr size_t kPageChecksumFrom = 4;

// The name of a disk page: (file number, page number within the file). File numbers are
// given by the owner of the files (the tablespace's data file ids). The one page name of
// the page cache and of disk row storage (storage/disk calls it DiskPageId).
struct PageId {
  uint32_t file_no = 0;
  uint32_t page_no = 0;

  uint64_t key() const { return (uint64_t{file_no} << 32) | page_no; }
  static PageId of_key(uint64_t key) {
    return PageId{static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key)};
  }
  // Byte offset of the page in its file.
  uint64_t file_offset() const { return uint64_t{page_no} * kPageSize; }
  friend bool operator==(const PageId&, const PageId&) = default;
  friend auto operator<=>(const PageId&, const PageId&) = default;
};

// Header accessors on a page of kPageSize bytes.
uint32_t page_stored_crc(const uint8_t* page);
uint32_t page_kind(const uint8_t* page);
void set_page_kind(uint8_t* page, uint32_t kind_and_flags);
uint64_t page_lsn(const uint8_t* page);
void set_page_lsn(uint8_t* page, uint64_t lsn);
PageId page_name(const uint8_t* page);
void set_page_name(uint8_t* page, PageId id);

// The crc32c of bytes kPageChecksumFrom .. kPageSize-1.
uint32_t compute_page_crc(const uint8_t* page);
// Stamps the page's name and CRC, right before it is written.
void seal_page(uint8_t* page, PageId id);
// OK if `page` (just read as `id`) is sound: all zero (unformatted), or its CRC matches
// and its header names `id`. Otherwise kCorruption naming the page and what is wrong.
Status verify_page(const uint8_t* page, PageId id);

}  // namespace duo::storage

template <>
struct std::hash<duo::storage::PageId> {
  size_t operator()(const duo::storage::PageId& id) const noexcept {
    return std::hash<uint64_t>{}(id.key() * 0x9e3779b97f4a7c15ull);
  }
};
