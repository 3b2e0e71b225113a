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

TEST_F(MgmServiceTest, DataNodeReportsStateAndPort) {
  // Only the session holding a data node id may report for it.
  EXPECT_NE(result(call(1, "report status", {{"nodeid", "1"}, {"state", "starting"}}))
                .find("not a data node id allocated to this session"),
            std::string::npos);
  ASSERT_EQ(result(call(1, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "1"}})), "Ok");
  EXPECT_NE(result(call(2, "report status", {{"nodeid", "1"}, {"state", "starting"}}))
                .find("not a data node id"),
            std::string::npos);
  EXPECT_NE(result(call(1, "report status", {{"nodeid", "1"}, {"state", "flying"}}))
                .find("bad state 'flying'"),
            std::string::npos);
  EXPECT_NE(
      result(call(1, "report status", {{"nodeid", "1"}, {"state", "starting"}, {"port", "70000"}}))
          .find("bad port"),
      std::string::npos);
  EXPECT_NE(result(call(1, "report status",
                        {{"nodeid", "1"}, {"state", "starting"}, {"startphase", "x"}}))
                .find("bad startphase"),
            std::string::npos);
  EXPECT_EQ(result(call(1, "report status", {{"state", "starting"}})),
            "missing argument 'nodeid' for 'report status'");
  EXPECT_EQ(call(1, "get status").find("node.1.startphase"), nullptr);  // nothing reported yet
  EXPECT_EQ(*call(1, "get status").find("node.1.status"), "ALLOCATED");

  EXPECT_EQ(result(call(
                1, "report status",
                {{"nodeid", "1"}, {"state", "STARTING"}, {"startphase", "2"}, {"port", "41000"}})),
            "Ok");
  Message status = call(2, "get status");
  EXPECT_EQ(*status.find("node.1.status"), "STARTING");
  EXPECT_EQ(*status.find("node.1.startphase"), "2");
  EXPECT_EQ(*status.find("node.1.port"), "41000");
  ASSERT_NE(service_->data_node(1), nullptr);
  EXPECT_EQ(service_->data_node(1)->state, DataNodeState::kStarting);
  // A later report without a port keeps the known one.
  EXPECT_EQ(result(call(1, "report status", {{"nodeid", "1"}, {"state", "started"}})), "Ok");
  status = call(2, "get status");
  EXPECT_EQ(*status.find("node.1.status"), "STARTED");
  EXPECT_EQ(*status.find("node.1.port"), "41000");
  EXPECT_TRUE(capture_.sink().contains("Node 1: Start phase 2 completed"));
  EXPECT_TRUE(capture_.sink().contains("Node 1: data node STARTED"));

  // The session ends: the node is gone, not "stopped".
  service_->on_session_closed(1, "connection reset");
  EXPECT_EQ(service_->data_node(1), nullptr);
  EXPECT_EQ(*call(2, "get status").find("node.1.status"), "NO_CONTACT");
  EXPECT_TRUE(capture_.sink().contains("Node 1: data node lost (was STARTED)"));
}

TEST_F(MgmServiceTest, DataNodeReportsMemoryUsage) {
  ASSERT_EQ(result(call(1, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "1"}})), "Ok");
  // Old-style reports (no memory) still work and show no memory lines.
  ASSERT_EQ(result(call(1, "report status", {{"nodeid", "1"}, {"state", "starting"}})), "Ok");
  EXPECT_EQ(call(2, "get status").find("node.1.datamemory.total"), nullptr);
  EXPECT_EQ(result(call(1, "report status",
                        {{"nodeid", "1"}, {"state", "started"}, {"datamemory.used", "3"}})),
            "'datamemory.used' and 'datamemory.total' must be reported together");
  EXPECT_NE(result(call(1, "report status",
                        {{"nodeid", "1"},
                         {"state", "started"},
                         {"datamemory.used", "9"},
                         {"datamemory.total", "8"}}))
                .find("bad datamemory usage '9' of '8'"),
            std::string::npos);
  EXPECT_NE(result(call(1, "report status", {{"nodeid", "1"}, {"state", "started"},
                                             {"datamemory.used", "x"}, {"datamemory.total", "8"}}))
                .find("bad datamemory usage"),
            std::string::npos);
  ASSERT_EQ(result(call(1, "report status",
                        {{"nodeid", "1"},
                         {"state", "started"},
                         {"datamemory.used", "12"},
                         {"datamemory.total", "2560"},
                         {"transactionmemory.used", "1"},
                         {"transactionmemory.total", "640"}})),
            "Ok");
  Message status = call(2, "get status");
  EXPECT_EQ(*status.find("node.1.datamemory.used"), "12");
  EXPECT_EQ(*status.find("node.1.datamemory.total"), "2560");
  EXPECT_EQ(*status.find("node.1.transactionmemory.used"), "1");
  EXPECT_EQ(*status.find("node.1.transactionmemory.total"), "640");
  EXPECT_EQ(status.find("node.1.schemamemory.used"), nullptr);
  ASSERT_NE(service_->data_node(1), nullptr);
  EXPECT_EQ(service_->data_node(1)->memory.at("datamemory").used, 12u);
  // A report without memory keeps the last known usage.
  ASSERT_EQ(result(call(1, "report status", {{"nodeid", "1"}, {"state", "started"}})), "Ok");
  EXPECT_EQ(*call(2, "get status").find("node.1.datamemory.total"), "2560");
}

TEST(DataNodeStateNames, RoundTrip) {
  for (DataNodeState state : {DataNodeState::kNotStarted, DataNodeState::kStarting,
                              DataNodeState::kStarted, DataNodeState::kStopping}) {
    EXPECT_EQ(parse_data_node_state(data_node_state_name(state)), state);
  }
  EXPECT_EQ(parse_data_node_state("not started"), DataNodeState::kNotStarted);
  EXPECT_EQ(parse_data_node_state("Started"), DataNodeState::kStarted);
  EXPECT_EQ(parse_data_node_state(""), std::nullopt);
  EXPECT_EQ(parse_data_node_state("STARTED2"), std::nullopt);
}

// A frozen or silently cut-off data node keeps its session open: once its reports stop
// for kDataNodeSilenceMs it shows NOT_RESPONDING (not "started" until the session's idle
// timeout), and STARTED again when it reports again.
TEST_F(MgmServiceTest, SilentDataNodeIsShownNotResponding) {
  ASSERT_EQ(result(call(1, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "2"}})), "Ok");
  service_->tick(1000);
  ASSERT_EQ(result(call(1, "report status", {{"nodeid", "2"}, {"state", "started"}})), "Ok");
  service_->tick(1000 + MgmService::kDataNodeSilenceMs - 1);
  EXPECT_EQ(*call(3, "get status").find("node.2.status"), "STARTED");
  EXPECT_EQ(call(3, "get status").find("node.2.silent_ms"), nullptr);
  service_->tick(1000 + MgmService::kDataNodeSilenceMs + 500);
  Message silent = call(3, "get status");
  EXPECT_EQ(*silent.find("node.2.status"), "NOT_RESPONDING");
  EXPECT_EQ(*silent.find("node.2.silent_ms"),
            std::to_string(MgmService::kDataNodeSilenceMs + 500));
  ASSERT_EQ(result(call(1, "report status", {{"nodeid", "2"}, {"state", "started"}})), "Ok");
  EXPECT_EQ(*call(3, "get status").find("node.2.status"), "STARTED");
}

TEST_F(MgmServiceTest, StopIsForwardedAndAnsweredWhenTheNodeIsGone) {
  ASSERT_EQ(result(call(1, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "2"}})), "Ok");
  ASSERT_EQ(result(call(1, "report status", {{"nodeid", "2"}, {"state", "started"}})), "Ok");
  service_->tick(1000);
  RequestParser::Parsed stop;
  stop.request.head = "stop";
  stop.request.args = {{"node", "2"}};
  MgmService::Outcome outcome = service_->handle(2, stop);
  EXPECT_TRUE(outcome.deferred);
  std::vector<MgmService::Delivery> deliveries = service_->take_deliveries();
  ASSERT_EQ(deliveries.size(), 1u);
  EXPECT_EQ(deliveries[0].session_id, 1u);  // the data node's session
  EXPECT_EQ(deliveries[0].message.head, "node stop");
  EXPECT_EQ(*deliveries[0].message.find("nodeid"), "2");
  EXPECT_FALSE(deliveries[0].completes_deferred);
  EXPECT_EQ(*call(3, "get status").find("node.2.status"), "STOPPING");
  // A second stop or a restart while it stops are refused.
  EXPECT_EQ(result(call(3, "stop", {{"node", "2"}})), "node 2 is already stopping");
  EXPECT_EQ(result(call(3, "restart", {{"node", "2"}})), "node 2 is already stopping");
  // Not answered until the node's session ends.
  service_->tick(5000);
  EXPECT_TRUE(service_->take_deliveries().empty());
  service_->on_session_closed(1, "bye");
  deliveries = service_->take_deliveries();
  ASSERT_EQ(deliveries.size(), 1u);
  EXPECT_EQ(deliveries[0].session_id, 2u);
  EXPECT_TRUE(deliveries[0].completes_deferred);
  EXPECT_EQ(deliveries[0].message.head, "stop reply");
  EXPECT_EQ(result(deliveries[0].message), "Ok");
  EXPECT_EQ(*deliveries[0].message.find("stopped"), "1");
  EXPECT_FALSE(service_->shutdown_requested());
}

// `N RESTART [-i]` of a running data node: the node is told to stop and start again by
// itself (initial: with its file system cleared); answered once its session ended.
TEST_F(MgmServiceTest, RestartOrdersAStopThatComesBack) {
  ASSERT_EQ(result(call(1, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "2"}})), "Ok");
  ASSERT_EQ(result(call(1, "report status", {{"nodeid", "2"}, {"state", "started"}})), "Ok");
  service_->tick(1000);
  RequestParser::Parsed restart;
  restart.request.head = "restart";
  restart.request.args = {{"node", "2"}, {"initialstart", "1"}};
  MgmService::Outcome outcome = service_->handle(2, restart);
  EXPECT_TRUE(outcome.deferred);
  std::vector<MgmService::Delivery> deliveries = service_->take_deliveries();
  ASSERT_EQ(deliveries.size(), 1u);
  EXPECT_EQ(deliveries[0].message.head, "node stop");
  EXPECT_EQ(*deliveries[0].message.find("restart"), "1");
  EXPECT_EQ(*deliveries[0].message.find("initialstart"), "1");
  service_->on_session_closed(1, "bye");
  deliveries = service_->take_deliveries();
  ASSERT_EQ(deliveries.size(), 1u);
  EXPECT_EQ(deliveries[0].message.head, "restart reply");
  EXPECT_EQ(result(deliveries[0].message), "Ok");
}

TEST_F(MgmServiceTest, StopTimesOutWithAnError) {
  ASSERT_EQ(result(call(1, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "1"}})), "Ok");
  ASSERT_EQ(result(call(1, "report status", {{"nodeid", "1"}, {"state", "starting"}})), "Ok");
  service_->tick(0);
  RequestParser::Parsed stop;
  stop.request.head = "stop";
  stop.request.args = {{"node", "1"}};
  ASSERT_TRUE(service_->handle(2, stop).deferred);
  service_->take_deliveries();
  service_->tick(kStopWaitMs - 1);
  EXPECT_TRUE(service_->take_deliveries().empty());
  service_->tick(kStopWaitMs);
  std::vector<MgmService::Delivery> deliveries = service_->take_deliveries();
  ASSERT_EQ(deliveries.size(), 1u);
  EXPECT_EQ(result(deliveries[0].message),
            "node 1 did not stop within " + std::to_string(kStopWaitMs) + " ms");
}

TEST_F(MgmServiceTest, ShutdownStopsDataNodesFirst) {
  ASSERT_EQ(result(call(1, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "1"}})), "Ok");
  ASSERT_EQ(result(call(1, "report status", {{"nodeid", "1"}, {"state", "started"}})), "Ok");
  ASSERT_EQ(result(call(2, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "2"}})), "Ok");
  ASSERT_EQ(result(call(2, "report status", {{"nodeid", "2"}, {"state", "started"}})), "Ok");
  RequestParser::Parsed shutdown;
  shutdown.request.head = "shutdown";
  ASSERT_TRUE(service_->handle(3, shutdown).deferred);
  std::vector<MgmService::Delivery> orders = service_->take_deliveries();
  ASSERT_EQ(orders.size(), 2u);
  EXPECT_EQ(orders[0].message.head, "node stop");
  EXPECT_EQ(orders[1].message.head, "node stop");
  service_->on_session_closed(1, "bye");
  EXPECT_FALSE(service_->shutdown_requested());
  EXPECT_TRUE(service_->take_deliveries().empty());
  service_->on_session_closed(2, "bye");
  EXPECT_TRUE(service_->shutdown_requested());
  std::vector<MgmService::Delivery> replies = service_->take_deliveries();
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].session_id, 3u);
  EXPECT_EQ(result(replies[0].message), "Ok");
  EXPECT_EQ(*replies[0].message.find("data nodes stopped"), "2");
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

namespace duo::mgm {
namespace {

// `arbitrate`: the first request of a split wins, the competing side is refused, and a
// restarted node (it reports STARTING on a new session) is no longer marked failed.
TEST_F(MgmServiceTest, ArbitrateGrantsFirstRefusesTheCompetingSide) {
  ASSERT_EQ(result(call(1, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "1"}})), "Ok");
  ASSERT_EQ(result(call(2, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "2"}})), "Ok");
  // Only for a data node id the session holds.
  EXPECT_NE(result(call(1, "arbitrate", {{"nodeid", "2"}, {"survivors", "2"}, {"failed", "1"}}))
                .find("not a data node id allocated to this session"),
            std::string::npos);
  EXPECT_NE(result(call(1, "arbitrate", {{"nodeid", "1"}, {"survivors", "1,x"}, {"failed", ""}}))
                .find("bad node list"),
            std::string::npos);
  Message granted =
      call(2, "arbitrate", {{"nodeid", "2"}, {"round", "7"}, {"survivors", "2"}, {"failed", "1"}});
  ASSERT_EQ(result(granted), "Ok");
  EXPECT_EQ(*granted.find("decision"), "granted");
  EXPECT_EQ(*granted.find("round"), "7");
  Message refused =
      call(1, "arbitrate", {{"nodeid", "1"}, {"round", "3"}, {"survivors", "1"}, {"failed", "2"}});
  ASSERT_EQ(result(refused), "Ok");
  EXPECT_EQ(*refused.find("decision"), "refused");
  EXPECT_NE(refused.find("reason")->find("node 1"), std::string::npos);
  EXPECT_TRUE(
      capture_.sink().contains("Node 2: Arbitration granted: data nodes {2} continue without {1}"));
  // Node 1 restarts: a new session, STARTING.
  service_->on_session_closed(1, "killed");
  service_->on_session_open(4, "127.0.0.1:1004", "127.0.0.1");
  ASSERT_EQ(result(call(4, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "1"}})), "Ok");
  ASSERT_EQ(result(call(4, "report status", {{"nodeid", "1"}, {"state", "starting"}})), "Ok");
  Message later = call(4, "arbitrate", {{"nodeid", "1"}, {"survivors", "1"}, {"failed", "2"}});
  EXPECT_EQ(*later.find("decision"), "granted");
}

TEST_F(MgmServiceTest, ReportEventGoesToTheClusterLog) {
  ASSERT_EQ(result(call(1, "get nodeid", {{"nodetype", "ndbd"}, {"nodeid", "1"}})), "Ok");
  EXPECT_EQ(
      result(call(1, "report event",
                  {{"nodeid", "1"}, {"severity", "warning"}, {"text", "Node 2 declared dead"}})),
      "Ok");
  EXPECT_TRUE(capture_.sink().contains("Node 1: Node 2 declared dead"));
  EXPECT_NE(result(call(2, "report event", {{"nodeid", "1"}, {"text", "x"}}))
                .find("not a node id allocated to this session"),
            std::string::npos);
  EXPECT_NE(result(call(1, "report event", {{"nodeid", "1"}, {"severity", "loud"}, {"text", "x"}}))
                .find("bad severity"),
            std::string::npos);
  EXPECT_NE(result(call(1, "report event", {{"nodeid", "1"}, {"text", std::string(1001, 'x')}}))
                .find("longer than"),
            std::string::npos);
}

}  // namespace
}  // namespace duo::mgm
