// How the undo stream lies in a logfile group's undofiles (NDB's LGMAN file ring).
//
// The undofiles of a group, in the order they were added, form one ring of pages: page
// 1.. of the first file, then of the next, and after the last back to the first (page 0
// of each file is its header, datafile_format.h). The stream (UndoLog) is cut into
// chunks of kUndoChunkBytes; chunk c (stream offset c * kUndoChunkBytes, offsets never
// wrap) lives in ring page c mod ring_pages. While a chunk is the newest it is written
// again each time more of it is flushed.
//
// Undo page: common 64-byte header (kind 5, identity; page LSN = LSN of the newest
// record ending in the stream at or before records_end), then
//   u64 chunk offset | u64 records_end (stream offset just past the newest whole record
//   flushed with this chunk) | u32 data bytes | u32 masked crc32c of the 20 bytes before
//   it and the data | data
// The chunk's own checksum makes a torn or stale page detectable by the reader.
//
// Pure functions and a small value type; thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/disk/disk_page_header.h"

namespace duo::storage::disk {

inline constexpr uint32_t kUndoChunkHeaderBytes = 24;
inline constexpr uint32_t kUndoChunkBytes =
    static_cast<uint32_t>(kPageSize) - kDiskPageHeaderBytes - kUndoChunkHeaderBytes;
inline constexpr DiskPageKind kUndoPageKind = static_cast<DiskPageKind>(5);

// One chunk of the stream, as UndoLog hands it to the writer.
struct UndoChunk {
  uint64_t offset = 0;               // stream offset of its first byte (a chunk boundary)
  std::span<const uint8_t> data;     // up to kUndoChunkBytes
  uint64_t records_end = 0;          // stream offset past the newest whole record in the stream up to data's end
  uint64_t last_lsn = 0;             // that record's LSN
};

class UndoRing {
 public:
  struct File {
    uint32_t file_no = 0;
    uint32_t pages = 0;  // including the header page
  };
  explicit UndoRing(std::vector<File> files);

  uint64_t ring_pages() const { return ring_pages_; }
  // Undo bytes the ring holds for UndoLog: one chunk less than the ring, since the
  // retained stream starts at a chunk boundary before the oldest needed byte.
  uint64_t capacity_bytes() const { return ring_pages_ > 0 ? (ring_pages_ - 1) * kUndoChunkBytes : 0; }
  DiskPageId page_of_chunk(uint64_t chunk_offset) const;

 private:
  std::vector<File> files_;
  uint64_t ring_pages_ = 0;
};

// Writes `chunk` into undo page `id`'s bytes.
void write_undo_chunk(uint8_t* page, DiskPageId id, const UndoChunk& chunk);

// What a restart finds in the ring.
struct RecoveredUndo {
  std::vector<uint8_t> stream;  // the newest run of consecutive chunks, cut at its records_end
  uint64_t start_offset = 0;    // stream offset of stream[0]
  uint64_t next_lsn = 1;        // past every LSN the ring has seen
};
// Reads every ring page (through `page`) and rebuilds the newest contiguous run of the
// stream. Pages that are not valid chunks (never written, torn, of an older lap where a
// newer was expected) end the run. A never-used ring gives an empty stream.
RecoveredUndo read_undo_ring(const UndoRing& ring, const std::function<const uint8_t*(DiskPageId)>& page);

}  // namespace duo::storage::disk
