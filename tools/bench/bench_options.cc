#include "tools/bench/bench_options.h"

#include <limits>
#include <optional>

#include "mgmd/protocol/mgm_protocol.h"

namespace duo::bench {

const char* bench_op_name(BenchOp op) {
  switch (op) {
    case BenchOp::kInsert:
      return "insert";
    case BenchOp::kRead:
      return "read";
    case BenchOp::kUpdate:
      return "update";
    case BenchOp::kDelete:
      return "delete";
    case BenchOp::kMixed:
      return "mixed";
  }
  return "?";
}

const char* phase_name(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::kLoad:
      return "load";
    case PhaseKind::kInsert:
      return "insert";
    case PhaseKind::kRead:
      return "read";
    case PhaseKind::kUpdate:
      return "update";
    case PhaseKind::kDelete:
      return "delete";
  }
  return "?";
}

std::string bench_usage() {
  return "Usage: duo_bench [options]\n"
         "  --connect=HOST:PORT    management server (default localhost:1186)\n"
         "  --table=NAME           table to use; created if missing (default duo_bench)\n"
         "  --threads=N            client threads (default 1)\n"
         "  --parallelism=N        transactions in flight per thread (default 32)\n"
         "  --batch=N              operations per transaction (default 1)\n"
         "  --rows=N               rows, split over the threads (default 100000)\n"
         "  --duration=SECONDS     repeat read/update phases this long (default: once)\n"
         "  --loops=N              run the phase sequence N times (default 1)\n"
         "  --op=OP                insert, read, update, delete or mixed (default mixed)\n"
         "  --row-size=BYTES       payload bytes per row (default 100)\n"
         "  --csv=FILE             append one CSV line per phase\n"
         "  --connect-timeout=MS   wait for the data nodes (default 30000)\n"
         "  -h, --help\n";
}

namespace {

Status bad(const std::string& name, const std::string& value, const std::string& why) {
  return Status(ErrorCode::kInvalidArgument, "bad value '" + value + "' for " + name + ": " + why);
}

// An unsigned in [min, max].
Status parse_number(const std::string& name, const std::string& value, uint64_t min, uint64_t max,
                    uint64_t* out) {
  const std::optional<uint64_t> n = mgm::parse_uint_arg(value, max);
  if (!n) return bad(name, value, "expected a number up to " + std::to_string(max));
  if (*n < min) return bad(name, value, "must be at least " + std::to_string(min));
  *out = *n;
  return Status::OK();
}

template <typename T>
Status parse_into(const std::string& name, const std::string& value, uint64_t min, uint64_t max,
                  T* out) {
  uint64_t n = 0;
  DUO_RETURN_IF_ERROR(parse_number(name, value, min, max, &n));
  *out = static_cast<T>(n);
  return Status::OK();
}

}  // namespace

Result<BenchOptions> parse_bench_args(const std::vector<std::string>& args) {
  BenchOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::string value;
    bool has_value = false;
    if (const size_t eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name == "-h" || name == "--help") {
      options.help = true;
      continue;
    }
    if (name.rfind("--", 0) != 0) {
      return Status(ErrorCode::kInvalidArgument, "unexpected argument '" + name + "'");
    }
    if (!has_value) {
      if (i + 1 >= args.size()) {
        return Status(ErrorCode::kInvalidArgument, "option " + name + " needs a value");
      }
      value = args[++i];
    }
    constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();
    if (name == "--connect" || name == "--ndb-connectstring") {
      if (value.empty()) return bad(name, value, "empty connect string");
      options.connect = value;
    } else if (name == "--table") {
      if (value.empty()) return bad(name, value, "empty table name");
      options.table = value;
    } else if (name == "--threads") {
      DUO_RETURN_IF_ERROR(parse_into(name, value, 1, kThreadsMax, &options.threads));
    } else if (name == "--parallelism") {
      DUO_RETURN_IF_ERROR(parse_into(name, value, 1, kParallelismMax, &options.parallelism));
    } else if (name == "--batch") {
      DUO_RETURN_IF_ERROR(parse_into(name, value, 1, kBatchMax, &options.batch));
    } else if (name == "--rows") {
      DUO_RETURN_IF_ERROR(parse_into(name, value, 1, uint64_t{1} << 40, &options.rows));
    } else if (name == "--duration") {
      DUO_RETURN_IF_ERROR(parse_into(name, value, 1, 7 * 24 * 3600, &options.duration_s));
    } else if (name == "--loops") {
      DUO_RETURN_IF_ERROR(parse_into(name, value, 1, kU32, &options.loops));
    } else if (name == "--row-size") {
      DUO_RETURN_IF_ERROR(parse_into(name, value, 1, kRowSizeMax, &options.row_size));
    } else if (name == "--connect-timeout") {
      DUO_RETURN_IF_ERROR(parse_into(name, value, 1, kU32, &options.connect_timeout_ms));
    } else if (name == "--csv") {
      if (value.empty()) return bad(name, value, "empty file name");
      options.csv_path = value;
    } else if (name == "--op") {
      if (value == "insert") {
        options.op = BenchOp::kInsert;
      } else if (value == "read") {
        options.op = BenchOp::kRead;
      } else if (value == "update") {
        options.op = BenchOp::kUpdate;
      } else if (value == "delete") {
        options.op = BenchOp::kDelete;
      } else if (value == "mixed") {
        options.op = BenchOp::kMixed;
      } else {
        return bad(name, value, "expected insert, read, update, delete or mixed");
      }
    } else {
      return Status(ErrorCode::kInvalidArgument, "unknown option '" + name + "'");
    }
  }
  if (options.rows < options.threads) {
    return Status(ErrorCode::kInvalidArgument, "--rows (" + std::to_string(options.rows) +
                                                   ") must be at least --threads (" +
                                                   std::to_string(options.threads) + ")");
  }
  return options;
}

std::vector<PhaseKind> phases_for(BenchOp op) {
  switch (op) {
    case BenchOp::kInsert:
      return {PhaseKind::kInsert};
    case BenchOp::kRead:
      return {PhaseKind::kLoad, PhaseKind::kRead};
    case BenchOp::kUpdate:
      return {PhaseKind::kLoad, PhaseKind::kUpdate};
    case BenchOp::kDelete:
      return {PhaseKind::kLoad, PhaseKind::kDelete};
    case BenchOp::kMixed:
      return {PhaseKind::kInsert, PhaseKind::kRead, PhaseKind::kUpdate, PhaseKind::kDelete};
  }
  return {};
}

KeyRange key_range(uint64_t rows, uint32_t threads, uint32_t thread) {
  // The first rows % threads threads take one row more.
  const uint64_t base = rows / threads;
  const uint64_t extra = rows % threads;
  KeyRange range;
  range.first = thread * base + std::min<uint64_t>(thread, extra);
  range.count = base + (thread < extra ? 1 : 0);
  return range;
}

}  // namespace duo::bench
