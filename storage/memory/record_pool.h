// RecordPool<T>: fixed-size records addressed by dense 32-bit ids, carved from 32 KiB
// pages of one GlobalMemory area (operation records, row locks, transactions).
//
// 32-bit ids keep references small where they are stored per row (a row header names
// its lock record by id). The pool grows a page at a time; exhaustion of the area is
// kTableFull. Pages stay with the pool until it is destroyed (ids must stay valid), so
// the pool's footprint is its high-water mark. Thread-compatible: one owner.
#pragma once

#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "storage/memory/global_memory.h"

namespace duo::storage {

inline constexpr uint32_t kNullId = 0;  // id 0 is never handed out

template <typename T>
class RecordPool {
 public:
  // A function, not a constant, so the pool can be declared while T is incomplete.
  static constexpr uint32_t per_page() { return static_cast<uint32_t>(kPageSize / sizeof(T)); }

  RecordPool(GlobalMemory* memory, MemoryArea area) : memory_(memory), area_(area) {}
  ~RecordPool() {
    // Live records are destroyed by their owners; the pool only returns pages.
    for (void* page : pages_) memory_->free_page(area_, page);
  }
  RecordPool(const RecordPool&) = delete;
  RecordPool& operator=(const RecordPool&) = delete;

  // Constructs a T and returns its id (never kNullId), or kTableFull.
  template <typename... Args>
  Result<uint32_t> create(Args&&... args) {
    if (free_ids_.empty()) DUO_RETURN_IF_ERROR(grow());
    const uint32_t id = free_ids_.back();
    free_ids_.pop_back();
    new (slot(id)) T(std::forward<Args>(args)...);
    ++live_;
    return id;
  }
  void destroy(uint32_t id) {
    get(id)->~T();
    free_ids_.push_back(id);
    --live_;
  }
  T* get(uint32_t id) { return std::launder(reinterpret_cast<T*>(slot(id))); }
  const T* get(uint32_t id) const {
    return std::launder(reinterpret_cast<const T*>(const_cast<RecordPool*>(this)->slot(id)));
  }
  size_t live() const { return live_; }
  size_t memory_bytes() const { return pages_.size() * kPageSize; }

 private:
  void* slot(uint32_t id) {
    return static_cast<char*>(pages_[id / per_page()]) + (id % per_page()) * sizeof(T);
  }
  Status grow() {
    static_assert(per_page() >= 2, "record too large for a page");
    DUO_ASSIGN_OR_RETURN(void* page, memory_->allocate_page(area_));
    const uint32_t first = static_cast<uint32_t>(pages_.size()) * per_page();
    pages_.push_back(page);
    // Push in reverse so low ids are used first; id 0 is reserved as the null id.
    for (uint32_t i = per_page(); i-- > 0;) {
      if (first + i != kNullId) free_ids_.push_back(first + i);
    }
    return Status::OK();
  }

  GlobalMemory* const memory_;
  const MemoryArea area_;
  std::vector<void*> pages_;
  std::vector<uint32_t> free_ids_;
  size_t live_ = 0;
};

}  // namespace duo::storage
