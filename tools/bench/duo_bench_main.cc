// duo_bench: a flexAsynch-style load generator over the client library (Cluster).
//
// Each of --threads threads owns a Session and its share of the --rows keys, keeps
// --parallelism transactions of --batch operations in flight (execute_async + poll, the
// asynchronous API), and measures every transaction from begin to its commit callback.
// Transactions are begun with their first key as hint, so the coordinator is the node
// holding that key's primary replica. Phases (bench_options.h phases_for) run one after
// the other; each prints ops/s and p50/p95/p99 latency and may append a CSV line.
//
// The table (id BIGINT primary key, payload VARBINARY(--row-size)) is created when
// missing. Exit code 0, or 1 when connecting or preparing the table failed; operation
// errors are counted in the report, not fatal.
//
// Thread-safety: main() starts the worker threads per phase and joins them; each worker
// touches only its own session and report.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ndb-kernel/api/cluster_connection.h"
#include "storage/row/column.h"
#include "tools/bench/bench_options.h"
#include "tools/bench/bench_report.h"

namespace duo::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Column ids of the bench table, looked up once.
struct BenchTable {
  api::TablePtr table;
  uint16_t id_column = 0;
  uint16_t payload_column = 0;
};

Result<BenchTable> prepare_table(api::Cluster& cluster, const BenchOptions& options) {
  Result<api::TablePtr> table = cluster.get_table(options.table);
  if (!table.ok() && table.status().is(ErrorCode::kNoSuchTable)) {
    api::TableDef def;
    def.schema.name = options.table;
    storage::ColumnDef id;
    id.name = "id";
    id.type = storage::ColumnType::kBigInt;
    id.nullable = false;
    storage::ColumnDef payload;
    payload.name = "payload";
    payload.type = storage::ColumnType::kVarbinary;
    payload.length = options.row_size;
    def.schema.columns = {id, payload};
    def.schema.primary_key = {0};
    std::printf("creating table %s (id BIGINT PRIMARY KEY, payload VARBINARY(%u))\n",
                options.table.c_str(), options.row_size);
    DUO_RETURN_IF_ERROR(cluster.create_table(std::move(def)).status());
    table = cluster.get_table(options.table);
  }
  if (!table.ok()) return table.status();
  BenchTable bench;
  bench.table = *table;
  const int id = (*table)->schema.find_column("id");
  const int payload = (*table)->schema.find_column("payload");
  if (id < 0 || payload < 0) {
    return Status(ErrorCode::kInvalidArgument,
                  "table " + options.table + " exists without columns id and payload");
  }
  bench.id_column = static_cast<uint16_t>(id);
  bench.payload_column = static_cast<uint16_t>(payload);
  return bench;
}

// Runs one phase on one thread's key range.
class Worker {
 public:
  Worker(api::Cluster& cluster, const BenchTable& table, const BenchOptions& options,
         KeyRange range, uint32_t loop)
      : cluster_(cluster), table_(table), options_(options), range_(range), loop_(loop) {}

  PhaseReport run(PhaseKind kind) {
    kind_ = kind;
    const bool timed =
        options_.duration_s > 0 && (kind == PhaseKind::kRead || kind == PhaseKind::kUpdate);
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(options_.duration_s);
    std::unique_ptr<api::Session> session = cluster_.new_session();
    std::vector<Slot> slots(options_.parallelism);
    uint64_t next = range_.first;
    const uint64_t end = range_.first + range_.count;
    for (;;) {
      for (Slot& slot : slots) {
        if (slot.tx != nullptr) continue;
        if (next >= end && timed && Clock::now() < deadline) next = range_.first;
        if (next >= end) break;
        const uint64_t count = std::min<uint64_t>(options_.batch, end - next);
        start(*session, slot, next, count);
        next += count;
      }
      bool busy = false;
      for (const Slot& slot : slots) busy = busy || slot.tx != nullptr;
      if (!busy) break;
      session->poll(10);
      for (Slot& slot : slots) {
        if (slot.tx != nullptr && slot.done) slot.tx.reset();
      }
    }
    return std::move(report_);
  }

 private:
  struct Slot {
    std::unique_ptr<api::Transaction> tx;
    bool done = false;
    uint64_t operations = 0;
    Clock::time_point started;
  };

  storage::AttrValues key(uint64_t id) const {
    storage::AttrValues values;
    values.add(table_.id_column, storage::encode_int(table_.table->schema.columns[table_.id_column],
                                                     static_cast<int64_t>(id)));
    return values;
  }

  std::string payload(uint64_t id) const {
    std::string bytes(options_.row_size, '\0');
    uint64_t x = id * 0x9E3779B97F4A7C15ull + loop_ + static_cast<uint64_t>(kind_);
    for (char& c : bytes) {
      x ^= x >> 29;
      x *= 0xBF58476D1CE4E5B9ull;
      c = static_cast<char>(x >> 56);
    }
    return bytes;
  }

  Status define(api::Transaction& tx, uint64_t id) {
    const api::TableDef& table = *table_.table;
    switch (kind_) {
      case PhaseKind::kLoad:
      case PhaseKind::kInsert: {
        storage::AttrValues row = key(id);
        row.add(table_.payload_column, payload(id));
        return (kind_ == PhaseKind::kLoad ? tx.write(table, std::move(row))
                                          : tx.insert(table, std::move(row)))
            .status();
      }
      case PhaseKind::kRead:
        return tx.read(table, key(id), {table_.payload_column}).status();
      case PhaseKind::kUpdate: {
        storage::AttrValues values;
        values.add(table_.payload_column, payload(id));
        return tx.update(table, key(id), std::move(values)).status();
      }
      case PhaseKind::kDelete:
        return tx.remove(table, key(id)).status();
    }
    return Status(ErrorCode::kInternal, "unknown phase");
  }

  void start(api::Session& session, Slot& slot, uint64_t first, uint64_t count) {
    slot.started = Clock::now();
    slot.done = false;
    slot.operations = count;
    const storage::AttrValues hint = key(first);
    Result<std::unique_ptr<api::Transaction>> tx = session.begin(table_.table.get(), &hint);
    if (!tx.ok()) {
      failed(tx.status());
      return;
    }
    for (uint64_t id = first; id < first + count; ++id) {
      if (Status defined = define(**tx, id); !defined.ok()) {
        failed(defined);
        return;
      }
    }
    slot.tx = std::move(*tx);
    Status started = slot.tx->execute_async(
        api::ExecType::kCommit,
        [this, &slot](api::Transaction&, const Status& status) { finished(slot, status); });
    if (!started.ok()) {
      slot.tx.reset();
      failed(started);
    }
  }

  void finished(Slot& slot, const Status& status) {
    slot.done = true;
    ++report_.transactions;
    const auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - slot.started);
    report_.latency.record(static_cast<uint64_t>(micros.count()));
    if (status.ok()) {
      report_.operations += slot.operations;
    } else {
      failed(status);
    }
  }

  void failed(const Status& status) {
    ++report_.errors;
    if (!first_error_reported_) {
      first_error_reported_ = true;
      std::fprintf(stderr, "duo_bench: %s: %s\n", phase_name(kind_), status.to_string().c_str());
    }
  }

  api::Cluster& cluster_;
  const BenchTable& table_;
  const BenchOptions& options_;
  const KeyRange range_;
  const uint32_t loop_;
  PhaseKind kind_ = PhaseKind::kInsert;
  PhaseReport report_;
  bool first_error_reported_ = false;
};

PhaseReport run_phase(api::Cluster& cluster, const BenchTable& table, const BenchOptions& options,
                      PhaseKind kind, uint32_t loop) {
  std::vector<PhaseReport> reports(options.threads);
  const Clock::time_point started = Clock::now();
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < options.threads; ++t) {
    threads.emplace_back([&, t] {
      Worker worker(cluster, table, options, key_range(options.rows, options.threads, t), loop);
      reports[t] = worker.run(kind);
    });
  }
  for (std::thread& thread : threads) thread.join();
  PhaseReport total;
  total.phase = phase_name(kind);
  total.loop = loop;
  total.threads = options.threads;
  total.parallelism = options.parallelism;
  total.batch = options.batch;
  total.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  for (const PhaseReport& report : reports) {
    total.operations += report.operations;
    total.transactions += report.transactions;
    total.errors += report.errors;
    total.latency.merge(report.latency);
  }
  return total;
}

int run(int argc, char** argv) {
  Result<BenchOptions> options = parse_bench_args(std::vector<std::string>(argv + 1, argv + argc));
  if (!options.ok()) {
    std::fprintf(stderr, "duo_bench: %s\n%s", options.status().message().c_str(),
                 bench_usage().c_str());
    return 2;
  }
  if (options->help) {
    std::printf("%s", bench_usage().c_str());
    return 0;
  }
  api::ClusterOptions cluster_options;
  cluster_options.connect_string = options->connect;
  cluster_options.name = "duo_bench";
  cluster_options.core.transactions_open_max = std::max<size_t>(
      cluster_options.core.transactions_open_max, size_t{options->threads} * options->parallelism);
  Result<std::unique_ptr<api::Cluster>> cluster = api::Cluster::connect(cluster_options);
  if (!cluster.ok()) {
    std::fprintf(stderr, "duo_bench: cannot connect: %s\n", cluster.status().to_string().c_str());
    return 1;
  }
  Result<size_t> ready = (*cluster)->wait_until_ready(options->connect_timeout_ms);
  if (!ready.ok()) {
    std::fprintf(stderr, "duo_bench: %s\n", ready.status().to_string().c_str());
    return 1;
  }
  Result<BenchTable> table = prepare_table(**cluster, *options);
  if (!table.ok()) {
    std::fprintf(stderr, "duo_bench: %s\n", table.status().to_string().c_str());
    return 1;
  }
  std::printf(
      "duo_bench: API node %u, %zu data node(s); %u thread(s) x %u in flight x %u ops, "
      "%llu rows of %u bytes, op %s\n",
      (*cluster)->node_id(), *ready, options->threads, options->parallelism, options->batch,
      static_cast<unsigned long long>(options->rows), options->row_size,
      bench_op_name(options->op));
  std::ofstream csv;
  if (!options->csv_path.empty()) {
    const bool fresh = !std::ifstream(options->csv_path).good();
    csv.open(options->csv_path, std::ios::app);
    if (!csv) {
      std::fprintf(stderr, "duo_bench: cannot open %s\n", options->csv_path.c_str());
      return 1;
    }
    if (fresh) csv << csv_header() << "\n";
  }
  for (uint32_t loop = 1; loop <= options->loops; ++loop) {
    for (PhaseKind kind : phases_for(options->op)) {
      const PhaseReport report = run_phase(**cluster, *table, *options, kind, loop);
      std::printf("%s\n", format_report(report).c_str());
      std::fflush(stdout);
      if (csv.is_open()) csv << csv_line(report) << "\n" << std::flush;
    }
  }
  return 0;
}

}  // namespace
}  // namespace duo::bench

int main(int argc, char** argv) {
  return duo::bench::run(argc, argv);
}
