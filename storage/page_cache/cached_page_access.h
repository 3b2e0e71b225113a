// CachedPageAccess: disk row storage's DiskPageAccess (storage/disk) over a PageCache,
// with the pins kept per holder — what an LDM thread uses to run disk-part operations
// the way NDB's DBTUP does with PGMAN: before an operation runs, every page it needs is
// pinned for its holder (a transaction, a read request, a scan batch); a miss answers
// kWaiting and the holder is parked; when the read completes, take_arrivals() names the
// holder, which runs again and finds the page pinned. Disk row code then only calls
// page()/mark_dirty() on pages some holder pinned (a page no one pinned is a bug and
// aborts the node). release(holder) drops every pin of the holder, including those of
// reads still on their way (they are unpinned when they arrive).
//
// No pin deadlock: the cache refuses (kTemporary) a request it could never serve
// because every frame is pinned; pin() returns that error and the owner aborts the
// holder's operation or transaction, releasing its pins.
//
// Thread-safety: none; the thread that owns the PageCache.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/disk/disk_page_access.h"
#include "storage/page_cache/page_cache.h"

namespace duo::storage {

class CachedPageAccess final : public disk::DiskPageAccess {
 public:
  using Holder = uint64_t;
  enum class PinState : uint8_t { kReady, kWaiting };
  // A holder whose wait for a page ended (status: the read failed or was refused).
  struct Arrival {
    Holder holder = 0;
    disk::DiskPageId page;
    Status status;
  };

  explicit CachedPageAccess(PageCache* cache) : cache_(cache) {}
  CachedPageAccess(const CachedPageAccess&) = delete;
  CachedPageAccess& operator=(const CachedPageAccess&) = delete;

  // Pins `id` for `holder` (kUpdate/kCreate also serve reads). kReady: pinned now (or
  // already held); kWaiting: it arrives through take_arrivals(); an error: nothing pinned.
  Result<PinState> pin(Holder holder, disk::DiskPageId id, PageIntent intent);
  // True when `holder` holds `id` pinned with an intent that covers `intent`.
  bool holds(Holder holder, disk::DiskPageId id, PageIntent intent) const;
  // Releases every pin of `holder` (and those of its reads still in flight).
  void release(Holder holder);
  // Drains the cache's finished waits: pins them for their holders and reports them.
  std::vector<Arrival> take_arrivals();
  // Whether the cache holds the page now (allocation prefers such pages).
  bool resident(disk::DiskPageId id) const { return cache_->is_resident(id); }
  size_t pinned_pages() const { return pinned_.size(); }
  size_t holders() const { return by_holder_.size(); }

  // disk::DiskPageAccess
  uint8_t* page(disk::DiskPageId id) override;
  void mark_dirty(disk::DiskPageId id) override;

 private:
  struct HeldPin {
    PageRef ref;
    PageIntent intent;
  };
  struct Pinned {
    uint8_t* data = nullptr;
    PageRef update_ref;  // a pin for update, if any (mark_dirty needs one)
    uint32_t pins = 0;
    uint32_t update_pins = 0;
  };
  struct Waiting {
    Holder holder;
    disk::DiskPageId id;
    PageIntent intent;
    bool orphan = false;  // its holder was released meanwhile
  };
  void record(Holder holder, const PageRef& ref, PageIntent intent);
  void unpin(const HeldPin& pin);

  PageCache* const cache_;
  uint64_t next_token_ = 1;
  std::unordered_map<uint64_t, Waiting> waiting_;  // cache token -> wait
  std::unordered_map<Holder, std::vector<HeldPin>> by_holder_;
  std::unordered_map<uint64_t, Pinned> pinned_;  // PageId::key() -> pins
};

}  // namespace duo::storage
