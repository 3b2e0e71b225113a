#include "ndb-kernel/fs/file_system_block.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "ndb-kernel/common/logging.h"

namespace duo::fs {

namespace {

using kernel::Signal;
using kernel::SignalId;

// strerror() is not thread-safe; the GNU strerror_r returns the text (possibly a static
// string rather than `buffer`).
std::string os_error_text(int error) {
  char buffer[128];
  return std::string(strerror_r(error, buffer, sizeof buffer));
}

Signal fs_ref(uint32_t user_ref, ErrorCode code, int error, const std::string& what) {
  std::string message = what;
  if (error != 0) message += ": " + os_error_text(error);
  return FsRef{user_ref, code, static_cast<uint32_t>(error), std::move(message)}.to_signal();
}

// The FS_REF for a failed system call `operation` on `path` (errno `error`).
Signal os_ref(uint32_t user_ref, const char* operation, const std::string& path, int error) {
  return fs_ref(user_ref, ErrorCode::kIoError, error, std::string(operation) + " '" + path + "'");
}

// Calls `call` again while it fails with EINTR (a signal interrupted the system call).
template <typename Call>
auto retry_on_interrupt(Call call) {
  for (;;) {
    auto result = call();
    if (result >= 0 || errno != EINTR) return result;
  }
}

// fsync of a directory makes the creation or removal of its entries durable.
int sync_directory(const std::string& path) {
  const int fd =
      retry_on_interrupt([&] { return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (fd < 0) return errno;
  const int result = retry_on_interrupt([&] { return ::fsync(fd); });
  const int error = result < 0 ? errno : 0;
  ::close(fd);
  return error;
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

}  // namespace

Result<std::unique_ptr<FileSystemBlock>> FileSystemBlock::create(FileSystemOptions options,
                                                                 CompletionSink sink) {
  if (options.directory.empty()) {
    return Status(ErrorCode::kConfigError, "file system directory is empty");
  }
  if (options.io_threads < 1 || options.io_threads > 64) {
    return Status(ErrorCode::kConfigError, "file system IO threads must be 1..64");
  }
  if (options.open_files_max < 1 || options.open_files_max > 65535) {
    return Status(ErrorCode::kConfigError, "open files max must be 1..65535");
  }
  if (options.queued_requests_max < 1) {
    return Status(ErrorCode::kConfigError, "queued requests max must be at least 1");
  }
  if (options.aio_depth < 1 || options.aio_depth > 65536) {
    return Status(ErrorCode::kConfigError, "AIO depth must be 1..65536");
  }
  if (!sink) return Status(ErrorCode::kInvalidArgument, "file system block needs a sink");
  return std::make_unique<FileSystemBlock>(std::move(options), std::move(sink));
}

FileSystemBlock::FileSystemBlock(FileSystemOptions options, CompletionSink sink)
    : Block("file_system", protocol::kFileSystemBlock),
      options_([&] {
        options.io_threads = std::clamp<uint32_t>(options.io_threads, 1, 64);
        options.open_files_max = std::clamp<uint32_t>(options.open_files_max, 1, 65535);
        options.queued_requests_max = std::max<uint32_t>(options.queued_requests_max, 1);
        return std::move(options);
      }()),
      sink_(std::move(sink)) {
  on(protocol::kFsOpenReq, &FileSystemBlock::on_open);
  on(protocol::kFsWriteReq, &FileSystemBlock::on_write);
  on(protocol::kFsReadReq, &FileSystemBlock::on_read);
  on(protocol::kFsSyncReq, &FileSystemBlock::on_sync);
  on(protocol::kFsCloseReq, &FileSystemBlock::on_close);
  on(protocol::kFsRemoveReq, &FileSystemBlock::on_remove);
  on(protocol::kFsListReq, &FileSystemBlock::on_list);
  on(protocol::kFsPageReadReq, &FileSystemBlock::on_page_io);
  on(protocol::kFsPageWriteReq, &FileSystemBlock::on_page_io);
  if (options_.page_io_aio) {
    Result<std::unique_ptr<AioEngine>> aio =
        AioEngine::create(std::max<uint32_t>(options_.aio_depth, 1),
                          [this](uint64_t cookie, int64_t result) { on_aio_complete(cookie, result); });
    if (aio.ok()) {
      aio_ = std::move(aio).value();
    } else {
      DUO_LOG(WARNING, "file_system") << "libaio unavailable (" << aio.status().message()
                                      << "): page IO runs on the IO threads";
    }
  }
  on(protocol::kFsAllocReq, &FileSystemBlock::on_alloc);
  io_threads_.reserve(options_.io_threads);
  for (uint32_t i = 0; i < options_.io_threads; ++i) {
    io_threads_.emplace_back([this] { run_io_thread(); });
  }
}

FileSystemBlock::~FileSystemBlock() {
  stop();
  for (const auto& file : files_) {
    if (file != nullptr && file->fd >= 0) ::close(file->fd);
  }
}

void FileSystemBlock::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_requested_.store(true, std::memory_order_release);
  // Page IO in flight in the kernel completes (its answers are dropped: stopping).
  if (aio_ != nullptr) aio_->stop();
  work_cv_.notify_all();
  for (std::thread& thread : io_threads_) thread.join();
  io_threads_.clear();
}

FileSystemStats FileSystemBlock::stats() const {
  FileSystemStats stats;
  stats.requests = requests_.load(std::memory_order_relaxed);
  stats.refused_busy = refused_busy_.load(std::memory_order_relaxed);
  stats.answer_retries = answer_retries_.load(std::memory_order_relaxed);
  stats.answers_dropped = answers_dropped_.load(std::memory_order_relaxed);
  stats.page_ios_aio = page_ios_aio_.load(std::memory_order_relaxed);
  stats.page_ios_threads = page_ios_threads_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mutex_);
  stats.open_files = open_files_;
  return stats;
}

// ---- Admission (the block's runtime thread) ----

FileSystemBlock::Request FileSystemBlock::request_of(const Signal& signal, uint32_t user_ref) {
  Request request;
  request.id = signal.id();
  request.requester = signal.sender();
  request.user_ref = user_ref;
  return request;
}

FileSystemBlock::Work FileSystemBlock::file_work(uint32_t handle) {
  Work work;
  work.handle = handle;
  return work;
}

void FileSystemBlock::refuse(const Signal& signal, const Status& status) {
  Status sent = send(signal.sender(), FsRef::of(fs_user_ref(signal), status).to_signal());
  if (!sent.ok()) {
    DUO_BLOCK_LOG(WARNING) << "cannot refuse " << signal.describe() << ": " << sent.to_string();
  }
}

void FileSystemBlock::on_open(Signal& signal) {
  Result<FsOpenReq> req = FsOpenReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Status refused;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (open_files_ >= options_.open_files_max) {
      refused = Status(ErrorCode::kTemporary, "open '" + req->path + "': too many open files (" +
                                                  std::to_string(options_.open_files_max) + ")");
    } else if (queued_requests_ >= options_.queued_requests_max) {
      refused = Status(ErrorCode::kTemporary, "file system request queue is full");
    } else {
      uint32_t handle = 0;
      if (!free_handles_.empty()) {
        handle = free_handles_.back();
        free_handles_.pop_back();
      } else {
        files_.emplace_back();
        handle = static_cast<uint32_t>(files_.size());
      }
      auto file = std::make_unique<OpenFile>();
      file->path = req->path;
      Request request = request_of(signal, req->user_ref);
      request.handle = handle;
      request.flags = req->flags;
      request.path = std::move(req->path);
      file->pending.push_back(std::move(request));
      files_[handle - 1] = std::move(file);
      ++open_files_;
      ++queued_requests_;
      ready_.push_back(file_work(handle));
    }
  }
  if (!refused.ok()) {
    refused_busy_.fetch_add(1, std::memory_order_relaxed);
    return refuse(signal, refused);
  }
  requests_.fetch_add(1, std::memory_order_relaxed);
  work_cv_.notify_one();
}

void FileSystemBlock::admit_on_handle(const Signal& signal, Request request) {
  Status refused;
  bool schedule = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint32_t handle = request.handle;
    OpenFile* file = handle >= 1 && handle <= files_.size() ? files_[handle - 1].get() : nullptr;
    if (file == nullptr || file->closing) {
      refused = Status(ErrorCode::kInvalidArgument,
                       "file handle " + std::to_string(handle) + " is not open");
    } else if (queued_requests_ >= options_.queued_requests_max) {
      refused = Status(ErrorCode::kTemporary, "file system request queue is full");
    } else {
      if (request.id == protocol::kFsCloseReq) file->closing = true;
      schedule = !file->busy && file->pending.empty();
      file->pending.push_back(std::move(request));
      ++queued_requests_;
      if (schedule) ready_.push_back(file_work(handle));
    }
  }
  if (!refused.ok()) {
    if (refused.is(ErrorCode::kTemporary)) refused_busy_.fetch_add(1, std::memory_order_relaxed);
    return refuse(signal, refused);
  }
  requests_.fetch_add(1, std::memory_order_relaxed);
  if (schedule) work_cv_.notify_one();
}

void FileSystemBlock::admit_path_request(const Signal& signal, Request request) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queued_requests_ >= options_.queued_requests_max) {
      refused_busy_.fetch_add(1, std::memory_order_relaxed);
      // Refusing under the lock is fine: send() only queues.
      return refuse(signal, Status(ErrorCode::kTemporary, "file system request queue is full"));
    }
    ++queued_requests_;
    Work work;
    work.request = std::move(request);
    ready_.push_back(std::move(work));
  }
  requests_.fetch_add(1, std::memory_order_relaxed);
  work_cv_.notify_one();
}

void FileSystemBlock::on_write(Signal& signal) {
  Result<FsWriteReq> req = FsWriteReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Request request = request_of(signal, req->user_ref);
  request.handle = req->handle;
  request.flags = req->flags;
  request.offset = req->offset;
  request.data = std::move(req->data);
  admit_on_handle(signal, std::move(request));
}

void FileSystemBlock::on_read(Signal& signal) {
  Result<FsReadReq> req = FsReadReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Request request = request_of(signal, req->user_ref);
  request.handle = req->handle;
  request.offset = req->offset;
  request.length = req->length;
  admit_on_handle(signal, std::move(request));
}

void FileSystemBlock::on_sync(Signal& signal) {
  Result<FsSyncReq> req = FsSyncReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Request request = request_of(signal, req->user_ref);
  request.handle = req->handle;
  admit_on_handle(signal, std::move(request));
}

void FileSystemBlock::on_close(Signal& signal) {
  Result<FsCloseReq> req = FsCloseReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Request request = request_of(signal, req->user_ref);
  request.handle = req->handle;
  request.flags = req->flags;
  admit_on_handle(signal, std::move(request));
}

void FileSystemBlock::on_remove(Signal& signal) {
  Result<FsRemoveReq> req = FsRemoveReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Request request = request_of(signal, req->user_ref);
  request.flags = req->flags;
  request.path = std::move(req->path);
  admit_path_request(signal, std::move(request));
}

void FileSystemBlock::on_alloc(Signal& signal) {
  Result<FsAllocReq> req = FsAllocReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Request request = request_of(signal, req->user_ref);
  request.offset = req->size_bytes;
  request.flags = static_cast<uint32_t>(req->base);
  request.path = std::move(req->path);
  admit_path_request(signal, std::move(request));
}

void FileSystemBlock::on_list(Signal& signal) {
  Result<FsListReq> req = FsListReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Request request = request_of(signal, req->user_ref);
  request.path = std::move(req->path);
  admit_path_request(signal, std::move(request));
}

void FileSystemBlock::on_page_io(Signal& signal) {
  Result<FsPageReq> req = FsPageReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Request request = request_of(signal, req->user_ref);
  request.handle = req->handle;
  request.offset = req->offset;
  request.length = req->length;
  request.flags = req->flags;
  request.frame = req->frame;
  const bool write = req->is_write();
  Status refused;
  int fd = -1;
  bool use_aio = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint32_t handle = request.handle;
    OpenFile* file = handle >= 1 && handle <= files_.size() ? files_[handle - 1].get() : nullptr;
    if (file == nullptr || file->closing || file->fd < 0) {
      refused = Status(ErrorCode::kInvalidArgument,
                       "file handle " + std::to_string(handle) + " is not open");
    } else if (queued_requests_ >= options_.queued_requests_max) {
      refused = Status(ErrorCode::kTemporary, "file system request queue is full");
    } else {
      ++queued_requests_;
      ++file->page_ios_in_flight;
      fd = file->fd;
      request.path = file->path;
      // A write that must be synced needs fdatasync after it: the IO threads do both.
      use_aio = file->page_io == FsPageIoPath::kDirectAio && aio_ != nullptr &&
                !(write && (request.flags & kFsSyncAfter) != 0);
    }
  }
  if (!refused.ok()) {
    if (refused.is(ErrorCode::kTemporary)) refused_busy_.fetch_add(1, std::memory_order_relaxed);
    return refuse(signal, refused);
  }
  requests_.fetch_add(1, std::memory_order_relaxed);
  if (use_aio) {
    auto io = std::make_unique<AioPageIo>(AioPageIo{request, request.path});
    Status submitted = aio_->submit(fd, write, request.frame, request.length, request.offset,
                                    reinterpret_cast<uintptr_t>(io.get()));
    if (submitted.ok()) {
      io.release();  // owned by the kernel's IO until on_aio_complete
      return;
    }
    if (!submitted.is(ErrorCode::kTemporary)) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --queued_requests_;
        finish_page_io_locked(request.handle);
      }
      return refuse(signal, submitted);
    }
    // The AIO queue is full: the IO threads take it.
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Work work;
    work.handle = request.handle;
    work.page = true;
    work.fd = fd;
    work.request = std::move(request);
    ready_.push_back(std::move(work));
  }
  work_cv_.notify_one();
}

void FileSystemBlock::finish_page_io_locked(uint32_t handle) {
  // A file with page IO in flight is never freed: its close waits (close_deferred).
  OpenFile& file = *files_[handle - 1];
  --file.page_ios_in_flight;
  if (file.page_ios_in_flight == 0 && file.close_deferred && !file.busy) {
    file.close_deferred = false;
    ready_.push_back(file_work(handle));
    work_cv_.notify_one();
  }
}

void FileSystemBlock::on_aio_complete(uint64_t cookie, int64_t result) {
  std::unique_ptr<AioPageIo> io(reinterpret_cast<AioPageIo*>(static_cast<uintptr_t>(cookie)));
  page_ios_aio_.fetch_add(1, std::memory_order_relaxed);
  deliver(io->request.requester, page_io_answer(io->request, io->path, result));
  std::lock_guard<std::mutex> lock(mutex_);
  --queued_requests_;
  finish_page_io_locked(io->request.handle);
}

Signal FileSystemBlock::page_io_answer(const Request& request, const std::string& path,
                                       int64_t result) {
  const bool write = request.id == protocol::kFsPageWriteReq;
  if (result < 0) {
    return os_ref(request.user_ref, write ? "write page of" : "read page of", path,
                  static_cast<int>(-result));
  }
  if (write && result != request.length) {
    return os_ref(request.user_ref, "write page of", path, EIO);  // short write
  }
  if (!write && result < request.length) {
    // Past the end of the file: the rest of the frame reads as zeros.
    std::memset(request.frame + result, 0, request.length - static_cast<size_t>(result));
  }
  return FsPageConf{request.user_ref, static_cast<uint32_t>(result)}.to_signal();
}

Signal FileSystemBlock::run_page_io(const Request& request, const std::string& path, int fd) {
  page_ios_threads_.fetch_add(1, std::memory_order_relaxed);
  const bool write = request.id == protocol::kFsPageWriteReq;
  size_t done = 0;
  while (done < request.length) {
    const ssize_t moved = retry_on_interrupt([&] {
      const off_t at = static_cast<off_t>(request.offset + done);
      return write ? ::pwrite(fd, request.frame + done, request.length - done, at)
                   : ::pread(fd, request.frame + done, request.length - done, at);
    });
    if (moved < 0) return page_io_answer(request, path, -errno);
    if (moved == 0) break;  // end of file
    done += static_cast<size_t>(moved);
  }
  if (write && (request.flags & kFsSyncAfter) != 0 &&
      retry_on_interrupt([&] { return ::fdatasync(fd); }) != 0) {
    return os_ref(request.user_ref, "sync", path, errno);
  }
  return page_io_answer(request, path, static_cast<int64_t>(done));
}

// ---- IO threads ----

void FileSystemBlock::run_io_thread() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
    if (stopping_) return;
    Work work = std::move(ready_.front());
    ready_.pop_front();

    if (work.handle == 0) {
      lock.unlock();
      Signal answer = run_path_request(work.request);
      deliver(work.request.requester, std::move(answer));
      lock.lock();
      --queued_requests_;
      continue;
    }

    if (work.page) {
      lock.unlock();
      Signal answer = run_page_io(work.request, work.request.path, work.fd);
      deliver(work.request.requester, std::move(answer));
      lock.lock();
      --queued_requests_;
      finish_page_io_locked(work.handle);
      continue;
    }

    // The OpenFile object stays put while busy (files_ holds it by pointer, and a busy
    // file is never freed), so the reference survives unlocking.
    OpenFile& file = *files_[work.handle - 1];
    if (file.pending.front().id == protocol::kFsCloseReq && file.page_ios_in_flight > 0) {
      file.close_deferred = true;  // the last page IO's answer schedules the close
      continue;
    }
    Request request = std::move(file.pending.front());
    file.pending.pop_front();
    file.busy = true;
    const int fd = file.fd;
    lock.unlock();

    FileResult result;
    if (request.id == protocol::kFsOpenReq) {
      result.answer = open_file(request, work.handle, &result.new_fd, &result.page_io);
      result.file_closed = result.new_fd < 0;
    } else {
      result = run_on_file(request, file.path, fd);
    }

    lock.lock();
    if (result.new_fd >= 0) {
      file.fd = result.new_fd;
      file.page_io = result.page_io;
    }
    if (result.file_closed) {
      file.fd = -1;
      file.closing = true;
    }
    lock.unlock();
    // Answered before the file's next request starts: answers keep the per-file order.
    deliver(request.requester, std::move(result.answer));
    lock.lock();
    --queued_requests_;
    file.busy = false;
    if (!file.pending.empty()) {
      ready_.push_back(file_work(work.handle));
      work_cv_.notify_one();
    } else if (file.closing && file.fd < 0 && file.page_ios_in_flight == 0) {
      files_[work.handle - 1].reset();
      free_handles_.push_back(work.handle);
      --open_files_;
    }
  }
}

void FileSystemBlock::deliver(const kernel::BlockAddress& requester, Signal answer) {
  answer.set_sender(address());
  answer.set_receiver(requester);
  for (;;) {
    Status status = sink_(answer);
    if (status.ok()) return;
    if (!status.is(ErrorCode::kTemporary) || stop_requested_.load(std::memory_order_acquire)) {
      answers_dropped_.fetch_add(1, std::memory_order_relaxed);
      DUO_BLOCK_LOG(WARNING) << "answer " << answer.describe()
                             << " dropped: " << status.to_string();
      return;
    }
    answer_retries_.fetch_add(1, std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.answer_retry_pause_ms));
  }
}

std::string FileSystemBlock::full_path(const std::string& relative) const {
  return relative.empty() ? options_.directory : options_.directory + "/" + relative;
}

Signal FileSystemBlock::open_file(Request& request, uint32_t handle, int* fd_out,
                                  FsPageIoPath* page_io_out) {
  *fd_out = -1;
  *page_io_out = FsPageIoPath::kBuffered;
  const bool page_file = (request.flags & kFsDirectIo) != 0;
  bool direct = page_file && options_.page_io_direct;
  int direct_refused_errno = 0;
  // O_DIRECT where the file system takes it; EINVAL (tmpfs, some overlays) means it
  // does not: the same open without it, and buffered page IO.
  const auto open_maybe_direct = [&](int open_flags, mode_t mode) {
    if (direct) {
      const int fd = retry_on_interrupt(
          [&] { return ::open(full_path(request.path).c_str(), open_flags | O_DIRECT, mode); });
      if (fd >= 0 || errno != EINVAL) return fd;
      direct = false;
      direct_refused_errno = EINVAL;
    }
    return retry_on_interrupt(
        [&] { return ::open(full_path(request.path).c_str(), open_flags, mode); });
  };
  const std::string path = full_path(request.path);
  const bool reads = (request.flags & kFsRead) != 0;
  const bool writes = (request.flags & kFsWrite) != 0;
  int flags = (reads && writes) ? O_RDWR : (writes ? O_WRONLY : O_RDONLY);
  flags |= O_CLOEXEC;
  if ((request.flags & kFsTruncate) != 0) flags |= O_TRUNC;
  int fd = open_maybe_direct(flags, 0);
  if (fd < 0 && errno == ENOENT && (request.flags & kFsCreate) != 0) {
    // Make the missing directories one by one, syncing each new entry's parent, so the
    // file's whole path is durable once the open is answered.
    std::error_code error;
    std::filesystem::create_directories(options_.directory, error);
    if (error)
      return os_ref(request.user_ref, "create directory", options_.directory, error.value());
    std::string directory = options_.directory;
    size_t start = 0;
    for (size_t slash; (slash = request.path.find('/', start)) != std::string::npos;
         start = slash + 1) {
      const std::string parent = directory;
      directory += "/" + request.path.substr(start, slash - start);
      if (::mkdir(directory.c_str(), 0750) == 0) {
        if (const int sync_error = sync_directory(parent); sync_error != 0) {
          return os_ref(request.user_ref, "sync directory", parent, sync_error);
        }
      } else if (errno != EEXIST) {
        return os_ref(request.user_ref, "create directory", directory, errno);
      }
    }
    fd = open_maybe_direct(flags | O_CREAT, 0640);
    if (fd >= 0) {
      if (const int sync_error = sync_directory(parent_of(path)); sync_error != 0) {
        ::close(fd);
        return os_ref(request.user_ref, "sync directory", parent_of(path), sync_error);
      }
    }
  }
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) {
      return fs_ref(request.user_ref, ErrorCode::kNotFound, error, "open '" + request.path + "'");
    }
    return os_ref(request.user_ref, "open", request.path, error);
  }
  struct stat status {};
  if (::fstat(fd, &status) != 0 || S_ISDIR(status.st_mode)) {
    const int error = S_ISDIR(status.st_mode) ? EISDIR : errno;
    ::close(fd);
    return os_ref(request.user_ref, "open", request.path, error);
  }
  *fd_out = fd;
  if (page_file) {
    *page_io_out = !direct ? FsPageIoPath::kBuffered
                           : (aio_ != nullptr ? FsPageIoPath::kDirectAio : FsPageIoPath::kDirectThreads);
    DUO_LOG(INFO, "file_system") << "file '" << request.path << "': page IO uses "
                                 << fs_page_io_path_name(*page_io_out)
                                 << (direct_refused_errno != 0
                                         ? " (the file system refused O_DIRECT: " +
                                               os_error_text(direct_refused_errno) + ")"
                                         : std::string());
  }
  return FsOpenConf{request.user_ref, handle, static_cast<uint64_t>(status.st_size), *page_io_out}
      .to_signal();
}

FileSystemBlock::FileResult FileSystemBlock::run_on_file(Request& request, const std::string& path,
                                                         int fd) {
  FileResult result;
  const uint32_t user_ref = request.user_ref;
  if (fd < 0) {
    // Queued behind an open that failed.
    result.answer = fs_ref(user_ref, ErrorCode::kInvalidArgument, 0,
                           "file handle " + std::to_string(request.handle) + " is not open");
    return result;
  }
  switch (request.id) {
    case protocol::kFsWriteReq: {
      const Bytes& data = request.data;
      size_t done = 0;
      while (done < data.size()) {
        const ssize_t written = retry_on_interrupt([&] {
          return ::pwrite(fd, data.data() + done, data.size() - done,
                          static_cast<off_t>(request.offset + done));
        });
        if (written < 0) {
          result.answer = os_ref(user_ref, "write", path, errno);
          return result;
        }
        done += static_cast<size_t>(written);
      }
      if ((request.flags & kFsSyncAfter) != 0 &&
          retry_on_interrupt([&] { return ::fdatasync(fd); }) != 0) {
        result.answer = os_ref(user_ref, "sync", path, errno);
        return result;
      }
      result.answer = FsWriteConf{user_ref, static_cast<uint32_t>(done)}.to_signal();
      return result;
    }
    case protocol::kFsReadReq: {
      Bytes data(request.length);
      size_t done = 0;
      while (done < data.size()) {
        const ssize_t got = retry_on_interrupt([&] {
          return ::pread(fd, data.data() + done, data.size() - done,
                         static_cast<off_t>(request.offset + done));
        });
        if (got < 0) {
          result.answer = os_ref(user_ref, "read", path, errno);
          return result;
        }
        if (got == 0) break;  // end of file: a short read
        done += static_cast<size_t>(got);
      }
      data.resize(done);
      result.answer = FsReadConf{user_ref, std::move(data)}.to_signal();
      return result;
    }
    case protocol::kFsSyncReq:
      if (retry_on_interrupt([&] { return ::fdatasync(fd); }) != 0) {
        result.answer = os_ref(user_ref, "sync", path, errno);
      } else {
        result.answer = fs_done_signal(protocol::kFsSyncConf, user_ref);
      }
      return result;
    case protocol::kFsCloseReq: {
      // Never retried on EINTR: Linux releases the descriptor whatever close() returns,
      // and a retry could close a descriptor another thread just opened.
      result.file_closed = true;
      if (::close(fd) != 0 && errno != EINTR) {
        result.answer = os_ref(user_ref, "close", path, errno);
        return result;
      }
      if ((request.flags & kFsRemoveAfter) != 0) {
        const std::string full = full_path(path);
        if (::unlink(full.c_str()) != 0 && errno != ENOENT) {
          result.answer = os_ref(user_ref, "remove", path, errno);
          return result;
        }
        if (const int error = sync_directory(parent_of(full)); error != 0) {
          result.answer = os_ref(user_ref, "sync directory of", path, error);
          return result;
        }
      }
      result.answer = fs_done_signal(protocol::kFsCloseConf, user_ref);
      return result;
    }
    default:
      result.answer = fs_ref(user_ref, ErrorCode::kInternal, 0,
                             "unexpected request " + kernel::signal_name(request.id));
      return result;
  }
}

std::string FileSystemBlock::request_path(const Request& request) const {
  uint32_t base = 0;
  if (request.id == protocol::kFsAllocReq) base = request.flags;
  if (request.id == protocol::kFsRemoveReq) {
    base = (request.flags & kFsInDataFiles) != 0   ? 1
           : (request.flags & kFsInUndoFiles) != 0 ? 2
                                                   : 0;
  }
  const std::string& directory = base == 1   ? options_.data_files_directory
                                 : base == 2 ? options_.undo_files_directory
                                             : options_.directory;
  if (directory.empty()) return full_path(request.path);
  return directory + "/" + request.path;
}

Signal FileSystemBlock::allocate_file(const Request& request) {
  const uint32_t user_ref = request.user_ref;
  const std::string full = request_path(request);
  std::error_code error;
  std::filesystem::create_directories(parent_of(full), error);
  if (error) return os_ref(user_ref, "create directory of", request.path, error.value());
  const int fd = retry_on_interrupt(
      [&] { return ::open(full.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640); });
  if (fd < 0) return os_ref(user_ref, "create", request.path, errno);
  // Every failure from here removes the file: a refused allocation leaves nothing.
  const auto fail = [&](const char* operation, int os_error) {
    ::close(fd);
    ::unlink(full.c_str());
    return os_ref(user_ref, operation, request.path, os_error);
  };
  if (request.offset > 0) {
    // posix_fallocate returns the error instead of setting errno.
    int result;
    do {
      result = ::posix_fallocate(fd, 0, static_cast<off_t>(request.offset));
    } while (result == EINTR);
    if (result != 0) return fail("allocate", result);
  }
  if (retry_on_interrupt([&] { return ::fsync(fd); }) < 0) return fail("sync", errno);
  if (::close(fd) != 0) {
    const int close_error = errno;
    ::unlink(full.c_str());
    return os_ref(user_ref, "close", request.path, close_error);
  }
  if (const int sync_error = sync_directory(parent_of(full)); sync_error != 0) {
    ::unlink(full.c_str());
    return os_ref(user_ref, "sync directory of", request.path, sync_error);
  }
  return FsAllocConf{user_ref, request.offset}.to_signal();
}

Signal FileSystemBlock::run_path_request(Request& request) {
  const uint32_t user_ref = request.user_ref;
  const std::string full = request_path(request);
  if (request.id == protocol::kFsAllocReq) return allocate_file(request);
  if (request.id == protocol::kFsRemoveReq) {
    struct stat status {};
    if (::lstat(full.c_str(), &status) != 0) {
      if (errno == ENOENT) return fs_done_signal(protocol::kFsRemoveConf, user_ref);
      return os_ref(user_ref, "remove", request.path, errno);
    }
    if (S_ISDIR(status.st_mode) && (request.flags & kFsRecursive) != 0) {
      std::error_code error;
      std::filesystem::remove_all(full, error);
      if (error) return os_ref(user_ref, "remove", request.path, error.value());
    } else if (S_ISDIR(status.st_mode) ? ::rmdir(full.c_str()) != 0 : ::unlink(full.c_str()) != 0) {
      if (errno != ENOENT) return os_ref(user_ref, "remove", request.path, errno);
    }
    if (const int error = sync_directory(parent_of(full)); error != 0) {
      return os_ref(user_ref, "sync directory of", request.path, error);
    }
    return fs_done_signal(protocol::kFsRemoveConf, user_ref);
  }

  // FS_LISTREQ.
  std::vector<std::string> names;
  DIR* directory = ::opendir(full.c_str());
  if (directory == nullptr) {
    if (errno == ENOENT) return FsListConf{user_ref, {}}.to_signal();
    return os_ref(user_ref, "list", request.path, errno);
  }
  errno = 0;
  while (const dirent* entry = ::readdir(directory)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    bool is_directory = entry->d_type == DT_DIR;
    if (entry->d_type == DT_UNKNOWN) {
      struct stat status {};
      is_directory = ::lstat((full + "/" + name).c_str(), &status) == 0 && S_ISDIR(status.st_mode);
    }
    names.push_back(is_directory ? name + "/" : name);
    errno = 0;
  }
  const int error = errno;
  ::closedir(directory);
  if (error != 0) return os_ref(user_ref, "list", request.path, error);
  std::sort(names.begin(), names.end());
  if (FsListConf::encoded_size(names) > kernel::kSectionBytesMax) {
    return fs_ref(user_ref, ErrorCode::kNotSupported, 0,
                  "list '" + request.path + "': " + std::to_string(names.size()) +
                      " names do not fit one signal");
  }
  return FsListConf{user_ref, std::move(names)}.to_signal();
}

}  // namespace duo::fs
