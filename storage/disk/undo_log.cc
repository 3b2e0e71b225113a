#include "storage/disk/undo_log.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace duo::storage::disk {

UndoLog::UndoLog(uint64_t capacity_bytes, uint64_t next_lsn)
    : capacity_bytes_(capacity_bytes), next_lsn_(next_lsn == 0 ? 1 : next_lsn) {}

Status UndoLog::reserve(uint64_t bytes) {
  if (used_bytes() + reserved_bytes_ + bytes > capacity_bytes_) {
    return Status(ErrorCode::kOutOfUndoSpace,
                  "Out of undo space (NDB 1501): " + std::to_string(used_bytes()) + " bytes used, " +
                      std::to_string(reserved_bytes_) + " reserved of " + std::to_string(capacity_bytes_));
  }
  reserved_bytes_ += bytes;
  return Status::OK();
}

void UndoLog::unreserve(uint64_t bytes) {
  if (bytes > reserved_bytes_) {
    std::fprintf(stderr, "UndoLog::unreserve: %llu bytes, only %llu reserved\n",
                 static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(reserved_bytes_));
    std::abort();
  }
  reserved_bytes_ -= bytes;
}

uint64_t UndoLog::append(const UndoRecord& record) {
  const uint32_t size = undo_record_bytes(static_cast<uint32_t>(record.before.size()));
  if (size > reserved_bytes_) {
    std::fprintf(stderr, "UndoLog::append: record of %u bytes beyond the reservation\n", size);
    std::abort();  // a commit would have needed space nobody reserved
  }
  reserved_bytes_ -= size;
  UndoRecord r = record;
  r.lsn = next_lsn_++;
  encode_undo_record(r, &stream_);
  lsns_.push_back(r.lsn);
  ends_.push_back(static_cast<uint32_t>(stream_.size()));
  return r.lsn;
}

void UndoLog::release_through(uint64_t lsn) {
  const size_t n = static_cast<size_t>(std::upper_bound(lsns_.begin(), lsns_.end(), lsn) - lsns_.begin());
  if (n == 0) return;
  const uint32_t cut = ends_[n - 1];
  stream_.erase(stream_.begin(), stream_.begin() + cut);
  lsns_.erase(lsns_.begin(), lsns_.begin() + static_cast<std::ptrdiff_t>(n));
  ends_.erase(ends_.begin(), ends_.begin() + static_cast<std::ptrdiff_t>(n));
  for (uint32_t& e : ends_) e -= cut;
}

Result<UndoRecord> UndoReader::next() {
  size_t start = 0;
  auto r = decode_undo_record_ending_at(log_, end_, &start);
  if (!r.ok()) return r.take_status();
  end_ = start;
  return r;
}

}  // namespace duo::storage::disk
