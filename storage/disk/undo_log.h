// UndoLog: the undo log of one logfile group, as the disk row code sees it — LSNs,
// space accounting and the record stream. It appends records with increasing LSNs and
// keeps them from the oldest one still needed (the start of the last checkpoint) to the
// newest. The stream has absolute offsets that never wrap; the IO side writes it to the
// undofiles chunk by chunk (chunk(), undo_ring.h) and reads it back at restart
// (read_undo_ring()).
//
// Space. capacity_bytes is what the undofiles hold (UndoRing::capacity_bytes()). An
// operation reserves the undo bytes its commit will append when it is prepared
// (reserve(): kOutOfUndoSpace, NDB 1501, when used + reserved would pass capacity); the
// commit appends within that reservation and so never fails; what is left is returned
// with unreserve() when the transaction ends. release_through() (a checkpoint) frees
// the space of the records it makes unneeded.
//
// Thread-compatible: one owner (the thread that owns the logfile group).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/disk/undo_record.h"
#include "storage/disk/undo_ring.h"

namespace duo::storage::disk {

class UndoLog {
 public:
  // A log whose next record gets `next_lsn` (after a restart: RecoveredUndo::next_lsn,
  // past every LSN on disk) and is written at stream offset `start_offset` (after a
  // restart: the chunk boundary after the recovered stream's end).
  UndoLog(uint64_t capacity_bytes, uint64_t next_lsn, uint64_t start_offset = 0);

  // Reserves undo space for a commit to come; kOutOfUndoSpace when the log is full.
  Status reserve(uint64_t bytes);
  // Returns reserved bytes that were not used.
  void unreserve(uint64_t bytes);
  // Appends `record` (its lsn field is ignored) within bytes reserved earlier; returns
  // the LSN it got. Appending more than is reserved is a bug (aborts).
  uint64_t append(const UndoRecord& record);

  // Records with LSN <= lsn are no longer needed (a checkpoint that started after them
  // has completed): their space is free again.
  void release_through(uint64_t lsn);

  // The retained stream, oldest first: every needed record, possibly preceded by
  // released ones of the same chunk (an undo pass stops at its checkpoint's LSN anyway).
  std::span<const uint8_t> bytes() const { return stream_; }
  uint64_t start_offset() const { return start_offset_; }  // stream offset of bytes()[0]
  uint64_t end_offset() const { return start_offset_ + stream_.size(); }
  // The chunk starting at `chunk_offset` (a multiple of kUndoChunkBytes, at least the
  // chunk holding start_offset(), below end_offset()) as it stands now.
  UndoChunk chunk(uint64_t chunk_offset) const;

  uint64_t next_lsn() const { return next_lsn_; }
  uint64_t capacity_bytes() const { return capacity_bytes_; }
  uint64_t used_bytes() const { return end_offset() - released_offset_; }
  uint64_t reserved_bytes() const { return reserved_bytes_; }

 private:
  const uint64_t capacity_bytes_;
  uint64_t next_lsn_;
  uint64_t reserved_bytes_ = 0;
  uint64_t start_offset_;
  uint64_t released_offset_;          // stream offset of the first needed byte
  uint64_t released_lsn_;             // newest LSN released (or before the first)
  std::vector<uint8_t> stream_;
  std::vector<uint64_t> lsns_;        // LSN of each needed record, oldest first
  std::vector<uint64_t> record_ends_; // stream offset past each needed record
};

// Walks an undo stream from the newest record to the oldest.
class UndoReader {
 public:
  explicit UndoReader(std::span<const uint8_t> log) : log_(log), end_(log.size()) {}
  // True at the oldest end: nothing left, or what is left is the tail of a record that
  // began before the stream (cut at a chunk boundary; it was released by a checkpoint).
  bool done() const;
  // The next older record; kCorruption when the stream is damaged.
  Result<UndoRecord> next();

 private:
  std::span<const uint8_t> log_;
  size_t end_;
};

}  // namespace duo::storage::disk
