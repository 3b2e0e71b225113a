// BankTransfers: the bank-transfer workload the simulator's failure tests share
// (coordinator/takeover_sim_test.cc, distribution/node_restart_sim_test.cc,
// membership/dead_node_signals_sim_test.cc). It creates and loads the accounts table
// (bank_accounts.h) through the cluster's client, sends transfers through chosen
// coordinators — each moves kAmount between two accounts and inserts a log row naming
// it, in one transaction, so the rows say exactly which transfers committed — keeps
// them in flight, takes their TC_KEYCONFs, remembers which were acknowledged (with
// their GCIs), refused, or lost with their coordinator, and checks a table's contents
// against that: every acknowledged transfer present, no refused one, balances matching
// the present transfers, the total constant, the up replicas of every group agreeing.
//
// The test keeps its own SeededRandom (the draws here come from it, in the order the
// tests always made them) and tells this which nodes are down (give_up / mark_up).
// Checks report through googletest: tests only.
//
// Thread-safety: none (the simulator is single-threaded; call between its steps).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "ndb-kernel/common/random.h"
#include "ndb-kernel/protocol/messages.h"
#include "ndb-kernel/testing/sim_cluster.h"

namespace duo::testing {

struct BankTransfersOptions {
  int32_t accounts = 0;
  size_t in_flight = 8;  // pump() keeps this many transfers going
};

class BankTransfers {
 public:
  static constexpr int64_t kInitial = 1000;       // every account's balance after the load
  static constexpr int64_t kAmount = 7;           // what one transfer moves
  static constexpr int32_t kLogBase = 1'000'000;  // log row of transfer t: id kLogBase + t

  BankTransfers(SimCluster* cluster, SeededRandom* random, BankTransfersOptions options);

  const protocol::TableDef& table() const { return table_; }
  int32_t accounts() const { return options_.accounts; }

  // Creates the accounts table through node 1's dictionary and inserts the accounts
  // (kInitial each), then `extra_rows`, through node 1's coordinator in transactions of
  // 50 rows each (fatal failure if one does not commit).
  void create_and_load(const std::vector<protocol::OpBody>& extra_rows = {});
  // One TC_KEYREQ of the client to `tc`'s coordinator on the accounts table.
  void send_op(uint16_t tc, uint64_t api_tx, uint32_t op_index, storage::OpType type,
               const protocol::OpBody& body, uint8_t flags);

  // Starts one transfer between two random accounts through a random one of
  // `coordinators` — or, three times in four, through `favourite` when it is not 0;
  // false (no draw made) when `coordinators` is empty.
  bool start_transfer(const std::vector<uint16_t>& coordinators, uint16_t favourite = 0);
  // What became of a TC_KEYCONF taken by take_answer().
  struct Answer {
    protocol::TcKeyConf conf;
    bool late = false;  // its transfer was no longer in flight (its coordinator given up)
  };
  // Takes the client's first TC_KEYCONF (it must hold one) and records its transfer
  // acknowledged (with its GCI) or refused; nullopt, with a test failure, when it does
  // not decode.
  std::optional<Answer> take_answer();
  // Keeps options.in_flight transfers going through the started up nodes (while
  // `more`) and takes their answers (a refusal must be a lock wait timeout or a
  // temporary error) until `done` holds; false after `limit_ms` of virtual time.
  bool pump(const std::function<bool()>& done, uint64_t limit_ms, bool more = true);
  // Answers every transfer in flight (fatal failure after 60 s of virtual time), then
  // waits until nothing is open on the up nodes (bank_accounts.h quiesced()).
  void drain();

  // Clients stop using `node`: what it coordinated may or may not have committed.
  void give_up(uint16_t node);
  // `node` is up again (restarted): it takes part in transfers and checks.
  void mark_up(uint16_t node) { down_.erase(node); }
  bool up(uint16_t node) const { return down_.count(node) == 0; }
  const std::set<uint16_t>& down() const { return down_; }
  std::vector<uint16_t> up_nodes() const;
  // The up nodes whose distribution block reports started (they take transfers).
  std::vector<uint16_t> started_up_nodes();
  // Every up node's membership agreed the failure of `node` (and its distribution
  // block knows).
  bool declared_dead_everywhere(uint16_t node);

  // What `read` finds on the up nodes; every up replica of a group must agree.
  std::map<int32_t, int64_t> agreed(
      const std::function<std::map<int32_t, int64_t>(uint16_t)>& read);
  // The accounts table as the up nodes hold it (agreed() over replica_rows()).
  std::map<int32_t, int64_t> contents();
  // The log rows present in `rows` decide which transfers happened: none refused,
  // balances exactly what they made them, the total constant; every transfer
  // acknowledged with a GCI up to `acknowledged_up_to` must be present.
  void check_contents(const std::map<int32_t, int64_t>& rows,
                      uint32_t acknowledged_up_to = UINT32_MAX);

  size_t started() const { return transfers_.size(); }
  size_t in_flight() const { return in_flight_.size(); }
  // Acknowledged committed -> GCI.
  const std::map<uint64_t, uint32_t>& committed() const { return committed_; }
  size_t unknown() const { return unknown_.size(); }

 private:
  struct Transfer {
    int32_t from = 0;
    int32_t to = 0;
  };

  SimCluster& cluster_;
  SeededRandom& random_;
  const BankTransfersOptions options_;
  protocol::TableDef table_;
  std::set<uint16_t> down_;
  std::map<uint64_t, Transfer> transfers_;  // every transfer started
  std::map<uint64_t, uint16_t> in_flight_;  // transfer -> its coordinator
  std::map<uint64_t, uint32_t> committed_;  // acknowledged committed -> its GCI
  std::set<uint64_t> refused_;              // acknowledged aborted
  std::set<uint64_t> unknown_;              // coordinator given up before answering
  uint64_t next_transfer_ = 1;
};

}  // namespace duo::testing
