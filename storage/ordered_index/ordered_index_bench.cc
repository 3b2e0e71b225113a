// OrderedIndex benchmarks on a prefix_exact index of random 32-bit int keys (the common
// single-integer-column case, where the comparator is never called):
//   - insert of 1M random keys (ns per insert; bytes per entry at the end),
//   - point lower_bound in a 1M-entry index,
//   - a 100-entry range scan (lower_bound + 99 next()) in a 1M-entry index.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "storage/ordered_index/ordered_index.h"

namespace duo::storage {
namespace {

constexpr uint32_t kEntries = 1'000'000;
constexpr size_t kMemoryPages = 1024;  // 32 MiB: ~3x what 1M entries need

class IntProbe : public SearchProbe {
 public:
  explicit IntProbe(int32_t key) : key_(key) {}
  uint32_t prefix() const override { return static_cast<uint32_t>(key_) ^ 0x80000000u; }
  bool prefix_exact() const override { return true; }
  int compare_to(uint32_t) const override { return 0; }  // never called: prefix is exact

 private:
  int32_t key_;
};

std::unique_ptr<GlobalMemory> make_memory() {
  GlobalMemoryConfig config;
  config.total_bytes = kMemoryPages * kPageSize;
  config.prefault = true;
  return std::move(GlobalMemory::create(config).value());
}

std::vector<int32_t> random_keys(uint32_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> keys(count);
  for (int32_t& key : keys) key = static_cast<int32_t>(rng());
  return keys;
}

uint32_t prefix_of(int32_t key) { return static_cast<uint32_t>(key) ^ 0x80000000u; }

void BM_Insert1M(benchmark::State& state) {
  const std::vector<int32_t> keys = random_keys(kEntries, 1);
  auto memory = make_memory();
  double bytes_per_entry = 0;
  for (auto _ : state) {
    OrderedIndex index(memory.get(), nullptr, /*prefix_exact=*/true);
    for (uint32_t i = 0; i < kEntries; ++i) {
      Status status = index.insert(prefix_of(keys[i]), i);
      if (!status.ok()) {
        state.SkipWithError(status.to_string().c_str());
        return;
      }
    }
    bytes_per_entry = static_cast<double>(index.memory_bytes()) / index.size();
    benchmark::DoNotOptimize(index.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kEntries);
  state.counters["ns_per_insert"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kEntries,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["bytes_per_entry"] = bytes_per_entry;
}
BENCHMARK(BM_Insert1M)->Unit(benchmark::kMillisecond);

// A 1M-entry index shared by the read benchmarks.
struct Loaded {
  Loaded() : memory(make_memory()), keys(random_keys(kEntries, 2)) {
    index = std::make_unique<OrderedIndex>(memory.get(), nullptr, true);
    for (uint32_t i = 0; i < kEntries; ++i) index->insert(prefix_of(keys[i]), i).ignore_error();
  }
  std::unique_ptr<GlobalMemory> memory;
  std::vector<int32_t> keys;
  std::unique_ptr<OrderedIndex> index;
};
Loaded& loaded() {
  static Loaded instance;
  return instance;
}

void BM_PointLowerBound1M(benchmark::State& state) {
  Loaded& data = loaded();
  std::mt19937_64 rng(3);
  uint64_t found = 0;
  for (auto _ : state) {
    const IntProbe probe(data.keys[rng() % kEntries]);
    OrderedIndex::Cursor cursor = data.index->lower_bound(probe, true);
    found += cursor.ref();
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_PointLowerBound1M);

void BM_RangeScan100At1M(benchmark::State& state) {
  Loaded& data = loaded();
  std::mt19937_64 rng(4);
  uint64_t sum = 0;
  for (auto _ : state) {
    const IntProbe probe(data.keys[rng() % kEntries]);
    OrderedIndex::Cursor cursor = data.index->lower_bound(probe, true);
    for (int i = 0; i < 100 && cursor.valid(); ++i, cursor.next()) sum += cursor.ref();
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["bytes_per_entry"] =
      static_cast<double>(data.index->memory_bytes()) / data.index->size();
}
BENCHMARK(BM_RangeScan100At1M);

}  // namespace
}  // namespace duo::storage

BENCHMARK_MAIN();
