// Disk row storage hot paths, all pages in memory (MemoryPageAccess): what the logic
// costs per operation, without IO. 4 KiB parts (the benchmark shape).
// Run: build/release/storage/disk/duo_storage_disk_bench
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "storage/disk/disk_row_space.h"
#include "storage/disk/memory_page_access.h"

namespace duo::storage::disk {
namespace {

constexpr uint32_t kRows = 20'000;  // 4 KiB each: about 2,700 pages
constexpr uint32_t kPartBytes = 4096;

struct Table {
  MemoryPageAccess pages;
  UndoLog undo{uint64_t{1} << 40, 1};
  Tablespace tablespace{1, 32, &pages, &undo};
  DiskRowSpace space{{1, 0}, &tablespace, &undo, &pages};
  std::vector<DiskRef> refs;
  std::string bytes = std::string(kPartBytes + 512, 'x');

  Table() {
    pages.add_file(1, 4096);
    if (!tablespace.open_datafile(1, 4096).ok()) std::abort();
    tablespace.scan_extent_headers();
    for (uint32_t i = 0; i < kRows; ++i) {
      auto op = space.prepare_insert(kPartBytes, {});
      refs.push_back(space.install(*op, part(kPartBytes)));
      space.release(*op);
    }
    undo.release_through(undo.next_lsn() - 1);
  }
  std::span<const uint8_t> part(uint32_t size) const {
    return {reinterpret_cast<const uint8_t*>(bytes.data()), size};
  }
};

// An update of a 4 KiB part in place: prepare, install (page write + undo record), release.
void BM_UpdateInPlace(benchmark::State& state) {
  Table t;
  std::mt19937 rng(1);
  for (auto _ : state) {
    const uint32_t i = rng() % kRows;
    auto op = t.space.prepare_update(t.refs[i], kPartBytes, {});
    t.refs[i] = t.space.install(*op, t.part(kPartBytes));
    t.space.release(*op);
    if (t.undo.used_bytes() > (uint64_t{64} << 20)) t.undo.release_through(t.undo.next_lsn() - 1);
  }
}
BENCHMARK(BM_UpdateInPlace);

// Alternating growth and shrinkage by 512 bytes: some updates move the part.
void BM_UpdateGrowShrink(benchmark::State& state) {
  Table t;
  std::mt19937 rng(2);
  std::vector<bool> grown(kRows, false);
  for (auto _ : state) {
    const uint32_t i = rng() % kRows;
    const uint32_t size = grown[i] ? kPartBytes : kPartBytes + 512;
    auto op = t.space.prepare_update(t.refs[i], size, {});
    t.refs[i] = t.space.install(*op, t.part(size));
    t.space.release(*op);
    grown[i] = !grown[i];
    if (t.undo.used_bytes() > (uint64_t{64} << 20)) t.undo.release_through(t.undo.next_lsn() - 1);
  }
}
BENCHMARK(BM_UpdateGrowShrink);

// Delete and insert again (the space freed by the delete is reused once released).
void BM_DeleteInsert(benchmark::State& state) {
  Table t;
  std::mt19937 rng(3);
  for (auto _ : state) {
    const uint32_t i = rng() % kRows;
    auto del = t.space.prepare_delete(t.refs[i]);
    t.space.install(*del, {});
    t.space.release(*del);
    auto ins = t.space.prepare_insert(kPartBytes, {});
    t.refs[i] = t.space.install(*ins, t.part(kPartBytes));
    t.space.release(*ins);
    if (t.undo.used_bytes() > (uint64_t{64} << 20)) t.undo.release_through(t.undo.next_lsn() - 1);
  }
}
BENCHMARK(BM_DeleteInsert);

}  // namespace
}  // namespace duo::storage::disk

BENCHMARK_MAIN();
