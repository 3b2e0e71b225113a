// RowBatch: rows of projected column values in one flat AttrValues buffer — what a scan
// returns per batch. One buffer for the whole batch keeps a scan free of per-row
// allocations (the kernel will ship a batch as one message). Not thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "storage/row/attr_values.h"

namespace duo::storage {

class RowBatch {
 public:
  // A view of one row: its values in projection order.
  class Row {
   public:
    size_t size() const { return end_ - begin_; }
    uint16_t column(size_t k) const { return values_->entry(begin_ + k).column; }
    bool is_null(size_t k) const { return values_->entry(begin_ + k).is_null; }
    std::string_view value(size_t k) const { return values_->value(begin_ + k); }

   private:
    friend class RowBatch;
    Row(const AttrValues* values, size_t begin, size_t end) : values_(values), begin_(begin), end_(end) {}
    const AttrValues* values_;
    size_t begin_, end_;
  };

  void clear() {
    values_.clear();
    starts_.clear();
  }
  // Starts a new row; values added to values() from now on belong to it.
  AttrValues& begin_row() {
    starts_.push_back(static_cast<uint32_t>(values_.size()));
    return values_;
  }
  size_t rows() const { return starts_.size(); }
  bool empty() const { return starts_.empty(); }
  Row row(size_t i) const {
    const size_t end = i + 1 < starts_.size() ? starts_[i + 1] : values_.size();
    return Row(&values_, starts_[i], end);
  }
  const AttrValues& values() const { return values_; }

 private:
  AttrValues values_;
  std::vector<uint32_t> starts_;  // entry index where each row begins
};

}  // namespace duo::storage
