// duo_datacheck: loads rows whose contents follow from their key, and verifies them —
// through the client library, the way an application sees the cluster. The cluster
// tests use it to check that what was committed is there after restarts and kills.
//
//   duo_datacheck load   --rows N [--start S] [--batch B]   insert ids S..S+N-1
//   duo_datacheck verify --rows N [--start S]                 exactly those rows, intact
//   duo_datacheck count                                       rows in the table
//
// Table (created by load if missing): `datacheck/def/rows` (id BIGINT PRIMARY KEY,
// v BIGINT NOT NULL, payload VARBINARY(64), KEY(v)); v = 7 * id + 1 and payload is a
// pattern derived from id, so any lost, duplicated, stale or corrupted row is detected.
// verify scans the whole table (every row once, nothing extra), reads every 97th id by
// primary key and runs one ordered-index range scan. Exit status 0 = OK, 1 = data
// problem (each printed), 2 = usage or connection error.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ndb-kernel/api/cluster_connection.h"
#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/common/process.h"
#include "storage/row/column.h"

namespace duo::tools {
namespace {

constexpr const char* kTableName = "datacheck/def/rows";
constexpr int kExitProblem = 1;
constexpr int kExitUsage = 2;

struct Options {
  std::string command;
  std::string connect = "localhost:1186";
  int64_t rows = 0;
  int64_t start = 0;
  int64_t batch = 500;
};

std::string i64(int64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }
int64_t as_i64(std::string_view bytes) {
  int64_t v = 0;
  if (bytes.size() == 8) std::memcpy(&v, bytes.data(), 8);
  return v;
}
int64_t value_of(int64_t id) { return 7 * id + 1; }
std::string payload_of(int64_t id) {
  std::string p = "row-" + std::to_string(id) + "-";
  while (p.size() < 40) p += static_cast<char>('a' + (id + static_cast<int64_t>(p.size())) % 26);
  return p;
}

api::TableDef table_def() {
  api::TableDef def;
  def.schema.name = kTableName;
  def.schema.columns = {{"id", storage::ColumnType::kBigInt, false, false},
                        {"v", storage::ColumnType::kBigInt, false, false},
                        {"payload", storage::ColumnType::kVarbinary, false, true, 64}};
  def.schema.primary_key = {0};
  def.schema.ordered_indexes = {{"v_idx", {1}, false}};
  return def;
}

bool parse(int argc, char** argv, Options* options) {
  if (argc < 2) return false;
  options->command = argv[1];
  const std::pair<const char*, int64_t*> counts[] = {
      {"--rows", &options->rows}, {"--start", &options->start}, {"--batch", &options->batch}};
  for (ArgCursor args(argc - 1, argv + 1); args.next();) {
    const std::string& name = args.name();
    bool ok = false;
    if (name == "--connect" || name == "-c") ok = args.take_value(&options->connect);
    for (const auto& [option, target] : counts) {
      if (name == option) ok = args.take_count(target);
    }
    if (!ok || options->batch == 0) {
      std::fprintf(stderr, "duo_datacheck: bad option '%s'\n", name.c_str());
      return false;
    }
  }
  return options->command == "load" || options->command == "verify" ||
         options->command == "count";
}

int load(api::Cluster& cluster, const Options& options) {
  Result<api::TablePtr> table = cluster.get_table(kTableName);
  if (!table.ok()) table = cluster.create_table(table_def());
  if (!table.ok()) {
    std::fprintf(stderr, "duo_datacheck: cannot create %s: %s\n", kTableName,
                 table.status().message().c_str());
    return kExitUsage;
  }
  std::unique_ptr<api::Session> session = cluster.new_session();
  int64_t loaded = 0;
  for (int64_t first = options.start; first < options.start + options.rows;) {
    const int64_t last = std::min(first + options.batch, options.start + options.rows);
    Result<std::unique_ptr<api::Transaction>> tx = session->begin();
    if (!tx.ok()) {
      std::fprintf(stderr, "duo_datacheck: %s\n", tx.status().message().c_str());
      return kExitUsage;
    }
    for (int64_t id = first; id < last; ++id) {
      storage::AttrValues row;
      row.add(0, i64(id));
      row.add(1, i64(value_of(id)));
      row.add(2, payload_of(id));
      if (Result<uint32_t> op = (*tx)->insert(**table, std::move(row)); !op.ok()) {
        std::fprintf(stderr, "duo_datacheck: %s\n", op.status().message().c_str());
        return kExitUsage;
      }
    }
    Status committed = (*tx)->execute(api::ExecType::kCommit);
    if (committed.is(ErrorCode::kTemporary)) continue;  // retry the batch
    if (!committed.ok()) {
      std::fprintf(stderr, "duo_datacheck: commit of ids %lld..%lld failed: %s\n",
                   static_cast<long long>(first), static_cast<long long>(last - 1),
                   committed.message().c_str());
      return kExitProblem;
    }
    loaded += last - first;
    first = last;
  }
  std::printf("loaded %lld rows (ids %lld..%lld)\n", static_cast<long long>(loaded),
              static_cast<long long>(options.start),
              static_cast<long long>(options.start + options.rows - 1));
  return 0;
}

// Appends a problem (printing only the first few).
void problem(int* count, const std::string& text) {
  if (++*count <= 10) std::printf("PROBLEM: %s\n", text.c_str());
}

Result<int64_t> scan_all(api::Session& session, const api::TableDef& table,
                         const api::ScanSpec& spec, const Options* check, int* problems) {
  DUO_ASSIGN_OR_RETURN(std::unique_ptr<api::Transaction> tx, session.begin());
  DUO_ASSIGN_OR_RETURN(std::unique_ptr<api::ScanCursor> cursor, tx->scan(table, spec));
  std::vector<uint8_t> seen;
  if (check != nullptr) seen.assign(static_cast<size_t>(check->rows), 0);
  int64_t rows = 0;
  storage::AttrValues row;
  for (;;) {
    row.clear();
    DUO_ASSIGN_OR_RETURN(bool more, cursor->next(&row));
    if (!more) break;
    ++rows;
    if (check == nullptr) continue;
    const int64_t id = as_i64(row.value(0));
    const int64_t index = id - check->start;
    if (index < 0 || index >= check->rows) {
      problem(problems, "unexpected row id " + std::to_string(id));
      continue;
    }
    if (seen[static_cast<size_t>(index)]++ != 0) {
      problem(problems, "row " + std::to_string(id) + " returned twice");
    }
    if (as_i64(row.value(1)) != value_of(id) || row.entry(2).is_null ||
        row.value(2) != payload_of(id)) {
      problem(problems, "row " + std::to_string(id) + " has wrong contents");
    }
  }
  if (check != nullptr) {
    for (int64_t i = 0; i < check->rows; ++i) {
      if (seen[static_cast<size_t>(i)] == 0) {
        problem(problems, "row " + std::to_string(check->start + i) + " is missing");
      }
    }
  }
  return rows;
}

int verify(api::Cluster& cluster, const Options& options) {
  Result<api::TablePtr> table = cluster.get_table(kTableName);
  if (!table.ok()) {
    if (options.rows == 0) {
      std::printf("verified 0 rows (no table)\n");
      return 0;
    }
    std::printf("PROBLEM: table %s: %s\n", kTableName, table.status().message().c_str());
    return kExitProblem;
  }
  std::unique_ptr<api::Session> session = cluster.new_session();
  int problems = 0;
  Result<int64_t> scanned = scan_all(*session, **table, api::ScanSpec{}, &options, &problems);
  if (!scanned.ok()) {
    std::fprintf(stderr, "duo_datacheck: scan failed: %s\n", scanned.status().message().c_str());
    return kExitUsage;
  }
  // Primary-key reads of a sample.
  int64_t reads = 0;
  for (int64_t id = options.start; id < options.start + options.rows; id += 97) {
    Result<std::unique_ptr<api::Transaction>> tx = session->begin();
    if (!tx.ok()) return kExitUsage;
    storage::AttrValues key;
    key.add(0, i64(id));
    Result<uint32_t> op = (*tx)->read(**table, std::move(key));
    if (!op.ok() || !(*tx)->execute(api::ExecType::kCommit).ok()) {
      problem(&problems, "read of row " + std::to_string(id) + " failed");
      continue;
    }
    Result<api::OpResult> result = (*tx)->result(*op);
    if (!result.ok() || !result->status.ok() || result->values.size() != 3 ||
        as_i64(result->values.value(1)) != value_of(id)) {
      problem(&problems, "primary-key read of row " + std::to_string(id) + " is wrong");
    }
    ++reads;
  }
  // One ordered-index range: v in [value_of(lo), value_of(hi)).
  const int64_t lo = options.start + options.rows / 4;
  const int64_t hi = lo + std::min<int64_t>(1000, options.rows / 2);
  api::ScanSpec range;
  range.index = 0;
  range.low.add(1, i64(value_of(lo)));
  range.high.add(1, i64(value_of(hi)));
  range.high_inclusive = false;
  Result<int64_t> in_range = scan_all(*session, **table, range, nullptr, &problems);
  if (!in_range.ok() || *in_range != hi - lo) {
    problem(&problems, "index range scan returned " +
                           (in_range.ok() ? std::to_string(*in_range) : in_range.status().message()) +
                           " rows, expected " + std::to_string(hi - lo));
  }
  if (problems != 0) {
    std::printf("FAILED: %d problem(s) in %lld scanned rows\n", problems,
                static_cast<long long>(*scanned));
    return kExitProblem;
  }
  std::printf("verified %lld rows (scan, %lld key reads, index range of %lld)\n",
              static_cast<long long>(*scanned), static_cast<long long>(reads),
              static_cast<long long>(hi - lo));
  return 0;
}

int count(api::Cluster& cluster) {
  Result<api::TablePtr> table = cluster.get_table(kTableName);
  if (!table.ok()) {
    std::printf("0\n");
    return 0;
  }
  std::unique_ptr<api::Session> session = cluster.new_session();
  int problems = 0;
  Result<int64_t> rows = scan_all(*session, **table, api::ScanSpec{}, nullptr, &problems);
  if (!rows.ok()) {
    std::fprintf(stderr, "duo_datacheck: %s\n", rows.status().message().c_str());
    return kExitUsage;
  }
  std::printf("%lld\n", static_cast<long long>(*rows));
  return 0;
}

int run(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: duo_datacheck load|verify|count [--connect HOST:PORT] [--rows N] "
                 "[--start S] [--batch B]\n");
    return kExitUsage;
  }
  set_log_level(LogLevel::kWarning);
  api::ClusterOptions cluster_options;
  cluster_options.connect_string = options.connect;
  cluster_options.name = "duo_datacheck";
  Result<std::unique_ptr<api::Cluster>> cluster = api::Cluster::connect(cluster_options);
  if (!cluster.ok()) {
    std::fprintf(stderr, "duo_datacheck: %s\n", cluster.status().message().c_str());
    return kExitUsage;
  }
  if (Result<size_t> ready = (*cluster)->wait_until_ready(30000); !ready.ok()) {
    std::fprintf(stderr, "duo_datacheck: %s\n", ready.status().message().c_str());
    return kExitUsage;
  }
  if (options.command == "load") return load(**cluster, options);
  if (options.command == "verify") return verify(**cluster, options);
  return count(**cluster);
}

}  // namespace
}  // namespace duo::tools

int main(int argc, char** argv) { return duo::tools::run(argc, argv); }
