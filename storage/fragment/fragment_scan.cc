// Fragment: full and ordered-index scans with pushed filters and projection.
#include <cstring>

#include "storage/fragment/fragment_records.h"

namespace duo::storage {

// ---------------------------------------------------------------------------------------
// Scans.

Result<std::unique_ptr<Fragment::Scan>> Fragment::open_scan(ScanSpec spec) {
  if (spec.index >= static_cast<int>(ordered_.size())) {
    return Status(ErrorCode::kInvalidArgument, "no such ordered index");
  }
  if (spec.tx != kNullId && !is_active(spec.tx)) {
    return Status(ErrorCode::kTransactionState, "no such transaction");
  }
  for (uint16_t c : spec.columns) {
    if (c >= schema_->columns.size()) return Status(ErrorCode::kInvalidArgument, "bad projection");
  }
  if (spec.filter && !spec.filter->is_bound()) {
    return Status(ErrorCode::kInvalidArgument, "scan filter is not bound to the table");
  }
  return std::unique_ptr<Scan>(new Scan(this, std::move(spec)));
}

namespace {

// True when `filter` reads the value (not just the NULL bit) of a disk-part column.
bool filter_reads_disk_part(const FilterProgram& filter, const RowLayout& layout) {
  for (const FilterInstruction& ins : filter.instructions()) {
    switch (ins.opcode) {
      case FilterOpcode::kCmpColumn:
        if (layout.in_disk_part(ins.column2)) return true;
        [[fallthrough]];
      case FilterOpcode::kCmpConst:
      case FilterOpcode::kLike:
      case FilterOpcode::kBytesDiffer:
        if (layout.in_disk_part(ins.column)) return true;
        break;
      default:
        break;  // IS [NOT] NULL reads the null bit, which is in memory
    }
  }
  return false;
}

}  // namespace

Fragment::Scan::Scan(Fragment* fragment, ScanSpec spec) : fragment_(fragment), spec_(std::move(spec)) {
  needs_disk_ = fragment_->disk_ != nullptr &&
                (fragment_->layout_.needs_disk_part(spec_.columns) ||
                 (spec_.filter != nullptr && filter_reads_disk_part(*spec_.filter, fragment_->layout_)));
}

bool Fragment::Scan::page_missing(const View& view, RowRef row) {
  if (!needs_disk_ || view.op != nullptr || !spec_.disk_page_ready) return false;
  const disk::DiskRef ref = fragment_->slot_disk_ref(row);
  if (!ref.valid() || spec_.disk_page_ready(ref.page_id())) return false;
  waiting_for_page_ = true;
  return true;
}

bool Fragment::Scan::emit(const View& view, RowBatch* out) {
  RowImage image = view.image;
  if (needs_disk_ && view.op == nullptr) image = fragment_->with_disk_part(last_candidate_, image);
  if (spec_.filter) {
    ImageAccessor acc(fragment_->layout_, image);
    if (!spec_.filter->evaluate(acc)) return false;
  }
  fragment_->layout_.project(image, spec_.columns, &out->begin_row());
  return true;
}

Result<size_t> Fragment::Scan::next(size_t max_rows, RowBatch* out) {
  size_t produced = 0;
  waiting_for_page_ = false;
  if (done_) return produced;
  Fragment& f = *fragment_;
  if (spec_.index < 0) {
    while (produced < max_rows) {
      const RowRef r = f.fixed_.next_position(position_);
      if (r == FixedRowStore::kEnd) {
        done_ = true;
        break;
      }
      position_ = r + 1;
      if (!(f.row_flags(r) & kRowAllocated)) continue;
      if (spec_.min_gci != 0 &&
          (spec_.parts == 0 || scan_part_of(r, spec_.parts) != spec_.always_part)) {
        uint32_t gci;
        std::memcpy(&gci, f.fixed_.row(r) + kRowGciOffset, 4);
        if (gci < spec_.min_gci) continue;
      }
      const View v = f.view_of(spec_.tx, r);
      if (!v.exists) continue;
      if (page_missing(v, r)) {
        position_ = r;  // this row again once its page is in
        return produced;
      }
      last_candidate_ = r;
      if (emit(v, out)) {
        last_row_ = r;
        ++produced;
      }
    }
    // A full batch that took the last slot ends the scan now, not one batch later.
    if (!done_ && f.fixed_.next_position(position_) == FixedRowStore::kEnd) done_ = true;
    return produced;
  }
  OrderedIndex& tree = *f.ordered_[spec_.index];
  IndexProbe low(&f, spec_.index, &spec_.low, nullptr);
  IndexProbe high(&f, spec_.index, &spec_.high, nullptr);
  if (!started_) {
    started_ = true;
    if (!spec_.descending) {
      cursor_ = spec_.low.empty() ? tree.first() : tree.lower_bound(low, spec_.low_inclusive);
    } else {
      cursor_ = spec_.high.empty() ? tree.last() : tree.upper_bound(high, spec_.high_inclusive);
    }
  } else if (tree.modification_count() != seen_modifications_) {
    // The tree changed since the last batch: seek past the last returned entry by key.
    RowImage last{reinterpret_cast<uint8_t*>(last_key_fixed_.data()),
                  reinterpret_cast<const uint8_t*>(last_key_var_.data()),
                  static_cast<uint32_t>(last_key_var_.size())};
    IndexProbe probe(&f, spec_.index, nullptr, &last);
    cursor_ = spec_.descending ? tree.seek_before(probe, last_tie_) : tree.seek_after(probe, last_tie_);
  }
  // True when entry e lies beyond the range's far end.
  auto past_end = [&](uint32_t e) {
    if (!spec_.descending) {
      if (spec_.high.empty()) return false;
      const int c = high.compare_to(e);
      return c > 0 || (c == 0 && !spec_.high_inclusive);
    }
    if (spec_.low.empty()) return false;
    const int c = low.compare_to(e);
    return c < 0 || (c == 0 && !spec_.low_inclusive);
  };
  while (produced < max_rows && cursor_.valid()) {
    const uint32_t e = cursor_.ref();
    if (past_end(e)) {
      done_ = true;
      break;
    }
    View v;
    const bool visible = f.entry_visible(spec_.index, e, spec_.tx, &v);
    if (visible && page_missing(v, f.entry_row(e))) {
      // The cursor stays on this entry; a changed tree re-seeks past the last one
      // (or from the range's start when none was passed yet).
      seen_modifications_ = tree.modification_count();
      if (last_tie_ == kNoRef) started_ = false;
      return produced;
    }
    last_candidate_ = f.entry_row(e);
    // Remember where we are before moving on (a copy: the image may retire later).
    last_entry_ = e;
    last_tie_ = f.entry_row(e);
    const RowImage img = f.entry_image(e);
    last_key_fixed_.assign(reinterpret_cast<const char*>(img.fixed), f.layout_.fixed_size());
    last_key_var_.assign(reinterpret_cast<const char*>(img.var), img.var_size);
    if (visible && emit(v, out)) {
      last_row_ = f.entry_row(e);
      ++produced;
    }
    if (spec_.descending) cursor_.prev();
    else cursor_.next();
  }
  // A full batch whose next entry is past the range ends the scan now, so its last
  // batch says so instead of a following empty one.
  if (!cursor_.valid() || (!done_ && past_end(cursor_.ref()))) done_ = true;
  seen_modifications_ = tree.modification_count();
  return produced;
}

}  // namespace duo::storage
