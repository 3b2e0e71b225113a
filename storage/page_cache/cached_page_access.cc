#include "storage/page_cache/cached_page_access.h"

#include <cstdio>
#include <cstdlib>

namespace duo::storage {
namespace {

[[noreturn]] void pin_bug(const char* what, disk::DiskPageId id) {
  std::fprintf(stderr, "CachedPageAccess: %s (page %u:%u)\n", what, id.file_no, id.page_no);
  std::abort();  // disk row code touched a page no one pinned: corruption must not spread
}

bool covers(PageIntent held, PageIntent wanted) {
  return wanted == PageIntent::kRead || held != PageIntent::kRead;
}

}  // namespace

bool CachedPageAccess::holds(Holder holder, disk::DiskPageId id, PageIntent intent) const {
  auto it = by_holder_.find(holder);
  if (it == by_holder_.end()) return false;
  const uint64_t key = id.key();
  for (const HeldPin& p : it->second) {
    if (p.ref.id.key() == key && covers(p.intent, intent)) return true;
  }
  return false;
}

Result<CachedPageAccess::PinState> CachedPageAccess::pin(Holder holder, disk::DiskPageId id,
                                                         PageIntent intent) {
  if (holds(holder, id, intent)) return PinState::kReady;
  for (const auto& [token, w] : waiting_) {
    (void)token;
    if (w.holder == holder && !w.orphan && w.id == id && covers(w.intent, intent))
      return PinState::kWaiting;
  }
  const uint64_t token = next_token_++;
  DUO_ASSIGN_OR_RETURN(PageGrant grant, cache_->request_page(id, intent, token));
  if (grant.ready) {
    record(holder, grant.page, intent);
    return PinState::kReady;
  }
  waiting_.emplace(token, Waiting{holder, id, intent});
  return PinState::kWaiting;
}

void CachedPageAccess::record(Holder holder, const PageRef& ref, PageIntent intent) {
  by_holder_[holder].push_back(HeldPin{ref, intent});
  Pinned& p = pinned_[ref.id.key()];
  p.data = ref.data;
  ++p.pins;
  if (intent != PageIntent::kRead) {
    p.update_ref = ref;
    ++p.update_pins;
  }
}

void CachedPageAccess::unpin(const HeldPin& pin) {
  auto it = pinned_.find(pin.ref.id.key());
  if (it == pinned_.end())
    pin_bug("unpin of a page not pinned", {pin.ref.id.file_no, pin.ref.id.page_no});
  Pinned& p = it->second;
  --p.pins;
  if (pin.intent != PageIntent::kRead) --p.update_pins;
  if (p.pins == 0) pinned_.erase(it);
  cache_->unpin(pin.ref, pin.intent);
}

void CachedPageAccess::release(Holder holder) {
  for (auto& [token, w] : waiting_) {
    (void)token;
    if (w.holder == holder) w.orphan = true;
  }
  auto it = by_holder_.find(holder);
  if (it == by_holder_.end()) return;
  const std::vector<HeldPin> pins = std::move(it->second);
  by_holder_.erase(it);
  for (const HeldPin& p : pins) unpin(p);
}

std::vector<CachedPageAccess::Arrival> CachedPageAccess::take_arrivals() {
  std::vector<Arrival> out;
  for (PageReady& r : cache_->take_ready()) {
    auto it = waiting_.find(r.token);
    if (it == waiting_.end()) continue;  // every request of the cache is made here
    const Waiting w = it->second;
    waiting_.erase(it);
    if (w.orphan) {
      if (r.status.ok()) cache_->unpin(r.page, w.intent);
      continue;
    }
    if (r.status.ok()) record(w.holder, r.page, w.intent);
    out.push_back(Arrival{w.holder, w.id, std::move(r.status)});
  }
  return out;
}

uint8_t* CachedPageAccess::page(disk::DiskPageId id) {
  auto it = pinned_.find(id.key());
  if (it == pinned_.end()) pin_bug("page not pinned", id);
  return it->second.data;
}

void CachedPageAccess::mark_dirty(disk::DiskPageId id) {
  auto it = pinned_.find(id.key());
  if (it == pinned_.end() || it->second.update_pins == 0)
    pin_bug("page changed without an update pin", id);
  cache_->mark_dirty(it->second.update_ref, disk::page_lsn(it->second.data));
}

}  // namespace duo::storage
