// FS_* messages: word layouts round-trip (including u64 halves and the largest
// sections), malformed signals are refused, and the path rules of the contract.
#include "ndb-kernel/fs/fs_messages.h"

#include <gtest/gtest.h>

namespace duo::fs {
namespace {

TEST(FsMessages, OpenRoundTripsAndChecksFlagsAndPath) {
  Signal signal = FsOpenReq{7, kFsRead | kFsWrite | kFsCreate, "redo/part0/file1"}.to_signal();
  EXPECT_EQ(signal.id(), protocol::kFsOpenReq);
  EXPECT_EQ(signal.word(0), 7u);
  EXPECT_EQ(signal.word(1), kFsRead | kFsWrite | kFsCreate);
  Result<FsOpenReq> req = FsOpenReq::from_signal(signal);
  ASSERT_TRUE(req.ok()) << req.status().to_string();
  EXPECT_EQ(req->path, "redo/part0/file1");

  for (uint32_t flags : {0u, kFsCreate, kFsRead | 32u, kFsRead | kFsTruncate}) {
    Signal bad = FsOpenReq{1, flags, "f"}.to_signal();
    EXPECT_TRUE(FsOpenReq::from_signal(bad).status().is(ErrorCode::kInvalidArgument)) << flags;
  }
  Signal wrong_id = FsReadReq{1, 2, 3, 4}.to_signal();
  EXPECT_FALSE(FsOpenReq::from_signal(wrong_id).ok());
}

TEST(FsMessages, AnswersRoundTrip) {
  Signal open = FsOpenConf{1, 2, 0x1'2345'6789ull}.to_signal();
  EXPECT_EQ(open.word(2), 0x23456789u);
  EXPECT_EQ(open.word(3), 1u);
  Result<FsOpenConf> open_conf = FsOpenConf::from_signal(open);
  ASSERT_TRUE(open_conf.ok());
  EXPECT_EQ(open_conf->size_bytes, 0x1'2345'6789ull);

  Signal ref = FsRef::of(9, Status(ErrorCode::kIoError, "write 'x': No space"), 28).to_signal();
  EXPECT_EQ(ref.word(1), static_cast<uint32_t>(ErrorCode::kIoError));
  EXPECT_EQ(ref.word(2), 28u);
  Result<FsRef> fs_ref = FsRef::from_signal(ref);
  ASSERT_TRUE(fs_ref.ok());
  EXPECT_EQ(fs_ref->user_ref, 9u);
  EXPECT_EQ(fs_ref->message, "write 'x': No space");
  EXPECT_TRUE(fs_ref->to_status().is(ErrorCode::kIoError));
  Signal bad_ref(protocol::kFsRef, {1, 0, 0});
  EXPECT_FALSE(FsRef::from_signal(bad_ref).ok());

  Signal read = FsReadConf{3, Bytes(kFsReadBytesMax, 0xAB)}.to_signal();
  EXPECT_EQ(read.word(1), kFsReadBytesMax);
  EXPECT_TRUE(read.check_sendable().ok());
  Result<FsReadConf> read_conf = FsReadConf::from_signal(read);
  ASSERT_TRUE(read_conf.ok());
  EXPECT_EQ(read_conf->data.size(), kFsReadBytesMax);

  Signal write = FsWriteConf{4, 100}.to_signal();
  EXPECT_EQ(FsWriteConf::from_signal(write)->bytes_written, 100u);

  Signal done = fs_done_signal(protocol::kFsSyncConf, 5);
  EXPECT_EQ(fs_user_ref(done), 5u);
}

TEST(FsMessages, PageRequestsCarryTheFrameAddressAndAreChecked) {
  alignas(4096) static uint8_t frame[8192];
  Signal signal =
      FsPageReq{protocol::kFsPageWriteReq, 3, 4, 0x2'0000'8000ull, frame, 8192, kFsSyncAfter}
          .to_signal();
  EXPECT_EQ(signal.id(), protocol::kFsPageWriteReq);
  Result<FsPageReq> req = FsPageReq::from_signal(signal);
  ASSERT_TRUE(req.ok()) << req.status().to_string();
  EXPECT_TRUE(req->is_write());
  EXPECT_EQ(req->frame, frame);
  EXPECT_EQ(req->offset, 0x2'0000'8000ull);
  EXPECT_EQ(req->length, 8192u);
  EXPECT_EQ(req->flags, kFsSyncAfter);
  const auto refused = [](FsPageReq page) {
    Signal bad = std::move(page).to_signal();
    return FsPageReq::from_signal(bad).status().is(ErrorCode::kInvalidArgument);
  };
  using protocol::kFsPageReadReq;
  EXPECT_TRUE(refused({kFsPageReadReq, 1, 1, 0, frame + 512, 4096, 0}));     // memory
  EXPECT_TRUE(refused({kFsPageReadReq, 1, 1, 4095, frame, 4096, 0}));        // offset
  EXPECT_TRUE(refused({kFsPageReadReq, 1, 1, 0, frame, 4000, 0}));           // length
  EXPECT_TRUE(refused({kFsPageReadReq, 1, 1, 0, frame, 0, 0}));              // empty
  EXPECT_TRUE(refused({kFsPageReadReq, 1, 1, 0, nullptr, 4096, 0}));         // no frame
  EXPECT_TRUE(refused({kFsPageReadReq, 1, 1, 0, frame, 4096, kFsSyncAfter}));  // sync read
  EXPECT_TRUE(refused({kFsPageReadReq, 1, 1, 0, frame, kFsPageIoBytesMax + 4096, 0}));

  Signal conf = FsPageConf{9, 32768}.to_signal();
  EXPECT_EQ(FsPageConf::from_signal(conf)->bytes, 32768u);
  Signal open = FsOpenConf{1, 2, 3, FsPageIoPath::kDirectAio}.to_signal();
  EXPECT_EQ(FsOpenConf::from_signal(open)->page_io, FsPageIoPath::kDirectAio);
  open.set_word(4, 7);
  EXPECT_FALSE(FsOpenConf::from_signal(open).ok());
}

TEST(FsMessages, WriteAndReadRequests) {
  Signal write =
      FsWriteReq{1, 2, 0xFFFF'0000'0000ull, kFsSyncAfter, Bytes(kFsWriteBytesMax, 1)}.to_signal();
  EXPECT_TRUE(write.check_sendable().ok());
  Result<FsWriteReq> write_req = FsWriteReq::from_signal(write);
  ASSERT_TRUE(write_req.ok());
  EXPECT_EQ(write_req->offset, 0xFFFF'0000'0000ull);
  EXPECT_EQ(write_req->flags, kFsSyncAfter);
  EXPECT_EQ(write_req->data.size(), kFsWriteBytesMax);

  Signal empty = FsWriteReq{1, 2, 0, 0, {}}.to_signal();
  EXPECT_FALSE(FsWriteReq::from_signal(empty).ok());
  Signal wraps = FsWriteReq{1, 2, ~0ull, 0, Bytes(2, 0)}.to_signal();
  EXPECT_FALSE(FsWriteReq::from_signal(wraps).ok());
  Signal bad_flags = FsWriteReq{1, 2, 0, 2, Bytes(1, 0)}.to_signal();
  EXPECT_FALSE(FsWriteReq::from_signal(bad_flags).ok());

  for (uint32_t length : {1u, kFsReadBytesMax}) {
    Signal read = FsReadReq{1, 2, 3, length}.to_signal();
    EXPECT_TRUE(FsReadReq::from_signal(read).ok()) << length;
  }
  for (uint32_t length : {0u, kFsReadBytesMax + 1}) {
    Signal read = FsReadReq{1, 2, 3, length}.to_signal();
    EXPECT_FALSE(FsReadReq::from_signal(read).ok()) << length;
  }
}

TEST(FsMessages, ListConfEncodesSortedNames) {
  const std::vector<std::string> names = {"a", "dir/", std::string(255, 'n'), ""};
  Signal list = FsListConf{6, names}.to_signal();
  EXPECT_EQ(list.word(1), 4u);
  EXPECT_EQ(list.section().size(), FsListConf::encoded_size(names));
  EXPECT_EQ(list.section()[0], 1u);  // u16 little-endian length
  EXPECT_EQ(list.section()[1], 0u);
  Result<FsListConf> conf = FsListConf::from_signal(list);
  ASSERT_TRUE(conf.ok());
  EXPECT_EQ(conf->names, names);

  Signal truncated = FsListConf{6, {"abc"}}.to_signal();
  truncated.mutable_section().pop_back();
  EXPECT_FALSE(FsListConf::from_signal(truncated).ok());
  Signal extra = FsListConf{6, {"abc"}}.to_signal();
  extra.mutable_section().push_back(0);
  EXPECT_FALSE(FsListConf::from_signal(extra).ok());
}

TEST(FsMessages, PathRules) {
  for (const char* good : {"a", "a/b", "ndb_1_fs/D1/DBLQH/S0.FragLog", "a.b/.hidden", "..a"}) {
    EXPECT_TRUE(check_fs_path(good, false).ok()) << good;
  }
  for (const char* bad : {"", "/a", "a/", "a//b", ".", "..", "a/..", "../a", "a/./b"}) {
    EXPECT_TRUE(check_fs_path(bad, false).is(ErrorCode::kInvalidArgument)) << bad;
  }
  EXPECT_TRUE(check_fs_path("", true).ok());
  EXPECT_FALSE(check_fs_path("/", true).ok());
  EXPECT_FALSE(check_fs_path(std::string("a\0b", 3), false).ok());
  EXPECT_TRUE(check_fs_path(std::string(kFsPathBytesMax, 'x'), false).ok());
  EXPECT_FALSE(check_fs_path(std::string(kFsPathBytesMax + 1, 'x'), false).ok());

  Signal remove = FsRemoveReq{1, kFsRecursive, "a/../../etc"}.to_signal();
  EXPECT_TRUE(FsRemoveReq::from_signal(remove).status().is(ErrorCode::kInvalidArgument));
  Signal list_root = FsListReq{1, ""}.to_signal();
  EXPECT_TRUE(FsListReq::from_signal(list_root).ok());
}

}  // namespace
}  // namespace duo::fs
