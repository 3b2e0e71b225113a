#include "ndb-kernel/fs_client/dual_copy_file.h"

#include <algorithm>
#include <utility>

#include "ndb-kernel/common/crc32c.h"
#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/protocol/block_numbers.h"

namespace duo::fs_client {

using kernel::Signal;

namespace {
constexpr uint32_t kMagic = 0x324F5544;  // "DUO2"
constexpr size_t kHeaderBytes = 12;
constexpr size_t kChunkBytes = 60 * 1024;

void put_u32(Bytes* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint32_t get_u32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
}  // namespace

DualCopyFile::DualCopyFile(std::string path, uint16_t tag, uint16_t node_id, SendFn send)
    : path_(std::move(path)), tag_(tag), node_id_(node_id), send_(std::move(send)) {}

Bytes DualCopyFile::encode_copy(uint32_t sequence, const Bytes& payload) {
  Bytes out;
  out.reserve(kHeaderBytes + payload.size() + 4);
  put_u32(&out, kMagic);
  put_u32(&out, sequence);
  put_u32(&out, static_cast<uint32_t>(payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
  put_u32(&out, crc32c_mask(crc32c(out.data(), out.size())));
  return out;
}

Result<std::pair<uint32_t, Bytes>> DualCopyFile::decode_copy(const Bytes& bytes) {
  if (bytes.size() < kHeaderBytes + 4 || get_u32(bytes.data()) != kMagic) {
    return Status(ErrorCode::kCorruption, "not a copy file (bad magic or too short)");
  }
  const uint32_t size = get_u32(bytes.data() + 8);
  if (bytes.size() != kHeaderBytes + size + 4) {
    return Status(ErrorCode::kCorruption, "copy file of the wrong length");
  }
  const uint32_t stored = get_u32(bytes.data() + kHeaderBytes + size);
  if (crc32c_unmask(stored) != crc32c(bytes.data(), kHeaderBytes + size)) {
    return Status(ErrorCode::kCorruption, "copy file checksum mismatch");
  }
  return std::make_pair(get_u32(bytes.data() + 4),
                        Bytes(bytes.begin() + kHeaderBytes, bytes.begin() + kHeaderBytes + size));
}

bool DualCopyFile::owns(const Signal& signal) const {
  return (fs::fs_user_ref(signal) >> 16) == tag_;
}

void DualCopyFile::request(Signal signal) {
  ++serial_;
  signal.set_word(0, (uint32_t{tag_} << 16) | serial_);
  const kernel::BlockAddress fs{node_id_, protocol::kFileSystemBlock, 0};
  signal.set_receiver(fs);
  if (Status sent = send_(std::move(signal)); !sent.ok()) fail(std::move(sent));
}

void DualCopyFile::fail(Status status) {
  const Step step = step_;
  step_ = Step::kIdle;
  if (handle_ != 0) {
    // Best effort: the handle would otherwise stay open until the node restarts.
    fs::FsCloseReq close{0, handle_, 0};
    handle_ = 0;
    Signal signal = std::move(close).to_signal();
    signal.set_word(0, uint32_t{tag_} << 16);  // serial 0: its answer is ignored
    signal.set_receiver({node_id_, protocol::kFileSystemBlock, 0});
    send_(std::move(signal)).ignore_error();
  }
  if (step == Step::kWriteOpen || step == Step::kWriteData || step == Step::kWriteClose) {
    WriteDone done = std::move(write_done_);
    done(std::move(status));
  } else {
    ReadDone done = std::move(read_done_);
    done(std::move(status));
  }
  if (step_ == Step::kIdle && pending_write_) {
    auto [payload, done] = std::move(*pending_write_);
    pending_write_.reset();
    write(std::move(payload), std::move(done));
  }
}

// ---- write ----

void DualCopyFile::write(Bytes payload, WriteDone done) {
  if (step_ != Step::kIdle) {
    if (pending_write_) pending_write_->second(Status(ErrorCode::kTemporary, "superseded"));
    pending_write_.emplace(std::move(payload), std::move(done));
    return;
  }
  write_bytes_ = encode_copy(newest_sequence_ + 1, payload);
  write_offset_ = 0;
  write_done_ = std::move(done);
  start_write();
}

void DualCopyFile::start_write() {
  step_ = Step::kWriteOpen;
  fs::FsOpenReq open{0, fs::kFsWrite | fs::kFsCreate | fs::kFsTruncate,
                     copy_path(1 - newest_copy_)};
  request(std::move(open).to_signal());
}

void DualCopyFile::write_next_chunk() {
  step_ = Step::kWriteData;
  const size_t size = std::min(kChunkBytes, write_bytes_.size() - write_offset_);
  fs::FsWriteReq req;
  req.handle = handle_;
  req.offset = write_offset_;
  req.flags = write_offset_ + size == write_bytes_.size() ? fs::kFsSyncAfter : 0;
  req.data.assign(write_bytes_.begin() + static_cast<ptrdiff_t>(write_offset_),
                  write_bytes_.begin() + static_cast<ptrdiff_t>(write_offset_ + size));
  write_offset_ += size;
  request(std::move(req).to_signal());
}

// ---- read ----

void DualCopyFile::read(ReadDone done) {
  if (step_ != Step::kIdle) {
    done(Status(ErrorCode::kTemporary, "a file operation is already running"));
    return;
  }
  read_done_ = std::move(done);
  read_copy_ = 0;
  best_.reset();
  any_copy_exists_ = false;
  start_read_copy();
}

void DualCopyFile::start_read_copy() {
  step_ = Step::kReadOpen;
  read_bytes_.clear();
  fs::FsOpenReq open{0, fs::kFsRead, copy_path(read_copy_)};
  request(std::move(open).to_signal());
}

void DualCopyFile::read_next_chunk() {
  step_ = Step::kReadData;
  if (read_bytes_.size() >= read_size_) {
    step_ = Step::kReadClose;
    fs::FsCloseReq close{0, handle_, 0};
    handle_ = 0;
    request(std::move(close).to_signal());
    return;
  }
  fs::FsReadReq req;
  req.handle = handle_;
  req.offset = read_bytes_.size();
  req.length = static_cast<uint32_t>(
      std::min<uint64_t>(fs::kFsReadBytesMax, read_size_ - read_bytes_.size()));
  request(std::move(req).to_signal());
}

void DualCopyFile::finish_read_copy() {
  if (read_copy_ == 0) {
    read_copy_ = 1;
    start_read_copy();
    return;
  }
  step_ = Step::kIdle;
  ReadDone done = std::move(read_done_);
  if (best_) {
    newest_sequence_ = best_->first;
    newest_copy_ = best_copy_;
    done(std::move(best_->second));
  } else if (any_copy_exists_) {
    done(Status(ErrorCode::kCorruption, "neither copy of " + path_ + " is valid"));
  } else {
    done(Status(ErrorCode::kNotFound, path_ + " does not exist"));
  }
  if (step_ == Step::kIdle && pending_write_) {
    auto [payload, write_done] = std::move(*pending_write_);
    pending_write_.reset();
    write(std::move(payload), std::move(write_done));
  }
}

// ---- answers ----

void DualCopyFile::on_fs_answer(Signal& signal) {
  if ((fs::fs_user_ref(signal) & 0xFFFF) != serial_ || step_ == Step::kIdle) return;
  if (signal.id() == protocol::kFsRef) {
    Result<fs::FsRef> ref = fs::FsRef::from_signal(signal);
    Status status = ref.ok() ? ref->to_status() : ref.status();
    if (step_ == Step::kReadOpen && status.is(ErrorCode::kNotFound)) {
      finish_read_copy();  // this copy does not exist
      return;
    }
    fail(std::move(status));
    return;
  }
  switch (step_) {
    case Step::kWriteOpen:
    case Step::kReadOpen: {
      Result<fs::FsOpenConf> conf = fs::FsOpenConf::from_signal(signal);
      if (!conf.ok()) return fail(conf.status());
      handle_ = conf->handle;
      if (step_ == Step::kWriteOpen) {
        write_next_chunk();
      } else {
        any_copy_exists_ = true;
        read_size_ = conf->size_bytes;
        read_next_chunk();
      }
      return;
    }
    case Step::kWriteData: {
      if (write_offset_ < write_bytes_.size()) return write_next_chunk();
      step_ = Step::kWriteClose;
      fs::FsCloseReq close{0, handle_, 0};
      handle_ = 0;
      request(std::move(close).to_signal());
      return;
    }
    case Step::kWriteClose: {
      step_ = Step::kIdle;
      newest_copy_ = 1 - newest_copy_;
      ++newest_sequence_;
      WriteDone done = std::move(write_done_);
      done(Status::OK());
      if (step_ == Step::kIdle && pending_write_) {
        auto [payload, next_done] = std::move(*pending_write_);
        pending_write_.reset();
        write(std::move(payload), std::move(next_done));
      }
      return;
    }
    case Step::kReadData: {
      Result<fs::FsReadConf> conf = fs::FsReadConf::from_signal(signal);
      if (!conf.ok()) return fail(conf.status());
      if (conf->data.empty()) {
        read_size_ = read_bytes_.size();  // shorter than its size said: take what is there
      }
      read_bytes_.insert(read_bytes_.end(), conf->data.begin(), conf->data.end());
      return read_next_chunk();
    }
    case Step::kReadClose: {
      Result<std::pair<uint32_t, Bytes>> copy = decode_copy(read_bytes_);
      if (copy.ok() && (!best_ || copy->first > best_->first)) {
        best_ = std::move(copy).value();
        best_copy_ = read_copy_;
      }
      finish_read_copy();
      return;
    }
    case Step::kIdle:
      return;
  }
}

}  // namespace duo::fs_client
