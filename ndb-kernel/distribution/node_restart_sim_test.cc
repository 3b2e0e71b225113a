// Node restart in the simulator, end to end: bank transfers run through the started
// data nodes' coordinators while one data node crashes (disk losing its unsynced
// writes), is declared dead by the membership layer, starts again and catches up by
// copying its fragments from the live replica — with the transfers going on all along.
// Each transfer (testing/bank_transfers.h) moves 7 between two accounts and inserts a
// log row naming it, in one transaction, so the rows say exactly which transfers
// committed.
//
// Checked: the restarted node reaches "started" and the master records the restart
// complete; transfers keep committing during it; it checkpoints and stops being
// recorded dead; after quiesce the replicas of every node group are identical row for
// row (the restarted one included); every acknowledged transfer is present and no
// refused one, balances match, the total is constant. Then the *other* nodes of the
// restarted node's group crash: the restarted node alone must hold every acknowledged
// transfer (so the copy was complete and every later write reached it). Last, every
// node still up crashes (unsynced disk writes lost) and restarts: the restarted node
// recovers from its own disk every transfer acknowledged at or below the recovered
// GCI. Scenarios: one crash and restart; a crash of the starting node in the middle of
// its restart (early, or once its copy runs), then a second restart; two nodes
// restarting one after the other (the second while the first is not yet recoverable);
// a node frozen (SIGSTOP) until declared dead, then resumed (it takes in what was held
// for it, learns its fate and exits) and restarted.
// 2 data nodes and 4 (2 node groups).
//
// Each restart is, as the seed chooses, a normal node restart (the node recovers its
// own disk to its sysfile's GCI, then the live replica sends the rows changed since
// whole and the others as keys: checked that unchanged rows went as keys) or an initial
// one (its disk wiped first, as --initial does: every row copied, none as a key), or a
// normal one whose redo cannot be read (the local recovery falls back to copying every
// row). A node that died once its restart had started discarding its files must copy
// everything at its next restart.
//
// DUO_NODE_RESTART_SEEDS=N runs N seeds per scenario (CI: 20), from
// DUO_NODE_RESTART_FIRST_SEED (1); a failing seed prints the command that replays it.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <set>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/distribution/distribution_block.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/membership/membership_block.h"
#include "ndb-kernel/membership/sim_arbitrator.h"
#include "ndb-kernel/sim/sim_file_system.h"
#include "ndb-kernel/testing/bank_accounts.h"
#include "ndb-kernel/testing/bank_transfers.h"
#include "ndb-kernel/testing/sim_cluster.h"

namespace duo::testing {
namespace {

using distribution::DistributionBlock;
using distribution::NodeStartState;
using protocol::OpBody;

constexpr int32_t kFillerBase = 100'000;  // filler rows, so copies span many batches
constexpr int32_t kFillerRows = 600;

enum class Scenario { kRestart, kCrashDuringCopy, kTwoRestarts, kFrozenPastItsDeath };

class NodeRestartTest : public ::testing::Test {
 protected:
  NodeRestartTest(uint32_t node_groups, uint64_t seed)
      : seed_(seed),
        cluster_(SimClusterOptions{.node_groups = node_groups,
                                   .seed = seed,
                                   .lock_wait_timeout_ms = 300,
                                   .link_jitter_ns = 500'000,
                                   .gcp_interval_ms = 30,
                                   .membership = true}),
        random_(seed * 104729 + node_groups),
        bank_(&cluster_, &random_, {.accounts = 40, .in_flight = 6}) {}

  void TearDown() override {
    if (HasFailure()) {
      const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
      std::string name = info->name();
      name = name.substr(0, name.find('/'));
      std::cerr << "replay: DUO_NODE_RESTART_FIRST_SEED=" << seed_
                << " DUO_NODE_RESTART_SEEDS=1 ./duo_node_restart_sim_test --gtest_filter='*"
                << info->test_suite_name() << "." << name << "*'\n";
    }
  }

  DistributionBlock* dih(uint16_t node) {
    return cluster_.block<DistributionBlock>(node, protocol::kDistributionBlock);
  }
  bool started(uint16_t node) {
    DistributionBlock* d = dih(node);
    return d != nullptr && d->start_state() == NodeStartState::kStarted;
  }
  std::vector<uint16_t> group_of(uint16_t node) const {
    for (const auto& group : cluster_.topology().node_groups) {
      if (std::find(group.begin(), group.end(), node) != group.end()) return group;
    }
    return {};
  }

  // Accounts, then filler rows (batches of 50 per transaction).
  void create_and_load() {
    std::vector<OpBody> filler;
    for (int32_t i = 0; i < kFillerRows; ++i) filler.push_back(account_row(kFillerBase + i, i));
    bank_.create_and_load(filler);
  }
  bool pump(const std::function<bool()>& done, uint64_t limit_ms, bool more = true) {
    return bank_.pump(done, limit_ms, more);
  }

  void crash(uint16_t node) {
    ASSERT_TRUE(cluster_.sim().crash_node(node).ok());
    cluster_.disk(node).crash();
    bank_.give_up(node);
  }
  // SIGSTOP until the others declared it dead, then SIGCONT: it takes in everything
  // held for it at once (late answers to its own GCP round among them) until it learns
  // it was declared dead and stops; its process exits keeping what it wrote.
  void freeze_past_its_death(uint16_t node) {
    ASSERT_TRUE(cluster_.sim().pause_node(node).ok());
    bank_.give_up(node);
    ASSERT_TRUE(pump([&] { return bank_.declared_dead_everywhere(node); }, 20'000))
        << "frozen node " << node << " was not declared dead";
    ASSERT_TRUE(cluster_.sim().resume_node(node).ok());
    ASSERT_TRUE(pump([&] { return cluster_.membership(node)->shutdown_requested(); }, 20'000))
        << "node " << node << " resumed but never learned it was declared dead";
    ASSERT_TRUE(cluster_.sim().crash_node(node).ok());
  }
  // Sums over the up nodes' local_query instances.
  uint64_t copy_sent(bool keys) {
    uint64_t total = 0;
    for (uint16_t n : cluster_.data_nodes()) {
      if (!bank_.up(n)) continue;
      for (uint16_t part = 0; part < cluster_.topology().log_parts; ++part) {
        auto* lqh =
            cluster_.block<local_query::LocalQueryBlock>(n, protocol::kLocalQueryBlock, part);
        if (lqh != nullptr) total += keys ? lqh->copy_key_rows_sent() : lqh->copy_full_rows_sent();
      }
    }
    return total;
  }
  bool copy_running_anywhere() {
    for (uint16_t n : cluster_.data_nodes()) {
      if (!bank_.up(n)) continue;
      for (uint16_t part = 0; part < cluster_.topology().log_parts; ++part) {
        auto* lqh =
            cluster_.block<local_query::LocalQueryBlock>(n, protocol::kLocalQueryBlock, part);
        if (lqh != nullptr && lqh->copy_running()) return true;
      }
    }
    return false;
  }
  // As --initial: the node's file system is emptied before it starts.
  void wipe_disk(uint16_t node) {
    sim::SimDisk& disk = cluster_.disk(node);
    std::vector<std::string> names;
    uint32_t os_errno = 0;
    ASSERT_TRUE(disk.list_directory("", &names, &os_errno).ok());
    for (std::string name : names) {
      if (!name.empty() && name.back() == '/') name.pop_back();
      ASSERT_TRUE(disk.remove_path(name, true, &os_errno).ok());
    }
  }
  // Restarts `node`, wiping its disk first (an initial node restart) one time in three;
  // otherwise, one time in four, with its redo files of log part 0 unreadable: the
  // local recovery fails and falls back to copying every row.
  void restart(uint16_t node) {
    const bool initial = random_.uniform(3) == 0;
    const bool unreadable = !initial && random_.uniform(4) == 0;
    initial_[node] = initial || unreadable;
    cluster_.disk(node).clear_faults();
    if (initial) {
      wipe_disk(node);
      if (HasFatalFailure()) return;
    }
    if (unreadable) {
      std::vector<std::string> names;
      uint32_t os_errno = 0;
      ASSERT_TRUE(cluster_.disk(node).list_directory("redo/part0", &names, &os_errno).ok());
      for (const std::string& name : names) {
        cluster_.disk(node).fail_path("redo/part0/" + name, /*reads=*/true, /*writes=*/false);
      }
      // Nothing to read: nothing to fail. Then it is an ordinary local recovery.
      if (names.empty()) initial_[node] = false;
    }
    keys_sent_before_[node] = copy_sent(true);
    ASSERT_TRUE(cluster_.sim().restart_node(node).ok());
    // As duo_mgmd does when a data node connects as starting: the arbitrator forgets
    // that it granted a side without it.
    cluster_.arbitrator()->rule().node_rejoined(node);
    bank_.mark_up(node);
  }
  uint64_t restarts_completed() {
    uint64_t total = 0;
    for (uint16_t n : cluster_.data_nodes()) {
      if (bank_.up(n) && dih(n) != nullptr) total += dih(n)->node_restarts_completed();
    }
    return total;
  }

  // The table as the up nodes hold it; every up replica of a group must agree, and so
  // must the replicas of its unique index, which holds exactly one entry per row.
  std::map<int32_t, int64_t> contents() {
    std::map<int32_t, int64_t> rows = bank_.contents();
    const std::map<int32_t, int64_t> index = bank_.agreed([&](uint16_t node) {
      return replica_tag_index(cluster_, node, bank_.table().schema.table_id);
    });
    std::map<int32_t, int64_t> expected;
    for (const auto& [id, balance] : rows) expected[id] = id;
    EXPECT_EQ(index, expected) << "the tag_uk index does not match the rows";
    return rows;
  }

  // The transfers' checks (bank_transfers.h), and the filler rows are all there.
  void check_contents(const std::map<int32_t, int64_t>& rows,
                      uint32_t acknowledged_up_to = UINT32_MAX) {
    bank_.check_contents(rows, acknowledged_up_to);
    if (HasFatalFailure()) return;
    for (int32_t i = 0; i < kFillerRows; ++i) {
      auto it = rows.find(kFillerBase + i);
      ASSERT_NE(it, rows.end()) << "filler row " << i << " is lost";
      EXPECT_EQ(it->second, i);
    }
  }

  void run(Scenario scenario);

  const uint64_t seed_;
  SimCluster cluster_;
  SeededRandom random_;
  BankTransfers bank_;
  std::map<uint16_t, bool> initial_;               // its last restart was initial
  std::map<uint16_t, uint64_t> keys_sent_before_;  // copy_sent(true) before its restart
  bool files_discarded_ = false;  // crashed once the copy ran (its files were gone)
};

void NodeRestartTest::run(Scenario scenario) {
  create_and_load();
  if (HasFatalFailure()) return;
  const std::vector<uint16_t> nodes = cluster_.data_nodes();
  const uint16_t victim = nodes[random_.uniform(nodes.size())];

  // Load for a while, then the crash at a random moment — at least a few GCPs (30 ms)
  // after the filler rows were loaded, so that a normal restart recovers them locally
  // (it goes at most to two GCIs before the one its node was declared dead in).
  const uint64_t crash_at = cluster_.sim().now_ns() + (100 + random_.uniform(200)) * 1'000'000;
  ASSERT_TRUE(pump([&] { return cluster_.sim().now_ns() >= crash_at; }, 10'000));
  if (scenario == Scenario::kFrozenPastItsDeath) {
    freeze_past_its_death(victim);
    if (HasFatalFailure()) return;
  } else {
    crash(victim);
  }
  ASSERT_TRUE(pump([&] { return bank_.declared_dead_everywhere(victim); }, 20'000))
      << "node " << victim << " was not declared dead";
  const size_t committed_before_restart = bank_.committed().size();

  restart(victim);
  if (scenario == Scenario::kCrashDuringCopy) {
    // The starting node dies in the middle of its copy, then starts again.
    // Early (restoring, or discarding its files), or once rows are being copied to it
    // (its files are gone: its next restart must copy everything).
    const bool late = random_.uniform(2) == 0;
    ASSERT_TRUE(pump(
        [&] {
          DistributionBlock* d = dih(victim);
          if (d == nullptr || d->start_state() != NodeStartState::kCopying) return false;
          return late ? copy_running_anywhere() && random_.uniform(4) == 0
                      : random_.uniform(8) == 0;
        },
        30'000))
        << "node " << victim << " never reached the copy";
    crash(victim);
    files_discarded_ = late;
    ASSERT_TRUE(pump([&] { return bank_.declared_dead_everywhere(victim); }, 20'000))
        << "node " << victim << " was not declared dead again";
    restart(victim);
  }
  // What ALL STATUS shows as startinfo while it copies (sampled at every answer).
  bool seen_local_progress = false, seen_full_progress = false;
  ASSERT_TRUE(pump(
      [&] {
        DistributionBlock* d = dih(victim);
        if (d != nullptr && d->start_state() == NodeStartState::kCopying) {
          const std::string info = d->start_info();
          if (info.find("% (") != std::string::npos) {
            seen_local_progress |= info.starts_with("node restart: recovered locally to GCI");
            seen_full_progress |= info.starts_with("node restart: copying rows: ");
          }
        }
        return started(victim) && restarts_completed() >= 1;
      },
      60'000))
      << "node " << victim << " did not finish its node restart (state "
      << (dih(victim) ? distribution::node_start_state_name(dih(victim)->start_state()) : "down")
      << ")";
  // How it caught up: an initial restart copies every row; a normal one whose disk is a
  // full replica restores it and gets only the rows changed since and the keys deleted.
  // The files it discarded are gone: no fault injection needed any more.
  cluster_.disk(victim).clear_faults();
  const bool must_copy_all =
      initial_[victim] || (scenario == Scenario::kCrashDuringCopy && files_discarded_);
  EXPECT_TRUE(seen_local_progress || seen_full_progress) << "no copy progress was shown";
  if (must_copy_all) {
    EXPECT_FALSE(seen_local_progress);
    EXPECT_EQ(dih(victim)->local_recovery_gci(), 0u);
    EXPECT_EQ(copy_sent(true), keys_sent_before_[victim]) << "keys sent to a node with no rows";
  } else if (scenario != Scenario::kCrashDuringCopy &&
             scenario != Scenario::kFrozenPastItsDeath) {
    // (A node frozen past its death recovers locally only to two GCIs before the one it
    // was declared dead in, whatever its sysfile says: maybe to nothing.)
    EXPECT_GT(dih(victim)->local_recovery_gci(), 0u)
        << "node " << victim << " did not recover locally";
    EXPECT_TRUE(seen_local_progress);
    // The live replicas never restarted, so their delete logs reach back to its GCI:
    // unchanged rows (the filler rows among them) are not sent, not even as keys.
    EXPECT_EQ(copy_sent(true), keys_sent_before_[victim])
        << "unchanged rows were sent as keys although the delete log reaches back";
  }
  if (scenario == Scenario::kTwoRestarts) {
    // Right after, before the first can recover by itself: another node (its peer with
    // 2 data nodes, a node of the other group with 4) crashes and restarts too, copying
    // from (or beside) a node that is still recorded dead in the sysfiles.
    uint16_t second = 0;
    const std::vector<uint16_t> group = group_of(victim);
    for (uint16_t n : nodes) {
      const bool same_group = std::find(group.begin(), group.end(), n) != group.end();
      if (n != victim && (nodes.size() == 2 || !same_group)) second = n;
    }
    crash(second);
    ASSERT_TRUE(pump([&] { return bank_.declared_dead_everywhere(second); }, 20'000))
        << "node " << second << " was not declared dead";
    restart(second);
    ASSERT_TRUE(
        pump([&] { return started(second) && dih(second)->started_by_node_restart(); }, 60'000))
        << "node " << second << " did not finish its node restart";
    cluster_.disk(second).clear_faults();
  }
  // It checkpoints, and from the next complete GCI on it is no longer recorded dead.
  ASSERT_TRUE(pump(
      [&] {
        for (uint16_t n : cluster_.data_nodes()) {
          if (bank_.up(n) && dih(n) != nullptr &&
              (!dih(n)->unrecovered_nodes().empty() || dih(n)->dead_nodes().count(victim))) {
            return false;
          }
        }
        return true;
      },
      30'000))
      << "node " << victim << " never became recoverable";
  // Transfers go on through every node, the restarted one included.
  const size_t committed_at_start = bank_.committed().size();
  ASSERT_TRUE(pump([&] { return bank_.committed().size() >= committed_at_start + 20; }, 20'000))
      << "transfers stopped committing after the node restart";
  EXPECT_GT(committed_at_start, committed_before_restart)
      << "no transfer committed during the node restart";
  bank_.drain();
  if (HasFatalFailure()) return;
  check_contents(contents());
  if (HasFatalFailure()) return;

  // The other replicas of the restarted node's group crash: it must hold everything.
  for (uint16_t peer : group_of(victim)) {
    if (peer == victim) continue;
    crash(peer);
    ASSERT_TRUE(pump([&] { return bank_.declared_dead_everywhere(peer); }, 20'000, false))
        << "node " << peer << " was not declared dead";
  }
  bank_.drain();
  if (HasFatalFailure()) return;
  check_contents(contents());
  // And it serves alone: transfers commit.
  const size_t committed_alone = bank_.committed().size();
  ASSERT_TRUE(pump([&] { return bank_.committed().size() >= committed_alone + 5; }, 20'000))
      << "transfers do not commit on the restarted node alone";
  bank_.drain();
  if (HasFatalFailure()) return;
  check_contents(contents());
  if (HasFatalFailure()) return;

  // Everything up crashes (unsynced disk writes lost) and restarts from disk: the
  // restarted node recovers by itself, from its own checkpoint and redo, every
  // transfer acknowledged at or below the recovered GCI.
  std::vector<uint16_t> up;
  for (uint16_t n : cluster_.data_nodes()) {
    if (bank_.up(n)) up.push_back(n);
  }
  for (uint16_t n : up) crash(n);
  for (uint16_t n : up) {
    ASSERT_TRUE(cluster_.sim().restart_node(n).ok());
    bank_.mark_up(n);
  }
  ASSERT_TRUE(cluster_.run_until(
      [&] {
        for (uint16_t n : up) {
          if (!started(n)) return false;
        }
        return true;
      },
      30'000))
      << "the system restart did not finish";
  const uint32_t restart_gci = dih(victim)->restart_gci();
  check_contents(contents(), restart_gci);
}

class TwoNodeRestartTest : public NodeRestartTest, public ::testing::WithParamInterface<uint64_t> {
 protected:
  TwoNodeRestartTest() : NodeRestartTest(1, GetParam()) {}
};
class FourNodeRestartTest : public NodeRestartTest, public ::testing::WithParamInterface<uint64_t> {
 protected:
  FourNodeRestartTest() : NodeRestartTest(2, GetParam()) {}
};

TEST_P(TwoNodeRestartTest, RestartUnderLoad) {
  run(Scenario::kRestart);
}
TEST_P(TwoNodeRestartTest, CrashDuringCopy) {
  run(Scenario::kCrashDuringCopy);
}
TEST_P(FourNodeRestartTest, RestartUnderLoad) {
  run(Scenario::kRestart);
}
TEST_P(FourNodeRestartTest, CrashDuringCopy) {
  run(Scenario::kCrashDuringCopy);
}
TEST_P(TwoNodeRestartTest, TwoRestartsInARow) {
  run(Scenario::kTwoRestarts);
}
TEST_P(TwoNodeRestartTest, FrozenPastItsDeath) {
  run(Scenario::kFrozenPastItsDeath);
}
TEST_P(FourNodeRestartTest, FrozenPastItsDeath) {
  run(Scenario::kFrozenPastItsDeath);
}
TEST_P(FourNodeRestartTest, TwoRestartsInARow) {
  run(Scenario::kTwoRestarts);
}

std::vector<uint64_t> seeds() {
  const uint64_t first = env_u64("DUO_NODE_RESTART_FIRST_SEED", 1);
  const uint64_t count = env_u64("DUO_NODE_RESTART_SEEDS", 20);
  std::vector<uint64_t> out;
  for (uint64_t s = first; s < first + count; ++s) out.push_back(s);
  return out;
}
INSTANTIATE_TEST_SUITE_P(Seeds, TwoNodeRestartTest, ::testing::ValuesIn(seeds()));
INSTANTIATE_TEST_SUITE_P(Seeds, FourNodeRestartTest, ::testing::ValuesIn(seeds()));

}  // namespace
}  // namespace duo::testing
