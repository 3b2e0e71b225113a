// duo_tls_keys: the key tool for TLS links (NDB's ndb_sign_keys, reading config.ini).
//
//   duo_tls_keys --config-file=config.ini --keys-dir=DIR [--node-id=N] [--valid-days=D]
//
// Creates the cluster CA in DIR unless DIR already has one (NDB-Cluster-cert and
// NDB-Cluster-private-key), then for every node of the configuration (or only node N)
// creates a key and a certificate signed by the CA (NDB-Node-<id>.key / .cert, named
// "duodb-node-<id>"). Existing node files are left alone, so running it again after
// adding nodes to config.ini signs only the new ones; delete a node's files to renew
// them. Keys are written with mode 0600. File names and rules: tls_files.h and
// docs/formats/transport.md (section TLS).
//
// Keep NDB-Cluster-private-key off the nodes: a node needs only NDB-Cluster-cert and
// its own pair. Thread-safety: a single-threaded program.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ndb-kernel/common/config/config_parser.h"
#include "ndb-kernel/common/process.h"
#include "ndb-kernel/common/small_files.h"
#include "ndb-kernel/common/status.h"
#include "ndb-kernel/transport/tls_authority.h"
#include "ndb-kernel/transport/tls_context.h"
#include "ndb-kernel/transport/tls_files.h"

namespace duo {
namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr uint32_t kDefaultValidDays = 365;
constexpr uint32_t kCaValidDays = 3650;

struct Options {
  std::string config_file;
  std::string keys_dir;
  uint32_t node_id = 0;  // 0: every node of the configuration
  uint32_t valid_days = kDefaultValidDays;
};

void print_usage() {
  std::printf(
      "Usage: duo_tls_keys --config-file=PATH --keys-dir=DIR [options]\n"
      "  Creates the cluster CA in DIR (unless present) and a signed key pair per node.\n"
      "  --config-file=PATH, -f  the cluster's config.ini\n"
      "  --keys-dir=DIR          where to write (created if missing)\n"
      "  --node-id=N             only node N (default: every node in the configuration)\n"
      "  --valid-days=D          node certificate lifetime (default 365)\n"
      "  -h, --help\n");
}

bool parse_uint(const std::string& text, uint64_t max, uint64_t* out) {
  if (text.empty() || text.size() > 10) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > max) return false;
  *out = value;
  return true;
}

bool parse_args(int argc, char** argv, Options* options) {
  for (ArgCursor args(argc, argv); args.next();) {
    const std::string arg = args.name();
    std::string value;
    uint64_t number = 0;
    if (arg == "-h" || arg == "--help") {
      print_usage();
      std::exit(0);
    } else if (arg == "--config-file" || arg == "-f") {
      if (!args.take_value(&options->config_file)) return false;
    } else if (arg == "--keys-dir") {
      if (!args.take_value(&options->keys_dir)) return false;
    } else if (arg == "--node-id") {
      if (!args.take_value(&value) || !parse_uint(value, UINT16_MAX, &number) || number == 0) {
        return false;
      }
      options->node_id = static_cast<uint32_t>(number);
    } else if (arg == "--valid-days") {
      if (!args.take_value(&value) || !parse_uint(value, 100 * 365, &number) || number == 0) {
        return false;
      }
      options->valid_days = static_cast<uint32_t>(number);
    } else {
      std::fprintf(stderr, "duo_tls_keys: unknown option '%s'\n", arg.c_str());
      return false;
    }
  }
  return !options->config_file.empty() && !options->keys_dir.empty();
}

// The CA in `dir`, created when absent.
Result<transport::TlsKeyPair> cluster_ca(const std::string& dir) {
  const std::string cert_path = dir + "/" + transport::kTlsCaCertFile;
  const std::string key_path = dir + "/" + transport::kTlsCaKeyFile;
  if (file_exists(cert_path) || file_exists(key_path)) {
    transport::TlsKeyPair ca;
    DUO_ASSIGN_OR_RETURN(ca.cert_pem, read_small_file(cert_path));
    DUO_ASSIGN_OR_RETURN(ca.key_pem, read_small_file(key_path));
    std::printf("using the cluster CA in %s\n", dir.c_str());
    return ca;
  }
  DUO_ASSIGN_OR_RETURN(transport::TlsKeyPair ca,
                       transport::create_cluster_ca("DuoDB cluster CA", kCaValidDays));
  // The key first: a directory with a CA certificate but no key cannot sign anything.
  DUO_RETURN_IF_ERROR(write_new_small_file(key_path, ca.key_pem, 0600));
  DUO_RETURN_IF_ERROR(write_new_small_file(cert_path, ca.cert_pem, 0644));
  std::printf("created the cluster CA: %s\n", cert_path.c_str());
  return ca;
}

Status sign_node(const transport::TlsKeyPair& ca, const std::string& dir, uint16_t node_id,
                 uint32_t valid_days) {
  const std::string cert_path = dir + "/" + transport::tls_node_cert_file(node_id);
  const std::string key_path = dir + "/" + transport::tls_node_key_file(node_id);
  if (file_exists(cert_path) || file_exists(key_path)) {
    std::printf("node %u: %s exists, left alone\n", node_id,
                file_exists(cert_path) ? cert_path.c_str() : key_path.c_str());
    return Status::OK();
  }
  DUO_ASSIGN_OR_RETURN(transport::TlsKeyPair pair,
                       transport::sign_node_key(ca, node_id, valid_days));
  DUO_RETURN_IF_ERROR(write_new_small_file(key_path, pair.key_pem, 0600));
  DUO_RETURN_IF_ERROR(write_new_small_file(cert_path, pair.cert_pem, 0644));
  std::printf("node %u: signed %s (%s, %u days)\n", node_id, cert_path.c_str(),
              transport::node_certificate_name(node_id).c_str(), valid_days);
  return Status::OK();
}

int run(int argc, char** argv) {
  Options options;
  if (!parse_args(argc, argv, &options)) {
    print_usage();
    return kExitUsage;
  }
  Result<config::ClusterConfig> config = config::parse_config_file(options.config_file);
  if (!config.ok()) {
    std::fprintf(stderr, "duo_tls_keys: %s\n", config.status().message().c_str());
    return kExitError;
  }
  std::vector<uint16_t> nodes;
  for (const config::ConfigSection& section : config->sections()) {
    if (section.node_id() == 0) continue;  // [tcp]
    if (options.node_id == 0 || section.node_id() == options.node_id) {
      nodes.push_back(static_cast<uint16_t>(section.node_id()));
    }
  }
  if (nodes.empty()) {
    std::fprintf(stderr, "duo_tls_keys: node %u is not in %s\n", options.node_id,
                 options.config_file.c_str());
    return kExitError;
  }
  std::error_code ec;
  std::filesystem::create_directories(options.keys_dir, ec);
  if (ec) {
    std::fprintf(stderr, "duo_tls_keys: cannot create %s: %s\n", options.keys_dir.c_str(),
                 ec.message().c_str());
    return kExitError;
  }
  Result<transport::TlsKeyPair> ca = cluster_ca(options.keys_dir);
  if (!ca.ok()) {
    std::fprintf(stderr, "duo_tls_keys: %s\n", ca.status().message().c_str());
    return kExitError;
  }
  for (uint16_t node_id : nodes) {
    if (Status signed_ok = sign_node(*ca, options.keys_dir, node_id, options.valid_days);
        !signed_ok.ok()) {
      std::fprintf(stderr, "duo_tls_keys: node %u: %s\n", node_id, signed_ok.message().c_str());
      return kExitError;
    }
  }
  return 0;
}

}  // namespace
}  // namespace duo

int main(int argc, char** argv) {
  return duo::run(argc, argv);
}
