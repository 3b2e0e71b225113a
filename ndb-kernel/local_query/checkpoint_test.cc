// LCP data chunks (plain and zstd, round trips at boundary sizes, every corruption
// detected), the control record (round trip, torn, flipped) and the choice between the
// two control slots at restore.
#include "ndb-kernel/local_query/checkpoint.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

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
  control.fragments = {{7, 2, 0, 100, 4096}, {7, 2, 4, 0, 0}, {9, 1, 1, 5, 77}};
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
  EXPECT_EQ(back->fragments[0].rows, 100u);
  EXPECT_EQ(back->fragments[2].data_bytes, 77u);
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

TEST(LcpPathsTest, NamesFollowTheLayout) {
  EXPECT_EQ(lcp_data_path(2, 7, 13, 5), "lcp/part2/7/T13F5.data");
  EXPECT_EQ(lcp_control_path(2, 5), "lcp/part2/control.1");
  EXPECT_EQ(lcp_control_path(2, 6), "lcp/part2/control.0");
  EXPECT_EQ(redo_path(3, 1), "redo/part3/00000001.redo");
  EXPECT_EQ(lcp_dir(0, 12), "lcp/part0/12");
}

}  // namespace
}  // namespace duo::local_query
