// ApiCore driven by hand: a recording SignalSink stands in for the network, and each
// test plays the coordinator and the dictionary by feeding the signals they would send
// (built with protocol/messages.h). Covers batching and op_index matching, results split
// over several TC_KEYCONFs, commit/rollback, aborts, many transactions in flight, scan
// flow control, node failure, the table cache, and distribution-aware coordinator choice.
#include "ndb-kernel/api/api_core.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ndb-kernel/protocol/block_numbers.h"
#include "ndb-kernel/protocol/packed_signals.h"
#include "storage/row/column.h"
#include "storage/scan/byte_codec.h"

namespace duo::api {
namespace {

using kernel::Signal;
using protocol::Bytes;

constexpr uint16_t kApiNode = 50;

// Records every signal; fails sends while `fail_with` is set.
class RecordingSink : public SignalSink {
 public:
  // Records packs (PACKED_SIGNALS) as the signals they carry, so tests see every
  // operation; `packs` counts them.
  Status send(Signal signal) override {
    if (fail_with != ErrorCode::kOk) return Status(fail_with, "link down (test)");
    if (signal.id() == protocol::kPackedSignals) {
      Result<std::vector<Signal>> inner = protocol::unpack_signals(signal);
      if (!inner.ok()) return inner.status();
      ++packs;
      for (Signal& one : *inner) sent.push_back(std::move(one));
      return Status::OK();
    }
    sent.push_back(std::move(signal));
    return Status::OK();
  }
  // Removes and returns what was sent so far.
  std::vector<Signal> take() { return std::exchange(sent, {}); }

  std::vector<Signal> sent;
  size_t packs = 0;
  ErrorCode fail_with = ErrorCode::kOk;
};

// Two node groups of two replicas, two log parts.
protocol::ClusterTopology test_topology() {
  protocol::ClusterTopology topology;
  topology.node_groups = {{1, 2}, {3, 4}};
  topology.log_parts = 2;
  return topology;
}

TableDef test_table() {
  TableDef table;
  table.schema.table_id = 7;
  table.schema.name = "t";
  storage::ColumnDef id;
  id.name = "id";
  id.type = storage::ColumnType::kBigInt;
  id.nullable = false;
  storage::ColumnDef payload;
  payload.name = "payload";
  payload.type = storage::ColumnType::kVarbinary;
  payload.length = 100;
  storage::ColumnDef counter;
  counter.name = "counter";
  counter.type = storage::ColumnType::kInt;
  table.schema.columns = {id, payload, counter};
  table.schema.primary_key = {0};
  table.version = 3;
  table.fragment_count = 4;
  return table;
}

storage::AttrValues key_of(const TableDef& table, int64_t id) {
  storage::AttrValues key;
  key.add(0, storage::encode_int(table.schema.columns[0], id));
  return key;
}

storage::AttrValues row_of(const TableDef& table, int64_t id, const std::string& payload) {
  storage::AttrValues row = key_of(table, id);
  row.add(1, payload);
  return row;
}

Bytes encoded(const storage::AttrValues& values) {
  Bytes out;
  EXPECT_TRUE(protocol::encode_attr_values(values, &out).ok());
  return out;
}

protocol::OpResultMsg ok_result(uint32_t op_index, Bytes data = {}) {
  protocol::OpResultMsg result;
  result.op_index = op_index;
  result.data = std::move(data);
  return result;
}

protocol::OpResultMsg error_result(uint32_t op_index, ErrorCode code, const std::string& text) {
  protocol::OpResultMsg result;
  result.op_index = op_index;
  result.error = code;
  result.data.assign(text.begin(), text.end());
  return result;
}

Signal tc_key_conf(uint64_t api_tx, uint32_t flags, std::vector<protocol::OpResultMsg> results,
                   ErrorCode tx_error = ErrorCode::kOk, std::string tx_message = "") {
  protocol::TcKeyConf conf;
  conf.api_tx = api_tx;
  conf.flags = flags;
  conf.tx_error = tx_error;
  conf.tx_message = std::move(tx_message);
  conf.results = std::move(results);
  return std::move(conf).to_signal();
}

// The outcome of an execute, as its callback saw it.
struct Outcome {
  bool called = false;
  uint64_t api_tx = 0;
  Status status;
};

ExecuteCallback record(Outcome* outcome) {
  return [outcome](uint64_t api_tx, const Status& status) {
    EXPECT_FALSE(outcome->called) << "execute callback ran twice";
    outcome->called = true;
    outcome->api_tx = api_tx;
    outcome->status = status;
  };
}

class ApiCoreTest : public ::testing::Test {
 protected:
  ApiCoreTest() : core_(options(), test_topology(), &sink_) {}

  static ApiCoreOptions options() {
    ApiCoreOptions options;
    options.node_id = kApiNode;
    return options;
  }

  void connect_all() {
    for (uint16_t node : {1, 2, 3, 4}) core_.set_node_connected(node, true);
    sink_.take();  // the schema subscription
  }

  void feed(Signal signal) { core_.on_signal(signal); }

  RecordingSink sink_;
  ApiCore core_;
  TableDef table_ = test_table();
};

// ---- Batching ----

TEST_F(ApiCoreTest, BatchSendsOneKeyReqPerOperationWithExecuteOnTheLast) {
  connect_all();
  Result<uint64_t> tx = core_.begin();
  ASSERT_TRUE(tx.ok());
  const uint16_t tc = *core_.coordinator_of(*tx);
  for (int i = 0; i < 3; ++i) {
    Result<uint32_t> op = core_.insert(*tx, table_, row_of(table_, i, "row" + std::to_string(i)));
    ASSERT_TRUE(op.ok());
    EXPECT_EQ(*op, static_cast<uint32_t>(i));
  }
  Outcome outcome;
  ASSERT_TRUE(core_.execute(*tx, ExecType::kNoCommit, record(&outcome)).ok());
  std::vector<Signal> sent = sink_.take();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sink_.packs, 1u);  // the whole batch in one PACKED_SIGNALS
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(sent[i].receiver(), (kernel::BlockAddress{tc, protocol::kCoordinatorBlock, 0}));
    EXPECT_EQ(sent[i].sender(), (kernel::BlockAddress{kApiNode, protocol::kApiBlock, 0}));
    Result<protocol::TcKeyReq> req = protocol::TcKeyReq::from_signal(sent[i]);
    ASSERT_TRUE(req.ok());
    EXPECT_EQ(req->api_tx, *tx);
    EXPECT_EQ(req->op_index, i);
    EXPECT_EQ(req->table_id, 7u);
    EXPECT_EQ(req->table_version, 3u);
    EXPECT_EQ(req->type, OpType::kInsert);
    EXPECT_EQ(req->flags, i == 2 ? protocol::kOpExecute : 0);
    Result<protocol::OpBody> body = protocol::OpBody::decode(protocol::as_view(req->body));
    ASSERT_TRUE(body.ok());
    EXPECT_EQ(body->key_or_row.value(1), "row" + std::to_string(i));
  }
  EXPECT_EQ(*core_.state(*tx), TxState::kExecuting);
  feed(tc_key_conf(*tx, protocol::kTcBatchDone, {ok_result(0), ok_result(1), ok_result(2)}));
  ASSERT_TRUE(outcome.called);
  EXPECT_TRUE(outcome.status.ok());
  EXPECT_EQ(*core_.state(*tx), TxState::kOpen);

  // A second batch continues the op_index numbering and commits.
  Result<uint32_t> read = core_.read(*tx, table_, key_of(table_, 1), {1});
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, 3u);
  Outcome committed;
  ASSERT_TRUE(core_.execute(*tx, ExecType::kCommit, record(&committed)).ok());
  sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sink_.packs, 1u);  // a batch of one goes as the plain TC_KEYREQ
  Result<protocol::TcKeyReq> req = protocol::TcKeyReq::from_signal(sent[0]);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->op_index, 3u);
  EXPECT_EQ(req->flags, protocol::kOpExecute | protocol::kOpCommit);
  Result<protocol::OpBody> body = protocol::OpBody::decode(protocol::as_view(req->body));
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(body->columns, std::vector<uint16_t>{1});
  storage::AttrValues values;
  values.add(1, "row1");
  feed(tc_key_conf(*tx, protocol::kTcBatchDone | protocol::kTcCommitted,
                   {ok_result(3, encoded(values))}));
  ASSERT_TRUE(committed.called);
  EXPECT_TRUE(committed.status.ok());
  EXPECT_EQ(*core_.state(*tx), TxState::kCommitted);
  const OpResult* result = *core_.op_result(*tx, 3);
  EXPECT_TRUE(result->executed);
  EXPECT_TRUE(result->status.ok());
  ASSERT_EQ(result->values.size(), 1u);
  EXPECT_EQ(result->values.value(0), "row1");
  EXPECT_EQ(core_.stats().transactions_committed, 1u);
}

TEST_F(ApiCoreTest, ResultsSplitOverSeveralConfsAreMatchedByOpIndex) {
  connect_all();
  const uint64_t tx = *core_.begin();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(core_.read(tx, table_, key_of(table_, i), {}).ok());
  Outcome outcome;
  ASSERT_TRUE(core_.execute(tx, ExecType::kNoCommit, record(&outcome)).ok());
  sink_.take();
  auto values_for = [](int i) {
    storage::AttrValues values;
    values.add(1, "v" + std::to_string(i));
    return encoded(values);
  };
  // Out of order, and without kTcBatchDone: the execute is not complete yet.
  feed(tc_key_conf(tx, 0, {ok_result(2, values_for(2)), ok_result(0, values_for(0))}));
  EXPECT_FALSE(outcome.called);
  feed(tc_key_conf(tx, 0, {error_result(1, ErrorCode::kNotFound, "row not found")}));
  EXPECT_FALSE(outcome.called);
  feed(tc_key_conf(tx, protocol::kTcBatchDone, {ok_result(3, values_for(3))}));
  ASSERT_TRUE(outcome.called);
  EXPECT_TRUE(outcome.status.ok());
  for (int i : {0, 2, 3}) {
    const OpResult* result = *core_.op_result(tx, i);
    ASSERT_TRUE(result->status.ok()) << i;
    EXPECT_EQ(result->values.value(0), "v" + std::to_string(i));
  }
  const OpResult* missing = *core_.op_result(tx, 1);
  EXPECT_EQ(missing->status.code(), ErrorCode::kNotFound);
  EXPECT_EQ(missing->status.message(), "row not found");
}

TEST_F(ApiCoreTest, ResultOutsideTheBatchIsIgnoredAndMissingResultIsAnError) {
  connect_all();
  const uint64_t tx = *core_.begin();
  ASSERT_TRUE(core_.remove(tx, table_, key_of(table_, 1)).ok());
  ASSERT_TRUE(core_.remove(tx, table_, key_of(table_, 2)).ok());
  Outcome outcome;
  ASSERT_TRUE(core_.execute(tx, ExecType::kNoCommit, record(&outcome)).ok());
  feed(tc_key_conf(tx, protocol::kTcBatchDone, {ok_result(0), ok_result(9)}));
  ASSERT_TRUE(outcome.called);
  EXPECT_EQ(core_.stats().malformed_signals, 1u);
  EXPECT_TRUE((*core_.op_result(tx, 0))->status.ok());
  EXPECT_EQ((*core_.op_result(tx, 1))->status.code(), ErrorCode::kInternal);
}

TEST_F(ApiCoreTest, InterpretedUpdateIsValidatedAndCarriesItsProgram) {
  connect_all();
  const uint64_t tx = *core_.begin();
  storage::InterpretedUpdate bad;
  bad.add(0, 1);  // primary key column: refused before anything is sent
  EXPECT_FALSE(core_.interpreted_update(tx, table_, key_of(table_, 1), bad).ok());
  storage::InterpretedUpdate add;
  add.add(2, 5);
  ASSERT_TRUE(core_.interpreted_update(tx, table_, key_of(table_, 1), add).ok());
  Outcome outcome;
  ASSERT_TRUE(core_.execute(tx, ExecType::kCommit, record(&outcome)).ok());
  std::vector<Signal> sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  Result<protocol::TcKeyReq> req = protocol::TcKeyReq::from_signal(sent[0]);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->type, OpType::kInterpretedUpdate);
  Result<protocol::OpBody> body = protocol::OpBody::decode(protocol::as_view(req->body));
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(body->program, add.encode());
  protocol::OpResultMsg filtered = ok_result(0);
  filtered.flags = protocol::kConfFiltered;
  feed(tc_key_conf(tx, protocol::kTcBatchDone | protocol::kTcCommitted, {filtered}));
  ASSERT_TRUE(outcome.called);
  EXPECT_TRUE((*core_.op_result(tx, 0))->filtered);
}

TEST_F(ApiCoreTest, IgnoreErrorFlagIsSent) {
  connect_all();
  const uint64_t tx = *core_.begin();
  ASSERT_TRUE(core_.insert(tx, table_, row_of(table_, 1, "a"), OpOptions{true}).ok());
  ASSERT_TRUE(core_.update(tx, table_, key_of(table_, 2), row_of(table_, 2, "b")).ok());
  Outcome outcome;
  ASSERT_TRUE(core_.execute(tx, ExecType::kNoCommit, record(&outcome)).ok());
  std::vector<Signal> sent = sink_.take();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(protocol::TcKeyReq::from_signal(sent[0])->flags, protocol::kOpIgnoreError);
  EXPECT_EQ(protocol::TcKeyReq::from_signal(sent[1])->flags, protocol::kOpExecute);
  EXPECT_EQ(protocol::TcKeyReq::from_signal(sent[1])->type, OpType::kUpdate);
}

// ---- Commit, rollback, abort ----

TEST_F(ApiCoreTest, CommitWithoutNewOperationsSendsTcCommitReq) {
  connect_all();
  const uint64_t tx = *core_.begin();
  ASSERT_TRUE(core_.write(tx, table_, row_of(table_, 1, "a")).ok());
  Outcome first;
  ASSERT_TRUE(core_.execute(tx, ExecType::kNoCommit, record(&first)).ok());
  sink_.take();
  feed(tc_key_conf(tx, protocol::kTcBatchDone, {ok_result(0)}));
  ASSERT_TRUE(first.called);
  Outcome commit;
  ASSERT_TRUE(core_.execute(tx, ExecType::kCommit, record(&commit)).ok());
  std::vector<Signal> sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].id(), protocol::kTcCommitReq);
  EXPECT_EQ(protocol::transaction_of(sent[0]), tx);
  EXPECT_FALSE(commit.called);
  feed(tc_key_conf(tx, protocol::kTcBatchDone | protocol::kTcCommitted, {}));
  ASSERT_TRUE(commit.called);
  EXPECT_TRUE(commit.status.ok());
  EXPECT_EQ(*core_.state(tx), TxState::kCommitted);
  // A final transaction takes nothing more.
  EXPECT_EQ(core_.insert(tx, table_, row_of(table_, 2, "b")).status().code(),
            ErrorCode::kTransactionState);
  EXPECT_EQ(core_.execute(tx, ExecType::kCommit, record(&commit)).code(),
            ErrorCode::kTransactionState);
}

TEST_F(ApiCoreTest, RollbackSendsTcRollbackReqAndDropsUnsentOperations) {
  connect_all();
  const uint64_t tx = *core_.begin();
  ASSERT_TRUE(core_.insert(tx, table_, row_of(table_, 1, "a")).ok());
  Outcome first;
  ASSERT_TRUE(core_.execute(tx, ExecType::kNoCommit, record(&first)).ok());
  feed(tc_key_conf(tx, protocol::kTcBatchDone, {ok_result(0)}));
  sink_.take();
  ASSERT_TRUE(core_.insert(tx, table_, row_of(table_, 2, "b")).ok());  // never sent
  Outcome rollback;
  ASSERT_TRUE(core_.execute(tx, ExecType::kRollback, record(&rollback)).ok());
  std::vector<Signal> sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].id(), protocol::kTcRollbackReq);
  feed(tc_key_conf(tx, protocol::kTcBatchDone | protocol::kTcAborted, {}));
  ASSERT_TRUE(rollback.called);
  EXPECT_TRUE(rollback.status.ok()) << rollback.status.to_string();
  EXPECT_EQ(*core_.state(tx), TxState::kAborted);
  EXPECT_TRUE(core_.error(tx).ok());
  EXPECT_EQ((*core_.op_result(tx, 1))->status.code(), ErrorCode::kTransactionState);
}

TEST_F(ApiCoreTest, CommitAndRollbackOfAnUnsentTransactionCompleteLocally) {
  connect_all();
  const uint64_t empty = *core_.begin();
  Outcome commit;
  ASSERT_TRUE(core_.execute(empty, ExecType::kCommit, record(&commit)).ok());
  EXPECT_TRUE(commit.called);
  EXPECT_EQ(*core_.state(empty), TxState::kCommitted);
  const uint64_t defined = *core_.begin();
  ASSERT_TRUE(core_.insert(defined, table_, row_of(table_, 1, "a")).ok());
  Outcome rollback;
  ASSERT_TRUE(core_.execute(defined, ExecType::kRollback, record(&rollback)).ok());
  EXPECT_TRUE(rollback.called);
  EXPECT_EQ(*core_.state(defined), TxState::kAborted);
  EXPECT_TRUE(sink_.sent.empty());
}

TEST_F(ApiCoreTest, AbortedTransactionReportsTheCoordinatorsError) {
  connect_all();
  const uint64_t tx = *core_.begin();
  ASSERT_TRUE(core_.insert(tx, table_, row_of(table_, 1, "a")).ok());
  ASSERT_TRUE(core_.insert(tx, table_, row_of(table_, 2, "b")).ok());
  Outcome outcome;
  ASSERT_TRUE(core_.execute(tx, ExecType::kCommit, record(&outcome)).ok());
  feed(tc_key_conf(tx, protocol::kTcBatchDone | protocol::kTcAborted,
                   {error_result(0, ErrorCode::kDuplicateKey, "Duplicate entry '1'")},
                   ErrorCode::kDuplicateKey, "Duplicate entry '1' for key 'PRIMARY'"));
  ASSERT_TRUE(outcome.called);
  EXPECT_EQ(outcome.status.code(), ErrorCode::kDuplicateKey);
  EXPECT_EQ(outcome.status.message(), "Duplicate entry '1' for key 'PRIMARY'");
  EXPECT_EQ(*core_.state(tx), TxState::kAborted);
  EXPECT_EQ(core_.error(tx).code(), ErrorCode::kDuplicateKey);
  EXPECT_EQ((*core_.op_result(tx, 0))->status.code(), ErrorCode::kDuplicateKey);
  // The op without its own result carries the transaction's error.
  EXPECT_EQ((*core_.op_result(tx, 1))->status.code(), ErrorCode::kDuplicateKey);
  EXPECT_EQ(core_.stats().transactions_aborted, 1u);
  // The coordinator already aborted it: closing sends nothing.
  sink_.take();
  core_.close(tx);
  EXPECT_TRUE(sink_.sent.empty());
  EXPECT_EQ(core_.open_transactions(), 0u);
}

TEST_F(ApiCoreTest, ClosingAnOpenTransactionRollsItBackAndDropsItsCallback) {
  connect_all();
  const uint64_t tx = *core_.begin();
  ASSERT_TRUE(core_.insert(tx, table_, row_of(table_, 1, "a")).ok());
  Outcome outcome;
  ASSERT_TRUE(core_.execute(tx, ExecType::kNoCommit, record(&outcome)).ok());
  sink_.take();
  core_.close(tx);
  std::vector<Signal> sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].id(), protocol::kTcRollbackReq);
  // The late answer is a stray.
  feed(tc_key_conf(tx, protocol::kTcBatchDone, {ok_result(0)}));
  EXPECT_FALSE(outcome.called);
  EXPECT_EQ(core_.stats().stray_signals, 1u);
}

TEST_F(ApiCoreTest, SendFailureAbortsTheTransactionWithoutCallback) {
  connect_all();
  const uint64_t tx = *core_.begin();
  ASSERT_TRUE(core_.insert(tx, table_, row_of(table_, 1, "a")).ok());
  sink_.fail_with = ErrorCode::kTemporary;
  Outcome outcome;
  Status executed = core_.execute(tx, ExecType::kCommit, record(&outcome));
  EXPECT_EQ(executed.code(), ErrorCode::kTemporary);
  EXPECT_FALSE(outcome.called);
  EXPECT_EQ(*core_.state(tx), TxState::kAborted);
}

// ---- Many transactions in flight ----

TEST_F(ApiCoreTest, ManyTransactionsInFlightCompleteIndependently) {
  ApiCoreOptions limited = options();
  limited.transactions_open_max = 200;
  RecordingSink sink;
  ApiCore core(limited, test_topology(), &sink);
  for (uint16_t node : {1, 2, 3, 4}) core.set_node_connected(node, true);
  std::vector<uint64_t> txs;
  std::map<uint64_t, Status> outcomes;
  for (int i = 0; i < 200; ++i) {
    Result<uint64_t> tx = core.begin(&table_, nullptr);
    ASSERT_TRUE(tx.ok());
    txs.push_back(*tx);
    ASSERT_TRUE(core.insert(*tx, table_, row_of(table_, i, "x")).ok());
    ASSERT_TRUE(
        core.execute(*tx, ExecType::kCommit,
                     [&](uint64_t id, const Status& status) { outcomes.emplace(id, status); })
            .ok());
  }
  EXPECT_EQ(std::set<uint64_t>(txs.begin(), txs.end()).size(), 200u) << "api_tx not unique";
  // Over the limit: a temporary error the caller retries.
  EXPECT_EQ(core.begin().status().code(), ErrorCode::kTemporary);
  // Round robin spread the coordinators over all four nodes.
  std::map<uint16_t, int> per_node;
  for (const Signal& signal : sink.sent) ++per_node[signal.receiver().node_id];
  EXPECT_EQ(per_node.size(), 4u);
  // Answers in reverse order; every other one aborts.
  for (size_t i = txs.size(); i-- > 0;) {
    Signal conf = i % 2 == 0 ? tc_key_conf(txs[i], protocol::kTcBatchDone | protocol::kTcCommitted,
                                           {ok_result(0)})
                             : tc_key_conf(txs[i], protocol::kTcBatchDone | protocol::kTcAborted,
                                           {}, ErrorCode::kLockWaitTimeout, "lock wait timeout");
    core.on_signal(conf);
  }
  ASSERT_EQ(outcomes.size(), 200u);
  for (size_t i = 0; i < txs.size(); ++i) {
    EXPECT_EQ(outcomes[txs[i]].ok(), i % 2 == 0);
    EXPECT_EQ(*core.state(txs[i]), i % 2 == 0 ? TxState::kCommitted : TxState::kAborted);
  }
  core.close(txs[0]);
  EXPECT_TRUE(core.begin().ok());
}

TEST_F(ApiCoreTest, CallbackMayCloseItsTransactionAndBeginAnother) {
  connect_all();
  const uint64_t tx = *core_.begin();
  ASSERT_TRUE(core_.insert(tx, table_, row_of(table_, 1, "a")).ok());
  uint64_t next = 0;
  ASSERT_TRUE(core_
                  .execute(tx, ExecType::kCommit,
                           [&](uint64_t id, const Status&) {
                             core_.close(id);
                             next = *core_.begin();
                           })
                  .ok());
  feed(tc_key_conf(tx, protocol::kTcBatchDone | protocol::kTcCommitted, {ok_result(0)}));
  EXPECT_NE(next, 0u);
  EXPECT_EQ(core_.open_transactions(), 1u);
}

// ---- Scans ----

// A SCAN_TABCONF carrying, per fragment, a batch of rows with column 1 = each payload.
struct FragmentRows {
  uint32_t fragment = 0;
  std::vector<std::string> payloads;
};
Signal scan_conf(uint64_t api_tx, uint32_t scan_id, uint32_t flags,
                 const std::vector<FragmentRows>& fragments) {
  protocol::ScanTabConf conf;
  conf.api_tx = api_tx;
  conf.scan_id = scan_id;
  conf.flags = flags;
  for (const FragmentRows& fragment : fragments) {
    storage::RowBatch rows;
    for (const std::string& payload : fragment.payloads) rows.begin_row().add(1, payload);
    protocol::Bytes encoded;
    EXPECT_TRUE(protocol::encode_row_batch(rows, &encoded).ok());
    conf.add(fragment.fragment, 0, protocol::as_view(encoded));
  }
  return std::move(conf).to_signal();
}

std::vector<protocol::ScanNextReq> next_reqs(std::vector<Signal> sent) {
  std::vector<protocol::ScanNextReq> out;
  for (const Signal& signal : sent) {
    if (signal.id() == protocol::kScanTabNextReq)
      out.push_back(*protocol::ScanNextReq::from_signal(signal));
  }
  return out;
}

TEST_F(ApiCoreTest, ScanAsksForTheNextRoundOnceOnlyAfterTheRoundIsConsumed) {
  connect_all();
  const uint64_t tx = *core_.begin();
  ScanSpec spec;
  spec.columns = {1};
  spec.batch_rows = 2;
  spec.descending = true;
  int ready_calls = 0;
  Result<uint32_t> scan = core_.scan(tx, table_, spec, [&](uint32_t) { ++ready_calls; });
  ASSERT_TRUE(scan.ok());
  std::vector<Signal> sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  Result<protocol::ScanTabReq> req = protocol::ScanTabReq::from_signal(sent[0]);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->api_tx, tx);
  EXPECT_EQ(req->scan_id, *scan);
  EXPECT_EQ(req->batch_rows, 2u);
  EXPECT_EQ(req->index, -1);
  EXPECT_TRUE(req->flags & protocol::kScanDescending);
  EXPECT_EQ(protocol::ScanBody::decode(protocol::as_view(req->body))->columns,
            std::vector<uint16_t>{1});

  std::optional<storage::RowBatch::Row> out;
  EXPECT_EQ(*core_.next_row(*scan, &out), ScanFetch::kWaiting);

  // A round in two signals (the first filled a section): the reader is woken once, by
  // the round's last one; an empty batch carries nothing.
  feed(scan_conf(tx, *scan, 0, {{0, {"a", "b"}}}));
  EXPECT_EQ(ready_calls, 0);
  feed(scan_conf(tx, *scan, protocol::kScanRoundDone, {{1, {"c"}}, {2, {}}}));
  EXPECT_EQ(ready_calls, 1);
  EXPECT_TRUE(sink_.sent.empty());
  ASSERT_EQ(*core_.next_row(*scan, &out), ScanFetch::kRow);
  EXPECT_EQ(out->value(0), "a");
  ASSERT_EQ(*core_.next_row(*scan, &out), ScanFetch::kRow);
  EXPECT_EQ(out->value(0), "b");
  ASSERT_EQ(*core_.next_row(*scan, &out), ScanFetch::kRow);
  EXPECT_EQ(out->value(0), "c");
  // The round's last row is handed out and may still be in use: no NEXTREQ yet.
  EXPECT_TRUE(sink_.sent.empty());
  EXPECT_EQ(*core_.next_row(*scan, &out), ScanFetch::kWaiting);
  std::vector<protocol::ScanNextReq> nexts = next_reqs(sink_.take());
  ASSERT_EQ(nexts.size(), 1u) << "one request for every fragment that has more";
  EXPECT_EQ(nexts[0].id, *scan);
  EXPECT_EQ(nexts[0].flags, 0u);
  EXPECT_EQ(core_.stats().scan_next_requests, 1u);
  // Asked once: waiting again asks nothing more.
  EXPECT_EQ(*core_.next_row(*scan, &out), ScanFetch::kWaiting);
  EXPECT_TRUE(sink_.sent.empty());
  feed(scan_conf(tx, *scan, protocol::kScanRoundDone | protocol::kScanAllDone, {{0, {"d"}}}));
  EXPECT_EQ(ready_calls, 2);
  ASSERT_EQ(*core_.next_row(*scan, &out), ScanFetch::kRow);
  EXPECT_EQ(out->value(0), "d");
  EXPECT_EQ(*core_.next_row(*scan, &out), ScanFetch::kDone);
  EXPECT_TRUE(sink_.sent.empty());
  EXPECT_EQ(core_.stats().scan_batches_received, 3u);
  // A finished scan closes without telling the coordinator.
  core_.close_scan(*scan);
  EXPECT_TRUE(sink_.sent.empty());
}

TEST_F(ApiCoreTest, MalformedScanTabConfFailsTheScan) {
  connect_all();
  const uint64_t tx = *core_.begin();
  bool ready = false;
  const uint32_t scan = *core_.scan(tx, table_, ScanSpec{}, [&](uint32_t) { ready = true; });
  Signal signal = scan_conf(tx, scan, 0, {{0, {"a"}}});
  signal.set_word(3, 2);  // claims two entries, holds one
  feed(std::move(signal));
  EXPECT_TRUE(ready);
  EXPECT_EQ(core_.stats().malformed_signals, 1u);
  std::optional<storage::RowBatch::Row> out;
  Result<ScanFetch> fetched = core_.next_row(scan, &out);
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.status().code(), ErrorCode::kInternal);
}

TEST_F(ApiCoreTest, ClosingARunningScanSendsClose) {
  connect_all();
  const uint64_t tx = *core_.begin();
  const uint32_t scan = *core_.scan(tx, table_, ScanSpec{}, nullptr);
  sink_.take();
  feed(scan_conf(tx, scan, protocol::kScanRoundDone, {{2, {"a"}}}));
  core_.close_scan(scan);
  std::vector<protocol::ScanNextReq> nexts = next_reqs(sink_.take());
  ASSERT_EQ(nexts.size(), 1u);
  EXPECT_EQ(nexts[0].flags, protocol::kScanClose);
  feed(scan_conf(tx, scan, protocol::kScanRoundDone | protocol::kScanAllDone, {}));
  EXPECT_EQ(core_.stats().stray_signals, 1u);
}

TEST_F(ApiCoreTest, ScanTabRefFailsTheScan) {
  connect_all();
  const uint64_t tx = *core_.begin();
  bool ready = false;
  const uint32_t scan = *core_.scan(tx, table_, ScanSpec{}, [&](uint32_t) { ready = true; });
  feed(scan_conf(tx, scan, 0, {{0, {"a"}}}));
  protocol::ScanRef ref;
  ref.tx = tx;
  ref.id = scan;
  ref.error = ErrorCode::kSchemaVersion;
  ref.message = "table changed";
  feed(std::move(ref).to_signal(protocol::kScanTabRef));
  EXPECT_TRUE(ready);
  std::optional<storage::RowBatch::Row> out;
  Result<ScanFetch> fetched = core_.next_row(scan, &out);
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.status().code(), ErrorCode::kSchemaVersion);
}

// ---- Node failure ----

TEST_F(ApiCoreTest, NodeFailureFailsInFlightWorkAtThatNodeWithTemporary) {
  connect_all();
  // Find transactions coordinated by node 1 and by another node.
  uint64_t at_one = 0, elsewhere = 0, unsent_at_one = 0;
  while (at_one == 0 || elsewhere == 0 || unsent_at_one == 0) {
    const uint64_t tx = *core_.begin();
    const uint16_t tc = *core_.coordinator_of(tx);
    if (tc == 1 && at_one == 0) {
      at_one = tx;
    } else if (tc == 1 && unsent_at_one == 0) {
      unsent_at_one = tx;
    } else if (tc != 1 && elsewhere == 0) {
      elsewhere = tx;
    } else {
      core_.close(tx);
    }
  }
  Outcome one, other;
  ASSERT_TRUE(core_.insert(at_one, table_, row_of(table_, 1, "a")).ok());
  ASSERT_TRUE(core_.execute(at_one, ExecType::kCommit, record(&one)).ok());
  ASSERT_TRUE(core_.insert(elsewhere, table_, row_of(table_, 2, "b")).ok());
  ASSERT_TRUE(core_.execute(elsewhere, ExecType::kCommit, record(&other)).ok());
  ASSERT_TRUE(core_.insert(unsent_at_one, table_, row_of(table_, 3, "c")).ok());
  // A scan and a dictionary request at node 1 too.
  uint64_t scan_tx = *core_.begin();
  for (int i = 0; i < 4 && *core_.coordinator_of(scan_tx) != 1; ++i) {
    core_.close(scan_tx);
    scan_tx = *core_.begin();
  }
  ASSERT_EQ(*core_.coordinator_of(scan_tx), 1) << "round robin reaches node 1 within 4 begins";
  bool scan_ready = false;
  const uint32_t scan =
      *core_.scan(scan_tx, table_, ScanSpec{}, [&](uint32_t) { scan_ready = true; });
  Status dict_status;
  bool dict_done = false;
  ASSERT_TRUE(core_
                  .create_table(test_table(),
                                [&](Result<TablePtr> table) {
                                  dict_done = true;
                                  dict_status = table.status();
                                })
                  .ok());  // the master: lowest connected node, 1
  sink_.take();

  core_.set_node_connected(1, false);
  ASSERT_TRUE(one.called);
  EXPECT_EQ(one.status.code(), ErrorCode::kTemporary);
  // Its commit was in flight: the survivors' takeover decided it, the client cannot know.
  EXPECT_EQ(one.status.message(), commit_outcome_unknown_message(1));
  EXPECT_EQ(*core_.state(at_one), TxState::kAborted);
  EXPECT_FALSE(other.called);
  EXPECT_TRUE(scan_ready);
  std::optional<storage::RowBatch::Row> out;
  EXPECT_EQ(core_.next_row(scan, &out).status().code(), ErrorCode::kTemporary);
  ASSERT_TRUE(dict_done);
  EXPECT_EQ(dict_status.code(), ErrorCode::kTemporary);
  // The never-sent transaction moved to a live coordinator and still works.
  EXPECT_NE(*core_.coordinator_of(unsent_at_one), 1);
  Outcome moved;
  ASSERT_TRUE(core_.execute(unsent_at_one, ExecType::kCommit, record(&moved)).ok());
  // The subscription moved to node 2 (the lowest live one), and nothing went to node 1.
  bool resubscribed = false;
  for (const Signal& signal : sink_.sent) {
    EXPECT_NE(signal.receiver().node_id, 1);
    if (signal.id() == protocol::kSubscribeSchemaReq) {
      resubscribed = true;
      EXPECT_EQ(signal.receiver().node_id, 2);
    }
  }
  EXPECT_TRUE(resubscribed);
  // A late answer from the dead node's transaction is a stray.
  feed(tc_key_conf(at_one, protocol::kTcBatchDone | protocol::kTcCommitted, {ok_result(0)}));
  EXPECT_EQ(*core_.state(at_one), TxState::kAborted);
}

TEST_F(ApiCoreTest, NodeFailureDuringANoCommitBatchIsNodeFailureAbort) {
  connect_all();
  uint64_t tx = *core_.begin();
  for (int i = 0; i < 4 && *core_.coordinator_of(tx) != 2; ++i) {
    core_.close(tx);
    tx = *core_.begin();
  }
  ASSERT_EQ(*core_.coordinator_of(tx), 2);
  Outcome batch;
  ASSERT_TRUE(core_.insert(tx, table_, row_of(table_, 1, "a")).ok());
  ASSERT_TRUE(core_.execute(tx, ExecType::kNoCommit, record(&batch)).ok());
  core_.set_node_connected(2, false);
  ASSERT_TRUE(batch.called);
  EXPECT_EQ(batch.status.code(), ErrorCode::kTemporary);
  EXPECT_EQ(batch.status.message(), node_failure_message(2));
  EXPECT_EQ(*core_.state(tx), TxState::kAborted);
}

TEST_F(ApiCoreTest, NoConnectedNodeIsTemporary) {
  EXPECT_EQ(core_.begin().status().code(), ErrorCode::kTemporary);
  EXPECT_EQ(core_.get_table("t", [](Result<TablePtr>) {}).code(), ErrorCode::kTemporary);
}

// ---- Dictionary and the table cache ----

TEST_F(ApiCoreTest, GetTableIsCachedUntilASchemaEvent) {
  core_.set_node_connected(3, true);
  core_.set_node_connected(1, true);
  std::vector<Signal> sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);  // subscribed once, at the first connected node
  EXPECT_EQ(sent[0].id(), protocol::kSubscribeSchemaReq);
  EXPECT_EQ(sent[0].receiver(), (kernel::BlockAddress{3, protocol::kDictionaryBlock, 0}));

  TablePtr got;
  auto fetch = [&] {
    got = nullptr;
    return core_.get_table("t", [&](Result<TablePtr> table) {
      ASSERT_TRUE(table.ok()) << table.status().to_string();
      got = *table;
    });
  };
  ASSERT_TRUE(fetch().ok());
  sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].id(), protocol::kGetTableReq);
  EXPECT_EQ(sent[0].receiver().block, protocol::kDictionaryBlock);
  protocol::DictMsg req = protocol::DictMsg::from_signal(sent[0]);
  EXPECT_EQ(req.a, 0u);
  EXPECT_EQ(req.text, "t");
  protocol::TableMsg conf;
  conf.request_id = req.request_id;
  conf.table = test_table();
  feed(std::move(*conf.to_signal(protocol::kGetTableConf)));
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->schema.table_id, 7u);
  EXPECT_EQ(got->version, 3u);

  ASSERT_TRUE(fetch().ok());  // from the cache: nothing sent
  EXPECT_NE(got, nullptr);
  EXPECT_TRUE(sink_.sent.empty());
  EXPECT_EQ(core_.stats().cache_hits, 1u);

  protocol::DictMsg event;
  event.a = 7;
  event.b = 4;
  event.c = protocol::kSchemaDrop;
  event.text = "t";
  feed(event.to_signal(protocol::kSchemaEvent));
  EXPECT_EQ(core_.cached_table("t"), nullptr);
  ASSERT_TRUE(fetch().ok());
  EXPECT_EQ(got, nullptr);
  EXPECT_EQ(sink_.take().size(), 1u);
}

TEST_F(ApiCoreTest, GetTableRefCarriesTheDictionarysError) {
  connect_all();
  Status status;
  ASSERT_TRUE(
      core_.get_table("nope", [&](Result<TablePtr> table) { status = table.status(); }).ok());
  std::vector<Signal> sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  protocol::DictMsg ref;
  ref.request_id = protocol::DictMsg::from_signal(sent[0]).request_id;
  ref.a = static_cast<uint32_t>(ErrorCode::kNoSuchTable);
  ref.text = "Table 'nope' doesn't exist";
  feed(ref.to_signal(protocol::kGetTableRef));
  EXPECT_EQ(status.code(), ErrorCode::kNoSuchTable);
  EXPECT_EQ(status.message(), "Table 'nope' doesn't exist");
}

TEST_F(ApiCoreTest, CreateGoesToTheMasterAndDropForgetsTheTable) {
  core_.set_node_connected(4, true);
  core_.set_node_connected(2, true);
  sink_.take();
  TableDef fresh = test_table();
  fresh.fragment_count = 0;
  TablePtr created;
  ASSERT_TRUE(core_
                  .create_table(fresh,
                                [&](Result<TablePtr> table) {
                                  ASSERT_TRUE(table.ok());
                                  created = *table;
                                })
                  .ok());
  std::vector<Signal> sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].id(), protocol::kCreateTableReq);
  EXPECT_EQ(sent[0].receiver(), (kernel::BlockAddress{2, protocol::kDictionaryBlock, 0}));
  Result<protocol::TableMsg> req = protocol::TableMsg::from_signal(sent[0]);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->table.fragment_count, test_topology().default_fragment_count());  // filled in
  protocol::DictMsg conf;
  conf.request_id = req->request_id;
  conf.a = 12;
  conf.b = 1;
  feed(conf.to_signal(protocol::kCreateTableConf));
  ASSERT_NE(created, nullptr);
  EXPECT_EQ(created->schema.table_id, 12u);
  EXPECT_EQ(created->version, 1u);

  bool dropped = false;
  ASSERT_TRUE(core_.drop_table(12, [&](const Status& status) { dropped = status.ok(); }).ok());
  sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].id(), protocol::kDropTableReq);
  protocol::DictMsg drop = protocol::DictMsg::from_signal(sent[0]);
  EXPECT_EQ(drop.a, 12u);
  protocol::DictMsg drop_conf;
  drop_conf.request_id = drop.request_id;
  drop_conf.a = 12;
  feed(drop_conf.to_signal(protocol::kDropTableConf));
  EXPECT_TRUE(dropped);
  // A second CONF for the same request is a stray.
  feed(drop_conf.to_signal(protocol::kDropTableConf));
  EXPECT_EQ(core_.stats().stray_signals, 1u);
}

TEST_F(ApiCoreTest, AlterGoesToTheMasterAndForgetsTheCachedDefinition) {
  connect_all();
  TablePtr got;
  ASSERT_TRUE(core_.get_table("t", [&](Result<TablePtr> table) { got = *table; }).ok());
  std::vector<Signal> sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  Result<Signal> conf =
      protocol::TableMsg{protocol::DictMsg::from_signal(sent[0]).request_id, 0, test_table()}
          .to_signal(protocol::kGetTableConf);
  ASSERT_TRUE(conf.ok());
  feed(std::move(*conf));
  ASSERT_NE(core_.cached_table("t"), nullptr);

  // RENAME t TO t2 with a new index: the whole definition, at the version it came from.
  TableDef altered = *got;
  altered.schema.name = "t2";
  altered.schema.ordered_indexes.push_back({"k_1", {2}, false});
  TablePtr done;
  ASSERT_TRUE(core_
                  .alter_table(altered,
                               [&](Result<TablePtr> table) {
                                 ASSERT_TRUE(table.ok());
                                 done = *table;
                               })
                  .ok());
  sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].id(), protocol::kAlterTableReq);
  EXPECT_EQ(sent[0].receiver(), (kernel::BlockAddress{1, protocol::kDictionaryBlock, 0}));
  Result<protocol::TableMsg> req = protocol::TableMsg::from_signal(sent[0]);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->table.schema.name, "t2");
  EXPECT_EQ(req->table.version, got->version);
  feed(protocol::DictMsg{req->request_id, 7, got->version + 1, 0, ""}.to_signal(
      protocol::kAlterTableConf));
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->version, got->version + 1);
  EXPECT_EQ(done->schema.ordered_indexes.size(), 1u);
  EXPECT_EQ(core_.cached_table("t"), nullptr) << "the old name is forgotten at once";

  // A refused alter reports the data node's error.
  Status refused;
  ASSERT_TRUE(
      core_.alter_table(altered, [&](Result<TablePtr> table) { refused = table.status(); }).ok());
  sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  feed(protocol::DictMsg{protocol::DictMsg::from_signal(sent[0]).request_id,
                         static_cast<uint32_t>(ErrorCode::kDuplicateKey), 0, 0,
                         "Duplicate entry '1' for key 'k_1'"}
           .to_signal(protocol::kAlterTableRef));
  EXPECT_TRUE(refused.is(ErrorCode::kDuplicateKey));
  EXPECT_EQ(refused.message(), "Duplicate entry '1' for key 'k_1'");
}

TEST_F(ApiCoreTest, ListTables) {
  connect_all();
  std::vector<protocol::TableListEntry> listed;
  ASSERT_TRUE(core_
                  .list_tables([&](Result<std::vector<protocol::TableListEntry>> tables) {
                    ASSERT_TRUE(tables.ok());
                    listed = *tables;
                  })
                  .ok());
  std::vector<Signal> sent = sink_.take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].id(), protocol::kListTablesReq);
  Result<Signal> conf = protocol::list_tables_conf(
      protocol::DictMsg::from_signal(sent[0]).request_id, {{7, 3, "t"}, {8, 1, "u"}});
  ASSERT_TRUE(conf.ok());
  feed(std::move(*conf));
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1].name, "u");
}

TEST_F(ApiCoreTest, DictionaryRequestsAreBounded) {
  ApiCoreOptions limited = options();
  limited.dictionary_requests_max = 2;
  RecordingSink sink;
  ApiCore core(limited, test_topology(), &sink);
  core.set_node_connected(1, true);
  auto ignore = [](Result<TablePtr>) {};
  EXPECT_TRUE(core.get_table("a", ignore).ok());
  EXPECT_TRUE(core.get_table("b", ignore).ok());
  EXPECT_EQ(core.get_table("c", ignore).code(), ErrorCode::kTemporary);
}

// ---- Distribution awareness ----

TEST_F(ApiCoreTest, HintedBeginPicksThePrimaryReplicaOfTheKeysFragment) {
  connect_all();
  const protocol::ClusterTopology topology = test_topology();
  std::set<uint16_t> chosen;
  for (int64_t id = 0; id < 200; ++id) {
    const storage::AttrValues key = key_of(table_, id);
    Result<uint64_t> tx = core_.begin(&table_, &key);
    ASSERT_TRUE(tx.ok());
    const uint32_t hash = *protocol::distribution_hash(table_.schema, key);
    const uint16_t primary =
        protocol::place_fragment(topology, hash % table_.fragment_count, table_.fragment_count)
            .replicas.front();
    EXPECT_EQ(*core_.coordinator_of(*tx), primary) << "key " << id;
    chosen.insert(primary);
    core_.close(*tx);
  }
  EXPECT_EQ(chosen.size(), 4u);  // with 4 fragments every node is some fragment's primary

  // With the primary down, the live backup of the key's fragment (its primary after the
  // takeover) coordinates.
  core_.set_node_connected(1, false);
  for (int64_t id = 0; id < 50; ++id) {
    const storage::AttrValues key = key_of(table_, id);
    const uint64_t tx = *core_.begin(&table_, &key);
    const uint32_t hash = *protocol::distribution_hash(table_.schema, key);
    const uint16_t live_primary =
        protocol::place_fragment_live(topology, hash % table_.fragment_count, table_.fragment_count,
                                      {1})
            .replicas.front();
    EXPECT_NE(live_primary, 1);
    EXPECT_EQ(*core_.coordinator_of(tx), live_primary) << "key " << id;
    core_.close(tx);
  }
  // A key without its primary key column is refused.
  storage::AttrValues no_key;
  EXPECT_EQ(core_.begin(&table_, &no_key).status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(ApiCoreTest, HintedBeginOnAReadBackupTablePicksAnyLiveReplicaByTheKey) {
  connect_all();
  const protocol::ClusterTopology topology = test_topology();
  TableDef read_backup = table_;
  read_backup.flags |= protocol::kTableReadBackup;
  std::map<uint32_t, std::set<uint16_t>> per_fragment;
  for (int64_t id = 0; id < 400; ++id) {
    const storage::AttrValues key = key_of(read_backup, id);
    const uint64_t first = *core_.begin(&read_backup, &key);
    const uint64_t second = *core_.begin(&read_backup, &key);
    const uint32_t fragment =
        *protocol::distribution_hash(read_backup.schema, key) % read_backup.fragment_count;
    const std::vector<uint16_t> replicas =
        protocol::place_fragment(topology, fragment, read_backup.fragment_count).replicas;
    const uint16_t chosen = *core_.coordinator_of(first);
    EXPECT_NE(std::find(replicas.begin(), replicas.end(), chosen), replicas.end()) << id;
    EXPECT_EQ(*core_.coordinator_of(second), chosen) << "the same key, the same node";
    per_fragment[fragment].insert(chosen);
    core_.close(first);
    core_.close(second);
  }
  for (const auto& [fragment, nodes] : per_fragment) {
    EXPECT_EQ(nodes.size(), 2u) << "fragment " << fragment << ": reads spread over its replicas";
  }
  // Never a node that is not connected.
  core_.set_node_connected(2, false);
  for (int64_t id = 0; id < 100; ++id) {
    const storage::AttrValues key = key_of(read_backup, id);
    const uint64_t tx = *core_.begin(&read_backup, &key);
    EXPECT_NE(*core_.coordinator_of(tx), 2);
    core_.close(tx);
  }
}

// ---- Robustness ----

TEST_F(ApiCoreTest, MalformedAndUnknownSignalsAreCountedNotFatal) {
  connect_all();
  Signal garbage(protocol::kTcKeyConf);
  garbage.set_word(3, 9999);  // an impossible error code
  feed(std::move(garbage));
  Signal unknown(protocol::kLqhKeyReq);
  feed(std::move(unknown));
  Signal bad_batch(protocol::kScanTabConf);
  feed(std::move(bad_batch));  // no such scan: a stray
  EXPECT_EQ(core_.stats().malformed_signals, 2u);
  EXPECT_EQ(core_.stats().stray_signals, 1u);
}

}  // namespace
}  // namespace duo::api
