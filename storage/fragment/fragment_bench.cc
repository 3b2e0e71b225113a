// Storage-engine hot paths at 1M rows of sysbench shape (sysbench_table.h).
// One thread, one fragment. Run: build/release/storage/fragment/duo_storage_fragment_bench
#include <benchmark/benchmark.h>

#include <random>

#include "storage/fragment/fragment.h"
#include "storage/fragment/sysbench_table.h"

namespace duo::storage {
namespace {

constexpr int kRows = 1'000'000;

struct Sysbench {
  std::unique_ptr<GlobalMemory> memory;
  TableSchema schema;
  std::unique_ptr<Fragment> fragment;
  std::string c_value = std::string(120, 'c');
  std::string pad_value = std::string(60, 'p');

  // `ordered`: the PK's ordered index and KEY k_1 (sysbench's table); without them the
  // table has only the hash index (PRIMARY KEY ... USING HASH), isolating row + hash costs.
  explicit Sysbench(bool ordered = true) {
    GlobalMemoryConfig mc;
    mc.total_bytes = size_t{1} << 30;
    memory = std::move(GlobalMemory::create(mc)).value();
    schema = sysbench_table_schema(ordered);
    fragment = std::move(Fragment::create(&schema, memory.get())).value();
  }
  // Fills a reused AttrValues (as the kernel will decode a signal into a reused buffer).
  const AttrValues& row(int32_t id, int32_t k) {
    fill_sysbench_row(&scratch, id, k, c_value, pad_value);
    return scratch;
  }
  AttrValues scratch;
  AttrValues key(int32_t id) const {
    AttrValues a;
    a.add(0, encode_int(schema.columns[0], id));
    return a;
  }
  void insert_committed(int32_t id, int32_t k) {
    TxId tx = *fragment->begin();
    OpResult r = fragment->insert(tx, row(id, k));
    if (!r.status.ok()) std::abort();
    if (!fragment->commit(tx).ok()) std::abort();
  }
};

// Loaded once, shared by the read/update benchmarks.
Sysbench& loaded() {
  static Sysbench* s = [] {
    auto* b = new Sysbench();
    std::mt19937 rng(1);
    for (int32_t id = 1; id <= kRows; ++id) b->insert_committed(id, static_cast<int32_t>(rng() % kRows));
    return b;
  }();
  return *s;
}

void BM_PkInsert(benchmark::State& state) {
  Sysbench b;
  std::mt19937 rng(2);
  int32_t id = 0;
  for (auto _ : state) {
    b.insert_committed(++id, static_cast<int32_t>(rng() % kRows));
  }
  const FragmentStats st = b.fragment->stats();
  const double rows = static_cast<double>(st.rows);
  const double data_bytes = 4 + 4 + 120 + 60;
  const double fixed_bytes = static_cast<double>(st.fixed_pages * kPageSize);
  state.counters["rows"] = rows;
  state.counters["row_bytes"] = fixed_bytes / rows;
  state.counters["hash_B_per_row"] = static_cast<double>(st.hash_index_bytes) / rows;
  state.counters["ordered_B_per_row_2idx"] = static_cast<double>(st.ordered_index_bytes) / rows;
  // Overhead beyond column data: row header + page slack + hash entry + ONE ordered index.
  state.counters["overhead_B_per_row"] =
      (fixed_bytes + static_cast<double>(st.hash_index_bytes) +
       static_cast<double>(st.ordered_index_bytes) / 2) / rows - data_bytes;
}
BENCHMARK(BM_PkInsert)->Iterations(kRows)->Unit(benchmark::kNanosecond);

void BM_PkInsertHashOnly(benchmark::State& state) {
  Sysbench b(false);
  std::mt19937 rng(2);
  int32_t id = 0;
  for (auto _ : state) b.insert_committed(++id, static_cast<int32_t>(rng() % kRows));
}
BENCHMARK(BM_PkInsertHashOnly)->Iterations(kRows)->Unit(benchmark::kNanosecond);

void BM_PkInsertBatched100(benchmark::State& state) {
  Sysbench b;
  std::mt19937 rng(2);
  int32_t id = 0;
  for (auto _ : state) {
    TxId tx = *b.fragment->begin();
    for (int i = 0; i < 100; ++i) {
      ++id;
      if (!b.fragment->insert(tx, b.row(id, static_cast<int32_t>(rng() % kRows))).status.ok()) std::abort();
    }
    if (!b.fragment->commit(tx).ok()) std::abort();
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_PkInsertBatched100)->Iterations(kRows / 100)->Unit(benchmark::kMicrosecond);

void BM_PkLookup(benchmark::State& state) {
  Sysbench& b = loaded();
  std::mt19937 rng(3);
  std::vector<AttrValues> keys;
  for (int i = 0; i < 4096; ++i) keys.push_back(b.key(1 + static_cast<int32_t>(rng() % kRows)));
  AttrValues out;
  const std::vector<uint16_t> all;
  size_t i = 0;
  for (auto _ : state) {
    out.clear();
    OpResult r = b.fragment->read(kNullId, keys[i++ & 4095], LockMode::kCommittedRead, all, &out);
    benchmark::DoNotOptimize(r.status.ok());
  }
}
BENCHMARK(BM_PkLookup);

void BM_PkUpdate(benchmark::State& state) {
  Sysbench& b = loaded();
  std::mt19937 rng(4);
  AttrValues change;
  change.add(2, std::string(120, 'u'));
  for (auto _ : state) {
    TxId tx = *b.fragment->begin();
    OpResult r = b.fragment->update(tx, b.key(1 + static_cast<int32_t>(rng() % kRows)), change);
    if (!r.status.ok()) std::abort();
    if (!b.fragment->commit(tx).ok()) std::abort();
  }
}
BENCHMARK(BM_PkUpdate);

void BM_InterpretedUpdateKPlus1(benchmark::State& state) {
  Sysbench& b = loaded();
  std::mt19937 rng(5);
  InterpretedUpdate program;
  program.add(1, 1);
  if (!program.bind(b.schema).ok()) std::abort();
  for (auto _ : state) {
    TxId tx = *b.fragment->begin();
    OpResult r = b.fragment->interpreted_update(tx, b.key(1 + static_cast<int32_t>(rng() % kRows)), program);
    if (!r.status.ok()) std::abort();
    if (!b.fragment->commit(tx).ok()) std::abort();
  }
}
BENCHMARK(BM_InterpretedUpdateKPlus1);

void BM_RangeScan100(benchmark::State& state) {
  Sysbench& b = loaded();
  std::mt19937 rng(6);
  RowBatch rows;
  for (auto _ : state) {
    const int32_t lo = 1 + static_cast<int32_t>(rng() % (kRows - 100));
    Fragment::ScanSpec spec;
    spec.index = 0;
    spec.low.add(0, encode_int(b.schema.columns[0], lo));
    spec.high.add(0, encode_int(b.schema.columns[0], lo + 99));
    spec.columns = {2};  // SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?
    auto scan = std::move(b.fragment->open_scan(std::move(spec))).value();
    rows.clear();
    auto n = scan->next(200, &rows);
    if (!n.ok() || *n != 100) std::abort();
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_RangeScan100)->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace duo::storage

BENCHMARK_MAIN();
