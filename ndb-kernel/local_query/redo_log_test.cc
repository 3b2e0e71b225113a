// The redo record codec (round trips, torn and corrupt records, file names) and the
// redo buffer (chunking, sealing, file rolling, written LSN over out-of-order writes,
// the overload threshold) and the redo space of the files (NoOfFragmentLogFiles ×
// FragmentLogFileSize: what the held files take, the 410 refusal at 3/4 of it, the space
// freed when a checkpoint removes files).
#include "ndb-kernel/local_query/redo_log.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <string>

namespace duo::local_query {
namespace {

storage::AttrValues values_of(int n, size_t bytes = 8) {
  storage::AttrValues values;
  values.add(0, std::string(4, static_cast<char>('a' + n % 26)));
  values.add_null(1);
  values.add(2, std::string(bytes, 'x'));
  return values;
}

RedoHeader header(uint32_t gci, RedoKind kind = RedoKind::kWriteRow) {
  return RedoHeader{gci, kind, 7, 3, 5};
}

std::string_view view(const Bytes& bytes) {
  return protocol::as_view(bytes);
}

TEST(RedoRecordTest, RoundTripsEveryField) {
  Bytes out;
  ASSERT_TRUE(encode_redo_record(header(42, RedoKind::kDeleteKey), values_of(1), &out).ok());
  RedoRecord record;
  size_t length = 0;
  ASSERT_EQ(decode_redo_record(view(out), &record, &length), RedoDecode::kRecord);
  EXPECT_EQ(length, out.size());
  EXPECT_EQ(record.header.gci, 42u);
  EXPECT_EQ(record.header.kind, RedoKind::kDeleteKey);
  EXPECT_EQ(record.header.table_id, 7u);
  EXPECT_EQ(record.header.table_version, 3u);
  EXPECT_EQ(record.header.fragment_id, 5u);
  ASSERT_EQ(record.values.size(), 3u);
  EXPECT_EQ(record.values.value(0), "bbbb");
  EXPECT_TRUE(record.values.entry(1).is_null);
  EXPECT_EQ(record.values.value(2), std::string(8, 'x'));
}

TEST(RedoRecordTest, RoundTripsAtBoundaryValueSizes) {
  for (size_t size : {0u, 1u, 127u, 128u, 255u, 256u, 30000u}) {
    Bytes out;
    ASSERT_TRUE(encode_redo_record(header(1), values_of(0, size), &out).ok()) << size;
    RedoRecord record;
    size_t length = 0;
    ASSERT_EQ(decode_redo_record(view(out), &record, &length), RedoDecode::kRecord) << size;
    EXPECT_EQ(record.values.value(2).size(), size);
  }
}

TEST(RedoRecordTest, EveryPrefixNeedsMoreAndEveryFlippedByteIsBad) {
  Bytes out;
  ASSERT_TRUE(encode_redo_record(header(9), values_of(3), &out).ok());
  RedoRecord record;
  size_t length = 0;
  for (size_t cut = 4; cut < out.size(); ++cut) {
    EXPECT_EQ(decode_redo_record(view(out).substr(0, cut), &record, &length), RedoDecode::kNeedMore)
        << cut;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    Bytes flipped = out;
    flipped[i] ^= 0x40;
    const RedoDecode result = decode_redo_record(view(flipped), &record, &length);
    // A flipped length may ask for more bytes than there are; never a valid record.
    EXPECT_NE(result, RedoDecode::kRecord) << "byte " << i;
  }
}

TEST(RedoRecordTest, ZeroLengthIsTheEndOfTheLog) {
  Bytes zeros(64, 0);
  RedoRecord record;
  size_t length = 0;
  EXPECT_EQ(decode_redo_record(view(zeros), &record, &length), RedoDecode::kBad);
}

TEST(RedoRecordTest, FileDecodeStopsAtTheTornTail) {
  Bytes file;
  for (uint32_t gci = 1; gci <= 5; ++gci) {
    ASSERT_TRUE(encode_redo_record(header(gci), values_of(static_cast<int>(gci)), &file).ok());
  }
  const size_t whole = file.size();
  std::deque<RedoRecord> records;
  bool torn = true;
  EXPECT_EQ(decode_redo_file(view(file), &records, &torn), whole);
  EXPECT_FALSE(torn);
  EXPECT_EQ(records.size(), 5u);

  // Cut the last record in half: four records, torn.
  records.clear();
  Bytes cut(file.begin(), file.end() - 10);
  decode_redo_file(view(cut), &records, &torn);
  EXPECT_TRUE(torn);
  EXPECT_EQ(records.size(), 4u);

  // Corrupt the third record: two records, and nothing after it counts.
  records.clear();
  Bytes corrupt = file;
  corrupt[whole / 2] ^= 1;
  decode_redo_file(view(corrupt), &records, &torn);
  EXPECT_TRUE(torn);
  EXPECT_LT(records.size(), 5u);
  for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i].header.gci, i + 1);
}

TEST(RedoRecordTest, FileNames) {
  EXPECT_EQ(redo_file_name(1), "00000001.redo");
  EXPECT_EQ(redo_file_name(12345678), "12345678.redo");
  EXPECT_EQ(parse_redo_file_name("00000001.redo"), 1u);
  EXPECT_EQ(parse_redo_file_name("00000042.redo"), 42u);
  EXPECT_EQ(parse_redo_file_name("0000001.redo"), 0u);
  EXPECT_EQ(parse_redo_file_name("0000000a.redo"), 0u);
  EXPECT_EQ(parse_redo_file_name("00000001.data"), 0u);
  EXPECT_EQ(parse_redo_file_name("sub/"), 0u);
}

TEST(RedoLogTest, ChunksAreSealedWhenFullAndStayWithinOneWrite) {
  RedoLog log(RedoLogOptions{1 << 20, 1 << 30}, 1);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(log.append(header(1), values_of(i, 2000)).ok());
  ASSERT_GE(log.chunks().size(), 3u);
  uint64_t offset = 0;
  for (size_t i = 0; i < log.chunks().size(); ++i) {
    const RedoChunk& chunk = log.chunks()[i];
    EXPECT_LE(chunk.bytes.size(), kRedoChunkBytesMax);
    EXPECT_EQ(chunk.offset, offset);
    EXPECT_EQ(chunk.file_seq, 1u);
    EXPECT_EQ(chunk.sealed, i + 1 < log.chunks().size());
    offset += chunk.bytes.size();
  }
  EXPECT_EQ(log.appended_lsn(), offset);
  EXPECT_EQ(log.buffered_bytes(), offset);
  log.seal_open_chunk();
  EXPECT_TRUE(log.chunks().back().sealed);
}

TEST(RedoLogTest, FilesRollOverAndRecordsNeverSpanFiles) {
  RedoLog log(RedoLogOptions{1 << 20, 10000}, 3);
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(log.append(header(10 + i), values_of(i, 1000)).ok());
  ASSERT_GE(log.files().size(), 3u);
  EXPECT_EQ(log.files().begin()->first, 3u);
  uint32_t previous_max = 0;
  for (const auto& [seq, info] : log.files()) {
    EXPECT_LE(info.bytes, 10000u);
    EXPECT_GT(info.max_gci, previous_max);
    previous_max = info.max_gci;
  }
  // Each file's chunks are contiguous from offset 0 and hold whole records.
  std::map<uint32_t, Bytes> files;
  for (const RedoChunk& chunk : log.chunks()) {
    Bytes& file = files[chunk.file_seq];
    EXPECT_EQ(chunk.offset, file.size());
    file.insert(file.end(), chunk.bytes.begin(), chunk.bytes.end());
  }
  size_t records_total = 0;
  for (const auto& [seq, file] : files) {
    std::deque<RedoRecord> records;
    bool torn = true;
    decode_redo_file(view(file), &records, &torn);
    EXPECT_FALSE(torn);
    records_total += records.size();
    EXPECT_EQ(records.back().header.gci, log.files().at(seq).max_gci);
  }
  EXPECT_EQ(records_total, 30u);
}

TEST(RedoLogTest, WrittenLsnMovesOnlyOverAContiguousPrefix) {
  RedoLog log(RedoLogOptions{1 << 20, 1 << 30}, 1);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(log.append(header(1), values_of(i, 2000)).ok());
  log.seal_open_chunk();
  const uint64_t first = log.first_chunk_id();
  const uint64_t end_of_first = log.chunks()[0].end_lsn;
  log.mark_in_flight(first);
  log.mark_in_flight(first + 1);
  log.mark_written(first + 1);
  EXPECT_EQ(log.written_lsn(), 0u);
  log.mark_written(first);
  EXPECT_GT(log.written_lsn(), end_of_first);
  EXPECT_EQ(log.first_chunk_id(), first + 2);
  EXPECT_EQ(log.buffered_bytes(), log.appended_lsn() - log.written_lsn());
}

TEST(RedoLogTest, RefusesNewWritesPastThreeQuartersButNeverAppends) {
  RedoLog log(RedoLogOptions{100000, 1 << 30}, 1);
  int appended = 0;
  while (log.accepting_writes()) {
    ASSERT_TRUE(log.append(header(1), values_of(appended++, 1000)).ok());
  }
  EXPECT_GE(log.buffered_bytes() * 4, 300000u);
  EXPECT_LT(log.buffered_bytes(), 100000u);
  // Commits still append (past the bound if they must).
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(log.append(header(1), values_of(i, 1000)).ok());
  EXPECT_GT(log.buffered_bytes(), 100000u);
}

TEST(RedoSpaceTest, UnboundedWithoutAFileCount) {
  RedoLog log(RedoLogOptions{1 << 20, 4096}, 1);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(log.append(header(1), values_of(i, 1000)).ok());
  EXPECT_EQ(log.space_bytes(), 0u);
  EXPECT_EQ(log.space_fill(), 0.0);
  EXPECT_TRUE(log.space_accepting_writes());
  EXPECT_GT(log.files().size(), 20u);
}

TEST(RedoSpaceTest, SwitchedFilesTakeAWholeFileTheCurrentOneWhatItHolds) {
  RedoLog log(RedoLogOptions{1 << 20, 10000, 8}, 1);
  EXPECT_EQ(log.space_bytes(), 80000u);
  EXPECT_EQ(log.held_space_bytes(), 0u);
  ASSERT_TRUE(log.append(header(1), values_of(0, 1000)).ok());
  const uint64_t record = log.appended_lsn();
  EXPECT_EQ(log.held_space_bytes(), record);
  // Fill file 1 as far as whole records go; the next record starts file 2, and file 1's
  // unused tail counts as taken (NDB never writes the rest of a file it left).
  while (log.current_file_seq() == 1) ASSERT_TRUE(log.append(header(1), values_of(1, 1000)).ok());
  EXPECT_LT(log.files().at(1).bytes, 10000u);
  EXPECT_EQ(log.held_space_bytes(), 10000u + log.files().at(2).bytes);
  log.switch_file();
  EXPECT_EQ(log.held_space_bytes(), 20000u);
  EXPECT_DOUBLE_EQ(log.space_fill(), 0.25);
  log.forget_file(1);
  EXPECT_EQ(log.held_space_bytes(), 10000u);
}

TEST(RedoSpaceTest, RefusesPastThreeQuartersOfTheFilesUntilOldFilesAreFreed) {
  RedoLog log(RedoLogOptions{1 << 20, 10000, 4}, 1);
  uint32_t gci = 1;
  int appended = 0;
  while (log.space_accepting_writes()) {
    ASSERT_TRUE(log.append(header(gci), values_of(appended++, 1000)).ok());
    if (appended % 5 == 0) ++gci;
  }
  // Refused with the tail (file 1) still held: head (file 4) is a quarter in.
  EXPECT_GE(log.held_space_bytes() * 4, 3u * 40000u);
  EXPECT_LT(log.held_space_bytes(), 40000u);
  EXPECT_EQ(log.files().begin()->first, 1u);
  EXPECT_EQ(log.current_file_seq(), 4u);
  // The commits of writes executed before the refusal still append, into the reserve.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(log.append(header(gci), values_of(i, 1000)).ok());
  EXPECT_LE(log.held_space_bytes(), 40000u);
  EXPECT_FALSE(log.space_accepting_writes());
  // A checkpoint removed the tail: the space is free again.
  log.forget_file(1);
  EXPECT_TRUE(log.space_accepting_writes());
  EXPECT_LT(log.space_fill(), 0.75);
}

TEST(RedoSpaceTest, AnOldLifesFilesCountUntilRemoved) {
  RedoLog log(RedoLogOptions{1 << 20, 10000, 4}, 1);
  log.restart_at(6);
  log.add_old_file(3, RedoFileInfo{2000, 4});
  log.add_old_file(4, RedoFileInfo{10000, 5});
  // A file of a life with a larger FragmentLogFileSize takes what it holds.
  log.add_old_file(5, RedoFileInfo{25000, 6});
  EXPECT_EQ(log.held_space_bytes(), 45000u);
  EXPECT_FALSE(log.space_accepting_writes());
  for (uint32_t seq : {3u, 4u, 5u}) log.forget_file(seq);
  EXPECT_EQ(log.held_space_bytes(), 0u);
  EXPECT_TRUE(log.space_accepting_writes());
}

TEST(RedoChangeSinkTest, TurnsChangesIntoRecords) {
  RedoLog log(RedoLogOptions{}, 1);
  RedoChangeSink sink(&log, 17, 7, 3, 5);
  sink.row_written(values_of(1));
  storage::AttrValues key;
  key.add(0, "kkkk");
  sink.row_deleted(key);
  log.seal_open_chunk();
  std::deque<RedoRecord> records;
  bool torn = true;
  decode_redo_file(view(log.chunks()[0].bytes), &records, &torn);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].header.kind, RedoKind::kWriteRow);
  EXPECT_EQ(records[1].header.kind, RedoKind::kDeleteKey);
  EXPECT_EQ(records[1].header.gci, 17u);
  EXPECT_EQ(records[1].values.value(0), "kkkk");
  EXPECT_EQ(sink.failures(), 0u);
}

}  // namespace
}  // namespace duo::local_query
