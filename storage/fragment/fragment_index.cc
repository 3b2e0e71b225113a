// Fragment: ordered-index keys, entry visibility, index maintenance and unique checks.
#include "storage/fragment/fragment_records.h"

namespace duo::storage {

int Fragment::compare_index_keys(int index, const RowImage& a, const RowImage& b) const {
  for (uint16_t col : schema_->ordered_indexes[index].columns) {
    const ColumnValue va = layout_.get(a, col);
    const ColumnValue vb = layout_.get(b, col);
    if (va.is_null || vb.is_null) {
      if (va.is_null && vb.is_null) continue;
      return va.is_null ? -1 : 1;
    }
    const int c = compare_values(schema_->columns[col], va.data, vb.data);
    if (c != 0) return c;
  }
  return 0;
}

uint32_t Fragment::index_prefix(int index, const RowImage& image) const {
  const uint16_t col = schema_->ordered_indexes[index].columns[0];
  const ColumnValue v = layout_.get(image, col);
  if (v.is_null) return 0;
  bool exact;
  return normalized_prefix(schema_->columns[col], v.data, &exact);
}

// ---------------------------------------------------------------------------------------
// Views and visibility.

const Fragment::Operation* Fragment::newest_live_write(TxId tx, RowRef row) const {
  const uint32_t lock_id = row_lock_id(row);
  if (lock_id == kNullId || tx == kNullId) return nullptr;
  for (OpId id = locks_.get(lock_id)->write_head; id != kNullId;) {
    const Operation* op = ops_.get(id);
    if (op->tx != tx) return nullptr;  // all writes on a row belong to one transaction
    if (op->state != OpState::kAborted) return op;
    id = op->prev_write;
  }
  return nullptr;
}

Fragment::View Fragment::view_of(TxId tx, RowRef row) const {
  View v;
  if (const Operation* op = newest_live_write(tx, row)) {
    if (op->is_delete) return v;
    v.exists = true;
    v.image = op_image(*op);
    v.op = op;
    return v;
  }
  // kRowCommitted means the slot holds the committed version (a fresh insert owns an
  // uncommitted slot without it).
  if (row_flags(row) & kRowCommitted) {
    v.exists = true;
    v.image = slot_image(row);
  }
  return v;
}

bool Fragment::entry_visible(int index, uint32_t entry, TxId tx, View* view) const {
  const bool op_entry = entry & kOpEntryBit;
  const RowRef row = entry_row(entry);
  // Fast path: an unlocked row has no uncommitted version anywhere.
  if (!op_entry && row_lock_id(row) == kNullId) {
    if (!(row_flags(row) & kRowCommitted)) return false;
    *view = View{true, slot_image(row), nullptr};
    return true;
  }
  const Operation* newest = newest_live_write(tx, row);
  if (newest == nullptr) {
    // The reader sees the committed version, which only the slot's entry names.
    if (op_entry || !(row_flags(row) & kRowCommitted)) return false;
    *view = View{true, slot_image(row), nullptr};
    return true;
  }
  if (newest->is_delete) return false;
  const RowImage vi = op_image(*newest);
  // Visible when this entry is the first entry-bearing image (slot first, then the
  // transaction's ops oldest first, aborted ones included: their entries stay until
  // the transaction ends) whose key equals the reader's version's key: each row then
  // appears once per key.
  uint32_t first = kNoRef;
  if ((row_flags(row) & kRowIndexed) && compare_index_keys(index, slot_image(row), vi) == 0) {
    first = row;
  } else {
    OpId chain[64];
    size_t n = 0;
    for (OpId id = locks_.get(row_lock_id(row))->write_head; id != kNullId && n < 64;
         id = ops_.get(id)->prev_write) {
      chain[n++] = id;
    }
    for (size_t i = n; i-- > 0;) {
      const Operation* op = ops_.get(chain[i]);
      if (!(op->entry_bits >> index & 1)) continue;
      if (compare_index_keys(index, op_image(*op), vi) == 0) {
        first = op->id | kOpEntryBit;
        break;
      }
    }
  }
  if (first != entry) return false;
  *view = View{true, vi, newest};
  return true;
}

// ---------------------------------------------------------------------------------------
// Index maintenance.

Status Fragment::add_slot_entries(RowRef row) {
  const RowImage img = slot_image(row);
  for (size_t i = 0; i < ordered_.size(); ++i) {
    Status s = ordered_[i]->insert(index_prefix(static_cast<int>(i), img), row);
    if (!s.ok()) {
      for (size_t j = 0; j < i; ++j) ordered_[j]->erase(index_prefix(static_cast<int>(j), img), row);
      return s;
    }
  }
  set_row_flags(row, row_flags(row) | kRowIndexed);
  return Status::OK();
}

void Fragment::remove_slot_entries(RowRef row) {
  if (!(row_flags(row) & kRowIndexed)) return;
  const RowImage img = slot_image(row);
  for (size_t i = 0; i < ordered_.size(); ++i) {
    if (!ordered_[i]->erase(index_prefix(static_cast<int>(i), img), row)) {
      invariant_failed("slot entry missing from ordered index");
    }
  }
  set_row_flags(row, row_flags(row) & ~kRowIndexed);
}

Status Fragment::add_op_entries(OpId op_id, RowRef row) {
  // An op's image gets an entry in index i only when no earlier entry-bearing image of
  // the row (slot, then older ops) has the same key: one entry per (row, key).
  Operation* op = ops_.get(op_id);
  const RowImage img = op_image(*op);
  const RowLock* lock = locks_.get(row_lock_id(row));
  for (size_t i = 0; i < ordered_.size(); ++i) {
    const int ix = static_cast<int>(i);
    bool covered = (row_flags(row) & kRowIndexed) && compare_index_keys(ix, slot_image(row), img) == 0;
    for (OpId id = lock->write_head; !covered && id != kNullId; id = ops_.get(id)->prev_write) {
      const Operation* older = ops_.get(id);
      if (id == op_id || !(older->entry_bits >> i & 1)) continue;
      covered = compare_index_keys(ix, op_image(*older), img) == 0;
    }
    if (covered) continue;
    Status s = ordered_[i]->insert(index_prefix(ix, img), op_id | kOpEntryBit);
    if (!s.ok()) {
      remove_op_entries(op_id);
      return s;
    }
    op->entry_bits |= uint64_t{1} << i;
  }
  return Status::OK();
}

void Fragment::remove_op_entries(OpId op_id) {
  Operation* op = ops_.get(op_id);
  if (op->entry_bits == 0) return;
  const RowImage img = op_image(*op);
  for (size_t i = 0; i < ordered_.size(); ++i) {
    if (!(op->entry_bits >> i & 1)) continue;
    if (!ordered_[i]->erase(index_prefix(static_cast<int>(i), img), op_id | kOpEntryBit)) {
      invariant_failed("op entry missing from ordered index");
    }
  }
  op->entry_bits = 0;
}

Status Fragment::check_unique(TxId tx, RowRef row, const RowImage& image,
                              const Operation* /*prev_image_op*/, bool prev_exists,
                              const RowImage& prev, uint32_t* wait_lock_row) {
  *wait_lock_row = kNoRef;
  if (!enforce_unique_) return Status::OK();  // restoring: see set_enforce_unique()
  for (size_t i = 0; i < ordered_.size(); ++i) {
    const IndexDef& def = schema_->ordered_indexes[i];
    if (!def.unique) continue;
    const int ix = static_cast<int>(i);
    bool has_null = false;
    for (uint16_t c : def.columns) has_null |= layout_.get(image, c).is_null;
    if (has_null) continue;  // NULLs never conflict
    if (prev_exists && compare_index_keys(ix, prev, image) == 0) continue;  // key unchanged
    IndexProbe probe(this, ix, nullptr, &image);
    // A visible version nobody else is writing is a definite duplicate; otherwise another
    // transaction's uncommitted version with the key means waiting for its outcome.
    RowRef wait_on = kNoRef;
    for (auto c = ordered_[i]->lower_bound(probe, true); c.valid(); c.next()) {
      const uint32_t e = c.ref();
      if (probe.compare_to(e) != 0) break;
      const RowRef other = entry_row(e);
      if (other == row) continue;
      const uint32_t lock_id = row_lock_id(other);
      if (lock_id != kNullId) {
        const OpId wh = locks_.get(lock_id)->write_head;
        if (wh != kNullId && ops_.get(wh)->tx != tx) {
          wait_on = other;
          continue;
        }
      }
      View v;
      if (entry_visible(ix, e, tx, &v)) {
        std::string key_text;
        for (uint16_t col : def.columns) {
          if (!key_text.empty()) key_text += "-";
          key_text += format_value(schema_->columns[col], layout_.get(image, col).data);
        }
        return Status(ErrorCode::kDuplicateKey,
                      "Duplicate entry '" + key_text + "' for key '" + def.name + "'");
      }
    }
    if (wait_on != kNoRef) {
      *wait_lock_row = wait_on;
      return Status::OK();
    }
  }
  return Status::OK();
}

}  // namespace duo::storage
