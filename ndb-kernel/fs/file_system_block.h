// FileSystemBlock: the node's real file system block (NDB's NDBFS) for
// kernel::ThreadRuntime — the one place of the data node where blocks' file IO happens.
//
// Kernel blocks may not touch files (runtime/kernel_tidy.py); they send the FS_* requests
// of fs/fs_messages.h to {node, protocol::kFileSystemBlock, 0} and get the answer back as
// a signal. This block's handlers only validate a request and queue it; a pool of IO
// threads the block owns (NDB's DiskIOThreadPool) does the blocking system calls
// (open/pread/pwrite/fdatasync/unlink/readdir, with O_CLOEXEC and EINTR retried) and
// hands each answer to the completion sink, which puts it back into the runtime (datad
// passes one calling ThreadRuntime::try_send_from_outside). A sink that answers
// kTemporary (the requester's queue is full) keeps the answer, and the IO thread retries
// after a short pause: an answer is never lost while the block runs.
//
// Ordering: each open file has its own FIFO of requests, and at most one IO thread works
// on a file at a time, so requests on one handle execute and are answered in the order
// received; different files, and path requests (open, remove, list), run in parallel.
//
// Bounds: open files (open_files_max, FS_REF kTemporary beyond) and requests admitted
// but not yet answered (queued_requests_max, FS_REF kTemporary beyond).
//
// Page IO (FS_PAGE_READREQ / FS_PAGE_WRITEREQ): straight between the file and the
// requester's frame, outside the handle's FIFO. A handle opened with kFsDirectIo is
// opened with O_DIRECT (if the file system refuses it — tmpfs, some overlay file
// systems — without) and its page IO goes through libaio (AioEngine) when the kernel
// gave the block an AIO context, else through the IO threads; each file's path is
// logged at open and answered in FS_OPENCONF. A page write with kFsSyncAfter, and page
// IO the AIO queue has no room for, run on the IO threads. FS_CLOSEREQ waits for the
// handle's page IO.
//
// This file uses threads and files on purpose; it lives in fs/, outside the directories
// kernel_tidy.py scans. Keep it there.
//
// Thread-safety: the handlers run on the block's runtime thread; IO threads share the
// request queues and the handle table with it under mutex_. stop() and the destructor
// are for the thread that owns the runtime, after the runtime stopped delivering to
// this block (ThreadRuntime destroys blocks only after joining its threads). stats() is
// safe from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ndb-kernel/fs/aio_engine.h"
#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/runtime/block.h"

namespace duo::fs {

// Puts an answer signal (receiver and sender filled in) into the runtime. On OK the
// signal was taken; on kTemporary it must be left intact (it is retried); any other
// error drops the answer (logged). Called concurrently from every IO thread.
using CompletionSink = std::function<Status(kernel::Signal&)>;

struct FileSystemOptions {
  // The node's file system directory (datad: <FileSystemPath>/ndb_<id>_fs). Created,
  // with its parents, by the first request that creates something.
  std::string directory;
  // Disk-data files' directories (NDB's FileSystemPathDataFiles / FileSystemPathUndoFiles
  // + ndb_<id>_fs); "" = `directory`. Created by the first file made in them.
  std::string data_files_directory = {};
  std::string undo_files_directory = {};
  // IO threads (NDB's DiskIOThreadPool). 1..64.
  uint32_t io_threads = 2;
  // Open files at once; FS_OPENREQ beyond is kTemporary. 1..65535.
  uint32_t open_files_max = kFsOpenFilesDefault;
  // Requests admitted and not yet answered (all files together); beyond is kTemporary.
  // Each holds at most one write section (64 KiB), so the default bounds the block's
  // buffered write data at 256 MiB in the worst case.
  uint32_t queued_requests_max = 4096;
  // Pause of an IO thread before retrying an answer the sink refused as kTemporary.
  uint32_t answer_retry_pause_ms = 1;
  // Page IO on kFsDirectIo handles: O_DIRECT when the file system allows it, and libaio
  // (with at most aio_depth IOs in flight) when the kernel allows it. Off: the IO
  // threads (tests force the fallback this way).
  bool page_io_direct = true;
  bool page_io_aio = true;
  uint32_t aio_depth = 256;
};

struct FileSystemStats {
  uint64_t requests = 0;         // admitted to the IO threads
  uint64_t refused_busy = 0;     // FS_REF kTemporary at admission (queue or open files)
  uint64_t answer_retries = 0;   // the sink answered kTemporary; retried
  uint64_t answers_dropped = 0;  // the sink failed otherwise, or the block stopped
  uint64_t open_files = 0;       // handles allocated now
  uint64_t page_ios_aio = 0;      // page requests done through libaio
  uint64_t page_ios_threads = 0;  // page requests done on the IO threads
};

class FileSystemBlock final : public kernel::Block {
 public:
  // Checks `options` (kConfigError for a value out of range), then constructs.
  static Result<std::unique_ptr<FileSystemBlock>> create(FileSystemOptions options,
                                                         CompletionSink sink);
  // Starts the IO threads. Values out of range are clamped into it (create() refuses
  // them instead).
  FileSystemBlock(FileSystemOptions options, CompletionSink sink);
  // stop(), then closes every file still open.
  ~FileSystemBlock() override;

  // Stops the IO threads after their current request and joins them; requests still
  // queued are not answered. Idempotent.
  void stop();
  FileSystemStats stats() const;
  // Whether page IO may use libaio (the kernel gave an AIO context and it is enabled).
  bool aio_available() const { return aio_ != nullptr; }

 private:
  // One admitted request, decoded; which fields matter depends on `id`.
  struct Request {
    kernel::SignalId id = 0;
    kernel::BlockAddress requester;
    uint32_t user_ref = 0;
    uint32_t handle = 0;
    uint32_t flags = 0;
    uint64_t offset = 0;
    uint32_t length = 0;
    uint8_t* frame = nullptr;  // page IO: the requester's memory
    std::string path;
    Bytes data;
  };
  // An allocated handle. fd and access are written only by the IO thread that runs
  // the file's requests (busy), under mutex_, and read by the next one.
  struct OpenFile {
    std::string path;  // relative, for messages and kFsRemoveAfter
    int fd = -1;
    bool busy = false;     // an IO thread is running the front request
    bool closing = false;  // FS_CLOSEREQ received or open failed: admit nothing more
    std::deque<Request> pending;
    FsPageIoPath page_io = FsPageIoPath::kBuffered;
    uint32_t page_ios_in_flight = 0;
    bool close_deferred = false;  // the close waits for page_ios_in_flight to drain
  };
  // What an IO thread picks up: a path request, or the front request of a file.
  struct Work {
    uint32_t handle = 0;  // 0: `request` is a path request
    bool page = false;    // `request` is page IO on `handle` (outside its FIFO)
    int fd = -1;          // page IO: the handle's descriptor
    Request request;
  };
  // Page IO handed to libaio, until its completion.
  struct AioPageIo {
    Request request;
    std::string path;
  };
  // Result of running one request on a file.
  struct FileResult {
    kernel::Signal answer;
    int new_fd = -1;           // FS_OPENREQ that succeeded
    FsPageIoPath page_io = FsPageIoPath::kBuffered;
    bool file_closed = false;  // open failed or FS_CLOSEREQ ran: the handle is done
  };

  void on_open(kernel::Signal& signal);
  void on_write(kernel::Signal& signal);
  void on_read(kernel::Signal& signal);
  void on_sync(kernel::Signal& signal);
  void on_close(kernel::Signal& signal);
  void on_remove(kernel::Signal& signal);
  void on_list(kernel::Signal& signal);
  void on_page_io(kernel::Signal& signal);
  void on_alloc(kernel::Signal& signal);

  // A request answering `signal`'s sender, with its id and user_ref.
  static Request request_of(const kernel::Signal& signal, uint32_t user_ref);
  // The work item "run the front request of file `handle`".
  static Work file_work(uint32_t handle);
  // Queues a request on an open handle; FS_REF if the handle is not open or the block
  // is full.
  void admit_on_handle(const kernel::Signal& signal, Request request);
  // Queues a path request (remove, list).
  void admit_path_request(const kernel::Signal& signal, Request request);
  // Answers `signal`'s sender with FS_REF from the block thread.
  void refuse(const kernel::Signal& signal, const Status& status);

  void run_io_thread();
  // `path` is the file's (constant) relative path, for messages and kFsRemoveAfter.
  FileResult run_on_file(Request& request, const std::string& path, int fd);
  kernel::Signal run_path_request(Request& request);
  kernel::Signal open_file(Request& request, uint32_t handle, int* fd_out,
                           FsPageIoPath* page_io_out);
  // Page IO on the calling IO thread (pread/pwrite, fdatasync for kFsSyncAfter).
  kernel::Signal run_page_io(const Request& request, const std::string& path, int fd);
  // The answer to page IO that transferred `result` bytes (or failed with -errno).
  static kernel::Signal page_io_answer(const Request& request, const std::string& path,
                                       int64_t result);
  void on_aio_complete(uint64_t cookie, int64_t result);
  // A page request of `handle` is answered: lets a deferred close run. Under mutex_.
  void finish_page_io_locked(uint32_t handle);
  // FS_ALLOCREQ on an IO thread (fs_messages.h FsAllocReq).
  kernel::Signal allocate_file(const Request& request);
  // Hands `answer` (addressed to `requester`) to the sink, retrying kTemporary.
  void deliver(const kernel::BlockAddress& requester, kernel::Signal answer);
  std::string full_path(const std::string& relative) const;
  // The full path of a path request's file: in the node's directory, or in a disk-data
  // directory (FS_ALLOCREQ's base, FS_REMOVEREQ's kFsIn* flag).
  std::string request_path(const Request& request) const;

  // Constant after construction.
  const FileSystemOptions options_;
  const CompletionSink sink_;

  mutable std::mutex mutex_;
  std::condition_variable work_cv_;
  // Protected by mutex_.
  std::deque<Work> ready_;
  std::vector<std::unique_ptr<OpenFile>> files_;  // index handle - 1; null: free
  std::vector<uint32_t> free_handles_;            // freed handles, reused last-in first
  uint32_t open_files_ = 0;
  uint32_t queued_requests_ = 0;
  bool stopping_ = false;

  // Started by the constructor, joined by stop(): the owning thread only.
  std::vector<std::thread> io_threads_;
  // Null when libaio is off or refused. Its callback runs on its own thread.
  std::unique_ptr<AioEngine> aio_;

  // Read without the lock: by deliver()'s retry loop, and by stats().
  std::atomic<bool> stop_requested_{false};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> refused_busy_{0};
  std::atomic<uint64_t> answer_retries_{0};
  std::atomic<uint64_t> answers_dropped_{0};
  std::atomic<uint64_t> page_ios_aio_{0};
  std::atomic<uint64_t> page_ios_threads_{0};
};

}  // namespace duo::fs
