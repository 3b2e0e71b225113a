// The restart undo pass (NDB's DD-UNDO execution): applies undo records from the newest
// back to the start of the checkpoint being restored, so that every disk row page and
// extent header is again in its state at that checkpoint; redo replay then runs on top.
//
// Pages were written back fuzzily: each may hold any state from the checkpoint's up to
// the newest whose undo reached disk (write-ahead). A record's change is on its page
// exactly when the page's LSN is at least the record's LSN; only then is it undone, and
// the page's LSN becomes the record's LSN - 1, so the next older record is judged the
// same way. The pass is idempotent: a crash during it and a second run give the same
// pages. After each row-page record, the page's free-space class in its extent header is
// recomputed from the page, so classes follow the restored pages.
//
// After the pass, the restart must make the restored state the new undo start: write
// back the pages the pass changed, then record the recovered next LSN - 1 as the stop
// point of any later restart (as a completed checkpoint does) and continue the log
// after the recovered stream. Otherwise a second crash would undo old records twice.
//
// Every page a record names, and every extent-header page, must be reachable through
// `pages` (the caller pins them; the IO side reads the undo log ahead to do so).
// Records of files no tablespace knows (dropped) are skipped. Thread-compatible.
#pragma once

#include <cstdint>
#include <span>

#include "ndb-kernel/common/status.h"
#include "storage/disk/disk_page_access.h"
#include "storage/disk/tablespace.h"
#include "storage/disk/undo_record.h"

namespace duo::storage::disk {

struct UndoApplyStats {
  size_t records = 0;         // records read (LSN above stop_lsn)
  size_t applied = 0;         // changes found on their page and undone
  size_t not_on_page = 0;     // changes that never reached the page on disk
  size_t unknown_file = 0;    // records of files no tablespace holds
};

// Undoes, newest first, every record of `log` (an undo stream, oldest first) whose LSN
// is above `stop_lsn` (the checkpoint's start). kCorruption when a record is damaged or
// does not fit the page it names.
Result<UndoApplyStats> apply_undo_backwards(std::span<const uint8_t> log, uint64_t stop_lsn,
                                            std::span<Tablespace* const> tablespaces, DiskPageAccess* pages);

}  // namespace duo::storage::disk
