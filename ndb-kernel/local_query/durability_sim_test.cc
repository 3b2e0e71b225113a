// The local_query block's durability under the simulator: one data node (node group
// {1}, two log parts, so each part holds two of the table's four fragments) with a
// SimFileSystem over a SimDisk that outlives the node's crashes, and a scripted driver
// block playing coordinator, dictionary and distribution. Covers: GCP_SAVEREQ making
// redo durable; crash + TABLE_ADDREQ + LQH_RESTOREREQ(g) giving exactly the rows of
// GCIs <= g; the same through a local checkpoint (rows from LCP + redo), with updates
// and deletes while the checkpoint scans, with compression; redo files removed after
// a checkpoint; a second life after a restore; the redo-buffer overload refusal;
// corrupt checkpoint data and a torn control record; partial checkpoints (chains of
// files, delete records and key reuse, a crash at every point of one, and the negative
// control: without its delete records a restore is wrong); seeded randomized
// crash/restore comparisons with a model over many seeds, full and partial; and the
// bounded redo space (NoOfFragmentLogFiles): writers outrunning the checkpoints get
// NDB's 410, nothing acknowledged is lost across crashes, the disk stays in bounds.
// The node and its driver are the shared harness's (lqh_sim_harness.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ndb-kernel/common/crc32c.h"
#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/local_query/lqh_sim_harness.h"
#include "ndb-kernel/local_query/redo_log.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/sim/sim_file_system.h"
#include "ndb-kernel/sim/simulator.h"
#include "storage/row/column.h"

namespace duo::local_query {
namespace {

using kernel::BlockAddress;
using kernel::Signal;
using storage::AttrValues;
using storage::ColumnType;
using storage::OpType;

constexpr uint64_t kMs = kNanosPerMilli;
constexpr uint64_t kSecond = kNanosPerSecond;
constexpr uint32_t kTable = 7;
constexpr uint32_t kVersion = 2;
constexpr uint32_t kFragments = 4;

// A row's non-key columns; nullopt in the model means "absent".
struct Value {
  int64_t k = 0;
  std::optional<std::string> name;
  friend bool operator==(const Value&, const Value&) = default;
};
using Rows = std::map<int32_t, Value>;

struct Change {
  uint32_t gci = 0;
  int32_t id = 0;
  std::optional<Value> value;  // nullopt: deleted
};

struct RestoreAnswer {
  uint32_t gci = 0;
  uint32_t rows = 0;
  ErrorCode error = ErrorCode::kOk;
  std::string message;
};

class DurabilityTest : public SingleNodeLqhTest {
 protected:
  void start(LocalQueryOptions options = {}, uint64_t seed = 1, uint64_t disk_seed = 7,
             sim::SimFileSystemOptions fs_options = {}) {
    driver_ = nullptr;
    lqh_.fill(nullptr);
    next_request_ = 0;
    next_tc_op_ = 0;
    next_scan_ptr_ = 0;
    next_transid_ = uint64_t{1} << 48;
    schema_ = table_def().schema;
    ASSERT_NO_FATAL_FAILURE(start_node(options, seed, disk_seed, fs_options));
    add_table();
  }

  protocol::TableDef table_def() const override {
    protocol::TableDef def;
    def.schema.table_id = kTable;
    def.schema.name = "t";
    def.schema.columns = {{"id", ColumnType::kInt, false, false},
                          {"k", ColumnType::kBigInt, false, false},
                          {"name", ColumnType::kVarchar, false, true, 400}};
    def.schema.primary_key = {0};
    def.schema.ordered_indexes = {{"k_idx", {1}, unique_k_}};
    def.version = kVersion;
    def.fragment_count = kFragments;
    return def;
  }

  // ---- Rows ----

  AttrValues key(int32_t id) const {
    AttrValues a;
    a.add(0, storage::encode_int(schema_.columns[0], id));
    return a;
  }
  AttrValues row(int32_t id, const Value& v) const {
    AttrValues a = key(id);
    a.add(1, storage::encode_int(schema_.columns[1], v.k));
    if (v.name) {
      a.add(2, *v.name);
    } else {
      a.add_null(2);
    }
    return a;
  }
  uint32_t fragment_of(int32_t id) const {
    auto fragment = fragment_of_key(schema_, key(id), kFragments);
    EXPECT_TRUE(fragment.ok());
    return *fragment;
  }
  static Value value_of(int64_t k, size_t name_bytes = 12) {
    if (k % 7 == 0) return Value{k, std::nullopt};
    std::string name = "v" + std::to_string(k);
    name.resize(std::max(name.size(), name_bytes), static_cast<char>('a' + k % 26));
    return Value{k, name};
  }

  // Sends one write or delete of `id` in transaction `transid`; returns its answer
  // (conf, or the error and message of the ref).
  std::pair<ErrorCode, std::string> op(uint64_t transid, int32_t id,
                                       const std::optional<Value>& v) {
    auto req = key_req(transid, fragment_of(id), v ? OpType::kWrite : OpType::kDelete,
                       v ? row(id, *v) : key(id));
    if (!req) return {ErrorCode::kInternal, "no request"};
    const uint32_t tc_op = req->tc_op;
    send_key_req(std::move(*req));
    auto answer = wait_for([&](const Signal& s) {
      return (s.id() == protocol::kLqhKeyConf || s.id() == protocol::kLqhKeyRef) &&
             s.word(2) == tc_op;
    });
    if (!answer) return {ErrorCode::kInternal, "no answer"};
    if (answer->id() == protocol::kLqhKeyConf) return {ErrorCode::kOk, ""};
    auto ref = protocol::LqhKeyRef::from_signal(*answer);
    EXPECT_TRUE(ref.ok());
    return {ref->error, ref->message};
  }

  // One transaction of changes, committed in `gci`, recorded in the model. A change
  // refused (a delete of a missing row) is left out of the model.
  void transaction(uint32_t gci,
                   const std::vector<std::pair<int32_t, std::optional<Value>>>& changes) {
    const uint64_t transid = ++next_transid_;
    std::vector<Change> done;
    for (const auto& [id, v] : changes) {
      auto [error, message] = op(transid, id, v);
      if (error == ErrorCode::kOk) {
        done.push_back(Change{gci, id, v});
      } else {
        ASSERT_TRUE(error == ErrorCode::kNotFound && !v) << message;
      }
    }
    commit(transid, gci);
    history_.insert(history_.end(), done.begin(), done.end());
  }
  void write_row(uint32_t gci, int32_t id, const Value& v) { transaction(gci, {{id, v}}); }
  void delete_row(uint32_t gci, int32_t id) { transaction(gci, {{id, std::nullopt}}); }

  // Rows of every GCI <= g, from the model.
  Rows expected(uint32_t g) const {
    Rows rows;
    for (const Change& c : history_) {
      if (c.gci > g) continue;
      if (c.value) {
        rows[c.id] = *c.value;
      } else {
        rows.erase(c.id);
      }
    }
    return rows;
  }
  // Forgets changes of GCIs > g (lost with the crashed life).
  void truncate_history(uint32_t g) {
    std::erase_if(history_, [&](const Change& c) { return c.gci > g; });
  }

  // Every committed row of the node, by scanning each fragment on its log part.
  Rows contents() {
    Rows rows;
    for (uint32_t f = 0; f < kFragments; ++f) {
      const uint32_t scan_ptr = ++next_scan_ptr_;
      const uint64_t transid = ++next_transid_;
      protocol::ScanFragReq req;
      req.transid = transid;
      req.scan_ptr = scan_ptr;
      req.table_id = kTable;
      req.table_version = kVersion;
      req.fragment = f;
      req.log_part = protocol::place_fragment(topology_, f, kFragments).log_part;
      req.batch_rows = 500;
      protocol::ScanBody body;
      EXPECT_TRUE(body.encode(&req.body).ok());
      const BlockAddress to = lqh_address(req.log_part);
      send_to(to, std::move(req).to_signal());
      for (;;) {
        auto s = wait_for([&](const Signal& a) {
          return (a.id() == protocol::kScanFragConf || a.id() == protocol::kScanFragRef) &&
                 a.word(2) == scan_ptr;
        });
        if (!s || s->id() != protocol::kScanFragConf) {
          ADD_FAILURE() << "scan of fragment " << f << " failed";
          return rows;
        }
        auto batch = protocol::ScanBatch::from_signal(*s);
        EXPECT_TRUE(batch.ok());
        storage::RowBatch decoded;
        EXPECT_TRUE(protocol::decode_row_batch(protocol::as_view(batch->batch), &decoded).ok());
        for (size_t r = 0; r < decoded.rows(); ++r) {
          const storage::RowBatch::Row out = decoded.row(r);
          const auto id =
              static_cast<int32_t>(storage::decode_int(schema_.columns[0], out.value(0)));
          Value v{storage::decode_int(schema_.columns[1], out.value(1)),
                  out.is_null(2) ? std::nullopt : std::optional<std::string>(out.value(2))};
          EXPECT_EQ(fragment_of(id), f);
          EXPECT_TRUE(rows.emplace(id, v).second) << "row " << id << " twice";
        }
        if (batch->flags & protocol::kScanFragmentDone) break;
        protocol::ScanNextReq next;
        next.tx = transid;
        next.id = scan_ptr;
        next.fragment = f;
        send_to(to, next.to_signal(protocol::kScanFragNextReq));
      }
    }
    return rows;
  }

  // ---- Distribution ----

  // GCP_SAVEREQ(g) to every part; true once all answered.
  bool save(uint32_t g, uint64_t limit_ns = 30 * kSecond) {
    if (!gcp_save(g, limit_ns)) return false;
    complete_gci_ = std::max(complete_gci_, g);
    return true;
  }

  // LCP_STARTREQ to every part; GCPs go on (a checkpoint waits for the save of a GCI
  // past its rows) until every part answered. Returns the rows checkpointed.
  uint64_t checkpoint(int rounds_max = 50, uint64_t round_ns = 10 * kMs) {
    for (uint16_t part = 0; part < kLogParts; ++part) {
      send_to(lqh_address(part), Signal(protocol::kLcpStartReq));
    }
    uint64_t rows = 0;
    for (int answered = 0, rounds = 0; answered < kLogParts && rounds < rounds_max; ++rounds) {
      while (auto conf = wait_for([](const Signal& s) { return s.id() == protocol::kLcpStartConf; },
                                  round_ns)) {
        EXPECT_EQ(conf->word(2), 0u);
        rows += conf->word(1);
        ++answered;
      }
      if (answered < kLogParts) {
        EXPECT_TRUE(save(++gci_));
      }
    }
    for (uint16_t part = 0; part < kLogParts; ++part) EXPECT_FALSE(lqh_[part]->lcp_running());
    return rows;
  }

  std::vector<RestoreAnswer> restore(uint32_t g) {
    for (uint16_t part = 0; part < kLogParts; ++part) {
      send_to(lqh_address(part), Signal(protocol::kLqhRestoreReq, {g}));
    }
    std::vector<RestoreAnswer> answers;
    for (uint16_t part = 0; part < kLogParts; ++part) {
      Signal conf = must_wait_for(protocol::kLqhRestoreConf);
      RestoreAnswer a;
      a.gci = conf.word(0);
      a.rows = conf.word(1);
      a.error = static_cast<ErrorCode>(conf.word(2));
      a.message.assign(conf.section().begin(), conf.section().end());
      answers.push_back(a);
    }
    return answers;
  }
  // Restores to g, expects success, and leaves the model at g.
  void restore_ok(uint32_t g) {
    uint64_t rows = 0;
    for (const RestoreAnswer& a : restore(g)) {
      EXPECT_EQ(a.error, ErrorCode::kOk) << a.message;
      EXPECT_EQ(a.gci, g);
      rows += a.rows;
    }
    truncate_history(g);
    EXPECT_EQ(rows, expected(g).size());
    gci_ = std::max(gci_, g);
  }

  std::vector<std::string> redo_files_on_disk(uint16_t part) const {
    std::vector<std::string> paths;
    for (uint32_t seq = 1; seq < 200; ++seq) {
      if (disk_->file_exists(redo_path(part, seq))) paths.push_back(redo_path(part, seq));
    }
    return paths;
  }

  // Overwrites bytes of a file on the disk durably (corruption).
  void corrupt(const std::string& path, uint64_t offset, const std::string& bytes) {
    std::shared_ptr<sim::SimFile> file;
    uint32_t os_errno = 0;
    ASSERT_TRUE(
        disk_->open_file(path, fs::kFsRead | fs::kFsWrite | fs::kFsCreate, &file, &os_errno).ok())
        << path;
    ASSERT_TRUE(
        disk_->write_file(*file, path, offset, fs::Bytes(bytes.begin(), bytes.end()), &os_errno)
            .ok());
    ASSERT_TRUE(disk_->sync_file(*file, path, &os_errno).ok());
  }

  // Writes rows `ids` with `values` in one transaction committed in `gci`, all
  // operations in flight at once (no model: for the measurements). Returns the rows.
  size_t bulk_write(uint32_t gci, const std::vector<std::pair<int32_t, Value>>& rows) {
    const uint64_t transid = ++next_transid_;
    driver_->answers().clear();
    for (const auto& [id, v] : rows) {
      auto req = key_req(transid, fragment_of(id), OpType::kWrite, row(id, v));
      if (req) send_key_req(std::move(*req));
    }
    const size_t want = rows.size();
    EXPECT_TRUE(sim_->run_until([&] { return driver_->answers().size() >= want; }, 60 * kSecond));
    size_t confs = 0;
    for (const Signal& answer : driver_->answers()) confs += answer.id() == protocol::kLqhKeyConf;
    driver_->answers().clear();
    commit(transid, gci);
    return confs;
  }

  // Replaces a file's whole content on the disk durably.
  void replace_file(const std::string& path, const std::string& bytes) {
    std::shared_ptr<sim::SimFile> file;
    uint32_t os_errno = 0;
    ASSERT_TRUE(
        disk_->open_file(path, fs::kFsWrite | fs::kFsCreate | fs::kFsTruncate, &file, &os_errno)
            .ok())
        << path;
    ASSERT_TRUE(
        disk_->write_file(*file, path, 0, fs::Bytes(bytes.begin(), bytes.end()), &os_errno).ok());
    ASSERT_TRUE(disk_->sync_file(*file, path, &os_errno).ok());
  }

  // The newest valid control record of a part on the disk.
  std::optional<LcpControl> control_on_disk(uint16_t part) const {
    std::optional<LcpControl> newest;
    for (uint32_t slot = 0; slot < 2; ++slot) {
      const std::string path = lcp_control_path(part, slot);
      if (!disk_->file_exists(path)) continue;
      auto control = decode_lcp_control(disk_->content(path));
      if (control.ok() && (!newest || control->sequence > newest->sequence)) newest = *control;
    }
    return newest;
  }

  // Checks what a part's newest control record names: every file exists, no chain is
  // longer than `parts` files, and no checkpoint directory it does not name is left.
  // Returns the partial files it names.
  size_t check_chains_on_disk(uint16_t part, uint32_t parts) {
    const std::optional<LcpControl> control = control_on_disk(part);
    if (!control) {
      ADD_FAILURE() << "no control record on part " << part;
      return 0;
    }
    size_t partial_files = 0;
    std::set<uint32_t> named;
    for (const LcpFragmentInfo& info : control->fragments) {
      EXPECT_LE(info.files.size(), std::max<uint32_t>(parts, 1));
      for (const LcpDataFile& file : info.files) {
        named.insert(file.lcp_id);
        if (!file.full()) ++partial_files;
        EXPECT_TRUE(
            disk_->file_exists(lcp_data_path(part, file.lcp_id, info.table_id, info.fragment_id)));
      }
    }
    for (uint32_t id = 1; id < control->lcp_id; ++id) {
      if (named.contains(id)) continue;
      for (uint32_t f = 0; f < kFragments; ++f) {
        EXPECT_FALSE(disk_->file_exists(lcp_data_path(part, id, kTable, f)))
            << lcp_data_path(part, id, kTable, f);
      }
    }
    return partial_files;
  }

  // Random transactions (keys reused after deletes), saves and checkpoints; crashes at
  // random moments (inside saves, checkpoints and unsynced writes, so torn redo tails
  // happen); after each crash the node restores to the last GCI every part saved and
  // must hold exactly the model's rows. Returns the torn writes seen.
  uint64_t run_randomized(uint64_t seed, bool partial) {
    std::mt19937_64 random(seed);
    auto chance = [&](int percent) { return static_cast<int>(random() % 100) < percent; };
    LocalQueryOptions options;
    options.lcp_slice_rows = 1 + static_cast<uint32_t>(random() % 40);
    options.redo_file_bytes = 4096 << (random() % 4);
    options.compress_lcp = chance(50);
    options.lcp_redo_bytes = chance(50) ? 16 * 1024 : 0;
    if (partial) options.lcp_parts = 2 + static_cast<uint32_t>(random() % 4);
    const int lcp_percent = partial ? 15 : 5;
    sim::SimFileSystemOptions fs_options;
    fs_options.latency_ms = 1;
    fs_options.latency_jitter_ms = random() % 3;
    history_.clear();
    complete_gci_ = 0;
    gci_ = 1;
    start(options, seed, seed * 977, fs_options);
    uint64_t torn_writes = 0;
    for (int life = 0; life < 3; ++life) {
      const int steps = 20 + static_cast<int>(random() % (partial ? 80 : 40));
      for (int step = 0; step < steps; ++step) {
        std::vector<std::pair<int32_t, std::optional<Value>>> changes;
        const int n = 1 + static_cast<int>(random() % 4);
        for (int i = 0; i < n; ++i) {
          const auto id = static_cast<int32_t>(random() % 150);
          if (chance(25)) {
            changes.emplace_back(id, std::nullopt);
          } else {
            changes.emplace_back(id,
                                 value_of(static_cast<int64_t>(random() % 100000), random() % 350));
          }
        }
        // One transaction touches a key once (the model has no intra-transaction order).
        std::sort(changes.begin(), changes.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        changes.erase(std::unique(changes.begin(), changes.end(),
                                  [](const auto& a, const auto& b) { return a.first == b.first; }),
                      changes.end());
        transaction(gci_, changes);
        if (chance(30)) {
          EXPECT_TRUE(save(gci_));
          ++gci_;
        }
        if (chance(lcp_percent)) {
          for (uint16_t part = 0; part < kLogParts; ++part) {
            send_to(lqh_address(part), Signal(protocol::kLcpStartReq));
          }
        }
      }
      // Crash at a random moment: maybe in the middle of a save of the current GCI.
      if (chance(50)) {
        for (uint16_t part = 0; part < kLogParts; ++part) {
          send_to(lqh_address(part), Signal(protocol::kGcpSaveReq, {gci_}));
        }
      }
      sim_->run_for(random() % (5 * kMs));
      crash_and_restart();
      torn_writes += disk_->stats().writes_torn;
      const uint32_t g = complete_gci_;
      restore_ok(g);
      EXPECT_EQ(contents(), expected(g)) << "life " << life << " restored to GCI " << g;
      if (::testing::Test::HasFailure()) return torn_writes;
      gci_ = g + 1;
    }
    return torn_writes;
  }

  // Redo bytes of a part on the disk (written, synced or not). Files are created in
  // sequence: none is past the part's current one.
  uint64_t redo_bytes_on_disk(uint16_t part) const {
    uint64_t bytes = 0;
    for (uint32_t seq = 1; seq <= lqh_[part]->redo_log().current_file_seq(); ++seq) {
      const std::string path = redo_path(part, seq);
      if (disk_->file_exists(path)) bytes += disk_->content(path).size();
    }
    return bytes;
  }

  // Bounded redo space under writers faster than the checkpoints (which only the space
  // starts: lcp_redo_bytes 0): transactions of several writes in flight at once; a
  // write refused with 410 leaves the rest of its transaction to commit (commits of
  // executed writes must fit); GCPs come every few transactions; crashes at random
  // moments, each followed by a restore that must give exactly the model's rows. After
  // every transaction no part holds more redo, on disk or in its accounting, than its
  // space; before each crash GCPs alone must let the refusals clear. Returns the writes
  // refused for redo space; *cleared counts the parts' lives that refused and cleared.
  uint64_t run_bounded_redo(uint64_t seed, uint64_t file_bytes, uint32_t file_count,
                            uint64_t* max_held, int* cleared) {
    std::mt19937_64 random(seed);
    LocalQueryOptions options;
    options.redo_file_bytes = file_bytes;
    options.redo_file_count = file_count;
    options.lcp_redo_bytes = 0;
    options.lcp_slice_rows = 64;
    options.lcp_write_speeds.normal_bytes_per_s = 1 << 20;
    options.lcp_write_speeds.other_node_restart_bytes_per_s = 1 << 20;
    options.lcp_write_speeds.own_restart_bytes_per_s = 4 << 20;
    options.lcp_write_speeds.min_bytes_per_s = 1 << 20;
    sim::SimFileSystemOptions fs_options;
    fs_options.latency_ms = 1;
    fs_options.latency_jitter_ms = 2;
    history_.clear();
    complete_gci_ = 0;
    gci_ = 1;
    start(options, seed, seed * 31, fs_options);
    const uint64_t space = file_bytes * file_count;
    uint64_t refused = 0;
    for (int life = 0; life < 3; ++life) {
      const int transactions = 300 + static_cast<int>(random() % 500);
      // Sparse GCPs hold a checkpoint back (it waits for the save of its max GCI + 2)
      // while the redo grows: the writers outrun it.
      const int save_every = 10 + static_cast<int>(random() % 150);
      for (int t = 0; t < transactions; ++t) {
        const uint64_t transid = ++next_transid_;
        std::map<int32_t, Value> writes;
        while (writes.size() < 8) {
          writes[static_cast<int32_t>(random() % 1500)] =
              value_of(static_cast<int64_t>(random() % 100000), 100 + random() % 300);
        }
        driver_->answers().clear();
        std::map<uint32_t, int32_t> id_of_op;
        for (const auto& [id, v] : writes) {
          auto req = key_req(transid, fragment_of(id), OpType::kWrite, row(id, v));
          if (!req) continue;
          id_of_op[req->tc_op] = id;
          send_key_req(std::move(*req));
        }
        EXPECT_TRUE(sim_->run_until([&] { return driver_->answers().size() >= writes.size(); },
                                    30 * kSecond));
        std::vector<Change> done;
        for (Signal& answer : driver_->answers()) {
          const int32_t id = id_of_op.at(answer.word(2));
          if (answer.id() == protocol::kLqhKeyConf) {
            done.push_back(Change{gci_, id, writes.at(id)});
            continue;
          }
          auto ref = protocol::LqhKeyRef::from_signal(answer);
          EXPECT_TRUE(ref.ok());
          EXPECT_EQ(ref->error, ErrorCode::kTemporary);
          EXPECT_EQ(ref->message, kRedoFilesOverloadedMessage);
          ++refused;
        }
        driver_->answers().clear();
        commit(transid, gci_);
        history_.insert(history_.end(), done.begin(), done.end());
        // A client backs off after a temporary error (and the checkpoint gets on).
        if (done.size() < writes.size()) sim_->run_for(2 * kMs);
        if ((t + 1) % save_every == 0) {
          EXPECT_TRUE(save(gci_));
          ++gci_;
        }
        for (uint16_t part = 0; part < kLogParts; ++part) {
          const uint64_t held = lqh_[part]->redo_log().held_space_bytes();
          *max_held = std::max(*max_held, held);
          EXPECT_LE(held, space) << "part " << part;
          // The disk less often: reading every file back is what the test costs most.
          if (t % 8 == 0) {
            EXPECT_LE(redo_bytes_on_disk(part), space) << "part " << part;
          }
        }
        if (::testing::Test::HasFailure()) return refused;
      }
      // With the writers gone quiet, GCPs go on: the checkpoint completes, frees the
      // files, and writes are accepted again (no part stays refusing for good). Some
      // lives crash right away instead, maybe while refusing with a checkpoint running.
      const bool drain = random() % 3 != 0;
      for (int round = 0; drain && round < 20; ++round) {
        if (lqh_[0]->redo_log().space_accepting_writes() &&
            lqh_[1]->redo_log().space_accepting_writes()) {
          break;
        }
        EXPECT_TRUE(save(gci_));
        ++gci_;
        sim_->run_for(10 * kMs);
      }
      for (uint16_t part = 0; part < kLogParts && drain; ++part) {
        EXPECT_TRUE(lqh_[part]->redo_log().space_accepting_writes())
            << "seed " << seed << " life " << life << " part " << part << " still refuses";
        *cleared += lqh_[part]->redo_space_refusals() > 0;
      }
      if (random() % 2 == 0) {
        for (uint16_t part = 0; part < kLogParts; ++part) {
          send_to(lqh_address(part), Signal(protocol::kGcpSaveReq, {gci_}));
        }
      }
      sim_->run_for(random() % (20 * kMs));
      crash_and_restart();
      const uint32_t g = complete_gci_;
      restore_ok(g);
      EXPECT_EQ(contents(), expected(g)) << "seed " << seed << " life " << life << " GCI " << g;
      for (uint16_t part = 0; part < kLogParts; ++part) {
        EXPECT_LE(redo_bytes_on_disk(part), space) << "part " << part << " after the restore";
      }
      if (::testing::Test::HasFailure()) return refused;
      gci_ = g + 1;
    }
    return refused;
  }

  storage::TableSchema schema_;
  std::vector<Change> history_;
  bool unique_k_ = false;      // k_idx is UNIQUE
  uint32_t gci_ = 0;           // the GCI the driver commits in
  uint32_t complete_gci_ = 0;  // the highest GCI saved on every part
  uint32_t next_scan_ptr_ = 0;
};

TEST_F(DurabilityTest, GcpSaveMakesTheRedoDurable) {
  start();
  for (uint32_t g = 1; g <= 3; ++g) {
    for (int i = 0; i < 10; ++i) write_row(g, static_cast<int32_t>(g * 100 + i), value_of(i));
  }
  delete_row(3, 105);
  ASSERT_TRUE(save(3));
  size_t records = 0;
  for (uint16_t part = 0; part < kLogParts; ++part) {
    const std::string durable = disk_->durable_content(redo_path(part, 1));
    std::deque<RedoRecord> decoded;
    bool torn = true;
    EXPECT_EQ(decode_redo_file(durable, &decoded, &torn), durable.size());
    EXPECT_FALSE(torn);
    uint32_t previous_gci = 0;
    for (const RedoRecord& r : decoded) {
      EXPECT_GE(r.header.gci, previous_gci);  // commit order: GCIs never go back
      previous_gci = r.header.gci;
      EXPECT_EQ(r.header.table_id, kTable);
      EXPECT_EQ(r.header.table_version, kVersion);
      EXPECT_EQ(protocol::place_fragment(topology_, r.header.fragment_id, kFragments).log_part,
                part);
    }
    records += decoded.size();
    EXPECT_EQ(lqh_[part]->saved_gci(), 3u);
    EXPECT_EQ(lqh_[part]->redo_log().buffered_bytes(), 0u);
  }
  EXPECT_EQ(records, 31u);
}

TEST_F(DurabilityTest, RestoreGivesExactlyTheRowsOfGcisUpToG) {
  for (uint32_t g : {5u, 3u}) {
    SCOPED_TRACE(g);
    history_.clear();
    complete_gci_ = 0;
    start();
    for (uint32_t gci = 1; gci <= 6; ++gci) {
      for (int i = 0; i < 20; ++i) {
        const int32_t id = static_cast<int32_t>((gci * 37 + static_cast<uint32_t>(i) * 11) % 60);
        if (i % 5 == 4) {
          delete_row(gci, id);
        } else {
          write_row(gci, id, value_of(gci * 1000 + static_cast<uint32_t>(i)));
        }
      }
      if (gci <= 5) {
        ASSERT_TRUE(save(gci));
      }
    }
    // GCI 6 is committed but never saved: a restart must not see it.
    crash_and_restart();
    restore_ok(g);
    EXPECT_EQ(contents(), expected(g));
  }
}

TEST_F(DurabilityTest, RestoreFromACheckpointPlusRedoWithChangesDuringTheScan) {
  LocalQueryOptions options;
  options.lcp_slice_rows = 5;  // many slices: the commits below land between them
  start(options);
  gci_ = 1;
  for (int i = 0; i < 200; ++i) write_row(gci_, i, value_of(i, 100));
  ASSERT_TRUE(save(gci_));
  // Start the checkpoint and keep committing updates, deletes and inserts meanwhile.
  for (uint16_t part = 0; part < kLogParts; ++part) {
    send_to(lqh_address(part), Signal(protocol::kLcpStartReq));
  }
  int answered = 0;
  for (int round = 0; round < 40 && answered < kLogParts; ++round) {
    ++gci_;
    for (int i = 0; i < 10; ++i) {
      const int32_t id = (round * 13 + i * 7) % 260;
      if (i % 3 == 0) {
        delete_row(gci_, id);
      } else {
        write_row(gci_, id, value_of(round * 100 + i, 50));
      }
    }
    ASSERT_TRUE(save(gci_));
    while (wait_for([](const Signal& s) { return s.id() == protocol::kLcpStartConf; }, 0))
      ++answered;
  }
  ASSERT_EQ(answered, kLogParts) << "checkpoint did not finish";
  EXPECT_GT(gci_, 3u) << "the checkpoint should have spanned several GCIs";
  for (uint16_t part = 0; part < kLogParts; ++part) {
    EXPECT_EQ(lqh_[part]->last_lcp_id(), 1u);
    EXPECT_TRUE(disk_->file_exists(lcp_control_path(part, 1)));
  }
  // After the checkpoint: more changes in two saved GCIs and one unsaved.
  for (uint32_t extra = 0; extra < 3; ++extra) {
    ++gci_;
    for (int i = 0; i < 15; ++i) {
      const int32_t id = static_cast<int32_t>((extra * 31 + static_cast<uint32_t>(i) * 17) % 260);
      if (i % 4 == 0) {
        delete_row(gci_, id);
      } else {
        write_row(gci_, id, value_of(extra * 1000 + static_cast<uint32_t>(i)));
      }
    }
    if (extra < 2) {
      ASSERT_TRUE(save(gci_));
    }
  }
  const uint32_t g = complete_gci_;
  crash_and_restart();
  restore_ok(g);
  EXPECT_EQ(contents(), expected(g));
}

// A UNIQUE index whose keys move between rows while the checkpoint scans: the
// checkpoint is fuzzy and redo older than it is applied again over newer rows, so the
// restore passes through states holding a key twice (which it must tolerate) and ends
// in the committed state, which holds each key once.
TEST_F(DurabilityTest, RestoreWithUniqueKeysMovingBetweenRows) {
  LocalQueryOptions options;
  options.lcp_slice_rows = 3;
  unique_k_ = true;
  start(options);
  gci_ = 1;
  std::map<int64_t, int32_t> owner;  // k -> the row holding it
  for (int32_t id = 0; id < 60; ++id) {
    write_row(gci_, id, Value{id, "r"});
    owner[id] = id;
  }
  ASSERT_TRUE(save(gci_));
  int32_t next_id = 60;
  // Moves key k from its row to a new row, in one transaction (the old row goes).
  auto move_key = [&](int64_t k) {
    const int32_t from = owner[k];
    const int32_t to = next_id++;
    transaction(gci_, {{from, std::nullopt}, {to, Value{k, "m"}}});
    owner[k] = to;
  };
  for (uint16_t part = 0; part < kLogParts; ++part) {
    send_to(lqh_address(part), Signal(protocol::kLcpStartReq));
  }
  int answered = 0;
  for (int round = 0; round < 60 && answered < kLogParts; ++round) {
    ++gci_;
    for (int i = 0; i < 6; ++i) move_key((round * 7 + i * 11) % 60);
    ASSERT_TRUE(save(gci_));
    while (wait_for([](const Signal& s) { return s.id() == protocol::kLcpStartConf; }, 0))
      ++answered;
  }
  ASSERT_EQ(answered, kLogParts) << "checkpoint did not finish";
  for (int extra = 0; extra < 2; ++extra) {
    ++gci_;
    for (int i = 0; i < 10; ++i) move_key((extra * 13 + i * 5) % 60);
    ASSERT_TRUE(save(gci_));
  }
  const uint32_t g = complete_gci_;
  crash_and_restart();
  restore_ok(g);
  EXPECT_EQ(contents(), expected(g));
}

TEST_F(DurabilityTest, CompressedCheckpointRestores) {
  LocalQueryOptions options;
  options.compress_lcp = true;
  start(options);
  gci_ = 1;
  for (int i = 0; i < 300; ++i) write_row(gci_, i, value_of(i, 300));
  ASSERT_TRUE(save(gci_));
  EXPECT_EQ(checkpoint(), 300u);
  // Every data file's first chunk is zstd (rows of repeated letters compress).
  size_t files = 0;
  for (uint32_t f = 0; f < kFragments; ++f) {
    const uint16_t part = protocol::place_fragment(topology_, f, kFragments).log_part;
    const std::string data = disk_->durable_content(lcp_data_path(part, 1, kTable, f));
    if (data.empty()) continue;
    ++files;
    EXPECT_EQ(static_cast<uint8_t>(data[8]), kLcpCompressionZstd);
    uint32_t plain = 0, stored = 0;
    std::memcpy(&plain, data.data(), 4);
    std::memcpy(&stored, data.data() + 4, 4);
    EXPECT_LT(stored * 2, plain);
  }
  EXPECT_EQ(files, kFragments);
  ++gci_;
  for (int i = 0; i < 300; i += 3) delete_row(gci_, i);
  ASSERT_TRUE(save(gci_));
  crash_and_restart();
  restore_ok(gci_);
  EXPECT_EQ(contents(), expected(gci_));
}

TEST_F(DurabilityTest, CheckpointRemovesTheRedoItMadeUseless) {
  LocalQueryOptions options;
  options.redo_file_bytes = 8 * 1024;
  start(options);
  for (gci_ = 1; gci_ <= 4; ++gci_) {
    for (int i = 0; i < 60; ++i)
      write_row(gci_, static_cast<int32_t>(gci_ * 100) + i, value_of(i, 200));
    ASSERT_TRUE(save(gci_));
  }
  --gci_;
  std::array<size_t, kLogParts> before{};
  for (uint16_t part = 0; part < kLogParts; ++part) {
    before[part] = redo_files_on_disk(part).size();
    EXPECT_GE(before[part], 3u) << part;
  }
  checkpoint();
  for (uint16_t part = 0; part < kLogParts; ++part) {
    // Only files holding records of the checkpoint's start GCI (4) or later are left.
    const std::vector<std::string> left = redo_files_on_disk(part);
    ASSERT_FALSE(left.empty());
    EXPECT_LT(left.size(), before[part]) << part;
    for (const std::string& path : left) {
      std::deque<RedoRecord> records;
      bool torn = false;
      decode_redo_file(disk_->content(path), &records, &torn);
      uint32_t max_gci = 0;
      for (const RedoRecord& r : records) max_gci = std::max(max_gci, r.header.gci);
      EXPECT_TRUE(records.empty() || max_gci >= 4) << path;
    }
  }
  // A second checkpoint removes the first one's directory.
  ++gci_;
  write_row(gci_, 1, value_of(1));
  ASSERT_TRUE(save(gci_));
  checkpoint();
  for (uint16_t part = 0; part < kLogParts; ++part) {
    EXPECT_EQ(lqh_[part]->last_lcp_id(), 2u);
    for (uint32_t f = 0; f < kFragments; ++f) {
      EXPECT_FALSE(disk_->file_exists(lcp_data_path(part, 1, kTable, f)));
    }
  }
  const uint32_t g = complete_gci_;
  crash_and_restart();
  restore_ok(g);
  EXPECT_EQ(contents(), expected(g));
}

TEST_F(DurabilityTest, SecondLifeAfterARestoreRestoresToo) {
  start();
  for (gci_ = 1; gci_ <= 3; ++gci_) {
    for (int i = 0; i < 10; ++i)
      write_row(gci_, i + static_cast<int32_t>(gci_) * 3, value_of(gci_ * 10 + i));
    ASSERT_TRUE(save(gci_));
  }
  // GCI 4 reaches the disk of one part only (never complete): the restart goes to 3.
  write_row(4, 500, value_of(4));
  send_to(lqh_address(0), Signal(protocol::kGcpSaveReq, {4}));
  sim_->run_for(100 * kMs);
  crash_and_restart();
  restore_ok(3);
  EXPECT_EQ(contents(), expected(3));
  // The crashed life's redo is gone; the new life logs in a new file.
  for (uint16_t part = 0; part < kLogParts; ++part) {
    EXPECT_FALSE(disk_->file_exists(redo_path(part, 1))) << part;
  }
  // New life: GCIs go on from 4 (the crashed life's 4 is forgotten).
  for (gci_ = 4; gci_ <= 6; ++gci_) {
    write_row(gci_, 500 + static_cast<int32_t>(gci_), value_of(gci_));
    delete_row(gci_, static_cast<int32_t>(gci_));
    ASSERT_TRUE(save(gci_));
  }
  crash_and_restart();
  restore_ok(6);
  EXPECT_EQ(contents(), expected(6));
  // And a third life straight away (nothing written in the second).
  crash_and_restart();
  restore_ok(6);
  EXPECT_EQ(contents(), expected(6));
}

TEST_F(DurabilityTest, FullRedoBufferRefusesNewWritesButNotCommits) {
  LocalQueryOptions options;
  options.redo_buffer_bytes = 16 * 1024;
  start(options);
  gci_ = 1;
  // One open transaction with writes on both parts, committed after the buffer fills.
  const uint64_t held = ++next_transid_;
  ASSERT_EQ(op(held, 100000, value_of(1, 300)).first, ErrorCode::kOk);
  ASSERT_EQ(op(held, 100001, value_of(2, 300)).first, ErrorCode::kOk);
  int written = 0;
  std::pair<ErrorCode, std::string> refused{ErrorCode::kOk, ""};
  for (int i = 0; i < 200 && refused.first == ErrorCode::kOk; ++i) {
    const uint64_t transid = ++next_transid_;
    refused = op(transid, i, value_of(i, 300));
    if (refused.first == ErrorCode::kOk) {
      commit(transid, gci_);
      history_.push_back(Change{gci_, i, value_of(i, 300)});
      ++written;
    } else {
      commit(transid, gci_);  // nothing to commit: the refusal stopped it
    }
  }
  EXPECT_EQ(refused.first, ErrorCode::kTemporary);
  EXPECT_EQ(refused.second, "REDO buffers overloaded");
  EXPECT_GT(written, 10);
  // The held transaction still commits, past the refusal threshold.
  commit(held, gci_);
  history_.push_back(Change{gci_, 100000, value_of(1, 300)});
  history_.push_back(Change{gci_, 100001, value_of(2, 300)});
  // A save writes the buffer out; writes are accepted again.
  ASSERT_TRUE(save(gci_));
  write_row(gci_, 424242, value_of(5));
  ASSERT_TRUE(save(++gci_));
  crash_and_restart();
  restore_ok(gci_);
  EXPECT_EQ(contents(), expected(gci_));
}

TEST_F(DurabilityTest, BoundedRedoFilesRefuseWritesAndLoseNothingAcrossCrashes) {
  uint64_t refused = 0;
  uint64_t max_held = 0;
  int cleared = 0;
  for (uint64_t seed = 1; seed <= 3 && !HasFailure(); ++seed) {
    refused += run_bounded_redo(seed, 256 * 1024, 3, &max_held, &cleared);
  }
  std::printf(
      "redo space 3 x 256 KiB per part: %llu writes refused (410), max held %llu KiB, "
      "%d part lives refused and cleared\n",
      static_cast<unsigned long long>(refused), static_cast<unsigned long long>(max_held >> 10),
      cleared);
  // The load outran the checkpoints: writers saw the temporary error.
  EXPECT_GT(refused, 0u);
  EXPECT_GT(cleared, 0);
  EXPECT_GE(max_held * 4, 3u * 3 * 256 * 1024);
}

// One GCI whose redo alone fills the files: a checkpoint of that GCI frees nothing
// (its records are needed from the checkpoint's start GCI on), so writes are refused;
// once GCPs saved it, every commit of it is in the next checkpoint, which frees the
// files although nothing committed in a newer GCI.
TEST_F(DurabilityTest, OneHugeGciDoesNotStallTheRedoFilesForGood) {
  LocalQueryOptions options;
  options.redo_file_bytes = 64 * 1024;
  options.redo_file_count = 3;
  options.lcp_redo_bytes = 0;
  start(options);
  gci_ = 1;
  std::pair<ErrorCode, std::string> refused{ErrorCode::kOk, ""};
  int written = 0;
  for (int i = 0; i < 2000 && refused.first == ErrorCode::kOk; ++i) {
    const uint64_t transid = ++next_transid_;
    refused = op(transid, i, value_of(i, 300));
    commit(transid, gci_);
    if (refused.first == ErrorCode::kOk) {
      history_.push_back(Change{gci_, i, value_of(i, 300)});
      ++written;
    }
  }
  EXPECT_EQ(refused.first, ErrorCode::kTemporary);
  EXPECT_EQ(refused.second, kRedoFilesOverloadedMessage);
  EXPECT_GT(written, 200);
  // Only GCPs from here on: no commit in a newer GCI.
  for (int round = 0; round < 10; ++round) {
    if (lqh_[0]->redo_log().space_accepting_writes() &&
        lqh_[1]->redo_log().space_accepting_writes()) {
      break;
    }
    ASSERT_TRUE(save(gci_));
    ++gci_;
    sim_->run_for(10 * kMs);
  }
  for (uint16_t part = 0; part < kLogParts; ++part) {
    EXPECT_TRUE(lqh_[part]->redo_log().space_accepting_writes()) << "part " << part;
    EXPECT_LT(lqh_[part]->redo_log().space_fill(), 0.5) << "part " << part;
  }
  write_row(gci_, 100000, value_of(5));
  ASSERT_TRUE(save(gci_));
  crash_and_restart();
  restore_ok(gci_);
  EXPECT_EQ(contents(), expected(gci_));
}

TEST_F(DurabilityTest, CorruptCheckpointDataIsReportedWithFileAndOffset) {
  start();
  gci_ = 1;
  for (int i = 0; i < 50; ++i) write_row(gci_, i, value_of(i));
  ASSERT_TRUE(save(gci_));
  checkpoint();
  crash_and_restart();
  // Flip stored bytes of the first chunk of one fragment's data file.
  const uint16_t part = protocol::place_fragment(topology_, 0, kFragments).log_part;
  const std::string path = lcp_data_path(part, 1, kTable, 0);
  ASSERT_GT(disk_->content(path).size(), 40u);
  corrupt(path, 30, "XXXX");
  const std::vector<RestoreAnswer> answers = restore(gci_);
  bool reported = false;
  for (const RestoreAnswer& a : answers) {
    if (a.error == ErrorCode::kOk) continue;
    EXPECT_EQ(a.error, ErrorCode::kCorruption);
    EXPECT_NE(a.message.find(path + " offset 0"), std::string::npos) << a.message;
    EXPECT_NE(a.message.find("crc"), std::string::npos) << a.message;
    reported = true;
  }
  EXPECT_TRUE(reported);
}

TEST_F(DurabilityTest, TornNewerControlRecordFallsBackToTheOlderOne) {
  start();
  gci_ = 1;
  for (int i = 0; i < 40; ++i) write_row(gci_, i, value_of(i));
  ASSERT_TRUE(save(gci_));
  checkpoint();  // control sequence 1: slot 1
  // A later checkpoint torn while writing its control record (slot 0, sequence 2).
  for (uint16_t part = 0; part < kLogParts; ++part) {
    corrupt(lcp_control_path(part, 0), 0, std::string(40, '\x5a'));
  }
  ++gci_;
  for (int i = 0; i < 40; i += 2) delete_row(gci_, i);
  ASSERT_TRUE(save(gci_));
  crash_and_restart();
  restore_ok(gci_);
  EXPECT_EQ(contents(), expected(gci_));
}

TEST_F(DurabilityTest, BothControlRecordsCorruptIsAnError) {
  start();
  gci_ = 1;
  write_row(gci_, 1, value_of(1));
  ASSERT_TRUE(save(gci_));
  checkpoint();
  crash_and_restart();
  for (uint16_t part = 0; part < kLogParts; ++part) {
    corrupt(lcp_control_path(part, 1), 8, "junk");
  }
  for (const RestoreAnswer& a : restore(gci_)) {
    EXPECT_EQ(a.error, ErrorCode::kCorruption);
    EXPECT_NE(a.message.find("control.1"), std::string::npos) << a.message;
  }
}

// ---- Partial checkpoints ----

TEST_F(DurabilityTest, PartialCheckpointsChainAndRestoreExactly) {
  LocalQueryOptions options;
  options.lcp_parts = 4;
  options.lcp_slice_rows = 8;
  start(options);
  gci_ = 1;
  for (int i = 0; i < 400; ++i) write_row(gci_, i, value_of(i, 60));
  ASSERT_TRUE(save(gci_));
  ++gci_;
  for (int i = 0; i < 8; ++i) write_row(gci_, 5000 + i, value_of(i));
  ASSERT_TRUE(save(gci_));
  EXPECT_EQ(checkpoint(), 408u);  // the first one is full
  uint64_t partial_rows = 0;
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE(round);
    ++gci_;
    for (int i = 0; i < 8; ++i) {
      const int32_t id = (round * 37 + i * 11) % 400;
      if (i % 2 == 0) {
        delete_row(gci_, id);
      } else {
        write_row(gci_, id, value_of(round * 1000 + i));
      }
    }
    // Keys deleted in the round before come back (a new row, maybe another row ref).
    for (int i = 0; i < 8; i += 4) {
      write_row(gci_, ((round - 1) * 37 + i * 11 + 400) % 400, value_of(round * 1000 + 500 + i));
    }
    write_row(gci_, 1000 + round, value_of(round));
    ASSERT_TRUE(save(gci_));
    ++gci_;
    for (int i = 0; i < 8; ++i) write_row(gci_, 2000 + round * 10 + i, value_of(round));
    ASSERT_TRUE(save(gci_));
    const uint64_t rows = checkpoint();
    partial_rows += rows;
    // One part of four whole plus the changed rows: far fewer than every row.
    EXPECT_LT(rows, 180u);
    for (uint16_t part = 0; part < kLogParts; ++part) {
      EXPECT_GT(check_chains_on_disk(part, options.lcp_parts), 0u);
    }
  }
  EXPECT_GT(partial_rows, 0u);
  const uint32_t g = complete_gci_;
  crash_and_restart();
  restore_ok(g);
  EXPECT_EQ(contents(), expected(g));
  // The restore's own checkpoint is full and the old chains are gone.
  for (uint16_t part = 0; part < kLogParts; ++part) {
    EXPECT_EQ(check_chains_on_disk(part, options.lcp_parts), 0u);
  }
  // And the next life builds chains again and restores from them.
  for (int round = 10; round < 14; ++round) {
    ++gci_;
    for (int i = 0; i < 6; ++i) delete_row(gci_, (round * 29 + i * 13) % 400);
    write_row(gci_, 3000 + round, value_of(round));
    ASSERT_TRUE(save(gci_));
    ++gci_;
    write_row(gci_, 4000 + round, value_of(round));
    ASSERT_TRUE(save(gci_));
    checkpoint();
  }
  const uint32_t g2 = complete_gci_;
  crash_and_restart();
  restore_ok(g2);
  EXPECT_EQ(contents(), expected(g2));
}

// A part whose checkpoint was written before partial checkpoints existed (the
// full-only control record) restores from it, and goes on with partial checkpoints.
TEST_F(DurabilityTest, RestoresFromTheFullOnlyControlRecordOfEarlierVersions) {
  LocalQueryOptions options;
  options.lcp_parts = 3;
  start(options);
  gci_ = 1;
  for (int i = 0; i < 120; ++i) write_row(gci_, i, value_of(i));
  ASSERT_TRUE(save(gci_));
  checkpoint();
  ++gci_;
  for (int i = 0; i < 120; i += 3) delete_row(gci_, i);
  ASSERT_TRUE(save(gci_));
  crash_and_restart();
  // Rewrite each part's record in the old layout (its data files are full files).
  for (uint16_t part = 0; part < kLogParts; ++part) {
    const std::optional<LcpControl> control = control_on_disk(part);
    ASSERT_TRUE(control.has_value());
    Bytes old;
    for (uint32_t v :
         {kLcpControlMagicFullOnly, control->sequence, control->lcp_id, control->start_gci,
          control->max_gci, static_cast<uint32_t>(control->fragments.size())}) {
      protocol::put_u32(&old, v);
    }
    for (const LcpFragmentInfo& info : control->fragments) {
      ASSERT_EQ(info.files.size(), 1u);
      ASSERT_TRUE(info.files[0].full());
      protocol::put_u32(&old, info.table_id);
      protocol::put_u32(&old, info.table_version);
      protocol::put_u32(&old, info.fragment_id);
      protocol::put_u64(&old, info.files[0].rows);
      protocol::put_u64(&old, info.files[0].data_bytes);
    }
    protocol::put_u32(&old, crc32c_mask(crc32c(old.data(), old.size())));
    replace_file(lcp_control_path(part, control->sequence), std::string(old.begin(), old.end()));
  }
  restore_ok(gci_);
  EXPECT_EQ(contents(), expected(gci_));
  ++gci_;
  for (int i = 1; i < 120; i += 7) write_row(gci_, i, value_of(i + 1000));
  ASSERT_TRUE(save(gci_));
  checkpoint();
  const uint32_t g = complete_gci_;
  crash_and_restart();
  restore_ok(g);
  EXPECT_EQ(contents(), expected(g));
}

// A partial checkpoint whose only record of deletes older than its start GCI is its
// delete records: they remove the rows at restore.
TEST_F(DurabilityTest, DeleteRecordsOfAPartialCheckpointAreWhatRemovesRows) {
  LocalQueryOptions options;
  options.lcp_parts = 4;
  start(options);
  gci_ = 1;
  for (int i = 0; i < 200; ++i) write_row(gci_, i, value_of(i));
  ASSERT_TRUE(save(gci_));
  checkpoint();
  ++gci_;
  for (int i = 0; i < 200; i += 5) delete_row(gci_, i);
  write_row(gci_, 3, value_of(33));
  ASSERT_TRUE(save(gci_));
  // Every part commits in a later GCI, so the checkpoint starts past the deletes.
  ++gci_;
  for (int i = 500; i < 520; ++i) write_row(gci_, i, value_of(i));
  ASSERT_TRUE(save(gci_));
  checkpoint();
  uint64_t deleted_keys = 0;
  for (uint16_t part = 0; part < kLogParts; ++part) {
    const std::optional<LcpControl> control = control_on_disk(part);
    ASSERT_TRUE(control.has_value());
    for (const LcpFragmentInfo& info : control->fragments) {
      ASSERT_EQ(info.files.size(), 2u);
      EXPECT_TRUE(info.files[0].full());
      EXPECT_FALSE(info.files[1].full());
      deleted_keys += info.files[1].deleted_keys;
    }
  }
  EXPECT_EQ(deleted_keys, 40u);
  const uint32_t g = complete_gci_;
  crash_and_restart();
  restore_ok(g);
  EXPECT_EQ(contents(), expected(g));
}

TEST_F(DurabilityTest, DroppingTheDeleteRecordsMakesTheRestoreWrong) {
  LocalQueryOptions options;
  options.lcp_parts = 4;
  start(options);
  gci_ = 1;
  for (int i = 0; i < 200; ++i) write_row(gci_, i, value_of(i));
  ASSERT_TRUE(save(gci_));
  checkpoint();
  ++gci_;
  for (int i = 0; i < 200; i += 5) delete_row(gci_, i);
  ASSERT_TRUE(save(gci_));
  ++gci_;
  for (int i = 500; i < 520; ++i) write_row(gci_, i, value_of(i));
  ASSERT_TRUE(save(gci_));
  checkpoint();
  const uint32_t g = complete_gci_;
  crash_and_restart();
  // A writer that forgot its delete records (the negative control of the test above):
  // strip them from every partial file and rewrite the control record to match (its
  // crc is right: only the content is wrong).
  for (uint16_t part = 0; part < kLogParts; ++part) {
    std::optional<LcpControl> control = control_on_disk(part);
    ASSERT_TRUE(control.has_value());
    for (LcpFragmentInfo& info : control->fragments) {
      LcpDataFile& file = info.files.back();
      ASSERT_FALSE(file.full());
      const std::string path = lcp_data_path(part, file.lcp_id, info.table_id, info.fragment_id);
      replace_file(path, disk_->content(path).substr(file.delete_bytes));
      file.data_bytes -= file.delete_bytes;
      file.delete_bytes = 0;
      file.deleted_keys = 0;
    }
    const Bytes bytes = encode_lcp_control(*control);
    replace_file(lcp_control_path(part, control->sequence),
                 std::string(bytes.begin(), bytes.end()));
  }
  for (const RestoreAnswer& a : restore(g)) EXPECT_EQ(a.error, ErrorCode::kOk) << a.message;
  truncate_history(g);
  const Rows restored = contents();
  const Rows model = expected(g);
  EXPECT_NE(restored, model);
  // Exactly the deleted rows came back.
  EXPECT_EQ(restored.size(), model.size() + 40);
  for (int i = 0; i < 200; i += 5) EXPECT_TRUE(restored.contains(i)) << i;
}

// A partial checkpoint with commits (deletes, re-inserts) during its scan, crashed at
// every point of it in turn: each restore gives exactly the rows of the saved GCIs.
TEST_F(DurabilityTest, CrashAtEveryPointOfAPartialCheckpoint) {
  bool completed = false;
  int crashes = 0;
  for (uint64_t at_us = 0; at_us < 400'000 && !completed; at_us += 250) {
    SCOPED_TRACE(at_us);
    history_.clear();
    complete_gci_ = 0;
    LocalQueryOptions options;
    options.lcp_parts = 3;
    options.lcp_slice_rows = 4;
    start(options, 5, 11);
    gci_ = 1;
    for (int i = 0; i < 120; ++i) write_row(gci_, i, value_of(i, 40));
    ASSERT_TRUE(save(gci_));
    checkpoint();
    for (int round = 0; round < 3; ++round) {
      ++gci_;
      for (int i = 0; i < 6; ++i) delete_row(gci_, (round * 17 + i * 19) % 120);
      write_row(gci_, 200 + round, value_of(round));
      ASSERT_TRUE(save(gci_));
      ++gci_;
      write_row(gci_, (round * 17) % 120, value_of(700 + round));  // a key reused
      ASSERT_TRUE(save(gci_));
      checkpoint();
    }
    // The checkpoint to crash in, with commits landing between its slices.
    for (uint16_t part = 0; part < kLogParts; ++part) {
      send_to(lqh_address(part), Signal(protocol::kLcpStartReq));
    }
    const uint64_t crash_at = sim_->now_ns() + at_us * kNanosPerMicro;
    for (int round = 0; sim_->now_ns() < crash_at; ++round) {
      ++gci_;
      delete_row(gci_, (round * 7) % 120);
      write_row(gci_, (round * 7 + 60) % 120, value_of(900 + round));
      if (round % 2 == 0) {
        ASSERT_TRUE(save(gci_));
      }
    }
    // Checkpoints 1 (full) to 4 ran before: 5 is the one crashed in.
    completed = lqh_[0]->last_lcp_id() == 5 && lqh_[1]->last_lcp_id() == 5;
    crash_and_restart();
    ++crashes;
    const uint32_t g = complete_gci_;
    restore_ok(g);
    ASSERT_EQ(contents(), expected(g));
  }
  EXPECT_TRUE(completed) << "the crashes never got past the checkpoint";
  EXPECT_GT(crashes, 20);
}

// Random transactions, saves and full checkpoints; crashes at random moments; every
// restore must give exactly the model's rows (run_randomized).
TEST_F(DurabilityTest, RandomizedCrashRestoreMatchesTheModel) {
  uint64_t torn_writes = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    SCOPED_TRACE(seed);
    torn_writes += run_randomized(seed, false);
    if (HasFailure()) return;
  }
  EXPECT_GT(torn_writes, 0u) << "no crash tore a write: the seeds cover too little";
}

// The same with partial checkpoints (2 to 5 parts) taken three times as often, so
// chains of partial files with deleted keys build up between crashes.
TEST_F(DurabilityTest, RandomizedCrashRestoreWithPartialCheckpointsMatchesTheModel) {
  uint64_t torn_writes = 0;
  for (uint64_t seed = 1001; seed <= 1150; ++seed) {
    SCOPED_TRACE(seed);
    torn_writes += run_randomized(seed, true);
    if (HasFailure()) return;
  }
  EXPECT_GT(torn_writes, 0u) << "no crash tore a write: the seeds cover too little";
}

// Measurement, not a check (run with --gtest_also_run_disabled_tests): N rows
// (DUO_LCP_BENCH_ROWS, default 1,000,000), then rounds of 1% of them updated followed
// by a checkpoint, full (DUO_LCP_BENCH_PARTS=0) or partial with that many parts;
// prints the bytes and rows each checkpoint wrote and the chains' total size. With
// DUO_LCP_BENCH_RESTORE=1 it then crashes and restores (time the run with and without
// it: the difference is the restore).
TEST_F(DurabilityTest, DISABLED_MeasureCheckpointBytesAndRestore) {
  auto env = [](const char* name, uint64_t fallback) {
    const char* text = std::getenv(name);
    return text == nullptr ? fallback : std::strtoull(text, nullptr, 10);
  };
  const auto rows = static_cast<int32_t>(env("DUO_LCP_BENCH_ROWS", 1000000));
  const auto parts = static_cast<uint32_t>(env("DUO_LCP_BENCH_PARTS", 6));
  const bool restore_too = env("DUO_LCP_BENCH_RESTORE", 0) != 0;
  memory_pages_ = 24576;  // 768 MiB
  LocalQueryOptions options;
  options.lcp_parts = parts;
  options.lcp_redo_bytes = 0;  // only the checkpoints asked for
  options.redo_buffer_bytes = 256u << 20;
  options.transactions_max = 4;
  start(options);
  std::mt19937_64 random(99);
  gci_ = 1;
  constexpr int32_t kBatch = 2000;
  for (int32_t first = 0; first < rows; first += kBatch) {
    std::vector<std::pair<int32_t, Value>> batch;
    for (int32_t id = first; id < std::min(rows, first + kBatch); ++id) {
      batch.emplace_back(id, value_of(id, 20));
    }
    ASSERT_EQ(bulk_write(gci_, batch), batch.size());
    if (first % 100000 == 0) {
      ASSERT_TRUE(save(gci_));
      ++gci_;
    }
  }
  ASSERT_TRUE(save(gci_));
  checkpoint(1000, 100 * kMs);
  const int rounds = static_cast<int>(std::max<uint32_t>(parts, 1)) * 2;
  for (int round = 0; round < rounds; ++round) {
    ++gci_;
    std::vector<std::pair<int32_t, Value>> batch;
    for (int32_t i = 0; i < rows / 100; ++i) {
      batch.emplace_back(static_cast<int32_t>(random() % static_cast<uint64_t>(rows)),
                         value_of(round * 1000000 + i, 20));
      if (batch.size() == static_cast<size_t>(kBatch) || i + 1 == rows / 100) {
        std::sort(batch.begin(), batch.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        batch.erase(std::unique(batch.begin(), batch.end(),
                                [](const auto& a, const auto& b) { return a.first == b.first; }),
                    batch.end());
        ASSERT_EQ(bulk_write(gci_, batch), batch.size());
        batch.clear();
      }
    }
    ASSERT_TRUE(save(gci_));
    ++gci_;
    ASSERT_TRUE(save(gci_));
    const uint64_t written_rows = checkpoint(1000, 100 * kMs);
    uint64_t written_bytes = 0, chain_bytes = 0, files = 0;
    for (uint16_t part = 0; part < kLogParts; ++part) {
      const std::optional<LcpControl> control = control_on_disk(part);
      ASSERT_TRUE(control.has_value());
      for (const LcpFragmentInfo& info : control->fragments) {
        for (const LcpDataFile& file : info.files) {
          chain_bytes += file.data_bytes;
          ++files;
          if (file.lcp_id == control->lcp_id) written_bytes += file.data_bytes;
        }
      }
    }
    std::printf(
        "lcp-bench rows=%d parts=%u round=%d lcp_rows=%llu lcp_bytes=%llu "
        "chain_files=%llu chain_bytes=%llu\n",
        rows, parts, round, static_cast<unsigned long long>(written_rows),
        static_cast<unsigned long long>(written_bytes), static_cast<unsigned long long>(files),
        static_cast<unsigned long long>(chain_bytes));
  }
  if (!restore_too) return;
  const uint32_t g = complete_gci_;
  crash_and_restart();
  uint64_t restored = 0;
  for (const RestoreAnswer& a : restore(g)) {
    ASSERT_EQ(a.error, ErrorCode::kOk) << a.message;
    restored += a.rows;
  }
  EXPECT_EQ(restored, static_cast<uint64_t>(rows));
  std::printf("lcp-bench restored %llu rows\n", static_cast<unsigned long long>(restored));
}

TEST_F(DurabilityTest, RunsAreDeterministic) {
  auto run = [&] {
    history_.clear();
    complete_gci_ = 0;
    LocalQueryOptions options;
    options.lcp_slice_rows = 7;
    start(options, 42, 43);
    for (gci_ = 1; gci_ <= 4; ++gci_) {
      for (int i = 0; i < 10; ++i)
        write_row(gci_, static_cast<int32_t>(gci_ * 7 + i) % 30, value_of(i));
      EXPECT_TRUE(save(gci_));
    }
    checkpoint();
    crash_and_restart();
    restore_ok(complete_gci_);
    return sim_->trace_hash();
  };
  const uint64_t first = run();
  EXPECT_EQ(run(), first);
}

}  // namespace
}  // namespace duo::local_query
