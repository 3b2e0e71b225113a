// PageFileIo: the page cache's IO (storage::PageIo) done by the node's file system block —
// the piece a block that owns a PageCache (local_query with disk columns, next) plugs in.
// start_read / start_write send FS_PAGE_READREQ / FS_PAGE_WRITEREQ naming the frame's
// memory (fs_messages.h "Page IO"); the owner hands every FS answer that owns() claims to
// on_fs_answer(), which reports the completion to the cache. The owner then drains the
// cache's take_ready() and resumes the operations parked on those tokens.
//
// Files: the owner opens each data file itself (FS_OPENREQ with kFsDirectIo) and
// registers its handle with add_file(file_no, handle). A page of a file not registered
// is sent with handle 0 and comes back as FS_REF kInvalidArgument — a completion like
// any other, never a call back into the cache from inside start_read/start_write.
// A request the runtime refuses to send (its queue full) is kept and reported to the
// cache as a kTemporary failure by report_send_failures(), which the owner calls after
// handling each signal (so the cache is never re-entered from its own call).
//
// Thread-safety: the owner block's thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/runtime/signal.h"
#include "storage/page_cache/page_cache.h"

namespace duo::fs_client {

class PageFileIo final : public storage::PageIo {
 public:
  // Sends a request to the node's file system block (the owner's Block::send).
  using SendFn = std::function<Status(kernel::Signal)>;

  // `tag` (1..65535) marks this object's user_refs; unique per owner block.
  PageFileIo(uint16_t tag, uint16_t node_id, SendFn send);

  // The cache completions go to; set once, before the first IO.
  void set_cache(storage::PageCache* cache) { cache_ = cache; }
  void add_file(uint32_t file_no, uint32_t handle) { handles_[file_no] = handle; }
  void remove_file(uint32_t file_no) { handles_.erase(file_no); }

  void start_read(storage::PageId id, uint8_t* frame) override;
  void start_write(storage::PageId id, const uint8_t* frame) override;

  // True for FS_PAGE_CONF / FS_REF answers to this object's requests.
  bool owns(const kernel::Signal& signal) const;
  void on_fs_answer(kernel::Signal& signal);
  // Reports requests that could not be sent as kTemporary IO failures.
  void report_send_failures();
  uint32_t in_flight() const { return static_cast<uint32_t>(in_flight_.size()); }

 private:
  struct InFlight {
    storage::PageId id;
    bool write = false;
  };
  void start(storage::PageId id, uint8_t* frame, bool write);

  const uint16_t tag_;
  const uint16_t node_id_;
  const SendFn send_;
  storage::PageCache* cache_ = nullptr;
  std::unordered_map<uint32_t, uint32_t> handles_;    // file_no -> FS handle
  std::unordered_map<uint32_t, InFlight> in_flight_;  // user_ref -> request
  std::vector<std::pair<InFlight, Status>> send_failures_;
  uint16_t next_sequence_ = 0;
};

}  // namespace duo::fs_client
