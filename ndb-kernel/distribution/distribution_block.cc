#include "ndb-kernel/distribution/distribution_block.h"

#include <utility>

#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::distribution {

using kernel::BlockAddress;
using kernel::Signal;

DistributionBlock::DistributionBlock(protocol::ClusterTopology topology,
                                     DistributionOptions options)
    : Block("distribution", protocol::kDistributionBlock),
      topology_(std::move(topology)),
      options_(options),
      data_nodes_(topology_.data_nodes()),
      master_(data_nodes_.empty() ? 0 : data_nodes_.front()),
      current_gci_(options.first_gci) {
  protocol::register_protocol_signal_names();
  on(protocol::kGcpTimer, &DistributionBlock::on_gcp_timer);
  on(protocol::kGcpPrepareConf, &DistributionBlock::on_gcp_prepare_conf);
  on(protocol::kGcpCommitConf, &DistributionBlock::on_gcp_commit_conf);
  on(protocol::kGcpSaveConf, &DistributionBlock::on_gcp_save_conf);
  on(protocol::kGcpPrepareReq, &DistributionBlock::on_gcp_prepare_req);
  on(protocol::kGcpBlockConf, &DistributionBlock::on_gcp_block_conf);
  on(protocol::kGcpCommitReq, &DistributionBlock::on_gcp_commit_req);
  on(protocol::kGcpNoMoreTrans, &DistributionBlock::on_gcp_no_more_trans);
  on(protocol::kGcpSaveReq, &DistributionBlock::on_gcp_save_req);
  on(protocol::kGcpCompleteRep, &DistributionBlock::on_gcp_complete_rep);
}

DistributionBlock::~DistributionBlock() = default;

void DistributionBlock::on_start() {
  if (!is_master()) return;
  [[maybe_unused]] Status armed =
      send_delayed(address(), Signal(protocol::kGcpTimer), options_.gcp_interval_ms);
}

void DistributionBlock::send_to_every_node(kernel::SignalId id, uint32_t gci) {
  awaiting_ = 0;
  for (uint16_t node : data_nodes_) {
    const BlockAddress target{node, protocol::kDistributionBlock, 0};
    Signal signal(id, {gci});
    signal.set_receiver(target);
    if (send(target, std::move(signal)).ok()) {
      ++awaiting_;
    } else {
      // The round cannot finish without that node; node failure handling (the
      // failover issue) will restart it without the dead node.
      DUO_BLOCK_LOG(WARNING) << "GCP " << gci << ": cannot reach node " << node;
    }
  }
}

void DistributionBlock::send_local(uint16_t block, uint16_t instance, kernel::SignalId id,
                                   uint32_t gci) {
  const BlockAddress target = local_address(block, instance);
  Signal signal(id, {gci});
  signal.set_receiver(target);
  if (Status sent = send(target, std::move(signal)); !sent.ok()) {
    DUO_BLOCK_LOG(ERROR) << "GCP " << gci << ": cannot reach " << target.to_string() << ": "
                         << sent.message();
  }
}

void DistributionBlock::answer_master(kernel::SignalId id, uint32_t gci) {
  const BlockAddress target{master_, protocol::kDistributionBlock, 0};
  Signal signal(id, {gci});
  signal.set_receiver(target);
  [[maybe_unused]] Status sent = send(target, std::move(signal));
}

// ---------------------------------------------------------------------------------------
// Master

void DistributionBlock::on_gcp_timer(Signal&) {
  if (phase_ != Phase::kIdle) return;
  round_gci_ = current_gci_.load();
  phase_ = Phase::kPreparing;
  send_to_every_node(protocol::kGcpPrepareReq, round_gci_ + 1);
}

void DistributionBlock::on_gcp_prepare_conf(Signal& signal) {
  if (phase_ != Phase::kPreparing || signal.word(0) != round_gci_ + 1 || awaiting_ == 0) return;
  if (--awaiting_ > 0) return;
  phase_ = Phase::kCommitting;
  send_to_every_node(protocol::kGcpCommitReq, round_gci_ + 1);
}

void DistributionBlock::on_gcp_commit_conf(Signal& signal) {
  if (phase_ != Phase::kCommitting || signal.word(0) != round_gci_ || awaiting_ == 0) return;
  if (--awaiting_ > 0) return;
  phase_ = Phase::kSaving;
  send_to_every_node(protocol::kGcpSaveReq, round_gci_);
}

void DistributionBlock::on_gcp_save_conf(Signal& signal) {
  const uint32_t gci = signal.word(0);
  if (signal.sender().block == protocol::kLocalQueryBlock) {
    // A local_query instance of this node saved its redo.
    if (gci != saving_gci_ || saves_awaited_ == 0) return;
    if (--saves_awaited_ == 0) answer_master(protocol::kGcpSaveConf, gci);
    return;
  }
  if (phase_ != Phase::kSaving || gci != round_gci_ || awaiting_ == 0) return;
  if (--awaiting_ > 0) return;
  phase_ = Phase::kIdle;
  for (uint16_t node : data_nodes_) {
    const BlockAddress target{node, protocol::kDistributionBlock, 0};
    Signal complete(protocol::kGcpCompleteRep, {gci});
    complete.set_receiver(target);
    [[maybe_unused]] Status sent = send(target, std::move(complete));
  }
  [[maybe_unused]] Status armed =
      send_delayed(address(), Signal(protocol::kGcpTimer), options_.gcp_interval_ms);
}

// ---------------------------------------------------------------------------------------
// Every node

void DistributionBlock::on_gcp_prepare_req(Signal& signal) {
  send_local(protocol::kCoordinatorBlock, 0, protocol::kGcpBlockReq, signal.word(0));
}

void DistributionBlock::on_gcp_block_conf(Signal& signal) {
  answer_master(protocol::kGcpPrepareConf, signal.word(0));
}

void DistributionBlock::on_gcp_commit_req(Signal& signal) {
  current_gci_.store(signal.word(0));
  send_local(protocol::kCoordinatorBlock, 0, protocol::kGcpSwitchReq, signal.word(0));
}

void DistributionBlock::on_gcp_no_more_trans(Signal& signal) {
  answer_master(protocol::kGcpCommitConf, signal.word(0));
}

void DistributionBlock::on_gcp_save_req(Signal& signal) {
  saving_gci_ = signal.word(0);
  saves_awaited_ = topology_.log_parts;
  for (uint16_t part = 0; part < topology_.log_parts; ++part) {
    send_local(protocol::kLocalQueryBlock, part, protocol::kGcpSaveReq, saving_gci_);
  }
}

void DistributionBlock::on_gcp_complete_rep(Signal& signal) {
  const uint32_t gci = signal.word(0);
  if (gci <= last_complete_gci_.load()) return;
  last_complete_gci_.store(gci);
  completed_rounds_.fetch_add(1);
  DUO_BLOCK_LOG(DEBUG) << "GCI " << gci << " complete";
}

}  // namespace duo::distribution
