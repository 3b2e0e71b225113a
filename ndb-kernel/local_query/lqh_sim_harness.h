// The shared harness of the local_query simulator tests (durability, checkpoint rate,
// node-restart copy): what every one of them needs around LocalQueryBlocks on virtual
// time, so that each test keeps only its options, its table and its scenario.
//  - take_answer / must_take_answer: run the simulator until a kept answer matches,
//    and remove it from the answers (any test block that keeps answers).
//  - make_key_req: an LQH_KEYREQ routed as a coordinator would (place_fragment).
//  - LqhSimDriver: a block playing coordinator, dictionary and distribution that
//    keeps every answer the local_query blocks send it.
//  - SingleNodeLqhTest: a googletest fixture with one data node (node group {1}, two
//    log parts) of a SimFileSystem over a SimDisk that outlives the node's crashes, a
//    LocalQueryBlock per log part and an LqhSimDriver; adding the fixture's table,
//    committing, GCP saves, crash and restart.
// Test-only. Not thread-safe: everything runs on the simulator's one thread.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/runtime/block.h"
#include "ndb-kernel/runtime/signal.h"
#include "ndb-kernel/sim/sim_file_system.h"
#include "ndb-kernel/sim/simulator.h"
#include "storage/memory/global_memory.h"
#include "storage/row/attr_values.h"
#include "storage/row/table_schema.h"

namespace duo::local_query {

// The answers a test block keeps, looked up anew each time: a node's restart replaces
// the block that keeps them.
using AnswersOf = std::function<std::vector<kernel::Signal>&()>;
using SignalMatch = std::function<bool(const kernel::Signal&)>;

// The local_query instance of `part` on `node`.
kernel::BlockAddress lqh_instance(uint16_t node, uint16_t part);

// Runs `sim` until one of the kept answers matches `match` (for at most `limit_ns` of
// virtual time), removes that answer and returns it; nullopt if none came in time.
std::optional<kernel::Signal> take_answer(sim::Simulator& sim, const AnswersOf& answers,
                                          const SignalMatch& match, uint64_t limit_ns);

// take_answer of a signal `id` (and `match`, if given) within 30 s; a test failure and
// an empty signal if none came.
kernel::Signal must_take_answer(sim::Simulator& sim, const AnswersOf& answers, kernel::SignalId id,
                                const SignalMatch& match = nullptr);

// One key operation as a coordinator sends it to the primary of its fragment.
struct KeyOp {
  uint64_t transid = 0;
  uint32_t tc_op = 0;
  uint32_t table_id = 0;
  uint32_t table_version = 0;
  uint32_t fragment = 0;
  uint32_t fragment_count = 0;  // of the table; 0: the topology's default
  storage::OpType type = storage::OpType::kWrite;
  storage::LockMode lock = storage::LockMode::kExclusive;
  kernel::BlockAddress coordinator;
  storage::AttrValues key_or_row;
};

// The LQH_KEYREQ of `op`, with the fragment's replica chain and log part from
// place_fragment(topology, ...); send it to lqh_instance(req.chain[0], req.log_part).
Result<protocol::LqhKeyReq> make_key_req(const protocol::ClusterTopology& topology, KeyOp op);

// The fragment (of `fragment_count`) that holds primary key `key` of `schema`.
Result<uint32_t> fragment_of_key(const storage::TableSchema& schema, const storage::AttrValues& key,
                                 uint32_t fragment_count);

// Plays coordinator, dictionary and distribution: sends what the test scripts and keeps
// every answer (the union of what the tests using it expect).
class LqhSimDriver final : public kernel::Block {
 public:
  LqhSimDriver();
  Status request(const kernel::BlockAddress& to, kernel::Signal signal) {
    return send(to, std::move(signal));
  }
  std::vector<kernel::Signal>& answers() { return answers_; }

 private:
  void on_answer(kernel::Signal& signal);
  std::vector<kernel::Signal> answers_;
};

// One data node of LocalQueryBlocks and an LqhSimDriver under the simulator. A test
// derives from it, gives its table (table_def) and calls start_node in its own start.
class SingleNodeLqhTest : public ::testing::Test {
 protected:
  static constexpr uint16_t kNode = 1;
  static constexpr uint16_t kLogParts = 2;
  static constexpr uint64_t kAnswerWaitNs = 30 * kNanosPerSecond;

  // The table every incarnation of the node gets from add_table.
  virtual protocol::TableDef table_def() const = 0;

  // A new simulator (seeded `seed`) and disk (seeded `disk_seed`) with the node on
  // them, run for 1 ms. Each incarnation of the node gets fresh memory of
  // memory_pages_ pages. Does not add the table.
  void start_node(const LocalQueryOptions& options, uint64_t seed, uint64_t disk_seed,
                  const sim::SimFileSystemOptions& fs_options = {});
  void TearDown() override { sim_.reset(); }

  // Crashes the node (the disk keeps what its crash model keeps) and starts it again
  // with its table, ready for LQH_RESTOREREQ.
  void crash_and_restart();

  static kernel::BlockAddress lqh_address(uint16_t part) { return lqh_instance(kNode, part); }
  static kernel::BlockAddress driver_address() {
    return kernel::BlockAddress{kNode, protocol::kCoordinatorBlock, 0};
  }
  void send_to(const kernel::BlockAddress& to, kernel::Signal signal);
  std::optional<kernel::Signal> wait_for(const SignalMatch& match,
                                         uint64_t limit_ns = kAnswerWaitNs);
  kernel::Signal must_wait_for(kernel::SignalId id, const SignalMatch& match = nullptr);
  // Whether an answer `id` (and `match`, if given) came within 30 s; takes it.
  bool answered(kernel::SignalId id, const SignalMatch& match = nullptr);

  // TABLE_ADDREQ of table_def() to every part; expects each to confirm it.
  void add_table();

  // The LQH_KEYREQ of a key operation on the fixture's table, with the next tc_op and
  // the driver as coordinator; nullopt (and a test failure) if its body does not encode.
  std::optional<protocol::LqhKeyReq> key_req(uint64_t transid, uint32_t fragment,
                                             storage::OpType type, storage::AttrValues key_or_row);
  // Sends `req` to the primary of its fragment.
  void send_key_req(protocol::LqhKeyReq req);

  // LQH_COMMITREQ(transid, gci) to every part; waits for each one's answer.
  void commit(uint64_t transid, uint32_t gci);
  // GCP_SAVEREQ(g) to every part; true once all answered (each within `limit_ns`).
  bool gcp_save(uint32_t g, uint64_t limit_ns = kAnswerWaitNs);

  std::unique_ptr<sim::SimDisk> disk_;
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<storage::GlobalMemory> memory_;
  protocol::ClusterTopology topology_;
  std::array<LocalQueryBlock*, kLogParts> lqh_{};
  LqhSimDriver* driver_ = nullptr;
  size_t memory_pages_ = 2048;
  uint32_t next_request_ = 0;
  uint32_t next_tc_op_ = 0;
  uint64_t next_transid_ = uint64_t{1} << 48;
};

}  // namespace duo::local_query
