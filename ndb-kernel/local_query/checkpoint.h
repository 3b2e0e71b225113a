// Local checkpoint (LCP) files of one log part: the data file chunks a checkpoint writes
// per fragment, the part's control record, the keys deleted between checkpoints (what a
// partial checkpoint records of deletes), the chain of data files that restores one
// fragment, and the paths of every durable file of a log part. Pure logic — the
// local_query block does the IO (local_query_checkpoint.cc, restore.cc). Formats are
// documented in docs/formats/redo-and-lcp.md.
//
// Data file lcp/part<P>/<lcp id>/T<table>F<fragment>.data: a sequence of chunks
//   u32 uncompressed length, u32 stored length, u8 compression (0 none, 1 zstd),
//   u32 crc32c of the stored bytes, then the stored bytes (an encoded RowBatch). The
//   first `delete_bytes` of a file are chunks of primary keys deleted (partial files
//   only); the rest are chunks of complete rows, every column.
// Control record lcp/part<P>/control.<0|1> (alternating; at restore the valid one with
// the higher sequence wins, the other is the fallback; the older full-only layout is
// still read, see kLcpControlMagicFullOnly):
//   u32 magic, u32 sequence, u32 lcp id, u32 start_gci, u32 max_gci, u32 fragments,
//   per fragment u32 table id, u32 version, u32 fragment id, u32 files, and per file
//   (oldest first) u32 lcp id, u32 parts, u32 all_part, u64 rows, u64 deleted keys,
//   u64 delete bytes, u64 data bytes; then u32 crc32c (masked) of every byte before it.
//
// Partial checkpoints (NDB's EnablePartialLcp). Row refs never move, so they are dealt
// into `parts` parts (storage::Fragment::scan_part_of). A partial file of checkpoint i
// holds every row of part (i mod parts), every row whose GCI is at least the previous
// checkpoint's start GCI s(i-1), and — applied first — every key deleted by a commit of
// GCI >= s(i-1). A fragment restores by applying its chain of files oldest first (writes
// and deletes by key), then redo from the newest checkpoint's start GCI s(m). Why that is
// exact: say a key K is settled at checkpoint m when no commit of GCI >= s(m) touches
// it. Every commit of GCI < s(i) happens before checkpoint i's scan (a late commit of an
// older GCI lowers s(i)), and s never decreases. Take K settled at m with last commit
// of GCI c. If s(k-1) <= c < s(k) for a file k of the chain, file k holds K's final
// image (its row GCI is c) or its delete (deletes go first, so a re-insert's image
// wins), and every later file l holds at most that image again, never its delete
// (c < s(k) <= s(l-1)). Otherwise K's last commit (if any) precedes the scan of the
// chain's oldest file j, so K kept its row (and row ref) through every file: a full
// file j or the file whole for K's part holds its final image, and no file holds
// another image or a delete of it. The chain thus leaves every key settled at its newest checkpoint
// m in its committed state; every other key's last change is in the redo from s(m), replayed in log
// order over it. A chain drops its oldest files once the newer ones hold every part whole (or one
// is full). A fragment's first checkpoint in a life, after a restore, during or after a node
// restart's copy (rows written without redo, with their source's GCI) or after its deleted keys
// overflowed is full.
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
#include "storage/fragment/fragment.h"
#include "storage/row/attr_values.h"
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
inline constexpr uint32_t kLcpControlMagic = 0x3243504cu;  // "LPC2" little-endian
// The record of full checkpoints only (per fragment u32 table id, u32 version, u32
// fragment id, u64 rows, u64 data bytes): still read, as chains of one full file.
inline constexpr uint32_t kLcpControlMagicFullOnly = 0x4443504cu;  // "LPCD"
// A fragment's deleted keys are kept up to this many bytes; past it the fragment's
// next checkpoint is full (which needs no delete records) instead.
inline constexpr size_t kLcpDeletedKeyBytesMax = 8u << 20;

// Appends one chunk holding `batch` to *out, zstd-compressed when `compress` (and
// compression gains something; otherwise stored plain).
Status encode_lcp_chunk(const storage::RowBatch& batch, bool compress, Bytes* out);

// Decodes the chunk at the start of `bytes` into *out. Returns the chunk's bytes, or 0
// when `bytes` ends inside it (read more). kCorruption for a bad header, crc or payload;
// the message says what, relative to the chunk start (the caller adds file and offset).
Result<size_t> decode_lcp_chunk(std::string_view bytes, storage::RowBatch* out);

// One data file of a fragment's chain.
struct LcpDataFile {
  uint32_t lcp_id = 0;    // the checkpoint (directory) that wrote it
  uint32_t parts = 0;     // 0: a full file (every row); else a partial one, see above
  uint32_t all_part = 0;  // partial: the part whose every row it holds
  uint64_t rows = 0;
  uint64_t deleted_keys = 0;
  uint64_t delete_bytes = 0;  // the leading chunks: deleted keys
  uint64_t data_bytes = 0;    // the whole file
  bool full() const { return parts == 0; }
};

struct LcpFragmentInfo {
  uint32_t table_id = 0;
  uint32_t table_version = 0;
  uint32_t fragment_id = 0;
  std::vector<LcpDataFile> files;  // oldest first; a restore applies them in order
};

struct LcpControl {
  uint32_t sequence = 0;   // bumped by every control record written
  uint32_t lcp_id = 0;     // names the data directory of the newest files
  uint32_t start_gci = 0;  // redo from this GCI on completes the checkpoint
  uint32_t max_gci = 0;    // highest GCI a checkpointed row can carry
  std::vector<LcpFragmentInfo> fragments;
};

// Drops the oldest files of a chain that the newer ones make useless: everything before
// a full file, and everything before the newest files that together hold every part
// whole (files of another part count do not count toward it).
void trim_lcp_chain(std::vector<LcpDataFile>* files);
// Whether a chain restores its fragment on its own: it starts with a full file, or its
// partial files (one part count) hold every part whole.
bool lcp_chain_complete(const std::vector<LcpDataFile>& files);

// The keys deleted from one fragment by commits, with their GCIs, since the checkpoint
// before the last one started: the delete records of the next partial checkpoint.
// Bounded by kLcpDeletedKeyBytesMax: past it the keys are dropped (and later ones
// ignored) until a full checkpoint of the fragment starts; the highest GCI of a key
// dropped says which partial checkpoints would miss one.
class LcpDeletedKeys {
 public:
  void add(uint32_t gci, const storage::AttrValues& key);
  // Whether every key deleted in a GCI >= `gci` is here: a partial file recording the
  // deletes since `gci` may be written.
  bool complete_since(uint32_t gci) const { return !overflowed_ && dropped_gci_max_ < gci; }
  // A full file of the fragment starts: keys are recorded again (the ones dropped so far
  // all precede it).
  void full_file_started() { overflowed_ = false; }
  // Forgets the keys deleted in GCIs below `gci` (the newest checkpoint's start GCI:
  // the next partial file needs only deletes of GCI >= gci).
  void forget_before(uint32_t gci);
  // The keys deleted in GCI >= min_gci, as batches of at most about kLcpChunkFillBytes.
  std::vector<storage::RowBatch> batches_since(uint32_t min_gci) const;
  size_t size() const { return gcis_.size(); }

 private:
  std::vector<uint32_t> gcis_;
  storage::RowBatch keys_;
  bool overflowed_ = false;
  uint32_t dropped_gci_max_ = 0;
};

// Forwards every change to `next` (the redo log's sink) and records deletes in `deleted`
// (null: none) at `gci`.
class LcpDeleteRecorder : public storage::ChangeSink {
 public:
  LcpDeleteRecorder(storage::ChangeSink* next, LcpDeletedKeys* deleted, uint32_t gci)
      : next_(next), deleted_(deleted), gci_(gci) {}
  void row_written(const storage::AttrValues& row) override { next_->row_written(row); }
  void row_deleted(const storage::AttrValues& key) override {
    next_->row_deleted(key);
    if (deleted_ != nullptr) deleted_->add(gci_, key);
  }

 private:
  storage::ChangeSink* const next_;
  LcpDeletedKeys* const deleted_;
  const uint32_t gci_;
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
