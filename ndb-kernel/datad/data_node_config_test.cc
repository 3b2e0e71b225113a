#include "ndb-kernel/datad/data_node_config.h"

#include <gtest/gtest.h>

namespace duo::datad {
namespace {

constexpr const char* kConfig = R"(
[ndbd default]
NoOfReplicas=2
DataDir=/tmp/duo
[ndb_mgmd]
NodeId=49
HostName=127.0.0.1
[ndbd]
NodeId=1
HostName=127.0.0.1
ServerPort=11860
[ndbd]
NodeId=2
HostName=10.0.0.2
DataDir=/data/two
[ndbd]
NodeId=3
[ndbd]
NodeId=4
[api]
NodeId=50
)";

config::ClusterConfig parse() {
  Result<config::ClusterConfig> parsed = config::parse_config_string(kConfig);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  return std::move(parsed).value();
}

TEST(DataNodeConfig, OwnSectionAndPeers) {
  const config::ClusterConfig config = parse();
  Result<DataNodeConfig> two = data_node_config(config, 2);
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_EQ(two->node_id, 2);
  EXPECT_EQ(two->host_name, "10.0.0.2");
  EXPECT_EQ(two->server_port, 0);  // dynamic
  EXPECT_EQ(two->data_dir, "/data/two");
  EXPECT_EQ(two->file_system_path, "/data/two");
  EXPECT_EQ(two->node_group, 0u);
  EXPECT_EQ(two->no_of_replicas, 2u);
  ASSERT_EQ(two->peers.size(), 3u);
  EXPECT_EQ(two->peers[0].node_id, 1);
  EXPECT_EQ(two->peers[0].host_name, "127.0.0.1");
  EXPECT_EQ(two->peers[0].server_port, 11860);
  EXPECT_EQ(two->peers[1].node_id, 3);
  EXPECT_EQ(two->peers[1].host_name, "localhost");  // the default HostName

  Result<DataNodeConfig> three = data_node_config(config, 3);
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three->node_group, 1u);  // assigned in NodeId order, 2 per group
  EXPECT_EQ(three->data_dir, "/tmp/duo");
}

TEST(DataNodeConfig, MembershipParameters) {
  const config::ClusterConfig config = parse();
  Result<DataNodeConfig> one = data_node_config(config, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->heartbeat_interval_ms, 400u);  // DuoDB's default (NDB: 5000)
  EXPECT_EQ(one->arbitration_timeout_ms, 7500u);  // NDB's default
  EXPECT_EQ(one->watchdog_check_ms, 1000u);       // DuoDB's default (NDB: 6000)
  EXPECT_TRUE(one->arbitrator_configured);  // [ndb_mgmd] ArbitrationRank defaults to 1

  Result<config::ClusterConfig> no_rank = config::parse_config_string(
      "[ndbd default]\nNoOfReplicas=1\nHeartbeatIntervalDbDb=200\nArbitrationTimeout=900\n"
      "[ndb_mgmd]\nNodeId=49\nArbitrationRank=0\n[ndbd]\nNodeId=1\n");
  ASSERT_TRUE(no_rank.ok()) << no_rank.status().message();
  Result<DataNodeConfig> alone = data_node_config(*no_rank, 1);
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ(alone->heartbeat_interval_ms, 200u);
  EXPECT_EQ(alone->arbitration_timeout_ms, 900u);
  EXPECT_EQ(alone->watchdog_check_ms, 1000u);
  EXPECT_FALSE(alone->arbitrator_configured);
}

TEST(DataNodeConfig, PartialLcpParameters) {
  const config::ClusterConfig config = parse();
  Result<DataNodeConfig> one = data_node_config(config, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->partial_lcp);  // NDB's defaults
  EXPECT_EQ(one->recovery_work_percent, 60u);

  Result<config::ClusterConfig> full = config::parse_config_string(
      "[ndbd default]\nNoOfReplicas=1\nEnablePartialLcp=false\nRecoveryWork=30\n"
      "[ndb_mgmd]\nNodeId=49\n[ndbd]\nNodeId=1\n");
  ASSERT_TRUE(full.ok()) << full.status().message();
  Result<DataNodeConfig> alone = data_node_config(*full, 1);
  ASSERT_TRUE(alone.ok());
  EXPECT_FALSE(alone->partial_lcp);
  EXPECT_EQ(alone->recovery_work_percent, 30u);
}

TEST(DataNodeConfig, DiskWriteSpeedParameters) {
  const config::ClusterConfig config = parse();
  Result<DataNodeConfig> one = data_node_config(config, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->max_disk_write_speed, 20u << 20);  // NDB's defaults
  EXPECT_EQ(one->max_disk_write_speed_other_node_restart, 50u << 20);
  EXPECT_EQ(one->max_disk_write_speed_own_restart, 200u << 20);
  EXPECT_EQ(one->min_disk_write_speed, 10u << 20);

  Result<config::ClusterConfig> set = config::parse_config_string(
      "[ndbd default]\nNoOfReplicas=1\nMaxDiskWriteSpeed=200M\n"
      "MaxDiskWriteSpeedOtherNodeRestart=300M\nMaxDiskWriteSpeedOwnRestart=1G\n"
      "MinDiskWriteSpeed=2M\n[ndb_mgmd]\nNodeId=49\n[ndbd]\nNodeId=1\n");
  ASSERT_TRUE(set.ok()) << set.status().message();
  Result<DataNodeConfig> alone = data_node_config(*set, 1);
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_EQ(alone->max_disk_write_speed, 200u << 20);
  EXPECT_EQ(alone->max_disk_write_speed_other_node_restart, 300u << 20);
  EXPECT_EQ(alone->max_disk_write_speed_own_restart, uint64_t{1} << 30);
  EXPECT_EQ(alone->min_disk_write_speed, 2u << 20);
}

TEST(DataNodeConfig, DiskWriteSpeedsOutOfRangeAreRefusedByTheParser) {
  // NDB's range for each: 1M .. 1024G bytes per second.
  for (const char* line : {"MaxDiskWriteSpeed=1000000", "MaxDiskWriteSpeedOtherNodeRestart=0",
                           "MaxDiskWriteSpeedOwnRestart=1025G", "MinDiskWriteSpeed=512K"}) {
    Result<config::ClusterConfig> bad =
        config::parse_config_string(std::string("[ndbd default]\nNoOfReplicas=1\n") + line +
                                    "\n[ndb_mgmd]\nNodeId=49\n[ndbd]\nNodeId=1\n");
    ASSERT_FALSE(bad.ok()) << line;
    EXPECT_EQ(bad.status().code(), ErrorCode::kConfigError);
    EXPECT_NE(bad.status().message().find("out of range 1048576..1099511627776"), std::string::npos)
        << bad.status().message();
  }
}

TEST(DataNodeConfig, MinDiskWriteSpeedAboveTheMaximumIsRefused) {
  auto node_of = [](const std::string& lines) {
    Result<config::ClusterConfig> parsed = config::parse_config_string(
        "[ndbd default]\nNoOfReplicas=1\n" + lines + "[ndb_mgmd]\nNodeId=49\n[ndbd]\nNodeId=1\n");
    EXPECT_TRUE(parsed.ok()) << parsed.status().message();
    return data_node_config(*parsed, 1);
  };
  Result<DataNodeConfig> bad = node_of("MinDiskWriteSpeed=30M\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kConfigError);
  EXPECT_NE(bad.status().message().find(
                "MinDiskWriteSpeed=31457280 is greater than MaxDiskWriteSpeed=20971520"),
            std::string::npos)
      << bad.status().message();
  EXPECT_TRUE(node_of("MinDiskWriteSpeed=20M\n").ok());
  // Raising MaxDiskWriteSpeed alone past the restart limits is fine (they never slow a
  // checkpoint down).
  Result<DataNodeConfig> raised = node_of("MaxDiskWriteSpeed=200M\n");
  ASSERT_TRUE(raised.ok()) << raised.status().message();
  EXPECT_EQ(raised->max_disk_write_speed_other_node_restart, 50u << 20);
}

TEST(DataNodeConfig, NotADataNode) {
  const config::ClusterConfig config = parse();
  for (uint32_t id : {49u, 50u, 9u}) {
    Result<DataNodeConfig> node = data_node_config(config, id);
    ASSERT_FALSE(node.ok());
    EXPECT_EQ(node.status().code(), ErrorCode::kConfigError);
    EXPECT_NE(node.status().message().find("is not a data node"), std::string::npos);
  }
}


TEST(DataNodeConfig, StartedWhenAllLinksUp) {
  const config::ClusterConfig config = parse();
  Result<DataNodeConfig> one = data_node_config(config, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(missing_links(*one, {}), (std::vector<uint16_t>{2, 3, 4}));
  EXPECT_EQ(missing_links(*one, {3, 2}), (std::vector<uint16_t>{4}));
  EXPECT_TRUE(missing_links(*one, {2, 3, 4}).empty());
  EXPECT_EQ(format_ids({2, 4}), "2 4");
  EXPECT_EQ(format_ids({}), "none");
}

// The node's threads from AutomaticThreadConfig, ThreadConfig, NumCPUs and
// MaxNoOfExecutionThreads, as NDB decides (DuoDB defaults to automatic, like RonDB).
kernel::ThreadConfig threads_of(const std::string& ndbd_default, std::string* how,
                                uint32_t cores = 2) {
  const std::string text = "[ndbd default]\nNoOfReplicas=1\n" + ndbd_default +
                           "\n[ndb_mgmd]\nNodeId=49\n[ndbd]\nNodeId=1\n[api]\nNodeId=50\n";
  Result<config::ClusterConfig> parsed = config::parse_config_string(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  Result<DataNodeConfig> node = data_node_config(*parsed, 1);
  EXPECT_TRUE(node.ok());
  Result<kernel::ThreadConfig> threads = thread_layout_for(*node, cores, how);
  EXPECT_TRUE(threads.ok()) << threads.status().message();
  return threads.ok() ? *threads : kernel::ThreadConfig{};
}

TEST(DataNodeConfig, ThreadLayoutRules) {
  std::string how;
  // Nothing said: automatic for the machine (2 cores: one receive thread does all).
  EXPECT_EQ(threads_of("", &how).layout, kernel::automatic_thread_layout(2));
  EXPECT_EQ(how, "automatic thread layout for 2 CPU(s)");
  EXPECT_EQ(threads_of("NumCPUs=8", &how).layout, kernel::automatic_thread_layout(8));
  EXPECT_EQ(how, "automatic thread layout for 8 CPU(s) (NumCPUs)");
  // ThreadConfig alone is used.
  kernel::ThreadConfig manual = threads_of("ThreadConfig=ldm={count=3},tc", &how);
  EXPECT_EQ(manual.layout.ldm_threads, 3u);
  EXPECT_EQ(manual.layout.tc_threads, 1u);
  EXPECT_EQ(how, "ThreadConfig=ldm={count=3},tc");
  // AutomaticThreadConfig=1 given: ThreadConfig is ignored, as in NDB.
  EXPECT_EQ(threads_of("AutomaticThreadConfig=1\nThreadConfig=ldm={count=3}", &how, 16).layout,
            kernel::automatic_thread_layout(16));
  EXPECT_NE(how.find("ThreadConfig is ignored"), std::string::npos);
  // AutomaticThreadConfig=0 without ThreadConfig: sized by MaxNoOfExecutionThreads.
  EXPECT_EQ(threads_of("AutomaticThreadConfig=0\nMaxNoOfExecutionThreads=8", &how).layout,
            kernel::automatic_thread_layout(8));
  EXPECT_EQ(how, "MaxNoOfExecutionThreads=8");
}

TEST(DataNodeConfig, BadThreadConfigNamesItsLine) {
  const std::string text =
      "[ndbd default]\nNoOfReplicas=1\nThreadConfig=ldm={count=2},query\n[ndb_mgmd]\n"
      "NodeId=49\n[ndbd]\nNodeId=1\n[api]\nNodeId=50\n";
  Result<config::ClusterConfig> parsed = config::parse_config_string(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  Result<DataNodeConfig> node = data_node_config(*parsed, 1);
  ASSERT_TRUE(node.ok());
  std::string how;
  Result<kernel::ThreadConfig> threads = thread_layout_for(*node, 2, &how);
  ASSERT_FALSE(threads.ok());
  EXPECT_TRUE(threads.status().is(ErrorCode::kConfigError));
  EXPECT_EQ(threads.status().message(),
            "config.ini:3: ThreadConfig: thread type 'query' is not supported by DuoDB");
}

}  // namespace
}  // namespace duo::datad

namespace duo::datad {
namespace {

using storage::MemoryArea;
constexpr uint64_t kMiB = 1024 * 1024;

size_t reserved(const storage::GlobalMemoryConfig& memory, MemoryArea area) {
  return memory.areas[static_cast<size_t>(area)].reserved_pages;
}
size_t maximum(const storage::GlobalMemoryConfig& memory, MemoryArea area) {
  return memory.areas[static_cast<size_t>(area)].max_pages;
}

TEST(DataNodeMemory, ReadsParametersWithDefaults) {
  Result<config::ClusterConfig> parsed = config::parse_config_string(R"(
[ndbd default]
NoOfReplicas=1
DataMemory=80M
[ndb_mgmd]
NodeId=49
[ndbd]
NodeId=1
TransactionMemory=8M
)");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  Result<DataNodeConfig> one = data_node_config(*parsed, 1);
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(one->data_memory, 80 * kMiB);
  EXPECT_EQ(one->transaction_memory, 8 * kMiB);
  EXPECT_EQ(one->disk_page_buffer_memory, 64 * kMiB);  // built-in defaults
  EXPECT_EQ(one->schema_memory, 32 * kMiB);
  EXPECT_EQ(one->shared_global_memory, 128 * kMiB);
  EXPECT_EQ(one->total_memory_config, 0u);
}

TEST(DataNodeMemory, AreasAndSharedPoolMakeTheTotal) {
  DataNodeConfig node;
  node.data_memory = 80 * kMiB;
  node.disk_page_buffer_memory = 8 * kMiB;
  node.transaction_memory = 16 * kMiB;
  node.schema_memory = 4 * kMiB;
  node.shared_global_memory = 32 * kMiB;
  Result<storage::GlobalMemoryConfig> memory = global_memory_config(node);
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  EXPECT_EQ(reserved(*memory, MemoryArea::kDataMemory), 2560u);
  EXPECT_EQ(maximum(*memory, MemoryArea::kDataMemory), 2560u);  // hard limit
  EXPECT_EQ(reserved(*memory, MemoryArea::kDiskPageBuffer), 256u);
  EXPECT_EQ(reserved(*memory, MemoryArea::kTransactionMemory), 512u);
  EXPECT_EQ(maximum(*memory, MemoryArea::kTransactionMemory), 0u);  // may borrow
  EXPECT_EQ(reserved(*memory, MemoryArea::kSchemaMemory), 128u);
  EXPECT_EQ(memory->total_bytes, (80 + 8 + 16 + 4 + 32) * kMiB);
  EXPECT_EQ(describe_memory(*memory),
            "DataMemory 80 MB (2560 pages), DiskPageBufferMemory 8 MB (256 pages), "
            "TransactionMemory 16 MB (512 pages), SchemaMemory 4 MB (128 pages), "
            "shared pool 32 MB (1024 pages), total 140 MB (4480 pages)");
}

TEST(DataNodeMemory, AutomaticTransactionMemory) {
  DataNodeConfig node;
  node.data_memory = 200 * kMiB;
  EXPECT_EQ(effective_transaction_memory(node), 20 * kMiB);  // 10% of DataMemory
  node.data_memory = 16 * kMiB;
  EXPECT_EQ(effective_transaction_memory(node), kMinAutomaticTransactionMemory);
  node.transaction_memory = 1 * kMiB;
  EXPECT_EQ(effective_transaction_memory(node), 1 * kMiB);  // explicit wins
  node.transaction_memory = 0;
  Result<storage::GlobalMemoryConfig> memory = global_memory_config(node);
  ASSERT_TRUE(memory.ok());
  EXPECT_EQ(reserved(*memory, MemoryArea::kTransactionMemory), 128u);  // 4 MiB
}

TEST(DataNodeMemory, TotalMemoryConfigIsTheTotal) {
  DataNodeConfig node;
  node.data_memory = 32 * kMiB;
  node.disk_page_buffer_memory = 8 * kMiB;
  node.schema_memory = 4 * kMiB;
  node.shared_global_memory = 128 * kMiB;  // not used with TotalMemoryConfig
  node.total_memory_config = 64 * kMiB;
  Result<storage::GlobalMemoryConfig> memory = global_memory_config(node);
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  EXPECT_EQ(memory->total_bytes, 64 * kMiB);
  EXPECT_NE(describe_memory(*memory).find("shared pool 16 MB (512 pages), total 64 MB"),
            std::string::npos)
      << describe_memory(*memory);
  // The budget really maps (no prefault in a unit test).
  memory->prefault = false;
  Result<std::unique_ptr<storage::GlobalMemory>> global = storage::GlobalMemory::create(*memory);
  ASSERT_TRUE(global.ok()) << global.status().message();
  EXPECT_EQ((*global)->usage(MemoryArea::kDataMemory).max_pages, 1024u);
}

TEST(DataNodeMemory, TotalMemoryConfigMustCoverTheAreas) {
  DataNodeConfig node;
  node.data_memory = 64 * kMiB;
  node.disk_page_buffer_memory = 8 * kMiB;
  node.schema_memory = 4 * kMiB;
  node.total_memory_config = 32 * kMiB;
  Result<storage::GlobalMemoryConfig> memory = global_memory_config(node);
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.status().code(), ErrorCode::kConfigError);
  for (const char* name : {"TotalMemoryConfig", "DataMemory", "DiskPageBufferMemory",
                           "TransactionMemory", "SchemaMemory"}) {
    EXPECT_NE(memory.status().message().find(name), std::string::npos)
        << memory.status().message();
  }
}

}  // namespace
}  // namespace duo::datad
