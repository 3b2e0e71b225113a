#include "tools/bench/bench_report.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

namespace duo::bench {

size_t LatencyHistogram::bucket_of(uint64_t micros) {
  // Values below kSubBuckets map one to one; above, each power of two [2^p, 2^(p+1)) is
  // cut into kSubBuckets equal parts.
  if (micros < kSubBuckets) return static_cast<size_t>(micros);
  const uint32_t power = 63 - static_cast<uint32_t>(std::countl_zero(micros));  // >= 5
  const uint32_t shift = power - 5;                                             // log2(32)
  const uint64_t sub = (micros >> shift) - kSubBuckets;                         // 0..31
  const size_t bucket = static_cast<size_t>(power - 4) * kSubBuckets + sub;
  return std::min<size_t>(bucket, kSubBuckets * kPowers - 1);
}

uint64_t LatencyHistogram::bucket_upper_us(size_t bucket) {
  if (bucket < kSubBuckets) return bucket;
  const uint32_t power = static_cast<uint32_t>(bucket / kSubBuckets) + 4;
  const uint64_t sub = bucket % kSubBuckets;
  const uint32_t shift = power - 5;
  return ((kSubBuckets + sub + 1) << shift) - 1;
}

void LatencyHistogram::record(uint64_t micros) {
  ++buckets_[bucket_of(micros)];
  ++count_;
  max_us_ = std::max(max_us_, micros);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  max_us_ = std::max(max_us_, other.max_us_);
}

uint64_t LatencyHistogram::percentile_us(double fraction) const {
  if (count_ == 0) return 0;
  const double clamped = std::clamp(fraction, 0.0, 1.0);
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(clamped * count_)));
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    // The top bucket also holds everything beyond it: its bound is the maximum.
    if (seen >= rank)
      return i + 1 == buckets_.size() ? max_us_ : std::min(bucket_upper_us(i), max_us_);
  }
  return max_us_;
}

std::string format_report(const PhaseReport& report) {
  char line[512];
  std::snprintf(line, sizeof(line),
                "%-7s loop %u: %llu ops in %.2f s = %.0f ops/s; latency us p50 %llu p95 %llu "
                "p99 %llu (max %llu); errors %llu",
                report.phase.c_str(), report.loop,
                static_cast<unsigned long long>(report.operations), report.seconds,
                report.ops_per_second(),
                static_cast<unsigned long long>(report.latency.percentile_us(0.50)),
                static_cast<unsigned long long>(report.latency.percentile_us(0.95)),
                static_cast<unsigned long long>(report.latency.percentile_us(0.99)),
                static_cast<unsigned long long>(report.latency.max_us()),
                static_cast<unsigned long long>(report.errors));
  return line;
}

std::string csv_header() {
  return "phase,loop,threads,parallelism,batch,operations,transactions,errors,seconds,"
         "ops_per_second,p50_us,p95_us,p99_us,max_us";
}

std::string csv_line(const PhaseReport& report) {
  char line[512];
  std::snprintf(line, sizeof(line), "%s,%u,%u,%u,%u,%llu,%llu,%llu,%.3f,%.1f,%llu,%llu,%llu,%llu",
                report.phase.c_str(), report.loop, report.threads, report.parallelism, report.batch,
                static_cast<unsigned long long>(report.operations),
                static_cast<unsigned long long>(report.transactions),
                static_cast<unsigned long long>(report.errors), report.seconds,
                report.ops_per_second(),
                static_cast<unsigned long long>(report.latency.percentile_us(0.50)),
                static_cast<unsigned long long>(report.latency.percentile_us(0.95)),
                static_cast<unsigned long long>(report.latency.percentile_us(0.99)),
                static_cast<unsigned long long>(report.latency.max_us()));
  return line;
}

}  // namespace duo::bench
