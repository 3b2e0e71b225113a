// FileSystemBlock on a real ThreadRuntime over real files in a temporary directory
// (removed after each test): the shared contract cases of fs/testing/fs_contract.h, and
// what only the real block has — IO threads, the completion sink's kTemporary retry,
// the admission bound, and shutdown with work queued. Every wait is bounded
// (kWaitLimit); a test that times out fails instead of hanging.
#include "ndb-kernel/fs/file_system_block.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <thread>

#include "ndb-kernel/fs/testing/fs_contract.h"
#include "ndb-kernel/runtime/thread_runtime.h"

namespace duo::fs {
namespace {

using contract::FsAnswerCollector;
using kernel::BlockAddress;
using kernel::Signal;
using kernel::ThreadRuntime;
using std::chrono::milliseconds;

constexpr milliseconds kWaitLimit{20'000};
constexpr uint16_t kNode = 1;
constexpr kernel::SignalId kStallSignal = 4091;

// Polls `done` until it holds or `limit` passes. Tests may sleep; blocks may not.
bool wait_for(const std::function<bool()>& done, milliseconds limit = kWaitLimit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

// Parks its thread inside a handler until released, so the requester's queue fills up.
class StallBlock final : public kernel::Block {
 public:
  StallBlock() : Block("stall", 4092) { on(kStallSignal, &StallBlock::on_stall); }
  std::atomic<bool> stalled{false};
  std::atomic<bool> release{false};

 private:
  void on_stall(Signal&) {
    stalled.store(true);
    wait_for([&] { return release.load(); });
  }
};

struct RealFsOptions {
  uint32_t io_threads = 2;
  uint32_t open_files_max = 40;
  uint32_t queued_requests_max = 4096;
  size_t queue_capacity_signals = 4096;
  bool page_io_direct = true;
  bool page_io_aio = true;
};

// A node with the file system block on the main thread and the test requester (and a
// StallBlock) on an LDM thread, over a fresh temporary directory.
class RealFs : public contract::FsDriver {
 public:
  explicit RealFs(RealFsOptions options = {}) : options_(options) {
    protocol::register_protocol_signal_names();
    char pattern[] = "/tmp/duo_fs_test_XXXXXX";
    const char* made = ::mkdtemp(pattern);
    EXPECT_NE(made, nullptr);
    directory_ = made != nullptr ? made : "/tmp/duo_fs_test_failed";
    kernel::ThreadRuntimeOptions runtime_options;
    runtime_options.node_id = kNode;
    runtime_options.layout = kernel::ThreadLayout{
        .ldm_threads = 1, .recv_threads = 1, .send_threads = 0, .main_runs_recv = true};
    runtime_options.queue_capacity_signals = options.queue_capacity_signals;
    runtime_options.seed = 1;
    auto runtime = ThreadRuntime::create(runtime_options);
    EXPECT_TRUE(runtime.ok()) << runtime.status().to_string();
    runtime_ = std::move(runtime).value();

    FileSystemOptions fs_options;
    // A subdirectory that does not exist yet: the first create makes it.
    fs_options.directory = directory_ + "/ndb_1_fs";
    fs_options.io_threads = options.io_threads;
    fs_options.open_files_max = options.open_files_max;
    fs_options.queued_requests_max = options.queued_requests_max;
    fs_options.page_io_direct = options.page_io_direct;
    fs_options.page_io_aio = options.page_io_aio;
    ThreadRuntime* raw_runtime = runtime_.get();
    auto block = FileSystemBlock::create(fs_options, [raw_runtime](Signal& answer) {
      return raw_runtime->try_send_from_outside(answer);
    });
    EXPECT_TRUE(block.ok()) << block.status().to_string();
    fs_ = block->get();
    auto collector = std::make_unique<FsAnswerCollector>();
    collector_ = collector.get();
    auto stall = std::make_unique<StallBlock>();
    stall_ = stall.get();
    const uint32_t ldm = runtime_->layout().ldm_thread(0);
    EXPECT_TRUE(runtime_->add_block(std::move(block).value(), 0).ok());
    EXPECT_TRUE(runtime_->add_block(std::move(collector), ldm).ok());
    EXPECT_TRUE(runtime_->add_block(std::move(stall), ldm).ok());
    EXPECT_TRUE(runtime_->start().ok());
  }

  ~RealFs() override {
    stop_runtime();
    std::error_code error;
    std::filesystem::remove_all(directory_, error);
  }

  std::vector<Signal> exchange(std::vector<Signal> requests) override {
    const size_t expected = collector_->count() + requests.size();
    for (Signal& request : requests) send(std::move(request));
    EXPECT_TRUE(wait_for([&] { return collector_->count() >= expected; }))
        << collector_->count() << " of " << expected << " answers";
    return collector_->take();
  }
  uint32_t open_files_max() const override { return options_.open_files_max; }

  // Sends one request from the requester's address, retrying a full queue.
  void send(Signal request) {
    request.set_sender(BlockAddress{kNode, contract::kFsTestClientBlock, 0});
    request.set_receiver(BlockAddress{kNode, protocol::kFileSystemBlock, 0});
    Status status;
    EXPECT_TRUE(wait_for([&] {
      status = runtime_->try_send_from_outside(request);
      return !status.is(ErrorCode::kTemporary);
    }));
    EXPECT_TRUE(status.ok()) << status.to_string();
  }
  // Stalls the requester's thread until release_requester().
  void stall_requester() {
    Signal stall(kStallSignal);
    stall.set_receiver(BlockAddress{kNode, 4092, 0});
    ASSERT_TRUE(runtime_->send_from_outside(std::move(stall)).ok());
    ASSERT_TRUE(wait_for([&] { return stall_->stalled.load(); }));
  }
  void release_requester() { stall_->release.store(true); }

  FileSystemBlock& block() { return *fs_; }
  FsAnswerCollector& collector() { return *collector_; }
  std::string root() const { return directory_ + "/ndb_1_fs"; }
  // Joins the block threads, then (destroying the blocks) the file system's IO threads.
  void stop_runtime() {
    if (runtime_ == nullptr) return;
    stall_->release.store(true);
    runtime_.reset();
  }

 private:
  const RealFsOptions options_;
  std::string directory_;
  std::unique_ptr<ThreadRuntime> runtime_;
  FileSystemBlock* fs_ = nullptr;
  FsAnswerCollector* collector_ = nullptr;
  StallBlock* stall_ = nullptr;
};

class RealFileSystem : public ::testing::Test {
 protected:
  contract::FsDriver& driver() { return fs_; }
  RealFs fs_;
};

DUO_FS_CONTRACT_TESTS(RealFileSystem)

TEST_F(RealFileSystem, FilesLandInTheNodesDirectory) {
  const uint32_t handle = contract::open_ok(fs_, "x/y.log", kFsWrite | kFsCreate);
  contract::write_ok(fs_, handle, 0, "durable", kFsSyncAfter);
  contract::close_ok(fs_, handle);
  std::ifstream in(fs_.root() + "/x/y.log");
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "durable");
}

TEST(RealFileSystemOnly, CreateChecksItsOptions) {
  const CompletionSink sink = [](Signal&) { return Status::OK(); };
  EXPECT_TRUE(
      FileSystemBlock::create({.directory = ""}, sink).status().is(ErrorCode::kConfigError));
  EXPECT_TRUE(FileSystemBlock::create({.directory = "/tmp/x", .io_threads = 0}, sink)
                  .status()
                  .is(ErrorCode::kConfigError));
  EXPECT_TRUE(FileSystemBlock::create({.directory = "/tmp/x", .open_files_max = 0}, sink)
                  .status()
                  .is(ErrorCode::kConfigError));
  EXPECT_TRUE(FileSystemBlock::create({.directory = "/tmp/x"}, nullptr)
                  .status()
                  .is(ErrorCode::kInvalidArgument));
  // A valid block starts and joins its threads without ever being attached.
  auto block = FileSystemBlock::create({.directory = "/tmp/x", .io_threads = 3}, sink);
  ASSERT_TRUE(block.ok());
}

// Answers that meet a full requester queue are kept and retried, never lost.
TEST(RealFileSystemOnly, AnswersSurviveAFullRequesterQueue) {
  RealFs fs({.queue_capacity_signals = 16});
  const uint32_t handle = contract::open_ok(fs, "r", kFsRead | kFsWrite | kFsCreate);
  contract::write_ok(fs, handle, 0, "retry me");
  fs.stall_requester();
  constexpr uint32_t kReads = 200;
  for (uint32_t i = 0; i < kReads; ++i) fs.send(FsReadReq{i, handle, 0, 8}.to_signal());
  // The IO threads now hold answers the full queue refused.
  ASSERT_TRUE(wait_for([&] { return fs.block().stats().answer_retries > 0; }));
  fs.release_requester();
  ASSERT_TRUE(wait_for([&] { return fs.collector().count() == kReads; })) << fs.collector().count();
  std::vector<Signal> answers = fs.collector().take();
  for (uint32_t i = 0; i < kReads; ++i) {
    ASSERT_EQ(answers[i].id(), protocol::kFsReadConf) << answers[i].describe();
    EXPECT_EQ(fs_user_ref(answers[i]), i);  // one handle: in order, retries included
    EXPECT_EQ(std::string(answers[i].section().begin(), answers[i].section().end()), "retry me");
  }
  EXPECT_EQ(fs.block().stats().answers_dropped, 0u);
  contract::close_ok(fs, handle);
}

// Requests beyond queued_requests_max are refused at once with kTemporary. The one IO
// thread is held inside open() of a FIFO (which blocks until a writer comes), so
// admitted requests stay queued.
TEST(RealFileSystemOnly, AdmissionIsBounded) {
  RealFs fs({.io_threads = 1, .queued_requests_max = 4});
  const uint32_t handle = contract::open_ok(fs, "q", kFsRead | kFsWrite | kFsCreate);
  contract::write_ok(fs, handle, 0, "q");
  const std::string fifo = fs.root() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const uint64_t admitted_before = fs.block().stats().requests;
  fs.send(FsOpenReq{100, kFsRead, "fifo"}.to_signal());
  constexpr uint32_t kSent = 20;
  for (uint32_t i = 0; i < kSent; ++i) fs.send(FsReadReq{i, handle, 0, 1}.to_signal());
  ASSERT_TRUE(wait_for([&] {
    const FileSystemStats stats = fs.block().stats();
    return stats.requests - admitted_before + stats.refused_busy == kSent + 1;
  }));
  EXPECT_EQ(fs.block().stats().requests - admitted_before, 4u);  // the open and 3 reads
  EXPECT_EQ(fs.block().stats().refused_busy, 17u);
  // Let the open finish: a writer arrives.
  const int writer = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(writer, 0);
  ::close(writer);
  ASSERT_TRUE(wait_for([&] { return fs.collector().count() == kSent + 1; }));
  uint32_t confirmed = 0;
  uint32_t fifo_handle = 0;
  for (Signal& answer : fs.collector().take()) {
    if (answer.id() == protocol::kFsReadConf) {
      ++confirmed;
    } else if (answer.id() == protocol::kFsOpenConf) {
      fifo_handle = answer.word(1);
    } else {
      contract::expect_ref(answer, ErrorCode::kTemporary, 0);
    }
  }
  EXPECT_EQ(confirmed, 3u);
  ASSERT_NE(fifo_handle, 0u);
  contract::close_ok(fs, fifo_handle);
  contract::close_ok(fs, handle);
}

// Stopping with requests queued joins every thread promptly and leaks nothing (ASan).
TEST(RealFileSystemOnly, StopWithWorkQueuedJoinsTheIoThreads) {
  RealFs fs({.io_threads = 4});
  const uint32_t handle = contract::open_ok(fs, "s", kFsRead | kFsWrite | kFsCreate);
  for (uint32_t i = 0; i < 2000; ++i) {
    fs.send(FsWriteReq{i, handle, uint64_t{i} * 100, 0, contract::bytes_of("data")}.to_signal());
  }
  fs.stop_runtime();  // destroys the block: stop() joins; the open file is closed
}

// A file made read-only by permissions fails to open for writing with kIoError. Root
// ignores permissions, so the case only runs as another user.
TEST(RealFileSystemOnly, PermissionDeniedIsAnIoError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores file permissions";
  RealFs fs;
  contract::close_ok(fs, contract::open_ok(fs, "ro", kFsWrite | kFsCreate));
  std::filesystem::permissions(fs.root() + "/ro", std::filesystem::perms::owner_read);
  Signal answer = fs.call(FsOpenReq{1, kFsWrite, "ro"}.to_signal());
  contract::expect_ref(answer, ErrorCode::kIoError, EACCES);
}


// ---- Page IO (FS_PAGE_READREQ / FS_PAGE_WRITEREQ) ----

constexpr uint32_t kTestPageBytes = 32 * 1024;
constexpr uint32_t kTestPages = 8;

// Page-aligned memory standing in for page-cache frames.
struct Frames {
  explicit Frames(size_t count)
      : bytes(static_cast<uint8_t*>(std::aligned_alloc(kFsPageAlign, count * kTestPageBytes))) {}
  ~Frames() { std::free(bytes); }
  uint8_t* frame(size_t i) { return bytes + i * kTestPageBytes; }
  uint8_t* bytes;
};

Signal page_request(kernel::SignalId id, uint32_t user_ref, uint32_t handle, uint64_t offset,
                    uint8_t* frame, uint32_t length, uint32_t flags = 0) {
  return FsPageReq{id, user_ref, handle, offset, frame, length, flags}.to_signal();
}

// Opens a page file, writes kTestPages pages at once, reads them back at once into other
// frames, and checks bytes, the end of file and the file on disk. Returns the path used.
FsPageIoPath page_round_trip(RealFs& fs) {
  Signal open_answer = fs.call(
      FsOpenReq{1, kFsRead | kFsWrite | kFsCreate | kFsDirectIo, "dd/data_1.dat"}.to_signal());
  Result<FsOpenConf> open = FsOpenConf::from_signal(open_answer);
  EXPECT_TRUE(open.ok()) << open_answer.describe();
  if (!open.ok()) return FsPageIoPath::kBuffered;
  const uint32_t handle = open->handle;
  Frames out(kTestPages), in(kTestPages + 1);
  std::vector<Signal> writes;
  for (uint32_t p = 0; p < kTestPages; ++p) {
    for (uint32_t i = 0; i < kTestPageBytes; ++i) out.frame(p)[i] = static_cast<uint8_t>(p * 31 + i % 251);
    writes.push_back(page_request(protocol::kFsPageWriteReq, 100 + p, handle,
                                  uint64_t{p} * kTestPageBytes, out.frame(p), kTestPageBytes));
  }
  for (Signal& answer : fs.exchange(std::move(writes))) {
    Result<FsPageConf> conf = FsPageConf::from_signal(answer);
    EXPECT_TRUE(conf.ok()) << answer.describe();
    if (conf.ok()) {
      EXPECT_EQ(conf->bytes, kTestPageBytes);
    }
  }
  std::vector<Signal> reads;
  // In reverse, plus one page past the end of the file.
  for (uint32_t p = kTestPages + 1; p-- > 0;) {
    std::memset(in.frame(p), 0xee, kTestPageBytes);
    reads.push_back(page_request(protocol::kFsPageReadReq, 200 + p, handle,
                                 uint64_t{p} * kTestPageBytes, in.frame(p), kTestPageBytes));
  }
  std::vector<Signal> answers = fs.exchange(std::move(reads));
  EXPECT_EQ(answers.size(), kTestPages + 1);
  for (Signal& answer : answers) {
    Result<FsPageConf> conf = FsPageConf::from_signal(answer);
    EXPECT_TRUE(conf.ok()) << answer.describe();
    if (!conf.ok()) continue;
    const uint32_t p = conf->user_ref - 200;
    if (p == kTestPages) {
      EXPECT_EQ(conf->bytes, 0u);  // past the end: zeros
      for (uint32_t i = 0; i < kTestPageBytes; i += 512) EXPECT_EQ(in.frame(p)[i], 0) << i;
    } else {
      EXPECT_EQ(conf->bytes, kTestPageBytes);
      EXPECT_EQ(std::memcmp(in.frame(p), out.frame(p), kTestPageBytes), 0) << "page " << p;
    }
  }
  contract::close_ok(fs, handle);
  std::ifstream file(fs.root() + "/dd/data_1.dat", std::ios::binary);
  std::vector<char> on_disk((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(on_disk.size(), size_t{kTestPages} * kTestPageBytes);
  if (on_disk.size() == size_t{kTestPages} * kTestPageBytes) {
    EXPECT_EQ(std::memcmp(on_disk.data(), out.bytes, on_disk.size()), 0);
  }
  return open->page_io;
}

TEST(RealFileSystemPageIo, DirectAioWhereTheFileSystemAllowsIt) {
  RealFs fs;
  const FsPageIoPath path = page_round_trip(fs);
  const FileSystemStats stats = fs.block().stats();
  if (path == FsPageIoPath::kBuffered) {
    GTEST_SKIP() << "the test directory (" << fs.root()
                 << ") refuses O_DIRECT: the buffered fallback was used and checked";
  }
  if (!fs.block().aio_available()) {
    EXPECT_EQ(path, FsPageIoPath::kDirectThreads);
    GTEST_SKIP() << "this kernel refuses libaio contexts: O_DIRECT on the IO threads was checked";
  }
  EXPECT_EQ(path, FsPageIoPath::kDirectAio);
  EXPECT_EQ(stats.page_ios_aio, 2u * kTestPages + 1);
  EXPECT_EQ(stats.page_ios_threads, 0u);
}

TEST(RealFileSystemPageIo, FallbackToTheIoThreadsWithoutDirectIo) {
  RealFs fs(RealFsOptions{.page_io_direct = false, .page_io_aio = false});
  EXPECT_EQ(page_round_trip(fs), FsPageIoPath::kBuffered);
  EXPECT_FALSE(fs.block().aio_available());
  EXPECT_EQ(fs.block().stats().page_ios_aio, 0u);
  EXPECT_EQ(fs.block().stats().page_ios_threads, 2u * kTestPages + 1);
}

TEST(RealFileSystemPageIo, DirectIoOnTheIoThreadsWithoutAio) {
  RealFs fs(RealFsOptions{.page_io_aio = false});
  const FsPageIoPath path = page_round_trip(fs);
  if (path == FsPageIoPath::kBuffered) GTEST_SKIP() << "the test directory refuses O_DIRECT";
  EXPECT_EQ(path, FsPageIoPath::kDirectThreads);
  EXPECT_EQ(fs.block().stats().page_ios_threads, 2u * kTestPages + 1);
}

TEST(RealFileSystemPageIo, CloseWaitsForPageIoAndSyncAfterIsAnswered) {
  RealFs fs;
  const uint32_t handle =
      contract::open_ok(fs, "p.dat", kFsRead | kFsWrite | kFsCreate | kFsDirectIo);
  Frames frames(kTestPages);
  std::vector<Signal> requests;
  for (uint32_t p = 0; p < kTestPages; ++p) {
    std::memset(frames.frame(p), static_cast<int>(p + 1), kTestPageBytes);
    requests.push_back(page_request(protocol::kFsPageWriteReq, 10 + p, handle,
                                    uint64_t{p} * kTestPageBytes, frames.frame(p), kTestPageBytes,
                                    p == 0 ? kFsSyncAfter : 0));
  }
  requests.push_back(FsCloseReq{99, handle, 0}.to_signal());
  std::vector<Signal> answers = fs.exchange(std::move(requests));
  ASSERT_EQ(answers.size(), kTestPages + 1);
  for (size_t i = 0; i + 1 < answers.size(); ++i) {
    EXPECT_EQ(answers[i].id(), protocol::kFsPageConf) << answers[i].describe();
  }
  EXPECT_EQ(answers.back().id(), protocol::kFsCloseConf) << "the close overtook page IO";
  EXPECT_EQ(fs.block().stats().open_files, 0u);
}

TEST(RealFileSystemPageIo, MisalignedOrUnknownHandleIsRefused) {
  RealFs fs;
  const uint32_t handle = contract::open_ok(fs, "q.dat", kFsRead | kFsWrite | kFsCreate | kFsDirectIo);
  Frames frames(2);
  Signal misaligned_memory = fs.call(page_request(protocol::kFsPageReadReq, 1, handle, 0,
                                                  frames.frame(0) + 512, kTestPageBytes));
  contract::expect_ref(misaligned_memory, ErrorCode::kInvalidArgument);
  Signal misaligned_offset = fs.call(
      page_request(protocol::kFsPageReadReq, 2, handle, 100, frames.frame(0), kTestPageBytes));
  contract::expect_ref(misaligned_offset, ErrorCode::kInvalidArgument);
  Signal too_long = fs.call(page_request(protocol::kFsPageReadReq, 3, handle, 0, frames.frame(0),
                                         kFsPageIoBytesMax + 4096));
  contract::expect_ref(too_long, ErrorCode::kInvalidArgument);
  Signal no_handle = fs.call(
      page_request(protocol::kFsPageWriteReq, 4, 999, 0, frames.frame(0), kTestPageBytes));
  contract::expect_ref(no_handle, ErrorCode::kInvalidArgument);
  contract::close_ok(fs, handle);
}

}  // namespace
}  // namespace duo::fs
