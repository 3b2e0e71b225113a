// AioEngine: Linux native asynchronous IO (libaio: io_setup, io_submit, io_getevents) for
// the file system block's page IO on O_DIRECT files. Submitting does not block (the
// kernel queues the IO to the device); one completion thread reaps finished IOs and
// hands each to the completion callback.
//
// Bounds: at most `depth` IOs in flight; submit() beyond answers kTemporary (the caller
// then uses its IO threads instead).
//
// This file uses threads and system calls on purpose; it lives in fs/, outside the
// directories kernel_tidy.py scans.
//
// Thread-safety: submit() may be called from any thread; the callback runs on the
// completion thread. stop() and the destructor are for the owner, once no submit()
// can come any more.
#pragma once

#include <libaio.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ndb-kernel/common/status.h"

namespace duo::fs {

class AioEngine {
 public:
  // `result` is the byte count transferred, or -errno.
  using Completion = std::function<void(uint64_t cookie, int64_t result)>;

  // kNotSupported (with the errno text) if the kernel refuses an AIO context (io_setup:
  // ENOSYS on kernels or sandboxes without AIO, EAGAIN past fs.aio-max-nr).
  static Result<std::unique_ptr<AioEngine>> create(uint32_t depth, Completion on_complete);
  AioEngine(io_context_t context, uint32_t depth, Completion on_complete);
  ~AioEngine();  // stop(), then waits for the IOs in flight and frees the context
  AioEngine(const AioEngine&) = delete;
  AioEngine& operator=(const AioEngine&) = delete;

  // Starts reading (or writing) `length` bytes at `offset` of `fd` into (from) `buffer`.
  // OK: the callback gets `cookie` later. kTemporary: no room now (nothing started);
  // kIoError: io_submit refused it (nothing started).
  Status submit(int fd, bool write, uint8_t* buffer, size_t length, uint64_t offset,
                uint64_t cookie);
  // Stops the completion thread (after it delivered what had completed) and joins it.
  void stop();
  uint32_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }

 private:
  void run_completions();

  // Constant after construction.
  const io_context_t context_;
  const Completion on_complete_;

  std::mutex mutex_;
  // Protected by mutex_: the control blocks (one per IO in flight) and their cookies.
  std::vector<iocb> blocks_;
  std::vector<uint64_t> cookies_;
  std::vector<uint32_t> free_blocks_;

  std::atomic<uint32_t> in_flight_{0};
  std::atomic<bool> stopping_{false};
  std::thread completion_thread_;  // started by the constructor, joined by stop()
};

}  // namespace duo::fs
