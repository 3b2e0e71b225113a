#include "mgmd/daemon/config_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace duo::mgm {
namespace {

CachedConfig sample(uint64_t generation) {
  CachedConfig config;
  config.generation = generation;
  config.node_id = 49;
  config.written_wall_time_ns = 1234567890123;
  config.source_path = "/etc/duo/config.ini";
  config.text = "[ndb_mgmd]\nNodeId=49\n[ndbd]\nNodeId=1\n";
  return config;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/duo_config_cache_test.XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(ConfigCache, EncodeDecodeRoundTrip) {
  const CachedConfig config = sample(3);
  Result<CachedConfig> decoded = decode_config_cache(encode_config_cache(config));
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->generation, 3u);
  EXPECT_EQ(decoded->node_id, 49u);
  EXPECT_EQ(decoded->written_wall_time_ns, config.written_wall_time_ns);
  EXPECT_EQ(decoded->source_path, config.source_path);
  EXPECT_EQ(decoded->text, config.text);
}

TEST(ConfigCache, EveryFlippedBitAndEveryTruncationIsDetected) {
  const std::string bytes = encode_config_cache(sample(1));
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(damaged[i] ^ (1 << bit));
      Result<CachedConfig> decoded = decode_config_cache(damaged);
      ASSERT_FALSE(decoded.ok()) << "byte " << i << " bit " << bit;
      EXPECT_TRUE(decoded.status().is(ErrorCode::kCorruption));
    }
  }
  for (size_t size = 0; size < bytes.size(); ++size) {
    ASSERT_FALSE(decode_config_cache(std::string_view(bytes).substr(0, size)).ok()) << size;
  }
  EXPECT_FALSE(decode_config_cache(bytes + "x").ok());
}

TEST(ConfigCache, WriteKeepsOnlyTheNewestGenerationAndReadsItBack) {
  TempDir dir;
  Result<std::optional<CachedConfig>> none = read_latest_config_cache(dir.path(), 49);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  ASSERT_TRUE(write_config_cache(dir.path(), sample(1)).ok());
  CachedConfig second = sample(2);
  second.text += "[api]\n";
  ASSERT_TRUE(write_config_cache(dir.path(), second).ok());
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/ndb_49_config.bin.1"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/ndb_49_config.bin.2"));
  EXPECT_EQ(config_cache_latest_generation(dir.path(), 49), 2u);
  EXPECT_EQ(config_cache_node_ids(dir.path()), std::vector<uint32_t>{49});

  Result<std::optional<CachedConfig>> latest = read_latest_config_cache(dir.path(), 49);
  ASSERT_TRUE(latest.ok());
  ASSERT_TRUE(latest->has_value());
  EXPECT_EQ((*latest)->generation, 2u);
  EXPECT_EQ((*latest)->text, second.text);
  // Another node id's files are not ours.
  Result<std::optional<CachedConfig>> other = read_latest_config_cache(dir.path(), 48);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
}

TEST(ConfigCache, DamagedNewestFileIsAnErrorNotAFallback) {
  TempDir dir;
  ASSERT_TRUE(write_config_cache(dir.path(), sample(1)).ok());
  std::ofstream(dir.path() + "/ndb_49_config.bin.2") << "not a cache file";
  Result<std::optional<CachedConfig>> latest = read_latest_config_cache(dir.path(), 49);
  ASSERT_FALSE(latest.ok());
  EXPECT_TRUE(latest.status().is(ErrorCode::kCorruption));
  EXPECT_NE(latest.status().message().find("ndb_49_config.bin.2"), std::string::npos);
}

TEST(ConfigCache, RenamedFileIsDetected) {
  TempDir dir;
  ASSERT_TRUE(write_config_cache(dir.path(), sample(1)).ok());
  std::filesystem::rename(dir.path() + "/ndb_49_config.bin.1", dir.path() + "/ndb_49_config.bin.5");
  EXPECT_TRUE(read_latest_config_cache(dir.path(), 49).status().is(ErrorCode::kCorruption));
}

TEST(ConfigCache, UnrelatedFileNamesAreIgnored) {
  TempDir dir;
  for (const char* name : {"ndb_49_config.bin.", "ndb_49_config.bin.x", "ndb__config.bin.1",
                           "ndb_49_config.bin.0", "ndb_1234_config.bin.1", "ndb_49_cluster.log"}) {
    std::ofstream(dir.path() + "/" + name) << "x";
  }
  EXPECT_TRUE(config_cache_node_ids(dir.path()).empty());
  EXPECT_EQ(config_cache_file_name(7, 12), "ndb_7_config.bin.12");
}

}  // namespace
}  // namespace duo::mgm
