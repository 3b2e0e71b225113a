// Tests for the typed data-path messages of messages.h: every field of every message
// survives to_signal/from_signal, the word layouts match docs/formats/kernel-protocol.md,
// sections are moved rather than copied, signal numbers stay what the wire says, and
// malformed signals (bad enums, bad chains, truncated or over-long sections, random
// words and bytes) are refused with kInvalidArgument without crashing.
#include "ndb-kernel/protocol/messages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ndb-kernel/common/random.h"
#include "ndb-kernel/protocol/block_numbers.h"

namespace duo::protocol {
namespace {

using kernel::BlockAddress;
using kernel::SignalId;

constexpr uint64_t kTransid = (uint64_t{3} << 48) | 0x0000'89AB'CDEF'0123ull;

Bytes patterned(size_t size, uint8_t salt) {
  Bytes bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 31 + salt);
  return bytes;
}

// ---- Signal numbers ----

TEST(Messages, SignalNumbersAndNamesArePinned) {
  // Numbers are the wire protocol: a change here breaks every other node and client.
  const struct {
    SignalId id;
    SignalId number;
    const char* name;
  } kExpected[] = {
      {kTcKeyReq, 100, "TC_KEYREQ"},
      {kTcKeyConf, 101, "TC_KEYCONF"},
      {kTcCommitReq, 102, "TC_COMMITREQ"},
      {kTcRollbackReq, 103, "TC_ROLLBACKREQ"},
      {kScanTabReq, 110, "SCAN_TABREQ"},
      {kScanTabConf, 111, "SCAN_TABCONF"},
      {kScanTabRef, 112, "SCAN_TABREF"},
      {kScanTabNextReq, 113, "SCAN_TABNEXTREQ"},
      {kLqhKeyReq, 140, "LQH_KEYREQ"},
      {kLqhKeyConf, 141, "LQH_KEYCONF"},
      {kLqhKeyRef, 142, "LQH_KEYREF"},
      {kLqhCommitReq, 143, "LQH_COMMITREQ"},
      {kLqhCommitConf, 144, "LQH_COMMITCONF"},
      {kLqhAbortReq, 145, "LQH_ABORTREQ"},
      {kLqhAbortConf, 146, "LQH_ABORTCONF"},
      {kScanFragReq, 150, "SCAN_FRAGREQ"},
      {kScanFragConf, 151, "SCAN_FRAGCONF"},
      {kScanFragRef, 152, "SCAN_FRAGREF"},
      {kScanFragNextReq, 153, "SCAN_FRAGNEXTREQ"},
      {kLqhLockTimeout, 160, "LQH_LOCK_TIMEOUT"},
      {kCreateTableReq, 180, "CREATE_TABLEREQ"},
      {kCreateTableConf, 181, "CREATE_TABLECONF"},
      {kCreateTableRef, 182, "CREATE_TABLEREF"},
      {kDropTableReq, 183, "DROP_TABLEREQ"},
      {kDropTableConf, 184, "DROP_TABLECONF"},
      {kDropTableRef, 185, "DROP_TABLEREF"},
      {kGetTableReq, 186, "GET_TABLEREQ"},
      {kGetTableConf, 187, "GET_TABLECONF"},
      {kGetTableRef, 188, "GET_TABLEREF"},
      {kListTablesReq, 189, "LIST_TABLESREQ"},
      {kListTablesConf, 190, "LIST_TABLESCONF"},
      {kSchemaEvent, 191, "SCHEMA_EVENT"},
      {kSchemaPrepareReq, 200, "SCHEMA_PREPAREREQ"},
      {kSchemaPrepareConf, 201, "SCHEMA_PREPARECONF"},
      {kSchemaPrepareRef, 202, "SCHEMA_PREPAREREF"},
      {kSchemaCommitReq, 203, "SCHEMA_COMMITREQ"},
      {kSchemaCommitConf, 204, "SCHEMA_COMMITCONF"},
      {kTableAddReq, 205, "TABLE_ADDREQ"},
      {kTableAddConf, 206, "TABLE_ADDCONF"},
      {kTableDropReq, 207, "TABLE_DROPREQ"},
      {kTableDropConf, 208, "TABLE_DROPCONF"},
      {kSubscribeSchemaReq, 209, "SUBSCRIBE_SCHEMAREQ"},
      {kNodeFailRep, 220, "NODE_FAILREP"},
      {kNodeStoppingRep, 221, "NODE_STOPPINGREP"},
      {kGcpPrepareReq, 280, "GCP_PREPAREREQ"},
      {kGcpPrepareConf, 281, "GCP_PREPARECONF"},
      {kGcpBlockReq, 282, "GCP_BLOCKREQ"},
      {kGcpBlockConf, 283, "GCP_BLOCKCONF"},
      {kGcpCommitReq, 284, "GCP_COMMITREQ"},
      {kGcpSwitchReq, 285, "GCP_SWITCHREQ"},
      {kGcpNoMoreTrans, 286, "GCP_NOMORETRANS"},
      {kGcpCommitConf, 287, "GCP_COMMITCONF"},
      {kGcpSaveReq, 288, "GCP_SAVEREQ"},
      {kGcpSaveConf, 289, "GCP_SAVECONF"},
      {kGcpCompleteRep, 290, "GCP_COMPLETEREP"},
      {kGcpTimer, 291, "GCP_TIMER"},
      {kGcpCompleteConf, 292, "GCP_COMPLETECONF"},
      {kLcpStartReq, 300, "LCP_STARTREQ"},
      {kLcpStartConf, 301, "LCP_STARTCONF"},
      {kLqhRestoreReq, 302, "LQH_RESTOREREQ"},
      {kLqhRestoreConf, 303, "LQH_RESTORECONF"},
      {kDictRestoreReq, 304, "DICT_RESTOREREQ"},
      {kDictRestoreConf, 305, "DICT_RESTORECONF"},
      {kRestartInfoRep, 306, "RESTART_INFOREP"},
      {kRestartGciRep, 307, "RESTART_GCIREP"},
      {kRestartDoneRep, 308, "RESTART_DONEREP"},
      {kClusterStartedRep, 309, "CLUSTER_STARTEDREP"},
      {kLqhContinue, 310, "LQH_CONTINUE"},
      {kRestartTimer, 311, "RESTART_TIMER"},
      {kLqhTransReq, 430, "LQH_TRANSREQ"},
      {kLqhTransConf, 431, "LQH_TRANSCONF"},
      {kTakeoverDoneRep, 432, "TAKEOVER_DONEREP"},
      {kMasterGcpReq, 433, "MASTER_GCPREQ"},
      {kMasterGcpConf, 434, "MASTER_GCPCONF"},
      {kFsOpenReq, 260, "FS_OPENREQ"},
      {kFsOpenConf, 261, "FS_OPENCONF"},
      {kFsRef, 262, "FS_REF"},
      {kFsWriteReq, 263, "FS_WRITEREQ"},
      {kFsWriteConf, 264, "FS_WRITECONF"},
      {kFsReadReq, 265, "FS_READREQ"},
      {kFsReadConf, 266, "FS_READCONF"},
      {kFsSyncReq, 267, "FS_SYNCREQ"},
      {kFsSyncConf, 268, "FS_SYNCCONF"},
      {kFsCloseReq, 269, "FS_CLOSEREQ"},
      {kFsCloseConf, 270, "FS_CLOSECONF"},
      {kFsRemoveReq, 271, "FS_REMOVEREQ"},
      {kFsRemoveConf, 272, "FS_REMOVECONF"},
      {kFsListReq, 273, "FS_LISTREQ"},
      {kFsListConf, 274, "FS_LISTCONF"},
      {kFsPageReadReq, 275, "FS_PAGE_READREQ"},
      {kFsPageWriteReq, 276, "FS_PAGE_WRITEREQ"},
      {kFsPageConf, 277, "FS_PAGE_CONF"},
  };
  register_protocol_signal_names();
  register_protocol_signal_names();  // idempotent
  for (const auto& expected : kExpected) {
    EXPECT_EQ(expected.id, expected.number) << expected.name;
    EXPECT_EQ(kernel::signal_name(expected.id), expected.name);
  }
  EXPECT_EQ(kCoordinatorBlock, 245);
  EXPECT_EQ(kLocalQueryBlock, 247);
  EXPECT_EQ(kDictionaryBlock, 250);
  EXPECT_EQ(kApiBlock, 4002);
}

// ---- Operation bodies ----

OpBody sample_op_body() {
  OpBody body;
  body.key_or_row.add(0, std::string("\x01\x00\x00\x00", 4));
  body.key_or_row.add_null(3);
  body.values.add(1, "new value");
  body.values.add_null(2);
  body.columns = {2, 0, 1};
  body.program = std::string("\x00\x01\x02\xFF", 4);
  return body;
}

void expect_same_values(const storage::AttrValues& a, const storage::AttrValues& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a.entry(i).column, b.entry(i).column);
    EXPECT_EQ(a.entry(i).is_null, b.entry(i).is_null);
    EXPECT_EQ(a.value(i), b.value(i));
  }
}

TEST(Messages, OpBodyRoundTrips) {
  for (const OpBody& body : {OpBody(), sample_op_body()}) {
    Bytes bytes;
    ASSERT_TRUE(body.encode(&bytes).ok());
    Result<OpBody> back = OpBody::decode(as_view(bytes));
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    expect_same_values(back->key_or_row, body.key_or_row);
    expect_same_values(back->values, body.values);
    EXPECT_EQ(back->columns, body.columns);
    EXPECT_EQ(back->program, body.program);
  }
  Bytes empty;
  ASSERT_TRUE(OpBody().encode(&empty).ok());
  EXPECT_EQ(empty, Bytes({0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));  // 3 empty u16 counts, u32 0

  OpBody too_long;
  too_long.key_or_row.add(1, std::string(65536, 'k'));
  Bytes bytes;
  EXPECT_EQ(too_long.encode(&bytes).code(), ErrorCode::kDataTooLong);
}

TEST(Messages, OpBodyMalformedIsRefused) {
  Bytes good;
  ASSERT_TRUE(sample_op_body().encode(&good).ok());
  for (size_t length = 0; length < good.size(); ++length) {
    EXPECT_EQ(OpBody::decode(as_view(good).substr(0, length)).status().code(),
              ErrorCode::kInvalidArgument)
        << "prefix of " << length << " bytes";
  }
  Bytes trailing = good;
  trailing.push_back(0);
  EXPECT_EQ(OpBody::decode(as_view(trailing)).status().code(), ErrorCode::kInvalidArgument);
}

ScanBody sample_scan_body() {
  ScanBody body;
  body.filter = std::string("\x05\x00filter", 8);
  body.columns = {0, 4};
  body.low.add(1, "a");
  body.high.add(1, "m");
  body.high.add_null(2);
  return body;
}

TEST(Messages, ScanBodyRoundTripsAndRefusesMalformed) {
  for (const ScanBody& body : {ScanBody(), sample_scan_body()}) {
    Bytes bytes;
    ASSERT_TRUE(body.encode(&bytes).ok());
    Result<ScanBody> back = ScanBody::decode(as_view(bytes));
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(back->filter, body.filter);
    EXPECT_EQ(back->columns, body.columns);
    expect_same_values(back->low, body.low);
    expect_same_values(back->high, body.high);
  }
  Bytes good;
  ASSERT_TRUE(sample_scan_body().encode(&good).ok());
  for (size_t length = 0; length < good.size(); ++length) {
    EXPECT_EQ(ScanBody::decode(as_view(good).substr(0, length)).status().code(),
              ErrorCode::kInvalidArgument)
        << "prefix of " << length << " bytes";
  }
  good.push_back(0);
  EXPECT_EQ(ScanBody::decode(as_view(good)).status().code(), ErrorCode::kInvalidArgument);
}

// ---- TC_KEYREQ ----

TEST(Messages, TcKeyReqRoundTripsEveryOperationAndLock) {
  for (uint8_t type = 0; type <= static_cast<uint8_t>(OpType::kInterpretedUpdate); ++type) {
    for (uint8_t lock = 0; lock <= static_cast<uint8_t>(LockMode::kExclusive); ++lock) {
      TcKeyReq req;
      req.api_tx = 0xFEDC'BA98'7654'3210ull;
      req.op_index = 0xFFFF'FFFE;
      req.table_id = 17;
      req.table_version = 0x8000'0001;
      req.type = static_cast<OpType>(type);
      req.lock = static_cast<LockMode>(lock);
      req.flags = kOpExecute | kOpCommit | kOpIgnoreError | 0xF8;
      req.body = patterned(kernel::kSectionBytesMax, type);
      const uint8_t* body_data = req.body.data();
      Signal signal = std::move(req).to_signal();
      EXPECT_EQ(signal.id(), kTcKeyReq);
      EXPECT_TRUE(signal.check_sendable().ok());
      EXPECT_EQ(signal.length_words(), 6u);
      EXPECT_EQ(signal.word(5), type | (uint32_t{lock} << 8) | (0xFFu << 16));
      Result<TcKeyReq> back = TcKeyReq::from_signal(signal);
      ASSERT_TRUE(back.ok()) << back.status().to_string();
      EXPECT_EQ(back->api_tx, 0xFEDC'BA98'7654'3210ull);
      EXPECT_EQ(back->op_index, 0xFFFF'FFFEu);
      EXPECT_EQ(back->table_id, 17u);
      EXPECT_EQ(back->table_version, 0x8000'0001u);
      EXPECT_EQ(back->type, static_cast<OpType>(type));
      EXPECT_EQ(back->lock, static_cast<LockMode>(lock));
      EXPECT_EQ(back->flags, 0xFF);
      EXPECT_EQ(back->body, patterned(kernel::kSectionBytesMax, type));
      EXPECT_EQ(back->body.data(), body_data) << "the section is moved, not copied";
      EXPECT_TRUE(signal.section().empty());
    }
  }
}

TEST(Messages, TcKeyReqBadEnumsAreRefused) {
  for (uint32_t word5 : {6u, 0xFFu, 3u << 8, 0xFFu << 8}) {
    Signal signal(kTcKeyReq);
    signal.set_word(5, word5);
    EXPECT_EQ(TcKeyReq::from_signal(signal).status().code(), ErrorCode::kInvalidArgument) << word5;
  }
  Signal empty(kTcKeyReq);  // all words 0: a committed read of table 0 is well formed
  EXPECT_TRUE(TcKeyReq::from_signal(empty).ok());
}

// ---- LQH_KEYREQ ----

LqhKeyReq sample_lqh_key_req(std::vector<uint16_t> chain, uint32_t position) {
  LqhKeyReq req;
  req.transid = kTransid;
  req.tc_op = 0xABCD'0001;
  req.table_id = 9;
  req.table_version = 3;
  req.fragment = 0x0102'0304;
  req.log_part = 0xFFFE;
  req.type = OpType::kInterpretedUpdate;
  req.lock = LockMode::kExclusive;
  req.flags = kOpExecute | kOpIgnoreError;
  req.coordinator = BlockAddress{0xFFF1, kCoordinatorBlock, 0xFFF2};
  req.api_node = 0xFFF3;
  req.chain = std::move(chain);
  req.position = position;
  req.body = patterned(100, 1);
  return req;
}

// Index changes ride after the body (word 15 counts their bytes); a count larger than
// the section is malformed.
TEST(Messages, LqhKeyReqAndConfCarryIndexChanges) {
  LqhKeyReq req = sample_lqh_key_req({1, 2}, 1);
  req.index_changes = patterned(37, 9);
  Signal signal = std::move(req).to_signal();
  EXPECT_EQ(signal.word(11 + kMaxReplicas), 37u);
  Result<LqhKeyReq> back = LqhKeyReq::from_signal(signal);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->body, patterned(100, 1));
  EXPECT_EQ(back->index_changes, patterned(37, 9));

  LqhKeyConf conf;
  conf.transid = kTransid;
  conf.index_changes = patterned(12, 4);
  Signal conf_signal = std::move(conf).to_signal();
  Result<LqhKeyConf> conf_back = LqhKeyConf::from_signal(conf_signal);
  ASSERT_TRUE(conf_back.ok());
  EXPECT_TRUE(conf_back->values.empty());
  EXPECT_EQ(conf_back->index_changes, patterned(12, 4));

  LqhKeyReq bad = sample_lqh_key_req({1}, 0);
  Signal bad_signal = std::move(bad).to_signal();
  bad_signal.set_word(11 + kMaxReplicas, 101);  // more than the 100-byte body
  EXPECT_FALSE(LqhKeyReq::from_signal(bad_signal).ok());
}

TEST(Messages, LqhKeyReqRoundTripsEveryChainAndPosition) {
  for (uint32_t length = 1; length <= kMaxReplicas; ++length) {
    for (uint32_t position = 0; position < length; ++position) {
      std::vector<uint16_t> chain;
      for (uint32_t i = 0; i < length; ++i) chain.push_back(static_cast<uint16_t>(0xFF00 + i));
      LqhKeyReq req = sample_lqh_key_req(chain, position);
      const uint8_t* body_data = req.body.data();
      Signal signal = std::move(req).to_signal();
      EXPECT_EQ(signal.id(), kLqhKeyReq);
      EXPECT_EQ(signal.length_words(), 11 + length);
      // Packed words, as documented.
      EXPECT_EQ(signal.word(6), 5u | (2u << 8) | (5u << 16));
      EXPECT_EQ(signal.word(7), 0xFFFEu | (0xFFF3u << 16));
      EXPECT_EQ(signal.word(8), 0xFFF1u | (0xFFF2u << 16));
      EXPECT_EQ(signal.word(9), kCoordinatorBlock);
      EXPECT_EQ(signal.word(10), length | (position << 16));
      Result<LqhKeyReq> back = LqhKeyReq::from_signal(signal);
      ASSERT_TRUE(back.ok()) << back.status().to_string();
      EXPECT_EQ(back->transid, kTransid);
      EXPECT_EQ(back->tc_op, 0xABCD'0001u);
      EXPECT_EQ(back->table_id, 9u);
      EXPECT_EQ(back->table_version, 3u);
      EXPECT_EQ(back->fragment, 0x0102'0304u);
      EXPECT_EQ(back->log_part, 0xFFFE);
      EXPECT_EQ(back->type, OpType::kInterpretedUpdate);
      EXPECT_EQ(back->lock, LockMode::kExclusive);
      EXPECT_EQ(back->flags, kOpExecute | kOpIgnoreError);
      EXPECT_EQ(back->coordinator, (BlockAddress{0xFFF1, kCoordinatorBlock, 0xFFF2}));
      EXPECT_EQ(back->api_node, 0xFFF3);
      EXPECT_EQ(back->chain, chain);
      EXPECT_EQ(back->position, position);
      EXPECT_EQ(back->body, patterned(100, 1));
      EXPECT_EQ(back->body.data(), body_data);
      EXPECT_TRUE(signal.section().empty());
    }
  }
}

TEST(Messages, LqhKeyReqBadChainsAndEnumsAreRefused) {
  auto code_of = [](LqhKeyReq req) {
    Signal signal = std::move(req).to_signal();
    return LqhKeyReq::from_signal(signal).status().code();
  };
  EXPECT_EQ(code_of(sample_lqh_key_req({}, 0)), ErrorCode::kInvalidArgument) << "empty chain";
  // A ReplicaChain cannot hold more than kMaxReplicas: the signal is made longer by hand.
  Signal too_long = sample_lqh_key_req({1, 2, 3, 4}, 0).to_signal();
  too_long.set_word(10, kMaxReplicas + 1);
  EXPECT_EQ(LqhKeyReq::from_signal(too_long).status().code(), ErrorCode::kInvalidArgument)
      << "chain longer than kMaxReplicas";
  EXPECT_EQ(code_of(sample_lqh_key_req({1, 2}, 2)), ErrorCode::kInvalidArgument)
      << "position past the chain";
  EXPECT_EQ(code_of(sample_lqh_key_req({1, 2}, 0xFFFF)), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of(sample_lqh_key_req({1, 2}, 1)), ErrorCode::kOk);

  Signal bad_type = sample_lqh_key_req({1}, 0).to_signal();
  bad_type.set_word(6, 6);
  EXPECT_EQ(LqhKeyReq::from_signal(bad_type).status().code(), ErrorCode::kInvalidArgument);
  Signal bad_lock = sample_lqh_key_req({1}, 0).to_signal();
  bad_lock.set_word(6, 3u << 8);
  EXPECT_EQ(LqhKeyReq::from_signal(bad_lock).status().code(), ErrorCode::kInvalidArgument);
  Signal no_words(kLqhKeyReq);  // chain length 0
  EXPECT_EQ(LqhKeyReq::from_signal(no_words).status().code(), ErrorCode::kInvalidArgument);
}

// ---- LQH_KEYCONF / LQH_KEYREF / transaction signals ----

TEST(Messages, LqhKeyConfRoundTrips) {
  LqhKeyConf conf;
  conf.transid = kTransid;
  conf.tc_op = 0xFFFF'FFFF;
  conf.flags = kConfFiltered;
  conf.values = patterned(30000, 2);
  const uint8_t* data = conf.values.data();
  Signal signal = std::move(conf).to_signal();
  EXPECT_EQ(signal.id(), kLqhKeyConf);
  EXPECT_EQ(signal.length_words(), 4u);
  Result<LqhKeyConf> back = LqhKeyConf::from_signal(signal);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->transid, kTransid);
  EXPECT_EQ(back->tc_op, 0xFFFF'FFFFu);
  EXPECT_EQ(back->flags, kConfFiltered);
  EXPECT_EQ(back->values, patterned(30000, 2));
  EXPECT_EQ(back->values.data(), data);
  EXPECT_TRUE(signal.section().empty());
}

TEST(Messages, LqhKeyRefRoundTripsAndRefusesUnknownErrors) {
  for (uint32_t code = 0; code <= static_cast<uint32_t>(ErrorCode::kInternal); ++code) {
    LqhKeyRef ref;
    ref.transid = kTransid;
    ref.tc_op = code * 1000;
    ref.error = static_cast<ErrorCode>(code);
    ref.message = code == 0 ? "" : "error number " + std::to_string(code);
    Signal signal = std::move(ref).to_signal();
    EXPECT_EQ(signal.id(), kLqhKeyRef);
    EXPECT_EQ(signal.word(3), code);
    Result<LqhKeyRef> back = LqhKeyRef::from_signal(signal);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->transid, kTransid);
    EXPECT_EQ(back->tc_op, code * 1000);
    EXPECT_EQ(back->error, static_cast<ErrorCode>(code));
    EXPECT_EQ(back->message, code == 0 ? "" : "error number " + std::to_string(code));
  }
  Signal unknown = LqhKeyRef{kTransid, 1, ErrorCode::kLockWaitTimeout, "x"}.to_signal();
  unknown.set_word(3, static_cast<uint32_t>(ErrorCode::kInternal) + 1);
  EXPECT_EQ(LqhKeyRef::from_signal(unknown).status().code(), ErrorCode::kInvalidArgument);
}

TEST(Messages, TransactionSignalsCarryTheTransidInTwoWords) {
  for (SignalId id : {kLqhCommitReq, kLqhCommitConf, kLqhAbortReq, kLqhAbortConf}) {
    Signal signal = transaction_signal(id, kTransid);
    EXPECT_EQ(signal.id(), id);
    EXPECT_EQ(signal.length_words(), 2u);
    EXPECT_EQ(signal.word(0), static_cast<uint32_t>(kTransid));
    EXPECT_EQ(signal.word(1), static_cast<uint32_t>(kTransid >> 32));
    EXPECT_TRUE(signal.section().empty());
    EXPECT_EQ(transaction_of(signal), kTransid);
  }
  for (SignalId id : {kTcCommitReq, kTcRollbackReq}) {
    Signal signal = api_transaction_signal(id, ~uint64_t{0});
    EXPECT_EQ(signal.id(), id);
    EXPECT_EQ(transaction_of(signal), ~uint64_t{0});
  }
}

// ---- TC_KEYCONF ----

TcKeyConf sample_tc_key_conf() {
  TcKeyConf conf;
  conf.api_tx = 0x1234'5678'9ABC'DEF0ull;
  conf.flags = kTcBatchDone | kTcAborted;
  conf.tx_error = ErrorCode::kLockWaitTimeout;
  conf.tx_message = "Lock wait timeout exceeded";
  conf.gci = 0xFEDC'BA98;
  conf.results.push_back({0, ErrorCode::kOk, 0, patterned(50, 3)});
  conf.results.push_back({1, ErrorCode::kOk, kConfFiltered, {}});
  conf.results.push_back({0xFFFF'FFFF, ErrorCode::kNotFound, 0, Bytes({'g', 'o', 'n', 'e'})});
  conf.results.push_back({3, ErrorCode::kInternal, 0xFF, {}});
  return conf;
}

TEST(Messages, TcKeyConfRoundTrips) {
  TcKeyConf conf = sample_tc_key_conf();
  size_t expected_size = 2 + conf.tx_message.size();
  for (const OpResultMsg& result : conf.results) expected_size += TcKeyConf::encoded_size(result);
  Signal signal = sample_tc_key_conf().to_signal();
  EXPECT_EQ(signal.id(), kTcKeyConf);
  EXPECT_EQ(signal.length_words(), 6u);
  EXPECT_EQ(signal.word(4), 4u);
  EXPECT_EQ(signal.word(5), conf.gci);
  EXPECT_EQ(signal.section().size(), expected_size) << "encoded_size must match the encoder";
  Result<TcKeyConf> back = TcKeyConf::from_signal(signal);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->api_tx, conf.api_tx);
  EXPECT_EQ(back->gci, conf.gci);
  EXPECT_EQ(back->flags, conf.flags);
  EXPECT_EQ(back->tx_error, conf.tx_error);
  EXPECT_EQ(back->tx_message, conf.tx_message);
  ASSERT_EQ(back->results.size(), conf.results.size());
  for (size_t i = 0; i < conf.results.size(); ++i) {
    EXPECT_EQ(back->results[i].op_index, conf.results[i].op_index);
    EXPECT_EQ(back->results[i].error, conf.results[i].error);
    EXPECT_EQ(back->results[i].flags, conf.results[i].flags);
    EXPECT_EQ(back->results[i].data, conf.results[i].data);
  }

  // No results, no message: no section at all.
  TcKeyConf empty;
  empty.flags = kTcBatchDone | kTcCommitted;
  Signal empty_signal = std::move(empty).to_signal();
  EXPECT_TRUE(empty_signal.section().empty());
  Result<TcKeyConf> empty_back = TcKeyConf::from_signal(empty_signal);
  ASSERT_TRUE(empty_back.ok());
  EXPECT_EQ(empty_back->flags, kTcBatchDone | kTcCommitted);
  EXPECT_TRUE(empty_back->results.empty());
  EXPECT_TRUE(empty_back->tx_message.empty());
  // The same answer with its empty message spelled out (u16 length 0) is read alike.
  Signal spelled_out = empty_signal.clone();
  spelled_out.set_section(Bytes({0, 0}));
  Result<TcKeyConf> spelled_back = TcKeyConf::from_signal(spelled_out);
  ASSERT_TRUE(spelled_back.ok());
  EXPECT_TRUE(spelled_back->results.empty());
  // A message alone keeps its section; a result count without a section is malformed.
  TcKeyConf message_only;
  message_only.tx_message = "why";
  Signal message_signal = std::move(message_only).to_signal();
  EXPECT_EQ(message_signal.section(), Bytes({3, 0, 'w', 'h', 'y'}));
  Signal missing = empty_signal.clone();
  missing.set_word(4, 1);
  EXPECT_EQ(TcKeyConf::from_signal(missing).status().code(), ErrorCode::kInvalidArgument);
}

TEST(Messages, TcKeyConfEncodeMatchesToSignal) {
  TcKeyConf conf = sample_tc_key_conf();
  const Signal built = TcKeyConf::encode(conf.api_tx, conf.flags, conf.tx_error, conf.gci,
                                         conf.tx_message, conf.results);
  const Signal expected = std::move(conf).to_signal();
  EXPECT_EQ(built.id(), expected.id());
  EXPECT_TRUE(std::equal(built.words().begin(), built.words().end(), expected.words().begin(),
                         expected.words().end()));
  EXPECT_EQ(built.section(), expected.section());
}

TEST(Messages, ReplicaChainHoldsUpToFourNodesInline) {
  ReplicaChain chain = {3, 1, 2};
  EXPECT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain.front(), 3u);
  EXPECT_EQ(chain.back(), 2u);
  EXPECT_EQ(chain, (std::vector<uint16_t>{3, 1, 2}));
  chain.push_back(4);
  EXPECT_EQ(chain.to_vector(), (std::vector<uint16_t>{3, 1, 2, 4}));
  const ReplicaChain from_vector = std::vector<uint16_t>{7};
  EXPECT_EQ(from_vector, ReplicaChain{7});
  chain.clear();
  EXPECT_TRUE(chain.empty());
}

TEST(Messages, OpBodyDecodeIntoReusesAndEmptiesTheTarget) {
  OpBody body;
  body.key_or_row.add(0, "key");
  body.values.add(1, "value");
  body.values.add_null(2);
  body.columns = {1, 2};
  body.program = "program";
  Bytes encoded;
  ASSERT_TRUE(body.encode(&encoded).ok());
  EXPECT_EQ(encoded.size(), encoded.capacity()) << "sized once";
  OpBody target;
  target.key_or_row.add(9, "left over");
  target.columns = {9, 9, 9};
  ASSERT_TRUE(OpBody::decode_into(as_view(encoded), &target).ok());
  EXPECT_EQ(target.key_or_row.size(), 1u);
  EXPECT_EQ(target.key_or_row.value(0), "key");
  EXPECT_EQ(target.values.size(), 2u);
  EXPECT_TRUE(target.values.entry(1).is_null);
  EXPECT_EQ(target.columns, (std::vector<uint16_t>{1, 2}));
  EXPECT_EQ(target.program, "program");
  encoded.push_back(0);
  EXPECT_EQ(OpBody::decode_into(as_view(encoded), &target).code(), ErrorCode::kInvalidArgument);
}

TEST(Messages, TcKeyConfCutsLongMessagesAt1024Bytes) {
  TcKeyConf conf;
  conf.tx_error = ErrorCode::kInternal;
  conf.tx_message = std::string(1024, 'm') + "cut";
  Signal signal = std::move(conf).to_signal();
  Result<TcKeyConf> back = TcKeyConf::from_signal(signal);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->tx_message, std::string(1024, 'm'));
}

TEST(Messages, TcKeyConfMalformedIsRefused) {
  const Signal good = sample_tc_key_conf().to_signal();
  const Bytes& section = good.section();
  for (size_t length = 0; length < section.size(); ++length) {
    Signal cut = good.clone();
    cut.set_section(Bytes(section.begin(), section.begin() + static_cast<ptrdiff_t>(length)));
    EXPECT_EQ(TcKeyConf::from_signal(cut).status().code(), ErrorCode::kInvalidArgument)
        << "section cut to " << length << " bytes";
  }
  Signal trailing = good.clone();
  trailing.mutable_section().push_back(0);
  EXPECT_EQ(TcKeyConf::from_signal(trailing).status().code(), ErrorCode::kInvalidArgument);

  Signal fewer = good.clone();
  fewer.set_word(4, 3);  // the fourth result becomes trailing bytes
  EXPECT_EQ(TcKeyConf::from_signal(fewer).status().code(), ErrorCode::kInvalidArgument);
  Signal more = good.clone();
  more.set_word(4, 5);
  EXPECT_EQ(TcKeyConf::from_signal(more).status().code(), ErrorCode::kInvalidArgument);
  Signal huge = good.clone();
  huge.set_word(4, 0xFFFF'FFFF);  // refused before allocating 4G results
  EXPECT_EQ(TcKeyConf::from_signal(huge).status().code(), ErrorCode::kInvalidArgument);

  Signal bad_tx_error = good.clone();
  bad_tx_error.set_word(3, static_cast<uint32_t>(ErrorCode::kInternal) + 1);
  EXPECT_EQ(TcKeyConf::from_signal(bad_tx_error).status().code(), ErrorCode::kInvalidArgument);
  // The first result's u16 error code sits after the message and its op index.
  Signal bad_op_error = good.clone();
  const size_t error_at = 2 + sample_tc_key_conf().tx_message.size() + 4;
  bad_op_error.mutable_section()[error_at] = static_cast<uint8_t>(ErrorCode::kInternal) + 1;
  EXPECT_EQ(TcKeyConf::from_signal(bad_op_error).status().code(), ErrorCode::kInvalidArgument);
}

// ---- Scans ----

TEST(Messages, ScanTabReqRoundTrips) {
  for (int32_t index : {-1, 0, 0x7FFF'FFFF}) {
    ScanTabReq req;
    req.api_tx = 0xAAAA'BBBB'CCCC'DDDDull;
    req.scan_id = 77;
    req.table_id = 5;
    req.table_version = 6;
    req.index = index;
    req.flags = kScanDescending | kScanLowInclusive | kScanHighInclusive;
    req.batch_rows = 0xFFFF'FFFF;
    req.body = patterned(300, 4);
    Signal signal = std::move(req).to_signal();
    EXPECT_EQ(signal.id(), kScanTabReq);
    EXPECT_EQ(signal.length_words(), 8u);
    Result<ScanTabReq> back = ScanTabReq::from_signal(signal);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->api_tx, 0xAAAA'BBBB'CCCC'DDDDull);
    EXPECT_EQ(back->scan_id, 77u);
    EXPECT_EQ(back->table_id, 5u);
    EXPECT_EQ(back->table_version, 6u);
    EXPECT_EQ(back->index, index);
    EXPECT_EQ(back->flags, 7u);
    EXPECT_EQ(back->batch_rows, 0xFFFF'FFFFu);
    EXPECT_EQ(back->body, patterned(300, 4));
    EXPECT_TRUE(signal.section().empty());
  }
}

TEST(Messages, ScanFragReqRoundTrips) {
  for (int32_t index : {-1, 3}) {
    ScanFragReq req;
    req.transid = kTransid;
    req.scan_ptr = 0x5555'0000;
    req.table_id = 11;
    req.table_version = 12;
    req.fragment = 13;
    req.log_part = 0xFFFF;
    req.index = index;
    req.flags = kScanLowInclusive;
    req.batch_rows = 64;
    req.batch_bytes = 0xFFFF'FFFF;
    req.body = patterned(10, 5);
    Signal signal = std::move(req).to_signal();
    EXPECT_EQ(signal.id(), kScanFragReq);
    EXPECT_EQ(signal.length_words(), 11u);
    Result<ScanFragReq> back = ScanFragReq::from_signal(signal);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->transid, kTransid);
    EXPECT_EQ(back->scan_ptr, 0x5555'0000u);
    EXPECT_EQ(back->table_id, 11u);
    EXPECT_EQ(back->table_version, 12u);
    EXPECT_EQ(back->fragment, 13u);
    EXPECT_EQ(back->log_part, 0xFFFF);
    EXPECT_EQ(back->index, index);
    EXPECT_EQ(back->flags, kScanLowInclusive);
    EXPECT_EQ(back->batch_rows, 64u);
    EXPECT_EQ(back->batch_bytes, 0xFFFF'FFFFu);
    EXPECT_EQ(back->body, patterned(10, 5));
    EXPECT_TRUE(signal.section().empty());
  }
}

TEST(Messages, ScanBatchRoundTrips) {
  ScanBatch batch;
  batch.tx = kTransid;
  batch.id = 42;
  batch.fragment = 7;
  batch.rows = 1000;
  batch.flags = kScanFragmentDone;
  batch.batch = patterned(kernel::kSectionBytesMax, 6);
  const uint8_t* data = batch.batch.data();
  Signal signal = std::move(batch).to_signal(kScanFragConf);
  EXPECT_EQ(signal.id(), kScanFragConf);
  EXPECT_EQ(signal.length_words(), 6u);
  EXPECT_TRUE(signal.check_sendable().ok());
  Result<ScanBatch> back = ScanBatch::from_signal(signal);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->tx, kTransid);
  EXPECT_EQ(back->id, 42u);
  EXPECT_EQ(back->fragment, 7u);
  EXPECT_EQ(back->rows, 1000u);
  EXPECT_EQ(back->flags, kScanFragmentDone);
  EXPECT_EQ(back->batch.data(), data);
  EXPECT_EQ(back->batch, patterned(kernel::kSectionBytesMax, 6));
}

TEST(Messages, ScanTabConfRoundTripsEntriesUpToAFullSection) {
  // Entry sizes at the boundaries: empty, one byte, and what fills the section exactly.
  const size_t first = 0, second = 1;
  const size_t third =
      kernel::kSectionBytesMax - 3 * ScanTabConf::kEntryHeaderBytes - first - second;
  ScanTabConf conf;
  conf.api_tx = kTransid;
  conf.scan_id = 0xFFFF'FFFF;
  conf.flags = kScanRoundDone | kScanAllDone;
  conf.add(0, 0, as_view(patterned(first, 1)));
  conf.add(0xFFFF'FFFF, kScanFragmentDone, as_view(patterned(second, 2)));
  conf.add(7, 0, as_view(patterned(third, 3)));
  EXPECT_EQ(conf.section.size(), kernel::kSectionBytesMax);
  Signal signal = std::move(conf).to_signal();
  EXPECT_EQ(signal.id(), kScanTabConf);
  EXPECT_EQ(signal.length_words(), 5u);
  EXPECT_TRUE(signal.check_sendable().ok());
  Result<ScanTabConf> back = ScanTabConf::from_signal(signal);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->api_tx, kTransid);
  EXPECT_EQ(back->scan_id, 0xFFFF'FFFFu);
  EXPECT_EQ(back->flags, kScanRoundDone | kScanAllDone);
  EXPECT_EQ(back->fragments, 3u);
  std::vector<ScanTabConf::Entry> entries;
  ASSERT_TRUE(back->entries(&entries).ok());
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].fragment, 0u);
  EXPECT_EQ(entries[0].flags, 0u);
  EXPECT_TRUE(entries[0].batch.empty());
  EXPECT_EQ(entries[1].fragment, 0xFFFF'FFFFu);
  EXPECT_EQ(entries[1].flags, kScanFragmentDone);
  EXPECT_EQ(entries[1].batch, as_view(patterned(second, 2)));
  EXPECT_EQ(entries[2].fragment, 7u);
  EXPECT_EQ(entries[2].batch, as_view(patterned(third, 3)));

  ScanTabConf empty;
  empty.flags = kScanRoundDone;
  Signal none = std::move(empty).to_signal();
  Result<ScanTabConf> no_entries = ScanTabConf::from_signal(none);
  ASSERT_TRUE(no_entries.ok());
  ASSERT_TRUE(no_entries->entries(&entries).ok());
  EXPECT_TRUE(entries.empty());
}

TEST(Messages, ScanTabConfRefusesEntriesThatDoNotFillTheSectionExactly) {
  ScanTabConf conf;
  conf.add(1, 0, as_view(patterned(10, 1)));
  conf.add(2, 0, as_view(patterned(20, 2)));
  std::vector<ScanTabConf::Entry> entries;
  auto with = [&](uint32_t count, size_t section_size) {
    ScanTabConf changed;
    changed.fragments = count;
    changed.section = conf.section;
    changed.section.resize(section_size);
    return changed.entries(&entries).code();
  };
  const size_t full = conf.section.size();
  EXPECT_EQ(with(2, full), ErrorCode::kOk);
  EXPECT_EQ(with(1, full), ErrorCode::kInvalidArgument) << "trailing bytes";
  EXPECT_EQ(with(3, full), ErrorCode::kInvalidArgument) << "an entry missing";
  EXPECT_EQ(with(2, full - 1), ErrorCode::kInvalidArgument) << "short batch";
  EXPECT_EQ(with(2, full + 1), ErrorCode::kInvalidArgument) << "trailing byte";
  EXPECT_EQ(with(0xFFFF'FFFF, full), ErrorCode::kInvalidArgument) << "absurd count";
  ScanTabConf huge_size;
  huge_size.fragments = 1;
  put_u32(&huge_size.section, 1);
  put_u32(&huge_size.section, 0);
  put_u32(&huge_size.section, 0xFFFF'FFFF);
  EXPECT_EQ(huge_size.entries(&entries).code(), ErrorCode::kInvalidArgument);
}

TEST(Messages, ScanRefRoundTripsAndRefusesUnknownErrors) {
  for (SignalId id : {kScanFragRef, kScanTabRef}) {
    Signal signal = ScanRef{kTransid, 8, 9, ErrorCode::kTemporary, "try again"}.to_signal(id);
    EXPECT_EQ(signal.id(), id);
    EXPECT_EQ(signal.length_words(), 5u);
    Result<ScanRef> back = ScanRef::from_signal(signal);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->tx, kTransid);
    EXPECT_EQ(back->id, 8u);
    EXPECT_EQ(back->fragment, 9u);
    EXPECT_EQ(back->error, ErrorCode::kTemporary);
    EXPECT_EQ(back->message, "try again");

    signal.set_word(4, 0xFFFF);
    EXPECT_EQ(ScanRef::from_signal(signal).status().code(), ErrorCode::kInvalidArgument);
  }
}

TEST(Messages, ScanNextReqRoundTripsUnderBothSignalIds) {
  for (SignalId id : {kScanFragNextReq, kScanTabNextReq}) {
    const ScanNextReq req{~uint64_t{0}, 0xFFFF'FFFF, 0xFFFF'FFFE, kScanClose};
    Signal signal = req.to_signal(id);
    EXPECT_EQ(signal.id(), id);
    EXPECT_EQ(signal.length_words(), 5u);
    Result<ScanNextReq> back = ScanNextReq::from_signal(signal);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->tx, ~uint64_t{0});
    EXPECT_EQ(back->id, 0xFFFF'FFFFu);
    EXPECT_EQ(back->fragment, 0xFFFF'FFFEu);
    EXPECT_EQ(back->flags, kScanClose);
  }
}

// ---- Dictionary ----

TableDef small_table() {
  TableDef table;
  table.schema.table_id = 21;
  table.schema.name = "t1";
  table.version = 2;
  table.fragment_count = 4;
  storage::ColumnDef k;
  k.name = "k";
  k.type = storage::ColumnType::kInt;
  k.nullable = false;
  table.schema.columns = {k};
  table.schema.primary_key = {0};
  return table;
}

TEST(Messages, TableMsgRoundTripsAndRefusesABadDefinition) {
  for (SignalId id : {kCreateTableReq, kSchemaPrepareReq, kTableAddReq, kGetTableConf}) {
    TableMsg msg;
    msg.request_id = 0xC0FFEE;
    msg.kind = kSchemaDrop;
    msg.table = small_table();
    Result<Signal> signal = msg.to_signal(id);
    ASSERT_TRUE(signal.ok());
    EXPECT_EQ(signal->id(), id);
    EXPECT_EQ(signal->length_words(), 2u);
    Result<TableMsg> back = TableMsg::from_signal(*signal);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(back->request_id, 0xC0FFEEu);
    EXPECT_EQ(back->kind, kSchemaDrop);
    EXPECT_EQ(back->table.schema.table_id, 21u);
    EXPECT_EQ(back->table.schema.name, "t1");
    EXPECT_EQ(back->table.version, 2u);
    EXPECT_EQ(back->table.fragment_count, 4u);
    ASSERT_EQ(back->table.schema.columns.size(), 1u);
    EXPECT_EQ(back->table.schema.columns[0].name, "k");
    EXPECT_EQ(back->table.schema.primary_key, std::vector<uint16_t>{0});

    Signal cut = signal->clone();
    cut.mutable_section().pop_back();
    EXPECT_EQ(TableMsg::from_signal(cut).status().code(), ErrorCode::kInvalidArgument);
  }
  TableMsg too_long;
  too_long.table = small_table();
  too_long.table.schema.name = std::string(65536, 'x');
  EXPECT_EQ(too_long.to_signal(kTableAddReq).status().code(), ErrorCode::kInvalidArgument);
}

TEST(Messages, DictMsgRoundTrips) {
  for (SignalId id : {kCreateTableConf, kCreateTableRef, kDropTableReq, kTableAddConf,
                      kTableDropReq, kTableDropConf, kSchemaEvent}) {
    const DictMsg msg{0xFFFF'FFFF, 1, 0x8000'0000, 0xFFFF'FFFF, "table 't1' exists"};
    Signal signal = msg.to_signal(id);
    EXPECT_EQ(signal.id(), id);
    EXPECT_EQ(signal.length_words(), 4u);
    const DictMsg back = DictMsg::from_signal(signal);
    EXPECT_EQ(back.request_id, 0xFFFF'FFFFu);
    EXPECT_EQ(back.a, 1u);
    EXPECT_EQ(back.b, 0x8000'0000u);
    EXPECT_EQ(back.c, 0xFFFF'FFFFu);
    EXPECT_EQ(back.text, "table 't1' exists");
  }
  const DictMsg empty = DictMsg::from_signal(Signal(kTableAddConf));
  EXPECT_EQ(empty.request_id, 0u);
  EXPECT_EQ(empty.c, 0u);
  EXPECT_TRUE(empty.text.empty());
}

TEST(Messages, TableListRoundTripsAndRefusesMalformed) {
  const std::vector<TableListEntry> tables = {
      {1, 1, "a"}, {0xFFFF'FFFF, 0xFFFF'FFFE, ""}, {3, 9, std::string(1000, 'n')}};
  for (const auto& list : {std::vector<TableListEntry>{}, tables}) {
    Result<Signal> signal = list_tables_conf(31, list);
    ASSERT_TRUE(signal.ok());
    EXPECT_EQ(signal->id(), kListTablesConf);
    EXPECT_EQ(signal->word(0), 31u);
    EXPECT_EQ(signal->word(1), list.size());
    Result<std::vector<TableListEntry>> back = decode_table_list(*signal);
    ASSERT_TRUE(back.ok());
    ASSERT_EQ(back->size(), list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ((*back)[i].table_id, list[i].table_id);
      EXPECT_EQ((*back)[i].version, list[i].version);
      EXPECT_EQ((*back)[i].name, list[i].name);
    }
  }
  Result<Signal> good = list_tables_conf(31, tables);
  ASSERT_TRUE(good.ok());
  const Bytes& section = good->section();
  for (size_t length = 0; length < section.size(); ++length) {
    Signal cut = good->clone();
    cut.set_section(Bytes(section.begin(), section.begin() + static_cast<ptrdiff_t>(length)));
    EXPECT_EQ(decode_table_list(cut).status().code(), ErrorCode::kInvalidArgument)
        << "section cut to " << length << " bytes";
  }
  Signal trailing = good->clone();
  trailing.mutable_section().push_back(0);
  EXPECT_EQ(decode_table_list(trailing).status().code(), ErrorCode::kInvalidArgument);
  Signal huge = good->clone();
  huge.set_word(1, 0xFFFF'FFFF);
  EXPECT_EQ(decode_table_list(huge).status().code(), ErrorCode::kInvalidArgument);

  EXPECT_EQ(list_tables_conf(1, {{1, 1, std::string(65536, 'x')}}).status().code(),
            ErrorCode::kInvalidArgument);
}

// ---- Fuzz ----

// Random words and a random (or mutated valid) section into every decoder: no crash,
// and the only error is kInvalidArgument.
template <typename T>
void expect_ok_or_invalid(const Result<T>& result) {
  ASSERT_TRUE(result.ok() || result.status().is(ErrorCode::kInvalidArgument))
      << result.status().to_string();
}

void decode_with_every_decoder(const Signal& input) {
  {
    Signal s = input.clone();
    expect_ok_or_invalid(TcKeyReq::from_signal(s));
  }
  {
    Signal s = input.clone();
    expect_ok_or_invalid(LqhKeyReq::from_signal(s));
  }
  {
    Signal s = input.clone();
    expect_ok_or_invalid(LqhKeyConf::from_signal(s));
  }
  {
    Signal s = input.clone();
    expect_ok_or_invalid(LqhKeyRef::from_signal(s));
  }
  {
    Signal s = input.clone();
    expect_ok_or_invalid(TcKeyConf::from_signal(s));
  }
  {
    Signal s = input.clone();
    expect_ok_or_invalid(ScanTabReq::from_signal(s));
  }
  {
    Signal s = input.clone();
    expect_ok_or_invalid(ScanFragReq::from_signal(s));
  }
  {
    Signal s = input.clone();
    expect_ok_or_invalid(ScanBatch::from_signal(s));
  }
  {
    Signal s = input.clone();
    expect_ok_or_invalid(ScanRef::from_signal(s));
  }
  expect_ok_or_invalid(ScanNextReq::from_signal(input));
  expect_ok_or_invalid(TableMsg::from_signal(input));
  expect_ok_or_invalid(decode_table_list(input));
  (void)DictMsg::from_signal(input);
  (void)transaction_of(input);
  expect_ok_or_invalid(OpBody::decode(as_view(input.section())));
  expect_ok_or_invalid(ScanBody::decode(as_view(input.section())));
}

TEST(Messages, FuzzRandomSignalsIntoEveryDecoder) {
  SeededRandom random(4242);
  std::vector<Bytes> valid_sections;
  valid_sections.push_back(sample_tc_key_conf().to_signal().take_section());
  valid_sections.push_back(list_tables_conf(1, {{1, 2, "abc"}, {4, 5, "de"}})->take_section());
  TableMsg table_msg;
  table_msg.table = small_table();
  valid_sections.push_back(table_msg.to_signal(kTableAddReq)->take_section());
  Bytes op_body;
  ASSERT_TRUE(sample_op_body().encode(&op_body).ok());
  valid_sections.push_back(op_body);
  Bytes scan_body;
  ASSERT_TRUE(sample_scan_body().encode(&scan_body).ok());
  valid_sections.push_back(scan_body);

  for (int i = 0; i < 20000; ++i) {
    Signal signal(static_cast<SignalId>(random.uniform_range(1, 0xFFFF)));
    const uint64_t words = random.uniform(kernel::kSignalWordsMax + 1);
    for (uint64_t w = 0; w < words; ++w) {
      // Small values half the time, so enums and chain lengths are sometimes valid.
      const uint64_t bits = random.next_u64();
      signal.set_word(
          w, random.bernoulli(0.5) ? static_cast<uint32_t>(bits % 8) : static_cast<uint32_t>(bits));
    }
    Bytes section;
    if (random.bernoulli(0.5)) {
      section = valid_sections[random.uniform(valid_sections.size())];
      const uint64_t flips = random.uniform(4);
      for (uint64_t f = 0; f < flips && !section.empty(); ++f) {
        section[random.uniform(section.size())] = static_cast<uint8_t>(random.next_u64());
      }
      if (random.bernoulli(0.3)) section.resize(random.uniform(section.size() + 1));
    } else {
      section.resize(random.uniform(48));
      for (uint8_t& b : section) b = static_cast<uint8_t>(random.next_u64());
    }
    signal.set_section(std::move(section));
    ASSERT_NO_FATAL_FAILURE(decode_with_every_decoder(signal)) << "iteration " << i;
  }
}

}  // namespace
}  // namespace duo::protocol
