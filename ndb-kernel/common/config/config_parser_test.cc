#include "ndb-kernel/common/config/config_parser.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "ndb-kernel/common/random.h"

namespace duo::config {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

// 1 management node, 2 data nodes, 2 API slots: the cluster the `duo` launcher starts.
constexpr std::string_view kRealisticConfig = R"(# DuoDB test cluster
[ndbd default]
NoOfReplicas=2
DataMemory=80M
DiskPageBufferMemory = 128M   # page cache
TimeBetweenGlobalCheckpoints: 1000
CompressedLCP=yes
DataDir=/var/lib/duo/data

[ndb_mgmd]
NodeId=1
HostName=mgm.example.com
DataDir=/var/lib/duo/mgmd

[ndbd]
NodeId=2
HostName=db1.example.com

[ndbd]
NodeId=3
HostName=db2.example.com
DataMemory=96M
; a full-line comment with a semicolon

[mysqld]
NodeId=51
HostName=sql1.example.com

[api]
)";

Result<ClusterConfig> parse(std::string_view text) {
  return parse_config_string(text);
}

// Parses `text` expecting a kConfigError whose message is exactly `message`.
void expect_error(std::string_view text, const std::string& message) {
  Result<ClusterConfig> result = parse(text);
  ASSERT_FALSE(result.ok()) << "parsed unexpectedly:\n" << text;
  EXPECT_EQ(result.status().code(), ErrorCode::kConfigError);
  EXPECT_EQ(result.status().message(), message);
}

// The smallest valid cluster, appended to configs that test one section's syntax.
constexpr std::string_view kMinimalCluster = R"(
[ndb_mgmd]
[ndbd]
NoOfReplicas=1
)";

uint64_t uint_of(const ConfigSection& section, std::string_view name) {
  Result<uint64_t> value = section.get_uint(name);
  EXPECT_TRUE(value.ok()) << name << ": " << value.status().to_string();
  return value.ok() ? *value : 0;
}

std::string string_of(const ConfigSection& section, std::string_view name) {
  Result<std::string> value = section.get_string(name);
  EXPECT_TRUE(value.ok()) << name << ": " << value.status().to_string();
  return value.ok() ? *value : "";
}

TEST(ConfigParser, RealisticClusterParsesWithTheRightValues) {
  Result<ClusterConfig> result = parse(kRealisticConfig);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  const ClusterConfig& config = *result;
  EXPECT_EQ(config.file_name(), "config.ini");
  ASSERT_EQ(config.sections().size(), 5u);
  EXPECT_EQ(config.no_of_replicas(), 2u);
  EXPECT_EQ(config.node_ids(SectionType::kManagementNode), (std::vector<uint32_t>{1}));
  EXPECT_EQ(config.node_ids(SectionType::kDataNode), (std::vector<uint32_t>{2, 3}));
  // The unnamed [api] slot gets the lowest free id.
  EXPECT_EQ(config.node_ids(SectionType::kApiNode), (std::vector<uint32_t>{4, 51}));

  const ConfigSection& mgmd = *config.find_node(1);
  EXPECT_EQ(mgmd.type(), SectionType::kManagementNode);
  EXPECT_EQ(string_of(mgmd, "HostName"), "mgm.example.com");
  EXPECT_EQ(string_of(mgmd, "DataDir"), "/var/lib/duo/mgmd");
  EXPECT_EQ(uint_of(mgmd, "PortNumber"), 1186u);
  EXPECT_EQ(uint_of(mgmd, "ArbitrationRank"), 1u);

  const ConfigSection& db1 = *config.find_node(2);
  EXPECT_EQ(db1.type(), SectionType::kDataNode);
  EXPECT_EQ(db1.header(), "[ndbd]");
  EXPECT_EQ(db1.line(), 15u);
  EXPECT_EQ(string_of(db1, "HostName"), "db1.example.com");
  EXPECT_EQ(uint_of(db1, "NoOfReplicas"), 2u);
  EXPECT_EQ(uint_of(db1, "DataMemory"), 80 * kMiB);
  EXPECT_EQ(uint_of(db1, "DiskPageBufferMemory"), 128 * kMiB);
  EXPECT_EQ(uint_of(db1, "TimeBetweenGlobalCheckpoints"), 1000u);
  EXPECT_TRUE(*db1.get_bool("CompressedLCP"));
  EXPECT_EQ(uint_of(db1, "HeartbeatIntervalDbDb"), 400u);  // built-in default
  EXPECT_EQ(uint_of(db1, "SharedGlobalMemory"), 128 * kMiB);
  EXPECT_EQ(uint_of(db1, "Nodegroup"), 0u);
  EXPECT_EQ(string_of(db1, "DataDir"), "/var/lib/duo/data");
  EXPECT_EQ(string_of(db1, "FileSystemPath"), "/var/lib/duo/data");
  EXPECT_EQ(string_of(db1, "BackupDataDir"), "/var/lib/duo/data");
  EXPECT_FALSE(db1.has("ServerPort"));  // optional, no default

  const ConfigSection& db2 = *config.find_node(3);
  EXPECT_EQ(uint_of(db2, "DataMemory"), 96 * kMiB);  // own value beats [ndbd default]
  EXPECT_EQ(uint_of(db2, "Nodegroup"), 0u);          // both nodes form node group 0

  const ConfigSection& sql = *config.find_node(51);
  EXPECT_EQ(sql.header(), "[mysqld]");
  EXPECT_EQ(string_of(sql, "HostName"), "sql1.example.com");
  EXPECT_EQ(uint_of(sql, "ArbitrationRank"), 0u);
  const ConfigSection& slot = *config.find_node(4);
  EXPECT_EQ(string_of(slot, "HostName"), "");  // any host may take the slot
  EXPECT_EQ(config.find_node(99), nullptr);
}

TEST(ConfigParser, ValuesRecordWhereTheyCameFrom) {
  Result<ClusterConfig> result = parse(kRealisticConfig);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  const ConfigSection& db2 = *result->find_node(3);
  const ConfigValue* own = db2.find("DataMemory");
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->source, ValueSource::kSection);
  EXPECT_EQ(own->line, 22u);
  const ConfigValue* inherited = db2.find("noofreplicas");
  EXPECT_EQ(inherited->source, ValueSource::kDefaultSection);
  EXPECT_EQ(inherited->line, 3u);
  const ConfigValue* builtin = db2.find("HeartbeatIntervalDbDb");
  EXPECT_EQ(builtin->source, ValueSource::kBuiltinDefault);
  EXPECT_EQ(builtin->line, 0u);
  const ConfigValue* derived = db2.find("FileSystemPath");
  EXPECT_EQ(derived->source, ValueSource::kDerived);
  EXPECT_EQ(derived->line, 8u);  // the DataDir line it was derived from
  EXPECT_EQ(result->find_node(4)->find("NodeId")->source, ValueSource::kDerived);
  EXPECT_EQ(value_source_name(ValueSource::kDefaultSection), "default section");
}

TEST(ConfigParser, GettersFailForUnknownNamesWrongTypesAndUnsetValues) {
  Result<ClusterConfig> result = parse(kRealisticConfig);
  ASSERT_TRUE(result.ok());
  const ConfigSection& db = *result->find_node(2);
  Result<uint64_t> unknown = db.get_uint("DataMemroy");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(), "no parameter 'DataMemroy' in sections of type [ndbd]");
  Result<uint64_t> other_section = db.get_uint("PortNumber");
  EXPECT_FALSE(other_section.ok());
  Result<bool> wrong_type = db.get_bool("DataMemory");
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_EQ(wrong_type.status().message(), "parameter 'DataMemory' is of type integer, not bool");
  Result<std::string> wrong_type2 = db.get_string("CompressedLCP");
  EXPECT_FALSE(wrong_type2.ok());
  Result<uint64_t> unset = db.get_uint("ServerPort");
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(unset.status().message(),
            "parameter 'ServerPort' is not set in section [ndbd] at line 15");
  EXPECT_EQ(uint_of(db, "datamemory"), 80 * kMiB);  // getters are case-insensitive too
}

TEST(ConfigParser, DefaultSectionsApplyWhereverTheyAppear) {
  // The default section comes after the sections it applies to.
  Result<ClusterConfig> result = parse(R"(
[ndb_mgmd]
[ndbd]
[ndbd]
[ndbd default]
NoOfReplicas=2
DataMemory=200M
[mysqld default]
BatchSize=64
[api]
[mysqld]
BatchSize=32
[ndb_mgmd default]
PortNumber=2186
)");
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  for (const ConfigSection* db : result->sections_of(SectionType::kDataNode)) {
    EXPECT_EQ(uint_of(*db, "DataMemory"), 200 * kMiB);
  }
  const auto api = result->sections_of(SectionType::kApiNode);
  ASSERT_EQ(api.size(), 2u);
  EXPECT_EQ(uint_of(*api[0], "BatchSize"), 64u);  // [mysqld default] applies to [api]
  EXPECT_EQ(uint_of(*api[1], "BatchSize"), 32u);
  EXPECT_EQ(uint_of(*result->sections_of(SectionType::kManagementNode)[0], "PortNumber"), 2186u);
}

TEST(ConfigParser, AliasesAndCaseInsensitivity) {
  Result<ClusterConfig> result = parse(R"(
[DB DEFAULT]
noofreplicas=2
DATAMEMORY=1g
[MGM]
id=10
[DB]
Id=11
HOSTNAME=h1
[Db]
NodeID=12
[API]
[Tcp Default]
sendbuffermemory=4M
[TCP]
NodeId1=11
NODEID2=12
)");
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_EQ(result->node_ids(SectionType::kManagementNode), (std::vector<uint32_t>{10}));
  EXPECT_EQ(result->node_ids(SectionType::kDataNode), (std::vector<uint32_t>{11, 12}));
  EXPECT_EQ(result->node_ids(SectionType::kApiNode), (std::vector<uint32_t>{1}));
  const ConfigSection& db = *result->find_node(11);
  EXPECT_EQ(db.header(), "[DB]");
  EXPECT_EQ(uint_of(db, "DataMemory"), 1024 * kMiB);
  EXPECT_EQ(string_of(db, "HostName"), "h1");
  const auto links = result->sections_of(SectionType::kTcp);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0]->node_id(), 0u);
  EXPECT_EQ(uint_of(*links[0], "SendBufferMemory"), 4 * kMiB);
  EXPECT_EQ(uint_of(*links[0], "ReceiveBufferMemory"), 2 * kMiB);
}

TEST(ConfigParser, SyntaxVariants) {
  // Colon separator, tabs, CRLF line endings, trailing comments, no final newline.
  Result<ClusterConfig> result = parse(
      "[ndb_mgmd]\r\n"
      "\tPortNumber :\t1187   # custom port\r\n"
      "  # indented comment\r\n"
      "; semicolon comment\r\n"
      "\r\n"
      "[ ndbd ]  # trailing comment after a header\r\n"
      "NoOfReplicas = 1\r\n"
      "CompressedLCP=N\r\n"
      "DataDir=C:\\duo\\data\r\n"
      "RedoBuffer=64m");
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_EQ(uint_of(*result->find_node(1), "PortNumber"), 1187u);
  const ConfigSection& db = *result->find_node(2);
  EXPECT_EQ(db.header(), "[ndbd]");
  EXPECT_FALSE(*db.get_bool("CompressedLCP"));
  // Only the first '=' or ':' separates, so a Windows path keeps its colon.
  EXPECT_EQ(string_of(db, "DataDir"), "C:\\duo\\data");
  EXPECT_EQ(uint_of(db, "RedoBuffer"), 64 * kMiB);
}

TEST(ConfigParser, NodeIdAssignmentAndNodeGroups) {
  // Explicit ids anywhere in the file are reserved before free ids are handed out.
  Result<ClusterConfig> result = parse(R"(
[ndb_mgmd]
[ndbd default]
NoOfReplicas=2
[ndbd]
[ndbd]
NodeId=1
[ndbd]
[ndbd]
Nodegroup=0
[ndbd]
Nodegroup=65536
[api]
[api]
NodeId=3
[api]
)");
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  const auto& sections = result->sections();
  ASSERT_EQ(sections.size(), 9u);
  EXPECT_EQ(sections[0].node_id(), 2u);  // mgmd: 1 is taken by a later [ndbd]
  EXPECT_EQ(sections[1].node_id(), 4u);  // 3 is taken by an [api]
  EXPECT_EQ(sections[2].node_id(), 1u);
  EXPECT_EQ(sections[3].node_id(), 5u);
  EXPECT_EQ(sections[4].node_id(), 6u);
  EXPECT_EQ(sections[5].node_id(), 7u);
  EXPECT_EQ(sections[6].node_id(), 8u);
  EXPECT_EQ(sections[7].node_id(), 3u);
  EXPECT_EQ(sections[8].node_id(), 9u);
  // Nodegroups: node 6 is explicitly in group 0; the others join in NodeId order.
  EXPECT_EQ(uint_of(*result->find_node(1), "Nodegroup"), 0u);
  EXPECT_EQ(uint_of(*result->find_node(6), "Nodegroup"), 0u);
  EXPECT_EQ(uint_of(*result->find_node(4), "Nodegroup"), 1u);
  EXPECT_EQ(uint_of(*result->find_node(5), "Nodegroup"), 1u);
  EXPECT_EQ(uint_of(*result->find_node(7), "Nodegroup"), kNoNodegroup);
}

TEST(ConfigParser, ParsesFromAFile) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("duo_config_test_" + std::to_string(::getpid()) + ".ini"))
                               .string();
  {
    std::ofstream out(path);
    out << kRealisticConfig << "Bogus=1\n";
  }
  Result<ClusterConfig> result = parse_config_file(path);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), path + ":30: unknown parameter 'Bogus' in section [api]");
  {
    std::ofstream out(path);
    out << kRealisticConfig;
  }
  Result<ClusterConfig> good = parse_config_file(path);
  ASSERT_TRUE(good.ok()) << good.status().to_string();
  EXPECT_EQ(good->file_name(), path);
  EXPECT_EQ(good->sections().size(), 5u);
  std::filesystem::remove(path);

  Result<ClusterConfig> missing = parse_config_file(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kIoError);
  EXPECT_NE(missing.status().message().find(path), std::string::npos);
}

// --- Errors: one test per class, each checking file:line and the parameter. ----------

TEST(ConfigParserErrors, UnknownParameter) {
  expect_error("[ndb_mgmd]\n[ndbd]\nNoOfReplicas=1\nDataMemroy=80M\n",
               "config.ini:4: unknown parameter 'DataMemroy' in section [ndbd]");
  // A parameter of another section type says where it belongs.
  expect_error("[ndb_mgmd]\n[DB]\nPortNumber=1186\n",
               "config.ini:3: unknown parameter 'PortNumber' in section [DB] "
               "(it is a parameter of [ndb_mgmd])");
  expect_error("[ndb_mgmd]\n[tcp default]\nNodeId=3\n",
               "config.ini:3: unknown parameter 'NodeId' in section [tcp default] "
               "(it is a parameter of [ndbd], [ndb_mgmd], [api])");
}

TEST(ConfigParserErrors, DuplicateParameter) {
  expect_error(
      "[ndb_mgmd]\n[ndbd]\nNoOfReplicas=1\n\n\n\n\n\nDataMemory=80M\n\n\n\n\ndatamemory=90M\n",
      "config.ini:14: parameter 'DataMemory' already set at line 9");
  // Several default sections of one type act as one.
  expect_error("[ndbd default]\nDataMemory=80M\n[ndb_mgmd]\n[DB DEFAULT]\nDataMemory=90M\n",
               "config.ini:5: parameter 'DataMemory' already set at line 2");
  // The same parameter in two node sections is fine, and so is overriding a default.
  Result<ClusterConfig> ok = parse(
      "[ndbd default]\nDataMemory=80M\nNoOfReplicas=1\n[ndb_mgmd]\n[ndbd]\nDataMemory=90M\n"
      "[ndbd]\nDataMemory=100M\n");
  EXPECT_TRUE(ok.ok()) << ok.status().to_string();
}

TEST(ConfigParserErrors, ValueOutOfRangeNamesTheRange) {
  expect_error("[ndbd default]\nNoOfReplicas=5\n",
               "config.ini:2: value '5' for parameter 'NoOfReplicas' in section "
               "[ndbd default] is out of range 1..4");
  expect_error("[ndb_mgmd]\n[ndbd]\nNoOfReplicas=1\nDataMemory=512K\n",
               "config.ini:4: value '512K' for parameter 'DataMemory' in section [ndbd] "
               "is out of range 1048576..17592186044416");
  expect_error("[ndb_mgmd]\n[ndbd]\nNodeId=145\n",
               "config.ini:3: value '145' for parameter 'NodeId' in section [ndbd] "
               "is out of range 1..144");
  expect_error("[api]\nNodeId=0\n",
               "config.ini:2: value '0' for parameter 'NodeId' in section [api] "
               "is out of range 1..255");
  expect_error("[ndbd]\nTimeBetweenGlobalCheckpoints=10\n",
               "config.ini:2: value '10' for parameter 'TimeBetweenGlobalCheckpoints' in "
               "section [ndbd] is out of range 20..32000");
}

TEST(ConfigParserErrors, BadValues) {
  expect_error("[ndbd]\nDataMemory=80X\n",
               "config.ini:2: invalid value '80X' for parameter 'DataMemory' in section "
               "[ndbd]: bad unit 'X' (expected K, M or G)");
  expect_error("[ndbd]\nDataMemory=lots\n",
               "config.ini:2: invalid value 'lots' for parameter 'DataMemory' in section "
               "[ndbd]: not an unsigned integer");
  expect_error("[ndbd]\nCompressedLCP=maybe\n",
               "config.ini:2: invalid value 'maybe' for parameter 'CompressedLCP' in section "
               "[ndbd]: not a boolean (expected true/false, yes/no, 1/0, y/n)");
  expect_error("[ndbd]\nDataDir=\n",
               "config.ini:2: missing value for parameter 'DataDir' in section [ndbd]");
  expect_error("[ndbd]\nDataDir=   # only a comment\n",
               "config.ini:2: missing value for parameter 'DataDir' in section [ndbd]");
}

TEST(ConfigParserErrors, MalformedLines) {
  expect_error("[ndbd]\nNoOfReplicas 2\n",
               "config.ini:2: malformed line 'NoOfReplicas 2' (expected name=value, name: value "
               "or [section])");
  expect_error("[ndbd]\n=2\n",
               "config.ini:2: malformed line '=2' (expected name=value, name: value or "
               "[section])");
  expect_error("# header comment\nDataMemory=80M\n",
               "config.ini:2: parameter 'DataMemory' outside of any section");
  expect_error("[ndbd\n", "config.ini:1: malformed section header '[ndbd' (missing ']')");
  expect_error("[ndbd] x\n", "config.ini:1: unexpected text after section header ' x'");
  expect_error("[ndbd]\n" + std::string(5000, 'x') + "\n",
               "config.ini:2: line longer than 4096 bytes");
}

TEST(ConfigParserErrors, UnknownSectionType) {
  expect_error("\n[ndbd]\n[shm]\n",
               "config.ini:3: unknown section type [shm] (expected ndbd, ndb_mgmd, mysqld, api, "
               "tcp, their aliases DB, MGM, API, TCP, or one of these followed by DEFAULT)");
  Result<ClusterConfig> result = parse("[ndbd defaults]\n");
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(
      result.status().message().starts_with("config.ini:1: unknown section type "
                                            "[ndbd defaults]"));
}

TEST(ConfigParserErrors, NodeIdInDefaultSection) {
  expect_error("[ndbd default]\nNodeId=2\n",
               "config.ini:2: parameter 'NodeId' cannot be set in a default section "
               "[ndbd default]; set it in each node's own section");
}

TEST(ConfigParserErrors, MandatoryParameterMissing) {
  expect_error(std::string(kMinimalCluster) + "[tcp]\nNodeId1=1\n",
               "config.ini:5: mandatory parameter 'NodeId2' missing in section [tcp]");
  // A mandatory parameter may come from the default section.
  Result<ClusterConfig> result =
      parse(std::string(kMinimalCluster) + "[tcp default]\nNodeId1=1\n[tcp]\nNodeId2=2\n");
  ASSERT_TRUE(result.ok()) << result.status().to_string();
}

TEST(ConfigParserErrors, ClusterNeedsAManagementAndADataNode) {
  expect_error("[ndbd]\nNoOfReplicas=1\n[api]\n",
               "config.ini: no [ndb_mgmd] section: a cluster needs at least one management "
               "node");
  expect_error("[ndb_mgmd]\n[mysqld]\n",
               "config.ini: no [ndbd] section: a cluster needs at least one data node");
  expect_error("",
               "config.ini: no [ndb_mgmd] section: a cluster needs at least one management "
               "node");
}

TEST(ConfigParserErrors, DuplicateNodeIds) {
  expect_error("[ndb_mgmd]\nNodeId=2\n[ndbd]\nNoOfReplicas=1\n[api]\nNodeId=2\n",
               "config.ini:6: NodeId 2 in section [api] is already used by section "
               "[ndb_mgmd] at line 1");
}

TEST(ConfigParserErrors, NoFreeNodeId) {
  std::string text = "[ndb_mgmd]\n[ndbd]\nNoOfReplicas=1\n";
  for (int i = 0; i < 254; ++i) text += "[api]\n";  // 256 nodes in total
  Result<ClusterConfig> result = parse(text);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "config.ini:257: no free NodeId (1..255) left for section [api]");
}

TEST(ConfigParserErrors, DataNodesMustDivideIntoNodeGroups) {
  expect_error("[ndb_mgmd]\n[ndbd default]\nNoOfReplicas=2\n[ndbd]\n[ndbd]\n[ndbd]\n",
               "config.ini: 3 data nodes cannot form node groups of NoOfReplicas=2 (the number "
               "of data nodes must be a multiple of NoOfReplicas)");
  // Each explicit node group must end up with exactly NoOfReplicas members.
  expect_error(
      "[ndb_mgmd]\n[ndbd default]\nNoOfReplicas=2\n[ndbd]\nNodegroup=0\n[ndbd]\nNodegroup=0\n"
      "[ndbd]\nNodegroup=0\n[ndbd]\n",
      "config.ini:9: node group 0 has more than NoOfReplicas=2 data nodes");
  expect_error(
      "[ndb_mgmd]\n[ndbd default]\nNoOfReplicas=2\n[ndbd]\nNodegroup=0\n[ndbd]\nNodegroup=2\n",
      "config.ini: node group 0 has 1 data node(s); each node group needs NoOfReplicas=2");
}

TEST(ConfigParserErrors, NoOfReplicasMustMatch) {
  expect_error("[ndb_mgmd]\n[ndbd]\nNoOfReplicas=2\n[ndbd]\n[ndbd]\nNoOfReplicas=1\n",
               "config.ini:6: NoOfReplicas=1 of data node 4 differs from NoOfReplicas=2 of data "
               "node 2 (line 3); all data nodes must have the same NoOfReplicas");
}

TEST(ConfigParserErrors, NoOfFragmentLogPartsMustMatch) {
  expect_error("[ndb_mgmd]\n[ndbd default]\nNoOfReplicas=2\n[ndbd]\n[ndbd]\nNoOfFragmentLogParts=8\n",
               "config.ini:6: NoOfFragmentLogParts=8 of data node 3 differs from "
               "NoOfFragmentLogParts=4 of data node 2 (line 4); all data nodes must have the same "
               "NoOfFragmentLogParts");
}

TEST(ConfigParserErrors, PartitionsPerNodeRangeAndAgreement) {
  expect_error("[ndb_mgmd]\n[ndbd default]\nNoOfReplicas=1\nPartitionsPerNode=0\n[ndbd]\n",
               "config.ini:4: value '0' for parameter 'PartitionsPerNode' in section "
               "[ndbd default] is out of range 1..32");
  expect_error("[ndb_mgmd]\n[ndbd]\nNoOfReplicas=1\nPartitionsPerNode=33\n",
               "config.ini:4: value '33' for parameter 'PartitionsPerNode' in section [ndbd] "
               "is out of range 1..32");
  expect_error("[ndb_mgmd]\n[ndbd default]\nNoOfReplicas=2\n[ndbd]\n[ndbd]\nPartitionsPerNode=4\n",
               "config.ini:6: PartitionsPerNode=4 of data node 3 differs from "
               "PartitionsPerNode=2 of data node 2 (line 4); all data nodes must have the same "
               "PartitionsPerNode");
  expect_error(
      "[ndb_mgmd]\n[ndbd default]\nNoOfReplicas=2\n[ndbd]\nClassicFragmentation=yes\n"
      "[ndbd]\n",
      "config.ini:6: ClassicFragmentation=0 of data node 3 differs from "
      "ClassicFragmentation=1 of data node 2 (line 5); all data nodes must have the same "
      "ClassicFragmentation");
  expect_error("[ndb_mgmd]\n[ndbd]\nNoOfReplicas=1\nClassicFragmentation=2\n",
               "config.ini:4: invalid value '2' for parameter 'ClassicFragmentation' in section "
               "[ndbd]: not a boolean (expected true/false, yes/no, 1/0, y/n)");
  Result<ClusterConfig> ok = parse(
      "[ndb_mgmd]\n[ndbd default]\nNoOfReplicas=2\nPartitionsPerNode=32\n"
      "ClassicFragmentation=false\n[ndbd]\n[ndbd]\n");
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  for (const ConfigSection* node : ok->sections_of(SectionType::kDataNode)) {
    EXPECT_EQ(*node->get_uint("PartitionsPerNode"), 32u);
    EXPECT_FALSE(*node->get_bool("ClassicFragmentation"));
  }
  Result<ClusterConfig> defaults = parse("[ndb_mgmd]\n[ndbd]\nNoOfReplicas=1\n");
  ASSERT_TRUE(defaults.ok()) << defaults.status().to_string();
  const ConfigSection* node = defaults->sections_of(SectionType::kDataNode).front();
  EXPECT_EQ(*node->get_uint("PartitionsPerNode"), 2u);
  EXPECT_FALSE(*node->get_bool("ClassicFragmentation"));
}

TEST(ConfigParserErrors, TcpLinks) {
  const std::string base = "[ndb_mgmd]\n[ndbd]\nNoOfReplicas=1\n";  // nodes 1 and 2
  expect_error(base + "[tcp]\nNodeId1=1\nNodeId2=9\n",
               "config.ini:6: NodeId2=9 in section [tcp] is not a configured node");
  expect_error(base + "[tcp]\nNodeId1=2\nNodeId2=2\n",
               "config.ini:6: section [tcp] links node 2 to itself");
  expect_error(base + "[tcp]\nNodeId1=1\nNodeId2=2\n[TCP]\nNodeId1=2\nNodeId2=1\n",
               "config.ini:7: link between nodes 1 and 2 already defined at line 4");
}

TEST(ConfigParserErrors, FileNameAppearsInMessages) {
  Result<ClusterConfig> result = parse_config_string("[ndbd]\nFoo=1\n", "/etc/duo/cluster.ini");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "/etc/duo/cluster.ini:2: unknown parameter 'Foo' in section [ndbd]");
}

// Random edits of a valid file must give either a config or a kConfigError that names
// the file, never a crash, an unchecked status or a sanitizer report.
TEST(ConfigParserRobustness, RandomMutationsNeverCrash) {
  SeededRandom random(2024);
  const std::string base(kRealisticConfig);
  constexpr std::string_view kAlphabet = "[]=:#;\n\r\t 0123456789KMGkmgxyzNodeIdDataMemory";
  int parsed = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text = base;
    const uint64_t edits = random.uniform_range(1, 8);
    for (uint64_t e = 0; e < edits && !text.empty(); ++e) {
      const size_t pos = random.uniform(text.size());
      switch (random.uniform(3)) {
        case 0:
          text.erase(pos, random.uniform_range(1, 10));
          break;
        case 1:
          text.insert(pos, 1, kAlphabet[random.uniform(kAlphabet.size())]);
          break;
        default:
          text[pos] = kAlphabet[random.uniform(kAlphabet.size())];
          break;
      }
    }
    Result<ClusterConfig> result = parse(text);
    if (result.ok()) {
      ++parsed;
      // Whatever parsed must satisfy the cluster invariants.
      EXPECT_FALSE(result->sections_of(SectionType::kManagementNode).empty());
      EXPECT_FALSE(result->sections_of(SectionType::kDataNode).empty());
      for (const ConfigSection& section : result->sections()) {
        if (is_node_section(section.type())) {
          EXPECT_NE(section.node_id(), 0u);
        }
      }
    } else {
      EXPECT_EQ(result.status().code(), ErrorCode::kConfigError);
      EXPECT_TRUE(result.status().message().starts_with("config.ini")) << result.status().message();
    }
  }
  EXPECT_GT(parsed, 0);  // some edits (e.g. inside comments or host names) stay valid
}

}  // namespace
}  // namespace duo::config
