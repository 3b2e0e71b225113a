// Heap allocations per key operation on the data nodes (issue 14): a deterministic count
// that does not depend on machine load, measured through the real blocks in the
// simulator.
//
// A whole cluster (SimCluster: two data nodes, one node group, four log parts) and an
// API node running the real client library (SimApiBlock) run sysbench-like statements on
// an sbtest-like table (id INT, k INT, c CHAR(120), pad CHAR(60), ordered index on k):
//   - point select: a committed read of `c` by primary key executed with its commit, as
//     duo_sqld runs an autocommit SELECT (TC_KEYREQ exec|commit, LQH_KEYREQ, LQH_KEYCONF,
//     TC_KEYCONF committed);
//   - update: one row's `c` by primary key with commit in one execute (TC_KEYREQ
//     exec|commit, LQH_KEYREQ down the chain, LQH_KEYCONF, LQH_COMMITREQ/CONF to both
//     replicas, TC_KEYCONF);
//   - insert and delete by key with commit, the same way.
// This binary replaces the global operator new with one that counts into the bucket of
// the signal being handled: the simulator's delivery observer names the receiving block
// and signal just before each handler runs, and the bucket is cleared after each step, so
// the simulator's own bookkeeping, the harness and the other blocks count apart. The key
// path is what the coordinator and local_query blocks allocate while handling the key
// operation signals (including PACKED_SIGNALS); the client library's share (define,
// execute, TC_KEYCONF) is reported beside it. Everything runs after a warm-up, so
// capacities that are kept (vectors, hash tables, the simulator's queue) are not counted.
//
// The figures are printed per statement (total and per block and signal); the test fails
// when the data nodes' key path allocates more than its budget, so a change that brings
// an allocation back onto the path is noticed. DUO_ALLOC_STACKS=1 prints the stack of
// every data node key path and client library allocation of one statement of each kind
// (to find where they come from). docs/benchmarks.md "Request path (issue 14)" has the
// command and the figures.
//
// Thread-safety: a single-threaded test (the counter is per thread; only the test thread
// counts).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <new>

#include <execinfo.h>
#include <string>
#include <vector>

#include "ndb-kernel/api/sim_api_block.h"
#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/testing/sim_cluster.h"
#include "ndb-kernel/testing/value_bytes.h"

namespace {

// ---- Counting operator new ------------------------------------------------------------

struct AllocCount {
  uint64_t count = 0;
  uint64_t bytes = 0;
};

// The bucket allocations count into; null: not counted. Only the test thread sets it.
thread_local AllocCount* g_bucket = nullptr;
// DUO_ALLOC_STACKS=1: while set, every counted data node allocation prints its stack
// (backtrace_symbols_fd: `binary(+offset)`, resolved with `addr2line -f -C -e binary`).
thread_local bool g_print_stacks = false;
thread_local bool g_printing = false;

void print_stack(std::size_t size) {
  g_printing = true;  // backtrace() may allocate the first time
  void* frames[24];
  const int depth = backtrace(frames, 24);
  char line[64];
  const int length = std::snprintf(line, sizeof line, "[alloc stack] %zu bytes\n", size);
  if (length > 0) std::fwrite(line, 1, static_cast<std::size_t>(length), stderr);
  std::fflush(stderr);
  backtrace_symbols_fd(frames, depth, 2);
  g_printing = false;
}

void count(std::size_t size) {
  AllocCount* bucket = g_bucket;
  if (bucket == nullptr) return;
  ++bucket->count;
  bucket->bytes += size;
  if (g_print_stacks && !g_printing) print_stack(size);
}

void* counted_alloc(std::size_t size) {
  count(size);
  return std::malloc(size == 0 ? 1 : size);
}

void* counted_aligned_alloc(std::size_t size, std::align_val_t align) {
  count(size);
  const std::size_t alignment = static_cast<std::size_t>(align);
  // aligned_alloc wants a size that is a multiple of the alignment.
  const std::size_t rounded = (size + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
}

}  // namespace

// GCC sees the malloc/free pairing through inlined allocator code in this file and takes
// it for a mismatch; every operator here allocates with malloc and frees with free.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t size) {
  if (void* p = counted_alloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = counted_alloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return counted_alloc(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return counted_alloc(size);
}
void* operator new(std::size_t size, std::align_val_t align) {
  if (void* p = counted_aligned_alloc(size, align)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) {
  if (void* p = counted_aligned_alloc(size, align)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

namespace duo::testing {
namespace {

using api::ApiCore;
using api::ExecType;
using kernel::Signal;
using protocol::TableDef;
using storage::AttrValues;
using storage::ColumnType;

// Who handled the signal an allocation happened under.
enum Who : size_t {
  kCoordinator,
  kLocalQuery,
  kOtherDataNodeBlock,  // dictionary, distribution (GCP), file system
  kApiNode,             // the client library receiving (TC_KEYCONF ...)
  kWhoCount,
};
constexpr const char* kWhoNames[kWhoCount] = {"coordinator", "local_query", "other data node",
                                              "client library"};
constexpr size_t kSignalIds = 1024;

// Allocation counts by receiver and signal id, plus the client library's own calls.
// Fixed arrays: counting must not allocate.
struct Buckets {
  std::array<std::array<AllocCount, kSignalIds>, kWhoCount> by_signal{};
  AllocCount client_calls;  // ApiCore::begin/read/update/.../execute/close by the harness

  void clear() { *this = Buckets{}; }
};

Buckets g_buckets;
// The statement being measured prints its data node key path allocations' stacks.
bool g_stacks_wanted = false;

bool key_path_signal(kernel::SignalId id) {
  switch (id) {
    case protocol::kTcKeyReq:
    case protocol::kTcCommitReq:
    case protocol::kTcRollbackReq:
    case protocol::kPackedSignals:
    case protocol::kLqhKeyReq:
    case protocol::kLqhKeyConf:
    case protocol::kLqhKeyRef:
    case protocol::kLqhCommitReq:
    case protocol::kLqhCommitConf:
    case protocol::kLqhAbortReq:
    case protocol::kLqhAbortConf:
      return true;
    default:
      return false;
  }
}

Who who_of(const kernel::BlockAddress& receiver) {
  if (receiver.block == protocol::kCoordinatorBlock) return kCoordinator;
  if (receiver.block == protocol::kLocalQueryBlock) return kLocalQuery;
  if (receiver.block == protocol::kApiBlock) return kApiNode;
  return kOtherDataNodeBlock;
}

// sbtest: id INT PRIMARY KEY, k INT NOT NULL, c CHAR(120), pad CHAR(60), KEY(k); CHAR
// stored as utf8mb4 (4 bytes a character), as duo_sqld creates it.
storage::TableSchema sbtest_schema() {
  storage::TableSchema schema;
  schema.name = "sbtest/def/sbtest1";
  schema.columns = {{"id", ColumnType::kInt, false, false},
                    {"k", ColumnType::kInt, false, false},
                    {"c", ColumnType::kChar, false, false, 480},
                    {"pad", ColumnType::kChar, false, false, 240}};
  schema.primary_key = {0};
  schema.ordered_indexes = {{"k_1", {1}, false}};
  return schema;
}

std::string padded(int32_t seed, size_t size) {
  std::string text = std::to_string(seed) + "-";
  while (text.size() < size) text += static_cast<char>('a' + (text.size() * 7 + seed) % 26);
  return text.substr(0, size);
}

AttrValues key_of(int32_t id) {
  AttrValues key;
  key.add(0, i32(id));
  return key;
}

AttrValues row_of(int32_t id) {
  AttrValues row;
  row.add(0, i32(id));
  row.add(1, i32(id * 7));
  row.add(2, padded(id, 480));
  row.add(3, padded(id + 1, 240));
  return row;
}

constexpr uint16_t kApiNodeId = kFirstClientNode + 10;
constexpr int32_t kRows = 1000;

class KeyPathAllocTest : public ::testing::Test {
 protected:
  KeyPathAllocTest() : cluster_(SimClusterOptions{}) {}

  void SetUp() override {
    Result<TableDef> table = cluster_.create_table(create_table_signal(1, sbtest_schema()));
    ASSERT_TRUE(table.ok()) << table.status().to_string();
    table_ = *table;
    ASSERT_TRUE(cluster_.sim()
                    .add_node(kApiNodeId,
                              [this](sim::NodeId node) {
                                api::SimApiBlockOptions options;
                                options.topology = cluster_.topology();
                                options.connected_nodes = cluster_.data_nodes();
                                auto block = std::make_unique<api::SimApiBlock>(node, options);
                                api_ = block.get();
                                std::vector<std::unique_ptr<kernel::Block>> blocks;
                                blocks.push_back(std::move(block));
                                return blocks;
                              })
                    .ok());
    cluster_.sim().run_for(10 * kNanosPerMilli);
    for (int32_t first = 0; first < kRows; first += 100) {
      auto tx = core().begin();
      ASSERT_TRUE(tx.ok());
      for (int32_t id = first; id < first + 100; ++id) {
        ASSERT_TRUE(core().insert(*tx, table_, row_of(id)).ok());
      }
      ASSERT_TRUE(run_execute(*tx, ExecType::kCommit));
      core().close(*tx);
    }
    cluster_.sim().set_delivery_observer([](uint64_t, const Signal& signal) {
      g_bucket = signal.id() < kSignalIds
                     ? &g_buckets.by_signal[who_of(signal.receiver())][signal.id()]
                     : nullptr;
      const Who who = who_of(signal.receiver());
      g_print_stacks =
          g_stacks_wanted && (who == kApiNode || ((who == kCoordinator || who == kLocalQuery) &&
                                                  key_path_signal(signal.id())));
    });
  }

  void TearDown() override {
    g_bucket = nullptr;
    cluster_.sim().set_delivery_observer(nullptr);
  }

  ApiCore& core() { return api_->core(); }

  // What follows counts as the client library's calls (and prints their stacks when
  // asked), until count_nothing().
  static void count_client_calls() {
    g_bucket = &g_buckets.client_calls;
    g_print_stacks = g_stacks_wanted;
  }
  static void count_nothing() {
    g_bucket = nullptr;
    g_print_stacks = false;
  }

  // Steps the simulator until `done` holds (false after 10 s of virtual time). Each step
  // counts into the bucket its delivery named; the rest of the step counts nowhere.
  template <typename Predicate>
  bool step_until(Predicate done) {
    const uint64_t deadline_ns = cluster_.sim().now_ns() + 10 * kNanosPerSecond;
    while (!done()) {
      if (cluster_.sim().now_ns() > deadline_ns) return false;
      g_bucket = nullptr;
      const bool stepped = cluster_.sim().step();
      g_bucket = nullptr;
      if (!stepped) return false;
    }
    return true;
  }
  // Steps for `duration_ns` of virtual time.
  void step_for(uint64_t duration_ns) {
    const uint64_t end_ns = cluster_.sim().now_ns() + duration_ns;
    step_until(
        [&] { return cluster_.sim().pending_events() == 0 || cluster_.sim().now_ns() >= end_ns; });
  }

  // Executes (counted as a client library call) and steps until the callback ran;
  // whether the execute succeeded.
  bool run_execute(uint64_t api_tx, ExecType type) {
    int outcome = -1;  // -1 pending, 0 failed, 1 OK
    int* slot = &outcome;
    count_client_calls();
    Status sent = core().execute(
        api_tx, type, [slot](uint64_t, const Status& status) { *slot = status.ok() ? 1 : 0; });
    count_nothing();
    if (!sent.ok()) return false;
    if (!step_until([&] { return outcome != -1; })) return false;
    return outcome == 1;
  }

  // One statement of each kind. The harness builds the keys and values first (the
  // application's cost); the client library's calls count as client_calls.
  void point_select(int32_t id) {
    const AttrValues hint = key_of(id);
    AttrValues key = key_of(id);
    std::vector<uint16_t> columns = {2};
    count_client_calls();
    auto tx = core().begin(&table_, &hint);
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(core().read(*tx, table_, std::move(key), std::move(columns)).ok());
    count_nothing();
    // With its commit, as duo_sqld runs an autocommit SELECT's committed reads.
    ASSERT_TRUE(run_execute(*tx, ExecType::kCommit));
    auto result = core().op_result(*tx, 0);
    ASSERT_TRUE(result.ok() && (*result)->status.ok());
    ASSERT_EQ((*result)->values.size(), 1u);
    count_client_calls();
    core().close(*tx);
    count_nothing();
  }

  // Runs `define` (one write) in a transaction of its own with commit.
  template <typename Define>
  void write_with_commit(int32_t id, Define define) {
    const AttrValues hint = key_of(id);
    count_client_calls();
    auto tx = core().begin(&table_, &hint);
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(define(*tx).ok());
    count_nothing();
    ASSERT_TRUE(run_execute(*tx, ExecType::kCommit));
    count_client_calls();
    core().close(*tx);
    count_nothing();
  }

  void update(int32_t id, int32_t round) {
    AttrValues key = key_of(id);
    AttrValues values;
    values.add(2, padded(id + round, 480));
    write_with_commit(id, [&](uint64_t tx) {
      return core().update(tx, table_, std::move(key), std::move(values)).status();
    });
  }

  void insert(int32_t id) {
    AttrValues row = row_of(id);
    write_with_commit(
        id, [&](uint64_t tx) { return core().insert(tx, table_, std::move(row)).status(); });
  }

  void remove(int32_t id) {
    AttrValues key = key_of(id);
    write_with_commit(
        id, [&](uint64_t tx) { return core().remove(tx, table_, std::move(key)).status(); });
  }

  struct Totals {
    double key_path = 0;  // coordinator + local_query, key-operation signals
    double coordinator = 0;
    double local_query = 0;
    double background = 0;      // every other data node handler (GCP, redo, checkpoints)
    double client_library = 0;  // ApiCore calls and its TC_KEYCONF handling
  };

  // Runs `statement(i)` `count` times after `warmup` unmeasured ones, lets what is in
  // flight land, and prints allocations per statement.
  template <typename Statement>
  Totals measure(const char* name, int count, int warmup, Statement statement) {
    for (int i = 0; i < warmup; ++i) statement(i);
    step_for(20 * kNanosPerMilli);
    g_buckets.clear();
    const char* stacks = std::getenv("DUO_ALLOC_STACKS");
    for (int i = warmup; i < warmup + count; ++i) {
      // The stacks of one statement (and whatever is in flight from the one before).
      g_stacks_wanted = stacks != nullptr && std::string(stacks) == "1" && i == warmup + 1;
      statement(i);
      g_stacks_wanted = false;
      g_print_stacks = false;
    }
    step_for(20 * kNanosPerMilli);  // whatever is still in flight
    g_bucket = nullptr;

    Totals totals;
    const double n = count;
    std::printf("\n[alloc] %s: heap allocations per statement (%d statements)\n", name, count);
    for (size_t who = 0; who < kWhoCount; ++who) {
      for (size_t id = 0; id < kSignalIds; ++id) {
        const AllocCount& c = g_buckets.by_signal[who][id];
        if (c.count == 0) continue;
        const bool key_path = (who == kCoordinator || who == kLocalQuery) &&
                              key_path_signal(static_cast<kernel::SignalId>(id));
        const char* note = who == kApiNode ? "" : key_path ? "  (key path)" : "  (background)";
        std::printf("[alloc]   %-16s %-20s %8.2f allocs %9.1f bytes%s\n", kWhoNames[who],
                    kernel::signal_name(static_cast<kernel::SignalId>(id)).c_str(), c.count / n,
                    c.bytes / n, note);
        if (who == kApiNode) {
          totals.client_library += c.count / n;
        } else if (key_path) {
          totals.key_path += c.count / n;
          (who == kCoordinator ? totals.coordinator : totals.local_query) += c.count / n;
        } else {
          totals.background += c.count / n;
        }
      }
    }
    totals.client_library += g_buckets.client_calls.count / n;
    std::printf("[alloc]   %-37s %8.2f allocs %9.1f bytes\n", "client library calls",
                g_buckets.client_calls.count / n, g_buckets.client_calls.bytes / n);
    std::printf(
        "[alloc] %s: data node key path %.2f (coordinator %.2f, local_query %.2f), "
        "client library %.2f, data node background %.2f allocations per statement\n",
        name, totals.key_path, totals.coordinator, totals.local_query, totals.client_library,
        totals.background);
    return totals;
  }

  SimCluster cluster_;
  TableDef table_;
  api::SimApiBlock* api_ = nullptr;
};

// Budgets: the data nodes' key path may not allocate more than this per statement.
// Lower them when a change removes allocations; never raise them without saying why in
// docs/benchmarks.md.
constexpr double kPointSelectBudget = 3.1;
constexpr double kUpdateBudget = 2.1;
constexpr double kInsertBudget = 2.1;
constexpr double kDeleteBudget = 4.5;
// The client library's calls and its TC_KEYCONF handling, per statement.
constexpr double kClientLibraryBudget = 2.05;

constexpr int kStatements = 2000;
constexpr int kWarmup = 200;

TEST_F(KeyPathAllocTest, PointSelect) {
  const Totals totals = measure("point select", kStatements, kWarmup, [&](int i) {
    point_select(static_cast<int32_t>((i * 7919) % kRows));
  });
  EXPECT_LE(totals.key_path, kPointSelectBudget);
  EXPECT_LE(totals.client_library, kClientLibraryBudget);
}

TEST_F(KeyPathAllocTest, UpdateWithCommit) {
  const Totals totals = measure("update + commit", kStatements, kWarmup, [&](int i) {
    update(static_cast<int32_t>((i * 7919) % kRows), i);
  });
  EXPECT_LE(totals.key_path, kUpdateBudget);
  EXPECT_LE(totals.client_library, kClientLibraryBudget);
}

TEST_F(KeyPathAllocTest, InsertAndDeleteWithCommit) {
  const Totals inserted =
      measure("insert + commit", kStatements, kWarmup, [&](int i) { insert(kRows + i); });
  EXPECT_LE(inserted.key_path, kInsertBudget);
  EXPECT_LE(inserted.client_library, kClientLibraryBudget);
  const Totals deleted =
      measure("delete + commit", kStatements, kWarmup, [&](int i) { remove(kRows + i); });
  EXPECT_LE(deleted.key_path, kDeleteBudget);
  EXPECT_LE(deleted.client_library, kClientLibraryBudget);
}

}  // namespace
}  // namespace duo::testing
