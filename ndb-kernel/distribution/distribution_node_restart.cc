// DistributionBlock: node restart (NDB's DBDIH node restart: the starting node catches
// up from the live replica while the cluster keeps serving). See distribution_block.h
// for the rules and docs/formats/kernel-protocol.md "Node restart" for the signals.
//
// On the starting node S, after START_PERMCONF. If its sysfile has a complete GCI G and
// does not list S itself dead (it then died a full replica: every commit up to G is in
// its checkpoint and redo), S recovers locally first: its own schema file
// (DICT_RESTOREREQ: the tables as they were), every instance's rows up to G
// (LQH_RESTOREREQ kRestoreForNodeRestart: no checkpoint after it), then the master's
// schema (DICT_COPYREQ: tables dropped, re-created or altered meanwhile are dropped and
// added empty), then NODE_RESTART_INITREQ keep: the old files go, the rows stay, and
// each instance names the tables whose rows it kept. NODE_RESTART_READYREP carries G and
// those tables, the master passes them in COPY_NODEREQ, and the live replicas send only
// what changed since G. Anything failing in the local recovery falls back to the full
// copy (a WARNING says why): the instances drop what they restored. Without a usable
// recovery point (--initial, no sysfile, S listed dead) it is the full copy from the
// start: wipe, schema, every row. Before any old file goes, the sysfile records S dead
// (durably), so a crash from then on makes the next restart copy everything. Progress
// of the copy (COPY_PROGRESSREP from the instances) feeds start_info() for ALL STATUS
// and a progress line at most every 3 s.
#include <algorithm>
#include <utility>

#include "ndb-kernel/distribution/distribution_block.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/protocol/wire_codec.h"

namespace duo::distribution {

using kernel::BlockAddress;
using kernel::Signal;

namespace {
// How long the master waits before asking its membership block again to include the
// starting node (a failure round was running, or the president moved).
constexpr uint64_t kIncludeRetryMs = 100;
constexpr uint32_t kIncludeAttemptsMax = 100;
// NODE_RESTART_TIMER w0: what to repeat (w1: the generation it belongs to).
constexpr uint32_t kRepeatStartPerm = 1;
constexpr uint32_t kRetryInclude = 2;
constexpr uint32_t kRetryStarted = 3;
// INCLUDE_NODEREF w1 (membership_messages.h IncludeRefusal): the node is a member already.
constexpr uint32_t kIncludeRefusedAlreadyLive = 3;

std::string message_of(const Signal& signal) {
  return std::string(signal.section().begin(), signal.section().end());
}
}  // namespace

std::vector<BlockAddress> DistributionBlock::local_blocks() const {
  std::vector<BlockAddress> blocks{local_address(protocol::kCoordinatorBlock),
                                   local_address(protocol::kDictionaryBlock)};
  for (uint16_t part = 0; part < topology_.log_parts; ++part) {
    blocks.push_back(local_address(protocol::kLocalQueryBlock, part));
  }
  return blocks;
}

uint32_t DistributionBlock::tell_local_blocks(kernel::SignalId id, uint16_t node, uint32_t extra) {
  uint32_t sent = 0;
  for (const BlockAddress& target : local_blocks()) {
    Signal signal(id, {node, extra});
    signal.set_receiver(target);
    if (send(target, std::move(signal)).ok()) ++sent;
  }
  return sent;
}

uint16_t DistributionBlock::node_group_of(uint16_t node) const {
  for (size_t g = 0; g < topology_.node_groups.size(); ++g) {
    const auto& nodes = topology_.node_groups[g];
    if (std::find(nodes.begin(), nodes.end(), node) != nodes.end()) {
      return static_cast<uint16_t>(g);
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------------------
// The starting node

void DistributionBlock::begin_node_restart(uint16_t master) {
  master_ = master;
  started_by_node_restart_.store(true);
  start_state_.store(NodeStartState::kJoining);
  // Its own disk is a usable recovery point if the sysfile has a complete GCI and does
  // not list this node itself dead (it then died as a full replica, with every commit
  // up to that GCI in its checkpoint and redo).
  const bool recover_locally = sysfile_gci_ > 0 && !own_sysfile_lists_self_;
  local_recovery_gci_.store(recover_locally ? sysfile_gci_ : 0);
  DUO_BLOCK_LOG(INFO) << "node restart: the cluster runs without this node (master: node " << master
                      << "); asking to start, "
                      << (recover_locally
                              ? "then recovering locally to GCI " + std::to_string(sysfile_gci_) +
                                    " and copying the rows changed since"
                              : std::string(sysfile_gci_ == 0
                                                ? "no local data (initial node restart)"
                                                : "the sysfile records this node dead (it was "
                                                  "not a full replica)") +
                                    ": its old data is discarded and every row copied");
  // Passive in the heartbeat ring until the master's membership includes this node.
  const BlockAddress membership = local_address(protocol::kMembershipBlock);
  Signal joining(protocol::kMembershipJoining);
  joining.set_receiver(membership);
  send(membership, std::move(joining)).ignore_error();  // no membership block in some tests
  ++node_restart_generation_;
  send_start_perm_req();
}

void DistributionBlock::send_start_perm_req() {
  if (start_state_.load() != NodeStartState::kJoining) return;
  send_to_master(Signal(protocol::kStartPermReq, {node_id()}));
  send_delayed(address(),
               Signal(protocol::kNodeRestartTimer, {kRepeatStartPerm, node_restart_generation_}),
               options_.restart_retry_ms)
      .ignore_error();
}

void DistributionBlock::on_node_restart_timer(Signal& signal) {
  switch (signal.word(0)) {
    case kRepeatStartPerm:
      if (signal.word(1) == node_restart_generation_) send_start_perm_req();
      return;
    case kRetryInclude:
      if (node_restart_ && node_restart_->node == signal.word(1) &&
          node_restart_->step == NodeRestart::Step::kIncluding) {
        request_include();
      }
      return;
    case kRetryStarted:
      send_node_started_if_idle();
      return;
    default:
      return;
  }
}

void DistributionBlock::on_start_perm_ref(Signal& signal) {
  // Another node is restarting, or the master is busy: START_PERMREQ is repeated.
  DUO_BLOCK_LOG(INFO) << "node restart: the master cannot start this node yet: "
                      << message_of(signal);
}

void DistributionBlock::on_start_perm_conf(Signal& signal) {
  if (start_state_.load() != NodeStartState::kJoining) return;  // a repeated answer
  master_ = static_cast<uint16_t>(signal.word(0));
  current_gci_.store(signal.word(1));
  last_complete_gci_.store(signal.word(2));
  recorded_gci_ = signal.word(2);
  // The master's record of dead nodes replaces this node's old one; it lists this node
  // too (dead until it can recover by itself), so the sysfile written from now on does.
  dead_since_.clear();
  unrecovered_.clear();
  protocol::ByteReader in(protocol::as_view(signal.section()));
  uint16_t node = 0;
  uint32_t gci = 0;
  uint8_t live = 0;
  while (in.u16(&node) && in.u32(&gci) && in.u8(&live)) {
    (live != 0 ? unrecovered_ : dead_since_)[node] = gci;
  }
  dead_since_.try_emplace(node_id(), signal.word(1));
  cap_local_recovery_gci(dead_since_.at(node_id()));
  start_state_.store(NodeStartState::kCopying);
  copy_start_ns_ = clock().now_ns();
  DUO_BLOCK_LOG(INFO) << "node restart: allowed by node " << master_ << " at GCI " << signal.word(1)
                      << (local_recovery_gci_.load() > 0 ? "; restoring the local data"
                                                         : "; discarding the old data");
  // The coordinator takes no transaction until the node has started; the other blocks
  // learn the dead nodes.
  tell_local_blocks(protocol::kNodeStartingRep, node_id());
  announce_dead_nodes_locally();
  if (local_recovery_gci_.load() == 0) return start_full_copy();
  // Local recovery: the node's own schema file first (the tables as they were when it
  // died), then every instance restores its rows to G from its checkpoint and redo,
  // then the master's schema replaces it (DICT_COPYREQ drops the tables dropped,
  // re-created or altered meanwhile: they start empty and are copied whole), then the
  // old files go while the rows stay (NODE_RESTART_INITREQ keep).
  local_step_ = LocalRecoveryStep::kRestoringSchema;
  local_restoring_.store(true);
  Signal request(protocol::kDictRestoreReq);
  const BlockAddress dictionary = local_address(protocol::kDictionaryBlock);
  request.set_receiver(dictionary);
  if (Status sent = send(dictionary, std::move(request)); !sent.ok()) {
    fall_back_to_full_copy("cannot reach the dictionary: " + sent.message());
  }
}

void DistributionBlock::cap_local_recovery_gci(uint32_t declared_dead_in) {
  // This node was declared dead while the cluster was in GCI D. Commits of D, and of
  // D - 1 whose round was still completing (a takeover commits there, and a commit
  // waiting for this node counted it done), may miss this node; D - 2 completed with
  // it before (rounds never overlap). Its own sysfile cannot tell: a node frozen past
  // its death that resumed may have recorded later GCIs complete from late answers to
  // its own GCP round before it learned its fate. So local recovery goes at most to
  // D - 2, and the copy brings everything after.
  const uint32_t safe = declared_dead_in > 2 ? declared_dead_in - 2 : 0;
  const uint32_t own = local_recovery_gci_.load();
  if (own <= safe) return;
  DUO_BLOCK_LOG(INFO) << "node restart: declared dead in GCI " << declared_dead_in
                      << ": local recovery to GCI " << safe << ", not " << own
                      << (safe == 0 ? " (none: every row is copied)" : "");
  local_recovery_gci_.store(safe);
}

void DistributionBlock::start_full_copy() {
  local_step_ = LocalRecoveryStep::kNone;
  local_restoring_.store(false);
  local_recovery_gci_.store(0);
  record_self_dead_then_init(0);
}

void DistributionBlock::record_self_dead_then_init(uint32_t init_mode) {
  auto init = [this, init_mode] {
    inits_awaited_ = topology_.log_parts;
    for (uint16_t part = 0; part < topology_.log_parts; ++part) {
      send_local(protocol::kLocalQueryBlock, part, protocol::kNodeRestartInitReq, init_mode);
    }
  };
  // Without a sysfile the disk is no recovery point anyway (a first write torn by a
  // crash would even leave an unreadable one).
  if (sysfile_gci_ == 0) return init();
  // dead_since_ holds this node since START_PERMCONF.
  sysfile_->write(sysfile_payload(recorded_gci_), [this, init](Status written) {
    if (start_state_.load() != NodeStartState::kCopying) return;
    if (!written.ok()) {
      return fail_start(
          "node restart: cannot record this node dead in its sysfile before "
          "discarding its files: " +
          written.message());
    }
    init();
  });
}

void DistributionBlock::fall_back_to_full_copy(const std::string& why) {
  // Never a wrong replica: whatever was restored is dropped (NODE_RESTART_INITREQ
  // without keep), and every row comes from the live replica.
  DUO_BLOCK_LOG(WARNING) << "node restart: local recovery to GCI " << local_recovery_gci_.load()
                         << " failed (" << why << "); copying every row instead";
  start_full_copy();
}

void DistributionBlock::on_local_schema_restored(Signal& signal) {
  if (signal.word(1) != 0) {
    return fall_back_to_full_copy(
        "the schema file could not be read (" +
        std::string(error_info(static_cast<ErrorCode>(std::min<uint32_t>(
                                   signal.word(1), static_cast<uint32_t>(ErrorCode::kInternal))))
                        .name) +
        ")");
  }
  local_step_ = LocalRecoveryStep::kRestoringData;
  local_restores_awaited_ = topology_.log_parts;
  local_restore_failure_.clear();
  for (uint16_t part = 0; part < topology_.log_parts; ++part) {
    const BlockAddress target = local_address(protocol::kLocalQueryBlock, part);
    Signal request(protocol::kLqhRestoreReq,
                   {local_recovery_gci_.load(), protocol::kRestoreForNodeRestart});
    request.set_receiver(target);
    if (!send(target, std::move(request)).ok()) {
      --local_restores_awaited_;
      local_restore_failure_ = "log part " + std::to_string(part) + " cannot be reached";
    }
  }
  if (local_restores_awaited_ == 0) fall_back_to_full_copy(local_restore_failure_);
}

void DistributionBlock::on_local_part_restored(Signal& signal) {
  if (local_restores_awaited_ == 0) return;
  if (signal.word(2) != 0 && local_restore_failure_.empty()) {
    local_restore_failure_ = "log part " + std::to_string(signal.sender().instance) +
                             " could not be restored: " + message_of(signal);
  }
  // Every instance must have stopped restoring before any is wiped.
  if (--local_restores_awaited_ > 0) return;
  if (!local_restore_failure_.empty()) return fall_back_to_full_copy(local_restore_failure_);
  DUO_BLOCK_LOG(INFO) << "node restart: local data restored to GCI " << local_recovery_gci_.load()
                      << "; copying the schema from node " << master_;
  local_step_ = LocalRecoveryStep::kCopyingSchema;
  local_restoring_.store(false);
  send_local(protocol::kDictionaryBlock, 0, protocol::kDictCopyReq, master_);
}

void DistributionBlock::on_node_restart_init_conf(Signal& signal) {
  if (start_state_.load() != NodeStartState::kCopying || inits_awaited_ == 0) return;
  if (signal.word(1) != 0) {
    inits_awaited_ = 0;
    return fail_start("node restart: log part " + std::to_string(signal.sender().instance) +
                      " could not discard its old data: " + message_of(signal));
  }
  if (local_step_ == LocalRecoveryStep::kKeeping) {
    protocol::ByteReader in(protocol::as_view(signal.section()));
    uint32_t table_id = 0, version = 0;
    while (in.u32(&table_id) && in.u32(&version)) ++restored_table_parts_[{table_id, version}];
  }
  if (--inits_awaited_ > 0) return;
  if (local_step_ != LocalRecoveryStep::kKeeping) {
    DUO_BLOCK_LOG(INFO) << "node restart: local data discarded; copying the schema from node "
                        << master_;
    send_local(protocol::kDictionaryBlock, 0, protocol::kDictCopyReq, master_);
    return;
  }
  // The tables every instance kept restored rows of: the live replicas send only the
  // rows of those changed since G.
  fs_client::Bytes restored;
  uint32_t tables = 0;
  for (const auto& [table, parts] : restored_table_parts_) {
    if (parts != topology_.log_parts) continue;
    protocol::put_u32(&restored, table.first);
    protocol::put_u32(&restored, table.second);
    ++tables;
  }
  local_step_ = LocalRecoveryStep::kCopying;
  DUO_BLOCK_LOG(INFO) << "node restart: old checkpoint and redo discarded, rows of " << tables
                      << " table(s) kept as of GCI " << local_recovery_gci_.load()
                      << "; waiting for the changed rows";
  Signal ready(protocol::kNodeRestartReadyRep, {node_id(), local_recovery_gci_.load()});
  ready.set_section(std::move(restored));
  send_to_master(std::move(ready));
}

void DistributionBlock::on_dict_copy_conf(Signal& signal) {
  if (start_state_.load() != NodeStartState::kCopying) return;
  if (local_step_ == LocalRecoveryStep::kCopyingSchema) {
    DUO_BLOCK_LOG(INFO) << "node restart: schema copied (" << signal.word(0)
                        << " tables); discarding the old checkpoint and redo files";
    local_step_ = LocalRecoveryStep::kKeeping;
    restored_table_parts_.clear();
    record_self_dead_then_init(protocol::kNodeRestartKeepRestored);
    return;
  }
  DUO_BLOCK_LOG(INFO) << "node restart: schema copied (" << signal.word(0)
                      << " tables); waiting for the rows";
  send_to_master(Signal(protocol::kNodeRestartReadyRep, {node_id(), 0}));
}

void DistributionBlock::on_copy_progress_rep(Signal& signal) {
  if (start_state_.load() != NodeStartState::kCopying) return;
  PartProgress& part = copy_progress_[static_cast<uint16_t>(signal.word(0))];
  part.fragments = signal.word(1);
  part.fragments_done = signal.word(2);
  part.full_rows = static_cast<uint64_t>(signal.word(3)) | (uint64_t{signal.word(4)} << 32);
  part.key_rows = static_cast<uint64_t>(signal.word(5)) | (uint64_t{signal.word(6)} << 32);
  PartProgress total;
  for (const auto& [instance, p] : copy_progress_) {
    total.fragments += p.fragments;
    total.fragments_done += p.fragments_done;
    total.full_rows += p.full_rows;
    total.key_rows += p.key_rows;
  }
  progress_fragments_.store(total.fragments);
  progress_fragments_done_.store(total.fragments_done);
  progress_full_rows_.store(total.full_rows);
  progress_key_rows_.store(total.key_rows);
  const uint64_t now_ns = clock().now_ns();
  if (now_ns - progress_logged_ns_ < 3 * kNanosPerSecond) return;
  const uint64_t rows = total.full_rows + total.key_rows;
  const double seconds = static_cast<double>(now_ns - progress_logged_ns_) / 1e9;
  const double rate =
      progress_logged_ns_ == 0 ? 0.0 : static_cast<double>(rows - progress_logged_rows_) / seconds;
  progress_logged_ns_ = now_ns;
  progress_logged_rows_ = rows;
  DUO_BLOCK_LOG(INFO) << start_info() << ", " << static_cast<uint64_t>(rate) << " rows/s";
}

void DistributionBlock::on_dict_copy_ref(Signal& signal) {
  if (start_state_.load() != NodeStartState::kCopying) return;
  fail_start("node restart: the schema could not be copied from node " + std::to_string(master_) +
             ": " + message_of(signal));
}

void DistributionBlock::on_lcp_start_conf(Signal& signal) {
  if (lcps_awaited_ == 0) return;
  if (signal.word(2) != 0) {
    // The node runs, but cannot yet recover by itself; the next checkpoint (after
    // enough redo) may. The sysfile keeps it recorded dead meanwhile.
    lcps_awaited_ = 0;
    DUO_BLOCK_LOG(WARNING) << "node restart: the first local checkpoint failed (log part "
                           << signal.sender().instance
                           << "); this node stays recorded dead until a system restart";
    return;
  }
  if (--lcps_awaited_ > 0) return;
  DUO_BLOCK_LOG(INFO) << "node restart: first local checkpoint done; recoverable from the next "
                         "complete GCI";
  send_to_master(Signal(protocol::kNodeRecoverableRep, {node_id()}));
}

// ---------------------------------------------------------------------------------------
// The master

void DistributionBlock::on_start_perm_req(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (node != signal.sender().node_id) return;
  const auto refuse = [&](const std::string& why) {
    Signal ref(protocol::kStartPermRef, {static_cast<uint32_t>(ErrorCode::kTemporary)});
    ref.set_section(fs_client::Bytes(why.begin(), why.end()));
    ref.set_receiver(signal.sender());
    send(signal.sender(), std::move(ref)).ignore_error();
  };
  if (!is_master() || start_state_.load() != NodeStartState::kStarted) {
    return refuse("node " + std::to_string(node_id()) + " is not the running master");
  }
  if (!is_dead(node)) return refuse("the cluster has not yet declared it dead");
  if (master_takeover_) return refuse("the master is taking over a GCP round");
  if (node_restart_) {
    if (node_restart_->node != node) {
      return refuse("node " + std::to_string(node_restart_->node) + " is restarting");
    }
    return;  // a repeated request: the answer follows when the include is done
  }
  node_restart_ = NodeRestart{};
  node_restart_->node = node;
  node_restart_->start_ns = clock().now_ns();
  DUO_BLOCK_LOG(INFO) << "node restart of data node " << node
                      << ": locking the schema, then including it";
  send_local(protocol::kDictionaryBlock, 0, protocol::kDictLockReq, node);
}

void DistributionBlock::on_dict_lock_conf(Signal& signal) {
  if (!node_restart_ || node_restart_->node != signal.word(0) ||
      node_restart_->step != NodeRestart::Step::kLockingSchema) {
    return;
  }
  node_restart_->step = NodeRestart::Step::kIncluding;
  request_include();
}

void DistributionBlock::request_include() {
  const BlockAddress membership = local_address(protocol::kMembershipBlock);
  Signal request(protocol::kIncludeNodeReq, {node_restart_->node});
  request.set_receiver(membership);
  if (!send(membership, std::move(request)).ok()) {
    // No membership block (simulator tests without heartbeats): nothing to join.
    Signal conf(protocol::kIncludeNodeConf, {node_restart_->node});
    conf.set_sender(membership);
    on_include_node_conf(conf);
  }
}

void DistributionBlock::on_include_node_ref(Signal& signal) {
  if (!node_restart_ || node_restart_->node != signal.word(0)) return;
  if (signal.word(1) == kIncludeRefusedAlreadyLive) {
    // A failure round after a president's death kept the node included: done.
    Signal conf(protocol::kIncludeNodeConf, {node_restart_->node});
    conf.set_sender(signal.sender());
    return on_include_node_conf(conf);
  }
  if (++node_restart_->include_attempts > kIncludeAttemptsMax) {
    // The starting node asks again (START_PERMREQ repeats): start over then.
    return abort_node_restart("its membership include was refused " +
                              std::to_string(kIncludeAttemptsMax) + " times (reason " +
                              std::to_string(signal.word(1)) + ")");
  }
  send_delayed(address(), Signal(protocol::kNodeRestartTimer, {kRetryInclude, node_restart_->node}),
               kIncludeRetryMs)
      .ignore_error();
}

void DistributionBlock::on_include_node_conf(Signal& signal) {
  if (!node_restart_ || node_restart_->node != signal.word(0) ||
      node_restart_->step != NodeRestart::Step::kIncluding) {
    return;
  }
  node_restart_->step = NodeRestart::Step::kPreparing;
  // The sysfile's record: dead nodes, and live ones back from a node restart that are
  // still recorded dead until they can recover by themselves (flag 1).
  fs_client::Bytes dead;
  for (const auto& [node, since] : dead_since_) {
    protocol::put_u16(&dead, node);
    protocol::put_u32(&dead, since);
    protocol::put_u8(&dead, 0);
  }
  for (const auto& [node, since] : unrecovered_) {
    protocol::put_u16(&dead, node);
    protocol::put_u32(&dead, since);
    protocol::put_u8(&dead, 1);
  }
  const BlockAddress target{node_restart_->node, protocol::kDistributionBlock, 0};
  Signal conf(protocol::kStartPermConf,
              {node_id(), current_gci_.load(), last_complete_gci_.load()});
  conf.set_section(std::move(dead));
  conf.set_receiver(target);
  send(target, std::move(conf)).ignore_error();  // lost: the node fails and is declared dead
  DUO_BLOCK_LOG(INFO) << "node restart of data node " << node_restart_->node
                      << ": in the heartbeat ring; it discards its data and copies the schema";
}

void DistributionBlock::on_node_restart_ready_rep(Signal& signal) {
  const uint16_t node = signal.sender().node_id;
  if (!node_restart_ || node_restart_->node != node ||
      node_restart_->step != NodeRestart::Step::kPreparing) {
    return;
  }
  node_restart_->since_gci = signal.word(1);
  node_restart_->restored_tables = signal.section();
  // Every live node (and the starting one) routes the starting node's writes to it
  // before any row is copied.
  node_restart_->step = NodeRestart::Step::kStarting;
  node_restart_->awaiting.clear();
  for (uint16_t peer : data_nodes_) {
    if (is_dead(peer) && peer != node) continue;
    const BlockAddress target{peer, protocol::kDistributionBlock, 0};
    Signal rep(protocol::kNodeStartingRep, {node});
    rep.set_receiver(target);
    if (send(target, std::move(rep)).ok()) node_restart_->awaiting.insert(peer);
  }
}

void DistributionBlock::on_copy_node_conf(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (signal.sender().node_id == node_id() && signal.sender().block == protocol::kLocalQueryBlock) {
    // One of this node's instances finished its share of a copy.
    if (copies_awaited_ == 0 || node != copy_node_) return;
    copy_fragments_ += signal.word(1);
    copy_rows_ +=
        static_cast<uint64_t>(signal.word(2)) | (static_cast<uint64_t>(signal.word(3)) << 32);
    if (--copies_awaited_ > 0) return;
    Signal conf(protocol::kCopyNodeConf, {node, copy_fragments_, static_cast<uint32_t>(copy_rows_),
                                          static_cast<uint32_t>(copy_rows_ >> 32)});
    conf.set_receiver(copy_requester_);
    send(copy_requester_, std::move(conf)).ignore_error();
    return;
  }
  if (!node_restart_ || node_restart_->node != node ||
      node_restart_->step != NodeRestart::Step::kCopying) {
    return;
  }
  node_restart_->rows +=
      static_cast<uint64_t>(signal.word(2)) | (static_cast<uint64_t>(signal.word(3)) << 32);
  node_restart_->awaiting.erase(signal.sender().node_id);
  if (!node_restart_->awaiting.empty()) return;
  node_restart_->step = NodeRestart::Step::kStarted;
  send_node_started_if_idle();
}

void DistributionBlock::on_copy_node_ref(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (signal.sender().node_id == node_id() && signal.sender().block == protocol::kLocalQueryBlock) {
    if (copies_awaited_ == 0 || node != copy_node_) return;
    copies_awaited_ = 0;
    Signal ref(protocol::kCopyNodeRef, {node, signal.word(1)});
    ref.set_section(signal.section());
    ref.set_receiver(copy_requester_);
    send(copy_requester_, std::move(ref)).ignore_error();
    return;
  }
  if (!node_restart_ || node_restart_->node != node) return;
  // The starting node cannot become a replica: it must not go on half-copied. It is
  // told to stop; its failure is then handled as any node's.
  const std::string why = "copying to data node " + std::to_string(node) + " failed on node " +
                          std::to_string(signal.sender().node_id) + ": " + message_of(signal);
  const BlockAddress target{node, protocol::kDistributionBlock, 0};
  Signal stop(protocol::kRestartGciRep, {0, 1});
  stop.set_section(fs_client::Bytes(why.begin(), why.end()));
  stop.set_receiver(target);
  send(target, std::move(stop)).ignore_error();
  DUO_BLOCK_LOG(ERROR) << "node restart: " << why;
}

void DistributionBlock::send_node_started_if_idle() {
  if (!node_restart_ || node_restart_->step != NodeRestart::Step::kStarted ||
      node_restart_->started_sent) {
    return;
  }
  // Between GCP rounds, so the starting node joins the next round from its first
  // phase; no round starts until every node has answered (see on_gcp_timer).
  if (phase_ != Phase::kIdle || master_takeover_) {
    send_delayed(address(), Signal(protocol::kNodeRestartTimer, {kRetryStarted}), 10)
        .ignore_error();
    return;
  }
  const uint16_t node = node_restart_->node;
  node_restart_->started_sent = true;
  node_restart_->awaiting.clear();
  // The nodes still unrecovered: the starting node heard no GCP_COMPLETEREP while it
  // copied, so it may still list a node that became recoverable meanwhile.
  fs_client::Bytes unrecovered;
  for (const auto& [peer, since] : unrecovered_) {
    protocol::put_u16(&unrecovered, peer);
    protocol::put_u32(&unrecovered, since);
  }
  for (uint16_t peer : data_nodes_) {
    if (is_dead(peer) && peer != node) continue;
    const BlockAddress target{peer, protocol::kDistributionBlock, 0};
    Signal rep(protocol::kNodeStartedRep, {node, current_gci_.load()});
    rep.set_section(unrecovered);
    rep.set_receiver(target);
    if (send(target, std::move(rep)).ok()) node_restart_->awaiting.insert(peer);
  }
}

void DistributionBlock::finish_node_restart() {
  const NodeRestart done = *node_restart_;
  node_restart_.reset();
  send_local(protocol::kDictionaryBlock, 0, protocol::kDictUnlockReq, done.node);
  node_restarts_completed_.fetch_add(1);
  const double seconds = static_cast<double>(clock().now_ns() - done.start_ns) / 1e9;
  DUO_BLOCK_LOG(INFO) << "node restart of data node " << done.node << " complete: " << done.rows
                      << " rows copied, " << seconds << " s; it serves again from GCI "
                      << current_gci_.load();
  // The master may have moved to the restarted node (the lowest live one): the new
  // master runs the rounds from here on.
  if (is_master()) {
    send_delayed(address(), Signal(protocol::kGcpTimer), options_.gcp_interval_ms).ignore_error();
  }
}

void DistributionBlock::on_node_recoverable_rep(Signal& signal) {
  const uint16_t node = signal.sender().node_id;
  if (unrecovered_.count(node) == 0) return;
  if (!is_master()) {
    // The master moved meanwhile: pass it on.
    send_to_master(Signal(protocol::kNodeRecoverableRep, {node}));
    return;
  }
  // Two restarted nodes may report in the same round (one restarted while the other
  // was not yet recoverable): neither report may be lost.
  if (revive_next_round_ != 0 && revive_next_round_ != node) {
    revive_later_.insert(node);
    return;
  }
  revive_next_round_ = node;
}

void DistributionBlock::abort_node_restart(const std::string& why) {
  if (!node_restart_) return;
  DUO_BLOCK_LOG(WARNING) << "node restart of data node " << node_restart_->node
                         << " abandoned: " << why;
  send_local(protocol::kDictionaryBlock, 0, protocol::kDictUnlockReq, node_restart_->node);
  node_restart_.reset();
  if (is_master() && phase_ == Phase::kIdle) {
    send_delayed(address(), Signal(protocol::kGcpTimer), options_.gcp_interval_ms).ignore_error();
  }
}

// ---------------------------------------------------------------------------------------
// Every node

void DistributionBlock::on_node_starting_rep(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  // Its next death needs a takeover of its own (the coordinator forgets it too).
  takeovers_done_.erase(node);
  local_answer_to_ = signal.sender();
  local_answer_id_ = protocol::kNodeStartingConf;
  local_answer_node_ = node;
  local_answers_awaited_ = tell_local_blocks(protocol::kNodeStartingRep, node);
  if (local_answers_awaited_ == 0) {
    Signal conf(protocol::kNodeStartingConf, {node});
    conf.set_receiver(local_answer_to_);
    send(local_answer_to_, std::move(conf)).ignore_error();
  }
}

void DistributionBlock::on_node_starting_conf(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (signal.sender().node_id == node_id() &&
      signal.sender().block != protocol::kDistributionBlock) {
    if (local_answers_awaited_ == 0 || local_answer_id_ != protocol::kNodeStartingConf ||
        node != local_answer_node_) {
      return;  // the starting node's own early announcement
    }
    if (--local_answers_awaited_ > 0) return;
    Signal conf(protocol::kNodeStartingConf, {node});
    conf.set_receiver(local_answer_to_);
    send(local_answer_to_, std::move(conf)).ignore_error();
    return;
  }
  if (!node_restart_ || node_restart_->node != node ||
      node_restart_->step != NodeRestart::Step::kStarting) {
    return;
  }
  node_restart_->awaiting.erase(signal.sender().node_id);
  if (!node_restart_->awaiting.empty()) return;
  // Every node writes to the starting node: the copy may begin, from every live node of
  // its group (each copies the fragments it is primary of).
  node_restart_->step = NodeRestart::Step::kCopying;
  const auto& group = topology_.node_groups[node_group_of(node)];
  for (uint16_t peer : group) {
    if (peer == node || is_dead(peer)) continue;
    const BlockAddress target{peer, protocol::kDistributionBlock, 0};
    Signal request(protocol::kCopyNodeReq, {node, node_restart_->since_gci});
    request.set_section(node_restart_->restored_tables);
    request.set_receiver(target);
    if (send(target, std::move(request)).ok()) node_restart_->awaiting.insert(peer);
  }
  DUO_BLOCK_LOG(INFO) << "node restart of data node " << node << ": every node writes to it; "
                      << "copying rows from " << node_restart_->awaiting.size()
                      << " node(s) of its group"
                      << (node_restart_->since_gci > 0
                              ? " (changed since GCI " + std::to_string(node_restart_->since_gci) +
                                    ", which it restored locally)"
                              : " (every row)");
  if (node_restart_->awaiting.empty()) abort_node_restart("no live node can copy to it");
}

void DistributionBlock::on_copy_node_req(Signal& signal) {
  copy_requester_ = signal.sender();
  copy_node_ = static_cast<uint16_t>(signal.word(0));
  copy_rows_ = 0;
  copy_fragments_ = 0;
  copies_awaited_ = topology_.log_parts;
  for (uint16_t part = 0; part < topology_.log_parts; ++part) {
    const BlockAddress target = local_address(protocol::kLocalQueryBlock, part);
    Signal request(protocol::kCopyNodeReq, {copy_node_, signal.word(1)});
    request.set_section(signal.section());
    request.set_receiver(target);
    send(target, std::move(request)).ignore_error();
  }
}

void DistributionBlock::on_node_started_rep(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  const uint32_t gci = signal.word(1);
  // The restarted node runs: it takes part in GCP rounds, may be primary and master.
  // The sysfile keeps it recorded dead until it can recover by itself.
  if (auto dead = dead_since_.find(node); dead != dead_since_.end()) {
    unrecovered_[node] = dead->second;
    dead_since_.erase(dead);
  }
  if (node == node_id() && start_state_.load() == NodeStartState::kCopying) {
    // The master's record of the nodes not yet recoverable replaces this node's (taken
    // at START_PERMCONF): some may have become recoverable while it copied.
    std::map<uint16_t, uint32_t> unrecovered;
    protocol::ByteReader in(protocol::as_view(signal.section()));
    uint16_t peer = 0;
    uint32_t since = 0;
    while (in.u16(&peer) && in.u32(&since)) unrecovered[peer] = since;
    if (auto self = unrecovered_.find(node_id()); self != unrecovered_.end()) {
      unrecovered.insert(*self);
    }
    unrecovered_ = std::move(unrecovered);
  }
  master_ = lowest_live_node();
  local_answer_to_ = signal.sender();
  local_answer_id_ = protocol::kNodeStartedConf;
  local_answer_node_ = node;
  local_answers_awaited_ = tell_local_blocks(protocol::kNodeStartedRep, node, gci);
  if (node == node_id() && start_state_.load() == NodeStartState::kCopying) {
    current_gci_.store(gci);
    send_local(protocol::kCoordinatorBlock, 0, protocol::kGcpSwitchReq, gci);
    start_state_.store(NodeStartState::kStarted);
    const double seconds = static_cast<double>(clock().now_ns() - copy_start_ns_) / 1e9;
    // One line that says how the node caught up (tests grep it).
    DUO_BLOCK_LOG(INFO)
        << "node restart: started in GCI " << gci << " after " << seconds << " s; "
        << (local_recovery_gci_.load() > 0
                ? "recovered locally to GCI " + std::to_string(local_recovery_gci_.load()) +
                      ", copied only changed rows: " + std::to_string(progress_full_rows_.load()) +
                      " rows whole, " + std::to_string(progress_key_rows_.load()) + " unchanged"
                : "copied every row: " + std::to_string(progress_full_rows_.load()) + " rows")
        << "; taking a local checkpoint";
    lcps_awaited_ = topology_.log_parts;
    for (uint16_t part = 0; part < topology_.log_parts; ++part) {
      send_local(protocol::kLocalQueryBlock, part, protocol::kLcpStartReq, 0);
    }
  }
  if (node == node_id() && is_master()) {
    // The restarted node is now the lowest live one: it runs the GCP rounds.
    send_delayed(address(), Signal(protocol::kGcpTimer), options_.gcp_interval_ms).ignore_error();
  }
  if (local_answers_awaited_ == 0) {
    Signal conf(protocol::kNodeStartedConf, {node});
    conf.set_receiver(local_answer_to_);
    send(local_answer_to_, std::move(conf)).ignore_error();
  }
}

void DistributionBlock::on_node_started_conf(Signal& signal) {
  const uint16_t node = static_cast<uint16_t>(signal.word(0));
  if (signal.sender().node_id == node_id() &&
      signal.sender().block != protocol::kDistributionBlock) {
    if (local_answers_awaited_ == 0 || local_answer_id_ != protocol::kNodeStartedConf ||
        node != local_answer_node_) {
      return;
    }
    if (--local_answers_awaited_ > 0) return;
    Signal conf(protocol::kNodeStartedConf, {node});
    conf.set_receiver(local_answer_to_);
    send(local_answer_to_, std::move(conf)).ignore_error();
    return;
  }
  if (!node_restart_ || node_restart_->node != node || !node_restart_->started_sent) return;
  node_restart_->awaiting.erase(signal.sender().node_id);
  if (node_restart_->awaiting.empty()) finish_node_restart();
}

// ---------------------------------------------------------------------------------------
// Progress (any thread: atomics only)

std::string DistributionBlock::start_info() const {
  const NodeStartState state = start_state_.load();
  if (state != NodeStartState::kCopying) return node_start_state_name(state);
  const uint32_t fragments = progress_fragments_.load();
  const uint32_t done = progress_fragments_done_.load();
  const uint64_t full_rows = progress_full_rows_.load();
  const uint64_t key_rows = progress_key_rows_.load();
  const uint32_t since = local_recovery_gci_.load();
  if (local_restoring_.load()) {
    return "node restart: restoring this node's own data to GCI " + std::to_string(since);
  }
  std::string info = since > 0 ? "node restart: recovered locally to GCI " + std::to_string(since) +
                                     ", copying changed rows: "
                               : std::string("node restart: copying rows: ");
  const uint32_t percent = fragments == 0 ? 0 : std::min<uint32_t>(100, 100 * done / fragments);
  info += std::to_string(percent) + "% (" + std::to_string(done) + " of " +
          std::to_string(fragments) + " fragments, " + std::to_string(full_rows) + " rows";
  if (since > 0) info += ", " + std::to_string(key_rows) + " unchanged";
  return info + ")";
}

}  // namespace duo::distribution
