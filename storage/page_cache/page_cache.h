// PageCache: the disk page buffer of one LDM thread (NDB's PGMAN), over frames taken
// from GlobalMemory's DiskPageBufferMemory area. Pages are 32 KiB (kPageSize), named by
// PageId (file number, page number), and start with the common header of
// page_header.h, which the cache verifies after every read and seals before every
// write.
//
// Pure logic: no threads, no system calls, no clock. Reads and writes go out through
// PageIo and come back through on_read_done / on_write_done; the write-ahead rule asks
// UndoDurability. So the same code runs on an LDM thread of duo_datad (IO through the
// file system block) and in the deterministic simulator.
//
// Requests and waiting. request_page(id, intent, token) pins the page and answers
//   - ready: the page is resident; the frame is usable now (a hit);
//   - waiting: the page (or a frame for it) is on its way; the request's outcome comes
//     later as a PageReady {token, id, page, status} from take_ready(). `token` is
//     opaque: the owner's handle on the parked operation it must resume. One read per
//     page no matter how many requests wait for it.
//   - an error: kTemporary when no frame can be found (below); no pin is taken.
// A ready PageReady holds the pin; a failed one (read error, checksum mismatch,
// refusal) holds none. Every pin is released by exactly one unpin().
//
// Several pages for one operation, without deadlock. An operation asks for its pages
// one after another and keeps the ones it has pinned while it waits for the next.
// A miss takes a free frame, else evicts the coldest clean unpinned page, else starts
// writing dirty unpinned pages and waits for a frame (counted in wait_queue). Pins are
// never waited for: when no frame is free and no IO (read, write, undo flush) is in
// flight that could free one — every frame is pinned — the request is refused with
// kTemporary "page cache full: all N frames are pinned", and so are requests already
// waiting for a frame when that state is reached. The owner then aborts the operation
// (releasing its pins) and the client retries; the cache never blocks forever. An
// owner must not hold pins while it waits for anything but the cache (a row lock wait
// holding pins could stall others until its timeout).
//
// Intents. kRead pins for reading; kUpdate pins for changing (then mark_dirty before
// unpin); kCreate is kUpdate for a page new in its file: no read, the frame is zeroed
// and named. A page being written out is not modified: kUpdate/kCreate requests on it
// wait for the write (wait_queue), and a write starts only on a page no update pin
// holds.
//
// Write-ahead and write-back. mark_dirty(page, lsn) records the newest undo LSN of the
// page's change (also stored in its header). Before writing a dirty page the cache asks
// UndoDurability; if the undo log is not durable up to the page's LSN, it asks for an
// undo flush (counted in log_waits) and retries on on_undo_durable(). Dirty pages are
// written when eviction needs frames and for checkpoints: flush_dirty(token) writes
// every page dirty at the time of the request (pages dirtied later are not waited for)
// and reports the token from take_flushed() once all are on disk.
//
// Read-ahead: read_ahead(file, first_page, count) starts reads of pages not resident
// into free or clean unpinned frames (never forcing a write-back), for scans.
//
// Thread-safety: none. One owner thread calls everything.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/memory/global_memory.h"
#include "storage/page_cache/page_cache_io.h"
#include "storage/page_cache/page_header.h"
#include "storage/page_cache/two_queue_policy.h"

namespace duo::storage {

enum class PageIntent : uint8_t { kRead, kUpdate, kCreate };

struct PageCacheConfig {
  // Frames to take from the DiskPageBuffer area; 0 = as many as the area gives.
  uint32_t frames_max = 0;
  // Page writes in flight at once (write-back for eviction and checkpoints).
  uint32_t writes_in_flight_max = 32;
  // Requests waiting for a frame; beyond, a miss is refused with kTemporary.
  uint32_t frame_waiters_max = 1024;
  // Pages one read_ahead() call may start.
  uint32_t read_ahead_pages_max = 64;
  // 2Q parameters as percent of the frames: probation target (Kin) and ghosts (Kout).
  uint32_t recent_percent = 25;
  uint32_t ghost_percent = 50;
  // Requests a probation page waits before a reference promotes it; 0 = frames / 4.
  uint64_t correlation_window = 0;
  // Eviction write-backs one frame search may start.
  uint32_t eviction_writes_per_search = 8;
};

// A pinned page: its frame memory (kPageSize bytes, header included).
struct PageRef {
  static constexpr uint32_t kNoFrame = UINT32_MAX;
  uint32_t frame = kNoFrame;
  uint8_t* data = nullptr;
  PageId id;
  bool valid() const { return frame != kNoFrame; }
};

// The outcome of a request that waited.
struct PageReady {
  uint64_t token = 0;
  PageId id;
  PageRef page;   // valid (and pinned) iff status is OK
  Status status;  // kIoError, kCorruption, kTemporary (refused while waiting)
};

// The answer to request_page: the page now (ready) or later (a PageReady).
struct PageGrant {
  bool ready = false;
  PageRef page;  // valid iff ready
};

struct FlushDone {
  uint64_t token = 0;
  Status status;  // kIoError if a page of the flush could not be written
};

// ndbinfo.diskpagebuffer's counters, and a few more.
// page_requests == direct_return + wait_queue + wait_io + refused, always.
struct PageCacheStats {
  uint64_t page_requests = 0;
  uint64_t page_requests_direct_return = 0;  // hit (or kCreate of a new page): no wait
  uint64_t page_requests_wait_io = 0;        // the request started the page's read
  uint64_t page_requests_wait_queue = 0;     // waited for another read, a write or a frame
  uint64_t page_requests_refused = 0;        // kTemporary at once (no frame can be freed)
  uint64_t waiters_refused = 0;              // waiting for a frame, then refused
  uint64_t pages_read = 0;
  uint64_t pages_written = 0;      // all writes completed
  uint64_t pages_written_lcp = 0;  // of which for flush_dirty (checkpoints)
  uint64_t log_waits = 0;          // writes held back by the write-ahead rule
  uint64_t read_ahead_pages = 0;
  uint64_t evictions = 0;
  uint64_t checksum_errors = 0;
  uint64_t read_errors = 0;
  uint64_t write_errors = 0;
  uint64_t flushes_completed = 0;
  // Gauges.
  uint32_t frames = 0;
  uint32_t frames_in_use = 0;  // holding a page (or reading one)
  uint32_t pages_dirty = 0;
  uint32_t frames_pinned = 0;
  uint32_t reads_in_flight = 0;
  uint32_t writes_in_flight = 0;
  uint32_t frame_waiters = 0;
};

class PageCache {
 public:
  // Takes up to config.frames_max frames from `memory`'s DiskPageBuffer area (at least
  // one, else kTableFull). `io` and `undo` must outlive the cache.
  static Result<std::unique_ptr<PageCache>> create(GlobalMemory& memory, PageCacheConfig config,
                                                   PageIo& io, UndoDurability& undo);
  ~PageCache();  // returns the frames to the area
  PageCache(const PageCache&) = delete;
  PageCache& operator=(const PageCache&) = delete;

  // Pins page `id` for `intent`; see the file comment for ready / waiting / kTemporary.
  Result<PageGrant> request_page(PageId id, PageIntent intent, uint64_t token);
  // Releases one pin taken with `intent` (the intent of its request).
  void unpin(const PageRef& page, PageIntent intent);
  // The pinned-for-update page was changed under undo LSN `lsn`.
  void mark_dirty(const PageRef& page, uint64_t lsn);
  // Starts a checkpoint write-back of every page dirty now; `token` comes back from
  // take_flushed() when they are all written.
  void flush_dirty(uint64_t token);
  // Hints that pages first_page .. first_page+count-1 of `file_no` will be read soon.
  // Returns the reads started (0 when no frame is free without a write-back).
  uint32_t read_ahead(uint32_t file_no, uint32_t first_page, uint32_t count);
  // Forgets every page of `file_no` (dirty ones unwritten): for a dropped data file.
  // kTemporary if one of them is pinned or has IO in flight.
  Status drop_file(uint32_t file_no);

  // IO completions, from the owner.
  void on_read_done(PageId id, Status status);
  void on_write_done(PageId id, Status status);
  void on_undo_durable();

  // Outcomes of waiting requests and finished flushes since the last call (moved out).
  std::vector<PageReady> take_ready();
  std::vector<FlushDone> take_flushed();
  bool has_ready() const { return !ready_.empty() || !flushed_.empty(); }

  PageCacheStats stats() const;
  // The page is in a frame with its bytes (not being read): a request would be a hit.
  bool is_resident(PageId id) const;
  uint32_t frame_count() const { return static_cast<uint32_t>(frames_.size()); }
  // Checks the bookkeeping (maps, pins, dirty counts); kInternal naming what is wrong.
  Status check_invariants() const;

 private:
  enum class FrameState : uint8_t { kFree, kReading, kResident };
  struct Waiter {
    uint64_t token;
    PageIntent intent;
  };
  struct Frame {
    uint8_t* data = nullptr;
    PageId id;
    FrameState state = FrameState::kFree;
    bool dirty = false;
    bool writing = false;
    bool write_for_flush = false;
    bool log_waiting = false;
    bool in_flush_queue = false;
    uint32_t pins = 0;         // granted pins plus pins of waiters
    uint32_t update_pins = 0;  // granted kUpdate/kCreate pins
    uint64_t lsn = 0;
    uint64_t dirty_epoch = 0;
    std::vector<Waiter> waiters;  // reading: every waiter; resident+writing: updaters
  };
  struct FrameWaiter {
    uint64_t token;
    PageId id;
    PageIntent intent;
  };
  struct PendingFlush {
    uint64_t token;
    uint64_t epoch;
    Status status;
  };

  PageCache(GlobalMemory& memory, PageCacheConfig config, PageIo& io, UndoDurability& undo,
            std::vector<uint8_t*> frames);

  // Pins a mapped page for a request; ready unless it must wait for IO.
  PageGrant pin_mapped(uint32_t frame, PageIntent intent, uint64_t token);
  // Puts page `id` into free frame `frame` for a request: reads it, or zeroes it for
  // kCreate. Returns ready for kCreate.
  PageGrant bind_frame(uint32_t frame, PageId id, PageIntent intent, uint64_t token);
  // A frame to (re)use: free, or evicted clean; may start eviction write-backs.
  uint32_t acquire_frame(bool allow_write_back);
  void release_frame(uint32_t frame, bool remember);
  // Starts writing a dirty frame, unless the write-ahead rule holds it back.
  void start_write(uint32_t frame, bool for_flush);
  bool can_start_write(const Frame& frame) const;
  // Gives frames to waiting requests; refuses them all if nothing can free a frame.
  void serve_frame_waiters();
  // Starts queued checkpoint writes within the in-flight bound.
  void pump_flush();
  void complete_flushes();
  void mark_clean(Frame& frame);
  void deliver(uint64_t token, PageId id, PageRef page, Status status);
  PageRef ref_of(uint32_t frame) const;
  std::string full_message() const;
  void after_event();

  GlobalMemory& memory_;
  const PageCacheConfig config_;
  PageIo& io_;
  UndoDurability& undo_;

  std::vector<Frame> frames_;
  std::vector<uint32_t> free_frames_;
  std::unordered_map<uint64_t, uint32_t> page_table_;  // PageId::key() -> frame
  TwoQueuePolicy policy_;
  std::deque<FrameWaiter> frame_waiters_;
  std::vector<PageReady> ready_;
  std::vector<FlushDone> flushed_;

  // Checkpoint flushes: a page dirtied while epoch_ == e has dirty_epoch e; flush
  // request number E (epoch_ becomes E) waits for every page with dirty_epoch < E.
  uint64_t epoch_ = 0;
  std::map<uint64_t, uint32_t> dirty_by_epoch_;
  std::deque<PendingFlush> flushes_;
  std::deque<uint32_t> flush_queue_;
  std::vector<uint32_t> log_waiting_;

  uint32_t pinned_frames_ = 0;
  uint32_t dirty_pages_ = 0;
  uint32_t reads_in_flight_ = 0;
  uint32_t writes_in_flight_ = 0;
  PageCacheStats stats_;
};

}  // namespace duo::storage
