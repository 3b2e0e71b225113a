#include "storage/row/row_layout.h"

namespace duo::storage {

RowLayout::RowLayout(const TableSchema& schema) : schema_(&schema) {
  places_.resize(schema.columns.size());
  uint32_t nullable = 0;
  for (size_t i = 0; i < schema.columns.size(); ++i) {
    const ColumnDef& c = schema.columns[i];
    if (c.nullable) places_[i].null_bit = static_cast<int32_t>(nullable++);
    if (c.storage_disk) has_disk_ = true;
    places_[i].max_size = column_max_size(c);
    if (is_var_sized(c)) {
      places_[i].is_var = true;
      places_[i].var_index = var_count_++;
      var_columns_.push_back(static_cast<uint16_t>(i));
      if (c.storage_disk) {
        places_[i].in_disk_part = true;
        disk_var_indexes_.push_back(places_[i].var_index);
      }
    }
  }
  uint32_t offset = kRowHeaderBytes;
  if (var_count_ > 0) {
    var_ref_offset_ = offset;
    offset += 4;
  }
  if (has_disk_) {
    disk_ref_offset_ = offset;  // disk part reference (file, page, slot), storage/disk DiskRef
    offset += 8;
  }
  null_offset_ = offset;
  null_bytes_ = (nullable + 7) / 8;
  offset += null_bytes_;
  for (ColumnPlace& p : places_) {
    if (!p.is_var) {
      p.offset = offset;
      offset += p.max_size;
    }
  }
  fixed_size_ = (offset + 3) & ~3u;
}

Status RowLayout::build_image(const RowImage* base, const AttrValues& values,
                              bool require_all_not_null, std::string* fixed_out,
                              std::string* var_out) const {
  const size_t ncols = places_.size();
  // Which entry of `values` sets each column (-1: keep base / default).
  int32_t set_by_stack[64];
  std::vector<int32_t> set_by_heap;
  int32_t* set_by = set_by_stack;
  if (ncols > 64) {
    set_by_heap.assign(ncols, -1);
    set_by = set_by_heap.data();
  } else {
    for (size_t i = 0; i < ncols; ++i) set_by[i] = -1;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const AttrValues::Entry& e = values.entry(i);
    if (e.column >= ncols) {
      return Status(ErrorCode::kInvalidArgument, "unknown column id " + std::to_string(e.column));
    }
    const ColumnDef& c = schema_->columns[e.column];
    if (set_by[e.column] >= 0) {
      return Status(ErrorCode::kInvalidArgument, "column '" + c.name + "' specified twice");
    }
    const ColumnPlace& p = places_[e.column];
    if (e.is_null) {
      if (!c.nullable) {
        return Status(ErrorCode::kNotNullViolation, "Column '" + c.name + "' cannot be null");
      }
    } else if (p.is_var ? e.size > p.max_size : e.size != p.max_size) {
      if (p.is_var) {
        return Status(ErrorCode::kDataTooLong, "Data too long for column '" + c.name + "'");
      }
      return Status(ErrorCode::kInvalidArgument,
                    "value for column '" + c.name + "' has " + std::to_string(e.size) +
                        " bytes, expected " + std::to_string(p.max_size));
    }
    set_by[e.column] = static_cast<int32_t>(i);
  }
  if (require_all_not_null) {
    for (size_t i = 0; i < ncols; ++i) {
      if (set_by[i] < 0 && !schema_->columns[i].nullable) {
        return Status(ErrorCode::kNotNullViolation,
                      "Field '" + schema_->columns[i].name + "' doesn't have a default value");
      }
    }
  }

  fixed_out->resize(fixed_size_);
  auto* fixed = reinterpret_cast<uint8_t*>(fixed_out->data());
  if (base) {
    std::memcpy(fixed, base->fixed, fixed_size_);
  } else {
    std::memset(fixed, 0, fixed_size_);
    // A fresh row starts with every nullable column NULL.
    for (const ColumnPlace& p : places_) {
      if (p.null_bit >= 0) fixed[null_offset_ + (p.null_bit >> 3)] |= uint8_t(1u << (p.null_bit & 7));
    }
  }
  for (size_t col = 0; col < ncols; ++col) {
    const int32_t i = set_by[col];
    if (i < 0) continue;
    const ColumnPlace& p = places_[col];
    const AttrValues::Entry& e = values.entry(static_cast<size_t>(i));
    if (p.null_bit >= 0) {
      uint8_t& byte = fixed[null_offset_ + (p.null_bit >> 3)];
      const uint8_t bit = uint8_t(1u << (p.null_bit & 7));
      byte = e.is_null ? (byte | bit) : (byte & uint8_t(~bit));
    }
    if (!p.is_var && !e.is_null) std::memcpy(fixed + p.offset, values.data().data() + e.offset, e.size);
  }

  var_out->clear();
  if (var_count_ == 0) return Status::OK();
  // Var part: offsets array, then each var column's bytes in var-index order.
  var_out->resize(2u * var_count_);
  for (uint16_t v = 0; v < var_count_; ++v) {
    const uint16_t col = var_columns_[v];
    const int32_t i = set_by[col];
    std::string_view bytes;
    if (i >= 0) {
      if (!values.entry(static_cast<size_t>(i)).is_null) bytes = values.value(static_cast<size_t>(i));
    } else if (base) {
      const ColumnValue old = get(*base, col);
      if (!old.is_null) bytes = old.data;
    }
    var_out->append(bytes);
    const auto end = static_cast<uint16_t>(var_out->size());
    std::memcpy(var_out->data() + 2u * v, &end, 2);
  }
  if (fixed_size_ + var_out->size() > kMaxRowSizeBytes) {
    return Status(ErrorCode::kRowTooBig, "Row size too large (" +
                                             std::to_string(fixed_size_ + var_out->size()) +
                                             " bytes); the maximum row size is " +
                                             std::to_string(kMaxRowSizeBytes));
  }
  return Status::OK();
}

bool RowLayout::needs_disk_part(const std::vector<uint16_t>& columns) const {
  if (disk_var_indexes_.empty()) return false;
  if (columns.empty()) return true;
  for (uint16_t c : columns) {
    if (c < places_.size() && places_[c].in_disk_part) return true;
  }
  return false;
}

void RowLayout::split_disk_part(const RowImage& full, uint32_t min_part_bytes, std::string* memory_var,
                                std::string* disk_part) const {
  const uint32_t disk_count = static_cast<uint32_t>(disk_var_indexes_.size());
  memory_var->assign(2u * var_count_, '\0');
  disk_part->assign(2u * disk_count, '\0');
  uint32_t d = 0;
  for (uint16_t v = 0; v < var_count_; ++v) {
    const uint32_t start = v == 0 ? 2u * var_count_ : var_end(full, v - 1);
    const uint32_t end = var_end(full, v);
    const std::string_view bytes(reinterpret_cast<const char*>(full.var) + start, end - start);
    if (d < disk_count && disk_var_indexes_[d] == v) {
      disk_part->append(bytes);
      const auto part_end = static_cast<uint16_t>(disk_part->size());
      std::memcpy(disk_part->data() + 2u * d, &part_end, 2);
      ++d;
    } else {
      memory_var->append(bytes);
    }
    const auto mem_end = static_cast<uint16_t>(memory_var->size());
    std::memcpy(memory_var->data() + 2u * v, &mem_end, 2);
  }
  if (disk_part->size() < min_part_bytes) disk_part->resize(min_part_bytes, '\0');
}

bool RowLayout::valid_disk_part(const uint8_t* part, uint32_t size) const {
  const uint32_t count = static_cast<uint32_t>(disk_var_indexes_.size());
  if (size < 2u * count) return false;
  uint32_t previous = 2u * count;
  for (uint32_t d = 0; d < count; ++d) {
    uint16_t end;
    std::memcpy(&end, part + 2u * d, 2);
    if (end < previous || end > size) return false;
    previous = end;
  }
  return true;
}

void RowLayout::merge_disk_part(const uint8_t* memory_var, uint32_t memory_var_size, const uint8_t* disk_part,
                                uint32_t disk_part_size, std::string* full_var) const {
  // The ends inside both parts are trusted (the slot is in memory; a disk page's checksum
  // was verified when it was read); the sizes are for callers' symmetry.
  (void)memory_var_size;
  (void)disk_part_size;
  const uint32_t disk_count = static_cast<uint32_t>(disk_var_indexes_.size());
  full_var->assign(2u * var_count_, '\0');
  uint32_t d = 0;
  auto end_at = [](const uint8_t* part, uint32_t i) {
    uint16_t e;
    std::memcpy(&e, part + 2u * i, 2);
    return uint32_t{e};
  };
  for (uint16_t v = 0; v < var_count_; ++v) {
    const uint8_t* src;
    uint32_t start, end;
    if (d < disk_count && disk_var_indexes_[d] == v) {
      src = disk_part;
      start = d == 0 ? 2u * disk_count : end_at(disk_part, d - 1);
      end = end_at(disk_part, d);
      ++d;
    } else {
      src = memory_var;
      start = v == 0 ? 2u * var_count_ : end_at(memory_var, v - 1);
      end = end_at(memory_var, v);
    }
    full_var->append(reinterpret_cast<const char*>(src) + start, end - start);
    const auto full_end = static_cast<uint16_t>(full_var->size());
    std::memcpy(full_var->data() + 2u * v, &full_end, 2);
  }
}

void RowLayout::project(const RowImage& image, const std::vector<uint16_t>& columns,
                        AttrValues* out) const {
  auto emit = [&](uint16_t col) {
    const ColumnValue v = get(image, col);
    if (v.is_null) out->add_null(col);
    else out->add(col, v.data);
  };
  if (columns.empty()) {
    for (size_t c = 0; c < places_.size(); ++c) emit(static_cast<uint16_t>(c));
  } else {
    for (uint16_t c : columns) emit(c);
  }
}

}  // namespace duo::storage
