// Undo records of disk-page changes (NDB's DD-UNDO, written by LGMAN for DBTUP/TSMAN).
// Every change to a disk row page or an extent-header page appends one record before
// the page is changed; the record's LSN is then stored in the page's LSN field. At
// restart the records from the newest back to the checkpoint's start are applied to
// the pages (undo_apply.h), so that each page is back in its state at the checkpoint.
//
// Records are physiological: they name one page and one slot (or extent) and carry the
// before-image of what they change, never a whole page.
//
// Encoding (little-endian), a record is a multiple of 4 bytes:
//   u32 total_bytes | u16 type | u16 zero | u64 lsn | u32 file | u32 page | u32 slot |
//   u32 table | u32 fragment | u32 before_bytes | before image | zero pad to 4 |
//   u32 masked crc32c of everything before it | u32 total_bytes
// The trailing length lets a reader walk the log backwards.
// Pure functions; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/disk/disk_page_header.h"

namespace duo::storage::disk {

enum class UndoType : uint16_t {
  kPageInit = 1,    // a row page was formatted: undo makes it a fresh (zero) page again
  kEntryAlloc = 2,  // an entry was created in `slot`: undo frees it
  kEntryFree = 3,   // the entry in `slot` was freed: undo re-creates it from `before`
  kEntryUpdate = 4, // the entry in `slot` was rewritten (maybe resized): undo restores `before`
  kExtentAlloc = 5, // extent `slot` (on extent-header page `page`) was given to table/fragment
  kExtentFree = 6,  // extent `slot` was freed; `before` holds its page classes, table/fragment its owner
};

struct UndoRecord {
  UndoType type = UndoType::kPageInit;
  uint64_t lsn = 0;            // set by UndoLog::append
  DiskPageId page;             // the page the change is on
  uint32_t slot = 0;           // entry slot, or extent number for extent records
  uint32_t table = 0;          // extent records: owner
  uint32_t fragment = 0;
  std::span<const uint8_t> before;  // before-image (entry bytes, or extent class nibbles)
};

inline constexpr uint32_t kUndoRecordFixedBytes = 48;  // 40 header bytes + crc + trailer
// Bytes `before_bytes` of before-image take in a record.
constexpr uint32_t undo_record_bytes(uint32_t before_bytes) {
  return kUndoRecordFixedBytes + (before_bytes + 3) / 4 * 4;
}

// Appends the encoding of `record` to *out.
void encode_undo_record(const UndoRecord& record, std::vector<uint8_t>* out);
// Decodes the record that ends at `end` within `log` (its before-image points into
// `log`); *start receives where it begins. kCorruption on a bad length or checksum.
Result<UndoRecord> decode_undo_record_ending_at(std::span<const uint8_t> log, size_t end, size_t* start);

}  // namespace duo::storage::disk
