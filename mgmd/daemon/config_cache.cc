#include "mgmd/daemon/config_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include "ndb-kernel/common/crc32c.h"

namespace duo::mgm {
namespace {

// Header layout (little-endian), 48 bytes:
//   0 magic[8]  8 format_version u32  12 header_bytes u32  16 generation u64
//  24 node_id u32  28 source_path_bytes u32  32 text_bytes u64  40 written_wall_time_ns i64
// then source_path, text, and a masked CRC32C (u32) of all preceding bytes.
constexpr size_t kHeaderBytes = 48;
constexpr size_t kChecksumBytes = 4;

void put_u32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint32_t get_u32(std::string_view in, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return v;
}
uint64_t get_u64(std::string_view in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return v;
}

Status io_error(const std::string& what, const std::string& path) {
  return Status(ErrorCode::kIoError, what + " '" + path + "': " + std::strerror(errno));
}

// Parses "ndb_<id>_config.bin.<generation>"; false for any other name.
bool parse_cache_file_name(std::string_view name, uint32_t* node_id, uint64_t* generation) {
  constexpr std::string_view kPrefix = "ndb_";
  constexpr std::string_view kMiddle = "_config.bin.";
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  name.remove_prefix(kPrefix.size());
  const size_t middle = name.find(kMiddle);
  if (middle == std::string_view::npos || middle == 0 || middle > 3) return false;
  uint64_t id = 0;
  for (char c : name.substr(0, middle)) {
    if (c < '0' || c > '9') return false;
    id = id * 10 + static_cast<uint64_t>(c - '0');
  }
  std::string_view gen = name.substr(middle + kMiddle.size());
  if (gen.empty() || gen.size() > 18) return false;
  uint64_t g = 0;
  for (char c : gen) {
    if (c < '0' || c > '9') return false;
    g = g * 10 + static_cast<uint64_t>(c - '0');
  }
  if (id == 0 || id > 255 || g == 0) return false;
  *node_id = static_cast<uint32_t>(id);
  *generation = g;
  return true;
}

// (node_id, generation) of every cache file in `dir`.
std::vector<std::pair<uint32_t, uint64_t>> list_cache_files(const std::string& dir) {
  std::vector<std::pair<uint32_t, uint64_t>> files;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return files;
  while (const dirent* entry = ::readdir(d)) {
    uint32_t id = 0;
    uint64_t gen = 0;
    if (parse_cache_file_name(entry->d_name, &id, &gen)) files.emplace_back(id, gen);
  }
  ::closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::string> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Status status = io_error("cannot stat", path);
    ::close(fd);
    return status;
  }
  if (static_cast<uint64_t>(st.st_size) > kConfigCacheFileBytesMax) {
    ::close(fd);
    return Status(ErrorCode::kCorruption, "config cache file '" + path + "' is too large");
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status status = io_error("cannot read", path);
      ::close(fd);
      return status;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return bytes;
}

}  // namespace

std::string encode_config_cache(const CachedConfig& config) {
  std::string out(kConfigCacheMagic, sizeof kConfigCacheMagic);
  put_u32(&out, kConfigCacheFormatVersion);
  put_u32(&out, kHeaderBytes);
  put_u64(&out, config.generation);
  put_u32(&out, config.node_id);
  put_u32(&out, static_cast<uint32_t>(config.source_path.size()));
  put_u64(&out, config.text.size());
  put_u64(&out, static_cast<uint64_t>(config.written_wall_time_ns));
  out += config.source_path;
  out += config.text;
  put_u32(&out, crc32c_mask(crc32c(out.data(), out.size())));
  return out;
}

Result<CachedConfig> decode_config_cache(std::string_view bytes) {
  auto corrupt = [](const std::string& why) {
    return Status(ErrorCode::kCorruption, "config cache: " + why);
  };
  if (bytes.size() < kHeaderBytes + kChecksumBytes) return corrupt("file too short");
  if (std::memcmp(bytes.data(), kConfigCacheMagic, sizeof kConfigCacheMagic) != 0) {
    return corrupt("bad magic (not a DuoDB config cache file)");
  }
  const uint32_t version = get_u32(bytes, 8);
  if (version != kConfigCacheFormatVersion) {
    return corrupt("unsupported format version " + std::to_string(version));
  }
  if (get_u32(bytes, 12) != kHeaderBytes) return corrupt("bad header size");
  const uint64_t path_bytes = get_u32(bytes, 28);
  const uint64_t text_bytes = get_u64(bytes, 32);
  if (text_bytes > kConfigCacheFileBytesMax ||
      kHeaderBytes + path_bytes + text_bytes + kChecksumBytes != bytes.size()) {
    return corrupt("lengths do not match the file size");
  }
  const size_t body_end = bytes.size() - kChecksumBytes;
  const uint32_t stored = crc32c_unmask(get_u32(bytes, body_end));
  if (stored != crc32c(bytes.data(), body_end)) return corrupt("checksum mismatch");

  CachedConfig config;
  config.generation = get_u64(bytes, 16);
  config.node_id = get_u32(bytes, 24);
  config.written_wall_time_ns = static_cast<int64_t>(get_u64(bytes, 40));
  config.source_path = std::string(bytes.substr(kHeaderBytes, path_bytes));
  config.text = std::string(bytes.substr(kHeaderBytes + path_bytes, text_bytes));
  if (config.generation == 0) return corrupt("generation 0");
  return config;
}

std::string config_cache_file_name(uint32_t node_id, uint64_t generation) {
  return "ndb_" + std::to_string(node_id) + "_config.bin." + std::to_string(generation);
}

std::vector<uint32_t> config_cache_node_ids(const std::string& dir) {
  std::set<uint32_t> ids;
  for (const auto& [id, gen] : list_cache_files(dir)) ids.insert(id);
  return {ids.begin(), ids.end()};
}

uint64_t config_cache_latest_generation(const std::string& dir, uint32_t node_id) {
  uint64_t latest = 0;
  for (const auto& [id, gen] : list_cache_files(dir)) {
    if (id == node_id) latest = std::max(latest, gen);
  }
  return latest;
}

Result<std::optional<CachedConfig>> read_latest_config_cache(const std::string& dir,
                                                             uint32_t node_id) {
  const uint64_t latest = config_cache_latest_generation(dir, node_id);
  if (latest == 0) return std::optional<CachedConfig>();
  const std::string path = dir + "/" + config_cache_file_name(node_id, latest);
  DUO_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  Result<CachedConfig> decoded = decode_config_cache(bytes);
  if (!decoded.ok()) {
    return Status(ErrorCode::kCorruption, path + ": " + decoded.status().message());
  }
  if (decoded->generation != latest || decoded->node_id != node_id) {
    return Status(ErrorCode::kCorruption, path +
                                              ": file name does not match its header (generation " +
                                              std::to_string(decoded->generation) + ", node " +
                                              std::to_string(decoded->node_id) + ")");
  }
  return std::optional<CachedConfig>(std::move(decoded).value());
}

Status write_file_atomically(const std::string& path, std::string_view bytes) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot create", tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status status = io_error("cannot write", tmp);
      ::close(fd);
      return status;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    Status status = io_error("cannot fsync", tmp);
    ::close(fd);
    return status;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return io_error("cannot rename to", path);
  // The rename is durable only once the directory entry is.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return io_error("cannot open directory", dir);
  const int rc = ::fsync(dir_fd);
  ::close(dir_fd);
  if (rc != 0) return io_error("cannot fsync directory", dir);
  return Status::OK();
}

Status write_config_cache(const std::string& dir, const CachedConfig& config) {
  DUO_RETURN_IF_ERROR(
      write_file_atomically(dir + "/" + config_cache_file_name(config.node_id, config.generation),
                            encode_config_cache(config)));
  // Older generations go only after the new one is durable.
  for (const auto& [id, gen] : list_cache_files(dir)) {
    if (id == config.node_id && gen < config.generation) {
      const std::string old = dir + "/" + config_cache_file_name(id, gen);
      if (::unlink(old.c_str()) != 0 && errno != ENOENT) return io_error("cannot remove", old);
    }
  }
  return Status::OK();
}

}  // namespace duo::mgm
