// LCP data chunks, the control record and the durable paths of a log part (checkpoint.h).
#include "ndb-kernel/local_query/checkpoint.h"

#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "ndb-kernel/common/crc32c.h"

namespace duo::local_query {

namespace {

// zstd level 1: checkpoints run beside the query load, so speed beats ratio (rows
// compress well even at the fastest levels).
constexpr int kZstdLevel = 1;

Status corrupt(std::string what) {
  return Status(ErrorCode::kCorruption, what);
}

}  // namespace

Status encode_lcp_chunk(const storage::RowBatch& batch, bool compress, Bytes* out) {
  Bytes plain;
  DUO_RETURN_IF_ERROR(protocol::encode_row_batch(batch, &plain));
  if (plain.size() > kLcpChunkBytesMax) {
    return Status(ErrorCode::kInternal, "LCP chunk of " + std::to_string(plain.size()) +
                                            " bytes is over the chunk limit");
  }
  uint8_t compression = kLcpCompressionNone;
  Bytes packed;
  if (compress) {
    packed.resize(ZSTD_compressBound(plain.size()));
    const size_t size =
        ZSTD_compress(packed.data(), packed.size(), plain.data(), plain.size(), kZstdLevel);
    // Incompressible data (or a zstd error) is stored plain: the reader handles both.
    if (!ZSTD_isError(size) && size < plain.size()) {
      packed.resize(size);
      compression = kLcpCompressionZstd;
    }
  }
  const Bytes& stored = compression == kLcpCompressionNone ? plain : packed;
  protocol::put_u32(out, static_cast<uint32_t>(plain.size()));
  protocol::put_u32(out, static_cast<uint32_t>(stored.size()));
  protocol::put_u8(out, compression);
  protocol::put_u32(out, crc32c_mask(crc32c(stored.data(), stored.size())));
  out->insert(out->end(), stored.begin(), stored.end());
  return Status::OK();
}

Result<size_t> decode_lcp_chunk(std::string_view bytes, storage::RowBatch* out) {
  protocol::ByteReader in(bytes);
  uint32_t plain_size = 0, stored_size = 0, crc = 0;
  uint8_t compression = 0;
  if (!in.u32(&plain_size) || !in.u32(&stored_size) || !in.u8(&compression) || !in.u32(&crc)) {
    return size_t{0};
  }
  if (plain_size > kLcpChunkBytesMax || stored_size > kLcpChunkBytesMax) {
    return corrupt("chunk length " + std::to_string(plain_size) + "/" +
                   std::to_string(stored_size) + " out of range");
  }
  if (compression != kLcpCompressionNone && compression != kLcpCompressionZstd) {
    return corrupt("unknown chunk compression " + std::to_string(compression));
  }
  std::string_view stored;
  if (!in.take(stored_size, &stored)) return size_t{0};
  if (crc32c(stored.data(), stored.size()) != crc32c_unmask(crc))
    return corrupt("chunk crc mismatch");
  std::string plain_copy;
  std::string_view plain = stored;
  if (compression == kLcpCompressionZstd) {
    plain_copy.resize(plain_size);
    const size_t size =
        ZSTD_decompress(plain_copy.data(), plain_copy.size(), stored.data(), stored.size());
    if (ZSTD_isError(size) || size != plain_size) return corrupt("chunk does not decompress");
    plain = plain_copy;
  } else if (plain_size != stored_size) {
    return corrupt("plain chunk with two lengths");
  }
  out->clear();
  Status decoded = protocol::decode_row_batch(plain, out);
  if (!decoded.ok()) return corrupt("chunk rows do not decode: " + decoded.message());
  return kLcpChunkHeaderBytes + stored_size;
}

Bytes encode_lcp_control(const LcpControl& control) {
  Bytes out;
  protocol::put_u32(&out, kLcpControlMagic);
  protocol::put_u32(&out, control.sequence);
  protocol::put_u32(&out, control.lcp_id);
  protocol::put_u32(&out, control.start_gci);
  protocol::put_u32(&out, control.max_gci);
  protocol::put_u32(&out, static_cast<uint32_t>(control.fragments.size()));
  for (const LcpFragmentInfo& f : control.fragments) {
    protocol::put_u32(&out, f.table_id);
    protocol::put_u32(&out, f.table_version);
    protocol::put_u32(&out, f.fragment_id);
    protocol::put_u32(&out, static_cast<uint32_t>(f.files.size()));
    for (const LcpDataFile& file : f.files) {
      protocol::put_u32(&out, file.lcp_id);
      protocol::put_u32(&out, file.parts);
      protocol::put_u32(&out, file.all_part);
      protocol::put_u64(&out, file.rows);
      protocol::put_u64(&out, file.deleted_keys);
      protocol::put_u64(&out, file.delete_bytes);
      protocol::put_u64(&out, file.data_bytes);
    }
  }
  protocol::put_u32(&out, crc32c_mask(crc32c(out.data(), out.size())));
  return out;
}

Result<LcpControl> decode_lcp_control(std::string_view bytes) {
  if (bytes.size() < 28)
    return corrupt("control record is " + std::to_string(bytes.size()) + " bytes");
  // The crc first: every length below is then one the writer wrote.
  const size_t crc_at = bytes.size() - 4;
  protocol::ByteReader crc_in(bytes.substr(crc_at));
  uint32_t crc = 0;
  if (!crc_in.u32(&crc) || crc32c(bytes.data(), crc_at) != crc32c_unmask(crc)) {
    return corrupt("control record crc mismatch");
  }
  protocol::ByteReader in(bytes.substr(0, crc_at));
  uint32_t magic = 0, count = 0;
  LcpControl control;
  if (!in.u32(&magic) || !in.u32(&control.sequence) || !in.u32(&control.lcp_id) ||
      !in.u32(&control.start_gci) || !in.u32(&control.max_gci) || !in.u32(&count)) {
    return corrupt("control record header is short");
  }
  if (magic == kLcpControlMagicFullOnly) {
    // Written before partial checkpoints: per fragment one full file in the record's
    // own directory.
    constexpr size_t kOldFragmentBytes = 4 + 4 + 4 + 8 + 8;
    if (in.remaining() != size_t{count} * kOldFragmentBytes) {
      return corrupt("control record of " + std::to_string(count) + " fragments is " +
                     std::to_string(bytes.size()) + " bytes");
    }
    control.fragments.resize(count);
    for (LcpFragmentInfo& f : control.fragments) {
      LcpDataFile file;
      file.lcp_id = control.lcp_id;
      if (!in.u32(&f.table_id) || !in.u32(&f.table_version) || !in.u32(&f.fragment_id) ||
          !in.u64(&file.rows) || !in.u64(&file.data_bytes)) {
        return corrupt("control record fragment list is short");
      }
      f.files.push_back(file);
    }
    return control;
  }
  if (magic != kLcpControlMagic) return corrupt("control record has a bad magic");
  constexpr size_t kFragmentBytes = 4 + 4 + 4 + 4;
  constexpr size_t kFileBytes = 4 + 4 + 4 + 8 + 8 + 8 + 8;
  if (size_t{count} * kFragmentBytes > in.remaining()) {
    return corrupt("control record of " + std::to_string(count) + " fragments is " +
                   std::to_string(bytes.size()) + " bytes");
  }
  control.fragments.resize(count);
  for (LcpFragmentInfo& f : control.fragments) {
    uint32_t files = 0;
    if (!in.u32(&f.table_id) || !in.u32(&f.table_version) || !in.u32(&f.fragment_id) ||
        !in.u32(&files) || size_t{files} * kFileBytes > in.remaining()) {
      return corrupt("control record fragment list is short");
    }
    f.files.resize(files);
    for (LcpDataFile& file : f.files) {
      if (!in.u32(&file.lcp_id) || !in.u32(&file.parts) || !in.u32(&file.all_part) ||
          !in.u64(&file.rows) || !in.u64(&file.deleted_keys) || !in.u64(&file.delete_bytes) ||
          !in.u64(&file.data_bytes)) {
        return corrupt("control record fragment list is short");
      }
      if (file.delete_bytes > file.data_bytes || (file.parts != 0 && file.all_part >= file.parts)) {
        return corrupt("control record names a malformed data file");
      }
    }
    if (!lcp_chain_complete(f.files)) {
      return corrupt("control record: table " + std::to_string(f.table_id) + " fragment " +
                     std::to_string(f.fragment_id) + " has an incomplete chain of data files");
    }
  }
  if (in.remaining() != 0) return corrupt("control record has trailing bytes");
  return control;
}

Result<std::optional<LcpControl>> choose_lcp_control(const std::optional<Result<LcpControl>>& slot0,
                                                     const std::optional<Result<LcpControl>>& slot1,
                                                     uint32_t restore_gci) {
  if (!slot0 && !slot1) return std::optional<LcpControl>();
  const LcpControl* best = nullptr;
  std::string why;
  for (const auto* slot : {&slot0, &slot1}) {
    const std::string name = slot == &slot0 ? "control.0" : "control.1";
    if (!slot->has_value()) continue;
    if (!(*slot)->ok()) {
      why += (why.empty() ? "" : "; ") + name + ": " + (*slot)->status().message();
      continue;
    }
    const LcpControl& control = (*slot)->value();
    if (control.max_gci > restore_gci) {
      why += (why.empty() ? "" : "; ") + name + ": LCP " + std::to_string(control.lcp_id) +
             " holds GCI " + std::to_string(control.max_gci) + " > restore GCI " +
             std::to_string(restore_gci);
      continue;
    }
    if (best == nullptr || control.sequence > best->sequence) best = &control;
  }
  if (best == nullptr) return corrupt("no usable LCP control record: " + why);
  return std::optional<LcpControl>(*best);
}

void trim_lcp_chain(std::vector<LcpDataFile>* files) {
  if (files->empty()) return;
  const uint32_t parts = files->back().parts;
  std::vector<bool> whole(parts, false);
  uint32_t missing = parts;
  // From the newest back: the first file from which on every row is held whole is the
  // oldest one needed.
  for (size_t i = files->size(); i-- > 0;) {
    const LcpDataFile& file = (*files)[i];
    if (!file.full()) {
      if (file.parts == parts && !whole[file.all_part]) {
        whole[file.all_part] = true;
        --missing;
      }
      if (missing != 0) continue;
    }
    files->erase(files->begin(), files->begin() + static_cast<ptrdiff_t>(i));
    return;
  }
}

bool lcp_chain_complete(const std::vector<LcpDataFile>& files) {
  if (files.empty()) return false;
  if (files.front().full()) return true;
  const uint32_t parts = files.front().parts;
  std::vector<bool> whole(parts, false);
  uint32_t missing = parts;
  for (const LcpDataFile& file : files) {
    // A partial chain never mixes part counts (a new count starts with a full file).
    if (file.full() || file.parts != parts) return false;
    if (!whole[file.all_part]) {
      whole[file.all_part] = true;
      --missing;
    }
  }
  return missing == 0;
}

void LcpDeletedKeys::add(uint32_t gci, const storage::AttrValues& key) {
  if (overflowed_) {
    dropped_gci_max_ = std::max(dropped_gci_max_, gci);
    return;
  }
  // Entries count too: a key of one small column costs more in them than in data.
  const size_t bytes = keys_.values().data().size() + 16 * gcis_.size();
  if (bytes + key.data().size() + 16 > kLcpDeletedKeyBytesMax) {
    // Too many deletes between checkpoints: the fragment's next checkpoint writes it
    // whole, which needs none of them.
    overflowed_ = true;
    dropped_gci_max_ = std::max(dropped_gci_max_, gci);
    for (uint32_t dropped : gcis_) dropped_gci_max_ = std::max(dropped_gci_max_, dropped);
    gcis_.clear();
    keys_.clear();
    return;
  }
  storage::AttrValues& row = keys_.begin_row();
  for (size_t i = 0; i < key.size(); ++i) {
    const storage::AttrValues::Entry& entry = key.entry(i);
    if (entry.is_null) {
      row.add_null(entry.column);
    } else {
      row.add(entry.column, key.value(i));
    }
  }
  gcis_.push_back(gci);
}

void LcpDeletedKeys::forget_before(uint32_t gci) {
  storage::RowBatch kept;
  std::vector<uint32_t> kept_gcis;
  for (size_t i = 0; i < gcis_.size(); ++i) {
    if (gcis_[i] < gci) continue;
    const storage::RowBatch::Row key = keys_.row(i);
    storage::AttrValues& row = kept.begin_row();
    for (size_t k = 0; k < key.size(); ++k) {
      if (key.is_null(k)) {
        row.add_null(key.column(k));
      } else {
        row.add(key.column(k), key.value(k));
      }
    }
    kept_gcis.push_back(gcis_[i]);
  }
  keys_ = std::move(kept);
  gcis_ = std::move(kept_gcis);
}

std::vector<storage::RowBatch> LcpDeletedKeys::batches_since(uint32_t min_gci) const {
  std::vector<storage::RowBatch> batches;
  size_t bytes = 0;
  for (size_t i = 0; i < gcis_.size(); ++i) {
    if (gcis_[i] < min_gci) continue;
    if (batches.empty() || bytes >= kLcpChunkFillBytes) {
      batches.emplace_back();
      bytes = 8;
    }
    const storage::RowBatch::Row key = keys_.row(i);
    storage::AttrValues& row = batches.back().begin_row();
    bytes += 4;
    for (size_t k = 0; k < key.size(); ++k) {
      if (key.is_null(k)) {
        row.add_null(key.column(k));
        bytes += 2;
      } else {
        row.add(key.column(k), key.value(k));
        bytes += 4 + key.value(k).size();
      }
    }
  }
  return batches;
}

std::string lcp_part_dir(uint16_t log_part) {
  return "lcp/part" + std::to_string(log_part);
}

std::string lcp_dir(uint16_t log_part, uint32_t lcp_id) {
  return lcp_part_dir(log_part) + "/" + std::to_string(lcp_id);
}

std::string lcp_data_path(uint16_t log_part, uint32_t lcp_id, uint32_t table_id,
                          uint32_t fragment_id) {
  return lcp_dir(log_part, lcp_id) + "/T" + std::to_string(table_id) + "F" +
         std::to_string(fragment_id) + ".data";
}

std::string lcp_control_path(uint16_t log_part, uint32_t slot) {
  return lcp_part_dir(log_part) + "/control." + std::to_string(slot & 1);
}

std::string redo_part_dir(uint16_t log_part) {
  return "redo/part" + std::to_string(log_part);
}

std::string redo_path(uint16_t log_part, uint32_t seq) {
  char name[32];
  std::snprintf(name, sizeof(name), "/%08u.redo", seq);
  return redo_part_dir(log_part) + name;
}

}  // namespace duo::local_query
