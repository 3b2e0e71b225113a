// duo_bench's testable parts: argument parsing (values, limits, errors), the phase
// plan, key ranges per thread, the latency histogram's percentiles, and the report and
// CSV lines. The program itself needs a running cluster.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tools/bench/bench_options.h"
#include "tools/bench/bench_report.h"

namespace duo::bench {
namespace {

TEST(BenchArgs, DefaultsAndEveryOption) {
  Result<BenchOptions> defaults = parse_bench_args({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->connect, "localhost:1186");
  EXPECT_EQ(defaults->op, BenchOp::kMixed);

  Result<BenchOptions> options = parse_bench_args(
      {"--connect=10.0.0.1:1186", "--threads", "4", "--parallelism=64", "--batch=8", "--rows=1000",
       "--duration=5", "--loops=3", "--op=update", "--row-size", "200", "--csv=out.csv",
       "--table=t1", "--connect-timeout=100"});
  ASSERT_TRUE(options.ok()) << options.status().to_string();
  EXPECT_EQ(options->connect, "10.0.0.1:1186");
  EXPECT_EQ(options->threads, 4u);
  EXPECT_EQ(options->parallelism, 64u);
  EXPECT_EQ(options->batch, 8u);
  EXPECT_EQ(options->rows, 1000u);
  EXPECT_EQ(options->duration_s, 5u);
  EXPECT_EQ(options->loops, 3u);
  EXPECT_EQ(options->op, BenchOp::kUpdate);
  EXPECT_EQ(options->row_size, 200u);
  EXPECT_EQ(options->csv_path, "out.csv");
  EXPECT_EQ(options->table, "t1");
  EXPECT_EQ(options->connect_timeout_ms, 100u);
  EXPECT_TRUE(parse_bench_args({"--help"})->help);
}

TEST(BenchArgs, BadInputIsAnErrorNamingTheOption) {
  auto error = [](std::vector<std::string> args) {
    Result<BenchOptions> options = parse_bench_args(args);
    EXPECT_FALSE(options.ok());
    return options.ok() ? std::string() : options.status().message();
  };
  EXPECT_NE(error({"--threads=0"}).find("--threads"), std::string::npos);
  EXPECT_NE(error({"--threads=100000"}).find("--threads"), std::string::npos);
  EXPECT_NE(error({"--batch=x"}).find("--batch"), std::string::npos);
  EXPECT_NE(error({"--row-size=40000"}).find("--row-size"), std::string::npos);
  EXPECT_NE(error({"--op=scan"}).find("--op"), std::string::npos);
  EXPECT_NE(error({"--frobnicate=1"}).find("unknown option"), std::string::npos);
  EXPECT_NE(error({"--rows"}).find("needs a value"), std::string::npos);
  EXPECT_NE(error({"stray"}).find("unexpected argument"), std::string::npos);
  EXPECT_NE(error({"--threads=8", "--rows=4"}).find("--rows"), std::string::npos);
  EXPECT_NE(error({"--connect="}).find("--connect"), std::string::npos);
}

TEST(BenchPlan, PhasesPerOp) {
  EXPECT_EQ(phases_for(BenchOp::kMixed),
            (std::vector<PhaseKind>{PhaseKind::kInsert, PhaseKind::kRead, PhaseKind::kUpdate,
                                    PhaseKind::kDelete}));
  EXPECT_EQ(phases_for(BenchOp::kInsert), std::vector<PhaseKind>{PhaseKind::kInsert});
  EXPECT_EQ(phases_for(BenchOp::kRead),
            (std::vector<PhaseKind>{PhaseKind::kLoad, PhaseKind::kRead}));
  EXPECT_STREQ(phase_name(PhaseKind::kLoad), "load");
}

TEST(BenchPlan, KeyRangesCoverEveryRowOnce) {
  for (uint64_t rows : {1u, 7u, 100u, 1001u}) {
    for (uint32_t threads : {1u, 3u, 7u}) {
      if (rows < threads) continue;
      uint64_t next = 0;
      for (uint32_t t = 0; t < threads; ++t) {
        const KeyRange range = key_range(rows, threads, t);
        EXPECT_EQ(range.first, next) << rows << "/" << threads;
        EXPECT_GE(range.count, rows / threads);
        EXPECT_LE(range.count, rows / threads + 1);
        next += range.count;
      }
      EXPECT_EQ(next, rows);
    }
  }
}

TEST(LatencyHistogram, PercentilesWithinThreePercent) {
  LatencyHistogram histogram;
  EXPECT_EQ(histogram.percentile_us(0.5), 0u);
  std::vector<uint64_t> values;
  std::mt19937_64 random(42);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = 1 + random() % 1000000;
    values.push_back(v);
    histogram.record(v);
  }
  std::sort(values.begin(), values.end());
  for (double p : {0.5, 0.95, 0.99, 1.0}) {
    const uint64_t exact = values[static_cast<size_t>(p * values.size()) - 1];
    const uint64_t estimate = histogram.percentile_us(p);
    EXPECT_GE(estimate, exact) << p;
    EXPECT_LE(estimate, exact + exact / 32 + 1) << p;
  }
  EXPECT_EQ(histogram.percentile_us(1.0), histogram.max_us());
}

TEST(LatencyHistogram, SmallValuesAreExactAndMergeAdds) {
  LatencyHistogram a, b;
  for (uint64_t v = 0; v < 10; ++v) a.record(v);
  for (uint64_t v = 10; v < 20; ++v) b.record(v);
  EXPECT_EQ(a.percentile_us(0.5), 4u);
  a.merge(b);
  EXPECT_EQ(a.count(), 20u);
  EXPECT_EQ(a.percentile_us(0.5), 9u);
  EXPECT_EQ(a.max_us(), 19u);
  LatencyHistogram huge;
  huge.record(uint64_t{1} << 62);  // beyond the top bucket: counted, not lost
  EXPECT_EQ(huge.count(), 1u);
  EXPECT_EQ(huge.percentile_us(0.5), uint64_t{1} << 62);
}

TEST(BenchReport, LineAndCsv) {
  PhaseReport report;
  report.phase = "read";
  report.loop = 2;
  report.threads = 4;
  report.parallelism = 32;
  report.batch = 1;
  report.operations = 50000;
  report.transactions = 50000;
  report.seconds = 2.0;
  for (int i = 0; i < 100; ++i) report.latency.record(i < 50 ? 10 : 20);
  const std::string line = format_report(report);
  EXPECT_NE(line.find("25000 ops/s"), std::string::npos) << line;
  EXPECT_NE(line.find("p50 10"), std::string::npos) << line;
  EXPECT_NE(line.find("p99 20"), std::string::npos) << line;
  EXPECT_EQ(csv_line(report), "read,2,4,32,1,50000,50000,0,2.000,25000.0,10,20,20,20");
  const std::string header = csv_header();
  const std::string csv = csv_line(report);
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), std::count(csv.begin(), csv.end(), ','));
}

}  // namespace
}  // namespace duo::bench
