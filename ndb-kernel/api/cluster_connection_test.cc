// Cluster against a real duo_mgmd (started here on a free port with a temporary
// configuration: 2 data nodes, no data node process): node id allocation, configuration
// and topology, the session that keeps the id, wait_until_ready without data nodes,
// disconnect freeing the id; and the C API's error paths. The data-path protocol itself
// is covered by api_core_test.cc; whole-cluster runs need the data node blocks.
#include "ndb-kernel/api/cluster_connection.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "ndb-kernel/api/duo_api_c.h"

namespace duo::api {
namespace {

constexpr const char* kConfig = R"([ndbd default]
NoOfReplicas=2
DataMemory=80M

[ndb_mgmd]
NodeId=49
HostName=127.0.0.1

[ndbd]
NodeId=1
HostName=127.0.0.1

[ndbd]
NodeId=2
HostName=127.0.0.1

[api]
NodeId=50

[api]
NodeId=51
)";

// A duo_mgmd child process, killed (by its pid) and cleaned up at destruction.
class MgmdProcess {
 public:
  MgmdProcess() {
    dir_ = std::filesystem::temp_directory_path() /
           ("duo_api_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_ / "configdir");
    std::ofstream(dir_ / "config.ini") << kConfig;
    int out[2];
    if (::pipe(out) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      ::close(out[0]);
      const std::string config = "--config-file=" + (dir_ / "config.ini").string();
      const std::string configdir = "--configdir=" + (dir_ / "configdir").string();
      ::execl(DUO_MGMD_PATH, DUO_MGMD_PATH, config.c_str(), configdir.c_str(), "--port=0",
              "--bind-address=127.0.0.1", "--foreground", "--log-level=warning",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    // First stdout line: "duo_mgmd: node 49 listening on 127.0.0.1:PORT".
    std::string line;
    char c = 0;
    while (::read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
    ::close(out[0]);
    std::smatch match;
    if (std::regex_search(line, match, std::regex(":(\\d+)$"))) port_ = std::stoi(match[1]);
  }
  ~MgmdProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  int port() const { return port_; }
  std::string connect_string() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// `node.<id>.status` from mgmd's `get status`.
std::string node_status(const MgmdProcess& mgmd, uint16_t node) {
  mgm::MgmConnection connection;
  if (!connection.connect(mgm::ConnectString{"127.0.0.1", static_cast<uint16_t>(mgmd.port())}, 5000)
           .ok()) {
    return "unreachable";
  }
  mgm::Message request;
  request.head = "get status";
  Result<mgm::Message> reply = connection.call(request, 5000);
  if (!reply.ok()) return "no reply";
  const std::string* status = reply->find("node." + std::to_string(node) + ".status");
  return status != nullptr ? *status : "absent";
}

TEST(DataNodePeers, HostNameAndServerPortFromTheConfiguration) {
  Result<config::ClusterConfig> config = config::parse_config_string(
      "[ndbd default]\nNoOfReplicas=2\n[ndb_mgmd]\nNodeId=49\n"
      "[ndbd]\nNodeId=3\nHostName=10.0.0.3\nServerPort=11860\n[ndbd]\nNodeId=2\n[api]\n");
  ASSERT_TRUE(config.ok()) << config.status().to_string();
  const std::vector<transport::PeerConfig> peers = data_node_peers(*config);
  ASSERT_EQ(peers.size(), 2u);
  EXPECT_EQ(peers[0].node_id, 2);
  EXPECT_EQ(peers[0].host, "localhost");  // the configuration's default HostName
  EXPECT_EQ(peers[0].port, 0);
  EXPECT_EQ(peers[1].node_id, 3);
  EXPECT_EQ(peers[1].host, "10.0.0.3");
  EXPECT_EQ(peers[1].port, 11860);
}

TEST(Cluster, ConnectTakesAnApiNodeIdAndDisconnectFreesIt) {
  MgmdProcess mgmd;
  ASSERT_NE(mgmd.port(), 0) << "duo_mgmd did not start";
  ClusterOptions options;
  options.connect_string = mgmd.connect_string();
  options.mgm_poll_interval_ms = 50;
  Result<std::unique_ptr<Cluster>> cluster = Cluster::connect(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status().to_string();
  EXPECT_EQ((*cluster)->node_id(), 50);
  ASSERT_EQ((*cluster)->topology().node_groups.size(), 1u);
  EXPECT_EQ((*cluster)->topology().node_groups[0], (std::vector<uint16_t>{1, 2}));
  EXPECT_EQ(node_status(mgmd, 50), "CONNECTED");

  // A second connection gets the other API slot; a third finds none.
  Result<std::unique_ptr<Cluster>> second = Cluster::connect(options);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ((*second)->node_id(), 51);
  Result<std::unique_ptr<Cluster>> third = Cluster::connect(options);
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), ErrorCode::kConfigError);

  // No data node runs: nothing links, and requests fail with a temporary error.
  Result<size_t> ready = (*cluster)->wait_until_ready(100);
  EXPECT_EQ(ready.status().code(), ErrorCode::kTemporary);
  std::unique_ptr<Session> session = (*cluster)->new_session();
  EXPECT_EQ(session->begin().status().code(), ErrorCode::kTemporary);
  EXPECT_EQ((*cluster)->get_table("t").status().code(), ErrorCode::kTemporary);
  // Refused at once: nobody waited for the cluster (SHOW STATUS Ndb_api_wait_*_count).
  const WaitCounts waits = (*cluster)->wait_counts();
  EXPECT_EQ(waits.exec_complete + waits.scan_result + waits.meta_request, 0u);
  session.reset();

  // The session stays alive across several status polls.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(node_status(mgmd, 50), "CONNECTED");
  (*cluster)->disconnect();
  std::string status;
  for (int i = 0; i < 100 && (status = node_status(mgmd, 50)) == "CONNECTED"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_NE(status, "CONNECTED");
}

TEST(Cluster, UnreachableManagementServerIsAnIoError) {
  ClusterOptions options;
  options.connect_string = "127.0.0.1:1";  // nobody listens on port 1
  options.mgm_timeout_ms = 1000;
  Result<std::unique_ptr<Cluster>> cluster = Cluster::connect(options);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), ErrorCode::kIoError);
  options.connect_string = "127.0.0.1:notaport";
  EXPECT_EQ(Cluster::connect(options).status().code(), ErrorCode::kInvalidArgument);
}

// ---- C API ----

TEST(DuoApiC, ErrorsAreReportedWithMysqlErrnoAndMessage) {
  EXPECT_EQ(duo_connect("127.0.0.1:1", 500), nullptr);
  EXPECT_NE(duo_last_errno(), 0);
  EXPECT_NE(std::string(duo_last_error()), "");
  EXPECT_EQ(duo_begin(nullptr), nullptr);
  EXPECT_EQ(duo_last_errno(), 1210);  // ER_WRONG_ARGUMENTS
  EXPECT_EQ(duo_insert(nullptr, nullptr, nullptr, nullptr, 0), -1);
  EXPECT_EQ(duo_commit(nullptr), -1);
  duo_row* row = nullptr;
  EXPECT_EQ(duo_read(nullptr, nullptr, nullptr, nullptr, 0, &row), -1);
  EXPECT_EQ(row, nullptr);
  EXPECT_EQ(duo_row_column_count(nullptr), 0);
  EXPECT_EQ(duo_row_value(nullptr, 0), nullptr);
  duo_txn_free(nullptr);
  duo_disconnect(nullptr);
}

TEST(DuoApiC, ConnectWithoutDataNodesFailsTemporarily) {
  MgmdProcess mgmd;
  ASSERT_NE(mgmd.port(), 0) << "duo_mgmd did not start";
  EXPECT_EQ(duo_connect(mgmd.connect_string().c_str(), 200), nullptr);
  EXPECT_EQ(duo_last_errno(), 1297);  // ER_GET_TEMPORARY_ERRMSG: retry later
}

}  // namespace
}  // namespace duo::api
