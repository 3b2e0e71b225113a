// OrderedIndex benchmarks on a prefix_exact index of random 32-bit int keys (the common
// single-integer-column case, where the comparator is never called):
//   - insert of 1M random keys (ns per insert; bytes per entry at the end),
//   - point lower_bound in a 1M-entry index,
//   - a 100-entry range scan (lower_bound + 99 next()) in a 1M-entry index.
// And the fragment's usage (storage/fragment/fragment.cc, IndexComparator): a tree built
// with a KeyComparator even though prefix_exact=true; compare_entries reads keys from a
// table indexed by ref and tie_key returns the ref, both virtual calls. Refs are handed out
// in ascending order (row slots), so equal keys tie-break towards the end of their run:
//   - 1M inserts of ascending keys (an ordered index over a sequential primary key),
//   - 1M inserts of random keys in [0, 1M) (many duplicates, resolved by tie_key),
//   - erase of all 1M entries (ascending: oldest first; random: in random order).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
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

// The fragment's comparator: keys in a table indexed by ref, tie = ref.
class TableComparator : public KeyComparator {
 public:
  explicit TableComparator(const std::vector<int32_t>* keys) : keys_(keys) {}
  int compare_entries(uint32_t a, uint32_t b) const override {
    const int32_t ka = (*keys_)[a];
    const int32_t kb = (*keys_)[b];
    return ka < kb ? -1 : (ka > kb ? 1 : 0);
  }
  uint32_t tie_key(uint32_t ref) const override { return ref; }

 private:
  const std::vector<int32_t>* keys_;
};

std::vector<int32_t> ascending_keys(uint32_t count) {
  std::vector<int32_t> keys(count);
  for (uint32_t i = 0; i < count; ++i) keys[i] = static_cast<int32_t>(i);
  return keys;
}

// Uniform in [0, count): about a third of the keys are unique, the rest repeat.
std::vector<int32_t> random_dup_keys(uint32_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> keys(count);
  for (int32_t& key : keys) key = static_cast<int32_t>(rng() % count);
  return keys;
}

// Inserts refs 0..n-1 (key keys[ref]) into a fragment-style index.
bool insert_all(OrderedIndex& index, const std::vector<int32_t>& keys, benchmark::State& state) {
  for (uint32_t ref = 0; ref < keys.size(); ++ref) {
    Status status = index.insert(prefix_of(keys[ref]), ref);
    if (!status.ok()) {
      state.SkipWithError(status.to_string().c_str());
      return false;
    }
  }
  return true;
}

void fragment_insert(benchmark::State& state, const std::vector<int32_t>& keys) {
  auto memory = make_memory();
  const TableComparator comparator(&keys);
  double bytes_per_entry = 0;
  for (auto _ : state) {
    OrderedIndex index(memory.get(), &comparator, /*prefix_exact=*/true);
    if (!insert_all(index, keys, state)) return;
    bytes_per_entry = static_cast<double>(index.memory_bytes()) / index.size();
    benchmark::DoNotOptimize(index.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * keys.size());
  state.counters["ns_per_insert"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * keys.size(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["bytes_per_entry"] = bytes_per_entry;
}

void BM_FragmentAscendingInsert1M(benchmark::State& state) {
  fragment_insert(state, ascending_keys(kEntries));
}
BENCHMARK(BM_FragmentAscendingInsert1M)->Unit(benchmark::kMillisecond);

void BM_FragmentRandomInsert1M(benchmark::State& state) {
  fragment_insert(state, random_dup_keys(kEntries, 5));
}
BENCHMARK(BM_FragmentRandomInsert1M)->Unit(benchmark::kMillisecond);

// Erases every entry of a 1M-entry index in `order` (refs); only the erases are timed.
// The (prefix, ref) pairs are listed in erase order beforehand, so the timed loop reads
// them sequentially (the fragment has the row at hand when it erases its entries).
void fragment_erase(benchmark::State& state, const std::vector<int32_t>& keys,
                    const std::vector<uint32_t>& order) {
  auto memory = make_memory();
  const TableComparator comparator(&keys);
  std::vector<std::pair<uint32_t, uint32_t>> erases;
  erases.reserve(order.size());
  for (uint32_t ref : order) erases.emplace_back(prefix_of(keys[ref]), ref);
  for (auto _ : state) {
    state.PauseTiming();
    auto index = std::make_unique<OrderedIndex>(memory.get(), &comparator, true);
    if (!insert_all(*index, keys, state)) return;
    state.ResumeTiming();
    for (const auto& [prefix, ref] : erases) {
      if (!index->erase(prefix, ref)) {
        state.SkipWithError("erase missed");
        return;
      }
    }
    benchmark::DoNotOptimize(index->size());
    state.PauseTiming();
    index.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * order.size());
  state.counters["ns_per_erase"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * order.size(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_FragmentAscendingErase1M(benchmark::State& state) {
  std::vector<uint32_t> order(kEntries);
  for (uint32_t i = 0; i < kEntries; ++i) order[i] = i;
  fragment_erase(state, ascending_keys(kEntries), order);
}
BENCHMARK(BM_FragmentAscendingErase1M)->Unit(benchmark::kMillisecond);

void BM_FragmentRandomErase1M(benchmark::State& state) {
  std::vector<uint32_t> order(kEntries);
  for (uint32_t i = 0; i < kEntries; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(6));
  fragment_erase(state, random_dup_keys(kEntries, 5), order);
}
BENCHMARK(BM_FragmentRandomErase1M)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace duo::storage

BENCHMARK_MAIN();
