// duo_sqld: DuoDB's MySQL server (mysqld as an NDB API node). Connects to the cluster as
// an API node (api::Cluster: node id from duo_mgmd, links to every data node), waits
// until every data node reports STARTED, makes sure the SQL system tables exist, then
// serves the MySQL protocol (SqlServer) with the SqlEngine on --bind-address:--port
// and the Unix socket --socket until SIGTERM/SIGINT.
//
// Like duo_datad it daemonizes unless --foreground, with a pid file and a log in
// --datadir (duo_sqld.pid, duo_sqld_out.log). It keeps no data: killing it loses
// nothing committed.
//
// Users: accounts live in the cluster table mysql/def/user (catalog/user_catalog.h),
// created at start with root@'%' and an empty password if missing; every login reads
// them (ClusterUserDirectory), so all sqld of a cluster authenticate alike.
//
// TLS: offered to clients with --ssl-cert/--ssl-key, else with a pair generated once in
// --datadir (server_certificate.h, MySQL's auto_generate_certs); --skip-ssl offers none.
//
// Thread-safety: the main thread waits for the stop signal; SqlServer and the cluster
// connection own their threads. The stop signals only set a flag (install_stop_flag).
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "mgmd/client/mgm_commands.h"
#include "mgmd/client/mgm_connection.h"
#include "ndb-kernel/api/cluster_connection.h"
#include "ndb-kernel/common/logging.h"
#include "ndb-kernel/common/process.h"
#include "sql-frontend/catalog/catalog.h"
#include "sql-frontend/catalog/user_catalog.h"
#include "sql-frontend/executor/cluster_user_directory.h"
#include "sql-frontend/executor/expression.h"
#include "sql-frontend/executor/session_registry.h"
#include "sql-frontend/executor/sql_engine.h"
#include "sql-frontend/executor/system_variables.h"
#include "sql-frontend/executor/system_views.h"
#include "sql-frontend/server/sql_server.h"
#include "sql-frontend/sqld/server_certificate.h"

#ifndef DUO_VERSION
#define DUO_VERSION "0.0.0"
#endif

namespace duo::sqld {
namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr const char* kLog = "sqld";
// How long start-up waits for the data nodes to be linked (they may still be starting).
constexpr uint64_t kClusterReadyTimeoutMs = 60000;
constexpr uint64_t kSystemTablesRetryMs = 500;
constexpr int kSystemTablesAttempts = 120;
constexpr uint64_t kMgmCallTimeoutMs = 5000;

struct Options {
  std::string connect_string = "localhost:1186";
  uint32_t node_id = 0;
  std::string bind_address = "127.0.0.1";
  uint16_t port = 3306;
  // Where MySQL clients that name no host connect (their compiled-in default).
  std::string socket = "/run/mysqld/mysqld.sock";
  std::string datadir = ".";
  bool foreground = false;
  std::string log_level = "info";
  // TLS for MySQL clients: the given pair, else one generated in --datadir, unless off.
  std::string ssl_cert;
  std::string ssl_key;
  bool ssl = true;
  // MySQL's ndb_recv_thread_activation_threshold (NDB's default 8, range 0..16).
  uint32_t recv_thread_activation_threshold = 8;
};

void print_usage() {
  std::printf(
      "Usage: duo_sqld [options]\n"
      "  -c, --ndb-connectstring=HOST:PORT  management server (default localhost:1186)\n"
      "  --ndb-nodeid=N               API node id to take (default: any free one)\n"
      "  --ndb-recv-thread-activation-threshold=N  waiting sessions from which a receive\n"
      "                               thread reads the cluster for all (0..16, default 8)\n"
      "  -P, --port=N                 MySQL port (default 3306)\n"
      "  --bind-address=ADDR          listen address (default 127.0.0.1)\n"
      "  -S, --socket=PATH            Unix socket (default /run/mysqld/mysqld.sock; an\n"
      "                               empty PATH: none); one that cannot be used is logged\n"
      "                               and the server serves TCP only\n"
      "  --datadir=DIR                pid file and log directory (default .)\n"
      "  --foreground, --nodaemon     stay in the foreground and log to stderr\n"
      "  --log-level=LEVEL            error, warning, info (default), debug\n"
      "  --ssl-cert=FILE --ssl-key=FILE  TLS certificate and key (PEM) offered to clients\n"
      "                               (default: generated once in --datadir, as MySQL's\n"
      "                               auto_generate_certs)\n"
      "  --skip-ssl, --ssl=OFF        offer no TLS\n"
      "  -V, --version, -h, --help\n");
}

bool parse_args(int argc, char** argv, Options* options) {
  for (ArgCursor args(argc, argv); args.next();) {
    const std::string arg = args.name();
    std::string value;
    auto take_value = [&]() { return args.take_value(&value); };
    if (arg == "-h" || arg == "--help") {
      print_usage();
      std::exit(0);
    } else if (arg == "-V" || arg == "--version") {
      std::printf("duo_sqld DuoDB-%s\n", DUO_VERSION);
      std::exit(0);
    } else if (arg == "-c" || arg == "--ndb-connectstring" || arg == "--connect-string") {
      if (!take_value()) return false;
      options->connect_string = value;
    } else if (arg == "--ndb-nodeid") {
      if (!take_value()) return false;
      auto id = mgm::parse_uint_arg(value, 255);
      if (!id || *id == 0) return false;
      options->node_id = static_cast<uint32_t>(*id);
    } else if (arg == "--ndb-recv-thread-activation-threshold" ||
               arg == "--ndb_recv_thread_activation_threshold") {
      if (!take_value()) return false;
      auto threshold = mgm::parse_uint_arg(value, 16);
      if (!threshold) return false;
      options->recv_thread_activation_threshold = static_cast<uint32_t>(*threshold);
    } else if (arg == "-P" || arg == "--port") {
      if (!take_value()) return false;
      auto port = mgm::parse_uint_arg(value, 65535);
      if (!port) return false;
      options->port = static_cast<uint16_t>(*port);
    } else if (arg == "-S" || arg == "--socket") {
      if (!take_value()) return false;
      options->socket = value;
    } else if (arg == "--bind-address") {
      if (!take_value()) return false;
      options->bind_address = value;
    } else if (arg == "--datadir") {
      if (!take_value()) return false;
      options->datadir = value;
    } else if (arg == "--foreground" || arg == "--nodaemon") {
      options->foreground = true;
    } else if (arg == "--ssl-cert" || arg == "--ssl-key") {
      if (!take_value() || value.empty()) return false;
      (arg == "--ssl-cert" ? options->ssl_cert : options->ssl_key) = value;
    } else if (arg == "--skip-ssl") {
      options->ssl = false;
    } else if (arg == "--ssl") {
      if (!take_value()) return false;
      const std::string v = value;
      if (v == "0" || v == "OFF" || v == "off") {
        options->ssl = false;
      } else if (v == "1" || v == "ON" || v == "on") {
        options->ssl = true;
      } else {
        return false;
      }
    } else if (arg == "--log-level") {
      if (!take_value()) return false;
      options->log_level = value;
    } else {
      std::fprintf(stderr, "duo_sqld: unknown option '%s'\n", arg.c_str());
      return false;
    }
  }
  return true;
}

// Waits until every data node reports STARTED to mgmd (`get status`), or the timeout.
// The dictionary must not see requests from sqld while data nodes are still in their
// start: a schema change sent to a starting master never completes (see the report), so
// sqld asks for the system tables only once the cluster is started, as mysqld waits for
// the cluster to be ready.
// Waits until the cluster is started as mgmd sees it: at least one data node STARTED
// and none still starting or stopping. A data node mgmd has no contact with is not
// waited for: it is down (a starting node contacts mgmd before anything else; one in
// its node restart is starting, so it is waited for). Returns how many data nodes are
// STARTED.
Result<size_t> wait_for_started_data_nodes(const std::string& connect_string,
                                           uint64_t timeout_ms) {
  DUO_ASSIGN_OR_RETURN(mgm::ConnectString target, mgm::parse_connect_string(connect_string));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string last_state = "no answer from the management server";
  while (std::chrono::steady_clock::now() < deadline && !stop_requested()) {
    mgm::MgmConnection connection;
    if (connection.connect(target, kMgmCallTimeoutMs).ok()) {
      mgm::Message request;
      request.head = "get status";
      Result<mgm::Message> reply = connection.call(request, kMgmCallTimeoutMs);
      if (reply.ok()) {
        Result<std::vector<mgm::NodeStatus>> nodes = mgm::parse_status_reply(*reply);
        if (nodes.ok()) {
          bool settled = true;
          size_t started = 0;
          last_state.clear();
          for (const mgm::NodeStatus& node : *nodes) {
            if (node.type != "NDB") continue;
            if (node.status == "STARTED") {
              ++started;
            } else if (node.status != "NO_CONTACT") {
              settled = false;
            }
            last_state += "node " + std::to_string(node.node_id) + " " + node.status + " ";
          }
          if (settled && started > 0) return started;
        }
      }
    }
    ::poll(nullptr, 0, static_cast<int>(kSystemTablesRetryMs));
  }
  return Status(ErrorCode::kTemporary, "data nodes not started: " + last_state);
}

int run_sqld(int argc, char** argv) {
  Options options;
  if (!parse_args(argc, argv, &options)) {
    std::fprintf(stderr, "duo_sqld: bad command line (see --help)\n");
    return kExitUsage;
  }
  Result<LogLevel> level = parse_log_level(options.log_level);
  if (!level.ok()) {
    std::fprintf(stderr, "duo_sqld: %s\n", level.status().message().c_str());
    return kExitUsage;
  }
  set_log_level(*level);
  std::error_code ec;
  std::filesystem::create_directories(options.datadir, ec);
  if (ec) {
    std::fprintf(stderr, "duo_sqld: cannot create --datadir '%s': %s\n", options.datadir.c_str(),
                 ec.message().c_str());
    return kExitError;
  }
  const std::string prefix = options.datadir + "/duo_sqld";
  Result<int> pid_fd = lock_pid_file(prefix + ".pid", "another duo_sqld uses this --datadir");
  if (!pid_fd.ok()) {
    std::fprintf(stderr, "duo_sqld: %s\n", pid_fd.status().message().c_str());
    return kExitError;
  }
  // TLS files before anything starts: a bad pair is a start-up error, as in mysqld.
  sql::sqld::ServerTlsFiles tls;
  if (options.ssl_cert.empty() != options.ssl_key.empty()) {
    std::fprintf(stderr, "duo_sqld: --ssl-cert and --ssl-key go together\n");
    return kExitUsage;
  }
  if (options.ssl && !options.ssl_cert.empty()) {
    tls = {options.ssl_cert, options.ssl_key};
  } else if (options.ssl) {
    Result<sql::sqld::ServerTlsFiles> generated =
        sql::sqld::auto_generated_server_certificate(options.datadir, DUO_VERSION);
    if (!generated.ok()) {
      std::fprintf(stderr, "duo_sqld: TLS: %s\n", generated.status().message().c_str());
      return kExitError;
    }
    tls = *generated;
  }
  // Daemonize before any thread exists (the cluster connection starts threads).
  if (!options.foreground) {
    std::printf("duo_sqld: daemonizing; log in %s_out.log\n", prefix.c_str());
    std::fflush(stdout);
    if (!daemonize(prefix + "_out.log")) {
      std::fprintf(stderr, "duo_sqld: fork: %s\n", std::strerror(errno));
      return kExitError;
    }
  }
  write_pid(*pid_fd);
  install_stop_flag(options.foreground);

  auto finish = [&](int code) {
    ::unlink((prefix + ".pid").c_str());
    ::close(*pid_fd);
    return code;
  };
  DUO_LOG(INFO, kLog) << "DuoDB SQL server DuoDB-" << DUO_VERSION << " starting; management server "
                      << options.connect_string;
  api::ClusterOptions cluster_options;
  cluster_options.connect_string = options.connect_string;
  cluster_options.node_id = options.node_id;
  cluster_options.name = "duo_sqld";
  cluster_options.recv_thread_activation_threshold = options.recv_thread_activation_threshold;
  Result<std::unique_ptr<api::Cluster>> cluster = api::Cluster::connect(cluster_options);
  if (!cluster.ok()) {
    DUO_LOG(ERROR, kLog) << "cannot connect to the cluster: " << cluster.status().message();
    return finish(kExitError);
  }
  Result<size_t> started = wait_for_started_data_nodes(options.connect_string,
                                                       kClusterReadyTimeoutMs);
  if (!started.ok()) {
    DUO_LOG(ERROR, kLog) << started.status().message();
    return finish(kExitError);
  }
  // Links to every started data node (one that is down is not waited for).
  Result<size_t> ready = (*cluster)->wait_until_ready(kClusterReadyTimeoutMs);
  if (!ready.ok()) {
    DUO_LOG(ERROR, kLog) << "no data node reachable: " << ready.status().message();
    return finish(kExitError);
  }
  DUO_LOG(INFO, kLog) << "API node " << (*cluster)->node_id() << ": linked to " << *ready
                      << " data node(s), " << *started << " started";
  // A data node may still fail a request right after its start: retry a while.
  sql::catalog::Catalog catalog(cluster->get());
  Status system_tables;
  std::unique_ptr<api::Session> start_session = (*cluster)->new_session();
  for (int attempt = 0; attempt < kSystemTablesAttempts && !stop_requested(); ++attempt) {
    system_tables = catalog.ensure_system_tables();
    if (system_tables.ok())
      system_tables = sql::catalog::ensure_user_table(**cluster, *start_session);
    if (system_tables.ok()) break;
    DUO_LOG(INFO, kLog) << "SQL system tables not ready (" << system_tables.message()
                        << "); retrying";
    ::poll(nullptr, 0, static_cast<int>(kSystemTablesRetryMs));
  }
  if (!system_tables.ok()) {
    DUO_LOG(ERROR, kLog) << "cannot create the SQL system tables: " << system_tables.message();
    return finish(kExitError);
  }

  start_session.reset();

  sql::executor::set_management_connect_string(options.connect_string);
  // SHOW STATUS's Uptime counts from the registry's creation: create it now.
  sql::executor::SessionRegistry::instance();
  sql::executor::SqlEngine engine(cluster->get());
  sql::executor::ClusterUserDirectory users(cluster->get());
  sql::server::SqlServerOptions server_options;
  server_options.bind_address = options.bind_address;
  server_options.port = options.port;
  server_options.socket_path = options.socket;
  server_options.tls_cert_file = tls.cert_file;
  server_options.tls_key_file = tls.key_file;
  server_options.session.server_version = sql::executor::server_version();
  sql::server::SqlServer server(&engine, &users, server_options);
  // @@port and @@socket: set before the first client can ask, corrected once the
  // server knows what it listens on.
  sql::executor::set_server_endpoints(options.port, options.socket);
  if (Status started = server.start(); !started.ok()) {
    DUO_LOG(ERROR, kLog) << "cannot listen on " << options.bind_address << ":" << options.port
                         << ": " << started.message();
    return finish(kExitError);
  }
  sql::executor::set_server_endpoints(server.port(), server.socket_path());
  DUO_LOG(INFO, kLog) << "ready for connections on " << options.bind_address << ":" << server.port()
                      << (server.socket_path().empty() ? std::string()
                                                       : " and socket " + server.socket_path())
                      << " (accounts from the cluster)";
  while (!stop_requested()) ::poll(nullptr, 0, 200);
  DUO_LOG(INFO, kLog) << "stopping: stop signal received";
  server.stop();
  (*cluster)->disconnect();
  DUO_LOG(INFO, kLog) << "stopped";
  return finish(0);
}

}  // namespace
}  // namespace duo::sqld

int main(int argc, char** argv) {
  return duo::sqld::run_sqld(argc, argv);
}
