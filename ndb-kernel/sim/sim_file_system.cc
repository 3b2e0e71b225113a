#include "ndb-kernel/sim/sim_file_system.h"

#include <algorithm>
#include <cerrno>
#include <utility>

namespace duo::sim {

namespace {

using fs::FsAllocReq;
using fs::FsCloseReq;
using fs::FsListConf;
using fs::FsListReq;
using fs::FsOpenConf;
using fs::FsOpenReq;
using fs::FsReadConf;
using fs::FsReadReq;
using fs::FsRef;
using fs::FsRemoveReq;
using fs::FsSyncReq;
using fs::FsWriteConf;
using fs::FsWriteReq;
using kernel::Signal;

Status os_error(ErrorCode code, uint32_t error, const std::string& what, uint32_t* os_errno) {
  *os_errno = error;
  const char* text = "I/O error";
  switch (error) {
    case ENOENT:
      text = "No such file or directory";
      break;
    case EISDIR:
      text = "Is a directory";
      break;
    case ENOTDIR:
      text = "Not a directory";
      break;
    case EBADF:
      text = "Bad file descriptor";
      break;
    case ENOSPC:
      text = "No space left on device";
      break;
    case ENOTEMPTY:
      text = "Directory not empty";
      break;
    default:
      break;
  }
  return Status(code, what + ": " + text + " (simulated)");
}

Status io_error(uint32_t error, const std::string& what, uint32_t* os_errno) {
  return os_error(ErrorCode::kIoError, error, what, os_errno);
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// Whether `path` lies strictly inside directory `directory` ("" is the root).
bool is_inside(const std::string& path, const std::string& directory) {
  if (directory.empty()) return !path.empty();
  return path.size() > directory.size() && path.compare(0, directory.size(), directory) == 0 &&
         path[directory.size()] == '/';
}

void apply_write(Bytes* target, uint64_t offset, const uint8_t* bytes, size_t size) {
  if (target->size() < offset + size) target->resize(offset + size, 0);
  std::copy(bytes, bytes + size, target->begin() + static_cast<ptrdiff_t>(offset));
}

}  // namespace

// ---------------------------------------------------------------------------------------
// SimDisk

SimDisk::SimDisk(uint64_t seed) : random_(seed) {}

void SimDisk::crash() {
  ++stats_.crashes;
  for (auto& [path, file] : files_) crash_file(*file);
}

void SimDisk::crash_file(SimFile& file) {
  Bytes result = std::move(file.durable);
  for (const SimFile::UnsyncedWrite& write : file.unsynced) {
    const uint64_t first_sector = write.offset / fs::kFsSectorBytes;
    const uint64_t last_sector = (write.offset + write.bytes.size() - 1) / fs::kFsSectorBytes;
    const uint64_t sectors = last_sector - first_sector + 1;
    const uint64_t fate = random_.uniform(sectors > 1 ? 3 : 2);
    if (fate == 0) {
      apply_write(&result, write.offset, write.bytes.data(), write.bytes.size());
      ++stats_.writes_survived;
    } else if (fate == 1) {
      ++stats_.writes_lost;
    } else {
      // Torn: the first `kept` sectors reached the platter, the rest did not.
      const uint64_t kept = random_.uniform_range(1, sectors - 1);
      const uint64_t end = (first_sector + kept) * fs::kFsSectorBytes;
      apply_write(&result, write.offset, write.bytes.data(), end - write.offset);
      ++stats_.writes_torn;
    }
  }
  file.unsynced.clear();
  file.data = result;
  file.durable = std::move(result);
}

void SimDisk::fail_path(const std::string& path, bool reads, bool writes) {
  faults_[path] = Fault{reads, writes};
}

void SimDisk::clear_faults() {
  faults_.clear();
}

const SimDisk::Fault* SimDisk::fault_on(const std::string& path) const {
  auto it = faults_.find(path);
  return it == faults_.end() ? nullptr : &it->second;
}

std::string SimDisk::content(const std::string& path) const {
  auto it = files_.find(path);
  if (it == files_.end()) return "";
  return std::string(it->second->data.begin(), it->second->data.end());
}

std::string SimDisk::durable_content(const std::string& path) const {
  auto it = files_.find(path);
  if (it == files_.end()) return "";
  return std::string(it->second->durable.begin(), it->second->durable.end());
}

uint64_t SimDisk::used_bytes() const {
  uint64_t bytes = 0;
  for (const auto& [path, file] : files_) bytes += file->data.size();
  return bytes;
}

Status SimDisk::open_file(const std::string& path, uint32_t flags, std::shared_ptr<SimFile>* file,
                          uint32_t* os_errno) {
  *os_errno = 0;
  const std::string what = "open '" + path + "'";
  if (directories_.contains(path)) return io_error(EISDIR, what, os_errno);
  auto it = files_.find(path);
  if (it == files_.end()) {
    // Walk the parents: a file in the way is ENOTDIR, a missing one ENOENT (or made).
    std::vector<std::string> missing;
    for (std::string parent = parent_of(path); !parent.empty(); parent = parent_of(parent)) {
      if (files_.contains(parent)) return io_error(ENOTDIR, what, os_errno);
      if (!directories_.contains(parent)) missing.push_back(parent);
    }
    if ((flags & fs::kFsCreate) == 0) {
      return os_error(ErrorCode::kNotFound, ENOENT, what, os_errno);
    }
    directories_.insert(missing.begin(), missing.end());
    it = files_.emplace(path, std::make_shared<SimFile>()).first;
  } else if ((flags & fs::kFsTruncate) != 0) {
    *it->second = SimFile{};
  }
  *file = it->second;
  return Status::OK();
}

Status SimDisk::write_file(SimFile& file, const std::string& path, uint64_t offset,
                           const Bytes& bytes, uint32_t* os_errno) {
  *os_errno = 0;
  const std::string what = "write '" + path + "'";
  if (const Fault* fault = fault_on(path); fault != nullptr && fault->writes) {
    ++stats_.faults_injected;
    return io_error(EIO, what, os_errno);
  }
  const uint64_t end = offset + bytes.size();
  if (end > file.data.size() && capacity_bytes_ != kUnlimited &&
      used_bytes() + (end - file.data.size()) > capacity_bytes_) {
    ++stats_.faults_injected;
    return io_error(ENOSPC, what, os_errno);
  }
  apply_write(&file.data, offset, bytes.data(), bytes.size());
  file.unsynced.push_back(SimFile::UnsyncedWrite{offset, bytes});
  return Status::OK();
}

Status SimDisk::read_file(const SimFile& file, const std::string& path, uint64_t offset,
                          uint32_t length, Bytes* out, uint32_t* os_errno) {
  *os_errno = 0;
  if (const Fault* fault = fault_on(path); fault != nullptr && fault->reads) {
    ++stats_.faults_injected;
    return io_error(EIO, "read '" + path + "'", os_errno);
  }
  out->clear();
  if (offset < file.data.size()) {
    const uint64_t end = std::min<uint64_t>(file.data.size(), offset + length);
    out->assign(file.data.begin() + static_cast<ptrdiff_t>(offset),
                file.data.begin() + static_cast<ptrdiff_t>(end));
  }
  return Status::OK();
}

Status SimDisk::sync_file(SimFile& file, const std::string& path, uint32_t* os_errno) {
  *os_errno = 0;
  if (const Fault* fault = fault_on(path); fault != nullptr && fault->writes) {
    ++stats_.faults_injected;
    return io_error(EIO, "sync '" + path + "'", os_errno);
  }
  file.durable = file.data;
  file.unsynced.clear();
  return Status::OK();
}

Status SimDisk::remove_path(const std::string& path, bool recursive, uint32_t* os_errno) {
  *os_errno = 0;
  if (files_.erase(path) > 0) return Status::OK();
  if (!directories_.contains(path)) return Status::OK();  // missing: idempotent
  const bool empty = std::none_of(files_.begin(), files_.end(),
                                  [&](const auto& f) { return is_inside(f.first, path); }) &&
                     std::none_of(directories_.begin(), directories_.end(),
                                  [&](const std::string& d) { return is_inside(d, path); });
  if (!empty && !recursive) {
    return io_error(ENOTEMPTY, "remove '" + path + "'", os_errno);
  }
  std::erase_if(files_, [&](const auto& f) { return is_inside(f.first, path); });
  std::erase_if(directories_,
                [&](const std::string& d) { return d == path || is_inside(d, path); });
  return Status::OK();
}

void SimDisk::remove_file_if(const std::string& path, const SimFile* file) {
  auto it = files_.find(path);
  if (it != files_.end() && it->second.get() == file) files_.erase(it);
}

Status SimDisk::list_directory(const std::string& path, std::vector<std::string>* names,
                               uint32_t* os_errno) {
  *os_errno = 0;
  names->clear();
  if (files_.contains(path)) return io_error(ENOTDIR, "list '" + path + "'", os_errno);
  if (!is_directory(path)) return Status::OK();  // missing: lists as empty
  const size_t prefix = path.empty() ? 0 : path.size() + 1;
  for (const auto& [name, file] : files_) {
    if (is_inside(name, path) && name.find('/', prefix) == std::string::npos) {
      names->push_back(name.substr(prefix));
    }
  }
  for (const std::string& directory : directories_) {
    if (is_inside(directory, path) && directory.find('/', prefix) == std::string::npos) {
      names->push_back(directory.substr(prefix) + "/");
    }
  }
  std::sort(names->begin(), names->end());
  return Status::OK();
}

// ---------------------------------------------------------------------------------------
// SimFileSystem

SimFileSystem::SimFileSystem(SimDisk& disk, SimFileSystemOptions options)
    : Block("sim_file_system", protocol::kFileSystemBlock), disk_(disk), options_(options) {
  on(protocol::kFsOpenReq, &SimFileSystem::on_open);
  on(protocol::kFsWriteReq, &SimFileSystem::on_write);
  on(protocol::kFsReadReq, &SimFileSystem::on_read);
  on(protocol::kFsSyncReq, &SimFileSystem::on_sync);
  on(protocol::kFsCloseReq, &SimFileSystem::on_close);
  on(protocol::kFsRemoveReq, &SimFileSystem::on_remove);
  on(protocol::kFsListReq, &SimFileSystem::on_list);
  on(protocol::kFsPageReadReq, &SimFileSystem::on_page_io);
  on(protocol::kFsPageWriteReq, &SimFileSystem::on_page_io);
  on(protocol::kFsAllocReq, &SimFileSystem::on_alloc);
}

void SimFileSystem::answer(const Signal& signal, Signal answer, Handle* handle) {
  uint64_t delay_ms = options_.latency_ms;
  if (options_.latency_jitter_ms > 0) delay_ms += random().uniform(options_.latency_jitter_ms + 1);
  const uint64_t now_ms = clock().now_ms();
  if (handle != nullptr) {
    // Never before the handle's previous answer; equal times keep the arming order.
    delay_ms = std::max(now_ms + delay_ms, handle->last_answer_ms) - now_ms;
    handle->last_answer_ms = now_ms + delay_ms;
  }
  Status sent = signal.sender().node_id == node_id()
                    ? send_delayed(signal.sender(), std::move(answer), delay_ms)
                    : send(signal.sender(), std::move(answer));
  if (!sent.ok()) {
    DUO_BLOCK_LOG(WARNING) << "cannot answer " << signal.describe() << ": " << sent.to_string();
  }
}

void SimFileSystem::answer_page(const Signal& signal, Signal answer, Handle& handle) {
  uint64_t delay_ms = options_.latency_ms;
  if (options_.latency_jitter_ms > 0) delay_ms += random().uniform(options_.latency_jitter_ms + 1);
  const uint64_t now_ms = clock().now_ms();
  handle.last_answer_ms = std::max(handle.last_answer_ms, now_ms + delay_ms);
  Status sent = signal.sender().node_id == node_id()
                    ? send_delayed(signal.sender(), std::move(answer), delay_ms)
                    : send(signal.sender(), std::move(answer));
  if (!sent.ok()) {
    DUO_BLOCK_LOG(WARNING) << "cannot answer " << signal.describe() << ": " << sent.to_string();
  }
}

void SimFileSystem::refuse(const Signal& signal, const Status& status, uint32_t os_errno) {
  answer(signal, FsRef::of(fs::fs_user_ref(signal), status, os_errno).to_signal());
}

SimFileSystem::Handle* SimFileSystem::find_handle(const Signal& signal, uint32_t number) {
  auto it = handles_.find(number);
  if (it != handles_.end()) return &it->second;
  refuse(signal, Status(ErrorCode::kInvalidArgument,
                        "file handle " + std::to_string(number) + " is not open"));
  return nullptr;
}

void SimFileSystem::on_open(Signal& signal) {
  Result<FsOpenReq> req = FsOpenReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  if (handles_.size() >= options_.open_files_max) {
    return refuse(signal,
                  Status(ErrorCode::kTemporary, "open '" + req->path + "': too many open files (" +
                                                    std::to_string(options_.open_files_max) + ")"));
  }
  std::shared_ptr<SimFile> file;
  uint32_t os_errno = 0;
  Status opened = disk_.open_file(req->path, req->flags, &file, &os_errno);
  if (!opened.ok()) return refuse(signal, opened, os_errno);
  // The smallest free number: handles stay small, and the choice is deterministic.
  uint32_t number = 1;
  while (handles_.contains(number)) ++number;
  Handle& handle = handles_[number];
  handle.path = std::move(req->path);
  handle.file = std::move(file);
  handle.flags = req->flags;
  answer(signal, FsOpenConf{req->user_ref, number, handle.file->data.size()}.to_signal(), &handle);
}

void SimFileSystem::on_write(Signal& signal) {
  Result<FsWriteReq> req = FsWriteReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Handle* handle = find_handle(signal, req->handle);
  if (handle == nullptr) return;
  uint32_t os_errno = 0;
  Status written =
      (handle->flags & fs::kFsWrite) == 0
          ? io_error(EBADF, "write '" + handle->path + "'", &os_errno)
          : disk_.write_file(*handle->file, handle->path, req->offset, req->data, &os_errno);
  if (written.ok() && (req->flags & fs::kFsSyncAfter) != 0) {
    written = disk_.sync_file(*handle->file, handle->path, &os_errno);
  }
  if (!written.ok()) {
    return answer(signal, FsRef::of(req->user_ref, written, os_errno).to_signal(), handle);
  }
  answer(signal, FsWriteConf{req->user_ref, static_cast<uint32_t>(req->data.size())}.to_signal(),
         handle);
}

void SimFileSystem::on_read(Signal& signal) {
  Result<FsReadReq> req = FsReadReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Handle* handle = find_handle(signal, req->handle);
  if (handle == nullptr) return;
  uint32_t os_errno = 0;
  Bytes data;
  Status read = (handle->flags & fs::kFsRead) == 0
                    ? io_error(EBADF, "read '" + handle->path + "'", &os_errno)
                    : disk_.read_file(*handle->file, handle->path, req->offset, req->length, &data,
                                      &os_errno);
  if (!read.ok()) {
    return answer(signal, FsRef::of(req->user_ref, read, os_errno).to_signal(), handle);
  }
  answer(signal, FsReadConf{req->user_ref, std::move(data)}.to_signal(), handle);
}

void SimFileSystem::on_sync(Signal& signal) {
  Result<FsSyncReq> req = FsSyncReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Handle* handle = find_handle(signal, req->handle);
  if (handle == nullptr) return;
  uint32_t os_errno = 0;
  Status synced = disk_.sync_file(*handle->file, handle->path, &os_errno);
  if (!synced.ok()) {
    return answer(signal, FsRef::of(req->user_ref, synced, os_errno).to_signal(), handle);
  }
  answer(signal, fs::fs_done_signal(protocol::kFsSyncConf, req->user_ref), handle);
}

void SimFileSystem::on_close(Signal& signal) {
  Result<FsCloseReq> req = FsCloseReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Handle* handle = find_handle(signal, req->handle);
  if (handle == nullptr) return;
  if ((req->flags & fs::kFsRemoveAfter) != 0) {
    disk_.remove_file_if(handle->path, handle->file.get());
  }
  // The answer still queues behind the handle's earlier answers.
  Handle last = std::move(*handle);
  handles_.erase(req->handle);
  answer(signal, fs::fs_done_signal(protocol::kFsCloseConf, req->user_ref), &last);
}

void SimFileSystem::on_page_io(Signal& signal) {
  Result<fs::FsPageReq> req = fs::FsPageReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  Handle* handle = find_handle(signal, req->handle);
  if (handle == nullptr) return;
  uint32_t os_errno = 0;
  Status done;
  uint32_t bytes = req->length;
  if (req->is_write()) {
    done = (handle->flags & fs::kFsWrite) == 0
               ? io_error(EBADF, "write page of '" + handle->path + "'", &os_errno)
               : disk_.write_file(*handle->file, handle->path, req->offset,
                                  Bytes(req->frame, req->frame + req->length), &os_errno);
    if (done.ok() && (req->flags & fs::kFsSyncAfter) != 0) {
      done = disk_.sync_file(*handle->file, handle->path, &os_errno);
    }
  } else {
    Bytes data;
    done = (handle->flags & fs::kFsRead) == 0
               ? io_error(EBADF, "read page of '" + handle->path + "'", &os_errno)
               : disk_.read_file(*handle->file, handle->path, req->offset, req->length, &data,
                                 &os_errno);
    if (done.ok()) {
      // Past the end of the file the frame reads as zeros, as on the real block.
      std::copy(data.begin(), data.end(), req->frame);
      std::fill(req->frame + data.size(), req->frame + req->length, uint8_t{0});
      bytes = static_cast<uint32_t>(data.size());
    }
  }
  if (!done.ok()) {
    return answer_page(signal, FsRef::of(req->user_ref, done, os_errno).to_signal(), *handle);
  }
  answer_page(signal, fs::FsPageConf{req->user_ref, bytes}.to_signal(), *handle);
}

void SimFileSystem::on_remove(Signal& signal) {
  Result<FsRemoveReq> req = FsRemoveReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  uint32_t os_errno = 0;
  Status removed = disk_.remove_path(req->path, (req->flags & fs::kFsRecursive) != 0, &os_errno);
  if (!removed.ok()) return refuse(signal, removed, os_errno);
  answer(signal, fs::fs_done_signal(protocol::kFsRemoveConf, req->user_ref));
}

void SimFileSystem::on_alloc(Signal& signal) {
  Result<FsAllocReq> req = FsAllocReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  uint32_t os_errno = 0;
  if (disk_.file_exists(req->path)) {
    const Status exists = io_error(EEXIST, "create '" + req->path + "'", &os_errno);
    return refuse(signal, exists, os_errno);
  }
  std::shared_ptr<SimFile> file;
  Status made = disk_.open_file(req->path, fs::kFsWrite | fs::kFsCreate, &file, &os_errno);
  if (made.ok() && req->size_bytes > 0) {
    // One zero byte at the end makes the file its size, zero-filled (the capacity, and so
    // a full disk, is checked here as posix_fallocate does).
    made = disk_.write_file(*file, req->path, req->size_bytes - 1, Bytes{0}, &os_errno);
  }
  if (made.ok()) made = disk_.sync_file(*file, req->path, &os_errno);
  if (!made.ok()) {
    uint32_t ignored = 0;
    if (file != nullptr) disk_.remove_path(req->path, false, &ignored).ignore_error();
    return refuse(signal, made, os_errno);
  }
  answer(signal, fs::FsAllocConf{req->user_ref, req->size_bytes}.to_signal());
}

void SimFileSystem::on_list(Signal& signal) {
  Result<FsListReq> req = FsListReq::from_signal(signal);
  if (!req.ok()) return refuse(signal, req.status());
  std::vector<std::string> names;
  uint32_t os_errno = 0;
  Status listed = disk_.list_directory(req->path, &names, &os_errno);
  if (!listed.ok()) return refuse(signal, listed, os_errno);
  if (FsListConf::encoded_size(names) > kernel::kSectionBytesMax) {
    return refuse(signal, Status(ErrorCode::kNotSupported,
                                 "list '" + req->path + "': " + std::to_string(names.size()) +
                                     " names do not fit one signal"));
  }
  answer(signal, FsListConf{req->user_ref, std::move(names)}.to_signal());
}

}  // namespace duo::sim
