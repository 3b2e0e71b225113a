// Randomized test of Fragment against a simple reference model (std::map), with
// several transactions interleaving inserts, updates, deletes, locking reads, per-
// operation aborts, commits and aborts. The model predicts every outcome: success,
// duplicate key, not found, or a lock wait (which the test then cancels, as a lock
// wait timeout would).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "storage/fragment/fragment.h"

namespace duo::storage {
namespace {

struct ModelRow {
  int32_t k;
  std::optional<std::string> c;  // unique when not NULL
  bool operator==(const ModelRow& o) const { return k == o.k && c == o.c; }
};
using Rows = std::map<int32_t, ModelRow>;

struct ModelOp {
  OpId id;
  int32_t key;
  std::optional<ModelRow> after;  // nullopt: delete
  bool aborted = false;
};

struct ModelTx {
  TxId id;
  std::vector<ModelOp> writes;
  std::set<int32_t> locked;  // keys this tx holds a lock on (shared or exclusive)
  std::set<int32_t> exclusive;
  std::set<int32_t> written;  // keys with a successful write op (aborted or not)
};

class FragmentModelTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    GlobalMemoryConfig mc;
    mc.total_bytes = 64 * 1024 * 1024;
    mc.prefault = false;
    memory_ = std::move(GlobalMemory::create(mc)).value();
    schema_.name = "t";
    schema_.columns = {{"id", ColumnType::kInt, false, false},
                       {"k", ColumnType::kInt, false, false},
                       {"c", ColumnType::kVarchar, false, true, 16, 0, 0, Collation::kCaseInsensitive}};
    schema_.primary_key = {0};
    schema_.ordered_indexes = {{"k_idx", {1}, false}, {"c_unique", {2}, true}};
    ASSERT_TRUE(schema_.validate().ok());
    fragment_ = std::move(Fragment::create(&schema_, memory_.get())).value();
  }

  std::string enc(int32_t v) const { return encode_int(schema_.columns[0], v); }
  AttrValues key(int32_t id) const {
    AttrValues a;
    a.add(0, enc(id));
    return a;
  }
  AttrValues row(int32_t id, const ModelRow& r) const {
    AttrValues a;
    a.add(0, enc(id));
    a.add(1, enc(r.k));
    if (r.c) a.add(2, *r.c);
    else a.add_null(2);
    return a;
  }
  static std::string fold(const std::string& s) {
    std::string o = s;
    for (char& ch : o) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    while (!o.empty() && o.back() == ' ') o.pop_back();
    return o;
  }

  // The version `tx` sees for `id` (its own newest live write, else committed).
  std::optional<ModelRow> view(const ModelTx* tx, int32_t id) const {
    if (tx) {
      for (auto it = tx->writes.rbegin(); it != tx->writes.rend(); ++it) {
        if (it->key == id && !it->aborted) return it->after;
      }
    }
    auto it = committed_.find(id);
    if (it == committed_.end()) return std::nullopt;
    return it->second;
  }
  Rows view_all(const ModelTx* tx) const {
    Rows out;
    std::set<int32_t> keys;
    for (auto& [id, r] : committed_) keys.insert(id);
    if (tx) {
      for (auto& w : tx->writes) keys.insert(w.key);
    }
    for (int32_t id : keys) {
      if (auto r = view(tx, id)) out[id] = *r;
    }
    return out;
  }
  bool locked_by_other(const ModelTx& me, int32_t id, bool exclusive) const {
    for (auto& [tid, t] : txs_) {
      if (tid == me.id) continue;
      if (exclusive ? t.locked.count(id) > 0 : t.exclusive.count(id) > 0) return true;
    }
    return false;
  }
  // Another transaction has a version (committed-but-rewritten or uncommitted) of a
  // different row with this unique value: the fragment must wait for it.
  bool unique_conflict_with_other(const ModelTx& me, int32_t id, const std::string& c) const {
    for (auto& [tid, t] : txs_) {
      if (tid == me.id) continue;
      for (int32_t other : t.written) {
        if (other == id) continue;
        auto cit = committed_.find(other);
        if (cit != committed_.end() && cit->second.c && fold(*cit->second.c) == fold(c)) return true;
        for (auto& w : t.writes) {
          // Aborted versions keep their index entries until their transaction ends.
          if (w.key == other && w.after && w.after->c && fold(*w.after->c) == fold(c)) return true;
        }
      }
    }
    return false;
  }
  // A row visible to me has the value and no other transaction is writing it: a
  // duplicate whatever anyone else does.
  bool unique_definite_dup(const ModelTx& me, int32_t id, const std::string& c) const {
    for (auto& [other, r] : view_all(&me)) {
      if (other == id || !r.c || fold(*r.c) != fold(c)) continue;
      bool written_by_other = false;
      for (auto& [tid, t] : txs_) written_by_other |= tid != me.id && t.written.count(other) > 0;
      if (!written_by_other) return true;
    }
    return false;
  }

  void check_scans(const ModelTx* tx) {
    const TxId t = tx ? tx->id : kNullId;
    const Rows expect = view_all(tx);
    // Full scan.
    Fragment::ScanSpec spec;
    spec.tx = t;
    auto scan = std::move(fragment_->open_scan(spec)).value();
    RowBatch out;
    while (true) {
      auto n = scan->next(7, &out);
      ASSERT_TRUE(n.ok());
      if (*n == 0) break;
    }
    Rows got;
    for (size_t i = 0; i < out.rows(); ++i) {
      const RowBatch::Row a = out.row(i);
      ModelRow r{static_cast<int32_t>(decode_int(schema_.columns[1], a.value(1))), std::nullopt};
      if (!a.is_null(2)) r.c = std::string(a.value(2));
      ASSERT_TRUE(got.emplace(static_cast<int32_t>(decode_int(schema_.columns[0], a.value(0))), r).second)
          << "row returned twice by full scan";
    }
    ASSERT_EQ(got, expect) << "full scan differs, seed " << GetParam();
    // Ordered scan on k over a random range, both directions, in small batches.
    for (bool desc : {false, true}) {
      const int32_t lo = static_cast<int32_t>(rng_() % 40) - 5;
      const int32_t hi = lo + static_cast<int32_t>(rng_() % 30);
      Fragment::ScanSpec s;
      s.tx = t;
      s.index = 0;
      s.low.add(1, enc(lo));
      s.high.add(1, enc(hi));
      s.low_inclusive = rng_() % 2;
      s.high_inclusive = rng_() % 2;
      s.descending = desc;
      auto sc = std::move(fragment_->open_scan(s)).value();
      RowBatch rows;
      while (true) {
        auto n = sc->next(3, &rows);
        ASSERT_TRUE(n.ok());
        if (*n == 0) break;
      }
      std::multiset<std::pair<int32_t, int32_t>> want, have;
      for (auto& [id, r] : expect) {
        if ((r.k > lo || (r.k == lo && s.low_inclusive)) && (r.k < hi || (r.k == hi && s.high_inclusive))) {
          want.insert({r.k, id});
        }
      }
      int32_t prev_k = desc ? INT32_MAX : INT32_MIN;
      for (size_t i = 0; i < rows.rows(); ++i) {
        const RowBatch::Row a = rows.row(i);
        const int32_t k = static_cast<int32_t>(decode_int(schema_.columns[1], a.value(1)));
        ASSERT_TRUE(desc ? k <= prev_k : k >= prev_k) << "index scan out of order";
        prev_k = k;
        have.insert({k, static_cast<int32_t>(decode_int(schema_.columns[0], a.value(0)))});
      }
      ASSERT_EQ(have, want) << "index scan differs, seed " << GetParam() << (desc ? " desc" : " asc");
    }
  }

  void step() {
    // Pick or start a transaction.
    if (txs_.size() < 3 && (txs_.empty() || rng_() % 4 == 0)) {
      auto tx = fragment_->begin();
      ASSERT_TRUE(tx.ok());
      txs_[*tx] = ModelTx{*tx, {}, {}, {}, {}};
      trace("tx%u begin", *tx);
      return;
    }
    auto it = txs_.begin();
    std::advance(it, rng_() % txs_.size());
    ModelTx& tx = it->second;
    const int action = static_cast<int>(rng_() % 100);
    const int32_t id = static_cast<int32_t>(rng_() % 24);
    if (action < 6) {  // commit
      trace("tx%u commit", tx.id);
      ASSERT_TRUE(fragment_->commit(tx.id).ok());
      std::map<int32_t, std::optional<ModelRow>> final_version;
      for (auto& w : tx.writes) {
        if (!w.aborted) final_version[w.key] = w.after;
      }
      for (auto& [k, v] : final_version) {
        if (v) committed_[k] = *v;
        else committed_.erase(k);
      }
      txs_.erase(it);
      return;
    }
    if (action < 10) {  // abort
      trace("tx%u abort", tx.id);
      ASSERT_TRUE(fragment_->abort(tx.id).ok());
      txs_.erase(it);
      return;
    }
    if (action < 14) {  // per-operation abort of a random earlier write
      if (tx.writes.empty()) return;
      ModelOp& w = tx.writes[rng_() % tx.writes.size()];
      trace("tx%u abort_operation of write on id=%d", tx.id, w.key);
      ASSERT_TRUE(fragment_->abort_operation(w.id).ok());
      w.aborted = true;
      return;
    }
    if (action < 20) {  // scans, and a consistency check
      check_scans(rng_() % 2 ? &tx : nullptr);
      return;
    }
    const std::optional<ModelRow> cur = view(&tx, id);
    if (action < 35) {  // reads: committed (own view) or locking
      const int mode = static_cast<int>(rng_() % 3);
      const LockMode lm = mode == 0 ? LockMode::kCommittedRead : mode == 1 ? LockMode::kShared : LockMode::kExclusive;
      AttrValues out;
      OpResult r = fragment_->read(tx.id, key(id), lm, {}, &out);
      trace("tx%u read id=%d mode=%d -> %s%s", tx.id, id, mode, r.status.to_string().c_str(),
            r.waiting ? " (waiting)" : "");
      const bool must_wait = lm != LockMode::kCommittedRead && cur_row_exists_anywhere(id) &&
                             locked_by_other(tx, id, lm == LockMode::kExclusive);
      if (must_wait) {
        ASSERT_TRUE(r.waiting) << "expected lock wait, seed " << GetParam();
        EXPECT_EQ(fragment_->cancel_wait(r.op).code(), ErrorCode::kLockWaitTimeout);
        return;
      }
      ASSERT_FALSE(r.waiting) << "unexpected lock wait on read, seed " << GetParam();
      if (lm != LockMode::kCommittedRead && cur_row_exists_anywhere(id)) {
        tx.locked.insert(id);
        if (lm == LockMode::kExclusive) tx.exclusive.insert(id);
      }
      if (!cur) {
        ASSERT_EQ(r.status.code(), ErrorCode::kNotFound);
        return;
      }
      ASSERT_TRUE(r.status.ok()) << r.status.to_string();
      ASSERT_EQ(decode_int(schema_.columns[1], out.value(1)), cur->k);
      return;
    }
    // Writes.
    ModelRow next{static_cast<int32_t>(rng_() % 30), std::nullopt};
    if (rng_() % 3 != 0) next.c = std::string(1, static_cast<char>('a' + rng_() % 20)) + (rng_() % 2 ? "" : "  ");
    if (rng_() % 5 == 0 && next.c) (*next.c)[0] = static_cast<char>(std::toupper((*next.c)[0]));
    const int kind = static_cast<int>(rng_() % 4);  // insert, update, write, delete
    OpResult r;
    if (kind == 0) r = fragment_->insert(tx.id, row(id, next));
    else if (kind == 1) r = fragment_->update(tx.id, key(id), row(id, next));
    else if (kind == 2) r = fragment_->write(tx.id, row(id, next));
    else r = fragment_->remove(tx.id, key(id));
    trace("tx%u %s id=%d k=%d c=%s -> %s%s", tx.id, kind == 0 ? "insert" : kind == 1 ? "update" : kind == 2 ? "write" : "delete",
          id, next.k, next.c ? next.c->c_str() : "NULL", r.status.to_string().c_str(), r.waiting ? " (waiting)" : "");

    const bool exists_anywhere = cur_row_exists_anywhere(id);
    const bool lock_wait = exists_anywhere && locked_by_other(tx, id, true);
    const bool would_insert = kind == 0 || (kind == 2 && !cur);
    const bool needs_unique = kind != 3 && next.c && !(cur && !would_insert && cur->c && fold(*cur->c) == fold(*next.c));
    const bool valid = (kind == 0 && !cur) || (kind == 1 && cur) || kind == 2;
    const bool definite_dup = valid && needs_unique && unique_definite_dup(tx, id, *next.c);
    bool expect_wait = lock_wait;
    if (!expect_wait && kind != 3 && valid && needs_unique && !definite_dup &&
        unique_conflict_with_other(tx, id, *next.c)) {
      expect_wait = true;
    }
    if (expect_wait) {
      ASSERT_TRUE(r.waiting) << "expected a lock wait, seed " << GetParam() << " kind " << kind;
      EXPECT_EQ(fragment_->cancel_wait(r.op).code(), ErrorCode::kLockWaitTimeout);
      if (!lock_wait && exists_anywhere) {
        tx.locked.insert(id);  // the own row lock was taken before the unique wait
        tx.exclusive.insert(id);
      }
      return;
    }
    ASSERT_FALSE(r.waiting) << "unexpected lock wait, seed " << GetParam() << " kind " << kind;
    // Any op on an existing (or freshly inserted) row keeps its exclusive lock.
    auto take_lock = [&] {
      tx.locked.insert(id);
      tx.exclusive.insert(id);
    };
    if (kind == 0 && cur) {
      ASSERT_EQ(r.status.code(), ErrorCode::kDuplicateKey) << r.status.to_string();
      take_lock();
      return;
    }
    if ((kind == 1 || kind == 3) && !cur) {
      ASSERT_EQ(r.status.code(), ErrorCode::kNotFound) << r.status.to_string();
      if (exists_anywhere) take_lock();
      return;
    }
    if (kind != 3 && definite_dup) {
      ASSERT_EQ(r.status.code(), ErrorCode::kDuplicateKey) << "seed " << GetParam();
      if (exists_anywhere) take_lock();
      return;
    }
    ASSERT_TRUE(r.status.ok()) << r.status.to_string() << " seed " << GetParam() << " kind " << kind;
    take_lock();
    tx.written.insert(id);
    tx.writes.push_back(ModelOp{r.op, id, kind == 3 ? std::nullopt : std::optional<ModelRow>(next)});
  }

  // A row slot exists for id: committed, or written (even deleted/aborted) by an open tx.
  bool cur_row_exists_anywhere(int32_t id) const {
    if (committed_.count(id)) return true;
    for (auto& [tid, t] : txs_) {
      if (t.exclusive.count(id)) return true;
    }
    return false;
  }

  // DUO_MODEL_TRACE=1 prints every step (replay a failing seed with
  // --gtest_filter='Seeds/FragmentModelTest.MatchesReferenceModel/<seed-1>').
  template <typename... Args>
  void trace(const char* fmt, Args... args) {
    static const bool on = std::getenv("DUO_MODEL_TRACE") != nullptr;
    if (!on) return;
    std::fprintf(stderr, fmt, args...);
    std::fputc('\n', stderr);
  }

  std::mt19937 rng_;
  std::unique_ptr<GlobalMemory> memory_;
  TableSchema schema_;
  std::unique_ptr<Fragment> fragment_;
  Rows committed_;
  std::map<TxId, ModelTx> txs_;
};

TEST_P(FragmentModelTest, MatchesReferenceModel) {
  rng_.seed(static_cast<uint32_t>(GetParam()));
  for (int i = 0; i < 3000; ++i) {
    step();
    if (HasFatalFailure()) return;
    if (txs_.empty()) {
      ASSERT_TRUE(fragment_->check_consistency().ok());
    }
  }
  for (auto& [id, t] : txs_) {
    ASSERT_TRUE(fragment_->abort(id).ok());
  }
  txs_.clear();
  check_scans(nullptr);
  Status s = fragment_->check_consistency();
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(fragment_->row_count(), committed_.size());
  // Every uncommitted image went back to TransactionMemory.
  EXPECT_EQ(fragment_->stats().image_bytes, 0u);
}

// 1000 seeds in CI (about a second in Release); a longer campaign:
//   DUO_MODEL_SEEDS=20000 build/release/storage/fragment/duo_storage_fragment_test --gtest_filter='Seeds*'
int model_seed_count() {
  const char* env = std::getenv("DUO_MODEL_SEEDS");
  const int n = env ? std::atoi(env) : 0;
  return n > 0 ? n : 1000;
}
INSTANTIATE_TEST_SUITE_P(Seeds, FragmentModelTest, ::testing::Range(1, model_seed_count() + 1));

}  // namespace
}  // namespace duo::storage
