// Tests for the section codecs of wire_codec.h: known bytes, round trips at boundary
// sizes (NULLs, empty lists, largest values), and untrusted input — every truncation,
// trailing bytes, bad enum values and a seeded fuzz loop — which must be refused with
// kInvalidArgument (or false), never crash or over-read (run under ASan too).
#include "ndb-kernel/protocol/wire_codec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ndb-kernel/common/random.h"

namespace duo::protocol {
namespace {

using storage::AttrValues;
using storage::Collation;
using storage::ColumnDef;
using storage::ColumnType;
using storage::RowBatch;

Bytes bytes_of(std::initializer_list<uint8_t> list) {
  return Bytes(list);
}

// Equality of two AttrValues entry by entry (column, NULL, bytes).
void expect_same_values(const AttrValues& a, const AttrValues& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a.entry(i).column, b.entry(i).column) << "entry " << i;
    EXPECT_EQ(a.entry(i).is_null, b.entry(i).is_null) << "entry " << i;
    EXPECT_EQ(a.value(i), b.value(i)) << "entry " << i;
  }
}

void expect_same_batch(const RowBatch& a, const RowBatch& b) {
  ASSERT_EQ(a.rows(), b.rows());
  for (size_t r = 0; r < a.rows(); ++r) {
    const RowBatch::Row x = a.row(r);
    const RowBatch::Row y = b.row(r);
    ASSERT_EQ(x.size(), y.size()) << "row " << r;
    for (size_t k = 0; k < x.size(); ++k) {
      EXPECT_EQ(x.column(k), y.column(k)) << "row " << r << " value " << k;
      EXPECT_EQ(x.is_null(k), y.is_null(k)) << "row " << r << " value " << k;
      EXPECT_EQ(x.value(k), y.value(k)) << "row " << r << " value " << k;
    }
  }
}

Result<AttrValues> decode_whole_attr_values(std::string_view bytes) {
  ByteReader in(bytes);
  AttrValues values;
  if (!decode_attr_values(&in, &values) || !in.done()) {
    return Status(ErrorCode::kInvalidArgument, "bad attr values");
  }
  return values;
}

AttrValues round_trip(const AttrValues& values) {
  Bytes bytes;
  Status encoded = encode_attr_values(values, &bytes);
  EXPECT_TRUE(encoded.ok()) << encoded.to_string();
  Result<AttrValues> decoded = decode_whole_attr_values(as_view(bytes));
  EXPECT_TRUE(decoded.ok());
  return decoded.ok() ? std::move(decoded).value() : AttrValues();
}

// ---- Primitives ----

TEST(WireCodec, IntegersAreLittleEndian) {
  Bytes out;
  put_u8(&out, 0xA1);
  put_u16(&out, 0xB2C3);
  put_u32(&out, 0x01020304);
  put_u64(&out, 0x1122334455667788ull);
  EXPECT_EQ(out, bytes_of({0xA1, 0xC3, 0xB2, 0x04, 0x03, 0x02, 0x01, 0x88, 0x77, 0x66, 0x55, 0x44,
                           0x33, 0x22, 0x11}));
}

TEST(WireCodec, StringsCarryAU16LengthAndRefuseMore) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{255}, size_t{256}, size_t{65535}}) {
    const std::string text(size, 'x');
    Bytes out;
    ASSERT_TRUE(put_string(&out, text).ok());
    ASSERT_EQ(out.size(), 2 + size);
    EXPECT_EQ(out[0] | (out[1] << 8), static_cast<int>(size));
    ByteReader in(as_view(out));
    std::string back;
    ASSERT_TRUE(get_string(&in, &back));
    EXPECT_EQ(back, text);
    EXPECT_TRUE(in.done());
  }
  Bytes out;
  Status too_long = put_string(&out, std::string(65536, 'x'));
  EXPECT_EQ(too_long.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(out.empty()) << "nothing is written for a refused string";

  // A length that promises more than there is.
  const Bytes short_text = bytes_of({3, 0, 'a', 'b'});
  ByteReader in(as_view(short_text));
  std::string back;
  EXPECT_FALSE(get_string(&in, &back));
}

// ---- AttrValues ----

TEST(WireCodec, AttrValuesKnownBytes) {
  AttrValues values;
  values.add(1, "ab");
  values.add_null(2);
  values.add(0x7FFF, "");
  Bytes out;
  ASSERT_TRUE(encode_attr_values(values, &out).ok());
  EXPECT_EQ(out, bytes_of({0x03, 0x00,                        // count
                           0x01, 0x00, 0x02, 0x00, 'a', 'b',  // column 1, 2 bytes
                           0x02, 0x80,                        // column 2 | NULL bit
                           0xFF, 0x7F, 0x00, 0x00}));         // column 32767, empty
}

TEST(WireCodec, AttrValuesRoundTripNullsEmptyAndBoundarySizes) {
  expect_same_values(round_trip(AttrValues()), AttrValues());

  // NULL and an empty non-NULL value must stay apart.
  AttrValues nulls;
  nulls.add_null(0);
  nulls.add(1, "");
  nulls.add_null(0x7FFF);
  AttrValues back = round_trip(nulls);
  expect_same_values(back, nulls);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_TRUE(back.entry(0).is_null);
  EXPECT_FALSE(back.entry(1).is_null);

  AttrValues sizes;
  uint16_t column = 0;
  for (size_t size : {1, 127, 128, 255, 256, 30000, 65535}) {
    std::string value(size, '\0');
    for (size_t i = 0; i < size; ++i) value[i] = static_cast<char>(i * 7 + size);
    sizes.add(column++, value);
  }
  expect_same_values(round_trip(sizes), sizes);
}

TEST(WireCodec, AttrValuesRefuseWhatTheFormatCannotHold) {
  AttrValues too_long;
  too_long.add(1, std::string(65536, 'v'));
  Bytes out;
  EXPECT_EQ(encode_attr_values(too_long, &out).code(), ErrorCode::kDataTooLong);

  AttrValues bad_column;
  bad_column.add(0x8000, "x");
  out.clear();
  EXPECT_EQ(encode_attr_values(bad_column, &out).code(), ErrorCode::kInvalidArgument);
  AttrValues bad_null_column;
  bad_null_column.add_null(0xFFFF);
  out.clear();
  EXPECT_EQ(encode_attr_values(bad_null_column, &out).code(), ErrorCode::kInvalidArgument);

  AttrValues most;
  for (uint32_t i = 0; i < 65535; ++i) most.add_null(static_cast<uint16_t>(i & 0x7FFF));
  out.clear();
  ASSERT_TRUE(encode_attr_values(most, &out).ok());
  expect_same_values(round_trip(most), most);
  most.add_null(1);
  out.clear();
  EXPECT_EQ(encode_attr_values(most, &out).code(), ErrorCode::kInvalidArgument);
}

TEST(WireCodec, AttrValuesEveryTruncationIsRefused) {
  AttrValues values;
  values.add(3, "hello");
  values.add_null(4);
  values.add(5, std::string(300, 'z'));
  Bytes out;
  ASSERT_TRUE(encode_attr_values(values, &out).ok());
  for (size_t length = 0; length < out.size(); ++length) {
    ByteReader in(as_view(out).substr(0, length));
    AttrValues back;
    EXPECT_FALSE(decode_attr_values(&in, &back)) << "prefix of " << length << " bytes";
  }
}

// ---- Column lists ----

TEST(WireCodec, ColumnListsRoundTripAndTruncate) {
  for (size_t count : {size_t{0}, size_t{1}, size_t{3}, size_t{65535}}) {
    std::vector<uint16_t> columns(count);
    for (size_t i = 0; i < count; ++i) columns[i] = static_cast<uint16_t>(i * 3 + 1);
    Bytes out;
    encode_columns(columns, &out);
    ASSERT_EQ(out.size(), 2 + 2 * count);
    ByteReader in(as_view(out));
    std::vector<uint16_t> back = {99};
    ASSERT_TRUE(decode_columns(&in, &back));
    EXPECT_TRUE(in.done());
    EXPECT_EQ(back, columns);
  }
  Bytes out;
  encode_columns({7, 8, 9}, &out);
  EXPECT_EQ(out, bytes_of({3, 0, 7, 0, 8, 0, 9, 0}));
  for (size_t length = 0; length < out.size(); ++length) {
    ByteReader in(as_view(out).substr(0, length));
    std::vector<uint16_t> back;
    EXPECT_FALSE(decode_columns(&in, &back)) << "prefix of " << length << " bytes";
  }
}

// ---- RowBatch ----

RowBatch sample_batch() {
  RowBatch batch;
  AttrValues& row0 = batch.begin_row();
  row0.add(0, "one");
  row0.add_null(1);
  batch.begin_row();  // a row with no values (a projection of nothing)
  AttrValues& row2 = batch.begin_row();
  row2.add(0, std::string(1000, 'r'));
  row2.add(1, "");
  row2.add_null(2);
  return batch;
}

TEST(WireCodec, RowBatchKnownBytes) {
  RowBatch batch;
  batch.begin_row().add(1, "a");
  AttrValues& row1 = batch.begin_row();
  row1.add_null(1);
  row1.add(2, "bc");
  Bytes out;
  ASSERT_TRUE(encode_row_batch(batch, &out).ok());
  EXPECT_EQ(out, bytes_of({2, 0,    0, 0,                 // rows
                           0, 0,    0, 0, 1,   0,  0, 0,  // row starts: entry 0, entry 1
                           3, 0,    0, 0,                 // u32 value count
                           1, 0,    1, 0, 'a',            // row 0: column 1 = "a"
                           1, 0x80,                       // row 1: column 1 NULL
                           2, 0,    2, 0, 'b', 'c'}));    //        column 2 = "bc"
}

TEST(WireCodec, RowBatchRoundTrips) {
  for (const RowBatch& batch : {RowBatch(), sample_batch()}) {
    Bytes out;
    ASSERT_TRUE(encode_row_batch(batch, &out).ok());
    RowBatch back;
    back.begin_row().add(9, "stale");  // decode replaces whatever was there
    ASSERT_TRUE(decode_row_batch(as_view(out), &back).ok());
    expect_same_batch(back, batch);
  }
  // Largest values in a batch that still fits a signal section.
  RowBatch big;
  big.begin_row().add(0, std::string(65535, 'a'));
  AttrValues& last = big.begin_row();
  last.add_null(0);
  last.add(1, std::string(30000, 'b'));
  Bytes out;
  ASSERT_TRUE(encode_row_batch(big, &out).ok());
  RowBatch back;
  ASSERT_TRUE(decode_row_batch(as_view(out), &back).ok());
  expect_same_batch(back, big);
}

TEST(WireCodec, RowBatchMalformedInputsAreRefused) {
  Bytes good;
  ASSERT_TRUE(encode_row_batch(sample_batch(), &good).ok());
  for (size_t length = 0; length < good.size(); ++length) {
    RowBatch back;
    EXPECT_EQ(decode_row_batch(as_view(good).substr(0, length), &back).code(),
              ErrorCode::kInvalidArgument)
        << "prefix of " << length << " bytes";
  }
  Bytes trailing = good;
  trailing.push_back(0);
  RowBatch back;
  EXPECT_EQ(decode_row_batch(as_view(trailing), &back).code(), ErrorCode::kInvalidArgument);

  // sample_batch: 3 rows starting at entries 0, 2, 2; 5 values.
  auto with_start = [&](size_t row, uint32_t start) {
    Bytes bytes = good;
    for (int i = 0; i < 4; ++i) bytes[4 + 4 * row + i] = static_cast<uint8_t>(start >> (8 * i));
    return bytes;
  };
  EXPECT_EQ(decode_row_batch(as_view(with_start(1, 1)), &back).code(), ErrorCode::kOk);
  EXPECT_EQ(decode_row_batch(as_view(with_start(2, 1)), &back).code(), ErrorCode::kInvalidArgument)
      << "row starts must not go backwards";
  EXPECT_EQ(decode_row_batch(as_view(with_start(2, 6)), &back).code(), ErrorCode::kInvalidArgument)
      << "a row may not start past the last value";

  // A row count far beyond what the bytes could hold is refused before allocating.
  const Bytes huge_rows = bytes_of({0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0});
  EXPECT_EQ(decode_row_batch(as_view(huge_rows), &back).code(), ErrorCode::kInvalidArgument);
  // A value count beyond the bytes.
  const Bytes huge_values = bytes_of({0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF});
  EXPECT_EQ(decode_row_batch(as_view(huge_values), &back).code(), ErrorCode::kInvalidArgument);
}

// Values that belong to no row (a first row start above 0, or values with no rows) are
// refused like trailing bytes: the encoder never writes them.
TEST(WireCodec, RowBatchValuesOutsideEveryRowAreRefused) {
  RowBatch back;
  // 1 row starting at entry 1 of 2: entry 0 belongs to no row.
  const Bytes orphan_first = bytes_of({1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1, 0x80, 2, 0x80});
  EXPECT_EQ(decode_row_batch(as_view(orphan_first), &back).code(), ErrorCode::kInvalidArgument);
  // 0 rows but one value.
  const Bytes orphan_all = bytes_of({0, 0, 0, 0, 1, 0, 0, 0, 1, 0x80});
  EXPECT_EQ(decode_row_batch(as_view(orphan_all), &back).code(), ErrorCode::kInvalidArgument);
}

// ---- TableDef ----

ColumnDef column(std::string name, ColumnType type, uint32_t length = 0) {
  ColumnDef c;
  c.name = std::move(name);
  c.type = type;
  c.length = length;
  return c;
}

TableDef sample_table() {
  TableDef table;
  table.schema.table_id = 0xA0B0C0D0;
  table.schema.name = "orders";
  table.version = 7;
  table.fragment_count = 8;
  table.flags = kTableReadBackup;
  ColumnDef id = column("id", ColumnType::kBigInt);
  id.is_unsigned = true;
  id.nullable = false;
  ColumnDef price = column("price", ColumnType::kDecimal);
  price.precision = 12;
  price.scale = 2;
  ColumnDef name = column("name", ColumnType::kVarchar, 64);
  name.collation = Collation::kCaseInsensitive;
  ColumnDef note = column("note", ColumnType::kText, 256);
  note.storage_disk = true;
  ColumnDef at = column("at", ColumnType::kDatetime);
  at.scale = 6;
  table.schema.columns = {id, price, name, note, at};
  table.schema.primary_key = {0};
  table.schema.ordered_indexes = {{"by_name", {2, 0}, true}, {"by_at", {4}, false}};
  return table;
}

void expect_same_table(const TableDef& a, const TableDef& b) {
  EXPECT_EQ(a.schema.table_id, b.schema.table_id);
  EXPECT_EQ(a.schema.name, b.schema.name);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.fragment_count, b.fragment_count);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.sql_definition, b.sql_definition);
  ASSERT_EQ(a.schema.columns.size(), b.schema.columns.size());
  for (size_t i = 0; i < a.schema.columns.size(); ++i) {
    const ColumnDef& x = a.schema.columns[i];
    const ColumnDef& y = b.schema.columns[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.is_unsigned, y.is_unsigned);
    EXPECT_EQ(x.nullable, y.nullable);
    EXPECT_EQ(x.length, y.length);
    EXPECT_EQ(x.precision, y.precision);
    EXPECT_EQ(x.scale, y.scale);
    EXPECT_EQ(x.collation, y.collation);
    EXPECT_EQ(x.storage_disk, y.storage_disk);
  }
  EXPECT_EQ(a.schema.primary_key, b.schema.primary_key);
  ASSERT_EQ(a.schema.ordered_indexes.size(), b.schema.ordered_indexes.size());
  for (size_t i = 0; i < a.schema.ordered_indexes.size(); ++i) {
    EXPECT_EQ(a.schema.ordered_indexes[i].name, b.schema.ordered_indexes[i].name);
    EXPECT_EQ(a.schema.ordered_indexes[i].columns, b.schema.ordered_indexes[i].columns);
    EXPECT_EQ(a.schema.ordered_indexes[i].unique, b.schema.ordered_indexes[i].unique);
  }
}

TEST(WireCodec, TableDefRoundTrips) {
  Bytes out;
  ASSERT_TRUE(encode_table_def(sample_table(), &out).ok());
  Result<TableDef> back = decode_table_def(as_view(out));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_same_table(*back, sample_table());
  // The SQL layer's definition travels with the table, byte for byte.
  TableDef with_sql = sample_table();
  with_sql.sql_definition = std::string("CREATE TABLE ...\0\xff", 18);
  out.clear();
  ASSERT_TRUE(encode_table_def(with_sql, &out).ok());
  back = decode_table_def(as_view(out));
  ASSERT_TRUE(back.ok());
  expect_same_table(*back, with_sql);

  // Every column type and both collations.
  TableDef all;
  all.schema.name = "";
  for (uint8_t t = 0; t <= static_cast<uint8_t>(ColumnType::kText); ++t) {
    ColumnDef c = column("c" + std::to_string(t), static_cast<ColumnType>(t), t);
    c.collation = t % 2 == 0 ? Collation::kBinary : Collation::kCaseInsensitive;
    c.nullable = t % 3 == 0;
    all.schema.columns.push_back(c);
  }
  out.clear();
  ASSERT_TRUE(encode_table_def(all, &out).ok());
  back = decode_table_def(as_view(out));
  ASSERT_TRUE(back.ok());
  expect_same_table(*back, all);

  // Nothing at all: no columns, no key, no indexes.
  out.clear();
  ASSERT_TRUE(encode_table_def(TableDef(), &out).ok());
  EXPECT_EQ(out.size(), 16u + 2 + 2 + 2 + 2 + 2 + 4);  // ... + empty sql_definition + tablespace
  back = decode_table_def(as_view(out));
  ASSERT_TRUE(back.ok());
  expect_same_table(*back, TableDef());

  // The most columns a table may have.
  TableDef widest;
  for (uint32_t i = 0; i < storage::kMaxColumns; ++i) {
    widest.schema.columns.push_back(column("c" + std::to_string(i), ColumnType::kInt));
  }
  out.clear();
  ASSERT_TRUE(encode_table_def(widest, &out).ok());
  back = decode_table_def(as_view(out));
  ASSERT_TRUE(back.ok());
  expect_same_table(*back, widest);
}

TEST(WireCodec, TableDefHeaderBytes) {
  Bytes out;
  ASSERT_TRUE(encode_table_def(sample_table(), &out).ok());
  ASSERT_GE(out.size(), 24u);
  EXPECT_EQ(Bytes(out.begin(), out.begin() + 24),
            bytes_of({0xD0, 0xC0, 0xB0, 0xA0,  // table id
                      7,    0,    0,    0,     // version
                      8,    0,    0,    0,     // fragment count
                      1,    0,    0,    0,     // flags: read backup
                      6,    0,    'o',  'r',  'd', 'e', 'r', 's'}));
  // First column: "id", type BIGINT (4), bits unsigned (1), length 0, p 0, s 0, coll 0.
  EXPECT_EQ(Bytes(out.begin() + 24, out.begin() + 24 + 2 + 2 + 2 + 1 + 1 + 4 + 3),
            bytes_of({5, 0, 2, 0, 'i', 'd', 4, 1, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(WireCodec, TableDefMalformedInputsAreRefused) {
  Bytes good;
  ASSERT_TRUE(encode_table_def(sample_table(), &good).ok());
  for (size_t length = 0; length < good.size(); ++length) {
    EXPECT_EQ(decode_table_def(as_view(good).substr(0, length)).status().code(),
              ErrorCode::kInvalidArgument)
        << "prefix of " << length << " bytes";
  }
  Bytes trailing = good;
  trailing.push_back(0);
  EXPECT_EQ(decode_table_def(as_view(trailing)).status().code(), ErrorCode::kInvalidArgument);

  // Field offsets of the first column ("id") in sample_table's encoding.
  const size_t first_column = 16 + 2 + 6 + 2;
  const size_t type_at = first_column + 2 + 2;
  const size_t bits_at = type_at + 1;
  const size_t collation_at = bits_at + 1 + 4 + 1 + 1;
  auto with_byte = [&](size_t at, uint8_t value) {
    Bytes bytes = good;
    bytes[at] = value;
    return decode_table_def(as_view(bytes)).status().code();
  };
  EXPECT_EQ(with_byte(type_at, static_cast<uint8_t>(ColumnType::kText)), ErrorCode::kOk);
  EXPECT_EQ(with_byte(type_at, static_cast<uint8_t>(ColumnType::kText) + 1),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(with_byte(bits_at, 7), ErrorCode::kOk);
  EXPECT_EQ(with_byte(bits_at, 8), ErrorCode::kInvalidArgument);
  EXPECT_EQ(with_byte(collation_at, 1), ErrorCode::kOk);
  EXPECT_EQ(with_byte(collation_at, 2), ErrorCode::kInvalidArgument);
  // The unique byte of the last index ("by_at", 1 column): just before its column list,
  // which the (empty) SQL definition's length and the tablespace id follow.
  EXPECT_EQ(with_byte(good.size() - 11, 1), ErrorCode::kOk);
  EXPECT_EQ(with_byte(good.size() - 11, 2), ErrorCode::kInvalidArgument);

  // More columns than a table may have.
  Bytes too_wide;
  for (int i = 0; i < 16; ++i) too_wide.push_back(0);
  put_u16(&too_wide, 0);  // name ""
  put_u16(&too_wide, static_cast<uint16_t>(storage::kMaxColumns + 1));
  EXPECT_EQ(decode_table_def(as_view(too_wide)).status().code(), ErrorCode::kInvalidArgument);
}

TEST(WireCodec, TableDefNamesLongerThanU16AreRefused) {
  TableDef table = sample_table();
  table.schema.name = std::string(65536, 'n');
  Bytes out;
  EXPECT_EQ(encode_table_def(table, &out).code(), ErrorCode::kInvalidArgument);
  table = sample_table();
  table.schema.columns[1].name = std::string(65536, 'c');
  out.clear();
  EXPECT_EQ(encode_table_def(table, &out).code(), ErrorCode::kInvalidArgument);
  table = sample_table();
  table.schema.ordered_indexes[0].name = std::string(65536, 'i');
  out.clear();
  EXPECT_EQ(encode_table_def(table, &out).code(), ErrorCode::kInvalidArgument);
}

// ---- Fuzz ----

Bytes random_bytes(SeededRandom& random, size_t size_max) {
  Bytes bytes(random.uniform(size_max + 1));
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(random.next_u64());
  return bytes;
}

// Flips 1..4 random bytes of `good`, sometimes truncating or extending it.
Bytes mutate(SeededRandom& random, const Bytes& good) {
  Bytes bytes = good;
  const uint64_t flips = random.uniform_range(1, 4);
  for (uint64_t i = 0; i < flips && !bytes.empty(); ++i) {
    bytes[random.uniform(bytes.size())] = static_cast<uint8_t>(random.next_u64());
  }
  if (random.bernoulli(0.2)) bytes.resize(random.uniform(bytes.size() + 1));
  if (random.bernoulli(0.1)) bytes.push_back(static_cast<uint8_t>(random.next_u64()));
  return bytes;
}

// Every decoder on one input: no crash (ASan watches over-reads), the only error is
// kInvalidArgument, and what is accepted re-encodes to exactly the input (the decoders
// accept only canonical encodings, so nothing is silently lost or reinterpreted).
void decode_everything(const Bytes& input) {
  const std::string_view bytes = as_view(input);
  {
    Result<AttrValues> values = decode_whole_attr_values(bytes);
    if (values.ok()) {
      Bytes again;
      ASSERT_TRUE(encode_attr_values(*values, &again).ok());
      ASSERT_EQ(again, input);
    }
  }
  {
    ByteReader in(bytes);
    std::vector<uint16_t> columns;
    if (decode_columns(&in, &columns) && in.done()) {
      Bytes again;
      encode_columns(columns, &again);
      ASSERT_EQ(again, input);
    }
  }
  {
    RowBatch batch;
    Status status = decode_row_batch(bytes, &batch);
    ASSERT_TRUE(status.ok() || status.is(ErrorCode::kInvalidArgument)) << status.to_string();
  }
  {
    Result<TableDef> table = decode_table_def(bytes);
    if (table.ok()) {
      Bytes again;
      ASSERT_TRUE(encode_table_def(*table, &again).ok());
      ASSERT_EQ(again, input);
    } else {
      ASSERT_EQ(table.status().code(), ErrorCode::kInvalidArgument);
    }
  }
}

TEST(WireCodec, FuzzRandomBytesIntoEveryDecoder) {
  SeededRandom random(20240611);
  for (int i = 0; i < 20000; ++i) {
    ASSERT_NO_FATAL_FAILURE(decode_everything(random_bytes(random, 64))) << "iteration " << i;
  }
}

TEST(WireCodec, FuzzMutatedEncodingsIntoEveryDecoder) {
  SeededRandom random(77);
  std::vector<Bytes> seeds(4);
  AttrValues values;
  values.add(1, "key");
  values.add_null(2);
  values.add(3, std::string(40, 'v'));
  ASSERT_TRUE(encode_attr_values(values, &seeds[0]).ok());
  encode_columns({1, 2, 3, 500}, &seeds[1]);
  ASSERT_TRUE(encode_row_batch(sample_batch(), &seeds[2]).ok());
  ASSERT_TRUE(encode_table_def(sample_table(), &seeds[3]).ok());
  for (int i = 0; i < 20000; ++i) {
    const Bytes& seed = seeds[static_cast<size_t>(i) % seeds.size()];
    ASSERT_NO_FATAL_FAILURE(decode_everything(mutate(random, seed))) << "iteration " << i;
  }
}

}  // namespace
}  // namespace duo::protocol
