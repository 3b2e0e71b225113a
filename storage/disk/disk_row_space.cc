#include "storage/disk/disk_row_space.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace duo::storage::disk {
namespace {

[[noreturn]] void invariant_failed(const char* what) {
  std::fprintf(stderr, "DiskRowSpace invariant failed: %s\n", what);
  std::abort();  // corruption must not spread
}

// Undo bytes of the records an install may append.
constexpr uint32_t kNewEntryUndoBytes = 2 * undo_record_bytes(0);  // page init + entry alloc

Status check_size(uint32_t size_bytes) {
  if (size_bytes > kMaxDiskPartBytes) {
    return Status(ErrorCode::kRowTooBig, "disk part of " + std::to_string(size_bytes) + " bytes exceeds one page (" +
                                             std::to_string(kMaxDiskPartBytes) + ")");
  }
  if (size_bytes < kMinDiskPartBytes) return Status(ErrorCode::kInvalidArgument, "disk part below its minimum size");
  return Status::OK();
}

}  // namespace

DiskRowSpace::DiskRowSpace(FragmentOwner owner, Tablespace* tablespace, UndoLog* undo, DiskPageAccess* pages)
    : owner_(owner), tablespace_(tablespace), undo_(undo), pages_(pages), buckets_(kBuckets) {}

int DiskRowSpace::bucket_of(uint32_t available) {
  if (available < 16) return -1;
  const int b = static_cast<int>(std::bit_width(available)) - 5;  // 16..31 -> 0
  return b < kBuckets ? b : kBuckets - 1;
}

uint32_t DiskRowSpace::available(const PageSpace& p) const {
  const uint64_t taken = uint64_t{p.reserved} + p.held;
  return p.free_bytes > taken ? static_cast<uint32_t>(p.free_bytes - taken) : 0;
}

void DiskRowSpace::rebucket(uint32_t index) {
  PageSpace& p = spaces_[index];
  const int b = bucket_of(available(p));
  if (b == p.bucket) return;
  if (p.bucket >= 0) {
    std::vector<uint32_t>& list = buckets_[p.bucket];
    const uint32_t moved = list.back();
    list[p.bucket_pos] = moved;
    spaces_[moved].bucket_pos = p.bucket_pos;
    list.pop_back();
  }
  p.bucket = static_cast<int8_t>(b);
  if (b >= 0) {
    p.bucket_pos = static_cast<uint32_t>(buckets_[b].size());
    buckets_[b].push_back(index);
  }
}

uint32_t DiskRowSpace::index_of(DiskPageId id) const {
  // Pages are found through their extent: one map entry per extent, not per page.
  const DatafileLayout* layout = tablespace_->layout_of(id.file_no);
  if (layout == nullptr || !layout->is_extent_page(id.page_no)) return kNoPage;
  const uint32_t extent = layout->extent_of(id.page_no);
  auto it = position_by_extent_.find(uint64_t{id.file_no} << 32 | extent);
  if (it == position_by_extent_.end()) return kNoPage;
  return it->second * tablespace_->extent_pages() + (id.page_no - layout->page_of(extent, 0).page_no);
}

void DiskRowSpace::add_extent_pages(ExtentId extent, bool from_headers) {
  position_by_extent_.emplace(uint64_t{extent.file} << 32 | extent.extent, static_cast<uint32_t>(extents_.size()));
  extents_.push_back(extent);
  for (uint32_t i = 0; i < tablespace_->extent_pages(); ++i) {
    PageSpace p;
    p.id = tablespace_->page_of(extent, i);
    const uint8_t cls = from_headers ? tablespace_->page_class(p.id) : kEmptyPageClass;
    if (cls == kEmptyPageClass) {
      // Empty: whatever bytes the page holds are formatted over at first use.
      p.free_bytes = VarPage::empty_free_bytes(kRowPageLayoutOffset);
      p.exact = true;
      p.formatted = false;
    } else {
      p.free_bytes = cls >= kFullPageClass ? 0 : class_min_usable(cls) + VarPage::kDirBytes;
      p.exact = false;
      p.formatted = true;
    }
    const uint32_t index = static_cast<uint32_t>(spaces_.size());
    spaces_.push_back(p);
    rebucket(index);
  }
}

void DiskRowSpace::attach_extent(ExtentId extent) { add_extent_pages(extent, true); }

uint32_t DiskRowSpace::find_page(uint32_t need, const PageResidency& resident, bool exhaustive) const {
  // Buckets above need's own always fit; in need's own bucket each page is checked.
  // Look at a few pages per bucket (all of need's own bucket when exhaustive), tightest
  // bucket first. Take the first page in the cache; else the first never-formatted page
  // (no read: the cache hands out a zeroed frame); else the first that fits (a read).
  constexpr size_t kProbe = 8;
  uint32_t fresh = kNoPage;
  uint32_t uncached = kNoPage;
  const int own = bucket_of(need);
  for (int b = own < 0 ? 0 : own; b < kBuckets; ++b) {
    const std::vector<uint32_t>& list = buckets_[b];
    const size_t probe = (b == own && exhaustive) ? list.size() : std::min(list.size(), kProbe);
    for (size_t i = 0; i < probe; ++i) {
      const uint32_t index = list[i];
      const PageSpace& p = spaces_[index];
      if (available(p) < need) continue;
      if (!p.formatted) {
        if (fresh == kNoPage) fresh = index;
      } else if (resident && resident(p.id)) {
        return index;
      } else if (uncached == kNoPage) {
        uncached = index;
      }
    }
  }
  return fresh != kNoPage ? fresh : uncached;
}

Result<uint32_t> DiskRowSpace::reserve_room(uint32_t need, const PageResidency& resident) {
  uint32_t index = find_page(need, resident, false);
  if (index == kNoPage && tablespace_->free_extent_count() == 0) index = find_page(need, resident, true);
  if (index == kNoPage) {
    DUO_RETURN_IF_ERROR(undo_->reserve(Tablespace::kExtentAllocUndoBytes));
    auto extent = tablespace_->allocate_extent(owner_);
    if (!extent.ok()) {
      undo_->unreserve(Tablespace::kExtentAllocUndoBytes);
      return extent.take_status();
    }
    index = static_cast<uint32_t>(spaces_.size());
    add_extent_pages(*extent, false);
  }
  spaces_[index].reserved += need;
  rebucket(index);
  return index;
}

Result<DiskOpId> DiskRowSpace::new_op(const Op& op) {
  DiskOpId id;
  if (!free_ops_.empty()) {
    id = free_ops_.back();
    free_ops_.pop_back();
    ops_[id] = op;
  } else {
    id = static_cast<DiskOpId>(ops_.size());
    ops_.push_back(op);
  }
  ++live_ops_;
  return id;
}

Result<uint32_t> DiskRowSpace::committed_size(DiskRef ref, uint32_t* index) const {
  *index = index_of(ref.page_id());
  if (*index == kNoPage || !spaces_[*index].formatted) {
    return Status(ErrorCode::kInvalidArgument, "disk ref names no page of this fragment");
  }
  const uint8_t* page = pages_->page(ref.page_id());
  if (page_kind(page) != DiskPageKind::kRowPage) {
    // A page this fragment formatted reads back as something else: never build on it.
    return Status(ErrorCode::kCorruption, "disk page " + std::to_string(ref.file) + ":" + std::to_string(ref.page) +
                                              " is not a row page");
  }
  const VarPage layout = row_page(pages_->page(ref.page_id()));
  if (!layout.is_live(ref.slot)) return Status(ErrorCode::kInvalidArgument, "disk ref names no row part");
  return layout.size(ref.slot);
}

Result<DiskOpId> DiskRowSpace::prepare_insert(uint32_t size_bytes, const PageResidency& resident) {
  DUO_RETURN_IF_ERROR(check_size(size_bytes));
  DUO_RETURN_IF_ERROR(undo_->reserve(kNewEntryUndoBytes));
  const uint32_t need = size_bytes + VarPage::kDirBytes;
  auto index = reserve_room(need, resident);
  if (!index.ok()) {
    undo_->unreserve(kNewEntryUndoBytes);
    return index.take_status();
  }
  Op op;
  op.kind = OpKind::kInsert;
  op.new_size = size_bytes;
  op.target_index = *index;
  op.target_reserved = need;
  op.undo_reserved = kNewEntryUndoBytes;
  return new_op(op);
}

Result<DiskOpId> DiskRowSpace::prepare_update(DiskRef current, uint32_t new_size_bytes, const PageResidency& resident) {
  DUO_RETURN_IF_ERROR(check_size(new_size_bytes));
  Op op;
  op.current = current;
  DUO_ASSIGN_OR_RETURN(op.current_size, committed_size(current, &op.current_index));
  op.new_size = new_size_bytes;
  const uint32_t growth = new_size_bytes > op.current_size ? new_size_bytes - op.current_size : 0;
  if (growth <= available(spaces_[op.current_index])) {
    // In place: a rewrite (and resize) of the entry, undone from its old bytes.
    op.kind = OpKind::kUpdateInPlace;
    op.undo_reserved = undo_record_bytes(op.current_size);
    DUO_RETURN_IF_ERROR(undo_->reserve(op.undo_reserved));
    op.target_index = op.current_index;
    op.target_reserved = growth;
    spaces_[op.current_index].reserved += growth;
    rebucket(op.current_index);
    return new_op(op);
  }
  // The page lacks room: the part moves to a page with room.
  op.kind = OpKind::kUpdateMove;
  op.undo_reserved = kNewEntryUndoBytes + undo_record_bytes(op.current_size);
  DUO_RETURN_IF_ERROR(undo_->reserve(op.undo_reserved));
  const uint32_t need = new_size_bytes + VarPage::kDirBytes;
  auto index = reserve_room(need, resident);
  if (!index.ok()) {
    undo_->unreserve(op.undo_reserved);
    return index.take_status();
  }
  op.target_index = *index;
  op.target_reserved = need;
  return new_op(op);
}

Result<DiskOpId> DiskRowSpace::prepare_delete(DiskRef current) {
  Op op;
  op.kind = OpKind::kDelete;
  op.current = current;
  if (current.valid()) {
    DUO_ASSIGN_OR_RETURN(op.current_size, committed_size(current, &op.current_index));
    op.undo_reserved = undo_record_bytes(op.current_size);
    DUO_RETURN_IF_ERROR(undo_->reserve(op.undo_reserved));
  }
  return new_op(op);
}

DiskOpPages DiskRowSpace::pages_for(DiskOpId id) const {
  const Op& op = ops_[id];
  DiskOpPages out;
  out.current = op.current;
  if (op.kind == OpKind::kInsert || op.kind == OpKind::kUpdateMove) {
    out.has_target = true;
    out.target = spaces_[op.target_index].id;
    out.target_fresh = !spaces_[op.target_index].formatted;
  }
  return out;
}

uint64_t DiskRowSpace::append_undo(Op* op, const UndoRecord& record) {
  const uint32_t size = undo_record_bytes(static_cast<uint32_t>(record.before.size()));
  if (size > op->undo_reserved) invariant_failed("undo record beyond the operation's reservation");
  op->undo_reserved -= size;
  return undo_->append(record);
}

DiskRowSpace::CurrentEntryChange DiskRowSpace::log_current_entry(Op* op, UndoType type) {
  PageSpace& p = spaces_[op->current_index];
  CurrentEntryChange c;
  c.page = pages_->page(p.id);
  const VarPage layout = row_page(c.page);
  if (!p.exact) p.free_bytes = layout.free_bytes();
  c.free_before = layout.free_bytes();
  UndoRecord rec;
  rec.type = type;
  rec.page = p.id;
  rec.slot = op->current.slot;
  rec.before = std::span<const uint8_t>(layout.data(op->current.slot), layout.size(op->current.slot));
  c.lsn = append_undo(op, rec);
  return c;
}

uint32_t DiskRowSpace::settle(uint32_t index, uint32_t reservation_used, uint32_t free_before, uint64_t lsn) {
  // Availability (free - reserved - held) must not change at install: the bytes the
  // page gained, and what the reservation did not use, are held until the end.
  PageSpace& p = spaces_[index];
  uint8_t* page = pages_->page(p.id);
  const uint32_t free_after = row_page(page).free_bytes();
  const int64_t held = int64_t{reservation_used} + int64_t{free_after} - int64_t{free_before};
  if (held < 0) invariant_failed("install used more than its reservation");
  if (reservation_used > p.reserved) invariant_failed("page reservation underflow");
  p.reserved -= reservation_used;
  p.held += static_cast<uint32_t>(held);
  p.free_bytes = free_after;
  p.exact = true;
  tablespace_->set_page_class(p.id, page_free_class(page), lsn);
  rebucket(index);
  return static_cast<uint32_t>(held);
}

DiskRef DiskRowSpace::place(Op* op, uint32_t index, std::span<const uint8_t> bytes) {
  PageSpace& p = spaces_[index];
  uint8_t* page = pages_->page(p.id);
  if (!p.formatted) {
    UndoRecord init;
    init.type = UndoType::kPageInit;
    init.page = p.id;
    const uint64_t lsn = append_undo(op, init);
    set_page_identity(page, DiskPageKind::kRowPage, p.id);
    row_page(page).format();
    set_page_lsn(page, lsn);
    p.formatted = true;
  } else if (!p.exact) {
    // The class gave a lower bound; the page itself tells the truth.
    p.free_bytes = row_page(page).free_bytes();
    p.exact = true;
  }
  VarPage layout = row_page(page);
  const uint32_t free_before = layout.free_bytes();
  if (!layout.fits_new(static_cast<uint32_t>(bytes.size()))) invariant_failed("reserved page has no room");
  const uint32_t slot = layout.allocate(static_cast<uint32_t>(bytes.size()));
  std::memcpy(layout.data(slot), bytes.data(), bytes.size());
  UndoRecord rec;
  rec.type = UndoType::kEntryAlloc;
  rec.page = p.id;
  rec.slot = slot;
  const uint64_t lsn = append_undo(op, rec);
  set_page_lsn(page, lsn);
  pages_->mark_dirty(p.id);
  op->target_held += settle(index, op->target_reserved, free_before, lsn);
  op->target_reserved = 0;
  return DiskRef{static_cast<uint16_t>(p.id.file_no), static_cast<uint16_t>(slot), p.id.page_no};
}

DiskRef DiskRowSpace::install(DiskOpId id, std::span<const uint8_t> bytes) {
  Op* op = &ops_[id];
  if (op->installed || op->kind == OpKind::kNone) invariant_failed("install of an installed or released operation");
  if (op->aborted) invariant_failed("install of an aborted operation");
  if (op->kind != OpKind::kDelete && bytes.size() != op->new_size) invariant_failed("install with another size");
  op->installed = true;
  DiskRef result = kNoDiskRef;
  switch (op->kind) {
    case OpKind::kInsert:
      result = place(op, op->target_index, bytes);
      break;
    case OpKind::kUpdateInPlace: {
      const CurrentEntryChange c = log_current_entry(op, UndoType::kEntryUpdate);
      VarPage layout = row_page(c.page);
      if (!layout.try_grow(op->current.slot, op->new_size)) invariant_failed("reserved growth does not fit");
      std::memcpy(layout.data(op->current.slot), bytes.data(), bytes.size());
      set_page_lsn(c.page, c.lsn);
      pages_->mark_dirty(spaces_[op->current_index].id);
      op->target_held += settle(op->current_index, op->target_reserved, c.free_before, c.lsn);
      op->target_reserved = 0;
      result = op->current;
      break;
    }
    case OpKind::kUpdateMove:
    case OpKind::kDelete: {
      if (op->kind == OpKind::kUpdateMove) result = place(op, op->target_index, bytes);
      if (!op->current.valid()) break;
      const CurrentEntryChange c = log_current_entry(op, UndoType::kEntryFree);
      row_page(c.page).free(op->current.slot);
      set_page_lsn(c.page, c.lsn);
      pages_->mark_dirty(spaces_[op->current_index].id);
      op->current_held += settle(op->current_index, 0, c.free_before, c.lsn);
      break;
    }
    case OpKind::kNone:
      break;
  }
  return result;
}

void DiskRowSpace::abort(DiskOpId id) {
  Op& op = ops_[id];
  if (op.kind == OpKind::kNone || op.installed) invariant_failed("abort of a released or installed operation");
  op.aborted = true;
}

void DiskRowSpace::release(DiskOpId id) {
  Op& op = ops_[id];
  if (op.kind == OpKind::kNone) invariant_failed("release of a released operation");
  if (op.target_index != kNoPage) {
    PageSpace& t = spaces_[op.target_index];
    if (t.reserved < op.target_reserved || t.held < op.target_held) invariant_failed("target accounting underflow");
    t.reserved -= op.target_reserved;
    t.held -= op.target_held;
    rebucket(op.target_index);
  }
  if (op.current_index != kNoPage && op.current_held > 0) {
    PageSpace& c = spaces_[op.current_index];
    if (c.held < op.current_held) invariant_failed("current accounting underflow");
    c.held -= op.current_held;
    rebucket(op.current_index);
  }
  undo_->unreserve(op.undo_reserved);
  op = Op{};
  free_ops_.push_back(id);
  --live_ops_;
}

std::span<uint8_t> DiskRowSpace::part(DiskRef ref) const {
  VarPage layout = row_page(pages_->page(ref.page_id()));
  return {layout.data(ref.slot), layout.size(ref.slot)};
}

bool DiskRowSpace::is_live(DiskRef ref) const {
  const uint32_t index = index_of(ref.page_id());
  if (index == kNoPage || !spaces_[index].formatted) return false;
  uint8_t* page = pages_->page(ref.page_id());
  return page_kind(page) == DiskPageKind::kRowPage && row_page(page).is_live(ref.slot);
}

Status DiskRowSpace::drop() {
  if (live_ops_ != 0) return Status(ErrorCode::kTransactionState, "disk row space has live operations");
  const uint64_t undo_bytes = uint64_t{tablespace_->extent_free_undo_bytes()} * extents_.size();
  DUO_RETURN_IF_ERROR(undo_->reserve(undo_bytes));
  for (const ExtentId& e : extents_) tablespace_->free_extent(e);
  extents_.clear();
  spaces_.clear();
  position_by_extent_.clear();
  for (auto& list : buckets_) list.clear();
  return Status::OK();
}

DiskSpaceStats DiskRowSpace::stats() const {
  DiskSpaceStats s;
  s.extents = extents_.size();
  s.pages = spaces_.size();
  for (const PageSpace& p : spaces_) {
    s.reserved_bytes += p.reserved;
    s.held_bytes += p.held;
  }
  s.live_operations = live_ops_;
  return s;
}

DiskRowSpace::Usage DiskRowSpace::usage() const {
  Usage u;
  for (const PageSpace& p : spaces_) {
    if (!p.formatted) continue;
    const VarPage layout = row_page(pages_->page(p.id));
    for (uint32_t s = 0; s < layout.dir_count(); ++s) {
      if (!layout.is_live(s)) continue;
      ++u.entries;
      u.bytes += layout.size(s);
    }
  }
  return u;
}

Status DiskRowSpace::check_consistency() const {
  for (const PageSpace& p : spaces_) {
    const std::string where = "page " + std::to_string(p.id.file_no) + ":" + std::to_string(p.id.page_no) + ": ";
    uint8_t* page = pages_->page(p.id);
    const uint8_t cls = p.formatted ? page_free_class(page) : kEmptyPageClass;
    if (tablespace_->page_class(p.id) != cls) {
      return Status(ErrorCode::kCorruption, where + "extent header class " +
                                                std::to_string(tablespace_->page_class(p.id)) + ", page says " +
                                                std::to_string(cls));
    }
    const uint32_t actual =
        p.formatted ? row_page(page).free_bytes() : VarPage::empty_free_bytes(kRowPageLayoutOffset);
    if (p.exact ? actual != p.free_bytes : actual < p.free_bytes) {
      return Status(ErrorCode::kCorruption, where + "free bytes " + std::to_string(p.free_bytes) + " in memory, " +
                                                std::to_string(actual) + " on the page");
    }
    if (uint64_t{p.reserved} + p.held > actual) {
      return Status(ErrorCode::kCorruption, where + "reserved and held bytes exceed the page's free bytes");
    }
    if (live_ops_ == 0 && (p.reserved != 0 || p.held != 0)) {
      return Status(ErrorCode::kCorruption, where + "space still reserved or held with no live operation");
    }
  }
  return Status::OK();
}

}  // namespace duo::storage::disk
