// LoadDataReader against MySQL's LOAD DATA field and line rules.
#include "sql-frontend/executor/load_data_format.h"

#include <gtest/gtest.h>

#include <random>

namespace duo::sql::executor {
namespace {

using Records = std::vector<LoadDataRecord>;

// Feeds `data` in pieces cut at `cuts` (offsets), reading records as they complete.
Records read_all(const LoadDataFormat& format, const std::string& data,
                 std::vector<size_t> cuts = {}) {
  LoadDataReader reader(format);
  Records out;
  cuts.push_back(data.size());
  size_t fed = 0;
  size_t next_cut = 0;
  bool at_eof = false;
  for (;;) {
    LoadDataRecord record;
    const LoadDataReader::Next next = reader.next(&record, at_eof);
    if (next == LoadDataReader::Next::kEnd) break;
    if (next == LoadDataReader::Next::kRecord) {
      out.push_back(record);
      continue;
    }
    if (next_cut < cuts.size()) {
      const size_t to = std::min(std::max(cuts[next_cut++], fed), data.size());
      reader.feed(std::string_view(data).substr(fed, to - fed));
      fed = to;
    } else {
      at_eof = true;
    }
  }
  return out;
}

LoadDataRecord fields(std::initializer_list<std::optional<std::string>> list) { return list; }

LoadDataFormat csv() {
  LoadDataFormat f;
  f.fields_terminated = ",";
  f.enclosed = "\"";
  return f;
}

TEST(LoadDataReader, DefaultsAreTabsNewlinesAndBackslashEscapes) {
  const Records got = read_all(LoadDataFormat{}, "1\ta\\tb\t\\N\n2\t\\\\x\\0\tz\n");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], fields({"1", "a\tb", std::nullopt}));
  EXPECT_EQ(got[1], fields({"2", std::string("\\x\0", 3), "z"}));
}

TEST(LoadDataReader, LastLineWithoutTerminatorAndEmptyLines) {
  const Records got = read_all(LoadDataFormat{}, "a\tb\n\nc");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], fields({"a", "b"}));
  EXPECT_EQ(got[1], fields({""}));
  EXPECT_EQ(got[2], fields({"c"}));
  EXPECT_TRUE(read_all(LoadDataFormat{}, "").empty());
}

TEST(LoadDataReader, EnclosedFieldsHoldSeparatorsNewlinesAndDoubledQuotes) {
  const Records got =
      read_all(csv(), "1,\"x, y\",\"say \"\"hi\"\"\"\n2,\"multi\nline\",NULL\n3,\"NULL\",\\N\n");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], fields({"1", "x, y", "say \"hi\""}));
  EXPECT_EQ(got[1], fields({"2", "multi\nline", std::nullopt}));  // unenclosed NULL word
  EXPECT_EQ(got[2], fields({"3", "NULL", std::nullopt}));         // enclosed: the text
}

TEST(LoadDataReader, WithoutEnclosingTheWordNullIsText) {
  LoadDataFormat f;
  f.fields_terminated = ",";
  EXPECT_EQ(read_all(f, "NULL,\"q\"\n"), Records{fields({"NULL", "\"q\""})});
}

TEST(LoadDataReader, EmptyEscapeKeepsBackslashes) {
  LoadDataFormat f;
  f.escaped = "";
  EXPECT_EQ(read_all(f, "a\\tb\t\\N\n"), Records{fields({"a\\tb", "\\N"})});
}

TEST(LoadDataReader, MultiByteTerminatorsAndStartingBy) {
  LoadDataFormat f;
  f.fields_terminated = "||";
  f.lines_terminated = "\r\n";
  f.lines_starting = "xxx";
  // The second line has no prefix: skipped up to the next one, as MySQL does.
  const Records got = read_all(f, "xxxa||b\r\nnoise\r\nzzxxxc||d\r\n");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], fields({"a", "b"}));
  EXPECT_EQ(got[1], fields({"c", "d"}));
}

TEST(LoadDataReader, AnySplitOfTheBytesGivesTheSameRecords) {
  const std::string data =
      "1,\"a,b\",\"c\"\"d\"\r\n2,\\N,\"e\r\nf\"\r\n3,x\\,y,NULL\r\n4,\"\",\r\n5";
  LoadDataFormat f = csv();
  f.lines_terminated = "\r\n";
  const Records whole = read_all(f, data);
  ASSERT_EQ(whole.size(), 5u);
  EXPECT_EQ(whole[2], fields({"3", "x,y", std::nullopt}));
  EXPECT_EQ(whole[3], fields({"4", "", ""}));
  std::mt19937 random(20261128);
  for (int round = 0; round < 500; ++round) {
    std::vector<size_t> cuts;
    size_t at = 0;
    while (at < data.size()) {
      at += 1 + random() % 5;
      cuts.push_back(at);
    }
    ASSERT_EQ(read_all(f, data, cuts), whole) << "round " << round;
  }
}

}  // namespace
}  // namespace duo::sql::executor
