#include "storage/disk/undo_ring.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "ndb-kernel/common/crc32c.h"

namespace duo::storage::disk {
namespace {

struct ChunkHeader {
  uint64_t offset;
  uint64_t records_end;
  uint32_t data_bytes;
  uint32_t crc;
};
static_assert(sizeof(ChunkHeader) == kUndoChunkHeaderBytes);

uint32_t chunk_crc(const uint8_t* body, uint32_t data_bytes) {
  return crc32c_mask(crc32c(body + kUndoChunkHeaderBytes, data_bytes, crc32c(body, 20)));
}

}  // namespace

UndoRing::UndoRing(std::vector<File> files) : files_(std::move(files)) {
  for (const File& f : files_) ring_pages_ += f.pages > 1 ? f.pages - 1 : 0;
}

DiskPageId UndoRing::page_of_chunk(uint64_t chunk_offset) const {
  uint64_t r = (chunk_offset / kUndoChunkBytes) % ring_pages_;
  for (const File& f : files_) {
    const uint64_t n = f.pages > 1 ? f.pages - 1 : 0;
    if (r < n) return {f.file_no, static_cast<uint32_t>(1 + r)};
    r -= n;
  }
  return {};  // unreachable: r < ring_pages_
}

void write_undo_chunk(uint8_t* page, DiskPageId id, const UndoChunk& chunk) {
  set_page_identity(page, kUndoPageKind, id);
  set_page_lsn(page, chunk.last_lsn);
  uint8_t* body = page + kDiskPageHeaderBytes;
  ChunkHeader h{chunk.offset, chunk.records_end, static_cast<uint32_t>(chunk.data.size()), 0};
  std::memcpy(body, &h, kUndoChunkHeaderBytes);
  if (!chunk.data.empty()) std::memcpy(body + kUndoChunkHeaderBytes, chunk.data.data(), chunk.data.size());
  h.crc = chunk_crc(body, h.data_bytes);
  std::memcpy(body + 20, &h.crc, 4);
}

RecoveredUndo read_undo_ring(const UndoRing& ring, const std::function<const uint8_t*(DiskPageId)>& page) {
  RecoveredUndo out;
  // Valid chunks by offset; a page holds at most one.
  std::map<uint64_t, std::pair<ChunkHeader, const uint8_t*>> chunks;
  uint64_t max_lsn = 0;
  for (uint64_t r = 0; r < ring.ring_pages(); ++r) {
    const DiskPageId id = ring.page_of_chunk(r * kUndoChunkBytes);
    const uint8_t* p = page(id);
    if (page_kind(p) != kUndoPageKind) continue;
    const uint8_t* body = p + kDiskPageHeaderBytes;
    ChunkHeader h;
    std::memcpy(&h, body, kUndoChunkHeaderBytes);
    if (h.data_bytes > kUndoChunkBytes || h.offset % kUndoChunkBytes != 0) continue;
    if (ring.page_of_chunk(h.offset) != id || chunk_crc(body, h.data_bytes) != h.crc) continue;
    chunks[h.offset] = {h, body + kUndoChunkHeaderBytes};
    max_lsn = std::max(max_lsn, page_lsn(p));
  }
  out.next_lsn = max_lsn + 1;
  if (chunks.empty()) return out;
  // The newest chunk, then back while each older chunk is the full one just before it.
  auto head = std::prev(chunks.end());
  uint64_t first = head->first;
  while (first >= kUndoChunkBytes) {
    auto prev = chunks.find(first - kUndoChunkBytes);
    if (prev == chunks.end() || prev->second.first.data_bytes != kUndoChunkBytes) break;
    first = prev->first;
  }
  const uint64_t end = head->second.first.records_end;
  if (end <= first) {
    out.start_offset = end;
    return out;
  }
  out.start_offset = first;
  out.stream.reserve(end - first);
  for (uint64_t at = first; at < end; at += kUndoChunkBytes) {
    const auto& [h, data] = chunks.at(at);
    const uint64_t take = std::min<uint64_t>(h.data_bytes, end - at);
    out.stream.insert(out.stream.end(), data, data + take);
  }
  return out;
}

}  // namespace duo::storage::disk
