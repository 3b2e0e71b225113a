// duo_bank: the bank-transfer workload of the process fault tests — money moves between
// accounts in transactions through the client library while data nodes are killed,
// stopped and restarted, and verify proves afterwards that no money was created or
// lost, that every transfer recorded is applied exactly once, and that every transfer
// acknowledged as committed is there (issue 5, "Process fault tests").
//
//   duo_bank setup  --accounts N --balance B
//   duo_bank run    --seconds S --threads T --seed X --first-id F --ack-file PATH
//                   [--gap-report-ms G] [--rate R]
//   duo_bank verify --accounts N --balance B --ack-file PATH [--ack-gci-max G]
//   (all take --connect HOST:PORT, default localhost:1186)
//
// Tables: `bank/def/accounts` (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL), ids
// 1..N, each starting with balance B; `bank/def/transfers` (id BIGINT PRIMARY KEY,
// from_id, to_id, amount BIGINT NOT NULL), one row per committed transfer.
//
// run: T threads, each with its own Session, loop until S seconds passed (or SIGTERM /
// SIGINT): pick two different accounts and an amount, and in ONE transaction subtract
// it from one balance and add it to the other (interpreted updates: no read-back) and
// insert the transfer row; commit. Transfer ids are F + thread + T * attempt, so every
// attempt (also a retry) has a new id and two runs with distinct F ranges never collide.
// A temporary error (node failure, lock wait timeout, deadlock, node starting, no data
// node linked) is counted by kind and retried after a short backoff. An attempt whose
// commit outcome is unknown (its coordinator died during commit, or the execute timed
// out) is counted as unknown: the transfer may or may not be there, and verify accepts
// both. Every acknowledged transfer is appended to the ack file as "ID GCI UNIX_MS"
// (flushed per line; GCI = the global checkpoint it committed in, UNIX_MS = wall-clock
// time of the acknowledgment), every unknown one as "?ID UNIX_MS". With
// --rate R the threads together start at most R transfers a second (so that a long
// fault test neither fills DataMemory nor starves the restarting node of CPU). Any
// gap of at least --gap-report-ms without a commit (all threads together) is printed as
// it ends; the last line is "result: committed=... longest_gap_ms=...".
//
// verify scans both tables and checks: accounts 1..N each once; the total is N*B; every
// transfer row names two different existing accounts and a positive amount; every
// balance equals B - (its outgoing transfers) + (its incoming ones); every acknowledged
// transfer is present (with --ack-gci-max G only those that committed in a GCI <= G:
// after a whole-cluster crash, what committed after the last complete global checkpoint
// may be lost). It prints an order-independent checksum of both tables' rows, so runs
// against different surviving replicas can be compared. Exit status 0 = OK, 1 = data
// problem (each printed), 2 = usage or connection error.
//
// Thread-safety: run's threads share only the Cluster (thread-safe) and RunState (its
// mutex); each has its own Session.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ndb-kernel/api/cluster_connection.h"
#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/common/process.h"
#include "storage/row/column.h"
#include "storage/scan/interpreted_update.h"

namespace duo::tools {
namespace {

constexpr const char* kAccountsTable = "bank/def/accounts";
constexpr const char* kTransfersTable = "bank/def/transfers";
constexpr int kExitProblem = 1;
constexpr int kExitUsage = 2;
// Accounts written per setup transaction.
constexpr int64_t kSetupBatchRows = 500;
// Largest amount of one transfer (amounts are 1..kAmountMax).
constexpr int64_t kAmountMax = 100;
// A run's blocking calls give up after this long (the attempt then counts as unknown
// when it was a commit): a SIGSTOPped coordinator must not stall a thread for the
// library's default 30 s.
constexpr uint64_t kRunRequestTimeoutMs = 10000;
// Retry backoff: kBackoffBaseMs doubled per consecutive failure up to kBackoffMaxMs.
constexpr int kBackoffBaseMs = 5;
constexpr int kBackoffMaxMs = 200;
// verify retries its scans this many times (1 s apart) on a temporary error: right
// after a restart a fragment may briefly have no reachable replica.
constexpr int kVerifyAttemptsMax = 20;
// Problems printed one by one; the rest are only counted.
constexpr int kProblemsPrintedMax = 20;

struct Options {
  std::string command;
  std::string connect = "localhost:1186";
  int64_t accounts = 0;
  int64_t balance = 0;
  int64_t seconds = 10;
  int64_t threads = 4;
  int64_t seed = 1;
  int64_t first_id = 1;
  int64_t gap_report_ms = 300;
  int64_t rate = 0;         // transfers per second, all threads together; 0 = unlimited
  int64_t ack_gci_max = 0;  // 0: every acknowledged transfer is required
  // ClusterOptions::recv_thread_activation_threshold (the fault tests run both modes).
  int64_t recv_thread_activation_threshold = 8;
  std::string ack_file;
};

std::string i64(int64_t v) {
  return std::string(reinterpret_cast<const char*>(&v), 8);
}
int64_t as_i64(std::string_view bytes) {
  int64_t v = 0;
  if (bytes.size() == 8) std::memcpy(&v, bytes.data(), 8);
  return v;
}

storage::AttrValues key_of(int64_t id) {
  storage::AttrValues key;
  key.add(0, i64(id));
  return key;
}

api::TableDef accounts_def() {
  api::TableDef def;
  def.schema.name = kAccountsTable;
  def.schema.columns = {{"id", storage::ColumnType::kBigInt, false, false},
                        {"balance", storage::ColumnType::kBigInt, false, false}};
  def.schema.primary_key = {0};
  return def;
}

api::TableDef transfers_def() {
  api::TableDef def;
  def.schema.name = kTransfersTable;
  def.schema.columns = {{"id", storage::ColumnType::kBigInt, false, false},
                        {"from_id", storage::ColumnType::kBigInt, false, false},
                        {"to_id", storage::ColumnType::kBigInt, false, false},
                        {"amount", storage::ColumnType::kBigInt, false, false}};
  def.schema.primary_key = {0};
  return def;
}

bool parse(int argc, char** argv, Options* options) {
  if (argc < 2) return false;
  options->command = argv[1];
  // Each option's lowest allowed value (the highest is the type's, or noted).
  const std::pair<const char*, std::pair<int64_t*, int64_t>> counts[] = {
      {"--accounts", {&options->accounts, 2}},    {"--balance", {&options->balance, 0}},
      {"--seconds", {&options->seconds, 0}},      {"--threads", {&options->threads, 1}},
      {"--seed", {&options->seed, 0}},            {"--first-id", {&options->first_id, 0}},
      {"--gap-report-ms", {&options->gap_report_ms, 0}}, {"--rate", {&options->rate, 0}},
      {"--ack-gci-max", {&options->ack_gci_max, 0}},
      {"--recv-thread-activation-threshold", {&options->recv_thread_activation_threshold, 0}}};
  for (ArgCursor args(argc - 1, argv + 1); args.next();) {
    const std::string& name = args.name();
    bool ok = false;
    if (name == "--connect" || name == "-c") {
      ok = args.take_value(&options->connect);
    } else if (name == "--ack-file") {
      ok = args.take_value(&options->ack_file) && !options->ack_file.empty();
    } else {
      for (const auto& [option, target] : counts) {
        if (name != option) continue;
        int64_t number = 0;
        ok = args.take_count(&number) && number >= target.second;
        if (ok) *target.first = number;
      }
    }
    if (ok && name == "--threads") ok = options->threads <= 256;
    if (!ok) {
      std::fprintf(stderr, "duo_bank: bad option '%s'\n", name.c_str());
      return false;
    }
  }
  if (options->command == "setup") return options->accounts >= 2;
  if (options->command == "run") return !options->ack_file.empty();
  if (options->command == "verify") return options->accounts >= 2 && !options->ack_file.empty();
  return false;
}

// ---- setup ----

int setup(api::Cluster& cluster, const Options& options) {
  for (const api::TableDef& def : {accounts_def(), transfers_def()}) {
    if (cluster.get_table(def.schema.name).ok()) {
      std::fprintf(stderr, "duo_bank: %s already exists (set up once per cluster)\n",
                   def.schema.name.c_str());
      return kExitUsage;
    }
    if (Result<api::TablePtr> made = cluster.create_table(def); !made.ok()) {
      std::fprintf(stderr, "duo_bank: cannot create %s: %s\n", def.schema.name.c_str(),
                   made.status().message().c_str());
      return kExitUsage;
    }
  }
  Result<api::TablePtr> accounts = cluster.get_table(kAccountsTable);
  if (!accounts.ok()) {
    std::fprintf(stderr, "duo_bank: %s\n", accounts.status().message().c_str());
    return kExitUsage;
  }
  std::unique_ptr<api::Session> session = cluster.new_session();
  for (int64_t first = 1; first <= options.accounts;) {
    const int64_t last = std::min(first + kSetupBatchRows - 1, options.accounts);
    Result<std::unique_ptr<api::Transaction>> tx = session->begin();
    if (!tx.ok()) {
      std::fprintf(stderr, "duo_bank: %s\n", tx.status().message().c_str());
      return kExitUsage;
    }
    for (int64_t id = first; id <= last; ++id) {
      storage::AttrValues row;
      row.add(0, i64(id));
      row.add(1, i64(options.balance));
      // write (insert or overwrite): a batch retried after an unknown outcome is harmless.
      if (Result<uint32_t> op = (*tx)->write(**accounts, std::move(row)); !op.ok()) {
        std::fprintf(stderr, "duo_bank: %s\n", op.status().message().c_str());
        return kExitUsage;
      }
    }
    Status committed = (*tx)->execute(api::ExecType::kCommit);
    if (committed.is(ErrorCode::kTemporary)) continue;
    if (!committed.ok()) {
      std::fprintf(stderr, "duo_bank: setup of accounts %lld..%lld failed: %s\n",
                   static_cast<long long>(first), static_cast<long long>(last),
                   committed.message().c_str());
      return kExitProblem;
    }
    first = last + 1;
  }
  std::printf("set up %lld accounts with balance %lld (total %lld)\n",
              static_cast<long long>(options.accounts), static_cast<long long>(options.balance),
              static_cast<long long>(options.accounts * options.balance));
  return 0;
}

// ---- run ----

volatile std::sig_atomic_t g_stop_requested = 0;
extern "C" void request_stop(int) {
  g_stop_requested = 1;
}

using Clock = std::chrono::steady_clock;

// Wall-clock milliseconds, written beside each acknowledgment so that a lost one can be
// lined up with the fault test's log of when it killed or stopped what.
int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Why an attempt did not commit.
enum class Refusal : uint8_t {
  kNodeFailure,     // 4010 class: a data node failed under the transaction
  kNodeStarting,    // the coordinator is a node in its node restart
  kNoNode,          // no data node linked / a replica unreachable
  kLock,            // lock wait timeout or deadlock
  kOtherTemporary,  // any other kTemporary
  kError,           // not retryable: a bug somewhere (printed)
  kCount,
};
constexpr const char* kRefusalNames[] = {"node_failure", "node_starting",   "no_node",
                                         "lock",         "other_temporary", "error"};
static_assert(std::size(kRefusalNames) == static_cast<size_t>(Refusal::kCount));

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

// True when the attempt may have committed although execute() failed: the coordinator
// died during commit (the library says so), or the commit timed out.
bool outcome_unknown(const Status& status) {
  return status.is(ErrorCode::kTemporary) &&
         (contains(status.message(), "outcome unknown") ||
          contains(status.message(), "did not complete within"));
}

Refusal classify(const Status& status) {
  if (status.is(ErrorCode::kLockWaitTimeout) || status.is(ErrorCode::kDeadlock)) {
    return Refusal::kLock;
  }
  if (!status.is(ErrorCode::kTemporary)) return Refusal::kError;
  // Blocks word their messages differently ("Node failure caused ...", "node failure
  // caused ..."): match lower case.
  std::string m = status.message();
  std::transform(m.begin(), m.end(), m.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (contains(m, "node failure")) return Refusal::kNodeFailure;
  if (contains(m, "starting")) return Refusal::kNodeStarting;
  if (contains(m, "no data node") || contains(m, "not connected") || contains(m, "cannot reach") ||
      contains(m, "no live replica")) {
    return Refusal::kNoNode;
  }
  if (contains(m, "lock")) return Refusal::kLock;
  return Refusal::kOtherTemporary;
}

// What run's threads share.
class RunState {
 public:
  RunState(std::FILE* ack_file, int64_t gap_report_ms)
      : ack_file_(ack_file),
        gap_report_ms_(gap_report_ms),
        start_(Clock::now()),
        last_commit_(start_) {}

  void committed(int64_t transfer_id, uint32_t gci) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::fprintf(ack_file_, "%lld %u %lld\n", static_cast<long long>(transfer_id), gci,
                 static_cast<long long>(unix_ms()));
    std::fflush(ack_file_);
    ++committed_;
    note_gap(Clock::now());
  }
  void unknown(int64_t transfer_id, const Status& status) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::fprintf(ack_file_, "?%lld %lld\n", static_cast<long long>(transfer_id),
                 static_cast<long long>(unix_ms()));
    std::fflush(ack_file_);
    if (++unknown_ <= kProblemsPrintedMax) {
      std::printf("unknown outcome of transfer %lld: %s\n", static_cast<long long>(transfer_id),
                  status.message().c_str());
      std::fflush(stdout);
    }
  }
  void refused(Refusal kind, const Status& status) {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t count = ++refused_[static_cast<size_t>(kind)];
    // The first message of each kind (every error) tells what the cluster said.
    if (count == 1 || (kind == Refusal::kError && count <= kProblemsPrintedMax)) {
      std::printf("%s: %s\n", kRefusalNames[static_cast<size_t>(kind)], status.to_string().c_str());
      std::fflush(stdout);
    }
  }
  // Prints the counts; returns the number of non-retryable errors.
  uint64_t report() {
    std::lock_guard<std::mutex> lock(mutex_);
    const Clock::time_point end = Clock::now();
    note_gap(end);  // a gap still open at the end counts too
    std::printf("result: committed=%llu unknown=%llu", static_cast<unsigned long long>(committed_),
                static_cast<unsigned long long>(unknown_));
    for (size_t i = 0; i < static_cast<size_t>(Refusal::kCount); ++i) {
      std::printf(" %s=%llu", kRefusalNames[i], static_cast<unsigned long long>(refused_[i]));
    }
    std::printf(" longest_gap_ms=%lld seconds=%.1f\n", static_cast<long long>(longest_gap_ms_),
                std::chrono::duration<double>(end - start_).count());
    std::fflush(stdout);
    return refused_[static_cast<size_t>(Refusal::kError)];
  }

 private:
  // A commit (or the end) at `now`: the time since the previous commit is a gap. mutex_.
  void note_gap(Clock::time_point now) {
    const int64_t gap_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - last_commit_).count();
    longest_gap_ms_ = std::max(longest_gap_ms_, gap_ms);
    if (gap_ms >= gap_report_ms_) {
      std::printf("gap %lld ms without a commit (from +%.2f s)\n", static_cast<long long>(gap_ms),
                  std::chrono::duration<double>(last_commit_ - start_).count());
      std::fflush(stdout);
    }
    last_commit_ = now;
  }

  std::FILE* const ack_file_;
  const int64_t gap_report_ms_;
  const Clock::time_point start_;

  std::mutex mutex_;
  Clock::time_point last_commit_;                                // GUARDED_BY(mutex_)
  int64_t longest_gap_ms_ = 0;                                   // GUARDED_BY(mutex_)
  uint64_t committed_ = 0;                                       // GUARDED_BY(mutex_)
  uint64_t unknown_ = 0;                                         // GUARDED_BY(mutex_)
  uint64_t refused_[static_cast<size_t>(Refusal::kCount)] = {};  // GUARDED_BY(mutex_)
};

// One transfer attempt: OK once committed (*gci = its GCI), else execute's error.
Status transfer(api::Session& session, const api::TableDef& accounts,
                const api::TableDef& transfers, int64_t transfer_id, int64_t from, int64_t to,
                int64_t amount, uint32_t* gci) {
  const storage::AttrValues hint = key_of(from);
  DUO_ASSIGN_OR_RETURN(std::unique_ptr<api::Transaction> tx, session.begin(&accounts, &hint));
  storage::InterpretedUpdate debit;
  debit.sub(1, amount);
  storage::InterpretedUpdate credit;
  credit.add(1, amount);
  DUO_RETURN_IF_ERROR(tx->interpreted_update(accounts, key_of(from), debit).status());
  DUO_RETURN_IF_ERROR(tx->interpreted_update(accounts, key_of(to), credit).status());
  storage::AttrValues row;
  row.add(0, i64(transfer_id));
  row.add(1, i64(from));
  row.add(2, i64(to));
  row.add(3, i64(amount));
  DUO_RETURN_IF_ERROR(tx->insert(transfers, std::move(row)).status());
  DUO_RETURN_IF_ERROR(tx->execute(api::ExecType::kCommit));
  *gci = tx->commit_gci();
  return Status::OK();
}

void run_thread(api::Cluster& cluster, const api::TableDef& accounts,
                const api::TableDef& transfers, const Options& options, int64_t accounts_count,
                int64_t thread, Clock::time_point deadline, RunState* state) {
  std::unique_ptr<api::Session> session = cluster.new_session();
  std::mt19937_64 random(static_cast<uint64_t>(options.seed) * 7919u +
                         static_cast<uint64_t>(thread));
  std::uniform_int_distribution<int64_t> account(1, accounts_count);
  std::uniform_int_distribution<int64_t> amount_of(1, kAmountMax);
  int failures_in_a_row = 0;
  // Pacing (--rate): this thread's share of the rate, one attempt per period.
  const Clock::duration period =
      options.rate == 0
          ? Clock::duration::zero()
          : std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                static_cast<double>(options.threads) / static_cast<double>(options.rate)));
  Clock::time_point next_start = Clock::now();
  for (int64_t attempt = 0; Clock::now() < deadline && g_stop_requested == 0; ++attempt) {
    if (period != Clock::duration::zero()) {
      // Behind schedule (after a stall): start again from now rather than in a burst.
      next_start = std::max(next_start + period, Clock::now());
      std::this_thread::sleep_until(next_start);
    }
    const int64_t transfer_id = options.first_id + thread + options.threads * attempt;
    const int64_t from = account(random);
    int64_t to = account(random);
    if (to == from) to = from % accounts_count + 1;
    const int64_t amount = amount_of(random);
    uint32_t gci = 0;
    Status status = transfer(*session, accounts, transfers, transfer_id, from, to, amount, &gci);
    if (status.ok()) {
      state->committed(transfer_id, gci);
      failures_in_a_row = 0;
      continue;
    }
    if (outcome_unknown(status)) {
      state->unknown(transfer_id, status);
    } else {
      state->refused(classify(status), status);
    }
    const int backoff_ms =
        std::min(kBackoffMaxMs, kBackoffBaseMs << std::min(failures_in_a_row++, 6));
    std::this_thread::sleep_for(std::chrono::milliseconds(
        backoff_ms / 2 + static_cast<int>(random() % static_cast<uint64_t>(backoff_ms / 2 + 1))));
  }
}

int run(api::Cluster& cluster, const Options& options) {
  Result<api::TablePtr> accounts = cluster.get_table(kAccountsTable);
  Result<api::TablePtr> transfers = cluster.get_table(kTransfersTable);
  if (!accounts.ok() || !transfers.ok()) {
    std::fprintf(stderr, "duo_bank: tables missing (run `duo_bank setup` first): %s\n",
                 (!accounts.ok() ? accounts.status() : transfers.status()).message().c_str());
    return kExitUsage;
  }
  // The number of accounts is the table's: count them once.
  int64_t accounts_count = 0;
  {
    std::unique_ptr<api::Session> session = cluster.new_session();
    Result<std::unique_ptr<api::Transaction>> tx = session->begin();
    Result<std::unique_ptr<api::ScanCursor>> cursor =
        tx.ok() ? (*tx)->scan(**accounts, api::ScanSpec{})
                : Result<std::unique_ptr<api::ScanCursor>>(tx.status());
    if (!cursor.ok()) {
      std::fprintf(stderr, "duo_bank: %s\n", cursor.status().message().c_str());
      return kExitUsage;
    }
    storage::AttrValues row;
    for (;;) {
      row.clear();
      Result<bool> more = (*cursor)->next(&row);
      if (!more.ok()) {
        std::fprintf(stderr, "duo_bank: %s\n", more.status().message().c_str());
        return kExitUsage;
      }
      if (!*more) break;
      accounts_count = std::max(accounts_count, as_i64(row.value(0)));
    }
  }
  if (accounts_count < 2) {
    std::fprintf(stderr, "duo_bank: fewer than 2 accounts\n");
    return kExitUsage;
  }
  std::FILE* ack_file = std::fopen(options.ack_file.c_str(), "a");
  if (ack_file == nullptr) {
    std::fprintf(stderr, "duo_bank: cannot open %s: %s\n", options.ack_file.c_str(),
                 std::strerror(errno));
    return kExitUsage;
  }
  std::signal(SIGTERM, request_stop);
  std::signal(SIGINT, request_stop);
  std::printf("running %lld threads for %lld s over %lld accounts (transfer ids from %lld)\n",
              static_cast<long long>(options.threads), static_cast<long long>(options.seconds),
              static_cast<long long>(accounts_count), static_cast<long long>(options.first_id));
  std::fflush(stdout);
  RunState state(ack_file, options.gap_report_ms);
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(options.seconds);
  std::vector<std::thread> threads;
  for (int64_t t = 0; t < options.threads; ++t) {
    threads.emplace_back(run_thread, std::ref(cluster), std::cref(**accounts),
                         std::cref(**transfers), std::cref(options), accounts_count, t, deadline,
                         &state);
  }
  for (std::thread& thread : threads) thread.join();
  const uint64_t errors = state.report();
  std::fclose(ack_file);
  return errors == 0 ? 0 : kExitProblem;
}

// ---- verify ----

// Data problems found by verify, by kind: the first few of each kind are printed (so a
// flood of one kind does not hide another), all are counted.
class Problems {
 public:
  void add(const std::string& kind, const std::string& text) {
    if (++counts_[kind] <= kProblemsPrintedPerKindMax) {
      std::printf("PROBLEM: %s\n", text.c_str());
    }
  }
  uint64_t total() const {
    uint64_t sum = 0;
    for (const auto& [kind, count] : counts_) sum += count;
    return sum;
  }
  // "balance_mismatch=978 acked_missing=250"
  std::string summary() const {
    std::string text;
    for (const auto& [kind, count] : counts_) {
      text += (text.empty() ? "" : " ") + kind + "=" + std::to_string(count);
    }
    return text;
  }

 private:
  static constexpr uint64_t kProblemsPrintedPerKindMax = 5;
  std::map<std::string, uint64_t> counts_;
};

// splitmix64's finalizer: spreads each row's fields over 64 bits so that the sum of
// row hashes (order-independent) changes when any field of any row does.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t row_hash(const storage::AttrValues& row) {
  uint64_t h = 0;
  for (size_t i = 0; i < row.size(); ++i) {
    h = mix(h ^ static_cast<uint64_t>(as_i64(row.value(i))) ^ (static_cast<uint64_t>(i) << 56));
  }
  return h;
}

// Every row of `table` (all columns), or the scan's error.
Result<std::vector<storage::AttrValues>> scan_table(api::Session& session,
                                                    const api::TableDef& table) {
  DUO_ASSIGN_OR_RETURN(std::unique_ptr<api::Transaction> tx, session.begin());
  DUO_ASSIGN_OR_RETURN(std::unique_ptr<api::ScanCursor> cursor, tx->scan(table, api::ScanSpec{}));
  std::vector<storage::AttrValues> rows;
  for (;;) {
    storage::AttrValues row;
    DUO_ASSIGN_OR_RETURN(bool more, cursor->next(&row));
    if (!more) break;
    rows.push_back(std::move(row));
  }
  return rows;
}

struct Snapshot {
  std::vector<storage::AttrValues> accounts;
  std::vector<storage::AttrValues> transfers;
};

// Scans both tables, retrying a temporary failure (see kVerifyAttemptsMax).
Result<Snapshot> take_snapshot(api::Cluster& cluster) {
  Status last;
  for (int attempt = 0; attempt < kVerifyAttemptsMax; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(1));
    Result<api::TablePtr> accounts = cluster.get_table(kAccountsTable);
    Result<api::TablePtr> transfers = cluster.get_table(kTransfersTable);
    if (!accounts.ok() || !transfers.ok()) {
      last = !accounts.ok() ? accounts.status() : transfers.status();
    } else {
      std::unique_ptr<api::Session> session = cluster.new_session();
      Result<std::vector<storage::AttrValues>> a = scan_table(*session, **accounts);
      Result<std::vector<storage::AttrValues>> t =
          a.ok() ? scan_table(*session, **transfers) : a.status();
      if (a.ok() && t.ok()) return Snapshot{std::move(*a), std::move(*t)};
      last = !a.ok() ? a.status() : t.status();
    }
    if (!last.is(ErrorCode::kTemporary)) return last;
    std::fprintf(stderr, "duo_bank: verify scan failed (retrying): %s\n", last.message().c_str());
  }
  return last;
}

int verify(api::Cluster& cluster, const Options& options) {
  Result<Snapshot> snapshot = take_snapshot(cluster);
  if (!snapshot.ok()) {
    std::fprintf(stderr, "duo_bank: %s\n", snapshot.status().message().c_str());
    return snapshot.status().is(ErrorCode::kNoSuchTable) ||
                   snapshot.status().is(ErrorCode::kNotFound)
               ? kExitProblem
               : kExitUsage;
  }
  const int64_t n = options.accounts;
  Problems problems;
  uint64_t accounts_hash = 0;
  uint64_t transfers_hash = 0;
  std::vector<int64_t> balance(static_cast<size_t>(n) + 1, 0);
  std::vector<uint8_t> seen(static_cast<size_t>(n) + 1, 0);
  int64_t total = 0;
  for (const storage::AttrValues& row : snapshot->accounts) {
    accounts_hash += row_hash(row);
    const int64_t id = as_i64(row.value(0));
    if (row.size() != 2 || id < 1 || id > n) {
      problems.add("account_row", "unexpected account row id " + std::to_string(id));
      continue;
    }
    if (seen[static_cast<size_t>(id)]++ != 0) {
      problems.add("account_row", "account " + std::to_string(id) + " returned twice");
    }
    balance[static_cast<size_t>(id)] = as_i64(row.value(1));
    total += as_i64(row.value(1));
  }
  for (int64_t id = 1; id <= n; ++id) {
    if (seen[static_cast<size_t>(id)] == 0) {
      problems.add("account_missing", "account " + std::to_string(id) + " is missing");
    }
  }
  if (total != n * options.balance) {
    problems.add("total", "total balance " + std::to_string(total) +
                              " != " + std::to_string(n * options.balance));
  }
  // Expected balances from the transfer rows.
  std::vector<int64_t> expected(static_cast<size_t>(n) + 1, options.balance);
  std::unordered_set<int64_t> transfer_ids;
  transfer_ids.reserve(snapshot->transfers.size());
  for (const storage::AttrValues& row : snapshot->transfers) {
    transfers_hash += row_hash(row);
    const int64_t id = as_i64(row.value(0));
    if (!transfer_ids.insert(id).second) {
      problems.add("transfer_row", "transfer " + std::to_string(id) + " returned twice");
      continue;
    }
    if (row.size() != 4) {
      problems.add("transfer_row", "transfer " + std::to_string(id) + " has " +
                                       std::to_string(row.size()) + " columns");
      continue;
    }
    const int64_t from = as_i64(row.value(1));
    const int64_t to = as_i64(row.value(2));
    const int64_t amount = as_i64(row.value(3));
    if (from < 1 || from > n || to < 1 || to > n || from == to || amount < 1 ||
        amount > kAmountMax) {
      problems.add("transfer_row", "transfer " + std::to_string(id) + " is malformed (" +
                                       std::to_string(from) + " -> " + std::to_string(to) + ", " +
                                       std::to_string(amount) + ")");
      continue;
    }
    expected[static_cast<size_t>(from)] -= amount;
    expected[static_cast<size_t>(to)] += amount;
  }
  int64_t mismatched = 0;
  for (int64_t id = 1; id <= n; ++id) {
    if (seen[static_cast<size_t>(id)] != 0 &&
        balance[static_cast<size_t>(id)] != expected[static_cast<size_t>(id)]) {
      ++mismatched;
      problems.add("balance_mismatch", "account " + std::to_string(id) + " has balance " +
                                           std::to_string(balance[static_cast<size_t>(id)]) +
                                           ", its transfers say " +
                                           std::to_string(expected[static_cast<size_t>(id)]));
    }
  }
  // The acknowledged transfers.
  std::ifstream acks(options.ack_file);
  int64_t acked = 0, acked_required = 0, acked_missing_allowed = 0;
  int64_t unknown = 0, unknown_present = 0;
  // GCIs of the missing acknowledged transfers: which global checkpoints lost them.
  int64_t missing_gci_min = INT64_MAX, missing_gci_max = 0;
  std::string line;
  while (std::getline(acks, line)) {
    if (line.empty()) continue;
    if (line[0] == '?') {
      ++unknown;
      if (transfer_ids.count(std::strtoll(line.c_str() + 1, nullptr, 10)) != 0) ++unknown_present;
      continue;
    }
    char* end = nullptr;
    const int64_t id = std::strtoll(line.c_str(), &end, 10);
    const int64_t gci = std::strtoll(end, &end, 10);
    const int64_t acked_unix_ms = std::strtoll(end, nullptr, 10);
    ++acked;
    const bool required = options.ack_gci_max == 0 || gci <= options.ack_gci_max;
    acked_required += required ? 1 : 0;
    if (transfer_ids.count(id) != 0) continue;
    if (required) {
      missing_gci_min = std::min(missing_gci_min, gci);
      missing_gci_max = std::max(missing_gci_max, gci);
      problems.add("acked_missing", "acknowledged transfer " + std::to_string(id) + " (GCI " +
                                        std::to_string(gci) + ", acknowledged at unix ms " +
                                        std::to_string(acked_unix_ms) + ") is missing");
    } else {
      ++acked_missing_allowed;
    }
  }
  std::printf(
      "accounts=%lld total=%lld transfers=%zu acked=%lld acked_required=%lld "
      "acked_lost_after_gci=%lld unknown=%lld unknown_present=%lld mismatched=%lld\n",
      static_cast<long long>(snapshot->accounts.size()), static_cast<long long>(total),
      snapshot->transfers.size(), static_cast<long long>(acked),
      static_cast<long long>(acked_required), static_cast<long long>(acked_missing_allowed),
      static_cast<long long>(unknown), static_cast<long long>(unknown_present),
      static_cast<long long>(mismatched));
  if (missing_gci_max != 0) {
    std::printf("missing acknowledged transfers committed in GCIs %lld..%lld\n",
                static_cast<long long>(missing_gci_min), static_cast<long long>(missing_gci_max));
  }
  std::printf("checksum %016llx%016llx\n", static_cast<unsigned long long>(accounts_hash),
              static_cast<unsigned long long>(transfers_hash));
  if (problems.total() != 0) {
    std::printf("FAILED: %llu problem(s): %s\n", static_cast<unsigned long long>(problems.total()),
                problems.summary().c_str());
    return kExitProblem;
  }
  std::printf("OK\n");
  return 0;
}

int run_command(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: duo_bank setup  --accounts N --balance B\n"
                 "       duo_bank run    --seconds S --threads T --seed X --first-id F "
                 "--ack-file PATH [--gap-report-ms G] [--rate R]\n"
                 "                       [--recv-thread-activation-threshold N]\n"
                 "       duo_bank verify --accounts N --balance B --ack-file PATH "
                 "[--ack-gci-max G]\n"
                 "       (each takes --connect HOST:PORT)\n");
    return kExitUsage;
  }
  set_log_level(LogLevel::kWarning);
  api::ClusterOptions cluster_options;
  cluster_options.connect_string = options.connect;
  cluster_options.name = "duo_bank";
  cluster_options.recv_thread_activation_threshold =
      static_cast<uint32_t>(options.recv_thread_activation_threshold);
  if (options.command == "run") cluster_options.request_timeout_ms = kRunRequestTimeoutMs;
  Result<std::unique_ptr<api::Cluster>> cluster = api::Cluster::connect(cluster_options);
  if (!cluster.ok()) {
    std::fprintf(stderr, "duo_bank: %s\n", cluster.status().message().c_str());
    return kExitUsage;
  }
  if (Result<size_t> ready = (*cluster)->wait_until_ready(30000); !ready.ok()) {
    std::fprintf(stderr, "duo_bank: %s\n", ready.status().message().c_str());
    return kExitUsage;
  }
  if (options.command == "setup") return setup(**cluster, options);
  if (options.command == "run") return run(**cluster, options);
  return verify(**cluster, options);
}

}  // namespace
}  // namespace duo::tools

int main(int argc, char** argv) {
  return duo::tools::run_command(argc, argv);
}
