// DataNodeConfig: what one data node takes from the cluster configuration mgmd serves —
// its own section (HostName, ServerPort, DataDir, FileSystemPath, Nodegroup, limits,
// durability parameters) and the other data nodes it must link to.
//
// Pure functions over parsed data (no sockets, no files), so duo_datad's start logic is
// unit-testable. Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mgmd/protocol/mgm_protocol.h"
#include "ndb-kernel/common/config/config_parser.h"
#include "ndb-kernel/common/status.h"
#include "ndb-kernel/runtime/thread_config.h"
#include "storage/memory/global_memory.h"

namespace duo::datad {

struct PeerDataNode {
  uint16_t node_id = 0;
  std::string host_name;     // HostName from the configuration
  uint16_t server_port = 0;  // ServerPort from the configuration; 0 = dynamic
};

struct DataNodeConfig {
  uint16_t node_id = 0;
  std::string host_name;
  uint16_t server_port = 0;  // 0: the OS picks one and the node reports it to mgmd
  std::string data_dir;
  std::string file_system_path;
  // InitialLogFileGroup / InitialTablespace as written ("": none; initial_disk_objects.h).
  // Disk-data file directories (NDB's FileSystemPathDataFiles / FileSystemPathUndoFiles,
  // each defaulting to FileSystemPathDD); "" = the node's file system directory.
  std::string data_files_path;
  std::string undo_files_path;
  std::string initial_logfile_group;
  std::string initial_tablespace;
  uint64_t node_group = 0;
  uint32_t no_of_replicas = 0;
  std::vector<PeerDataNode> peers;  // every other configured data node, ascending id
  std::vector<uint16_t> api_nodes;  // configured API node ids ([api]/[mysqld]), ascending
  // Transaction limits of the node's blocks (NDB names; defaults from config_params.cc).
  uint32_t max_transactions = 0;       // MaxNoOfConcurrentTransactions
  uint32_t max_operations = 0;         // MaxNoOfConcurrentOperations
  uint32_t max_scans = 0;              // MaxNoOfConcurrentScans
  uint64_t deadlock_timeout_ms = 0;    // TransactionDeadlockDetectionTimeout
  // Durability.
  uint64_t gcp_interval_ms = 0;        // TimeBetweenGlobalCheckpoints
  uint64_t start_partial_timeout_ms = 0;  // StartPartialTimeout (0: wait forever)
  uint64_t redo_buffer_bytes = 0;      // RedoBuffer
  uint64_t redo_file_bytes = 0;        // FragmentLogFileSize
  uint32_t redo_file_count = 0;        // NoOfFragmentLogFiles (per log part)
  uint32_t lcp_log2_words = 0;         // TimeBetweenLocalCheckpoints
  bool compressed_lcp = false;         // CompressedLCP
  bool partial_lcp = true;             // EnablePartialLcp
  uint32_t recovery_work_percent = 60;  // RecoveryWork
  // Checkpoint write rate limits of the whole node, bytes/s (NDB's defaults; datad
  // splits them over the LDM instances). data_node_config() refuses a configuration
  // whose MinDiskWriteSpeed passes MaxDiskWriteSpeed.
  uint64_t max_disk_write_speed = 20u << 20;                       // MaxDiskWriteSpeed
  uint64_t max_disk_write_speed_other_node_restart = 50u << 20;   // ...OtherNodeRestart
  uint64_t max_disk_write_speed_own_restart = 200u << 20;         // ...OwnRestart
  uint64_t min_disk_write_speed = 10u << 20;                      // MinDiskWriteSpeed
  uint32_t disk_io_threads = 0;        // DiskIOThreadPool
  uint64_t scheduler_spin_us = 0;      // SchedulerSpinTimer
  // Threads (thread_layout_for picks the layout from these).
  bool automatic_thread_config = true;      // AutomaticThreadConfig
  bool automatic_thread_config_set = false;  // given in config.ini (not the default)
  uint32_t num_cpus = 0;                     // NumCPUs; 0 = what the machine has
  uint32_t max_execution_threads = 0;        // MaxNoOfExecutionThreads
  std::string thread_config;                 // ThreadConfig; empty = not set
  uint32_t thread_config_line = 0;           // its line in config.ini, for errors
  // Membership (the membership block, NDB's QMGR).
  uint64_t heartbeat_interval_ms = 0;   // HeartbeatIntervalDbDb
  uint64_t arbitration_timeout_ms = 0;  // ArbitrationTimeout
  uint64_t watchdog_check_ms = 0;       // TimeBetweenWatchDogCheck
  // Whether some management node arbitrates (ArbitrationRank > 0 in an [ndb_mgmd]
  // section). The node asks the one it is connected to (see datad_main.cc).
  bool arbitrator_configured = false;
  // Memory parameters (bytes), built-in defaults when not configured.
  uint64_t data_memory = 0;              // DataMemory
  uint64_t disk_page_buffer_memory = 0;  // DiskPageBufferMemory
  uint64_t transaction_memory = 0;       // TransactionMemory; 0 = automatic
  uint64_t schema_memory = 0;            // SchemaMemory
  uint64_t shared_global_memory = 0;     // SharedGlobalMemory
  uint64_t total_memory_config = 0;      // TotalMemoryConfig; 0 = not set
};

// Extracts node `node_id`'s view. kConfigError if it is not a data node of `config`.
Result<DataNodeConfig> data_node_config(const config::ClusterConfig& config, uint32_t node_id);

// The node's threads: with AutomaticThreadConfig=1 given, the automatic layout for
// NumCPUs (else `available_cores`), and ThreadConfig is ignored as in NDB (noted in
// *how); else ThreadConfig when set; else, with AutomaticThreadConfig=0, the automatic
// layout for MaxNoOfExecutionThreads cores; else (DuoDB's default, like RonDB) the
// automatic layout for NumCPUs or `available_cores`. *how says which rule applied, for
// the startup log. kConfigError naming file:line for a ThreadConfig that cannot run.
Result<kernel::ThreadConfig> thread_layout_for(const DataNodeConfig& config,
                                               uint32_t available_cores, std::string* how);

// TransactionMemory=0 (automatic): 10% of DataMemory, at least this much.
inline constexpr uint64_t kMinAutomaticTransactionMemory = 4 * 1024 * 1024;
uint64_t effective_transaction_memory(const DataNodeConfig& config);

// The node's memory budget (storage::GlobalMemory), built in start phase 1:
//  - DataMemory, DiskPageBufferMemory, TransactionMemory (automatic when 0) and
//    SchemaMemory are the reserved pages of their areas (bytes rounded down to 32 KiB
//    pages). DataMemory and DiskPageBufferMemory are hard limits (max = reserved);
//    TransactionMemory and SchemaMemory may borrow from the shared pool.
//  - TotalMemoryConfig, when set, is the total; what the areas do not reserve is the
//    shared pool (SharedGlobalMemory is then not used). kConfigError, naming the
//    parameters, when it does not cover the reserved areas.
//  - Otherwise the total is the sum of the areas plus SharedGlobalMemory (the pool).
Result<storage::GlobalMemoryConfig> global_memory_config(const DataNodeConfig& config);

// "DataMemory 80 MB (2560 pages), DiskPageBufferMemory 64 MB (2048 pages), ...,
// shared pool 128 MB (4096 pages), total 304 MB (9728 pages)" for the start log.
std::string describe_memory(const storage::GlobalMemoryConfig& memory);

// The start state machine of this increment: the node is started when its links to
// every other configured data node are up. Real start phases (restoring from
// checkpoints and redo, node recovery) come with durability.
enum class StartPhase : uint8_t {
  kConfigured = 0,   // phase 0: node id, configuration, DataDir and file system ready
  kRuntime = 1,      // phase 1: memory budget allocated, block threads running
  kTransporter = 2,  // phase 2: transporter listening, port reported to mgmd
  kLinks = 3,        // phase 3: links to all other data nodes up
  kRestored = 4,     // phase 4: system restart (schema, checkpoint, redo) done
};
inline constexpr uint32_t kLastStartPhase = 4;

// Peers (ids) whose links are not up, given the set that is up; empty = node can start.
std::vector<uint16_t> missing_links(const DataNodeConfig& config,
                                    const std::vector<uint16_t>& connected);

// "1 3" for {1, 3}; "none" when empty (log lines).
std::string format_ids(const std::vector<uint16_t>& ids);

}  // namespace duo::datad
