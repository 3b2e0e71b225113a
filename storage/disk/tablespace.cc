#include "storage/disk/tablespace.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace duo::storage::disk {

Tablespace::Tablespace(uint32_t tablespace_id, uint32_t extent_pages, DiskPageAccess* pages, UndoLog* undo)
    : id_(tablespace_id), extent_pages_(extent_pages), pages_(pages), undo_(undo) {}

Status Tablespace::open_datafile(uint32_t file_no, uint32_t file_pages) {
  if (file_no >= 0xFFFF) return Status(ErrorCode::kInvalidArgument, "datafile number out of range");
  if (files_.count(file_no)) return Status(ErrorCode::kInvalidArgument, "datafile already open");
  DUO_ASSIGN_OR_RETURN(DatafileLayout layout, DatafileLayout::compute(file_no, file_pages, extent_pages_));
  const DiskPageId header_page{file_no, 0};
  uint8_t* page = pages_->page(header_page);
  if (is_fresh_file_header(page)) {
    // The file was created zero-filled and never used: its first user formats it. The
    // extent-header pages need no write: an all-zero entry is a free extent.
    write_file_header(page, layout.header(id_));
    pages_->mark_dirty(header_page);
  } else {
    DUO_ASSIGN_OR_RETURN(DiskFileHeader h, read_file_header(page));
    const DiskFileHeader want = layout.header(id_);
    if (h.kind != DiskFileKind::kDatafile || h.filegroup_id != id_ || h.file_no != file_no ||
        h.file_pages != want.file_pages || h.extent_pages != want.extent_pages ||
        h.extent_count != want.extent_count || h.first_extent_page != want.first_extent_page) {
      return Status(ErrorCode::kCorruption,
                    "datafile " + std::to_string(file_no) + ": header does not match tablespace " +
                        std::to_string(id_) + " (file " + std::to_string(h.file_no) + " of filegroup " +
                        std::to_string(h.filegroup_id) + ", " + std::to_string(h.file_pages) + " pages)");
    }
  }
  files_.emplace(file_no, layout);
  return Status::OK();
}

ExtentEntry Tablespace::entry(const DatafileLayout& layout, uint32_t extent) const {
  uint8_t* page = pages_->page(layout.extent_header_page(extent));
  return ExtentEntry(page + layout.entry_offset(extent), layout.extent_pages);
}

void Tablespace::scan_extent_headers() {
  free_.clear();
  freed_.clear();
  freed_before_checkpoint_ = 0;
  for (auto it = files_.rbegin(); it != files_.rend(); ++it) {
    const DatafileLayout& l = it->second;
    for (uint32_t e = l.extent_count; e-- > 0;) {
      if (!entry(l, e).allocated()) free_.push_back({l.file_no, e});
    }
  }
}

void Tablespace::add_free_extents_of(uint32_t file_no) {
  const DatafileLayout& l = files_.at(file_no);
  // free_ is a stack handed out from the back: the new file's extents go to the front,
  // highest first, so the files already in use fill up first.
  std::vector<ExtentId> added;
  for (uint32_t e = l.extent_count; e-- > 0;) {
    if (!entry(l, e).allocated()) added.push_back({file_no, e});
  }
  free_.insert(free_.begin(), added.begin(), added.end());
}

size_t Tablespace::free_extent_count(uint32_t file_no) const {
  size_t n = 0;
  for (const ExtentId& e : free_) n += e.file == file_no ? 1 : 0;
  return n;
}

std::vector<uint32_t> Tablespace::file_numbers() const {
  std::vector<uint32_t> out;
  for (const auto& [file_no, l] : files_) out.push_back(file_no);
  return out;
}

std::vector<ExtentId> Tablespace::extents_owned_by(FragmentOwner owner) const {
  std::vector<ExtentId> out;
  for (const auto& [file_no, l] : files_) {
    for (uint32_t e = 0; e < l.extent_count; ++e) {
      const ExtentEntry x = entry(l, e);
      if (x.allocated() && x.table() == owner.table && x.fragment() == owner.fragment) out.push_back({file_no, e});
    }
  }
  return out;
}

Result<ExtentId> Tablespace::allocate_extent(FragmentOwner owner) {
  if (free_.empty()) {
    return Status(ErrorCode::kTablespaceFull, "Out of extents, tablespace full (NDB 1601) in tablespace " +
                                                  std::to_string(id_));
  }
  const ExtentId id = free_.back();
  free_.pop_back();
  const DatafileLayout& l = files_.at(id.file);
  const DiskPageId header_page = l.extent_header_page(id.extent);
  UndoRecord rec;
  rec.type = UndoType::kExtentAlloc;
  rec.page = header_page;
  rec.slot = id.extent;
  rec.table = owner.table;
  rec.fragment = owner.fragment;
  const uint64_t lsn = undo_->append(rec);
  uint8_t* page = pages_->page(header_page);
  ExtentEntry x = entry(l, id.extent);
  x.set_free();  // a free extent's pages are all empty (class 0)
  x.set_owner(owner.table, owner.fragment);
  set_page_identity(page, DiskPageKind::kExtentHeader, header_page);
  set_page_lsn(page, lsn);
  pages_->mark_dirty(header_page);
  return id;
}

void Tablespace::free_extent(ExtentId id) {
  const DatafileLayout& l = files_.at(id.file);
  const DiskPageId header_page = l.extent_header_page(id.extent);
  ExtentEntry x = entry(l, id.extent);
  if (!x.allocated()) {
    std::fprintf(stderr, "Tablespace::free_extent: extent %u of file %u is not allocated\n", id.extent, id.file);
    std::abort();
  }
  UndoRecord rec;
  rec.type = UndoType::kExtentFree;
  rec.page = header_page;
  rec.slot = id.extent;
  rec.table = x.table();
  rec.fragment = x.fragment();
  rec.before = std::span<const uint8_t>(x.class_bytes(), x.class_bytes_size());
  const uint64_t lsn = undo_->append(rec);
  x.set_free();
  uint8_t* page = pages_->page(header_page);
  set_page_lsn(page, lsn);
  pages_->mark_dirty(header_page);
  freed_.push_back(id);
}

void Tablespace::end_checkpoint() {
  const size_t n = std::min(freed_before_checkpoint_, freed_.size());
  for (size_t i = n; i-- > 0;) free_.push_back(freed_[i]);
  freed_.erase(freed_.begin(), freed_.begin() + static_cast<std::ptrdiff_t>(n));
  freed_before_checkpoint_ = 0;
}

uint8_t Tablespace::page_class(DiskPageId page) const {
  const DatafileLayout& l = files_.at(page.file_no);
  const uint32_t e = l.extent_of(page.page_no);
  return entry(l, e).page_class(page.page_no - l.page_of(e, 0).page_no);
}

void Tablespace::set_page_class(DiskPageId page, uint8_t free_class, uint64_t lsn) {
  const DatafileLayout& l = files_.at(page.file_no);
  const uint32_t e = l.extent_of(page.page_no);
  ExtentEntry x = entry(l, e);
  const uint32_t index = page.page_no - l.page_of(e, 0).page_no;
  if (x.page_class(index) == free_class) return;
  x.set_page_class(index, free_class);
  const DiskPageId header_page = l.extent_header_page(e);
  uint8_t* header = pages_->page(header_page);
  set_page_lsn(header, std::max(page_lsn(header), lsn));
  pages_->mark_dirty(header_page);
}

const DatafileLayout* Tablespace::layout_of(uint32_t file_no) const {
  auto it = files_.find(file_no);
  return it == files_.end() ? nullptr : &it->second;
}

size_t Tablespace::extent_count() const {
  size_t n = 0;
  for (const auto& [file_no, l] : files_) n += l.extent_count;
  return n;
}

}  // namespace duo::storage::disk
