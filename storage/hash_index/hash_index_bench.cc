// HashIndex benchmarks at one million entries: bulk insert (all splits included), lookups
// of present and absent keys, and bulk erase (all merges included).
//
// Entry r has hash mix(r), a bijective integer mixer, so the harness computes keys without
// touching memory and the numbers measure the index, not the harness. Keys are visited in
// the order of a full-period linear congruential sequence over [0, 2^20), i.e. randomly.
// The match predicate only compares the ref (no row to read): the floor of a real
// primary-key lookup. "Lookup" issues independent lookups, so the CPU overlaps their
// cache misses (throughput); "LookupDependent" derives every key from the previous answer,
// which measures the latency of one lookup.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "storage/hash_index/hash_index.h"

namespace duo::storage {
namespace {

constexpr uint32_t kEntries = 1u << 20;  // "1M": a power of two for the key sequence

// Xorshift-multiply rounds: each step is invertible, so distinct refs get distinct hashes.
uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x8f3a62d5u;
  x ^= x >> 13;
  x *= 0xb1c3e96bu;
  x ^= x >> 16;
  return x;
}

// Full period over [0, kEntries): multiplier = 1 mod 4 and an odd increment.
uint32_t next_key(uint32_t ref) { return (ref * 0x0019660Du + 0x3C6EF35Fu) & (kEntries - 1); }

GlobalMemory& bench_memory() {
  static std::unique_ptr<GlobalMemory> memory = [] {
    GlobalMemoryConfig config;
    config.total_bytes = 128ull << 20;
    config.prefault = true;  // page faults are not what is being measured
    auto created = GlobalMemory::create(config);
    if (!created.ok()) {
      std::fprintf(stderr, "cannot create GlobalMemory: %s\n",
                   created.status().to_string().c_str());
      std::abort();
    }
    return std::move(created).value();
  }();
  return *memory;
}

void fill(HashIndex& index) {
  for (uint32_t ref = 0; ref < kEntries; ++ref) {
    Status status = index.insert(mix(ref), ref);
    if (!status.ok()) {
      std::fprintf(stderr, "insert failed: %s\n", status.to_string().c_str());
      std::abort();
    }
  }
}

// Shared by the lookup benchmarks: built once.
HashIndex& full_index() {
  static HashIndex* index = [] {
    auto* built = new HashIndex(&bench_memory());
    fill(*built);
    return built;
  }();
  return *index;
}

// Reports ns per operation for benchmarks whose iteration is a batch of `operations`.
void per_op_counter(benchmark::State& state, uint64_t operations) {
  state.counters["per_op"] = benchmark::Counter(
      static_cast<double>(operations), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void shape_counters(benchmark::State& state, const HashIndex& index) {
  const HashIndexStats stats = index.stats();
  state.counters["bytes_per_entry"] =
      static_cast<double>(index.memory_bytes()) / static_cast<double>(index.size());
  state.counters["nodes_per_bucket"] =
      static_cast<double>(stats.overflow_nodes) / static_cast<double>(stats.primary_buckets);
}

void BM_Insert1M(benchmark::State& state) {
  for (auto _ : state) {
    auto index = std::make_unique<HashIndex>(&bench_memory());
    fill(*index);
    benchmark::DoNotOptimize(index->size());
    state.PauseTiming();  // page return is not part of insert cost
    shape_counters(state, *index);
    index.reset();
    state.ResumeTiming();
  }
  per_op_counter(state, state.iterations() * uint64_t{kEntries});
}

void BM_Lookup1M(benchmark::State& state) {
  const HashIndex& index = full_index();
  uint32_t ref = 1;
  for (auto _ : state) {
    ref = next_key(ref);
    const uint32_t found = index.find(mix(ref), [ref](uint32_t r) { return r == ref; });
    benchmark::DoNotOptimize(found);
  }
  shape_counters(state, index);
}

void BM_LookupDependent1M(benchmark::State& state) {
  const HashIndex& index = full_index();
  uint32_t ref = 1;
  for (auto _ : state) {
    const uint32_t found = index.find(mix(ref), [ref](uint32_t r) { return r == ref; });
    // The next key is known only once this lookup has answered.
    ref = next_key(found);
  }
  benchmark::DoNotOptimize(ref);
}

void BM_LookupMiss1M(benchmark::State& state) {
  const HashIndex& index = full_index();
  // Refs beyond kEntries were never inserted: each lookup walks a whole chain and, on a
  // (rare) equal hash, is told no by the predicate.
  uint32_t absent = kEntries;
  for (auto _ : state) {
    absent = kEntries + next_key(absent);
    const uint32_t found =
        index.find(mix(absent), [absent](uint32_t r) { return r == absent; });
    benchmark::DoNotOptimize(found);
  }
}

void BM_Erase1M(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    auto index = std::make_unique<HashIndex>(&bench_memory());
    fill(*index);
    state.ResumeTiming();
    uint32_t ref = 1;
    for (uint32_t i = 0; i < kEntries; ++i) {
      ref = next_key(ref);
      if (!index->erase(mix(ref), ref)) std::abort();
    }
    benchmark::DoNotOptimize(index->size());
  }
  per_op_counter(state, state.iterations() * uint64_t{kEntries});
}

BENCHMARK(BM_Insert1M)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Lookup1M)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_LookupDependent1M)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_LookupMiss1M)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_Erase1M)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace duo::storage

BENCHMARK_MAIN();
