#include "storage/disk/undo_log.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace duo::storage::disk {

UndoLog::UndoLog(uint64_t capacity_bytes, uint64_t next_lsn, uint64_t start_offset)
    : capacity_bytes_(capacity_bytes),
      next_lsn_(next_lsn == 0 ? 1 : next_lsn),
      start_offset_(start_offset),
      released_offset_(start_offset),
      released_lsn_(next_lsn_ - 1) {}

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
  record_ends_.push_back(end_offset());
  return r.lsn;
}

void UndoLog::release_through(uint64_t lsn) {
  const size_t n = static_cast<size_t>(std::upper_bound(lsns_.begin(), lsns_.end(), lsn) - lsns_.begin());
  if (n == 0) return;
  released_offset_ = record_ends_[n - 1];
  released_lsn_ = lsns_[n - 1];
  lsns_.erase(lsns_.begin(), lsns_.begin() + static_cast<std::ptrdiff_t>(n));
  record_ends_.erase(record_ends_.begin(), record_ends_.begin() + static_cast<std::ptrdiff_t>(n));
  // Bytes go whole chunks at a time: the chunk holding the first needed byte may still
  // be written again (it may be the newest), so its beginning stays.
  const uint64_t keep_from = std::max(start_offset_, released_offset_ - released_offset_ % kUndoChunkBytes);
  stream_.erase(stream_.begin(), stream_.begin() + static_cast<std::ptrdiff_t>(keep_from - start_offset_));
  start_offset_ = keep_from;
}

UndoChunk UndoLog::chunk(uint64_t chunk_offset) const {
  UndoChunk c;
  c.offset = chunk_offset;
  const uint64_t from = std::max(chunk_offset, start_offset_);
  const uint64_t to = std::min(end_offset(), chunk_offset + kUndoChunkBytes);
  if (chunk_offset % kUndoChunkBytes != 0 || from > to || from != chunk_offset) {
    std::fprintf(stderr, "UndoLog::chunk: chunk %llu is not held\n", static_cast<unsigned long long>(chunk_offset));
    std::abort();
  }
  c.data = std::span<const uint8_t>(stream_.data() + (from - start_offset_), to - from);
  // The newest whole record ending within the stream up to `to`.
  const auto it = std::upper_bound(record_ends_.begin(), record_ends_.end(), to);
  if (it == record_ends_.begin()) {
    c.records_end = released_offset_;
    c.last_lsn = released_lsn_;
  } else {
    c.records_end = *(it - 1);
    c.last_lsn = lsns_[static_cast<size_t>(it - record_ends_.begin()) - 1];
  }
  return c;
}

bool UndoReader::done() const {
  if (end_ < 4) return true;
  uint32_t total;
  std::memcpy(&total, log_.data() + end_ - 4, 4);
  return total > end_;
}

Result<UndoRecord> UndoReader::next() {
  size_t start = 0;
  auto r = decode_undo_record_ending_at(log_, end_, &start);
  if (!r.ok()) return r.take_status();
  end_ = start;
  return r;
}

}  // namespace duo::storage::disk
