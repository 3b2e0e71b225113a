#include "storage/page_cache/page_cache.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "ndb-kernel/common/logging.h"

namespace duo::storage {

namespace {

constexpr const char* kLog = "page_cache";

// Always-on invariant: a broken page-cache bookkeeping could hand out a frame holding
// another page's bytes, so the node stops instead (corruption must not spread).
void require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "PageCache invariant failed: %s\n", what);
  std::abort();
}

bool is_update(PageIntent intent) { return intent != PageIntent::kRead; }

std::string page_text(PageId id) {
  return "(file " + std::to_string(id.file_no) + ", page " + std::to_string(id.page_no) + ")";
}

}  // namespace

Result<std::unique_ptr<PageCache>> PageCache::create(GlobalMemory& memory, PageCacheConfig config,
                                                     PageIo& io, UndoDurability& undo) {
  if (config.writes_in_flight_max == 0) {
    return Status(ErrorCode::kConfigError, "page cache: writes in flight must be at least 1");
  }
  if (config.recent_percent > 100 || config.ghost_percent > 1000) {
    return Status(ErrorCode::kConfigError, "page cache: 2Q percentages out of range");
  }
  std::vector<uint8_t*> frames;
  const uint32_t want = config.frames_max == 0 ? UINT32_MAX : config.frames_max;
  while (frames.size() < want) {
    Result<void*> page = memory.allocate_page(MemoryArea::kDiskPageBuffer);
    if (!page.ok()) break;
    frames.push_back(static_cast<uint8_t*>(page.value()));
  }
  if (frames.empty()) {
    return Status(ErrorCode::kTableFull, "page cache: DiskPageBufferMemory has no free page");
  }
  return std::unique_ptr<PageCache>(
      new PageCache(memory, config, io, undo, std::move(frames)));
}

PageCache::PageCache(GlobalMemory& memory, PageCacheConfig config, PageIo& io,
                     UndoDurability& undo, std::vector<uint8_t*> frames)
    : memory_(memory),
      config_(config),
      io_(io),
      undo_(undo),
      frames_(frames.size()),
      policy_(static_cast<uint32_t>(frames.size()),
              std::max<uint32_t>(1, static_cast<uint32_t>(frames.size() * config.recent_percent / 100)),
              static_cast<uint32_t>(frames.size() * config.ghost_percent / 100),
              config.correlation_window != 0 ? config.correlation_window
                                             : std::max<uint64_t>(1, frames.size() / 4)) {
  free_frames_.reserve(frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    frames_[i].data = frames[i];
    // Lowest frame numbers are used first.
    free_frames_.push_back(static_cast<uint32_t>(frames.size() - 1 - i));
  }
  page_table_.reserve(frames.size() * 2);
  stats_.frames = static_cast<uint32_t>(frames.size());
}

PageCache::~PageCache() {
  for (Frame& frame : frames_) memory_.free_page(MemoryArea::kDiskPageBuffer, frame.data);
}

PageRef PageCache::ref_of(uint32_t frame) const {
  return PageRef{frame, frames_[frame].data, frames_[frame].id};
}

std::string PageCache::full_message() const {
  return "page cache full: all " + std::to_string(frames_.size()) +
         " frames are pinned (DiskPageBufferMemory); retry";
}

void PageCache::deliver(uint64_t token, PageId id, PageRef page, Status status) {
  ready_.push_back(PageReady{token, id, page, std::move(status)});
}

// ---- Requests ----

bool PageCache::is_resident(PageId id) const {
  auto it = page_table_.find(id.key());
  return it != page_table_.end() && frames_[it->second].state == FrameState::kResident;
}

Result<PageGrant> PageCache::request_page(PageId id, PageIntent intent, uint64_t token) {
  ++stats_.page_requests;
  auto it = page_table_.find(id.key());
  if (it != page_table_.end()) {
    policy_.on_access(it->second);
    return pin_mapped(it->second, intent, token);
  }
  // A miss. Requests already waiting for a frame go first.
  uint32_t frame = TwoQueuePolicy::kNone;
  if (frame_waiters_.empty()) frame = acquire_frame(true);
  if (frame != TwoQueuePolicy::kNone) {
    PageGrant grant = bind_frame(frame, id, intent, token);
    if (grant.ready) {
      ++stats_.page_requests_direct_return;
    } else {
      ++stats_.page_requests_wait_io;
    }
    return grant;
  }
  const bool can_progress = reads_in_flight_ > 0 || writes_in_flight_ > 0 || !log_waiting_.empty();
  if (!can_progress) {
    ++stats_.page_requests_refused;
    return Status(ErrorCode::kTemporary, full_message());
  }
  if (frame_waiters_.size() >= config_.frame_waiters_max) {
    ++stats_.page_requests_refused;
    return Status(ErrorCode::kTemporary, "page cache: too many requests wait for a frame (" +
                                             std::to_string(config_.frame_waiters_max) + "); retry");
  }
  ++stats_.page_requests_wait_queue;
  frame_waiters_.push_back(FrameWaiter{token, id, intent});
  return PageGrant{};
}

PageGrant PageCache::pin_mapped(uint32_t index, PageIntent intent, uint64_t token) {
  Frame& frame = frames_[index];
  if (frame.pins++ == 0) ++pinned_frames_;
  const bool must_wait =
      frame.state == FrameState::kReading || (is_update(intent) && frame.writing);
  if (must_wait) {
    frame.waiters.push_back(Waiter{token, intent});
    ++stats_.page_requests_wait_queue;
    return PageGrant{};
  }
  if (is_update(intent)) ++frame.update_pins;
  ++stats_.page_requests_direct_return;
  return PageGrant{true, ref_of(index)};
}

PageGrant PageCache::bind_frame(uint32_t index, PageId id, PageIntent intent, uint64_t token) {
  Frame& frame = frames_[index];
  require(frame.state == FrameState::kFree && frame.pins == 0 && !frame.dirty,
          "bind_frame on a frame in use");
  frame.id = id;
  page_table_.emplace(id.key(), index);
  policy_.on_load(index, id.key());
  frame.pins = 1;
  ++pinned_frames_;
  if (intent == PageIntent::kCreate) {
    std::memset(frame.data, 0, kPageSize);
    set_page_name(frame.data, id);
    frame.state = FrameState::kResident;
    frame.lsn = 0;
    frame.update_pins = 1;
    return PageGrant{true, ref_of(index)};
  }
  frame.state = FrameState::kReading;
  frame.waiters.push_back(Waiter{token, intent});
  ++reads_in_flight_;
  io_.start_read(id, frame.data);
  return PageGrant{};
}

uint32_t PageCache::acquire_frame(bool allow_write_back) {
  if (!free_frames_.empty()) {
    const uint32_t frame = free_frames_.back();
    free_frames_.pop_back();
    return frame;
  }
  uint32_t writes_started = 0;
  const uint32_t victim = policy_.for_each_candidate([&](uint32_t index) {
    Frame& frame = frames_[index];
    if (frame.pins > 0 || frame.state != FrameState::kResident || frame.writing) return false;
    if (!frame.dirty) return true;
    if (allow_write_back && !frame.log_waiting && writes_started < config_.eviction_writes_per_search &&
        writes_in_flight_ < config_.writes_in_flight_max) {
      start_write(index, false);
      ++writes_started;
    }
    return false;
  });
  if (victim == TwoQueuePolicy::kNone) return victim;
  ++stats_.evictions;
  release_frame(victim, true);
  free_frames_.pop_back();  // release_frame pushed it
  return victim;
}

void PageCache::release_frame(uint32_t index, bool remember) {
  Frame& frame = frames_[index];
  require(frame.pins == 0 && frame.waiters.empty() && !frame.writing,
          "release of a pinned or busy frame");
  if (frame.dirty) mark_clean(frame);  // only drop_file discards a dirty page
  policy_.on_remove(index, frame.id.key(), remember);
  page_table_.erase(frame.id.key());
  if (frame.log_waiting) {
    log_waiting_.erase(std::find(log_waiting_.begin(), log_waiting_.end(), index));
  }
  uint8_t* const data = frame.data;
  frame = Frame();
  frame.data = data;
  free_frames_.push_back(index);
}

void PageCache::unpin(const PageRef& page, PageIntent intent) {
  require(page.valid() && page.frame < frames_.size(), "unpin of an invalid page");
  Frame& frame = frames_[page.frame];
  require(frame.id == page.id && frame.state == FrameState::kResident, "unpin of a page not held");
  require(frame.pins > frame.waiters.size(), "unpin without a granted pin");
  if (is_update(intent)) {
    require(frame.update_pins > 0, "update unpin without an update pin");
    --frame.update_pins;
  }
  if (--frame.pins == 0) --pinned_frames_;
  if (frame.update_pins == 0 && frame.dirty && frame.in_flush_queue) {
    pump_flush();
  }
  if (frame.pins == 0 && !frame_waiters_.empty()) serve_frame_waiters();
}

void PageCache::mark_dirty(const PageRef& page, uint64_t lsn) {
  require(page.valid() && page.frame < frames_.size(), "mark_dirty of an invalid page");
  Frame& frame = frames_[page.frame];
  require(frame.id == page.id && frame.update_pins > 0, "mark_dirty without an update pin");
  require(!frame.writing, "mark_dirty of a page being written");
  if (!frame.dirty) {
    frame.dirty = true;
    frame.dirty_epoch = epoch_;
    ++dirty_by_epoch_[epoch_];
    ++dirty_pages_;
  }
  frame.lsn = std::max(frame.lsn, lsn);
  set_page_lsn(frame.data, frame.lsn);
}

void PageCache::mark_clean(Frame& frame) {
  auto it = dirty_by_epoch_.find(frame.dirty_epoch);
  require(it != dirty_by_epoch_.end() && it->second > 0, "dirty page count out of step");
  if (--it->second == 0) dirty_by_epoch_.erase(it);
  frame.dirty = false;
  --dirty_pages_;
}

// ---- Writes ----

bool PageCache::can_start_write(const Frame& frame) const {
  return frame.state == FrameState::kResident && frame.dirty && !frame.writing &&
         !frame.log_waiting && frame.update_pins == 0;
}

void PageCache::start_write(uint32_t index, bool for_flush) {
  Frame& frame = frames_[index];
  require(can_start_write(frame), "start_write of a page that may not be written");
  if (undo_.durable_undo_lsn() < frame.lsn) {
    // Write-ahead rule: the undo records of the page's changes go to disk first.
    frame.log_waiting = true;
    frame.write_for_flush = for_flush;
    log_waiting_.push_back(index);
    ++stats_.log_waits;
    undo_.request_undo_flush(frame.lsn);
    return;
  }
  seal_page(frame.data, frame.id);
  frame.writing = true;
  frame.write_for_flush = for_flush;
  ++writes_in_flight_;
  io_.start_write(frame.id, frame.data);
}

void PageCache::flush_dirty(uint64_t token) {
  const uint64_t epoch = ++epoch_;
  flushes_.push_back(PendingFlush{token, epoch, Status::OK()});
  for (uint32_t index = 0; index < frames_.size(); ++index) {
    Frame& frame = frames_[index];
    if (frame.dirty && frame.dirty_epoch < epoch && !frame.in_flush_queue) {
      frame.in_flush_queue = true;
      flush_queue_.push_back(index);
    }
  }
  pump_flush();
  complete_flushes();
}

void PageCache::pump_flush() {
  // Pages an update pin holds stay queued (moved to the back) until it is released.
  size_t deferred = 0;
  while (!flush_queue_.empty() && writes_in_flight_ < config_.writes_in_flight_max &&
         deferred < flush_queue_.size()) {
    const uint32_t index = flush_queue_.front();
    flush_queue_.pop_front();
    Frame& frame = frames_[index];
    if (!frame.dirty || frame.writing || frame.log_waiting) {
      // Clean, or already on its way (its completion settles the flush count).
      frame.in_flush_queue = false;
      continue;
    }
    if (frame.update_pins > 0) {
      flush_queue_.push_back(index);
      ++deferred;
      continue;
    }
    frame.in_flush_queue = false;
    start_write(index, true);
  }
}

void PageCache::complete_flushes() {
  while (!flushes_.empty()) {
    PendingFlush& flush = flushes_.front();
    if (!dirty_by_epoch_.empty() && dirty_by_epoch_.begin()->first < flush.epoch) return;
    ++stats_.flushes_completed;
    flushed_.push_back(FlushDone{flush.token, std::move(flush.status)});
    flushes_.pop_front();
  }
}

void PageCache::on_write_done(PageId id, Status status) {
  auto it = page_table_.find(id.key());
  require(it != page_table_.end(), "write completion for a page not in the cache");
  const uint32_t index = it->second;
  Frame& frame = frames_[index];
  require(frame.writing, "write completion for a page not being written");
  frame.writing = false;
  --writes_in_flight_;
  if (status.ok()) {
    ++stats_.pages_written;
    if (frame.write_for_flush) ++stats_.pages_written_lcp;
    mark_clean(frame);
  } else {
    // The page stays dirty; flushes that waited for it fail, later ones try again.
    ++stats_.write_errors;
    DUO_LOG(ERROR, kLog) << "write of disk page " << page_text(id)
                         << " failed: " << status.to_string();
    for (PendingFlush& flush : flushes_) {
      if (frame.dirty_epoch < flush.epoch && flush.status.ok()) flush.status = status;
    }
    mark_clean(frame);
    frame.dirty = true;
    frame.dirty_epoch = epoch_;
    ++dirty_by_epoch_[epoch_];
    ++dirty_pages_;
  }
  frame.write_for_flush = false;
  // Updaters that waited for the write may change the page now.
  for (const Waiter& waiter : frame.waiters) {
    ++frame.update_pins;
    deliver(waiter.token, id, ref_of(index), Status::OK());
  }
  frame.waiters.clear();
  after_event();
}

void PageCache::on_undo_durable() {
  std::vector<uint32_t> waiting = std::move(log_waiting_);
  log_waiting_.clear();
  for (uint32_t index : waiting) {
    Frame& frame = frames_[index];
    frame.log_waiting = false;
    // start_write checks the rule again: a page still ahead of the durable undo (it may
    // have been changed meanwhile) asks for a flush up to its new LSN and keeps waiting.
    if (can_start_write(frame) && writes_in_flight_ < config_.writes_in_flight_max) {
      start_write(index, frame.write_for_flush);
    } else if (frame.dirty && frame.write_for_flush && !frame.in_flush_queue) {
      frame.in_flush_queue = true;  // pump_flush writes it when it may
      flush_queue_.push_back(index);
    }
    // An eviction write not started here is started again by the next frame search.
  }
  after_event();
}

// ---- Reads ----

void PageCache::on_read_done(PageId id, Status status) {
  auto it = page_table_.find(id.key());
  require(it != page_table_.end(), "read completion for a page not in the cache");
  const uint32_t index = it->second;
  Frame& frame = frames_[index];
  require(frame.state == FrameState::kReading, "read completion for a page not being read");
  --reads_in_flight_;
  if (status.ok()) {
    status = verify_page(frame.data, id);
    if (!status.ok()) ++stats_.checksum_errors;
  } else {
    ++stats_.read_errors;
  }
  if (!status.ok()) {
    DUO_LOG(ERROR, kLog) << "read of disk page " << page_text(id)
                         << " failed: " << status.to_string();
    std::vector<Waiter> waiters = std::move(frame.waiters);
    frame.waiters.clear();
    if (frame.pins > 0) --pinned_frames_;
    frame.pins = 0;
    frame.state = FrameState::kResident;  // for release_frame's checks
    release_frame(index, false);
    for (const Waiter& waiter : waiters) deliver(waiter.token, id, PageRef{}, status);
    after_event();
    return;
  }
  ++stats_.pages_read;
  frame.state = FrameState::kResident;
  frame.lsn = page_lsn(frame.data);
  for (const Waiter& waiter : frame.waiters) {
    if (is_update(waiter.intent)) ++frame.update_pins;
    deliver(waiter.token, id, ref_of(index), Status::OK());
  }
  frame.waiters.clear();
  after_event();
}

uint32_t PageCache::read_ahead(uint32_t file_no, uint32_t first_page, uint32_t count) {
  uint32_t started = 0;
  if (!frame_waiters_.empty()) return 0;  // frames go to waiting requests first
  count = std::min(count, config_.read_ahead_pages_max);
  for (uint32_t i = 0; i < count && first_page + i >= first_page; ++i) {
    const PageId id{file_no, first_page + i};
    if (page_table_.count(id.key()) != 0) continue;
    const uint32_t index = acquire_frame(false);
    if (index == TwoQueuePolicy::kNone) break;
    Frame& frame = frames_[index];
    frame.id = id;
    frame.state = FrameState::kReading;
    page_table_.emplace(id.key(), index);
    policy_.on_prefetch(index);
    ++reads_in_flight_;
    ++started;
    ++stats_.read_ahead_pages;
    io_.start_read(id, frame.data);
  }
  return started;
}

Status PageCache::drop_file(uint32_t file_no) {
  std::vector<uint32_t> drop;
  for (uint32_t index = 0; index < frames_.size(); ++index) {
    const Frame& frame = frames_[index];
    if (frame.state == FrameState::kFree || frame.id.file_no != file_no) continue;
    if (frame.pins > 0 || frame.state == FrameState::kReading || frame.writing) {
      return Status(ErrorCode::kTemporary, "page cache: a page of file " + std::to_string(file_no) +
                                               " is in use; retry");
    }
    drop.push_back(index);
  }
  for (uint32_t index : drop) {
    frames_[index].in_flush_queue = false;
    release_frame(index, false);
  }
  // Queue entries for dropped frames are skipped by pump_flush (they are clean now).
  complete_flushes();
  return Status::OK();
}

// ---- Frame waiters ----

void PageCache::serve_frame_waiters() {
  while (!frame_waiters_.empty()) {
    const FrameWaiter waiter = frame_waiters_.front();
    auto it = page_table_.find(waiter.id.key());
    if (it != page_table_.end()) {
      // Someone else brought the page in meanwhile.
      frame_waiters_.pop_front();
      policy_.on_access(it->second);
      Frame& frame = frames_[it->second];
      if (frame.pins++ == 0) ++pinned_frames_;
      if (frame.state == FrameState::kReading || (is_update(waiter.intent) && frame.writing)) {
        frame.waiters.push_back(Waiter{waiter.token, waiter.intent});
      } else {
        if (is_update(waiter.intent)) ++frame.update_pins;
        deliver(waiter.token, waiter.id, ref_of(it->second), Status::OK());
      }
      continue;
    }
    const uint32_t index = acquire_frame(true);
    if (index == TwoQueuePolicy::kNone) break;
    frame_waiters_.pop_front();
    const PageGrant grant = bind_frame(index, waiter.id, waiter.intent, waiter.token);
    if (grant.ready) deliver(waiter.token, waiter.id, grant.page, Status::OK());
  }
  if (frame_waiters_.empty()) return;
  const bool can_progress = reads_in_flight_ > 0 || writes_in_flight_ > 0 || !log_waiting_.empty();
  if (can_progress) return;
  // Nothing in flight can free a frame: every frame is pinned. Refuse instead of waiting.
  while (!frame_waiters_.empty()) {
    const FrameWaiter waiter = frame_waiters_.front();
    frame_waiters_.pop_front();
    ++stats_.waiters_refused;
    deliver(waiter.token, waiter.id, PageRef{}, Status(ErrorCode::kTemporary, full_message()));
  }
}

void PageCache::after_event() {
  pump_flush();
  if (!frame_waiters_.empty()) serve_frame_waiters();
  complete_flushes();
}

// ---- Results and statistics ----

std::vector<PageReady> PageCache::take_ready() { return std::exchange(ready_, {}); }
std::vector<FlushDone> PageCache::take_flushed() { return std::exchange(flushed_, {}); }

PageCacheStats PageCache::stats() const {
  PageCacheStats stats = stats_;
  stats.frames_in_use = static_cast<uint32_t>(frames_.size() - free_frames_.size());
  stats.pages_dirty = dirty_pages_;
  stats.frames_pinned = pinned_frames_;
  stats.reads_in_flight = reads_in_flight_;
  stats.writes_in_flight = writes_in_flight_;
  stats.frame_waiters = static_cast<uint32_t>(frame_waiters_.size());
  return stats;
}

Status PageCache::check_invariants() const {
  auto fail = [](const std::string& what) { return Status(ErrorCode::kInternal, what); };
  uint32_t mapped = 0, pinned = 0, dirty = 0, reading = 0, writing = 0;
  std::map<uint64_t, uint32_t> by_epoch;
  for (uint32_t index = 0; index < frames_.size(); ++index) {
    const Frame& frame = frames_[index];
    if (frame.state == FrameState::kFree) {
      if (frame.pins != 0 || frame.dirty || frame.writing || !frame.waiters.empty()) {
        return fail("free frame " + std::to_string(index) + " has state");
      }
      continue;
    }
    ++mapped;
    auto it = page_table_.find(frame.id.key());
    if (it == page_table_.end() || it->second != index) {
      return fail("frame " + std::to_string(index) + " not in the page table");
    }
    if (frame.pins > 0) ++pinned;
    if (frame.pins < frame.waiters.size() + frame.update_pins) {
      return fail("frame " + std::to_string(index) + " has fewer pins than holders");
    }
    if (frame.state == FrameState::kReading) {
      ++reading;
      if (frame.pins != frame.waiters.size() || frame.dirty) {
        return fail("reading frame " + std::to_string(index) + " pins or dirty out of step");
      }
    }
    if (frame.writing) {
      ++writing;
      if (frame.update_pins != 0) return fail("frame being written has an update pin");
    }
    if (frame.dirty) {
      ++dirty;
      ++by_epoch[frame.dirty_epoch];
    }
  }
  if (mapped != page_table_.size()) return fail("page table size differs from frames in use");
  if (mapped + free_frames_.size() != frames_.size()) return fail("frames lost");
  if (pinned != pinned_frames_) return fail("pinned frame count out of step");
  if (dirty != dirty_pages_) return fail("dirty page count out of step");
  if (by_epoch != dirty_by_epoch_) return fail("dirty pages by epoch out of step");
  if (reading != reads_in_flight_) return fail("reads in flight out of step");
  if (writing != writes_in_flight_) return fail("writes in flight out of step");
  const PageCacheStats& s = stats_;
  if (s.page_requests != s.page_requests_direct_return + s.page_requests_wait_io +
                             s.page_requests_wait_queue + s.page_requests_refused) {
    return fail("request statistics do not add up");
  }
  return Status::OK();
}

}  // namespace duo::storage
