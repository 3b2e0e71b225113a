// Tests for distribution.h: fragment placement spreads fragments, primaries and log
// parts evenly and puts every node of a group in each replica chain once; the
// distribution hash is pinned to exact values (it places rows: an accidental change
// must fail here), respects the key columns' collation and refuses missing keys; and
// ClusterTopology is read from real config.ini text.
#include "ndb-kernel/protocol/distribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "storage/fragment/fragment_records.h"  // kHashSeed, the index hash to differ from

namespace duo::protocol {
namespace {

using storage::AttrValues;
using storage::Collation;
using storage::ColumnDef;
using storage::ColumnType;
using storage::TableSchema;

ClusterTopology topology_of(std::vector<std::vector<uint16_t>> groups, uint32_t log_parts = 4,
                            bool classic = false) {
  ClusterTopology topology;
  topology.node_groups = std::move(groups);
  topology.log_parts = log_parts;
  topology.classic_fragmentation = classic;
  return topology;
}

// ---- Placement ----

// ClassicFragmentation's count (replicas * log parts per group): the placement tables
// created before PartitionsPerNode have, so it must never change.
TEST(Distribution, PlacementIsPinnedForOneNodeGroup) {
  const ClusterTopology topology = topology_of({{1, 2}}, 4, /*classic=*/true);
  EXPECT_EQ(topology.default_fragment_count(), 8u);
  const struct {
    uint16_t log_part;
    std::vector<uint16_t> replicas;
  } kExpected[] = {{0, {1, 2}}, {0, {2, 1}}, {1, {1, 2}}, {1, {2, 1}},
                   {2, {1, 2}}, {2, {2, 1}}, {3, {1, 2}}, {3, {2, 1}}};
  for (uint32_t fragment = 0; fragment < std::size(kExpected); ++fragment) {
    const FragmentPlacement placement = place_fragment(topology, fragment, 8);
    EXPECT_EQ(placement.node_group, 0u) << "fragment " << fragment;
    EXPECT_EQ(placement.log_part, kExpected[fragment].log_part) << "fragment " << fragment;
    EXPECT_EQ(placement.replicas, kExpected[fragment].replicas) << "fragment " << fragment;
  }
}

// PartitionsPerNode's default (2): 4 fragments on 2 nodes, one per log part, primaries
// alternating.
TEST(Distribution, PlacementIsPinnedForPartitionsPerNode) {
  const ClusterTopology topology = topology_of({{1, 2}});
  EXPECT_EQ(topology.fragments_per_node(), 2u);
  EXPECT_EQ(topology.default_fragment_count(), 4u);
  const struct {
    uint16_t log_part;
    std::vector<uint16_t> replicas;
  } kExpected[] = {{0, {1, 2}}, {1, {2, 1}}, {2, {1, 2}}, {3, {2, 1}}};
  for (uint32_t fragment = 0; fragment < std::size(kExpected); ++fragment) {
    const FragmentPlacement placement = place_fragment(topology, fragment, 4);
    EXPECT_EQ(placement.node_group, 0u) << "fragment " << fragment;
    EXPECT_EQ(placement.log_part, kExpected[fragment].log_part) << "fragment " << fragment;
    EXPECT_EQ(placement.replicas, kExpected[fragment].replicas) << "fragment " << fragment;
  }
  // Two node groups: 8 fragments, each group's four as above.
  const ClusterTopology two = topology_of({{1, 2}, {3, 4}});
  EXPECT_EQ(two.default_fragment_count(), 8u);
  EXPECT_EQ(place_fragment(two, 5, 8).node_group, 1u);
  EXPECT_EQ(place_fragment(two, 5, 8).log_part, 2u);
  EXPECT_EQ(place_fragment(two, 7, 8).replicas, (std::vector<uint16_t>{4, 3}));
}

TEST(Distribution, ClassicFragmentationCountsLogParts) {
  ClusterTopology topology = topology_of({{1, 2}, {3, 4}}, 8, /*classic=*/true);
  topology.partitions_per_node = 3;  // not used with ClassicFragmentation
  EXPECT_EQ(topology.fragments_per_node(), 8u);
  EXPECT_EQ(topology.default_fragment_count(), 32u);
  topology.classic_fragmentation = false;
  EXPECT_EQ(topology.default_fragment_count(), 12u);
}

TEST(Distribution, PlacementIsPinnedForTwoNodeGroups) {
  const ClusterTopology topology = topology_of({{1, 2}, {3, 4}}, 4, /*classic=*/true);
  EXPECT_EQ(topology.default_fragment_count(), 16u);
  EXPECT_EQ(topology.data_nodes(), (std::vector<uint16_t>{1, 2, 3, 4}));
  const struct {
    uint32_t node_group;
    uint16_t log_part;
    std::vector<uint16_t> replicas;
  } kExpected[] = {{0, 0, {1, 2}}, {1, 0, {3, 4}}, {0, 0, {2, 1}}, {1, 0, {4, 3}},
                   {0, 1, {1, 2}}, {1, 1, {3, 4}}, {0, 1, {2, 1}}, {1, 1, {4, 3}},
                   {0, 2, {1, 2}}, {1, 2, {3, 4}}};
  for (uint32_t fragment = 0; fragment < std::size(kExpected); ++fragment) {
    const FragmentPlacement placement = place_fragment(topology, fragment, 16);
    EXPECT_EQ(placement.node_group, kExpected[fragment].node_group) << "fragment " << fragment;
    EXPECT_EQ(placement.log_part, kExpected[fragment].log_part) << "fragment " << fragment;
    EXPECT_EQ(placement.replicas, kExpected[fragment].replicas) << "fragment " << fragment;
  }
}

TEST(Distribution, LivePlacementDropsDeadReplicasAndKeepsTheRest) {
  const ClusterTopology topology = topology_of({{1, 2, 3}, {4, 5, 6}});
  for (uint32_t fragment = 0; fragment < 24; ++fragment) {
    const FragmentPlacement all = place_fragment(topology, fragment, 24);
    EXPECT_EQ(place_fragment_live(topology, fragment, 24, {}).replicas, all.replicas);
    const FragmentPlacement live = place_fragment_live(topology, fragment, 24, {2, 4});
    EXPECT_EQ(live.node_group, all.node_group);
    EXPECT_EQ(live.log_part, all.log_part);
    std::vector<uint16_t> expected;
    for (uint16_t node : all.replicas) {
      if (node != 2 && node != 4) expected.push_back(node);
    }
    // The chain order is kept: the first live replica is the primary.
    EXPECT_EQ(live.replicas, expected) << "fragment " << fragment;
  }
  // A whole group dead: no replica, the caller must refuse.
  EXPECT_TRUE(place_fragment_live(topology, 1, 24, {4, 5, 6}).replicas.empty());
  EXPECT_EQ(place_fragment_live(topology, 0, 24, {4, 5, 6}).replicas.size(), 3u);
}

TEST(Distribution, StartingReplicasGoLastAndAreNeverPrimary) {
  const ClusterTopology topology = topology_of({{1, 2, 3}, {4, 5, 6}});
  for (uint32_t fragment = 0; fragment < 24; ++fragment) {
    const FragmentPlacement all = place_fragment(topology, fragment, 24);
    const FragmentPlacement live = place_fragment_live(topology, fragment, 24, {3}, {1, 5});
    std::vector<uint16_t> expected;
    for (uint16_t node : all.replicas) {
      if (node != 3 && node != 1 && node != 5) expected.push_back(node);
    }
    for (uint16_t node : all.replicas) {
      if (node == 1 || node == 5) expected.push_back(node);
    }
    EXPECT_EQ(live.replicas, expected) << "fragment " << fragment;
    EXPECT_EQ(live.log_part, all.log_part);
  }
  // Only starting replicas left alive: no primary.
  EXPECT_TRUE(place_fragment_live(topology, 0, 24, {2, 3}, {1}).replicas.empty());
}

// For 1 and 2 node groups of 2 replicas with 4 log parts, ClassicFragmentation's count
// times 1..3 and PartitionsPerNode 1..8: every group and node gets its equal share,
// every node as many primaries as the others, every (node, log part) an equal share
// (±1 when the log parts do not divide a node's fragments), and each chain is a
// permutation of its group.
TEST(Distribution, PlacementSpreadsEvenly) {
  for (const ClusterTopology& base :
       {topology_of({{1, 2}}), topology_of({{1, 2}, {3, 4}}), topology_of({{5, 9}, {2, 7}})}) {
    const uint32_t groups = static_cast<uint32_t>(base.node_groups.size());
    std::vector<uint32_t> counts;
    for (uint32_t multiple = 1; multiple <= 3; ++multiple) {
      counts.push_back(groups * 2 * base.log_parts * multiple);
    }
    for (uint32_t per_node = 1; per_node <= 8; ++per_node) {
      ClusterTopology with = base;
      with.partitions_per_node = per_node;
      counts.push_back(with.default_fragment_count());
    }
    for (uint32_t fragments : counts) {
      const ClusterTopology& topology = base;
      std::map<uint32_t, uint32_t> per_group;
      std::map<uint16_t, uint32_t> per_node, primaries_per_node;
      std::map<std::pair<uint16_t, uint16_t>, uint32_t> per_node_log_part;
      for (uint32_t fragment = 0; fragment < fragments; ++fragment) {
        const FragmentPlacement placement = place_fragment(topology, fragment, fragments);
        ASSERT_LT(placement.node_group, groups);
        ASSERT_LT(placement.log_part, topology.log_parts);
        std::vector<uint16_t> sorted = placement.replicas;
        std::sort(sorted.begin(), sorted.end());
        EXPECT_EQ(sorted, topology.node_groups[placement.node_group])
            << "the chain holds each node of the group exactly once";
        ++per_group[placement.node_group];
        ++primaries_per_node[placement.replicas.front()];
        for (uint16_t node : placement.replicas) {
          ++per_node[node];
          ++per_node_log_part[{node, placement.log_part}];
        }
      }
      const uint32_t per_group_expected = fragments / groups;
      for (uint32_t group = 0; group < groups; ++group) {
        EXPECT_EQ(per_group[group], per_group_expected) << "group " << group;
      }
      for (uint16_t node : topology.data_nodes()) {
        EXPECT_EQ(per_node[node], per_group_expected) << "node " << node;
        EXPECT_EQ(primaries_per_node[node], per_group_expected / 2) << "node " << node;
        const uint32_t low = per_group_expected / topology.log_parts;
        const uint32_t high = (per_group_expected + topology.log_parts - 1) / topology.log_parts;
        for (uint16_t part = 0; part < topology.log_parts; ++part) {
          EXPECT_GE((per_node_log_part[{node, part}]), low)
              << fragments << " fragments: node " << node << " log part " << part;
          EXPECT_LE((per_node_log_part[{node, part}]), high)
              << fragments << " fragments: node " << node << " log part " << part;
        }
      }
    }
  }
}

TEST(Distribution, ThreeReplicasRotateThroughTheWholeGroup) {
  const ClusterTopology topology = topology_of({{4, 5, 6}}, 6);
  std::map<uint16_t, uint32_t> primaries;
  for (uint32_t fragment = 0; fragment < 6; ++fragment) {
    const FragmentPlacement placement = place_fragment(topology, fragment, 6);
    ASSERT_EQ(placement.replicas.size(), 3u);
    ++primaries[placement.replicas.front()];
    std::vector<uint16_t> sorted = placement.replicas;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<uint16_t>{4, 5, 6}));
  }
  EXPECT_EQ(primaries, (std::map<uint16_t, uint32_t>{{4, 2}, {5, 2}, {6, 2}}));
  EXPECT_EQ(place_fragment(topology, 1, 6).replicas, (std::vector<uint16_t>{5, 6, 4}));
}

// With ClassicFragmentation's count, every (node, log part) holds primaries and backups
// alike (NDB's FOR_RP_BY_LDM): reads, served by primaries, use every LDM thread of every
// node.
TEST(Distribution, PrimariesSpreadOverTheLogPartsOfEveryNode) {
  const ClusterTopology topology = topology_of({{1, 2}, {3, 4}}, 4, /*classic=*/true);
  const uint32_t fragments = topology.default_fragment_count() * 2;
  std::map<std::pair<uint16_t, uint16_t>, uint32_t> primaries;
  for (uint32_t fragment = 0; fragment < fragments; ++fragment) {
    const FragmentPlacement placement = place_fragment(topology, fragment, fragments);
    ++primaries[{placement.replicas.front(), placement.log_part}];
  }
  for (uint16_t node : topology.data_nodes()) {
    for (uint16_t part = 0; part < topology.log_parts; ++part) {
      EXPECT_GE((primaries[{node, part}]), 1u) << "node " << node << " log part " << part;
    }
  }
}

// ---- Distribution hash ----

ColumnDef column(std::string name, ColumnType type, uint32_t length = 0,
                 Collation collation = Collation::kBinary) {
  ColumnDef c;
  c.name = std::move(name);
  c.type = type;
  c.length = length;
  c.collation = collation;
  c.nullable = false;
  return c;
}

std::string int32_bytes(int32_t v) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(static_cast<uint32_t>(v) >> (8 * i));
  return out;
}

std::string int64_bytes(int64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(static_cast<uint64_t>(v) >> (8 * i));
  return out;
}

TableSchema int_key_table() {
  TableSchema schema;
  schema.name = "t";
  schema.columns = {column("id", ColumnType::kInt), column("v", ColumnType::kVarchar, 20)};
  schema.columns[1].nullable = true;
  schema.primary_key = {0};
  return schema;
}

// (name VARCHAR(32) CI, tenant BIGINT, note VARCHAR(10)), PRIMARY KEY (tenant, name).
TableSchema composite_key_table(Collation name_collation,
                                ColumnType name_type = ColumnType::kVarchar) {
  TableSchema schema;
  schema.name = "c";
  schema.columns = {column("name", name_type, 32, name_collation),
                    column("tenant", ColumnType::kBigInt),
                    column("note", ColumnType::kVarchar, 10)};
  schema.primary_key = {1, 0};
  return schema;
}

uint32_t hash_of(const TableSchema& schema, const AttrValues& key) {
  Result<uint32_t> hash = distribution_hash(schema, key);
  EXPECT_TRUE(hash.ok()) << hash.status().to_string();
  return hash.ok() ? *hash : 0;
}

AttrValues int_key(int32_t id) {
  AttrValues key;
  key.add(0, int32_bytes(id));
  return key;
}

AttrValues composite_key(int64_t tenant, std::string name) {
  AttrValues key;
  key.add(0, name);
  key.add(1, int64_bytes(tenant));
  return key;
}

TEST(Distribution, HashIsPinned) {
  // These numbers place rows on nodes. If this test fails, the placement of every
  // existing table changed: that needs a data migration, not a new expected value.
  const TableSchema ints = int_key_table();
  // (Changed once, before any release, on 2026-11-22: the seed had been the hash
  // index's own, see HashIsIndependentOfTheFragmentsHashIndex.)
  EXPECT_EQ(hash_of(ints, int_key(0)), 390156069u);
  EXPECT_EQ(hash_of(ints, int_key(1)), 1822773737u);
  EXPECT_EQ(hash_of(ints, int_key(-1)), 1724242113u);
  EXPECT_EQ(hash_of(ints, int_key(123456789)), 3892569767u);
  const TableSchema composite = composite_key_table(Collation::kCaseInsensitive);
  EXPECT_EQ(hash_of(composite, composite_key(42, "alice")), 1697839237u);
  EXPECT_EQ(hash_of(composite, composite_key(42, "")), 3978566755u);
}

// The rows of one fragment must spread over all of its hash index's buckets: the
// distribution hash may not determine the low bits of the fragment's own key hash
// (storage kHashSeed). With one seed for both, every key of fragment f had
// hash % 8 == f in its index too, so the index used 1/8 of its buckets.
TEST(Distribution, HashIsIndependentOfTheFragmentsHashIndex) {
  const TableSchema ints = int_key_table();
  std::map<uint32_t, std::set<uint64_t>> low_bits_per_fragment;
  for (int32_t id = 0; id < 4096; ++id) {
    const AttrValues key = int_key(id);
    const uint32_t fragment = hash_of(ints, key) % 8;
    const uint64_t h = storage::hash_value(ints.columns[0], key.value(0), storage::kHashSeed);
    low_bits_per_fragment[fragment].insert(static_cast<uint32_t>(h ^ (h >> 32)) % 8);
  }
  ASSERT_EQ(low_bits_per_fragment.size(), 8u);
  for (const auto& [fragment, bits] : low_bits_per_fragment) {
    EXPECT_EQ(bits.size(), 8u) << "fragment " << fragment;
  }
}

TEST(Distribution, HashSpreadsKeysOverFragments) {
  const TableSchema ints = int_key_table();
  std::vector<uint32_t> per_fragment(8);
  for (int32_t id = 0; id < 8000; ++id) ++per_fragment[hash_of(ints, int_key(id)) % 8];
  for (uint32_t count : per_fragment) {
    EXPECT_GT(count, 800u);
    EXPECT_LT(count, 1200u);
  }
}

TEST(Distribution, HashRespectsCaseInsensitiveCollation) {
  for (ColumnType type : {ColumnType::kVarchar, ColumnType::kChar}) {
    const TableSchema ci = composite_key_table(Collation::kCaseInsensitive, type);
    // CHAR values are stored padded to their length with spaces.
    auto name = [&](std::string text) {
      if (type == ColumnType::kChar) text.resize(32, ' ');
      return text;
    };
    const uint32_t expected = hash_of(ci, composite_key(7, name("abc")));
    for (const char* variant : {"ABC", "aBc", "abc ", "ABC   "}) {
      EXPECT_EQ(hash_of(ci, composite_key(7, name(variant))), expected) << "'" << variant << "'";
    }
    EXPECT_NE(hash_of(ci, composite_key(7, name("abd"))), expected);
    EXPECT_NE(hash_of(ci, composite_key(8, name("abc"))), expected);

    const TableSchema bin = composite_key_table(Collation::kBinary, type);
    EXPECT_NE(hash_of(bin, composite_key(7, name("ABC"))),
              hash_of(bin, composite_key(7, name("abc"))));
  }
}

TEST(Distribution, HashUsesOnlyTheKeyColumnsInPrimaryKeyOrder) {
  const TableSchema schema = composite_key_table(Collation::kCaseInsensitive);
  const uint32_t expected = hash_of(schema, composite_key(42, "alice"));
  // The same key given in another order, and inside a whole row (insert / write).
  AttrValues reordered;
  reordered.add(1, int64_bytes(42));
  reordered.add(0, "alice");
  EXPECT_EQ(hash_of(schema, reordered), expected);
  AttrValues row = composite_key(42, "alice");
  row.add(2, "anything");
  EXPECT_EQ(hash_of(schema, row), expected);
  AttrValues row_with_null = composite_key(42, "alice");
  row_with_null.add_null(2);
  EXPECT_EQ(hash_of(schema, row_with_null), expected);
}

TEST(Distribution, HashRefusesMissingOrNullKeyColumns) {
  const TableSchema schema = composite_key_table(Collation::kCaseInsensitive);
  AttrValues missing;
  missing.add(1, int64_bytes(42));
  Result<uint32_t> hash = distribution_hash(schema, missing);
  EXPECT_EQ(hash.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(hash.status().message().find("'name'"), std::string::npos) << hash.status().message();

  EXPECT_EQ(distribution_hash(schema, AttrValues()).status().code(), ErrorCode::kInvalidArgument);
  AttrValues null_key;
  null_key.add_null(1);
  null_key.add(0, "alice");
  EXPECT_EQ(distribution_hash(schema, null_key).status().code(), ErrorCode::kInvalidArgument);
  AttrValues only_other;
  only_other.add(2, "x");
  EXPECT_EQ(distribution_hash(schema, only_other).status().code(), ErrorCode::kInvalidArgument);
}

// ---- Topology from config.ini ----

Result<ClusterTopology> topology_from(std::string_view text) {
  Result<config::ClusterConfig> parsed = config::parse_config_string(text);
  if (!parsed.ok()) return parsed.take_status();
  return ClusterTopology::from_config(*parsed);
}

TEST(Distribution, TopologyFromConfigWithTwoDataNodes) {
  Result<ClusterTopology> topology = topology_from(R"(
[ndbd default]
NoOfReplicas=2
DataMemory=80M
[ndb_mgmd]
NodeId=1
[ndbd]
NodeId=2
[ndbd]
NodeId=3
[api]
)");
  ASSERT_TRUE(topology.ok()) << topology.status().to_string();
  EXPECT_EQ(topology->node_groups, (std::vector<std::vector<uint16_t>>{{2, 3}}));
  EXPECT_EQ(topology->log_parts, 4u);  // NoOfFragmentLogParts' default
  EXPECT_EQ(topology->partitions_per_node, 2u);   // PartitionsPerNode's default
  EXPECT_FALSE(topology->classic_fragmentation);  // RonDB's default
  EXPECT_EQ(topology->default_fragment_count(), 4u);
  EXPECT_EQ(topology->data_nodes(), (std::vector<uint16_t>{2, 3}));
}

TEST(Distribution, TopologyFromConfigWithFourDataNodes) {
  // Node groups as written (not by id order), and 8 log parts on every node.
  Result<ClusterTopology> topology = topology_from(R"(
[ndb_mgmd]
NodeId=1
[ndbd default]
NoOfReplicas=2
NoOfFragmentLogParts=8
[ndbd]
NodeId=11
Nodegroup=1
[ndbd]
NodeId=5
Nodegroup=0
[ndbd]
NodeId=12
Nodegroup=0
[ndbd]
NodeId=4
Nodegroup=1
[mysqld]
[api]
)");
  ASSERT_TRUE(topology.ok()) << topology.status().to_string();
  EXPECT_EQ(topology->node_groups, (std::vector<std::vector<uint16_t>>{{5, 12}, {4, 11}}));
  EXPECT_EQ(topology->log_parts, 8u);
  EXPECT_EQ(topology->default_fragment_count(), 8u);
  EXPECT_EQ(topology->data_nodes(), (std::vector<uint16_t>{4, 5, 11, 12}));
  EXPECT_EQ(place_fragment(*topology, 1, 8).replicas, (std::vector<uint16_t>{4, 11}));
  EXPECT_EQ(place_fragment(*topology, 2, 8).replicas, (std::vector<uint16_t>{12, 5}));
}

TEST(Distribution, TopologyFromConfigTakesPartitionsPerNodeAndClassicFragmentation) {
  Result<ClusterTopology> three = topology_from(R"(
[ndb_mgmd]
[ndbd default]
NoOfReplicas=2
PartitionsPerNode=3
[ndbd]
[ndbd]
)");
  ASSERT_TRUE(three.ok()) << three.status().to_string();
  EXPECT_EQ(three->partitions_per_node, 3u);
  EXPECT_EQ(three->default_fragment_count(), 6u);
  Result<ClusterTopology> classic = topology_from(R"(
[ndb_mgmd]
[ndbd default]
NoOfReplicas=2
PartitionsPerNode=3
ClassicFragmentation=true
[ndbd]
[ndbd]
)");
  ASSERT_TRUE(classic.ok()) << classic.status().to_string();
  EXPECT_TRUE(classic->classic_fragmentation);
  EXPECT_EQ(classic->default_fragment_count(), 8u) << "2 nodes x 4 log parts";
}

TEST(Distribution, TopologyFromConfigRefusesDifferentLogPartCounts) {
  Result<ClusterTopology> topology = topology_from(R"(
[ndb_mgmd]
[ndbd default]
NoOfReplicas=2
[ndbd]
[ndbd]
NoOfFragmentLogParts=8
)");
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.status().code(), ErrorCode::kConfigError);
  EXPECT_NE(topology.status().message().find("NoOfFragmentLogParts"), std::string::npos)
      << topology.status().message();
}

// A data node with Nodegroup=65536 (not in a node group) holds no fragments.
TEST(Distribution, TopologyLeavesOutNodesWithoutANodeGroup) {
  Result<ClusterTopology> topology = topology_from(R"(
[ndb_mgmd]
[ndbd default]
NoOfReplicas=2
[ndbd]
[ndbd]
[ndbd]
Nodegroup=65536
)");
  ASSERT_TRUE(topology.ok()) << topology.status().to_string();
  EXPECT_EQ(topology->node_groups, (std::vector<std::vector<uint16_t>>{{2, 3}}));
}

}  // namespace
}  // namespace duo::protocol
