// The configuration cache: the config.ini text duo_mgmd serves, persisted in its
// --configdir so that a restart serves the same configuration even if config.ini was
// edited or removed meanwhile (ndb_mgmd's ndb_<id>_config.bin.<N> files). Only
// `--initial` makes mgmd read config.ini again. Format: docs/formats/config-cache.md.
//
// A file holds one generation: a fixed little-endian header, the path config.ini was
// read from, the config.ini bytes, and a masked CRC32C of everything before it. Files
// are written to a temporary name, fsynced, renamed and the directory fsynced, so a
// crash leaves either the old or the new generation, never a torn one; a file that
// fails its checksum is reported as kCorruption, never silently served.
//
// Thread-safety: the functions are independent; concurrent writers to one directory
// are not supported (one mgmd owns its configdir).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"

namespace duo::mgm {

inline constexpr char kConfigCacheMagic[8] = {'D', 'U', 'O', 'C', 'F', 'G', '0', '1'};
inline constexpr uint32_t kConfigCacheFormatVersion = 1;
// Larger files are refused before reading: the config text itself is bounded by the
// parser's 16 MiB limit, the header and path add little.
inline constexpr uint64_t kConfigCacheFileBytesMax = 17 * 1024 * 1024;

struct CachedConfig {
  uint64_t generation = 0;  // 1, 2, ...: bumped whenever the served text changes
  uint32_t node_id = 0;     // the mgmd node that wrote it
  int64_t written_wall_time_ns = 0;
  std::string source_path;  // where the config.ini text was read from
  std::string text;         // the config.ini bytes, exactly as validated
};

// Serialises / parses one cache file's bytes. decode: kCorruption for a bad magic,
// version, length or checksum.
std::string encode_config_cache(const CachedConfig& config);
Result<CachedConfig> decode_config_cache(std::string_view bytes);

// "ndb_<node_id>_config.bin.<generation>".
std::string config_cache_file_name(uint32_t node_id, uint64_t generation);

// The highest generation stored in `dir` for `node_id`, if any (read and verified).
// kCorruption if that newest file is damaged: better stop than serve an older
// generation silently.
Result<std::optional<CachedConfig>> read_latest_config_cache(const std::string& dir,
                                                             uint32_t node_id);
// Node ids that have cache files in `dir` (ascending): lets mgmd find its id on a
// restart without --ndb-nodeid.
std::vector<uint32_t> config_cache_node_ids(const std::string& dir);

// The highest generation number among `node_id`'s cache file names (0 if none),
// whether or not the file is readable.
uint64_t config_cache_latest_generation(const std::string& dir, uint32_t node_id);

// Writes `config` durably as its generation's file, then removes older generations of
// the same node id.
Status write_config_cache(const std::string& dir, const CachedConfig& config);

// Writes `bytes` to `path` via a temporary file, fsync and rename (and a directory
// fsync), so readers see the old or the new content, never a mix.
Status write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace duo::mgm
