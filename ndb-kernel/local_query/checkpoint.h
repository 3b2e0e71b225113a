// Local checkpoint (LCP) files of one log part: the data file chunks a checkpoint writes
// per fragment, the part's control record, and the paths of every durable file of a
// log part. Pure logic — the local_query block does the IO (local_query_checkpoint.cc,
// restore.cc). Formats are documented in docs/formats/redo-and-lcp.md.
//
// Data file lcp/part<P>/<lcp id>/T<table>F<fragment>.data: a sequence of chunks
//   u32 uncompressed length, u32 stored length, u8 compression (0 none, 1 zstd),
//   u32 crc32c of the stored bytes, then the stored bytes (an encoded RowBatch of
//   complete rows, every column).
// Control record lcp/part<P>/control.<0|1> (alternating; at restore the valid one with
// the higher sequence wins, the other is the fallback):
//   u32 magic, u32 sequence, u32 lcp id, u32 start_gci, u32 max_gci, u32 fragments,
//   per fragment u32 table id, u32 version, u32 fragment id, u64 rows, u64 data bytes,
//   then u32 crc32c (masked) of every byte before it.
//
// Thread-safety: pure functions and values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/wire_codec.h"
#include "storage/row/row_batch.h"

namespace duo::local_query {

using protocol::Bytes;

inline constexpr uint8_t kLcpCompressionNone = 0;
inline constexpr uint8_t kLcpCompressionZstd = 1;
inline constexpr size_t kLcpChunkHeaderBytes = 4 + 4 + 1 + 4;
// Largest chunk payload a reader accepts. A writer fills a chunk up to
// kLcpChunkFillBytes plus one row, which stays under one FS_WRITEREQ.
inline constexpr uint32_t kLcpChunkBytesMax = 63 * 1024;
inline constexpr size_t kLcpChunkFillBytes = 24 * 1024;
inline constexpr uint32_t kLcpControlMagic = 0x4443504cu;  // "LPCD" little-endian

// Appends one chunk holding `batch` to *out, zstd-compressed when `compress` (and
// compression gains something; otherwise stored plain).
Status encode_lcp_chunk(const storage::RowBatch& batch, bool compress, Bytes* out);

// Decodes the chunk at the start of `bytes` into *out. Returns the chunk's bytes, or 0
// when `bytes` ends inside it (read more). kCorruption for a bad header, crc or payload;
// the message says what, relative to the chunk start (the caller adds file and offset).
Result<size_t> decode_lcp_chunk(std::string_view bytes, storage::RowBatch* out);

struct LcpFragmentInfo {
  uint32_t table_id = 0;
  uint32_t table_version = 0;
  uint32_t fragment_id = 0;
  uint64_t rows = 0;
  uint64_t data_bytes = 0;
};

struct LcpControl {
  uint32_t sequence = 0;   // bumped by every control record written
  uint32_t lcp_id = 0;     // names the data directory
  uint32_t start_gci = 0;  // redo from this GCI on completes the checkpoint
  uint32_t max_gci = 0;    // highest GCI a checkpointed row can carry
  std::vector<LcpFragmentInfo> fragments;
};

Bytes encode_lcp_control(const LcpControl& control);
// kCorruption (with the reason) for a short, torn or corrupt record.
Result<LcpControl> decode_lcp_control(std::string_view bytes);

// Picks the control record to restore from out of the two slots (absent = nullopt;
// a slot that failed to decode holds its error). Prefers the valid record with the
// higher sequence whose max_gci <= restore_gci, falls back to the other. nullopt when
// neither slot exists; kCorruption when slots exist but none is usable.
Result<std::optional<LcpControl>> choose_lcp_control(const std::optional<Result<LcpControl>>& slot0,
                                                     const std::optional<Result<LcpControl>>& slot1,
                                                     uint32_t restore_gci);

// Paths (relative to the node's file system directory).
std::string lcp_part_dir(uint16_t log_part);
std::string lcp_dir(uint16_t log_part, uint32_t lcp_id);
std::string lcp_data_path(uint16_t log_part, uint32_t lcp_id, uint32_t table_id,
                          uint32_t fragment_id);
std::string lcp_control_path(uint16_t log_part, uint32_t slot);
std::string redo_part_dir(uint16_t log_part);
std::string redo_path(uint16_t log_part, uint32_t seq);

}  // namespace duo::local_query
