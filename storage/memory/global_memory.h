// GlobalMemory: the one memory budget of a data node, split into areas of 32 KiB pages.
//
// The whole budget is mapped and touched up front (allocation at start, like NDB's
// TotalMemoryConfig), so later allocation can only fail by exhausting a budget, never
// by the OS refusing memory. Each area has a reserved minimum (guaranteed) and a
// maximum; pages above an area's reserved minimum are borrowed from the shared pool.
// Exhaustion returns ErrorCode::kTableFull and leaves existing pages untouched.
//
// Pages are aligned to kPageSize, so the page holding any address inside it is found by
// masking (page_of()). Thread-safe: allocate/free take an internal mutex. Page
// allocation is not on the per-row hot path (one page holds many rows).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ndb-kernel/common/status.h"

namespace duo::storage {

inline constexpr size_t kPageSize = 32 * 1024;

enum class MemoryArea : uint8_t {
  kDataMemory = 0,         // rows, hash and ordered indexes
  kDiskPageBuffer = 1,     // disk page cache (DiskPageBufferMemory)
  kTransactionMemory = 2,  // operation records, row locks, uncommitted row images
  kSchemaMemory = 3,       // dictionary objects
  kCount = 4,
};
const char* area_name(MemoryArea area);

struct AreaLimits {
  size_t reserved_pages = 0;  // guaranteed to the area, never lent to others
  size_t max_pages = 0;       // hard cap (reserved + borrowed); 0 means "no cap"
};

struct GlobalMemoryConfig {
  size_t total_bytes = 0;  // TotalMemoryConfig: rounded down to whole pages
  std::array<AreaLimits, static_cast<size_t>(MemoryArea::kCount)> areas{};
  // Touch every page at start so the budget is really resident (skip in tiny tests).
  bool prefault = true;
};

struct AreaUsage {
  MemoryArea area;
  size_t used_pages;
  size_t reserved_pages;
  size_t max_pages;  // effective cap: min(max, reserved + whole shared pool)
};

class GlobalMemory {
 public:
  // Maps the budget. Fails with kConfigError if reserved minimums exceed the total.
  static Result<std::unique_ptr<GlobalMemory>> create(const GlobalMemoryConfig& config);
  ~GlobalMemory();
  GlobalMemory(const GlobalMemory&) = delete;
  GlobalMemory& operator=(const GlobalMemory&) = delete;

  // A kPageSize-aligned page for `area`, or kTableFull when the area's reserve and
  // the shared pool (within the area's maximum) are exhausted. Contents are undefined.
  Result<void*> allocate_page(MemoryArea area);
  // Returns a page obtained from allocate_page(area) with the same area.
  void free_page(MemoryArea area, void* page);

  AreaUsage usage(MemoryArea area) const;
  size_t total_pages() const { return total_pages_; }
  size_t free_pages() const;
  size_t shared_pool_free_pages() const;
  // "DataMemory: 12 of 100 pages (12%) ..." one line per area.
  std::string usage_report() const;

  static void* page_of(const void* address) {
    return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(address) & ~(kPageSize - 1));
  }

 private:
  GlobalMemory(const GlobalMemoryConfig& config, uint8_t* base, size_t mapped_bytes,
               size_t total_pages);
  size_t borrowed_pages_locked() const;

  // Constant after construction.
  const GlobalMemoryConfig config_;
  void* raw_ = nullptr;  // start of the mapping (base_ is aligned inside it)
  uint8_t* const base_;  // kPageSize-aligned start of the page range
  const size_t mapped_bytes_;
  const size_t total_pages_;
  const size_t shared_pages_;  // total - sum(reserved)

  mutable std::mutex mutex_;
  // Protected by mutex_.
  std::vector<uint32_t> free_list_;  // page numbers
  std::array<size_t, static_cast<size_t>(MemoryArea::kCount)> used_{};
};

}  // namespace duo::storage
