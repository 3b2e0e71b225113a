// Parse throughput of the statements sysbench sends most: the point select of
// oltp_point_select, and oltp_read_write's range select and index update.
#include <benchmark/benchmark.h>

#include "sql-frontend/parser/parser.h"

namespace duo::sql {
namespace {

void parse_loop(benchmark::State& state, const char* sql) {
  for (auto _ : state) {
    ParsedStatement p = parse_statement(sql);
    benchmark::DoNotOptimize(p.statement.get());
    if (!p.ok()) state.SkipWithError("parse failed");
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_PointSelect(benchmark::State& state) {
  parse_loop(state, "SELECT c FROM sbtest1 WHERE id=?");
}
void BM_PointSelectLiteral(benchmark::State& state) {
  parse_loop(state, "SELECT c FROM sbtest1 WHERE id=4711");
}
void BM_RangeSelect(benchmark::State& state) {
  parse_loop(state, "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c");
}
void BM_IndexUpdate(benchmark::State& state) {
  parse_loop(state, "UPDATE sbtest1 SET k=k+1 WHERE id=?");
}

BENCHMARK(BM_PointSelect);
BENCHMARK(BM_PointSelectLiteral);
BENCHMARK(BM_RangeSelect);
BENCHMARK(BM_IndexUpdate);

}  // namespace
}  // namespace duo::sql

BENCHMARK_MAIN();
