// Tablespace: the datafiles of one tablespace divided into extents (NDB's TSMAN). An
// extent belongs to at most one table fragment; its entry in an extent-header page
// holds the owner and a 4-bit free-space class per page (disk_row_page.h), the class of
// the page's committed content. Extents are handed out whole to fragments
// (DiskRowSpace), which place row parts inside them; "tablespace full" (NDB 1601) is
// when no free extent is left.
//
// Restart order: open_datafile() for each file (file header only), then the undo pass
// (undo_apply.h) fixes extent headers and pages, then scan_extent_headers() builds the
// free list and tells which fragment owns which extent (extents_owned_by()).
//
// Every extent-header change is protected by an undo record appended before it, whose
// LSN the header page then carries (write-ahead: the cache writes the page only after
// the undo up to its LSN is on disk). A class change caused by a row-page change takes
// the LSN of that row page's record, so an extent header never reaches disk ahead of
// the undo that explains it.
//
// File numbers are unique among the data node's datafiles (DiskPageId::file), below
// 65535 (DiskRef keeps 16 bits). Thread-compatible: one owner.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/disk/datafile_format.h"
#include "storage/disk/disk_page_access.h"
#include "storage/disk/undo_log.h"

namespace duo::storage::disk {

struct ExtentId {
  uint32_t file = 0;
  uint32_t extent = 0;
  friend bool operator==(const ExtentId&, const ExtentId&) = default;
  friend auto operator<=>(const ExtentId&, const ExtentId&) = default;
};

// A table fragment, as extent owner.
struct FragmentOwner {
  uint32_t table = 0;
  uint32_t fragment = 0;
  friend bool operator==(const FragmentOwner&, const FragmentOwner&) = default;
};

class Tablespace {
 public:
  // Undo bytes allocate_extent() appends (reserve them first).
  static constexpr uint32_t kExtentAllocUndoBytes = undo_record_bytes(0);

  Tablespace(uint32_t tablespace_id, uint32_t extent_pages, DiskPageAccess* pages, UndoLog* undo);

  // Adds datafile `file_no` of `file_pages` pages: page 0 must be pinned. An all-zero
  // page 0 is a freshly created file: its header is written. Otherwise the header must
  // name this tablespace, file and geometry (kCorruption if not). The file's extents
  // are usable after scan_extent_headers().
  Status open_datafile(uint32_t file_no, uint32_t file_pages);
  // Reads every extent-header page (pinned): builds the free-extent list.
  void scan_extent_headers();
  // A datafile opened while the tablespace is in use (ALTER TABLESPACE ADD DATAFILE):
  // its free extents join the free list, after the others; extents freed but waiting
  // for a checkpoint stay waiting (scan_extent_headers() would free them at once).
  void add_free_extents_of(uint32_t file_no);
  // Extents `owner` holds according to the extent headers (restart).
  std::vector<ExtentId> extents_owned_by(FragmentOwner owner) const;

  // Gives a free extent to `owner`: its entry is written under an undo record of
  // kExtentAllocUndoBytes the caller reserved. kTablespaceFull (NDB 1601) when no
  // extent is free; nothing changes then.
  Result<ExtentId> allocate_extent(FragmentOwner owner);
  // Undo bytes free_extent() appends.
  uint32_t extent_free_undo_bytes() const { return undo_record_bytes((extent_pages_ + 1) / 2); }
  // Takes an extent from its fragment (which is dropped): under an undo record of
  // extent_free_undo_bytes() the caller reserved. The extent becomes allocatable only
  // once a checkpoint that began after this has completed: until then undo may need to
  // give it back to its fragment with its pages intact (NDB keeps such extents off the
  // free list until the next LCP for the same reason).
  void free_extent(ExtentId extent);
  // A local checkpoint begins / has completed: extents freed before it began are free.
  void begin_checkpoint() { freed_before_checkpoint_ = freed_.size(); }
  void end_checkpoint();

  // Committed free-space class of a page, from its extent's entry.
  uint8_t page_class(DiskPageId page) const;
  // Records a page's new class after its change under undo record `lsn`.
  void set_page_class(DiskPageId page, uint8_t free_class, uint64_t lsn);

  // The layout of file `file_no`, or null when it is not a file of this tablespace.
  const DatafileLayout* layout_of(uint32_t file_no) const;
  DiskPageId page_of(ExtentId extent, uint32_t index) const { return layout_of(extent.file)->page_of(extent.extent, index); }
  uint32_t id() const { return id_; }
  uint32_t extent_pages() const { return extent_pages_; }
  size_t extent_count() const;
  size_t free_extent_count() const { return free_.size(); }
  size_t free_extent_count(uint32_t file_no) const;  // of one datafile
  std::vector<uint32_t> file_numbers() const;        // ascending
  size_t freed_extent_count() const { return freed_.size(); }  // waiting for a checkpoint

 private:
  ExtentEntry entry(const DatafileLayout& layout, uint32_t extent) const;

  const uint32_t id_;
  const uint32_t extent_pages_;
  DiskPageAccess* const pages_;
  UndoLog* const undo_;
  std::map<uint32_t, DatafileLayout> files_;
  std::vector<ExtentId> free_;  // a stack: the lowest extent is handed out first
  std::vector<ExtentId> freed_;  // freed, not yet allocatable (oldest first)
  size_t freed_before_checkpoint_ = 0;
};

}  // namespace duo::storage::disk
