// Fragment: what a node restart's copy of changed rows needs — on the starting node a
// row's commit GCI by key, the "seen" marks, the sweep of rows the live replica no longer
// has and the delete of keys it deleted; on the live replica the delete log (the keys of
// committed deletes with their GCI). ndb-kernel/local_query/local_query_node_restart.cc
// explains the copy and why the starting node deletes exactly the rows the live replica
// deleted since G.
// Thread-compatible, as the whole fragment.
#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "storage/fragment/fragment_records.h"

namespace duo::storage {

Result<RowRef> Fragment::committed_row(const AttrValues& key) const {
  Status status;
  const uint32_t hash = key_hash_of(key, &status);
  DUO_RETURN_IF_ERROR(status);
  const RowRef row = find_row(hash, key);
  if (row == kNoRef || !(row_flags(row) & kRowCommitted)) {
    return Status(ErrorCode::kNotFound, "no committed row with this key");
  }
  return row;
}

Result<uint32_t> Fragment::committed_gci(const AttrValues& key) const {
  DUO_ASSIGN_OR_RETURN(const RowRef row, committed_row(key));
  uint32_t gci;
  std::memcpy(&gci, fixed_.row(row) + kRowGciOffset, 4);
  return gci;
}

Status Fragment::mark_copy_seen(const AttrValues& key) {
  DUO_ASSIGN_OR_RETURN(const RowRef row, committed_row(key));
  set_row_flags(row, row_flags(row) | kRowCopySeen);
  return Status::OK();
}

Status Fragment::set_copied_gci(const AttrValues& key, uint32_t gci) {
  DUO_ASSIGN_OR_RETURN(const RowRef row, committed_row(key));
  std::memcpy(fixed_.row(row) + kRowGciOffset, &gci, 4);
  set_row_flags(row, row_flags(row) | kRowCopySeen);
  return Status::OK();
}

Result<Fragment::CopySweep> Fragment::sweep_unseen(uint32_t gci_max) {
  CopySweep sweep;
  // Keys first, deletes after: the deletes change the slots being walked.
  std::vector<AttrValues> doomed;
  for (RowRef r = fixed_.next_position(0); r != FixedRowStore::kEnd;
       r = fixed_.next_position(r + 1)) {
    const uint32_t flags = row_flags(r);
    if (!(flags & kRowAllocated) || !(flags & kRowCommitted) || (flags & kRowCopySeen)) continue;
    uint32_t gci;
    std::memcpy(&gci, fixed_.row(r) + kRowGciOffset, 4);
    if (gci > gci_max) continue;
    if (row_lock_id(r) != kNullId) {
      ++sweep.busy;
      continue;
    }
    layout_.project(slot_image(r), schema_->primary_key, &doomed.emplace_back());
  }
  DUO_RETURN_IF_ERROR(remove_committed(doomed));
  sweep.deleted = doomed.size();
  return sweep;
}

Result<Fragment::CopySweep> Fragment::remove_unchanged(const RowBatch& keys, uint32_t gci_max) {
  CopySweep sweep;
  std::vector<AttrValues> doomed;
  std::unordered_set<std::string> listed;
  AttrValues key;
  for (size_t i = 0; i < keys.rows(); ++i) {
    const RowBatch::Row source = keys.row(i);
    key.clear();
    for (size_t k = 0; k < source.size(); ++k) {
      if (source.is_null(k)) {
        key.add_null(source.column(k));
      } else {
        key.add(source.column(k), source.value(k));
      }
    }
    Result<RowRef> row = committed_row(key);
    if (!row.ok()) {
      if (!row.status().is(ErrorCode::kNotFound)) return row.take_status();
      continue;  // gone already (its delete came down the chain too)
    }
    uint32_t gci;
    std::memcpy(&gci, fixed_.row(*row) + kRowGciOffset, 4);
    if (gci > gci_max) continue;  // written since G: the live replica's current row
    if (row_lock_id(*row) != kNullId) {
      ++sweep.busy;
      continue;
    }
    // Twice in one batch would be a second delete of a row already gone.
    if (!listed.insert(key.data()).second) continue;
    doomed.push_back(key);
  }
  if (doomed.empty()) return sweep;
  DUO_RETURN_IF_ERROR(remove_committed(doomed));
  sweep.deleted = doomed.size();
  return sweep;
}

Status Fragment::remove_committed(const std::vector<AttrValues>& keys) {
  DUO_ASSIGN_OR_RETURN(TxId tx, begin());
  for (const AttrValues& key : keys) {
    // Unlocked (the callers checked) and this transaction's own: never waits.
    const OpResult result = remove(tx, key);
    if (!result.status.ok() || result.waiting) {
      abort(tx).ignore_error();
      return result.status.ok() ? Status(ErrorCode::kInternal, "copy delete had to wait")
                                : result.status;
    }
  }
  ChangeSink* const sink = std::exchange(change_sink_, nullptr);
  Status committed = commit(tx);
  change_sink_ = sink;
  return committed;
}

void Fragment::clear_copy_marks() {
  for (RowRef r = fixed_.next_position(0); r != FixedRowStore::kEnd;
       r = fixed_.next_position(r + 1)) {
    const uint32_t flags = row_flags(r);
    if (flags & kRowCopySeen) set_row_flags(r, flags & ~kRowCopySeen);
  }
}

// ---------------------------------------------------------------------------------------
// The delete log.

void Fragment::set_enforce_unique(bool on) {
  enforce_unique_ = on;
  // Rows of another moment are coming in (see restart_delete_log()).
  if (!on) restart_delete_log(kDeleteLogUnusable);
}

void Fragment::restart_delete_log(uint32_t floor) {
  delete_log_.clear();
  delete_log_bytes_ = 0;
  delete_log_floor_ = floor;
}

void Fragment::log_delete(RowRef row) {
  if (delete_log_floor_ == kDeleteLogUnusable) return;
  DeletedKey& deleted = delete_log_.emplace_back();
  deleted.gci = commit_gci_;
  layout_.project(slot_image(row), schema_->primary_key, &deleted.key);
  delete_log_bytes_ += sizeof(DeletedKey) + deleted.key.data().size() +
                       deleted.key.size() * sizeof(AttrValues::Entry);
  while (delete_log_bytes_ > delete_log_max_bytes_ && !delete_log_.empty()) {
    // Deletes of this GCI may be gone from the log now: it is complete above it only.
    const DeletedKey& oldest = delete_log_.front();
    delete_log_floor_ = std::max(delete_log_floor_, oldest.gci);
    delete_log_bytes_ -= sizeof(DeletedKey) + oldest.key.data().size() +
                         oldest.key.size() * sizeof(AttrValues::Entry);
    delete_log_.pop_front();
  }
}

Result<std::vector<AttrValues>> Fragment::deleted_since(uint32_t gci) const {
  if (delete_log_floor_ > gci) {
    return Status(
        ErrorCode::kNotFound,
        delete_log_floor_ == kDeleteLogUnusable
            ? std::string("the delete log is not complete (restored or copied rows)")
            : "the delete log reaches back to GCI " + std::to_string(delete_log_floor_) + " only");
  }
  std::vector<AttrValues> keys;
  // Each key once (deleted, re-inserted and deleted again). Commits of one fragment come
  // in GCI order only roughly (a transaction of GCI n may commit here after one of
  // n + 1): every entry is looked at.
  std::unordered_set<std::string> listed;
  for (const DeletedKey& deleted : delete_log_) {
    if (deleted.gci > gci && listed.insert(deleted.key.data()).second) {
      keys.push_back(deleted.key);
    }
  }
  return keys;
}

}  // namespace duo::storage
