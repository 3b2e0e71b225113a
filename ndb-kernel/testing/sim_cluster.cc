#include "ndb-kernel/testing/sim_cluster.h"

#include <cstdlib>
#include <optional>
#include <utility>

#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/dictionary/dictionary_block.h"
#include "ndb-kernel/distribution/distribution_block.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "storage/memory/test_memory.h"

namespace duo::testing {

using kernel::BlockAddress;
using kernel::Signal;

ScriptClient::ScriptClient(sim::Simulator* simulator)
    : Block("script_client", protocol::kApiBlock), simulator_(simulator) {
  for (kernel::SignalId id = 1; id < 300; ++id) on(id, &ScriptClient::on_any);
  // Disk-data objects' answers (protocol/filegroup.h).
  for (kernel::SignalId id : {protocol::kFilegroupConf, protocol::kFilegroupRef,
                              protocol::kListFilegroupsConf}) {
    on(id, &ScriptClient::on_any);
  }
}

Status ScriptClient::send(const BlockAddress& to, Signal signal) {
  signal.set_sender(address());
  signal.set_receiver(to);
  return simulator_->inject(std::move(signal));
}

bool ScriptClient::has(kernel::SignalId id) const {
  for (const Signal& s : inbox_) {
    if (s.id() == id) return true;
  }
  return false;
}

Signal ScriptClient::take(kernel::SignalId id) {
  for (auto it = inbox_.begin(); it != inbox_.end(); ++it) {
    if (it->id() == id) {
      Signal s = std::move(*it);
      inbox_.erase(it);
      return s;
    }
  }
  std::abort();  // the test asked for a signal it did not check for
}

void ScriptClient::on_any(Signal& signal) { inbox_.push_back(std::move(signal)); }

size_t ScanOutcome::rows() const {
  size_t total = 0;
  for (const storage::RowBatch& batch : batches) total += batch.rows();
  return total;
}

Result<ScanOutcome> ScriptClient::scan(const kernel::BlockAddress& coordinator,
                                       protocol::ScanTabReq req,
                                       const std::function<void(size_t round)>& between_rounds,
                                       uint64_t limit_ms) {
  const uint64_t api_tx = req.api_tx;
  const uint32_t scan_id = req.scan_id;
  // The first SCAN_TABCONF / SCAN_TABREF of this scan in the inbox, if any.
  auto answer = [&]() -> std::optional<Signal> {
    for (auto it = inbox_.begin(); it != inbox_.end(); ++it) {
      if ((it->id() == protocol::kScanTabConf || it->id() == protocol::kScanTabRef) &&
          it->word(0) == static_cast<uint32_t>(api_tx) &&
          it->word(1) == static_cast<uint32_t>(api_tx >> 32) && it->word(2) == scan_id) {
        Signal signal = std::move(*it);
        inbox_.erase(it);
        return signal;
      }
    }
    return std::nullopt;
  };
  DUO_RETURN_IF_ERROR(send(coordinator, std::move(req).to_signal()));
  ScanOutcome outcome;
  outcome.rounds = 1;
  std::optional<Signal> signal;
  for (;;) {
    if (!simulator_->run_until([&] { return (signal = answer()).has_value(); },
                               limit_ms * kNanosPerMilli)) {
      return Status(ErrorCode::kInternal, "no answer to the scan");
    }
    if (signal->id() == protocol::kScanTabRef) {
      DUO_ASSIGN_OR_RETURN(protocol::ScanRef ref, protocol::ScanRef::from_signal(*signal));
      return Status(ref.error, ref.message);
    }
    DUO_ASSIGN_OR_RETURN(protocol::ScanTabConf conf, protocol::ScanTabConf::from_signal(*signal));
    ++outcome.confs;
    std::vector<protocol::ScanTabConf::Entry> entries;
    DUO_RETURN_IF_ERROR(conf.entries(&entries));
    for (const protocol::ScanTabConf::Entry& entry : entries) {
      storage::RowBatch rows;
      DUO_RETURN_IF_ERROR(protocol::decode_row_batch(entry.batch, &rows));
      outcome.batches.push_back(std::move(rows));
    }
    if ((conf.flags & protocol::kScanAllDone) != 0) return outcome;
    if ((conf.flags & protocol::kScanRoundDone) == 0) continue;
    if (between_rounds) between_rounds(outcome.rounds);
    ++outcome.rounds;
    DUO_RETURN_IF_ERROR(send(coordinator, protocol::ScanNextReq{api_tx, scan_id, 0, 0}.to_signal(
                                              protocol::kScanTabNextReq)));
  }
}

SimCluster::SimCluster(SimClusterOptions options) : options_(options) {
  topology_.log_parts = options.log_parts;
  uint16_t next = 1;
  for (uint32_t g = 0; g < options.node_groups; ++g) {
    std::vector<uint16_t> group;
    for (uint32_t r = 0; r < options.replicas; ++r) {
      group.push_back(next);
      data_nodes_.push_back(next);
      ++next;
    }
    topology_.node_groups.push_back(std::move(group));
  }
  sim::SimulatorOptions sim_options;
  sim_options.seed = options.seed;
  sim_options.link_jitter_ns = options.link_jitter_ns;
  sim_ = std::make_unique<sim::Simulator>(sim_options);
  for (uint16_t node : data_nodes_) {
    memory_[node] = storage::make_test_memory(options.memory_pages_per_node);
    disk_[node] = std::make_unique<sim::SimDisk>(options.seed * 1000 + node);
    storage::GlobalMemory* memory = memory_[node].get();
    sim::SimDisk* disk = disk_[node].get();
    const protocol::ClusterTopology topology = topology_;
    const SimClusterOptions opts = options_;
    Status added = sim_->add_node(node, [memory, disk, topology, opts](sim::NodeId) {
      std::vector<std::unique_ptr<kernel::Block>> blocks;
      blocks.push_back(std::make_unique<sim::SimFileSystem>(*disk));
      distribution::DistributionOptions dih;
      dih.gcp_interval_ms = opts.gcp_interval_ms;
      blocks.push_back(std::make_unique<distribution::DistributionBlock>(topology, dih));
      blocks.push_back(std::make_unique<dictionary::DictionaryBlock>(topology));
      blocks.push_back(
          std::make_unique<coordinator::CoordinatorBlock>(topology, coordinator::CoordinatorOptions{}));
      local_query::LocalQueryOptions lqh;
      lqh.lock_wait_timeout_ms = opts.lock_wait_timeout_ms;
      lqh.lcp_parts = 4;  // partial checkpoints, as duo_datad takes them by default
      for (uint16_t part = 0; part < topology.log_parts; ++part) {
        blocks.push_back(
            std::make_unique<local_query::LocalQueryBlock>(part, memory, topology, lqh));
      }
      if (opts.membership) {
        membership::MembershipOptions qmgr;
        qmgr.heartbeat_interval_ms = opts.heartbeat_interval_ms;
        qmgr.arbitration_timeout_ms = opts.arbitration_timeout_ms;
        qmgr.arbitrator = {kArbitratorNode, protocol::kArbitratorBlock, 0};
        blocks.push_back(std::make_unique<membership::MembershipBlock>(topology, qmgr));
      }
      return blocks;
    });
    if (!added.ok()) std::abort();
  }
  if (options.membership) {
    Status added = sim_->add_node(kArbitratorNode, [](sim::NodeId) {
      std::vector<std::unique_ptr<kernel::Block>> blocks;
      blocks.push_back(std::make_unique<membership::SimArbitrator>());
      return blocks;
    });
    if (!added.ok()) std::abort();
  }
  for (uint32_t c = 0; c < options.clients; ++c) {
    ScriptClient** slot = &clients_.emplace_back(nullptr);
    sim::Simulator* simulator = sim_.get();
    Status added = sim_->add_node(static_cast<uint16_t>(kFirstClientNode + c),
                                  [slot, simulator](sim::NodeId) {
                                    std::vector<std::unique_ptr<kernel::Block>> blocks;
                                    auto client = std::make_unique<ScriptClient>(simulator);
                                    *slot = client.get();
                                    blocks.push_back(std::move(client));
                                    return blocks;
                                  });
    if (!added.ok()) std::abort();
  }
  sim_->run_for(0);  // every node's on_start
  if (!wait_started()) std::abort();  // a test cluster that cannot start is a harness bug
}

bool SimCluster::wait_started(uint64_t limit_ms) {
  return run_until(
      [&] {
        for (uint16_t node : data_nodes_) {
          auto* dih = block<distribution::DistributionBlock>(node, protocol::kDistributionBlock);
          if (dih == nullptr || dih->start_state() != distribution::NodeStartState::kStarted) {
            return false;
          }
        }
        return true;
      },
      limit_ms);
}

uint32_t SimCluster::last_complete_gci() {
  uint32_t gci = UINT32_MAX;
  for (uint16_t node : data_nodes_) {
    auto* dih = block<distribution::DistributionBlock>(node, protocol::kDistributionBlock);
    gci = std::min(gci, dih == nullptr ? 0 : dih->last_complete_gci());
  }
  return gci;
}

void SimCluster::crash_and_restart_all() {
  for (uint16_t node : data_nodes_) {
    if (!sim_->crash_node(node).ok()) std::abort();
    disk_[node]->crash();
  }
  for (uint16_t node : data_nodes_) {
    if (!sim_->restart_node(node).ok()) std::abort();
  }
  sim_->run_for(0);
}

SimCluster::~SimCluster() {
  sim_.reset();  // blocks (and their fragments) go before the memory they use
}

bool SimCluster::run_until(const std::function<bool()>& predicate, uint64_t limit_ms) {
  return sim_->run_until(predicate, limit_ms * kNanosPerMilli);
}

Result<protocol::TableDef> SimCluster::create_table(Signal create, uint16_t fetch_from) {
  ScriptClient& script = client();
  DUO_RETURN_IF_ERROR(script.send(dictionary(1), std::move(create)));
  if (!run_until([&] { return script.has(protocol::kCreateTableConf); })) {
    return Status(ErrorCode::kInternal, "no CREATE_TABLECONF");
  }
  const protocol::DictMsg conf =
      protocol::DictMsg::from_signal(script.take(protocol::kCreateTableConf));
  DUO_RETURN_IF_ERROR(script.send(
      dictionary(fetch_from), protocol::DictMsg{2, conf.a, 0, 0, ""}.to_signal(protocol::kGetTableReq)));
  if (!run_until([&] { return script.has(protocol::kGetTableConf); })) {
    return Status(ErrorCode::kInternal, "no GET_TABLECONF");
  }
  DUO_ASSIGN_OR_RETURN(protocol::TableMsg table,
                       protocol::TableMsg::from_signal(script.take(protocol::kGetTableConf)));
  return table.table;
}

Status SimCluster::for_each_row(uint16_t node, uint32_t table_id,
                                const std::function<void(const storage::RowBatch::Row&)>& each) {
  for (uint16_t part = 0; part < topology_.log_parts; ++part) {
    auto* lqh = block<local_query::LocalQueryBlock>(node, protocol::kLocalQueryBlock, part);
    if (lqh == nullptr) return Status(ErrorCode::kInvalidArgument, "node is down");
    for (uint32_t f : lqh->fragment_ids(table_id)) {
      auto* fragment = const_cast<storage::Fragment*>(lqh->fragment(table_id, f));
      DUO_ASSIGN_OR_RETURN(std::unique_ptr<storage::Fragment::Scan> scan,
                           fragment->open_scan(storage::Fragment::ScanSpec{}));
      storage::RowBatch batch;
      for (;;) {
        batch.clear();
        DUO_ASSIGN_OR_RETURN(size_t rows, scan->next(100, &batch));
        if (rows == 0) break;
        for (size_t r = 0; r < batch.rows(); ++r) each(batch.row(r));
      }
    }
  }
  return Status::OK();
}

Signal create_table_signal(uint32_t request_id, const storage::TableSchema& schema,
                           uint32_t fragment_count) {
  protocol::TableMsg msg;
  msg.request_id = request_id;
  msg.table.schema = schema;
  msg.table.fragment_count = fragment_count;
  Result<Signal> signal = msg.to_signal(protocol::kCreateTableReq);
  if (!signal.ok()) std::abort();
  return std::move(signal).value();
}

Signal key_signal(uint64_t api_tx, uint32_t op_index, const protocol::TableDef& table,
                  storage::OpType type, const protocol::OpBody& body, uint8_t flags,
                  storage::LockMode lock) {
  protocol::TcKeyReq req;
  req.api_tx = api_tx;
  req.op_index = op_index;
  req.table_id = table.schema.table_id;
  req.table_version = table.version;
  req.type = type;
  req.lock = lock;
  req.flags = flags;
  if (!body.encode(&req.body).ok()) std::abort();
  return std::move(req).to_signal();
}

}  // namespace duo::testing
