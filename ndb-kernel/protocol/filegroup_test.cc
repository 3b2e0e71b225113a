// Disk-data object codecs: round trips, and every truncation or bad enum refused.
#include "ndb-kernel/protocol/filegroup.h"

#include <gtest/gtest.h>

#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::protocol {
namespace {

FilegroupDef tablespace() {
  FilegroupDef fg;
  fg.id = 7;
  fg.version = 3;
  fg.kind = FilegroupKind::kTablespace;
  fg.name = "ts1";
  fg.logfile_group_id = 1;
  fg.extent_bytes = 1 << 20;
  fg.autoextend_bytes = 4 << 20;
  fg.files = {{4, DiskFileKind::kDataFile, "d1.dat", 1 << 20},
              {9, DiskFileKind::kDataFile, "dir/d2.dat", uint64_t{5} << 32}};
  return fg;
}

void expect_same(const FilegroupDef& a, const FilegroupDef& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.undo_buffer_bytes, b.undo_buffer_bytes);
  EXPECT_EQ(a.logfile_group_id, b.logfile_group_id);
  EXPECT_EQ(a.extent_bytes, b.extent_bytes);
  EXPECT_EQ(a.autoextend_bytes, b.autoextend_bytes);
  ASSERT_EQ(a.files.size(), b.files.size());
  for (size_t i = 0; i < a.files.size(); ++i) {
    EXPECT_EQ(a.files[i].file_id, b.files[i].file_id);
    EXPECT_EQ(a.files[i].kind, b.files[i].kind);
    EXPECT_EQ(a.files[i].name, b.files[i].name);
    EXPECT_EQ(a.files[i].size_bytes, b.files[i].size_bytes);
  }
}

TEST(Filegroup, ListRoundTripsAndTruncationsAreRefused) {
  FilegroupDef group;
  group.id = 1;
  group.version = 1;
  group.kind = FilegroupKind::kLogfileGroup;
  group.name = "lg1";
  group.undo_buffer_bytes = 8 << 20;
  group.files = {{1, DiskFileKind::kUndoFile, "u.log", 128 << 20}};
  Result<Bytes> bytes = encode_filegroup_list({group, tablespace()});
  ASSERT_TRUE(bytes.ok());
  Result<std::vector<FilegroupDef>> back = decode_filegroup_list(as_view(*bytes));
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), 2u);
  expect_same((*back)[0], group);
  expect_same((*back)[1], tablespace());
  for (size_t length = 0; length < bytes->size(); ++length) {
    EXPECT_FALSE(decode_filegroup_list(as_view(*bytes).substr(0, length)).ok()) << length;
  }
  Bytes longer = *bytes;
  longer.push_back(0);
  EXPECT_FALSE(decode_filegroup_list(as_view(longer)).ok()) << "trailing byte";
  Bytes bad_kind = *bytes;
  bad_kind[4 + 8] = 3;  // the first filegroup's kind
  EXPECT_FALSE(decode_filegroup_list(as_view(bad_kind)).ok());
}

TEST(Filegroup, ChangeRoundTripsThroughASignal) {
  FilegroupChange change;
  change.op = FilegroupOp::kAddFile;
  change.kind = FilegroupKind::kTablespace;
  change.name = "ts1";
  change.logfile_group = "lg1";
  change.filegroup = tablespace();
  change.file = {12, DiskFileKind::kDataFile, "d3.dat", 3 << 20};
  Result<kernel::Signal> signal = change.to_signal(kFilegroupReq, 42);
  ASSERT_TRUE(signal.ok());
  EXPECT_EQ(signal->word(0), 42u);
  Result<FilegroupChange> back = FilegroupChange::from_signal(*signal);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->op, FilegroupOp::kAddFile);
  EXPECT_EQ(back->name, "ts1");
  EXPECT_EQ(back->logfile_group, "lg1");
  expect_same(back->filegroup, tablespace());
  EXPECT_EQ(back->file.file_id, 12u);
  EXPECT_EQ(back->file.name, "d3.dat");
  EXPECT_EQ(back->file.size_bytes, 3u << 20);
  kernel::Signal bad_op = signal->clone();
  bad_op.set_word(1, 9);
  EXPECT_FALSE(FilegroupChange::from_signal(bad_op).ok());
  kernel::Signal cut = signal->clone();
  cut.mutable_section().pop_back();
  EXPECT_FALSE(FilegroupChange::from_signal(cut).ok());
}

TEST(Filegroup, EveryNdbCodeHasItsText) {
  for (uint32_t code : {kNdbSchemaObjectExists, kNdbNoSuchObject, kNdbFileExists, kNdbNoSuchFile,
                        kNdbFilegroupInUse, kNdbFileInUse, kNdbLogfileGroupNotFound,
                        kNdbFileSystemError, kNdbOneLogfileGroup, kNdbFileTooSmall}) {
    EXPECT_STRNE(ndb_filegroup_error_text(code), "") << code;
  }
  EXPECT_STREQ(ndb_filegroup_error_text(1514), "Currently there is a limit of one logfile group");
}

}  // namespace
}  // namespace duo::protocol
