// duo_datad: the DuoDB data node process (ndbmtd). This increment joins the cluster:
// it takes its node id from duo_mgmd (`get nodeid`, nodetype ndbd) and keeps that
// session for its whole life, fetches and parses the configuration (`get config`),
// prepares DataDir and its file system directory, starts the block runtime with the
// automatic thread layout and a Transporter to the other data nodes (whose I/O loop the
// runtime's receive thread runs: transporter_poller.h), and reports its
// state and start phase to mgmd (`report status`) until it is told to stop (`node stop`
// from mgmd, or SIGTERM/SIGINT). Protocol: docs/formats/mgm-protocol.md.
//
// Start phases: 0 configuration and directories ready, 1 memory budget allocated
// (GlobalMemory; failure ends the start) and block threads running (file system,
// distribution, dictionary, coordinator, one local_query per log part), 2 transporter
// listening and its port reported, 3 links to every other configured data node up,
// 4 the blocks' system restart done (every data node agreed on the last complete GCI,
// schema, checkpoint and redo restored up to it; an empty file system is an initial
// start); then the node is STARTED. Restarting one node while the others run (node
// recovery) is the failover issue.
//
// A lost mgmd connection is logged and retried with bounded backoff (100 ms doubling to
// 5 s); the node keeps running meanwhile and takes its id again when mgmd is back.
//
// Node failure: the membership block (NDB's QMGR, ndb-kernel/membership) heartbeats the
// other data nodes and decides, together with them, which data nodes failed; only then
// do the coordinator, dictionary, distribution and local_query blocks get NODE_FAILREP.
// A closed link to a data node is reported to it (LINK_DOWN_REP) as an immediate
// suspicion; a closed link to an API node is reported to the membership block
// (API_FAILREQ), which holds the API node back — its signals dropped, its reconnection
// refused here — until the coordinator and dictionary have cleaned up after it. When
// the survivors need the arbitrator, the membership block asks the ArbitratorProxy
// block, which this loop serves from its mgmd session (`arbitrate`). Declared failures
// and arbitration results go to the cluster log (`report event`); the link to a node
// declared dead is closed (Transporter::disconnect), so that what its old process still
// had in flight is never read. Whatever that process sends later, on a new link, the
// membership block's SignalGate drops on this node's runtime (every signal but the
// start protocol, until the node is included again: kernel-protocol.md "Dead nodes'
// signals"); the membership block installs it itself, nothing to wire here.
// A node that must stop (declared dead by the others, arbitration lost, a node group
// lost) raises shutdown_requested(); this loop then stops the node with exit code 1 and
// the reason in its log. The watchdog (watchdog_thread.h, its own thread from the
// runtime's start to the stop) logs a block thread stuck in one handler past
// TimeBetweenWatchDogCheck and exits the process at once past three times that.
//
// Thread-safety: the main thread runs the control loop below; the runtime owns the block
// threads, whose receive thread also runs the transporter's loop; the watchdog thread
// only reads the runtime's activity counters. The stop signals only set a flag
// (install_stop_flag).
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mgmd/client/mgm_commands.h"
#include "mgmd/client/mgm_connection.h"
#include "mgmd/protocol/mgm_protocol.h"
#include "ndb-kernel/common/config/config_parser.h"
#include "ndb-kernel/common/crc32c.h"
#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/common/process.h"
#include "ndb-kernel/coordinator/coordinator_block.h"
#include "ndb-kernel/datad/arbitrator_proxy.h"
#include "ndb-kernel/datad/data_node_config.h"
#include "ndb-kernel/datad/initial_disk_objects.h"
#include "ndb-kernel/datad/watchdog_thread.h"
#include "ndb-kernel/dictionary/dictionary_block.h"
#include "ndb-kernel/distribution/distribution_block.h"
#include "ndb-kernel/fs/file_system_block.h"
#include "ndb-kernel/local_query/local_query_block.h"
#include "ndb-kernel/membership/membership_block.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/distribution.h"
#include "ndb-kernel/protocol/signal_ids.h"
#include "ndb-kernel/runtime/thread_layout.h"
#include "ndb-kernel/runtime/thread_runtime.h"
#include "ndb-kernel/transport/tls_files.h"
#include "ndb-kernel/transport/transporter.h"
#include "ndb-kernel/transport/transporter_poller.h"
#include "storage/memory/global_memory.h"

#ifndef DUO_VERSION
#define DUO_VERSION "0.0.0"
#endif

namespace duo::datad {
namespace {

constexpr int kExitError = 1;
// A starting node's handlers may run long (restores, copies): the watchdog stops it only
// after a minute of one handler (NDB's TimeBetweenWatchDogCheckInitial plays this part).
constexpr uint64_t kWatchdogStartingStopMs = 60'000;
constexpr int kExitUsage = 2;
constexpr const char* kLog = "datad";

// Timing of the control loop. Reports keep the session alive (mgmd's idle timeout is
// minutes) and keep `duo_mgm SHOW` fresh; status polls learn peers' ports while starting.
constexpr uint64_t kReportIntervalMs = 1000;
constexpr uint64_t kStatusPollIntervalMs = 500;
constexpr uint64_t kProgressLogIntervalMs = 5000;
constexpr uint64_t kLoopWaitMs = 100;
constexpr uint64_t kMgmCallTimeoutMs = 5000;
constexpr uint64_t kReconnectDelayMinMs = 100;
constexpr uint64_t kReconnectDelayMaxMs = 5000;
// How long a stopping node lets its links carry the stop announcement.
constexpr uint64_t kStopAnnounceMs = 100;
// A planned stop waits for the open GCI to complete: two GCP intervals and this margin.
constexpr uint64_t kFinalGcpMarginMs = 1000;
constexpr uint64_t kFinalGcpPollMs = 20;

struct Options {
  std::string connect_string = "localhost:1186";
  uint32_t node_id = 0;
  bool initial = false;
  bool foreground = false;
  // Start-up connection attempts to mgmd before giving up (0 = forever). Once the node
  // runs, a lost mgmd is retried forever.
  uint64_t connect_retries = 12;
  std::string log_level = "info";
  // TLS key directories (NDB's --ndb-tls-search-path); empty: <DataDir>/tls.
  std::string tls_search_path;
  // From the node's section (RequireTls), with the key material loaded in phase 0.
  bool require_tls = false;
  transport::TlsMaterial tls;
};

uint64_t monotonic_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Sleeps about `ms` (a signal may cut it short).
void sleep_ms(uint64_t ms) { ::poll(nullptr, 0, static_cast<int>(ms)); }

// Sleeps up to `ms`, returning early on a stop signal (poll returns EINTR).
void interruptible_sleep(uint64_t ms) {
  const uint64_t deadline = monotonic_ms() + ms;
  while (!stop_requested()) {
    const uint64_t now = monotonic_ms();
    if (now >= deadline) return;
    ::poll(nullptr, 0, static_cast<int>(std::min<uint64_t>(deadline - now, 100)));
  }
}

void print_usage() {
  std::printf(
      "Usage: duo_datad [options]\n"
      "  -c, --ndb-connectstring=HOST:PORT  management server (default localhost:1186)\n"
      "  --ndb-nodeid=N               this data node's id (default: any free data node id)\n"
      "  --initial                    clear the node's file system directory first\n"
      "  --foreground, --nodaemon     stay in the foreground and log to stderr\n"
      "  --connect-retries=N          start-up attempts to reach mgmd (default 12; 0 = forever)\n"
      "  --log-level=LEVEL            error, warning, info (default), debug\n"
      "  --ndb-tls-search-path=DIRS   TLS keys, ':'-separated (default <DataDir>/tls);\n"
      "                               used when the node's section has RequireTls=1\n"
      "  -V, --version, -h, --help\n");
}

bool parse_args(int argc, char** argv, Options* options) {
  for (ArgCursor args(argc, argv); args.next();) {
    const std::string arg = args.name();
    std::string value;
    auto take_value = [&]() { return args.take_value(&value); };
    if (arg == "-h" || arg == "--help") {
      print_usage();
      std::exit(0);
    } else if (arg == "-V" || arg == "--version") {
      std::printf("duo_datad DuoDB-%s\n", DUO_VERSION);
      std::exit(0);
    } else if (arg == "-c" || arg == "--ndb-connectstring" || arg == "--connect-string") {
      if (!take_value()) return false;
      options->connect_string = value;
    } else if (arg == "--ndb-nodeid") {
      if (!take_value()) return false;
      auto id = mgm::parse_uint_arg(value, config::kDataNodeIdMax);
      if (!id || *id == 0) return false;
      options->node_id = static_cast<uint32_t>(*id);
    } else if (arg == "--initial") {
      options->initial = true;
    } else if (arg == "--foreground" || arg == "--nodaemon") {
      options->foreground = true;
    } else if (arg == "--connect-retries") {
      if (!take_value()) return false;
      auto n = mgm::parse_uint_arg(value, UINT32_MAX);
      if (!n) return false;
      options->connect_retries = *n;
    } else if (arg == "--log-level") {
      if (!take_value()) return false;
      options->log_level = value;
    } else if (arg == "--ndb-tls-search-path") {
      if (!take_value()) return false;
      options->tls_search_path = value;
    } else {
      std::fprintf(stderr, "duo_datad: unknown option '%s'\n", arg.c_str());
      return false;
    }
  }
  return true;
}

uint32_t version_number() {
  unsigned major = 0, minor = 0, patch = 0;
  std::sscanf(DUO_VERSION, "%u.%u.%u", &major, &minor, &patch);
  return (major << 16) | (minor << 8) | patch;
}

// Connects and takes node id `wanted` (0 = any data node id). The session then owns it.
Result<uint32_t> connect_and_allocate(mgm::MgmConnection& connection,
                                      const mgm::ConnectString& target, uint32_t wanted) {
  DUO_RETURN_IF_ERROR(connection.connect(target, kMgmCallTimeoutMs));
  mgm::Message request;
  request.head = "get nodeid";
  request.add("nodetype", "ndbd");
  request.add("nodeid", wanted);
  request.add("name", "duo_datad");
  request.add("version", version_number());
  request.add("endian", "little");
  DUO_ASSIGN_OR_RETURN(mgm::Message reply, connection.call(request, kMgmCallTimeoutMs));
  if (Status result = mgm::reply_result(reply); !result.ok()) {
    connection.close();
    return Status(ErrorCode::kConfigError, "node id allocation refused: " + result.message());
  }
  const std::string* id_text = reply.find("nodeid");
  auto id =
      id_text != nullptr ? mgm::parse_uint_arg(*id_text, config::kDataNodeIdMax) : std::nullopt;
  if (!id || *id == 0) {
    connection.close();
    return Status(ErrorCode::kInvalidArgument, "get nodeid reply without a valid nodeid");
  }
  return static_cast<uint32_t>(*id);
}

// Data node peers whose link went down (other than by Transporter::disconnect) since
// this node last declared them dead: their connection, if any, is a new one. Written on
// the transporter's thread, read by the control loop.
class LinkDownHistory {
 public:
  void link_down(uint16_t node) {
    std::lock_guard<std::mutex> lock(mutex_);
    down_.insert(node);
  }
  // True if `node`'s link went down since the last take(node).
  bool take(uint16_t node) {
    std::lock_guard<std::mutex> lock(mutex_);
    return down_.erase(node) != 0;
  }

 private:
  std::mutex mutex_;
  std::set<uint16_t> down_;  // GUARDED_BY(mutex_)
};

// Failure reports (LINK_DOWN_REP, API_FAILREQ) for blocks of this node, sent from the
// thread that runs the transporter's loop. A report that meets a full queue is kept and
// sent again by the control loop: losing one would leave a dead client's locks held
// until its transactions time out, or a dead data node undetected until its heartbeats
// are missed; and waiting here for the queue to drain could wait forever, because the
// transporter may be polled by the very thread whose queue is full.
class NodeReports {
 public:
  explicit NodeReports(kernel::ThreadRuntime* runtime, uint16_t own_id)
      : runtime_(runtime), own_id_(own_id) {}

  void send(uint16_t block, kernel::SignalId id, uint16_t node) {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.push_back(Report{block, id, node});
    flush_locked();
  }
  // The control loop: sends what an earlier full queue kept back.
  void flush() {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_locked();
  }

 private:
  struct Report {
    uint16_t block;
    kernel::SignalId id;
    uint16_t node;
  };
  void flush_locked() {
    while (!pending_.empty()) {
      const Report& report = pending_.front();
      kernel::Signal signal(report.id, {report.node});
      signal.set_sender(kernel::BlockAddress{own_id_, 0, 0});
      signal.set_receiver(kernel::BlockAddress{own_id_, report.block, 0});
      if (runtime_->send_from_outside(std::move(signal)).is(ErrorCode::kTemporary)) return;
      pending_.erase(pending_.begin());  // sent (or undeliverable: nothing to retry)
    }
  }

  kernel::ThreadRuntime* const runtime_;
  const uint16_t own_id_;
  std::mutex mutex_;
  std::vector<Report> pending_;  // GUARDED_BY(mutex_), in order
};

// The running node: the control loop state.
class DataNode {
 public:
  DataNode(Options options, mgm::ConnectString target, DataNodeConfig config,
           protocol::ClusterTopology topology, std::string cluster_secret, std::string fs_dir)
      : options_(std::move(options)),
        target_(std::move(target)),
        config_(std::move(config)),
        topology_(std::move(topology)),
        cluster_secret_(std::move(cluster_secret)),
        fs_dir_(std::move(fs_dir)) {}

  // Takes over the session that allocated the node id.
  void adopt_session(mgm::MgmConnection* connection) { connection_ = connection; }

  // Phases 1 and 2, then the loop until stopped. Returns the exit code.
  int run();
  // `N RESTART [-i]`: once run() returned, the process starts the node again.
  bool restart_ordered() const { return restart_ordered_; }
  bool initial_restart_ordered() const { return initial_restart_ordered_; }

 private:
  Status create_memory();
  Status start_runtime();
  Status add_blocks();
  Status start_transporter();
  void complete_phase(uint32_t phase, const std::string& detail);
  void send_report();
  void poll_status();
  void tell_api_nodes_of_failure(uint16_t node);
  bool peer_unlinked() const;
  void handle_message(const mgm::Message& message);
  void check_links();
  // Sends the membership block's arbitration requests to mgmd (`arbitrate`) and its
  // failure events to the cluster log (`report event`).
  void forward_membership_requests();
  // An `arbitrate reply`: ARBIT_CONF / ARBIT_REF to the membership block.
  void answer_arbitration(const mgm::Message& reply);
  void report_event(const std::string& severity, const std::string& text);
  void reconnect_if_due();
  void shut_down(const std::string& why);
  // Tells every peer data node this node stops on purpose, and gives the links a moment
  // to carry that before they close.
  void announce_stop();
  void wait_for_final_gcp();

  const Options options_;
  const mgm::ConnectString target_;
  const DataNodeConfig config_;
  const protocol::ClusterTopology topology_;
  const std::string cluster_secret_;
  const std::string fs_dir_;  // <FileSystemPath>/ndb_<id>_fs
  mgm::MgmConnection* connection_ = nullptr;

  std::unique_ptr<storage::GlobalMemory> memory_;  // the node's memory budget (phase 1)
  std::unique_ptr<kernel::ThreadRuntime> runtime_;
  // Owned by runtime_; its start state is read (atomically) by the control loop.
  const distribution::DistributionBlock* distribution_ = nullptr;
  membership::MembershipBlock* membership_ = nullptr;
  ArbitratorProxy* arbitrator_proxy_ = nullptr;
  // `arbitrate` requests sent, by round: who to answer.
  std::map<uint32_t, kernel::BlockAddress> arbitrations_;
  LinkDownHistory link_downs_;  // outlives transporter_, whose thread writes it
  std::unique_ptr<NodeReports> node_reports_;  // outlives transporter_, whose loop uses it
  std::unique_ptr<transport::Transporter> transporter_;
  std::unique_ptr<transport::TransporterPoller> transporter_poller_;
  std::unique_ptr<WatchdogThread> watchdog_;  // samples runtime_'s threads until they are joined
  uint16_t port_ = 0;
  std::string state_ = "STARTING";
  uint32_t phase_ = 0;
  std::map<uint16_t, uint16_t> peer_ports_;  // what we dial each peer at
  std::string stop_reason_;
  bool restart_ordered_ = false;
  bool initial_restart_ordered_ = false;
  int exit_code_ = 0;

  uint64_t next_report_ms_ = 0;
  uint64_t next_status_poll_ms_ = 0;
  uint64_t next_progress_ms_ = 0;
  uint64_t reconnect_at_ms_ = 0;
  uint64_t reconnect_delay_ms_ = kReconnectDelayMinMs;
};

void DataNode::complete_phase(uint32_t phase, const std::string& detail) {
  phase_ = phase;
  DUO_LOG(INFO, kLog) << "Node " << config_.node_id << ": Start phase " << phase << " completed ("
                      << detail << ")";
  send_report();
}

// The memory budget from the node's section, allocated (and touched) up front like
// ndbmtd: a node that cannot get its memory fails its start.
Status DataNode::create_memory() {
  DUO_ASSIGN_OR_RETURN(storage::GlobalMemoryConfig memory, global_memory_config(config_));
  DUO_LOG(INFO, kLog) << "Node " << config_.node_id << ": Memory: " << describe_memory(memory);
  DUO_ASSIGN_OR_RETURN(memory_, storage::GlobalMemory::create(memory));
  return Status::OK();
}

Status DataNode::start_runtime() {
  std::string how;
  DUO_ASSIGN_OR_RETURN(kernel::ThreadConfig threads,
                       thread_layout_for(config_, kernel::available_core_count(), &how));
  kernel::ThreadRuntimeOptions options;
  options.node_id = config_.node_id;
  options.layout = threads.layout;
  options.thread_cpus = threads.cpus;
  options.idle_spin_ns = config_.scheduler_spin_us * kNanosPerMicro;
  DUO_ASSIGN_OR_RETURN(runtime_, kernel::ThreadRuntime::create(options));
  DUO_RETURN_IF_ERROR(add_blocks());
  DUO_LOG(INFO, kLog) << "Node " << config_.node_id << ": threads: " << options.layout.describe()
                      << " (" << how << "; seed " << runtime_->seed() << ")";
  for (const std::string& ignored : threads.ignored) {
    DUO_LOG(INFO, kLog) << "Node " << config_.node_id << ": ThreadConfig: " << ignored
                        << " is accepted and has no effect in DuoDB";
  }
  return Status::OK();
}

// The node's blocks: file system, membership, distribution and dictionary on the main
// thread, the coordinator on the receive thread (or a tc thread), one local_query per
// log part over the LDM threads — or all on the one receive thread of a small machine's
// layout (thread_layout.h, DESIGN.md §3).
Status DataNode::add_blocks() {
  const kernel::ThreadLayout& layout = runtime_->layout();
  fs::FileSystemOptions fs_options;
  fs_options.directory = fs_dir_;
  fs_options.io_threads = config_.disk_io_threads;
  // NDB's layout: <FileSystemPathDataFiles>/ndb_<id>_fs (each defaulting to
  // FileSystemPathDD, which defaults to the node's own file system directory).
  const std::string own_dir = "ndb_" + std::to_string(config_.node_id) + "_fs";
  if (!config_.data_files_path.empty()) {
    fs_options.data_files_directory = config_.data_files_path + "/" + own_dir;
  }
  if (!config_.undo_files_path.empty()) {
    fs_options.undo_files_directory = config_.undo_files_path + "/" + own_dir;
  }
  kernel::ThreadRuntime* runtime = runtime_.get();
  DUO_ASSIGN_OR_RETURN(std::unique_ptr<fs::FileSystemBlock> file_system,
                       fs::FileSystemBlock::create(fs_options, [runtime](kernel::Signal& signal) {
                         return runtime->try_send_from_outside(signal);
                       }));
  DUO_RETURN_IF_ERROR(runtime_->add_block(std::move(file_system), layout.main_thread()));
  membership::MembershipOptions qmgr;
  qmgr.heartbeat_interval_ms = config_.heartbeat_interval_ms;
  qmgr.arbitration_timeout_ms = config_.arbitration_timeout_ms;
  if (config_.arbitrator_configured) {
    qmgr.arbitrator = {config_.node_id, protocol::kArbitratorBlock, 0};
  }
  qmgr.failure_observer = {config_.node_id, protocol::kArbitratorBlock, 0};
  auto membership = std::make_unique<membership::MembershipBlock>(topology_, qmgr);
  membership_ = membership.get();
  DUO_RETURN_IF_ERROR(runtime_->add_block(std::move(membership), layout.main_thread()));
  auto proxy = std::make_unique<ArbitratorProxy>();
  arbitrator_proxy_ = proxy.get();
  DUO_RETURN_IF_ERROR(runtime_->add_block(std::move(proxy), layout.main_thread()));
  distribution::DistributionOptions dih;
  dih.gcp_interval_ms = config_.gcp_interval_ms;
  dih.partial_start_wait_ms = config_.start_partial_timeout_ms == 0
                                  ? UINT64_MAX / 1'000'000  // 0: wait for every node
                                  : config_.start_partial_timeout_ms;
  auto distribution = std::make_unique<distribution::DistributionBlock>(topology_, dih);
  distribution_ = distribution.get();
  DUO_RETURN_IF_ERROR(runtime_->add_block(std::move(distribution), layout.main_thread()));
  auto dictionary = std::make_unique<dictionary::DictionaryBlock>(topology_);
  DUO_ASSIGN_OR_RETURN(std::vector<protocol::FilegroupChange> initial_disk_objects,
                       parse_initial_disk_objects(config_.initial_logfile_group,
                                                  config_.initial_tablespace));
  dictionary->set_initial_disk_objects(std::move(initial_disk_objects));
  DUO_RETURN_IF_ERROR(runtime_->add_block(std::move(dictionary), layout.main_thread()));
  coordinator::CoordinatorOptions tc;
  tc.max_transactions = config_.max_transactions;
  tc.max_operations = config_.max_operations;
  tc.max_scans = config_.max_scans;
  DUO_RETURN_IF_ERROR(runtime_->add_block(
      std::make_unique<coordinator::CoordinatorBlock>(topology_, tc), layout.tc_thread()));
  local_query::LocalQueryOptions lqh;
  lqh.lock_wait_timeout_ms = config_.deadlock_timeout_ms;
  lqh.concurrent_scans_max = config_.max_scans;
  lqh.redo_buffer_bytes = config_.redo_buffer_bytes;
  lqh.redo_file_bytes = config_.redo_file_bytes;
  // NDB's redo space is per log part: NoOfFragmentLogFiles files of FragmentLogFileSize
  // each. Writes are refused (error 410) past 3/4 of it; a checkpoint starts at half.
  lqh.redo_file_count = config_.redo_file_count;
  // TimeBetweenLocalCheckpoints is log2 of 4-byte words of redo between checkpoints. A
  // full checkpoint writes every row, so full ones come at most every 64 MiB of redo.
  // A partial one (EnablePartialLcp) writes one row-ref part of every fragment whole
  // plus the rows changed: with P parts it costs about 1/P of a full one, so it may
  // come P times as often, and the redo a restart replays is P times shorter. A restore
  // reads up to P files per fragment (one full fragment's worth plus P times the rows
  // changed between checkpoints): RecoveryWork (25-100 %, NDB's trade of restart work
  // against checkpoint writes) sets P = RecoveryWork / 10, at least 2.
  constexpr uint64_t kFullLcpRedoBytesMin = 64ull << 20;
  lqh.lcp_parts =
      config_.partial_lcp ? std::max<uint32_t>(2, config_.recovery_work_percent / 10) : 0;
  const uint64_t redo_bytes_min =
      config_.partial_lcp ? kFullLcpRedoBytesMin / lqh.lcp_parts : kFullLcpRedoBytesMin;
  lqh.lcp_redo_bytes = std::max<uint64_t>(uint64_t{4} << config_.lcp_log2_words, redo_bytes_min);
  lqh.compress_lcp = config_.compressed_lcp;
  // The MaxDiskWriteSpeed family limits the whole node: each LDM instance writes its
  // checkpoint files at its even share (blocks share no state; the parts hold about
  // the same data). A checkpoint falling behind the redo that starts the next one goes
  // faster (local_query/checkpoint_rate.h).
  const uint64_t parts = std::max<uint64_t>(1, topology_.log_parts);
  lqh.lcp_write_speeds.normal_bytes_per_s =
      std::max<uint64_t>(1, config_.max_disk_write_speed / parts);
  lqh.lcp_write_speeds.other_node_restart_bytes_per_s =
      std::max<uint64_t>(1, config_.max_disk_write_speed_other_node_restart / parts);
  lqh.lcp_write_speeds.own_restart_bytes_per_s =
      std::max<uint64_t>(1, config_.max_disk_write_speed_own_restart / parts);
  lqh.lcp_write_speeds.min_bytes_per_s =
      std::max<uint64_t>(1, config_.min_disk_write_speed / parts);
  lqh.lcp_write_speeds.redo_raise_bytes = lqh.lcp_redo_bytes;
  for (uint16_t part = 0; part < topology_.log_parts; ++part) {
    DUO_RETURN_IF_ERROR(runtime_->add_block(
        std::make_unique<local_query::LocalQueryBlock>(part, memory_.get(), topology_, lqh),
        layout.ldm_thread_of_part(part)));
  }
  return Status::OK();
}

// The link to `node` closed. An API node is gone at once: it is held back right here
// (before the report is even queued, so that a reconnection racing it is refused too)
// and the membership block has the coordinator and dictionary abort its transactions,
// close its scans and forget its subscriptions (API_FAILREQ), lifting the hold-back when
// they are done. A data node is only suspected: the membership block agrees its failure
// with the other data nodes first (LINK_DOWN_REP). Called on the thread running the
// transporter's loop; NodeReports and MembershipBlock::hold_back_api are safe there.
void report_link_down(NodeReports* reports, membership::MembershipBlock* membership,
                      uint16_t node, bool api) {
  if (!api) {
    reports->send(protocol::kMembershipBlock, protocol::kLinkDownRep, node);
    return;
  }
  membership->hold_back_api(node);
  reports->send(protocol::kMembershipBlock, protocol::kApiFailReq, node);
}

// API node `node` connected while the failure handling of its previous connection still
// runs (MembershipBlock "API node failure"): its link is closed again, and its
// transporter dials again as after any refused connection (the API treats the node as
// unlinked meanwhile: its requests get kTemporary and are retried). Whatever it sent
// before the close is dropped by the membership block's gate. Transporter thread.
void refuse_held_back_api(transport::Transporter* transporter, uint16_t own_id, uint16_t node) {
  DUO_LOG(INFO, kLog) << "Node " << own_id << ": refusing API node " << node
                      << ": the failure handling of its previous connection is still running, "
                         "try again";
  if (Status closed = transporter->disconnect(node); !closed.ok()) {
    DUO_LOG(WARNING, kLog) << "Node " << own_id << ": " << closed.message();
  }
}

Status DataNode::start_transporter() {
  transport::TransporterOptions options;
  options.node_id = config_.node_id;
  options.listen_host = config_.host_name;
  options.listen_port = config_.server_port;
  options.cluster_secret = cluster_secret_;
  options.use_tls = options_.require_tls;
  options.send_from_caller = true;
  options.tls = options_.tls;
  for (const PeerDataNode& peer : config_.peers) {
    transport::PeerConfig peer_config;
    peer_config.node_id = peer.node_id;
    peer_config.host = peer.host_name;
    peer_config.port = peer.server_port;  // 0: learned from mgmd (`get status`)
    if (peer.server_port != 0) peer_ports_[peer.node_id] = peer.server_port;
    options.peers.push_back(peer_config);
  }
  for (uint16_t api : config_.api_nodes) {
    transport::PeerConfig peer_config;
    peer_config.node_id = api;  // API nodes dial us (higher ids dial lower)
    options.peers.push_back(peer_config);
  }
  // The receive thread runs the transporter's loop (transporter_poller.h): what arrives
  // is read, coordinated and executed there without a hand-off to an I/O thread.
  options.io_thread = false;
  const uint16_t own_id = config_.node_id;
  const std::vector<uint16_t> api_nodes = config_.api_nodes;
  node_reports_ = std::make_unique<NodeReports>(runtime_.get(), own_id);
  NodeReports* reports = node_reports_.get();
  LinkDownHistory* link_downs = &link_downs_;
  membership::MembershipBlock* membership = membership_;
  // The transporter is created below; the callback only runs once it has started.
  std::shared_ptr<transport::Transporter*> refuser = std::make_shared<transport::Transporter*>();
  DUO_ASSIGN_OR_RETURN(transporter_, transport::Transporter::create(
                                         options, transport::deliver_to_runtime(*runtime_),
                                         [own_id, api_nodes, reports, link_downs, membership,
                                          refuser](const transport::LinkEvent& event) {
                                           const bool api =
                                               std::binary_search(api_nodes.begin(),
                                                                  api_nodes.end(), event.node_id);
                                           const char* kind = api ? "API node" : "data node";
                                           if (event.state == transport::LinkState::kConnected) {
                                             DUO_LOG(INFO, kLog)
                                                 << "Node " << own_id << ": link to " << kind << " "
                                                 << event.node_id << " up (" << event.peer_address
                                                 << ")";
                                             if (api && membership->api_held_back(event.node_id)) {
                                               refuse_held_back_api(*refuser, own_id,
                                                                    event.node_id);
                                             }
                                             return;
                                           }
                                           if (api) {
                                             DUO_LOG(INFO, kLog)
                                                 << "Node " << own_id << ": link to API node "
                                                 << event.node_id << " down: " << event.reason;
                                           } else {
                                             DUO_LOG(WARNING, kLog)
                                                 << "Node " << own_id << ": link to data node "
                                                 << event.node_id << " down: " << event.reason;
                                             if (event.reason !=
                                                 transport::kDisconnectedByThisNode) {
                                               link_downs->link_down(event.node_id);
                                             }
                                           }
                                           report_link_down(reports, membership,
                                                            event.node_id, api);
                                         }));
  *refuser = transporter_.get();
  port_ = transporter_->listen_port();
  runtime_->set_remote_sender(transporter_.get());
  transporter_poller_ = std::make_unique<transport::TransporterPoller>(transporter_.get());
  DUO_RETURN_IF_ERROR(
      runtime_->set_thread_poller(runtime_->layout().recv_thread(0), transporter_poller_.get()));
  DUO_RETURN_IF_ERROR(transporter_->start());
  DUO_RETURN_IF_ERROR(runtime_->start());
  // The watchdog samples the block threads from its own thread (watchdog_thread.h).
  const uint64_t check_ms = std::max<uint64_t>(config_.watchdog_check_ms, 1);
  kernel::WatchdogLimits limits;
  limits.check_interval_ms = std::clamp<uint64_t>(check_ms / 10, 10, 100);
  limits.report_after_ms = check_ms;
  limits.stop_after_ms = 3 * check_ms;
  limits.stop_after_while_starting_ms = std::max<uint64_t>(3 * check_ms, kWatchdogStartingStopMs);
  limits.stall_after_ms = std::max<uint64_t>(check_ms, 10 * limits.check_interval_ms);
  const distribution::DistributionBlock* distribution = distribution_;
  watchdog_ =
      std::make_unique<WatchdogThread>(runtime_.get(), limits, config_.node_id, [distribution] {
        return distribution->start_state() != distribution::NodeStartState::kStarted;
      });
  watchdog_->start();
  return Status::OK();
}

void DataNode::send_report() {
  next_report_ms_ = monotonic_ms() + kReportIntervalMs;
  if (!connection_->connected()) return;
  mgm::Message request;
  request.head = "report status";
  request.add("nodeid", config_.node_id);
  request.add("state", state_);
  request.add("startphase", phase_);
  if (state_ == "STARTING" && distribution_ != nullptr) {
    // What phase 4 is doing, for `ALL STATUS` (the node restart's copy above all).
    const distribution::NodeStartState start = distribution_->start_state();
    if (start != distribution::NodeStartState::kReadingSysfile &&
        start != distribution::NodeStartState::kStarted) {
      request.add("startinfo", distribution_->start_info());
    }
  }
  if (port_ != 0) request.add("port", port_);
  if (memory_) {
    // Per-area pages in use and the area's effective cap (docs/formats/mgm-protocol.md).
    constexpr std::pair<storage::MemoryArea, const char*> kAreas[] = {
        {storage::MemoryArea::kDataMemory, "datamemory"},
        {storage::MemoryArea::kDiskPageBuffer, "diskpagebuffer"},
        {storage::MemoryArea::kTransactionMemory, "transactionmemory"},
        {storage::MemoryArea::kSchemaMemory, "schemamemory"},
    };
    for (const auto& [area, key] : kAreas) {
      const storage::AreaUsage usage = memory_->usage(area);
      request.add(std::string(key) + ".used", usage.used_pages);
      request.add(std::string(key) + ".total", usage.max_pages);
    }
  }
  if (Status sent = connection_->send(request, kMgmCallTimeoutMs); !sent.ok()) {
    DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": " << sent.message();
  }
}

bool DataNode::peer_unlinked() const {
  for (const PeerDataNode& peer : config_.peers) {
    if (!transporter_->is_connected(peer.node_id)) return true;
  }
  return false;
}

void DataNode::poll_status() {
  next_status_poll_ms_ = monotonic_ms() + kStatusPollIntervalMs;
  if (!connection_->connected()) return;
  mgm::Message request;
  request.head = "get status";
  if (Status sent = connection_->send(request, kMgmCallTimeoutMs); !sent.ok()) {
    DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": " << sent.message();
  }
}

void DataNode::handle_message(const mgm::Message& message) {
  if (message.head == "node stop") {
    const std::string* initiator = message.find("initiator");
    const std::string* restart = message.find("restart");
    const std::string* initial = message.find("initialstart");
    restart_ordered_ = restart != nullptr && *restart == "1";
    initial_restart_ordered_ = restart_ordered_ && initial != nullptr && *initial == "1";
    stop_reason_ = std::string(restart_ordered_ ? "restart" : "stop") +
                   " ordered by the management server (requested by " +
                   (initiator != nullptr ? *initiator : std::string("?")) + ")";
    return;
  }
  if (message.head == "get status reply") {
    Result<std::map<uint16_t, uint16_t>> ports = mgm::reported_ports(message);
    if (!ports.ok()) {
      DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": " << ports.status().message();
      return;
    }
    for (const PeerDataNode& peer : config_.peers) {
      auto it = ports->find(peer.node_id);
      if (it == ports->end() || peer_ports_[peer.node_id] == it->second) continue;
      peer_ports_[peer.node_id] = it->second;
      DUO_LOG(INFO, kLog) << "Node " << config_.node_id << ": data node " << peer.node_id
                          << " listens on " << peer.host_name << ":" << it->second;
      if (Status set = transporter_->set_peer_address(peer.node_id, peer.host_name, it->second);
          !set.ok()) {
        DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": " << set.message();
      }
    }
    return;
  }
  if (message.head == "arbitrate reply") {
    answer_arbitration(message);
    return;
  }
  if (message.head == "report event reply") {
    if (Status result = mgm::reply_result(message); !result.ok()) {
      DUO_LOG(WARNING, kLog) << "Node " << config_.node_id
                             << ": management server refused an event report: " << result.message();
    }
    return;
  }
  if (message.head == "report status reply") {
    if (Status result = mgm::reply_result(message); !result.ok()) {
      DUO_LOG(WARNING, kLog) << "Node " << config_.node_id
                             << ": management server refused the status report: "
                             << result.message();
    }
    return;
  }
  DUO_LOG(DEBUG, kLog) << "Node " << config_.node_id << ": ignoring message '" << message.head
                       << "' from the management server";
}

// The API nodes linked to this node learn that the cluster declared `node` dead: a
// frozen node keeps its links open, and a client must stop sending it transactions.
void DataNode::tell_api_nodes_of_failure(uint16_t node) {
  for (uint16_t api : config_.api_nodes) {
    if (!transporter_->is_connected(api)) continue;
    kernel::Signal signal(protocol::kNodeFailRep, {node});
    signal.set_sender(kernel::BlockAddress{config_.node_id, protocol::kDistributionBlock, 0});
    signal.set_receiver(kernel::BlockAddress{api, protocol::kApiBlock, 0});
    transporter_->send_remote(std::move(signal)).ignore_error();
  }
}

void DataNode::forward_membership_requests() {
  for (ArbitratorProxy::Request& request : arbitrator_proxy_->take_requests()) {
    if (request.failed_node != 0) {
      report_event("warning", "Node " + std::to_string(request.failed_node) + " declared dead");
      // A link that never went down (a silent split) is its old process's connection:
      // it is closed, never to be read again, because once the network heals the bytes
      // that process still had in flight (a GCP_PREPAREREQ of its own rounds, say)
      // arrive seconds later and would be taken for signals of a live node. A link that
      // went down meanwhile is already a new connection, of its restarted process.
      if (!link_downs_.take(request.failed_node)) {
        if (Status closed = transporter_->disconnect(request.failed_node); !closed.ok()) {
          DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": " << closed.message();
        }
      }
      tell_api_nodes_of_failure(request.failed_node);
      continue;
    }
    const membership::ArbitReqMsg& arbit = request.request;
    if (!connection_->connected()) {
      DUO_LOG(WARNING, kLog) << "Node " << config_.node_id
                             << ": arbitration needed but the management server is unreachable";
      continue;
    }
    auto join = [](const membership::NodeSet& nodes) {
      std::string text;
      for (uint16_t node : nodes) text += (text.empty() ? "" : ",") + std::to_string(node);
      return text;
    };
    mgm::Message ask;
    ask.head = "arbitrate";
    ask.add("nodeid", config_.node_id);
    ask.add("round", arbit.round);
    ask.add("survivors", join(arbit.survivors));
    ask.add("failed", join(arbit.failed));
    DUO_LOG(INFO, kLog) << "Node " << config_.node_id
                        << ": asking the arbitrator whether data nodes "
                        << membership::format_node_set(arbit.survivors) << " may continue without "
                        << membership::format_node_set(arbit.failed);
    if (Status sent = connection_->send(ask, kMgmCallTimeoutMs); !sent.ok()) {
      DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": " << sent.message();
      continue;
    }
    arbitrations_[arbit.round] = request.reply_to;
    // Bounded: rounds never answered (mgmd gone meanwhile) are forgotten oldest first.
    while (arbitrations_.size() > ArbitratorProxy::kQueuedRequestsMax) {
      arbitrations_.erase(arbitrations_.begin());
    }
  }
}

void DataNode::answer_arbitration(const mgm::Message& reply) {
  const std::string* round_text = reply.find("round");
  auto round = round_text != nullptr ? mgm::parse_uint_arg(*round_text, UINT32_MAX) : std::nullopt;
  auto it = round ? arbitrations_.find(static_cast<uint32_t>(*round)) : arbitrations_.end();
  if (Status result = mgm::reply_result(reply); !result.ok() || it == arbitrations_.end()) {
    // No answer to the membership block: its ArbitrationTimeout decides.
    DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": arbitration failed: "
                           << (result.ok() ? "reply for an unknown round" : result.message());
    if (it != arbitrations_.end()) arbitrations_.erase(it);
    return;
  }
  const std::string* decision = reply.find("decision");
  const bool granted = decision != nullptr && *decision == "granted";
  const std::string* reason = reply.find("reason");
  if (granted) {
    DUO_LOG(INFO, kLog) << "Node " << config_.node_id << ": arbitration granted";
  } else {
    DUO_LOG(ERROR, kLog) << "Node " << config_.node_id << ": arbitration refused: "
                         << (reason != nullptr ? *reason : std::string("?"));
  }
  kernel::Signal answer =
      granted ? kernel::Signal(protocol::kArbitConf, {static_cast<uint32_t>(*round)})
              : kernel::Signal(
                    protocol::kArbitRef,
                    {static_cast<uint32_t>(*round),
                     static_cast<uint32_t>(membership::ShutdownReason::kArbitrationRefused)});
  answer.set_sender(kernel::BlockAddress{config_.node_id, protocol::kArbitratorBlock, 0});
  answer.set_receiver(it->second);
  arbitrations_.erase(it);
  if (Status sent = runtime_->send_from_outside(std::move(answer)); !sent.ok()) {
    DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": " << sent.message();
  }
}

void DataNode::report_event(const std::string& severity, const std::string& text) {
  DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": " << text;
  if (!connection_->connected()) return;
  mgm::Message event;
  event.head = "report event";
  event.add("nodeid", config_.node_id);
  event.add("severity", severity);
  event.add("text", text);
  if (Status sent = connection_->send(event, kMgmCallTimeoutMs); !sent.ok()) {
    DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": " << sent.message();
  }
}

void DataNode::check_links() {
  if (membership_->shutdown_requested()) {
    // The cluster (or the arbitrator) decided this node must not go on: stop loudly.
    stop_reason_ = "shutdown requested: " + membership_->shutdown_reason();
    DUO_LOG(ERROR, kLog) << "Node " << config_.node_id << ": " << stop_reason_;
    report_event("alert", stop_reason_);
    exit_code_ = kExitError;
    return;
  }
  std::vector<uint16_t> connected;
  for (const PeerDataNode& peer : config_.peers) {
    if (transporter_->is_connected(peer.node_id)) connected.push_back(peer.node_id);
  }
  const std::vector<uint16_t> missing = missing_links(config_, connected);
  const uint64_t now = monotonic_ms();
  if (state_ == "STARTED" &&
      distribution_->start_state() == distribution::NodeStartState::kFailed) {
    stop_reason_ = distribution_->failure();
    if (!distribution_->failure_is_clean()) exit_code_ = kExitError;
    return;
  }
  if (state_ != "STARTING") return;
  if (phase_ < 3) {
    // The distribution block restores without the data nodes its sysfile records as
    // dead (they stay out until node restart exists): once it restores, their links
    // are not waited for.
    const distribution::NodeStartState restart = distribution_->start_state();
    const bool restoring = restart == distribution::NodeStartState::kRestoring ||
                           restart == distribution::NodeStartState::kWaitingForStart ||
                           restart == distribution::NodeStartState::kStarted ||
                           restart == distribution::NodeStartState::kJoining ||
                           restart == distribution::NodeStartState::kCopying;
    if (missing.empty() || restoring) {
      complete_phase(3, "links up to data nodes " + format_ids(connected) +
                            (missing.empty() ? "" : "; not waiting for " + format_ids(missing)));
    } else if (now >= next_progress_ms_) {
      next_progress_ms_ = now + kProgressLogIntervalMs;
      DUO_LOG(INFO, kLog) << "Node " << config_.node_id
                          << ": start phase 3: waiting for data nodes " << format_ids(missing)
                          << " (links up: " << format_ids(connected) << ")";
    }
    return;
  }
  // Phase 4: the blocks' own start (system restart: schema, checkpoint and redo up to
  // the last complete GCI agreed by all data nodes), driven by the distribution block.
  const distribution::NodeStartState start = distribution_->start_state();
  if (start == distribution::NodeStartState::kFailed) {
    stop_reason_ = "start failed: " + distribution_->failure();
    exit_code_ = kExitError;
    return;
  }
  if (start != distribution::NodeStartState::kStarted) {
    if (now >= next_progress_ms_) {
      next_progress_ms_ = now + kProgressLogIntervalMs;
      DUO_LOG(INFO, kLog) << "Node " << config_.node_id << ": start phase 4: "
                          << distribution_->start_info();
    }
    return;
  }
  complete_phase(4, !distribution_->started_by_node_restart()
                        ? "restored up to GCI " + std::to_string(distribution_->restart_gci()) +
                              ", committing from GCI " +
                              std::to_string(distribution_->current_gci())
                        : "node restart: copied from the live replicas, committing from GCI " +
                              std::to_string(distribution_->current_gci()));
  state_ = "STARTED";
  DUO_LOG(INFO, kLog) << "Node " << config_.node_id << ": Started (DuoDB-" << DUO_VERSION << ")";
  send_report();
}

void DataNode::reconnect_if_due() {
  if (connection_->connected() || monotonic_ms() < reconnect_at_ms_) return;
  Result<uint32_t> id = connect_and_allocate(*connection_, target_, config_.node_id);
  if (!id.ok()) {
    DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": management server " << target_.host
                           << ":" << target_.port << " still unreachable (" << id.status().message()
                           << "); retrying in " << reconnect_delay_ms_ << " ms";
    reconnect_at_ms_ = monotonic_ms() + reconnect_delay_ms_;
    reconnect_delay_ms_ = std::min(reconnect_delay_ms_ * 2, kReconnectDelayMaxMs);
    return;
  }
  DUO_LOG(INFO, kLog) << "Node " << config_.node_id << ": reconnected to the management server";
  reconnect_delay_ms_ = kReconnectDelayMinMs;
  send_report();
}

void DataNode::announce_stop() {
  if (!runtime_ || !transporter_ || exit_code_ != 0) return;
  bool sent_any = false;
  for (const PeerDataNode& peer : config_.peers) {
    if (!transporter_->is_connected(peer.node_id)) continue;
    kernel::Signal signal(protocol::kNodeStoppingRep, {config_.node_id});
    signal.set_sender(kernel::BlockAddress{config_.node_id, protocol::kDistributionBlock, 0});
    signal.set_receiver(kernel::BlockAddress{peer.node_id, protocol::kDistributionBlock, 0});
    sent_any |= transporter_->send_remote(std::move(signal)).ok();
  }
  if (sent_any) sleep_ms(kStopAnnounceMs);
}

// A planned stop keeps what was committed before it: wait (bounded) until the GCI open
// now is complete on every live node, so a restart recovers every transaction
// acknowledged before the stop. Without it a `duo down` right after a commit could lose
// it (a crash still loses at most what committed after the last complete GCI).
void DataNode::wait_for_final_gcp() {
  if (distribution_ == nullptr || exit_code_ != 0 ||
      distribution_->start_state() != distribution::NodeStartState::kStarted) {
    return;
  }
  const uint32_t gci = distribution_->current_gci();
  const uint64_t deadline = monotonic_ms() + 2 * config_.gcp_interval_ms + kFinalGcpMarginMs;
  while (distribution_->last_complete_gci() < gci && monotonic_ms() < deadline) {
    sleep_ms(kFinalGcpPollMs);
  }
  if (distribution_->last_complete_gci() >= gci) {
    DUO_LOG(INFO, kLog) << "Node " << config_.node_id << ": GCI " << gci
                        << " complete: everything committed before the stop is durable";
  } else {
    DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": GCI " << gci
                           << " did not complete before the stop; a restart recovers to GCI "
                           << distribution_->last_complete_gci();
  }
}

void DataNode::shut_down(const std::string& why) {
  DUO_LOG(INFO, kLog) << "Node " << config_.node_id << ": stopping: " << why;
  state_ = "STOPPING";
  send_report();
  wait_for_final_gcp();
  announce_stop();
  // The receive thread polls the transporter: it stops first, then the links close (their
  // last link events land in queues nobody drains any more). The watchdog keeps watching
  // until the block threads are joined: a stuck one would hang the stop forever.
  if (runtime_) runtime_->stop();
  if (watchdog_) watchdog_->stop();
  if (transporter_) transporter_->stop();
  if (connection_->connected()) {
    mgm::Message bye;
    bye.head = "bye";
    // Best effort: the session ends either way when the process exits.
    connection_->send(bye, 1000).ignore_error();
    connection_->close();
  }
  DUO_LOG(INFO, kLog) << "Node " << config_.node_id << ": stopped";
}

int DataNode::run() {
  if (Status created = create_memory(); !created.ok()) {
    DUO_LOG(ERROR, kLog) << "Node " << config_.node_id
                         << ": cannot allocate the node's memory: " << created.message();
    return kExitError;
  }
  if (Status started = start_runtime(); !started.ok()) {
    DUO_LOG(ERROR, kLog) << "Node " << config_.node_id
                         << ": cannot create the runtime: " << started.message();
    return kExitError;
  }
  complete_phase(1, "memory " + std::to_string(memory_->total_pages()) +
                        " pages, block threads: " + runtime_->layout().describe());
  if (Status started = start_transporter(); !started.ok()) {
    DUO_LOG(ERROR, kLog) << "Node " << config_.node_id
                         << ": cannot start the transporter: " << started.message();
    shut_down("start failed");
    return kExitError;
  }
  complete_phase(2, "transporter listening on " + config_.host_name + ":" + std::to_string(port_) +
                        ", " + std::to_string(config_.peers.size()) + " data node peer(s)");
  poll_status();
  while (stop_reason_.empty()) {
    if (stop_requested()) {
      stop_reason_ = "stop signal received";
      break;
    }
    reconnect_if_due();
    if (connection_->connected()) {
      Result<std::optional<mgm::Message>> message = connection_->receive(kLoopWaitMs);
      if (!message.ok()) {
        DUO_LOG(WARNING, kLog) << "Node " << config_.node_id << ": lost the management server ("
                               << message.status().message() << "); reconnecting";
        reconnect_at_ms_ = monotonic_ms() + reconnect_delay_ms_;
      } else if (*message) {
        handle_message(**message);
        continue;  // drain what is buffered before the timers
      }
    } else {
      interruptible_sleep(kLoopWaitMs);
    }
    const uint64_t now = monotonic_ms();
    if (now >= next_report_ms_) send_report();
    // Peers' transporter ports come from mgmd: polled while starting, and while a peer
    // is unlinked (it may have restarted on another port: a node restart).
    if ((state_ == "STARTING" || peer_unlinked()) && now >= next_status_poll_ms_) poll_status();
    forward_membership_requests();
    check_links();
    if (node_reports_) node_reports_->flush();
  }
  shut_down(stop_reason_);
  return exit_code_;
}

// `N RESTART [-i]` after the clean stop: the same process image starts again with the
// same arguments (so the launcher's pid and the node's log stay), in the foreground
// (it is already a daemon if it was one), with --initial only if asked. The node then
// rejoins the running cluster by a node restart. Returns only if exec failed.
void restart_process(int argc, char** argv, bool initial) {
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--initial" || arg == "--foreground" || arg == "--nodaemon") continue;
    args.push_back(arg);
  }
  args.push_back("--foreground");
  if (initial) args.push_back("--initial");
  std::vector<char*> exec_argv;
  for (std::string& arg : args) exec_argv.push_back(arg.data());
  exec_argv.push_back(nullptr);
  DUO_LOG(INFO, kLog) << "restarting: exec " << args.front() << (initial ? " --initial" : "");
  ::execv("/proc/self/exe", exec_argv.data());
  DUO_LOG(ERROR, kLog) << "cannot restart: exec: " << std::strerror(errno);
}

int run_datad(int argc, char** argv) {
  Options options;
  if (!parse_args(argc, argv, &options)) {
    std::fprintf(stderr, "duo_datad: bad command line (see --help)\n");
    return kExitUsage;
  }
  Result<LogLevel> level = parse_log_level(options.log_level);
  if (!level.ok()) {
    std::fprintf(stderr, "duo_datad: %s\n", level.status().message().c_str());
    return kExitUsage;
  }
  set_log_level(*level);
  Result<mgm::ConnectString> target = mgm::parse_connect_string(options.connect_string);
  if (!target.ok()) {
    std::fprintf(stderr, "duo_datad: %s\n", target.status().message().c_str());
    return kExitUsage;
  }
  install_stop_flag(options.foreground);

  DUO_LOG(INFO, kLog) << "DuoDB data node DuoDB-" << DUO_VERSION << " starting; management server "
                      << target->host << ":" << target->port;
  // Phase 0: node id and configuration.
  mgm::MgmConnection connection;
  uint32_t node_id = 0;
  uint64_t delay_ms = kReconnectDelayMinMs;
  for (uint64_t attempt = 1;; ++attempt) {
    Result<uint32_t> id = connect_and_allocate(connection, *target, options.node_id);
    if (id.ok()) {
      node_id = *id;
      break;
    }
    if (stop_requested()) return 0;
    const bool last = options.connect_retries != 0 && attempt >= options.connect_retries;
    DUO_LOG(WARNING, kLog) << "Cannot join via " << target->host << ":" << target->port << ": "
                           << id.status().message()
                           << (last ? "; giving up"
                                    : "; retrying in " + std::to_string(delay_ms) + " ms");
    if (last) {
      std::fprintf(stderr, "duo_datad: %s\n", id.status().message().c_str());
      return kExitError;
    }
    interruptible_sleep(delay_ms);
    if (stop_requested()) return 0;
    delay_ms = std::min(delay_ms * 2, kReconnectDelayMaxMs);
  }
  DUO_LOG(INFO, kLog) << "Node " << node_id << ": node id allocated by the management server";
  mgm::Message request;
  request.head = "get config";
  request.add("nodetype", "ndbd");
  request.add("node", node_id);
  Result<mgm::Message> reply = connection.call(request, kMgmCallTimeoutMs);
  if (reply.ok()) {
    if (Status result = mgm::reply_result(*reply); !result.ok()) reply = result;
  }
  if (!reply.ok()) {
    std::fprintf(stderr, "duo_datad: cannot fetch the configuration: %s\n",
                 reply.status().message().c_str());
    return kExitError;
  }
  const std::string* generation = reply->find("generation");
  Result<config::ClusterConfig> parsed =
      config::parse_config_string(reply->body, "configuration from the management server");
  if (!parsed.ok()) {
    std::fprintf(stderr, "duo_datad: %s\n", parsed.status().message().c_str());
    return kExitError;
  }
  Result<DataNodeConfig> own = data_node_config(*parsed, node_id);
  if (!own.ok()) {
    std::fprintf(stderr, "duo_datad: %s\n", own.status().message().c_str());
    return kExitError;
  }
  std::error_code ec;
  std::filesystem::create_directories(own->data_dir, ec);
  if (ec) {
    std::fprintf(stderr, "duo_datad: cannot create DataDir '%s': %s\n", own->data_dir.c_str(),
                 ec.message().c_str());
    return kExitError;
  }
  // RequireTls: the keys are loaded and checked now, before daemonizing, so a node
  // without usable keys fails its start in the operator's terminal, naming the file.
  const config::ConfigSection* own_section = parsed->find_node(node_id);
  Result<bool> require_tls =
      own_section != nullptr ? own_section->get_bool("RequireTls") : Result<bool>(false);
  options.require_tls = require_tls.ok() && *require_tls;
  if (options.require_tls) {
    const std::string tls_path =
        options.tls_search_path.empty() ? own->data_dir + "/tls" : options.tls_search_path;
    Result<transport::TlsMaterial> tls = transport::load_tls_material(tls_path, node_id);
    Status usable = tls.ok() ? transport::TlsContext::create(*tls, node_id).status() : tls.status();
    if (!usable.ok()) {
      std::fprintf(stderr, "duo_datad: node %u has RequireTls=1, but %s\n", node_id,
                   usable.message().c_str());
      return kExitError;
    }
    options.tls = std::move(tls).value();
    DUO_LOG(INFO, kLog) << "Node " << node_id << ": RequireTls: TLS on every link, keys from "
                        << tls_path;
  }
  // ndbmtd's layout: <FileSystemPath>/ndb_<id>_fs holds what the node persists. Nothing
  // is persisted yet (durability is a later increment); --initial still clears it.
  const std::string fs_dir = own->file_system_path + "/ndb_" + std::to_string(node_id) + "_fs";
  if (options.initial) std::filesystem::remove_all(fs_dir, ec);
  std::filesystem::create_directories(fs_dir, ec);
  if (ec) {
    std::fprintf(stderr, "duo_datad: cannot create '%s': %s\n", fs_dir.c_str(),
                 ec.message().c_str());
    return kExitError;
  }
  const std::string prefix = own->data_dir + "/ndb_" + std::to_string(node_id);
  Result<int> pid_fd = lock_pid_file(prefix + ".pid", "another duo_datad runs with this node id and DataDir");
  if (!pid_fd.ok()) {
    std::fprintf(stderr, "duo_datad: %s\n", pid_fd.status().message().c_str());
    return kExitError;
  }
  if (!options.foreground) {
    std::printf("duo_datad: node %u daemonizing; log in %s_out.log\n", node_id, prefix.c_str());
    std::fflush(stdout);
    if (!daemonize(prefix + "_out.log")) {
      std::fprintf(stderr, "duo_datad: fork: %s\n", std::strerror(errno));
      return kExitError;
    }
  }
  write_pid(*pid_fd);
  // Links only form between processes serving the same configuration: the checksum of
  // the served text is the hello's cluster secret (docs/formats/transport.md).
  const std::string* checksum = reply->find("checksum");
  const std::string secret = "duodb-config-" + (checksum != nullptr ? *checksum : std::string());
  DUO_LOG(INFO, kLog) << "Node " << node_id
                      << ": Start phase 0 completed (configuration generation "
                      << (generation != nullptr ? *generation : std::string("?")) << ", DataDir "
                      << own->data_dir << ", file system " << fs_dir
                      << (options.initial ? " cleared (initial start)" : "") << ", nodegroup "
                      << own->node_group << ", NoOfReplicas " << own->no_of_replicas << ")";

  Result<protocol::ClusterTopology> topology = protocol::ClusterTopology::from_config(*parsed);
  if (!topology.ok()) {
    DUO_LOG(ERROR, kLog) << "Node " << node_id << ": " << topology.status().message();
    return kExitError;
  }
  int exit_code = 0;
  bool restart = false;
  bool initial_restart = false;
  {
    DataNode node(options, *target, std::move(own).value(), std::move(topology).value(), secret,
                  fs_dir);
    node.adopt_session(&connection);
    exit_code = node.run();
    restart = exit_code == 0 && node.restart_ordered();
    initial_restart = node.initial_restart_ordered();
  }  // the node's threads, sockets and files are gone before a restart's exec
  connection.close();
  ::unlink((prefix + ".pid").c_str());
  ::close(*pid_fd);
  if (restart) restart_process(argc, argv, initial_restart);
  return exit_code;
}

}  // namespace
}  // namespace duo::datad

int main(int argc, char** argv) {
  return duo::datad::run_datad(argc, argv);
}
