// Fragment: what a node restart's copy of changed rows needs on the starting node — a
// row's commit GCI by key, the "seen" marks, and the sweep of rows the live replica
// no longer has (ndb-kernel/local_query/local_query_node_restart.cc explains the copy
// and why the sweep deletes exactly the rows deleted at the live replica since G).
// Thread-compatible, as the whole fragment.
#include <cstring>
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
  if (doomed.empty()) return sweep;
  DUO_ASSIGN_OR_RETURN(TxId tx, begin());
  for (const AttrValues& key : doomed) {
    // Unlocked (checked above) and this transaction's own: never waits.
    const OpResult result = remove(tx, key);
    if (!result.status.ok() || result.waiting) {
      abort(tx).ignore_error();
      return result.status.ok() ? Status(ErrorCode::kInternal, "sweep delete had to wait")
                                : result.status;
    }
  }
  ChangeSink* const sink = std::exchange(change_sink_, nullptr);
  Status committed = commit(tx);
  change_sink_ = sink;
  DUO_RETURN_IF_ERROR(committed);
  sweep.deleted = doomed.size();
  return sweep;
}

void Fragment::clear_copy_marks() {
  for (RowRef r = fixed_.next_position(0); r != FixedRowStore::kEnd;
       r = fixed_.next_position(r + 1)) {
    const uint32_t flags = row_flags(r);
    if (flags & kRowCopySeen) set_row_flags(r, flags & ~kRowCopySeen);
  }
}

}  // namespace duo::storage
