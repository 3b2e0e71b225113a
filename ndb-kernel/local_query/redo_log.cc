// The redo record codec, the redo buffer and file rolling (redo_log.h).
#include "ndb-kernel/local_query/redo_log.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "ndb-kernel/common/crc32c.h"

namespace duo::local_query {

namespace {

void set_u32(Bytes* out, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) (*out)[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t get_u32(std::string_view bytes, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(bytes[at + i])} << (8 * i);
  return v;
}

}  // namespace

Status encode_redo_record(const RedoHeader& header, const storage::AttrValues& values, Bytes* out) {
  const size_t start = out->size();
  protocol::put_u32(out, 0);  // length, filled in below
  protocol::put_u32(out, 0);  // crc, filled in below
  protocol::put_u32(out, header.gci);
  protocol::put_u8(out, static_cast<uint8_t>(header.kind));
  protocol::put_u32(out, header.table_id);
  protocol::put_u32(out, header.table_version);
  protocol::put_u32(out, header.fragment_id);
  Status encoded = protocol::encode_attr_values(values, out);
  if (!encoded.ok() || out->size() - start > kRedoRecordBytesMax) {
    out->resize(start);
    return encoded.ok() ? Status(ErrorCode::kRowTooBig, "redo record too long") : encoded;
  }
  const size_t length = out->size() - start;
  set_u32(out, start, static_cast<uint32_t>(length));
  const uint32_t crc = crc32c(out->data() + start + 8, length - 8);
  set_u32(out, start + 4, crc32c_mask(crc));
  return Status::OK();
}

RedoDecode decode_redo_record(std::string_view bytes, RedoRecord* out, size_t* record_bytes) {
  if (bytes.size() < 4) return RedoDecode::kNeedMore;
  const uint32_t length = get_u32(bytes, 0);
  // A length of 0 is what a file never written past looks like; anything outside the
  // possible range is a torn length.
  if (length < kRedoHeaderBytes + 2 || length > kRedoRecordBytesMax) return RedoDecode::kBad;
  if (bytes.size() < length) return RedoDecode::kNeedMore;
  const uint32_t stored_crc = crc32c_unmask(get_u32(bytes, 4));
  if (crc32c(bytes.data() + 8, length - 8) != stored_crc) return RedoDecode::kBad;
  protocol::ByteReader in(bytes.substr(8, length - 8));
  uint8_t kind = 0;
  RedoHeader& h = out->header;
  if (!in.u32(&h.gci) || !in.u8(&kind) || !in.u32(&h.table_id) || !in.u32(&h.table_version) ||
      !in.u32(&h.fragment_id)) {
    return RedoDecode::kBad;
  }
  if (kind != static_cast<uint8_t>(RedoKind::kWriteRow) &&
      kind != static_cast<uint8_t>(RedoKind::kDeleteKey)) {
    return RedoDecode::kBad;
  }
  h.kind = static_cast<RedoKind>(kind);
  out->values.clear();
  if (!protocol::decode_attr_values(&in, &out->values) || !in.done()) return RedoDecode::kBad;
  *record_bytes = length;
  return RedoDecode::kRecord;
}

size_t decode_redo_file(std::string_view bytes, std::deque<RedoRecord>* out, bool* torn) {
  size_t at = 0;
  for (;;) {
    RedoRecord record;
    size_t length = 0;
    if (decode_redo_record(bytes.substr(at), &record, &length) != RedoDecode::kRecord) break;
    out->push_back(std::move(record));
    at += length;
  }
  *torn = at != bytes.size();
  return at;
}

std::string redo_file_name(uint32_t seq) {
  char name[32];
  std::snprintf(name, sizeof(name), "%08u.redo", seq);
  return name;
}

uint32_t parse_redo_file_name(std::string_view name) {
  constexpr std::string_view kSuffix = ".redo";
  if (name.size() != 8 + kSuffix.size() || !name.ends_with(kSuffix)) return 0;
  uint32_t seq = 0;
  for (size_t i = 0; i < 8; ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    seq = seq * 10 + static_cast<uint32_t>(name[i] - '0');
  }
  return seq;
}

// ---------------------------------------------------------------------------------------
// RedoLog.

RedoLog::RedoLog(RedoLogOptions options, uint32_t first_file_seq)
    : options_(options), current_file_seq_(std::max<uint32_t>(first_file_seq, 1)) {
  files_[current_file_seq_] = RedoFileInfo{};
}

Status RedoLog::append(const RedoHeader& header, const storage::AttrValues& values) {
  scratch_.clear();
  DUO_RETURN_IF_ERROR(encode_redo_record(header, values, &scratch_));
  RedoFileInfo* file = &files_[current_file_seq_];
  if (file->bytes > 0 && file->bytes + scratch_.size() > options_.file_bytes) {
    switch_file();
    file = &files_[current_file_seq_];
  }
  RedoChunk* open = chunks_.empty() ? nullptr : &chunks_.back();
  if (open != nullptr && !open->sealed &&
      open->bytes.size() + scratch_.size() > kRedoChunkBytesMax) {
    open->sealed = true;
  }
  if (open == nullptr || open->sealed) {
    chunks_.emplace_back();
    open = &chunks_.back();
    open->file_seq = current_file_seq_;
    open->offset = file->bytes;
    if (spare_buffers_.empty()) {
      open->bytes.reserve(kRedoChunkBytesMax);
    } else {
      open->bytes = std::move(spare_buffers_.back());
      spare_buffers_.pop_back();
    }
  }
  open->bytes.insert(open->bytes.end(), scratch_.begin(), scratch_.end());
  file->bytes += scratch_.size();
  file->max_gci = std::max(file->max_gci, header.gci);
  held_space_bytes_ += scratch_.size();  // the current file counts as far as it is filled
  buffered_bytes_ += scratch_.size();
  appended_lsn_ += scratch_.size();
  open->end_lsn = appended_lsn_;
  return Status::OK();
}

void RedoLog::seal_open_chunk() {
  if (!chunks_.empty()) chunks_.back().sealed = true;
}

void RedoLog::switch_file() {
  seal_open_chunk();
  ++current_file_seq_;
  files_[current_file_seq_] = RedoFileInfo{};
  recount_space();  // the file switched away from now takes a whole file
}

void RedoLog::restart_at(uint32_t first_file_seq) {
  ++life_;
  files_.clear();
  current_file_seq_ = std::max<uint32_t>(first_file_seq, 1);
  files_[current_file_seq_] = RedoFileInfo{};
  recount_space();
}

void RedoLog::add_old_file(uint32_t seq, RedoFileInfo info) {
  files_[seq] = info;
  recount_space();
}

void RedoLog::forget_file(uint32_t seq) {
  files_.erase(seq);
  recount_space();
}

double RedoLog::space_fill() const {
  if (space_bytes() == 0) return 0.0;
  return static_cast<double>(held_space_bytes_) / static_cast<double>(space_bytes());
}

uint64_t RedoLog::file_space_bytes(uint32_t seq, const RedoFileInfo& info) const {
  if (seq == current_file_seq_) return info.bytes;
  // An old life's file may be longer when FragmentLogFileSize was larger then.
  return std::max(info.bytes, options_.file_bytes);
}

void RedoLog::recount_space() {
  // A handful of files, and only on a switch, a removal or a restore.
  held_space_bytes_ = 0;
  for (const auto& [seq, info] : files_) held_space_bytes_ += file_space_bytes(seq, info);
}

RedoChunk* RedoLog::chunk(uint64_t id) {
  if (id < first_chunk_id_ || id - first_chunk_id_ >= chunks_.size()) return nullptr;
  return &chunks_[id - first_chunk_id_];
}

void RedoLog::mark_in_flight(uint64_t id) {
  if (RedoChunk* c = chunk(id)) c->in_flight = true;
}

void RedoLog::mark_written(uint64_t id) {
  RedoChunk* c = chunk(id);
  if (c == nullptr) return;
  c->in_flight = false;
  c->written = true;
  // Writes of different files may finish out of order; the written LSN only moves over
  // a contiguous prefix.
  while (!chunks_.empty() && chunks_.front().written) {
    written_lsn_ = chunks_.front().end_lsn;
    buffered_bytes_ -= chunks_.front().bytes.size();
    if (spare_buffers_.size() < kSpareBuffersMax) {
      Bytes& buffer = spare_buffers_.emplace_back(std::move(chunks_.front().bytes));
      buffer.clear();
    }
    chunks_.pop_front();
    ++first_chunk_id_;
  }
}

// ---------------------------------------------------------------------------------------
// RedoChangeSink.

RedoChangeSink::RedoChangeSink(RedoLog* log, uint32_t gci, uint32_t table_id,
                               uint32_t table_version, uint32_t fragment_id)
    : log_(log) {
  header_.gci = gci;
  header_.table_id = table_id;
  header_.table_version = table_version;
  header_.fragment_id = fragment_id;
}

void RedoChangeSink::row_written(const storage::AttrValues& row) {
  add(RedoKind::kWriteRow, row);
}

void RedoChangeSink::row_deleted(const storage::AttrValues& key) {
  add(RedoKind::kDeleteKey, key);
}

void RedoChangeSink::add(RedoKind kind, const storage::AttrValues& values) {
  header_.kind = kind;
  Status appended = log_->append(header_, values);
  if (!appended.ok()) ++failures_;
}

}  // namespace duo::local_query
