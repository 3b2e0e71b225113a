// Test helper: a small GlobalMemory of `pages` 32 KiB pages, not prefaulted.
#pragma once

#include <memory>

#include "storage/memory/global_memory.h"

namespace duo::storage {

inline std::unique_ptr<GlobalMemory> make_test_memory(size_t pages) {
  GlobalMemoryConfig c;
  c.total_bytes = pages * kPageSize;
  c.prefault = false;
  return std::move(GlobalMemory::create(c)).value();
}

}  // namespace duo::storage
