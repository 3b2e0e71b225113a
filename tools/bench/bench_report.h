// duo_bench's measurements: a fixed-size latency histogram (log-linear buckets, like
// HdrHistogram with 32 sub-buckets per power of two: at most ~3% error, constant memory,
// mergeable across threads) and the per-phase report printed and appended to the CSV.
//
// Thread-safety: values; each bench thread fills its own histogram, merged afterwards.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace duo::bench {

class LatencyHistogram {
 public:
  // Records one latency in microseconds (values beyond the top bucket count as the top).
  void record(uint64_t micros);
  void merge(const LatencyHistogram& other);
  uint64_t count() const { return count_; }
  uint64_t max_us() const { return max_us_; }
  // The latency below which `fraction` (0..1] of the recorded values lie: the upper
  // bound of the bucket holding that rank, capped by the largest value seen. 0 if empty.
  uint64_t percentile_us(double fraction) const;

 private:
  static constexpr uint32_t kSubBuckets = 32;  // per power of two
  static constexpr uint32_t kPowers = 40;      // up to 2^40 us (12 days)
  static size_t bucket_of(uint64_t micros);
  static uint64_t bucket_upper_us(size_t bucket);

  std::array<uint64_t, kSubBuckets * kPowers> buckets_{};
  uint64_t count_ = 0;
  uint64_t max_us_ = 0;
};

struct PhaseReport {
  std::string phase;  // "insert"
  uint32_t loop = 0;  // 1-based
  uint32_t threads = 0;
  uint32_t parallelism = 0;
  uint32_t batch = 0;
  uint64_t operations = 0;    // key operations that succeeded
  uint64_t transactions = 0;  // transactions that completed (committed or failed)
  uint64_t errors = 0;        // failed transactions
  double seconds = 0;
  LatencyHistogram latency;  // per transaction, begin to commit

  double ops_per_second() const { return seconds > 0 ? operations / seconds : 0; }
};

// "insert    loop 1: 100000 ops in 1.52 s = 65789 ops/s; latency us p50 480 p95 900
// p99 1400 (max 5210); errors 0".
std::string format_report(const PhaseReport& report);
std::string csv_header();
std::string csv_line(const PhaseReport& report);

}  // namespace duo::bench
