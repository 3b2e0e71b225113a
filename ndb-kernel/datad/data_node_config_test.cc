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

TEST(DataNodeConfig, NotADataNode) {
  const config::ClusterConfig config = parse();
  for (uint32_t id : {49u, 50u, 9u}) {
    Result<DataNodeConfig> node = data_node_config(config, id);
    ASSERT_FALSE(node.ok());
    EXPECT_EQ(node.status().code(), ErrorCode::kConfigError);
    EXPECT_NE(node.status().message().find("is not a data node"), std::string::npos);
  }
}

mgm::Message status_reply() {
  mgm::Message reply;
  reply.head = "get status reply";
  reply.add("result", "Ok");
  reply.add("nodes", "3");
  reply.add("node.1.type", "NDB");
  reply.add("node.1.status", "STARTED");
  reply.add("node.1.port", "40001");
  reply.add("node.2.type", "NDB");
  reply.add("node.2.status", "NO_CONTACT");
  reply.add("node.49.type", "MGM");
  return reply;
}

TEST(DataNodeConfig, ReportedPorts) {
  Result<std::map<uint16_t, uint16_t>> ports = reported_ports(status_reply());
  ASSERT_TRUE(ports.ok()) << ports.status().message();
  EXPECT_EQ(*ports, (std::map<uint16_t, uint16_t>{{1, 40001}}));

  mgm::Message bad = status_reply();
  bad.add("node.x.port", "1");
  EXPECT_FALSE(reported_ports(bad).ok());
  mgm::Message zero = status_reply();
  zero.add("node.3.port", "0");
  EXPECT_FALSE(reported_ports(zero).ok());
  mgm::Message big = status_reply();
  big.add("node.3.port", "65536");
  EXPECT_FALSE(reported_ports(big).ok());
  mgm::Message failed;
  failed.head = "get status reply";
  failed.add("result", "Unknown command");
  EXPECT_FALSE(reported_ports(failed).ok());
  mgm::Message other;
  other.head = "node stop";
  EXPECT_FALSE(reported_ports(other).ok());
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

}  // namespace
}  // namespace duo::datad
