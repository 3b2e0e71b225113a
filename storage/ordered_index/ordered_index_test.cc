// OrderedIndex tests: a model (std::set of (key, tie)) checked against the B+tree under
// random inserts, erases, ref replacements, bound searches, seeks and cursor walks, plus
// targeted cases for range bounds, partial-key probes, node-memory exhaustion and page
// return.
//
// Keys are (int a, string b) rows of a test table. Their prefix is derived from `a`
// alone and deliberately coarse (several values of `a`, and every `b`, share one prefix),
// so the comparator and probe callbacks decide many comparisons; a second scheme uses an
// exact 32-bit prefix (prefix_exact index) and asserts that no callback is ever made.
//
// Ties: by default tie_key(ref) is the ref. A "paired" table maps ref and ref | 2^31 to
// one tie (as the fragment does for a committed row and its uncommitted version), so
// replace_ref can swap an entry between the two refs of its pair in place.
#include "storage/ordered_index/ordered_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace duo::storage {
namespace {

struct Key {
  int32_t a = 0;
  std::string b;
};

// Sign of x - y over the first `columns` columns.
int compare_keys(const Key& x, const Key& y, int columns) {
  if (x.a != y.a) return x.a < y.a ? -1 : 1;
  if (columns < 2) return 0;
  const int c = x.b.compare(y.b);
  return (c > 0) - (c < 0);
}

// How keys are generated and prefixed.
struct Scheme {
  bool exact;            // prefix is the whole key (b always empty)
  int a_range;           // a in [-a_range, a_range]
  size_t b_length_max;   // b has 0..b_length_max characters from "ab"
  int prefix_shift;      // prefix = biased(a) >> shift: collisions across nearby a
};
constexpr Scheme kColliding{false, 40, 3, 3};
constexpr Scheme kExact{true, 1000, 0, 0};

uint32_t prefix_of(const Scheme& scheme, int32_t a) {
  return (static_cast<uint32_t>(a) ^ 0x80000000u) >> scheme.prefix_shift;
}

constexpr uint32_t kPairBit = 0x80000000u;

class TestTable : public KeyComparator {
 public:
  int compare_entries(uint32_t ref_a, uint32_t ref_b) const override {
    ++calls;
    return compare_keys(rows.at(ref_a), rows.at(ref_b), 2);
  }
  uint32_t tie_key(uint32_t ref) const override {
    ++tie_calls;
    EXPECT_TRUE(rows.contains(ref)) << "tie_key of a dead ref " << ref;
    return tie_of(ref);
  }
  // The same function, uncounted (for the model).
  uint32_t tie_of(uint32_t ref) const { return paired ? ref & ~kPairBit : ref; }
  std::unordered_map<uint32_t, Key> rows;
  bool paired = false;
  mutable uint64_t calls = 0;
  mutable uint64_t tie_calls = 0;
};

class TestProbe : public SearchProbe {
 public:
  TestProbe(const TestTable* table, const Scheme& scheme, Key key, int columns)
      : table_(table), scheme_(scheme), key_(std::move(key)), columns_(columns) {}
  uint32_t prefix() const override { return prefix_of(scheme_, key_.a); }
  bool prefix_exact() const override { return scheme_.exact; }
  int compare_to(uint32_t ref) const override {
    ++calls;
    return compare_keys(table_->rows.at(ref), key_, columns_);
  }
  mutable uint64_t calls = 0;

 private:
  const TestTable* table_;
  Scheme scheme_;
  Key key_;
  int columns_;
};

// The model: entries in (key, tie) order. A Marker is a position between entries: just
// before (tie < 0) or just after (tie > 0) all entries equal to a possibly partial key.
struct Entry {
  Key key;
  uint32_t tie;
  mutable uint32_t ref;  // not part of the order: replace_ref changes it in place
};
struct Marker {
  Key key;
  int columns;
  int tie;
};
struct EntryLess {
  using is_transparent = void;
  bool operator()(const Entry& x, const Entry& y) const {
    const int c = compare_keys(x.key, y.key, 2);
    return c < 0 || (c == 0 && x.tie < y.tie);
  }
  bool operator()(const Entry& x, const Marker& m) const {
    const int c = compare_keys(x.key, m.key, m.columns);
    return c < 0 || (c == 0 && m.tie > 0);
  }
  bool operator()(const Marker& m, const Entry& x) const {
    const int c = compare_keys(x.key, m.key, m.columns);
    return c > 0 || (c == 0 && m.tie < 0);
  }
};
using Model = std::set<Entry, EntryLess>;

GlobalMemoryConfig memory_config(size_t pages) {
  GlobalMemoryConfig config;
  config.total_bytes = pages * kPageSize;
  config.prefault = false;
  return config;
}

// One index with its table and model, plus helpers that apply an operation to both.
class Harness {
 public:
  Harness(const Scheme& scheme, size_t pages, uint64_t seed, bool paired = false)
      : scheme_(scheme), rng_(seed), memory_(std::move(GlobalMemory::create(memory_config(pages)).value())) {
    table_.paired = paired;
    index_ = std::make_unique<OrderedIndex>(memory_.get(), &table_, scheme.exact);
  }

  Key random_key(int extra_range = 0) {
    std::uniform_int_distribution<int> a(-scheme_.a_range - extra_range,
                                         scheme_.a_range + extra_range);
    Key key;
    key.a = a(rng_);
    const size_t length = scheme_.b_length_max == 0 ? 0 : rng_() % (scheme_.b_length_max + 1);
    for (size_t i = 0; i < length; ++i) key.b.push_back("ab"[rng_() % 2]);
    return key;
  }
  // A ref whose tie no live entry has (so neither ref of its pair is live when paired).
  uint32_t unused_ref() {
    for (;;) {
      // Spread over the whole 32-bit range so ties are broken on unsigned order.
      const uint32_t ref = static_cast<uint32_t>(rng_());
      if (!live_.contains(ref) && !(table_.paired && live_.contains(ref ^ kPairBit))) {
        return ref;
      }
    }
  }
  uint32_t prefix(uint32_t ref) const { return prefix_of(scheme_, table_.rows.at(ref).a); }
  uint32_t tie(uint32_t ref) const { return table_.tie_of(ref); }

  // Inserts a new row with `key`; returns the index's status (model updated on success).
  Status insert(const Key& key) {
    return insert_ref(key, unused_ref());
  }
  Status insert_ref(const Key& key, uint32_t ref) {
    table_.rows[ref] = key;
    Status status = index_->insert(prefix_of(scheme_, key.a), ref);
    if (status.ok()) {
      EXPECT_TRUE(model_.insert(Entry{key, tie(ref), ref}).second);
      live_.insert(ref);
      live_list_.push_back(ref);
    } else {
      table_.rows.erase(ref);
    }
    return status;
  }
  // Paired tables: inserts the other ref of a live entry's pair (same tie) under a random
  // key. Allowed when the key differs; rejected (tree unchanged) when it is equal.
  void insert_partner() {
    ASSERT_TRUE(table_.paired);
    ASSERT_FALSE(live_list_.empty());
    const uint32_t ref = live_list_[rng_() % live_list_.size()];
    const uint32_t partner = ref ^ kPairBit;
    if (live_.contains(partner)) return;
    const bool same_key = rng_() % 4 == 0;
    const Key key = same_key ? table_.rows.at(ref) : random_key();
    const bool equal = compare_keys(key, table_.rows.at(ref), 2) == 0;
    const uint64_t modifications = index_->modification_count();
    const Status status = insert_ref(key, partner);
    if (equal) {
      ASSERT_EQ(status.code(), ErrorCode::kInvalidArgument) << status.to_string();
      ASSERT_EQ(index_->modification_count(), modifications);
    } else {
      ASSERT_TRUE(status.ok()) << status.to_string();
    }
  }
  // Paired tables: swaps a random live entry to the other ref of its pair (if that ref is
  // not live under another key), checking that a cursor on the entry stays on it.
  void replace_random() {
    ASSERT_TRUE(table_.paired);
    ASSERT_FALSE(live_list_.empty());
    const size_t i = rng_() % live_list_.size();
    const uint32_t old_ref = live_list_[i];
    const uint32_t new_ref = old_ref ^ kPairBit;
    if (live_.contains(new_ref)) return;
    const Key key = table_.rows.at(old_ref);
    // A cursor on the entry: just after everything before its (key, tie).
    const TestProbe probe(&table_, scheme_, key, 2);
    OrderedIndex::Cursor cursor = index_->seek_before(probe, tie(old_ref));
    if (cursor.valid()) {
      cursor.next();
    } else {
      cursor = index_->first();
    }
    ASSERT_TRUE(cursor.valid());
    ASSERT_EQ(cursor.ref(), old_ref);
    const size_t memory = index_->memory_bytes();
    const uint64_t modifications = index_->modification_count();
    table_.rows[new_ref] = key;
    ASSERT_TRUE(index_->replace_ref(prefix(old_ref), old_ref, new_ref));
    table_.rows.erase(old_ref);  // any later callback on old_ref fails the test
    EXPECT_EQ(cursor.ref(), new_ref);  // in place
    EXPECT_EQ(index_->memory_bytes(), memory);
    EXPECT_EQ(index_->modification_count(), modifications + 1);
    auto it = model_.find(Entry{key, tie(old_ref), old_ref});
    ASSERT_NE(it, model_.end());
    ASSERT_EQ(it->ref, old_ref);
    it->ref = new_ref;
    live_.erase(old_ref);
    live_.insert(new_ref);
    live_list_[i] = new_ref;
  }
  // Replacing absent refs fails and changes nothing: an unused ref, and (paired) the
  // dead partner of a live entry, which names the live entry's (key, tie) place.
  void replace_absent() {
    const uint64_t modifications = index_->modification_count();
    const uint32_t ref = unused_ref();
    const uint32_t new_ref = table_.paired ? ref ^ kPairBit : ref;  // also unused
    table_.rows[ref] = random_key();
    table_.rows[new_ref] = table_.rows[ref];
    EXPECT_FALSE(index_->replace_ref(prefix(ref), ref, new_ref));
    table_.rows.erase(ref);
    table_.rows.erase(new_ref);
    if (table_.paired && !live_list_.empty()) {
      const uint32_t live = live_list_[rng_() % live_list_.size()];
      const uint32_t partner = live ^ kPairBit;
      if (!live_.contains(partner)) {
        table_.rows[partner] = table_.rows.at(live);
        EXPECT_FALSE(index_->replace_ref(prefix(live), partner, live));
        EXPECT_FALSE(index_->erase(prefix(live), partner));
        table_.rows.erase(partner);
      }
    }
    EXPECT_EQ(index_->modification_count(), modifications);
  }
  void erase_random() {
    ASSERT_FALSE(live_list_.empty());
    const size_t i = rng_() % live_list_.size();
    const uint32_t ref = live_list_[i];
    live_list_[i] = live_list_.back();
    live_list_.pop_back();
    ASSERT_TRUE(index_->erase(prefix(ref), ref));
    ASSERT_EQ(model_.erase(Entry{table_.rows.at(ref), tie(ref), ref}), 1u);
    live_.erase(ref);
    table_.rows.erase(ref);
  }
  void erase_absent() {
    const uint32_t ref = unused_ref();
    table_.rows[ref] = random_key();
    EXPECT_FALSE(index_->erase(prefix(ref), ref));
    table_.rows.erase(ref);
    if (!live_list_.empty()) {  // a live ref under a wrong prefix is not that entry
      const uint32_t live = live_list_[rng_() % live_list_.size()];
      EXPECT_FALSE(index_->erase(prefix(live) + 1, live));
    }
  }

  // Compares a cursor with a model position (end() meaning invalid).
  void expect_at(OrderedIndex::Cursor cursor, Model::const_iterator expected,
                 const char* what) {
    if (expected == model_.end()) {
      EXPECT_FALSE(cursor.valid()) << what;
      return;
    }
    ASSERT_TRUE(cursor.valid()) << what;
    EXPECT_EQ(cursor.ref(), expected->ref) << what;
  }
  // Walks up to `steps` entries in one direction from both and compares.
  void expect_walk(OrderedIndex::Cursor cursor, Model::const_iterator expected, bool forward,
                   int steps) {
    for (int i = 0; i < steps; ++i) {
      expect_at(cursor, expected, "walk");
      if (!cursor.valid() || expected == model_.end()) return;
      if (forward) {
        cursor.next();
        ++expected;
      } else {
        cursor.prev();
        expected = expected == model_.begin() ? model_.end() : std::prev(expected);
      }
    }
  }
  Model::const_iterator before(Model::const_iterator it) const {
    return it == model_.begin() ? model_.end() : std::prev(it);
  }

  void check_bounds() {
    const int columns = scheme_.exact ? 2 : 1 + static_cast<int>(rng_() % 2);
    const Key key = random_key(3);
    const TestProbe probe(&table_, scheme_, key, columns);
    const int steps = static_cast<int>(rng_() % 80);
    const auto at_or_after = model_.lower_bound(Marker{key, columns, -1});
    const auto after = model_.lower_bound(Marker{key, columns, +1});
    expect_at(index_->lower_bound(probe, true), at_or_after, "lower_bound inclusive");
    expect_at(index_->lower_bound(probe, false), after, "lower_bound exclusive");
    expect_at(index_->upper_bound(probe, true), before(after), "upper_bound inclusive");
    expect_at(index_->upper_bound(probe, false), before(at_or_after), "upper_bound exclusive");
    expect_walk(index_->lower_bound(probe, true), at_or_after, true, steps);
    expect_walk(index_->upper_bound(probe, true), before(after), false, steps);
    if (scheme_.exact) {
      EXPECT_EQ(probe.calls, 0u);
    }
  }
  void check_seeks() {
    Key key;
    uint32_t t;
    if (!live_list_.empty() && rng_() % 2 == 0) {  // an entry that is present
      const uint32_t ref = live_list_[rng_() % live_list_.size()];
      key = table_.rows.at(ref);
      t = tie(ref);
    } else {  // a (key, tie) that is absent
      key = random_key(3);
      t = tie(unused_ref());
    }
    const TestProbe probe(&table_, scheme_, key, 2);
    const auto upper = model_.upper_bound(Entry{key, t, 0});
    const auto lower = model_.lower_bound(Entry{key, t, 0});
    expect_at(index_->seek_after(probe, t), upper, "seek_after");
    expect_at(index_->seek_before(probe, t), before(lower), "seek_before");
    expect_walk(index_->seek_after(probe, t), upper, true, 5);
    expect_walk(index_->seek_before(probe, t), before(lower), false, 5);
    if (scheme_.exact) {
      EXPECT_EQ(probe.calls, 0u);
    }
  }
  void check_everything() {
    const uint64_t calls = table_.calls;
    const Status status = index_->check_invariants();
    ASSERT_TRUE(status.ok()) << status.to_string();
    table_.calls = calls;  // the checker may call the comparator; operations may not
    ASSERT_EQ(index_->size(), model_.size());
    // Full scans in both directions.
    auto expected = model_.begin();
    for (auto cursor = index_->first(); cursor.valid(); cursor.next(), ++expected) {
      ASSERT_NE(expected, model_.end());
      ASSERT_EQ(cursor.ref(), expected->ref);
    }
    ASSERT_EQ(expected, model_.end());
    auto reverse = model_.rbegin();
    for (auto cursor = index_->last(); cursor.valid(); cursor.prev(), ++reverse) {
      ASSERT_NE(reverse, model_.rend());
      ASSERT_EQ(cursor.ref(), reverse->ref);
    }
    ASSERT_EQ(reverse, model_.rend());
  }

  const Scheme scheme_;
  std::mt19937_64 rng_;
  TestTable table_;
  std::unique_ptr<GlobalMemory> memory_;
  std::unique_ptr<OrderedIndex> index_;
  Model model_;
  std::set<uint32_t> live_;
  std::vector<uint32_t> live_list_;
};

TEST(OrderedIndex, EmptyIndex) {
  Harness h(kColliding, 4, 1);
  OrderedIndex& index = *h.index_;
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.height(), 0u);
  EXPECT_EQ(index.memory_bytes(), 0u);
  EXPECT_FALSE(index.first().valid());
  EXPECT_FALSE(index.last().valid());
  const TestProbe probe(&h.table_, kColliding, Key{1, "a"}, 2);
  EXPECT_FALSE(index.lower_bound(probe, true).valid());
  EXPECT_FALSE(index.upper_bound(probe, false).valid());
  EXPECT_FALSE(index.seek_after(probe, 7).valid());
  EXPECT_FALSE(index.seek_before(probe, 7).valid());
  EXPECT_FALSE(index.erase(5, 7));
  EXPECT_TRUE(index.check_invariants().ok());
}

TEST(OrderedIndex, DuplicateRefIsRejectedAndCountsOnlyChanges) {
  Harness h(kColliding, 4, 2);
  ASSERT_TRUE(h.insert(Key{3, "ab"}).ok());
  const uint32_t ref = h.live_list_[0];
  EXPECT_EQ(h.index_->modification_count(), 1u);
  const Status again = h.index_->insert(h.prefix(ref), ref);
  EXPECT_EQ(again.code(), ErrorCode::kInvalidArgument);
  h.table_.rows[ref + 1] = Key{3, "ab"};  // an equal key under another ref: not present
  EXPECT_FALSE(h.index_->erase(h.prefix(ref), ref + 1));
  EXPECT_EQ(h.index_->modification_count(), 1u);
  EXPECT_TRUE(h.index_->erase(h.prefix(ref), ref));
  EXPECT_EQ(h.index_->modification_count(), 2u);
  EXPECT_FALSE(h.index_->erase(h.prefix(ref), ref));
  EXPECT_EQ(h.index_->size(), 0u);
  EXPECT_EQ(h.index_->memory_bytes(), 0u);
}

// Grows a random tree to `peak` entries, then shrinks it to empty, with queries and
// invariant checks throughout.
void run_random_model(const Scheme& scheme, uint64_t seed, size_t peak, int queries_per_op) {
  Harness h(scheme, 256, seed);
  size_t ops = 0;
  for (int phase = 0; phase < 2; ++phase) {
    const bool growing = phase == 0;
    while (growing ? h.model_.size() < peak : !h.model_.empty()) {
      const uint64_t dice = h.rng_() % 100;
      if (growing ? dice < 70 : dice < 25) {
        const Status status = h.insert(h.random_key());
        ASSERT_TRUE(status.ok()) << status.to_string();
      } else if (!h.live_list_.empty() && dice < 97) {
        h.erase_random();
      } else {
        h.erase_absent();
      }
      for (int q = 0; q < queries_per_op; ++q) {
        h.check_bounds();
        h.check_seeks();
      }
      if (++ops % 512 == 0) h.check_everything();
      if (scheme.exact) {
        ASSERT_EQ(h.table_.calls, 0u) << "prefix_exact index called back";
      }
      if (::testing::Test::HasFatalFailure()) return;
    }
    h.check_everything();
  }
  EXPECT_EQ(h.index_->height(), 0u);
  EXPECT_EQ(h.index_->memory_bytes(), 0u);
}

class OrderedIndexRandom : public ::testing::TestWithParam<uint64_t> {};

TEST_P(OrderedIndexRandom, CollidingPrefixesSmall) {
  run_random_model(kColliding, GetParam(), 300 + GetParam() * 7, 1);
}

TEST_P(OrderedIndexRandom, CollidingPrefixesThreeLevels) {
  run_random_model(kColliding, 1000 + GetParam(), 4000, 1);
}

TEST_P(OrderedIndexRandom, ExactPrefixes) {
  run_random_model(kExact, 2000 + GetParam(), 3000, 1);
}

INSTANTIATE_TEST_SUITE_P(Seeds, OrderedIndexRandom, ::testing::Range<uint64_t>(1, 13));

// Height 4 needs tens of thousands of entries; check only at a few points (the checker
// is linear).
TEST(OrderedIndex, FourLevelsGrowAndShrink) {
  Harness h(kExact, 2048, 99);
  size_t max_height = 0;
  for (int i = 0; i < 60000; ++i) {
    ASSERT_TRUE(h.insert(h.random_key(100000)).ok());
    max_height = std::max(max_height, h.index_->height());
    if (i % 20000 == 0) h.check_everything();
    if (i % 64 == 0) h.check_bounds();
  }
  h.check_everything();
  EXPECT_GE(max_height, 4u);
  size_t last_height = h.index_->height();
  int step = 0;
  while (!h.live_list_.empty()) {
    h.erase_random();
    EXPECT_LE(h.index_->height(), last_height);  // never grows while erasing
    last_height = h.index_->height();
    if (++step % 64 == 0) h.check_bounds();
    if (step % 20000 == 0) h.check_everything();
  }
  h.check_everything();
  EXPECT_EQ(h.index_->height(), 0u);
  EXPECT_EQ(h.index_->memory_bytes(), 0u);
  EXPECT_EQ(h.memory_->usage(MemoryArea::kDataMemory).used_pages, 0u);
}

// Paired ties: inserts, partner inserts (same tie, other key), erases and in-place ref
// swaps within a pair, against the (key, tie) model. Grows to `peak`, then shrinks.
void run_paired_model(const Scheme& scheme, uint64_t seed, size_t peak, int queries_every) {
  Harness h(scheme, 512, seed, /*paired=*/true);
  size_t ops = 0;
  size_t replaced = 0;
  for (int phase = 0; phase < 2; ++phase) {
    const bool growing = phase == 0;
    while (growing ? h.model_.size() < peak : !h.model_.empty()) {
      const uint64_t dice = h.rng_() % 100;
      if (h.live_list_.empty() || dice < (growing ? 45u : 15u)) {
        const Status status = h.insert(h.random_key());
        ASSERT_TRUE(status.ok()) << status.to_string();
      } else if (dice < (growing ? 55u : 25u)) {
        h.insert_partner();
      } else if (dice < 60) {
        h.erase_random();
      } else if (dice < 97) {
        h.replace_random();
        ++replaced;
      } else {
        h.replace_absent();
        h.erase_absent();
      }
      if (++ops % queries_every == 0) {
        h.check_bounds();
        h.check_seeks();
      }
      if (ops % 1024 == 0) h.check_everything();
      if (scheme.exact) {
        ASSERT_EQ(h.table_.calls, 0u) << "prefix_exact index called back";
      }
      if (::testing::Test::HasFatalFailure()) return;
    }
    if (growing) {
      EXPECT_GE(h.index_->height(), peak >= 3000 ? 3u : 2u);
    }
    h.check_everything();
  }
  EXPECT_GT(replaced, peak);
  EXPECT_EQ(h.index_->height(), 0u);
  EXPECT_EQ(h.index_->memory_bytes(), 0u);
}

class OrderedIndexPaired : public ::testing::TestWithParam<uint64_t> {};

TEST_P(OrderedIndexPaired, CollidingPrefixesSmall) {
  run_paired_model(kColliding, 3000 + GetParam(), 500, 1);
}

TEST_P(OrderedIndexPaired, CollidingPrefixesThreeLevels) {
  run_paired_model(kColliding, 4000 + GetParam(), 5000, 4);
}

TEST_P(OrderedIndexPaired, ExactPrefixesThreeLevels) {
  run_paired_model(kExact, 5000 + GetParam(), 5000, 4);
}

INSTANTIATE_TEST_SUITE_P(Seeds, OrderedIndexPaired, ::testing::Range<uint64_t>(1, 7));

// Sequential and clustered workloads, which insert and erase serve from the leaf of the
// previous insert or erase without a descent when they can: ascending and descending runs
// of keys (several entries per key, tied in ascending or random ref order), a queue that
// erases its oldest entries, newest-first erases, and, next to the entries just inserted,
// rejected duplicate refs, rejected equal (key, tie) partners and erases of absent refs;
// all against the model. Runs jump elsewhere now and then, so the hint leaf is often
// wrong, and merges free hint leaves (check_invariants() checks that hints are live).
void run_stream_model(const Scheme& scheme, uint64_t seed, bool paired) {
  Harness h(scheme, 512, seed, paired);
  std::deque<uint32_t> queue;  // refs in insertion order
  uint32_t next_ref = 1;
  int32_t a = 0;
  int direction = 1;
  const uint32_t limit = 1500 + static_cast<uint32_t>(seed % 4) * 1000;
  auto fresh_ref = [&](bool ascending) {
    for (;;) {
      const uint32_t ref = ascending ? next_ref++ : h.unused_ref();
      if (!h.live_.contains(ref) && !(paired && h.live_.contains(ref ^ kPairBit))) return ref;
    }
  };
  auto erase_ref = [&](uint32_t ref) {
    ASSERT_TRUE(h.index_->erase(h.prefix(ref), ref)) << ref;
    ASSERT_EQ(h.model_.erase(Entry{h.table_.rows.at(ref), h.tie(ref), ref}), 1u);
    h.live_.erase(ref);
    h.table_.rows.erase(ref);
    auto it = std::find(h.live_list_.begin(), h.live_list_.end(), ref);
    ASSERT_NE(it, h.live_list_.end());
    *it = h.live_list_.back();
    h.live_list_.pop_back();
  };
  auto newest_live = [&]() -> uint32_t {
    while (!queue.empty() && !h.live_.contains(queue.back())) queue.pop_back();
    return queue.empty() ? 0 : queue.back();
  };
  for (int op = 0; op < 12000; ++op) {
    const uint64_t dice = h.rng_() % 100;
    const bool growing = h.model_.size() < limit;
    if (dice < (growing ? 55u : 35u)) {
      // The next key of the run: a moves on every few entries, b is random.
      if (h.rng_() % 3 == 0) a += direction;
      if (a > scheme.a_range || a < -scheme.a_range) {
        a = direction > 0 ? -scheme.a_range : scheme.a_range;
      }
      Key key = h.random_key();
      key.a = a;
      const uint32_t ref = fresh_ref(h.rng_() % 4 != 0);
      const Status status = h.insert_ref(key, ref);
      ASSERT_TRUE(status.ok()) << status.to_string();
      queue.push_back(ref);
    } else if (dice < 58) {
      direction = -direction;
    } else if (dice < 60) {
      a = h.random_key().a;  // a run elsewhere
    } else if (dice < (growing ? 75u : 90u)) {
      while (!queue.empty() && !h.live_.contains(queue.front())) queue.pop_front();
      if (queue.empty()) continue;
      erase_ref(queue.front());
      queue.pop_front();
    } else if (dice < 93) {
      const uint32_t ref = newest_live();
      if (ref == 0) continue;
      erase_ref(ref);
      queue.pop_back();
    } else if (dice < 96) {
      // Rejected, and nothing changes: the newest ref again; (paired) its partner under the
      // same key, which has the same key and tie.
      const uint32_t ref = newest_live();
      if (ref == 0) continue;
      const uint64_t modifications = h.index_->modification_count();
      EXPECT_EQ(h.index_->insert(h.prefix(ref), ref).code(), ErrorCode::kInvalidArgument);
      const uint32_t partner = ref ^ kPairBit;
      if (paired && !h.live_.contains(partner)) {
        h.table_.rows[partner] = h.table_.rows.at(ref);
        EXPECT_EQ(h.index_->insert(h.prefix(ref), partner).code(), ErrorCode::kInvalidArgument);
        EXPECT_FALSE(h.index_->erase(h.prefix(ref), partner));
        h.table_.rows.erase(partner);
      }
      EXPECT_EQ(h.index_->modification_count(), modifications);
    } else {
      // Absent: another ref under the newest entry's key, and the newest under a wrong
      // prefix.
      const uint32_t ref = newest_live();
      if (ref == 0) continue;
      const uint64_t modifications = h.index_->modification_count();
      const uint32_t other = fresh_ref(false);
      h.table_.rows[other] = h.table_.rows.at(ref);
      EXPECT_FALSE(h.index_->erase(h.prefix(ref), other));
      h.table_.rows.erase(other);
      EXPECT_FALSE(h.index_->erase(h.prefix(ref) + 1, ref));
      EXPECT_EQ(h.index_->modification_count(), modifications);
    }
    if (op % 64 == 0) {
      h.check_bounds();
      h.check_seeks();
    }
    if (op % 256 == 0) h.check_everything();
    if (scheme.exact) {
      ASSERT_EQ(h.table_.calls, 0u) << "prefix_exact index called back";
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
  h.check_everything();
  while (!h.live_list_.empty()) {
    h.erase_random();
    if (::testing::Test::HasFatalFailure()) return;
  }
  h.check_everything();
  EXPECT_EQ(h.index_->memory_bytes(), 0u);
}

class OrderedIndexStreams : public ::testing::TestWithParam<uint64_t> {};

TEST_P(OrderedIndexStreams, CollidingPrefixes) {
  run_stream_model(kColliding, GetParam(), false);
}

TEST_P(OrderedIndexStreams, CollidingPrefixesPaired) {
  run_stream_model(kColliding, 100 + GetParam(), true);
}

TEST_P(OrderedIndexStreams, ExactPrefixes) {
  run_stream_model(kExact, 200 + GetParam(), false);
}

TEST_P(OrderedIndexStreams, ExactPrefixesPaired) {
  run_stream_model(kExact, 300 + GetParam(), true);
}

INSTANTIATE_TEST_SUITE_P(Seeds, OrderedIndexStreams, ::testing::Range<uint64_t>(1, 7));

// Replaces every entry of a multi-level tree, walking a cursor over it both ways: every
// first entry of a leaf is some separator, which check_invariants() compares ref for ref.
// Nothing moves (the cursor keeps going), nothing is allocated.
TEST(OrderedIndex, ReplaceEveryEntryInPlace) {
  for (const Scheme& scheme : {kColliding, kExact}) {
    Harness h(scheme, 1024, 7, /*paired=*/true);
    for (int i = 0; i < 30000; ++i) {
      ASSERT_TRUE(h.insert(h.random_key(scheme.exact ? 100000 : 0)).ok());
    }
    ASSERT_GE(h.index_->height(), 3u);
    h.check_everything();
    const size_t memory = h.index_->memory_bytes();
    const size_t used_pages = h.memory_->usage(MemoryArea::kDataMemory).used_pages;
    for (const bool forward : {true, false}) {
      size_t replaced = 0;
      for (auto c = forward ? h.index_->first() : h.index_->last(); c.valid();
           forward ? c.next() : c.prev()) {
        const uint32_t old_ref = c.ref();
        const uint32_t new_ref = old_ref ^ kPairBit;
        h.table_.rows[new_ref] = h.table_.rows.at(old_ref);
        ASSERT_TRUE(h.index_->replace_ref(h.prefix(old_ref), old_ref, new_ref));
        h.table_.rows.erase(old_ref);
        ASSERT_EQ(c.ref(), new_ref);
        auto it = h.model_.find(Entry{h.table_.rows.at(new_ref), h.tie(new_ref), 0});
        ASSERT_NE(it, h.model_.end());
        it->ref = new_ref;
        h.live_.erase(old_ref);
        h.live_.insert(new_ref);
        ++replaced;
      }
      EXPECT_EQ(replaced, h.model_.size());
      h.live_list_.assign(h.live_.begin(), h.live_.end());
      h.check_everything();
      EXPECT_EQ(h.index_->memory_bytes(), memory);
      EXPECT_EQ(h.memory_->usage(MemoryArea::kDataMemory).used_pages, used_pages);
      if (::testing::Test::HasFatalFailure()) return;
    }
    for (int i = 0; i < 200; ++i) h.check_seeks();
    // Erasing under the new refs empties the tree: nothing still names an old ref.
    while (!h.live_list_.empty()) h.erase_random();
    h.check_everything();
    EXPECT_EQ(h.index_->memory_bytes(), 0u);
  }
}

// replace_ref works with node memory exhausted (it never allocates).
TEST(OrderedIndex, ReplaceNeedsNoMemory) {
  Harness h(kColliding, 2, 11, /*paired=*/true);
  Status status;
  while ((status = h.insert(h.random_key())).ok()) {
  }
  ASSERT_EQ(status.code(), ErrorCode::kTableFull);
  ASSERT_GE(h.index_->height(), 2u);
  for (size_t i = 0; i < 3 * h.live_list_.size(); ++i) h.replace_random();
  h.check_everything();
}

// Equal keys order by tie, not by ref: an entry named by either ref of a pair sits at one
// place, and a pair's two refs may coexist only under different keys.
TEST(OrderedIndex, PairedTiesOrderEqualKeys) {
  Harness h(kColliding, 8, 3, /*paired=*/true);
  const Key key{5, "ab"};
  // Ties 10, 20, 30; the refs of 20 and 30 have the pair bit, so ref order differs.
  for (const uint32_t ref : {10u, 20u | kPairBit, 30u | kPairBit}) {
    ASSERT_TRUE(h.insert_ref(key, ref).ok());
  }
  ASSERT_TRUE(h.insert_ref(key, 25u).ok());  // ref 25 < 20|bit, tie 25 > 20
  std::vector<uint32_t> order;
  for (auto c = h.index_->first(); c.valid(); c.next()) order.push_back(c.ref());
  EXPECT_EQ(order, (std::vector<uint32_t>{10u, 20u | kPairBit, 25u, 30u | kPairBit}));
  // The partner of a live entry under the same key is refused; under another key it fits.
  h.table_.rows[20u] = key;
  EXPECT_EQ(h.index_->insert(h.prefix(20u), 20u).code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(h.index_->erase(h.prefix(20u), 20u));
  h.table_.rows.erase(20u);
  ASSERT_TRUE(h.insert_ref(Key{5, "b"}, 20u).ok());
  // Seeks take tie values.
  const TestProbe probe(&h.table_, kColliding, key, 2);
  EXPECT_EQ(h.index_->seek_after(probe, 20u).ref(), 25u);
  EXPECT_EQ(h.index_->seek_before(probe, 25u).ref(), 20u | kPairBit);
  EXPECT_EQ(h.index_->seek_after(probe, 26u).ref(), 30u | kPairBit);
  // Swap 20|bit -> 20 is not allowed while 20 is live; swap 30|bit -> 30 is.
  h.table_.rows[30u] = key;
  EXPECT_TRUE(h.index_->replace_ref(h.prefix(30u), 30u | kPairBit, 30u));
  h.table_.rows.erase(30u | kPairBit);
  EXPECT_EQ(h.index_->last().ref(), 20u);  // (5, "b") is last
  EXPECT_EQ(h.index_->seek_before(probe, 0xFFFFFFFFu).ref(), 30u);
  EXPECT_TRUE(h.index_->check_invariants().ok());
}

// tie_key is asked only on key ties: distinct keys never call it (inserts, erases, bounds).
TEST(OrderedIndex, TieKeyOnlyOnKeyTies) {
  Harness h(kColliding, 16, 4, /*paired=*/true);
  std::vector<Key> keys;
  for (int a = -40; a <= 40; ++a) {
    for (const char* b : {"", "a", "b", "aa", "ab", "ba", "bb"}) keys.push_back(Key{a, b});
  }
  std::shuffle(keys.begin(), keys.end(), h.rng_);
  for (const Key& key : keys) ASSERT_TRUE(h.insert(key).ok());
  ASSERT_GE(h.index_->height(), 2u);
  for (int i = 0; i < 100; ++i) h.check_bounds();
  while (h.live_list_.size() > keys.size() / 2) h.erase_random();
  EXPECT_GT(h.table_.calls, 0u);
  EXPECT_EQ(h.table_.tie_calls, 0u);
  h.check_everything();
}

// A fixed table: a in 0..9, b in {"", "a", "b"}, three rows (refs) per key.
class FixedTable : public ::testing::Test {
 protected:
  void SetUp() override {
    memory_ = std::move(GlobalMemory::create(memory_config(8)).value());
    index_ = std::make_unique<OrderedIndex>(memory_.get(), &table_, false);
    uint32_t ref = 0x7FFFFFF0u;  // refs straddle 2^31: ties must use unsigned order
    for (int a = 0; a < 10; ++a) {
      for (const char* b : {"", "a", "b"}) {
        for (int copy = 0; copy < 3; ++copy) {
          table_.rows[ref] = Key{a, b};
          refs_.push_back(ref);
          ASSERT_TRUE(index_->insert(prefix_of(kColliding, a), ref).ok());
          ref += 3;
        }
      }
    }
    ASSERT_TRUE(index_->check_invariants().ok());
  }
  TestProbe probe(int a, const char* b, int columns) const {
    return TestProbe(&table_, kColliding, Key{a, b}, columns);
  }
  // The refs from `from` to `to` (both cursors, walking forward), or backward.
  std::vector<uint32_t> scan(OrderedIndex::Cursor from, OrderedIndex::Cursor to,
                             bool forward) const {
    std::vector<uint32_t> refs;
    const uint32_t stop = to.ref();
    for (auto c = from; c.valid(); forward ? c.next() : c.prev()) {
      refs.push_back(c.ref());
      if (c.ref() == stop) break;
    }
    return refs;
  }
  // Rows are inserted in key order, so refs_[i] is the i-th entry.
  std::vector<uint32_t> expected(size_t first, size_t last_inclusive) const {
    return {refs_.begin() + static_cast<ptrdiff_t>(first),
            refs_.begin() + static_cast<ptrdiff_t>(last_inclusive) + 1};
  }
  static size_t position(int a, int b_index, int copy) {
    return static_cast<size_t>(a * 9 + b_index * 3 + copy);
  }

  TestTable table_;
  std::unique_ptr<GlobalMemory> memory_;
  std::unique_ptr<OrderedIndex> index_;
  std::vector<uint32_t> refs_;
};

TEST_F(FixedTable, PartialKeyRangesInclusiveAndExclusive) {
  // a >= 3 AND a <= 5 (leading column only): all of a = 3, 4, 5.
  auto from = index_->lower_bound(probe(3, "", 1), true);
  auto to = index_->upper_bound(probe(5, "", 1), true);
  EXPECT_EQ(scan(from, to, true), expected(position(3, 0, 0), position(5, 2, 2)));
  // a > 3 AND a < 5: only a = 4.
  from = index_->lower_bound(probe(3, "", 1), false);
  to = index_->upper_bound(probe(5, "", 1), false);
  EXPECT_EQ(scan(from, to, true), expected(position(4, 0, 0), position(4, 2, 2)));
  // Backward: a <= 5 down to a >= 3.
  auto back = scan(index_->upper_bound(probe(5, "", 1), true),
                   index_->lower_bound(probe(3, "", 1), true), false);
  std::reverse(back.begin(), back.end());
  EXPECT_EQ(back, expected(position(3, 0, 0), position(5, 2, 2)));
  // Beyond the ends.
  EXPECT_FALSE(index_->lower_bound(probe(9, "", 1), false).valid());
  EXPECT_FALSE(index_->upper_bound(probe(0, "", 1), false).valid());
  EXPECT_EQ(index_->lower_bound(probe(-5, "", 1), false).ref(), refs_.front());
  EXPECT_EQ(index_->upper_bound(probe(12, "", 1), true).ref(), refs_.back());
}

TEST_F(FixedTable, FullKeyRanges) {
  // (4, "a") <= key <= (6, "")
  auto from = index_->lower_bound(probe(4, "a", 2), true);
  auto to = index_->upper_bound(probe(6, "", 2), true);
  EXPECT_EQ(scan(from, to, true), expected(position(4, 1, 0), position(6, 0, 2)));
  // (4, "a") < key < (6, "")
  from = index_->lower_bound(probe(4, "a", 2), false);
  to = index_->upper_bound(probe(6, "", 2), false);
  EXPECT_EQ(scan(from, to, true), expected(position(4, 2, 0), position(5, 2, 2)));
  // A key between stored keys: (4, "aa") is after (4, "a"), before (4, "b").
  EXPECT_EQ(index_->lower_bound(probe(4, "aa", 2), true).ref(), refs_[position(4, 2, 0)]);
  EXPECT_EQ(index_->upper_bound(probe(4, "aa", 2), true).ref(), refs_[position(4, 1, 2)]);
}

TEST_F(FixedTable, SeekAfterAndBeforePresentAndAbsent) {
  // Present entry: resume exactly after / before it.
  const size_t at = position(2, 1, 1);
  EXPECT_EQ(index_->seek_after(probe(2, "a", 2), refs_[at]).ref(), refs_[at + 1]);
  EXPECT_EQ(index_->seek_before(probe(2, "a", 2), refs_[at]).ref(), refs_[at - 1]);
  // The entry was erased since: the scan resumes at its neighbours.
  ASSERT_TRUE(index_->erase(prefix_of(kColliding, 2), refs_[at]));
  EXPECT_EQ(index_->seek_after(probe(2, "a", 2), refs_[at]).ref(), refs_[at + 1]);
  EXPECT_EQ(index_->seek_before(probe(2, "a", 2), refs_[at]).ref(), refs_[at - 1]);
  // Absent refs order among equal keys by unsigned value.
  EXPECT_EQ(index_->seek_after(probe(2, "a", 2), 0).ref(), refs_[position(2, 1, 0)]);
  EXPECT_EQ(index_->seek_after(probe(2, "a", 2), 0xFFFFFFFFu).ref(), refs_[position(2, 2, 0)]);
  EXPECT_EQ(index_->seek_before(probe(2, "a", 2), 0).ref(), refs_[position(2, 0, 2)]);
  // Absent key.
  EXPECT_EQ(index_->seek_after(probe(2, "ab", 2), 0).ref(), refs_[position(2, 2, 0)]);
  EXPECT_EQ(index_->seek_before(probe(2, "ab", 2), 0).ref(), refs_[position(2, 1, 2)]);
  // Ends.
  EXPECT_FALSE(index_->seek_after(probe(9, "b", 2), refs_.back()).valid());
  EXPECT_FALSE(index_->seek_before(probe(0, "", 2), refs_.front()).valid());
  EXPECT_TRUE(index_->check_invariants().ok());
}

// Ascending and descending key orders leave leaves (nearly) full.
TEST(OrderedIndex, SequentialInsertsPackLeaves) {
  for (const bool ascending : {true, false}) {
    auto memory = std::move(GlobalMemory::create(memory_config(1024)).value());
    OrderedIndex index(memory.get(), nullptr, true);
    constexpr uint32_t kCount = 200000;
    for (uint32_t i = 0; i < kCount; ++i) {
      const uint32_t key = ascending ? i : kCount - i;
      ASSERT_TRUE(index.insert(key, i).ok());
    }
    const Status status = index.check_invariants();
    ASSERT_TRUE(status.ok()) << status.to_string();
    const double bytes_per_entry = static_cast<double>(index.memory_bytes()) / kCount;
    EXPECT_LT(bytes_per_entry, 9.5) << (ascending ? "ascending" : "descending");
  }
}

TEST(OrderedIndex, RandomInsertsStayUnderTwelveBytesPerEntry) {
  auto memory = std::move(GlobalMemory::create(memory_config(1024)).value());
  OrderedIndex index(memory.get(), nullptr, true);
  std::mt19937_64 rng(5);
  constexpr uint32_t kCount = 300000;
  for (uint32_t i = 0; i < kCount; ++i) {
    ASSERT_TRUE(index.insert(static_cast<uint32_t>(rng()), i).ok());
  }
  ASSERT_TRUE(index.check_invariants().ok());
  EXPECT_LT(static_cast<double>(index.memory_bytes()) / kCount, 12.0);
}

// Inserts until node memory runs out, across memory sizes that make the failing split
// chain one, two or three nodes long; every failure must leave the tree unchanged.
TEST(OrderedIndex, ExhaustionIsTableFullAndLeavesTreeUnchanged) {
  for (size_t pages = 1; pages <= 6; ++pages) {
    for (const Scheme& scheme : {kColliding, kExact}) {
      Harness h(scheme, pages, pages);
      int failures = 0;
      for (int attempt = 0; attempt < 40000 && failures < 200; ++attempt) {
        const size_t size_before = h.index_->size();
        const uint64_t modifications_before = h.index_->modification_count();
        Key key = h.random_key(scheme.exact ? 1000000 : 0);
        const Status status = h.insert(key);
        if (status.ok()) continue;
        ++failures;
        ASSERT_EQ(status.code(), ErrorCode::kTableFull) << status.to_string();
        ASSERT_EQ(h.index_->size(), size_before);
        ASSERT_EQ(h.index_->modification_count(), modifications_before);
        if (failures % 50 == 1) h.check_everything();
      }
      ASSERT_GT(failures, 0) << pages << " pages never filled";
      h.check_everything();
      EXPECT_LE(h.index_->memory_bytes(), pages * kPageSize);
      // Freeing entries makes room again.
      const size_t half = h.live_list_.size() / 2;
      for (size_t i = 0; i < half; ++i) h.erase_random();
      h.check_everything();
      for (int i = 0; i < 100; ++i) ASSERT_TRUE(h.insert(h.random_key()).ok());
      h.check_everything();
    }
  }
}

TEST(OrderedIndex, DestructorReturnsEveryPage) {
  auto memory = std::move(GlobalMemory::create(memory_config(64)).value());
  {
    OrderedIndex index(memory.get(), nullptr, true, MemoryArea::kDataMemory);
    for (uint32_t i = 0; i < 50000; ++i) ASSERT_TRUE(index.insert(i * 7919u, i).ok());
    EXPECT_EQ(memory->usage(MemoryArea::kDataMemory).used_pages * kPageSize,
              index.memory_bytes());
  }
  EXPECT_EQ(memory->usage(MemoryArea::kDataMemory).used_pages, 0u);
}

TEST(OrderedIndex, CursorCrossesLeavesBothWays) {
  auto memory = std::move(GlobalMemory::create(memory_config(16)).value());
  OrderedIndex index(memory.get(), nullptr, true);
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_TRUE(index.insert(i / 2, i).ok());
  ASSERT_GE(index.height(), 2u);
  uint32_t expected = 0;
  for (auto c = index.first(); c.valid(); c.next()) ASSERT_EQ(c.ref(), expected++);
  EXPECT_EQ(expected, 1000u);
  for (auto c = index.last(); c.valid(); c.prev()) ASSERT_EQ(c.ref(), --expected);
  EXPECT_EQ(expected, 0u);
}

}  // namespace
}  // namespace duo::storage
