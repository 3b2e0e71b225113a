// The sample config.ini files shipped in the tarball (share/duodb/config/) are read by
// the real parser and the data node's configuration and memory budget are derived from
// them, as duo_mgmd and duo_datad do at start: a sample that a release would ship but
// the programs refuse fails here. The laptop sample also runs a real cluster in the
// package test (tests/package_test.py, scenario debian12).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ndb-kernel/common/config/config_parser.h"
#include "ndb-kernel/datad/data_node_config.h"

namespace duo {
namespace {

std::string sample(const std::string& name) {
  return std::string(DUO_SAMPLE_CONFIG_DIR) + "/" + name;
}

// Parses the file and derives every data node's configuration and memory budget.
// Returns the node groups the data nodes fall into.
std::set<uint32_t> check_sample(const std::string& path, size_t data_nodes) {
  Result<config::ClusterConfig> parsed = config::parse_config_file(path);
  EXPECT_TRUE(parsed.ok()) << path << ": " << parsed.status().message();
  std::set<uint32_t> groups;
  if (!parsed.ok()) return groups;
  EXPECT_EQ(parsed->no_of_replicas(), 2u) << path;
  const std::vector<uint32_t> ids = parsed->node_ids(config::SectionType::kDataNode);
  EXPECT_EQ(ids.size(), data_nodes) << path;
  EXPECT_EQ(parsed->node_ids(config::SectionType::kManagementNode).size(), 1u) << path;
  for (uint32_t id : ids) {
    Result<datad::DataNodeConfig> node = datad::data_node_config(*parsed, id);
    EXPECT_TRUE(node.ok()) << path << " node " << id << ": " << node.status().message();
    if (!node.ok()) continue;
    Result<storage::GlobalMemoryConfig> memory = datad::global_memory_config(*node);
    EXPECT_TRUE(memory.ok()) << path << " node " << id << ": " << memory.status().message();
    groups.insert(node->node_group);
  }
  return groups;
}

TEST(SampleConfig, LaptopIsOneHostTwoReplicas) {
  EXPECT_EQ(check_sample(sample("laptop.ini"), 2), (std::set<uint32_t>{0}));
}

TEST(SampleConfig, TwoNodesOnThreeHosts) {
  EXPECT_EQ(check_sample(sample("two-nodes-three-hosts.ini"), 2), (std::set<uint32_t>{0}));
}

TEST(SampleConfig, FourNodesInTwoNodeGroups) {
  EXPECT_EQ(check_sample(sample("four-nodes-two-groups.ini"), 4), (std::set<uint32_t>{0, 1}));
}

}  // namespace
}  // namespace duo
