// Private to the fragment implementation (fragment*.cc): operation, lock and transaction
// records, and the ordered-index key adaptors. Not part of the storage API.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "storage/fragment/fragment.h"

namespace duo::storage {

inline constexpr uint32_t kOpEntryBit = 0x80000000u;  // ordered-index entry names an op image
inline constexpr VarRef kNoVar = 0xFFFFFFFFu;
inline constexpr uint64_t kHashSeed = 0x9E3779B97F4A7C15ull;  // primary-key hash (stable)

[[noreturn]] inline void invariant_failed(const char* what) {
  std::fprintf(stderr, "Fragment invariant failed: %s\n", what);
  std::abort();  // corruption must not spread
}

// Row header flag of a node-restart copy (fragment_copy.cc): the live replica named the
// row (whole or by key) during the fragment's copy. In memory only (checkpoints store
// columns, not header flags); a fresh slot starts without it (insert sets kRowAllocated
// alone). Beside RowLayout's flags, which use bits 0-2.
inline constexpr uint32_t kRowCopySeen = 1u << 3;

enum class OpState : uint8_t { kWaiting, kReady, kPrepared, kCommitted, kAborted };

// What a parked operation needs to run again from its key.
struct Fragment::PendingRequest {
  OpType type;
  LockMode mode;
  AttrValues key_or_row;
  AttrValues values;
  bool has_values = false;
  std::string program;  // encoded InterpretedUpdate
  bool has_program = false;
  std::vector<uint16_t> columns;
};

struct Fragment::Operation {
  OpId id = kNullId;
  TxId tx = kNullId;
  OpType type = OpType::kRead;
  LockMode mode = LockMode::kCommittedRead;
  OpState state = OpState::kPrepared;
  bool writes = false;         // insert/update/delete effect on the row chain
  bool is_delete = false;
  bool image_in_slot = false;  // fresh insert: the version is the slot itself
  RowRef row = kNoRef;
  uint32_t lock_id = kNullId;       // lock record this op is a holder of
  uint32_t wait_lock_id = kNullId;  // lock record whose queue this op waits in
  OpId next_in_tx = kNullId;
  OpId prev_write = kNullId;   // older write of the same tx on the same row
  OpId next_holder = kNullId;
  OpId next_waiter = kNullId;
  uint8_t* image = nullptr;    // TransactionMemory block: fixed part then var part
  uint32_t image_var_size = 0;
  uint64_t entry_bits = 0;     // ordered index i has an entry for this op's image
  VarRef reserved_var = kNoVar;
  disk::DiskOpId disk_op = disk::kNoDiskOp;  // disk part reservation (writes, with disk parts)
  std::unique_ptr<PendingRequest> pending;
};

struct Fragment::RowLock {
  RowRef row = kNoRef;
  OpId holders = kNullId;     // ops holding a lock on the row (any mode)
  OpId waiters_head = kNullId;
  OpId waiters_tail = kNullId;
  OpId write_head = kNullId;  // newest write op (all writes belong to one tx)
};

struct Fragment::LocalTx {
  OpId ops_head = kNullId;
  bool committing = false;
};

// ---------------------------------------------------------------------------------------
// Ordered index key access.

class Fragment::IndexComparator final : public KeyComparator {
 public:
  IndexComparator(const Fragment* fragment, int index) : fragment_(fragment), index_(index) {}
  int compare_entries(uint32_t a, uint32_t b) const override {
    return fragment_->compare_index_keys(index_, fragment_->entry_image(a),
                                         fragment_->entry_image(b));
  }
  // Entries of one row tie at the same place, committed or not (see install()).
  uint32_t tie_key(uint32_t ref) const override { return fragment_->entry_row(ref); }

 private:
  const Fragment* fragment_;
  int index_;
};

// A probe over leading index columns given as AttrValues (in index column order), or a
// full key copied from an image.
class Fragment::IndexProbe final : public SearchProbe {
 public:
  IndexProbe(const Fragment* fragment, int index, const AttrValues* values, const RowImage* image)
      : fragment_(fragment), index_(index), values_(values), image_(image) {
    const IndexDef& def = fragment->schema_->ordered_indexes[index];
    ncols_ = values ? std::min(values->size(), def.columns.size()) : def.columns.size();
  }
  uint32_t prefix() const override {
    if (image_) return fragment_->index_prefix(index_, *image_);
    if (ncols_ == 0) return 0;
    const IndexDef& def = fragment_->schema_->ordered_indexes[index_];
    if (values_->entry(0).is_null) return 0;
    bool exact;
    return normalized_prefix(fragment_->schema_->columns[def.columns[0]], values_->value(0), &exact);
  }
  int compare_to(uint32_t ref) const override {
    const RowImage entry = fragment_->entry_image(ref);
    if (image_) return fragment_->compare_index_keys(index_, entry, *image_);
    const IndexDef& def = fragment_->schema_->ordered_indexes[index_];
    for (size_t i = 0; i < ncols_; ++i) {
      const uint16_t col = def.columns[i];
      const ColumnValue a = fragment_->layout_.get(entry, col);
      const bool b_null = values_->entry(i).is_null;
      if (a.is_null || b_null) {
        if (a.is_null && b_null) continue;
        return a.is_null ? -1 : 1;  // NULL sorts first
      }
      const int c = compare_values(fragment_->schema_->columns[col], a.data, values_->value(i));
      if (c != 0) return c;
    }
    return 0;
  }

 private:
  const Fragment* fragment_;
  int index_;
  const AttrValues* values_;
  const RowImage* image_;
  size_t ncols_;
};

}  // namespace duo::storage
