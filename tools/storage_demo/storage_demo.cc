// duo_storage_demo: drives one in-memory fragment the way a data node will — a
// sysbench-shaped table loaded, point-read, updated, k=k+1'd at the row and range-
// scanned — and prints throughput and the memory report. It is what `scripts/quickstart`
// runs until the cluster (duo up) exists.
//
//   duo_storage_demo [--rows N] [--memory-mb M]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "storage/fragment/fragment.h"
#include "storage/fragment/sysbench_table.h"

using namespace duo;
using namespace duo::storage;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

[[noreturn]] void die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "duo_storage_demo: %s: %s\n", what.c_str(), s.to_string().c_str());
  std::exit(1);
}

void usage() {
  std::fprintf(stderr, "usage: duo_storage_demo [--rows N] [--memory-mb M]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  long rows = 1'000'000;
  long memory_mb = 1024;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rows") && i + 1 < argc) rows = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--memory-mb") && i + 1 < argc) memory_mb = std::atol(argv[++i]);
    else usage();
  }
  if (rows <= 0 || rows > 100'000'000 || memory_mb <= 0) usage();

  GlobalMemoryConfig mc;
  mc.total_bytes = static_cast<size_t>(memory_mb) << 20;
  auto memory = GlobalMemory::create(mc);
  if (!memory.ok()) die("TotalMemoryConfig", memory.status());

  const TableSchema schema = sysbench_table_schema();
  auto created = Fragment::create(&schema, memory->get());
  if (!created.ok()) die("create table", created.status());
  Fragment& f = **created;
  const ColumnDef& int_col = schema.columns[0];
  auto key = [&](int32_t id) {
    AttrValues a;
    a.add(0, encode_int(int_col, id));
    return a;
  };

  std::printf("DuoDB storage demo: table sbtest1 (id INT PK, k INT, c CHAR(120), pad CHAR(60)), "
              "%ld rows, TotalMemoryConfig %ld MB\n", rows, memory_mb);
  std::mt19937 rng(42);
  const std::string c(120, 'c'), pad(60, 'p');
  AttrValues r;
  auto t0 = Clock::now();
  long loaded = 0;
  const long batch = 1000;
  while (loaded < rows) {
    auto tx = f.begin();
    if (!tx.ok()) die("begin", tx.status());
    for (long i = 0; i < batch && loaded < rows; ++i) {
      fill_sysbench_row(&r, static_cast<int32_t>(loaded + 1), static_cast<int32_t>(rng() % rows), c, pad);
      OpResult res = f.insert(*tx, r);
      if (!res.status.ok()) {
        f.abort(*tx).ignore_error();
        std::printf("load stopped at %ld rows: %s (MySQL error %u)\n", loaded, res.status.to_string().c_str(),
                    error_info(res.status.code()).mysql_errno);
        std::printf("%s", (*memory)->usage_report().c_str());
        return 1;
      }
      ++loaded;
    }
    Status s = f.commit(*tx);
    if (!s.ok()) die("commit", s);
    if (loaded % (rows / 10 > 0 ? rows / 10 : 1) == 0 || loaded == rows) {
      std::printf("  loading: %ld of %ld rows (%ld%%), %.0f rows/s\n", loaded, rows, loaded * 100 / rows,
                  static_cast<double>(loaded) / seconds_since(t0));
      std::fflush(stdout);
    }
  }
  const double load_s = seconds_since(t0);

  const long n_ops = rows < 200'000 ? rows : 200'000;
  t0 = Clock::now();
  AttrValues out;
  for (long i = 0; i < n_ops; ++i) {
    out.clear();
    OpResult r = f.read(kNullId, key(1 + static_cast<int32_t>(rng() % rows)), LockMode::kCommittedRead, {}, &out);
    if (!r.status.ok()) die("read", r.status);
  }
  const double read_ns = seconds_since(t0) * 1e9 / static_cast<double>(n_ops);

  InterpretedUpdate plus_one;
  plus_one.add(1, 1);
  if (Status s = plus_one.bind(schema); !s.ok()) die("bind", s);
  t0 = Clock::now();
  for (long i = 0; i < n_ops; ++i) {
    auto tx = f.begin();
    OpResult r = f.interpreted_update(*tx, key(1 + static_cast<int32_t>(rng() % rows)), plus_one);
    if (!r.status.ok()) die("update k=k+1", r.status);
    Status s = f.commit(*tx);
    if (!s.ok()) die("commit", s);
  }
  const double incr_ns = seconds_since(t0) * 1e9 / static_cast<double>(n_ops);

  const long n_scans = 20'000;
  t0 = Clock::now();
  RowBatch got;
  long scanned = 0;
  for (long i = 0; i < n_scans; ++i) {
    const int32_t lo = 1 + static_cast<int32_t>(rng() % (rows > 100 ? rows - 100 : 1));
    Fragment::ScanSpec spec;
    spec.index = 0;
    spec.low.add(0, encode_int(int_col, lo));
    spec.high.add(0, encode_int(int_col, lo + 99));
    spec.columns = {2};
    auto scan = f.open_scan(std::move(spec));
    if (!scan.ok()) die("scan", scan.status());
    got.clear();
    auto n = (*scan)->next(200, &got);
    if (!n.ok()) die("scan", n.status());
    scanned += static_cast<long>(*n);
  }
  const double scan_us = seconds_since(t0) * 1e6 / static_cast<double>(n_scans);

  Status check = f.check_consistency();
  const FragmentStats st = f.stats();
  std::printf("\nload           %.2f s  (%.0f rows/s, 1000-row transactions)\n", load_s,
              static_cast<double>(rows) / load_s);
  std::printf("PK read        %.0f ns/op\n", read_ns);
  std::printf("k=k+1 at row   %.0f ns/op (transaction per update)\n", incr_ns);
  std::printf("range 100 rows %.1f us/scan (%ld rows)\n", scan_us, scanned);
  std::printf("rows %zu; fixed pages %zu; hash index %.1f B/row; ordered indexes %.1f B/row\n", st.rows,
              st.fixed_pages, static_cast<double>(st.hash_index_bytes) / static_cast<double>(st.rows),
              static_cast<double>(st.ordered_index_bytes) / static_cast<double>(st.rows));
  std::printf("consistency check: %s\n\n%s", check.ok() ? "ok" : check.to_string().c_str(),
              (*memory)->usage_report().c_str());
  return check.ok() ? 0 : 1;
}
