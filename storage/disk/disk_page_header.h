// The common 64-byte header every disk page starts with, as far as disk row storage
// reads and writes it. The header is owned by the page cache (storage/page_cache), which
// computes and checks the checksum; this file only names the fields disk row code
// touches — the page LSN above all, which makes undo idempotent — with the offsets of
// storage/page_cache/page_header.h (docs/formats/disk-page.md). DiskPageId is the cache's
// PageId (file_no, page_no).
//
//   bytes 0..3   u32 crc32c of bytes 4..end (the cache's)
//   bytes 4..7   u32 page kind / flags
//   bytes 8..15  u64 page LSN: the LSN of the newest undo record whose change is on
//                the page (0: never changed since the file was created)
//   bytes 16..19 u32 file number, bytes 20..23 u32 page number in the file
//   bytes 24..63 reserved
// Fields are little-endian (the host order of every platform DuoDB builds for).
// Pure functions over bytes the caller owns; thread-compatible.
#pragma once

#include <compare>
#include <cstdint>
#include <cstring>

#include "storage/memory/global_memory.h"
#include "storage/page_cache/page_header.h"

namespace duo::storage::disk {

inline constexpr uint32_t kDiskPageHeaderBytes = kPageHeaderBytes;

// A page of a tablespace or logfile group: file number (within its filegroup) and page
// number within the file — the page cache's PageId, one struct for both.
using DiskPageId = storage::PageId;

// Values of the page kind field for the pages disk row storage writes.
enum class DiskPageKind : uint32_t {
  kUnknown = 0,  // never written: a freshly created, zero-filled page
  kDatafileHeader = 1,
  kExtentHeader = 2,
  kRowPage = 3,
  kUndofileHeader = 4,
};

// The offsets are the page cache's (storage/page_cache/page_header.h): one definition.
namespace page_header_offset {
inline constexpr uint32_t kKind = kPageHeaderKindOffset;
inline constexpr uint32_t kLsn = kPageHeaderLsnOffset;
inline constexpr uint32_t kFile = kPageHeaderFileOffset;
inline constexpr uint32_t kPage = kPageHeaderPageOffset;
}  // namespace page_header_offset

inline uint64_t page_lsn(const uint8_t* page) {
  uint64_t lsn;
  std::memcpy(&lsn, page + page_header_offset::kLsn, 8);
  return lsn;
}
inline void set_page_lsn(uint8_t* page, uint64_t lsn) { std::memcpy(page + page_header_offset::kLsn, &lsn, 8); }

inline DiskPageKind page_kind(const uint8_t* page) {
  uint32_t kind;
  std::memcpy(&kind, page + page_header_offset::kKind, 4);
  return static_cast<DiskPageKind>(kind);
}
// Stamps kind and identity (the cache verifies the identity when it reads the page back).
inline void set_page_identity(uint8_t* page, DiskPageKind kind, DiskPageId id) {
  const uint32_t k = static_cast<uint32_t>(kind);
  std::memcpy(page + page_header_offset::kKind, &k, 4);
  std::memcpy(page + page_header_offset::kFile, &id.file_no, 4);
  std::memcpy(page + page_header_offset::kPage, &id.page_no, 4);
}

}  // namespace duo::storage::disk
