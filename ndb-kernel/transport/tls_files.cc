// TLS key files and the search path. See tls_files.h.
#include "ndb-kernel/transport/tls_files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace duo::transport {

namespace {

// A PEM file of ours is a few KiB; the bound keeps a wrong path (a log, a device) from
// being read whole.
constexpr size_t kTlsFileBytesMax = 1024 * 1024;

std::vector<std::string> split_path(const std::string& search_path) {
  std::vector<std::string> dirs;
  std::string dir;
  std::istringstream in(search_path);
  while (std::getline(in, dir, ':')) {
    if (!dir.empty()) dirs.push_back(dir);
  }
  return dirs;
}

// The text of `name` from the first directory of `search_path` that has it.
Result<std::string> read_from_path(const std::string& search_path, const std::string& name) {
  for (const std::string& dir : split_path(search_path)) {
    const std::string path = dir + "/" + name;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      if (errno == ENOENT) continue;
      return Status(ErrorCode::kConfigError,
                    "TLS: cannot read " + path + ": " + std::strerror(errno));
    }
    std::string text;
    char chunk[4096];
    while (in.read(chunk, sizeof(chunk)) || in.gcount() > 0) {
      text.append(chunk, static_cast<size_t>(in.gcount()));
      if (text.size() > kTlsFileBytesMax) {
        return Status(ErrorCode::kConfigError, "TLS: " + path + " is larger than " +
                                                   std::to_string(kTlsFileBytesMax) + " bytes");
      }
    }
    return text;
  }
  return Status(ErrorCode::kConfigError,
                "TLS: no file " + name + " in the TLS search path '" + search_path + "'");
}

}  // namespace

std::string tls_node_cert_file(uint16_t node_id) {
  return "NDB-Node-" + std::to_string(node_id) + ".cert";
}

std::string tls_node_key_file(uint16_t node_id) {
  return "NDB-Node-" + std::to_string(node_id) + ".key";
}

Result<TlsMaterial> load_tls_material(const std::string& search_path, uint16_t node_id) {
  TlsMaterial material;
  DUO_ASSIGN_OR_RETURN(material.ca_cert_pem, read_from_path(search_path, kTlsCaCertFile));
  DUO_ASSIGN_OR_RETURN(material.node_cert_pem,
                       read_from_path(search_path, tls_node_cert_file(node_id)));
  DUO_ASSIGN_OR_RETURN(material.node_key_pem,
                       read_from_path(search_path, tls_node_key_file(node_id)));
  return material;
}

}  // namespace duo::transport
