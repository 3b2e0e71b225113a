// What the page cache needs from its owner: page IO and the undo log's durability.
// The cache itself makes no system calls and runs no threads; its owner (the LDM
// thread's disk-data block in the data node, a fake in tests, the simulator's disk)
// implements these and reports completions back through PageCache::on_read_done /
// on_write_done / on_undo_durable.
//
// Thread-safety: called only from the thread that owns the PageCache.
#pragma once

#include <cstdint>

#include "storage/page_cache/page_header.h"

namespace duo::storage {

class PageIo {
 public:
  virtual ~PageIo() = default;
  // Starts reading page `id` (kPageSize bytes at id.file_offset()) into `frame`
  // (kPageSize-aligned, owned by the cache until the completion). Exactly one
  // PageCache::on_read_done(id, ...) must follow, and never from inside this call.
  virtual void start_read(PageId id, uint8_t* frame) = 0;
  // Starts writing `frame` (sealed: header name and CRC set) as page `id`. The frame is
  // not modified until the completion. Exactly one PageCache::on_write_done(id, ...)
  // must follow, never from inside this call.
  virtual void start_write(PageId id, const uint8_t* frame) = 0;
};

// The write-ahead rule's other half: the undo log of the pages' logfile group.
class UndoDurability {
 public:
  virtual ~UndoDurability() = default;
  // Undo records up to and including this LSN are durable.
  virtual uint64_t durable_undo_lsn() const = 0;
  // Asks that undo be made durable up to at least `lsn`; when it is, the owner calls
  // PageCache::on_undo_durable() (never from inside this call).
  virtual void request_undo_flush(uint64_t lsn) = 0;
};

}  // namespace duo::storage
