// NodeDiskSpace: the disk-data state one data node shares among its LDM instances — the
// logfile group's UndoLog and every Tablespace with its extent lists and extent-header
// pages (NDB's LGMAN and TSMAN state). Each header page and the undo stream need a
// single writer, while fragments of one tablespace live in several LDM instances: so
// everything here, and every call into a fragment with disk parts (which allocates
// extents, updates page classes and appends undo synchronously inside prepare, install,
// release and drop), runs with lock() held. Row pages are not shared: an extent belongs
// to one fragment, hence to one instance, whose own page cache holds its pages.
//
// The header pages come through `header_pages`, which the owner keeps pinned for the
// node's life (a file's page 0 and its extent-header pages); it is touched only under
// the lock. See docs/architecture.md "Disk rows" for why a shared lock and not a block.
//
// Thread-safety: every method takes the held lock as its first argument and checks it
// (a call without it aborts the node); the Tablespace and UndoLog pointers handed out
// may be used only while the lock is held.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/disk/disk_page_access.h"
#include "storage/disk/tablespace.h"
#include "storage/disk/undo_log.h"

namespace duo::storage::disk {

class NodeDiskSpace {
 public:
  using Lock = std::unique_lock<std::mutex>;

  // Extent usage of one datafile (information_schema.FILES).
  struct DatafileUsage {
    uint32_t tablespace_id = 0;
    uint32_t file_no = 0;
    size_t extents = 0;
    size_t free_extents = 0;  // allocatable now (freed ones wait for a checkpoint)
  };

  // `header_pages` outlives this object; see the file comment.
  explicit NodeDiskSpace(DiskPageAccess* header_pages) : header_pages_(header_pages) {}
  NodeDiskSpace(const NodeDiskSpace&) = delete;
  NodeDiskSpace& operator=(const NodeDiskSpace&) = delete;

  // Takes the node's disk-data lock (held around every call into a disk-part fragment).
  Lock lock() { return Lock(mutex_); }

  // The node's logfile group (one per node, as in NDB: a second one is refused).
  // `undo_bytes`: the undo space of its undo files.
  Status create_logfile_group(const Lock& held, uint32_t id, uint64_t undo_bytes);
  // A tablespace of extents of `extent_pages` pages, logging to logfile group `lg_id`.
  Status create_tablespace(const Lock& held, uint32_t id, uint32_t extent_pages, uint32_t lg_id);
  // Opens datafile `file_no` (node-unique, < 65535) of `file_pages` pages in tablespace
  // `tablespace_id`: its page 0 and extent-header pages must be accessible through
  // `header_pages`. A fresh (all-zero) file is formatted; its free extents become
  // allocatable at once, at node start and when a datafile is added alike.
  Status add_datafile(const Lock& held, uint32_t tablespace_id, uint32_t file_no, uint32_t file_pages);

  // The tablespace / undo log (null when absent); usable while `held` is.
  Tablespace* tablespace(const Lock& held, uint32_t id);
  UndoLog* undo(const Lock& held);
  std::optional<uint32_t> logfile_group_id(const Lock& held) const;
  // Extent usage of every datafile, by (tablespace, file number).
  std::vector<DatafileUsage> datafile_usage(const Lock& held) const;

 private:
  void check_held(const Lock& held) const;

  DiskPageAccess* const header_pages_;
  mutable std::mutex mutex_;
  // Protected by mutex_ (and so is every object they own).
  std::optional<uint32_t> logfile_group_id_;
  std::unique_ptr<UndoLog> undo_;
  std::map<uint32_t, std::unique_ptr<Tablespace>> tablespaces_;
};

}  // namespace duo::storage::disk
