#include "ndb-kernel/fs_client/page_file_io.h"

#include <string>

#include "ndb-kernel/fs/fs_messages.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/signal_ids.h"

namespace duo::fs_client {

PageFileIo::PageFileIo(uint16_t tag, uint16_t node_id, SendFn send)
    : tag_(tag), node_id_(node_id), send_(std::move(send)) {}

void PageFileIo::start_read(storage::PageId id, uint8_t* frame) { start(id, frame, false); }

void PageFileIo::start_write(storage::PageId id, const uint8_t* frame) {
  // The file system only reads the frame for a write.
  start(id, const_cast<uint8_t*>(frame), true);
}

void PageFileIo::start(storage::PageId id, uint8_t* frame, bool write) {
  // 16 bits of sequence: at most 65536 page IOs in flight per object (the cache's frames
  // bound them far lower). Skip numbers still in flight.
  uint32_t user_ref;
  do {
    user_ref = (uint32_t{tag_} << 16) | next_sequence_++;
  } while (in_flight_.count(user_ref) != 0);
  const auto handle = handles_.find(id.file_no);
  fs::FsPageReq request;
  request.id = write ? protocol::kFsPageWriteReq : protocol::kFsPageReadReq;
  request.user_ref = user_ref;
  request.handle = handle == handles_.end() ? 0 : handle->second;
  request.offset = id.file_offset();
  request.frame = frame;
  request.length = static_cast<uint32_t>(storage::kPageSize);
  kernel::Signal signal = std::move(request).to_signal();
  signal.set_receiver({node_id_, protocol::kFileSystemBlock, 0});
  Status sent = send_(std::move(signal));
  if (!sent.ok()) {
    send_failures_.emplace_back(InFlight{id, write},
                                Status(ErrorCode::kTemporary, "page IO not sent: " + sent.message()));
    return;
  }
  in_flight_.emplace(user_ref, InFlight{id, write});
}

bool PageFileIo::owns(const kernel::Signal& signal) const {
  if (signal.id() != protocol::kFsPageConf && signal.id() != protocol::kFsRef) return false;
  return in_flight_.count(fs::fs_user_ref(signal)) != 0;
}

void PageFileIo::on_fs_answer(kernel::Signal& signal) {
  auto it = in_flight_.find(fs::fs_user_ref(signal));
  if (it == in_flight_.end()) return;
  const InFlight io = it->second;
  in_flight_.erase(it);
  Status status;
  if (signal.id() == protocol::kFsRef) {
    Result<fs::FsRef> ref = fs::FsRef::from_signal(signal);
    status = ref.ok() ? ref->to_status() : ref.status();
  } else {
    Result<fs::FsPageConf> conf = fs::FsPageConf::from_signal(signal);
    if (!conf.ok()) status = conf.status();
    // A read past the end of the file is zero-filled: an unformatted page.
  }
  if (io.write) {
    cache_->on_write_done(io.id, std::move(status));
  } else {
    cache_->on_read_done(io.id, std::move(status));
  }
}

void PageFileIo::report_send_failures() {
  std::vector<std::pair<InFlight, Status>> failures = std::move(send_failures_);
  send_failures_.clear();
  for (auto& [io, status] : failures) {
    if (io.write) {
      cache_->on_write_done(io.id, std::move(status));
    } else {
      cache_->on_read_done(io.id, std::move(status));
    }
  }
}

}  // namespace duo::fs_client
