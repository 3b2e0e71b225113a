// AttrValues: a list of (column id, value-or-NULL) in storage encoding.
//
// The currency between the storage engine and its callers: writes take one (the columns
// to set), reads fill one (the projected columns), interpreted updates produce one. Kept
// as one flat byte buffer plus a small index, so building and reading allocate little.
// Not thread-safe; one owner at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace duo::storage {

class AttrValues {
 public:
  struct Entry {
    uint16_t column;
    bool is_null;
    uint32_t offset;  // into data()
    uint32_t size;
  };

  void add(uint16_t column, std::string_view value) {
    entries_.push_back(Entry{column, false, static_cast<uint32_t>(data_.size()),
                             static_cast<uint32_t>(value.size())});
    data_.append(value);
  }
  void add_null(uint16_t column) {
    entries_.push_back(Entry{column, true, static_cast<uint32_t>(data_.size()), 0});
  }
  void clear() {
    entries_.clear();
    data_.clear();
  }

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const Entry& entry(size_t i) const { return entries_[i]; }
  std::string_view value(size_t i) const {
    return std::string_view(data_).substr(entries_[i].offset, entries_[i].size);
  }
  // Index of the entry for `column`, or -1.
  int find(uint16_t column) const {
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].column == column) return static_cast<int>(i);
    }
    return -1;
  }
  const std::vector<Entry>& entries() const { return entries_; }
  const std::string& data() const { return data_; }

 private:
  std::vector<Entry> entries_;
  std::string data_;
};

// Read access to one row version's columns, implemented by the row layer. Filters and
// interpreted updates evaluate against this.
struct ColumnValue {
  std::string_view data;
  bool is_null;
};
class RowAccessor {
 public:
  virtual ~RowAccessor() = default;
  virtual ColumnValue get(uint16_t column) const = 0;
};

}  // namespace duo::storage
