#include "mgmd/daemon/mgm_service.h"

#include <gtest/gtest.h>

#include "ndb-kernel/common/crc32c.h"
#include "ndb-kernel/common/logging.h"

namespace duo::mgm {
namespace {

constexpr std::string_view kConfig = R"(
[ndbd default]
NoOfReplicas=2
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

std::vector<std::string> resolve_table(const std::string& host) {
  if (host == "127.0.0.1" || host == "localhost") return {"127.0.0.1"};
  return {};
}

class MgmServiceTest : public ::testing::Test {
 protected:
  MgmServiceTest() : log_(clock_) {
    ServedConfig served;
    served.cache.generation = 4;
    served.cache.node_id = 49;
    served.cache.text = std::string(kConfig);
    Result<config::ClusterConfig> parsed = config::parse_config_string(kConfig);
    EXPECT_TRUE(parsed.ok()) << parsed.status().to_string();
    served.parsed = std::move(parsed).value();
    std::vector<NodeSlot> slots = slots_from_config(served.parsed, resolve_table);
    service_ = std::make_unique<MgmService>(std::move(served), 49, std::move(slots), &log_);
    service_->on_session_open(1, "127.0.0.1:1001", "127.0.0.1");
    service_->on_session_open(2, "127.0.0.1:1002", "127.0.0.1");
    service_->on_session_open(3, "10.1.1.1:1003", "10.1.1.1");
  }

  Message call(uint64_t session, std::string head,
               std::vector<std::pair<std::string, std::string>> args = {}, bool* close = nullptr) {
    RequestParser::Parsed parsed;
    parsed.request.head = std::move(head);
    parsed.request.args = std::move(args);
    MgmService::Outcome outcome = service_->handle(session, parsed);
    if (close != nullptr) *close = outcome.close_session;
    return outcome.reply;
  }
  static std::string result(const Message& reply) {
    const std::string* r = reply.find("result");
    return r == nullptr ? "<none>" : *r;
  }

  ScopedLogCapture capture_{LogLevel::kInfo};
  ManualClock clock_;
  ClusterLog log_;
  std::unique_ptr<MgmService> service_;
};

TEST_F(MgmServiceTest, TwoApiAllocationsSucceedTheThirdFailsAndDisconnectFrees) {
  Message first = call(1, "get nodeid", {{"nodetype", "api"}, {"name", "app"}});
  EXPECT_EQ(first.head, "get nodeid reply");
  EXPECT_EQ(result(first), "Ok");
  EXPECT_EQ(*first.find("nodeid"), "50");
  Message second = call(2, "get nodeid", {{"nodetype", "api"}});
  EXPECT_EQ(*second.find("nodeid"), "51");
  Message third = call(3, "get nodeid", {{"nodetype", "api"}});
  EXPECT_EQ(result(third), "No free node id found for mysqld(API).");
  EXPECT_EQ(third.find("nodeid"), nullptr);

  service_->on_session_closed(1, "peer closed the connection");
  EXPECT_TRUE(capture_.sink().contains("Node 50: node id released"));
  Message again = call(3, "get nodeid", {{"nodetype", "api"}});
  EXPECT_EQ(*again.find("nodeid"), "50");
}

TEST_F(MgmServiceTest, NodeidErrors) {
  EXPECT_EQ(result(call(1, "get nodeid", {{"nodetype", "api"}, {"nodeid", "1"}})),
            "Id 1 configured as ndbd(NDB), connect attempted as mysqld(API).");
  EXPECT_EQ(result(call(1, "get nodeid", {{"nodetype", "mgm"}, {"nodeid", "49"}})),
            "Id 49 already allocated by another node at 127.0.0.1.");
  EXPECT_EQ(result(call(1, "get nodeid", {{"nodetype", "api"}, {"nodeid", "77"}})),
            "No node defined with id=77 in config file.");
  EXPECT_NE(result(call(3, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "1"}}))
                .find("wrong host ip 10.1.1.1"),
            std::string::npos);
  EXPECT_NE(result(call(1, "get nodeid", {{"nodetype", "robot"}})).find("bad nodetype"),
            std::string::npos);
  EXPECT_NE(
      result(call(1, "get nodeid", {{"nodetype", "api"}, {"nodeid", "-1"}})).find("bad nodeid"),
      std::string::npos);
  EXPECT_EQ(result(call(1, "get nodeid", {})), "missing argument 'nodetype' for 'get nodeid'");
  EXPECT_EQ(result(call(1, "get nodeid", {{"nodetype", "api"}, {"nodeide", "3"}})),
            "unknown argument 'nodeide' for 'get nodeid'");
  // NDB mgmapi's extra arguments are accepted.
  EXPECT_EQ(result(call(1, "get nodeid",
                        {{"nodetype", "api"},
                         {"user", "mysqld"},
                         {"password", "mysqld"},
                         {"public key", "a public key"},
                         {"endian", "little"},
                         {"log_event", "0"},
                         {"version", "65536"}})),
            "Ok");
}

TEST_F(MgmServiceTest, UnknownCommandAndMalformedRequestsGetErrorReplies) {
  Message unknown = call(1, "fly away");
  EXPECT_EQ(unknown.head, "fly away reply");
  EXPECT_EQ(result(unknown), "Unknown command, 'fly away'");
  EXPECT_TRUE(capture_.sink().contains("unknown command 'fly away'"));

  RequestParser::Parsed parsed;
  parsed.request.head = "get status";
  parsed.error = "argument 'x' given twice";
  EXPECT_EQ(result(service_->handle(1, parsed).reply), "argument 'x' given twice");
}

TEST_F(MgmServiceTest, StatusReportsConfiguredNodesHonestly) {
  ASSERT_EQ(result(call(2, "get nodeid", {{"nodetype", "api"}, {"version", "65536"}})), "Ok");
  ASSERT_EQ(result(call(1, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "2"}})), "Ok");
  Message status = call(1, "get status");
  EXPECT_EQ(status.head, "get status reply");
  EXPECT_EQ(*status.find("nodes"), "5");
  EXPECT_EQ(*status.find("node.1.type"), "NDB");
  EXPECT_EQ(*status.find("node.1.status"), "NO_CONTACT");
  EXPECT_EQ(*status.find("node.1.host"), "127.0.0.1");
  EXPECT_EQ(*status.find("node.1.nodegroup"), "0");
  EXPECT_EQ(*status.find("node.2.status"), "ALLOCATED");  // allocated, but not running
  EXPECT_EQ(*status.find("node.49.type"), "MGM");
  EXPECT_EQ(*status.find("node.49.status"), "CONNECTED");
  EXPECT_EQ(*status.find("node.49.version"), std::to_string(duo_version_number()));
  EXPECT_EQ(*status.find("node.50.status"), "CONNECTED");
  EXPECT_EQ(*status.find("node.50.address"), "127.0.0.1");
  EXPECT_EQ(*status.find("node.50.version"), "65536");
  EXPECT_EQ(*status.find("node.51.status"), "NO_CONTACT");
  EXPECT_EQ(*status.find("node.51.host"), "");
  EXPECT_EQ(call(1, "show").find("node.49.type") != nullptr, true);
}

TEST_F(MgmServiceTest, GetConfigReturnsTheServedTextWithChecksum) {
  Message reply = call(1, "get config");
  EXPECT_EQ(result(reply), "Ok");
  EXPECT_EQ(*reply.find("generation"), "4");
  EXPECT_EQ(reply.body, kConfig);
  char expected[16];
  std::snprintf(expected, sizeof expected, "0x%08x", crc32c(kConfig.data(), kConfig.size()));
  EXPECT_EQ(*reply.find("checksum"), expected);
}

TEST_F(MgmServiceTest, StopAndRestartNeverPretend) {
  EXPECT_EQ(result(call(1, "stop", {{"node", "1"}})), "node 1 is not connected");
  EXPECT_EQ(result(call(1, "restart", {{"node", "2"}, {"initialstart", "1"}})),
            "node 2 is not connected");
  EXPECT_EQ(result(call(1, "stop", {{"node", "9"}})), "node 9 is not configured");
  EXPECT_NE(result(call(1, "stop", {{"node", "50"}})).find("is an API node"), std::string::npos);
  EXPECT_NE(result(call(1, "stop", {{"node", "x"}})).find("bad node"), std::string::npos);
  EXPECT_NE(result(call(1, "restart", {{"node", "49"}})).find("not supported yet"),
            std::string::npos);
  EXPECT_EQ(result(call(1, "stop", {})), "missing argument 'node' for 'stop'");
  EXPECT_FALSE(service_->shutdown_requested());
  EXPECT_EQ(result(call(1, "stop", {{"node", "49"}})), "Ok");
  EXPECT_TRUE(service_->shutdown_requested());
}

TEST_F(MgmServiceTest, ShutdownAndBye) {
  bool close = false;
  EXPECT_EQ(result(call(1, "get version", {}, &close)), "Ok");
  EXPECT_FALSE(close);
  EXPECT_EQ(result(call(1, "bye", {}, &close)), "Ok");
  EXPECT_TRUE(close);
  Message shutdown = call(2, "shutdown");
  EXPECT_EQ(result(shutdown), "Ok");
  EXPECT_EQ(*shutdown.find("data nodes stopped"), "0");
  EXPECT_TRUE(service_->shutdown_requested());
}

TEST_F(MgmServiceTest, VersionReply) {
  Message version = call(1, "get version");
  EXPECT_EQ(*version.find("string"), duo_version_string());
  EXPECT_EQ(*version.find("id"), std::to_string(duo_version_number()));
}

TEST_F(MgmServiceTest, ClusterLogFilter) {
  Message got = call(1, "get clusterlog");
  EXPECT_EQ(*got.find("enabled"), "on");
  EXPECT_EQ(*got.find("info"), "on");
  EXPECT_EQ(*got.find("debug"), "off");

  Message off = call(1, "set clusterlog", {{"enabled", "off"}});
  EXPECT_EQ(off.head, "set clusterlog reply");
  EXPECT_EQ(*off.find("enabled"), "off");
  EXPECT_FALSE(log_.filter().passes(Severity::kAlert));

  Message toggled = call(1, "set clusterlog",
                         {{"enabled", "on"}, {"severities", "debug,INFO"}, {"action", "toggle"}});
  EXPECT_EQ(*toggled.find("debug"), "on");
  EXPECT_EQ(*toggled.find("info"), "off");
  Message all_off = call(1, "set clusterlog", {{"severities", "all"}, {"action", "off"}});
  EXPECT_EQ(*all_off.find("alert"), "off");
  EXPECT_EQ(*all_off.find("enabled"), "on");

  EXPECT_NE(result(call(1, "set clusterlog", {{"severities", "loud"}, {"action", "on"}}))
                .find("unknown severity 'loud'"),
            std::string::npos);
  EXPECT_NE(result(call(1, "set clusterlog", {{"severities", "info"}})).find("action"),
            std::string::npos);
  EXPECT_NE(result(call(1, "set clusterlog", {})).find("give"), std::string::npos);
  EXPECT_NE(result(call(1, "set clusterlog", {{"enabled", "maybe"}})).find("bad enabled"),
            std::string::npos);
}

TEST(ClusterLogFormat, LineLooksLikeNdbs) {
  EXPECT_EQ(ClusterLog::format_line(ManualClock::kDefaultWallStartNs + 5 * 1000000, Severity::kInfo,
                                    "Node 1: hello"),
            "2020-01-01 00:00:00.005 [MgmtSrvr] INFO     -- Node 1: hello");
  EXPECT_EQ(parse_severity("warning"), Severity::kWarning);
  EXPECT_FALSE(parse_severity("loud"));
}

}  // namespace
}  // namespace duo::mgm
