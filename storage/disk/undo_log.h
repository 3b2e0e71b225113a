// UndoLog: the undo log of one logfile group, as the disk row code sees it — LSNs,
// space accounting and the record stream. It appends records with increasing LSNs and
// keeps them from the oldest one still needed (the start of the last checkpoint) to the
// newest; writing the stream to the undofiles (and the undo buffer in front of them) is
// the IO side's job, which reads bytes() and is told through release_through() which
// records a checkpoint made unneeded.
//
// Space. capacity_bytes is what the undofiles hold. An operation reserves the undo bytes
// its commit will append when it is prepared (reserve(): kOutOfUndoSpace, NDB 1501, when
// used + reserved would pass capacity); the commit appends within that reservation and
// so never fails; what is left is returned with unreserve() when the transaction ends.
//
// Thread-compatible: one owner (the thread that owns the logfile group).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/disk/undo_record.h"

namespace duo::storage::disk {

class UndoLog {
 public:
  // A log whose next record gets `next_lsn` (after a restart: one past the newest LSN
  // found in the undofiles, so that new LSNs exceed every page LSN on disk).
  UndoLog(uint64_t capacity_bytes, uint64_t next_lsn);

  // Reserves undo space for a commit to come; kOutOfUndoSpace when the log is full.
  Status reserve(uint64_t bytes);
  // Returns reserved bytes that were not used.
  void unreserve(uint64_t bytes);
  // Appends `record` (its lsn field is ignored) within bytes reserved earlier; returns
  // the LSN it got. Appending more than is reserved is a bug (aborts).
  uint64_t append(const UndoRecord& record);

  // Records with LSN <= lsn are no longer needed (a checkpoint has completed that
  // started after them): their space is free again.
  void release_through(uint64_t lsn);

  // The retained records, oldest first (decode backwards with UndoReader).
  std::span<const uint8_t> bytes() const { return stream_; }
  uint64_t next_lsn() const { return next_lsn_; }
  uint64_t capacity_bytes() const { return capacity_bytes_; }
  uint64_t used_bytes() const { return stream_.size(); }
  uint64_t reserved_bytes() const { return reserved_bytes_; }

 private:
  const uint64_t capacity_bytes_;
  uint64_t next_lsn_;
  uint64_t reserved_bytes_ = 0;
  std::vector<uint8_t> stream_;
  std::vector<uint64_t> lsns_;        // LSN of each retained record, oldest first
  std::vector<uint32_t> ends_;        // end offset of each retained record in stream_
};

// Walks an undo stream from the newest record to the oldest.
class UndoReader {
 public:
  explicit UndoReader(std::span<const uint8_t> log) : log_(log), end_(log.size()) {}
  bool done() const { return end_ == 0; }
  // The next older record; kCorruption when the stream is damaged.
  Result<UndoRecord> next();

 private:
  std::span<const uint8_t> log_;
  size_t end_;
};

}  // namespace duo::storage::disk
