// RowLayout: where each column of a table lives inside a row, and the row image format.
//
// A row has a fixed-size part (in a fixed-size slot of a fixed page) and, when the table
// has VARCHAR/VARBINARY/BLOB/TEXT columns, a variable-size part (in a var page):
//
//   fixed part: [flags u32][lock_id u32][gci u32][var_ref u32]?[disk_ref u64]?
//               [null bits][fixed-size columns, packed, unaligned]
//   var part:   [end offset u16 per var column][column bytes, concatenated]
//
// var_ref exists only when the table has var-sized columns; disk_ref only when it has
// STORAGE DISK columns. When the fragment keeps a disk part (storage/disk), the values
// of the var-sized STORAGE DISK columns of a committed row live there, in the var-part
// encoding restricted to those columns (the "disk part", see split_disk_part), and the
// slot's var part holds them empty; uncommitted images always hold every value.
// Fixed-size STORAGE DISK columns stay in the fixed part (in memory). A "row image" is the same two
// parts held anywhere (a slot + var entry for a stored row, or one contiguous block in
// TransactionMemory for an uncommitted version). See docs/formats/row-format.md.
//
// Thread-safety: RowLayout is immutable after construction; readers are plain views.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/row/attr_values.h"
#include "storage/row/table_schema.h"

namespace duo::storage {

// Row header flags (first word of the fixed part).
inline constexpr uint32_t kRowAllocated = 1u << 0;  // slot in use
inline constexpr uint32_t kRowCommitted = 1u << 1;  // a committed version exists in the slot
inline constexpr uint32_t kRowIndexed = 1u << 2;    // the slot image has ordered-index entries

inline constexpr uint32_t kRowFlagsOffset = 0;
inline constexpr uint32_t kRowLockOffset = 4;
inline constexpr uint32_t kRowGciOffset = 8;
inline constexpr uint32_t kRowHeaderBytes = 12;

struct ColumnPlace {
  bool is_var = false;
  uint32_t offset = 0;     // fixed columns: byte offset in the fixed part
  uint16_t var_index = 0;  // var columns: position among var columns
  int32_t null_bit = -1;   // -1 when NOT NULL
  uint32_t max_size = 0;   // fixed size, or maximum encoded size for var columns
  bool in_disk_part = false;  // var-sized STORAGE DISK column
};

// One version of a row: fixed part bytes and var part bytes (var may be empty).
struct RowImage {
  uint8_t* fixed = nullptr;
  const uint8_t* var = nullptr;
  uint32_t var_size = 0;
};

class RowLayout {
 public:
  explicit RowLayout(const TableSchema& schema);

  const TableSchema& schema() const { return *schema_; }
  uint32_t fixed_size() const { return fixed_size_; }  // slot size, multiple of 4
  bool has_var() const { return var_count_ > 0; }
  bool has_disk() const { return has_disk_; }
  // Byte offset of the u64 disk reference in the fixed part (has_disk() only).
  uint32_t disk_ref_offset() const { return disk_ref_offset_; }
  // True when some var-sized column is STORAGE DISK: committed rows can keep a disk part.
  bool has_disk_part() const { return !disk_var_indexes_.empty(); }
  // The column's value is in the disk part of a committed row.
  bool in_disk_part(uint16_t column) const { return places_[column].in_disk_part; }
  // True when reading `columns` (all when empty) of a committed row needs its disk part.
  bool needs_disk_part(const std::vector<uint16_t>& columns) const;

  // Splits a full image's var part: *memory_var gets the var part with every disk-part
  // column empty, *disk_part the disk part: [u16 end per disk-part column][bytes], ends
  // counted from the part's start, zero-padded to at least `min_part_bytes`.
  void split_disk_part(const RowImage& full, uint32_t min_part_bytes, std::string* memory_var,
                       std::string* disk_part) const;
  // True when `part` is a well-formed disk part of this layout (ends ascending, inside).
  bool valid_disk_part(const uint8_t* part, uint32_t size) const;
  // The inverse: the full var part from a committed slot's var part and its disk part.
  void merge_disk_part(const uint8_t* memory_var, uint32_t memory_var_size, const uint8_t* disk_part,
                       uint32_t disk_part_size, std::string* full_var) const;
  uint16_t var_count() const { return var_count_; }
  uint32_t var_ref_offset() const { return var_ref_offset_; }
  const ColumnPlace& place(uint16_t column) const { return places_[column]; }
  size_t column_count() const { return places_.size(); }
  // Bytes of a var part holding empty values for every var column.
  uint32_t empty_var_size() const { return 2u * var_count_; }

  // Value of a column in an image.
  ColumnValue get(const RowImage& image, uint16_t column) const {
    const ColumnPlace& p = places_[column];
    if (p.null_bit >= 0 &&
        (image.fixed[null_offset_ + (p.null_bit >> 3)] >> (p.null_bit & 7) & 1)) {
      return ColumnValue{{}, true};
    }
    if (!p.is_var) {
      return ColumnValue{
          std::string_view(reinterpret_cast<const char*>(image.fixed) + p.offset, p.max_size),
          false};
    }
    const uint32_t start = p.var_index == 0 ? 2u * var_count_ : var_end(image, p.var_index - 1);
    const uint32_t end = var_end(image, p.var_index);
    return ColumnValue{
        std::string_view(reinterpret_cast<const char*>(image.var) + start, end - start), false};
  }

  // Builds a new image (fixed bytes into `fixed_out`, var bytes into `var_out`) from
  // `base` (may be null: all columns NULL/empty) with `values` applied. Validates value
  // sizes, unknown/duplicate columns and NOT NULL; with `require_all_not_null`, every
  // NOT NULL column must be set (inserts). Header words are copied from base or zeroed.
  Status build_image(const RowImage* base, const AttrValues& values, bool require_all_not_null,
                     std::string* fixed_out, std::string* var_out) const;

  // Appends the projected columns of `image` to `out` (all columns when empty).
  void project(const RowImage& image, const std::vector<uint16_t>& columns,
               AttrValues* out) const;

 private:
  uint32_t var_end(const RowImage& image, uint16_t var_index) const {
    uint16_t end;
    std::memcpy(&end, image.var + 2u * var_index, 2);
    return end;
  }

  const TableSchema* schema_;
  std::vector<ColumnPlace> places_;
  std::vector<uint16_t> var_columns_;  // column id per var index
  std::vector<uint16_t> disk_var_indexes_;  // var indexes of the disk-part columns, ascending
  uint32_t disk_ref_offset_ = 0;
  uint32_t fixed_size_ = 0;
  uint32_t null_offset_ = 0;
  uint32_t null_bytes_ = 0;
  uint32_t var_ref_offset_ = 0;
  uint16_t var_count_ = 0;
  bool has_disk_ = false;
};

// RowAccessor over one image (for filters and interpreted updates).
class ImageAccessor final : public RowAccessor {
 public:
  ImageAccessor(const RowLayout& layout, const RowImage& image) : layout_(layout), image_(image) {}
  ColumnValue get(uint16_t column) const override { return layout_.get(image_, column); }

 private:
  const RowLayout& layout_;
  RowImage image_;
};

}  // namespace duo::storage
