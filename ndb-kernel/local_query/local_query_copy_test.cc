// The local_query block's part of a node restart under the simulator: two data nodes
// (one node group {1, 2}, two log parts, a SimFileSystem over a SimDisk each that
// outlives the node's crashes) and on node 1 a workload block that plays coordinator
// and distribution: it keeps transactions of random key operations running (routed
// with place_fragment_live over the test's dead and starting sets, as a coordinator
// would) and passes on what the test scripts. Covers: node 2 restarting while load runs
// (NODE_RESTART_INITREQ, TABLE_ADDREQ, NODE_STARTINGREP, COPY_NODEREQ, NODE_STARTEDREP)
// ending with node 2 holding exactly node 1's rows, over many seeds; transactions that
// predate the copy; the starting node failing mid-copy (locks released, no answer);
// and the restarted node restoring by itself from its post-restart checkpoint and redo,
// with nothing of its old life. A normal node restart: node 2 restores its own disk to
// its last saved GCI G, then only rows changed since G come whole (the others as keys,
// node 1's deletes swept), under load, over many seeds; a table node 2 re-created (as
// the schema copy does for one dropped, re-created or altered meanwhile) comes whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/local_query/lqh_sim_harness.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/sim/sim_file_system.h"
#include "ndb-kernel/sim/simulator.h"
#include "storage/memory/test_memory.h"
#include "storage/row/column.h"
#include "storage/scan/interpreted_update.h"

namespace duo::local_query {
namespace {

using kernel::BlockAddress;
using kernel::Signal;
using kernel::SignalId;
using storage::AttrValues;
using storage::ColumnType;
using storage::LockMode;
using storage::OpType;

constexpr uint64_t kMs = kNanosPerMilli;
constexpr uint64_t kSecond = kNanosPerSecond;
constexpr uint32_t kTable = 7;
constexpr uint32_t kVersion = 1;
constexpr uint32_t kFragments = 4;
constexpr uint16_t kLogParts = 2;
constexpr uint16_t kStarting = 2;

protocol::TableDef table_def() {
  protocol::TableDef def;
  def.schema.table_id = kTable;
  def.schema.name = "t";
  def.schema.columns = {{"id", ColumnType::kInt, false, false},
                        {"k", ColumnType::kBigInt, false, false},
                        {"name", ColumnType::kVarchar, false, true, 300}};
  def.schema.primary_key = {0};
  def.schema.ordered_indexes = {{"k_idx", {1}, false}};
  def.version = kVersion;
  def.fragment_count = kFragments;
  return def;
}

// What the coordinator knows of the cluster: routing sets and the current GCI.
struct Routing {
  std::vector<uint16_t> dead;
  std::vector<uint16_t> starting;
  uint32_t gci = 1;
};

// Plays coordinator and distribution on node 1: keeps `slots` transactions of random
// key operations running while load is on, and keeps every other answer for the test.
class Workload final : public kernel::Block {
 public:
  Workload(const protocol::ClusterTopology* topology, Routing* routing)
      : Block("test_workload", protocol::kCoordinatorBlock, 0),
        topology_(topology),
        routing_(routing),
        schema_(table_def().schema) {
    for (SignalId id : {protocol::kLqhKeyConf, protocol::kLqhKeyRef, protocol::kLqhCommitConf,
                        protocol::kLqhAbortConf}) {
      on(id, &Workload::on_load_answer);
    }
    on(protocol::kLqhContinue, &Workload::on_think_time_over);
    for (SignalId id :
         {protocol::kScanFragConf, protocol::kScanFragRef, protocol::kTableAddConf,
          protocol::kNodeRestartInitConf, protocol::kNodeStartingConf, protocol::kNodeStartedConf,
          protocol::kCopyNodeConf, protocol::kCopyNodeRef, protocol::kGcpSaveConf,
          protocol::kLcpStartConf, protocol::kLqhRestoreConf, protocol::kTableDropConf}) {
      on(id, &Workload::on_answer);
    }
  }

  Status request(const BlockAddress& to, Signal signal) { return send(to, std::move(signal)); }
  std::vector<Signal>& answers() { return answers_; }

  // Starts `slots` transactions on keys [0, keys); each ends with a commit (or, one in
  // `abort_one_in`, an abort) after 1..4 operations and is replaced while load is on.
  void start_load(size_t slots, int32_t keys, uint32_t abort_one_in = 6) {
    keys_ = keys;
    abort_one_in_ = abort_one_in;
    loading_ = true;
    slots_.resize(std::max(slots_.size(), slots));
    for (size_t i = 0; i < slots; ++i) {
      if (!slots_[i].busy) begin(i);
    }
  }
  void stop_load() { loading_ = false; }
  bool idle() const {
    return std::none_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.busy; });
  }
  uint64_t committed() const { return committed_; }
  // A data node died: what waits for it is over (as a coordinator's node failure
  // handling would decide): an operation whose chain held it aborts its transaction,
  // and an end no longer waits for its answer.
  void node_failed(uint16_t node) {
    for (size_t slot = 0; slot < slots_.size(); ++slot) {
      Slot& s = slots_[slot];
      if (!s.busy) continue;
      if (s.op_tc != 0) {
        if (std::find(s.op_chain.begin(), s.op_chain.end(), node) == s.op_chain.end()) continue;
        by_tc_op_.erase(std::exchange(s.op_tc, 0));
        std::erase_if(s.participants, [&](const auto& p) { return p.first == node; });
        end(slot, false);
        continue;
      }
      const size_t before = s.ends_waiting.size();
      std::erase_if(s.ends_waiting, [&](const auto& p) { return p.first == node; });
      if (before > 0 && s.ends_waiting.empty()) finish(slot);
    }
  }
  uint64_t aborted() const { return aborted_; }
  // Refusals by a replica other than the primary for a row it lacks or already has:
  // a starting replica must be lenient there.
  uint64_t backup_row_refusals() const { return backup_row_refusals_; }

 private:
  struct Slot {
    bool busy = false;
    uint64_t transid = 0;
    int ops_left = 0;
    std::set<std::pair<uint16_t, uint16_t>> participants;  // (node, log part)
    uint32_t op_tc = 0;                                    // the operation waiting for its answer
    std::vector<uint16_t> op_chain;                        // and its chain
    std::set<std::pair<uint16_t, uint16_t>> ends_waiting;  // COMMIT/ABORT answers due
  };

  std::string i32(int32_t v) const { return storage::encode_int(schema_.columns[0], v); }
  std::string i64(int64_t v) const { return storage::encode_int(schema_.columns[1], v); }

  void begin(size_t slot) {
    Slot& s = slots_[slot];
    s = Slot{};
    s.busy = true;
    s.transid = (uint64_t{1} << 48) | ++next_transid_;
    s.ops_left = 1 + static_cast<int>(random().uniform(4));
    by_transid_[s.transid] = slot;
    think(slot);
  }

  // A client's think time before each operation: the load is paced in virtual time
  // (answers from node 1 itself take none).
  void think(size_t slot) {
    const uint64_t ms = 1 + random().uniform(2);
    if (!send_delayed(address(), Signal(protocol::kLqhContinue, {static_cast<uint32_t>(slot)}), ms)
             .ok()) {
      std::abort();
    }
  }
  void on_think_time_over(Signal& signal) { next_op(signal.word(0)); }

  void next_op(size_t slot) {
    Slot& s = slots_[slot];
    const int32_t id = static_cast<int32_t>(random().uniform(static_cast<uint64_t>(keys_)));
    AttrValues key;
    key.add(0, i32(id));
    auto hash = protocol::distribution_hash(schema_, key);
    const uint32_t fragment = *hash % kFragments;
    const protocol::FragmentPlacement placement = protocol::place_fragment_live(
        *topology_, fragment, kFragments, routing_->dead, routing_->starting);
    protocol::LqhKeyReq req;
    req.transid = s.transid;
    req.tc_op = ++next_tc_op_;
    req.table_id = kTable;
    req.table_version = kVersion;
    req.fragment = fragment;
    req.log_part = placement.log_part;
    req.lock = LockMode::kExclusive;
    req.coordinator = address();
    req.chain = placement.replicas;
    protocol::OpBody body;
    const int64_t k = static_cast<int64_t>(random().uniform(1000));
    AttrValues row = key;
    row.add(1, i64(k));
    if (k % 5 == 0) {
      row.add_null(2);
    } else {
      // Names of varied length, some long, so copy batches stop at their byte bound too.
      std::string name(1 + random().uniform(k % 3 == 0 ? 280 : 20),
                       static_cast<char>('a' + k % 26));
      row.add(2, name);
    }
    switch (random().uniform(6)) {
      case 0:
      case 1:
        req.type = OpType::kInsert;
        body.key_or_row = row;
        break;
      case 2:
        req.type = OpType::kWrite;
        body.key_or_row = row;
        break;
      case 3:
        req.type = OpType::kUpdate;
        body.key_or_row = key;
        body.values.add(1, i64(k));
        break;
      case 4:
        req.type = OpType::kDelete;
        body.key_or_row = key;
        break;
      default: {
        req.type = OpType::kInterpretedUpdate;
        body.key_or_row = key;
        storage::InterpretedUpdate program;
        program.add(1, static_cast<int64_t>(1 + random().uniform(9)));
        body.program = program.encode();
        break;
      }
    }
    if (!body.encode(&req.body).ok()) std::abort();
    for (uint16_t node : req.chain) s.participants.emplace(node, placement.log_part);
    by_tc_op_[req.tc_op] = slot;
    s.op_tc = req.tc_op;
    s.op_chain = req.chain;
    const BlockAddress to{req.chain[0], protocol::kLocalQueryBlock, placement.log_part};
    if (!send(to, std::move(req).to_signal()).ok()) std::abort();
  }

  void end(size_t slot, bool commit) {
    Slot& s = slots_[slot];
    std::erase_if(s.participants, [&](const auto& p) {
      return std::find(routing_->dead.begin(), routing_->dead.end(), p.first) !=
             routing_->dead.end();
    });
    s.ends_waiting = s.participants;
    (commit ? committed_ : aborted_)++;
    for (const auto& [node, part] : s.participants) {
      Signal req = protocol::transaction_signal(
          commit ? protocol::kLqhCommitReq : protocol::kLqhAbortReq, s.transid);
      if (commit) req.set_word(2, routing_->gci);
      if (!send(BlockAddress{node, protocol::kLocalQueryBlock, part}, std::move(req)).ok()) {
        std::abort();
      }
    }
    if (s.ends_waiting.empty()) finish(slot);
  }

  void finish(size_t slot) {
    by_transid_.erase(slots_[slot].transid);
    slots_[slot].busy = false;
    if (loading_) begin(slot);
  }

  void on_load_answer(Signal& signal) {
    if (signal.id() == protocol::kLqhKeyConf || signal.id() == protocol::kLqhKeyRef) {
      auto it = by_tc_op_.find(signal.word(2));
      if (it == by_tc_op_.end()) return on_answer(signal);  // the test's own, or given up
      const size_t slot = it->second;
      by_tc_op_.erase(it);
      slots_[slot].op_tc = 0;
      if (signal.id() == protocol::kLqhKeyRef) {
        auto ref = protocol::LqhKeyRef::from_signal(signal);
        if (ref.ok() && signal.sender().node_id != slots_[slot].op_chain.front() &&
            (ref->error == ErrorCode::kNotFound || ref->error == ErrorCode::kDuplicateKey)) {
          ++backup_row_refusals_;
        }
        return end(slot, false);
      }
      if (--slots_[slot].ops_left > 0) return think(slot);
      return end(slot, random().uniform(abort_one_in_) != 0);
    }
    auto it = by_transid_.find(protocol::transaction_of(signal));
    if (it == by_transid_.end()) return on_answer(signal);
    Slot& s = slots_[it->second];
    if (s.ends_waiting.erase({signal.sender().node_id, signal.sender().instance}) > 0 &&
        s.ends_waiting.empty()) {
      finish(it->second);
    }
  }

  void on_answer(Signal& signal) { answers_.push_back(signal.clone()); }

  const protocol::ClusterTopology* const topology_;
  Routing* const routing_;
  const storage::TableSchema schema_;
  std::vector<Signal> answers_;
  std::vector<Slot> slots_;
  std::map<uint32_t, size_t> by_tc_op_;
  std::map<uint64_t, size_t> by_transid_;
  bool loading_ = false;
  int32_t keys_ = 1;
  uint32_t abort_one_in_ = 6;
  uint32_t next_tc_op_ = 0;
  uint64_t next_transid_ = 0;
  uint64_t committed_ = 0, aborted_ = 0;
  uint64_t backup_row_refusals_ = 0;
};

// A row as the test compares it: every column, by column number.
using Row = std::map<uint16_t, std::optional<std::string>>;
using Rows = std::map<std::string, Row>;  // by encoded id

class LocalQueryCopyTest : public ::testing::Test {
 protected:
  void start(uint64_t seed, LocalQueryOptions options = {}) {
    workload_ = nullptr;
    lqh_.clear();
    sim_.reset();
    routing_ = Routing{};
    next_request_ = 0;
    next_scan_ptr_ = 0;
    sim::SimulatorOptions sim_options;
    sim_options.seed = seed;
    sim_options.link_latency_ns = 1 * kMs;
    sim_options.link_jitter_ns = 400 * 1000;
    sim_ = std::make_unique<sim::Simulator>(sim_options);
    topology_.node_groups = {{1, 2}};
    topology_.log_parts = kLogParts;
    for (uint16_t node : {1, 2}) {
      disks_[node] = std::make_unique<sim::SimDisk>(seed * 10 + node);
      auto factory = [this, node, options](sim::NodeId) {
        // A new incarnation gets fresh memory: the old blocks are gone.
        memory_[node] = storage::make_test_memory(2048);
        std::vector<std::unique_ptr<kernel::Block>> blocks;
        blocks.push_back(std::make_unique<sim::SimFileSystem>(*disks_[node]));
        for (uint16_t part = 0; part < kLogParts; ++part) {
          auto block =
              std::make_unique<LocalQueryBlock>(part, memory_[node].get(), topology_, options);
          lqh_[node][part] = block.get();
          blocks.push_back(std::move(block));
        }
        if (node == 1) {
          auto workload = std::make_unique<Workload>(&topology_, &routing_);
          workload_ = workload.get();
          blocks.push_back(std::move(workload));
        }
        return blocks;
      };
      ASSERT_TRUE(sim_->add_node(node, factory).ok());
    }
    sim_->run_for(1 * kMs);
  }

  void TearDown() override { sim_.reset(); }

  // ---- Plumbing ----

  static BlockAddress lqh_address(uint16_t node, uint16_t part) { return lqh_instance(node, part); }
  void send_to(const BlockAddress& to, Signal signal) {
    ASSERT_TRUE(workload_->request(to, std::move(signal)).ok());
  }
  void send_to_parts(uint16_t node, const Signal& signal) {
    for (uint16_t part = 0; part < kLogParts; ++part)
      send_to(lqh_address(node, part), signal.clone());
  }
  // The test's own answers, which the workload passes on and keeps.
  std::vector<Signal>& answers() { return workload_->answers(); }
  std::optional<Signal> wait_for(const SignalMatch& match, uint64_t limit_ns = 30 * kSecond) {
    return take_answer(
        *sim_, [this]() -> std::vector<Signal>& { return answers(); }, match, limit_ns);
  }
  Signal must_wait_for(SignalId id, const SignalMatch& match = nullptr) {
    return must_take_answer(
        *sim_, [this]() -> std::vector<Signal>& { return answers(); }, id, match);
  }
  // Sends `signal` to every instance of `nodes` and waits for each one's `answer`.
  void to_parts_and_wait(const std::vector<uint16_t>& nodes, const Signal& signal,
                         SignalId answer) {
    for (uint16_t node : nodes) send_to_parts(node, signal);
    for (size_t i = 0; i < nodes.size() * kLogParts; ++i) {
      Signal got = must_wait_for(answer);
      if (answer == protocol::kNodeRestartInitConf) {
        EXPECT_EQ(got.word(1), 0u);
      }
    }
  }

  void add_table(uint16_t node) {
    const uint32_t request_id = ++next_request_;
    protocol::TableMsg msg;
    msg.request_id = request_id;
    msg.table = table_def();
    auto signal = msg.to_signal(protocol::kTableAddReq);
    ASSERT_TRUE(signal.ok());
    send_to_parts(node, *signal);
    for (uint16_t part = 0; part < kLogParts; ++part) {
      Signal conf = must_wait_for(protocol::kTableAddConf,
                                  [&](const Signal& s) { return s.word(0) == request_id; });
      EXPECT_EQ(protocol::DictMsg::from_signal(conf).c, 0u);
    }
  }

  // Node 2 dies: the survivor and the coordinator route around it.
  void fail_node_2() {
    ASSERT_TRUE(sim_->crash_node(kStarting).ok());
    disks_[kStarting]->crash();
    send_to_parts(1, Signal(protocol::kNodeFailRep, {kStarting}));
    std::erase(routing_.starting, kStarting);
    routing_.dead = {kStarting};
    workload_->node_failed(kStarting);
    sim_->run_for(2 * kMs);
  }

  // Node 2's node restart up to the end of the copy; the load (if on) keeps running.
  // Returns the rows the copies sent.
  uint64_t restart_node_2_and_copy() {
    EXPECT_TRUE(sim_->restart_node(kStarting).ok());
    sim_->run_for(1 * kMs);
    to_parts_and_wait({kStarting}, Signal(protocol::kNodeRestartInitReq),
                      protocol::kNodeRestartInitConf);
    for (uint16_t part = 0; part < kLogParts; ++part) {
      // Nothing of the old life can be restored any more.
      EXPECT_FALSE(disks_[kStarting]->file_exists(lcp_control_path(part, 0)));
      EXPECT_FALSE(disks_[kStarting]->file_exists(lcp_control_path(part, 1)));
      EXPECT_FALSE(disks_[kStarting]->file_exists(redo_path(part, 1)));
    }
    add_table(kStarting);
    for (uint16_t part = 0; part < kLogParts; ++part) {
      EXPECT_TRUE(lqh_[kStarting][part]->copying());
    }
    // The coordinator routes to node 2 from here, the local_query blocks as the REP
    // reaches them.
    routing_.dead.clear();
    routing_.starting = {kStarting};
    to_parts_and_wait({1, kStarting}, Signal(protocol::kNodeStartingRep, {kStarting}),
                      protocol::kNodeStartingConf);
    send_to_parts(1, Signal(protocol::kCopyNodeReq, {kStarting}));
    uint64_t rows = 0;
    uint32_t fragments = 0;
    for (uint16_t part = 0; part < kLogParts; ++part) {
      auto answer = wait_for([](const Signal& s) {
        return s.id() == protocol::kCopyNodeConf || s.id() == protocol::kCopyNodeRef;
      });
      if (!answer) {
        ADD_FAILURE() << "no COPY_NODECONF";
        return rows;
      }
      EXPECT_EQ(answer->id(), protocol::kCopyNodeConf);
      EXPECT_EQ(answer->word(0), kStarting);
      fragments += answer->word(1);
      rows += answer->word(2) | (uint64_t{answer->word(3)} << 32);
    }
    EXPECT_EQ(fragments, kFragments);  // node 1 is every fragment's primary
    return rows;
  }

  void node_2_started() {
    routing_.starting.clear();
    to_parts_and_wait({1, kStarting}, Signal(protocol::kNodeStartedRep, {kStarting}),
                      protocol::kNodeStartedConf);
    for (uint16_t part = 0; part < kLogParts; ++part) {
      EXPECT_FALSE(lqh_[kStarting][part]->copying());
    }
  }

  void stop_load_and_drain() {
    workload_->stop_load();
    EXPECT_TRUE(sim_->run_until([&] { return workload_->idle(); }, 60 * kSecond));
    for (uint16_t node : {1, 2}) {
      if (std::find(routing_.dead.begin(), routing_.dead.end(), node) != routing_.dead.end()) {
        continue;
      }
      for (uint16_t part = 0; part < kLogParts; ++part) {
        EXPECT_EQ(lqh_[node][part]->transaction_count(), 0u);
        EXPECT_EQ(lqh_[node][part]->lock_wait_count(), 0u);
      }
    }
  }

  // Every committed row of `node`, by scanning each fragment.
  Rows contents(uint16_t node) {
    Rows rows;
    for (uint32_t fragment = 0; fragment < kFragments; ++fragment) {
      const uint32_t scan_ptr = ++next_scan_ptr_;
      protocol::ScanBody body;
      protocol::ScanFragReq req;
      req.transid = (uint64_t{1} << 47) + scan_ptr;
      req.scan_ptr = scan_ptr;
      req.table_id = kTable;
      req.table_version = kVersion;
      req.fragment = fragment;
      req.log_part = protocol::place_fragment(topology_, fragment, kFragments).log_part;
      req.index = -1;
      req.batch_rows = 50;
      EXPECT_TRUE(body.encode(&req.body).ok());
      const BlockAddress to = lqh_address(node, req.log_part);
      const uint64_t transid = req.transid;
      send_to(to, std::move(req).to_signal());
      for (;;) {
        auto s = wait_for([&](const Signal& a) {
          return (a.id() == protocol::kScanFragConf || a.id() == protocol::kScanFragRef) &&
                 a.word(2) == scan_ptr;
        });
        if (!s || s->id() != protocol::kScanFragConf) {
          ADD_FAILURE() << "scan of fragment " << fragment << " on node " << node << " failed";
          return rows;
        }
        auto batch = protocol::ScanBatch::from_signal(*s);
        EXPECT_TRUE(batch.ok());
        storage::RowBatch got;
        EXPECT_TRUE(protocol::decode_row_batch(protocol::as_view(batch->batch), &got).ok());
        for (size_t r = 0; r < got.rows(); ++r) {
          Row row;
          const storage::RowBatch::Row in = got.row(r);
          for (size_t c = 0; c < in.size(); ++c) {
            row[in.column(c)] =
                in.is_null(c) ? std::nullopt : std::optional<std::string>(in.value(c));
          }
          const std::string id = *row.at(0);
          EXPECT_TRUE(rows.emplace(id, std::move(row)).second) << "a row twice";
        }
        if (batch->flags & protocol::kScanFragmentDone) break;
        protocol::ScanNextReq next;
        next.tx = transid;
        next.id = scan_ptr;
        next.fragment = fragment;
        send_to(to, next.to_signal(protocol::kScanFragNextReq));
      }
    }
    return rows;
  }

  void expect_consistent(uint16_t node) {
    for (uint32_t fragment = 0; fragment < kFragments; ++fragment) {
      const uint16_t part = protocol::place_fragment(topology_, fragment, kFragments).log_part;
      const storage::Fragment* held = lqh_[node][part]->fragment(kTable, fragment);
      ASSERT_NE(held, nullptr);
      Status consistent = held->check_consistency();
      EXPECT_TRUE(consistent.ok()) << consistent.to_string();
    }
  }

  // Saves GCIs on `node` (as the distribution's GCP would) until `done` holds.
  void save_gcis_until(uint16_t node, const std::function<bool()>& done) {
    for (int round = 0; round < 20 && !done(); ++round) {
      const uint32_t saved = routing_.gci++;
      send_to_parts(node, Signal(protocol::kGcpSaveReq, {saved}));
      for (uint16_t part = 0; part < kLogParts; ++part) {
        must_wait_for(protocol::kGcpSaveConf, [&](const Signal& s) { return s.word(0) == saved; });
      }
    }
    EXPECT_TRUE(done());
  }

  // A full local checkpoint of `node`, completed by the GCI saves it waits for.
  void checkpoint(uint16_t node) {
    send_to_parts(node, Signal(protocol::kLcpStartReq));
    size_t confs = 0;
    save_gcis_until(node, [&] {
      while (auto conf = wait_for([](const Signal& s) { return s.id() == protocol::kLcpStartConf; },
                                  1 * kMs)) {
        EXPECT_EQ(conf->word(2), 0u);
        ++confs;
      }
      return confs == kLogParts;
    });
  }

  // Members in construction order: the memory and disks outlive the simulator's blocks.
  std::map<uint16_t, std::unique_ptr<storage::GlobalMemory>> memory_;
  std::map<uint16_t, std::unique_ptr<sim::SimDisk>> disks_;
  protocol::ClusterTopology topology_;
  Routing routing_;
  std::unique_ptr<sim::Simulator> sim_;
  std::map<uint16_t, std::array<LocalQueryBlock*, kLogParts>> lqh_;
  Workload* workload_ = nullptr;
  uint32_t next_request_ = 0;
  uint32_t next_scan_ptr_ = 0;
};

// One node restart under load: node 2 is dead while node 1 takes writes, restarts,
// and copies while the load goes on (small batches, so copy and load interleave); once
// everything ended node 2 holds exactly node 1's rows. Returns the rows copied.
class CopyUnderLoad : public LocalQueryCopyTest {
 public:
  uint64_t run(uint64_t seed) {
    LocalQueryOptions options;
    options.copy_batch_rows = 1 + static_cast<uint32_t>(seed % 8);
    options.lock_wait_timeout_ms = 100;
    start(seed, options);
    fail_node_2();
    add_table(1);
    workload_->start_load(8, 200);
    sim_->run_for(100 * kMs);  // fills node 1 alone
    const uint64_t rows = restart_node_2_and_copy();
    sim_->run_for(5 * kMs);
    stop_load_and_drain();
    node_2_started();
    const Rows on_1 = contents(1);
    const Rows on_2 = contents(2);
    EXPECT_FALSE(on_1.empty());
    EXPECT_EQ(on_1.size(), on_2.size());
    EXPECT_TRUE(on_1 == on_2) << "node 2 differs from node 1";
    EXPECT_EQ(workload_->backup_row_refusals(), 0u);
    expect_consistent(1);
    expect_consistent(2);
    return rows;
  }
};

TEST_F(CopyUnderLoad, StartingNodeEndsWithExactlyTheLiveReplicasRows) {
  const LogLevel saved_level = log_level();
  set_log_level(LogLevel::kWarning);  // hundreds of restarts' progress lines are noise
#if defined(DUO_SANITIZE) || !defined(NDEBUG)
  constexpr uint64_t kSeeds = 30;
#else
  constexpr uint64_t kSeeds = 300;
#endif
  uint64_t copied = 0;
  for (uint64_t seed = 1; seed <= kSeeds && !HasFailure(); ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    copied += run(seed);
  }
  EXPECT_GT(copied, 0u);
  set_log_level(saved_level);
}

// The same seed replays the same restart bit for bit.
TEST_F(CopyUnderLoad, RunsAreDeterministic) {
  const LogLevel saved_level = log_level();
  set_log_level(LogLevel::kWarning);
  run(3);
  const uint64_t first = sim_->trace_hash();
  run(3);
  EXPECT_EQ(sim_->trace_hash(), first);
  set_log_level(saved_level);
}

// A transaction that wrote (an insert the copy's scan cannot see) down the old chain,
// without node 2, before the copy was asked for: the copy starts once it has ended, so
// its row reaches node 2.
TEST_F(LocalQueryCopyTest, CopyWaitsForTransactionsThatPredateIt) {
  start(1);
  fail_node_2();
  add_table(1);
  // Found by the workload's chain logic: insert id 5 by hand, chain [1].
  AttrValues key;
  const storage::TableSchema schema = table_def().schema;
  key.add(0, storage::encode_int(schema.columns[0], 5));
  const uint32_t fragment = *protocol::distribution_hash(schema, key) % kFragments;
  const protocol::FragmentPlacement placement =
      protocol::place_fragment_live(topology_, fragment, kFragments, routing_.dead);
  protocol::LqhKeyReq req;
  req.transid = (uint64_t{1} << 48) | 999;
  req.tc_op = 1;
  req.table_id = kTable;
  req.table_version = kVersion;
  req.fragment = fragment;
  req.log_part = placement.log_part;
  req.type = OpType::kInsert;
  req.lock = LockMode::kExclusive;
  req.coordinator = BlockAddress{1, protocol::kCoordinatorBlock, 0};  // the workload passes
  req.chain = placement.replicas;                                     // it on to the test
  ASSERT_EQ(req.chain, std::vector<uint16_t>{1});
  protocol::OpBody body;
  body.key_or_row = key;
  body.key_or_row.add(1, storage::encode_int(schema.columns[1], 42));
  body.key_or_row.add(2, "old chain");
  ASSERT_TRUE(body.encode(&req.body).ok());
  const uint64_t transid = req.transid;
  EXPECT_TRUE(sim_->restart_node(kStarting).ok());
  sim_->run_for(1 * kMs);
  to_parts_and_wait({kStarting}, Signal(protocol::kNodeRestartInitReq),
                    protocol::kNodeRestartInitConf);
  add_table(kStarting);
  routing_.dead.clear();
  routing_.starting = {kStarting};
  // The insert executes on node 1 while node 1 does not route to node 2 yet.
  LocalQueryBlock* primary = lqh_[1][placement.log_part];
  send_to(lqh_address(1, placement.log_part), std::move(req).to_signal());
  must_wait_for(protocol::kLqhKeyConf);
  ASSERT_EQ(primary->transaction_count(), 1u);
  to_parts_and_wait({1, kStarting}, Signal(protocol::kNodeStartingRep, {kStarting}),
                    protocol::kNodeStartingConf);
  send_to_parts(1, Signal(protocol::kCopyNodeReq, {kStarting}));
  sim_->run_for(50 * kMs);
  EXPECT_TRUE(primary->copy_running()) << "the copy did not wait for the older transaction";
  Signal commit = protocol::transaction_signal(protocol::kLqhCommitReq, transid);
  commit.set_word(2, routing_.gci);
  send_to(lqh_address(1, placement.log_part), std::move(commit));
  must_wait_for(protocol::kLqhCommitConf);
  for (uint16_t part = 0; part < kLogParts; ++part) {
    Signal conf = must_wait_for(protocol::kCopyNodeConf);
    EXPECT_EQ(conf.word(0), kStarting);
  }
  node_2_started();
  const Rows on_2 = contents(2);
  ASSERT_EQ(on_2.size(), 1u);
  EXPECT_EQ(on_2.begin()->second.at(2), std::optional<std::string>("old chain"));
}

// The starting node dies mid-copy: the copy stops without an answer and its shared
// locks go, so writers proceed.
TEST_F(LocalQueryCopyTest, StartingNodeFailureStopsTheCopyAndReleasesItsLocks) {
  LocalQueryOptions options;
  options.copy_batch_rows = 1;
  start(2, options);
  fail_node_2();
  add_table(1);
  workload_->start_load(4, 400, 1000);
  sim_->run_for(300 * kMs);
  EXPECT_TRUE(sim_->restart_node(kStarting).ok());
  sim_->run_for(1 * kMs);
  to_parts_and_wait({kStarting}, Signal(protocol::kNodeRestartInitReq),
                    protocol::kNodeRestartInitConf);
  add_table(kStarting);
  routing_.dead.clear();
  routing_.starting = {kStarting};
  to_parts_and_wait({1, kStarting}, Signal(protocol::kNodeStartingRep, {kStarting}),
                    protocol::kNodeStartingConf);
  send_to_parts(1, Signal(protocol::kCopyNodeReq, {kStarting}));
  sim_->run_until([&] { return lqh_[1][0]->rows_copied() + lqh_[1][1]->rows_copied() >= 10; },
                  10 * kSecond);
  EXPECT_TRUE(lqh_[1][0]->copy_running() || lqh_[1][1]->copy_running());
  fail_node_2();
  for (uint16_t part = 0; part < kLogParts; ++part) {
    EXPECT_FALSE(lqh_[1][part]->copy_running());
    EXPECT_TRUE(lqh_[1][part]->starting_nodes().empty());
  }
  stop_load_and_drain();
  EXPECT_FALSE(wait_for(
                   [](const Signal& s) {
                     return s.id() == protocol::kCopyNodeConf || s.id() == protocol::kCopyNodeRef;
                   },
                   100 * kMs)
                   .has_value());
  // No lock is left behind: a full round of load commits.
  const uint64_t committed = workload_->committed();
  workload_->start_load(4, 400, 1000);
  sim_->run_for(200 * kMs);
  stop_load_and_drain();
  EXPECT_GT(workload_->committed(), committed + 20);
  expect_consistent(1);
}

// After its node restart (old life wiped, copy under load, NODE_STARTEDREP) node 2's
// checkpoint and the redo from its start let it restore by itself: exactly the rows it
// held, none of its old life.
TEST_F(LocalQueryCopyTest, RestartedNodeRestoresFromItsOwnCheckpointAndRedo) {
  LocalQueryOptions options;
  options.copy_batch_rows = 3;
  options.lock_wait_timeout_ms = 300;
  options.redo_file_bytes = 4096;  // many redo files in each life
  start(4, options);
  // The old life: both nodes hold rows, node 2 checkpointed them.
  add_table(1);
  add_table(kStarting);
  workload_->start_load(6, 150);
  sim_->run_for(100 * kMs);
  stop_load_and_drain();
  checkpoint(kStarting);
  const Rows old_life = contents(kStarting);
  ASSERT_FALSE(old_life.empty());
  // Node 2 dies; node 1 goes on alone (rows deleted now must not come back on node 2).
  fail_node_2();
  workload_->start_load(6, 150);
  sim_->run_for(100 * kMs);
  // The node restart, load running.
  restart_node_2_and_copy();
  sim_->run_for(10 * kMs);
  stop_load_and_drain();
  node_2_started();
  // Its first own checkpoint, then more committed writes made durable by a GCI save.
  workload_->start_load(6, 150);
  checkpoint(kStarting);
  sim_->run_for(30 * kMs);
  stop_load_and_drain();
  const uint32_t restore_gci = routing_.gci;
  save_gcis_until(kStarting, [&] { return routing_.gci > restore_gci; });
  const Rows expected = contents(1);
  ASSERT_TRUE(expected == contents(kStarting));
  ASSERT_FALSE(expected == old_life);
  // Crash, and restore node 2 by itself.
  fail_node_2();
  EXPECT_TRUE(sim_->restart_node(kStarting).ok());
  sim_->run_for(1 * kMs);
  add_table(kStarting);
  send_to_parts(kStarting, Signal(protocol::kLqhRestoreReq, {restore_gci}));
  for (uint16_t part = 0; part < kLogParts; ++part) {
    Signal conf = must_wait_for(protocol::kLqhRestoreConf);
    EXPECT_EQ(conf.word(2), 0u) << std::string(conf.section().begin(), conf.section().end());
  }
  const Rows restored = contents(kStarting);
  EXPECT_EQ(restored.size(), expected.size());
  EXPECT_TRUE(restored == expected) << "the restore differs from what node 2 held";
  expect_consistent(kStarting);
}

// A node restart on a part with work on it is refused; on a fresh part it is answered.
TEST_F(LocalQueryCopyTest, RestartInitNeedsAFreshPartAndCopyNeedsAStartingNode) {
  start(5);
  add_table(1);
  add_table(kStarting);
  workload_->start_load(4, 50);
  sim_->run_for(100 * kMs);
  stop_load_and_drain();
  for (uint16_t part = 0; part < kLogParts; ++part) {
    ASSERT_GT(lqh_[1][part]->redo_log().appended_lsn(), 0u);
  }
  // Node 1 has logged commits: its old life cannot be wiped under it.
  send_to_parts(1, Signal(protocol::kNodeRestartInitReq));
  for (uint16_t part = 0; part < kLogParts; ++part) {
    Signal conf = must_wait_for(protocol::kNodeRestartInitConf);
    EXPECT_EQ(conf.word(1), static_cast<uint32_t>(ErrorCode::kTransactionState));
    EXPECT_FALSE(lqh_[1][part]->copying());
  }
  // Node 2 is not starting: nothing is copied to it.
  send_to_parts(1, Signal(protocol::kCopyNodeReq, {kStarting}));
  for (uint16_t part = 0; part < kLogParts; ++part) {
    Signal ref = must_wait_for(protocol::kCopyNodeRef);
    EXPECT_EQ(ref.word(0), kStarting);
    EXPECT_EQ(ref.word(1), static_cast<uint32_t>(ErrorCode::kTransactionState));
  }
}

// A normal node restart: node 2 held the table and saved its redo up to GCI G (with a
// checkpoint or not, as the seed says), died, and node 1 went on inserting, updating
// and deleting. Node 2 restores itself to G (LQH_RESTOREREQ for a node restart), keeps
// those rows (NODE_RESTART_INITREQ keep: its old files go), and node 1 copies only what
// changed since G while the load goes on; rows node 1 deleted meanwhile go: by their
// keys from node 1's delete log, or, when that does not reach back to G (node 1 keeps
// `delete_log_bytes` per fragment), by node 2's sweep of the rows node 1 did not name.
class CopySinceRestore : public LocalQueryCopyTest {
 public:
  // Records node 1 sent: whole rows, keys of unchanged rows, deleted keys.
  struct Sent {
    uint64_t whole = 0, keys = 0, deleted = 0;
  };
  Sent run(uint64_t seed, bool recreate_table, bool load_after,
           size_t delete_log_bytes = storage::Fragment::kDeleteLogDefaultBytes) {
    LocalQueryOptions options;
    options.copy_batch_rows = 1 + static_cast<uint32_t>(seed % 8);
    options.lock_wait_timeout_ms = 100;
    options.redo_file_bytes = 4096;
    options.delete_log_bytes = delete_log_bytes;
    start(seed, options);
    add_table(1);
    add_table(kStarting);
    workload_->start_load(8, 200);
    sim_->run_for(60 * kMs);
    stop_load_and_drain();
    if (seed % 2 == 0) {
      checkpoint(kStarting);
      workload_->start_load(4, 200);
      sim_->run_for(20 * kMs);
      stop_load_and_drain();
    }
    // GCI G: every commit so far is at or below it, and node 2 saved it.
    const uint32_t first_unsaved = routing_.gci;
    save_gcis_until(kStarting, [&] { return routing_.gci > first_unsaved; });
    const uint32_t restore_gci = routing_.gci - 1;
    fail_node_2();
    if (load_after) {
      workload_->start_load(4, 200);
      sim_->run_for(15 * kMs);
    }
    const uint64_t full_before = sent(true), keys_before = sent(false);
    const uint64_t deleted_before = deleted_keys_sent();

    // Node 2 restarts: its own disk first.
    EXPECT_TRUE(sim_->restart_node(kStarting).ok());
    sim_->run_for(1 * kMs);
    add_table(kStarting);
    send_to_parts(kStarting, Signal(protocol::kLqhRestoreReq,
                                    {restore_gci, protocol::kRestoreForNodeRestart}));
    for (uint16_t part = 0; part < kLogParts; ++part) {
      Signal conf = must_wait_for(protocol::kLqhRestoreConf);
      EXPECT_EQ(conf.word(2), 0u) << std::string(conf.section().begin(), conf.section().end());
    }
    if (recreate_table) {
      // As the schema copy does for a table re-created meanwhile: dropped, added empty.
      const uint32_t request_id = ++next_request_;
      send_to_parts(kStarting, protocol::DictMsg{request_id, kTable, 0, 0, ""}.to_signal(
                                   protocol::kTableDropReq));
      for (uint16_t part = 0; part < kLogParts; ++part) must_wait_for(protocol::kTableDropConf);
      add_table(kStarting);
    }
    // Its old files go, the rows stay; the answer names the tables whose rows it kept.
    send_to_parts(kStarting,
                  Signal(protocol::kNodeRestartInitReq, {protocol::kNodeRestartKeepRestored}));
    Bytes restored_tables;
    for (uint16_t part = 0; part < kLogParts; ++part) {
      Signal conf = must_wait_for(protocol::kNodeRestartInitConf);
      EXPECT_EQ(conf.word(1), 0u);
      restored_tables = conf.section();
      Bytes expected;
      if (!recreate_table) {
        protocol::put_u32(&expected, kTable);
        protocol::put_u32(&expected, kVersion);
      }
      EXPECT_EQ(conf.section(), expected);
    }
    for (uint16_t part = 0; part < kLogParts; ++part) {
      EXPECT_FALSE(disks_[kStarting]->file_exists(lcp_control_path(part, 0)));
      EXPECT_FALSE(disks_[kStarting]->file_exists(redo_path(part, 1)));
      EXPECT_TRUE(lqh_[kStarting][part]->copying());
    }
    routing_.dead.clear();
    routing_.starting = {kStarting};
    to_parts_and_wait({1, kStarting}, Signal(protocol::kNodeStartingRep, {kStarting}),
                      protocol::kNodeStartingConf);
    workload_->start_load(6, 220);  // some new keys too
    Signal copy(protocol::kCopyNodeReq, {kStarting, restore_gci});
    copy.set_section(restored_tables);
    send_to_parts(1, copy);
    for (uint16_t part = 0; part < kLogParts; ++part) {
      auto answer = wait_for([](const Signal& s) {
        return s.id() == protocol::kCopyNodeConf || s.id() == protocol::kCopyNodeRef;
      });
      if (!answer) {
        ADD_FAILURE() << "no COPY_NODECONF";
        break;
      }
      EXPECT_EQ(answer->id(), protocol::kCopyNodeConf);
    }
    sim_->run_for(5 * kMs);
    stop_load_and_drain();
    node_2_started();
    const Rows on_1 = contents(1);
    const Rows on_2 = contents(2);
    EXPECT_FALSE(on_1.empty());
    EXPECT_EQ(on_1.size(), on_2.size());
    EXPECT_TRUE(on_1 == on_2) << "node 2 differs from node 1";
    expect_consistent(1);
    expect_consistent(2);
    return {sent(true) - full_before, sent(false) - keys_before,
            deleted_keys_sent() - deleted_before};
  }

  // Records node 1's copies sent whole (true) or as keys (false).
  uint64_t sent(bool whole) {
    uint64_t total = 0;
    for (uint16_t part = 0; part < kLogParts; ++part) {
      total += whole ? lqh_[1][part]->copy_full_rows_sent() : lqh_[1][part]->copy_key_rows_sent();
    }
    return total;
  }
  uint64_t deleted_keys_sent() {
    uint64_t total = 0;
    for (uint16_t part = 0; part < kLogParts; ++part)
      total += lqh_[1][part]->copy_deleted_keys_sent();
    return total;
  }
  // Rows node 2 deleted by a sweep or by a deleted key.
  uint64_t swept() {
    uint64_t total = 0;
    for (uint16_t part = 0; part < kLogParts; ++part)
      total += lqh_[kStarting][part]->copy_rows_swept();
    return total;
  }
};

// Many seeds, each with node 1's delete log long enough (deleted keys sent, unchanged
// rows not), empty (every fragment falls back to keys and the sweep) or short (some
// fragments each way).
TEST_F(CopySinceRestore, StartingNodeEndsWithExactlyTheLiveReplicasRows) {
  const LogLevel saved_level = log_level();
  set_log_level(LogLevel::kWarning);
#if defined(DUO_SANITIZE) || !defined(NDEBUG)
  constexpr uint64_t kSeeds = 21;
#else
  constexpr uint64_t kSeeds = 150;
#endif
  constexpr size_t kLogBytes[] = {storage::Fragment::kDeleteLogDefaultBytes, 0, 300};
  uint64_t keys = 0, deleted_keys = 0, removed_by_key = 0, swept_rows = 0;
  for (uint64_t seed = 1; seed <= kSeeds && !HasFailure(); ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const size_t log_bytes = kLogBytes[seed % 3];
    const Sent sent = run(seed, false, true, log_bytes);
    EXPECT_GT(sent.whole, 0u);
    if (log_bytes == storage::Fragment::kDeleteLogDefaultBytes) {
      EXPECT_EQ(sent.keys, 0u) << "unchanged rows were sent although the delete log reaches G";
      deleted_keys += sent.deleted;
      removed_by_key += swept();
    } else {
      keys += sent.keys;
      swept_rows += swept();
    }
  }
  // Rows deleted while node 2 was down went on node 2, named by key or swept.
  EXPECT_GT(deleted_keys, 0u);
  EXPECT_GT(removed_by_key, 0u);
  EXPECT_GT(keys, 0u);
  EXPECT_GT(swept_rows, 0u);
  set_log_level(saved_level);
}

// Nothing changed while node 2 was down and only the load during the copy writes: no
// unchanged row is sent at all, not even its key.
TEST_F(CopySinceRestore, UnchangedRowsAreNotSent) {
  const Sent sent = run(3, false, false);
  EXPECT_EQ(sent.keys, 0u);
  EXPECT_EQ(sent.deleted, 0u);
}

// Rows node 1 deleted while node 2 was down are deleted on node 2 by the keys node 1's
// delete log names (run() checks node 2 ends with exactly node 1's rows).
TEST_F(CopySinceRestore, RowsDeletedWhileDownAreDeletedByKey) {
  const LogLevel saved_level = log_level();
  set_log_level(LogLevel::kWarning);
  uint64_t deleted = 0, removed = 0;
  for (uint64_t seed = 1; seed <= 8 && !HasFailure(); ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Sent sent = run(seed, false, true);
    EXPECT_EQ(sent.keys, 0u);
    deleted += sent.deleted;
    removed += swept();
  }
  EXPECT_GT(deleted, 0u);
  EXPECT_GT(removed, 0u);
  set_log_level(saved_level);
}

// Node 1 keeps no deleted key (its log never reaches back to G): the keys of unchanged
// rows go, and node 2's sweep deletes what node 1 no longer has.
TEST_F(CopySinceRestore, ShortDeleteLogFallsBackToKeysAndSweep) {
  const LogLevel saved_level = log_level();
  set_log_level(LogLevel::kWarning);
  uint64_t whole = 0, keys = 0, swept_rows = 0;
  for (uint64_t seed = 1; seed <= 8 && !HasFailure(); ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Sent sent = run(seed, false, true, 0);
    EXPECT_EQ(sent.deleted, 0u);
    whole += sent.whole;
    keys += sent.keys;
    swept_rows += swept();
  }
  EXPECT_GT(keys, 0u);
  EXPECT_GT(swept_rows, 0u);
  set_log_level(saved_level);
}

// A table node 2 re-created (dropped and added again, as the schema copy does when the
// cluster's table is another one now): every row comes whole, none as a key.
TEST_F(CopySinceRestore, RecreatedTableIsCopiedWhole) {
  const Sent sent = run(5, true, true);
  EXPECT_EQ(sent.keys, 0u);
  EXPECT_EQ(sent.deleted, 0u);
  EXPECT_GT(sent.whole, 0u);
}

}  // namespace
}  // namespace duo::local_query
