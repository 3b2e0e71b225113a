#include "ndb-kernel/fs/aio_engine.h"

#include <time.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace duo::fs {

namespace {

std::string errno_text(int error) {
  char buffer[128];
  return std::string(strerror_r(error, buffer, sizeof buffer));
}

constexpr int kReapBatch = 64;
constexpr long kReapWaitNs = 20'000'000;  // how soon stop() is noticed when idle

}  // namespace

Result<std::unique_ptr<AioEngine>> AioEngine::create(uint32_t depth, Completion on_complete) {
  if (depth == 0) return Status(ErrorCode::kConfigError, "AIO depth must be at least 1");
  io_context_t context{};
  // libaio returns -errno instead of setting errno.
  const int result = io_setup(static_cast<int>(depth), &context);
  if (result < 0) {
    return Status(ErrorCode::kNotSupported, "io_setup refused: " + errno_text(-result));
  }
  return std::make_unique<AioEngine>(context, depth, std::move(on_complete));
}

AioEngine::AioEngine(io_context_t context, uint32_t depth, Completion on_complete)
    : context_(context), on_complete_(std::move(on_complete)), blocks_(depth), cookies_(depth) {
  free_blocks_.reserve(depth);
  for (uint32_t i = depth; i > 0; --i) free_blocks_.push_back(i - 1);
  completion_thread_ = std::thread([this] { run_completions(); });
}

AioEngine::~AioEngine() {
  stop();
  // io_destroy waits for the IOs still in flight (their buffers belong to callers who
  // were told nothing yet; the owner stops only once nobody waits any more).
  io_destroy(context_);
}

Status AioEngine::submit(int fd, bool write, uint8_t* buffer, size_t length, uint64_t offset,
                         uint64_t cookie) {
  uint32_t slot;
  iocb* block;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_blocks_.empty()) return Status(ErrorCode::kTemporary, "AIO queue full");
    slot = free_blocks_.back();
    free_blocks_.pop_back();
    block = &blocks_[slot];
    cookies_[slot] = cookie;
  }
  if (write) {
    io_prep_pwrite(block, fd, buffer, length, static_cast<long long>(offset));
  } else {
    io_prep_pread(block, fd, buffer, length, static_cast<long long>(offset));
  }
  block->data = reinterpret_cast<void*>(static_cast<uintptr_t>(slot));
  in_flight_.fetch_add(1, std::memory_order_relaxed);
  iocb* list[1] = {block};
  int result;
  do {
    result = io_submit(context_, 1, list);
  } while (result == -EINTR);
  if (result == 1) return Status::OK();
  in_flight_.fetch_sub(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_blocks_.push_back(slot);
  }
  if (result == -EAGAIN) return Status(ErrorCode::kTemporary, "io_submit: " + errno_text(EAGAIN));
  return Status(ErrorCode::kIoError, "io_submit: " + errno_text(result < 0 ? -result : EIO));
}

void AioEngine::stop() {
  stopping_.store(true, std::memory_order_release);
  if (completion_thread_.joinable()) completion_thread_.join();
}

void AioEngine::run_completions() {
  io_event events[kReapBatch];
  // Keep reaping after stop() while IOs are in flight: their answers are owed.
  while (!stopping_.load(std::memory_order_acquire) ||
         in_flight_.load(std::memory_order_acquire) > 0) {
    timespec wait{0, kReapWaitNs};
    const int count = io_getevents(context_, 1, kReapBatch, events, &wait);
    if (count < 0) {
      if (count == -EINTR) continue;
      break;  // the context is unusable; io_destroy settles what is left
    }
    for (int i = 0; i < count; ++i) {
      const uint32_t slot =
          static_cast<uint32_t>(reinterpret_cast<uintptr_t>(events[i].obj->data));
      // res holds the byte count or -errno (an unsigned long in the ABI).
      const int64_t result = static_cast<int64_t>(static_cast<long>(events[i].res));
      uint64_t cookie;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        cookie = cookies_[slot];
        free_blocks_.push_back(slot);
      }
      on_complete_(cookie, result);
      in_flight_.fetch_sub(1, std::memory_order_release);
    }
  }
}

}  // namespace duo::fs
