// The file system contract of fs/fs_messages.h as test cases, written once and run
// against both implementations: the real FileSystemBlock on a ThreadRuntime
// (fs/file_system_block_test.cc) and the simulated SimFileSystem in the Simulator
// (sim/sim_file_system_test.cc). A test fixture supplies an FsDriver (how to get
// requests to the block under test and its answers back) and instantiates every case
// with DUO_FS_CONTRACT_TESTS(Fixture).
//
// Cases fail through googletest's EXPECT/ADD_FAILURE, so they run inside a TEST.
// This header follows the block rules (no threads, clocks, files or unseeded
// randomness): the simulator tests include it.
//
// Thread-safety: FsAnswerCollector is a block (its handler runs on its runtime thread)
// whose answers a test thread reads under its mutex; the cases run on one test thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/runtime/block.h"

namespace duo::fs::contract {

// Block number of the test requester, far from real block numbers.
inline constexpr uint16_t kFsTestClientBlock = 4090;

// Receives every FS answer and keeps it, in arrival order, for the test thread.
class FsAnswerCollector final : public kernel::Block {
 public:
  FsAnswerCollector();
  size_t count() const;
  // The answers received so far (then forgotten).
  std::vector<Signal> take();

 private:
  void on_answer(Signal& signal);

  mutable std::mutex mutex_;
  std::vector<Signal> answers_;  // guarded by mutex_
};

// How a test reaches the file system block under test.
class FsDriver {
 public:
  virtual ~FsDriver() = default;
  // Sends `requests` in order, from the collector's address to the node's file system
  // block, without waiting in between (so they queue up), and returns their answers in
  // arrival order once every one arrived. A missing answer fails the test (ADD_FAILURE)
  // and what did arrive is returned.
  virtual std::vector<Signal> exchange(std::vector<Signal> requests) = 0;
  // The open_files_max the block under test was built with.
  virtual uint32_t open_files_max() const = 0;

  // One request, one answer (an empty Signal if none came).
  Signal call(Signal request);
};

// ---- Helpers (each checks its answer with EXPECTs) ----

// Opens `path`; the handle, or 0 after a failure. `size_bytes` gets the file's size.
uint32_t open_ok(FsDriver& fs, const std::string& path, uint32_t flags,
                 uint64_t* size_bytes = nullptr);
void write_ok(FsDriver& fs, uint32_t handle, uint64_t offset, const std::string& bytes,
              uint32_t flags = 0);
std::string read_ok(FsDriver& fs, uint32_t handle, uint64_t offset, uint32_t length);
void sync_ok(FsDriver& fs, uint32_t handle);
void close_ok(FsDriver& fs, uint32_t handle, uint32_t flags = 0);
void remove_ok(FsDriver& fs, const std::string& path, uint32_t flags = 0);
std::vector<std::string> list_ok(FsDriver& fs, const std::string& path);
// Checks that `answer` is an FS_REF with `error` (and `os_errno` unless it is ~0u);
// returns its message.
std::string expect_ref(Signal& answer, ErrorCode error, uint32_t os_errno = ~0u);
// `bytes` as a section.
Bytes bytes_of(const std::string& text);

// ---- The cases ----

void create_write_read_sync_close(FsDriver& fs);
void list_and_remove(FsDriver& fs);
void open_missing_is_not_found(FsDriver& fs);
// FS_ALLOCREQ: the file has its size and reads as zeros, an existing path is EEXIST,
// and it can be removed.
void allocate_creates_zeroed_files(FsDriver& fs);
void bad_paths_are_refused(FsDriver& fs);
void bad_requests_are_refused(FsDriver& fs);
void unknown_handles_are_refused(FsDriver& fs);
void io_errors_are_reported(FsDriver& fs);
void truncate_and_remove_after_close(FsDriver& fs);
void per_handle_order_is_kept(FsDriver& fs);
void many_files_in_parallel(FsDriver& fs);
void page_io_round_trip(FsDriver& fs);
void open_files_are_bounded(FsDriver& fs);
// `requests` random writes/reads/syncs over 16 files, pipelined in batches, checked
// against an in-memory model of the files.
void random_requests_match_a_model(FsDriver& fs, uint64_t seed, int requests);

}  // namespace duo::fs::contract

// One TEST_F per contract case; `Fixture` has a member `FsDriver& driver()`.
#define DUO_FS_CONTRACT_TESTS(Fixture)                                      \
  TEST_F(Fixture, CreateWriteReadSyncClose) {                               \
    ::duo::fs::contract::create_write_read_sync_close(driver());            \
  }                                                                         \
  TEST_F(Fixture, ListAndRemove) {                                          \
    ::duo::fs::contract::list_and_remove(driver());                         \
  }                                                                         \
  TEST_F(Fixture, AllocateCreatesZeroedFiles) {                             \
    ::duo::fs::contract::allocate_creates_zeroed_files(driver());           \
  }                                                                         \
  TEST_F(Fixture, OpenMissingIsNotFound) {                                  \
    ::duo::fs::contract::open_missing_is_not_found(driver());               \
  }                                                                         \
  TEST_F(Fixture, BadPathsAreRefused) {                                     \
    ::duo::fs::contract::bad_paths_are_refused(driver());                   \
  }                                                                         \
  TEST_F(Fixture, BadRequestsAreRefused) {                                  \
    ::duo::fs::contract::bad_requests_are_refused(driver());                \
  }                                                                         \
  TEST_F(Fixture, UnknownHandlesAreRefused) {                               \
    ::duo::fs::contract::unknown_handles_are_refused(driver());             \
  }                                                                         \
  TEST_F(Fixture, IoErrorsAreReported) {                                    \
    ::duo::fs::contract::io_errors_are_reported(driver());                  \
  }                                                                         \
  TEST_F(Fixture, TruncateAndRemoveAfterClose) {                            \
    ::duo::fs::contract::truncate_and_remove_after_close(driver());         \
  }                                                                         \
  TEST_F(Fixture, PerHandleOrderIsKept) {                                   \
    ::duo::fs::contract::per_handle_order_is_kept(driver());                \
  }                                                                         \
  TEST_F(Fixture, ManyFilesInParallel) {                                    \
    ::duo::fs::contract::many_files_in_parallel(driver());                  \
  }                                                                         \
  TEST_F(Fixture, PageIoRoundTrip) {                                        \
    ::duo::fs::contract::page_io_round_trip(driver());                      \
  }                                                                         \
  TEST_F(Fixture, OpenFilesAreBounded) {                                    \
    ::duo::fs::contract::open_files_are_bounded(driver());                  \
  }                                                                         \
  TEST_F(Fixture, RandomRequestsMatchAModel) {                              \
    ::duo::fs::contract::random_requests_match_a_model(driver(), 42, 3000); \
  }
