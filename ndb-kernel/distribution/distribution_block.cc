#include "ndb-kernel/distribution/distribution_block.h"

#include <algorithm>
#include <utility>

#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/protocol/wire_codec.h"

namespace duo::distribution {

using kernel::BlockAddress;
using kernel::Signal;

namespace {
constexpr uint16_t kSysfileTag = 1;
// RESTART_GCIREP w1: 1 = refused by the master, kRestartRefusedDead = the sender's
// sysfile lists the reporter dead.
constexpr uint32_t kRestartRefusedDead = 2;
// RESTART_GCIREP w1: the cluster runs without the reporter; w0 = the master to ask for a
// node restart (distribution_node_restart.cc).
constexpr uint32_t kRestartNodeRestart = 3;
// RESTART_GCIREP w1: a cluster runs and has not yet declared the reporter dead (it
// restarted within the failure detection): wait, then restart as above.
constexpr uint32_t kRestartClusterRunning = 4;
constexpr const char* kSysfilePath = "dih/sysfile";
}  // namespace

const char* node_start_state_name(NodeStartState state) {
  switch (state) {
    case NodeStartState::kReadingSysfile:
      return "reading sysfile";
    case NodeStartState::kWaitingForNodes:
      return "waiting for all data nodes";
    case NodeStartState::kRestoring:
      return "restoring";
    case NodeStartState::kWaitingForStart:
      return "restored, waiting for the other nodes";
    case NodeStartState::kStarted:
      return "started";
    case NodeStartState::kFailed:
      return "failed";
    case NodeStartState::kJoining:
      return "node restart: asking the master to start";
    case NodeStartState::kCopying:
      return "node restart: copying rows from the live replica";
  }
  return "?";
}

DistributionBlock::DistributionBlock(protocol::ClusterTopology topology,
                                     DistributionOptions options)
    : Block("distribution", protocol::kDistributionBlock),
      topology_(std::move(topology)),
      options_(options),
      data_nodes_(topology_.data_nodes()),
      master_(data_nodes_.empty() ? 0 : data_nodes_.front()) {
  protocol::register_protocol_signal_names();
  on(protocol::kGcpTimer, &DistributionBlock::on_gcp_timer);
  on(protocol::kGcpPrepareConf, &DistributionBlock::on_gcp_prepare_conf);
  on(protocol::kGcpCommitConf, &DistributionBlock::on_gcp_commit_conf);
  on(protocol::kGcpSaveConf, &DistributionBlock::on_gcp_save_conf);
  on(protocol::kGcpCompleteConf, &DistributionBlock::on_gcp_complete_conf);
  on(protocol::kGcpPrepareReq, &DistributionBlock::on_gcp_prepare_req);
  on(protocol::kGcpBlockConf, &DistributionBlock::on_gcp_block_conf);
  on(protocol::kGcpCommitReq, &DistributionBlock::on_gcp_commit_req);
  on(protocol::kGcpNoMoreTrans, &DistributionBlock::on_gcp_no_more_trans);
  on(protocol::kGcpSaveReq, &DistributionBlock::on_gcp_save_req);
  on(protocol::kGcpCompleteRep, &DistributionBlock::on_gcp_complete_rep);
  on(protocol::kRestartInfoRep, &DistributionBlock::on_restart_info_rep);
  on(protocol::kRestartDoneRep, &DistributionBlock::on_restart_done_rep);
  on(protocol::kRestartGciRep, &DistributionBlock::on_restart_gci_rep);
  on(protocol::kDictRestoreConf, &DistributionBlock::on_dict_restore_conf);
  on(protocol::kLqhRestoreConf, &DistributionBlock::on_lqh_restore_conf);
  on(protocol::kClusterStartedRep, &DistributionBlock::on_cluster_started_rep);
  on(protocol::kRestartTimer, &DistributionBlock::on_restart_timer);
  on(protocol::kNodeFailRep, &DistributionBlock::on_node_fail_rep);
  on(protocol::kNodeStoppingRep, &DistributionBlock::on_node_stopping_rep);
  on(protocol::kTakeoverDoneRep, &DistributionBlock::on_takeover_done_rep);
  on(protocol::kMasterGcpReq, &DistributionBlock::on_master_gcp_req);
  on(protocol::kMasterGcpConf, &DistributionBlock::on_master_gcp_conf);
  on(protocol::kStartPermReq, &DistributionBlock::on_start_perm_req);
  on(protocol::kStartPermConf, &DistributionBlock::on_start_perm_conf);
  on(protocol::kStartPermRef, &DistributionBlock::on_start_perm_ref);
  on(protocol::kNodeRestartInitConf, &DistributionBlock::on_node_restart_init_conf);
  on(protocol::kDictCopyConf, &DistributionBlock::on_dict_copy_conf);
  on(protocol::kDictCopyRef, &DistributionBlock::on_dict_copy_ref);
  on(protocol::kLcpStartConf, &DistributionBlock::on_lcp_start_conf);
  on(protocol::kDictLockConf, &DistributionBlock::on_dict_lock_conf);
  on(protocol::kIncludeNodeConf, &DistributionBlock::on_include_node_conf);
  on(protocol::kIncludeNodeRef, &DistributionBlock::on_include_node_ref);
  on(protocol::kNodeRestartReadyRep, &DistributionBlock::on_node_restart_ready_rep);
  on(protocol::kCopyNodeReq, &DistributionBlock::on_copy_node_req);
  on(protocol::kCopyNodeConf, &DistributionBlock::on_copy_node_conf);
  on(protocol::kCopyNodeRef, &DistributionBlock::on_copy_node_ref);
  on(protocol::kNodeStartingRep, &DistributionBlock::on_node_starting_rep);
  on(protocol::kNodeStartingConf, &DistributionBlock::on_node_starting_conf);
  on(protocol::kNodeStartedRep, &DistributionBlock::on_node_started_rep);
  on(protocol::kNodeStartedConf, &DistributionBlock::on_node_started_conf);
  on(protocol::kNodeRecoverableRep, &DistributionBlock::on_node_recoverable_rep);
  on(protocol::kNodeRestartTimer, &DistributionBlock::on_node_restart_timer);
  on(protocol::kCopyProgressRep, &DistributionBlock::on_copy_progress_rep);
  for (kernel::SignalId id : {protocol::kFsOpenConf, protocol::kFsRef, protocol::kFsWriteConf,
                              protocol::kFsReadConf, protocol::kFsCloseConf}) {
    on(id, &DistributionBlock::on_fs_answer);
  }
}

DistributionBlock::~DistributionBlock() = default;

std::string DistributionBlock::failure() const {
  return start_state_.load() == NodeStartState::kFailed ? failure_ : std::string();
}

void DistributionBlock::on_start() {
  sysfile_ = std::make_unique<fs_client::DualCopyFile>(
      kSysfilePath, kSysfileTag, node_id(),
      [this](Signal signal) { return send(signal.receiver(), std::move(signal)); });
  sysfile_->read([this](Result<fs_client::Bytes> bytes) {
    if (bytes.ok()) {
      protocol::ByteReader in(protocol::as_view(*bytes));
      if (!in.u32(&sysfile_gci_)) return fail_start("sysfile: truncated");
      // Then (since node failure handling) u16 count + (u16 node, u32 GCI) per dead
      // node; a sysfile written before has none.
      uint16_t dead_count = 0;
      if (in.u16(&dead_count)) {
        for (uint16_t i = 0; i < dead_count; ++i) {
          uint16_t node = 0;
          uint32_t gci = 0;
          if (!in.u16(&node) || !in.u32(&gci)) {
            return fail_start("sysfile: truncated dead node list");
          }
          dead_since_[node] = gci;
        }
      }
      master_ = lowest_live_node();
      // Written by this node after it had been allowed a node restart (or while back
      // from one, not yet recoverable): its disk is not a full replica.
      own_sysfile_lists_self_ = dead_since_.count(node_id()) != 0;
      for (const auto& [node, gci] : dead_since_) {
        DUO_BLOCK_LOG(INFO) << "sysfile: data node " << node << " is dead since GCI " << gci
                            << "; the restart does not wait for it";
      }
    } else if (!bytes.status().is(ErrorCode::kNotFound)) {
      return fail_start("cannot read the sysfile: " + bytes.status().message());
    }
    DUO_BLOCK_LOG(INFO) << (sysfile_gci_ == 0
                                ? std::string("no sysfile: this node has no data (initial start)")
                                : "sysfile: last complete GCI " + std::to_string(sysfile_gci_));
    start_state_.store(NodeStartState::kWaitingForNodes);
    start_reporting();
  });
}

void DistributionBlock::fail_start(std::string why) {
  DUO_BLOCK_LOG(ERROR) << "start failed: " << why;
  failure_ = std::move(why);
  start_state_.store(NodeStartState::kFailed);
}

void DistributionBlock::send_to_master(Signal signal) {
  const BlockAddress target{master_, protocol::kDistributionBlock, 0};
  signal.set_receiver(target);
  // Links may not be up yet: the restart timer repeats the report until answered.
  send(target, std::move(signal)).ignore_error();
}

void DistributionBlock::write_sysfile(uint32_t gci) {
  sysfile_->write(sysfile_payload(gci), [this, gci](Status written) {
    if (written.ok()) {
      on_sysfile_written(gci);
    } else if (!written.is(ErrorCode::kTemporary)) {  // kTemporary: superseded by a newer GCI
      // Without its sysfile the node cannot promise the GCI: stop rather than go on.
      fail_start("cannot record GCI " + std::to_string(gci) +
                 " in the sysfile: " + written.message());
    }
  });
}

fs_client::Bytes DistributionBlock::sysfile_payload(uint32_t gci) const {
  fs_client::Bytes payload;
  protocol::put_u32(&payload, gci);
  // Nodes back from a node restart stay recorded dead until they can recover by
  // themselves (a system restart must not restore from a node that was copying).
  std::map<uint16_t, uint32_t> recorded_dead = dead_since_;
  recorded_dead.insert(unrecovered_.begin(), unrecovered_.end());
  protocol::put_u16(&payload, static_cast<uint16_t>(recorded_dead.size()));
  for (const auto& [node, since] : recorded_dead) {
    protocol::put_u16(&payload, node);
    protocol::put_u32(&payload, since);
  }
  return payload;
}

void DistributionBlock::on_fs_answer(Signal& signal) {
  if (sysfile_ && sysfile_->owns(signal)) sysfile_->on_fs_answer(signal);
}

// ---------------------------------------------------------------------------------------
// System restart

void DistributionBlock::on_restart_timer(Signal& signal) {
  if (signal.word(0) == report_generation_) repeat_report();
}

void DistributionBlock::start_reporting() {
  ++report_generation_;  // older timers stop
  repeat_report();
}

void DistributionBlock::repeat_report() {
  const NodeStartState state = start_state_.load();
  if (state == NodeStartState::kWaitingForNodes) {
    // To every data node, not only this node's master: a node that this one's sysfile
    // does not know dead may list it dead in its own, and refuses it then.
    // Those recorded dead too: one of them may run the cluster (and answer).
    for (uint16_t node : data_nodes_) {
      if (node == master_ || node == node_id()) continue;
      const BlockAddress target{node, protocol::kDistributionBlock, 0};
      Signal report(protocol::kRestartInfoRep, {sysfile_gci_});
      report.set_receiver(target);
      send(target, std::move(report)).ignore_error();
    }
    send_to_master(Signal(protocol::kRestartInfoRep, {sysfile_gci_}));
  } else if (state == NodeStartState::kWaitingForStart) {
    send_to_master(Signal(protocol::kRestartDoneRep, {restart_gci_.load()}));
  } else {
    return;  // nothing to repeat
  }
  send_delayed(address(), Signal(protocol::kRestartTimer, {report_generation_}),
               options_.restart_retry_ms)
      .ignore_error();
}

void DistributionBlock::on_node_stopping_rep(Signal& signal) {
  stopping_nodes_.insert(static_cast<uint16_t>(signal.word(0)));
}

void DistributionBlock::on_restart_info_rep(Signal& signal) {
  const uint16_t node = signal.sender().node_id;
  if (start_state_.load() == NodeStartState::kStarted) {
    // A cluster runs: the reporter must not start one of its own. If it was declared
    // dead it starts by a node restart (copying from the live replicas); if not yet (it
    // restarted within the failure detection), it waits until it is.
    Signal answer(protocol::kRestartGciRep,
                  {master_, is_dead(node) ? kRestartNodeRestart : kRestartClusterRunning});
    answer.set_receiver(signal.sender());
    send(signal.sender(), std::move(answer)).ignore_error();
    return;
  }
  // Recorded dead in this node's sysfile: its disk is behind; it waits (its report
  // repeats) until this node runs, then starts by a node restart.
  if (is_dead(node) || unrecovered_.count(node) != 0) return;
  if (!is_master()) return;
  reported_gci_[node] = signal.word(0);
  if (!restart_decided_ && reported_gci_.size() == data_nodes_.size() - dead_since_.size()) {
    // Some configured data nodes are recorded dead here. One of them may run a cluster
    // that went on without this node (its own record is older): before starting
    // without them, give them StartPartialTimeout to say so (a running node answers
    // every report), or two clusters would serve the same rows.
    if (running_cluster_seen_) return;
    if (reported_gci_.size() < data_nodes_.size()) {
      const uint64_t now = clock().now_ns();
      if (partial_start_since_ns_ == 0) {
        partial_start_since_ns_ = now;
        DUO_BLOCK_LOG(INFO) << "system restart without the data nodes recorded dead: waiting "
                            << options_.partial_start_wait_ms
                            << " ms for a running cluster to answer first";
      }
      if (now - partial_start_since_ns_ < options_.partial_start_wait_ms * 1'000'000) return;
    }
    restart_decided_ = true;
    uint32_t gci = 0;
    for (const auto& [n, g] : reported_gci_) gci = std::max(gci, g);
    restart_gci_.store(gci);
    for (const auto& [n, g] : reported_gci_) {
      if (g == 0 && gci != 0) {
        restart_refusal_ = "data node " + std::to_string(n) +
                           " has no data (initial start?) while the cluster recovers to GCI " +
                           std::to_string(gci) +
                           "; restarting a single node from its peers is not supported yet: "
                           "start every data node with its file system";
      }
    }
    DUO_BLOCK_LOG(INFO) << "system restart: every data node reported; recovering to GCI " << gci
                        << (restart_refusal_.empty() ? "" : " REFUSED: " + restart_refusal_);
  }
  if (!restart_decided_) return;
  // Answer every report after the decision (the first answer may have been lost).
  Signal decision(protocol::kRestartGciRep,
                  {restart_gci_.load(), restart_refusal_.empty() ? 0u : 1u});
  decision.set_section(fs_client::Bytes(restart_refusal_.begin(), restart_refusal_.end()));
  decision.set_receiver(signal.sender());
  send(signal.sender(), std::move(decision)).ignore_error();
}

void DistributionBlock::on_restart_gci_rep(Signal& signal) {
  if (signal.word(1) == kRestartRefusedDead && start_state_.load() != NodeStartState::kStarted &&
      start_state_.load() != NodeStartState::kFailed) {
    // From any node whose sysfile lists this one dead (not only this node's master).
    return fail_start(std::string(signal.section().begin(), signal.section().end()));
  }
  if (signal.word(1) == 1 && signal.sender().node_id == master_ &&
      start_state_.load() == NodeStartState::kCopying) {
    // The master gave up this node restart (a copy failed).
    return fail_start(std::string(signal.section().begin(), signal.section().end()));
  }
  if (start_state_.load() != NodeStartState::kWaitingForNodes) return;  // a repeated answer
  if (signal.word(1) == kRestartNodeRestart) {
    return begin_node_restart(static_cast<uint16_t>(signal.word(0)));
  }
  if (signal.word(1) == kRestartClusterRunning) {
    if (!running_cluster_seen_) {
      DUO_BLOCK_LOG(INFO) << "a cluster runs (node " << signal.sender().node_id
                          << " answered) and has not yet declared this node's previous life "
                             "dead: waiting to start by a node restart";
    }
    running_cluster_seen_ = true;
    return;
  }
  if (signal.sender().node_id != master_) return;  // a node that thinks itself master
  if (signal.word(1) != 0) {
    return fail_start(std::string(signal.section().begin(), signal.section().end()));
  }
  // The master restores this node: whatever its own sysfile said, it is not dead.
  dead_since_.erase(node_id());
  restart_gci_.store(signal.word(0));
  start_state_.store(NodeStartState::kRestoring);
  DUO_BLOCK_LOG(INFO) << "restoring schema and data up to GCI " << signal.word(0);
  Signal request(protocol::kDictRestoreReq);
  const BlockAddress dictionary = local_address(protocol::kDictionaryBlock);
  request.set_receiver(dictionary);
  if (Status sent = send(dictionary, std::move(request)); !sent.ok()) {
    fail_start("cannot reach the dictionary: " + sent.message());
  }
}

void DistributionBlock::on_dict_restore_conf(Signal& signal) {
  if (start_state_.load() == NodeStartState::kCopying &&
      local_step_ == LocalRecoveryStep::kRestoringSchema) {
    return on_local_schema_restored(signal);
  }
  if (start_state_.load() != NodeStartState::kRestoring) return;
  if (signal.word(1) != 0) {
    return fail_start(
        "the schema could not be restored (" +
        std::string(error_info(static_cast<ErrorCode>(std::min<uint32_t>(
                                   signal.word(1), static_cast<uint32_t>(ErrorCode::kInternal))))
                        .name) +
        "); see the dictionary's log line");
  }
  restores_awaited_ = topology_.log_parts;
  for (uint16_t part = 0; part < topology_.log_parts; ++part) {
    send_local(protocol::kLocalQueryBlock, part, protocol::kLqhRestoreReq, restart_gci_.load());
  }
}

void DistributionBlock::on_lqh_restore_conf(Signal& signal) {
  if (start_state_.load() == NodeStartState::kCopying &&
      local_step_ == LocalRecoveryStep::kRestoringData) {
    return on_local_part_restored(signal);
  }
  if (start_state_.load() != NodeStartState::kRestoring || restores_awaited_ == 0) return;
  if (signal.word(2) != 0) {
    return fail_start("log part " + std::to_string(signal.sender().instance) +
                      " could not be restored; see its log lines");
  }
  if (--restores_awaited_ > 0) return;
  DUO_BLOCK_LOG(INFO) << "restored up to GCI " << restart_gci_.load()
                      << "; waiting for the other data nodes";
  start_state_.store(NodeStartState::kWaitingForStart);
  start_reporting();
}

void DistributionBlock::on_restart_done_rep(Signal& signal) {
  if (!is_master()) return;
  restored_nodes_.insert(signal.sender().node_id);
  if (restored_nodes_.size() < data_nodes_.size() - dead_since_.size()) return;
  const uint32_t first_gci = restart_gci_.load() + 1;
  if (!cluster_started_) {
    cluster_started_ = true;
    DUO_BLOCK_LOG(INFO) << "system restart complete: every data node restored GCI "
                        << restart_gci_.load() << "; committing from GCI " << first_gci;
    for (uint16_t node : data_nodes_) {
      if (is_dead(node)) continue;
      const BlockAddress target{node, protocol::kDistributionBlock, 0};
      Signal started(protocol::kClusterStartedRep, {first_gci});
      started.set_receiver(target);
      send(target, std::move(started)).ignore_error();
    }
    return;
  }
  // A node that missed the announcement asks again.
  Signal started(protocol::kClusterStartedRep, {first_gci});
  started.set_receiver(signal.sender());
  send(signal.sender(), std::move(started)).ignore_error();
}

void DistributionBlock::on_cluster_started_rep(Signal& signal) {
  if (start_state_.load() != NodeStartState::kWaitingForStart) return;
  const uint32_t first_gci = signal.word(0);
  current_gci_.store(first_gci);
  last_complete_gci_.store(first_gci - 1);
  recorded_gci_ = first_gci - 1;
  send_local(protocol::kCoordinatorBlock, 0, protocol::kGcpSwitchReq, first_gci);
  // The dictionary creates the initial disk-data objects once the cluster has started.
  send_local(protocol::kDictionaryBlock, 0, protocol::kClusterStartedRep, first_gci);
  announce_dead_nodes_locally();
  start_state_.store(NodeStartState::kStarted);
  if (is_master()) {
    send_delayed(address(), Signal(protocol::kGcpTimer), options_.gcp_interval_ms).ignore_error();
  }
}

void DistributionBlock::send_to_every_node(kernel::SignalId id, uint32_t gci, uint32_t extra) {
  awaiting_.clear();
  for (uint16_t node : data_nodes_) {
    if (is_dead(node)) continue;
    const BlockAddress target{node, protocol::kDistributionBlock, 0};
    Signal signal(id, {gci, extra});
    signal.set_receiver(target);
    if (send(target, std::move(signal)).ok()) {
      awaiting_.insert(node);
    } else {
      // Not awaited: the node is dead or about to be declared dead (NODE_FAILREP), and
      // the round goes on over the live nodes.
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
  const BlockAddress target{round_master_ != 0 ? round_master_ : master_,
                            protocol::kDistributionBlock, 0};
  Signal signal(id, {gci});
  signal.set_receiver(target);
  send(target, std::move(signal)).ignore_error();
}

// ---------------------------------------------------------------------------------------
// Master

void DistributionBlock::on_gcp_timer(Signal&) {
  if (phase_ != Phase::kIdle || !is_master()) return;
  // A restarted node is joining: the next round waits until every node knows it runs
  // (finish_node_restart() starts the timer again).
  if (node_restart_ && node_restart_->started_sent) {
    return;
  }
  round_revive_ = revive_next_round_;
  revive_next_round_ = 0;
  // A round revives one node: the next one reported waits for the round after.
  if (!revive_later_.empty()) {
    revive_next_round_ = *revive_later_.begin();
    revive_later_.erase(revive_later_.begin());
  }
  round_gci_ = current_gci_.load();
  phase_ = Phase::kPreparing;
  send_to_every_node(protocol::kGcpPrepareReq, round_gci_ + 1);
}

void DistributionBlock::on_gcp_prepare_conf(Signal& signal) {
  if (phase_ != Phase::kPreparing || signal.word(0) != round_gci_ + 1) return;
  awaiting_.erase(signal.sender().node_id);
  advance_round_if_answered();
}

void DistributionBlock::on_gcp_commit_conf(Signal& signal) {
  if (phase_ != Phase::kCommitting || signal.word(0) != round_gci_) return;
  awaiting_.erase(signal.sender().node_id);
  advance_round_if_answered();
}

void DistributionBlock::advance_round_if_answered() {
  if (!is_master() || master_takeover_ || !awaiting_.empty()) return;
  switch (phase_) {
    case Phase::kIdle:
      return;
    case Phase::kPreparing:
      phase_ = Phase::kCommitting;
      send_to_every_node(protocol::kGcpCommitReq, round_gci_ + 1);
      return;
    case Phase::kCommitting:
      // A takeover may still commit a dead coordinator's transactions in round_gci_:
      // the GCI is not closed (and no node forgets its commits) before it is done.
      if (!takeover_pending_.empty()) return;
      phase_ = Phase::kSaving;
      send_to_every_node(protocol::kGcpSaveReq, round_gci_);
      return;
    case Phase::kSaving:
      phase_ = Phase::kCompleting;
      send_to_every_node(protocol::kGcpCompleteRep, round_gci_, round_revive_);
      return;
    case Phase::kCompleting:
      phase_ = Phase::kIdle;
      send_delayed(address(), Signal(protocol::kGcpTimer), options_.gcp_interval_ms).ignore_error();
      return;
  }
}

void DistributionBlock::on_gcp_save_conf(Signal& signal) {
  const uint32_t gci = signal.word(0);
  if (signal.sender().block == protocol::kLocalQueryBlock) {
    // A local_query instance of this node saved its redo.
    if (gci != saving_gci_ || saves_awaited_ == 0) return;
    if (--saves_awaited_ == 0) answer_master(protocol::kGcpSaveConf, gci);
    return;
  }
  if (phase_ != Phase::kSaving || gci != round_gci_) return;
  awaiting_.erase(signal.sender().node_id);
  advance_round_if_answered();
}

void DistributionBlock::on_gcp_complete_conf(Signal& signal) {
  if (phase_ != Phase::kCompleting || signal.word(0) != round_gci_) return;
  awaiting_.erase(signal.sender().node_id);
  advance_round_if_answered();
}

// ---------------------------------------------------------------------------------------
// Every node

bool DistributionBlock::from_dead_node(const Signal& signal) const {
  const uint16_t sender = signal.sender().node_id;
  if (sender == node_id() || !is_dead(sender)) return false;
  DUO_BLOCK_LOG(WARNING) << "dropped " << kernel::signal_name(signal.id()) << " from data node "
                         << sender << ", declared dead";
  return true;
}

void DistributionBlock::on_gcp_prepare_req(Signal& signal) {
  if (from_dead_node(signal)) return;
  round_master_ = signal.sender().node_id;
  prepared_gci_ = signal.word(0);
  send_local(protocol::kCoordinatorBlock, 0, protocol::kGcpBlockReq, signal.word(0));
}

void DistributionBlock::on_gcp_block_conf(Signal& signal) {
  answer_master(protocol::kGcpPrepareConf, signal.word(0));
}

void DistributionBlock::on_gcp_commit_req(Signal& signal) {
  if (from_dead_node(signal)) return;
  round_master_ = signal.sender().node_id;
  prepared_gci_ = 0;
  current_gci_.store(signal.word(0));
  send_local(protocol::kCoordinatorBlock, 0, protocol::kGcpSwitchReq, signal.word(0));
}

void DistributionBlock::on_gcp_no_more_trans(Signal& signal) {
  answer_master(protocol::kGcpCommitConf, signal.word(0));
}

void DistributionBlock::on_gcp_save_req(Signal& signal) {
  if (from_dead_node(signal)) return;
  round_master_ = signal.sender().node_id;
  saving_gci_ = signal.word(0);
  saves_awaited_ = topology_.log_parts;
  for (uint16_t part = 0; part < topology_.log_parts; ++part) {
    send_local(protocol::kLocalQueryBlock, part, protocol::kGcpSaveReq, saving_gci_);
  }
}

void DistributionBlock::on_gcp_complete_rep(Signal& signal) {
  if (from_dead_node(signal)) return;
  round_master_ = signal.sender().node_id;
  const uint32_t gci = signal.word(0);
  if (const uint16_t revived = static_cast<uint16_t>(signal.word(1)); revived != 0) {
    // A restarted node checkpointed before this round and saved its redo of `gci`:
    // from this GCI on it recovers by itself, so the sysfile stops recording it dead.
    if (unrecovered_.erase(revived) != 0 || revived == node_id()) {
      DUO_BLOCK_LOG(INFO) << "data node " << revived << " is recoverable from GCI " << gci;
    }
  }
  if (gci <= last_complete_gci_.load()) {
    // A new master repeating the round's last phase: already durable here.
    return answer_master(protocol::kGcpCompleteConf, gci);
  }
  if (gci <= recorded_gci_) return;  // its write is under way and answers
  recorded_gci_ = gci;
  write_sysfile(gci);
}

void DistributionBlock::on_sysfile_written(uint32_t gci) {
  if (gci <= last_complete_gci_.load()) return;  // a rewrite (a dead node recorded)
  // Complete for this node: a system restart recovers at least to it.
  if (gci > last_complete_gci_.load()) last_complete_gci_.store(gci);
  completed_rounds_.fetch_add(1);
  answer_master(protocol::kGcpCompleteConf, gci);
}

}  // namespace duo::distribution
