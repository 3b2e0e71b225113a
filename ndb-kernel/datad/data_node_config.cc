#include "ndb-kernel/datad/data_node_config.h"

#include <algorithm>

namespace duo::datad {

namespace {

// The MaxDiskWriteSpeed family (the parser checked each range). A minimum above the
// maximum is a mistake no rule can honour. A restart limit below MaxDiskWriteSpeed is
// accepted: the rule that picks the limit (local_query/checkpoint_rate.h) never lets a
// restart slow checkpoints down, so raising MaxDiskWriteSpeed alone keeps working.
Status read_disk_write_speeds(const config::ConfigSection& own, DataNodeConfig* out) {
  auto read = [&own](std::string_view name, uint64_t* value) {
    if (Result<uint64_t> configured = own.get_uint(name); configured.ok()) *value = *configured;
  };
  read("MaxDiskWriteSpeed", &out->max_disk_write_speed);
  read("MaxDiskWriteSpeedOtherNodeRestart", &out->max_disk_write_speed_other_node_restart);
  read("MaxDiskWriteSpeedOwnRestart", &out->max_disk_write_speed_own_restart);
  read("MinDiskWriteSpeed", &out->min_disk_write_speed);
  if (out->min_disk_write_speed > out->max_disk_write_speed) {
    return Status(
        ErrorCode::kConfigError,
        "data node " + std::to_string(out->node_id) +
            ": MinDiskWriteSpeed=" + std::to_string(out->min_disk_write_speed) +
            " is greater than MaxDiskWriteSpeed=" + std::to_string(out->max_disk_write_speed) +
            "; MinDiskWriteSpeed must be less than or equal to MaxDiskWriteSpeed");
  }
  return Status::OK();
}

}  // namespace

Result<DataNodeConfig> data_node_config(const config::ClusterConfig& config, uint32_t node_id) {
  const config::ConfigSection* own = config.find_node(node_id);
  if (own == nullptr || own->type() != config::SectionType::kDataNode) {
    return Status(ErrorCode::kConfigError, "node " + std::to_string(node_id) +
                                               " is not a data node ([ndbd]) in " +
                                               config.file_name());
  }
  DataNodeConfig out;
  out.node_id = static_cast<uint16_t>(node_id);
  out.no_of_replicas = config.no_of_replicas();
  if (Result<std::string> host = own->get_string("HostName"); host.ok()) out.host_name = *host;
  if (out.host_name.empty()) out.host_name = "localhost";
  if (Result<uint64_t> port = own->get_uint("ServerPort"); port.ok()) {
    out.server_port = static_cast<uint16_t>(*port);
  }
  if (Result<std::string> dir = own->get_string("DataDir"); dir.ok()) out.data_dir = *dir;
  if (out.data_dir.empty()) out.data_dir = ".";
  if (Result<std::string> fs = own->get_string("FileSystemPath"); fs.ok()) {
    out.file_system_path = *fs;
  }
  if (out.file_system_path.empty()) out.file_system_path = out.data_dir;
  {
    std::string dd;
    if (Result<std::string> path = own->get_string("FileSystemPathDD"); path.ok()) dd = *path;
    out.data_files_path = dd;
    out.undo_files_path = dd;
    if (Result<std::string> path = own->get_string("FileSystemPathDataFiles"); path.ok()) {
      out.data_files_path = *path;
    }
    if (Result<std::string> path = own->get_string("FileSystemPathUndoFiles"); path.ok()) {
      out.undo_files_path = *path;
    }
  }
  if (Result<std::string> lg = own->get_string("InitialLogFileGroup"); lg.ok()) {
    out.initial_logfile_group = *lg;
  }
  if (Result<std::string> ts = own->get_string("InitialTablespace"); ts.ok()) {
    out.initial_tablespace = *ts;
  }
  if (Result<uint64_t> group = own->get_uint("Nodegroup"); group.ok()) out.node_group = *group;
  auto bytes = [own](std::string_view name) -> uint64_t {
    Result<uint64_t> value = own->get_uint(name);
    return value.ok() ? *value : 0;
  };
  out.data_memory = bytes("DataMemory");
  out.disk_page_buffer_memory = bytes("DiskPageBufferMemory");
  out.transaction_memory = bytes("TransactionMemory");
  out.schema_memory = bytes("SchemaMemory");
  out.shared_global_memory = bytes("SharedGlobalMemory");
  out.total_memory_config = bytes("TotalMemoryConfig");
  out.max_transactions = static_cast<uint32_t>(bytes("MaxNoOfConcurrentTransactions"));
  out.max_operations = static_cast<uint32_t>(bytes("MaxNoOfConcurrentOperations"));
  out.max_scans = static_cast<uint32_t>(bytes("MaxNoOfConcurrentScans"));
  out.deadlock_timeout_ms = bytes("TransactionDeadlockDetectionTimeout");
  out.gcp_interval_ms = bytes("TimeBetweenGlobalCheckpoints");
  out.start_partial_timeout_ms = bytes("StartPartialTimeout");
  out.redo_buffer_bytes = bytes("RedoBuffer");
  out.redo_file_bytes = bytes("FragmentLogFileSize");
  out.redo_file_count = static_cast<uint32_t>(bytes("NoOfFragmentLogFiles"));
  out.lcp_log2_words = static_cast<uint32_t>(bytes("TimeBetweenLocalCheckpoints"));
  out.disk_io_threads = static_cast<uint32_t>(bytes("DiskIOThreadPool"));
  out.scheduler_spin_us = bytes("SchedulerSpinTimer");
  out.num_cpus = static_cast<uint32_t>(bytes("NumCPUs"));
  out.max_execution_threads = static_cast<uint32_t>(bytes("MaxNoOfExecutionThreads"));
  if (const config::ConfigValue* automatic = own->find("AutomaticThreadConfig")) {
    out.automatic_thread_config = automatic->uint_value != 0;
    out.automatic_thread_config_set = automatic->source == config::ValueSource::kSection ||
                                      automatic->source == config::ValueSource::kDefaultSection;
  }
  if (const config::ConfigValue* threads = own->find("ThreadConfig")) {
    out.thread_config = threads->string_value;
    out.thread_config_line = threads->line;
  }
  out.heartbeat_interval_ms = bytes("HeartbeatIntervalDbDb");
  out.arbitration_timeout_ms = bytes("ArbitrationTimeout");
  out.watchdog_check_ms = bytes("TimeBetweenWatchDogCheck");
  for (const config::ConfigSection* mgm :
       config.sections_of(config::SectionType::kManagementNode)) {
    Result<uint64_t> rank = mgm->get_uint("ArbitrationRank");
    out.arbitrator_configured |= rank.ok() && *rank > 0;
  }
  if (Result<bool> compressed = own->get_bool("CompressedLCP"); compressed.ok()) {
    out.compressed_lcp = *compressed;
  }
  if (Result<bool> partial = own->get_bool("EnablePartialLcp"); partial.ok()) {
    out.partial_lcp = *partial;
  }
  if (Result<uint64_t> work = own->get_uint("RecoveryWork"); work.ok()) {
    out.recovery_work_percent = static_cast<uint32_t>(*work);
  }
  DUO_RETURN_IF_ERROR(read_disk_write_speeds(*own, &out));
  for (uint32_t id : config.node_ids(config::SectionType::kApiNode)) {
    out.api_nodes.push_back(static_cast<uint16_t>(id));
  }
  std::sort(out.api_nodes.begin(), out.api_nodes.end());
  for (const config::ConfigSection* section : config.sections_of(config::SectionType::kDataNode)) {
    if (section->node_id() == node_id) continue;
    PeerDataNode peer;
    peer.node_id = static_cast<uint16_t>(section->node_id());
    if (Result<std::string> host = section->get_string("HostName"); host.ok()) {
      peer.host_name = *host;
    }
    if (peer.host_name.empty()) peer.host_name = "localhost";
    if (Result<uint64_t> port = section->get_uint("ServerPort"); port.ok()) {
      peer.server_port = static_cast<uint16_t>(*port);
    }
    out.peers.push_back(std::move(peer));
  }
  std::sort(out.peers.begin(), out.peers.end(),
            [](const PeerDataNode& a, const PeerDataNode& b) { return a.node_id < b.node_id; });
  return out;
}

uint64_t effective_transaction_memory(const DataNodeConfig& config) {
  if (config.transaction_memory != 0) return config.transaction_memory;
  return std::max<uint64_t>(config.data_memory / 10, kMinAutomaticTransactionMemory);
}

namespace {
size_t pages_of(uint64_t bytes) { return static_cast<size_t>(bytes / storage::kPageSize); }

// "80 MB" when whole MiB, else "1568 KB".
std::string format_size(size_t pages) {
  const uint64_t bytes = static_cast<uint64_t>(pages) * storage::kPageSize;
  constexpr uint64_t kMiB = 1024 * 1024;
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MB";
  return std::to_string(bytes / 1024) + " KB";
}

std::string size_and_pages(size_t pages) {
  return format_size(pages) + " (" + std::to_string(pages) + " pages)";
}
}  // namespace

Result<storage::GlobalMemoryConfig> global_memory_config(const DataNodeConfig& config) {
  using storage::MemoryArea;
  storage::GlobalMemoryConfig memory;
  auto& areas = memory.areas;
  auto area = [&areas](MemoryArea a) -> storage::AreaLimits& {
    return areas[static_cast<size_t>(a)];
  };
  area(MemoryArea::kDataMemory).reserved_pages = pages_of(config.data_memory);
  area(MemoryArea::kDataMemory).max_pages = pages_of(config.data_memory);
  area(MemoryArea::kDiskPageBuffer).reserved_pages = pages_of(config.disk_page_buffer_memory);
  area(MemoryArea::kDiskPageBuffer).max_pages = pages_of(config.disk_page_buffer_memory);
  area(MemoryArea::kTransactionMemory).reserved_pages =
      pages_of(effective_transaction_memory(config));
  area(MemoryArea::kSchemaMemory).reserved_pages = pages_of(config.schema_memory);
  if (area(MemoryArea::kDataMemory).reserved_pages == 0) {
    return Status(ErrorCode::kConfigError, "DataMemory must be at least one 32 KiB page");
  }
  uint64_t reserved_bytes = 0;
  for (const storage::AreaLimits& limits : areas) {
    reserved_bytes += static_cast<uint64_t>(limits.reserved_pages) * storage::kPageSize;
  }
  if (config.total_memory_config != 0) {
    const uint64_t total = pages_of(config.total_memory_config) * storage::kPageSize;
    if (total < reserved_bytes) {
      return Status(ErrorCode::kConfigError,
                    "TotalMemoryConfig (" + std::to_string(config.total_memory_config) +
                        " bytes) is smaller than DataMemory + DiskPageBufferMemory + "
                        "TransactionMemory + SchemaMemory (" +
                        std::to_string(reserved_bytes) + " bytes); raise TotalMemoryConfig or "
                        "lower those parameters");
    }
    memory.total_bytes = total;
  } else {
    memory.total_bytes =
        reserved_bytes + pages_of(config.shared_global_memory) * storage::kPageSize;
  }
  if (memory.total_bytes / storage::kPageSize > UINT32_MAX) {
    return Status(ErrorCode::kConfigError, "total data node memory (DataMemory + ... + "
                                           "SharedGlobalMemory, or TotalMemoryConfig) too large");
  }
  return memory;
}

std::string describe_memory(const storage::GlobalMemoryConfig& memory) {
  std::string out;
  size_t reserved = 0;
  for (size_t i = 0; i < memory.areas.size(); ++i) {
    const size_t pages = memory.areas[i].reserved_pages;
    reserved += pages;
    out += std::string(out.empty() ? "" : ", ") +
           storage::area_name(static_cast<storage::MemoryArea>(i)) + " " + size_and_pages(pages);
  }
  const size_t total = memory.total_bytes / storage::kPageSize;
  out += ", shared pool " + size_and_pages(total - std::min(total, reserved));
  out += ", total " + size_and_pages(total);
  return out;
}

std::vector<uint16_t> missing_links(const DataNodeConfig& config,
                                    const std::vector<uint16_t>& connected) {
  std::vector<uint16_t> missing;
  for (const PeerDataNode& peer : config.peers) {
    if (std::find(connected.begin(), connected.end(), peer.node_id) == connected.end()) {
      missing.push_back(peer.node_id);
    }
  }
  return missing;
}

std::string format_ids(const std::vector<uint16_t>& ids) {
  if (ids.empty()) return "none";
  std::string out;
  for (uint16_t id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
  return out;
}

Result<kernel::ThreadConfig> thread_layout_for(const DataNodeConfig& config,
                                               uint32_t available_cores, std::string* how) {
  const uint32_t cores = config.num_cpus != 0 ? config.num_cpus : available_cores;
  const std::string for_cores = std::to_string(cores) + " CPU(s)" +
                                (config.num_cpus != 0 ? " (NumCPUs)" : "");
  if (config.automatic_thread_config_set && config.automatic_thread_config) {
    *how = "AutomaticThreadConfig for " + for_cores;
    if (!config.thread_config.empty()) *how += "; ThreadConfig is ignored, as in NDB";
    return kernel::ThreadConfig{kernel::automatic_thread_layout(cores), {}, {}};
  }
  if (!config.thread_config.empty()) {
    Result<kernel::ThreadConfig> parsed = kernel::parse_thread_config(config.thread_config);
    if (!parsed.ok()) {
      return Status(ErrorCode::kConfigError,
                    "config.ini:" + std::to_string(config.thread_config_line) + ": " +
                        parsed.status().message());
    }
    *how = "ThreadConfig=" + config.thread_config;
    return parsed;
  }
  if (config.automatic_thread_config_set) {  // AutomaticThreadConfig=0, no ThreadConfig
    const uint32_t threads = std::max<uint32_t>(1, config.max_execution_threads);
    *how = "MaxNoOfExecutionThreads=" + std::to_string(threads);
    return kernel::ThreadConfig{kernel::automatic_thread_layout(threads), {}, {}};
  }
  *how = "automatic thread layout for " + for_cores;
  return kernel::ThreadConfig{kernel::automatic_thread_layout(cores), {}, {}};
}

}  // namespace duo::datad
