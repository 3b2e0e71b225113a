// VarPage: the slot-directory layout of variable-sized entries inside one 32 KiB page.
// It exists once and serves both the in-memory var pages (VarRowStore) and the disk row
// pages (storage/disk), which is what lets a disk row part use the same page format as
// an in-memory var part (RonDB's design).
//
// Layout, from `header_offset` on (the bytes before it belong to the page's owner):
//   [header 8 bytes: u16 dir_count, u16 data_end, u16 free_bytes, u16 live]
//   [entry bytes, growing up ->] gap [<- directory, growing down from the page end:
//    (u16 offset, u16 size) per slot]
// Offset 0 marks a free directory slot (no entry starts at 0: the header is there).
// free_bytes counts the gap and the holes left by freed or shrunk entries, not the
// directory slot a new entry may need. An entry is named by its directory slot; the
// page compacts its entry area in place, so slots survive compaction. Trailing free
// slots are given back to the gap.
//
// A VarPage is a view over bytes the caller owns; thread-compatible.
#pragma once

#include <cstdint>

#include "storage/memory/global_memory.h"

namespace duo::storage {

class VarPage {
 public:
  static constexpr uint32_t kHeaderBytes = 8;
  static constexpr uint32_t kDirBytes = 4;
  static constexpr uint32_t kMaxSlots = 1u << 12;  // refs keep 12 bits for the slot

  VarPage(uint8_t* page, uint32_t header_offset) : page_(page), header_offset_(header_offset) {}

  // Free bytes of an empty page whose layout starts at `header_offset`.
  static constexpr uint32_t empty_free_bytes(uint32_t header_offset) {
    return static_cast<uint32_t>(kPageSize) - header_offset - kHeaderBytes;
  }
  // The largest entry an empty page takes (it needs one directory slot).
  static constexpr uint32_t max_entry_bytes(uint32_t header_offset) {
    return empty_free_bytes(header_offset) - kDirBytes;
  }

  // Makes the page empty (header only; entry bytes are left as they are).
  void format();

  uint32_t dir_count() const;
  uint32_t free_bytes() const;
  uint32_t live() const;
  // True when the directory is at its limit with every slot in use.
  bool directory_full() const { return dir_count() >= kMaxSlots && live() == dir_count(); }
  // True when a new entry of `size_bytes` fits, counting a new directory slot.
  bool fits_new(uint32_t size_bytes) const {
    return !directory_full() && free_bytes() >= size_bytes + kDirBytes;
  }
  bool is_live(uint32_t slot) const;

  // Places a new entry of `size_bytes` (contents undefined) in the first free slot or a
  // new one; the caller checked fits_new(). Compacts when the gap is too small.
  uint32_t allocate(uint32_t size_bytes);
  // Places a new entry in exactly `slot`, which must be free (or beyond dir_count; the
  // slots in between become free slots). Restores a freed entry under its old name
  // (undo); the caller checked that size + the directory growth fit.
  void allocate_at(uint32_t slot, uint32_t size_bytes);
  void free(uint32_t slot);
  // Shrinks an entry in place (always succeeds; a larger size is ignored).
  void shrink(uint32_t slot, uint32_t new_size_bytes);
  // Resizes an entry in place, moving it within the page (compacting) when needed;
  // contents are preserved up to the old size. False when the page lacks the bytes.
  bool try_grow(uint32_t slot, uint32_t new_size_bytes);

  uint8_t* data(uint32_t slot) const;
  uint32_t size(uint32_t slot) const;

 private:
  struct Header;
  struct Dir;
  Header* header() const;
  Dir* dir(uint32_t slot) const;
  uint32_t data_start() const { return header_offset_ + kHeaderBytes; }
  uint32_t contiguous_free() const;
  void compact();

  uint8_t* page_;
  uint32_t header_offset_;
};

}  // namespace duo::storage
