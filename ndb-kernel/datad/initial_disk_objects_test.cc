// InitialLogFileGroup / InitialTablespace texts as NDB writes them.
#include "ndb-kernel/datad/initial_disk_objects.h"

#include <gtest/gtest.h>

namespace duo::datad {
namespace {

using protocol::FilegroupKind;
using protocol::FilegroupOp;

TEST(InitialDiskObjects, NdbFormatWithDefaultsAndSeveralFiles) {
  Result<std::vector<protocol::FilegroupChange>> changes =
      parse_initial_disk_objects("name=LG1; undo_buffer_size=128M; undo1.log:250M; undo2.log:200M",
                                 "extent_size=8M; data1.dat:2G; data2.dat:4G");
  ASSERT_TRUE(changes.ok()) << changes.status().message();
  ASSERT_EQ(changes->size(), 4u);
  const auto& lg = (*changes)[0];
  EXPECT_EQ(lg.op, FilegroupOp::kCreate);
  EXPECT_EQ(lg.kind, FilegroupKind::kLogfileGroup);
  EXPECT_EQ(lg.name, "LG1");
  EXPECT_EQ(lg.filegroup.undo_buffer_bytes, 128u << 20);
  ASSERT_EQ(lg.filegroup.files.size(), 1u);
  EXPECT_EQ(lg.filegroup.files[0].name, "undo1.log");
  EXPECT_EQ(lg.filegroup.files[0].size_bytes, 250u << 20);
  EXPECT_EQ((*changes)[1].op, FilegroupOp::kAddFile);
  EXPECT_EQ((*changes)[1].file.name, "undo2.log");
  const auto& ts = (*changes)[2];
  EXPECT_EQ(ts.kind, FilegroupKind::kTablespace);
  EXPECT_EQ(ts.name, "DEFAULT-TS");
  EXPECT_EQ(ts.logfile_group, "LG1");
  EXPECT_EQ(ts.filegroup.extent_bytes, 8u << 20);
  EXPECT_EQ(ts.filegroup.files[0].size_bytes, uint64_t{2} << 30);
  EXPECT_EQ((*changes)[3].file.size_bytes, uint64_t{4} << 30);

  Result<std::vector<protocol::FilegroupChange>> defaults =
      parse_initial_disk_objects("u.log:16M", "");
  ASSERT_TRUE(defaults.ok());
  ASSERT_EQ(defaults->size(), 1u);
  EXPECT_EQ((*defaults)[0].name, "DEFAULT-LG");
  EXPECT_EQ((*defaults)[0].filegroup.undo_buffer_bytes, 64u << 20);
  EXPECT_TRUE(parse_initial_disk_objects("", "")->empty());
}

TEST(InitialDiskObjects, MalformedTextsAreConfigErrors) {
  for (const auto& [lg, ts] : std::vector<std::pair<std::string, std::string>>{
           {"name=LG1", ""},                   // no file
           {"u.log", ""},                      // no size
           {"u.log:12X", ""},                  // bad suffix
           {"u.log:16M; colour=red", ""},      // unknown option
           {"extent_size=1M; u.log:16M", ""},  // a tablespace option
           {"", "d.dat:1M"},                   // tablespace without logfile group
       }) {
    Result<std::vector<protocol::FilegroupChange>> parsed = parse_initial_disk_objects(lg, ts);
    ASSERT_FALSE(parsed.ok()) << lg << " / " << ts;
    EXPECT_TRUE(parsed.status().is(ErrorCode::kConfigError));
  }
}

}  // namespace
}  // namespace duo::datad
