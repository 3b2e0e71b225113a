// Targeted Fragment scenarios: lock waits, per-operation abort, memory exhaustion, var
// columns, unique keys, scans that resume across modifications, interpreted updates and
// pushed-down filters. The randomized comparison with a model is fragment_model_test.cc.
#include "storage/fragment/fragment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace duo::storage {
namespace {

class FragmentTest : public ::testing::Test {
 protected:
  void make(size_t pages) {
    GlobalMemoryConfig mc;
    mc.total_bytes = pages * kPageSize;
    mc.prefault = false;
    // As in a data node: TransactionMemory has its own reserve, so a full DataMemory
    // still lets transactions delete rows.
    mc.areas[static_cast<size_t>(MemoryArea::kTransactionMemory)].reserved_pages = 16;
    memory_ = std::move(GlobalMemory::create(mc)).value();
    schema_.name = "t";
    schema_.columns = {{"id", ColumnType::kInt, false, false},
                       {"k", ColumnType::kBigInt, false, false},
                       {"name", ColumnType::kVarchar, false, true, 200},
                       {"code", ColumnType::kChar, false, true, 8}};
    schema_.primary_key = {0};
    schema_.ordered_indexes = {{"k_idx", {1}, false}, {"code_u", {3}, true}};
    ASSERT_TRUE(schema_.validate().ok());
    fragment_ = std::move(Fragment::create(&schema_, memory_.get())).value();
  }
  void SetUp() override { make(2048); }

  std::string i32(int32_t v) const { return encode_int(schema_.columns[0], v); }
  std::string i64(int64_t v) const { return encode_int(schema_.columns[1], v); }
  AttrValues key(int32_t id) const {
    AttrValues a;
    a.add(0, i32(id));
    return a;
  }
  AttrValues row(int32_t id, int64_t k, const std::string& name = "n") const {
    AttrValues a;
    a.add(0, i32(id));
    a.add(1, i64(k));
    a.add(2, name);
    return a;
  }
  // Committed value of k (or -1 if absent).
  int64_t k_of(int32_t id, TxId tx = kNullId) {
    AttrValues out;
    OpResult r = fragment_->read(tx, key(id), LockMode::kCommittedRead, {1}, &out);
    if (r.status.is(ErrorCode::kNotFound)) return -1;
    EXPECT_TRUE(r.status.ok()) << r.status.to_string();
    return decode_int(schema_.columns[1], out.value(0));
  }
  std::string name_of(int32_t id) {
    AttrValues out;
    OpResult r = fragment_->read(kNullId, key(id), LockMode::kCommittedRead, {2}, &out);
    EXPECT_TRUE(r.status.ok());
    return out.entry(0).is_null ? "NULL" : std::string(out.value(0));
  }
  void insert_committed(int32_t id, int64_t k, const std::string& name = "n") {
    TxId tx = *fragment_->begin();
    OpResult r = fragment_->insert(tx, row(id, k, name));
    ASSERT_TRUE(r.status.ok()) << r.status.to_string();
    ASSERT_TRUE(fragment_->commit(tx).ok());
  }

  std::unique_ptr<GlobalMemory> memory_;
  TableSchema schema_;
  std::unique_ptr<Fragment> fragment_;
};

TEST_F(FragmentTest, InsertIsInvisibleUntilCommitThenVisible) {
  TxId tx = *fragment_->begin();
  ASSERT_TRUE(fragment_->insert(tx, row(1, 10)).status.ok());
  EXPECT_EQ(k_of(1), -1);      // others: not yet
  EXPECT_EQ(k_of(1, tx), 10);  // own writes: visible
  ASSERT_TRUE(fragment_->commit(tx).ok());
  EXPECT_EQ(k_of(1), 10);
  EXPECT_EQ(fragment_->row_count(), 1u);
  ASSERT_TRUE(fragment_->check_consistency().ok());
}

// Records what commits install, as the redo log will.
class RecordingSink : public ChangeSink {
 public:
  explicit RecordingSink(const TableSchema* schema) : schema_(schema) {}
  void row_written(const AttrValues& row) override {
    std::string text = "write";
    for (size_t i = 0; i < row.size(); ++i) {
      text += row.entry(i).is_null ? " NULL" : " " + format_value(schema_->columns[row.entry(i).column], row.value(i));
    }
    changes.push_back(text);
  }
  void row_deleted(const AttrValues& key) override {
    changes.push_back("delete " + format_value(schema_->columns[0], key.value(0)));
  }
  std::vector<std::string> changes;

 private:
  const TableSchema* schema_;
};

TEST_F(FragmentTest, ChangeSinkSeesEveryInstalledChangeButNotAbortsOrReads) {
  RecordingSink sink(&schema_);
  fragment_->set_change_sink(&sink);
  insert_committed(1, 10, "a");
  TxId tx = *fragment_->begin();
  AttrValues changes;
  changes.add(1, i64(11));
  ASSERT_TRUE(fragment_->update(tx, key(1), changes).status.ok());
  ASSERT_TRUE(fragment_->insert(tx, row(2, 20, "b")).status.ok());
  ASSERT_TRUE(fragment_->abort(tx).ok());
  tx = *fragment_->begin();
  ASSERT_TRUE(fragment_->update(tx, key(1), changes).status.ok());
  ASSERT_TRUE(fragment_->update(tx, key(1), changes).status.ok());  // two ops, one change
  AttrValues out;
  ASSERT_TRUE(fragment_->read(tx, key(1), LockMode::kShared, {}, &out).status.ok());
  ASSERT_TRUE(fragment_->commit(tx).ok());
  tx = *fragment_->begin();
  ASSERT_TRUE(fragment_->remove(tx, key(1)).status.ok());
  ASSERT_TRUE(fragment_->commit(tx).ok());
  EXPECT_EQ(sink.changes, (std::vector<std::string>{"write 1 10 a NULL", "write 1 11 a NULL",
                                                    "delete 1"}));
}

TEST_F(FragmentTest, LockWaitParksThenResumesAfterCommit) {
  insert_committed(1, 10);
  TxId t1 = *fragment_->begin();
  TxId t2 = *fragment_->begin();
  AttrValues set20;
  set20.add(1, i64(20));
  ASSERT_TRUE(fragment_->update(t1, key(1), set20).status.ok());
  AttrValues set30;
  set30.add(1, i64(30));
  OpResult w = fragment_->update(t2, key(1), set30);
  ASSERT_TRUE(w.waiting);
  EXPECT_TRUE(fragment_->is_waiting(w.op));
  EXPECT_TRUE(fragment_->take_ready().empty());
  EXPECT_EQ(k_of(1), 10);  // committed readers never wait
  ASSERT_TRUE(fragment_->commit(t1).ok());
  std::vector<OpId> ready = fragment_->take_ready();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0], w.op);
  OpResult r = fragment_->resume(w.op, nullptr);
  ASSERT_TRUE(r.status.ok()) << r.status.to_string();
  ASSERT_FALSE(r.waiting);
  ASSERT_TRUE(fragment_->commit(t2).ok());
  EXPECT_EQ(k_of(1), 30);
}

// ndbinfo.cluster_operations: a transaction's live operations, oldest first, a parked
// one marked waiting; none once it ended.
TEST_F(FragmentTest, OperationsOfListsLiveOperationsWithWaits) {
  insert_committed(1, 10);
  TxId t1 = *fragment_->begin();
  TxId t2 = *fragment_->begin();
  ASSERT_TRUE(fragment_->insert(t1, row(2, 20)).status.ok());
  AttrValues set20;
  set20.add(1, i64(20));
  ASSERT_TRUE(fragment_->update(t1, key(1), set20).status.ok());
  OpResult w = fragment_->remove(t2, key(1));
  ASSERT_TRUE(w.waiting);
  const std::vector<Fragment::OperationInfo> ops1 = fragment_->operations_of(t1);
  ASSERT_EQ(ops1.size(), 2u);
  EXPECT_EQ(ops1[0].type, OpType::kInsert);
  EXPECT_EQ(ops1[1].type, OpType::kUpdate);
  EXPECT_FALSE(ops1[1].waiting);
  const std::vector<Fragment::OperationInfo> ops2 = fragment_->operations_of(t2);
  ASSERT_EQ(ops2.size(), 1u);
  EXPECT_EQ(ops2[0].type, OpType::kDelete);
  EXPECT_TRUE(ops2[0].waiting);
  ASSERT_TRUE(fragment_->commit(t1).ok());
  EXPECT_TRUE(fragment_->operations_of(t1).empty());
  fragment_->cancel_wait(w.op).ignore_error();  // now ready: given up, then t2 aborts
  ASSERT_TRUE(fragment_->abort(t2).ok());
  EXPECT_TRUE(fragment_->operations_of(t2).empty());
}

TEST_F(FragmentTest, LockWaitTimeoutIsMysql1205) {
  insert_committed(1, 10);
  TxId t1 = *fragment_->begin();
  TxId t2 = *fragment_->begin();
  AttrValues out;
  ASSERT_TRUE(fragment_->read(t1, key(1), LockMode::kExclusive, {}, &out).status.ok());
  OpResult w = fragment_->read(t2, key(1), LockMode::kShared, {}, &out);
  ASSERT_TRUE(w.waiting);
  Status s = fragment_->cancel_wait(w.op);
  EXPECT_EQ(s.code(), ErrorCode::kLockWaitTimeout);
  EXPECT_EQ(error_info(s.code()).mysql_errno, 1205);
  ASSERT_TRUE(fragment_->abort(t2).ok());
  ASSERT_TRUE(fragment_->commit(t1).ok());
  // Shared locks are compatible with each other.
  TxId a = *fragment_->begin();
  TxId b = *fragment_->begin();
  EXPECT_FALSE(fragment_->read(a, key(1), LockMode::kShared, {}, &out).waiting);
  EXPECT_FALSE(fragment_->read(b, key(1), LockMode::kShared, {}, &out).waiting);
  AttrValues set;
  set.add(1, i64(5));
  EXPECT_TRUE(fragment_->update(a, key(1), set).waiting);  // b shares the row
  ASSERT_TRUE(fragment_->abort(a).ok());
  ASSERT_TRUE(fragment_->abort(b).ok());
}

TEST_F(FragmentTest, OperationAbortedWhileAnotherOnSameRowCommits) {
  insert_committed(1, 10, "old");
  TxId tx = *fragment_->begin();
  AttrValues set_name;
  set_name.add(2, "renamed-to-something-longer");
  OpResult a = fragment_->update(tx, key(1), set_name);
  ASSERT_TRUE(a.status.ok());
  AttrValues set_k;
  set_k.add(1, i64(99));
  OpResult b = fragment_->update(tx, key(1), set_k);
  ASSERT_TRUE(b.status.ok());
  EXPECT_EQ(k_of(1, tx), 99);
  ASSERT_TRUE(fragment_->abort_operation(b.op).ok());
  EXPECT_EQ(k_of(1, tx), 10);  // the newest live version is a's again
  ASSERT_TRUE(fragment_->commit_operation(a.op).ok());
  ASSERT_TRUE(fragment_->end(tx).ok());
  EXPECT_EQ(k_of(1), 10);
  EXPECT_EQ(name_of(1), "renamed-to-something-longer");
  ASSERT_TRUE(fragment_->check_consistency().ok());

  // Insert then delete in one transaction: nothing remains, nothing leaks.
  TxId t2 = *fragment_->begin();
  ASSERT_TRUE(fragment_->insert(t2, row(2, 5)).status.ok());
  ASSERT_TRUE(fragment_->remove(t2, key(2)).status.ok());
  ASSERT_TRUE(fragment_->commit(t2).ok());
  EXPECT_EQ(k_of(2), -1);
  EXPECT_EQ(fragment_->row_count(), 1u);
  ASSERT_TRUE(fragment_->check_consistency().ok());
}

TEST_F(FragmentTest, DeleteThenReinsertInOneTransaction) {
  insert_committed(1, 10, "a");
  TxId tx = *fragment_->begin();
  ASSERT_TRUE(fragment_->remove(tx, key(1)).status.ok());
  EXPECT_EQ(k_of(1, tx), -1);
  EXPECT_EQ(k_of(1), 10);
  ASSERT_TRUE(fragment_->insert(tx, row(1, 11, "b")).status.ok());
  EXPECT_EQ(fragment_->insert(tx, row(1, 12)).status.code(), ErrorCode::kDuplicateKey);
  ASSERT_TRUE(fragment_->commit(tx).ok());
  EXPECT_EQ(k_of(1), 11);
  EXPECT_EQ(name_of(1), "b");
  ASSERT_TRUE(fragment_->check_consistency().ok());
}

TEST_F(FragmentTest, UniqueIndexRejectsDuplicatesIgnoringNulls) {
  TxId tx = *fragment_->begin();
  AttrValues r1 = row(1, 1);
  r1.add(3, "AB      ");
  AttrValues r2 = row(2, 2);
  r2.add(3, "AB      ");
  ASSERT_TRUE(fragment_->insert(tx, r1).status.ok());
  OpResult dup = fragment_->insert(tx, r2);
  EXPECT_EQ(dup.status.code(), ErrorCode::kDuplicateKey);
  EXPECT_EQ(dup.status.message(), "Duplicate entry 'AB' for key 'code_u'");
  EXPECT_EQ(error_info(dup.status.code()).mysql_errno, 1062);
  ASSERT_TRUE(fragment_->insert(tx, row(3, 3)).status.ok());  // NULL code
  ASSERT_TRUE(fragment_->insert(tx, row(4, 4)).status.ok());  // NULL code again
  ASSERT_TRUE(fragment_->commit(tx).ok());
  EXPECT_EQ(fragment_->row_count(), 3u);
  // A second transaction's uncommitted holder of the value makes a newcomer wait.
  TxId a = *fragment_->begin();
  TxId b = *fragment_->begin();
  AttrValues r5 = row(5, 5);
  r5.add(3, "zz      ");
  AttrValues r6 = row(6, 6);
  r6.add(3, "zz      ");
  ASSERT_TRUE(fragment_->insert(a, r5).status.ok());
  OpResult w = fragment_->insert(b, r6);
  ASSERT_TRUE(w.waiting);
  ASSERT_TRUE(fragment_->abort(a).ok());  // the holder goes away: b may proceed
  ASSERT_EQ(fragment_->take_ready().size(), 1u);
  OpResult r = fragment_->resume(w.op, nullptr);
  ASSERT_TRUE(r.status.ok()) << r.status.to_string();
  ASSERT_TRUE(fragment_->commit(b).ok());
  ASSERT_TRUE(fragment_->check_consistency().ok());
}

TEST_F(FragmentTest, TableFullIsCleanAndKeepsExistingRows) {
  make(40);
  int32_t inserted = 0;
  Status last;
  for (int32_t id = 1; id < 1000000; ++id) {
    TxId tx = *fragment_->begin();
    OpResult r = fragment_->insert(tx, row(id, id, std::string(150, 'x')));
    if (!r.status.ok()) {
      last = r.status;
      ASSERT_TRUE(fragment_->abort(tx).ok());
      break;
    }
    ASSERT_TRUE(fragment_->commit(tx).ok());
    ++inserted;
  }
  ASSERT_EQ(last.code(), ErrorCode::kTableFull) << last.to_string();
  EXPECT_EQ(error_info(last.code()).mysql_errno, 1114);
  ASSERT_GT(inserted, 100);
  EXPECT_EQ(fragment_->row_count(), static_cast<size_t>(inserted));
  for (int32_t id = 1; id <= inserted; ++id) {
    ASSERT_EQ(k_of(id), id);
  }
  ASSERT_TRUE(fragment_->check_consistency().ok());
  // Freeing rows makes room again.
  TxId tx = *fragment_->begin();
  for (int32_t id = 1; id <= inserted / 2; ++id) {
    ASSERT_TRUE(fragment_->remove(tx, key(id)).status.ok());
  }
  ASSERT_TRUE(fragment_->commit(tx).ok());
  insert_committed(inserted + 1, 7);
  EXPECT_EQ(k_of(inserted + 1), 7);
}

TEST_F(FragmentTest, TransactionMemoryExhaustionFailsCleanly) {
  // DataMemory has room; TransactionMemory is capped at a few pages.
  GlobalMemoryConfig mc;
  mc.total_bytes = 256 * kPageSize;
  mc.prefault = false;
  mc.areas[static_cast<size_t>(MemoryArea::kTransactionMemory)] = {0, 6};
  memory_ = std::move(GlobalMemory::create(mc)).value();
  fragment_ = std::move(Fragment::create(&schema_, memory_.get())).value();
  constexpr int32_t kRows = 2000;
  for (int32_t id = 1; id <= kRows; ++id) insert_committed(id, id, std::string(150, 'a'));
  // One transaction updating many rows holds an image per row until it ends.
  TxId tx = *fragment_->begin();
  Status last;
  int updated = 0;
  for (int32_t id = 1; id <= kRows; ++id) {
    AttrValues set;
    set.add(2, std::string(199, 'b'));
    OpResult r = fragment_->update(tx, key(id), set);
    if (!r.status.ok()) {
      last = r.status;
      break;
    }
    ++updated;
  }
  EXPECT_EQ(last.code(), ErrorCode::kTableFull) << last.to_string();
  EXPECT_LT(updated, kRows);
  ASSERT_TRUE(fragment_->abort(tx).ok());
  // Nothing changed, everything is readable, and memory came back.
  for (int32_t id = 1; id <= kRows; ++id) EXPECT_EQ(name_of(id), std::string(150, 'a'));
  EXPECT_EQ(fragment_->stats().image_bytes, 0u);
  ASSERT_TRUE(fragment_->check_consistency().ok());
  insert_committed(kRows + 1, 1);
}

TEST_F(FragmentTest, GuardedInterpretedUpdateSkipsRowsThatFailTheGuard) {
  insert_committed(1, 10);
  insert_committed(2, 100);
  FilterBuilder fb;
  FilterProgram guard = std::move(fb.build(fb.cmp(1, CmpOp::kLt, i64(50)))).value();
  InterpretedUpdate program;
  program.add(1, 5).guard(std::move(guard));
  ASSERT_TRUE(program.bind(schema_).ok());
  TxId tx = *fragment_->begin();
  OpResult a = fragment_->interpreted_update(tx, key(1), program);
  OpResult b = fragment_->interpreted_update(tx, key(2), program);
  ASSERT_TRUE(a.status.ok() && b.status.ok());
  EXPECT_FALSE(a.filtered);
  EXPECT_TRUE(b.filtered);
  ASSERT_TRUE(fragment_->commit(tx).ok());
  EXPECT_EQ(k_of(1), 15);
  EXPECT_EQ(k_of(2), 100);
}

TEST_F(FragmentTest, RowTooBigIsRejectedBySchema) {
  TableSchema big;
  big.name = "big";
  big.columns = {{"id", ColumnType::kInt, false, false},
                 {"a", ColumnType::kVarchar, false, true, 20000},
                 {"b", ColumnType::kVarchar, false, true, 20000}};
  big.primary_key = {0};
  Status s = big.validate();
  EXPECT_EQ(s.code(), ErrorCode::kRowTooBig);
  EXPECT_EQ(error_info(s.code()).mysql_errno, 1118);
  EXPECT_FALSE(Fragment::create(&big, memory_.get()).ok());
}

TEST_F(FragmentTest, VarPartGrowsAndShrinksThroughCommitAndAbort) {
  insert_committed(1, 1, "short");
  for (int round = 0; round < 50; ++round) {
    const std::string name(static_cast<size_t>((round * 37) % 200), static_cast<char>('a' + round % 26));
    TxId tx = *fragment_->begin();
    AttrValues set;
    set.add(2, name);
    ASSERT_TRUE(fragment_->update(tx, key(1), set).status.ok());
    if (round % 3 == 0) {
      ASSERT_TRUE(fragment_->abort(tx).ok());
    } else {
      ASSERT_TRUE(fragment_->commit(tx).ok());
      EXPECT_EQ(name_of(1), name);
    }
  }
  ASSERT_TRUE(fragment_->check_consistency().ok());
}

TEST_F(FragmentTest, OrderedScanResumesAcrossModifications) {
  for (int32_t id = 1; id <= 200; ++id) insert_committed(id, id * 2);
  Fragment::ScanSpec spec;
  spec.index = 0;
  auto scan = std::move(fragment_->open_scan(spec)).value();
  RowBatch rows;
  std::set<int32_t> seen;
  int32_t next_id = 1000;
  int64_t prev_k = -1;
  while (true) {
    rows.clear();
    auto n = scan->next(10, &rows);
    ASSERT_TRUE(n.ok());
    if (*n == 0) break;
    for (size_t i = 0; i < rows.rows(); ++i) {
      const RowBatch::Row a = rows.row(i);
      const auto id = static_cast<int32_t>(decode_int(schema_.columns[0], a.value(0)));
      const int64_t k = decode_int(schema_.columns[1], a.value(1));
      EXPECT_TRUE(seen.insert(id).second) << "row " << id << " returned twice";
      EXPECT_GE(k, prev_k);
      prev_k = k;
    }
    // Between batches: delete a row ahead, insert rows ahead and behind.
    TxId tx = *fragment_->begin();
    ASSERT_TRUE(fragment_->insert(tx, row(next_id++, prev_k + 1)).status.ok());
    ASSERT_TRUE(fragment_->insert(tx, row(next_id++, 0)).status.ok());
    ASSERT_TRUE(fragment_->commit(tx).ok());
  }
  // Every original row was seen exactly once.
  for (int32_t id = 1; id <= 200; ++id) EXPECT_TRUE(seen.count(id)) << id;
}

TEST_F(FragmentTest, AFullBatchThatEndsTheScanSaysSo) {
  // A batch exactly as large as what is left ends the scan at once: the caller needs no
  // further (empty) batch to learn it, which for a kernel scan is a round trip.
  for (int32_t id = 1; id <= 20; ++id) insert_committed(id, id);
  auto count = [&](Fragment::ScanSpec spec, size_t batch_rows) {
    auto scan = std::move(fragment_->open_scan(std::move(spec))).value();
    RowBatch rows;
    const size_t produced = *scan->next(batch_rows, &rows);
    EXPECT_TRUE(scan->done()) << "after " << produced << " rows";
    EXPECT_EQ(*scan->next(batch_rows, &rows), 0u);
    return produced;
  };
  Fragment::ScanSpec range;
  range.index = 0;
  range.low.add(1, i64(5));
  range.high.add(1, i64(14));
  EXPECT_EQ(count(range, 10), 10u);
  range.descending = true;
  EXPECT_EQ(count(range, 10), 10u);
  range.descending = false;
  range.high = AttrValues();
  range.high.add(1, i64(15));
  range.high_inclusive = false;
  EXPECT_EQ(count(range, 10), 10u);
  EXPECT_EQ(count(Fragment::ScanSpec{}, 20), 20u) << "full scan";
  // One row fewer per batch than the range holds: not done after the first batch.
  auto scan = std::move(fragment_->open_scan(range)).value();
  RowBatch rows;
  EXPECT_EQ(*scan->next(9, &rows), 9u);
  EXPECT_FALSE(scan->done());
  EXPECT_EQ(*scan->next(9, &rows), 1u);
  EXPECT_TRUE(scan->done());
}

TEST_F(FragmentTest, InterpretedUpdateAddsAtTheRowAndChecksRange) {
  insert_committed(1, 10);
  InterpretedUpdate plus_one;
  plus_one.add(1, 1);
  if (!plus_one.bind(schema_).ok()) std::abort();
  TxId tx = *fragment_->begin();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(fragment_->interpreted_update(tx, key(1), plus_one).status.ok());
  }
  ASSERT_TRUE(fragment_->commit(tx).ok());
  EXPECT_EQ(k_of(1), 15);
  // Overflow of BIGINT is MySQL 1690 and changes nothing.
  insert_committed(2, INT64_MAX);
  TxId t2 = *fragment_->begin();
  OpResult r = fragment_->interpreted_update(t2, key(2), plus_one);
  EXPECT_EQ(r.status.code(), ErrorCode::kOutOfRange);
  EXPECT_EQ(error_info(r.status.code()).mysql_errno, 1690);
  ASSERT_TRUE(fragment_->commit(t2).ok());
  EXPECT_EQ(k_of(2), INT64_MAX);
}

TEST_F(FragmentTest, ScanPushesFilterAndProjection) {
  for (int32_t id = 1; id <= 100; ++id) insert_committed(id, id % 10, id % 2 ? "odd" : "even");
  FilterBuilder fb;
  // WHERE k >= 5 AND name LIKE 'ev%'
  FilterProgram filter =
      std::move(fb.build(fb.and_({fb.cmp(1, CmpOp::kGe, i64(5)), fb.like(2, "ev%")}))).value();
  ASSERT_TRUE(filter.bind(schema_).ok());
  Fragment::ScanSpec spec;
  spec.filter = &filter;
  spec.columns = {0};
  auto scan = std::move(fragment_->open_scan(spec)).value();
  RowBatch rows;
  while (*scan->next(16, &rows) > 0) {
  }
  ASSERT_EQ(rows.rows(), 20u);  // even ids with id % 10 in {6, 8}: two per decade
  for (size_t i = 0; i < rows.rows(); ++i) {
    const RowBatch::Row a = rows.row(i);
    ASSERT_EQ(a.size(), 1u);
    const auto id = decode_int(schema_.columns[0], a.value(0));
    EXPECT_EQ(id % 2, 0);
    EXPECT_GE(id % 10, 5);
  }
}

TEST_F(FragmentTest, RebuildBuildsAddedIndexesFromCommittedRowsAndRefusesDuplicates) {
  for (int32_t id = 0; id < 300; ++id) insert_committed(id, id % 7, "n" + std::to_string(299 - id));
  {
    TxId tx = *fragment_->begin();
    for (int32_t id = 0; id < 300; id += 3) ASSERT_TRUE(fragment_->remove(tx, key(id)).status.ok());
    ASSERT_TRUE(fragment_->commit(tx).ok());
  }
  // A transaction in flight: the build refuses (the owner drains first).
  TxId open = *fragment_->begin();
  ASSERT_TRUE(fragment_->insert(open, row(1000, 1)).status.ok());
  schema_.ordered_indexes.push_back({"name_idx", {2}, false});
  EXPECT_TRUE(fragment_->rebuild_ordered_indexes().is(ErrorCode::kTemporary));
  ASSERT_TRUE(fragment_->abort(open).ok());
  ASSERT_TRUE(fragment_->rebuild_ordered_indexes().ok());
  ASSERT_TRUE(fragment_->check_consistency().ok());
  Fragment::ScanSpec spec;
  spec.index = 2;
  auto scan = std::move(fragment_->open_scan(spec)).value();
  RowBatch batch;
  std::vector<std::string> names;
  while (*scan->next(64, &batch) > 0) {
    for (size_t r = 0; r < batch.rows(); ++r) names.emplace_back(batch.row(r).value(2));
    batch.clear();
  }
  EXPECT_EQ(names.size(), 200u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));

  // UNIQUE over k (7 values): refused; the previous indexes rebuild fine.
  const std::vector<IndexDef> before = schema_.ordered_indexes;
  schema_.ordered_indexes.push_back({"k_u", {1}, true});
  Status duplicate = fragment_->rebuild_ordered_indexes();
  EXPECT_TRUE(duplicate.is(ErrorCode::kDuplicateKey)) << duplicate.to_string();
  EXPECT_NE(duplicate.message().find("for key 'k_u'"), std::string::npos);
  schema_.ordered_indexes = before;
  ASSERT_TRUE(fragment_->rebuild_ordered_indexes().ok());
  ASSERT_TRUE(fragment_->check_consistency().ok());

  // Dropping an index renumbers the rest; writes keep every index right.
  schema_.ordered_indexes.erase(schema_.ordered_indexes.begin());
  ASSERT_TRUE(fragment_->rebuild_ordered_indexes().ok());
  insert_committed(2000, 3, "zz");
  EXPECT_EQ(k_of(2000), 3);
  ASSERT_TRUE(fragment_->check_consistency().ok());
}

// Partial checkpoint scans: rows changed since min_gci, plus every row of one row-ref
// part whatever its GCI; the other rows are skipped.
TEST_F(FragmentTest, ScanByGciAndPartReturnsChangedRowsAndOnePart) {
  fragment_->set_commit_gci(5);
  for (int32_t id = 1; id <= 300; ++id) insert_committed(id, id);
  // Each row's ref, learned from a plain full scan one row at a time.
  std::map<int32_t, RowRef> ref_of;
  {
    auto scan = std::move(fragment_->open_scan(Fragment::ScanSpec{})).value();
    RowBatch rows;
    while (*scan->next(1, &rows) == 1) {
      const auto id = static_cast<int32_t>(decode_int(schema_.columns[0], rows.row(0).value(0)));
      ref_of[id] = scan->last_row();
      rows.clear();
    }
  }
  ASSERT_EQ(ref_of.size(), 300u);
  fragment_->set_commit_gci(9);
  std::set<int32_t> changed;
  for (int32_t id = 7; id <= 300; id += 31) {
    TxId tx = *fragment_->begin();
    AttrValues change;
    change.add(1, i64(id * 10));
    ASSERT_TRUE(fragment_->update(tx, key(id), change).status.ok());
    ASSERT_TRUE(fragment_->commit(tx).ok());
    changed.insert(id);
  }
  constexpr uint32_t kParts = 4;
  std::set<int32_t> expected = changed;
  std::set<uint32_t> parts_seen;
  for (const auto& [id, ref] : ref_of) {
    parts_seen.insert(Fragment::scan_part_of(ref, kParts));
    if (Fragment::scan_part_of(ref, kParts) == 1) expected.insert(id);
  }
  ASSERT_GT(parts_seen.size(), 1u) << "the rows must span more than one part";
  ASSERT_LT(expected.size(), 300u);

  Fragment::ScanSpec spec;
  spec.min_gci = 9;
  spec.parts = kParts;
  spec.always_part = 1;
  auto scan = std::move(fragment_->open_scan(spec)).value();
  RowBatch rows;
  std::set<int32_t> got;
  while (*scan->next(7, &rows) > 0) {
  }
  for (size_t i = 0; i < rows.rows(); ++i) {
    got.insert(static_cast<int32_t>(decode_int(schema_.columns[0], rows.row(i).value(0))));
  }
  EXPECT_EQ(got, expected);

  // Without parts only the changed rows come.
  Fragment::ScanSpec changed_only;
  changed_only.min_gci = 9;
  auto scan2 = std::move(fragment_->open_scan(changed_only)).value();
  RowBatch rows2;
  while (*scan2->next(100, &rows2) > 0) {
  }
  EXPECT_EQ(rows2.rows(), changed.size());
}

// Node restart copy of changed rows: GCIs by key, seen marks, and the sweep of rows
// neither seen nor changed after G (busy ones kept until their transaction ends).
TEST_F(FragmentTest, CopySweepDeletesOnlyUnseenRowsUpToGci) {
  fragment_->set_commit_gci(5);
  for (int32_t id = 1; id <= 6; ++id) insert_committed(id, id);
  fragment_->set_commit_gci(9);
  insert_committed(7, 7);  // changed after G = 5: never swept
  ASSERT_EQ(*fragment_->committed_gci(key(1)), 5u);
  ASSERT_EQ(*fragment_->committed_gci(key(7)), 9u);
  EXPECT_TRUE(fragment_->committed_gci(key(99)).status().is(ErrorCode::kNotFound));
  EXPECT_TRUE(fragment_->mark_copy_seen(key(99)).is(ErrorCode::kNotFound));

  ASSERT_TRUE(fragment_->mark_copy_seen(key(1)).ok());
  ASSERT_TRUE(fragment_->set_copied_gci(key(2), 42).ok());
  EXPECT_EQ(*fragment_->committed_gci(key(2)), 42u);
  // Row 3 has an uncommitted update pending: busy, not deleted.
  const TxId writer = *fragment_->begin();
  AttrValues change;
  change.add(1, i64(33));
  ASSERT_TRUE(fragment_->update(writer, key(3), change).status.ok());

  Result<Fragment::CopySweep> sweep = fragment_->sweep_unseen(5);
  ASSERT_TRUE(sweep.ok()) << sweep.status().to_string();
  EXPECT_EQ(sweep->deleted, 3u);  // 4, 5, 6
  EXPECT_EQ(sweep->busy, 1u);     // 3
  EXPECT_EQ(k_of(1), 1);
  EXPECT_EQ(k_of(2), 2);
  EXPECT_EQ(k_of(4), -1);
  EXPECT_EQ(k_of(6), -1);
  EXPECT_EQ(k_of(7), 7);
  // The pending update commits in a later GCI: the row stays at the next sweep.
  fragment_->set_commit_gci(10);
  ASSERT_TRUE(fragment_->commit(writer).ok());
  sweep = fragment_->sweep_unseen(5);
  ASSERT_TRUE(sweep.ok());
  EXPECT_EQ(sweep->deleted, 0u);
  EXPECT_EQ(sweep->busy, 0u);
  EXPECT_EQ(k_of(3), 33);
  EXPECT_EQ(fragment_->row_count(), 4u);
  ASSERT_TRUE(fragment_->check_consistency().ok());

  // Marks go; a sweep without marks then deletes the rows of GCI <= G.
  fragment_->clear_copy_marks();
  sweep = fragment_->sweep_unseen(5);
  ASSERT_TRUE(sweep.ok());
  EXPECT_EQ(sweep->deleted, 1u);  // row 1 (row 2 carries GCI 42 now)
  EXPECT_EQ(k_of(1), -1);
  EXPECT_EQ(k_of(2), 2);
  ASSERT_TRUE(fragment_->check_consistency().ok());
}

// A busy row whose pending operation aborts is swept at the next pass.
TEST_F(FragmentTest, CopySweepTakesABusyRowOnceItsWriterAborted) {
  fragment_->set_commit_gci(3);
  insert_committed(1, 1);
  const TxId writer = *fragment_->begin();
  ASSERT_TRUE(fragment_->remove(writer, key(1)).status.ok());
  Result<Fragment::CopySweep> sweep = fragment_->sweep_unseen(3);
  ASSERT_TRUE(sweep.ok());
  EXPECT_EQ(sweep->busy, 1u);
  ASSERT_TRUE(fragment_->abort(writer).ok());
  sweep = fragment_->sweep_unseen(3);
  ASSERT_TRUE(sweep.ok());
  EXPECT_EQ(sweep->deleted, 1u);
  EXPECT_EQ(k_of(1), -1);
  ASSERT_TRUE(fragment_->check_consistency().ok());
}

// The delete log: committed deletes of existing rows with their GCI, each key once
// above a GCI; aborted deletes and rows that never committed are not in it.
TEST_F(FragmentTest, DeleteLogNamesCommittedDeletesAboveAGci) {
  auto remove_committed = [&](int32_t id) {
    const TxId tx = *fragment_->begin();
    ASSERT_TRUE(fragment_->remove(tx, key(id)).status.ok());
    ASSERT_TRUE(fragment_->commit(tx).ok());
  };
  auto ids = [&](const std::vector<AttrValues>& keys) {
    std::set<int32_t> out;
    for (const AttrValues& k : keys) out.insert(decode_int(schema_.columns[0], k.value(0)));
    return out;
  };
  fragment_->set_commit_gci(5);
  for (int32_t id = 1; id <= 5; ++id) insert_committed(id, id);
  fragment_->set_commit_gci(7);
  remove_committed(1);
  remove_committed(2);
  remove_committed(3);
  fragment_->set_commit_gci(8);
  insert_committed(3, 30);  // re-inserted and deleted again
  fragment_->set_commit_gci(9);
  remove_committed(3);
  const TxId aborted = *fragment_->begin();
  ASSERT_TRUE(fragment_->remove(aborted, key(4)).status.ok());
  ASSERT_TRUE(fragment_->abort(aborted).ok());
  const TxId never = *fragment_->begin();
  ASSERT_TRUE(fragment_->insert(never, row(6, 6)).status.ok());
  ASSERT_TRUE(fragment_->remove(never, key(6)).status.ok());
  ASSERT_TRUE(fragment_->commit(never).ok());

  EXPECT_EQ(fragment_->delete_log_floor(), 0u);
  Result<std::vector<AttrValues>> since_5 = fragment_->deleted_since(5);
  ASSERT_TRUE(since_5.ok());
  EXPECT_EQ(since_5->size(), 3u);  // 3 once
  EXPECT_EQ(ids(*since_5), (std::set<int32_t>{1, 2, 3}));
  Result<std::vector<AttrValues>> since_7 = fragment_->deleted_since(7);
  ASSERT_TRUE(since_7.ok());
  EXPECT_EQ(ids(*since_7), (std::set<int32_t>{3}));
  EXPECT_TRUE(fragment_->deleted_since(9)->empty());
}

// Trimming raises the floor to the trimmed GCI; a fragment being filled from another
// moment (enforcement off) has no usable log until it is restarted at a GCI.
TEST_F(FragmentTest, DeleteLogFloorFollowsTrimmingAndRefills) {
  fragment_->set_delete_log_max_bytes(400);
  for (int32_t id = 1; id <= 40; ++id) {
    fragment_->set_commit_gci(1);
    insert_committed(id, id);
    fragment_->set_commit_gci(10 + static_cast<uint32_t>(id));
    const TxId tx = *fragment_->begin();
    ASSERT_TRUE(fragment_->remove(tx, key(id)).status.ok());
    ASSERT_TRUE(fragment_->commit(tx).ok());
  }
  EXPECT_LE(fragment_->delete_log_bytes(), 400u);
  const uint32_t floor = fragment_->delete_log_floor();
  EXPECT_GT(floor, 10u);
  EXPECT_LT(floor, 50u);
  EXPECT_TRUE(fragment_->deleted_since(floor - 1).status().is(ErrorCode::kNotFound));
  Result<std::vector<AttrValues>> kept = fragment_->deleted_since(floor);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->size(), 50u - floor);  // the deletes of GCIs floor + 1 .. 50

  fragment_->set_enforce_unique(false);
  EXPECT_EQ(fragment_->delete_log_floor(), Fragment::kDeleteLogUnusable);
  EXPECT_EQ(fragment_->delete_log_bytes(), 0u);
  fragment_->set_enforce_unique(true);  // not usable again by itself
  EXPECT_TRUE(fragment_->deleted_since(100).status().is(ErrorCode::kNotFound));
  fragment_->restart_delete_log(60);
  EXPECT_TRUE(fragment_->deleted_since(59).status().is(ErrorCode::kNotFound));
  EXPECT_TRUE(fragment_->deleted_since(60)->empty());
}

// The starting node's side: a deleted key removes its row only while the row is one of
// G or before and no transaction holds it.
TEST_F(FragmentTest, RemoveUnchangedTakesOnlyOldUnheldRows) {
  fragment_->set_commit_gci(5);
  for (int32_t id = 1; id <= 3; ++id) insert_committed(id, id);
  fragment_->set_commit_gci(8);
  insert_committed(4, 4);  // written after G = 5: the live replica's row
  const TxId writer = *fragment_->begin();
  AttrValues change;
  change.add(1, i64(22));
  ASSERT_TRUE(fragment_->update(writer, key(2), change).status.ok());
  RowBatch keys;
  for (int32_t id : {1, 2, 4, 99, 1}) keys.begin_row().add(0, i32(id));
  Result<Fragment::CopySweep> removed = fragment_->remove_unchanged(keys, 5);
  ASSERT_TRUE(removed.ok()) << removed.status().to_string();
  EXPECT_EQ(removed->deleted, 1u);  // 1 (listed twice)
  EXPECT_EQ(removed->busy, 1u);     // 2
  EXPECT_EQ(k_of(1), -1);
  EXPECT_EQ(k_of(3), 3);
  EXPECT_EQ(k_of(4), 4);
  ASSERT_TRUE(fragment_->abort(writer).ok());
  removed = fragment_->remove_unchanged(keys, 5);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->deleted, 1u);  // 2, its writer gone
  EXPECT_EQ(k_of(2), -1);
  ASSERT_TRUE(fragment_->check_consistency().ok());
}

}  // namespace
}  // namespace duo::storage
