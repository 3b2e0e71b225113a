#include "storage/disk/undo_apply.h"

#include <cstring>
#include <string>

#include "storage/disk/disk_row_page.h"
#include "storage/disk/undo_log.h"

namespace duo::storage::disk {
namespace {

Status corrupt(const UndoRecord& r, const char* what) {
  return Status(ErrorCode::kCorruption, std::string("undo record at LSN ") + std::to_string(r.lsn) + " (file " +
                                            std::to_string(r.page.file_no) + " page " + std::to_string(r.page.page_no) +
                                            " slot " + std::to_string(r.slot) + "): " + what);
}

// Undoes one row-page change that is on `page`.
Status undo_row_change(const UndoRecord& r, uint8_t* page) {
  if (r.type == UndoType::kPageInit) {
    // Back to a never-formatted page: kind 0 and a zero body (identity and LSN stay).
    const uint32_t zero = 0;
    std::memcpy(page + page_header_offset::kKind, &zero, 4);
    std::memset(page + kDiskPageHeaderBytes, 0, kPageSize - kDiskPageHeaderBytes);
    return Status::OK();
  }
  if (page_kind(page) != DiskPageKind::kRowPage) return corrupt(r, "page is not a row page");
  VarPage layout = row_page(page);
  const uint32_t size = static_cast<uint32_t>(r.before.size());
  switch (r.type) {
    case UndoType::kEntryAlloc:
      if (!layout.is_live(r.slot)) return corrupt(r, "allocated entry is not on the page");
      layout.free(r.slot);
      return Status::OK();
    case UndoType::kEntryFree: {
      if (r.slot >= VarPage::kMaxSlots || layout.is_live(r.slot)) return corrupt(r, "freed slot is in use");
      const uint32_t growth = r.slot >= layout.dir_count() ? VarPage::kDirBytes * (r.slot + 1 - layout.dir_count()) : 0;
      if (layout.free_bytes() < size + growth) return corrupt(r, "no room to restore the freed entry");
      layout.allocate_at(r.slot, size);
      if (size > 0) std::memcpy(layout.data(r.slot), r.before.data(), size);
      return Status::OK();
    }
    case UndoType::kEntryUpdate:
      if (!layout.is_live(r.slot)) return corrupt(r, "updated entry is not on the page");
      if (!layout.try_grow(r.slot, size)) return corrupt(r, "no room to restore the entry's old size");
      if (size > 0) std::memcpy(layout.data(r.slot), r.before.data(), size);
      return Status::OK();
    default:
      return corrupt(r, "not a row-page record");
  }
}

}  // namespace

Result<UndoApplyStats> apply_undo_backwards(std::span<const uint8_t> log, uint64_t stop_lsn,
                                            std::span<Tablespace* const> tablespaces, DiskPageAccess* pages) {
  UndoApplyStats stats;
  UndoReader reader(log);
  uint64_t oldest = 0;  // LSN of the last record undone
  bool reached_stop = false;
  while (!reader.done()) {
    DUO_ASSIGN_OR_RETURN(UndoRecord r, reader.next());
    // LSNs are consecutive: a gap is a damaged or mixed-up log, never to be skipped.
    if (oldest != 0 && r.lsn != oldest - 1) {
      return corrupt(r, ("LSN follows " + std::to_string(oldest) + " in the log").c_str());
    }
    if (r.lsn <= stop_lsn) {
      reached_stop = true;
      break;
    }
    oldest = r.lsn;
    ++stats.records;
    Tablespace* ts = nullptr;
    const DatafileLayout* layout = nullptr;
    for (Tablespace* t : tablespaces) {
      if ((layout = t->layout_of(r.page.file_no)) != nullptr) {
        ts = t;
        break;
      }
    }
    if (ts == nullptr) {
      ++stats.unknown_file;
      continue;
    }
    const bool extent_record = r.type == UndoType::kExtentAlloc || r.type == UndoType::kExtentFree;
    // Check what the record names before touching any page.
    if (extent_record && (r.slot >= layout->extent_count || layout->extent_header_page(r.slot) != r.page)) {
      return corrupt(r, "no such extent");
    }
    if (!extent_record && !layout->is_extent_page(r.page.page_no)) return corrupt(r, "page is not in an extent");
    uint8_t* page = pages->page(r.page);
    const bool on_page = page_lsn(page) >= r.lsn;
    if (extent_record) {
      if (!on_page) {
        ++stats.not_on_page;
        continue;
      }
      ExtentEntry entry(page + layout->entry_offset(r.slot), layout->extent_pages);
      if (r.type == UndoType::kExtentAlloc) {
        entry.set_free();
      } else {
        if (r.before.size() != entry.class_bytes_size()) return corrupt(r, "extent class image has the wrong size");
        entry.set_owner(r.table, r.fragment);
        std::memcpy(entry.class_bytes(), r.before.data(), r.before.size());
      }
      set_page_lsn(page, r.lsn - 1);
      pages->mark_dirty(r.page);
      ++stats.applied;
      continue;
    }
    if (on_page) {
      DUO_RETURN_IF_ERROR(undo_row_change(r, page));
      set_page_lsn(page, r.lsn - 1);
      pages->mark_dirty(r.page);
      ++stats.applied;
    } else {
      ++stats.not_on_page;
    }
    // The extent header's class follows the page, whether or not this change was on it.
    const uint32_t e = layout->extent_of(r.page.page_no);
    const DiskPageId header_page = layout->extent_header_page(e);
    uint8_t* header = pages->page(header_page);
    ExtentEntry entry(header + layout->entry_offset(e), layout->extent_pages);
    const uint32_t index = r.page.page_no - layout->page_of(e, 0).page_no;
    const uint8_t cls = page_free_class(page);
    if (entry.page_class(index) != cls) {
      entry.set_page_class(index, cls);
      pages->mark_dirty(header_page);
    }
  }
  if (oldest > stop_lsn + 1 && !reached_stop) {
    return Status(ErrorCode::kCorruption, "undo log ends at LSN " + std::to_string(oldest) +
                                              ", short of the checkpoint's LSN " + std::to_string(stop_lsn));
  }
  return stats;
}

}  // namespace duo::storage::disk
