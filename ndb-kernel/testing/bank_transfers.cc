#include "ndb-kernel/testing/bank_transfers.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ndb-kernel/distribution/distribution_block.h"
#include "ndb-kernel/membership/membership_block.h"
#include "ndb-kernel/testing/bank_accounts.h"

namespace duo::testing {

using distribution::DistributionBlock;
using kernel::Signal;
using protocol::OpBody;
using storage::OpType;

BankTransfers::BankTransfers(SimCluster* cluster, SeededRandom* random,
                             BankTransfersOptions options)
    : cluster_(*cluster), random_(*random), options_(options) {}

void BankTransfers::create_and_load(const std::vector<OpBody>& extra_rows) {
  Result<protocol::TableDef> table =
      cluster_.create_table(create_table_signal(1, bank_accounts_schema()));
  ASSERT_TRUE(table.ok()) << table.status().to_string();
  table_ = *table;
  ScriptClient& client = cluster_.client();
  std::vector<OpBody> rows;
  for (int32_t id = 0; id < options_.accounts; ++id) rows.push_back(account_row(id, kInitial));
  rows.insert(rows.end(), extra_rows.begin(), extra_rows.end());
  uint64_t tx = 900'000'000;
  for (size_t first = 0; first < rows.size(); first += 50, ++tx) {
    const size_t last = std::min(rows.size(), first + 50);
    for (size_t i = first; i < last; ++i) {
      send_op(1, tx, static_cast<uint32_t>(i - first), OpType::kInsert, rows[i],
              i + 1 == last ? protocol::kOpExecute | protocol::kOpCommit : 0);
    }
    ASSERT_TRUE(cluster_.run_until([&] { return client.has(protocol::kTcKeyConf); }));
    Signal answer = client.take(protocol::kTcKeyConf);
    Result<protocol::TcKeyConf> loaded = protocol::TcKeyConf::from_signal(answer);
    ASSERT_TRUE(loaded.ok() && (loaded->flags & protocol::kTcCommitted));
  }
}

void BankTransfers::send_op(uint16_t tc, uint64_t api_tx, uint32_t op_index, OpType type,
                            const OpBody& body, uint8_t flags) {
  ASSERT_TRUE(cluster_.client()
                  .send(SimCluster::coordinator(tc),
                        key_signal(api_tx, op_index, table_, type, body, flags))
                  .ok());
}

bool BankTransfers::start_transfer(const std::vector<uint16_t>& coordinators, uint16_t favourite) {
  if (coordinators.empty()) return false;
  const int32_t from = static_cast<int32_t>(random_.uniform(options_.accounts));
  int32_t to = static_cast<int32_t>(random_.uniform(options_.accounts - 1));
  if (to >= from) ++to;
  uint16_t tc = coordinators[random_.uniform(coordinators.size())];
  if (favourite != 0 && random_.uniform(4) != 0) tc = favourite;
  const uint64_t t = next_transfer_++;
  send_op(tc, t, 0, OpType::kInterpretedUpdate, add_to_balance(from, -kAmount), 0);
  send_op(tc, t, 1, OpType::kInterpretedUpdate, add_to_balance(to, kAmount), 0);
  send_op(tc, t, 2, OpType::kInsert, account_row(kLogBase + static_cast<int32_t>(t), kAmount),
          protocol::kOpExecute | protocol::kOpCommit);
  in_flight_[t] = tc;
  transfers_[t] = Transfer{from, to};
  return true;
}

std::optional<BankTransfers::Answer> BankTransfers::take_answer() {
  Signal signal = cluster_.client().take(protocol::kTcKeyConf);
  Result<protocol::TcKeyConf> conf = protocol::TcKeyConf::from_signal(signal);
  if (!conf.ok()) {
    ADD_FAILURE() << "TC_KEYCONF does not decode: " << conf.status().to_string();
    return std::nullopt;
  }
  Answer answer{std::move(*conf)};
  auto it = in_flight_.find(answer.conf.api_tx);
  if (it == in_flight_.end()) {
    answer.late = true;  // answered after its coordinator was given up
    return answer;
  }
  if (answer.conf.flags & protocol::kTcCommitted) {
    committed_[answer.conf.api_tx] = answer.conf.gci;
  } else {
    refused_.insert(answer.conf.api_tx);
  }
  in_flight_.erase(it);
  return answer;
}

bool BankTransfers::pump(const std::function<bool()>& done, uint64_t limit_ms, bool more) {
  ScriptClient& client = cluster_.client();
  const uint64_t deadline = cluster_.sim().now_ns() + limit_ms * 1'000'000;
  while (!done()) {
    if (cluster_.sim().now_ns() > deadline) return false;
    while (more && in_flight_.size() < options_.in_flight && start_transfer(started_up_nodes())) {
    }
    cluster_.run_until([&] { return client.has(protocol::kTcKeyConf) || done(); }, 50);
    while (client.has(protocol::kTcKeyConf)) {
      std::optional<Answer> answer = take_answer();
      if (!answer || answer->late || (answer->conf.flags & protocol::kTcCommitted)) continue;
      EXPECT_TRUE(answer->conf.tx_error == ErrorCode::kLockWaitTimeout ||
                  answer->conf.tx_error == ErrorCode::kTemporary)
          << answer->conf.tx_message;
    }
  }
  return true;
}

void BankTransfers::drain() {
  ASSERT_TRUE(pump([&] { return in_flight_.empty(); }, 60'000, false))
      << in_flight_.size() << " transfer(s) never answered";
  ASSERT_TRUE(cluster_.run_until([&] { return quiesced(cluster_, up_nodes()); }, 30'000))
      << "no quiesce";
}

void BankTransfers::give_up(uint16_t node) {
  down_.insert(node);
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (it->second == node) {
      unknown_.insert(it->first);
      it = in_flight_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<uint16_t> BankTransfers::up_nodes() const {
  std::vector<uint16_t> nodes;
  for (uint16_t n : cluster_.data_nodes()) {
    if (up(n)) nodes.push_back(n);
  }
  return nodes;
}

std::vector<uint16_t> BankTransfers::started_up_nodes() {
  std::vector<uint16_t> nodes;
  for (uint16_t n : up_nodes()) {
    auto* dih = cluster_.block<DistributionBlock>(n, protocol::kDistributionBlock);
    if (dih != nullptr && dih->start_state() == distribution::NodeStartState::kStarted) {
      nodes.push_back(n);
    }
  }
  return nodes;
}

bool BankTransfers::declared_dead_everywhere(uint16_t node) {
  for (uint16_t n : up_nodes()) {
    auto* dih = cluster_.block<DistributionBlock>(n, protocol::kDistributionBlock);
    membership::MembershipBlock* m = cluster_.membership(n);
    if (dih == nullptr || m == nullptr || dih->dead_nodes().count(node) == 0 ||
        m->live_nodes().contains(node)) {
      return false;
    }
  }
  return true;
}

std::map<int32_t, int64_t> BankTransfers::agreed(
    const std::function<std::map<int32_t, int64_t>(uint16_t)>& read) {
  std::map<int32_t, int64_t> all;
  for (const std::vector<uint16_t>& group : cluster_.topology().node_groups) {
    std::optional<std::map<int32_t, int64_t>> first;
    uint16_t first_node = 0;
    for (uint16_t node : group) {
      if (!up(node)) continue;
      std::map<int32_t, int64_t> rows = read(node);
      if (!first) {
        first = rows;
        first_node = node;
        continue;
      }
      EXPECT_EQ(rows.size(), first->size()) << "nodes " << first_node << " and " << node;
      for (const auto& [id, value] : *first) {
        auto it = rows.find(id);
        if (it == rows.end()) {
          ADD_FAILURE() << "row " << id << " of node " << first_node << " missing on node " << node;
        } else if (it->second != value) {
          ADD_FAILURE() << "row " << id << ": node " << first_node << " has " << value << ", node "
                        << node << " has " << it->second;
        }
      }
    }
    EXPECT_TRUE(first.has_value()) << "a node group has no up node";
    if (first) all.insert(first->begin(), first->end());
  }
  return all;
}

std::map<int32_t, int64_t> BankTransfers::contents() {
  return agreed(
      [&](uint16_t node) { return replica_rows(cluster_, node, table_.schema.table_id); });
}

void BankTransfers::check_contents(const std::map<int32_t, int64_t>& rows,
                                   uint32_t acknowledged_up_to) {
  std::map<int32_t, int64_t> expected;
  for (int32_t id = 0; id < options_.accounts; ++id) expected[id] = kInitial;
  std::set<uint64_t> present;
  for (const auto& [id, balance] : rows) {
    if (id < kLogBase) continue;
    const uint64_t t = static_cast<uint64_t>(id - kLogBase);
    present.insert(t);
    auto transfer = transfers_.find(t);
    ASSERT_NE(transfer, transfers_.end()) << "log row of a transfer never started: " << t;
    EXPECT_TRUE(committed_.count(t) != 0 || unknown_.count(t) != 0)
        << "transfer " << t << " was refused to its client but is present";
    expected[transfer->second.from] -= kAmount;
    expected[transfer->second.to] += kAmount;
  }
  for (const auto& [t, gci] : committed_) {
    if (gci <= acknowledged_up_to) {
      EXPECT_EQ(present.count(t), 1u)
          << "acknowledged transfer " << t << " (GCI " << gci << ") is lost";
    }
  }
  int64_t total = 0;
  for (int32_t id = 0; id < options_.accounts; ++id) {
    auto it = rows.find(id);
    ASSERT_NE(it, rows.end()) << "account " << id << " is lost";
    EXPECT_EQ(it->second, expected[id]) << "account " << id << " does not match its transfers";
    total += it->second;
  }
  EXPECT_EQ(total, options_.accounts * kInitial);
}

}  // namespace duo::testing
