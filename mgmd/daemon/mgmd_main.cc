// duo_mgmd: the DuoDB management daemon (ndb_mgmd). Reads and validates config.ini,
// persists the configuration it serves in --configdir (config_cache.h), keeps the
// cluster log there, and serves the management protocol (mgm_server.h) until
// `shutdown` or SIGTERM/SIGINT. Usage: duo_mgmd --help; docs/formats/mgm-protocol.md.
//
// Startup order matters for operators: everything that can fail for a reason they
// must fix (bad config.ini, unreadable cache, busy port, configdir locked by another
// mgmd) is checked before the daemon detaches, so the error reaches their terminal
// and the exit code, not only a log file.
//
// Thread-safety: single-threaded process (the signal handler only writes a byte to a
// pipe).
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "mgmd/daemon/cluster_log.h"
#include "mgmd/daemon/config_cache.h"
#include "mgmd/daemon/mgm_server.h"
#include "mgmd/daemon/mgm_service.h"
#include "mgmd/daemon/node_id_allocator.h"
#include "ndb-kernel/common/clock.h"
#include "ndb-kernel/common/config/config_parser.h"
#include "ndb-kernel/common/crc32c.h"
#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/common/process.h"

namespace duo::mgm {
namespace {

// Exit codes: 0 clean stop, 1 configuration or startup error, 2 usage error.
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

struct Options {
  std::string config_file;
  std::string config_dir = ".";
  bool initial = false;
  uint32_t node_id = 0;  // 0: from the config or the cache files
  int port = -1;         // -1: PortNumber of our [ndb_mgmd] section
  std::string bind_address = "0.0.0.0";
  bool foreground = false;
  size_t sessions_max = 64;
  uint64_t session_idle_timeout_ms = 300000;
  std::string log_level = "info";
};

void print_usage() {
  std::printf(
      "Usage: duo_mgmd [options]\n"
      "  -f, --config-file=PATH     config.ini to read (needed on first start and with --initial)\n"
      "  --configdir=DIR            where the served configuration and the cluster log are kept\n"
      "                             (default: current directory)\n"
      "  --initial                  read config.ini again, discarding the persisted configuration\n"
      "  --ndb-nodeid=N             this management server's node id\n"
      "  --port=N                   listen port (default: PortNumber in config.ini, 1186);\n"
      "                             0 picks a free port, printed on stdout\n"
      "  --bind-address=ADDR        listen address (default 0.0.0.0: all IPv4 interfaces)\n"
      "  --foreground, --nodaemon   stay in the foreground and log to stderr\n"
      "  --max-sessions=N           concurrent protocol sessions (default 64)\n"
      "  --session-idle-timeout-ms=N  close silent sessions, freeing their node ids\n"
      "                             (default 300000; 0 = never)\n"
      "  --log-level=LEVEL          error, warning, info (default), debug\n"
      "  -V, --version, -h, --help\n");
}

// Parses "--name=value" / "--name value"; returns false on a usage error.
bool parse_args(int argc, char** argv, Options* options) {
  auto number = [](std::string_view text, uint64_t max, uint64_t* out) {
    auto value = parse_uint_arg(text, max);
    if (!value) return false;
    *out = *value;
    return true;
  };
  for (ArgCursor args(argc, argv); args.next();) {
    const std::string arg = args.name();
    std::string value;
    auto take_value = [&]() { return args.take_value(&value); };
    uint64_t n = 0;
    if (arg == "-h" || arg == "--help") {
      print_usage();
      std::exit(0);
    } else if (arg == "-V" || arg == "--version") {
      std::printf("duo_mgmd %s\n", duo_version_string().c_str());
      std::exit(0);
    } else if (arg == "-f" || arg == "--config-file" || arg == "--config_file") {
      if (!take_value()) return false;
      options->config_file = value;
    } else if (arg == "--configdir" || arg == "--config-dir") {
      if (!take_value()) return false;
      options->config_dir = value;
    } else if (arg == "--initial") {
      options->initial = true;
    } else if (arg == "--ndb-nodeid") {
      if (!take_value() || !number(value, config::kNodeIdMax, &n) || n == 0) return false;
      options->node_id = static_cast<uint32_t>(n);
    } else if (arg == "--port") {
      if (!take_value() || !number(value, 65535, &n)) return false;
      options->port = static_cast<int>(n);
    } else if (arg == "--bind-address") {
      if (!take_value()) return false;
      options->bind_address = value;
    } else if (arg == "--foreground" || arg == "--nodaemon") {
      options->foreground = true;
    } else if (arg == "--max-sessions") {
      if (!take_value() || !number(value, 4096, &n) || n == 0) return false;
      options->sessions_max = n;
    } else if (arg == "--session-idle-timeout-ms") {
      if (!take_value() || !number(value, UINT32_MAX, &n)) return false;
      options->session_idle_timeout_ms = n;
    } else if (arg == "--log-level") {
      if (!take_value()) return false;
      options->log_level = value;
    } else {
      std::fprintf(stderr, "duo_mgmd: unknown option '%s'\n", arg.c_str());
      return false;
    }
  }
  return true;
}

// Numeric addresses of `host` (IPv4 and IPv6), for HostName checks.
std::vector<std::string> resolve_host(const std::string& host) {
  std::vector<std::string> addresses;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return addresses;
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    char text[INET6_ADDRSTRLEN] = "";
    if (ai->ai_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr, text,
                  sizeof text);
    } else if (ai->ai_family == AF_INET6) {
      ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr, text,
                  sizeof text);
    } else {
      continue;
    }
    if (std::find(addresses.begin(), addresses.end(), text) == addresses.end()) {
      addresses.emplace_back(text);
    }
  }
  ::freeaddrinfo(found);
  return addresses;
}

// Picks this mgmd's node id from the configuration when --ndb-nodeid was not given.
Result<uint32_t> own_node_id(const config::ClusterConfig& config, uint32_t wanted) {
  const std::vector<uint32_t> mgm_ids = config.node_ids(config::SectionType::kManagementNode);
  if (wanted != 0) {
    if (std::find(mgm_ids.begin(), mgm_ids.end(), wanted) == mgm_ids.end()) {
      return Status(ErrorCode::kConfigError, "--ndb-nodeid=" + std::to_string(wanted) +
                                                 " is not an [ndb_mgmd] node in " +
                                                 config.file_name());
    }
    return wanted;
  }
  if (mgm_ids.size() != 1) {
    return Status(ErrorCode::kConfigError,
                  config.file_name() + " has several [ndb_mgmd] nodes: give --ndb-nodeid");
  }
  return mgm_ids.front();
}

Result<std::string> read_text_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rbe");
  if (file == nullptr) {
    return Status(ErrorCode::kIoError, "cannot open '" + path + "': " + std::strerror(errno));
  }
  std::string text;
  char buffer[64 * 1024];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) {
    text.append(buffer, n);
    if (text.size() > config::kConfigFileBytesMax) {
      std::fclose(file);
      return Status(
          ErrorCode::kConfigError,
          path + ": file larger than " + std::to_string(config::kConfigFileBytesMax) + " bytes");
    }
  }
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return Status(ErrorCode::kIoError, "cannot read '" + path + "'");
  return text;
}

struct Loaded {
  ServedConfig served;
  uint32_t node_id = 0;
  std::vector<std::string> notes;  // for the cluster log, once it is open
};

// Decides which configuration to serve: the persisted one, unless --initial or there
// is none yet, in which case config.ini is read, validated and persisted.
Result<Loaded> load_configuration(const Options& options, const Clock& clock) {
  Loaded loaded;
  uint32_t node_id = options.node_id;
  if (node_id == 0) {
    const std::vector<uint32_t> cached_ids = config_cache_node_ids(options.config_dir);
    if (cached_ids.size() == 1) node_id = cached_ids.front();
    if (cached_ids.size() > 1 && !options.initial) {
      return Status(ErrorCode::kConfigError,
                    options.config_dir +
                        " holds configuration caches of several nodes: give "
                        "--ndb-nodeid");
    }
  }
  std::optional<CachedConfig> cached;
  if (node_id != 0) {
    Result<std::optional<CachedConfig>> latest =
        read_latest_config_cache(options.config_dir, node_id);
    if (!latest.ok()) {
      if (!options.initial) {
        return Status(latest.status().code(),
                      latest.status().message() + " (start with --initial to re-read config.ini)");
      }
      loaded.notes.push_back("Ignoring unreadable configuration cache: " +
                             latest.status().message());
    } else {
      cached = std::move(latest).value();
    }
  }

  if (cached && !options.initial) {
    Result<config::ClusterConfig> parsed =
        config::parse_config_string(cached->text, cached->source_path);
    if (!parsed.ok()) {
      return Status(ErrorCode::kCorruption, "persisted configuration generation " +
                                                std::to_string(cached->generation) +
                                                " does not parse: " + parsed.status().message());
    }
    DUO_ASSIGN_OR_RETURN(loaded.node_id, own_node_id(*parsed, node_id));
    loaded.notes.push_back("Loaded persisted configuration generation " +
                           std::to_string(cached->generation) + " (read from '" +
                           cached->source_path + "')");
    if (!options.config_file.empty()) {
      Result<std::string> current = read_text_file(options.config_file);
      if (current.ok() && *current != cached->text) {
        loaded.notes.push_back("WARNING:" + options.config_file +
                               " differs from the persisted configuration; serving generation " +
                               std::to_string(cached->generation) +
                               " (restart with --initial to apply the file)");
      }
    }
    loaded.served.cache = std::move(*cached);
    loaded.served.parsed = std::move(parsed).value();
    return loaded;
  }

  if (options.config_file.empty()) {
    return Status(ErrorCode::kConfigError, "no persisted configuration in '" + options.config_dir +
                                               "': give --config-file=PATH");
  }
  DUO_ASSIGN_OR_RETURN(std::string text, read_text_file(options.config_file));
  DUO_ASSIGN_OR_RETURN(config::ClusterConfig parsed,
                       config::parse_config_string(text, options.config_file));
  DUO_ASSIGN_OR_RETURN(loaded.node_id, own_node_id(parsed, options.node_id));
  if (loaded.node_id != node_id) {
    // The id guessed from the cache files is not the one config.ini gives us.
    cached.reset();
    Result<std::optional<CachedConfig>> latest =
        read_latest_config_cache(options.config_dir, loaded.node_id);
    if (latest.ok()) cached = std::move(latest).value();
  }
  CachedConfig fresh;
  fresh.node_id = loaded.node_id;
  fresh.source_path = options.config_file;
  fresh.text = std::move(text);
  fresh.written_wall_time_ns = clock.wall_time_ns();
  if (cached && cached->text == fresh.text) {
    loaded.notes.push_back("config.ini '" + options.config_file +
                           "' equals the persisted configuration generation " +
                           std::to_string(cached->generation));
    loaded.served.cache = std::move(*cached);
  } else {
    // Above every file present, damaged ones included, so the new file is the latest.
    fresh.generation = config_cache_latest_generation(options.config_dir, loaded.node_id) + 1;
    DUO_RETURN_IF_ERROR(write_config_cache(options.config_dir, fresh));
    loaded.notes.push_back("Loaded config.ini '" + options.config_file +
                           "'; persisted as configuration generation " +
                           std::to_string(fresh.generation));
    loaded.served.cache = std::move(fresh);
  }
  loaded.served.parsed = std::move(parsed);
  return loaded;
}

int g_stop_pipe_write = -1;

extern "C" void on_stop_signal(int) {
  const char byte = 's';
  // A full pipe already holds a stop request: the result can be ignored.
  [[maybe_unused]] ssize_t n = ::write(g_stop_pipe_write, &byte, 1);
}

int run_mgmd(int argc, char** argv) {
  Options options;
  if (!parse_args(argc, argv, &options)) {
    std::fprintf(stderr, "duo_mgmd: bad command line (see --help)\n");
    return kExitUsage;
  }
  Result<LogLevel> level = parse_log_level(options.log_level);
  if (!level.ok()) {
    std::fprintf(stderr, "duo_mgmd: %s\n", level.status().message().c_str());
    return kExitUsage;
  }
  set_log_level(*level);
  const Clock& clock = real_clock();

  std::error_code ec;
  std::filesystem::create_directories(options.config_dir, ec);
  if (ec) {
    std::fprintf(stderr, "duo_mgmd: cannot create configdir '%s': %s\n", options.config_dir.c_str(),
                 ec.message().c_str());
    return kExitError;
  }

  Result<Loaded> loaded = load_configuration(options, clock);
  if (!loaded.ok()) {
    std::fprintf(stderr, "duo_mgmd: %s\n", loaded.status().message().c_str());
    return kExitError;
  }
  const uint32_t node_id = loaded->node_id;
  const std::string prefix = options.config_dir + "/ndb_" + std::to_string(node_id);

  Result<int> pid_fd = lock_pid_file(prefix + ".pid", "another duo_mgmd uses this --configdir");
  if (!pid_fd.ok()) {
    std::fprintf(stderr, "duo_mgmd: %s\n", pid_fd.status().message().c_str());
    return kExitError;
  }

  ClusterLog cluster_log(clock);
  if (Status opened = cluster_log.open(prefix + "_cluster.log"); !opened.ok()) {
    std::fprintf(stderr, "duo_mgmd: %s\n", opened.message().c_str());
    return kExitError;
  }
  cluster_log.event(Severity::kInfo, "Node " + std::to_string(node_id) +
                                         ": DuoDB management server " + duo_version_string() +
                                         " starting (configdir '" + options.config_dir +
                                         "', crc32c " + crc32c_implementation_name() + ")");
  for (const std::string& note : loaded->notes) {
    if (note.rfind("WARNING:", 0) == 0) {
      cluster_log.event(Severity::kWarning, note.substr(8));
    } else {
      cluster_log.event(Severity::kInfo, note);
    }
  }

  const config::ConfigSection* own = loaded->served.parsed.find_node(node_id);
  uint16_t port = 1186;
  if (options.port >= 0) {
    port = static_cast<uint16_t>(options.port);
  } else if (Result<uint64_t> configured = own->get_uint("PortNumber"); configured.ok()) {
    port = static_cast<uint16_t>(*configured);
  }

  std::vector<NodeSlot> slots = slots_from_config(loaded->served.parsed, resolve_host);
  for (const NodeSlot& slot : slots) {
    if (!slot.host_name.empty() && slot.addresses.empty()) {
      cluster_log.event(Severity::kWarning, "Node " + std::to_string(slot.node_id) +
                                                ": HostName '" + slot.host_name +
                                                "' does not resolve; nobody can take this node id");
    }
  }
  MgmService service(std::move(loaded->served), node_id, std::move(slots), &cluster_log);

  ServerOptions server_options;
  server_options.bind_address = options.bind_address;
  server_options.port = port;
  server_options.sessions_max = options.sessions_max;
  server_options.session_idle_timeout_ms = options.session_idle_timeout_ms;
  MgmServer server(&service, clock, server_options);
  if (Status listening = server.listen(); !listening.ok()) {
    cluster_log.event(Severity::kError,
                      "Node " + std::to_string(node_id) + ": " + listening.message());
    std::fprintf(stderr, "duo_mgmd: %s\n", listening.message().c_str());
    return kExitError;
  }
  cluster_log.event(Severity::kInfo,
                    "Node " + std::to_string(node_id) + ": listening on " + options.bind_address +
                        ":" + std::to_string(server.port()) + " (configuration generation " +
                        std::to_string(service.config().cache.generation) + ")");
  // Handlers go in before the "listening" line: whoever reads it may signal at once.
  int stop_pipe[2];
  if (::pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    cluster_log.event(Severity::kError, std::string("pipe: ") + std::strerror(errno));
    return kExitError;
  }
  g_stop_pipe_write = stop_pipe[1];
  install_stop_handler(on_stop_signal, options.foreground);

  // The one line scripts and tests read to learn the port (--port=0).
  std::printf("duo_mgmd: node %u listening on %s:%u\n", node_id, options.bind_address.c_str(),
              static_cast<unsigned>(server.port()));
  std::fflush(stdout);

  if (!options.foreground && !daemonize(prefix + "_out.log")) {
    std::fprintf(stderr, "duo_mgmd: fork: %s\n", std::strerror(errno));
    return kExitError;
  }
  write_pid(*pid_fd);

  Status ran = server.run(stop_pipe[0]);
  int exit_code = 0;
  if (!ran.ok()) {
    cluster_log.event(Severity::kError, "Node " + std::to_string(node_id) + ": " + ran.message());
    exit_code = kExitError;
  }
  cluster_log.event(Severity::kInfo,
                    "Node " + std::to_string(node_id) + ": management server stopped");
  ::close(stop_pipe[0]);
  ::close(stop_pipe[1]);
  ::unlink((prefix + ".pid").c_str());
  ::close(*pid_fd);
  return exit_code;
}

}  // namespace
}  // namespace duo::mgm

int main(int argc, char** argv) {
  return duo::mgm::run_mgmd(argc, argv);
}
