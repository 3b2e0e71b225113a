// The on-disk layout of tablespace datafiles and logfile-group undofiles, as far as
// disk row storage defines it (docs/formats/disk-page.md, "Datafile and disk row pages").
//
// A file is created zero-filled at its INITIAL_SIZE; an all-zero page 0 means "freshly
// created" and the first user writes the file header there. A datafile is
//   page 0                      file header
//   pages 1 .. H                extent-header pages (one 8-byte-aligned entry per extent:
//                               owner and a 4-bit free-space class per page)
//   pages 1+H ..                extents of extent_pages pages each
// An all-zero extent entry is a free extent whose pages are all empty, so a fresh file
// needs only its header written. An undofile is page 0 (file header) then undo pages.
// Pure functions over page bytes; thread-compatible.
#pragma once

#include <cstdint>

#include "ndb-kernel/common/status.h"
#include "storage/disk/disk_page_header.h"

namespace duo::storage::disk {

inline constexpr uint32_t kFileMagic = 0x4B534944;  // "DISK" little-endian
inline constexpr uint32_t kFileFormatVersion = 1;

enum class DiskFileKind : uint32_t { kDatafile = 1, kUndofile = 2 };

// The fields of page 0 (from byte kDiskPageHeaderBytes), all u32.
struct DiskFileHeader {
  uint32_t magic = kFileMagic;
  uint32_t version = kFileFormatVersion;
  DiskFileKind kind = DiskFileKind::kDatafile;
  uint32_t filegroup_id = 0;       // tablespace or logfile group id (dictionary)
  uint32_t file_no = 0;            // number of the file within its filegroup
  uint32_t page_size_bytes = static_cast<uint32_t>(kPageSize);
  uint32_t file_pages = 0;         // size of the file in pages (INITIAL_SIZE / page size)
  uint32_t extent_pages = 0;       // datafile: EXTENT_SIZE in pages; undofile: 0
  uint32_t extent_count = 0;       // datafile: extents in the file
  uint32_t extent_header_first = 0;  // datafile: first extent-header page (1)
  uint32_t extent_header_pages = 0;  // datafile: how many extent-header pages
  uint32_t first_extent_page = 0;  // datafile: page of extent 0
};

// Where things are in a datafile of `file_pages` pages with extents of `extent_pages`.
struct DatafileLayout {
  uint32_t file_no = 0;
  uint32_t file_pages = 0;
  uint32_t extent_pages = 0;
  uint32_t extent_count = 0;
  uint32_t entry_bytes = 0;        // one extent's entry in an extent-header page
  uint32_t entries_per_page = 0;   // extent entries per extent-header page
  uint32_t extent_header_first = 1;
  uint32_t extent_header_pages = 0;
  uint32_t first_extent_page = 0;

  // kInvalidArgument when not even one extent fits.
  static Result<DatafileLayout> compute(uint32_t file_no, uint32_t file_pages, uint32_t extent_pages);
  DiskFileHeader header(uint32_t filegroup_id) const;

  DiskPageId extent_header_page(uint32_t extent) const {
    return {file_no, extent_header_first + extent / entries_per_page};
  }
  uint32_t entry_offset(uint32_t extent) const {
    return kDiskPageHeaderBytes + (extent % entries_per_page) * entry_bytes;
  }
  DiskPageId page_of(uint32_t extent, uint32_t index) const {
    return {file_no, first_extent_page + extent * extent_pages + index};
  }
  // The extent holding data page `page` (which must be an extent page).
  uint32_t extent_of(uint32_t page) const { return (page - first_extent_page) / extent_pages; }
  bool is_extent_page(uint32_t page) const {
    return page >= first_extent_page && page < first_extent_page + extent_count * extent_pages;
  }
};

// One extent's entry in an extent-header page: a view over the page bytes.
//   u32 state (0 free, 1 allocated), u32 table id, u32 fragment id, u32 reserved,
//   then per page of the extent a 4-bit free-space class (low nibble first).
class ExtentEntry {
 public:
  static constexpr uint32_t kFixedBytes = 16;
  ExtentEntry(uint8_t* bytes, uint32_t extent_pages) : bytes_(bytes), extent_pages_(extent_pages) {}

  bool allocated() const { return word(0) == 1; }
  uint32_t table() const { return word(1); }
  uint32_t fragment() const { return word(2); }
  void set_owner(uint32_t table, uint32_t fragment);  // allocated, owned
  void set_free();                                      // free, every page class 0
  uint8_t page_class(uint32_t index) const;
  void set_page_class(uint32_t index, uint8_t free_class);
  // The class nibbles (extent_pages / 2 bytes, rounded up): an undo before-image.
  uint8_t* class_bytes() const { return bytes_ + kFixedBytes; }
  uint32_t class_bytes_size() const { return (extent_pages_ + 1) / 2; }

 private:
  uint32_t word(uint32_t i) const;
  void set_word(uint32_t i, uint32_t v);
  uint8_t* bytes_;
  uint32_t extent_pages_;
};

// True when page 0 is all zero: the file was created and never used.
bool is_fresh_file_header(const uint8_t* page);
// Writes the header (and stamps kind and identity) into page 0's bytes.
void write_file_header(uint8_t* page, const DiskFileHeader& header);
// Reads page 0: kCorruption when the magic, version or page size is wrong.
Result<DiskFileHeader> read_file_header(const uint8_t* page);
// Page 0 of undofile `file_no` (of `file_pages` pages) of logfile group
// `logfile_group_id`: written when the file is fresh (*fresh = true), else checked to
// be that file's header (kCorruption, nothing written, when it is not).
Status open_undofile_header(uint8_t* page, uint32_t logfile_group_id, uint32_t file_no, uint32_t file_pages,
                            bool* fresh);

}  // namespace duo::storage::disk
