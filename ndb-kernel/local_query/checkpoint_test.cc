// LCP data chunks (plain and zstd, round trips at boundary sizes, every corruption
// detected), the control record (round trip with chains of full and partial files,
// torn, flipped, a chain that cannot restore its fragment), the choice between the two
// control slots at restore, chain trimming, and the deleted keys a partial checkpoint
// records (by GCI, batched, overflowing to a full checkpoint).
#include "ndb-kernel/local_query/checkpoint.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ndb-kernel/common/crc32c.h"

namespace duo::local_query {
namespace {

storage::RowBatch batch_of(int rows, size_t value_bytes, bool compressible) {
  storage::RowBatch batch;
  uint32_t x = 12345;
  for (int r = 0; r < rows; ++r) {
    storage::AttrValues& values = batch.begin_row();
    values.add(0, std::to_string(r));
    std::string text(value_bytes, 'a');
    if (!compressible) {
      for (char& c : text) {
        x = x * 1103515245 + 12345;
        c = static_cast<char>(x >> 24);
      }
    }
    values.add(1, text);
    values.add_null(2);
  }
  return batch;
}

void expect_same(const storage::RowBatch& a, const storage::RowBatch& b) {
  ASSERT_EQ(a.rows(), b.rows());
  for (size_t i = 0; i < a.rows(); ++i) {
    ASSERT_EQ(a.row(i).size(), b.row(i).size());
    for (size_t k = 0; k < a.row(i).size(); ++k) {
      EXPECT_EQ(a.row(i).column(k), b.row(i).column(k));
      EXPECT_EQ(a.row(i).is_null(k), b.row(i).is_null(k));
      EXPECT_EQ(a.row(i).value(k), b.row(i).value(k));
    }
  }
}

std::string_view view(const Bytes& bytes) {
  return protocol::as_view(bytes);
}

TEST(LcpChunkTest, RoundTripsPlainAndCompressed) {
  for (bool compress : {false, true}) {
    for (int rows : {0, 1, 127, 128, 255}) {
      const storage::RowBatch batch = batch_of(rows, 40, true);
      Bytes out;
      ASSERT_TRUE(encode_lcp_chunk(batch, compress, &out).ok());
      if (compress && rows >= 127) {
        EXPECT_EQ(out[8], kLcpCompressionZstd);
      }
      if (!compress) {
        EXPECT_EQ(out[8], kLcpCompressionNone);
      }
      storage::RowBatch back;
      auto used = decode_lcp_chunk(view(out), &back);
      ASSERT_TRUE(used.ok()) << used.status().to_string();
      EXPECT_EQ(*used, out.size());
      expect_same(batch, back);
    }
  }
}

TEST(LcpChunkTest, IncompressibleDataIsStoredPlain) {
  const storage::RowBatch batch = batch_of(20, 1000, false);
  Bytes out;
  ASSERT_TRUE(encode_lcp_chunk(batch, true, &out).ok());
  EXPECT_EQ(out[8], kLcpCompressionNone);
  storage::RowBatch back;
  ASSERT_TRUE(decode_lcp_chunk(view(out), &back).ok());
  expect_same(batch, back);
}

TEST(LcpChunkTest, PrefixesNeedMoreAndEveryFlippedByteIsCaught) {
  for (bool compress : {false, true}) {
    const storage::RowBatch batch = batch_of(50, 30, true);
    Bytes out;
    ASSERT_TRUE(encode_lcp_chunk(batch, compress, &out).ok());
    storage::RowBatch back;
    for (size_t cut = 0; cut < out.size(); ++cut) {
      auto used = decode_lcp_chunk(view(out).substr(0, cut), &back);
      // A cut inside the payload asks for more; never a wrong chunk.
      ASSERT_TRUE(used.ok()) << cut;
      EXPECT_EQ(*used, 0u) << cut;
    }
    for (size_t i = 0; i < out.size(); ++i) {
      Bytes flipped = out;
      flipped[i] ^= 0x10;
      auto used = decode_lcp_chunk(view(flipped), &back);
      // A flipped stored length may just ask for more bytes; otherwise it is an error.
      if (used.ok()) {
        EXPECT_EQ(*used, 0u) << "byte " << i;
      } else {
        EXPECT_TRUE(used.status().is(ErrorCode::kCorruption)) << used.status().to_string();
      }
    }
  }
}

LcpControl sample_control(uint32_t sequence, uint32_t max_gci = 9) {
  LcpControl control;
  control.sequence = sequence;
  control.lcp_id = 3;
  control.start_gci = 8;
  control.max_gci = max_gci;
  LcpDataFile full{1, 0, 0, 100, 0, 0, 4096};
  LcpDataFile part0{2, 2, 0, 10, 3, 40, 900};
  LcpDataFile part1{3, 2, 1, 12, 0, 0, 950};
  control.fragments = {{7, 2, 0, {full, part0}}, {7, 2, 4, {part0, part1}}, {9, 1, 1, {full}}};
  return control;
}

TEST(LcpControlTest, RoundTripsAndDetectsDamage) {
  const Bytes bytes = encode_lcp_control(sample_control(5));
  auto back = decode_lcp_control(view(bytes));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->sequence, 5u);
  EXPECT_EQ(back->lcp_id, 3u);
  EXPECT_EQ(back->start_gci, 8u);
  EXPECT_EQ(back->max_gci, 9u);
  ASSERT_EQ(back->fragments.size(), 3u);
  ASSERT_EQ(back->fragments[0].files.size(), 2u);
  EXPECT_EQ(back->fragments[0].files[0].rows, 100u);
  EXPECT_TRUE(back->fragments[0].files[0].full());
  EXPECT_EQ(back->fragments[0].files[1].deleted_keys, 3u);
  EXPECT_EQ(back->fragments[0].files[1].delete_bytes, 40u);
  EXPECT_EQ(back->fragments[1].files[1].all_part, 1u);
  EXPECT_EQ(back->fragments[1].files[1].parts, 2u);
  EXPECT_EQ(back->fragments[2].files[0].data_bytes, 4096u);
  EXPECT_EQ(back->fragments[2].table_id, 9u);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_TRUE(decode_lcp_control(view(bytes).substr(0, cut)).status().is(ErrorCode::kCorruption));
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    Bytes flipped = bytes;
    flipped[i] ^= 0x01;
    EXPECT_TRUE(decode_lcp_control(view(flipped)).status().is(ErrorCode::kCorruption)) << i;
  }
}

TEST(LcpControlTest, ChoosesTheNewestUsableSlot) {
  using Slot = std::optional<Result<LcpControl>>;
  auto pick = [](const Slot& a, const Slot& b, uint32_t gci) {
    return choose_lcp_control(a, b, gci);
  };
  const Slot none;
  const Slot s4 = Result<LcpControl>(sample_control(4, 9));
  const Slot s5 = Result<LcpControl>(sample_control(5, 12));
  const Slot bad = Result<LcpControl>(Status(ErrorCode::kCorruption, "crc mismatch"));

  auto chosen = pick(none, none, 10);
  ASSERT_TRUE(chosen.ok());
  EXPECT_FALSE(chosen->has_value());

  chosen = pick(s4, s5, 20);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ((*chosen)->sequence, 5u);
  chosen = pick(s5, s4, 20);
  EXPECT_EQ((*chosen)->sequence, 5u);
  // The newer one holds GCIs past the restore point: the older one is the fallback.
  chosen = pick(s4, s5, 10);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ((*chosen)->sequence, 4u);
  // A torn newer slot falls back too.
  chosen = pick(s4, bad, 20);
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ((*chosen)->sequence, 4u);
  // Nothing usable is corruption, and says why.
  chosen = pick(bad, none, 20);
  ASSERT_FALSE(chosen.ok());
  EXPECT_TRUE(chosen.status().is(ErrorCode::kCorruption));
  EXPECT_NE(chosen.status().message().find("crc mismatch"), std::string::npos);
  chosen = pick(none, s5, 10);
  ASSERT_FALSE(chosen.ok());
  EXPECT_NE(chosen.status().message().find("restore GCI 10"), std::string::npos);
}

TEST(LcpControlTest, RefusesAChainThatCannotRestoreItsFragment) {
  LcpControl control = sample_control(5);
  // Part 1 of 2 is whole in no file: the rows of part 1 unchanged since would be lost.
  control.fragments[1].files = {LcpDataFile{2, 2, 0, 10, 0, 0, 900},
                                LcpDataFile{3, 2, 0, 12, 0, 0, 950}};
  auto back = decode_lcp_control(view(encode_lcp_control(control)));
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("incomplete chain"), std::string::npos);
  control.fragments[1].files.clear();
  EXPECT_FALSE(decode_lcp_control(view(encode_lcp_control(control))).ok());
  // A delete section longer than the file.
  control = sample_control(5);
  control.fragments[0].files[1].delete_bytes = 901;
  EXPECT_FALSE(decode_lcp_control(view(encode_lcp_control(control))).ok());
}

TEST(LcpControlTest, ReadsTheFullOnlyRecordOfEarlierVersions) {
  // The layout written before partial checkpoints, byte by byte.
  Bytes old;
  for (uint32_t v : {kLcpControlMagicFullOnly, 4u, 3u, 8u, 9u, 2u}) protocol::put_u32(&old, v);
  for (uint32_t fragment : {0u, 2u}) {
    protocol::put_u32(&old, 7);
    protocol::put_u32(&old, 2);
    protocol::put_u32(&old, fragment);
    protocol::put_u64(&old, 100 + fragment);
    protocol::put_u64(&old, 4096 + fragment);
  }
  protocol::put_u32(&old, crc32c_mask(crc32c(old.data(), old.size())));
  auto back = decode_lcp_control(view(old));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->sequence, 4u);
  EXPECT_EQ(back->lcp_id, 3u);
  ASSERT_EQ(back->fragments.size(), 2u);
  EXPECT_EQ(back->fragments[1].fragment_id, 2u);
  ASSERT_EQ(back->fragments[1].files.size(), 1u);
  EXPECT_TRUE(back->fragments[1].files[0].full());
  EXPECT_EQ(back->fragments[1].files[0].lcp_id, 3u);
  EXPECT_EQ(back->fragments[1].files[0].rows, 102u);
  EXPECT_EQ(back->fragments[1].files[0].data_bytes, 4098u);
  for (size_t cut = 0; cut < old.size(); ++cut) {
    EXPECT_FALSE(decode_lcp_control(view(old).substr(0, cut)).ok());
  }
}

LcpDataFile partial(uint32_t lcp_id, uint32_t parts, uint32_t all_part) {
  return LcpDataFile{lcp_id, parts, all_part, 0, 0, 0, 0};
}

std::vector<uint32_t> ids(const std::vector<LcpDataFile>& files) {
  std::vector<uint32_t> out;
  for (const LcpDataFile& f : files) out.push_back(f.lcp_id);
  return out;
}

TEST(LcpChainTest, KeepsFilesUntilTheNewerOnesHoldEveryPartWhole) {
  std::vector<LcpDataFile> chain = {LcpDataFile{1, 0, 0, 0, 0, 0, 0}};
  for (uint32_t id = 2; id <= 4; ++id) {
    chain.push_back(partial(id, 3, id % 3));
    trim_lcp_chain(&chain);
    EXPECT_TRUE(lcp_chain_complete(chain));
  }
  // 2, 3, 4 hold parts 2, 0, 1: the full file 1 is no longer needed.
  EXPECT_EQ(ids(chain), (std::vector<uint32_t>{2, 3, 4}));
  chain.push_back(partial(5, 3, 2));
  trim_lcp_chain(&chain);
  EXPECT_EQ(ids(chain), (std::vector<uint32_t>{3, 4, 5}));
  // A full file makes everything before it useless.
  chain.push_back(LcpDataFile{6, 0, 0, 0, 0, 0, 0});
  trim_lcp_chain(&chain);
  EXPECT_EQ(ids(chain), (std::vector<uint32_t>{6}));
  // Not complete: parts missing, a part count change, or nothing.
  EXPECT_FALSE(lcp_chain_complete({partial(1, 3, 0), partial(2, 3, 1)}));
  EXPECT_FALSE(lcp_chain_complete({partial(1, 2, 0), partial(2, 2, 1), partial(3, 3, 2)}));
  EXPECT_FALSE(lcp_chain_complete({}));
  EXPECT_TRUE(lcp_chain_complete({partial(1, 2, 1), partial(2, 2, 0)}));
}

storage::AttrValues key_of(int k) {
  storage::AttrValues key;
  key.add(0, "key" + std::to_string(k));
  return key;
}

TEST(LcpDeletedKeysTest, KeepsKeysByGciAndOverflowsToAFullCheckpoint) {
  LcpDeletedKeys deleted;
  for (int k = 0; k < 3000; ++k) deleted.add(static_cast<uint32_t>(10 + k / 1000), key_of(k));
  size_t total = 0;
  int next = 1000;  // keys of GCI >= 11 come in order
  for (const storage::RowBatch& batch : deleted.batches_since(11)) {
    Bytes chunk;
    ASSERT_TRUE(encode_lcp_chunk(batch, false, &chunk).ok());
    EXPECT_LE(chunk.size(), kLcpChunkFillBytes + 64);
    for (size_t i = 0; i < batch.rows(); ++i) {
      ASSERT_EQ(batch.row(i).size(), 1u);
      EXPECT_EQ(batch.row(i).value(0), "key" + std::to_string(next++));
    }
    total += batch.rows();
  }
  EXPECT_EQ(total, 2000u);
  deleted.forget_before(12);
  EXPECT_EQ(deleted.size(), 1000u);
  ASSERT_EQ(deleted.batches_since(0).size(), 1u);
  EXPECT_EQ(deleted.batches_since(0)[0].row(0).value(0), "key2000");

  // The recorder forwards every change and records deletes at its GCI.
  struct Counting : storage::ChangeSink {
    int written = 0, removed = 0;
    void row_written(const storage::AttrValues&) override { ++written; }
    void row_deleted(const storage::AttrValues&) override { ++removed; }
  } redo;
  LcpDeleteRecorder recorder(&redo, &deleted, 20);
  recorder.row_written(key_of(1));
  recorder.row_deleted(key_of(5000));
  EXPECT_EQ(redo.written, 1);
  EXPECT_EQ(redo.removed, 1);
  ASSERT_EQ(deleted.batches_since(20).size(), 1u);
  EXPECT_EQ(deleted.batches_since(20)[0].rows(), 1u);

  // Past the byte bound the keys go, and a partial file may not be written until a full
  // file started and every dropped key's GCI is older than the threshold.
  EXPECT_TRUE(deleted.complete_since(1));
  const std::string big(60000, 'k');
  for (int k = 0; k < 200; ++k) {
    storage::AttrValues key;
    key.add(0, big + std::to_string(k));
    deleted.add(30, key);
  }
  EXPECT_EQ(deleted.size(), 0u);
  EXPECT_FALSE(deleted.complete_since(31));
  deleted.add(33, key_of(1));
  EXPECT_EQ(deleted.size(), 0u) << "an overflowed set records nothing until a full file";
  deleted.full_file_started();
  deleted.add(34, key_of(2));
  EXPECT_EQ(deleted.size(), 1u);
  EXPECT_FALSE(deleted.complete_since(33)) << "the key of GCI 33 was dropped";
  EXPECT_TRUE(deleted.complete_since(34));
}

TEST(LcpPathsTest, NamesFollowTheLayout) {
  EXPECT_EQ(lcp_data_path(2, 7, 13, 5), "lcp/part2/7/T13F5.data");
  EXPECT_EQ(lcp_control_path(2, 5), "lcp/part2/control.1");
  EXPECT_EQ(lcp_control_path(2, 6), "lcp/part2/control.0");
  EXPECT_EQ(redo_path(3, 1), "redo/part3/00000001.redo");
  EXPECT_EQ(lcp_dir(0, 12), "lcp/part0/12");
}

}  // namespace
}  // namespace duo::local_query
