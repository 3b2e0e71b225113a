// The redo log of one log part (NDB's fragment log part): the record codec, the bounded
// in-memory redo buffer and the rolling of redo files. Pure logic — the local_query
// block moves the buffered bytes to the file system (local_query_redo.cc). Formats are
// documented in docs/formats/redo-and-lcp.md.
//
// Record (all integers little-endian):
//   u32 length     of the whole record, these 4 bytes included
//   u32 crc        crc32c_mask(crc32c of every byte after this field)
//   u32 gci        the GCI of the commit that made the change
//   u8  kind       1 = write row (insert-or-overwrite), 2 = delete key
//   u32 table id, u32 table version, u32 fragment id
//   AttrValues     (protocol/wire_codec.h): all columns, or the key columns for a delete
//
// The buffer is a queue of chunks, each at most kRedoChunkBytesMax and within one file,
// named by the log sequence number (LSN: bytes appended since the log was opened) of
// its end. A chunk is sealed (ready to write) when the next record does not fit in it,
// when its file is switched away from, or on seal_open_chunk() (a GCP save). Records
// never span files: a new file starts once the current one holds file_bytes or more.
//
// Redo space (NDB's NoOfFragmentLogFiles × FragmentLogFileSize, per log part): NDB's
// log part is a ring of file_count preallocated files, and writes stop (error 410)
// before the head reaches the tail. Here files are created in sequence and removed
// once a completed checkpoint made them useless (local_query_checkpoint.cc), so the
// ring is the set of files still held: a file switched away from takes a whole
// file_bytes (its unused tail counts, as NDB's never reused rest of a file does), the
// current one what it holds so far. space_accepting_writes() is the 410 check, with the
// same reserve as the buffer's 1221 check: past 3/4 of the space new writes are refused,
// so the commits of the writes already executed (never refused) fit in the rest.
//
// The bound never removes anything; it only refuses writes. Files go only in the removal
// that follows a checkpoint's synced control record, and only files whose records all
// have a GCI below that checkpoint's start GCI (after a restore: the crashed life's).
// So recovery never needs a removed file: a restart (system or node) restores the newest
// record whose max GCI is at most the restart GCI, and replays records from its start
// GCI on. The newest record is passed over only when torn (its removal never ran: the
// previous record's redo is all there) or when its max GCI is past the restart GCI,
// which cannot happen (the checkpoint waited for the save of max GCI + 2 before writing
// it). The space held counts a removed file until its removal is confirmed.
//
// Thread-safety: thread-compatible values (the block's thread owns them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ndb-kernel/common/status.h"
#include "ndb-kernel/protocol/wire_codec.h"
#include "storage/fragment/fragment.h"
#include "storage/row/attr_values.h"

namespace duo::local_query {

using protocol::Bytes;

enum class RedoKind : uint8_t {
  kWriteRow = 1,   // insert-or-overwrite the whole row
  kDeleteKey = 2,  // delete the row with this key, if present
};

// Fixed part of a record, before the values: length, crc, gci, kind, table, version,
// fragment.
inline constexpr size_t kRedoHeaderBytes = 4 + 4 + 4 + 1 + 4 + 4 + 4;
// Largest record a reader accepts: a row (storage::kMaxRowSizeBytes) with the framing of
// every column fits far below it; anything longer is a torn or corrupt length.
inline constexpr uint32_t kRedoRecordBytesMax = 48 * 1024;
// NDB error 410's text, which a write refused for redo space carries (kTemporary).
inline constexpr const char* kRedoFilesOverloadedMessage =
    "REDO log files overloaded (decrease TimeBetweenLocalCheckpoints or increase "
    "NoOfFragmentLogFiles)";
// Largest chunk of the buffer: one FS_WRITEREQ (fs::kFsReadBytesMax keeps it under the
// 64 KiB section limit and a whole number of pages).
inline constexpr size_t kRedoChunkBytesMax = 60 * 1024;

// Everything of a record but its values.
struct RedoHeader {
  uint32_t gci = 0;
  RedoKind kind = RedoKind::kWriteRow;
  uint32_t table_id = 0;
  uint32_t table_version = 0;
  uint32_t fragment_id = 0;
};
struct RedoRecord {
  RedoHeader header;
  storage::AttrValues values;
};

// Appends the encoded record to *out.
Status encode_redo_record(const RedoHeader& header, const storage::AttrValues& values, Bytes* out);

// Outcome of decoding the record at the start of `bytes`.
enum class RedoDecode {
  kRecord,    // *out holds it; *record_bytes is its length
  kNeedMore,  // `bytes` ends inside a plausible record (a reader reads more first)
  kBad,       // bad length, crc, kind or values: the torn tail of the file
};
RedoDecode decode_redo_record(std::string_view bytes, RedoRecord* out, size_t* record_bytes);

// Decodes every record of a whole file image in order, stopping at the first bad or
// incomplete one (the torn tail). Returns the records' bytes consumed; *torn is set when
// bytes were left over.
size_t decode_redo_file(std::string_view bytes, std::deque<RedoRecord>* out, bool* torn);

// "00000001.redo" for seq 1; parse_redo_file_name is its inverse (0 if not a redo file).
std::string redo_file_name(uint32_t seq);
uint32_t parse_redo_file_name(std::string_view name);

struct RedoLogOptions {
  size_t buffer_bytes = 32u << 20;  // RedoBuffer
  uint64_t file_bytes = 16u << 20;  // FragmentLogFileSize
  uint32_t file_count = 0;          // NoOfFragmentLogFiles (0: redo space unbounded)
};

// One buffered piece of a redo file, written with one FS_WRITEREQ.
struct RedoChunk {
  uint32_t file_seq = 0;
  uint64_t offset = 0;  // in its file
  Bytes bytes;
  uint64_t end_lsn = 0;
  bool sealed = false;
  bool in_flight = false;
  bool written = false;
};

// What the log knows of each of its files (in this life, plus the old life's at restore).
struct RedoFileInfo {
  uint64_t bytes = 0;    // appended so far (written or buffered)
  uint32_t max_gci = 0;  // highest GCI of a record in it
};

class RedoLog {
 public:
  // The first record goes to file `first_file_seq` (> 0).
  RedoLog(RedoLogOptions options, uint32_t first_file_seq);

  // Appends a record. Never refuses: commits must not fail, so the block keeps the
  // buffer and the files below their bounds by refusing new writes (accepting_writes(),
  // space_accepting_writes()) instead.
  Status append(const RedoHeader& header, const storage::AttrValues& values);
  // Seals the chunk records are being appended to (a GCP save wants everything out).
  void seal_open_chunk();
  // Starts a new file for the next record.
  void switch_file();
  // Forgets every file and starts the log afresh in `first_file_seq`: the new life
  // after a restore. Only valid while nothing was appended.
  void restart_at(uint32_t first_file_seq);

  // The buffer, oldest first. The block marks chunks in flight / written through
  // mark_in_flight / mark_written, and written ones leave the front.
  const std::deque<RedoChunk>& chunks() const { return chunks_; }
  // Id of chunks()[i] is first_chunk_id() + i; ids stay valid while the chunk is queued.
  uint64_t first_chunk_id() const { return first_chunk_id_; }
  RedoChunk* chunk(uint64_t id);
  void mark_in_flight(uint64_t id);
  void mark_written(uint64_t id);

  // Bytes in the buffer (not yet confirmed written), and the bound.
  size_t buffered_bytes() const { return buffered_bytes_; }
  // False once the buffer is past 3/4 of its bound: new write operations are refused
  // (NDB error 1221) so the commits of those already executed always fit.
  bool accepting_writes() const { return buffered_bytes_ * 4 < options_.buffer_bytes * 3; }
  uint64_t appended_lsn() const { return appended_lsn_; }
  // Every byte up to this LSN is written (in the file system, maybe not yet synced).
  uint64_t written_lsn() const { return written_lsn_; }
  uint32_t current_file_seq() const { return current_file_seq_; }
  const std::map<uint32_t, RedoFileInfo>& files() const { return files_; }
  // Registers a file of an earlier life found at restore (never written to again).
  void add_old_file(uint32_t seq, RedoFileInfo info);
  // The file was removed: its space is free again.
  void forget_file(uint32_t seq);
  // Bumped by restart_at(): a removal confirmed after the log started afresh names a
  // file of the earlier life, not the new file of that sequence number.
  uint32_t life() const { return life_; }

  // Redo space: file_count × file_bytes (0: unbounded), and what the files held take of
  // it (switched-away and old files whole, the current one as far as it is filled). The
  // held bytes may pass the space by up to the reserve's overrun: commits never fail.
  uint64_t space_bytes() const { return options_.file_count * options_.file_bytes; }
  uint64_t held_space_bytes() const { return held_space_bytes_; }
  // held / space, 0 when unbounded (the checkpoint trigger and write rate use it).
  double space_fill() const;
  // False once the held files pass 3/4 of the space: new write operations are refused
  // (NDB error 410) so the commits of those already executed fit in the last quarter.
  bool space_accepting_writes() const {
    return options_.file_count == 0 || held_space_bytes_ * 4 < space_bytes() * 3;
  }

 private:
  const RedoLogOptions options_;
  std::deque<RedoChunk> chunks_;
  uint64_t first_chunk_id_ = 0;
  size_t buffered_bytes_ = 0;
  uint64_t appended_lsn_ = 0;
  uint64_t written_lsn_ = 0;
  // The space `files_[seq]` takes (held_space_bytes_ is their sum).
  uint64_t file_space_bytes(uint32_t seq, const RedoFileInfo& info) const;
  void recount_space();

  uint32_t current_file_seq_;
  std::map<uint32_t, RedoFileInfo> files_;
  uint64_t held_space_bytes_ = 0;
  uint32_t life_ = 0;
  Bytes scratch_;
  // Buffers of written chunks, kept for the next chunks: a chunk is sized
  // kRedoChunkBytesMax once instead of growing record by record (at most
  // kSpareBuffersMax; the rest are freed).
  static constexpr size_t kSpareBuffersMax = 4;
  std::vector<Bytes> spare_buffers_;
};

// The change sink a commit installs on a fragment: every installed change becomes a redo
// record of (table, version, fragment, gci). An append failure cannot fail the commit;
// it is counted for the block to report.
class RedoChangeSink final : public storage::ChangeSink {
 public:
  RedoChangeSink(RedoLog* log, uint32_t gci, uint32_t table_id, uint32_t table_version,
                 uint32_t fragment_id);
  void row_written(const storage::AttrValues& row) override;
  void row_deleted(const storage::AttrValues& key) override;
  uint64_t failures() const { return failures_; }

 private:
  void add(RedoKind kind, const storage::AttrValues& values);

  RedoLog* const log_;
  RedoHeader header_;
  uint64_t failures_ = 0;
};

}  // namespace duo::local_query
