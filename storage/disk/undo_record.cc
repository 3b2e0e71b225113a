#include "storage/disk/undo_record.h"

#include <cstring>

#include "ndb-kernel/common/crc32c.h"

namespace duo::storage::disk {
namespace {

void put32(std::vector<uint8_t>* out, uint32_t v) {
  const size_t at = out->size();
  out->resize(at + 4);
  std::memcpy(out->data() + at, &v, 4);
}

uint32_t get32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

void encode_undo_record(const UndoRecord& r, std::vector<uint8_t>* out) {
  const uint32_t before = static_cast<uint32_t>(r.before.size());
  const uint32_t total = undo_record_bytes(before);
  const size_t start = out->size();
  put32(out, total);
  put32(out, static_cast<uint32_t>(r.type));
  put32(out, static_cast<uint32_t>(r.lsn));
  put32(out, static_cast<uint32_t>(r.lsn >> 32));
  put32(out, r.page.file_no);
  put32(out, r.page.page_no);
  put32(out, r.slot);
  put32(out, r.table);
  put32(out, r.fragment);
  put32(out, before);
  out->insert(out->end(), r.before.begin(), r.before.end());
  out->resize(out->size() + ((4 - before % 4) % 4), 0);
  put32(out, crc32c_mask(crc32c(out->data() + start, out->size() - start)));
  put32(out, total);
}

Result<UndoRecord> decode_undo_record_ending_at(std::span<const uint8_t> log, size_t end, size_t* start) {
  if (end < kUndoRecordFixedBytes || end > log.size()) {
    return Status(ErrorCode::kCorruption, "undo record: truncated");
  }
  const uint32_t total = get32(log.data() + end - 4);
  if (total < kUndoRecordFixedBytes || total % 4 != 0 || total > end) {
    return Status(ErrorCode::kCorruption, "undo record: bad length");
  }
  const uint8_t* p = log.data() + end - total;
  if (get32(p) != total) return Status(ErrorCode::kCorruption, "undo record: lengths disagree");
  if (crc32c_mask(crc32c(p, total - 8)) != get32(p + total - 8)) {
    return Status(ErrorCode::kCorruption, "undo record: checksum mismatch");
  }
  UndoRecord r;
  const uint32_t type = get32(p + 4);
  if (type < 1 || type > 6) return Status(ErrorCode::kCorruption, "undo record: unknown type");
  r.type = static_cast<UndoType>(type);
  r.lsn = uint64_t{get32(p + 8)} | uint64_t{get32(p + 12)} << 32;
  r.page = {get32(p + 16), get32(p + 20)};
  r.slot = get32(p + 24);
  r.table = get32(p + 28);
  r.fragment = get32(p + 32);
  const uint32_t before = get32(p + 36);
  if (undo_record_bytes(before) != total) return Status(ErrorCode::kCorruption, "undo record: bad image length");
  r.before = std::span<const uint8_t>(p + 40, before);
  *start = end - total;
  return r;
}

}  // namespace duo::storage::disk
