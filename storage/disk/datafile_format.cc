#include "storage/disk/datafile_format.h"

#include <string>

namespace duo::storage::disk {

Result<DatafileLayout> DatafileLayout::compute(uint32_t file_no, uint32_t file_pages, uint32_t extent_pages) {
  if (extent_pages == 0) return Status(ErrorCode::kInvalidArgument, "extent size must be at least one page");
  DatafileLayout l;
  l.file_no = file_no;
  l.file_pages = file_pages;
  l.extent_pages = extent_pages;
  const uint32_t raw = ExtentEntry::kFixedBytes + (extent_pages + 1) / 2;
  l.entry_bytes = (raw + 7) / 8 * 8;
  const uint32_t usable = static_cast<uint32_t>(kPageSize) - kDiskPageHeaderBytes;
  if (l.entry_bytes > usable) return Status(ErrorCode::kInvalidArgument, "extent size too large");
  l.entries_per_page = usable / l.entry_bytes;
  // The most extents n with 1 + ceil(n / per_page) + n * extent_pages <= file_pages.
  uint32_t n = file_pages > 1 ? (file_pages - 1) / extent_pages : 0;
  while (n > 0 && 1 + (n + l.entries_per_page - 1) / l.entries_per_page + uint64_t{n} * extent_pages > file_pages) --n;
  if (n == 0) {
    return Status(ErrorCode::kInvalidArgument, "datafile of " + std::to_string(file_pages) +
                                                   " pages holds no extent of " + std::to_string(extent_pages) +
                                                   " pages");
  }
  l.extent_count = n;
  l.extent_header_first = 1;
  l.extent_header_pages = (n + l.entries_per_page - 1) / l.entries_per_page;
  l.first_extent_page = 1 + l.extent_header_pages;
  return l;
}

DiskFileHeader DatafileLayout::header(uint32_t filegroup_id) const {
  DiskFileHeader h;
  h.kind = DiskFileKind::kDatafile;
  h.filegroup_id = filegroup_id;
  h.file_no = file_no;
  h.file_pages = file_pages;
  h.extent_pages = extent_pages;
  h.extent_count = extent_count;
  h.extent_header_first = extent_header_first;
  h.extent_header_pages = extent_header_pages;
  h.first_extent_page = first_extent_page;
  return h;
}

uint32_t ExtentEntry::word(uint32_t i) const {
  uint32_t v;
  std::memcpy(&v, bytes_ + 4 * i, 4);
  return v;
}

void ExtentEntry::set_word(uint32_t i, uint32_t v) { std::memcpy(bytes_ + 4 * i, &v, 4); }

void ExtentEntry::set_owner(uint32_t table, uint32_t fragment) {
  set_word(0, 1);
  set_word(1, table);
  set_word(2, fragment);
  set_word(3, 0);
}

void ExtentEntry::set_free() {
  std::memset(bytes_, 0, kFixedBytes + class_bytes_size());
}

uint8_t ExtentEntry::page_class(uint32_t index) const {
  const uint8_t b = class_bytes()[index / 2];
  return index % 2 == 0 ? (b & 0x0F) : (b >> 4);
}

void ExtentEntry::set_page_class(uint32_t index, uint8_t free_class) {
  uint8_t& b = class_bytes()[index / 2];
  b = index % 2 == 0 ? static_cast<uint8_t>((b & 0xF0) | (free_class & 0x0F))
                     : static_cast<uint8_t>((b & 0x0F) | (free_class << 4));
}

bool is_fresh_file_header(const uint8_t* page) {
  for (size_t i = 0; i < kPageSize; ++i) {
    if (page[i] != 0) return false;
  }
  return true;
}

namespace {
constexpr uint32_t kHeaderWords = sizeof(DiskFileHeader) / 4;
static_assert(sizeof(DiskFileHeader) == 12 * 4);
}  // namespace

void write_file_header(uint8_t* page, const DiskFileHeader& header) {
  set_page_identity(page,
                    header.kind == DiskFileKind::kDatafile ? DiskPageKind::kDatafileHeader
                                                           : DiskPageKind::kUndofileHeader,
                    {header.file_no, 0});
  std::memcpy(page + kDiskPageHeaderBytes, &header, kHeaderWords * 4);
}

Result<DiskFileHeader> read_file_header(const uint8_t* page) {
  DiskFileHeader h;
  std::memcpy(&h, page + kDiskPageHeaderBytes, kHeaderWords * 4);
  if (h.magic != kFileMagic) return Status(ErrorCode::kCorruption, "disk file header: bad magic");
  if (h.version != kFileFormatVersion) {
    return Status(ErrorCode::kCorruption, "disk file header: unknown format version " + std::to_string(h.version));
  }
  if (h.page_size_bytes != kPageSize) return Status(ErrorCode::kCorruption, "disk file header: wrong page size");
  if (h.kind != DiskFileKind::kDatafile && h.kind != DiskFileKind::kUndofile) {
    return Status(ErrorCode::kCorruption, "disk file header: unknown file kind");
  }
  return h;
}

Status open_undofile_header(uint8_t* page, uint32_t logfile_group_id, uint32_t file_no, uint32_t file_pages,
                            bool* fresh) {
  DiskFileHeader want;
  want.kind = DiskFileKind::kUndofile;
  want.filegroup_id = logfile_group_id;
  want.file_no = file_no;
  want.file_pages = file_pages;
  *fresh = is_fresh_file_header(page);
  if (*fresh) {
    write_file_header(page, want);
    return Status::OK();
  }
  DUO_ASSIGN_OR_RETURN(DiskFileHeader h, read_file_header(page));
  if (h.kind != DiskFileKind::kUndofile || h.filegroup_id != logfile_group_id || h.file_no != file_no ||
      h.file_pages != file_pages) {
    return Status(ErrorCode::kCorruption, "undofile " + std::to_string(file_no) +
                                              ": header does not match logfile group " +
                                              std::to_string(logfile_group_id));
  }
  return Status::OK();
}

}  // namespace duo::storage::disk
