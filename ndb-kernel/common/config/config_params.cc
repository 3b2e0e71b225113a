// The parameter table and value syntax. Names, defaults and ranges follow the NDB
// Cluster 8.x reference manual ("NDB Cluster Configuration Parameters"); parameters
// that are not NDB's are marked "DuoDB" (or "RonDB" when taken from RonDB).
#include "ndb-kernel/common/config/config_params.h"

#include <array>
#include <string>

namespace duo::config {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t kGiB = 1024 * kMiB;
constexpr uint64_t kTiB = 1024 * kGiB;
// NDB's usual upper bound for 32-bit parameters (0xFFFFFEFF): the values above it are
// reserved as "RNIL" markers inside the NDB kernel, so NDB never accepts them.
constexpr uint64_t kNdbUint32Max = 4294967039ULL;
constexpr uint64_t kPortMax = 65535;

constexpr uint32_t kDb = section_bit(SectionType::kDataNode);
constexpr uint32_t kMgm = section_bit(SectionType::kManagementNode);
constexpr uint32_t kApi = section_bit(SectionType::kApiNode);
constexpr uint32_t kTcp = section_bit(SectionType::kTcp);
constexpr uint32_t kAllNodes = kDb | kMgm | kApi;

constexpr ParamSpec integer(std::string_view name, uint32_t sections, uint64_t default_value,
                            uint64_t min_value, uint64_t max_value, std::string_view unit,
                            std::string_view comment) {
  return ParamSpec{name, sections,  ParamType::kUint64, false, true,   default_value,
                   {},   min_value, max_value,          unit,  comment};
}
// An integer that stays unset unless given (or derived by the parser).
constexpr ParamSpec optional_integer(std::string_view name, uint32_t sections, uint64_t min_value,
                                     uint64_t max_value, std::string_view unit,
                                     std::string_view comment) {
  return ParamSpec{name, sections,  ParamType::kUint64, false, false,  0,
                   {},   min_value, max_value,          unit,  comment};
}
constexpr ParamSpec mandatory_integer(std::string_view name, uint32_t sections, uint64_t min_value,
                                      uint64_t max_value, std::string_view comment) {
  return ParamSpec{name, sections,  ParamType::kUint64, true, false,  0,
                   {},   min_value, max_value,          {},   comment};
}
constexpr ParamSpec boolean(std::string_view name, uint32_t sections, bool default_value,
                            std::string_view comment) {
  return ParamSpec{name, sections, ParamType::kBool, false, true, default_value ? 1u : 0u, {}, 0,
                   1,    {},       comment};
}
constexpr ParamSpec string(std::string_view name, uint32_t sections, std::string_view default_value,
                           std::string_view comment) {
  return ParamSpec{name, sections, ParamType::kString, false, true, 0, default_value, 0, 0,
                   {},   comment};
}
constexpr ParamSpec optional_string(std::string_view name, uint32_t sections,
                                    std::string_view comment) {
  return ParamSpec{name, sections, ParamType::kString, false, false, 0, {}, 0, 0, {}, comment};
}

// clang-format off
constexpr ParamSpec kParams[] = {
    // --- Identity and placement -------------------------------------------------------
    optional_integer("NodeId", kDb, 1, 144, "",
        "Node id of this data node; the next free id is assigned if not given"),
    optional_integer("NodeId", kMgm | kApi, 1, 255, "",
        "Node id of this node; the next free id is assigned if not given"),
    string("HostName", kDb | kMgm, "localhost", "Host name or IP address of the node"),
    string("HostName", kApi, "", "Host allowed to use this API slot; empty means any host"),
    optional_integer("Nodegroup", kDb, 0, 65536, "",
        "Node group of the data node; 65536 = none yet (for adding node groups online); "
        "assigned in NodeId order if not given"),
    optional_integer("ServerPort", kDb, 1, kPortMax, "",
        "Port the data node listens on for transporters; dynamic if not given"),
    integer("PortNumber", kMgm, 1186, 0, kPortMax, "", "Management server port"),
    string("DataDir", kDb | kMgm, ".", "Directory for logs, trace files and pid file"),
    optional_string("FileSystemPath", kDb,
        "Directory for redo logs, checkpoints and disk data; defaults to DataDir"),
    optional_string("FileSystemPathDD", kDb,
        "Directory for disk-data files (undo and data files, in ndb_<id>_fs below it); "
        "defaults to the node's file system directory"),
    optional_string("FileSystemPathDataFiles", kDb,
        "Directory for tablespace data files; defaults to FileSystemPathDD"),
    optional_string("FileSystemPathUndoFiles", kDb,
        "Directory for logfile group undo files; defaults to FileSystemPathDD"),
    // NDB's disk-data objects made at an initial start (format: docs/formats/config-ini.md).
    optional_string("InitialLogFileGroup", kDb,
        "Logfile group created at an initial start: "
        "[name=NAME;] [undo_buffer_size=SIZE;] FILE:SIZE[; FILE:SIZE ...]"),
    optional_string("InitialTablespace", kDb,
        "Tablespace created at an initial start (uses InitialLogFileGroup): "
        "[name=NAME;] [extent_size=SIZE;] FILE:SIZE[; FILE:SIZE ...]"),
    optional_string("BackupDataDir", kDb,
        "Directory under which backups are written (in a BACKUP subdirectory); "
        "defaults to FileSystemPath"),
    boolean("RequireTls", kAllNodes, false,
        "Require TLS on links to and from this node (NDB 8.3 name)"),

    // --- Replication, partitioning and arbitration ------------------------------------
    integer("NoOfReplicas", kDb, 2, 1, 4, "", "Number of replicas of each fragment"),
    // NDB 8.0.23's pair, with RonDB's default: ClassicFragmentation=false (NDB's is true,
    // "nodes x LDM threads" partitions, which here counts NoOfFragmentLogParts); range
    // as RonDB's (1..NDB_MAX_LOG_PARTS).
    integer("PartitionsPerNode", kDb, 2, 1, 32, "",
        "Partitions (fragments) per data node of a new table, times the node count; "
        "not used with ClassicFragmentation"),
    boolean("ClassicFragmentation", kDb, false,
        "A new table gets NoOfFragmentLogParts partitions per data node (NDB's default) "
        "instead of PartitionsPerNode (RonDB's default)"),
    integer("ArbitrationRank", kMgm, 1, 0, 2, "",
        "0 = never arbitrator, 1 = high priority, 2 = low priority"),
    integer("ArbitrationRank", kApi, 0, 0, 2, "",
        "0 = never arbitrator, 1 = high priority, 2 = low priority"),
    integer("ArbitrationDelay", kMgm | kApi, 0, 0, kNdbUint32Max, "ms",
        "Delay before answering an arbitration request"),
    integer("ArbitrationTimeout", kDb, 7500, 10, kNdbUint32Max, "ms",
        "How long data nodes wait for the arbitrator's answer"),
    boolean("StopOnError", kDb, true, "Stop the process on error instead of restarting it"),

    // --- Memory -----------------------------------------------------------------------
    integer("DataMemory", kDb, 98 * kMiB, 1 * kMiB, 16 * kTiB, "bytes",
        "Memory for rows and indexes"),
    integer("DiskPageBufferMemory", kDb, 64 * kMiB, 4 * kMiB, 16 * kTiB, "bytes",
        "Page cache for disk data columns"),
    integer("TransactionMemory", kDb, 0, 0, 16 * kTiB, "bytes",
        "Memory for transaction and operation records; 0 = automatic"),
    integer("SharedGlobalMemory", kDb, 128 * kMiB, 0, 64 * kTiB, "bytes",
        "Shared pool that memory areas may borrow from"),
    // RonDB name: one budget from which the other areas are derived.
    integer("TotalMemoryConfig", kDb, 0, 0, 16 * kTiB, "bytes",
        "Total memory budget of the data node; 0 = not set (use the explicit areas)"),
    // RonDB name; the default is DuoDB's choice.
    integer("SchemaMemory", kDb, 32 * kMiB, 1 * kMiB, 16 * kGiB, "bytes",
        "Memory for schema objects (tables, columns, indexes)"),
    integer("RedoBuffer", kDb, 32 * kMiB, 1 * kMiB, 4 * kGiB, "bytes",
        "Redo log buffer per LDM thread"),
    integer("LongMessageBuffer", kDb, 64 * kMiB, 512 * kKiB, kNdbUint32Max, "bytes",
        "Buffer for long internal messages"),
    integer("TotalSendBufferMemory", kAllNodes, 0, 0, kNdbUint32Max, "bytes",
        "Send buffer memory shared by all links of the node; 0 = automatic"),
    integer("LockPagesInMainMemory", kDb, 0, 0, 2, "",
        "0 = no locking, 1 = lock after allocation, 2 = lock before allocation"),
    integer("BackupDataBufferSize", kDb, 16 * kMiB, 512 * kKiB, kNdbUint32Max, "bytes",
        "Buffer for backup data"),
    integer("BackupLogBufferSize", kDb, 16 * kMiB, 2 * kMiB, kNdbUint32Max, "bytes",
        "Buffer for the backup log"),

    // --- Transactions and schema limits -----------------------------------------------
    integer("MaxNoOfConcurrentTransactions", kDb, 4096, 32, kNdbUint32Max, "",
        "Transaction records per data node"),
    integer("MaxNoOfConcurrentOperations", kDb, 32 * 1024, 32, kNdbUint32Max, "",
        "Operation records per data node"),
    integer("MaxNoOfConcurrentScans", kDb, 256, 2, 500, "", "Parallel scans per data node"),
    integer("MaxNoOfTables", kDb, 128, 8, 20320, "", "Tables (including index tables)"),
    integer("MaxNoOfAttributes", kDb, 1000, 32, kNdbUint32Max, "", "Columns in all tables"),
    integer("MaxNoOfOrderedIndexes", kDb, 128, 0, kNdbUint32Max, "", "Ordered indexes"),
    integer("MaxNoOfUniqueHashIndexes", kDb, 64, 0, kNdbUint32Max, "", "Unique hash indexes"),
    integer("TransactionDeadlockDetectionTimeout", kDb, 1200, 50, kNdbUint32Max, "ms",
        "Lock wait time before the operation is aborted (MySQL error 1205)"),
    integer("TransactionInactiveTimeout", kDb, kNdbUint32Max, 0, kNdbUint32Max, "ms",
        "Idle time of an open transaction before it is aborted"),

    // --- Heartbeats, checkpoints and start timeouts -----------------------------------
    // 400 ms (NDB: 5000): a frozen data node is suspected after 4 silent intervals,
    // 1.2-2.0 s after it froze (docs/reliability.md "Gray failures" gives the margin).
    integer("HeartbeatIntervalDbDb", kDb, 400, 10, kNdbUint32Max, "ms",
        "Heartbeat interval between data nodes"),
    integer("HeartbeatIntervalDbApi", kDb, 1500, 100, kNdbUint32Max, "ms",
        "Heartbeat interval from data nodes to API nodes"),
    integer("HeartbeatIntervalMgmdMgmd", kMgm, 1500, 100, kNdbUint32Max, "ms",
        "Heartbeat interval between management nodes"),
    integer("TimeBetweenGlobalCheckpoints", kDb, 2000, 20, 32000, "ms",
        "Interval between global checkpoints (group commit to disk)"),
    integer("TimeBetweenLocalCheckpoints", kDb, 20, 0, 31, "log2(4-byte words)",
        "Write volume between local checkpoints: 20 means 4 MiB of changes"),
    integer("TimeBetweenEpochs", kDb, 100, 0, 32000, "ms",
        "Interval between epochs (micro global checkpoints)"),
    // 1000 ms (NDB: 6000): a handler running this long is reported, three times this
    // long stops the node (ndb-kernel/runtime/watchdog.h).
    integer("TimeBetweenWatchDogCheck", kDb, 1000, 70, kNdbUint32Max, "ms",
        "Watchdog: a thread stuck this long is reported, 3 times this long stops the node"),
    integer("StartPartialTimeout", kDb, 30000, 0, kNdbUint32Max, "ms",
        "Wait for all data nodes before a partial start; 0 = wait forever"),
    integer("StartPartitionedTimeout", kDb, 0, 0, kNdbUint32Max, "ms",
        "Wait before starting a possibly partitioned cluster; 0 = wait forever"),
    integer("StartFailureTimeout", kDb, 0, 0, kNdbUint32Max, "ms",
        "Abort a node start that takes longer; 0 = no limit"),
    integer("StartNoNodeGroupTimeout", kDb, 15000, 0, kNdbUint32Max, "ms",
        "Wait for nodes with Nodegroup=65536 before starting without them"),

    // --- Redo log and local checkpoints -----------------------------------------------
    integer("NoOfFragmentLogParts", kDb, 4, 4, 32, "", "Redo log parts per data node"),
    integer("NoOfFragmentLogFiles", kDb, 16, 3, kNdbUint32Max, "",
        "Redo log files per log part"),
    integer("FragmentLogFileSize", kDb, 16 * kMiB, 4 * kMiB, 1 * kGiB, "bytes",
        "Size of each redo log file"),
    boolean("CompressedLCP", kDb, false, "Compress local checkpoint files"),
    integer("DiskIOThreadPool", kDb, 2, 1, 64, "", "IO threads of the file system block"),
    boolean("CompressedBackup", kDb, false, "Compress backup files"),
    boolean("EnablePartialLcp", kDb, true, "Write only changed parts in local checkpoints"),
    integer("RecoveryWork", kDb, 60, 25, 100, "%",
        "Checkpoint storage overhead traded against write load of partial checkpoints"),
    boolean("ODirect", kDb, false, "Use O_DIRECT for redo, checkpoint and backup files"),
    integer("MaxDiskWriteSpeed", kDb, 20 * kMiB, 1 * kMiB, 1024 * kGiB, "bytes/s",
        "Checkpoint write rate limit while no restart is running"),
    integer("MaxDiskWriteSpeedOtherNodeRestart", kDb, 50 * kMiB, 1 * kMiB, 1024 * kGiB, "bytes/s",
        "Checkpoint write rate limit while another data node restarts"),
    integer("MaxDiskWriteSpeedOwnRestart", kDb, 200 * kMiB, 1 * kMiB, 1024 * kGiB, "bytes/s",
        "Checkpoint write rate limit while this data node restarts"),
    integer("MinDiskWriteSpeed", kDb, 10 * kMiB, 1 * kMiB, 1024 * kGiB, "bytes/s",
        "Lowest checkpoint write rate, used while the redo log's own writes lag behind"),

    // --- Threads ----------------------------------------------------------------------
    integer("MaxNoOfExecutionThreads", kDb, 2, 2, 72, "",
        "Execution threads when AutomaticThreadConfig is off"),
    // NDB defaults to false; DuoDB defaults to true, like RonDB (DESIGN.md §3).
    boolean("AutomaticThreadConfig", kDb, true, "Size thread counts from the CPUs available"),
    integer("NumCPUs", kDb, 0, 0, 1024, "",
        "CPUs to plan for with AutomaticThreadConfig; 0 = all available"),
    integer("SchedulerSpinTimer", kDb, 0, 0, 500, "us",
        "How long an idle execution thread looks for work before it sleeps"),
    optional_string("ThreadConfig", kDb,
        "Thread types, counts and CPU bindings, e.g. ldm={count=4},recv,tc; used when "
        "AutomaticThreadConfig is off or not set"),

    // --- Cluster log levels (0 = off .. 15 = everything) ------------------------------
    integer("LogLevelStartup", kDb, 1, 0, 15, "", "Cluster log level for start events"),
    integer("LogLevelShutdown", kDb, 0, 0, 15, "", "Cluster log level for shutdown events"),
    integer("LogLevelStatistic", kDb, 0, 0, 15, "", "Cluster log level for statistics"),
    integer("LogLevelCheckpoint", kDb, 0, 0, 15, "", "Cluster log level for checkpoints"),
    integer("LogLevelNodeRestart", kDb, 0, 0, 15, "", "Cluster log level for node restarts"),
    integer("LogLevelConnection", kDb, 0, 0, 15, "", "Cluster log level for connections"),
    integer("LogLevelError", kDb, 0, 0, 15, "", "Cluster log level for errors"),
    integer("LogLevelCongestion", kDb, 0, 0, 15, "", "Cluster log level for congestion"),
    integer("LogLevelInfo", kDb, 0, 0, 15, "", "Cluster log level for information events"),

    // --- API nodes --------------------------------------------------------------------
    integer("BatchSize", kApi, 256, 1, 992, "", "Rows per scan batch"),
    integer("BatchByteSize", kApi, 16 * kKiB, 1 * kKiB, 1 * kMiB, "bytes",
        "Bytes per scan batch"),
    integer("MaxScanBatchSize", kApi, 256 * kKiB, 32 * kKiB, 16 * kMiB, "bytes",
        "Bytes per scan batch over all fragments"),
    boolean("AutoReconnect", kApi, false, "Reconnect fully after losing the cluster"),

    // --- TCP links --------------------------------------------------------------------
    mandatory_integer("NodeId1", kTcp, 1, 255, "One end of the link"),
    mandatory_integer("NodeId2", kTcp, 1, 255, "The other end of the link"),
    string("HostName1", kTcp, "", "Host of NodeId1; empty = that node's HostName"),
    string("HostName2", kTcp, "", "Host of NodeId2; empty = that node's HostName"),
    integer("SendBufferMemory", kTcp, 2 * kMiB, 256 * kKiB, kNdbUint32Max, "bytes",
        "Send buffer of the link"),
    integer("ReceiveBufferMemory", kTcp, 2 * kMiB, 16 * kKiB, kNdbUint32Max, "bytes",
        "Receive buffer of the link"),
    boolean("Checksum", kTcp, false, "Checksum every message on the link"),
    boolean("PreSendChecksum", kTcp, false, "Verify message checksums before sending"),
    integer("OverloadLimit", kTcp, 0, 0, kNdbUint32Max, "bytes",
        "Unsent bytes at which the link counts as overloaded; 0 = automatic"),
    integer("TCP_SND_BUF_SIZE", kTcp, 0, 0, 2 * kGiB, "bytes",
        "Socket SO_SNDBUF; 0 = OS default"),
    integer("TCP_RCV_BUF_SIZE", kTcp, 0, 0, 2 * kGiB, "bytes",
        "Socket SO_RCVBUF; 0 = OS default"),
};
// clang-format on

// Deprecated NDB spellings still found in old config files.
struct Alias {
  std::string_view alias;
  std::string_view canonical;
};
constexpr Alias kAliases[] = {
    {"Id", "NodeId"},
};

std::string_view resolve_alias(std::string_view name) {
  for (const Alias& alias : kAliases) {
    if (iequals(alias.alias, name)) return alias.canonical;
  }
  return name;
}

char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

}  // namespace

std::string_view section_type_name(SectionType type) {
  switch (type) {
    case SectionType::kDataNode:
      return "ndbd";
    case SectionType::kManagementNode:
      return "ndb_mgmd";
    case SectionType::kApiNode:
      return "api";
    case SectionType::kTcp:
      return "tcp";
  }
  return "unknown";
}

std::optional<SectionName> parse_section_name(std::string_view text) {
  // Lower-case and collapse whitespace runs so "NDBD   Default" matches "ndbd default".
  std::string normalized;
  bool pending_space = false;
  for (char c : text) {
    if (is_space(c)) {
      pending_space = !normalized.empty();
      continue;
    }
    if (pending_space) normalized.push_back(' ');
    pending_space = false;
    normalized.push_back(ascii_lower(c));
  }
  bool is_default = false;
  constexpr std::string_view kDefaultSuffix = " default";
  if (normalized.size() > kDefaultSuffix.size() && normalized.ends_with(kDefaultSuffix)) {
    is_default = true;
    normalized.resize(normalized.size() - kDefaultSuffix.size());
  }
  struct Known {
    std::string_view name;
    SectionType type;
  };
  static constexpr Known kKnown[] = {
      {"ndbd", SectionType::kDataNode},
      {"db", SectionType::kDataNode},
      {"ndb_mgmd", SectionType::kManagementNode},
      {"mgm", SectionType::kManagementNode},
      {"mysqld", SectionType::kApiNode},
      {"api", SectionType::kApiNode},
      {"tcp", SectionType::kTcp},
  };
  for (const Known& known : kKnown) {
    if (normalized == known.name) return SectionName{known.type, is_default};
  }
  return std::nullopt;
}

std::string_view param_type_name(ParamType type) {
  switch (type) {
    case ParamType::kUint64:
      return "integer";
    case ParamType::kBool:
      return "bool";
    case ParamType::kString:
      return "string";
  }
  return "unknown";
}

std::span<const ParamSpec> all_param_specs() {
  return kParams;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

const ParamSpec* find_param_spec(SectionType type, std::string_view name) {
  const std::string_view canonical = resolve_alias(name);
  // A linear scan: config parsing is not hot and the table is ~90 entries.
  for (const ParamSpec& spec : kParams) {
    if ((spec.section_mask & section_bit(type)) != 0 && iequals(spec.name, canonical)) {
      return &spec;
    }
  }
  return nullptr;
}

const ParamSpec* find_param_spec_any_section(std::string_view name) {
  const std::string_view canonical = resolve_alias(name);
  for (const ParamSpec& spec : kParams) {
    if (iequals(spec.name, canonical)) return &spec;
  }
  return nullptr;
}

Result<uint64_t> parse_uint_value(std::string_view text) {
  if (text.empty()) return Status(ErrorCode::kConfigError, "empty value");
  size_t pos = 0;
  uint64_t value = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    const uint64_t digit = static_cast<uint64_t>(text[pos] - '0');
    if (__builtin_mul_overflow(value, uint64_t{10}, &value) ||
        __builtin_add_overflow(value, digit, &value)) {
      return Status(ErrorCode::kConfigError, "number too large");
    }
    ++pos;
  }
  if (pos == 0) return Status(ErrorCode::kConfigError, "not an unsigned integer");
  if (pos == text.size()) return value;
  const std::string_view suffix = text.substr(pos);
  uint64_t multiplier = 0;
  if (suffix.size() == 1) {
    switch (ascii_lower(suffix[0])) {
      case 'k':
        multiplier = kKiB;
        break;
      case 'm':
        multiplier = kMiB;
        break;
      case 'g':
        multiplier = kGiB;
        break;
      default:
        break;
    }
  }
  if (multiplier == 0) {
    return Status(ErrorCode::kConfigError,
                  "bad unit '" + std::string(suffix) + "' (expected K, M or G)");
  }
  if (__builtin_mul_overflow(value, multiplier, &value)) {
    return Status(ErrorCode::kConfigError, "number too large");
  }
  return value;
}

Result<bool> parse_bool_value(std::string_view text) {
  static constexpr std::string_view kTrue[] = {"true", "yes", "1", "y"};
  static constexpr std::string_view kFalse[] = {"false", "no", "0", "n"};
  for (std::string_view word : kTrue) {
    if (iequals(text, word)) return true;
  }
  for (std::string_view word : kFalse) {
    if (iequals(text, word)) return false;
  }
  return Status(ErrorCode::kConfigError, "not a boolean (expected true/false, yes/no, 1/0, y/n)");
}

}  // namespace duo::config
