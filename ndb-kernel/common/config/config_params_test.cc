#include "ndb-kernel/common/config/config_params.h"

#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

namespace duo::config {
namespace {

TEST(ConfigParams, TableIsConsistent) {
  // Per section type, each name appears once, defaults are within range, and mandatory
  // parameters have no default (a default would make "mandatory" meaningless).
  for (size_t t = 0; t < kSectionTypeCount; ++t) {
    const auto type = static_cast<SectionType>(t);
    std::set<std::string> names;
    for (const ParamSpec& spec : all_param_specs()) {
      if ((spec.section_mask & section_bit(type)) == 0) continue;
      std::string lower;
      for (char c : spec.name) lower.push_back(static_cast<char>(std::tolower(c)));
      EXPECT_TRUE(names.insert(lower).second)
          << spec.name << " twice in " << section_type_name(type);
    }
  }
  for (const ParamSpec& spec : all_param_specs()) {
    EXPECT_NE(spec.section_mask, 0u) << spec.name;
    EXPECT_FALSE(spec.comment.empty()) << spec.name;
    if (spec.mandatory) {
      EXPECT_FALSE(spec.has_default) << spec.name;
    }
    if (spec.type == ParamType::kUint64) {
      EXPECT_LE(spec.min_value, spec.max_value) << spec.name;
      if (spec.has_default) {
        EXPECT_GE(spec.default_uint, spec.min_value) << spec.name;
        EXPECT_LE(spec.default_uint, spec.max_value) << spec.name;
      }
    }
  }
}

TEST(ConfigParams, RealisticNdbDefaults) {
  auto db = [](std::string_view name) {
    const ParamSpec* spec = find_param_spec(SectionType::kDataNode, name);
    EXPECT_NE(spec, nullptr) << name;
    return spec;
  };
  EXPECT_EQ(db("NoOfReplicas")->default_uint, 2u);
  EXPECT_EQ(db("NoOfReplicas")->min_value, 1u);
  EXPECT_EQ(db("NoOfReplicas")->max_value, 4u);
  EXPECT_EQ(db("DataMemory")->default_uint, 98u * 1024 * 1024);
  EXPECT_EQ(db("DataMemory")->min_value, 1u * 1024 * 1024);
  EXPECT_EQ(db("DiskPageBufferMemory")->default_uint, 64u * 1024 * 1024);
  EXPECT_EQ(db("SharedGlobalMemory")->default_uint, 128u * 1024 * 1024);
  EXPECT_EQ(db("TransactionMemory")->default_uint, 0u);
  EXPECT_EQ(db("TotalMemoryConfig")->default_uint, 0u);
  EXPECT_EQ(db("HeartbeatIntervalDbDb")->default_uint, 400u);
  EXPECT_EQ(db("HeartbeatIntervalDbApi")->default_uint, 1500u);
  EXPECT_EQ(db("TimeBetweenGlobalCheckpoints")->default_uint, 2000u);
  EXPECT_EQ(db("TimeBetweenGlobalCheckpoints")->min_value, 20u);
  EXPECT_EQ(db("TimeBetweenGlobalCheckpoints")->max_value, 32000u);
  EXPECT_EQ(db("TransactionDeadlockDetectionTimeout")->default_uint, 1200u);
  EXPECT_EQ(db("ArbitrationTimeout")->default_uint, 7500u);
  EXPECT_EQ(db("PartitionsPerNode")->default_uint, 2u);
  EXPECT_EQ(db("PartitionsPerNode")->min_value, 1u);
  EXPECT_EQ(db("PartitionsPerNode")->max_value, 32u);
  EXPECT_EQ(db("ClassicFragmentation")->type, ParamType::kBool);
  EXPECT_EQ(db("ClassicFragmentation")->default_uint, 0u) << "RonDB's default";
  EXPECT_EQ(db("CompressedLCP")->type, ParamType::kBool);
  EXPECT_EQ(db("DataDir")->type, ParamType::kString);
  const ParamSpec* port = find_param_spec(SectionType::kManagementNode, "PortNumber");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->default_uint, 1186u);
}

TEST(ConfigParams, LookupIsCaseInsensitiveAndPerSectionType) {
  const ParamSpec* spec = find_param_spec(SectionType::kDataNode, "datamemory");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->name, "DataMemory");
  EXPECT_EQ(find_param_spec(SectionType::kDataNode, "DATAMEMORY"), spec);
  EXPECT_EQ(find_param_spec(SectionType::kApiNode, "DataMemory"), nullptr);
  EXPECT_EQ(find_param_spec(SectionType::kDataNode, "PortNumber"), nullptr);
  EXPECT_NE(find_param_spec_any_section("portnumber"), nullptr);
  EXPECT_EQ(find_param_spec_any_section("DataMemroy"), nullptr);

  // NodeId: 1..144 for data nodes, 1..255 for the others.
  EXPECT_EQ(find_param_spec(SectionType::kDataNode, "NodeId")->max_value, 144u);
  EXPECT_EQ(find_param_spec(SectionType::kApiNode, "NodeId")->max_value, 255u);
  // ArbitrationRank defaults differ between management and API nodes.
  EXPECT_EQ(find_param_spec(SectionType::kManagementNode, "ArbitrationRank")->default_uint, 1u);
  EXPECT_EQ(find_param_spec(SectionType::kApiNode, "ArbitrationRank")->default_uint, 0u);
  // The deprecated NDB alias "Id" means NodeId.
  EXPECT_EQ(find_param_spec(SectionType::kDataNode, "id"),
            find_param_spec(SectionType::kDataNode, "NodeId"));
}

TEST(ConfigParams, SectionNames) {
  struct Case {
    std::string_view text;
    SectionType type;
    bool is_default;
  };
  const Case cases[] = {
      {"ndbd", SectionType::kDataNode, false},
      {"DB", SectionType::kDataNode, false},
      {"NDBD DEFAULT", SectionType::kDataNode, true},
      {"db   default", SectionType::kDataNode, true},
      {"ndb_mgmd", SectionType::kManagementNode, false},
      {"MGM", SectionType::kManagementNode, false},
      {"ndb_mgmd default", SectionType::kManagementNode, true},
      {"mysqld", SectionType::kApiNode, false},
      {"API", SectionType::kApiNode, false},
      {"mysqld default", SectionType::kApiNode, true},
      {"Api Default", SectionType::kApiNode, true},
      {"tcp", SectionType::kTcp, false},
      {"TCP DEFAULT", SectionType::kTcp, true},
  };
  for (const Case& c : cases) {
    const auto name = parse_section_name(c.text);
    ASSERT_TRUE(name.has_value()) << c.text;
    EXPECT_EQ(name->type, c.type) << c.text;
    EXPECT_EQ(name->is_default, c.is_default) << c.text;
  }
  for (std::string_view bad : {"", "default", "ndbdx", "shm", "ndbd defaults", "system"}) {
    EXPECT_FALSE(parse_section_name(bad).has_value()) << bad;
  }
  EXPECT_EQ(section_type_name(SectionType::kManagementNode), "ndb_mgmd");
}

TEST(ConfigParams, UintValuesWithUnits) {
  EXPECT_EQ(*parse_uint_value("0"), 0u);
  EXPECT_EQ(*parse_uint_value("1186"), 1186u);
  EXPECT_EQ(*parse_uint_value("100K"), 100u * 1024);
  EXPECT_EQ(*parse_uint_value("100k"), 100u * 1024);
  EXPECT_EQ(*parse_uint_value("80M"), 80u * 1024 * 1024);
  EXPECT_EQ(*parse_uint_value("80m"), 80u * 1024 * 1024);
  EXPECT_EQ(*parse_uint_value("2G"), 2ULL * 1024 * 1024 * 1024);
  EXPECT_EQ(*parse_uint_value("18446744073709551615"), UINT64_MAX);

  auto fails_with = [](std::string_view text, std::string_view needle) {
    Result<uint64_t> result = parse_uint_value(text);
    ASSERT_FALSE(result.ok()) << text;
    EXPECT_EQ(result.status().code(), ErrorCode::kConfigError);
    EXPECT_NE(result.status().message().find(needle), std::string::npos)
        << text << ": " << result.status().message();
  };
  fails_with("", "empty");
  fails_with("M", "not an unsigned integer");
  fails_with("-1", "not an unsigned integer");
  fails_with("+1", "not an unsigned integer");
  fails_with("80X", "bad unit 'X'");
  fails_with("80MB", "bad unit 'MB'");
  fails_with("80 M", "bad unit ' M'");
  fails_with("1T", "bad unit 'T'");
  fails_with("18446744073709551616", "too large");
  fails_with("17179869184G", "too large");  // 2^34 G = 2^64
}

TEST(ConfigParams, BoolValues) {
  for (std::string_view yes : {"true", "TRUE", "yes", "Yes", "1", "y", "Y"}) {
    EXPECT_TRUE(*parse_bool_value(yes)) << yes;
  }
  for (std::string_view no : {"false", "False", "no", "NO", "0", "n", "N"}) {
    EXPECT_FALSE(*parse_bool_value(no)) << no;
  }
  for (std::string_view bad : {"", "2", "on", "maybe", "truee"}) {
    Result<bool> result = parse_bool_value(bad);
    EXPECT_FALSE(result.ok()) << bad;
  }
}

}  // namespace
}  // namespace duo::config
