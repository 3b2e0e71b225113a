// DiskPageAccess: how disk row storage reaches page bytes. Disk row code is pure logic:
// it never reads files or waits; it is handed pages that are already resident and
// pinned, and reports every page it changed. In production the page cache implements
// this (storage/page_cache); tests and the simulator use MemoryPageAccess.
//
// Contract for callers of disk row code (local_query): every page an entry point names
// as needed (DiskRowSpace::pages_for, the tablespace's file-header and extent-header
// pages) is pinned before the call and stays pinned until the call returns. Extent-header
// pages are expected to stay resident for the tablespace's life, as NDB's page cache
// locks TSMAN's extent pages.
//
// Thread-safety is the implementation's; disk row code calls it from the one thread
// that owns the fragment or logfile group.
#pragma once

#include <cstdint>

#include "storage/disk/disk_page_header.h"

namespace duo::storage::disk {

class DiskPageAccess {
 public:
  virtual ~DiskPageAccess() = default;
  // The kPageSize bytes of a pinned page (never null: a missing page is a caller bug).
  virtual uint8_t* page(DiskPageId id) = 0;
  // The page's bytes changed; its LSN field already holds the LSN of the newest undo
  // record covering the change (write-ahead: the cache flushes undo up to it first).
  virtual void mark_dirty(DiskPageId id) = 0;
};

}  // namespace duo::storage::disk
