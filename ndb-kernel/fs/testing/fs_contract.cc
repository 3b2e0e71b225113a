#include "ndb-kernel/fs/testing/fs_contract.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include "ndb-kernel/common/random.h"

namespace duo::fs::contract {

namespace {

using protocol::kFsAllocConf;
using protocol::kFsCloseConf;
using protocol::kFsListConf;
using protocol::kFsOpenConf;
using protocol::kFsReadConf;
using protocol::kFsRef;
using protocol::kFsRemoveConf;
using protocol::kFsSyncConf;
using protocol::kFsWriteConf;

std::string text_of(const Bytes& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

// "FS_REF NotFound: open 'x': No such file..." for failure messages.
std::string describe(Signal& answer) {
  if (answer.id() != kFsRef) return answer.describe();
  return "FS_REF " + std::string(error_info(static_cast<ErrorCode>(answer.word(1))).name) +
         " errno " + std::to_string(answer.word(2)) + ": " + text_of(answer.section());
}

// Answers by user_ref (every request of an exchange gets a distinct one).
std::map<uint32_t, Signal> by_user_ref(std::vector<Signal> answers) {
  std::map<uint32_t, Signal> out;
  for (Signal& answer : answers) {
    const uint32_t ref = fs_user_ref(answer);
    EXPECT_FALSE(out.contains(ref)) << "two answers for user_ref " << ref;
    out[ref] = std::move(answer);
  }
  return out;
}

std::string pattern(char seed, size_t length) {
  std::string bytes(length, '\0');
  for (size_t i = 0; i < length; ++i)
    bytes[i] = static_cast<char>(seed + static_cast<char>(i % 23));
  return bytes;
}

}  // namespace

// ---- FsAnswerCollector ----

FsAnswerCollector::FsAnswerCollector() : Block("fs_test_client", kFsTestClientBlock) {
  for (kernel::SignalId id : {kFsOpenConf, kFsRef, kFsWriteConf, kFsReadConf, kFsSyncConf,
                              kFsCloseConf, kFsRemoveConf, kFsListConf, protocol::kFsPageConf, kFsAllocConf}) {
    on(id, &FsAnswerCollector::on_answer);
  }
}

size_t FsAnswerCollector::count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return answers_.size();
}

std::vector<Signal> FsAnswerCollector::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(answers_, {});
}

void FsAnswerCollector::on_answer(Signal& signal) {
  std::lock_guard<std::mutex> lock(mutex_);
  answers_.push_back(std::move(signal));
}

Signal FsDriver::call(Signal request) {
  std::vector<Signal> requests;
  requests.push_back(std::move(request));
  std::vector<Signal> answers = exchange(std::move(requests));
  if (answers.size() != 1) return Signal();
  return std::move(answers[0]);
}

// ---- Helpers ----

Bytes bytes_of(const std::string& text) {
  return Bytes(text.begin(), text.end());
}

uint32_t open_ok(FsDriver& fs, const std::string& path, uint32_t flags, uint64_t* size_bytes) {
  Signal answer = fs.call(FsOpenReq{7, flags, path}.to_signal());
  if (answer.id() != kFsOpenConf) {
    ADD_FAILURE() << "open '" << path << "': " << describe(answer);
    return 0;
  }
  Result<FsOpenConf> conf = FsOpenConf::from_signal(answer);
  EXPECT_TRUE(conf.ok());
  EXPECT_EQ(conf->user_ref, 7u);
  EXPECT_NE(conf->handle, 0u);
  if (size_bytes != nullptr) *size_bytes = conf->size_bytes;
  return conf->handle;
}

void write_ok(FsDriver& fs, uint32_t handle, uint64_t offset, const std::string& bytes,
              uint32_t flags) {
  Signal answer = fs.call(FsWriteReq{8, handle, offset, flags, bytes_of(bytes)}.to_signal());
  ASSERT_EQ(answer.id(), kFsWriteConf) << describe(answer);
  EXPECT_EQ(fs_user_ref(answer), 8u);
  EXPECT_EQ(answer.word(1), bytes.size());
}

std::string read_ok(FsDriver& fs, uint32_t handle, uint64_t offset, uint32_t length) {
  Signal answer = fs.call(FsReadReq{9, handle, offset, length}.to_signal());
  if (answer.id() != kFsReadConf) {
    ADD_FAILURE() << "read: " << describe(answer);
    return "";
  }
  Result<FsReadConf> conf = FsReadConf::from_signal(answer);
  EXPECT_TRUE(conf.ok()) << conf.status().to_string();
  if (!conf.ok()) return "";
  EXPECT_EQ(conf->user_ref, 9u);
  return text_of(conf->data);
}

void sync_ok(FsDriver& fs, uint32_t handle) {
  Signal answer = fs.call(FsSyncReq{10, handle}.to_signal());
  EXPECT_EQ(answer.id(), kFsSyncConf) << describe(answer);
  EXPECT_EQ(fs_user_ref(answer), 10u);
}

void close_ok(FsDriver& fs, uint32_t handle, uint32_t flags) {
  Signal answer = fs.call(FsCloseReq{11, handle, flags}.to_signal());
  EXPECT_EQ(answer.id(), kFsCloseConf) << describe(answer);
  EXPECT_EQ(fs_user_ref(answer), 11u);
}

void remove_ok(FsDriver& fs, const std::string& path, uint32_t flags) {
  Signal answer = fs.call(FsRemoveReq{12, flags, path}.to_signal());
  EXPECT_EQ(answer.id(), kFsRemoveConf) << "remove '" << path << "': " << describe(answer);
  EXPECT_EQ(fs_user_ref(answer), 12u);
}

std::vector<std::string> list_ok(FsDriver& fs, const std::string& path) {
  Signal answer = fs.call(FsListReq{13, path}.to_signal());
  if (answer.id() != kFsListConf) {
    ADD_FAILURE() << "list '" << path << "': " << describe(answer);
    return {};
  }
  Result<FsListConf> conf = FsListConf::from_signal(answer);
  EXPECT_TRUE(conf.ok()) << conf.status().to_string();
  if (!conf.ok()) return {};
  EXPECT_EQ(conf->user_ref, 13u);
  return conf->names;
}

std::string expect_ref(Signal& answer, ErrorCode error, uint32_t os_errno) {
  if (answer.id() != kFsRef) {
    ADD_FAILURE() << "expected FS_REF " << error_info(error).name << ", got " << answer.describe();
    return "";
  }
  const std::string shown = describe(answer);
  Result<FsRef> ref = FsRef::from_signal(answer);
  EXPECT_TRUE(ref.ok()) << ref.status().to_string();
  if (!ref.ok()) return "";
  EXPECT_EQ(ref->error, error) << shown;
  if (os_errno != ~0u) {
    EXPECT_EQ(ref->os_errno, os_errno) << shown;
  }
  EXPECT_FALSE(ref->message.empty());
  return ref->message;
}

// ---- Cases ----

void create_write_read_sync_close(FsDriver& fs) {
  uint64_t size = 99;
  // kFsCreate also makes the missing parents.
  const uint32_t handle = open_ok(fs, "a/b/c.dat", kFsRead | kFsWrite | kFsCreate, &size);
  ASSERT_NE(handle, 0u);
  EXPECT_EQ(size, 0u);
  write_ok(fs, handle, 0, "hello", kFsSyncAfter);
  write_ok(fs, handle, 5, " world");
  EXPECT_EQ(read_ok(fs, handle, 0, 11), "hello world");
  EXPECT_EQ(read_ok(fs, handle, 6, 100), "world");  // short only at end of file
  EXPECT_EQ(read_ok(fs, handle, 11, 10), "");       // at end of file
  EXPECT_EQ(read_ok(fs, handle, 5000, 10), "");     // past it
  // A write past the end leaves a hole of zeros.
  write_ok(fs, handle, 20, "x");
  EXPECT_EQ(read_ok(fs, handle, 10, 100), std::string("d") + std::string(9, '\0') + "x");
  sync_ok(fs, handle);
  close_ok(fs, handle);

  const uint32_t again = open_ok(fs, "a/b/c.dat", kFsRead, &size);
  ASSERT_NE(again, 0u);
  EXPECT_EQ(size, 21u);
  EXPECT_EQ(read_ok(fs, again, 0, 5), "hello");
  close_ok(fs, again);

  // The largest write and read.
  const uint32_t big = open_ok(fs, "big", kFsRead | kFsWrite | kFsCreate);
  ASSERT_NE(big, 0u);
  const std::string data = pattern('A', kFsWriteBytesMax);
  write_ok(fs, big, 1, data, kFsSyncAfter);
  EXPECT_EQ(read_ok(fs, big, 1, kFsReadBytesMax), data.substr(0, kFsReadBytesMax));
  close_ok(fs, big);
}

void list_and_remove(FsDriver& fs) {
  EXPECT_EQ(list_ok(fs, ""), std::vector<std::string>{});         // nothing yet
  EXPECT_EQ(list_ok(fs, "missing"), std::vector<std::string>{});  // missing lists empty
  for (const char* path : {"d/z", "d/a", "d/sub/x", "d/sub/deeper/y", "top"}) {
    const uint32_t handle = open_ok(fs, path, kFsWrite | kFsCreate);
    ASSERT_NE(handle, 0u) << path;
    close_ok(fs, handle);
  }
  EXPECT_EQ(list_ok(fs, ""), (std::vector<std::string>{"d/", "top"}));
  EXPECT_EQ(list_ok(fs, "d"), (std::vector<std::string>{"a", "sub/", "z"}));
  EXPECT_EQ(list_ok(fs, "d/sub"), (std::vector<std::string>{"deeper/", "x"}));

  remove_ok(fs, "d/a");
  remove_ok(fs, "d/a");  // idempotent
  remove_ok(fs, "never/was");
  EXPECT_EQ(list_ok(fs, "d"), (std::vector<std::string>{"sub/", "z"}));
  // A non-empty directory goes only with kFsRecursive.
  Signal refused = fs.call(FsRemoveReq{1, 0, "d/sub"}.to_signal());
  expect_ref(refused, ErrorCode::kIoError, ENOTEMPTY);
  remove_ok(fs, "d/sub", kFsRecursive);
  EXPECT_EQ(list_ok(fs, "d"), (std::vector<std::string>{"z"}));
  remove_ok(fs, "d", kFsRecursive);
  remove_ok(fs, "top");
  EXPECT_EQ(list_ok(fs, ""), std::vector<std::string>{});
  // An empty directory goes without kFsRecursive.
  close_ok(fs, open_ok(fs, "e/f", kFsWrite | kFsCreate));
  remove_ok(fs, "e/f");
  EXPECT_EQ(list_ok(fs, ""), (std::vector<std::string>{"e/"}));
  remove_ok(fs, "e");
  EXPECT_EQ(list_ok(fs, ""), std::vector<std::string>{});
}

void allocate_creates_zeroed_files(FsDriver& fs) {
  constexpr uint64_t kSize = 3 * 65536 + 512;
  for (FsBase base : {FsBase::kNode, FsBase::kDataFiles, FsBase::kUndoFiles}) {
    const std::string path = "dd/f" + std::to_string(static_cast<uint32_t>(base)) + ".dat";
    Signal answer = fs.call(FsAllocReq{21, kSize, path, base}.to_signal());
    ASSERT_EQ(answer.id(), kFsAllocConf) << describe(answer);
    Result<FsAllocConf> conf = FsAllocConf::from_signal(answer);
    ASSERT_TRUE(conf.ok());
    EXPECT_EQ(conf->user_ref, 21u);
    EXPECT_EQ(conf->size_bytes, kSize);
    // A second allocation of the same path: EEXIST, and the file is left as it was.
    Signal again = fs.call(FsAllocReq{22, 512, path, base}.to_signal());
    expect_ref(again, ErrorCode::kIoError, EEXIST);
    const uint32_t remove_flags = base == FsBase::kDataFiles   ? kFsInDataFiles
                                  : base == FsBase::kUndoFiles ? kFsInUndoFiles
                                                               : 0;
    if (base == FsBase::kNode) {
      const uint32_t handle = open_ok(fs, path, kFsRead);
      EXPECT_EQ(read_ok(fs, handle, kSize - 100, 100), std::string(100, '\0'));
      EXPECT_EQ(read_ok(fs, handle, kSize, 10), "") << "no byte past the size";
      close_ok(fs, handle);
    }
    remove_ok(fs, path, remove_flags);
  }
  Signal bad = fs.call(FsAllocReq{23, 512, "../x", FsBase::kNode}.to_signal());
  expect_ref(bad, ErrorCode::kInvalidArgument, 0);
}

void open_missing_is_not_found(FsDriver& fs) {
  Signal missing = fs.call(FsOpenReq{3, kFsRead | kFsWrite, "nope"}.to_signal());
  EXPECT_EQ(fs_user_ref(missing), 3u);
  const std::string message = expect_ref(missing, ErrorCode::kNotFound, ENOENT);
  EXPECT_NE(message.find("nope"), std::string::npos) << message;
  Signal missing_parent = fs.call(FsOpenReq{4, kFsRead, "no/such/dir/file"}.to_signal());
  expect_ref(missing_parent, ErrorCode::kNotFound, ENOENT);
  EXPECT_EQ(list_ok(fs, ""), std::vector<std::string>{});  // nothing was created
}

void bad_paths_are_refused(FsDriver& fs) {
  const std::string nul("a\0b", 3);
  for (const std::string& path :
       {std::string(""), std::string("/etc/passwd"), std::string(".."), std::string("a/../b"),
        std::string("../x"), std::string("a//b"), std::string("a/"), std::string("./a"), nul,
        std::string(kFsPathBytesMax + 1, 'p')}) {
    Signal open = fs.call(FsOpenReq{5, kFsRead | kFsWrite | kFsCreate, path}.to_signal());
    EXPECT_EQ(fs_user_ref(open), 5u);
    expect_ref(open, ErrorCode::kInvalidArgument, 0);
    Signal remove = fs.call(FsRemoveReq{6, kFsRecursive, path}.to_signal());
    expect_ref(remove, ErrorCode::kInvalidArgument, 0);
    if (!path.empty()) {
      Signal list = fs.call(FsListReq{7, path}.to_signal());
      expect_ref(list, ErrorCode::kInvalidArgument, 0);
    }
  }
  // The longest valid path works.
  std::string longest;
  while (longest.size() + 100 < kFsPathBytesMax) longest += std::string(99, 'q') + "/";
  longest += std::string(kFsPathBytesMax - longest.size(), 'r');
  ASSERT_EQ(longest.size(), kFsPathBytesMax);
  close_ok(fs, open_ok(fs, longest, kFsWrite | kFsCreate));
  EXPECT_EQ(list_ok(fs, ""), (std::vector<std::string>{std::string(99, 'q') + "/"}));
}

void bad_requests_are_refused(FsDriver& fs) {
  Signal no_access = fs.call(FsOpenReq{1, kFsCreate, "f"}.to_signal());
  expect_ref(no_access, ErrorCode::kInvalidArgument, 0);
  Signal unknown_flag = fs.call(FsOpenReq{1, kFsRead | 64, "f"}.to_signal());
  expect_ref(unknown_flag, ErrorCode::kInvalidArgument, 0);
  Signal truncate_read = fs.call(FsOpenReq{1, kFsRead | kFsTruncate, "f"}.to_signal());
  expect_ref(truncate_read, ErrorCode::kInvalidArgument, 0);

  const uint32_t handle = open_ok(fs, "f", kFsRead | kFsWrite | kFsCreate);
  ASSERT_NE(handle, 0u);
  Signal empty_write = fs.call(FsWriteReq{2, handle, 0, 0, {}}.to_signal());
  expect_ref(empty_write, ErrorCode::kInvalidArgument, 0);
  Signal zero_read = fs.call(FsReadReq{3, handle, 0, 0}.to_signal());
  expect_ref(zero_read, ErrorCode::kInvalidArgument, 0);
  Signal long_read = fs.call(FsReadReq{4, handle, 0, kFsReadBytesMax + 1}.to_signal());
  EXPECT_EQ(fs_user_ref(long_read), 4u);
  expect_ref(long_read, ErrorCode::kInvalidArgument, 0);
  Signal bad_close = fs.call(FsCloseReq{5, handle, 2}.to_signal());
  expect_ref(bad_close, ErrorCode::kInvalidArgument, 0);
  // None of it hurt the handle.
  write_ok(fs, handle, 0, "ok");
  EXPECT_EQ(read_ok(fs, handle, 0, 10), "ok");
  close_ok(fs, handle);
}

void unknown_handles_are_refused(FsDriver& fs) {
  for (uint32_t handle : {0u, 1u, 999u, 0xFFFFFFFFu}) {
    Signal write = fs.call(FsWriteReq{1, handle, 0, 0, bytes_of("x")}.to_signal());
    expect_ref(write, ErrorCode::kInvalidArgument, 0);
    Signal read = fs.call(FsReadReq{2, handle, 0, 1}.to_signal());
    expect_ref(read, ErrorCode::kInvalidArgument, 0);
    Signal sync = fs.call(FsSyncReq{3, handle}.to_signal());
    expect_ref(sync, ErrorCode::kInvalidArgument, 0);
    Signal close = fs.call(FsCloseReq{4, handle, 0}.to_signal());
    expect_ref(close, ErrorCode::kInvalidArgument, 0);
  }
  // A closed handle is dead at once: requests sent right behind the close are refused.
  const uint32_t handle = open_ok(fs, "f", kFsRead | kFsWrite | kFsCreate);
  ASSERT_NE(handle, 0u);
  std::vector<Signal> requests;
  requests.push_back(FsCloseReq{1, handle, 0}.to_signal());
  requests.push_back(FsWriteReq{2, handle, 0, 0, bytes_of("late")}.to_signal());
  requests.push_back(FsCloseReq{3, handle, 0}.to_signal());
  std::map<uint32_t, Signal> answers = by_user_ref(fs.exchange(std::move(requests)));
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(answers[1].id(), kFsCloseConf) << describe(answers[1]);
  expect_ref(answers[2], ErrorCode::kInvalidArgument, 0);
  expect_ref(answers[3], ErrorCode::kInvalidArgument, 0);
}

void io_errors_are_reported(FsDriver& fs) {
  close_ok(fs, open_ok(fs, "dir/file", kFsWrite | kFsCreate));
  // A directory is not a file.
  Signal directory_write = fs.call(FsOpenReq{1, kFsRead | kFsWrite, "dir"}.to_signal());
  std::string message = expect_ref(directory_write, ErrorCode::kIoError, EISDIR);
  EXPECT_NE(message.find("dir"), std::string::npos) << message;
  Signal directory_read = fs.call(FsOpenReq{2, kFsRead, "dir"}.to_signal());
  expect_ref(directory_read, ErrorCode::kIoError, EISDIR);
  // The access a handle was opened with is enforced by the OS.
  const uint32_t read_only = open_ok(fs, "dir/file", kFsRead);
  ASSERT_NE(read_only, 0u);
  Signal write = fs.call(FsWriteReq{3, read_only, 0, 0, bytes_of("x")}.to_signal());
  expect_ref(write, ErrorCode::kIoError, EBADF);
  close_ok(fs, read_only);
  const uint32_t write_only = open_ok(fs, "dir/file", kFsWrite);
  ASSERT_NE(write_only, 0u);
  Signal read = fs.call(FsReadReq{4, write_only, 0, 1}.to_signal());
  expect_ref(read, ErrorCode::kIoError, EBADF);
  // Errors leave the handle usable.
  write_ok(fs, write_only, 0, "fine");
  close_ok(fs, write_only);
  // A file in the middle of a path is not a directory.
  Signal through_file = fs.call(FsOpenReq{5, kFsWrite | kFsCreate, "dir/file/x"}.to_signal());
  expect_ref(through_file, ErrorCode::kIoError);
}

void truncate_and_remove_after_close(FsDriver& fs) {
  uint32_t handle = open_ok(fs, "t", kFsWrite | kFsCreate);
  write_ok(fs, handle, 0, "0123456789", kFsSyncAfter);
  close_ok(fs, handle);
  uint64_t size = 0;
  handle = open_ok(fs, "t", kFsRead | kFsWrite, &size);
  EXPECT_EQ(size, 10u);
  close_ok(fs, handle);
  handle = open_ok(fs, "t", kFsRead | kFsWrite | kFsTruncate, &size);
  EXPECT_EQ(size, 0u);
  EXPECT_EQ(read_ok(fs, handle, 0, 10), "");
  close_ok(fs, handle, kFsRemoveAfter);
  EXPECT_EQ(list_ok(fs, ""), std::vector<std::string>{});
  Signal gone = fs.call(FsOpenReq{1, kFsRead, "t"}.to_signal());
  expect_ref(gone, ErrorCode::kNotFound, ENOENT);
}

void per_handle_order_is_kept(FsDriver& fs) {
  const uint32_t handle = open_ok(fs, "order", kFsRead | kFsWrite | kFsCreate);
  ASSERT_NE(handle, 0u);
  // 300 writes over one another at offset 0, a sync and a read in between now and
  // then; all queued at once. Each read must see exactly the writes sent before it.
  constexpr uint32_t kWrites = 300;
  std::vector<Signal> requests;
  std::map<uint32_t, std::string> expected_reads;  // user_ref -> content
  uint32_t ref = 0;
  for (uint32_t i = 0; i < kWrites; ++i) {
    const std::string value = pattern(static_cast<char>('a' + i % 26), 1000 + i % 7);
    requests.push_back(FsWriteReq{ref++, handle, 0, 0, bytes_of(value)}.to_signal());
    if (i % 10 == 9) requests.push_back(FsSyncReq{ref++, handle}.to_signal());
    if (i % 25 == 24) {
      expected_reads[ref] = value;
      requests.push_back(
          FsReadReq{ref++, handle, 0, static_cast<uint32_t>(value.size())}.to_signal());
    }
  }
  std::vector<Signal> answers = fs.exchange(std::move(requests));
  ASSERT_EQ(answers.size(), ref);
  for (uint32_t i = 0; i < answers.size(); ++i) {
    // One handle: answered in the order sent.
    ASSERT_EQ(fs_user_ref(answers[i]), i) << describe(answers[i]);
    ASSERT_NE(answers[i].id(), kFsRef) << describe(answers[i]);
    if (expected_reads.contains(i)) {
      ASSERT_EQ(answers[i].id(), kFsReadConf);
      EXPECT_EQ(text_of(answers[i].section()), expected_reads[i]) << "read " << i;
    }
  }
  close_ok(fs, handle);
}

// Page IO: several 32 KiB page writes and reads in flight at once on one handle,
// answered in any order; a read past the end zero-fills; a close sent behind page
// writes is answered after them; misaligned requests are refused.
void page_io_round_trip(FsDriver& fs) {
  constexpr uint32_t kPage = 32 * 1024;
  constexpr uint32_t kPages = 4;
  struct FreeAligned {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, FreeAligned> memory(
      static_cast<uint8_t*>(std::aligned_alloc(kFsPageAlign, 2 * (kPages + 1) * kPage)));
  uint8_t* const out = memory.get();
  uint8_t* const in = out + (kPages + 1) * kPage;
  const uint32_t handle = open_ok(fs, "pages/data.dat", kFsRead | kFsWrite | kFsCreate | kFsDirectIo);
  std::vector<Signal> writes;
  for (uint32_t p = 0; p < kPages; ++p) {
    for (uint32_t i = 0; i < kPage; ++i) out[p * kPage + i] = static_cast<uint8_t>(p + i % 253);
    writes.push_back(FsPageReq{protocol::kFsPageWriteReq, 10 + p, handle, uint64_t{p} * kPage,
                               out + p * kPage, kPage, 0}
                         .to_signal());
  }
  std::vector<Signal> answers = fs.exchange(std::move(writes));
  ASSERT_EQ(answers.size(), kPages);
  for (Signal& answer : answers) {
    Result<FsPageConf> conf = FsPageConf::from_signal(answer);
    ASSERT_TRUE(conf.ok()) << answer.describe();
    EXPECT_EQ(conf->bytes, kPage);
  }
  std::vector<Signal> reads;
  for (uint32_t p = kPages + 1; p-- > 0;) {
    std::memset(in + p * kPage, 0xee, kPage);
    reads.push_back(FsPageReq{protocol::kFsPageReadReq, 20 + p, handle, uint64_t{p} * kPage,
                              in + p * kPage, kPage, 0}
                        .to_signal());
  }
  answers = fs.exchange(std::move(reads));
  ASSERT_EQ(answers.size(), kPages + 1);
  for (Signal& answer : answers) {
    Result<FsPageConf> conf = FsPageConf::from_signal(answer);
    ASSERT_TRUE(conf.ok()) << answer.describe();
    const uint32_t p = conf->user_ref - 20;
    ASSERT_LE(p, kPages);
    if (p == kPages) {
      EXPECT_EQ(conf->bytes, 0u);
      for (uint32_t i = 0; i < kPage; i += 256) ASSERT_EQ(in[p * kPage + i], 0) << i;
    } else {
      EXPECT_EQ(conf->bytes, kPage);
      EXPECT_EQ(std::memcmp(in + p * kPage, out + p * kPage, kPage), 0) << "page " << p;
    }
  }
  Signal misaligned = fs.call(
      FsPageReq{protocol::kFsPageReadReq, 30, handle, 512, in, kPage, 0}.to_signal());
  expect_ref(misaligned, ErrorCode::kInvalidArgument);
  std::vector<Signal> then_close;
  for (uint32_t p = 0; p < kPages; ++p) {
    then_close.push_back(FsPageReq{protocol::kFsPageWriteReq, 40 + p, handle,
                                   uint64_t{p} * kPage, out + p * kPage, kPage,
                                   p == 0 ? kFsSyncAfter : 0u}
                             .to_signal());
  }
  then_close.push_back(FsCloseReq{50, handle, 0}.to_signal());
  answers = fs.exchange(std::move(then_close));
  ASSERT_EQ(answers.size(), kPages + 1);
  for (size_t i = 0; i < kPages; ++i) {
    EXPECT_EQ(answers[i].id(), protocol::kFsPageConf) << answers[i].describe();
  }
  EXPECT_EQ(answers.back().id(), protocol::kFsCloseConf) << "the close overtook page IO";
  const uint32_t again = open_ok(fs, "pages/data.dat", kFsRead);
  EXPECT_EQ(read_ok(fs, again, kPage + 7, 3),
            std::string(reinterpret_cast<const char*>(out + kPage + 7), 3));
  close_ok(fs, again);
}

void many_files_in_parallel(FsDriver& fs) {
  const uint32_t files = std::min<uint32_t>(32, fs.open_files_max());
  // Opens pipelined too: each gets its own handle.
  std::vector<Signal> opens;
  for (uint32_t f = 0; f < files; ++f) {
    opens.push_back(
        FsOpenReq{f, kFsRead | kFsWrite | kFsCreate, "many/f" + std::to_string(f)}.to_signal());
  }
  std::map<uint32_t, Signal> opened = by_user_ref(fs.exchange(std::move(opens)));
  ASSERT_EQ(opened.size(), files);
  std::vector<uint32_t> handles(files);
  for (uint32_t f = 0; f < files; ++f) {
    ASSERT_EQ(opened[f].id(), kFsOpenConf) << describe(opened[f]);
    handles[f] = opened[f].word(1);
  }
  std::vector<uint32_t> sorted = handles;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "handle reused";

  // 8 chunks per file, interleaved across files, then a sync and a read of each file.
  constexpr uint32_t kChunks = 8;
  constexpr uint32_t kChunkBytes = 4096;
  std::vector<Signal> requests;
  uint32_t ref = 0;
  for (uint32_t c = 0; c < kChunks; ++c) {
    for (uint32_t f = 0; f < files; ++f) {
      requests.push_back(FsWriteReq{ref++, handles[f], uint64_t{c} * kChunkBytes, 0,
                                    bytes_of(pattern(static_cast<char>(f + c), kChunkBytes))}
                             .to_signal());
    }
  }
  for (uint32_t f = 0; f < files; ++f) requests.push_back(FsSyncReq{ref++, handles[f]}.to_signal());
  const uint32_t first_read = ref;
  for (uint32_t f = 0; f < files; ++f) {
    requests.push_back(FsReadReq{ref++, handles[f], 0, kChunks * kChunkBytes}.to_signal());
  }
  std::map<uint32_t, Signal> answers = by_user_ref(fs.exchange(std::move(requests)));
  ASSERT_EQ(answers.size(), ref);
  for (uint32_t r = 0; r < first_read; ++r) {
    EXPECT_NE(answers[r].id(), kFsRef) << describe(answers[r]);
  }
  for (uint32_t f = 0; f < files; ++f) {
    Signal& read = answers[first_read + f];
    ASSERT_EQ(read.id(), kFsReadConf) << describe(read);
    std::string expected;
    for (uint32_t c = 0; c < kChunks; ++c)
      expected += pattern(static_cast<char>(f + c), kChunkBytes);
    EXPECT_TRUE(text_of(read.section()) == expected) << "file " << f;
  }
  std::vector<Signal> closes;
  for (uint32_t f = 0; f < files; ++f) closes.push_back(FsCloseReq{f, handles[f], 0}.to_signal());
  for (Signal& answer : fs.exchange(std::move(closes))) {
    EXPECT_EQ(answer.id(), kFsCloseConf) << describe(answer);
  }
  EXPECT_EQ(list_ok(fs, "many").size(), files);
}

void open_files_are_bounded(FsDriver& fs) {
  const uint32_t limit = fs.open_files_max();
  ASSERT_LE(limit, 256u) << "the fixture should use a small open_files_max";
  std::vector<uint32_t> handles;
  for (uint32_t i = 0; i < limit; ++i) {
    handles.push_back(open_ok(fs, "open/" + std::to_string(i), kFsWrite | kFsCreate));
  }
  Signal refused = fs.call(FsOpenReq{1, kFsWrite | kFsCreate, "open/more"}.to_signal());
  expect_ref(refused, ErrorCode::kTemporary, 0);
  // A failed open does not hold a handle; a close frees one.
  Signal missing = fs.call(FsOpenReq{2, kFsRead, "open/absent"}.to_signal());
  expect_ref(missing, ErrorCode::kTemporary, 0);  // refused before it is even tried
  close_ok(fs, handles.back());
  handles.pop_back();
  Signal absent = fs.call(FsOpenReq{3, kFsRead, "open/absent"}.to_signal());
  expect_ref(absent, ErrorCode::kNotFound, ENOENT);
  handles.push_back(open_ok(fs, "open/more", kFsWrite | kFsCreate));
  for (uint32_t handle : handles) close_ok(fs, handle);
}

void random_requests_match_a_model(FsDriver& fs, uint64_t seed, int requests) {
  constexpr uint32_t kFiles = 16;
  constexpr uint32_t kBatch = 100;
  SeededRandom random(seed);
  std::vector<uint32_t> handles;
  std::vector<std::string> model(kFiles);
  for (uint32_t f = 0; f < kFiles; ++f) {
    handles.push_back(open_ok(fs, "stress/" + std::to_string(f), kFsRead | kFsWrite | kFsCreate));
    ASSERT_NE(handles.back(), 0u);
  }
  int sent = 0;
  while (sent < requests) {
    std::vector<Signal> batch;
    std::map<uint32_t, std::string> expected_reads;
    for (uint32_t ref = 0; ref < kBatch && sent < requests; ++ref, ++sent) {
      const uint32_t f = static_cast<uint32_t>(random.uniform(kFiles));
      const uint64_t kind = random.uniform(100);
      if (kind < 55) {
        const uint64_t offset = random.uniform(16384);
        std::string bytes(1 + random.uniform(3000), '\0');
        for (char& c : bytes) c = static_cast<char>(random.uniform(256));
        std::string& file = model[f];
        if (file.size() < offset + bytes.size()) file.resize(offset + bytes.size(), '\0');
        file.replace(offset, bytes.size(), bytes);
        const uint32_t flags = random.uniform(50) == 0 ? kFsSyncAfter : 0;
        batch.push_back(FsWriteReq{ref, handles[f], offset, flags, bytes_of(bytes)}.to_signal());
      } else if (kind < 97) {
        const uint64_t offset = random.uniform(20000);
        const uint32_t length = 1 + static_cast<uint32_t>(random.uniform(kFsReadBytesMax));
        const std::string& file = model[f];
        expected_reads[ref] = offset >= file.size() ? "" : file.substr(offset, length);
        batch.push_back(FsReadReq{ref, handles[f], offset, length}.to_signal());
      } else {
        batch.push_back(FsSyncReq{ref, handles[f]}.to_signal());
      }
    }
    const size_t size = batch.size();
    std::map<uint32_t, Signal> answers = by_user_ref(fs.exchange(std::move(batch)));
    ASSERT_EQ(answers.size(), size);
    for (auto& [ref, answer] : answers) {
      ASSERT_NE(answer.id(), kFsRef) << describe(answer);
      if (expected_reads.contains(ref)) {
        ASSERT_EQ(answer.id(), kFsReadConf);
        ASSERT_TRUE(text_of(answer.section()) == expected_reads[ref])
            << "read " << ref << " after " << sent << " requests";
      }
    }
  }
  for (uint32_t handle : handles) close_ok(fs, handle);
}

}  // namespace duo::fs::contract
