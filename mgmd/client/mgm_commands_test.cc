#include "mgmd/client/mgm_commands.h"

#include <gtest/gtest.h>

namespace duo::mgm {
namespace {

using Kind = Command::Kind;

TEST(ParseCommand, NdbMgmCommandsCaseInsensitive) {
  EXPECT_EQ(parse_command("show")->kind, Kind::kShow);
  EXPECT_EQ(parse_command("  SHOW ")->kind, Kind::kShow);
  EXPECT_EQ(parse_command("All Status")->kind, Kind::kAllStatus);
  EXPECT_EQ(parse_command("quit")->kind, Kind::kQuit);
  EXPECT_EQ(parse_command("EXIT")->kind, Kind::kQuit);
  EXPECT_EQ(parse_command("help")->kind, Kind::kHelp);
  EXPECT_EQ(parse_command("shutdown")->kind, Kind::kShutdown);

  Result<Command> status = parse_command("3 status");
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->kind, Kind::kNodeStatus);
  EXPECT_EQ(status->node_id, 3u);

  Result<Command> stop = parse_command("2 STOP");
  EXPECT_EQ(stop->kind, Kind::kNodeStop);
  EXPECT_EQ(stop->node_id, 2u);

  Result<Command> restart = parse_command("1 restart -I");
  EXPECT_EQ(restart->kind, Kind::kNodeRestart);
  EXPECT_TRUE(restart->initial);
  EXPECT_FALSE(parse_command("1 restart")->initial);

  Result<Command> report = parse_command("all report MemoryUsage");
  EXPECT_EQ(report->kind, Kind::kReportMemoryUsage);
  EXPECT_EQ(report->node_id, 0u);
}

TEST(ParseCommand, ClusterLog) {
  Result<Command> info = parse_command("clusterlog info");
  EXPECT_EQ(info->clusterlog_verb, "INFO");
  Result<Command> on = parse_command("CLUSTERLOG ON");
  EXPECT_EQ(on->clusterlog_verb, "ON");
  EXPECT_TRUE(on->severities.empty());
  Result<Command> off = parse_command("clusterlog off debug Info");
  EXPECT_EQ(off->severities, (std::vector<std::string>{"DEBUG", "INFO"}));
  EXPECT_FALSE(parse_command("clusterlog toggle").ok());
  EXPECT_FALSE(parse_command("clusterlog on loud").ok());
  EXPECT_FALSE(parse_command("clusterlog").ok());
  EXPECT_FALSE(parse_command("clusterlog info extra").ok());
}

TEST(ParseCommand, ErrorsSayWhatWasExpected) {
  EXPECT_FALSE(parse_command("").ok());
  EXPECT_NE(parse_command("fly").status().message().find("unknown command 'fly'"),
            std::string::npos);
  EXPECT_FALSE(parse_command("0 status").ok());
  EXPECT_FALSE(parse_command("256 status").ok());
  EXPECT_FALSE(parse_command("3").ok());
  EXPECT_FALSE(parse_command("3 dance").ok());
  EXPECT_FALSE(parse_command("all stop").ok());
  EXPECT_FALSE(parse_command("1 restart -x").ok());
  EXPECT_FALSE(parse_command("show me").ok());
  EXPECT_FALSE(parse_command("all report tables").ok());
}

Message status_reply() {
  Message reply;
  reply.head = "get status reply";
  reply.add("result", "Ok").add("nodes", "5");
  auto node = [&](int id, const char* type, const char* status, const char* host,
                  const char* address = nullptr, const char* version = nullptr) {
    const std::string p = "node." + std::to_string(id) + ".";
    reply.add(p + "type", type).add(p + "status", status).add(p + "host", host);
    if (address != nullptr) reply.add(p + "address", address);
    if (version != nullptr) reply.add(p + "version", version);
  };
  node(1, "NDB", "NO_CONTACT", "127.0.0.1");
  node(2, "NDB", "ALLOCATED", "127.0.0.1", "127.0.0.1", "0");
  node(49, "MGM", "CONNECTED", "127.0.0.1", "127.0.0.1", "256");
  node(50, "API", "CONNECTED", "", "10.0.0.7", "256");
  node(51, "API", "NO_CONTACT", "");
  return reply;
}

TEST(FormatShow, LooksLikeNdbMgm) {
  Result<std::vector<NodeStatus>> nodes = parse_status_reply(status_reply());
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 5u);
  EXPECT_EQ(format_show(*nodes),
            "Cluster Configuration\n"
            "---------------------\n"
            "[ndbd(NDB)]\t2 node(s)\n"
            "id=1 (not connected, accepting connect from 127.0.0.1)\n"
            "id=2 (not connected, node id allocated to 127.0.0.1)\n"
            "\n"
            "[ndb_mgmd(MGM)]\t1 node(s)\n"
            "id=49\t@127.0.0.1  (DuoDB-0.1.0)\n"
            "\n"
            "[mysqld(API)]\t2 node(s)\n"
            "id=50\t@10.0.0.7  (DuoDB-0.1.0)\n"
            "id=51 (not connected, accepting connect from any host)\n");
  EXPECT_EQ(format_node_status((*nodes)[0]), "Node 1: not connected");
  EXPECT_EQ(format_node_status((*nodes)[2]), "Node 49: connected (DuoDB-0.1.0)");
}

TEST(FormatShow, RunningDataNodes) {
  Message reply;
  reply.head = "get status reply";
  reply.add("result", "Ok");
  auto node = [&](int id, const char* status, const char* phase, uint64_t group) {
    const std::string p = "node." + std::to_string(id) + ".";
    reply.add(p + "type", "NDB").add(p + "status", status).add(p + "host", "127.0.0.1");
    reply.add(p + "address", "127.0.0.1").add(p + "version", "256");
    reply.add(p + "startphase", phase).add(p + "port", "41000").add(p + "nodegroup", group);
  };
  node(1, "STARTING", "2", 0);
  node(2, "STARTED", "3", 0);
  node(3, "STOPPING", "3", 1);
  node(4, "NOT_STARTED", "0", 1);
  Result<std::vector<NodeStatus>> nodes = parse_status_reply(reply);
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 4u);
  EXPECT_EQ((*nodes)[0].start_phase, 2u);
  EXPECT_EQ((*nodes)[0].port, 41000);
  EXPECT_TRUE(is_running_data_node((*nodes)[0]));
  EXPECT_EQ(format_show(*nodes),
            "Cluster Configuration\n"
            "---------------------\n"
            "[ndbd(NDB)]\t4 node(s)\n"
            "id=1\t@127.0.0.1  (DuoDB-0.1.0, starting, Nodegroup: 0)\n"
            "id=2\t@127.0.0.1  (DuoDB-0.1.0, Nodegroup: 0)\n"
            "id=3\t@127.0.0.1  (DuoDB-0.1.0, stopping, Nodegroup: 1)\n"
            "id=4\t@127.0.0.1  (DuoDB-0.1.0, not started, Nodegroup: 1)\n"
            "\n"
            "[ndb_mgmd(MGM)]\t0 node(s)\n"
            "\n"
            "[mysqld(API)]\t0 node(s)\n");
  EXPECT_EQ(format_node_status((*nodes)[0]),
            "Node 1: starting (Last completed phase 2) (DuoDB-0.1.0)");
  EXPECT_EQ(format_node_status((*nodes)[1]), "Node 2: started (DuoDB-0.1.0)");
  EXPECT_EQ(format_node_status((*nodes)[2]), "Node 3: stopping (DuoDB-0.1.0)");
  EXPECT_EQ(format_node_status((*nodes)[3]), "Node 4: not started (DuoDB-0.1.0)");
}

// A data node whose session is open but whose reports stopped (frozen, cut off):
// mgmd reports NOT_RESPONDING with the time since its last report.
TEST(FormatShow, NotRespondingDataNode) {
  Message reply;
  reply.head = "get status reply";
  reply.add("result", "Ok");
  reply.add("node.2.type", "NDB").add("node.2.status", "NOT_RESPONDING");
  reply.add("node.2.host", "127.0.0.1").add("node.2.address", "127.0.0.1");
  reply.add("node.2.version", "256").add("node.2.nodegroup", "0").add("node.2.silent_ms", "4200");
  Result<std::vector<NodeStatus>> nodes = parse_status_reply(reply);
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].silent_ms, 4200u);
  EXPECT_FALSE(is_running_data_node((*nodes)[0]));
  EXPECT_EQ(format_show(*nodes),
            "Cluster Configuration\n"
            "---------------------\n"
            "[ndbd(NDB)]\t1 node(s)\n"
            "id=2\t@127.0.0.1  (DuoDB-0.1.0, not responding for 4 s, Nodegroup: 0)\n"
            "\n"
            "[ndb_mgmd(MGM)]\t0 node(s)\n"
            "\n"
            "[mysqld(API)]\t0 node(s)\n");
  EXPECT_EQ(format_node_status((*nodes)[0]),
            "Node 2: not responding: no report for 4 s (frozen, cut off or overloaded) "
            "(DuoDB-0.1.0)");
}

TEST(FormatShow, MalformedStatusLinesAreErrors) {
  Message reply;
  reply.add("node.x.type", "NDB");
  EXPECT_FALSE(parse_status_reply(reply).ok());
  Message other;
  other.add("node.3", "NDB");
  EXPECT_FALSE(parse_status_reply(other).ok());
  EXPECT_EQ(format_version(0), "version unknown");
}

TEST(FormatMemoryUsage, NdbMgmLines) {
  Message reply;
  reply.head = "get status reply";
  reply.add("result", "Ok");
  reply.add("node.1.type", "NDB").add("node.1.status", "STARTED");
  reply.add("node.1.datamemory.used", "0").add("node.1.datamemory.total", "2560");
  reply.add("node.1.transactionmemory.used", "13").add("node.1.transactionmemory.total", "640");
  reply.add("node.1.schemamemory.used", "1").add("node.1.schemamemory.total", "128");
  reply.add("node.2.type", "NDB").add("node.2.status", "NO_CONTACT");
  reply.add("node.3.type", "NDB").add("node.3.status", "STARTING");
  Result<std::vector<NodeStatus>> nodes = parse_status_reply(reply);
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].memory.at("datamemory").total, 2560u);
  EXPECT_EQ((*nodes)[0].memory.at("schemamemory").used, 1u);
  EXPECT_EQ(format_memory_usage((*nodes)[0]),
            "Node 1: Data usage is 0%(0 32K pages of total 2560)\n"
            "Node 1: Transaction memory usage is 2%(13 32K pages of total 640)\n");
  EXPECT_EQ(format_memory_usage((*nodes)[1]), "Node 2: not connected\n");
  EXPECT_EQ(format_memory_usage((*nodes)[2]), "Node 3: memory usage not reported yet\n");

  Message bad;
  bad.add("node.1.datamemory.used", "lots");
  EXPECT_FALSE(parse_status_reply(bad).ok());

  Result<Command> one = parse_command("3 REPORT memoryusage");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->kind, Command::Kind::kReportMemoryUsage);
  EXPECT_EQ(one->node_id, 3u);
}

TEST(ConnectString, Forms) {
  Result<ConnectString> plain = parse_connect_string("mgm1");
  EXPECT_EQ(plain->host, "mgm1");
  EXPECT_EQ(plain->port, 1186);
  Result<ConnectString> with_port = parse_connect_string("127.0.0.1:41000");
  EXPECT_EQ(with_port->host, "127.0.0.1");
  EXPECT_EQ(with_port->port, 41000);
  Result<ConnectString> ndb = parse_connect_string("nodeid=4,host1:1187,host2");
  EXPECT_EQ(ndb->host, "host1");
  EXPECT_EQ(ndb->port, 1187);
  Result<ConnectString> v6 = parse_connect_string("[::1]:1190");
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 1190);
  EXPECT_FALSE(parse_connect_string("").ok());
  EXPECT_FALSE(parse_connect_string("nodeid=3").ok());
  EXPECT_FALSE(parse_connect_string("host:").ok());
  EXPECT_FALSE(parse_connect_string("host:0").ok());
  EXPECT_FALSE(parse_connect_string("host:70000").ok());
  EXPECT_FALSE(parse_connect_string("[::1").ok());
}

}  // namespace
}  // namespace duo::mgm
