// The dictionary's disk-data objects in the simulator: a logfile group and a tablespace
// created on every node with their files at their sizes (FS_ALLOCREQ on each SimDisk),
// NDB's refusals with their codes, a file that cannot be made on one node leaving no
// file anywhere, drops removing the files, and everything back after a system restart.
#include <gtest/gtest.h>

#include "ndb-kernel/dictionary/dictionary_block.h"
#include "ndb-kernel/testing/sim_cluster.h"

namespace duo::testing {
namespace {

using kernel::Signal;
using protocol::DictMsg;
using protocol::FilegroupChange;
using protocol::FilegroupKind;
using protocol::FilegroupOp;

constexpr uint64_t kMiB = 1024 * 1024;

FilegroupChange create_logfile_group(const std::string& name, const std::string& file,
                                     uint64_t size) {
  FilegroupChange change;
  change.op = FilegroupOp::kCreate;
  change.kind = FilegroupKind::kLogfileGroup;
  change.name = name;
  change.filegroup.undo_buffer_bytes = kMiB;
  change.filegroup.files.push_back({0, protocol::DiskFileKind::kUndoFile, file, size});
  return change;
}

FilegroupChange create_tablespace(const std::string& name, const std::string& group,
                                  const std::string& file, uint64_t size) {
  FilegroupChange change;
  change.op = FilegroupOp::kCreate;
  change.kind = FilegroupKind::kTablespace;
  change.name = name;
  change.logfile_group = group;
  change.filegroup.extent_bytes = kMiB;
  change.filegroup.files.push_back({0, protocol::DiskFileKind::kDataFile, file, size});
  return change;
}

FilegroupChange file_change(FilegroupOp op, FilegroupKind kind, const std::string& name,
                            const std::string& file, uint64_t size = 0) {
  FilegroupChange change;
  change.op = op;
  change.kind = kind;
  change.name = name;
  change.file = {0,
                 kind == FilegroupKind::kTablespace ? protocol::DiskFileKind::kDataFile
                                                    : protocol::DiskFileKind::kUndoFile,
                 file, size};
  return change;
}

class FilegroupTest : public ::testing::Test {
 protected:
  FilegroupTest() : cluster_(SimClusterOptions{.node_groups = 1, .replicas = 2, .clients = 1}) {}

  // Runs `change` at the master; the answer (FILEGROUP_CONF or FILEGROUP_REF).
  DictMsg run(const FilegroupChange& change, bool* ok) {
    ScriptClient& c = cluster_.client(0);
    Result<Signal> signal = change.to_signal(protocol::kFilegroupReq, ++request_id_);
    EXPECT_TRUE(signal.ok());
    EXPECT_TRUE(c.send(SimCluster::dictionary(1), std::move(signal).value()).ok());
    EXPECT_TRUE(cluster_.run_until(
        [&] { return c.has(protocol::kFilegroupConf) || c.has(protocol::kFilegroupRef); }));
    *ok = c.has(protocol::kFilegroupConf);
    return DictMsg::from_signal(c.take(*ok ? protocol::kFilegroupConf : protocol::kFilegroupRef));
  }
  void expect_ok(const FilegroupChange& change) {
    bool ok = false;
    const DictMsg answer = run(change, &ok);
    EXPECT_TRUE(ok) << change.name << ": " << answer.text;
  }
  // The NDB error code of the refusal (0 if the change went through).
  uint32_t refusal(const FilegroupChange& change) {
    bool ok = false;
    const DictMsg answer = run(change, &ok);
    return ok ? 0 : answer.b;
  }
  void expect_file(const std::string& name, uint64_t size) {
    for (uint16_t node : cluster_.data_nodes()) {
      ASSERT_TRUE(cluster_.disk(node).file_exists(name)) << name << " on node " << node;
      EXPECT_EQ(cluster_.disk(node).content(name).size(), size) << name << " on node " << node;
      EXPECT_EQ(cluster_.disk(node).durable_content(name).size(), size) << "synced";
    }
  }
  void expect_no_file(const std::string& name) {
    for (uint16_t node : cluster_.data_nodes()) {
      EXPECT_FALSE(cluster_.disk(node).file_exists(name)) << name << " on node " << node;
    }
  }
  size_t filegroups(uint16_t node) {
    return cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock)
        ->filegroups()
        .size();
  }

  SimCluster cluster_;
  uint32_t request_id_ = 0;
};

TEST_F(FilegroupTest, CreateAddDropWithFilesOnEveryNode) {
  expect_ok(create_logfile_group("lg1", "u1.log", 2 * kMiB));
  expect_ok(create_tablespace("ts1", "lg1", "d1.dat", kMiB));
  expect_ok(
      file_change(FilegroupOp::kAddFile, FilegroupKind::kTablespace, "ts1", "d2.dat", 3 * kMiB));
  expect_ok(
      file_change(FilegroupOp::kAddFile, FilegroupKind::kLogfileGroup, "lg1", "u2.log", kMiB));
  expect_file("u1.log", 2 * kMiB);
  expect_file("u2.log", kMiB);
  expect_file("d1.dat", kMiB);
  expect_file("d2.dat", 3 * kMiB);
  for (uint16_t node : cluster_.data_nodes()) EXPECT_EQ(filegroups(node), 2u);

  // NDB's refusals.
  EXPECT_EQ(refusal(create_logfile_group("lg2", "u9.log", kMiB)), protocol::kNdbOneLogfileGroup);
  EXPECT_EQ(refusal(create_tablespace("lg1", "lg1", "d9.dat", kMiB)),
            protocol::kNdbSchemaObjectExists);
  EXPECT_EQ(refusal(create_tablespace("ts9", "nolg", "d9.dat", kMiB)),
            protocol::kNdbLogfileGroupNotFound);
  EXPECT_EQ(refusal(file_change(FilegroupOp::kAddFile, FilegroupKind::kTablespace, "ts1", "u1.log",
                                kMiB)),
            protocol::kNdbFileExists);
  EXPECT_EQ(refusal(file_change(FilegroupOp::kAddFile, FilegroupKind::kTablespace, "ts1",
                                "tiny.dat", 1024)),
            protocol::kNdbFileTooSmall);
  EXPECT_EQ(
      refusal(file_change(FilegroupOp::kDropFile, FilegroupKind::kTablespace, "ts1", "no.dat")),
      protocol::kNdbNoSuchFile);
  EXPECT_EQ(refusal(file_change(FilegroupOp::kDrop, FilegroupKind::kLogfileGroup, "lg1", "")),
            protocol::kNdbFilegroupInUse)
      << "a tablespace uses it";
  EXPECT_EQ(refusal(file_change(FilegroupOp::kDrop, FilegroupKind::kTablespace, "ts1", "")),
            protocol::kNdbFilegroupInUse)
      << "it still has data files";
  EXPECT_EQ(refusal(file_change(FilegroupOp::kDrop, FilegroupKind::kTablespace, "nots", "")),
            protocol::kNdbNoSuchObject);
  expect_no_file("d9.dat");
  expect_no_file("u9.log");
  expect_no_file("tiny.dat");

  // A table in the tablespace: its data files cannot go, nor can it.
  storage::TableSchema schema;
  schema.name = "d/def/t";
  schema.columns = {{"id", storage::ColumnType::kBigInt, false, false},
                    {"v", storage::ColumnType::kVarchar, false, true, 100}};
  schema.columns[1].storage_disk = true;
  schema.primary_key = {0};
  Signal create = create_table_signal(1, schema);
  {
    Result<protocol::TableMsg> msg = protocol::TableMsg::from_signal(create);
    ASSERT_TRUE(msg.ok());
    msg->table.tablespace_id = 2;  // ts1 (the logfile group is filegroup 1)
    Result<Signal> with_ts = msg->to_signal(protocol::kCreateTableReq);
    ASSERT_TRUE(with_ts.ok());
    create = std::move(with_ts).value();
  }
  Result<protocol::TableDef> table = cluster_.create_table(std::move(create));
  ASSERT_TRUE(table.ok()) << table.status().message();
  EXPECT_EQ(table->tablespace_id, 2u);
  EXPECT_EQ(
      refusal(file_change(FilegroupOp::kDropFile, FilegroupKind::kTablespace, "ts1", "d2.dat")),
      protocol::kNdbFileInUse);

  // System restart: every filegroup, file and the table's tablespace are back.
  ASSERT_TRUE(cluster_.wait_started(30'000));
  cluster_.crash_and_restart_all();
  ASSERT_TRUE(cluster_.wait_started(30'000));
  for (uint16_t node : cluster_.data_nodes()) {
    EXPECT_EQ(filegroups(node), 2u) << "node " << node;
    auto* dict = cluster_.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock);
    ASSERT_EQ(dict->tables().count(table->schema.table_id), 1u);
    EXPECT_EQ(dict->tables().at(table->schema.table_id).tablespace_id, 2u);
  }
  expect_file("d2.dat", 3 * kMiB);
  EXPECT_EQ(refusal(create_logfile_group("lg2", "u9.log", kMiB)), protocol::kNdbOneLogfileGroup);
}

TEST_F(FilegroupTest, AFileOneNodeCannotMakeLeavesNoFileAnywhere) {
  expect_ok(create_logfile_group("lg1", "u1.log", kMiB));
  // Node 2's disk is full: the tablespace is refused and node 1 removes its file.
  cluster_.disk(2).set_capacity_bytes(cluster_.disk(2).used_bytes() + kMiB);
  EXPECT_EQ(refusal(create_tablespace("ts1", "lg1", "big.dat", 4 * kMiB)),
            protocol::kNdbFileSystemError);
  expect_no_file("big.dat");
  for (uint16_t node : cluster_.data_nodes()) EXPECT_EQ(filegroups(node), 1u);
  // With room again the same statement works.
  cluster_.disk(2).set_capacity_bytes(sim::SimDisk::kUnlimited);
  expect_ok(create_tablespace("ts1", "lg1", "big.dat", 4 * kMiB));
  expect_file("big.dat", 4 * kMiB);
  // Dropping removes the files everywhere.
  expect_ok(file_change(FilegroupOp::kDropFile, FilegroupKind::kTablespace, "ts1", "big.dat"));
  expect_no_file("big.dat");
  expect_ok(file_change(FilegroupOp::kDrop, FilegroupKind::kTablespace, "ts1", ""));
  expect_ok(file_change(FilegroupOp::kDrop, FilegroupKind::kLogfileGroup, "lg1", ""));
  expect_no_file("u1.log");
  for (uint16_t node : cluster_.data_nodes()) EXPECT_EQ(filegroups(node), 0u);
}

// The master dies while a change is prepared on the others: each aborts it (removes its
// file), nothing stays prepared, and the new master runs the next change.

TEST_F(FilegroupTest, APreparedChangeOfADeadMasterIsAbortedWhereItWasPrepared) {
  // Four data nodes: the three survivors are a majority with every node group.
  SimCluster cluster(
      SimClusterOptions{.node_groups = 2, .replicas = 2, .clients = 1, .membership = true});
  ASSERT_TRUE(cluster.wait_started(30'000));
  ScriptClient& c = cluster.client(0);
  Result<Signal> create =
      create_logfile_group("lg1", "u1.log", kMiB).to_signal(protocol::kFilegroupReq, 1);
  ASSERT_TRUE(create.ok());
  ASSERT_TRUE(c.send(SimCluster::dictionary(1), std::move(create).value()).ok());
  auto* dict2 = cluster.block<dictionary::DictionaryBlock>(2, protocol::kDictionaryBlock);
  ASSERT_TRUE(cluster.run_until([&] { return dict2->filegroup_prepared_count() == 1; }));
  ASSERT_TRUE(cluster.sim().crash_node(1).ok());
  ASSERT_TRUE(cluster.run_until(
      [&] {
        for (uint16_t node : {2, 3, 4}) {
          auto* dict = cluster.block<dictionary::DictionaryBlock>(node, protocol::kDictionaryBlock);
          if (dict->filegroup_prepared_count() != 0 || !dict->filegroups().empty()) return false;
        }
        return dict2->is_master();
      },
      60'000));
  for (uint16_t node : {2, 3, 4}) {
    EXPECT_FALSE(cluster.disk(node).file_exists("u1.log")) << "node " << node;
  }
  // The new master takes the next change.
  Result<Signal> again =
      create_logfile_group("lg1", "u2.log", kMiB).to_signal(protocol::kFilegroupReq, 2);
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(c.send(SimCluster::dictionary(2), std::move(again).value()).ok());
  ASSERT_TRUE(cluster.run_until(
      [&] { return c.has(protocol::kFilegroupConf) || c.has(protocol::kFilegroupRef); }));
  EXPECT_TRUE(c.has(protocol::kFilegroupConf));
  for (uint16_t node : {2, 3, 4}) {
    EXPECT_TRUE(cluster.disk(node).file_exists("u2.log")) << "node " << node;
  }
}

}  // namespace
}  // namespace duo::testing
