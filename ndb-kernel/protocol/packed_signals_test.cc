// Tests for packed signals (packed_signals.h): inner signals survive pack/unpack with
// ids, words, sections, sender and receiver; malformed packs (truncated, trailing bytes,
// wrong counts, nested packs, bad headers) are refused with kInvalidArgument without
// crashing; the SignalPacker groups by receiver in order, splits at the section limit,
// sends a pack of one as the plain signal, and reports every signal of a refused pack.
#include "ndb-kernel/protocol/packed_signals.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ndb-kernel/common/random.h"
#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/messages.h"

namespace duo::protocol {
namespace {

using kernel::BlockAddress;
using kernel::Signal;

const BlockAddress kFrom{5, kApiBlock, 0};
const BlockAddress kTo{1, kCoordinatorBlock, 0};
const BlockAddress kLqh0{1, kLocalQueryBlock, 0};
const BlockAddress kLqh1{2, kLocalQueryBlock, 1};

Signal make_signal(kernel::SignalId id, uint32_t words, size_t section_bytes, uint8_t salt) {
  Signal signal(id);
  for (uint32_t w = 0; w < words; ++w) signal.set_word(w, w * 1000003u + salt);
  std::vector<uint8_t> section(section_bytes);
  for (size_t i = 0; i < section_bytes; ++i) section[i] = static_cast<uint8_t>(i * 7 + salt);
  signal.set_section(std::move(section));
  return signal;
}

void expect_same(const Signal& a, const Signal& b) {
  EXPECT_EQ(a.id(), b.id());
  ASSERT_EQ(a.length_words(), b.length_words());
  for (uint32_t w = 0; w < a.length_words(); ++w) EXPECT_EQ(a.word(w), b.word(w)) << w;
  EXPECT_EQ(a.section(), b.section());
}

Signal packed_of(const std::vector<Signal>& signals) {
  Signal packed = pack_signals(signals);
  packed.set_sender(kFrom);
  packed.set_receiver(kTo);
  return packed;
}

TEST(PackedSignalsTest, RoundTripKeepsEverySignalInOrder) {
  std::vector<Signal> signals;
  signals.push_back(make_signal(kTcKeyReq, 7, 130, 1));
  signals.push_back(make_signal(kTcCommitReq, 2, 0, 2));
  signals.push_back(make_signal(kLqhKeyConf, 0, 0, 3));
  signals.push_back(make_signal(kTcKeyReq, kernel::kSignalWordsMax, 1000, 4));
  Signal packed = packed_of(signals);
  EXPECT_EQ(packed.id(), kPackedSignals);
  EXPECT_EQ(packed.word(0), 4u);
  size_t bytes = 0;
  for (const Signal& s : signals) bytes += packed_size(s);
  EXPECT_EQ(packed.section().size(), bytes);
  EXPECT_TRUE(packed.check_sendable().ok());

  Result<std::vector<Signal>> inner = unpack_signals(packed);
  ASSERT_TRUE(inner.ok()) << inner.status().to_string();
  ASSERT_EQ(inner->size(), signals.size());
  for (size_t i = 0; i < signals.size(); ++i) {
    expect_same((*inner)[i], signals[i]);
    EXPECT_EQ((*inner)[i].sender(), kFrom);
    EXPECT_EQ((*inner)[i].receiver(), kTo);
  }
}

TEST(PackedSignalsTest, TypedMessagesSurvivePacking) {
  TcKeyReq req;
  req.api_tx = 77;
  req.op_index = 3;
  req.table_id = 9;
  req.table_version = 2;
  req.type = OpType::kUpdate;
  req.flags = kOpExecute | kOpCommit;
  req.body = Bytes{1, 2, 3, 4, 5};
  std::vector<Signal> signals;
  signals.push_back(std::move(req).to_signal());
  signals.push_back(transaction_signal(kLqhCommitReq, 1234));
  Result<std::vector<Signal>> inner = unpack_signals(packed_of(signals));
  ASSERT_TRUE(inner.ok());
  Result<TcKeyReq> decoded = TcKeyReq::from_signal((*inner)[0]);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->api_tx, 77u);
  EXPECT_EQ(decoded->op_index, 3u);
  EXPECT_EQ(decoded->type, OpType::kUpdate);
  EXPECT_EQ(decoded->flags, kOpExecute | kOpCommit);
  EXPECT_EQ(decoded->body, (Bytes{1, 2, 3, 4, 5}));
  EXPECT_EQ(transaction_of((*inner)[1]), 1234u);
}

TEST(PackedSignalsTest, MalformedPacksAreRefused) {
  std::vector<Signal> signals;
  signals.push_back(make_signal(kTcKeyReq, 3, 10, 1));
  signals.push_back(make_signal(kTcKeyReq, 3, 10, 2));
  const Signal good = packed_of(signals);
  auto refused = [](const Signal& packed) {
    Result<std::vector<Signal>> inner = unpack_signals(packed);
    return !inner.ok() && inner.status().is(ErrorCode::kInvalidArgument);
  };
  {  // count says more than there is
    Signal bad = good.clone();
    bad.set_word(0, 3);
    EXPECT_TRUE(refused(bad));
  }
  {  // count says less: trailing bytes
    Signal bad = good.clone();
    bad.set_word(0, 1);
    EXPECT_TRUE(refused(bad));
  }
  {  // count 0 and a huge count
    Signal bad = good.clone();
    bad.set_word(0, 0);
    EXPECT_TRUE(refused(bad));
    bad.set_word(0, 0xFFFFFFFFu);
    EXPECT_TRUE(refused(bad));
  }
  {  // every truncation
    for (size_t cut = 0; cut < good.section().size(); ++cut) {
      Signal bad = good.clone();
      bad.mutable_section().resize(cut);
      EXPECT_TRUE(refused(bad)) << cut;
    }
  }
  {  // a nested pack, signal id 0, too many words, a reserved byte set
    for (size_t byte : {size_t{0}, size_t{1}, size_t{2}, size_t{3}}) {
      Signal bad = good.clone();
      auto& section = bad.mutable_section();
      if (byte == 0) {
        section[0] = static_cast<uint8_t>(kPackedSignals);
        section[1] = static_cast<uint8_t>(kPackedSignals >> 8);
      } else if (byte == 1) {
        section[0] = 0;
        section[1] = 0;
      } else if (byte == 2) {
        section[2] = static_cast<uint8_t>(kernel::kSignalWordsMax + 1);
      } else {
        section[3] = 1;
      }
      EXPECT_TRUE(refused(bad)) << byte;
    }
  }
}

TEST(PackedSignalsTest, RandomBytesNeverCrash) {
  SeededRandom random(42);
  for (int round = 0; round < 2000; ++round) {
    Signal packed(kPackedSignals, {static_cast<uint32_t>(random.next_u64() % 8)});
    std::vector<uint8_t> bytes(random.next_u64() % 64);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(random.next_u64());
    packed.set_section(std::move(bytes));
    Result<std::vector<Signal>> inner = unpack_signals(packed);
    if (inner.ok()) {
      EXPECT_EQ(inner->size(), packed.word(0));
    }
  }
}

struct Sent {
  BlockAddress to;
  Signal signal;
};

TEST(SignalPackerTest, GroupsByReceiverInOrderAndSendsSinglesPlain) {
  SignalPacker packer;
  EXPECT_FALSE(packer.active());
  packer.begin();
  EXPECT_TRUE(packer.active());
  packer.add(kLqh0, make_signal(kLqhKeyReq, 11, 40, 1));
  packer.add(kLqh1, make_signal(kLqhKeyReq, 11, 40, 2));
  packer.add(kLqh0, make_signal(kLqhKeyReq, 11, 40, 3));
  packer.add(kTo, make_signal(kLqhKeyConf, 3, 0, 4));
  packer.add(kLqh0, make_signal(kLqhCommitReq, 3, 0, 5));
  std::vector<Sent> sent;
  size_t unsent = 0;
  packer.flush(
      [&](const BlockAddress& to, Signal s) {
        EXPECT_FALSE(packer.active());
        sent.push_back(Sent{to, std::move(s)});
        return Status::OK();
      },
      [&](const Signal&, const Status&) { ++unsent; });
  EXPECT_FALSE(packer.active());
  EXPECT_EQ(unsent, 0u);
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].to, kLqh0);
  ASSERT_EQ(sent[0].signal.id(), kPackedSignals);
  Result<std::vector<Signal>> first = unpack_signals(sent[0].signal);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 3u);
  expect_same((*first)[0], make_signal(kLqhKeyReq, 11, 40, 1));
  expect_same((*first)[1], make_signal(kLqhKeyReq, 11, 40, 3));
  expect_same((*first)[2], make_signal(kLqhCommitReq, 3, 0, 5));
  EXPECT_EQ(sent[1].to, kLqh1);
  expect_same(sent[1].signal, make_signal(kLqhKeyReq, 11, 40, 2));  // alone: plain
  EXPECT_EQ(sent[2].to, kTo);
  expect_same(sent[2].signal, make_signal(kLqhKeyConf, 3, 0, 4));
  EXPECT_EQ(packer.packs_sent(), 1u);
  EXPECT_EQ(packer.signals_packed(), 3u);

  // Reusable after a flush.
  packer.begin();
  packer.flush([](const BlockAddress&, Signal) { return Status::OK(); },
               [](const Signal&, const Status&) {});
  EXPECT_EQ(packer.packs_sent(), 1u);
}

TEST(SignalPackerTest, SplitsAtTheSectionLimit) {
  SignalPacker packer;
  packer.begin();
  const size_t section = 20 * 1024;
  for (uint8_t i = 0; i < 7; ++i) packer.add(kLqh0, make_signal(kLqhKeyReq, 11, section, i));
  std::vector<Signal> sent;
  packer.flush(
      [&](const BlockAddress&, Signal s) {
        EXPECT_TRUE(s.check_sendable().ok());
        sent.push_back(std::move(s));
        return Status::OK();
      },
      [](const Signal&, const Status&) { ADD_FAILURE() << "nothing may be unsent"; });
  // Three 20 KiB signals fit 64 KiB, a fourth does not: 3 + 3 + 1 (plain).
  ASSERT_EQ(sent.size(), 3u);
  uint8_t salt = 0;
  for (Signal& s : sent) {
    if (s.id() == kPackedSignals) {
      Result<std::vector<Signal>> inner = unpack_signals(s);
      ASSERT_TRUE(inner.ok());
      EXPECT_EQ(inner->size(), 3u);
      for (const Signal& one : *inner) expect_same(one, make_signal(kLqhKeyReq, 11, section, salt++));
    } else {
      expect_same(s, make_signal(kLqhKeyReq, 11, section, salt++));
    }
  }
  EXPECT_EQ(salt, 7);
}

TEST(SignalPackerTest, RefusedPacksReportEverySignalHeader) {
  SignalPacker packer;
  packer.begin();
  packer.add(kLqh0, make_signal(kLqhKeyReq, 11, 40, 1));
  packer.add(kLqh0, make_signal(kLqhKeyReq, 11, 40, 2));
  packer.add(kLqh1, make_signal(kLqhCommitReq, 3, 0, 3));
  std::vector<Signal> headers;
  packer.flush([](const BlockAddress&,
                  Signal) { return Status(ErrorCode::kTemporary, "queue full (test)"); },
               [&](const Signal& header, const Status& why) {
                 EXPECT_TRUE(why.is(ErrorCode::kTemporary));
                 // What the block may send here goes out directly.
                 EXPECT_FALSE(packer.active());
                 headers.push_back(header.clone());
               });
  ASSERT_EQ(headers.size(), 3u);
  for (uint8_t i = 0; i < 3; ++i) {
    Signal expected = make_signal(i < 2 ? kLqhKeyReq : kLqhCommitReq, i < 2 ? 11 : 3, 0, i + 1);
    expected.set_section({});
    expect_same(headers[i], expected);
  }
  EXPECT_EQ(packer.packs_sent(), 0u);
}

}  // namespace
}  // namespace duo::protocol
