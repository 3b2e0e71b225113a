// duo_bench's command line: a flexAsynch-style load generator (NDB's
// storage/ndb/test/ndbapi/flexAsynch.cpp): --threads threads, each keeping
// --parallelism transactions of --batch key operations in flight over its share of
// --rows rows, phase after phase. Parsing is separate from the program so that it is
// unit-testable.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ndb-kernel/common/status.h"

namespace duo::bench {

enum class BenchOp : uint8_t { kInsert, kRead, kUpdate, kDelete, kMixed };
const char* bench_op_name(BenchOp op);

// What one phase does to every row of a thread's key range.
enum class PhaseKind : uint8_t { kLoad, kInsert, kRead, kUpdate, kDelete };
const char* phase_name(PhaseKind kind);

// Limits: a typo must not ask for a million threads or a 1 GB row.
inline constexpr uint32_t kThreadsMax = 256;
inline constexpr uint32_t kParallelismMax = 4096;
inline constexpr uint32_t kBatchMax = 1024;
inline constexpr uint32_t kRowSizeMax = 29000;  // below the 30000-byte row limit

struct BenchOptions {
  std::string connect = "localhost:1186";
  std::string table = "duo_bench";
  uint32_t threads = 1;
  uint32_t parallelism = 32;  // transactions in flight per thread
  uint32_t batch = 1;         // operations per transaction
  uint64_t rows = 100000;
  uint64_t duration_s = 0;  // read/update phases repeat for this long (0: once)
  uint32_t loops = 1;       // the whole phase sequence runs this many times
  BenchOp op = BenchOp::kMixed;
  uint32_t row_size = 100;  // payload bytes (VARBINARY(row_size))
  std::string csv_path;     // append one line per phase; empty = none
  uint64_t connect_timeout_ms = 30000;
  bool help = false;
};

// Parses argv[1..] (`--name=value` or `--name value`). kInvalidArgument names the bad
// option and why.
Result<BenchOptions> parse_bench_args(const std::vector<std::string>& args);
std::string bench_usage();

// The phases of one loop: mixed = insert, read, update, delete (flexAsynch's cycle);
// read/update/delete first load the rows (write, so existing rows are fine); insert
// alone is just insert.
std::vector<PhaseKind> phases_for(BenchOp op);

// Rows of thread `thread` (of `threads`): [first, first + count).
struct KeyRange {
  uint64_t first = 0;
  uint64_t count = 0;
};
KeyRange key_range(uint64_t rows, uint32_t threads, uint32_t thread);

}  // namespace duo::bench
